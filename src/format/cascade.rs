//! Cascaded monotone sequences (spec/FORMAT.md §6): deltas, frame of
//! reference per block of 128, bit-packed with `bitpacking::BitPacker4x`.
//!
//! ```text
//! +-------+------------+------+-----------+-----------------------------+
//! | count | num_blocks | first| reserved  | directory (16 B per block)  | packed blocks
//! +-------+------------+------+-----------+-----------------------------+
//! ```
//! Block `k` covers deltas `128k .. 128k+128` (delta `i` = `v[i+1] - v[i]`);
//! its directory entry holds `base` (= `v[128k]`), `min` (frame of reference),
//! the byte offset of its packed data and its bit width. A value is found by
//! unpacking one block and summing at most 128 deltas.

use bitpacking::{BitPacker, BitPacker4x};

use super::wire::{Cursor, PutLe};
use super::{CASCADE_BLOCK, CASCADE_DIR_ENTRY_LEN, CASCADE_HEADER_LEN};
use crate::error::{Error, Invariant, Result, Section};

/// Encodes a non-empty, non-decreasing sequence and appends it to `out`.
///
/// # Panics
/// If `values` is empty or decreases (writer bugs, never file input).
pub fn encode(values: &[u32], out: &mut Vec<u8>) {
    assert!(
        !values.is_empty(),
        "cascaded sequences hold at least one value"
    );
    let deltas: Vec<u32> = values
        .windows(2)
        .map(|w| w[1].checked_sub(w[0]).expect("sequence must not decrease"))
        .collect();
    let num_blocks = deltas.len().div_ceil(CASCADE_BLOCK);
    out.put_u32(values.len() as u32);
    out.put_u32(num_blocks as u32);
    out.put_u32(values[0]);
    out.put_u32(0);
    let packer = BitPacker4x::new();
    let mut packed = Vec::new();
    let mut dir = Vec::with_capacity(num_blocks * CASCADE_DIR_ENTRY_LEN);
    for (k, block) in deltas.chunks(CASCADE_BLOCK).enumerate() {
        let min = *block.iter().min().expect("blocks are non-empty");
        let mut buf = [0u32; CASCADE_BLOCK];
        for (b, &d) in buf.iter_mut().zip(block) {
            *b = d - min;
        }
        let bits = packer.num_bits(&buf);
        let start = packed.len();
        packed.resize(start + bits as usize * CASCADE_BLOCK / 8, 0);
        packer.compress(&buf, &mut packed[start..], bits);
        dir.put_u32(values[k * CASCADE_BLOCK]);
        dir.put_u32(min);
        dir.put_u32(start as u32);
        dir.extend_from_slice(&[bits, 0, 0, 0]);
    }
    out.extend_from_slice(&dir);
    out.extend_from_slice(&packed);
}

/// Number of bytes [`encode`] would append for `values` (used in tests and sizing).
pub fn encoded_len(values: &[u32]) -> usize {
    let mut v = Vec::new();
    encode(values, &mut v);
    v.len()
}

/// One block directory entry.
#[derive(Clone, Copy, Debug)]
struct BlockEntry {
    base: u32,
    min: u32,
    offset: u32,
    bits: u8,
}

/// A parsed, size-checked cascaded sequence. Construct with [`Sequence::parse`],
/// then [`Sequence::decode_all`] checks the values themselves.
#[derive(Clone, Debug)]
pub struct Sequence {
    len: usize,
    first: u32,
    dir: Vec<BlockEntry>,
    /// Where the packed blocks lie inside the bytes given to [`Sequence::parse`];
    /// every other method takes those same bytes again.
    packed: std::ops::Range<usize>,
}

