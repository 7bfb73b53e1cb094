//! Log columns as templates + typed slots (issue 20; not yet a chunk kind of
//! the file format — this module is the codec core the chunk kind will wrap).
//!
//! # The idea
//! A log line repeats a long static text (its *template*) around a few
//! variables. A block of rows is stored as
//! - per row, the id of its template (templates are mined from the rows);
//! - per template slot, a typed sub-column of that template's rows' values:
//!   integers (decimal, lower/upper hex) bit-packed in blocks of 128 with a
//!   checkpoint each, low-cardinality words as value-dictionary ids, other
//!   words as token-coded text;
//! - one *text pool* holding every variable-length string (template static
//!   text, dictionary values, free words, escaped rows) as OnPair-12 codes.
//!
//! Template 0 is the *escape* template: empty static text around one free
//! text slot, i.e. the whole row token-coded. Rows that match no mined
//! template, or whose template fewer than `min_count` rows use, take it.
//! Rendering is byte-exact by construction (below), so every input round
//! trips; nothing depends on the input being text or UTF-8.
//!
//! # Tokens, templates, slots (`tokenize.rs`, `mine.rs`)
//! A line splits uniquely into `sep₀ word₀ sep₁ … wordₙ₋₁ sepₙ`: words are
//! maximal runs of ASCII letters/digits, separators everything else. A
//! template fixes the separators and, per word position, either a static
//! word or a slot; a row matches when its separators and static words are
//! equal. Words holding a digit are always slots; merging (Drain's
//! similarity ≥ 0.5 within a shape = separators + word count) turns the
//! positions where similar skeletons differ into slots. The template's
//! static text is then `slots + 1` strings: static₀ slot₀ static₁ … staticₖ.
//! A JSON line `{"k":"v",…}` has its keys, quotes, colons and commas in the
//! separators/static words, so keys are static and varying values are slots.
//!
//! # Slot types (`encode.rs`)
//! Decided per slot over all of the template's rows in the block:
//! - `Dec` (kind 0): every value is 1–19 decimal digits; `HexLower` (1) /
//!   `HexUpper` (2): every value is 1–16 hex digits of that case. Values are
//!   u64. The *width rule* keeps leading zeros exactly: `Natural` (0: no
//!   value has a leading zero), `Fixed w` (2: every value has w digits) or
//!   `PerRow` (1: a second integer column holds each value's digit count).
//!   Signs, dots, colons are separators, i.e. static text.
//! - `Dict` (3): distinct values in the pool, ids as an integer column; chosen
//!   when repeats save more than the ids cost.
//! - `Free` (4): the values in the pool, one string per row, in rank order.
//!
//! # Integer columns (`column.rs`)
//! Blocks of 128 values; per block a checkpoint `(mode|bits: u8, base:
//! varint, [slope: zigzag varint])` and `⌈n·bits/8⌉` bytes of residuals
//! (LSB-first, byte-aligned per block). FoR: `v[j] = base + r[j]`; linear
//! FoR (mode bit 7): `v[j] = base + r[j] + j·slope` (mod 2^64), which takes
//! steadily growing values (timestamps, counters) to a few bits like delta
//! coding but reads one residual, not a prefix sum. Value `i` reads
//! checkpoint `i/128` and one residual: O(1). Since format 7 a block may be
//! *delta* (the steps above the smallest, with a sum per 32 of them: at
//! most 3 sums and 31 residuals a read), since format 8 a slot's block may
//! be *runs* (a bitmap of where the value changes, then the changed values
//! as a block of their own: one popcount more a read), and since format 9
//! its runs may *step* (each value of a run its head plus a step per value
//! before it: a stack trace's frame ids counting up); spec/FORMAT.md
//! §5.8.3 and `column.rs`.
//!
//! # Row index: template id and rank of a row in O(1)
//! A slot value of row `r` sits at `r`'s *rank* (its index among the rows of
//! its template). Rows are cut into blocks of 128; each block stores a local
//! table of the templates it uses (first-appearance order) with each one's
//! rank at the block start, and per row a local id of `b` bits, `b` the
//! width of `n − 1` rounded up to 0, 1, 2, 4 or 8 (n = templates in the
//! block, often 1–8: fewer bits than a global id).
//! `rank(r) = start[local] + #{k < r in the block : local[k] = local[r]}`,
//! counted 64 bits at a time (SWAR field compare + popcount: ≤ 16 words).
//!
//! # Bytes of a block
//! ```text
//! "FPL5" | u32 meta_len | u32 rowidx_len | u32 data_len | u32 pool_len
//!         ("FPL4" in version 8: no stepped runs blocks; "FPL3" in
//!         version 7: no runs blocks; "FPL2" in version 6: no
//!         delta blocks either; "FPL1" in versions 4–5: the pool's form 1,
//!         `text.rs`)
//! meta:   varint rows, varint templates (≥ 1)
//!         per template: varint slots, varint rows using it
//!         per slot (templates in order): u8 kind | width rule << 3, then
//!           Dec/Hex: [u8 width when Fixed], checkpoints of the values
//!                    [checkpoints of the widths when PerRow]
//!           Dict:    varint values, checkpoints of the ids
//!           Free:    nothing
//!           (text slots' strings follow the static strings in the pool,
//!           in slot order: a Dict slot's values, a Free slot's one string
//!           per row; their pool indexes are running sums)
//!         per row block: varint n, n × (varint template, varint start rank)
//! rowidx: per row block, its local ids packed at b ∈ {0,1,2,4,8} bits (byte-aligned)
//! data:   every integer block's residuals, in meta order
//! pool:   the text pool (see `text.rs`)
//! 16 zero bytes (every 16-byte window read of packed data stays inside)
//! ```
//! Template `t`'s static strings are pool strings `Σ_{u<t}(slots_u + 1) …`;
//! template 0 must have one slot, of kind Free.
//! [`LogBlock::open`] checks: magic, section lengths, padding zero, pool
//! (token lengths, offsets monotone and ending at the code count, every code
//! below the token count), counts and pool indexes in range, kinds and width
//! rules defined, bit widths ≤ 64, column data used exactly, row-index local
//! ids inside their tables, start ranks equal to the running counts and the
//! counts equal to the templates' (so every reachable rank is in range),
//! dictionary ids below their dictionary's size, widths ≤ 40.
//!
//! # GPU decode (plan for spec/DECODER.md)
//! One warp per row block of 128 rows (4 rows per lane):
//! 1. *locate*: lanes read their rows' local ids; `__match_any_sync` on the
//!    local id and a popcount of lower lanes (plus a per-warp running count
//!    over the 4 sub-rounds) gives each row's rank = `start[local]` + that; the
//!    block's template table is a few words in shared memory.
//! 2. *size*: each row's length = Σ static lengths (a per-template constant)
//!    + Σ slot lengths. Integer slots: unpack the value (FoR: one read;
//!    delta: the column's 128-block is unpacked once per warp into shared
//!    memory and prefix-summed with a warp scan) and count digits (or use
//!    the width). Text slots: the pool string's code range from the pool's
//!    offsets cascade; its byte length from a precomputed per-string length
//!    array (one prefix pass over the pool, like the existing sidecar).
//! 3. *scan*: a warp prefix sum of the 128 row lengths gives the rows'
//!    offsets inside the block's output; the block's output start comes from
//!    a sidecar of per-block output positions (written like today's batch
//!    sidecar), so blocks decode independently into the one device-linear
//!    column and its offsets array.
//! 4. *emit*: per row, copy static strings (templates staged in shared
//!    memory), render integers (digits written right-to-left from the
//!    known length), and expand text-slot codes through the existing
//!    FastPair token gather (the pool uses the same fixed-stride token
//!    planes) into a shared staging buffer, then drain 16-byte aligned as the
//!    existing kernel does. Long escaped rows (whole rows in the pool) are
//!    best decoded by the existing code-batch kernel as a second work list.

