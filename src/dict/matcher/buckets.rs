//! The grouped index of a finished dictionary of short tokens (FSST-12's):
//! the matcher's read-only fast path ([`Buckets`], built by
//! [`super::Matcher::new`]).

use super::*;

/// Most tokens sharing a 3-byte prefix for [`Buckets`] to serve a table
/// (a longer bucket would cost more compares than the filters do).
pub(super) const MAX_BUCKET: usize = 24;

/// [`Matcher::new`] builds the grouped index only for tables whose tokens
/// are at most this long.
pub(super) const BUCKET_MAX_LEN: usize = 8;

/// A long token (3..=16 bytes) in a [`Buckets`] index: its bytes as two
/// little-endian words, the masks of its length, its code and length.
#[derive(Clone, Copy)]
pub(super) struct BucketToken {
    lo: u64,
    hi: u64,
    mask_lo: u64,
    mask_hi: u64,
    code: u16,
    len: u8,
}

/// The read-only fast path of a finished dictionary ([`Matcher::new`]): the
/// tokens of 3..=16 bytes grouped by their first three bytes, each group
/// longest first. A query probes one table for the input's first three bytes
/// and compares the group's tokens in order: the first that is a prefix of
/// the input is the longest match of at least three bytes. Built only when
/// no group holds more than [`MAX_BUCKET`] tokens (and only for tables of
/// short tokens: [`Matcher::new`]).
#[derive(Clone)]
pub(super) struct Buckets {
    /// Open-addressing table (power-of-two length, linear probing) of
    /// `(prefix | 1 << 24, start, end)`: the group of `prefix` (3 bytes,
    /// little-endian) is `tokens[start..end]`; a zero first field is empty.
    heads: Vec<(u32, u32, u32)>,
    /// `64 - log2(heads.len())`.
    shift: u32,
    tokens: Vec<BucketToken>,
}

impl Buckets {
    #[inline(always)]
    fn slot(prefix: u32, shift: u32) -> usize {
        (u64::from(prefix).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
    }

    /// The index of the long tokens of `m`, or `None` when some 3-byte prefix
    /// starts more than [`MAX_BUCKET`] of them.
    pub(super) fn build(m: &Matcher) -> Option<Self> {
        // Group by prefix, longest first (a token's bytes are distinct
        // within a length, so the order within a length does not matter:
        // at most one token of each length matches an input). Sorted as one
        // integer per token, `prefix | longest first | slot index`, then
        // gathered: sorting the 32-byte entries with a comparator was 5% of
        // a small column's FSST-12 compress (callgrind, bench/COMPRESS.md).
        let mut keys: Vec<u64> = m
            .slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.len != 0)
            .map(|(i, s)| {
                ((s.lo & 0xFF_FFFF) << 40) | (u64::from(u8::MAX - s.len) << 32) | i as u64
            })
            .collect();
        keys.sort_unstable();
        let long: Vec<(u32, u8, Slot)> = keys
            .iter()
            .map(|&k| {
                let s = m.slots[k as u32 as usize];
                ((s.lo & 0xFF_FFFF) as u32, s.len, s)
            })
            .collect();
        let groups = long.chunk_by(|a, b| a.0 == b.0).count();
        if long
            .chunk_by(|a, b| a.0 == b.0)
            .any(|g| g.len() > MAX_BUCKET)
        {
            return None;
        }
        let slots = (groups.max(8) * 2).next_power_of_two();
        let shift = 64 - slots.trailing_zeros();
        let mut heads = vec![(0u32, 0u32, 0u32); slots];
        let mut tokens = Vec::with_capacity(long.len());
        for g in long.chunk_by(|a, b| a.0 == b.0) {
            let start = tokens.len() as u32;
            for &(_, len, s) in g {
                let (mask_lo, mask_hi) = masked_key(u64::MAX, u64::MAX, len as usize);
                tokens.push(BucketToken {
                    lo: s.lo,
                    hi: s.hi,
                    mask_lo,
                    mask_hi,
                    code: s.code,
                    len,
                });
            }
            let mut i = Self::slot(g[0].0, shift);
            while heads[i & (slots - 1)].0 != 0 {
                i += 1;
            }
            heads[i & (slots - 1)] = (g[0].0 | 1 << 24, start, tokens.len() as u32);
        }
        Some(Self {
            heads,
            shift,
            tokens,
        })
    }

    /// The longest token of at least 3 bytes that is a prefix of the window
    /// `(lo, hi)` holding `avail` (≥ 3) input bytes.
    #[inline(always)]
    pub(super) fn longest(&self, lo: u64, hi: u64, avail: usize) -> Option<(u16, usize)> {
        let prefix = (lo & 0xFF_FFFF) as u32;
        let tag = prefix | 1 << 24;
        let mask = self.heads.len() - 1;
        let mut i = Self::slot(prefix, self.shift);
        loop {
            let (t, start, end) = self.heads[i & mask];
            if t == tag {
                for tok in &self.tokens[start as usize..end as usize] {
                    if tok.len as usize <= avail
                        && lo & tok.mask_lo == tok.lo
                        && hi & tok.mask_hi == tok.hi
                    {
                        return Some((tok.code, tok.len as usize));
                    }
                }
                return None;
            }
            if t == 0 {
                return None;
            }
            i += 1;
        }
    }
}
