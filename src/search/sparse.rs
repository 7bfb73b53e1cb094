//! A scan of packed codes for a few token codes, 16 codes per step with
//! AVX2 where the CPU has it (a portable loop elsewhere).
//!
//! The prefilter of plain substrings on large chunks: when one anchor
//! position of the literal (`anchor`) is covered by at most [`MAX_CODES`]
//! tokens of the dictionary, a row that contains the literal holds one of
//! those codes, so only rows holding one are decoded and searched. Where
//! the byte-flag scan of `anchor::scan` costs a table lookup per code (as
//! much as decoding the code on long-token columns: bench/SEARCH.md), this
//! is a few vector instructions per 16 codes: unpack 16 codes into 16-bit
//! lanes, compare with each wanted code, one mask test.

use std::ops::Range;

use crate::format::codes::get;

/// Most distinct codes a scan looks for.
pub(crate) const MAX_CODES: usize = 16;

/// Calls `hit(i)` for each position `i` of `range` whose code is in
/// `codes` (1..=[`MAX_CODES`] codes), in order, until it returns false.
pub(crate) fn scan(
    bits: u8,
    packed: &[u8],
    range: Range<usize>,
    codes: &[u16],
    mut hit: impl FnMut(usize) -> bool,
) {
    debug_assert!((1..=MAX_CODES).contains(&codes.len()));
    let mut i = range.start;
    // 12-bit codes pair up in 3 bytes: an odd first code on its own.
    if bits == 12 && i % 2 == 1 && i < range.end {
        if codes.contains(&get(bits, packed, i)) && !hit(i) {
            return;
        }
        i += 1;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        match unsafe { x86::scan(bits, packed, i..range.end, codes, &mut hit) } {
            Some(next) => i = next,
            None => return,
        }
    }
    for k in i..range.end {
        if codes.contains(&get(bits, packed, k)) && !hit(k) {
            return;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// Calls `hit` for each 16-bit lane of `m` (a byte mask of 16 lanes,
    /// two bits per lane) from code `i` on; false when `hit` asked to stop.
    fn report(mut m: u32, i: usize, hit: &mut impl FnMut(usize) -> bool) -> bool {
        while m != 0 {
            let j = m.trailing_zeros() as usize / 2;
            m &= !(3 << (2 * j));
            if !hit(i + j) {
                return false;
            }
        }
        true
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
        codes: &[u16],
        hit: &mut impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        // Unused slots repeat the first code (a duplicate compare).
        let want: [__m256i; super::MAX_CODES] =
            std::array::from_fn(|k| _mm256_set1_epi16(*codes.get(k).unwrap_or(&codes[0]) as i16));
        let n = codes.len();
        let (mut i, end) = (range.start, range.end);
        if bits == 16 {
            while i + 16 <= end {
                let src = &packed[2 * i..2 * i + 32];
                // SAFETY: `src` has 32 bytes (sliced above), an unaligned load.
                let c = unsafe { _mm256_loadu_si256(src.as_ptr().cast()) };
                let mut acc = _mm256_cmpeq_epi16(c, want[0]);
                for w in &want[1..n] {
                    acc = _mm256_or_si256(acc, _mm256_cmpeq_epi16(c, *w));
                }
                let m = _mm256_movemask_epi8(acc) as u32;
                if m != 0 && !report(m, i, hit) {
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
            let mut acc = _mm256_cmpeq_epi16(c, want[0]);
            for w in &want[1..n] {
                acc = _mm256_or_si256(acc, _mm256_cmpeq_epi16(c, *w));
            }
            let m = _mm256_movemask_epi8(acc) as u32;
            if m != 0 && !report(m, i, hit) {
                return None;
            }
            i += 16;
        }
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn finds_every_position_in_order() {
        for bits in [12u8, 16] {
            let max = if bits == 12 { 4096u32 } else { 65536 };
            let codes: Vec<u16> = (0..1000u32)
                .map(|i| (i * 2654435761 % max) as u16)
                .collect();
            let mut packed = Vec::new();
            crate::format::codes::pack(bits, &codes, &mut packed);
            let want = [codes[3], codes[500], codes[999], 7];
            for range in [0..1000, 1..1000, 3..997, 17..18, 0..0] {
                let mut got = Vec::new();
                scan(bits, &packed, range.clone(), &want, |i| {
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
                scan(bits, &packed, range.clone(), &want, |i| {
                    first.push(i);
                    false
                });
                assert_eq!(first, expect.iter().copied().take(1).collect::<Vec<_>>());
            }
        }
    }
}
