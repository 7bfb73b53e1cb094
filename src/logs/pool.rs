//! Reading a log block's text pool (spec/FORMAT.md §5.8.4; the writer is
//! `text.rs`): the token table of pool form 1 (format versions 4–5: learned
//! tokens whole, 12-bit codes) or form 2 (version 6: front-coded, codes at
//! ⌈log2(256 + L)⌉ bits), checked on open, then strings read by index or
//! all at once.

use super::bits::{get_packed, packed_len, VarReader};
use super::column::{self, Checkpoint, IntCol};
use super::LogForm;
use crate::dict::MAX_TOKEN_LEN;
use crate::error::{Error, Invariant, Result};

/// Code width of a form-1 pool, and the widest of a form-2 pool.
const CODE_BITS: u8 = 12;

/// Which pool layout a block holds: set by its magic (spec/FORMAT.md
/// §5.8.1), one per format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolForm {
    /// Versions 4–5: learned tokens stored whole, 12-bit codes.
    Plain12,
    /// Version 6: learned tokens front-coded, codes at the pool's width.
    Front,
}

/// Code width of a form-2 pool of `learned` tokens after the 256 single
/// bytes: the fewest bits that number all `256 + learned` codes.
pub(crate) fn front_code_bits(learned: usize) -> u8 {
    let n = 256 + learned;
    (usize::BITS - (n - 1).leading_zeros()) as u8
}

fn corrupt(at: usize, inv: Invariant) -> Error {
    Error::corrupt(super::bits::SECTION, at as u64, inv)
}

/// Longest shared prefix a form-2 pool records (a nibble).
const MAX_POOL_PREFIX: usize = 15;

/// Bytes token `t` shares with `prev`, capped at [`MAX_POOL_PREFIX`].
pub(super) fn shared_prefix(prev: &[u8], t: &[u8]) -> usize {
    prev.iter()
        .zip(t)
        .take_while(|(a, b)| a == b)
        .count()
        .min(MAX_POOL_PREFIX)
}

/// A parsed, validated pool. The byte ranges index the block's bytes.
pub(crate) struct Pool {
    pub(super) words: Vec<[u8; MAX_TOKEN_LEN]>,
    pub(super) lens: Vec<u8>,
    pub(super) strings: usize,
    pub(super) cps: Vec<Checkpoint>,
    pub(super) offs: IntCol,
    pub(super) offs_at: usize,
    pub(super) codes_at: usize,
    /// Bits a code (12 in form 1; [`front_code_bits`] in form 2).
    pub(super) code_bits: u8,
}

impl Pool {
    /// Parses the pool of `form` occupying all of `bytes` (block offsets
    /// `base..`), checking every token length (form 2: prefixes, order,
    /// padding nibbles), the offsets and every code.
    pub(crate) fn parse(bytes: &[u8], base: usize, form: LogForm) -> Result<Self> {
        let mut r = VarReader::new(bytes, base);
        let (words, lens, code_bits) = Self::parse_table(&mut r, form)?;
        Self::parse_rest(r, bytes, base, form, words, lens, code_bits)
    }

    /// The pool of a block of format version 10 (§5.8.6): its token table
    /// read from the open image by `table`, the rest (string count,
    /// offsets, codes) occupying all of `bytes` (block offsets `base..`).
    pub(crate) fn parse_split(
        table: &mut VarReader<'_>,
        bytes: &[u8],
        base: usize,
        form: LogForm,
    ) -> Result<Self> {
        let (words, lens, code_bits) = Self::parse_table(table, form)?;
        let r = VarReader::new(bytes, base);
        Self::parse_rest(r, bytes, base, form, words, lens, code_bits)
    }

