//! Planning one block of an integer column (spec/FORMAT.md §5.8.3): the
//! smallest of FoR, linear FoR, delta and runs for its values, and the
//! bytes each takes. The writer prices every candidate column by planning
//! its blocks (a real log's integers are planned ~15 times over while its
//! layout is chosen: a fifth to a third of a log chunk's encode before
//! 2026-12-06), so the planning is written for speed; the same plans as
//! the straightforward passes (`tests::plans_are_the_reference_plans`).

use super::super::bits::{bits_for, packed_len, varint_len, zigzag};
use super::{bitmap_len, block_data_len, Modes, BLOCK, DELTA_MAX_BITS};

/// How one block is stored: linear FoR (`Some(slope)`) or FoR, the base
/// and the residual width; `delta` (with `Some(slope)`, the smallest step):
/// the residuals are the steps, `base` the first value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct BlockPlan {
    pub(super) slope: Option<i64>,
    pub(super) base: u64,
    pub(super) bits: u8,
    pub(super) delta: bool,
    /// A runs block: its run heads (2 ≤ heads ≤ 128), which the plan
    /// above stores; 0 otherwise.
    pub(super) heads: u8,
    /// A runs block's step (mod 2^64): value `j` of a run starting at `s`
    /// is its head plus `(j − s)·step`; 0 repeats the head (format 8's runs).
    pub(super) step: u64,
}

/// The smallest of FoR, linear FoR, delta and runs (those `modes` allow)
/// for one block (see the module doc).
///
/// Compiled twice: for the build's target and, where the CPU has AVX2,
/// with it (chosen at run time), where the planning's 64-bit minima and
/// maxima vectorize (the baseline x86-64 target has no 64-bit compare;
/// they were ~40% of the planning's instructions). Integer arithmetic and
/// the same `f64` operations in the same order: the same plan either way.
pub(super) fn plan(block: &[u64], modes: Modes) -> BlockPlan {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { plan_avx2(block, modes) };
    }
    plan_any(block, modes)
}

/// [`plan_any`] compiled with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn plan_avx2(block: &[u64], modes: Modes) -> BlockPlan {
    plan_any(block, modes)
}

/// [`plan`]'s body.
#[inline(always)]
fn plan_any(block: &[u64], modes: Modes) -> BlockPlan {
    let best = plan_plain(block, modes.delta);
    if !modes.runs || block.len() < 2 || best.bits == 0 {
        return best;
    }
    // Runs pay a bit a value for the bitmap, plus a few bytes of
    // checkpoint; they save at most `bits` a value that continues its run
    // (fewer when the heads are wider than the block's steps). A run
    // repeats its head (step 0) or, in format version 9, adds a step per
    // value: a stack trace's frames numbered in order of first appearance
    // come back as ids counting up by one. Steps tried: 0, 1 and the
    // block's first non-zero step, in one pass.
    let n = block.len();
    // Runs each step starts: 0, 1, and the first non-zero step (every step
    // before it is 0, which starts a run of that step too). The step is
    // found first, so that the count is one branch-free pass.
    let first = block
        .windows(2)
        .map(|w| w[1].wrapping_sub(w[0]))
        .find(|&d| d != 0)
        .unwrap_or(0);
    let mut counts = [1usize; 3];
    for w in block.windows(2) {
        let d = w[1].wrapping_sub(w[0]);
        counts[0] += (d != 0) as usize;
        counts[1] += (d != 1) as usize;
        counts[2] += (d != first || d == 0) as usize;
    }
    let steps: &[u64] = match (modes.stepped, first) {
        (false, _) | (true, 0) => &[0],
        (true, 1) => &[0, 1],
        (true, _) => &[0, 1, first],
    };
    // A block that is one stepped run (a progression that wraps past
    // 2^64, which no linear slope above caught) has one head: a runs block
    // holds 2 or more, so that step is not taken (step 0 has 2 or more
    // here, the block not being constant).
    let (k, &heads) = counts[..steps.len()]
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c >= 2)
        .min_by_key(|&(_, c)| *c)
        .expect("step 0 starts 2 runs or more");
    let step = steps[k];
    if (n - heads) * best.bits as usize <= n + 16 {
        return best;
    }
    let mut buf = [0u64; BLOCK];
    let mut h = 0;
    for (j, &v) in block.iter().enumerate() {
        if j == 0 || v != block[j - 1].wrapping_add(step) {
            buf[h] = v;
            h += 1;
        }
    }
    debug_assert_eq!(h, heads);
    let mut inner = plan_plain(&buf[..heads], modes.delta);
    let plain = best.meta_len() + best.data_len(n);
    inner.heads = heads as u8;
    inner.step = step;
    if inner.meta_len() + inner.data_len(n) < plain {
        inner
    } else {
        best
    }
}

