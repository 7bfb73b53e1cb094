//! A scan of packed codes for a set of token codes, 16 codes per step with
//! AVX2 where the CPU has it (a portable loop elsewhere).
//!
//! The prefilter of patterns that require a literal: a row that contains
//! the literal holds one of the codes of its plan (`index::plan`), so only
//! rows holding one are decoded and matched. Where the byte-flag scan of
//! `anchor::scan` costs a table lookup per code (as much as decoding the
//! code on long-token columns: bench/SEARCH.md), this is a few vector
//! instructions per 16 codes: unpack 16 codes into 16-bit lanes, then
//!
//! * up to [`MAX_COMPARE`] codes: compare with each, one mask test;
//! * up to [`MAX_CODES`]: two 256-bit set tests by byte shuffles (the
//!   code's low byte, and its top 8 bits), a superset of the set (a code
//!   passes when both bytes occur in some codes of the set, not
//!   necessarily the same one), each passing lane then checked exactly in
//!   a bitset. With `n` codes in the set, a code outside it passes both
//!   tests with probability about `(n / 256)²` when its bytes are spread.

use std::ops::Range;

use crate::format::codes::get;

/// Most codes compared one by one.
pub(crate) const MAX_COMPARE: usize = 8;

/// Most distinct codes a scan looks for.
pub(crate) const MAX_CODES: usize = 96;

/// The codes a scan looks for.
#[derive(Debug, Clone)]
pub(crate) struct CodeSet {
    codes: Vec<u16>,
    /// One bit per code value (65,536).
    exact: Box<[u64]>,
    /// Per key (low byte; top 8 bits), the byte-shuffle tables of its
    /// 256-bit set: `[k][0][l]` has bit `h` for byte `h << 4 | l` with
    /// `h < 8`, `[k][1][l]` bit `h - 8` for `h >= 8`.
    tables: [[[u8; 16]; 2]; 2],
}

impl CodeSet {
    /// The set of `codes` (1..=[`MAX_CODES`]), of a `bits`-wide stream.
    pub(crate) fn new(codes: &[u16], bits: u8) -> Self {
        debug_assert!((1..=MAX_CODES).contains(&codes.len()));
        let mut exact = vec![0u64; 1024].into_boxed_slice();
        let mut tables = [[[0u8; 16]; 2]; 2];
        for &c in codes {
            exact[c as usize / 64] |= 1 << (c % 64);
            for (k, key) in [c & 0xff, c >> (bits - 8) & 0xff].into_iter().enumerate() {
                let (h, l) = ((key >> 4) as usize, (key & 15) as usize);
                tables[k][h / 8][l] |= 1 << (h % 8);
            }
        }
        Self {
            codes: codes.to_vec(),
            exact,
            tables,
        }
    }

    #[inline(always)]
    fn contains(&self, c: u16) -> bool {
        self.exact[c as usize / 64] >> (c % 64) & 1 == 1
    }
}