    /// The token table at `r`: the tokens as 16-byte words, their lengths,
    /// and the pool's code width.
    #[allow(clippy::type_complexity)]
    fn parse_table(
        r: &mut VarReader<'_>,
        form: LogForm,
    ) -> Result<(Vec<[u8; MAX_TOKEN_LEN]>, Vec<u8>, u8)> {
        let base = r.base();
        let learned = r.bounded("pool learned tokens", (1 << CODE_BITS) - 256)? as usize;
        let nib_at = base + r.pos();
        let nib = r.take(learned.div_ceil(2), "pool token lengths")?;
        let nibble = |t: &[u8], i: usize| ((t[i / 2] >> (4 * (i % 2))) & 15) as usize;
        let mut words = Vec::with_capacity(256 + learned);
        let mut lens = Vec::with_capacity(256 + learned);
        for b in 0..=255u8 {
            let mut w = [0u8; MAX_TOKEN_LEN];
            w[0] = b;
            words.push(w);
            lens.push(1);
        }
        let code_bits = match form.pool() {
            PoolForm::Plain12 => {
                for i in 0..learned {
                    let l = nibble(nib, i);
                    let tok = r.take(l + 1, "pool token bytes")?;
                    let mut w = [0u8; MAX_TOKEN_LEN];
                    w[..tok.len()].copy_from_slice(tok);
                    words.push(w);
                    lens.push(l as u8 + 1);
                }
                CODE_BITS
            }
            PoolForm::Front => {
                let pre_at = base + r.pos();
                let pre = r.take(learned.div_ceil(2), "pool token prefixes")?;
                if learned % 2 == 1 {
                    for (t, at, what) in [
                        (nib, nib_at, "pool token length padding nibble"),
                        (pre, pre_at, "pool token prefix padding nibble"),
                    ] {
                        if t[learned / 2] >> 4 != 0 {
                            return Err(corrupt(
                                at + learned / 2,
                                Invariant::NonZeroReserved { what },
                            ));
                        }
                    }
                }
                let (mut prev, mut prev_len) = ([0u8; MAX_TOKEN_LEN], 0usize);
                for i in 0..learned {
                    let (l, p) = (nibble(nib, i) + 1, nibble(pre, i));
                    let token = (256 + i) as u32;
                    if l == 1 {
                        return Err(corrupt(nib_at + i / 2, Invariant::DuplicateToken { token }));
                    }
                    let bad_prefix = Invariant::TokenPrefix {
                        token,
                        prefix: p as u32,
                    };
                    if p > l || p > prev_len {
                        return Err(corrupt(pre_at + i / 2, bad_prefix));
                    }
                    let mut w = [0u8; MAX_TOKEN_LEN];
                    w[..p].copy_from_slice(&prev[..p]);
                    w[p..l].copy_from_slice(r.take(l - p, "pool token bytes")?);
                    // One spelling: the longest shared prefix (capped), and
                    // the learned tokens strictly increasing.
                    if p != shared_prefix(&prev[..prev_len], &w[..l]) {
                        return Err(corrupt(pre_at + i / 2, bad_prefix));
                    }
                    if i > 0 && prev[..prev_len] >= w[..l] {
                        return Err(corrupt(nib_at + i / 2, Invariant::TokenOrder { token }));
                    }
                    words.push(w);
                    lens.push(l as u8);
                    (prev, prev_len) = (w, l);
                }
                front_code_bits(learned)
            }
        };
        Ok((words, lens, code_bits))
    }

