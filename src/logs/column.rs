//! Integer sub-columns: blocks of 128 values, each bit-packed against a
//! checkpoint (mode, width, base, slope) so that any value is read from its
//! block alone (spec/FORMAT.md §5.8.3).
//!
//! Per block the writer picks the smallest of
//! - **FoR**: `base` = minimum, residuals `r[j] = v[j] − base`;
//! - **linear FoR** (frame of reference around a line): `slope` = one of a
//!   few candidate slopes, residuals `r[j] = v[j] − j·slope − base` with
//!   `base` their minimum; `v[j] = base + r[j] + j·slope` (all arithmetic
//!   mod 2^64). Counters and offsets that grow at a steady rate need a few
//!   bits without summing anything on a read: one unpack, O(1);
//! - **delta** (format version 7 payloads, "FPL3"): `base = v[0]`, `slope`
//!   the smallest step, and the `n − 1` residuals `r[j] = v[j+1] − v[j] −
//!   slope`, then the sum of each full group of 32 residuals;
//!   `v[j] = base + j·slope + Σ_{i<j} r[i]`, read as at most 3 group sums
//!   and at most 31 residuals. Timestamps that grow by irregular small
//!   steps need the bits of a step, not of the drift from a line;
//! - **runs** (format version 8 payloads, "FPL4", slot columns only): a
//!   bitmap of the positions where the value changes, then only the `h`
//!   values there (the run heads) as a block of its own under one of the
//!   three modes above; value `j` is head `rank(j)`, one popcount away.
//!   A log's slot values repeat from one row of a template to the next (a
//!   second's timestamp, a pid, a host, a dictionary id): a bit a value
//!   instead of a residual a value;
//! - **stepped runs** (format version 9 payloads, "FPL5"): runs whose
//!   values count on by the block's step `t` from their head (value `j` of
//!   a run starting at `s`: head + `(j − s)·t`, `s` the highest set bit of
//!   the bitmap at or below `j`). A stack trace logged again repeats its
//!   frames, whose dictionary ids (first-appearance order) count up by one.
//!
//! Checkpoints live in the block's metadata (varints, parsed when the block
//! is opened); residuals in the column data, byte-aligned per block.

use super::bits::{
    pack, pack_fields, packed_len, put_varint, unzigzag, varint_len, zigzag, VarReader,
};
use crate::error::{Invariant, Result};

/// Values per block.
pub(crate) const BLOCK: usize = 128;

/// Residuals per group of a delta block: after its residuals a delta block
/// stores each full group's sum at `b + 5` bits (spec/FORMAT.md §5.8.3), so
/// that a read adds at most 3 sums and 31 residuals.
pub(crate) const DELTA_GROUP: usize = 32;

/// The widest residual of a delta block: its group sums, at `b + 5` bits,
/// then fit in 64 (32 residuals below `2^59` sum below `2^64`).
const DELTA_MAX_BITS: u8 = 59;

/// Bits of a delta block's group sum at residual width `bits`: 32 residuals
/// below `2^bits` sum below `2^(bits + 5)`.
fn group_bits(bits: u8) -> u8 {
    bits + 5
}

/// Group sums of a delta block of `n` values: one per full group of its
/// `n − 1` residuals.
fn groups(n: usize) -> usize {
    (n - 1) / DELTA_GROUP
}

/// Bytes of a block's residuals (and, delta, its group sums) in the column
/// data.
fn block_data_len(n: usize, bits: u8, delta: bool) -> usize {
    if delta {
        ((n - 1) * bits as usize + groups(n) * group_bits(bits) as usize).div_ceil(8)
    } else {
        packed_len(n, bits)
    }
}

