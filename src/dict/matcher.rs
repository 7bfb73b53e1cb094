//! Greedy longest-prefix-match encoder (the tokenization this crate writes,
//! spec/FORMAT.md §9.1).
//!
//! Every codec shares one encoder: at each position emit the code of the
//! longest dictionary token that is a prefix of the remaining input. Because a
//! dictionary always holds the 256 single bytes, every byte string has an
//! encoding.
//!
//! # Structure
//!
//! * **single bytes**: a 256-entry table, byte → code.
//! * **two-byte prefixes**: a 65536-entry table indexed by the first two input
//!   bytes (little-endian). Each entry packs a bitmask of the token lengths
//!   `2..=16` that exist among tokens starting with those two bytes (bit
//!   `len - 1`, low 16 bits) and the code of the two-byte token itself (high
//!   16 bits).
//! * **long tokens** (3..=16 bytes): an open-addressing hash table (linear
//!   probing) keyed by `(length, bytes)`, the bytes held as two little-endian
//!   `u64` words masked to the token length.
//!
//! A query loads the next 16 input bytes once (one unaligned read, or a
//! zero-padded copy near the end), reads the two-byte entry, and probes the hash
//! table for each candidate length from the longest down. The first hit is the
//! answer; with no hit the two-byte token or the single byte is.
//!
//! The same structure grows: [`Matcher::insert`] adds a token, which is how the
//! OnPair trainer keeps matching against a dictionary that grows while it parses.

use super::{TokenTable, MAX_TOKEN_LEN};

mod buckets;
mod prefix2;
use buckets::{Buckets, BUCKET_MAX_LEN};
use prefix2::Prefix2;

/// Number of two-byte prefixes.
const PREFIX2_COUNT: usize = 1 << 16;

/// Prefix lengths of the length filters: filter `k` maps a hash of the first
/// `FILTER_PREFIXES[k]` bytes to the lengths (bit `len - 1`) of the tokens at
/// least that long whose prefix hashes there.
const FILTER_PREFIXES: [usize; 7] = [3, 4, 5, 6, 8, 10, 12];

/// Filters applied to every position with a candidate, without a branch
/// (the rest only while a candidate is at least as long as their prefix).
const BRANCH_FREE_FILTERS: usize = 5;

/// One hash slot for a token of 3..=16 bytes. `len == 0` marks an empty slot.
#[derive(Clone, Copy, Default)]
struct Slot {
    lo: u64,
    hi: u64,
    code: u16,
    len: u8,
}

/// Longest-prefix matcher over a [`TokenTable`]; built once per dictionary and
/// shared freely between threads (`Send + Sync`).
#[derive(Clone)]
pub struct Matcher {
    /// Byte → code of its single-byte token.
    single: [u16; 256],
    /// Two-byte prefix → (bitmask of token lengths 2..=16 starting with it, bit
    /// `len - 1`) |
    /// (code of the two-byte token << 16).
    prefix2: Prefix2,
    /// Open-addressing table of tokens of 3..=16 bytes; its length is a power of two.
    slots: Vec<Slot>,
    /// `64 - log2(slots.len())`: the hash keeps its top bits.
    shift: u32,
    /// The length filters, one table of `1 << filter_bits` entries per
    /// prefix length of [`FILTER_PREFIXES`], back to back.
    filters: Vec<u16>,
    /// `64 - filter_bits`.
    filter_shift: u32,
    /// Occupied slots.
    occupied: usize,
    /// Tokens inserted (all lengths).
    tokens: usize,
    /// The grouped index of a finished table ([`Matcher::new`]); `None`
    /// while the matcher grows (any insert drops it) or when a 3-byte prefix
    /// starts too many tokens.
    buckets: Option<Box<Buckets>>,
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("tokens", &self.tokens)
            .field("long_tokens", &self.occupied)
            .field("slots", &self.slots.len())
            .finish()
    }
}

/// Mask of the low `n` bytes of a `u64` (`n` in 0..=8).
#[inline(always)]
fn low_bytes_mask(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (n * 8)) - 1
    }
}