    /// The pool's strings, offsets and codes from `r` (over `bytes`, at
    /// block offset `base`) to the end of `bytes`, each code checked
    /// against the table.
    fn parse_rest(
        mut r: VarReader<'_>,
        bytes: &[u8],
        base: usize,
        form: LogForm,
        words: Vec<[u8; MAX_TOKEN_LEN]>,
        lens: Vec<u8>,
        code_bits: u8,
    ) -> Result<Self> {
        let strings = r.bounded("pool strings", u32::MAX as u64 - 1)? as usize;
        let meta_len = r.bounded("pool offsets meta length", bytes.len() as u64)? as usize;
        let meta_at = base + r.pos();
        let meta = r.take(meta_len, "pool offsets meta")?;
        let data_len = r.bounded("pool offsets data length", bytes.len() as u64)? as usize;
        let offs_at = r.pos();
        let data = r.take(data_len, "pool offsets data")?;
        let mut m = VarReader::new(meta, meta_at);
        let (mut cps, mut used) = (Vec::new(), 0u64);
        let offs = column::parse(
            &mut m,
            strings as u32 + 1,
            &mut cps,
            &mut used,
            column::Modes {
                delta: form.delta_blocks(),
                runs: false,
                stepped: false,
            },
        )?;
        if !m.at_end() || used != data_len as u64 {
            return Err(m.err(Invariant::SizeMismatch {
                what: "pool offsets",
                expected: used,
                found: data_len as u64,
            }));
        }
        let mut padded = data.to_vec();
        padded.resize(data.len() + 16, 0);
        offs.check_blocks(&cps, &padded, base + offs_at)?;
        let mut all = Vec::with_capacity(strings + 1);
        offs.decode_all(&cps, &padded, &mut all);
        if all[0] != 0 || all.windows(2).any(|w| w[1] < w[0]) || all[strings] > u32::MAX as u64 {
            return Err(r.err(Invariant::BadField {
                what: "pool offsets (not from 0, non-decreasing, < 2^32)",
                value: all[strings],
            }));
        }
        let ncodes = all[strings] as usize;
        let codes_at = r.pos();
        let codes = r.take(packed_len(ncodes, code_bits), "pool codes")?;
        if !r.at_end() {
            return Err(r.err(Invariant::SizeMismatch {
                what: "pool",
                expected: r.pos() as u64,
                found: bytes.len() as u64,
            }));
        }
        let mut padded = codes.to_vec();
        padded.resize(codes.len() + 16, 0);
        let ntok = words.len() as u64;
        if let Some(i) = (0..ncodes).find(|&i| get_packed(&padded, code_bits, i) >= ntok) {
            return Err(r.err(Invariant::BadField {
                what: "pool code (past the token table)",
                value: i as u64,
            }));
        }
        Ok(Pool {
            words,
            lens,
            strings,
            cps,
            offs,
            offs_at,
            codes_at,
            code_bits,
        })
    }

    /// Number of strings.
    pub(crate) fn len(&self) -> usize {
        self.strings
    }

    /// Where string `i`'s codes start and end (`i < len`); `pool` as
    /// [`Pool::get`]'s.
    #[inline]
    fn code_bounds(&self, pool: &[u8], i: usize) -> (u64, u64) {
        let d = &pool[self.offs_at..];
        (
            self.offs.get(&self.cps, d, i),
            self.offs.get(&self.cps, d, i + 1),
        )
    }

    /// Codes of string `i` (`i < len`); `pool` as [`Pool::get`]'s.
    pub(crate) fn codes(&self, pool: &[u8], i: usize) -> u64 {
        let (s, e) = self.code_bounds(pool, i);
        e.wrapping_sub(s)
    }

    /// Appends string `i` (`i < len`) to `out`. `pool` is the pool's bytes
    /// followed by at least 16 bytes (the block padding).
    #[inline]
    pub(crate) fn get(&self, pool: &[u8], i: usize, out: &mut Vec<u8>) {
        let (s, e) = self.code_bounds(pool, i);
        let (s, e) = (s as usize, e as usize);
        let codes = &pool[self.codes_at..];
        // Every token moved as its whole 16-byte word into 16 bytes of
        // slack, advancing by its length (no capacity check or `memcpy`
        // call per token: most are a few bytes), the slack cut at the end.
        let base = out.len();
        let n = e.saturating_sub(s).min(codes.len().saturating_mul(8));
        out.resize(base + n * MAX_TOKEN_LEN + MAX_TOKEN_LEN, 0);
        let mut at = base;
        for c in s..s + n {
            let code = get_packed(codes, self.code_bits, c) as usize;
            if let (Some(word), Some(&l), Some(d)) = (
                self.words.get(code),
                self.lens.get(code),
                out.get_mut(at..at + MAX_TOKEN_LEN),
            ) {
                d.copy_from_slice(word);
                at += l as usize;
            }
        }
        out.truncate(at);
    }