/// The smallest of FoR, linear FoR and (when `delta`) delta for one block.
///
/// Called for every block of every candidate column the writer prices (a
/// real log's integers are planned ~15 times over), so it is written for
/// speed: on values below 2^62 (nearly every column) the steps, the median
/// step, the least-squares sums, the delta plan's step range and up to
/// three candidate slopes' residual ranges take three passes over the
/// block in `i64` and `f64` arithmetic that gives the same numbers as the
/// general case (`plan_plain_wide`, kept for the rest).
#[inline(always)]
fn plan_plain(block: &[u64], delta: bool) -> BlockPlan {
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
        heads: 0,
        step: 0,
    };
    // A constant block: every candidate slope below is 0 (FoR's own case).
    if n < 2 || for_bits == 0 {
        return fallback;
    }
    if max >= 1 << 62 {
        return plan_plain_wide(block, delta, fallback);
    }
    // Values below 2^62: steps, and residuals of slopes below 2^54 over
    // ≤ 128 positions, fit in i64; `v as f64` is `(v as i64) as f64` (the
    // same integer rounded the same way), and the sums below are the same
    // additions in the same order as `plan_plain_wide`'s.
    let mut buf = [0i64; BLOCK];
    let steps = &mut buf[..n - 1];
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (s, w) in steps.iter_mut().zip(block.windows(2)) {
        let d = w[1] as i64 - w[0] as i64;
        *s = d;
        lo = lo.min(d);
        hi = hi.max(d);
    }
    let ends = ((block[n - 1] as i128 - block[0] as i128) / (n as i128 - 1)) as i64;
    let median = median_step(steps, lo, hi);
    let (sy, sxy) = ls_sums(block, max);
    let ls = least_squares_slope(n, sy, sxy);
    // The distinct non-zero candidates in order, their residual ranges in
    // one pass (those of slopes past 2^54 in i128, apart).
    let mut cands = [0i64; 3];
    let mut k = 0;
    for slope in [ends, median, ls] {
        if slope != 0 && !cands[..k].contains(&slope) {
            cands[k] = slope;
            k += 1;
        }
    }
    let mut ranges = [(0i128, 0i128); 3];
    if cands[..k].iter().all(|c| c.unsigned_abs() < 1 << 54) {
        match k {
            0 => {}
            1 => ranges[0] = residual_range(block, cands[0], true),
            2 => residual_ranges::<2>(block, [cands[0], cands[1]], &mut ranges),
            _ => residual_ranges::<3>(block, cands, &mut ranges),
        }
    } else {
        for c in 0..k {
            ranges[c] = residual_range(block, cands[c], true);
        }
    }
    let mut best = fallback;
    let mut best_len = packed_len(n, for_bits) + varint_len(min);
    for c in 0..k {
        take_slope(&mut best, &mut best_len, n, cands[c], ranges[c]);
    }
    if delta && hi != lo && ((hi as i128 - lo as i128) as u128) >> DELTA_MAX_BITS == 0 {
        // `delta_plan`'s plan, from the steps' range above.
        let d = BlockPlan {
            slope: Some(lo),
            base: block[0],
            bits: bits_for((hi as i128 - lo as i128) as u64),
            delta: true,
            heads: 0,
            step: 0,
        };
        debug_assert_eq!(Some(d), delta_plan(block));
        // `best_len` leaves out the mode byte, as this does.
        if d.meta_len() - 1 + d.data_len(n) < best_len {
            return d;
        }
    }
    best
}

