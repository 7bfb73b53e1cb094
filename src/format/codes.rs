//! Bit-packed codes (spec/FORMAT.md §5.2).
//!
//! 16-bit codes are `u16` little-endian. 12-bit codes go two to three bytes:
//! codes `a = c[2i]` and `b = c[2i+1]` form the 24-bit little-endian value
//! `a | b << 12`; an odd count is padded with a zero code.

/// Bytes taken by `count` codes of width `bits` (12 or 16).
pub const fn packed_len(bits: u8, count: usize) -> usize {
    if bits == 12 {
        count.div_ceil(2) * 3
    } else {
        count * 2
    }
}

/// Codes packed by one task of [`pack`] (even, so that a task's 12-bit pairs
/// never straddle two tasks).
const PACK_TASK_CODES: usize = 1 << 16;

/// Packs `codes` at width `bits` and appends them to `out`. Long streams
/// (a chunk's codes) are packed on all threads, each task into its own
/// slice of `out`: the bytes do not depend on the thread count.
pub fn pack(bits: u8, codes: &[u16], out: &mut Vec<u8>) {
    debug_assert!(bits == 12 || bits == 16);
    let start = out.len();
    out.resize(start + packed_len(bits, codes.len()), 0);
    let dst = &mut out[start..];
    if codes.len() < 4 * PACK_TASK_CODES {
        pack_into(bits, codes, dst);
        return;
    }
    use rayon::prelude::*;
    dst.par_chunks_mut(packed_len(bits, PACK_TASK_CODES))
        .zip(codes.par_chunks(PACK_TASK_CODES))
        .for_each(|(d, c)| pack_into(bits, c, d));
}

/// [`pack`] into `dst`, exactly `packed_len(bits, codes.len())` bytes.
pub(crate) fn pack_into(bits: u8, codes: &[u16], dst: &mut [u8]) {
    if bits == 16 {
        for (d, &c) in dst.chunks_exact_mut(2).zip(codes) {
            d.copy_from_slice(&c.to_le_bytes());
        }
        return;
    }
    for (d, pair) in dst.chunks_exact_mut(3).zip(codes.chunks(2)) {
        let a = pair[0] as u32;
        let b = pair.get(1).copied().unwrap_or(0) as u32;
        debug_assert!(a < 4096 && b < 4096);
        let v = a | (b << 12);
        d.copy_from_slice(&v.to_le_bytes()[..3]);
    }
}

/// Code `i` of a packed buffer. `packed` must hold at least `i + 1` codes.
#[inline(always)]
pub fn get(bits: u8, packed: &[u8], i: usize) -> u16 {
    if bits == 16 {
        u16::from_le_bytes([packed[2 * i], packed[2 * i + 1]])
    } else {
        let o = (i / 2) * 3;
        let v = packed[o] as u32 | (packed[o + 1] as u32) << 8 | (packed[o + 2] as u32) << 16;
        ((v >> ((i & 1) * 12)) & 0xfff) as u16
    }
}

/// Unpacks codes `start .. start + out.len()` into `out`.
#[inline]
pub fn unpack(bits: u8, packed: &[u8], start: usize, out: &mut [u16]) {
    if bits == 16 {
        let src = &packed[2 * start..2 * (start + out.len())];
        for (o, b) in out.iter_mut().zip(src.chunks_exact(2)) {
            *o = u16::from_le_bytes([b[0], b[1]]);
        }
        return;
    }
    let mut out = out;
    let mut i = start;
    if i % 2 == 1 && !out.is_empty() {
        out[0] = get(12, packed, i);
        out = &mut out[1..];
        i += 1;
    }
    // Whole pairs: one slice check, then three bytes per two codes.
    let pairs = out.len() / 2;
    let src = &packed[i / 2 * 3..(i / 2 + pairs) * 3];
    for (o, t) in out.chunks_exact_mut(2).zip(src.chunks_exact(3)) {
        let v = t[0] as u32 | (t[1] as u32) << 8 | (t[2] as u32) << 16;
        o[0] = (v & 0xfff) as u16;
        o[1] = (v >> 12) as u16;
    }
    if out.len() % 2 == 1 {
        let last = out.len() - 1;
        out[last] = get(12, packed, i + last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn golden_12bit_layout() {
        let mut out = Vec::new();
        pack(12, &[0xabc, 0x123, 0xfff], &mut out);
        assert_eq!(out, [0xbc, 0x3a, 0x12, 0xff, 0x0f, 0x00]);
    }

    /// A stream long enough for the parallel tasks (odd length, appended
    /// after existing bytes) packs as code-by-code placement says (§5.2).
    #[test]
    fn long_streams_pack_as_short_ones() {
        let n = 4 * PACK_TASK_CODES * 2 + 3;
        let codes: Vec<u16> = (0..n)
            .map(|i| ((i * 2_654_435_761) % 4096) as u16)
            .collect();
        for bits in [12u8, 16] {
            let mut p = vec![0xee];
            pack(bits, &codes, &mut p);
            assert_eq!(p.len(), 1 + packed_len(bits, n));
            let mut want = vec![0xee];
            for pair in codes.chunks(2) {
                let b = pair.get(1).copied().unwrap_or(0);
                if bits == 16 {
                    want.extend_from_slice(&pair[0].to_le_bytes());
                    if pair.len() == 2 {
                        want.extend_from_slice(&b.to_le_bytes());
                    }
                } else {
                    let v = u32::from(pair[0]) | u32::from(b) << 12;
                    want.extend_from_slice(&v.to_le_bytes()[..3]);
                }
            }
            assert_eq!(p, want, "{bits}-bit");
            for i in [0, 1, PACK_TASK_CODES - 1, PACK_TASK_CODES, n - 1] {
                assert_eq!(get(bits, &p[1..], i), codes[i]);
            }
        }
    }

    proptest! {
        #[test]
        fn roundtrip(codes12 in proptest::collection::vec(0u16..4096, 0..300), start in 0usize..300) {
            for bits in [12u8, 16] {
                let mut p = Vec::new();
                pack(bits, &codes12, &mut p);
                prop_assert_eq!(p.len(), packed_len(bits, codes12.len()));
                let s = start.min(codes12.len());
                let mut out = vec![0u16; codes12.len() - s];
                unpack(bits, &p, s, &mut out);
                prop_assert_eq!(&out[..], &codes12[s..]);
            }
        }
    }
}
