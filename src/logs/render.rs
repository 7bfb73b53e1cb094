//! Bulk rendering of a log block's rows (`LogBlock::decode_all`, the split
//! column's interleaved decode, a chunk's bulk read, the search's render).
//!
//! [`Program::new`] prepares a block once: every pool string decoded into
//! one source buffer after the static strings and dictionary values, and
//! each template compiled into a *program*: one [`Op`] per slot (the static
//! string before it as a byte range of the source, the slot's kind, the
//! integer columns it reads) plus a closing op, and a bound on the bytes a
//! row of it can take without its free-text slots. [`Program::put_rank`]
//! then reserves that bound once and runs the row's ops with unchecked
//! copies: static text and strings as two 16-byte moves (longer ones by
//! `memcpy`), integers 8 digits per SWAR step with the zero padding
//! included (`put_dec`). [`Bulk`] walks a block's rows in order with one.
//!
//! Integer columns (values, per-row widths, dictionary ids) are unpacked
//! whole, once, when the block holds at most [`WHOLE_MAX`] of them; a
//! larger block is read through a [`Window`], one per walk, loaded for a
//! span of [`SPAN`] rows at a time with each column's values of those rows
//! alone ([`Program::load`]). Until 2026-12-06 every column was unpacked
//! whole before the first row: on a chunk of 700,000 lines that is tens of
//! MB of `u64` written, then read back in row order from hundreds of
//! columns at once, a cache miss every 8 values (half the render's time on
//! such a chunk; bench/LOGS.md, "Big log chunks rendered a span at a
//! time"). A window holds one span's values, so what a walk reads stays in
//! cache whatever the chunk's size.
//!
//! Measured with callgrind on Loghub (bench/LOGS.md): the interpreter this
//! replaces ran ~86 instructions per slot on BGL_2k (a capacity check per
//! op and per number, range checks on every copy and index, the sink's
//! fields reloaded from memory after every write, digit pairs by division).
//! A column-at-a-time variant (each slot column rendered into byte ranges,
//! rows then assembled from them) measured no better: writing and reading
//! back the ranges cost what the dispatch saved.

use super::column::{Checkpoint, IntCol};
use super::decode::{LogBlock, Slot};
use super::{Kind, Width};

mod lens;
mod write;
pub(crate) use lens::PieceUtf8;
use write::{put, put_dec, put_hex};

/// Zero bytes after the source buffer's last string, and spare capacity an
/// output row is reserved with: a string of ≤ 32 bytes is moved as 32, a
/// number writes up to `INT_WRITE`.
const PAD: usize = 64;

/// Longest rendered integer (the width cap of `bits::render_dec`).
const MAX_DIGITS: usize = 40;

/// Bytes a rendered integer may write (its digits, then garbage up to 48).
const INT_WRITE: usize = 48;

// A row's spare capacity covers a number's whole write and a 32-byte move.
const _: () = assert!(PAD >= INT_WRITE && PAD >= 32);

/// Op kinds.
const END: u8 = 0;
const DEC: u8 = 1;
const HEX_LOWER: u8 = 2;
const HEX_UPPER: u8 = 3;
const DICT: u8 = 4;
const FREE: u8 = 5;

/// A byte range of [`Program::src`].
#[derive(Clone, Copy, Debug, Default)]
struct Piece {
    at: u32,
    len: u32,
}

/// One step of a template's program: the static string `src[at..at +
/// len]`, then a slot of `kind`:
/// - `DEC`/`HEX_*`: the row's value of integer column `col`, zero-padded to
///   `width` digits (0: natural), or to its value of column `aux` digits
///   when `per_row` (a column is named by its place among its template's
///   columns, `Tpl::first_col` on, or, when the program holds the columns
///   whole, by where its values start in `Program::whole`: [`Ints`]);
/// - `DICT`: dictionary value `id` = the row's value of column `col`, which
///   is `spieces[aux + id]` when `id < lim` (the dictionary's size), else
///   the empty string;
/// - `FREE`: pool string `col + rank`;
/// - `END`: nothing (the template's last static string).
#[derive(Clone, Copy, Debug)]
struct Op {
    at: u32,
    len: u32,
    col: u32,
    aux: u32,
    /// A `DICT` op's dictionary size (ids at or past it read as the
    /// empty string, so a row's bound holds whatever the column holds).
    lim: u32,
    kind: u8,
    width: u8,
    per_row: bool,
}

