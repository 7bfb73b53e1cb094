//! Where a needle of one to four bytes starts in a buffer, as a bitmap
//! built 32 bytes a step (AVX2 where the CPU has it, SSE2 otherwise).
//!
//! `memmem` finds the next match fast, but each call has a set-up cost of
//! tens of instructions; a needle that most short rows hold (a space, a
//! vowel, a punctuation mark) pays that once per row, and there one call
//! per row cost more than decoding the row (bench/SEARCH.md, "Short
//! needles as a bitmap"). Here every position of the buffer is compared at
//! once: byte `k` of the needle against the buffer shifted by `k`, the
//! masks ANDed, so a set bit is an exact match start (no verification), at
//! a few instructions per 32 positions whatever the density. The rows are
//! then read off the bitmap (`spans::values_containing`).

/// The longest needle this handles.
pub(crate) const MAX_SHORT: usize = 4;

/// Whether a needle of `n` bytes is found through a bitmap here (x86-64
/// only: elsewhere the caller keeps its `memmem` loop).
pub(crate) fn usable(n: usize) -> bool {
    cfg!(target_arch = "x86_64") && (1..=MAX_SHORT).contains(&n)
}

/// Sets `out` to one bit per position `p` of `hay` (bit `p % 64` of word
/// `p / 64`), set exactly when `hay[p..p + needle.len()] == needle`.
/// `needle` is 1..=[`MAX_SHORT`] bytes.
pub(crate) fn starts(needle: &[u8], hay: &[u8], out: &mut Vec<u64>) {
    starts_with(needle, hay, out, Kernel::best());
}

/// The vector width [`starts`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kernel {
    /// Per position (the tail, and targets without SSE2).
    Scalar,
    /// 16 positions a compare (every x86-64 CPU).
    #[cfg(target_arch = "x86_64")]
    Sse2,
    /// 32 positions a compare, where the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    fn best() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                Kernel::Avx2
            } else {
                Kernel::Sse2
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Kernel::Scalar
    }
}

fn starts_with(needle: &[u8], hay: &[u8], out: &mut Vec<u64>, kernel: Kernel) {
    let n = needle.len();
    assert!((1..=MAX_SHORT).contains(&n), "needle of {n} bytes");
    out.clear();
    out.resize(hay.len().div_ceil(64), 0);
    // Whole words while every byte a word's positions compare is in `hay`:
    // word `w` reads `hay[64w .. 64w + 64 + n - 1)`.
    let words = (hay.len() + 1).saturating_sub(64 + n - 1).div_ceil(64);
    let words = words.min(hay.len() / 64);
    let mut needle4 = [0u8; MAX_SHORT];
    needle4[..n].copy_from_slice(needle);
    match kernel {
        Kernel::Scalar => {}
        // SAFETY: word `w < words` reads bytes below `64w + 64 + n - 1
        // <= hay.len()` (`words`' bound), and writes `out[w]`, `w <
        // out.len()`; AVX2 was detected at run time (`Kernel::best`) or
        // by the test that forces it.
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => unsafe { x86::avx2(needle4, n, hay, &mut out[..words]) },
        // SAFETY: as above; SSE2 is part of x86-64.
        #[cfg(target_arch = "x86_64")]
        Kernel::Sse2 => unsafe { x86::sse2(needle4, n, hay, &mut out[..words]) },
    }
    let from = if kernel == Kernel::Scalar {
        0
    } else {
        words * 64
    };
    for p in from..(hay.len() + 1).saturating_sub(n) {
        if &hay[p..p + n] == needle {
            out[p / 64] |= 1 << (p % 64);
        }
    }
}