/// `Σ v_j` and `Σ j·v_j` of a block whose greatest value is `max`
/// (below 2^62), as the general case's `f64` additions in order give them.
#[inline(always)]
fn ls_sums(block: &[u64], max: u64) -> (f64, f64) {
    if max < 1 << 40 {
        // Every term and partial sum below is a whole number under 2^53
        // (Σ j·v_j < 8,128 · 2^40), so the f64 sums are exact: these
        // integer sums, converted, are the same numbers (without a chain
        // of dependent floating-point additions).
        let (mut sy, mut sxy) = (0u64, 0u64);
        for (j, &v) in block.iter().enumerate() {
            sy += v;
            sxy += j as u64 * v;
        }
        (sy as f64, sxy as f64)
    } else {
        let (mut sy, mut sxy) = (0f64, 0f64);
        for (j, &v) in block.iter().enumerate() {
            let (x, y) = (j as f64, v as i64 as f64);
            sy += y;
            sxy += x * y;
        }
        (sy, sxy)
    }
}

/// The step at index `len / 2` of `steps` sorted (for a block of `n`
/// values, `(n − 1) / 2`: the median `select_nth_unstable` gives), `steps`
/// in `lo..=hi`: counted where they
/// span fewer than [`MEDIAN_COUNTED`] values (clocks, counters, small ids:
/// most slot columns), which costs a fraction of a selection.
#[inline(always)]
fn median_step(steps: &mut [i64], lo: i64, hi: i64) -> i64 {
    let mid = steps.len() / 2;
    if hi == lo {
        return lo;
    }
    if (hi as i128 - lo as i128) < MEDIAN_COUNTED as i128 {
        // Four tables taking every fourth step (equal steps in a row would
        // each wait for the previous one's count to be stored); at most
        // 32 steps a table, so a count fits a byte.
        let mut counts = [[0u8; MEDIAN_COUNTED]; 4];
        let mut quads = steps.chunks_exact(4);
        for q in &mut quads {
            for (t, &d) in counts.iter_mut().zip(q) {
                t[((d - lo) as usize) % MEDIAN_COUNTED] += 1;
            }
        }
        for (t, &d) in counts.iter_mut().zip(quads.remainder()) {
            t[((d - lo) as usize) % MEDIAN_COUNTED] += 1;
        }
        let mut seen = 0usize;
        for k in 0..MEDIAN_COUNTED {
            seen += counts.iter().map(|t| t[k] as usize).sum::<usize>();
            if seen > mid {
                return lo + k as i64;
            }
        }
    }
    *steps.select_nth_unstable(mid).1
}

/// Widest span of steps whose median [`median_step`] counts.
const MEDIAN_COUNTED: usize = 128;

