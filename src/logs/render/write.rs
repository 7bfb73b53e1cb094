//! The unchecked writers a render runs (`Program::put_rank`): a piece's
//! bytes as two 16-byte moves (longer ones by `memcpy`), numbers in
//! decimal 8 digits per SWAR step and in hex, zero padding; each writes
//! up to [`INT_WRITE`](super::INT_WRITE) or 32 bytes past its own, which
//! the render's reserve covers.

use super::MAX_DIGITS;
use crate::logs::bits::{dec_digits, hex_digits, DEC_PAIRS};

/// Copies `src[at..at + n]` to `dst`; returns the end of what it wrote.
///
/// # Safety
/// `src[at..at + n + PAD]` is readable, `dst[..max(n, 32)]` is writable,
/// and they do not overlap.
#[inline(always)]
pub(super) unsafe fn put(src: *const u8, at: u32, n: u32, dst: *mut u8) -> *mut u8 {
    let (at, n) = (at as usize, n as usize);
    // SAFETY: the caller's contract (32 ≤ n + PAD for the fixed moves).
    unsafe {
        let s = src.add(at);
        if n <= 32 {
            std::ptr::copy_nonoverlapping(s, dst, 16);
            std::ptr::copy_nonoverlapping(s.add(16), dst.add(16), 16);
        } else {
            std::ptr::copy_nonoverlapping(s, dst, n);
        }
        dst.add(n)
    }
}

/// The 8 decimal digits of `x < 10^8`, most significant first in memory
/// (SWAR: split into 4-digit, 2-digit, then 1-digit lanes by multiplying
/// by reciprocals; every lane product stays below its lane's width).
#[inline(always)]
fn dec8(x: u64) -> u64 {
    let v = (x / 10_000) | ((x % 10_000) << 32);
    let q = ((v * 10_486) >> 20) & 0x0000_007f_0000_007f;
    let v = ((v - q * 100) << 16) | q;
    let t = ((v * 103) >> 10) & 0x000f_000f_000f_000f;
    let v = ((v - t * 10) << 8) | t;
    v | 0x3030_3030_3030_3030
}

