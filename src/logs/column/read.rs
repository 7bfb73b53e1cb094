//! Reading integer sub-columns (spec/FORMAT.md §5.8.3): one value from its
//! block alone ([`IntCol::get`]), every value ([`IntCol::decode_all`]),
//! what a block's residuals must hold beyond their size
//! ([`IntCol::check_blocks`]), and the tables the GPU decoder reads a delta
//! or runs block through ([`IntCol::device_sums`]).

use std::ops::Range;

use super::super::bits::{get_bits, get_packed, packed_len};
use super::{bitmap_len, group_bits, groups, Checkpoint, IntCol, BLOCK, DELTA_GROUP};
use crate::error::{Invariant, Result};

/// Value `j`'s run in a runs block whose bitmap starts `d` (bit 0 set):
/// the runs starting at or before `j`, less one, and where that run
/// starts (0 when none does).
#[inline]
fn run_of(d: &[u8], j: usize) -> (usize, usize) {
    let mask = if j >= 127 {
        u128::MAX
    } else {
        (1u128 << (j + 1)) - 1
    };
    let upto = bitmap(d, j + 1) & mask;
    let start = 127usize.saturating_sub(upto.leading_zeros() as usize);
    ((upto.count_ones() as usize).saturating_sub(1), start)
}

/// The first `n ≤ 128` bits of a runs block's bitmap at the start of `d`
/// (bytes past `d` read as 0).
#[inline]
fn bitmap(d: &[u8], n: usize) -> u128 {
    let len = bitmap_len(n).min(16);
    if let Some(&w) = d.first_chunk::<16>() {
        // One load; the bytes past the bitmap (the heads') masked off.
        let w = u128::from_le_bytes(w);
        return if len == 16 {
            w
        } else {
            w & ((1u128 << (8 * len)) - 1)
        };
    }
    let mut w = [0u8; 16];
    let len = d.len().min(len);
    w[..len].copy_from_slice(&d[..len]);
    u128::from_le_bytes(w)
}

impl IntCol {
    /// The column's blocks in order: each one's index in `cps`, its
    /// checkpoint and its number of values (none when `cps` lacks them).
    fn blocks<'c>(
        &self,
        cps: &'c [Checkpoint],
    ) -> impl Iterator<Item = (usize, &'c Checkpoint, usize)> + 'c {
        let (start, len) = (self.first as usize, self.len as usize);
        let blocks = len.div_ceil(BLOCK);
        cps.get(start..start + blocks)
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(move |(k, cp)| (start + k, cp, (len - k * BLOCK).min(BLOCK)))
    }

    /// Value `i` (`i < len`), reading only its block. `data` is the column
    /// data section followed by its padding.
    #[inline]
    pub(crate) fn get(&self, cps: &[Checkpoint], data: &[u8], i: usize) -> u64 {
        let Some(cp) = cps.get(self.first as usize + i / BLOCK) else {
            return 0;
        };
        let d = data.get(cp.off as usize..).unwrap_or(&[]);
        let j = i % BLOCK;
        let n = (self.len as usize).saturating_sub(i - j).min(BLOCK);
        if cp.runs > 0 {
            // Value j is the head of its run plus a step for each value
            // of the run before it.
            let (h, heads) = cp.own(d, n);
            let (k, start) = run_of(d, j);
            let head = read_value(cp, heads, h, k.min(h - 1));
            return head.wrapping_add(cp.step.wrapping_mul((j - start.min(j)) as u64));
        }
        read_value(cp, d, n, j)
    }
}