mod assign;
mod bits;
mod column;
mod decode;
// The GPU decoder's tables (src/gpu/logs.rs): only with the `gpu` feature.
#[cfg(feature = "gpu")]
mod device;
mod encode;
mod equals;
mod family;
mod filters;
mod front;
mod header;
mod lay;
mod layouts;
mod mine;
mod options;
mod packed;
mod pinned;
mod pool;
mod ranges;
mod render;
mod search;
mod skeleton;
mod split;
mod summary;
mod text;
mod tokenize;
mod typing;
mod uniform;

pub use assign::unmatched_share;
pub(crate) use assign::LEARN_BATCH;
pub use decode::LogBlock;
#[cfg(feature = "gpu")]
pub(crate) use device::{
    DeviceBlock, DeviceImage, ImageBlock, CP_SUMS, CP_WORDS, ROW_BLOCK_WORDS, SLOT_WORDS,
    TEMPLATE_WORDS, WIDTH_PER_ROW,
};
pub use encode::encode;
pub use options::LogOptions;
pub use pool::PoolForm;
pub(crate) use ranges::RowRanges;
pub(crate) use skeleton::PLAN_NS_PER_ROW;
pub use split::{encode_column, LogColumn};
pub use summary::{LogSummary, SlotCost, SlotTypeSummary, TemplateSummary, BREAKDOWN_PARTS};

