//! Bulk rendering of a log block's rows (`LogBlock::decode_all`, the split
//! column's interleaved decode, a chunk's bulk read).
//!
//! Each template is compiled once per decode into a *program*: one [`Op`]
//! per slot — the static string before it (an offset and a length into the
//! block's decoded static strings) and the slot's kind with the position of
//! its values in the unpacked integer columns — plus a closing op for the
//! last static string. A row then runs its template's ops: no per-slot
//! lookups of the block's structures, one branch on a small kind.
//! The output is written through [`Sink`], which keeps `SLACK` bytes of
//! spare capacity past what it has written so that static text and strings
//! move as whole 16-byte words (their sources are padded by 16 bytes) and
//! numbers are written digit pairs at a time in place, without zeroing the
//! buffer first.
//!
//! Measured with callgrind on Loghub Linux_full (25,567 rows, 2.3 MB;
//! bench/LOGS.md): the per-slot loop over the block's structures with
//! bounds-checked 16-byte copies took 1,578 instructions a row and a zero
//! fill of the whole output 9% more.

use super::bits::{dec_digits, hex_digits, DEC_PAIRS};

/// Bytes of spare capacity the sink keeps past its length: the widest
/// write past a value's end (a 16-byte word started one byte before the
/// end: 15) or a rendered number (at most 40 digits), with margin.
const SLACK: usize = 64;

/// Op kinds.
pub(super) const END: u8 = 0;
pub(super) const DEC: u8 = 1;
pub(super) const HEX_LOWER: u8 = 2;
pub(super) const HEX_UPPER: u8 = 3;
pub(super) const DICT: u8 = 4;
pub(super) const FREE: u8 = 5;

/// One step of a template's program: the static string
/// `statics[at..at + len]`, then a slot of `kind`:
/// - `DEC`/`HEX_*`: the value at `ints[col + rank]`, zero-padded to `width`
///   digits (0: natural), or to `ints[aux + rank]` digits when `per_row`;
/// - `DICT`: value dictionary entry `ints[col + rank]`, whose static string
///   is `aux + id`;
/// - `FREE`: pool string `col + rank`;
/// - `END`: nothing (the template's last static string).
#[derive(Clone, Copy, Debug)]
pub(super) struct Op {
    pub(super) at: u32,
    pub(super) len: u32,
    pub(super) col: u32,
    pub(super) aux: u32,
    pub(super) kind: u8,
    pub(super) width: u8,
    pub(super) per_row: bool,
}

/// State of a bulk decode of one block (`LogBlock::bulk`): every integer
/// column unpacked, every pool string decoded, and the templates' programs.
pub(crate) struct Bulk {
    /// Every pool string, concatenated, then 16 zero bytes.
    pub(super) pbuf: Vec<u8>,
    /// Pool string `i` is `pbuf[pstart[i]..pstart[i + 1]]`.
    pub(super) pstart: Vec<u32>,
    /// Every integer column, unpacked, one after another.
    pub(super) ints: Vec<u64>,
    /// Static string `i` is `statics[sstart[i]..sstart[i + 1]]`.
    pub(super) sstart: Vec<u32>,
    /// The templates' programs, one after another.
    pub(super) ops: Vec<Op>,
    /// Template `t`'s program is `ops[first_op[t]..first_op[t + 1]]`.
    pub(super) first_op: Vec<u32>,
    /// Per template: rank of its next row.
    pub(super) cursor: Vec<u32>,
}