/// Flag in a block's mode byte: linear FoR (modes 128–192), or delta
/// with `DELTA_MODE` (modes 193–251, b = mode − 192, 1 ≤ b ≤ 59); else FoR (0–64).
const LINEAR_FLAG: u8 = 0x80;
/// Mode of a runs block (format version 8): then the number of run heads
/// and the heads' own checkpoint (spec/FORMAT.md §5.8.3).
const RUNS_MODE: u8 = 252;
/// Mode of a stepped runs block (format version 9): the heads, then the
/// step (zigzag, not 0), then the heads' own checkpoint (§5.8.3).
const STEP_RUNS_MODE: u8 = 253;

/// Bytes of a runs block's bitmap for a block of `n` values (bit `j`, of
/// byte `j / 8` at `j % 8`, set where a run starts).
fn bitmap_len(n: usize) -> usize {
    n.div_ceil(8)
}

/// Which block modes a column may hold (spec/FORMAT.md §5.8.3): delta
/// blocks in format version 7 payloads and later, runs blocks in a slot's
/// columns of format version 8 payloads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modes {
    pub(crate) delta: bool,
    pub(crate) runs: bool,
    /// Runs blocks with a step (format version 9; only with `runs`).
    pub(crate) stepped: bool,
}
/// Mode of a delta block of `b` bits: `DELTA_MODE + b` (1 ≤ b ≤ 59). Mode
/// 192 itself is linear FoR at 64 bits.
const DELTA_MODE: u8 = 0xC0;

/// Whether the writer takes delta blocks where they are smallest (it
/// writes the "FPL3"/"FPS3" payloads of format version 7, which allow
/// them, spec/FORMAT.md §5.8.3): always, except that under the `test-util`
/// feature `FASTPAIR_LOGS_NO_DELTA` set turns them off, so that one
/// benchmark binary measures the GPU's delta path against the same
/// payloads without it.
fn write_delta() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !hook_set(&OFF, "FASTPAIR_LOGS_NO_DELTA")
}

/// Whether the writer takes runs blocks where they are smallest (format
/// version 8): always, except under the `test-util` feature with
/// `FASTPAIR_LOGS_NO_RUNS` set (one binary measures both).
fn write_runs() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !hook_set(&OFF, "FASTPAIR_LOGS_NO_RUNS")
}

/// Whether the writer's runs blocks may step (format version 9): always,
/// except under the `test-util` feature with `FASTPAIR_LOGS_NO_STEPS` set
/// (one binary measures both).
fn write_steps() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !hook_set(&OFF, "FASTPAIR_LOGS_NO_STEPS")
}

/// Whether a pool's offsets may be delta blocks: yes, except under the
/// `test-util` feature with `FASTPAIR_LOGS_NO_POOL_DELTA` set (measured on
/// the GPU, bench/LOGS.md "Format 7").
fn pool_delta() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !hook_set(&OFF, "FASTPAIR_LOGS_NO_POOL_DELTA")
}

/// Whether the test-util hook `var` is set in the environment (read once
/// into `cell`); never without the `test-util` feature.
pub(super) fn hook_set(cell: &std::sync::OnceLock<bool>, var: &str) -> bool {
    #[cfg(feature = "test-util")]
    {
        *cell.get_or_init(|| std::env::var_os(var).is_some())
    }
    #[cfg(not(feature = "test-util"))]
    {
        let _ = (cell, var);
        false
    }
}

/// Which columns may take delta blocks: slot columns, and a pool's offsets
/// (whose read on the GPU is the start and end of every pool string, two
/// values a string).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    Slot,
    PoolOffsets,
}

impl Use {
    fn delta(self) -> bool {
        match self {
            Use::Slot => write_delta(),
            Use::PoolOffsets => write_delta() && pool_delta(),
        }
    }

    /// The modes the writer may take for such a column.
    fn modes(self) -> Modes {
        let runs = self == Use::Slot && write_runs();
        Modes {
            delta: self.delta(),
            runs,
            stepped: runs && write_steps(),
        }
    }
}