impl Op {
    /// A number op's digit count at `rank`: its fixed width, or the value
    /// of its per-row width column (capped at `MAX_DIGITS`). What `render`
    /// pads to and `len_of` counts.
    #[inline(always)]
    fn width_at(&self, ints: &impl Ints) -> usize {
        if self.per_row {
            ints.int(self.aux).min(MAX_DIGITS as u64) as usize
        } else {
            self.width as usize
        }
    }

    /// A `DICT` op's index in `Program::spieces` (`usize::MAX`, no
    /// string, for an id at or past the dictionary's size: the empty
    /// string).
    #[inline(always)]
    fn dict_index(&self, ints: &impl Ints) -> usize {
        let id = ints.int(self.col);
        if id < self.lim as u64 {
            self.aux as usize + id as usize
        } else {
            usize::MAX
        }
    }

    /// The integer columns the op reads: its values (or a dictionary
    /// slot's ids), then a per-row width's column.
    fn int_cols(&self) -> [Option<u32>; 2] {
        match self.kind {
            DEC | HEX_LOWER | HEX_UPPER if self.per_row => [Some(self.col), Some(self.aux)],
            DEC | HEX_LOWER | HEX_UPPER | DICT => [Some(self.col), None],
            _ => [None, None],
        }
    }
}

/// A compiled template: its ops, and the most bytes a row of it writes
/// outside its free-text slots.
#[derive(Clone, Copy, Debug)]
struct Tpl {
    first_op: u32,
    ops: u32,
    bound: usize,
    /// Rows using it: its columns' length (a rank past it is not
    /// rendered).
    count: u32,
    /// Its integer columns (values, per-row widths, ids): `Program::cols`
    /// from `first_col` on, `cols` of them.
    first_col: u32,
    cols: u32,
}

/// A block compiled for rendering: shared, read-only, so several walks
/// (threads) can render ranges of one block at once.
pub(crate) struct Program<'b> {
    /// Static strings and dictionary values, every pool string, `PAD`
    /// zeros: every piece below lies in it with `PAD` bytes after it.
    src: Vec<u8>,
    /// Every static string and dictionary value (`statics_end` order).
    spieces: Vec<Piece>,
    /// Pool string `i` is `src[pool[i]..pool[i + 1]]` (non-decreasing).
    pool: Vec<u32>,
    /// The integer columns the ops read, each template's together.
    cols: Vec<IntCol>,
    /// Every column unpacked, one after another (each op's `col` and
    /// `aux` then say where its columns start), when they are at most
    /// [`WHOLE_MAX`] values; else empty, and each walk unpacks a span of
    /// rows at a time into its [`Window`].
    whole: Vec<u64>,
    /// The block's checkpoints and its column data (with its padding).
    cps: &'b [Checkpoint],
    data: &'b [u8],
    ops: Vec<Op>,
    tpls: Vec<Tpl>,
}

/// Most integers a block's columns may hold to be unpacked whole, once,
/// by [`Program::new`] (2 MiB of `u64`): read back from there in row
/// order, they stay in cache. A larger block (a chunk of 700,000 lines
/// holds tens of MB of them) is read a span at a time through a
/// [`Window`]: unpacked whole, its reads in row order missed the cache
/// every 8 values of a column, half a render's time (bench/LOGS.md, "Big
/// log chunks rendered a span at a time"). On small blocks the window
/// costs 15–20% more time than the whole layout (its per-span bookkeeping
/// and an extra load per integer), hence both.
const WHOLE_MAX: usize = 1 << 18;