/// First bytes of a log block of format versions 4–5 (pool form 1,
/// spec/FORMAT.md §5.8.1); read, no longer written.
const BLOCK_MAGIC_1: &[u8; 4] = b"FPL1";
/// First bytes of a log block of version 6 (pool form 2); read, no longer
/// written.
const BLOCK_MAGIC_2: &[u8; 4] = b"FPL2";
/// First bytes of a log block of version 7 (pool form 2, integer blocks
/// FoR, linear or delta, §5.8.3); read, no longer written.
const BLOCK_MAGIC_3: &[u8; 4] = b"FPL3";
/// First bytes of a log block of version 8 (pool form 2, integer blocks
/// FoR, linear, delta or runs, §5.8.3); read, no longer written.
const BLOCK_MAGIC_4: &[u8; 4] = b"FPL4";
/// First bytes of a log block of version 9 (as version 8, runs blocks may
/// step, §5.8.3); read, no longer written.
const BLOCK_MAGIC_5: &[u8; 4] = b"FPL5";
/// First bytes of a log block of version 10 (as version 9, with the open
/// section, §5.8.6); read, no longer written.
const BLOCK_MAGIC_6: &[u8; 4] = b"FPL6";
/// First bytes of a log block of version 11 (as version 10, and the open
/// section may hold the row index and column data too, §5.8.6): what the
/// writer writes.
const BLOCK_MAGIC: &[u8; 4] = b"FPL7";

/// The spelling of a log payload its magic names (spec/FORMAT.md §5.8.1),
/// one per range of format versions; a file's payloads are its version's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogForm {
    /// Versions 4–5 ("FPL1"/"FPS1"): pool form 1.
    V4,
    /// Version 6 ("FPL2"/"FPS2"): pool form 2.
    V6,
    /// Version 7 ("FPL3"/"FPS3"): pool form 2, and integer blocks may be
    /// delta blocks (§5.8.3).
    V7,
    /// Version 8 ("FPL4"/"FPS4"): as version 7, and a slot's integer
    /// blocks may be runs blocks (§5.8.3).
    V8,
    /// Version 9 ("FPL5"/"FPS5"): as version 8, and a runs block may
    /// step (§5.8.3).
    V9,
    /// Version 10 ("FPL6"/"FPS6"): as version 9, with the meta, the pool's
    /// token table and the shared strings in an open section (§5.8.6).
    V10,
    /// Version 11 ("FPL7"/"FPS7"): as version 10, and a block's open
    /// section may hold its row index and column data too (§5.8.6,
    /// methods 2 and 3).
    V11,
}

impl LogForm {
    /// The form a file of format `version` (4 or later) holds.
    pub fn of_version(version: u32) -> Self {
        if version >= crate::format::VERSION_11 {
            LogForm::V11
        } else if version >= crate::format::VERSION_10 {
            LogForm::V10
        } else if version >= crate::format::VERSION_9 {
            LogForm::V9
        } else if version >= crate::format::VERSION_8 {
            LogForm::V8
        } else if version >= crate::format::VERSION_7 {
            LogForm::V7
        } else if version >= crate::format::VERSION_6 {
            LogForm::V6
        } else {
            LogForm::V4
        }
    }

    /// Its pool's layout (§5.8.4).
    pub fn pool(self) -> PoolForm {
        match self {
            LogForm::V4 => PoolForm::Plain12,
            LogForm::V6 | LogForm::V7 | LogForm::V8 | LogForm::V9 | LogForm::V10 | LogForm::V11 => {
                PoolForm::Front
            }
        }
    }