/// The first `len` bytes of the 16-byte window `(lo, hi)`, the rest zeroed.
#[inline(always)]
fn masked_key(lo: u64, hi: u64, len: usize) -> (u64, u64) {
    if len <= 8 {
        (lo & low_bytes_mask(len), 0)
    } else {
        (lo, hi & low_bytes_mask(len - 8))
    }
}

/// Loads up to 16 bytes of `input` as two little-endian words, zero-padded.
#[inline(always)]
fn load_window(input: &[u8]) -> (u64, u64) {
    if input.len() >= MAX_TOKEN_LEN {
        let lo = u64::from_le_bytes(input[0..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(input[8..16].try_into().expect("8 bytes"));
        (lo, hi)
    } else {
        let mut buf = [0u8; MAX_TOKEN_LEN];
        buf[..input.len()].copy_from_slice(input);
        let lo = u64::from_le_bytes(buf[0..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
        (lo, hi)
    }
}

/// Hash of a masked key and its length.
#[inline(always)]
fn hash_key(lo: u64, hi: u64, len: usize) -> u64 {
    // One multiply: the table keeps the product's top bits, which depend on
    // every bit of the key. Keys of different lengths with equal masked
    // bytes differ by `len` in the word's top byte (a token's bytes past its
    // length are masked to zero, so that byte of `lo` is free when len < 8
    // and otherwise `hi` tells them apart).
    (lo ^ hi.rotate_left(29) ^ ((len as u64) << 58)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// How often each of the `tokens` codes is used when the rows of `parts` are
/// encoded with `m`, one task per part on all cores (the trainers' pruning
/// passes: a token that is not used enough no longer pays for its slot). The
/// sums do not depend on how the rows are split into parts.
pub(crate) fn count_uses(m: &Matcher, parts: Vec<&[&[u8]]>, tokens: usize) -> Vec<u32> {
    use rayon::prelude::*;
    parts
        .into_par_iter()
        .map(|part| {
            let mut uses = vec![0u32; tokens];
            let mut codes = Vec::new();
            for row in part {
                codes.clear();
                m.encode_into(row, &mut codes);
                for &c in &codes {
                    uses[c as usize] += 1;
                }
            }
            uses
        })
        .reduce(
            || vec![0u32; tokens],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        )
}

impl Matcher {
    /// Builds the matcher of `table`.
    ///
    /// The table must hold all 256 single bytes (checked in debug builds) and at
    /// most 65536 tokens. If several codes share the same bytes, the first wins.
    pub fn new(table: &TokenTable) -> Self {
        debug_assert!(table.len() <= 1 << 16, "more than 65536 tokens");
        let mut m = Self::with_capacity(table.len());
        let mut seen = [false; 256];
        for (code, token) in table.iter().enumerate() {
            if token.len() == 1 {
                if seen[token[0] as usize] {
                    continue;
                }
                seen[token[0] as usize] = true;
            }
            m.insert(token, code as u16);
        }
        debug_assert!(
            seen.iter().all(|&s| s),
            "token table lacks some single-byte tokens"
        );
        // The grouped index pays where tokens are short (FSST-12: −10% one-
        // thread compress time) and does not on OnPair's tables (callgrind
        // and timing, bench/COMPRESS.md: 16-byte compares, larger groups,
        // and a 65536-token build cost more than the filters they skip).
        if table.len() <= 1 << 12 && table.lens().iter().all(|&l| l as usize <= BUCKET_MAX_LEN) {
            m.buckets = Buckets::build(&m).map(Box::new);
        }
        m
    }

    /// An empty matcher sized for about `tokens` tokens (it grows as needed).
    ///
    /// Until the 256 single bytes are inserted, bytes without a token resolve to
    /// code 0; callers building a dictionary insert them first.
    pub fn with_capacity(tokens: usize) -> Self {
        // Codes are u16: no dictionary has more than 2^16 tokens, so a larger
        // request is only a hint that cannot be met. The clamp also keeps the
        // table's length a power of two of at least 32 for any argument,
        // which `find`'s unchecked loads rely on (a wrapped `* 2` or
        // `next_power_of_two` would give 0 slots).
        let slots = (tokens.clamp(16, 1 << 16) * 2).next_power_of_two();
        let filter_bits = Self::filter_bits(slots);
        Self {
            single: [0; 256],
            prefix2: Prefix2::new(),
            slots: vec![Slot::default(); slots],
            shift: 64 - slots.trailing_zeros(),
            filters: vec![0; FILTER_PREFIXES.len() << filter_bits],
            filter_shift: 64 - filter_bits,
            occupied: 0,
            tokens: 0,
            buckets: None,
        }
    }

    /// Number of tokens inserted so far.
    pub fn len(&self) -> usize {
        self.tokens
    }

    /// True when no token was inserted.
    pub fn is_empty(&self) -> bool {
        self.tokens == 0
    }

    /// Adds `token` (1..=16 bytes) with `code`. Returns false, leaving the
    /// matcher unchanged, when a token with the same bytes of 2..=16 bytes is
    /// already present; a single byte is always (re)assigned.
    ///
    /// # Panics
    /// If `token` is empty or longer than 16 bytes.
    pub fn insert(&mut self, token: &[u8], code: u16) -> bool {
        let len = token.len();
        assert!(
            (1..=MAX_TOKEN_LEN).contains(&len),
            "token length {len} outside 1..=16"
        );
        self.buckets = None;
        if len == 1 {
            self.single[token[0] as usize] = code;
            self.tokens += 1;
            return true;
        }
        let p = u16::from_le_bytes([token[0], token[1]]);
        if len == 2 {
            if self.prefix2[p as usize] & 0b10 != 0 {
                return false;
            }
            self.prefix2.or(p, 0b10 | (u32::from(code) << 16));
            self.tokens += 1;
            return true;
        }
        let (lo, hi) = load_window(token);
        if (self.occupied + 1) * 2 > self.slots.len() {
            self.grow();
        }
        if !self.insert_slot(Slot {
            lo,
            hi,
            code,
            len: len as u8,
        }) {
            return false;
        }
        self.occupied += 1;
        self.prefix2.or(p, 1 << (len - 1));
        self.set_filters(lo, hi, len);
        self.tokens += 1;
        true
    }

    /// Inserts into the hash table; false if the key is present.
    fn insert_slot(&mut self, slot: Slot) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = (hash_key(slot.lo, slot.hi, slot.len as usize) >> self.shift) as usize;
        loop {
            let s = &mut self.slots[i & mask];
            if s.len == 0 {
                *s = slot;
                return true;
            }
            if s.len == slot.len && s.lo == slot.lo && s.hi == slot.hi {
                return false;
            }
            i += 1;
        }
    }

    /// Filter size (log2 of entries per filter) for a hash table of `slots`:
    /// about one entry per slot, i.e. two per long token, within 2^10..=2^16.
    fn filter_bits(slots: usize) -> u32 {
        slots.trailing_zeros().clamp(10, 16)
    }

    /// Doubles the hash table and rebuilds the filters at the matching size.
    fn grow(&mut self) {
        let new_len = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); new_len]);
        self.shift = 64 - new_len.trailing_zeros();
        let filter_bits = Self::filter_bits(new_len);
        self.filter_shift = 64 - filter_bits;
        self.filters = vec![0; FILTER_PREFIXES.len() << filter_bits];
        for s in old.into_iter().filter(|s| s.len != 0) {
            self.insert_slot(s);
            self.set_filters(s.lo, s.hi, s.len as usize);
        }
    }

    /// Records a long token of `len` bytes in the filters.
    fn set_filters(&mut self, lo: u64, hi: u64, len: usize) {
        for (k, &plen) in FILTER_PREFIXES.iter().enumerate() {
            if len >= plen {
                let i = self.filter_index(k, lo, hi, plen);
                self.filters[i] |= 1 << (len - 1);
            }
        }
    }

    /// Index in `filters` of the first `plen` bytes of the window `(lo, hi)`
    /// for filter `k`.
    #[inline(always)]
    fn filter_index(&self, k: usize, lo: u64, hi: u64, plen: usize) -> usize {
        let (klo, khi) = masked_key(lo, hi, plen);
        let h = (klo ^ khi.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (k << (64 - self.filter_shift)) | (h >> self.filter_shift) as usize
    }

    /// Filter `k`'s entry for the first `plen` bytes of `(lo, hi)` (a
    /// query's load, without a bounds check).
    #[inline(always)]
    fn filter(&self, k: usize, lo: u64, hi: u64, plen: usize) -> u16 {
        // A constant after unrolling: the check costs nothing.
        assert!(k < FILTER_PREFIXES.len());
        let i = self.filter_index(k, lo, hi, plen);
        debug_assert!(i < self.filters.len());
        // SAFETY: `filters` holds `FILTER_PREFIXES.len() << b` entries, where
        // `b = 64 - filter_shift` (set together in `with_capacity` and
        // `grow`). `filter_index` is `(k << b) | (h >> filter_shift)`: the
        // hash part is below `2^b` (a `u64` shifted right by `64 - b`), and
        // `k < FILTER_PREFIXES.len()` (asserted above), so the index is
        // below `FILTER_PREFIXES.len() << b`.
        unsafe { *self.filters.get_unchecked(i) }
    }

    /// Looks up a masked key of `len` (3..=16) bytes.
    #[inline(always)]
    fn find(&self, lo: u64, hi: u64, len: usize) -> Option<u16> {
        let mask = self.slots.len() - 1;
        let mut i = (hash_key(lo, hi, len) >> self.shift) as usize;
        loop {
            debug_assert!((i & mask) < self.slots.len());
            // SAFETY: `slots.len()` is a power of two of at least 32
            // (`with_capacity`: `(max(tokens, 16) * 2).next_power_of_two()`,
            // and `grow` doubles it), so `mask = len - 1` and `i & mask <
            // len`.
            let s = unsafe { self.slots.get_unchecked(i & mask) };
            if s.len as usize == len && s.lo == lo && s.hi == hi {
                return Some(s.code);
            }
            if s.len == 0 {
                return None;
            }
            i += 1;
        }
    }

    /// The code of the token whose bytes are exactly `token`, if any.
    pub fn get(&self, token: &[u8]) -> Option<u16> {
        match token.len() {
            0 => None,
            1 => Some(self.single[token[0] as usize]),
            2 => {
                let e = self.prefix2[u16::from_le_bytes([token[0], token[1]]) as usize];
                (e & 0b10 != 0).then_some((e >> 16) as u16)
            }
            len if len <= MAX_TOKEN_LEN => {
                let (lo, hi) = load_window(token);
                self.find(lo, hi, len)
            }
            _ => None,
        }
    }

    /// Longest token that is a prefix of `input` (non-empty): `(code, len)`.
    ///
    /// # Panics
    /// If `input` is empty.
    #[inline]
    pub fn longest_match(&self, input: &[u8]) -> (u16, usize) {
        let (lo, hi) = load_window(input);
        self.longest_match_window(lo, hi, input.len())
    }

    /// [`Self::longest_match`] of `padded[pos..pos + avail]`, where `padded`
    /// holds at least 16 bytes from `pos` and the bytes past `avail` are zero
    /// (a row copied once into a zero-padded buffer): no copy per position.
    ///
    /// # Panics
    /// If `avail` is 0 or `padded` holds fewer than `pos + 16` bytes.
    #[inline(always)]
    pub fn longest_match_padded(&self, padded: &[u8], pos: usize, avail: usize) -> (u16, usize) {
        let w = &padded[pos..pos + MAX_TOKEN_LEN];
        let lo = u64::from_le_bytes(w[0..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(w[8..16].try_into().expect("8 bytes"));
        debug_assert!(avail >= MAX_TOKEN_LEN || w[avail..].iter().all(|&b| b == 0));
        self.longest_match_window(lo, hi, avail)
    }

    /// [`Self::longest_match`] on a loaded window; `avail` (≥ 1) is the number
    /// of input bytes left (bytes of the window past it are zero).
    #[inline(always)]
    fn longest_match_window(&self, lo: u64, hi: u64, avail: usize) -> (u16, usize) {
        assert!(avail > 0, "longest_match on empty input");
        let first = lo as u8;
        if avail == 1 {
            return (self.single[first as usize], 1);
        }
        let entry = self.prefix2[lo as u16 as usize];
        let avail = avail.min(MAX_TOKEN_LEN);
        // Candidate lengths 3..=avail (bit `len - 1`).
        let mut lens = entry & ((1u32 << avail) - 1) & !0b11;
        if let Some(b) = &self.buckets {
            if lens != 0 {
                if let Some(hit) = b.longest(lo, hi, avail) {
                    return hit;
                }
            }
            lens = 0;
        }
        if lens != 0 {
            // Narrow the candidates with the filters of longer prefixes; bits
            // of lengths shorter than a filter's prefix pass it unchanged.
            // The first BRANCH_FREE_FILTERS filters are applied without a
            // branch: stopping after one of them mispredicted about once per
            // code on text (callgrind branch simulation), which cost more than
            // the loads it saved. A filter whose prefix is longer than
            // `avail` or than every candidate touches no candidate.
            let mut keep = u32::MAX;
            for (k, &plen) in FILTER_PREFIXES[..BRANCH_FREE_FILTERS].iter().enumerate() {
                let f = u32::from(self.filter(k, lo, hi, plen));
                keep &= f | ((1u32 << (plen - 1)) - 1);
            }
            lens &= keep;
            for (k, &plen) in FILTER_PREFIXES.iter().enumerate().skip(BRANCH_FREE_FILTERS) {
                // A filter only narrows lengths ≥ its prefix: stop once no
                // candidate is that long (saves a table load per filter).
                if avail < plen || lens >> (plen - 1) == 0 {
                    break;
                }
                let f = u32::from(self.filter(k, lo, hi, plen));
                lens &= f | ((1u32 << (plen - 1)) - 1);
            }
        }
        while lens != 0 {
            let bit = 31 - lens.leading_zeros();
            let len = bit as usize + 1;
            let (klo, khi) = masked_key(lo, hi, len);
            if let Some(code) = self.find(klo, khi, len) {
                return (code, len);
            }
            lens &= !(1 << bit);
        }
        if entry & 0b10 != 0 {
            ((entry >> 16) as u16, 2)
        } else {
            (self.single[first as usize], 1)
        }
    }

    /// Appends the codes of `value` (greedy longest prefix match at every
    /// position) to `out`.
    pub fn encode_into(&self, value: &[u8], out: &mut Vec<u16>) {
        let mut pos = 0;
        // Fast path: a full 16-byte window is available.
        while pos + MAX_TOKEN_LEN <= value.len() {
            let w = &value[pos..pos + MAX_TOKEN_LEN];
            let lo = u64::from_le_bytes(w[0..8].try_into().expect("8 bytes"));
            let hi = u64::from_le_bytes(w[8..16].try_into().expect("8 bytes"));
            let (code, len) = self.longest_match_window(lo, hi, MAX_TOKEN_LEN);
            out.push(code);
            pos += len;
        }
        // Tail: copy the last (< 16) bytes once into a zero-padded buffer with
        // room for a full window at every remaining position.
        let rest = &value[pos..];
        if rest.is_empty() {
            return;
        }
        let mut buf = [0u8; 2 * MAX_TOKEN_LEN];
        buf[..rest.len()].copy_from_slice(rest);
        let mut at = 0;
        while at < rest.len() {
            let w = &buf[at..at + MAX_TOKEN_LEN];
            let lo = u64::from_le_bytes(w[0..8].try_into().expect("8 bytes"));
            let hi = u64::from_le_bytes(w[8..16].try_into().expect("8 bytes"));
            let (code, len) = self.longest_match_window(lo, hi, rest.len() - at);
            out.push(code);
            at += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `with_capacity` takes any `usize` (the unchecked loads of `find` and
    /// `filter` rely on the table sizes it sets): huge, wrapping and zero
    /// requests all give a working matcher.
    #[test]
    fn more_tokens_than_codes_keep_the_matcher_sound() {
        // A caller may insert far more tokens than a u16 code can name
        // (codes repeat): the table grows past 2^16 tokens and the filters
        // stop growing at their clamp, while `find` and `filter` keep their
        // unchecked loads in range.
        let mut m = Matcher::with_capacity(0);
        for b in 0..=255u8 {
            m.insert(&[b], b as u16);
        }
        let token = |i: u32| -> Vec<u8> {
            // Distinct first three bytes, then 0..=13 bytes of padding.
            let mut t = i.to_le_bytes()[..3].to_vec();
            t.resize(3 + (i % 14) as usize, b'~');
            t
        };
        const N: u32 = 200_000;
        for i in 0..N {
            assert!(m.insert(&token(i), i as u16), "token {i}");
        }
        for i in (0..N).step_by(997) {
            let t = token(i);
            assert_eq!(m.get(&t), Some(i as u16), "token {i}");
            let (code, len) = m.longest_match(&t);
            assert_eq!((code, len), (i as u16, t.len()), "token {i}");
        }
        assert_eq!(m.get(b"zzzzzzzz"), None);
    }

    #[test]
    fn any_capacity_gives_a_sound_matcher() {
        for cap in [
            0,
            1,
            17,
            1 << 16,
            (1 << 16) + 1,
            (1 << 62) + 1,
            usize::MAX / 2 + 1,
            usize::MAX,
        ] {
            let mut m = Matcher::with_capacity(cap);
            for b in 0..=255u8 {
                m.insert(&[b], b as u16);
            }
            assert!(m.insert(b"abcdef", 300));
            assert!(m.insert(b"abcdefghijklmnop", 301));
            assert_eq!(m.get(b"abcdef"), Some(300), "capacity {cap}");
            assert_eq!(m.get(b"abcdefg"), None, "capacity {cap}");
            assert_eq!(
                m.longest_match(b"abcdefghijklmnopq"),
                (301, 16),
                "capacity {cap}"
            );
            assert_eq!(m.longest_match(b"abcdefx"), (300, 6), "capacity {cap}");
        }
    }

    /// Tiny deterministic PRNG (splitmix64) for the tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A table over a small alphabet so that random inputs hit many tokens.
    fn random_table(rng: &mut Rng, extra: usize) -> TokenTable {
        let mut t = TokenTable::single_bytes();
        let mut seen = std::collections::HashSet::new();
        while t.len() < 256 + extra {
            let len = 2 + rng.below(15);
            let tok: Vec<u8> = (0..len).map(|_| b'a' + rng.below(3) as u8).collect();
            if seen.insert(tok.clone()) {
                t.push(&tok);
            }
        }
        t
    }

    fn brute_force(table: &TokenTable, input: &[u8]) -> usize {
        table
            .iter()
            .filter(|t| input.starts_with(t))
            .map(|t| t.len())
            .max()
            .unwrap()
    }

    #[test]
    fn longest_match_agrees_with_brute_force() {
        let mut rng = Rng(7);
        for extra in [0, 10, 300, 3000] {
            let table = random_table(&mut rng, extra);
            let m = Matcher::new(&table);
            for _ in 0..2000 {
                let n = 1 + rng.below(24);
                let input: Vec<u8> = (0..n)
                    .map(|_| {
                        if rng.below(20) == 0 {
                            rng.next() as u8
                        } else {
                            b'a' + rng.below(3) as u8
                        }
                    })
                    .collect();
                let (code, len) = m.longest_match(&input);
                assert_eq!(len, brute_force(&table, &input), "input {input:?}");
                assert_eq!(table.token(code as usize), &input[..len]);
                // The same match from a zero-padded copy, at every position.
                let mut padded = input.clone();
                padded.resize(n + MAX_TOKEN_LEN, 0);
                for pos in 0..n {
                    assert_eq!(
                        m.longest_match_padded(&padded, pos, n - pos),
                        m.longest_match(&input[pos..]),
                        "input {input:?} at {pos}"
                    );
                }
            }
        }
    }

    /// Tables whose 3-byte groups are small take the grouped path
    /// ([`Buckets`]); it agrees with brute force, near the end of the input
    /// (zero padding) included, and a growing matcher drops it.
    #[test]
    fn grouped_index_agrees_with_brute_force() {
        let mut rng = Rng(23);
        for extra in [1, 50, 400, 1500] {
            let mut t = TokenTable::single_bytes();
            let mut seen = std::collections::HashSet::new();
            while t.len() < 256 + extra {
                let len = 2 + rng.below(BUCKET_MAX_LEN - 1);
                let tok: Vec<u8> = (0..len).map(|_| b"ab\0cdxyz"[rng.below(8)]).collect();
                if seen.insert(tok.clone()) {
                    t.push(&tok);
                }
            }
            let mut m = Matcher::new(&t);
            assert!(m.buckets.is_some(), "{extra} tokens: no grouped index");
            for _ in 0..3000 {
                let n = 1 + rng.below(24);
                let input: Vec<u8> = (0..n).map(|_| b"ab\0cdxyz"[rng.below(8)]).collect();
                let (code, len) = m.longest_match(&input);
                assert_eq!(len, brute_force(&t, &input), "input {input:?}");
                assert_eq!(t.token(code as usize), &input[..len]);
            }
            m.insert(b"zzzzzzzzzzzzzzzz", 0);
            assert!(m.buckets.is_none());
        }
    }

    #[test]
    fn round_trip() {
        let mut rng = Rng(11);
        let table = random_table(&mut rng, 1000);
        let m = Matcher::new(&table);
        for _ in 0..500 {
            let n = rng.below(100);
            let input: Vec<u8> = (0..n)
                .map(|_| {
                    if rng.below(10) == 0 {
                        rng.next() as u8
                    } else {
                        b'a' + rng.below(3) as u8
                    }
                })
                .collect();
            let mut codes = Vec::new();
            m.encode_into(&input, &mut codes);
            let decoded: Vec<u8> = codes
                .iter()
                .flat_map(|&c| table.token(c as usize).iter().copied())
                .collect();
            assert_eq!(decoded, input);
            // Greedy: each code is the longest match at its position.
            let mut pos = 0;
            for &c in &codes {
                assert_eq!(
                    table.token_len(c as usize),
                    brute_force(&table, &input[pos..])
                );
                pos += table.token_len(c as usize);
            }
        }
    }

    #[test]
    fn empty_value_and_single_bytes() {
        let table = TokenTable::single_bytes();
        let m = Matcher::new(&table);
        let mut out = Vec::new();
        m.encode_into(b"", &mut out);
        assert!(out.is_empty());
        let all: Vec<u8> = (0..=255u8).collect();
        m.encode_into(&all, &mut out);
        assert_eq!(out, (0..=255u16).collect::<Vec<_>>());
    }

    #[test]
    fn insert_grows_and_rejects_duplicates() {
        let mut m = Matcher::with_capacity(0);
        for b in 0..=255u8 {
            assert!(m.insert(&[b], u16::from(b)));
        }
        let mut code = 256u16;
        for i in 0..5000u32 {
            let tok = format!("k{i:05}");
            assert!(m.insert(tok.as_bytes(), code));
            assert!(!m.insert(tok.as_bytes(), 0));
            code += 1;
        }
        assert!(m.insert(b"xy", code));
        assert!(!m.insert(b"xy", 0));
        assert_eq!(m.len(), 256 + 5001);
        assert_eq!(m.get(b"k04321"), Some(256 + 4321));
        assert_eq!(m.get(b"xy"), Some(code));
        assert_eq!(m.get(b"k0432"), None);
        assert_eq!(m.longest_match(b"k04321zz"), (256 + 4321, 6));
    }

    #[test]
    fn matcher_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Matcher>();
    }

    #[test]
    fn zero_bytes_are_not_confused_with_padding() {
        let mut t = TokenTable::single_bytes();
        let ab0 = t.push(b"ab\0") as u16;
        let ab = t.push(b"ab") as u16;
        let m = Matcher::new(&t);
        assert_eq!(m.longest_match(b"ab"), (ab, 2));
        assert_eq!(m.longest_match(b"ab\0"), (ab0, 3));
        assert_eq!(m.longest_match(b"abc"), (ab, 2));
    }
}
