//! Bulk rendering of a log block's rows (`LogBlock::decode_all`, the split
//! column's interleaved decode, a chunk's bulk read).
//!
//! [`Bulk::new`] prepares a block once per decode: every integer column
//! unpacked block-wise, every pool string decoded into one source buffer
//! after the static strings and dictionary values, and each template
//! compiled into a *program*: one [`Op`] per slot (the static string before
//! it as a byte range of the source, the slot's kind, where its values sit)
//! plus a closing op, and a bound on the bytes a row of it can take
//! without its free-text slots. [`Bulk::put_row`] then reserves that bound
//! once and runs the row's ops with unchecked copies: static text and
//! strings as two 16-byte moves (longer ones by `memcpy`), integers 8
//! digits per SWAR step with the zero padding included (`put_dec`).
//!
//! Measured with callgrind on Loghub (bench/LOGS.md): the interpreter this
//! replaces ran ~86 instructions per slot on BGL_2k (a capacity check per
//! op and per number, range checks on every copy and index, the sink's
//! fields reloaded from memory after every write, digit pairs by division).
//! A column-at-a-time variant (each slot column rendered into byte ranges,
//! rows then assembled from them) measured no better: writing and reading
//! back the ranges cost what the dispatch saved.

use super::bits::{dec_digits, hex_digits, DEC_PAIRS};
use super::decode::{LogBlock, Slot};
use super::{Kind, Width};

/// Zero bytes after the source buffer's last string, and spare capacity an
/// output row is reserved with: a string of ≤ 32 bytes is moved as 32, a
/// number writes up to `INT_WRITE`.
const PAD: usize = 64;

/// Longest rendered integer (the width cap of `bits::render_dec`).
const MAX_DIGITS: usize = 40;

/// Bytes a rendered integer may write (its digits, then garbage up to 48).
const INT_WRITE: usize = 48;

// A row's spare capacity covers a number's whole write and a 32-byte move.
const _: () = assert!(PAD >= INT_WRITE && PAD >= 32);

/// Op kinds.
const END: u8 = 0;
const DEC: u8 = 1;
const HEX_LOWER: u8 = 2;
const HEX_UPPER: u8 = 3;
const DICT: u8 = 4;
const FREE: u8 = 5;

/// A byte range of [`Bulk::src`].
#[derive(Clone, Copy, Debug, Default)]
struct Piece {
    at: u32,
    len: u32,
}

/// One step of a template's program: the static string `src[at..at +
/// len]`, then a slot of `kind`:
/// - `DEC`/`HEX_*`: the value `ints[col + rank]`, zero-padded to `width`
///   digits (0: natural), or to `ints[aux + rank]` digits when `per_row`;
/// - `DICT`: dictionary value `ints[col + rank]`, which is
///   `spieces[aux + id]` (ids below `n`, `open` checked);
/// - `FREE`: pool string `col + rank`;
/// - `END`: nothing (the template's last static string).
#[derive(Clone, Copy, Debug)]
struct Op {
    at: u32,
    len: u32,
    col: u32,
    aux: u32,
    kind: u8,
    width: u8,
    per_row: bool,
}

/// A compiled template: its ops, and the most bytes a row of it writes
/// outside its free-text slots.
#[derive(Clone, Copy, Debug)]
struct Tpl {
    first_op: u32,
    ops: u32,
    bound: usize,
    /// Rows using it: its columns' length (a rank past it is not rendered,
    /// so every dictionary id read is one remapped below).
    count: u32,
}

/// State of a bulk decode of one block.
pub(crate) struct Bulk {
    /// Static strings and dictionary values, every pool string, `PAD`
    /// zeros: every piece below lies in it with `PAD` bytes after it.
    src: Vec<u8>,
    /// Every static string and dictionary value (`statics_end` order).
    spieces: Vec<Piece>,
    /// Pool string `i` is `src[pool[i]..pool[i + 1]]` (non-decreasing).
    pool: Vec<u32>,
    /// Every integer column, unpacked, one after another.
    ints: Vec<u64>,
    ops: Vec<Op>,
    tpls: Vec<Tpl>,
    /// Per template: rank of its next row.
    cursor: Vec<u32>,
}

/// The pieces of strings ending at `ends` (string `i` starts where string
/// `i − 1` ends, the first at 0).
fn pieces_of(ends: &[u32], out: &mut Vec<Piece>) {
    let mut start = 0u32;
    for &e in ends {
        out.push(Piece {
            at: start,
            len: e.saturating_sub(start),
        });
        start = start.max(e);
    }
}