    /// Whether its integer blocks may be delta blocks (§5.8.3).
    pub(crate) fn delta_blocks(self) -> bool {
        matches!(
            self,
            LogForm::V7 | LogForm::V8 | LogForm::V9 | LogForm::V10 | LogForm::V11
        )
    }

    /// Whether a slot's integer blocks may be runs blocks (§5.8.3).
    pub(crate) fn runs_blocks(self) -> bool {
        matches!(
            self,
            LogForm::V8 | LogForm::V9 | LogForm::V10 | LogForm::V11
        )
    }

    /// Whether a runs block may step (§5.8.3).
    pub(crate) fn stepped_runs(self) -> bool {
        matches!(self, LogForm::V9 | LogForm::V10 | LogForm::V11)
    }

    /// Whether a dictionary slot may be front-coded (§5.8.2, rule 1).
    pub(crate) fn front_dictionaries(self) -> bool {
        matches!(self, LogForm::V9 | LogForm::V10 | LogForm::V11)
    }

    /// Whether its blocks keep an open section (§5.8.6): the meta, the
    /// pool's token table and the shared strings, packed.
    pub(crate) fn open_section(self) -> bool {
        matches!(self, LogForm::V10 | LogForm::V11)
    }

    /// Whether a block's open section may hold its row index and column
    /// data (§5.8.6, methods 2 and 3: *resident* parts).
    pub(crate) fn resident_parts(self) -> bool {
        self == LogForm::V11
    }

    /// The form a block's first four bytes name.
    fn of_block_magic(m: &[u8]) -> Option<Self> {
        match m {
            m if m == BLOCK_MAGIC => Some(LogForm::V11),
            m if m == BLOCK_MAGIC_6 => Some(LogForm::V10),
            m if m == BLOCK_MAGIC_5 => Some(LogForm::V9),
            m if m == BLOCK_MAGIC_4 => Some(LogForm::V8),
            m if m == BLOCK_MAGIC_3 => Some(LogForm::V7),
            m if m == BLOCK_MAGIC_2 => Some(LogForm::V6),
            m if m == BLOCK_MAGIC_1 => Some(LogForm::V4),
            _ => None,
        }
    }
}

/// Rows per row-index block.
const ROW_BLOCK: usize = 128;

/// Rows from which a block is encoded with rayon's threads inside it
/// (templates planned, family buckets searched, header and body encoded at
/// once; `tokenize.rs` and `mine.rs` split their own runs). Smaller blocks
/// (the column decision's samples, the writer's screen and estimate, a
/// column of a few thousand rows) are encoded on one thread: their tasks
/// are too small to pay for waking other threads and warming their
/// allocator. Measured on 2 threads, 20,000 access-log lines (4.3 MB),
/// every block in parallel: 0.274 s against 0.241 one block at a time
/// (4,400 context switches); with 2^14 rows here 0.240–0.248 against
/// 0.233–0.237; with 2^15, 0.245–0.250 against 0.246–0.252.
const PAR_MIN_ROWS: usize = 1 << 15;

/// `items` mapped by `f` in order, on rayon's threads when `par`.
fn map_maybe_par<T: Send, R: Send>(
    items: Vec<T>,
    par: bool,
    f: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    use rayon::prelude::*;
    if par {
        items.into_par_iter().map(f).collect()
    } else {
        items.into_iter().map(f).collect()
    }
}

/// `rayon::join` of `a` and `b` when `par`, else one after the other.
pub(crate) fn join_maybe<A: Send, B: Send>(
    par: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if par {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// Slot kinds (the byte stored in the meta).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    Dec = 0,
    HexLower = 1,
    HexUpper = 2,
    Dict = 3,
    Free = 4,
}

/// Width rule of an integer slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Width {
    Natural,
    Fixed(u8),
    PerRow,
}

/// Bytes of each part of an encoded block: (header, meta, row index, column
/// data, pool, padding).
pub fn part_sizes(block: &[u8]) -> Option<[usize; 6]> {
    let l = |i: usize| -> Option<usize> {
        Some(u32::from_le_bytes(block.get(4 + 4 * i..8 + 4 * i)?.try_into().ok()?) as usize)
    };
    Some([20, l(0)?, l(1)?, l(2)?, l(3)?, bits::PAD])
}