/// One walk's integer values for the rows of a *span* (at most [`SPAN`]
/// consecutive rows), row by row: per template, each of its rows in the
/// span holds its integers together, one per column of the template
/// ([`Program::load`]), so a row reads them from one slice, with no
/// lookup per value. Unused when the program holds its block's integers
/// whole.
pub(crate) struct Window {
    /// The rows' integers (past what the span uses: an earlier span's).
    vals: Vec<u64>,
    /// Per template: where its rows of the span are.
    tpls: Vec<SpanRows>,
    /// Per template: its rows in the span (scratch).
    counts: Vec<u32>,
    /// One column's values of a template's rows (scratch).
    scratch: Vec<u64>,
    /// Each row's length and whether its strings are valid UTF-8, when
    /// [`Program::span_lens`] has worked them out for the span loaded
    /// (`lens_ready`): per template, its rows from `SpanRows::lens_at` on.
    lens: Vec<(usize, bool)>,
    lens_ready: bool,
}

/// A template's rows in a window's span: ranks `r0 .. r0 + n`, the row of
/// rank `r0 + i` holding its `k` integers at `vals[at + i·k..][..k]`.
#[derive(Clone, Copy, Debug, Default)]
struct SpanRows {
    at: usize,
    r0: u32,
    n: u32,
    /// Where its rows' lengths start in `Window::lens`.
    lens_at: usize,
}

impl Window {
    /// The integers of template `tid`'s row of rank `rank` (`k` of them),
    /// when the span holds that row.
    #[inline(always)]
    fn row(&self, tid: u32, rank: u32, k: u32) -> Option<&[u64]> {
        let (s, i) = self.held(tid, rank)?;
        let at = s.at + i * k as usize;
        self.vals.get(at..at + k as usize)
    }

    /// The length of template `tid`'s row of rank `rank` and whether its
    /// strings are valid UTF-8, when worked out for the span and the span
    /// holds that row.
    #[inline(always)]
    fn row_len(&self, tid: u32, rank: u32) -> Option<(usize, bool)> {
        if !self.lens_ready {
            return None;
        }
        let (s, i) = self.held(tid, rank)?;
        self.lens.get(s.lens_at + i).copied()
    }

    /// Where template `tid`'s rows of the span are, and the row of rank
    /// `rank` among them, when the span holds it.
    #[inline(always)]
    fn held(&self, tid: u32, rank: u32) -> Option<(&SpanRows, usize)> {
        let s = self.tpls.get(tid as usize)?;
        let i = rank.wrapping_sub(s.r0);
        (i < s.n).then_some((s, i as usize))
    }
}

/// Rows whose integers a window holds at once: at ~6 integers a row,
/// ~400 KB, about a core's L2 cache; the reader's ranges of 8,192 rows
/// (`read::chunk::logs`) load one span each. Measured on two 65 MB logs
/// (bench/LOGS.md): 1,024 rows 10–14% slower than 4,096 (a block split
/// across more spans is decoded in more parts), 16,384 within 3% of it.
pub(crate) const SPAN: usize = 8192;

/// Rows of the next span when `left` rows are left to walk: at most
/// [`SPAN`], the rest cut evenly (a reader's range of 8,229 rows is one
/// span, not 8,192 rows and then 37, each loading its own blocks).
pub(crate) fn span_len(left: usize) -> usize {
    let spans = left.div_ceil(SPAN).max(1);
    left.div_ceil(spans)
}

/// The pieces of strings ending at `ends` (string `i` starts where string
/// `i − 1` ends, the first at 0).
fn pieces_of(ends: &[u32], out: &mut Vec<Piece>) {
    let mut start = 0u32;
    for &e in ends {
        out.push(Piece {
            at: start,
            len: e.saturating_sub(start),
        });
        start = start.max(e);
    }
}