/// Calls `hit(i)` for each position `i` of `range` whose code is in
/// `set`, in order, until it returns false.
pub(crate) fn scan(
    bits: u8,
    packed: &[u8],
    range: Range<usize>,
    set: &CodeSet,
    mut hit: impl FnMut(usize) -> bool,
) {
    let mut i = range.start;
    // 12-bit codes pair up in 3 bytes: an odd first code on its own.
    if bits == 12 && i % 2 == 1 && i < range.end {
        if set.contains(get(bits, packed, i)) && !hit(i) {
            return;
        }
        i += 1;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        match unsafe { x86::scan(bits, packed, i..range.end, set, &mut hit) } {
            Some(next) => i = next,
            None => return,
        }
    }
    for k in i..range.end {
        if set.contains(get(bits, packed, k)) && !hit(k) {
            return;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use super::CodeSet;

    /// Calls `hit` for each 16-bit lane of `m` (a byte mask of 16 lanes,
    /// two bits per lane) from code `i` on whose code (`c`) is in `set`
    /// (checked when `verify`); false when `hit` asked to stop.
    #[inline(always)]
    fn report(
        mut m: u32,
        i: usize,
        c: __m256i,
        set: &CodeSet,
        verify: bool,
        hit: &mut impl FnMut(usize) -> bool,
    ) -> bool {
        let mut lanes = [0u16; 16];
        if verify {
            // SAFETY: `lanes` has 32 bytes, an unaligned store.
            unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), c) };
        }
        while m != 0 {
            let j = m.trailing_zeros() as usize / 2;
            m &= !(3 << (2 * j));
            if verify && !set.contains(lanes[j]) {
                continue;
            }
            if !hit(i + j) {
                return false;
            }
        }
        true
    }

    /// Per byte, nonzero where the byte `k` (of each 16-bit lane's low
    /// byte) is in the 256-bit set of `t` (`CodeSet::tables`).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn bytes_in(k: __m256i, t: &[[u8; 16]; 2], pow: __m256i) -> __m256i {
        let low4 = _mm256_set1_epi8(0x0f);
        // SAFETY: each table has 16 bytes, an unaligned load.
        let (t0, t1) = unsafe {
            (
                _mm256_broadcastsi128_si256(_mm_loadu_si128(t[0].as_ptr().cast())),
                _mm256_broadcastsi128_si256(_mm_loadu_si128(t[1].as_ptr().cast())),
            )
        };
        let l = _mm256_and_si256(k, low4);
        let h = _mm256_and_si256(_mm256_srli_epi16::<4>(k), low4);
        let row = _mm256_blendv_epi8(
            _mm256_shuffle_epi8(t0, l),
            _mm256_shuffle_epi8(t1, l),
            _mm256_cmpgt_epi8(h, _mm256_set1_epi8(7)),
        );
        _mm256_and_si256(row, _mm256_shuffle_epi8(pow, h))
    }

    /// The lanes (two mask bits each) of the 16 codes `c` that may be in
    /// `set`: exactly when comparing, a superset when filtering.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn lanes(c: __m256i, set: &CodeSet, want: &[__m256i], shift: __m128i) -> u32 {
        if !want.is_empty() {
            let mut acc = _mm256_cmpeq_epi16(c, want[0]);
            for w in &want[1..] {
                acc = _mm256_or_si256(acc, _mm256_cmpeq_epi16(c, *w));
            }
            return _mm256_movemask_epi8(acc) as u32;
        }
        let pow = _mm256_setr_epi8(
            1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64,
            -128, 1, 2, 4, 8, 16, 32, 64, -128,
        );
        // SAFETY: the CPU has AVX2 (this function's contract).
        let (a, b) = unsafe {
            (
                bytes_in(c, &set.tables[0], pow),
                bytes_in(_mm256_srl_epi16(c, shift), &set.tables[1], pow),
            )
        };
        // A lane misses when either key's bit is clear (low bytes only).
        let (low, zero) = (_mm256_set1_epi16(0xff), _mm256_setzero_si256());
        let miss_a = _mm256_cmpeq_epi16(_mm256_and_si256(a, low), zero);
        let miss_b = _mm256_cmpeq_epi16(_mm256_and_si256(b, low), zero);
        !(_mm256_movemask_epi8(_mm256_or_si256(miss_a, miss_b)) as u32)
    }

    /// The AVX2 body of [`super::scan`]: returns the position where the
    /// portable loop takes over, or `None` when `hit` asked to stop.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan(
        bits: u8,
        packed: &[u8],
        range: Range<usize>,
        set: &CodeSet,
        hit: &mut impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let codes = &set.codes;
        // Compared one by one (few codes), else filtered (`want` empty).
        let verify = codes.len() > super::MAX_COMPARE;
        let want: Vec<__m256i> = if verify {
            Vec::new()
        } else {
            codes.iter().map(|&c| _mm256_set1_epi16(c as i16)).collect()
        };
        let shift = _mm_cvtsi32_si128(bits as i32 - 8);
        let (mut i, end) = (range.start, range.end);
        if bits == 16 {
            while i + 16 <= end {
                let src = &packed[2 * i..2 * i + 32];
                // SAFETY: `src` has 32 bytes (sliced above), an unaligned load.
                let c = unsafe { _mm256_loadu_si256(src.as_ptr().cast()) };
                // SAFETY: the CPU has AVX2 (this function's contract).
                let m = unsafe { lanes(c, set, &want, shift) };
                if m != 0 && !report(m, i, c, set, verify, hit) {
                    return None;
                }
                i += 16;
            }
            return Some(i);
        }
        // 12-bit codes: a pair of codes in 3 bytes; start at an even code.
        if i % 2 == 1 && i < end {
            return Some(i);
        }
        // Per 128-bit lane, 8 codes from 12 bytes: code j's 16 bits are
        // bytes 3(j/2) + (j&1) and the next; even codes keep the low 12
        // bits, odd codes the high 12.
        let shuf = _mm256_setr_epi8(
            0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8,
            9, 10, 10, 11,
        );
        let low12 = _mm256_set1_epi16(0x0fff);
        while i + 16 <= end {
            let at = i / 2 * 3;
            // Bytes at..at+24 hold the 16 codes; the second load reads 4
            // bytes past them, so stop where those are not there.
            let Some(src) = packed.get(at..at + 28) else {
                break;
            };
            // SAFETY: `src` has 28 bytes: loads of 16 at 0 and at 12.
            let v = unsafe {
                let lo = _mm_loadu_si128(src.as_ptr().cast());
                let hi = _mm_loadu_si128(src.as_ptr().add(12).cast());
                _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi)
            };
            let v = _mm256_shuffle_epi8(v, shuf);
            let c = _mm256_blend_epi16::<0b1010_1010>(
                _mm256_and_si256(v, low12),
                _mm256_srli_epi16::<4>(v),
            );
            // SAFETY: the CPU has AVX2 (this function's contract).
            let m = unsafe { lanes(c, set, &want, shift) };
            if m != 0 && !report(m, i, c, set, verify, hit) {
                return None;
            }
            i += 16;
        }
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::{scan, CodeSet};

    #[test]
    fn finds_every_position_in_order() {
        for bits in [12u8, 16] {
            let max = if bits == 12 { 4096u32 } else { 65536 };
            let codes: Vec<u16> = (0..1000u32)
                .map(|i| (i * 2654435761 % max) as u16)
                .collect();
            let mut packed = Vec::new();
            crate::format::codes::pack(bits, &codes, &mut packed);
            let few = vec![codes[3], codes[500], codes[999], 7];
            // Past MAX_COMPARE: the filtered scan.
            let many: Vec<u16> = (0..40)
                .map(|k| codes[k * 23 + 1])
                .chain([9, 4095])
                .collect();
            for (want, range) in [&few, &many]
                .into_iter()
                .flat_map(|w| [0..1000, 1..1000, 3..997, 17..18, 0..0].map(|r| (w, r)))
            {
                let set = CodeSet::new(want, bits);
                let mut got = Vec::new();
                scan(bits, &packed, range.clone(), &set, |i| {
                    got.push(i);
                    true
                });
                let expect: Vec<usize> = range
                    .clone()
                    .filter(|&i| want.contains(&codes[i]))
                    .collect();
                assert_eq!(got, expect, "{bits} {range:?}");
                // Stopping after the first.
                let mut first = Vec::new();
                scan(bits, &packed, range.clone(), &set, |i| {
                    first.push(i);
                    false
                });
                assert_eq!(first, expect.iter().copied().take(1).collect::<Vec<_>>());
            }
        }
    }
}