impl Sequence {
    /// Parses `bytes` (the whole encoded sequence, nothing more) which sit at
    /// file offset `base` of `section`. Checks: count ≥ 1, the block count
    /// matches the count, bit widths ≤ 32, reserved bytes zero, each block's
    /// packed offset is the running total, and the packed data fill the rest exactly.
    pub fn parse(bytes: &[u8], base: u64, section: Section) -> Result<Self> {
        let mut c = Cursor::new(bytes, base, section);
        let count = c.u32("sequence count")?;
        let num_blocks = c.u32("sequence block count")?;
        let first = c.u32("sequence first value")?;
        c.zeros(4, "sequence reserved")?;
        if count == 0 {
            return Err(c.error(Invariant::BadField {
                what: "sequence count",
                value: 0,
            }));
        }
        let expected_blocks = (count as usize - 1).div_ceil(CASCADE_BLOCK);
        if num_blocks as usize != expected_blocks {
            return Err(c.error(Invariant::TotalMismatch {
                what: "sequence block count",
                expected: expected_blocks as u64,
                found: num_blocks as u64,
            }));
        }
        // The directory must fit before anything is allocated for it.
        let dir_bytes = (num_blocks as usize)
            .checked_mul(CASCADE_DIR_ENTRY_LEN)
            .filter(|&n| n <= c.remaining())
            .ok_or_else(|| {
                c.error(Invariant::LengthPastEnd {
                    what: "sequence directory",
                    end: c.offset() + num_blocks as u64 * CASCADE_DIR_ENTRY_LEN as u64,
                    available: base + bytes.len() as u64,
                })
            })?;
        let mut dir = Vec::with_capacity(num_blocks as usize);
        let mut running = 0u64;
        for _ in 0..num_blocks {
            let at = c.offset();
            let e = BlockEntry {
                base: c.u32("block base")?,
                min: c.u32("block frame of reference")?,
                offset: c.u32("block offset")?,
                bits: c.u8("block bit width")?,
            };
            c.zeros(3, "block reserved")?;
            if e.bits > 32 {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::BadField {
                        what: "block bit width",
                        value: e.bits as u64,
                    },
                ));
            }
            if e.offset as u64 != running {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::Overlap {
                        what: "packed blocks",
                    },
                ));
            }
            running += e.bits as u64 * (CASCADE_BLOCK as u64 / 8);
            dir.push(e);
        }
        debug_assert_eq!(dir_bytes, dir.len() * CASCADE_DIR_ENTRY_LEN);
        let packed = c.take(c.remaining(), "packed blocks")?;
        if packed.len() as u64 != running {
            return Err(Error::corrupt(
                section,
                base + (CASCADE_HEADER_LEN + dir_bytes) as u64,
                Invariant::SizeMismatch {
                    what: "packed blocks",
                    expected: running,
                    found: packed.len() as u64,
                },
            ));
        }
        let start = bytes.len() - packed.len();
        Ok(Self {
            len: count as usize,
            first,
            dir,
            packed: start..bytes.len(),
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: sequences hold at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Unpacks block `k`'s 128 frame-of-reference residuals.
    fn unpack(&self, bytes: &[u8], k: usize, out: &mut [u32; CASCADE_BLOCK]) {
        let e = self.dir[k];
        let start = self.packed.start + e.offset as usize;
        let n = e.bits as usize * CASCADE_BLOCK / 8;
        // Sizes were checked in `parse`: every block's bytes lie inside `packed`.
        BitPacker4x::new().decompress(&bytes[start..start + n], out, e.bits);
    }

    /// Decodes every value, checking that block bases agree with the running
    /// sums, that padding residuals are zero and that nothing overflows u32.
    /// `what` names the sequence in errors; `at` is its file offset.
    pub fn decode_all(
        &self,
        bytes: &[u8],
        what: &'static str,
        section: Section,
        at: u64,
    ) -> Result<Vec<u32>> {
        let mut values = Vec::with_capacity(self.len);
        values.push(self.first);
        let mut cur = self.first as u64;
        let mut buf = [0u32; CASCADE_BLOCK];
        let deltas = self.len - 1;
        for k in 0..self.dir.len() {
            let e = self.dir[k];
            if e.base as u64 != cur {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::TotalMismatch {
                        what,
                        expected: cur,
                        found: e.base as u64,
                    },
                ));
            }
            self.unpack(bytes, k, &mut buf);
            let in_block = (deltas - k * CASCADE_BLOCK).min(CASCADE_BLOCK);
            for (j, &r) in buf.iter().enumerate() {
                if j >= in_block {
                    if r != 0 {
                        return Err(Error::corrupt(
                            section,
                            at,
                            Invariant::NonZeroReserved {
                                what: "sequence block padding",
                            },
                        ));
                    }
                    continue;
                }
                cur += e.min as u64 + r as u64;
                if cur > u32::MAX as u64 {
                    return Err(Error::corrupt(
                        section,
                        at,
                        Invariant::LimitExceeded {
                            what,
                            value: cur,
                            limit: u32::MAX as u64,
                        },
                    ));
                }
                values.push(cur as u32);
            }
        }
        Ok(values)
    }

    /// Value `i` (`i < len`), reading only the one block it needs. Correct for
    /// sequences that [`Self::decode_all`] accepted; otherwise returns some
    /// value without panicking (arithmetic wraps).
    pub fn get(&self, bytes: &[u8], i: usize) -> u32 {
        if i == 0 {
            return self.first;
        }
        let (k, j) = ((i - 1) / CASCADE_BLOCK, (i - 1) % CASCADE_BLOCK);
        let mut buf = [0u32; CASCADE_BLOCK];
        self.unpack(bytes, k, &mut buf);
        let e = self.dir[k];
        let sum: u32 = buf[..=j].iter().fold(0u32, |s, &r| s.wrapping_add(r));
        e.base
            .wrapping_add(e.min.wrapping_mul(j as u32 + 1))
            .wrapping_add(sum)
    }

    /// Appends `v[i] as i64 + add` for every `i` in `range` (`range.end <= len`)
    /// to `out`, one block unpack per 128 values. For sequences that
    /// [`Self::decode_all`] accepted (no checks here; arithmetic wraps, so
    /// other input gives wrong values, never a panic).
    pub fn extend_i64(
        &self,
        bytes: &[u8],
        range: std::ops::Range<usize>,
        add: i64,
        out: &mut Vec<i64>,
    ) {
        let mut i = range.start;
        if i == 0 && i < range.end {
            out.push(self.first as i64 + add);
            i = 1;
        }
        let mut buf = [0u32; CASCADE_BLOCK];
        while i < range.end {
            let (k, j0) = ((i - 1) / CASCADE_BLOCK, (i - 1) % CASCADE_BLOCK);
            self.unpack(bytes, k, &mut buf);
            let e = self.dir[k];
            let mut v = e
                .base
                .wrapping_add(e.min.wrapping_mul(j0 as u32))
                .wrapping_add(buf[..j0].iter().fold(0u32, |s, &r| s.wrapping_add(r)));
            let jend = CASCADE_BLOCK.min(range.end - 1 - CASCADE_BLOCK * k);
            for &r in &buf[j0..jend] {
                v = v.wrapping_add(e.min).wrapping_add(r);
                out.push(v as i64 + add);
            }
            i = CASCADE_BLOCK * k + jend + 1;
        }
    }

    /// Values `i` and `i + 1` (`i + 1 < len`), unpacking at most two blocks.
    pub fn get_pair(&self, bytes: &[u8], i: usize) -> (u32, u32) {
        if i == 0 || (i - 1) / CASCADE_BLOCK == i / CASCADE_BLOCK {
            // i+1 lies in the block after i's delta, or i is the first value.
            let k = i / CASCADE_BLOCK;
            let mut buf = [0u32; CASCADE_BLOCK];
            self.unpack(bytes, k, &mut buf);
            let e = self.dir[k];
            let j = i % CASCADE_BLOCK; // delta index of v[i+1] within block k
                                       // v[i] = base + j·min + Σ r[..j]; a plain sum vectorizes.
            let sum = buf[..j].iter().fold(0u32, |s, &r| s.wrapping_add(r));
            let prev = e
                .base
                .wrapping_add(e.min.wrapping_mul(j as u32))
                .wrapping_add(sum);
            (prev, prev.wrapping_add(e.min).wrapping_add(buf[j]))
        } else {
            (self.get(bytes, i), self.get(bytes, i + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roundtrip(values: &[u32]) {
        let mut bytes = Vec::new();
        encode(values, &mut bytes);
        let s = Sequence::parse(&bytes, 0, Section::Footer).unwrap();
        assert_eq!(
            s.decode_all(&bytes, "t", Section::Footer, 0).unwrap(),
            values
        );
        for i in 0..values.len() {
            assert_eq!(s.get(&bytes, i), values[i], "get({i})");
            if i + 1 < values.len() {
                assert_eq!(
                    s.get_pair(&bytes, i),
                    (values[i], values[i + 1]),
                    "get_pair({i})"
                );
            }
        }
        let n = values.len();
        for (a, b) in [(0, n), (1, n), (n / 3, n / 2 + 1), (n, n)] {
            let mut out = Vec::new();
            s.extend_i64(&bytes, a..b, -5, &mut out);
            let want: Vec<i64> = values[a..b].iter().map(|&v| v as i64 - 5).collect();
            assert_eq!(out, want, "extend_i64({a}..{b})");
        }
    }

    #[test]
    fn constant_sequences_cost_almost_nothing() {
        let v: Vec<u32> = (0..100_000u32).map(|i| i * 15).collect();
        let n = encoded_len(&v);
        // 16 B header + 16 B per block of 128 values, zero-bit blocks.
        assert_eq!(n, 16 + 16 * (99_999usize.div_ceil(128)));
        roundtrip(&v);
    }

    #[test]
    fn edges() {
        roundtrip(&[7]);
        roundtrip(&[0, 0]);
        roundtrip(&[0, u32::MAX]);
        let v: Vec<u32> = (0..129).collect();
        roundtrip(&v);
        let v: Vec<u32> = (0..257).map(|i| i * 3).collect();
        roundtrip(&v);
    }

    proptest! {
        #[test]
        fn prop_roundtrip(first in 0u32..1000, deltas in proptest::collection::vec(0u32..5000, 0..700)) {
            let mut v = vec![first];
            for d in deltas { let l = *v.last().unwrap(); v.push(l + d); }
            roundtrip(&v);
        }
    }

    /// The BitPacker4x layout exactly as spec/FORMAT.md §6.2 states it:
    /// value `i` belongs to lane `i % 4` as that lane's value `i / 4`; each lane
    /// packs its 32 values LSB-first into u32 words; word `w` of lane `l` is
    /// little-endian u32 number `4w + l` of the block.
    fn spec_unpack(block: &[u8], bits: u32) -> [u32; 128] {
        let word = |n: usize| u32::from_le_bytes(block[4 * n..4 * n + 4].try_into().unwrap());
        let mut out = [0u32; 128];
        for (i, o) in out.iter_mut().enumerate() {
            let (lane, k) = (i % 4, i / 4);
            let bit = k as u32 * bits;
            let (w, sh) = ((bit / 32) as usize, bit % 32);
            let mut v = (word(4 * w + lane) as u64) >> sh;
            if sh + bits > 32 {
                v |= (word(4 * (w + 1) + lane) as u64) << (32 - sh);
            }
            *o = if bits == 32 {
                v as u32
            } else {
                (v & ((1u64 << bits) - 1)) as u32
            };
        }
        out
    }

    #[test]
    fn bitpacker4x_layout_matches_spec() {
        let packer = BitPacker4x::new();
        for bits in 0..=32u8 {
            let vals: [u32; 128] = std::array::from_fn(|i| {
                let x = (i as u64 * 0x9E37_79B9 + bits as u64 * 77) as u32;
                if bits == 32 {
                    x
                } else if bits == 0 {
                    0
                } else {
                    x & ((1u32 << bits) - 1)
                }
            });
            let mut buf = vec![0u8; bits as usize * 16];
            packer.compress(&vals, &mut buf, bits);
            if bits > 0 {
                assert_eq!(spec_unpack(&buf, bits as u32), vals, "bits {bits}");
            }
        }
    }

    #[test]
    fn corrupt_base_is_caught() {
        let v: Vec<u32> = (0..300).map(|i| i * 2).collect();
        let mut bytes = Vec::new();
        encode(&v, &mut bytes);
        bytes[16 + 16] ^= 1; // base of block 1
        let s = Sequence::parse(&bytes, 0, Section::Footer).unwrap();
        assert!(matches!(
            s.decode_all(&bytes, "t", Section::Footer, 0)
                .unwrap_err()
                .invariant(),
            Some(Invariant::TotalMismatch { .. })
        ));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let v: Vec<u32> = (0..300).map(|i| i * i).collect();
        let mut bytes = Vec::new();
        encode(&v, &mut bytes);
        for n in 0..bytes.len() {
            assert!(
                Sequence::parse(&bytes[..n], 0, Section::Footer).is_err(),
                "len {n}"
            );
        }
    }
}