/// Appends the checkpoints of `values` to `meta` and the packed residuals to
/// `data`.
pub(crate) fn write(values: &[u64], meta: &mut Vec<u8>, data: &mut Vec<u8>, to: Use) {
    let modes = to.modes();
    for block in values.chunks(BLOCK) {
        put_block(block, &plan(block, modes), meta, data);
    }
}

/// A column's block plans, made once for both its size (a slot's cost)
/// and its write ([`Planned::write`]).
pub(crate) struct Planned {
    blocks: Vec<BlockPlan>,
    meta: usize,
    data: usize,
}

impl Planned {
    /// [`Self::of`], in parallel runs of blocks when `threads` and there
    /// are many (each block's plan is its own).
    pub(crate) fn of_par(values: &[u64], threads: bool) -> Self {
        const RUN: usize = BLOCK << 7;
        if !threads || values.len() < 2 * RUN {
            return Self::of(values);
        }
        use rayon::prelude::*;
        let runs: Vec<Planned> = values.par_chunks(RUN).map(Self::of).collect();
        let mut all = Planned {
            blocks: Vec::with_capacity(values.len().div_ceil(BLOCK)),
            meta: 0,
            data: 0,
        };
        for r in runs {
            all.blocks.extend(r.blocks);
            all.meta += r.meta;
            all.data += r.data;
        }
        all
    }

    /// The plans of `values`' blocks.
    pub(crate) fn of(values: &[u64]) -> Self {
        let (mut meta, mut data) = (0, 0);
        let modes = Use::Slot.modes();
        let blocks = values
            .chunks(BLOCK)
            .map(|block| {
                let p = plan(block, modes);
                meta += p.meta_len();
                data += p.data_len(block.len());
                p
            })
            .collect();
        Planned { blocks, meta, data }
    }

    /// What [`write`] appends to `meta` and to `data`.
    pub(crate) fn sizes(&self) -> (usize, usize) {
        (self.meta, self.data)
    }

    /// [`write`] of `values`, the values these plans were made of.
    pub(crate) fn write(&self, values: &[u64], meta: &mut Vec<u8>, data: &mut Vec<u8>) {
        debug_assert_eq!(self.blocks.len(), values.len().div_ceil(BLOCK));
        for (block, p) in values.chunks(BLOCK).zip(&self.blocks) {
            put_block(block, p, meta, data);
        }
    }
}

/// Appends one block's checkpoint to `meta` and residuals to `data`.
fn put_block(block: &[u64], p: &BlockPlan, meta: &mut Vec<u8>, data: &mut Vec<u8>) {
    if p.heads > 0 {
        // The mode, the heads, then the bitmap and the heads as a block.
        if p.step == 0 {
            meta.push(RUNS_MODE);
            put_varint(meta, p.heads as u64);
        } else {
            meta.push(STEP_RUNS_MODE);
            put_varint(meta, p.heads as u64);
            put_varint(meta, zigzag(p.step as i64));
        }
        let mut bitmap = [0u8; BLOCK / 8];
        let mut heads = Vec::with_capacity(p.heads as usize);
        for (j, &v) in block.iter().enumerate() {
            if j == 0 || v != block[j - 1].wrapping_add(p.step) {
                bitmap[j / 8] |= 1 << (j % 8);
                heads.push(v);
            }
        }
        debug_assert_eq!(heads.len(), p.heads as usize);
        data.extend_from_slice(&bitmap[..bitmap_len(block.len())]);
        let inner = BlockPlan {
            heads: 0,
            step: 0,
            ..*p
        };
        return put_block(&heads, &inner, meta, data);
    }
    match p.slope {
        Some(slope) if p.delta => {
            meta.push(DELTA_MODE + p.bits);
            put_varint(meta, p.base);
            put_varint(meta, zigzag(slope));
            let s = slope as u64;
            let r: Vec<u64> = block
                .windows(2)
                .map(|w| w[1].wrapping_sub(w[0]).wrapping_sub(s))
                .collect();
            let sums = r
                .chunks_exact(DELTA_GROUP)
                .map(|g| (g.iter().sum::<u64>(), group_bits(p.bits)));
            pack_fields(r.iter().map(|&v| (v, p.bits)).chain(sums), data);
        }
        Some(slope) => {
            meta.push(LINEAR_FLAG | p.bits);
            put_varint(meta, p.base);
            put_varint(meta, zigzag(slope));
            let s = slope as u64;
            pack(
                block.iter().enumerate().map(|(j, &v)| {
                    v.wrapping_sub((j as u64).wrapping_mul(s))
                        .wrapping_sub(p.base)
                }),
                p.bits,
                data,
            );
        }
        None => {
            meta.push(p.bits);
            put_varint(meta, p.base);
            pack(block.iter().map(|&v| v - p.base), p.bits, data);
        }
    }
}