/// Value `j` of a block of `n` values stored FoR, linear or delta as `cp`
/// says, its residuals at the start of `d` (a runs block's heads: the
/// heads' block).
#[inline]
fn read_value(cp: &Checkpoint, d: &[u8], n: usize, j: usize) -> u64 {
    let line = cp.base.wrapping_add(cp.slope.wrapping_mul(j as u64));
    if cp.delta {
        // The sums of the groups before j's, then its group's residuals.
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

impl IntCol {
    /// Bounds that hold every value of the column, from its blocks'
    /// checkpoints in `cps` alone (spec/FORMAT.md §5.8.3; the search's
    /// skeleton narrows an integer slot by them): a block of `m` values at
    /// `bits` bits and slope `s` holds values within `base + min(0,
    /// (m−1)·s) ..= base + 2^bits − 1 + max(0, (m−1)·s)` (frame of
    /// reference, linear), or `base + (m−1)·min(0, s) ..= base +
    /// (m−1)·max(0, s + 2^bits − 1)` (delta: each step is `s` plus a
    /// residual). A runs block holds its heads' values, bounded as a block
    /// of its heads, each moved by at most `m − 1` steps `t` (a stepped
    /// run's value is its head plus `k·t`, `k < m`, `t` signed): within
    /// `lo + min(0, (m−1)·t) ..= hi + max(0, (m−1)·t)`. Worked out without
    /// wrapping; bounds outside `0 .. 2^64` give none (the spec's
    /// arithmetic is modulo 2^64, so a value there could have wrapped). A
    /// superset of the values, so what is ruled out by them is exact.
    pub(crate) fn bounds(&self, cps: &[Checkpoint]) -> Option<(u64, u64)> {
        let blocks = (self.len as usize).div_ceil(BLOCK);
        let cps = cps.get(self.first as usize..self.first as usize + blocks)?;
        let mut range: Option<(u64, u64)> = None;
        for (i, cp) in cps.iter().enumerate() {
            let n = (self.len as usize - i * BLOCK).min(BLOCK);
            let (lo, hi) = block_bounds(cp, n)?;
            range = Some(range.map_or((lo, hi), |(a, z)| (a.min(lo), z.max(hi))));
        }
        range
    }

    /// Clears `alive[i]` (1: alive, 0: not) for each value `i` of the
    /// column that `keep` refuses (`alive`: one flag per value, or fewer;
    /// bytes, so that a block's "any alive" is one `memchr`). `block(lo, hi)`
    /// settles a whole block from its bounds ([`block_bounds`]) when it
    /// can: `Some(false)` clears it and `Some(true)` keeps it, unread;
    /// `None` unpacks it and asks `keep` of each value. A block with no
    /// flag set is passed over. `scratch`: reused.
    pub(crate) fn keep_if(
        &self,
        cps: &[Checkpoint],
        data: &[u8],
        block: impl Fn(u64, u64) -> Option<bool>,
        keep: impl Fn(u64) -> bool,
        alive: &mut [u8],
        scratch: &mut Vec<u64>,
    ) {
        for (k, (_, cp, n)) in self.blocks(cps).enumerate() {
            let Some(a) = alive.get_mut(k * BLOCK..) else {
                break;
            };
            let len = n.min(a.len());
            let a = &mut a[..len];
            if memchr::memchr(1, a).is_none() {
                continue;
            }
            match block_bounds(cp, n).and_then(|(l, h)| block(l, h)) {
                Some(false) => {
                    a.fill(0);
                    continue;
                }
                Some(true) => continue,
                None => {}
            }
            scratch.clear();
            decode_one(cp, data, n, scratch);
            for (f, &v) in a.iter_mut().zip(scratch.iter()) {
                *f &= keep(v) as u8;
            }
        }
    }

    /// Bytes of the column's residuals in the column data.
    pub(crate) fn data_bytes(&self, cps: &[Checkpoint]) -> u64 {
        self.blocks(cps)
            .map(|(_, cp, n)| cp.data_len(n) as u64)
            .sum()
    }

    /// Appends values `from..to` (clamped to the column) to `out`: whole
    /// blocks unpacked, a block's part decoded alone ([`decode_part`]).
    pub(crate) fn decode_range(
        &self,
        cps: &[Checkpoint],
        data: &[u8],
        from: usize,
        to: usize,
        out: &mut Vec<u64>,
    ) {
        let len = self.len as usize;
        let to = to.min(len);
        let mut i = from;
        while i < to {
            let (k, j0) = (i / BLOCK, i % BLOCK);
            let n = (len - k * BLOCK).min(BLOCK);
            let j1 = (to - k * BLOCK).min(n);
            let Some(cp) = cps.get(self.first as usize + k) else {
                return;
            };
            if j0 == 0 && j1 == n {
                decode_one(cp, data, n, out);
            } else {
                decode_part(cp, data, n, j0, j1, out);
            }
            i = k * BLOCK + j1;
        }
    }

    /// Appends all values to `out`.
    pub(crate) fn decode_all(&self, cps: &[Checkpoint], data: &[u8], out: &mut Vec<u64>) {
        for (_, cp, n) in self.blocks(cps) {
            decode_one(cp, data, n, out);
        }
    }
}

/// The least and greatest value a block of `n` values under checkpoint `cp`
/// can hold: a FoR or linear block's base and slope with residuals of its
/// width, a delta block's steps, a runs block's heads each moved by at most
/// `n − 1` steps. `None` when they fall outside `0 .. 2^64` (a value there
/// could have wrapped).
fn block_bounds(cp: &Checkpoint, n: usize) -> Option<(u64, u64)> {
    // A runs block's heads are a block of their own.
    let own = if cp.runs > 0 { cp.runs as usize } else { n };
    let m = own as i128 - 1;
    let (base, slope) = (cp.base as i128, cp.slope as i64 as i128);
    let top = (1i128 << cp.bits.min(64)) - 1;
    let (lo, hi) = if cp.delta {
        (base + m * slope.min(0), base + m * (slope + top).max(0))
    } else {
        (base + (m * slope).min(0), base + top + (m * slope).max(0))
    };
    // A stepped run's values reach up to n − 1 steps past its head.
    let t = if cp.runs > 0 {
        (n as i128 - 1) * cp.step as i64 as i128
    } else {
        0
    };
    let (lo, hi) = (lo + t.min(0), hi + t.max(0));
    if lo < 0 || hi > u64::MAX as i128 {
        return None;
    }
    Some((lo as u64, hi as u64))
}

/// Appends the `n` values of the block under checkpoint `cp` (`data`: the
/// column data section).
fn decode_one(cp: &Checkpoint, data: &[u8], n: usize, out: &mut Vec<u64>) {
    let d = data.get(cp.off as usize..).unwrap_or(&[]);
    if cp.runs > 0 {
        // The heads (at most 128 are ever read: a block holds at most
        // 128 runs), then each run spread from its head.
        let (h, heads) = cp.own(d, n);
        let at = out.len();
        decode_block(cp, heads, h, out);
        let mut hs = [0u64; BLOCK];
        let m = out.len().saturating_sub(at).min(BLOCK);
        hs[..m].copy_from_slice(&out[at..at + m]);
        out.truncate(at);
        let last = m.saturating_sub(1);
        spread_runs(bitmap(d, n), cp.step, 0, n, |k| hs[k.min(last)], out);
    } else {
        decode_block(cp, d, n, out);
    }
}

/// Appends values `j0..j1` (`j1 ≤ n`) of the block of `n` values under
/// checkpoint `cp`, as [`IntCol::get`] reads each, without unpacking the
/// rest of the block: the part of a block a span of rows needs
/// (`render::Window`), when its template has few rows in the span.
fn decode_part(cp: &Checkpoint, data: &[u8], n: usize, j0: usize, j1: usize, out: &mut Vec<u64>) {
    if j0 >= j1 {
        return;
    }
    let d = data.get(cp.off as usize..).unwrap_or(&[]);
    if cp.runs > 0 {
        let (h, heads) = cp.own(d, n);
        let last = h.saturating_sub(1);
        let head = |k: usize| read_value(cp, heads, h, k.min(last));
        spread_runs(bitmap(d, n), cp.step, j0, j1.min(n), head, out);
    } else if cp.delta {
        // The first value read alone, then each next one as the block
        // unpack makes it: the step and its residual added.
        let mut v = read_value(cp, d, n, j0);
        out.push(v);
        out.extend((j0 + 1..j1).map(|j| {
            v = v
                .wrapping_add(cp.slope)
                .wrapping_add(get_packed(d, cp.bits, j - 1));
            v
        }));
    } else {
        unpack_for(cp, d, n, j0..j1, out);
    }
}

/// Appends values `j0..j1` (`j0 < j1 ≤ 128`) of a runs block whose bitmap
/// is `map` and step `step`, its head `k` read by `head(k)`: value `j` is
/// the head of its run (`k` = the bitmap's bits at or before `j`, less
/// one; head 0 when none) plus `(j − s)·step`, `s` where that run starts
/// (its bit; 0 when none): what [`IntCol::get`] reads (`run_of`), a run
/// at a time rather than a value at a time.
#[inline]
fn spread_runs(
    map: u128,
    step: u64,
    j0: usize,
    j1: usize,
    mut head: impl FnMut(usize) -> u64,
    out: &mut Vec<u64>,
) {
    if j0 >= j1 {
        return;
    }
    let upto = if j0 >= 127 {
        map
    } else {
        map & ((2u128 << j0) - 1)
    };
    let mut k = upto.count_ones() as usize;
    let mut start = 127usize.saturating_sub(upto.leading_zeros() as usize);
    let mut v = head(k.saturating_sub(1));
    // The runs starting after `j0` and before `j1`.
    let mut rest = map & !upto;
    if j1 < 128 {
        rest &= (1u128 << j1) - 1;
    }
    let mut j = j0;
    loop {
        let next = if rest == 0 {
            j1
        } else {
            rest.trailing_zeros() as usize
        };
        if step == 0 {
            out.resize(out.len() + (next - j), v);
        } else {
            out.extend((j..next).map(|x| v.wrapping_add(step.wrapping_mul((x - start) as u64))));
        }
        if rest == 0 {
            return;
        }
        rest &= rest - 1;
        (j, start) = (next, next);
        v = head(k);
        k += 1;
    }
}

/// Appends the `n` values of a block stored FoR, linear or delta as `cp`
/// says, its residuals at the start of `d`.
fn decode_block(cp: &Checkpoint, d: &[u8], n: usize, out: &mut Vec<u64>) {
    let (base, slope) = (cp.base, cp.slope);
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
    } else {
        unpack_for(cp, d, n, 0..n, out);
    }
}

/// Appends values `ks` (within `0..n`) of a block of `n` values stored FoR
/// or linear as `cp` says (not delta), its residuals at the start of `d`:
/// the whole block for [`decode_block`], a part for [`decode_part`].
#[inline]
fn unpack_for(cp: &Checkpoint, d: &[u8], n: usize, ks: Range<usize>, out: &mut Vec<u64>) {
    let (base, slope, bits) = (cp.base, cp.slope, cp.bits as usize);
    let ks = ks.start..ks.end.min(n);
    if bits == 0 {
        out.extend(ks.map(|k| base.wrapping_add(slope.wrapping_mul(k as u64))));
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
            out.extend(ks.map(|k| base.wrapping_add(word(k) & mask)));
        } else {
            out.extend(ks.map(|k| {
                base.wrapping_add(word(k) & mask)
                    .wrapping_add(slope.wrapping_mul(k as u64))
            }));
        }
    } else {
        out.extend(ks.map(|k| {
            base.wrapping_add(get_packed(d, cp.bits, k))
                .wrapping_add(slope.wrapping_mul(k as u64))
        }));
    }
}

