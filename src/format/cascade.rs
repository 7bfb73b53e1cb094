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

use std::ops::Range;

use bitpacking::{BitPacker, BitPacker4x};

use binrw::binrw;

use super::wire::{start_of, Cursor, Fixed};
use super::{CASCADE_BLOCK, CASCADE_DIR_ENTRY_LEN, CASCADE_HEADER_LEN};
use crate::error::{Error, Invariant, Result, Section};

/// A sequence's header (§6.1).
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SequenceHeader {
    /// `n`, the number of values (≥ 1).
    pub count: u32,
    /// Number of blocks, `ceil((n − 1) / 128)`.
    pub blocks: u32,
    /// `v[0]`.
    pub first: u32,
    /// Zero.
    pub reserved: u32,
}

impl Fixed for SequenceHeader {
    const LEN: usize = CASCADE_HEADER_LEN;
}

/// One block directory entry (§6.1).
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockEntry {
    /// `v[128k]`.
    pub base: u32,
    /// The frame of reference: the block's smallest delta.
    pub min: u32,
    /// Byte offset of the block's packed data in the packed area.
    pub offset: u32,
    /// Bits per packed residual (0..=32).
    pub bits: u8,
    /// Zero.
    pub reserved: [u8; 3],
}

impl Fixed for BlockEntry {
    const LEN: usize = CASCADE_DIR_ENTRY_LEN;
}

/// Encodes a non-empty, non-decreasing sequence and appends it to `out`.
///
/// # Panics
/// If `values` is empty or decreases (writer bugs, never file input).
pub fn encode(values: &[u32], out: &mut Vec<u8>) {
    assert!(
        !values.is_empty(),
        "cascaded sequences hold at least one value"
    );
    let num_blocks = (values.len() - 1).div_ceil(CASCADE_BLOCK);
    let header = SequenceHeader {
        count: values.len() as u32,
        blocks: num_blocks as u32,
        first: values[0],
        reserved: 0,
    };
    header.put(out);
    // Blocks are packed apart; only their offsets chain. A long sequence (a
    // chunk's row boundaries: a million values) packs groups of blocks on
    // all threads, each group's offsets from its own start, then moved by
    // the groups before it: the same bytes as one pass.
    let groups: Vec<(Vec<BlockEntry>, Vec<u8>)> = if num_blocks > 2 * ENCODE_TASK_BLOCKS {
        use rayon::prelude::*;
        (0..num_blocks.div_ceil(ENCODE_TASK_BLOCKS))
            .into_par_iter()
            .map(|g| {
                let b0 = g * ENCODE_TASK_BLOCKS;
                encode_blocks(values, b0..(b0 + ENCODE_TASK_BLOCKS).min(num_blocks))
            })
            .collect()
    } else {
        vec![encode_blocks(values, 0..num_blocks)]
    };
    let mut dir = Vec::with_capacity(num_blocks * CASCADE_DIR_ENTRY_LEN);
    let mut at = 0u32;
    for (entries, packed) in &groups {
        for e in entries {
            BlockEntry {
                offset: e.offset + at,
                ..*e
            }
            .put(&mut dir);
        }
        at += packed.len() as u32;
    }
    out.extend_from_slice(&dir);
    for (_, packed) in &groups {
        out.extend_from_slice(packed);
    }
}

/// Blocks per parallel task of [`encode`] (2^20 values).
const ENCODE_TASK_BLOCKS: usize = 8192;

/// Blocks `blocks` of the deltas of `values` (block `k`: the deltas after
/// values `128k..`): their directory entries, offsets from the first of
/// them, and their packed residuals.
fn encode_blocks(values: &[u32], blocks: Range<usize>) -> (Vec<BlockEntry>, Vec<u8>) {
    let packer = BitPacker4x::new();
    let mut packed = Vec::new();
    let mut entries = Vec::with_capacity(blocks.len());
    for k in blocks {
        // Deltas v[128k + 1] - v[128k] .. of this block.
        let lo = k * CASCADE_BLOCK;
        let hi = (lo + CASCADE_BLOCK + 1).min(values.len());
        let mut buf = [0u32; CASCADE_BLOCK];
        let mut min = u32::MAX;
        for (b, w) in buf.iter_mut().zip(values[lo..hi].windows(2)) {
            *b = w[1].checked_sub(w[0]).expect("sequence must not decrease");
            min = min.min(*b);
        }
        let n = hi - lo - 1;
        for b in &mut buf[..n] {
            *b -= min;
        }
        let bits = packer.num_bits(&buf);
        let start = packed.len();
        packed.resize(start + bits as usize * CASCADE_BLOCK / 8, 0);
        packer.compress(&buf, &mut packed[start..], bits);
        entries.push(BlockEntry {
            base: values[lo],
            min,
            offset: start as u32,
            bits,
            reserved: [0; 3],
        });
    }
    (entries, packed)
}