/// [`plan_plain`] of a block holding a value of 2^62 or more (`fallback`:
/// its FoR plan, at least one bit wide), in `i128` arithmetic.
fn plan_plain_wide(block: &[u64], delta: bool, fallback: BlockPlan) -> BlockPlan {
    let n = block.len();
    let ends = ((block[n - 1] as i128 - block[0] as i128) / (n as i128 - 1)) as i64;
    let mid = (n - 1) / 2;
    let mut buf = [0i128; BLOCK];
    let steps = &mut buf[..n - 1];
    for (s, w) in steps.iter_mut().zip(block.windows(2)) {
        *s = w[1] as i128 - w[0] as i128;
    }
    let median =
        (*steps.select_nth_unstable(mid).1).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    let (mut sy, mut sxy) = (0f64, 0f64);
    for (j, &v) in block.iter().enumerate() {
        let (x, y) = (j as f64, v as f64);
        sy += y;
        sxy += x * y;
    }
    let ls = least_squares_slope(n, sy, sxy);
    let mut best = fallback;
    let mut best_len = packed_len(n, fallback.bits) + varint_len(fallback.base);
    let cands = [ends, median, ls];
    for (k, &slope) in cands.iter().enumerate() {
        if slope == 0 || cands[..k].contains(&slope) {
            continue;
        }
        let range = residual_range(block, slope, false);
        take_slope(&mut best, &mut best_len, n, slope, range);
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

/// The least-squares slope of `n` values at positions `0..n` whose sum
/// is `sy` and whose position-weighted sum is `sxy`, rounded (0 when not
/// finite or past ±9·10^18).
fn least_squares_slope(n: usize, sy: f64, sxy: f64) -> i64 {
    // Σj and Σj² are whole numbers far below 2^53, so their closed forms
    // are the f64 sums exactly.
    let (sx, sxx) = (
        (n * (n - 1) / 2) as f64,
        ((n - 1) * n * (2 * n - 1) / 6) as f64,
    );
    let nf = n as f64;
    let ls = ((nf * sxy - sx * sy) / (nf * sxx - sx * sx)).round();
    if ls.is_finite() && ls.abs() < 9.0e18 {
        ls as i64
    } else {
        0
    }
}

/// The least and greatest residual `v_j − j·slope` of `block` (`small`:
/// its values are below 2^62, so slopes below 2^54 compute in `i64`).
#[inline(always)]
fn residual_range(block: &[u64], slope: i64, small: bool) -> (i128, i128) {
    if small && slope.unsigned_abs() < 1 << 54 {
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
    }
}

/// [`residual_range`] of `K` slopes below 2^54 at once, for values below
/// 2^62 (one pass over the block), into `out[..K]`.
#[inline(always)]
fn residual_ranges<const K: usize>(block: &[u64], slopes: [i64; K], out: &mut [(i128, i128); 3]) {
    let mut lmin = [i64::MAX; K];
    let mut lmax = [i64::MIN; K];
    for (j, &v) in block.iter().enumerate() {
        let (j, v) = (j as i64, v as i64);
        for c in 0..K {
            let e = v - j * slopes[c];
            lmin[c] = lmin[c].min(e);
            lmax[c] = lmax[c].max(e);
        }
    }
    for c in 0..K {
        out[c] = (lmin[c] as i128, lmax[c] as i128);
    }
}

/// Takes linear FoR at `slope` (residuals in `range`) as `best` when its
/// bytes are fewer than `best_len`'s.
fn take_slope(
    best: &mut BlockPlan,
    best_len: &mut usize,
    n: usize,
    slope: i64,
    range: (i128, i128),
) {
    let (lmin, lmax) = range;
    if lmax - lmin > u64::MAX as i128 {
        return;
    }
    let bits = bits_for((lmax - lmin) as u64);
    let len = packed_len(n, bits) + varint_len(lmin as u64) + varint_len(zigzag(slope));
    if len < *best_len {
        *best_len = len;
        *best = BlockPlan {
            slope: Some(slope),
            base: lmin as u64,
            bits,
            delta: false,
            heads: 0,
            step: 0,
        };
    }
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
        heads: 0,
        step: 0,
    })
}

impl BlockPlan {
    /// Checkpoint bytes: the mode byte, the base, the slope if any (a runs
    /// block: its mode byte and heads before the heads' checkpoint).
    pub(super) fn meta_len(&self) -> usize {
        let own = 1 + varint_len(self.base) + self.slope.map_or(0, |s| varint_len(zigzag(s)));
        if self.heads > 0 {
            let step = if self.step != 0 {
                varint_len(zigzag(self.step as i64))
            } else {
                0
            };
            own + 1 + varint_len(self.heads as u64) + step
        } else {
            own
        }
    }