impl<'b> Program<'b> {
    /// Decodes the block's pool and compiles its templates; `None` when
    /// its strings do not fit u32 offsets (no valid chunk does: a chunk
    /// holds at most `u32::MAX` bytes; the caller then reads row by row).
    pub(crate) fn new(block: &'b LogBlock) -> Option<Self> {
        // The statics carry 16 zero bytes of padding (`LogBlock::open`).
        let slen = block.statics_end.last().map_or(0, |&e| e as usize);
        let mut src = Vec::new();
        src.extend_from_slice(block.statics.get(..slen)?);
        let (mut ends, pool_at) = (Vec::new(), src.len());
        let pool_bytes = &block.bytes[block.pool_at..];
        block.pool.decode_all(pool_bytes, &mut src, &mut ends, PAD);
        let fixed = src.len();
        if fixed > (u32::MAX as usize) / 2 {
            return None;
        }
        src.resize(fixed + PAD, 0);
        let mut spieces = Vec::with_capacity(block.statics_end.len());
        pieces_of(&block.statics_end, &mut spieces);
        let mut pool = Vec::with_capacity(ends.len() + 1);
        pool.push(pool_at as u32);
        pool.extend(ends.iter().map(|&e| (pool_at + e as usize) as u32));

        // Each op names its columns by their place among its template's
        // (`Tpl::first_col` on).
        let mut cols: Vec<IntCol> = Vec::new();
        let add = |cols: &mut Vec<IntCol>, col: IntCol, first: u32| {
            cols.push(col);
            cols.len() as u32 - 1 - first
        };
        let mut ops = Vec::with_capacity(block.slots.len() + block.templates.len());
        let mut tpls = Vec::with_capacity(block.templates.len());
        let spiece = |i: usize| spieces.get(i).copied().unwrap_or_default();
        for t in &block.templates {
            let first_op = ops.len() as u32;
            let first_col = cols.len() as u32;
            let st = t.first_static as usize;
            let mut bound = 0usize;
            for s in 0..=t.slots as usize {
                let p = spiece(st + s);
                bound += p.len as usize;
                let mut op = Op {
                    at: p.at,
                    len: p.len,
                    col: 0,
                    aux: 0,
                    lim: 0,
                    kind: END,
                    width: 0,
                    per_row: false,
                };
                match block.slots.get(t.first_slot as usize + s) {
                    Some(_) if s == t.slots as usize => {}
                    None => {}
                    Some(&Slot::Int {
                        kind,
                        values,
                        width,
                        widths,
                    }) => {
                        op.kind = match kind {
                            Kind::Dec => DEC,
                            Kind::HexLower => HEX_LOWER,
                            _ => HEX_UPPER,
                        };
                        bound += MAX_DIGITS;
                        op.col = add(&mut cols, values, first_col);
                        match width {
                            Width::Natural => {}
                            Width::Fixed(w) => op.width = w.min(MAX_DIGITS as u8),
                            Width::PerRow => {
                                op.per_row = true;
                                op.aux = add(&mut cols, widths, first_col);
                            }
                        }
                    }
                    Some(&Slot::Dict { ids, warm, n, .. }) => {
                        op.kind = DICT;
                        op.col = add(&mut cols, ids, first_col);
                        op.aux = warm;
                        op.lim = n;
                        let longest = (0..n as usize)
                            .map(|i| spiece(warm as usize + i).len)
                            .max()
                            .unwrap_or(0);
                        bound += longest as usize;
                    }
                    Some(&Slot::Free { pool_base }) => {
                        op.kind = FREE;
                        op.col = pool_base;
                    }
                }
                ops.push(op);
            }
            tpls.push(Tpl {
                first_op,
                ops: t.slots + 1,
                bound,
                count: t.count,
                first_col,
                cols: cols.len() as u32 - first_col,
            });
        }
        let data = &block.bytes[block.data_at..];
        let mut whole = Vec::new();
        let whole_len: usize = cols.iter().map(|c| c.len as usize).sum();
        if whole_len <= WHOLE_MAX {
            // Every column unpacked, and each op's columns turned into
            // where their values start (`Op::col`, `Op::aux`).
            let mut at = Vec::with_capacity(cols.len());
            whole.reserve(whole_len);
            for c in &cols {
                at.push(whole.len() as u32);
                let start = whole.len();
                c.decode_all(&block.cps, data, &mut whole);
                // A column shorter than its length says (no valid block)
                // is padded, so that every later column stays in place.
                whole.resize(start + c.len as usize, 0);
            }
            for tpl in &tpls {
                let offset = |c: u32| {
                    let c = tpl.first_col.saturating_add(c) as usize;
                    at.get(c).copied().unwrap_or(u32::MAX)
                };
                let ops = ops.get_mut(tpl.first_op as usize..).unwrap_or(&mut []);
                for op in ops.iter_mut().take(tpl.ops as usize) {
                    let [col, aux] = op.int_cols();
                    if let Some(c) = col {
                        op.col = offset(c);
                    }
                    if let Some(c) = aux {
                        op.aux = offset(c);
                    }
                }
            }
        }
        Some(Program {
            src,
            spieces,
            pool,
            cols,
            whole,
            cps: &block.cps,
            data,
            ops,
            tpls,
        })
    }