/// Number of bytes [`encode`] would append for `values` (used in tests and sizing).
pub fn encoded_len(values: &[u32]) -> usize {
    let mut v = Vec::new();
    encode(values, &mut v);
    v.len()
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
    packed: Range<usize>,
}

impl Sequence {
    /// Parses `bytes` (the whole encoded sequence, nothing more) which sit at
    /// file offset `base` of `section`. Checks: count ≥ 1, the block count
    /// matches the count, bit widths ≤ 32, reserved bytes zero, each block's
    /// packed offset is the running total, and the packed data fill the rest exactly.
    pub fn parse(bytes: &[u8], base: u64, section: Section) -> Result<Self> {
        Self::parse_head(bytes, bytes.len(), base, section)
    }

    /// Bytes of the header and block directory of a sequence of `count`
    /// values: the prefix [`Self::parse_head`] needs.
    pub fn head_len(count: usize) -> usize {
        CASCADE_HEADER_LEN + count.saturating_sub(1).div_ceil(CASCADE_BLOCK) * CASCADE_DIR_ENTRY_LEN
    }

    /// [`Self::parse`] from a prefix: `head` holds at least the header and
    /// the block directory of a sequence that is `total_len` bytes long in
    /// all (the packed blocks need not be present). Every check of `parse`
    /// runs, the packed size against `total_len`.
    pub fn parse_head(head: &[u8], total_len: usize, base: u64, section: Section) -> Result<Self> {
        let head = &head[..head.len().min(total_len)];
        let mut c = Cursor::new(head, base, section);
        let h: SequenceHeader = c.fixed("sequence header")?;
        if h.reserved != 0 {
            return Err(Error::corrupt(
                section,
                base + start_of!(SequenceHeader, reserved),
                Invariant::NonZeroReserved {
                    what: "sequence reserved",
                },
            ));
        }
        let SequenceHeader {
            count,
            blocks: num_blocks,
            first,
            ..
        } = h;
        if count == 0 {
            return Err(c.error(Invariant::BadField {
                what: "sequence count",
                value: 0,
            }));
        }
        let expected_blocks = (count as usize - 1).div_ceil(CASCADE_BLOCK);
        if num_blocks as usize != expected_blocks {
            return Err(c.error(Invariant::SequenceBlockCount {
                expected: expected_blocks as u64,
                found: num_blocks as u64,
            }));
        }
        // The directory must fit before anything is allocated for it.
        let dir_bytes = (num_blocks as usize)
            .checked_mul(CASCADE_DIR_ENTRY_LEN)
            .filter(|&n| n <= total_len - CASCADE_HEADER_LEN && n <= c.remaining())
            .ok_or_else(|| {
                c.error(Invariant::LengthPastEnd {
                    what: "sequence directory",
                    end: c.offset() + num_blocks as u64 * CASCADE_DIR_ENTRY_LEN as u64,
                    available: base + total_len as u64,
                })
            })?;
        let mut dir = Vec::with_capacity(num_blocks as usize);
        let mut running = 0u64;
        for _ in 0..num_blocks {
            let at = c.offset();
            let e: BlockEntry = c.fixed("block directory entry")?;
            if e.reserved != [0; 3] {
                return Err(Error::corrupt(
                    section,
                    at + start_of!(BlockEntry, reserved),
                    Invariant::NonZeroReserved {
                        what: "block reserved",
                    },
                ));
            }
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
        let start = CASCADE_HEADER_LEN + dir_bytes;
        let packed_len = total_len - start;
        if packed_len as u64 != running {
            return Err(Error::corrupt(
                section,
                base + start as u64,
                Invariant::SizeMismatch {
                    what: "packed blocks",
                    expected: running,
                    found: packed_len as u64,
                },
            ));
        }
        Ok(Self {
            len: count as usize,
            first,
            dir,
            packed: start..total_len,
        })
    }

    /// Byte range, within the sequence's bytes, of the packed data of blocks
    /// `blocks` (`blocks.end <= num_blocks`).
    pub fn blocks_range(&self, blocks: Range<usize>) -> Range<usize> {
        let at = |k: usize| match self.dir.get(k) {
            Some(e) => self.packed.start + e.offset as usize,
            None => self.packed.end,
        };
        at(blocks.start)..at(blocks.end)
    }

    /// Blocks holding values `i` and `i + 1`.
    pub fn blocks_of_pair(&self, i: usize) -> Range<usize> {
        let k0 = i.saturating_sub(1) / CASCADE_BLOCK;
        let k1 = i / CASCADE_BLOCK;
        if i + 1 >= self.len {
            // Not a pair: no blocks (the caller checks the index).
            return 0..0;
        }
        k0..k1 + 1
    }

    /// Checks block `k`'s unpacked residuals: padding residuals are zero and
    /// the frame of reference is canonical (the smallest residual is 0 and
    /// the bit width is exactly that of the largest), so a sequence has one
    /// spelling (§6.4).
    fn check_block(
        &self,
        k: usize,
        buf: &[u32; CASCADE_BLOCK],
        section: Section,
        at: u64,
    ) -> Result<()> {
        let e = self.dir[k];
        let in_block = (self.len - 1 - k * CASCADE_BLOCK).min(CASCADE_BLOCK);
        if buf[in_block..].iter().any(|&r| r != 0) {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::NonZeroReserved {
                    what: "sequence block padding",
                },
            ));
        }
        let used = &buf[..in_block];
        let min = used.iter().copied().min().unwrap_or(0);
        let max = used.iter().copied().max().unwrap_or(0);
        let bits = 32 - max.leading_zeros();
        if min != 0 || bits != e.bits as u32 {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::NonCanonicalFrame {
                    block: k as u64,
                    min: e.min,
                    bits: e.bits,
                },
            ));
        }
        Ok(())
    }

    /// Values `i` and `i + 1` (`i + 1 < len`) from only the packed data of
    /// the blocks [`Self::blocks_of_pair`] names: `blocks` holds the bytes
    /// [`Self::blocks_range`] gives for them. The blocks read are checked as
    /// in [`Self::decode_all`] (padding, canonical frame, no u32 overflow);
    /// the bases are taken as stored (checked only by `decode_all`).
    pub fn get_pair_from_blocks(
        &self,
        blocks: &[u8],
        i: usize,
        what: &'static str,
        section: Section,
        at: u64,
    ) -> Result<(u32, u32)> {
        let ks = self.blocks_of_pair(i);
        let start = self.blocks_range(ks.clone()).start;
        let mut vals = [0u64; 2];
        for (n, idx) in [i, i + 1].into_iter().enumerate() {
            if idx == 0 {
                vals[n] = self.first as u64;
                continue;
            }
            let (k, j) = ((idx - 1) / CASCADE_BLOCK, (idx - 1) % CASCADE_BLOCK);
            let e = self.dir[k];
            let r = self.blocks_range(k..k + 1);
            let (a, b) = (r.start - start, r.end - start);
            let src = blocks.get(a..b).ok_or_else(|| {
                Error::corrupt(
                    section,
                    at,
                    Invariant::LengthPastEnd {
                        what: "packed blocks",
                        end: at + b as u64,
                        available: at + blocks.len() as u64,
                    },
                )
            })?;
            let mut buf = [0u32; CASCADE_BLOCK];
            BitPacker4x::new().decompress(src, &mut buf, e.bits);
            self.check_block(k, &buf, section, at)?;
            let sum: u64 = buf[..=j].iter().map(|&r| r as u64).sum();
            let v = e.base as u64 + e.min as u64 * (j as u64 + 1) + sum;
            if v > u32::MAX as u64 {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::LimitExceeded {
                        what,
                        value: v,
                        limit: u32::MAX as u64,
                    },
                ));
            }
            vals[n] = v;
        }
        Ok((vals[0] as u32, vals[1] as u32))
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
        let mut values = Vec::new();
        self.decode_into(bytes, what, section, at, &mut values)?;
        Ok(values)
    }

    /// [`Self::decode_all`] into `values` (cleared first; its capacity is
    /// reused, so a caller decoding many sequences allocates once).
    pub fn decode_into(
        &self,
        bytes: &[u8],
        what: &'static str,
        section: Section,
        at: u64,
        values: &mut Vec<u32>,
    ) -> Result<()> {
        values.clear();
        values.reserve(self.len);
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
                    Invariant::SequenceBase {
                        block: k as u64,
                        expected: cur,
                        found: e.base as u64,
                    },
                ));
            }
            self.unpack(bytes, k, &mut buf);
            self.check_block(k, &buf, section, at)?;
            let in_block = (deltas - k * CASCADE_BLOCK).min(CASCADE_BLOCK);
            let used = &buf[..in_block];
            // The block's end fits u32 (values only grow): its prefix sum
            // without a branch per value. Else value by value, which
            // reports where it overflows.
            let total =
                used.iter().map(|&r| r as u64).sum::<u64>() + e.min as u64 * in_block as u64;
            if cur + total <= u32::MAX as u64 {
                let (mut c, min) = (cur as u32, e.min);
                values.extend(used.iter().map(|&r| {
                    c += min + r;
                    c
                }));
                cur = c as u64;
                continue;
            }
            for &r in used {
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
        Ok(())
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
            // Into the spare capacity (no capacity check per value).
            let n = jend - j0;
            out.reserve(n);
            let at = out.len();
            for (d, &r) in out.spare_capacity_mut()[..n].iter_mut().zip(&buf[j0..jend]) {
                v = v.wrapping_add(e.min).wrapping_add(r);
                d.write(v as i64 + add);
            }
            // SAFETY: the loop initialized the `n` values after `at` (`buf`
            // holds CASCADE_BLOCK ≥ jend values, so the zip runs `n` times),
            // inside the capacity reserved above.
            unsafe { out.set_len(at + n) };
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

    /// The serial encoding, block by block over the deltas: the oracle of
    /// [`encode`]'s groups packed on all threads.
    fn encode_serially(values: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        let deltas: Vec<u32> = values.windows(2).map(|w| w[1] - w[0]).collect();
        let blocks = deltas.len().div_ceil(CASCADE_BLOCK);
        SequenceHeader {
            count: values.len() as u32,
            blocks: blocks as u32,
            first: values[0],
            reserved: 0,
        }
        .put(&mut out);
        let packer = BitPacker4x::new();
        let (mut dir, mut packed) = (Vec::new(), Vec::new());
        for (k, block) in deltas.chunks(CASCADE_BLOCK).enumerate() {
            let min = *block.iter().min().unwrap();
            let mut buf = [0u32; CASCADE_BLOCK];
            for (b, &d) in buf.iter_mut().zip(block) {
                *b = d - min;
            }
            let bits = packer.num_bits(&buf);
            let start = packed.len();
            packed.resize(start + bits as usize * CASCADE_BLOCK / 8, 0);
            packer.compress(&buf, &mut packed[start..], bits);
            BlockEntry {
                base: values[k * CASCADE_BLOCK],
                min,
                offset: start as u32,
                bits,
                reserved: [0; 3],
            }
            .put(&mut dir);
        }
        out.extend_from_slice(&dir);
        out.extend_from_slice(&packed);
        out
    }

    /// Sequences long enough to be packed in groups on all threads (row
    /// boundaries of a chunk of a few million rows), with widths changing
    /// between groups and a last block cut short: the bytes of one pass.
    #[test]
    fn long_sequences_pack_as_one_pass() {
        for n in [
            2 * ENCODE_TASK_BLOCKS * CASCADE_BLOCK + 2,
            3 * ENCODE_TASK_BLOCKS * CASCADE_BLOCK + 77,
        ] {
            let mut v = Vec::with_capacity(n);
            let mut x = 5u32;
            for i in 0..n as u64 {
                v.push(x);
                let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
                // Widths vary by group: 0..=10 bits (no overflow).
                let width = ((i / (CASCADE_BLOCK as u64 * 1000)) % 11) as u32;
                x += (h as u32) & ((1u32 << width) - 1);
            }
            let mut got = Vec::new();
            encode(&v, &mut got);
            assert!(got == encode_serially(&v), "{n} values");
            let s = Sequence::parse(&got, 0, Section::Footer).unwrap();
            assert_eq!(s.decode_all(&got, "t", Section::Footer, 0).unwrap(), v);
        }
        for v in [
            vec![7u32],
            vec![1, 2, 3],
            (0..1000u32).map(|i| i * i).collect(),
        ] {
            let mut got = Vec::new();
            encode(&v, &mut got);
            assert_eq!(got, encode_serially(&v));
        }
    }

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
            Some(Invariant::SequenceBase { block: 1, .. })
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