    /// Whether string `i` (`i < len`) equals `want` (`whole`) or starts
    /// with it, compared token by token without decoding it: most strings
    /// differ in their first token. `pool` as for [`Self::get`].
    pub(crate) fn compare(&self, pool: &[u8], i: usize, want: &[u8], whole: bool) -> bool {
        let (s, e) = self.code_bounds(pool, i);
        let (s, e) = (s as usize, e as usize);
        let codes = &pool[self.codes_at..];
        let mut pos = 0;
        for c in s..e {
            let rem = want.len() - pos;
            if rem == 0 {
                // Bytes left after `want`.
                return !whole;
            }
            let code = get_packed(codes, self.code_bits, c) as usize;
            let (Some(word), Some(&l)) = (self.words.get(code), self.lens.get(code)) else {
                return false;
            };
            let l = (l as usize).min(MAX_TOKEN_LEN);
            let k = l.min(rem);
            if word[..k] != want[pos..pos + k] {
                return false;
            }
            if l > rem {
                // The token runs past `want`'s end.
                return !whole;
            }
            pos += l;
        }
        pos == want.len()
    }

    /// Every string, concatenated into `buf`, with `ends[i]` = end of string
    /// `i`; `buf` keeps room for `spare` more bytes after them.
    pub(crate) fn decode_all(
        &self,
        pool: &[u8],
        buf: &mut Vec<u8>,
        ends: &mut Vec<u32>,
        spare: usize,
    ) {
        let mut offs = Vec::with_capacity(self.strings + 1);
        self.offs
            .decode_all(&self.cps, &pool[self.offs_at..], &mut offs);
        let codes = &pool[self.codes_at..];
        let total = *offs.last().unwrap_or(&0) as usize;
        let cs = unpack_codes(codes, self.code_bits, total);
        let len = |c: u16| self.lens.get(c as usize).map_or(0, |&l| l as usize);
        // Exact output size first, then every token as one 16-byte store
        // into a buffer with 16 bytes of slack (advancing by its length).
        let out_len: usize = cs.iter().map(|&c| len(c)).sum();
        let base = buf.len();
        buf.reserve((out_len + MAX_TOKEN_LEN).saturating_add(spare));
        buf.resize(base + out_len + MAX_TOKEN_LEN, 0);
        ends.reserve(self.strings);
        let (mut c, mut at) = (0usize, base);
        for w in offs.windows(2) {
            let e = (w[1] as usize).min(total);
            for &code in cs.get(c..e).unwrap_or(&[]) {
                if let (Some(d), Some(word)) = (
                    buf.get_mut(at..at + MAX_TOKEN_LEN),
                    self.words.get(code as usize),
                ) {
                    d.copy_from_slice(word);
                }
                at += len(code);
            }
            c = c.max(e);
            ends.push((at - base) as u32);
        }
        buf.truncate(at);
    }
}

/// The first `total` codes of `codes` at `bits` (8..=12) bits each. `codes`
/// runs on to the block's 16 zero bytes (the last codes are read through
/// 16-byte windows); codes past the bytes present read as 0 (the pool
/// checked they are present).
fn unpack_codes(codes: &[u8], bits: u8, total: usize) -> Vec<u16> {
    let mut cs: Vec<u16> = Vec::with_capacity(total + 8);
    match bits {
        // Two codes from each 3 bytes (was: a 16-byte window read per code).
        12 => {
            let pairs = total.div_ceil(2);
            match codes.get(..3 * pairs) {
                Some(b) => {
                    for t in b.chunks_exact(3) {
                        cs.push(t[0] as u16 | (t[1] as u16 & 15) << 8);
                        cs.push((t[1] >> 4) as u16 | (t[2] as u16) << 4);
                    }
                    cs.truncate(total);
                }
                None => cs.extend((0..total).map(|c| get_packed(codes, 12, c) as u16)),
            }
        }
        8 => cs.extend(codes.iter().take(total).map(|&b| b as u16)),
        // Eight codes from each `bits` bytes, through one u128.
        _ => {
            let (b, mask) = (bits as usize, (1u128 << bits) - 1);
            let groups = total / 8;
            for g in codes.chunks_exact(b).take(groups) {
                let mut w = [0u8; 16];
                w[..b].copy_from_slice(g);
                let w = u128::from_le_bytes(w);
                cs.extend((0..8).map(|k| ((w >> (k * b)) & mask) as u16));
            }
            cs.extend((cs.len()..total).map(|c| get_packed(codes, bits, c) as u16));
        }
    }
    cs
}

#[cfg(test)]
mod tests {
    use super::super::bits::{pack, put_varint};
    use super::*;