    /// Templates of the block.
    pub(crate) fn templates(&self) -> usize {
        self.tpls.len()
    }

    /// An empty window for one walk over the block's rows (none needed
    /// when the program holds the integers whole).
    pub(crate) fn window(&self) -> Window {
        let span = self.reads_spans();
        let tpls = if span { self.tpls.len() } else { 0 };
        Window {
            vals: Vec::new(),
            tpls: vec![SpanRows::default(); tpls],
            counts: vec![0; tpls],
            scratch: Vec::new(),
            lens: Vec::new(),
            lens_ready: false,
        }
    }

    /// Whether walks read the integers through a window (the block's
    /// columns were not unpacked whole).
    fn reads_spans(&self) -> bool {
        self.whole.is_empty()
    }

    /// Fills `w` with the integers of a span of rows: their templates
    /// `tids` (at most [`SPAN`] rows, in order), the span's first row of
    /// template `t` being of rank `ranks[t]`. Each column's values are
    /// decoded once, only those of the span's rows, and laid out row by
    /// row ([`Window`]). Nothing to do when the program holds them whole.
    pub(crate) fn load(&self, w: &mut Window, tids: &[u32], ranks: &[u32]) {
        if !self.reads_spans() {
            return;
        }
        w.lens_ready = false;
        w.counts.fill(0);
        for &t in tids {
            if let Some(c) = w.counts.get_mut(t as usize) {
                *c += 1;
            }
        }
        let mut need = 0usize;
        for ((tpl, &n), (s, &r0)) in self.tpls.iter().zip(&w.counts).zip(
            w.tpls
                .iter_mut()
                .zip(ranks.iter().chain(std::iter::repeat(&0))),
        ) {
            *s = SpanRows {
                at: need,
                r0,
                n,
                lens_at: 0,
            };
            need += n as usize * tpl.cols as usize;
        }
        // Every value the span reads is written below (a column shorter
        // than its ranks leaves an earlier span's: some other row's
        // integer, which renders within the row's bound all the same).
        if w.vals.len() < need {
            w.vals.resize(need, 0);
        }
        for (tpl, s) in self.tpls.iter().zip(&w.tpls) {
            let (n, k) = (s.n as usize, tpl.cols as usize);
            if n == 0 || k == 0 {
                continue;
            }
            let (r0, first) = (s.r0 as usize, tpl.first_col as usize);
            let Some(rows) = w.vals.get_mut(s.at..s.at + n * k) else {
                continue;
            };
            let cols = self.cols.get(first..first + k).unwrap_or(&[]);
            for (j, col) in cols.iter().enumerate() {
                w.scratch.clear();
                col.decode_range(self.cps, self.data, r0, r0 + n, &mut w.scratch);
                if k == 1 {
                    let m = w.scratch.len().min(n);
                    rows[..m].copy_from_slice(&w.scratch[..m]);
                } else {
                    for (row, &v) in rows.chunks_exact_mut(k).zip(&w.scratch) {
                        row[j] = v;
                    }
                }
            }
        }
    }

    /// Value `rank` of column `c`, read from its block alone (0 past the
    /// column).
    #[cold]
    #[inline(never)]
    fn int_alone(&self, c: usize, rank: usize) -> u64 {
        match self.cols.get(c) {
            Some(col) if rank < col.len as usize => col.get(self.cps, self.data, rank),
            _ => 0,
        }
    }

