//! The distinct byte strings of a chunk, numbered by first appearance: the
//! value-dictionary screens' table (`values::distinct`, `distinct_rows`).
//!
//! An open-addressing table of 8-byte slots, each a string's 32-bit hash
//! tag and its number; the strings stay where they are (the caller maps a
//! number back to its bytes). A slot's position comes from its tag alone,
//! so growing the table moves slots without hashing a string again: with a
//! map keyed by the strings, every growth re-hashed every string seen, and
//! the two screens took a quarter of `auto`'s time on a chunk of distinct
//! rows (bench/COMPRESS.md, "The value-dictionary screens"). Half full at
//! most, probed linearly; a tag is compared before any byte.

use std::hash::{BuildHasher, Hasher};

/// A set of byte strings, each numbered (see the module notes).
pub(super) struct Seen {
    /// 0: empty; else `tag << 32 | (number + 1)`.
    slots: Vec<u64>,
    /// `slots.len() == 1 << bits`.
    bits: u32,
    len: usize,
    hash: RowHash,
}

impl Seen {
    /// A table sized for `expected` strings before its first growth.
    pub fn with_capacity(expected: usize) -> Self {
        let bits = (expected.max(8) * 2).next_power_of_two().trailing_zeros();
        Self {
            slots: vec![0; 1 << bits],
            bits,
            len: 0,
            hash: RowHash::new(),
        }
    }

    /// The number of `key` when an equal string was seen before; else `key`
    /// takes number `next` (the caller's count of strings seen, which must
    /// grow by one each time this returns `next`) and `next` comes back.
    /// `bytes_of(n)` is string `n`'s bytes.
    #[inline]
    pub fn number_of<'a>(
        &mut self,
        key: &[u8],
        next: u32,
        bytes_of: impl Fn(u32) -> &'a [u8],
    ) -> u32 {
        debug_assert!(next < u32::MAX);
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let tag = self.tag(key);
        let mask = self.slots.len() - 1;
        let mut at = self.home(tag);
        loop {
            let s = self.slots[at];
            if s == 0 {
                self.slots[at] = (u64::from(tag) << 32) | u64::from(next + 1);
                self.len += 1;
                return next;
            }
            if (s >> 32) as u32 == tag {
                let n = (s as u32) - 1;
                if bytes_of(n) == key {
                    return n;
                }
            }
            at = (at + 1) & mask;
        }
    }

    fn tag(&self, key: &[u8]) -> u32 {
        let mut h = self.hash.build_hasher();
        h.write(key);
        (h.finish() >> 32) as u32
    }

    /// The first slot a tag tries: its top bits.
    #[inline]
    fn home(&self, tag: u32) -> usize {
        (u64::from(tag) >> (32 - self.bits.min(32))) as usize
    }

    /// Twice the slots, each moved by its tag (no string hashed again).
    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.bits += 1;
        assert!(self.bits <= 32, "more than 2^31 distinct strings");
        self.slots = vec![0; 1 << self.bits];
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut at = self.home((s >> 32) as u32);
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = s;
        }
    }
}

/// A word-at-a-time multiplicative hash for the distinct-value maps (std's
/// SipHash cost 6-8% of a fixed-codec write). The seed is random per map
/// (a `RandomState` draw), so inputs cannot be crafted to collide; the
/// result of the screens never depends on the hash (values are numbered by
/// first use).
#[derive(Clone, Copy)]
struct RowHash(u64);

impl RowHash {
    fn new() -> Self {
        Self(std::collections::hash_map::RandomState::new().hash_one(0x5EED_u64) | 1)
    }
}

impl BuildHasher for RowHash {
    type Hasher = RowHasher;
    fn build_hasher(&self) -> RowHasher {
        RowHasher(self.0)
    }
}

/// The state of [`RowHash`].
struct RowHasher(u64);

const ROW_HASH_K: u64 = 0x9E37_79B9_7F4A_7C15;

impl RowHasher {
    #[inline(always)]
    fn mix(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(ROW_HASH_K).rotate_left(29);
    }
}

impl Hasher for RowHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let r = chunks.remainder();
        let n = r.len();
        // The last 1..=7 bytes in one word (overlapping loads; the length
        // is hashed too).
        let v = if n >= 4 {
            let a = u32::from_le_bytes(r[..4].try_into().expect("4 bytes"));
            let b = u32::from_le_bytes(r[n - 4..].try_into().expect("4 bytes"));
            u64::from(a) | (u64::from(b) << 32)
        } else if n > 0 {
            u64::from(r[0]) | (u64::from(r[n / 2]) << 8) | (u64::from(r[n - 1]) << 16)
        } else {
            0
        };
        self.mix(v ^ ((n as u64) << 56));
    }

    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        h ^ (h >> 29)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbers by first appearance, equal strings one number, through
    /// growths from the smallest table; strings that differ only past 8
    /// bytes, by length, or are empty stay apart.
    #[test]
    fn numbers_strings_by_first_appearance() {
        let mut strings: Vec<Vec<u8>> = Vec::new();
        for i in 0..5_000u32 {
            strings.push(format!("row-{:08}-tail", i % 1_777).into_bytes());
            strings.push(vec![b'a'; (i % 23) as usize]);
        }
        let mut seen = Seen::with_capacity(1);
        let mut firsts: Vec<usize> = Vec::new();
        let mut expect = std::collections::HashMap::new();
        for (i, s) in strings.iter().enumerate() {
            let next = firsts.len() as u32;
            let n = seen.number_of(s, next, |k| &strings[firsts[k as usize]]);
            let want = *expect.entry(s.clone()).or_insert(next);
            assert_eq!(n, want, "string {i}");
            if n == next {
                firsts.push(i);
            }
        }
        assert_eq!(firsts.len(), 1_777 + 23);
    }
}