    /// A form-2 pool of the learned `tokens` spelled with the given
    /// `prefixes` (nibbles as stored, no check) and no strings.
    fn raw_front_pool(tokens: &[&[u8]], prefixes: &[usize]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, tokens.len() as u64);
        let nib = |v: Vec<usize>, out: &mut Vec<u8>| {
            for p in v.chunks(2) {
                out.push(p[0] as u8 | p.get(1).map_or(0, |&h| (h as u8) << 4));
            }
        };
        nib(tokens.iter().map(|t| t.len() - 1).collect(), &mut out);
        nib(prefixes.to_vec(), &mut out);
        for (t, &p) in tokens.iter().zip(prefixes) {
            out.extend_from_slice(&t[p.min(t.len())..]);
        }
        put_varint(&mut out, 0);
        let (mut meta, mut data) = (Vec::new(), Vec::new());
        column::write(&[0], &mut meta, &mut data, column::Use::PoolOffsets);
        for part in [&meta, &data] {
            put_varint(&mut out, part.len() as u64);
            out.extend_from_slice(part);
        }
        out
    }

    /// Form 2's one-spelling rules (spec/FORMAT.md §5.8.4), each rejected
    /// with its invariant: tokens of one byte, not strictly increasing, a
    /// prefix other than the longest shared one; and code widths by size.
    #[test]
    fn front_pools_have_one_spelling() {
        let parse = |b: &[u8]| Pool::parse(b, 0, LogForm::V8);
        let ok = raw_front_pool(&[b"ab", b"abc", b"b:"], &[0, 2, 0]);
        let p = parse(&ok).unwrap();
        assert_eq!((p.words.len(), p.code_bits), (259, 9));
        assert_eq!(&p.words[257][..3], b"abc");
        let inv = |b: Vec<u8>| match parse(&b) {
            Err(Error::Corrupt { invariant, .. }) => invariant,
            other => panic!("accepted or not corrupt: {:?}", other.err()),
        };
        assert!(matches!(
            inv(raw_front_pool(&[b"a", b"ab"], &[0, 1])),
            Invariant::DuplicateToken { token: 256 }
        ));
        assert!(matches!(
            inv(raw_front_pool(&[b"abc", b"ab"], &[0, 2])),
            Invariant::TokenOrder { token: 257 }
        ));
        assert!(matches!(
            inv(raw_front_pool(&[b"ab", b"ab"], &[0, 2])),
            Invariant::TokenOrder { token: 257 }
        ));
        // "abc" after "ab" spelled with a shorter prefix than the shared 2.
        assert!(matches!(
            inv(raw_front_pool(&[b"ab", b"abc"], &[0, 1])),
            Invariant::TokenPrefix {
                token: 257,
                prefix: 1
            }
        ));
        assert!(matches!(
            inv(raw_front_pool(&[b"ab", b"abc"], &[1, 2])),
            Invariant::TokenPrefix {
                token: 256,
                prefix: 1
            }
        ));
        // Odd count: the unused high nibbles are zero.
        let mut bad = raw_front_pool(&[b"ab"], &[0]);
        bad[1] |= 0x10;
        assert!(matches!(inv(bad), Invariant::NonZeroReserved { .. }));
        for (learned, bits) in [
            (0, 8),
            (1, 9),
            (256, 9),
            (257, 10),
            (768, 10),
            (769, 11),
            (1792, 11),
            (1793, 12),
            (3840, 12),
        ] {
            assert_eq!(front_code_bits(learned), bits, "{learned}");
        }
    }

    /// The unpacker of every form-2 width equals one field read at a time.
    #[test]
    fn codes_unpack_at_every_width() {
        for bits in 8..=12u8 {
            for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000] {
                let vals: Vec<u64> = (0..n as u64)
                    .map(|i| (i * 2654435761) & ((1 << bits) - 1))
                    .collect();
                let mut packed = Vec::new();
                pack(vals.iter().copied(), bits, &mut packed);
                // As in a block: the pool's last bytes are followed by 16 zero bytes.
                packed.extend_from_slice(&[0; 16]);
                let got = unpack_codes(&packed, bits, n);
                assert_eq!(
                    got.iter().map(|&c| c as u64).collect::<Vec<_>>(),
                    vals,
                    "{bits} bits, {n}"
                );
            }
        }
    }
}