/// Bytes [`write`] would append for `values` of a slot column (metadata
/// and residuals).
pub(crate) fn size(values: &[u64]) -> usize {
    let (meta, data) = sizes(values, Use::Slot);
    meta + data
}

/// Bytes [`write`] would append to `meta` and to `data` for `values`.
pub(crate) fn sizes(values: &[u64], to: Use) -> (usize, usize) {
    let (mut meta, mut data) = (0, 0);
    let modes = to.modes();
    for block in values.chunks(BLOCK) {
        let p = plan(block, modes);
        meta += p.meta_len();
        data += p.data_len(block.len());
    }
    (meta, data)
}

/// One parsed checkpoint.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checkpoint {
    pub(super) base: u64,
    pub(super) slope: u64,
    /// Byte offset of the block's residuals inside the column data section.
    pub(super) off: u32,
    pub(super) bits: u8,
    /// A delta block: `slope` is the smallest step, the residuals the
    /// steps above it (one fewer than the values).
    pub(super) delta: bool,
    /// A runs block: its run heads (2 or more), which the fields above
    /// describe as a block of their own; `off` is the bitmap's, the heads'
    /// residuals follow it. 0: not a runs block.
    pub(super) runs: u8,
    /// A runs block's step (format version 9; mod 2^64): value `j` of a
    /// run starting at `s` is its head plus `(j − s)·step`. 0: each run
    /// repeats its head.
    pub(super) step: u64,
}

impl Checkpoint {
    /// Its bytes in the meta: the mode byte, the base, the slope when it
    /// has one (a linear block written with slope 0 counts as FoR here).
    pub(super) fn meta_len(&self) -> u64 {
        let stepped = self.delta || self.slope != 0;
        let runs = if self.runs > 0 {
            let step = if self.step != 0 {
                varint_len(zigzag(self.step as i64))
            } else {
                0
            };
            1 + varint_len(self.runs as u64) + step
        } else {
            0
        };
        (runs
            + 1
            + varint_len(self.base)
            + if stepped {
                varint_len(zigzag(self.slope as i64))
            } else {
                0
            }) as u64
    }

    /// Bytes of its block of `n` values in the column data.
    fn data_len(&self, n: usize) -> usize {
        if self.runs > 0 {
            bitmap_len(n) + block_data_len(self.runs as usize, self.bits, self.delta)
        } else {
            block_data_len(n, self.bits, self.delta)
        }
    }

    /// The values it stores as a block of their own (the heads of a runs
    /// block) and where their residuals start in `d`, the block's data.
    fn own<'d>(&self, d: &'d [u8], n: usize) -> (usize, &'d [u8]) {
        if self.runs > 0 {
            (self.runs as usize, d.get(bitmap_len(n)..).unwrap_or(&[]))
        } else {
            (n, d)
        }
    }
}

/// A parsed integer column: `first` indexes its checkpoints in a shared list.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IntCol {
    pub(crate) first: u32,
    pub(crate) len: u32,
}