impl Bulk {
    /// Renders the next row of template `tid` (its rank taken from and
    /// advanced in `self`) into `sink`; `statics` are the block's decoded
    /// static strings followed by 16 bytes.
    #[inline]
    pub(super) fn render_next(&mut self, statics: &[u8], tid: u32, sink: &mut Sink) {
        let t = tid as usize;
        let (Some(&o0), Some(&o1), Some(c)) = (
            self.first_op.get(t),
            self.first_op.get(t + 1),
            self.cursor.get_mut(t),
        ) else {
            return;
        };
        let rank = *c as usize;
        *c += 1;
        let Some(ops) = self.ops.get(o0 as usize..o1 as usize) else {
            return;
        };
        let int = |i: usize| self.ints.get(i).copied().unwrap_or(0);
        let range = |starts: &[u32], i: usize| match (starts.get(i), starts.get(i + 1)) {
            (Some(&a), Some(&e)) => (a as usize, e.saturating_sub(a) as usize),
            _ => (0, 0),
        };
        for op in ops {
            sink.copy(statics, op.at as usize, op.len as usize);
            match op.kind {
                END => {}
                DEC | HEX_LOWER | HEX_UPPER => {
                    let v = int(op.col as usize + rank);
                    let w = if op.per_row {
                        int(op.aux as usize + rank) as usize
                    } else {
                        op.width as usize
                    };
                    match op.kind {
                        DEC => sink.dec(v, w),
                        HEX_LOWER => sink.hex(v, w, b"0123456789abcdef"),
                        _ => sink.hex(v, w, b"0123456789ABCDEF"),
                    }
                }
                DICT => {
                    let id = int(op.col as usize + rank) as usize;
                    let (a, n) = range(&self.sstart, op.aux as usize + id);
                    sink.copy(statics, a, n);
                }
                _ => {
                    let (a, n) = range(&self.pstart, op.col as usize + rank);
                    sink.copy(&self.pbuf, a, n);
                }
            }
        }
    }
}

/// ASCII zeros for leading-zero padding.
const ZEROS: [u8; 48] = [b'0'; 48];