impl Bulk {
    /// Unpacks the block's columns, decodes its pool and compiles its
    /// templates; `None` when its strings do not fit u32 offsets (no valid
    /// chunk does: a chunk holds at most `u32::MAX` bytes; the caller then
    /// reads row by row).
    pub(crate) fn new(block: &LogBlock) -> Option<Self> {
        // The statics carry 16 zero bytes of padding (`LogBlock::open`).
        let slen = block.statics_end.last().map_or(0, |&e| e as usize);
        let mut src = Vec::new();
        src.extend_from_slice(block.statics.get(..slen)?);
        let (mut ends, pool_at) = (Vec::new(), src.len());
        let pool_bytes = &block.bytes[block.pool_at..];
        block.pool.decode_all(pool_bytes, &mut src, &mut ends, PAD);
        let fixed = src.len();
        if fixed > (u32::MAX as usize) / 2 {
            return None;
        }
        src.resize(fixed + PAD, 0);
        let mut spieces = Vec::with_capacity(block.statics_end.len());
        pieces_of(&block.statics_end, &mut spieces);
        let mut pool = Vec::with_capacity(ends.len() + 1);
        pool.push(pool_at as u32);
        pool.extend(ends.iter().map(|&e| (pool_at + e as usize) as u32));

        let data = &block.bytes[block.data_at..];
        // Every integer column's values, sized once.
        let n_ints: usize = block
            .templates
            .iter()
            .map(|t| {
                let slots = &block.slots[t.first_slot as usize..][..t.slots as usize];
                let cols: usize = slots
                    .iter()
                    .map(|s| match s {
                        Slot::Int {
                            width: Width::PerRow,
                            ..
                        } => 2,
                        Slot::Int { .. } | Slot::Dict { .. } => 1,
                        Slot::Free { .. } => 0,
                    })
                    .sum();
                cols * t.count as usize
            })
            .sum();
        let mut ints = Vec::with_capacity(n_ints);
        let mut ops = Vec::with_capacity(block.slots.len() + block.templates.len());
        let mut tpls = Vec::with_capacity(block.templates.len());
        let spiece = |i: usize| spieces.get(i).copied().unwrap_or_default();
        for t in &block.templates {
            let first_op = ops.len() as u32;
            let st = t.first_static as usize;
            let mut bound = 0usize;
            for s in 0..=t.slots as usize {
                let p = spiece(st + s);
                bound += p.len as usize;
                let mut op = Op {
                    at: p.at,
                    len: p.len,
                    col: 0,
                    aux: 0,
                    kind: END,
                    width: 0,
                    per_row: false,
                };
                match block.slots.get(t.first_slot as usize + s) {
                    Some(_) if s == t.slots as usize => {}
                    None => {}
                    Some(&Slot::Int {
                        kind,
                        values,
                        width,
                        widths,
                    }) => {
                        op.kind = match kind {
                            Kind::Dec => DEC,
                            Kind::HexLower => HEX_LOWER,
                            _ => HEX_UPPER,
                        };
                        bound += MAX_DIGITS;
                        op.col = ints.len() as u32;
                        values.decode_all(&block.cps, data, &mut ints);
                        match width {
                            Width::Natural => {}
                            Width::Fixed(w) => op.width = w.min(MAX_DIGITS as u8),
                            Width::PerRow => {
                                op.per_row = true;
                                op.aux = ints.len() as u32;
                                widths.decode_all(&block.cps, data, &mut ints);
                            }
                        }
                    }
                    Some(&Slot::Dict { ids, warm, n, .. }) => {
                        op.kind = DICT;
                        op.col = ints.len() as u32;
                        op.aux = warm;
                        let first = ints.len();
                        ids.decode_all(&block.cps, data, &mut ints);
                        // Ids at or past `n` (refused by `open`) read as
                        // the empty string.
                        for id in &mut ints[first..] {
                            if *id >= n as u64 {
                                *id = u32::MAX as u64;
                            }
                        }
                        let longest = (0..n as usize)
                            .map(|i| spiece(warm as usize + i).len)
                            .max()
                            .unwrap_or(0);
                        bound += longest as usize;
                    }
                    Some(&Slot::Free { pool_base }) => {
                        op.kind = FREE;
                        op.col = pool_base;
                    }
                }
                ops.push(op);
            }
            tpls.push(Tpl {
                first_op,
                ops: t.slots + 1,
                bound,
                count: t.count,
            });
        }
        Some(Bulk {
            src,
            spieces,
            pool,
            ints,
            ops,
            tpls,
            cursor: vec![0; block.templates.len()],
        })
    }

    /// Passes over the next row of template `tid` without rendering it
    /// (its rank advanced, as [`Self::put_row`] would).
    #[inline]
    pub(crate) fn skip_row(&mut self, tid: u32) {
        if let Some(c) = self.cursor.get_mut(tid as usize) {
            *c = c.saturating_add(1);
        }
    }

    /// Appends the next row of template `tid` (its rank taken from and
    /// advanced in `self`) to `out`.
    #[inline]
    pub(crate) fn put_row(&mut self, tid: u32, out: &mut Vec<u8>) {
        let Some(c) = self.cursor.get_mut(tid as usize) else {
            return;
        };
        let rank = *c;
        *c = c.saturating_add(1);
        self.put_rank(tid, rank, out);
    }

    /// Templates of the block.
    pub(crate) fn templates(&self) -> usize {
        self.tpls.len()
    }