    /// Appends the row of template `tid` of rank `rank` (its `rank`-th row
    /// in row order) to `out`, reading its integers from the program's
    /// whole columns or from `w` (loaded for a span holding the row; any
    /// other row's integers are read from their blocks alone); nothing
    /// when there is no such row.
    #[inline]
    pub(crate) fn put_rank(&self, w: &Window, tid: u32, rank: u32, out: &mut Vec<u8>) {
        let Some((tpl, ops)) = self.row_ops(tid, rank) else {
            return;
        };
        if !self.reads_spans() {
            let ints = WholeRow {
                whole: &self.whole,
                rank: rank as usize,
            };
            self.render(&ints, tpl, ops, rank, out);
        } else if let Some(vals) = w.row(tid, rank, tpl.cols) {
            self.render(&SpanRow(vals), tpl, ops, rank, out);
        } else {
            self.put_alone(tpl, ops, rank, out);
        }
    }

    /// [`Self::put_rank`] of a row its window does not hold.
    #[cold]
    #[inline(never)]
    fn put_alone(&self, tpl: Tpl, ops: &[Op], rank: u32, out: &mut Vec<u8>) {
        let ints = AloneRow {
            prog: self,
            first_col: tpl.first_col as usize,
            rank: rank as usize,
        };
        self.render(&ints, tpl, ops, rank, out);
    }

    /// The compiled template of template `tid`'s row of rank `rank`, and
    /// its ops; `None` when there is no such row (a template past the
    /// block's, or more rows of it than it has: `open` refuses such
    /// blocks).
    #[inline(always)]
    fn row_ops(&self, tid: u32, rank: u32) -> Option<(Tpl, &[Op])> {
        let tpl = *self.tpls.get(tid as usize)?;
        if rank >= tpl.count {
            return None;
        }
        Some((tpl, &self.ops[tpl.first_op as usize..][..tpl.ops as usize]))
    }

    /// [`Self::put_rank`] of a row of `tpl` (its ops `ops`, its rank
    /// `rank`), its integers read through `ints`.
    #[inline(always)]
    fn render(&self, ints: &impl Ints, tpl: Tpl, ops: &[Op], rank: u32, out: &mut Vec<u8>) {
        let rank = rank as usize;
        let src = self.src.as_ptr();
        out.reserve(tpl.bound + PAD);
        let old = out.len();
        // SAFETY: every piece read lies in `src` with `PAD` bytes after it
        // (static and dictionary pieces come from `statics_end`, pool
        // pieces from the pool's non-decreasing ends, all below `fixed`),
        // so 32-byte reads of pieces ≤ 32 bytes stay inside. A dictionary
        // op reads one of its own values or none (`Op::dict_index`
        // checks the id against its size): at most the longest one
        // `bound` counts.
        // `out` has `tpl.bound + PAD` bytes of spare capacity at the row's
        // start, and the row writes at most `bound` bytes outside its
        // free-text slots, each of which reserves its own length first:
        // every write (a piece's bytes, 32 bytes at a position, a number's
        // `INT_WRITE`) stays inside. `src` and `out` are distinct
        // allocations. Every byte of `old..old + written` is written
        // before the length is set.
        unsafe {
            let mut base = out.as_mut_ptr();
            let mut dst = base.add(old);
            for op in ops {
                dst = put(src, op.at, op.len, dst);
                match op.kind {
                    END => {}
                    DEC | HEX_LOWER | HEX_UPPER => {
                        let v = ints.int(op.col);
                        let width = op.width_at(ints);
                        dst = dst.add(match op.kind {
                            DEC => put_dec(dst, v, width),
                            HEX_LOWER => put_hex(dst, v, width, false),
                            _ => put_hex(dst, v, width, true),
                        });
                    }
                    DICT => {
                        let i = op.dict_index(ints);
                        let p = self.spieces.get(i).copied().unwrap_or_default();
                        dst = put(src, p.at, p.len, dst);
                    }
                    _ => {
                        let i = op.col as usize + rank;
                        let (Some(&a), Some(&e)) = (self.pool.get(i), self.pool.get(i + 1)) else {
                            continue;
                        };
                        let n = e.saturating_sub(a);
                        let used = dst.offset_from(base) as usize;
                        out.set_len(used);
                        out.reserve(n as usize + tpl.bound + PAD);
                        base = out.as_mut_ptr();
                        dst = put(src, a, n, base.add(used));
                    }
                }
            }
            out.set_len(dst.offset_from(base) as usize);
        }
    }
}