/// The first set bit of `bits` at or after `at`.
#[inline]
pub(crate) fn next_set(bits: &[u64], at: usize) -> Option<usize> {
    let mut w = at / 64;
    let mut m = *bits.get(w)? & (!0u64 << (at % 64));
    loop {
        if m != 0 {
            return Some(w * 64 + m.trailing_zeros() as usize);
        }
        w += 1;
        m = *bits.get(w)?;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Word `w` of `out` for the positions `64w..64w + 64` of `hay`, by
    /// 32-byte compares.
    ///
    /// # Safety
    /// The CPU has AVX2; `hay` holds at least `64 * out.len() + n - 1`
    /// bytes; `1 <= n <= 4`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2(needle: [u8; 4], n: usize, hay: &[u8], out: &mut [u64]) {
        // SAFETY: the contract, passed on.
        unsafe {
            match n {
                1 => avx2_n::<1>(needle, hay, out),
                2 => avx2_n::<2>(needle, hay, out),
                3 => avx2_n::<3>(needle, hay, out),
                _ => avx2_n::<4>(needle, hay, out),
            }
        }
    }

    /// [`avx2`] for a needle of `N` bytes (the compares unrolled).
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_n<const N: usize>(needle: [u8; 4], hay: &[u8], out: &mut [u64]) {
        debug_assert!(hay.len() + 1 >= 64 * out.len() + N);
        let v = needle.map(|b| _mm256_set1_epi8(b as i8));
        let p = hay.as_ptr();
        for (w, o) in out.iter_mut().enumerate() {
            let mut half = [0u64; 2];
            for (h, m) in half.iter_mut().enumerate() {
                let at = 64 * w + 32 * h;
                // SAFETY: each load reads 32 bytes at `at + k`, `k < N`:
                // below `64w + 64 + N - 1 <= hay.len()` (the contract).
                unsafe {
                    let mut e = _mm256_cmpeq_epi8(_mm256_loadu_si256(p.add(at).cast()), v[0]);
                    // A constant range, unrolled (an iterator over `v` was
                    // not inlined into the target-feature function).
                    #[allow(clippy::needless_range_loop)]
                    for k in 1..N {
                        let x = _mm256_loadu_si256(p.add(at + k).cast());
                        e = _mm256_and_si256(e, _mm256_cmpeq_epi8(x, v[k]));
                    }
                    *m = _mm256_movemask_epi8(e) as u32 as u64;
                }
            }
            *o = half[0] | half[1] << 32;
        }
    }

    /// As [`avx2`], 16 bytes a compare.
    ///
    /// # Safety
    /// `hay` holds at least `64 * out.len() + n - 1` bytes; `1 <= n <= 4`.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn sse2(needle: [u8; 4], n: usize, hay: &[u8], out: &mut [u64]) {
        // SAFETY: the contract, passed on.
        unsafe {
            match n {
                1 => sse2_n::<1>(needle, hay, out),
                2 => sse2_n::<2>(needle, hay, out),
                3 => sse2_n::<3>(needle, hay, out),
                _ => sse2_n::<4>(needle, hay, out),
            }
        }
    }

    /// [`sse2`] for a needle of `N` bytes.
    #[target_feature(enable = "sse2")]
    unsafe fn sse2_n<const N: usize>(needle: [u8; 4], hay: &[u8], out: &mut [u64]) {
        debug_assert!(hay.len() + 1 >= 64 * out.len() + N);
        let v = needle.map(|b| _mm_set1_epi8(b as i8));
        let p = hay.as_ptr();
        for (w, o) in out.iter_mut().enumerate() {
            let mut word = 0u64;
            for q in 0..4 {
                let at = 64 * w + 16 * q;
                // SAFETY: each load reads 16 bytes at `at + k`, `k < N`:
                // below `64w + 64 + N - 1 <= hay.len()` (the contract).
                unsafe {
                    let mut e = _mm_cmpeq_epi8(_mm_loadu_si128(p.add(at).cast()), v[0]);
                    // A constant range, unrolled (an iterator over `v` was
                    // not inlined into the target-feature function).
                    #[allow(clippy::needless_range_loop)]
                    for k in 1..N {
                        let x = _mm_loadu_si128(p.add(at + k).cast());
                        e = _mm_and_si128(e, _mm_cmpeq_epi8(x, v[k]));
                    }
                    word |= (_mm_movemask_epi8(e) as u32 as u64) << (16 * q);
                }
            }
            *o = word;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(needle: &[u8], hay: &[u8]) -> Vec<u64> {
        let mut out = vec![0u64; hay.len().div_ceil(64)];
        for p in 0..(hay.len() + 1).saturating_sub(needle.len()) {
            if hay[p..].starts_with(needle) {
                out[p / 64] |= 1 << (p % 64);
            }
        }
        out
    }

    fn kernels() -> Vec<Kernel> {
        #[allow(unused_mut)]
        let mut k = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            k.push(Kernel::Sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                k.push(Kernel::Avx2);
            }
        }
        k
    }

    /// Every kernel sets exactly the match starts: needles with zero bytes
    /// and repeated bytes (overlapping matches), buffers around the word
    /// and vector edges, matches in the last bytes.
    #[test]
    fn starts_are_the_match_positions() {
        let needles: [&[u8]; 8] = [
            b"a", b"\0", b"aa", b"ab", b"\0a\0", b"aaa", b"abca", b"aaaa",
        ];
        let mut out = Vec::new();
        for len in (0..200).chain([255, 256, 257, 1000, 4097]) {
            for seed in 0..3u64 {
                let hay: Vec<u8> = (0..len as u64)
                    .map(|i| {
                        let x = (i ^ seed.wrapping_mul(0x9e37)).wrapping_mul(0x2545_f491_4f6c_dd1d);
                        [b'a', b'b', b'c', 0][(x >> 61) as usize % 4]
                    })
                    .collect();
                for needle in needles {
                    for k in kernels() {
                        starts_with(needle, &hay, &mut out, k);
                        assert_eq!(out, naive(needle, &hay), "{k:?} {needle:?} len {len}");
                    }
                }
            }
        }
    }

    /// Sparse matches planted in filler: groups of 256 positions without
    /// the byte the kernel tests first (skipped) next to groups with one,
    /// matches across the group and word edges.
    #[test]
    fn sparse_starts_are_the_match_positions() {
        let mut out = Vec::new();
        for needle in [&b"q"[..], b"qz", b"zq", b"xq", b"qxz", b"xxqx", b"zzzz"] {
            for len in [300, 1024, 5000] {
                for at in [0, 62, 63, 64, 254, 255, 256, 511, 700, 1020, 4990] {
                    let mut hay = vec![b'x'; len];
                    for p in [at, at + 500, at + 1777] {
                        if p + needle.len() <= len {
                            hay[p..p + needle.len()].copy_from_slice(needle);
                        }
                    }
                    for k in kernels() {
                        starts_with(needle, &hay, &mut out, k);
                        assert_eq!(out, naive(needle, &hay), "{k:?} {needle:?} {len} {at}");
                    }
                }
            }
        }
    }

    #[test]
    fn next_set_finds_each_bit_in_order() {
        let bits = [0u64, 1 << 63, 0, 0, 5];
        assert_eq!(next_set(&bits, 0), Some(127));
        assert_eq!(next_set(&bits, 127), Some(127));
        assert_eq!(next_set(&bits, 128), Some(256));
        assert_eq!(next_set(&bits, 257), Some(258));
        assert_eq!(next_set(&bits, 259), None);
        assert_eq!(next_set(&bits, 10_000), None);
        assert_eq!(next_set(&[], 0), None);
    }

    proptest! {
        #[test]
        fn starts_match_a_naive_scan(
            hay in proptest::collection::vec(prop_oneof![Just(b'x'), Just(b'y'), any::<u8>()], 0..600),
            needle in proptest::collection::vec(prop_oneof![Just(b'x'), Just(b'y')], 1..=MAX_SHORT),
        ) {
            let mut out = Vec::new();
            for k in kernels() {
                starts_with(&needle, &hay, &mut out, k);
                prop_assert_eq!(&out, &naive(&needle, &hay));
            }
        }
    }
}