    /// Appends the row of template `tid` of rank `rank` (its `rank`-th row
    /// in row order) to `out`; nothing when there is no such row. Shared
    /// state only, so several threads can render ranges of one block.
    #[inline]
    pub(crate) fn put_rank(&self, tid: u32, rank: u32, out: &mut Vec<u8>) {
        let t = tid as usize;
        let Some(&tpl) = self.tpls.get(t) else {
            return;
        };
        if rank >= tpl.count {
            // More rows of `tid` than it has (`open` refuses such blocks).
            return;
        }
        let rank = rank as usize;
        let ops = &self.ops[tpl.first_op as usize..][..tpl.ops as usize];
        let int = |i: usize| self.ints.get(i).copied().unwrap_or(0);
        let src = self.src.as_ptr();
        out.reserve(tpl.bound + PAD);
        let old = out.len();
        // SAFETY: every piece read lies in `src` with `PAD` bytes after it
        // (static and dictionary pieces come from `statics_end`, pool
        // pieces from the pool's non-decreasing ends, all below `fixed`),
        // so 32-byte reads of pieces ≤ 32 bytes stay inside. `rank <
        // count`, so a dictionary slot reads its own column, whose ids are
        // below its size or remapped to the empty string: its value is at
        // most the longest one `bound` counts. `out` has
        // `tpl.bound + PAD` bytes of spare capacity at the row's start, and
        // the row writes at most `bound` bytes outside its free-text slots,
        // each of which reserves its own length first: every write (a
        // piece's bytes, 32 bytes at a position, a number's `INT_WRITE`)
        // stays inside. `src` and `out` are distinct allocations. Every
        // byte of `old..old + written` is written before the length is set.
        unsafe {
            let mut base = out.as_mut_ptr();
            let mut dst = base.add(old);
            for op in ops {
                dst = put(src, op.at, op.len, dst);
                match op.kind {
                    END => {}
                    DEC | HEX_LOWER | HEX_UPPER => {
                        let v = int(op.col as usize + rank);
                        let w = if op.per_row {
                            int(op.aux as usize + rank).min(MAX_DIGITS as u64) as usize
                        } else {
                            op.width as usize
                        };
                        dst = dst.add(match op.kind {
                            DEC => put_dec(dst, v, w),
                            HEX_LOWER => put_hex(dst, v, w, false),
                            _ => put_hex(dst, v, w, true),
                        });
                    }
                    DICT => {
                        let id = int(op.col as usize + rank) as usize;
                        let p = self
                            .spieces
                            .get((op.aux as usize).wrapping_add(id))
                            .copied()
                            .unwrap_or_default();
                        dst = put(src, p.at, p.len, dst);
                    }
                    _ => {
                        let i = op.col as usize + rank;
                        let (Some(&a), Some(&e)) = (self.pool.get(i), self.pool.get(i + 1)) else {
                            continue;
                        };
                        let n = e.saturating_sub(a);
                        let used = dst.offset_from(base) as usize;
                        out.set_len(used);
                        out.reserve(n as usize + tpl.bound + PAD);
                        base = out.as_mut_ptr();
                        dst = put(src, a, n, base.add(used));
                    }
                }
            }
            out.set_len(dst.offset_from(base) as usize);
        }
    }
}

/// Copies `src[at..at + n]` to `dst`; returns the end of what it wrote.
///
/// # Safety
/// `src[at..at + n + PAD]` is readable, `dst[..max(n, 32)]` is writable,
/// and they do not overlap.
#[inline(always)]
unsafe fn put(src: *const u8, at: u32, n: u32, dst: *mut u8) -> *mut u8 {
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
unsafe fn put_dec(dst: *mut u8, v: u64, w: usize) -> usize {
    let n = dec_digits(v);
    let len = w.clamp(n, MAX_DIGITS);
    // SAFETY: every store lands in `dst[..INT_WRITE]`: 8 bytes at 0 or
    // `len - 8 ≤ 8`, or the general path's `dst[0..48]`.
    unsafe {
        if len <= 2 {
            // `v < 100`: its two digits from the pair table, one dropped
            // when `len` is 1 (most log numbers are small).
            let pair = DEC_PAIRS.as_ptr().add(2 * v as usize);
            std::ptr::copy_nonoverlapping(pair.add(2 - len), dst, 2);
        } else if len <= 8 {
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
unsafe fn put_hex(dst: *mut u8, v: u64, w: usize, upper: bool) -> usize {
    let n = hex_digits(v);
    let len = w.clamp(n, MAX_DIGITS);
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
    use super::super::bits::{render_dec, render_hex};
    use super::*;

    #[test]
    fn integers_render_as_the_point_reader_does() {
        let mut vals: Vec<u64> = vec![0, 1, 9, 10, 99, 100, u64::MAX, u32::MAX as u64];
        for e in 0..20 {
            let p = 10u64.pow(e);
            vals.extend([p - 1, p, p + 1]);
        }
        for s in 0..64 {
            vals.extend([1u64 << s, (1u64 << s) - 1]);
        }
        vals.extend((0..2000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (i % 64)));
        for &v in &vals {
            for w in [0usize, 1, 3, 8, 9, 12, 16, 17, 20, 39, 40, 45] {
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