/// The integers of one row, read by an op's column (`Op::col`, `Op::aux`:
/// what that names depends on where the row's integers are). Any column
/// reads some integer; a dictionary op checks the id against its size
/// (`Op::dict_index`), so a row renders within its bound whatever the
/// columns hold.
trait Ints {
    fn int(&self, col: u32) -> u64;
}

/// A row of a program holding its columns whole: `col` is where its
/// column's values start in `whole`, the row's value `rank` of it.
struct WholeRow<'a> {
    whole: &'a [u64],
    rank: usize,
}

impl Ints for WholeRow<'_> {
    #[inline(always)]
    fn int(&self, col: u32) -> u64 {
        self.whole
            .get(col as usize + self.rank)
            .copied()
            .unwrap_or(0)
    }
}

/// A row a window holds: its integers, `col` the column's place among
/// its template's.
struct SpanRow<'a>(&'a [u64]);

impl Ints for SpanRow<'_> {
    #[inline(always)]
    fn int(&self, col: u32) -> u64 {
        self.0.get(col as usize).copied().unwrap_or(0)
    }
}

/// A row read from its blocks alone: `col` the column's place among its
/// template's, which start at `first_col`.
struct AloneRow<'p, 'b> {
    prog: &'p Program<'b>,
    first_col: usize,
    rank: usize,
}

impl Ints for AloneRow<'_, '_> {
    #[inline(always)]
    fn int(&self, col: u32) -> u64 {
        self.prog
            .int_alone(self.first_col + col as usize, self.rank)
    }
}

/// A block's rows rendered in order, one template rank after another, the
/// integers of a span of rows loaded at a time.
pub(crate) struct Bulk<'b> {
    prog: Program<'b>,
    win: Window,
    /// Every row's template.
    tids: Vec<u32>,
    /// The next row, and the end of the span loaded.
    row: usize,
    loaded: usize,
    /// Per template: rank of its next row.
    cursor: Vec<u32>,
}

impl<'b> Bulk<'b> {
    /// [`Program::new`], a window for it and the rows' templates.
    pub(crate) fn new(block: &'b LogBlock) -> Option<Self> {
        let prog = Program::new(block)?;
        let win = prog.window();
        let cursor = vec![0; prog.templates()];
        Some(Bulk {
            prog,
            win,
            tids: block.row_templates(),
            row: 0,
            loaded: 0,
            cursor,
        })
    }

    /// Passes over the next row without rendering it.
    #[inline]
    pub(crate) fn skip_next(&mut self) {
        if let Some(&t) = self.tids.get(self.row) {
            if let Some(c) = self.cursor.get_mut(t as usize) {
                *c = c.saturating_add(1);
            }
        }
        self.row += 1;
    }

    /// Appends the next row to `out`.
    #[inline]
    pub(crate) fn put_next(&mut self, out: &mut Vec<u8>) {
        if self.row >= self.loaded {
            // The span from this row on, from the ranks the rows before
            // it left.
            let left = self.tids.len().saturating_sub(self.row);
            let end = self.row.saturating_add(span_len(left)).min(self.tids.len());
            let tids = self.tids.get(self.row..end).unwrap_or(&[]);
            self.prog.load(&mut self.win, tids, &self.cursor);
            self.loaded = end.max(self.row + 1);
        }
        let Some(&t) = self.tids.get(self.row) else {
            return;
        };
        self.row += 1;
        let Some(c) = self.cursor.get_mut(t as usize) else {
            return;
        };
        let rank = *c;
        *c = c.saturating_add(1);
        self.prog.put_rank(&self.win, t, rank, out);
    }
}