/// The 8 hex digits of `x < 2^32`, most significant first in memory.
#[inline(always)]
fn hex8(x: u64, upper: bool) -> u64 {
    let x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    let x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    let x = ((x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f).swap_bytes();
    let letters = ((x + 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101;
    x + 0x3030_3030_3030_3030 + letters * if upper { 7 } else { 39 }
}

/// Stores `w` at `dst` (unaligned, little-endian).
///
/// # Safety
/// `dst[..8]` is writable.
#[inline(always)]
unsafe fn store(dst: *mut u8, w: u64) {
    // SAFETY: the caller's contract.
    unsafe { dst.cast::<u64>().write_unaligned(w.to_le()) }
}

/// Writes `v` in decimal, zero-padded to `w` digits (at most 40), at
/// `dst`; returns its length (as `bits::render_dec`).
///
/// # Safety
/// `dst[..INT_WRITE]` is writable.
#[inline(always)]
pub(super) unsafe fn put_dec(dst: *mut u8, v: u64, w: usize) -> usize {
    if v < 100 && w <= 2 {
        // Most log numbers: two digits from the pair table, one dropped
        // when neither the value nor the width needs two (no digit
        // count).
        let len = 1 + (v >= 10 || w == 2) as usize;
        // SAFETY: `2·v + 2 ≤ 200` bytes of the table; `dst[..2]` is
        // writable.
        unsafe {
            let pair = DEC_PAIRS.as_ptr().add(2 * v as usize);
            std::ptr::copy_nonoverlapping(pair.add(2 - len), dst, 2);
        }
        return len;
    }
    let n = dec_digits(v);
    // `w ≤ MAX_DIGITS` for every op (`width_at`), `n ≤ 20`.
    let len = w.max(n).min(MAX_DIGITS);
    // SAFETY: every store lands in `dst[..INT_WRITE]`: 8 bytes at 0 or
    // `len - 8 ≤ 8`, or the general path's `dst[0..48]`.
    unsafe {
        if len <= 8 {
            // `v < 10^len`: the top `8 − len` digits are zeros.
            store(dst, dec8(v) >> (8 * (8 - len)));
        } else if len <= 16 {
            store(dst, dec8(v / 100_000_000) >> (8 * (16 - len)));
            store(dst.add(len - 8), dec8(v % 100_000_000));
        } else {
            if len > n {
                zeros(dst, len - n);
            }
            let mut p = dst.add(len);
            let mut x = v;
            while x >= 100 {
                let r = (x % 100) as usize;
                x /= 100;
                p = p.sub(2);
                std::ptr::copy_nonoverlapping(DEC_PAIRS.as_ptr().add(2 * r), p, 2);
            }
            if x >= 10 {
                p = p.sub(2);
                std::ptr::copy_nonoverlapping(DEC_PAIRS.as_ptr().add(2 * x as usize), p, 2);
            } else {
                *p.sub(1) = b'0' + x as u8;
            }
        }
    }
    len
}

/// Writes `v` in hex, zero-padded to `w` digits (at most 40), at `dst`;
/// returns its length (as `bits::render_hex`).
///
/// # Safety
/// `dst[..INT_WRITE]` is writable.
#[inline(always)]
pub(super) unsafe fn put_hex(dst: *mut u8, v: u64, w: usize, upper: bool) -> usize {
    let n = hex_digits(v);
    let len = w.max(n).min(MAX_DIGITS);
    // SAFETY: as in `put_dec`.
    unsafe {
        if len <= 8 {
            store(dst, hex8(v, upper) >> (8 * (8 - len)));
        } else if len <= 16 {
            store(dst, hex8(v >> 32, upper) >> (8 * (16 - len)));
            store(dst.add(len - 8), hex8(v & 0xffff_ffff, upper));
        } else {
            zeros(dst, len - n);
            let digits = if upper {
                b"0123456789ABCDEF"
            } else {
                b"0123456789abcdef"
            };
            let mut x = v;
            for k in (len - n..len).rev() {
                *dst.add(k) = digits[(x & 15) as usize];
                x >>= 4;
            }
        }
    }
    len
}

/// ASCII zeros for leading-zero padding.
const ZEROS: [u8; 48] = [b'0'; 48];

/// Writes ASCII zeros over `dst[0..n]` as whole 16-byte words.
///
/// # Safety
/// `n ≤ 40` and `dst[0..48]` is writable.
#[inline(always)]
unsafe fn zeros(dst: *mut u8, n: usize) {
    // SAFETY: each move covers `k..k + 16` with `k ∈ {0, 16, 32}` and
    // `k + 16 ≤ 48` on both sides.
    unsafe {
        std::ptr::copy_nonoverlapping(ZEROS.as_ptr(), dst, 16);
        if n > 16 {
            std::ptr::copy_nonoverlapping(ZEROS.as_ptr().add(16), dst.add(16), 16);
            if n > 32 {
                std::ptr::copy_nonoverlapping(ZEROS.as_ptr().add(32), dst.add(32), 16);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::INT_WRITE;
    use super::*;
    use crate::logs::bits::{render_dec, render_hex};

    #[test]
    fn integers_render_as_the_point_reader_does() {
        let mut vals: Vec<u64> = (0..=120).chain([u64::MAX, u32::MAX as u64]).collect();
        for e in 0..20 {
            let p = 10u64.pow(e);
            vals.extend([p - 1, p, p + 1]);
        }
        for s in 0..64 {
            vals.extend([1u64 << s, (1u64 << s) - 1]);
        }
        vals.extend((0..2000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)));
        for &v in &vals {
            for w in [0usize, 1, 2, 3, 7, 8, 9, 12, 16, 17, 20, 39, 40, 45] {
                let mut buf = [0u8; INT_WRITE];
                let (mut want, mut got) = (Vec::new(), Vec::new());
                render_dec(&mut want, v, w);
                // SAFETY: `buf` has INT_WRITE bytes.
                let n = unsafe { put_dec(buf.as_mut_ptr(), v, w) };
                got.extend_from_slice(&buf[..n]);
                assert_eq!(got, want, "dec {v} width {w}");
                for upper in [false, true] {
                    want.clear();
                    render_hex(&mut want, v, w, upper);
                    // SAFETY: as above.
                    let n = unsafe { put_hex(buf.as_mut_ptr(), v, w, upper) };
                    assert_eq!(&buf[..n], &want[..], "hex {v} width {w}");
                }
            }
        }
    }
}