/// Parses the checkpoints of a column of `len` values from `meta`, appending
/// them to `cps`; `data_used` is the running size of the column data, which
/// the caller checks against the section at the end. `modes`: which block
/// modes the payload's form allows the column (§5.8.3).
pub(crate) fn parse(
    r: &mut VarReader<'_>,
    len: u32,
    cps: &mut Vec<Checkpoint>,
    data_used: &mut u64,
    modes: Modes,
) -> Result<IntCol> {
    let first = cps.len() as u32;
    let delta = modes.delta;
    let mut left = len as usize;
    while left > 0 {
        let n = left.min(BLOCK);
        left -= n;
        let mut mode = r.u8("integer block mode")?;
        // A runs block: its heads, then their own checkpoint (any mode
        // but runs), which the fields below read.
        let mut runs = 0u8;
        let mut step = 0u64;
        if mode == RUNS_MODE || mode == STEP_RUNS_MODE {
            if !modes.runs || (mode == STEP_RUNS_MODE && !modes.stepped) {
                return Err(r.err(Invariant::BadField {
                    what:
                        "integer block mode (runs blocks are format version 8's, stepped ones 9's, in slot columns)",
                    value: mode as u64,
                }));
            }
            let h = r.varint("runs block heads")?;
            if h < 2 || h > n as u64 {
                return Err(r.err(Invariant::BadField {
                    what: "runs block heads (2 to the block's values)",
                    value: h,
                }));
            }
            runs = h as u8;
            if mode == STEP_RUNS_MODE {
                // One spelling: a step of 0 is mode 252's.
                step = unzigzag(r.varint("runs block step")?) as u64;
                if step == 0 {
                    return Err(r.err(Invariant::BadField {
                        what: "runs block step (a stepped runs block's is not 0)",
                        value: 0,
                    }));
                }
            }
            mode = r.u8("runs block heads' mode")?;
            if mode == RUNS_MODE || mode == STEP_RUNS_MODE {
                return Err(r.err(Invariant::BadField {
                    what: "runs block heads' mode (a runs block's heads are not runs)",
                    value: mode as u64,
                }));
            }
        }
        // The values the mode below stores: the block's, or its heads.
        let own = if runs > 0 { runs as usize } else { n };
        let is_delta = mode > DELTA_MODE;
        let (bits, linear) = if is_delta {
            (mode - DELTA_MODE, true)
        } else {
            (mode & !LINEAR_FLAG, mode & LINEAR_FLAG != 0)
        };
        if bits > 64 {
            return Err(r.err(Invariant::BadField {
                what: "integer block bit width",
                value: bits as u64,
            }));
        }
        // Delta modes: only in a version-7 payload, and only for a block of
        // two values or more (one value is FoR's at 0 bits).
        if is_delta && !delta {
            return Err(r.err(Invariant::BadField {
                what: "integer block mode (delta blocks are format version 7's)",
                value: mode as u64,
            }));
        }
        if is_delta && bits > DELTA_MAX_BITS {
            return Err(r.err(Invariant::BadField {
                what: "integer block bit width (a delta block's is at most 59)",
                value: bits as u64,
            }));
        }
        if is_delta && own < 2 {
            return Err(r.err(Invariant::BadField {
                what: "integer block mode (a delta block of one value)",
                value: mode as u64,
            }));
        }
        let base = r.varint("integer block base")?;
        let slope = if linear {
            unzigzag(r.varint("integer block slope")?) as u64
        } else {
            0
        };
        if *data_used > u32::MAX as u64 {
            return Err(r.err(Invariant::LimitExceeded {
                what: "column data",
                value: *data_used,
                limit: u32::MAX as u64,
            }));
        }
        let cp = Checkpoint {
            base,
            slope,
            off: *data_used as u32,
            bits,
            delta: is_delta,
            runs,
            step,
        };
        *data_used += cp.data_len(n) as u64;
        cps.push(cp);
    }
    Ok(IntCol { first, len })
}

mod plan;
mod read;

use plan::{plan, BlockPlan};

#[cfg(test)]
mod tests;