/// Σ of values `first .. first + n` of a packed run of `bits`-bit values
/// (mod 2^64): part of a delta block's value less its line.
#[inline]
pub(super) fn sum_packed(data: &[u8], bits: u8, first: usize, n: usize) -> u64 {
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
    /// Calls `f` for every delta or runs block of the column with the
    /// index of its checkpoint in `cps`, a base, and one entry per value,
    /// so that a reader holding them reads any value with one field, as a
    /// FoR value (the GPU decoder's tables, `logs::device`). A delta block:
    /// base `None` (its own line, `base + slope·k`), entry `k` the running
    /// sum of its residuals (value `k` less its line, mod 2^64, so entry 0
    /// is 0). A runs block: its own line `Some((base, step))` and entry `k`
    /// value `k` less `base + k·step` (mod 2^64): constant along a run (a
    /// stepped run's values lie on the line moved by its head), the base
    /// where the shortest arc of the circle mod 2^64 holding every entry
    /// starts, so the entries are as narrow as the heads' spread and `127`
    /// steps allow (a run stepping down past 0 does not make them 64 bits
    /// wide). `data` as [`IntCol::get`]'s.
    #[cfg(feature = "gpu")]
    pub(crate) fn device_sums(
        &self,
        cps: &[Checkpoint],
        data: &[u8],
        mut f: impl FnMut(usize, Option<(u64, u64)>, &[u64]),
    ) {
        let mut sums = Vec::with_capacity(BLOCK);
        for (c, cp, n) in self.blocks(cps) {
            if cp.runs > 0 {
                sums.clear();
                let one = IntCol {
                    first: c as u32,
                    len: n as u32,
                };
                one.decode_all(cps, data, &mut sums);
                for (k, v) in sums.iter_mut().enumerate() {
                    *v = v.wrapping_sub(cp.step.wrapping_mul(k as u64));
                }
                let base = arc_start(&sums);
                for v in &mut sums {
                    *v = v.wrapping_sub(base);
                }
                f(c, Some((base, cp.step)), &sums);
                continue;
            }
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
            f(c, None, &sums);
        }
    }

    /// Checks what a block's residuals must hold beyond their size
    /// (spec/FORMAT.md §5.8.3): a runs block's bitmap starts a run at
    /// value 0, starts as many runs as it has heads, and sets no bit past
    /// its values; every delta block's (or runs block heads') group sums
    /// are the sums of its residual groups (one spelling, and a read
    /// through the sums equals a read through the residuals). `data` is the
    /// column data followed by readable bytes (the block's padding); `at`
    /// the block offset of `data`, for errors.
    pub(crate) fn check_blocks(&self, cps: &[Checkpoint], data: &[u8], at: usize) -> Result<()> {
        for (_, cp, n) in self.blocks(cps) {
            let d = data.get(cp.off as usize..).unwrap_or(&[]);
            if cp.runs > 0 {
                let map = d.get(..bitmap_len(n)).unwrap_or(&[]);
                let set: u32 = map.iter().map(|b| b.count_ones()).sum();
                let past = n % 8 != 0 && map.last().is_some_and(|&b| b >> (n % 8) != 0);
                if map.first().map_or(true, |&b| b & 1 == 0) || set != cp.runs as u32 || past {
                    return Err(crate::Error::corrupt(
                        super::super::bits::SECTION,
                        (at + cp.off as usize) as u64,
                        Invariant::BadField {
                            what: "runs block bitmap (a run at value 0, one per head, none past the values)",
                            value: set as u64,
                        },
                    ));
                }
            }
            if !cp.delta {
                continue;
            }
            let (n, d) = cp.own(d, n);
            let b = cp.bits as usize;
            for k in 0..groups(n) {
                let want = sum_packed(d, cp.bits, k * DELTA_GROUP, DELTA_GROUP);
                let got = get_bits(d, (n - 1) * b + k * (b + 5), group_bits(cp.bits));
                if got != want {
                    return Err(crate::Error::corrupt(
                        super::super::bits::SECTION,
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

/// Where the shortest arc of the circle of integers mod 2^64 that holds
/// every value of `v` starts: the value after the widest gap between
/// neighbours in sorted order (the gap from the largest back round to the
/// smallest included). 0 for no values.
#[cfg(feature = "gpu")]
fn arc_start(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    let (Some(&lo), Some(&hi)) = (s.first(), s.last()) else {
        return 0;
    };
    // The wrap-round gap first: with no wider gap inside, the arc starts
    // at the smallest value (values that do not wrap keep their minimum).
    let (mut start, mut widest) = (lo, lo.wrapping_sub(hi));
    for w in s.windows(2) {
        let gap = w[1] - w[0];
        if gap > widest {
            (start, widest) = (w[1], gap);
        }
    }
    start
}
