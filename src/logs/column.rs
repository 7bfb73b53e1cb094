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
//!   steps need the bits of a step, not of the drift from a line.
//!
//! Checkpoints live in the block's metadata (varints, parsed when the block
//! is opened); residuals in the column data, byte-aligned per block.

use super::bits::{
    bits_for, get_bits, get_packed, pack, pack_fields, packed_len, put_varint, unzigzag,
    varint_len, zigzag, VarReader,
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
/// Mode of a delta block of `b` bits: `DELTA_MODE + b` (1 ≤ b ≤ 59). Mode
/// 192 itself is linear FoR at 64 bits.
const DELTA_MODE: u8 = 0xC0;

/// How one block is stored: linear FoR (`Some(slope)`) or FoR, the base
/// and the residual width; `delta` (with `Some(slope)`, the smallest step):
/// the residuals are the steps, `base` the first value.
struct BlockPlan {
    slope: Option<i64>,
    base: u64,
    bits: u8,
    delta: bool,
}

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

/// Whether a pool's offsets may be delta blocks: yes, except under the
/// `test-util` feature with `FASTPAIR_LOGS_NO_POOL_DELTA` set (measured on
/// the GPU, bench/LOGS.md "Format 7").
fn pool_delta() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    !hook_set(&OFF, "FASTPAIR_LOGS_NO_POOL_DELTA")
}

/// Whether the test-util hook `var` is set in the environment (read once
/// into `cell`); never without the `test-util` feature.
fn hook_set(cell: &std::sync::OnceLock<bool>, var: &str) -> bool {
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
}

/// The smallest of FoR, linear FoR and (when `delta`) delta for one block
/// (see the module doc).
fn plan(block: &[u64], delta: bool) -> BlockPlan {
    let (mut min, mut max) = (u64::MAX, 0u64);
    for &v in block {
        min = min.min(v);
        max = max.max(v);
    }
    let for_bits = bits_for(max - min);
    let n = block.len();
    let fallback = BlockPlan {
        slope: None,
        base: min,
        bits: for_bits,
        delta: false,
    };
    // A constant block: every candidate slope below is 0 (FoR's own case).
    if n < 2 || for_bits == 0 {
        return fallback;
    }
    // Candidate slopes: through the end points, the median step, and the
    // least-squares fit; the one whose residuals need the fewest bytes wins.
    let ends = ((block[n - 1] as i128 - block[0] as i128) / (n as i128 - 1)) as i64;
    // Values below 2^62 (nearly every column): steps, and residuals of
    // slopes below 2^54 over ≤ 128 positions, fit in i64 — the same numbers
    // as the i128 arithmetic of the general case, computed faster.
    let small = max < 1 << 62;
    let mid = (n - 1) / 2;
    let median = if small {
        let mut buf = [0i64; BLOCK];
        let steps = &mut buf[..n - 1];
        for (s, w) in steps.iter_mut().zip(block.windows(2)) {
            *s = w[1] as i64 - w[0] as i64;
        }
        *steps.select_nth_unstable(mid).1
    } else {
        let mut buf = [0i128; BLOCK];
        let steps = &mut buf[..n - 1];
        for (s, w) in steps.iter_mut().zip(block.windows(2)) {
            *s = w[1] as i128 - w[0] as i128;
        }
        (*steps.select_nth_unstable(mid).1).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    };
    // Σj and Σj² are whole numbers far below 2^53, so their closed forms
    // are the f64 sums exactly.
    let (sx, sxx) = (
        (n * (n - 1) / 2) as f64,
        ((n - 1) * n * (2 * n - 1) / 6) as f64,
    );
    let (mut sy, mut sxy) = (0f64, 0f64);
    for (j, &v) in block.iter().enumerate() {
        let (x, y) = (j as f64, v as f64);
        sy += y;
        sxy += x * y;
    }
    let nf = n as f64;
    let ls = ((nf * sxy - sx * sy) / (nf * sxx - sx * sx)).round();
    let ls = if ls.is_finite() && ls.abs() < 9.0e18 {
        ls as i64
    } else {
        0
    };
    let mut best = fallback;
    let mut best_len = packed_len(n, for_bits) + varint_len(min);
    let cands = [ends, median, ls];
    for (k, &slope) in cands.iter().enumerate() {
        if slope == 0 || cands[..k].contains(&slope) {
            continue;
        }
        let (lmin, lmax) = if small && slope.unsigned_abs() < 1 << 54 {
            let (mut lmin, mut lmax) = (i64::MAX, i64::MIN);
            for (j, &v) in block.iter().enumerate() {
                let e = v as i64 - j as i64 * slope;
                lmin = lmin.min(e);
                lmax = lmax.max(e);
            }
            (lmin as i128, lmax as i128)
        } else {
            let (mut lmin, mut lmax) = (i128::MAX, i128::MIN);
            for (j, &v) in block.iter().enumerate() {
                let e = v as i128 - j as i128 * slope as i128;
                lmin = lmin.min(e);
                lmax = lmax.max(e);
            }
            (lmin, lmax)
        };
        let range = lmax - lmin;
        if range > u64::MAX as i128 {
            continue;
        }
        let bits = bits_for(range as u64);
        let len = packed_len(n, bits) + varint_len(lmin as u64) + varint_len(zigzag(slope));
        if len < best_len {
            best_len = len;
            best = BlockPlan {
                slope: Some(slope),
                base: lmin as u64,
                bits,
                delta: false,
            };
        }
    }
    if delta {
        if let Some(d) = delta_plan(block) {
            // `best_len` leaves out the mode byte, as this does.
            if d.meta_len() - 1 + d.data_len(n) < best_len {
                return d;
            }
        }
    }
    best
}