/// Writes ASCII zeros over `dst[0..n]` as whole 16-byte words (a `memset`
/// call per padded number cost more than the number).
///
/// # Safety
/// `n ≤ 40` and `dst[0..48]` is writable.
#[inline(always)]
unsafe fn zeros(dst: *mut u8, n: usize) {
    // Unrolled: a loop of fixed moves is turned into a `memcpy` call.
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

/// The bulk decoder's output: bytes written into a vector's spare capacity
/// (`len` of them are initialized; the vector's own length is set only when
/// it grows and at [`Sink::finish`]), keeping `SLACK` bytes of capacity
/// past `len`.
pub(crate) struct Sink {
    buf: Vec<u8>,
    pub(crate) len: usize,
}

impl Sink {
    /// A sink over `buf` (cleared), sized for `rows` rows of ~64 bytes.
    pub(crate) fn new(mut buf: Vec<u8>, rows: usize) -> Self {
        buf.clear();
        buf.reserve(rows.saturating_mul(64).max(256) + SLACK);
        Sink { buf, len: 0 }
    }

    /// Makes room for `n` more bytes (plus `SLACK`).
    #[inline(always)]
    fn room(&mut self, n: usize) {
        if self.len + n + SLACK > self.buf.capacity() {
            self.grow(n);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        // SAFETY: bytes `0..len` were written by the methods below (each
        // initializes every byte it counts) and `len ≤ capacity`.
        unsafe { self.buf.set_len(self.len) };
        let want = (self.buf.capacity() * 2).max(self.len + n + SLACK);
        self.buf.reserve(want - self.len);
    }

    /// Appends `src[at..at + n]` (nothing when that is not inside `src`,
    /// which validated blocks never ask): as whole 16-byte words when `src`
    /// has 16 bytes past it, else exactly.
    #[inline(always)]
    pub(crate) fn copy(&mut self, src: &[u8], at: usize, n: usize) {
        self.room(n);
        let Some(end) = at.checked_add(n).filter(|&e| e <= src.len()) else {
            return;
        };
        let dst = self.buf.as_mut_ptr().wrapping_add(self.len);
        // Short strings (most static text, words, numbers) as one or two
        // fixed 16-byte moves; longer ones through `memcpy` (a loop of
        // 16-byte moves is turned into a call anyway, and costs a call on
        // every short string then: measured, 13 calls a row).
        if n <= 32 && end + 16 <= src.len() {
            // SAFETY: source: `at + 32 ≤ end + 16 ≤ src.len()` when `n >
            // 16`, and `at + 16 ≤ end + 16` otherwise. Destination: `len +
            // 32 ≤ len + n + SLACK ≤ capacity` (`room`). The two do not
            // overlap (`src` is not this sink's buffer: it is borrowed
            // while `self` is mutably borrowed).
            unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr().add(at), dst, 16);
                if n > 16 {
                    std::ptr::copy_nonoverlapping(src.as_ptr().add(at + 16), dst.add(16), 16);
                }
            }
        } else {
            // SAFETY: `src[at..end]` is inside `src` (checked above); `n`
            // bytes fit before `capacity` (`room`); no overlap (as above).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(at), dst, n) };
        }
        self.len += n;
    }

    /// Appends `v` in decimal, zero-padded to `w` digits (at most 40).
    #[inline(always)]
    pub(crate) fn dec(&mut self, v: u64, w: usize) {
        self.room(40);
        let n = dec_digits(v);
        let w = w.clamp(n, 40);
        let dst = self.buf.as_mut_ptr().wrapping_add(self.len);
        // SAFETY: every write lands in `dst[0..48]`, inside the capacity
        // (`room(40)` keeps `40 + SLACK`): zeros over `0..w - n` (whole
        // 16-byte words, `w ≤ 40`), then exactly `n = dec_digits(v)`
        // digits ending at `w` (pairs while ≥ 100 is left, then one or
        // two digits); only `0..w` is counted.
        unsafe {
            if w > n {
                zeros(dst, w - n);
            }
            let mut p = dst.add(w);
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
                p = p.sub(1);
                *p = b'0' + x as u8;
            }
        }
        self.len += w;
    }

    /// Appends `v` in hex with `digits`, zero-padded to `w` digits (at most 40).
    #[inline(always)]
    pub(crate) fn hex(&mut self, v: u64, w: usize, digits: &[u8; 16]) {
        self.room(40);
        let n = hex_digits(v);
        let w = w.clamp(n, 40);
        let dst = self.buf.as_mut_ptr().wrapping_add(self.len);
        // SAFETY: as in `dec`: zeros over `dst[0..w - n]` (whole words,
        // inside `0..48`), `n` digits in `dst[w - n..w]`, `w ≤ 40`.
        unsafe {
            if w > n {
                zeros(dst, w - n);
            }
            let mut x = v;
            for k in (w - n..w).rev() {
                *dst.add(k) = digits[(x & 15) as usize];
                x >>= 4;
            }
        }
        self.len += w;
    }

    /// The written bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        // SAFETY: as in `grow`.
        unsafe { self.buf.set_len(self.len) };
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_copies_numbers_and_grows() {
        let src: Vec<u8> = (0..100u8).collect();
        let mut s = Sink::new(Vec::new(), 0);
        let mut want = Vec::new();
        for i in 0..2000usize {
            let (at, n) = (i % 60, i % 37);
            // Padded reads, and exact ones at the end of `src`.
            s.copy(&src, at, n);
            want.extend_from_slice(&src[at..at + n]);
            s.copy(&src, 100 - n, n);
            want.extend_from_slice(&src[100 - n..]);
            let v = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64);
            s.dec(v, i % 23);
            want.extend_from_slice(format!("{v:0w$}", w = i % 23).as_bytes());
            s.hex(v, i % 19, b"0123456789abcdef");
            want.extend_from_slice(format!("{v:0w$x}", w = i % 19).as_bytes());
            s.hex(v, 0, b"0123456789ABCDEF");
            want.extend_from_slice(format!("{v:X}").as_bytes());
        }
        s.dec(u64::MAX, 0);
        want.extend_from_slice(u64::MAX.to_string().as_bytes());
        s.dec(0, 40);
        want.extend_from_slice(&[b'0'; 40]);
        // Out of range: nothing.
        s.copy(&src, 90, 11);
        s.copy(&src, usize::MAX, 2);
        assert_eq!(s.finish(), want);
    }
}
