//! Byte-level building blocks of a log block: LEB128 varints, a checked
//! reader of them, LSB-first bit packing with O(1) reads, and decimal / hex
//! rendering of slot integers.

use crate::error::{ChunkPart, Error, Invariant, Result, Section};

/// The error section every log-block structure reports (the block is not yet
/// a chunk kind of the file format; offsets are relative to the block).
pub(crate) const SECTION: Section = Section::Chunk(0, ChunkPart::Whole);

/// Appends `v` as an unsigned LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes [`put_varint`] writes for `v`.
pub(crate) fn varint_len(v: u64) -> usize {
    (bits_for(v) as usize).div_ceil(7).max(1)
}

/// Zigzag: small magnitudes of either sign become small unsigned values.
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A checked cursor over untrusted bytes: every read names what it reads.
pub(crate) struct VarReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Offset of `bytes[0]` inside the block (for error positions).
    base: usize,
}

impl<'a> VarReader<'a> {
    pub(crate) fn new(bytes: &'a [u8], base: usize) -> Self {
        Self {
            bytes,
            pos: 0,
            base,
        }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes after the position.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Block offset of the reader's first byte (error positions).
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    pub(crate) fn err(&self, inv: Invariant) -> Error {
        Error::corrupt(SECTION, (self.base + self.pos) as u64, inv)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8> {
        let b = *self.bytes.get(self.pos).ok_or_else(|| {
            self.err(Invariant::LengthPastEnd {
                what,
                end: (self.base + self.pos + 1) as u64,
                available: (self.base + self.bytes.len()) as u64,
            })
        })?;
        self.pos += 1;
        Ok(b)
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(self.err(Invariant::LengthPastEnd {
                what,
                end: (self.base as u64)
                    .saturating_add(self.pos as u64)
                    .saturating_add(n as u64),
                available: (self.base + self.bytes.len()) as u64,
            })),
        }
    }

    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8(what)?;
            // At most 10 bytes, the 10th ≤ 1, and canonical: no final 0
            // byte after the first (one spelling per value).
            if (shift == 63 && b > 1) || (b == 0 && shift > 0) {
                break;
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(self.err(Invariant::BadField {
            what,
            value: u64::MAX,
        }))
    }

    /// A varint that must be at most `limit` (counts, indexes, widths).
    pub(crate) fn bounded(&mut self, what: &'static str, limit: u64) -> Result<u64> {
        let v = self.varint(what)?;
        if v > limit {
            return Err(self.err(Invariant::LimitExceeded {
                what,
                value: v,
                limit,
            }));
        }
        Ok(v)
    }
}

/// The encoder's hash maps' hasher: 8 bytes at a time, a 64×64→128-bit
/// multiply folded per word (the `DefaultHasher`'s SipHash was 12% of the
/// encoder's time). Nothing depends on iteration order (everything the
/// encoder emits is ordered by first appearance), so the bytes written do
/// not depend on the hasher.
#[derive(Default, Clone, Copy)]
pub(crate) struct FoldHasher(u64);

impl FoldHasher {
    #[inline(always)]
    fn mix(&mut self, w: u64) {
        let m = ((self.0 ^ w) as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

/// The up-to-7 bytes of `rest` as a little-endian `u64` padded with zero
/// bytes (what copying them into a zeroed `[u8; 8]` gives), from at most
/// two overlapping loads instead of a variable-length copy (a `memcpy` call
/// per hashed string).
#[inline(always)]
pub(crate) fn load_le(rest: &[u8]) -> u64 {
    let n = rest.len();
    debug_assert!(n < 8);
    if n >= 4 {
        let lo = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as u64;
        let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes")) as u64;
        lo | hi << (8 * (n - 4))
    } else if n > 0 {
        rest[0] as u64
            | (rest[n / 2] as u64) << (8 * (n / 2))
            | (rest[n - 1] as u64) << (8 * (n - 1))
    } else {
        0
    }
}

impl std::hash::Hasher for FoldHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        self.mix(load_le(rest) ^ ((rest.len() as u64) << 59));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.mix(v as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hash map with [`FoldHasher`].
pub(crate) type FastMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FoldHasher>>;

/// Bits needed to hold `v` (0 for 0).
pub(crate) fn bits_for(v: u64) -> u8 {
    (64 - v.leading_zeros()) as u8
}

/// Bytes a packed run of `n` values of `bits` bits occupies (byte-aligned).
pub(crate) fn packed_len(n: usize, bits: u8) -> usize {
    (n * bits as usize).div_ceil(8)
}

/// Appends `values`, each `bits` (0..=64) wide, LSB-first, byte-aligned at
/// the end. Values must fit in `bits` (writer invariant).
pub(crate) fn pack(values: impl IntoIterator<Item = u64>, bits: u8, out: &mut Vec<u8>) {
    if bits == 0 {
        return;
    }
    pack_fields(values.into_iter().map(|v| (v, bits)), out);
}

/// Appends `(value, bits)` fields (0..=64 bits each) as one LSB-first bit
/// stream, byte-aligned at the end: [`pack`] with a width per field.
pub(crate) fn pack_fields(fields: impl IntoIterator<Item = (u64, u8)>, out: &mut Vec<u8>) {
    let mut acc: u128 = 0;
    let mut have = 0u32;
    for (v, bits) in fields {
        debug_assert!(bits == 64 || v >> bits == 0);
        acc |= (v as u128) << have;
        have += bits as u32;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
}

/// Value `i` of a packed run starting at `data[0]`. The caller guarantees
/// (checked when the block was parsed) that the run lies inside `data` and
/// that `data` has [`PAD`] readable bytes after it, so the 16-byte window
/// read here never leaves `data`; should that ever be violated the read
/// returns 0 instead of panicking.
#[inline(always)]
pub(crate) fn get_packed(data: &[u8], bits: u8, i: usize) -> u64 {
    get_bits(data, i * bits as usize, bits)
}

/// The `bits`-wide field at stream bit `bit` of a packed run starting at
/// `data[0]` (the guarantees and the fallback of [`get_packed`]).
#[inline]
pub(crate) fn get_bits(data: &[u8], bit: usize, bits: u8) -> u64 {
    if bits == 0 {
        return 0;
    }
    let at = bit / 8;
    let shift = bit % 8;
    match data.get(at..at + 16) {
        Some(w) => {
            let w = u128::from_le_bytes(w.try_into().expect("16 bytes"));
            let v = (w >> shift) as u64;
            if bits == 64 {
                v
            } else {
                v & ((1u64 << bits) - 1)
            }
        }
        None => 0,
    }
}

/// Bit width of a row block's local template ids: the width that holds
/// `n - 1`, rounded up to 0, 1, 2, 4 or 8 so that fields never straddle a
/// byte and [`count_equal`] compares whole words at once.
pub(crate) fn local_id_bits(n: usize) -> u8 {
    match bits_for(n.saturating_sub(1) as u64) {
        0 => 0,
        1 => 1,
        2 => 2,
        3 | 4 => 4,
        _ => 8,
    }
}

/// Number of the first `j` fields (each `bits` ∈ {1, 2, 4, 8} wide, packed
/// as [`pack`] packs them from `data[0]`) equal to `l`: eight bytes at a
/// time, SWAR (a field is equal when its XOR with `l` is zero; adding
/// all-ones-but-the-top to each field's low bits carries into its top bit
/// unless the field is zero). Reads `data` in 8-byte words, so `data` must
/// hold `⌈j·bits/64⌉·8` bytes (the block padding guarantees it); a short
/// `data` counts as zeros.
#[inline]
pub(crate) fn count_equal(data: &[u8], bits: u8, l: u64, j: usize) -> usize {
    let b = bits as u32;
    // Per-field patterns across a word: the top bit of each field, and `l`.
    let unit = u64::MAX / ((1u64 << b) - 1); // 1 in the low bit of each field (b < 64)
    let top = unit << (b - 1);
    let low = !top;
    let pat = l.wrapping_mul(unit);
    let mut total_bits = j * b as usize;
    let mut count = 0usize;
    let mut at = 0;
    while total_bits > 0 {
        let w = data
            .get(at..at + 8)
            .map_or(0, |s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
        let x = w ^ pat;
        let nonzero = ((x & low).wrapping_add(low) | x) & top;
        let mut eq = !nonzero & top;
        if total_bits < 64 {
            eq &= (1u64 << total_bits) - 1;
            total_bits = 0;
        } else {
            total_bits -= 64;
        }
        count += eq.count_ones() as usize;
        at += 8;
    }
    count
}

/// Zero bytes after the last structure of a block so that [`get_packed`]'s
/// 16-byte window always fits.
pub(crate) const PAD: usize = 16;

/// Decimal digits of `v` (1 for 0): an estimate from the bit width
/// (`⌊bits·1233/4096⌋` is ⌊log10⌋ or one less), corrected by one compare.
#[inline]
pub(crate) fn dec_digits(v: u64) -> usize {
    const POW10: [u64; 20] = {
        let mut t = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            t[i] = t[i - 1] * 10;
            i += 1;
        }
        t
    };
    let guess = (bits_for(v) as usize * 1233) >> 12;
    (guess + (v >= POW10[guess]) as usize).max(1)
}

/// Hex digits of `v` (1 for 0).
#[inline]
pub(crate) fn hex_digits(v: u64) -> usize {
    (bits_for(v) as usize).div_ceil(4).max(1)
}

pub(crate) const DEC_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `v` in decimal, zero-padded on the left to `width` digits
/// (`width` 0 = natural width).
#[inline]
pub(crate) fn render_dec(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = [b'0'; 40];
    let mut p = buf.len();
    let mut x = v;
    while x >= 100 {
        let r = (x % 100) as usize;
        x /= 100;
        p -= 2;
        buf[p..p + 2].copy_from_slice(&DEC_PAIRS[2 * r..2 * r + 2]);
    }
    if x >= 10 {
        p -= 2;
        buf[p..p + 2].copy_from_slice(&DEC_PAIRS[2 * x as usize..2 * x as usize + 2]);
    } else {
        p -= 1;
        buf[p] = b'0' + x as u8;
    }
    let n = buf.len() - p;
    let w = width.clamp(n, 40);
    out.extend_from_slice(&buf[buf.len() - w..]);
}

/// Appends `v` in hex (`upper` case), zero-padded to `width` digits.
#[inline]
pub(crate) fn render_hex(out: &mut Vec<u8>, v: u64, width: usize, upper: bool) {
    let digits: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut buf = [b'0'; 40];
    let n = hex_digits(v);
    let w = width.clamp(n, 40);
    let mut x = v;
    for k in 0..n {
        buf[w - 1 - k] = digits[(x & 15) as usize];
        x >>= 4;
    }
    out.extend_from_slice(&buf[..w]);
}

#[cfg(test)]
mod tests {
    #[test]
    fn load_le_is_the_zero_padded_copy() {
        let bytes: Vec<u8> = (1..=7u8).map(|b| b.wrapping_mul(37) | 0x80).collect();
        for n in 0..8 {
            let mut last = [0u8; 8];
            last[..n].copy_from_slice(&bytes[..n]);
            assert_eq!(super::load_le(&bytes[..n]), u64::from_le_bytes(last), "{n}");
        }
    }

    use super::*;

    #[test]
    fn varints_and_zigzag_round_trip() {
        let vals = [
            0u64,
            1,
            127,
            128,
            300,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ];
        let mut out = Vec::new();
        for &v in &vals {
            put_varint(&mut out, v);
        }
        let mut r = VarReader::new(&out, 0);
        for &v in &vals {
            assert_eq!(r.varint("v").unwrap(), v);
        }
        assert!(r.at_end());
        assert!(r.varint("past end").is_err());
        for v in [0i64, 1, -1, i64::MAX, i64::MIN, -12345] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        // Eleven continuation bytes are no varint.
        let bad = [0xffu8; 11];
        assert!(VarReader::new(&bad, 0).varint("bad").is_err());
        // Overlong spellings of 0 and 1 are refused; 0 itself is one byte.
        assert!(VarReader::new(&[0x80, 0x00], 0).varint("o").is_err());
        assert!(VarReader::new(&[0x81, 0x80, 0x00], 0).varint("o").is_err());
        assert_eq!(VarReader::new(&[0x00], 0).varint("z").unwrap(), 0);
    }

    #[test]
    fn packing_every_width() {
        for bits in 0..=64u8 {
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let vals: Vec<u64> = (0..300u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask)
                .collect();
            let mut out = Vec::new();
            pack(vals.iter().copied(), bits, &mut out);
            assert_eq!(out.len(), packed_len(vals.len(), bits));
            out.resize(out.len() + PAD, 0);
            for (i, &v) in vals.iter().enumerate() {
                assert_eq!(get_packed(&out, bits, i), v, "bits {bits} i {i}");
            }
        }
    }

    #[test]
    fn count_equal_matches_a_plain_count() {
        for bits in [1u8, 2, 4, 8] {
            let vals: Vec<u64> = (0..128u64).map(|i| (i * 7 + i / 3) % (1 << bits)).collect();
            let mut d = Vec::new();
            pack(vals.iter().copied(), bits, &mut d);
            d.resize(d.len() + PAD, 0xff);
            for l in 0..(1u64 << bits).min(16) {
                for j in 0..=128 {
                    let want = vals[..j].iter().filter(|&&v| v == l).count();
                    assert_eq!(count_equal(&d, bits, l, j), want, "bits {bits} l {l} j {j}");
                }
            }
        }
        assert_eq!(local_id_bits(1), 0);
        assert_eq!(local_id_bits(2), 1);
        assert_eq!(local_id_bits(5), 4);
        assert_eq!(local_id_bits(17), 8);
        assert_eq!(local_id_bits(128), 8);
    }

    #[test]
    fn rendering() {
        for (v, w, s) in [
            (0u64, 0usize, "0"),
            (7, 3, "007"),
            (123456789, 0, "123456789"),
            (u64::MAX, 0, "18446744073709551615"),
            (42, 1, "42"),
        ] {
            let mut o = Vec::new();
            render_dec(&mut o, v, w);
            assert_eq!(o, s.as_bytes());
            assert_eq!(dec_digits(v), v.to_string().len());
        }
        let mut o = Vec::new();
        render_hex(&mut o, 0xbeef, 8, false);
        render_hex(&mut o, 0, 0, true);
        render_hex(&mut o, u64::MAX, 0, true);
        assert_eq!(o, b"0000beef0FFFFFFFFFFFFFFFF");
    }
}