/// The delta plan of a block of at least 2 values (see the module doc):
/// `None` when its steps span `2^DELTA_MAX_BITS` or more, or are all equal
/// (linear FoR at 0 bits spells that).
fn delta_plan(block: &[u64]) -> Option<BlockPlan> {
    if block.len() < 2 {
        return None;
    }
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for w in block.windows(2) {
        let d = w[1].wrapping_sub(w[0]) as i64;
        lo = lo.min(d);
        hi = hi.max(d);
    }
    let range = (hi as i128 - lo as i128) as u128;
    if range == 0 || range >> DELTA_MAX_BITS != 0 {
        return None;
    }
    Some(BlockPlan {
        slope: Some(lo),
        base: block[0],
        bits: bits_for(range as u64),
        delta: true,
    })
}

/// Appends the checkpoints of `values` to `meta` and the packed residuals to
/// `data`.
pub(crate) fn write(values: &[u64], meta: &mut Vec<u8>, data: &mut Vec<u8>, to: Use) {
    for block in values.chunks(BLOCK) {
        put_block(block, &plan(block, to.delta()), meta, data);
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
        let delta = Use::Slot.delta();
        let blocks = values
            .chunks(BLOCK)
            .map(|block| {
                let p = plan(block, delta);
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

impl BlockPlan {
    /// Checkpoint bytes: the mode byte, the base, the slope if any.
    fn meta_len(&self) -> usize {
        1 + varint_len(self.base) + self.slope.map_or(0, |s| varint_len(zigzag(s)))
    }

    /// Residual bytes for a block of `n` values.
    fn data_len(&self, n: usize) -> usize {
        block_data_len(n, self.bits, self.delta)
    }
}

/// Appends one block's checkpoint to `meta` and residuals to `data`.
fn put_block(block: &[u64], p: &BlockPlan, meta: &mut Vec<u8>, data: &mut Vec<u8>) {
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
    let delta = to.delta();
    for block in values.chunks(BLOCK) {
        let p = plan(block, delta);
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
}

impl Checkpoint {
    /// Its bytes in the meta: the mode byte, the base, the slope when it
    /// has one (a linear block written with slope 0 counts as FoR here).
    pub(super) fn meta_len(&self) -> u64 {
        let stepped = self.delta || self.slope != 0;
        (1 + varint_len(self.base)
            + if stepped {
                varint_len(zigzag(self.slope as i64))
            } else {
                0
            }) as u64
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
/// the caller checks against the section at the end. `delta`: whether the
/// payload's form allows delta blocks (format version 7, §5.8.3).
pub(crate) fn parse(
    r: &mut VarReader<'_>,
    len: u32,
    cps: &mut Vec<Checkpoint>,
    data_used: &mut u64,
    delta: bool,
) -> Result<IntCol> {
    let first = cps.len() as u32;
    let mut left = len as usize;
    while left > 0 {
        let n = left.min(BLOCK);
        left -= n;
        let mode = r.u8("integer block mode")?;
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
        if is_delta && n < 2 {
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
        cps.push(Checkpoint {
            base,
            slope,
            off: *data_used as u32,
            bits,
            delta: is_delta,
        });
        *data_used += block_data_len(n, bits, is_delta) as u64;
    }
    Ok(IntCol { first, len })
}

impl IntCol {
    /// Value `i` (`i < len`), reading only its block. `data` is the column
    /// data section followed by its padding.
    #[inline]
    pub(crate) fn get(&self, cps: &[Checkpoint], data: &[u8], i: usize) -> u64 {
        let Some(cp) = cps.get(self.first as usize + i / BLOCK) else {
            return 0;
        };
        let d = data.get(cp.off as usize..).unwrap_or(&[]);
        let j = i % BLOCK;
        let line = cp.base.wrapping_add(cp.slope.wrapping_mul(j as u64));
        if cp.delta {
            // The sums of the groups before j's, then its group's residuals.
            let n = (self.len as usize - (i - j)).min(BLOCK);
            let (g, b) = (j / DELTA_GROUP, cp.bits as usize);
            let sums = (0..g).fold(0u64, |s, k| {
                s.wrapping_add(get_bits(d, (n - 1) * b + k * (b + 5), group_bits(cp.bits)))
            });
            let first = g * DELTA_GROUP;
            line.wrapping_add(sums)
                .wrapping_add(sum_packed(d, cp.bits, first, j - first))
        } else {
            line.wrapping_add(get_packed(d, cp.bits, j))
        }
    }

    /// Bytes of the column's residuals in the column data.
    pub(crate) fn data_bytes(&self, cps: &[Checkpoint]) -> u64 {
        let start = self.first as usize;
        let blocks = self.len.div_ceil(BLOCK as u32) as usize;
        let mut left = self.len as usize;
        let mut sum = 0u64;
        for cp in cps.get(start..start + blocks).unwrap_or(&[]) {
            let n = left.min(BLOCK);
            left -= n;
            sum += block_data_len(n, cp.bits, cp.delta) as u64;
        }
        sum
    }

    /// Appends all values to `out`.
    pub(crate) fn decode_all(&self, cps: &[Checkpoint], data: &[u8], out: &mut Vec<u64>) {
        let mut left = self.len as usize;
        let blocks = self.len.div_ceil(BLOCK as u32) as usize;
        let start = self.first as usize;
        for cp in cps.get(start..start + blocks).unwrap_or(&[]) {
            let n = left.min(BLOCK);
            left -= n;
            let d = data.get(cp.off as usize..).unwrap_or(&[]);
            let (base, slope, bits) = (cp.base, cp.slope, cp.bits as usize);
            if cp.delta {
                // v[0] = base; each next value adds the smallest step and
                // its residual.
                let mut v = base;
                out.push(v);
                out.extend((0..n - 1).map(|k| {
                    v = v
                        .wrapping_add(slope)
                        .wrapping_add(get_packed(d, cp.bits, k));
                    v
                }));
            } else if bits == 0 {
                out.extend((0..n).map(|k| base.wrapping_add(slope.wrapping_mul(k as u64))));
            } else if bits <= 56 && d.len() >= packed_len(n, cp.bits) + 8 {
                // Block unpack: one 8-byte load per value at a running bit
                // offset (a residual of ≤ 56 bits starting at bit `b % 8`
                // fits in it), no per-value width dispatch.
                let mask = (1u64 << bits) - 1;
                let p = d.as_ptr();
                // SAFETY: value `k < n` starts at byte `k·bits/8 ≤
                // packed_len(n, bits) − 1`, and `d` has 8 bytes past
                // `packed_len` (checked above), so each 8-byte read is
                // inside `d`.
                let word = |k: usize| unsafe {
                    p.add(k * bits / 8).cast::<u64>().read_unaligned().to_le() >> (k * bits % 8)
                };
                if slope == 0 {
                    out.extend((0..n).map(|k| base.wrapping_add(word(k) & mask)));
                } else {
                    out.extend((0..n).map(|k| {
                        base.wrapping_add(word(k) & mask)
                            .wrapping_add(slope.wrapping_mul(k as u64))
                    }));
                }
            } else {
                out.extend((0..n).map(|k| {
                    base.wrapping_add(get_packed(d, cp.bits, k))
                        .wrapping_add(slope.wrapping_mul(k as u64))
                }));
            }
        }
    }
}

/// Σ of values `first .. first + n` of a packed run of `bits`-bit values
/// (mod 2^64): part of a delta block's value less its line.
#[inline]
fn sum_packed(data: &[u8], bits: u8, first: usize, n: usize) -> u64 {
    let b = bits as usize;
    if b == 0 || n == 0 {
        return 0;
    }
    let end = first + n;
    if b <= 56 && data.len() >= packed_len(end, bits) + 8 {
        let mask = (1u64 << b) - 1;
        let p = data.as_ptr();
        // SAFETY: value `k < end` starts at byte `k·b/8 ≤ packed_len(end,
        // b) − 1`, and `data` has 8 bytes past `packed_len` (checked above),
        // so each 8-byte read is inside `data`; a value of ≤ 56 bits
        // starting at bit `k·b % 8` lies inside its 8 bytes.
        let word = |k: usize| unsafe {
            p.add(k * b / 8).cast::<u64>().read_unaligned().to_le() >> (k * b % 8)
        };
        return (first..end).fold(0u64, |s, k| s.wrapping_add(word(k) & mask));
    }
    (first..end).fold(0u64, |s, k| s.wrapping_add(get_packed(data, bits, k)))
}

impl IntCol {
    /// Calls `f` for every delta block of the column with the index of its
    /// checkpoint in `cps` and the running sums of its residuals: entry `k`
    /// (`k < n`, the block's values) is value `k` less its line
    /// (`base + slope·k`), mod 2^64, so entry 0 is 0. A reader holding them
    /// reads a delta value with one field, as a FoR value (the GPU
    /// decoder's tables, `logs::device`). `data` as [`IntCol::get`]'s.
    #[cfg(feature = "gpu")]
    pub(crate) fn delta_sums(
        &self,
        cps: &[Checkpoint],
        data: &[u8],
        mut f: impl FnMut(usize, &[u64]),
    ) {
        let mut left = self.len as usize;
        let blocks = self.len.div_ceil(BLOCK as u32) as usize;
        let start = self.first as usize;
        let mut sums = Vec::with_capacity(BLOCK);
        for (c, cp) in cps.iter().enumerate().skip(start).take(blocks) {
            let n = left.min(BLOCK);
            left -= n;
            if !cp.delta {
                continue;
            }
            let d = data.get(cp.off as usize..).unwrap_or(&[]);
            let mut s = 0u64;
            sums.clear();
            sums.push(0);
            sums.extend((0..n - 1).map(|k| {
                s = s.wrapping_add(get_packed(d, cp.bits, k));
                s
            }));
            f(c, &sums);
        }
    }

    /// Checks that every delta block's group sums are the sums of its
    /// residual groups (spec/FORMAT.md §5.8.3: one spelling, and a read
    /// through the sums equals a read through the residuals). `data` is the
    /// column data followed by readable bytes (the block's padding); `at`
    /// the block offset of `data`, for errors.
    pub(crate) fn check_groups(&self, cps: &[Checkpoint], data: &[u8], at: usize) -> Result<()> {
        let mut left = self.len as usize;
        let blocks = self.len.div_ceil(BLOCK as u32) as usize;
        let start = self.first as usize;
        for cp in cps.get(start..start + blocks).unwrap_or(&[]) {
            let n = left.min(BLOCK);
            left -= n;
            if !cp.delta {
                continue;
            }
            let d = data.get(cp.off as usize..).unwrap_or(&[]);
            let b = cp.bits as usize;
            for k in 0..groups(n) {
                let want = sum_packed(d, cp.bits, k * DELTA_GROUP, DELTA_GROUP);
                let got = get_bits(d, (n - 1) * b + k * (b + 5), group_bits(cp.bits));
                if got != want {
                    return Err(crate::Error::corrupt(
                        super::bits::SECTION,
                        (at + cp.off as usize) as u64,
                        Invariant::BadField {
                            what: "delta block group sum",
                            value: got,
                        },
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