    /// Residual bytes for a block of `n` values.
    pub(super) fn data_len(&self, n: usize) -> usize {
        if self.heads > 0 {
            bitmap_len(n) + block_data_len(self.heads as usize, self.bits, self.delta)
        } else {
            block_data_len(n, self.bits, self.delta)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planning as it was written before it was made fast (2026-12-06,
    /// `ada3eb4`), pass by pass: the oracle of the plans.
    fn reference_plan(block: &[u64], modes: Modes) -> BlockPlan {
        let best = reference_plain(block, modes.delta);
        if !modes.runs || block.len() < 2 || best.bits == 0 {
            return best;
        }
        // Runs pay a bit a value for the bitmap, plus a few bytes of
        // checkpoint; they save at most `bits` a value that continues its run
        // (fewer when the heads are wider than the block's steps). A run
        // repeats its head (step 0) or, in format version 9, adds a step per
        // value: a stack trace's frames numbered in order of first appearance
        // come back as ids counting up by one. Steps tried: 0, 1 and the
        // block's first non-zero step, in one pass.
        let n = block.len();
        // Runs each step starts; the first non-zero step is known once met,
        // and every step before it is 0, so it starts a run of that step too.
        let (mut counts, mut first) = ([1usize; 3], 0u64);
        for w in block.windows(2) {
            let d = w[1].wrapping_sub(w[0]);
            if first == 0 {
                first = d;
            }
            counts[0] += (d != 0) as usize;
            counts[1] += (d != 1) as usize;
            counts[2] += (d != first || d == 0) as usize;
        }
        let steps: &[u64] = match (modes.stepped, first) {
            (false, _) | (true, 0) => &[0],
            (true, 1) => &[0, 1],
            (true, _) => &[0, 1, first],
        };
        // A block that is one stepped run (a progression that wraps past
        // 2^64, which no linear slope above caught) has one head: a runs block
        // holds 2 or more, so that step is not taken (step 0 has 2 or more
        // here, the block not being constant).
        let (k, &heads) = counts[..steps.len()]
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c >= 2)
            .min_by_key(|&(_, c)| *c)
            .expect("step 0 starts 2 runs or more");
        let step = steps[k];
        if (n - heads) * best.bits as usize <= n + 16 {
            return best;
        }
        let mut buf = [0u64; BLOCK];
        let mut h = 0;
        for (j, &v) in block.iter().enumerate() {
            if j == 0 || v != block[j - 1].wrapping_add(step) {
                buf[h] = v;
                h += 1;
            }
        }
        debug_assert_eq!(h, heads);
        let mut inner = reference_plain(&buf[..heads], modes.delta);
        let plain = best.meta_len() + best.data_len(n);
        inner.heads = heads as u8;
        inner.step = step;
        if inner.meta_len() + inner.data_len(n) < plain {
            inner
        } else {
            best
        }
    }

    /// [`reference_plan`]'s FoR, linear FoR and delta planning.
    fn reference_plain(block: &[u64], delta: bool) -> BlockPlan {
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
            heads: 0,
            step: 0,
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
                    heads: 0,
                    step: 0,
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

    /// Blocks of many shapes: constant, counters, clocks, small and wide
    /// steps, sawtooth, random, values past 2^40 (the exact integer sums
    /// end there) and past 2^62 (the wide path), every length to 128.
    fn blocks() -> Vec<Vec<u64>> {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::new();
        for len in (1..=BLOCK).step_by(3).chain([2, 64, 127, 128]) {
            for shape in 0..14u64 {
                let base = [
                    0,
                    7,
                    1 << 20,
                    (1 << 40) - 300,
                    1 << 41,
                    (1 << 62) - 100,
                    u64::MAX - 5000,
                ][(shape % 7) as usize];
                let block: Vec<u64> = (0..len as u64)
                    .map(|j| {
                        let r = rnd();
                        let v = match shape {
                            0 => 0,
                            1 => j,
                            2 => j * 3 + r % 2,
                            3 => (j * 17) % 60,
                            4 => r % 128,
                            5 => r % 100_000,
                            6 => r,
                            7 => j * 1_000 + r % 50,
                            8 => (r % 7).wrapping_sub(3),
                            9 => j / 8,
                            10 => r >> (r % 64),
                            11 => {
                                if r % 10 == 0 {
                                    r
                                } else {
                                    j
                                }
                            }
                            12 => j.wrapping_mul(u64::MAX / 100),
                            _ => (j % 2) * (r % 200),
                        };
                        base.wrapping_add(v)
                    })
                    .collect();
                out.push(block);
            }
            // Values walking by steps drawn from two or three values (the
            // median step then decides between close slopes).
            for k in 0..24u64 {
                let (a, b) = (rnd() % 8, rnd() % 12);
                let mut acc = [0u64, 1 << 30, 1 << 45][(k % 3) as usize];
                let block: Vec<u64> = (0..len)
                    .map(|_| {
                        let r = rnd();
                        acc = acc.wrapping_add(match r % 5 {
                            0 | 1 => a,
                            2 | 3 => b,
                            _ => (a + b) / 2 + k % 3,
                        });
                        acc
                    })
                    .collect();
                out.push(block);
            }
        }
        out
    }

    #[test]
    fn plans_are_the_reference_plans() {
        let modes = [
            Modes {
                delta: true,
                runs: true,
                stepped: true,
            },
            Modes {
                delta: true,
                runs: true,
                stepped: false,
            },
            Modes {
                delta: true,
                runs: false,
                stepped: false,
            },
            Modes {
                delta: false,
                runs: false,
                stepped: false,
            },
        ];
        let blocks = blocks();
        for b in &blocks {
            for &m in &modes {
                let want = reference_plan(b, m);
                // Both builds of the planning: the portable one, and the
                // one the CPU runs (AVX2 where it has it).
                assert_eq!(plan_any(b, m), want, "{b:?}");
                assert_eq!(plan(b, m), want, "{b:?}");
            }
        }
        assert!(blocks.len() > 500);
    }

    /// The sums of the least-squares slope are, bit for bit, the `f64`
    /// additions in order (values up to 2^62, past the exact-sum bound).
    #[test]
    fn slope_sums_are_the_float_sums() {
        let mut blocks = blocks();
        for top in [38u32, 40, 41, 45, 53, 61] {
            blocks.push(
                (0..BLOCK as u64)
                    .map(|j| (1u64 << top) - 1 - j * 977)
                    .collect(),
            );
            blocks.push(
                (0..BLOCK as u64)
                    .map(|j| ((1u64 << top) - 1) / (j + 1))
                    .collect(),
            );
        }
        for b in blocks.iter().filter(|b| b.iter().all(|&v| v < 1 << 62)) {
            let (mut sy, mut sxy) = (0f64, 0f64);
            for (j, &v) in b.iter().enumerate() {
                sy += v as f64;
                sxy += j as f64 * v as f64;
            }
            let max = b.iter().copied().max().unwrap_or(0);
            let (fy, fxy) = ls_sums(b, max);
            assert_eq!(
                (fy.to_bits(), fxy.to_bits()),
                (sy.to_bits(), sxy.to_bits()),
                "{b:?}"
            );
        }
    }

    #[test]
    fn counted_medians_are_the_selected_ones() {
        let mut x = 88172645463325252u64;
        for n in 1..BLOCK {
            for spread in [1u64, 2, 5, 64, 127, 128, 129, 1000] {
                let mut steps: Vec<i64> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % spread) as i64 - 40
                    })
                    .collect();
                let (lo, hi) = (*steps.iter().min().unwrap(), *steps.iter().max().unwrap());
                let mut sorted = steps.clone();
                sorted.sort_unstable();
                assert_eq!(
                    median_step(&mut steps, lo, hi),
                    sorted[n / 2],
                    "{n} steps of spread {spread}"
                );
            }
        }
    }
}
