//! The per-chunk checksum table of version 4 (spec/FORMAT.md §5.7): one
//! CRC32 per block of each part, so that a point read verifies exactly the
//! blocks it reads and a bulk read every block. A part is cut into blocks of
//! [`CODE_BLOCK`] codes (the codes part) or [`BYTE_BLOCK`] bytes (every
//! other part), counted from the part's first byte; the last block of a part
//! may be shorter; a part of length 0 has no block. The table holds the
//! blocks' CRC32s, part by part in the order of the parts table, block by
//! block. Measured design: bench/CHECKSUMS.md.

use std::ops::Range;

use super::kind::{Part, PART_SLOTS};
use crate::error::{Error, Invariant, Result, Section};

/// Codes per checksum block of the codes part (§5.7): 1,536 bytes of 12-bit
/// codes, 2,048 of 16-bit ones.
pub const CODE_BLOCK: usize = 1024;
/// Bytes per checksum block of every other part (§5.7).
pub const BYTE_BLOCK: usize = 4096;

/// Bytes per checksum block of `part` in a chunk of `code_bits`-bit codes.
pub fn block_len(part: Part, code_bits: u8) -> usize {
    match part {
        Part::Codes => CODE_BLOCK * code_bits as usize / 8,
        _ => BYTE_BLOCK,
    }
}

/// Where each part's checksums lie in a chunk's table (§5.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SumLayout {
    /// Per part slot: the index of its first block's entry.
    first: [u32; PART_SLOTS],
    /// Per part slot: its block length (0 for a part the chunk lacks).
    block: [u32; PART_SLOTS],
    /// Per part slot: its number of blocks.
    count: [u32; PART_SLOTS],
    /// Entries in the table.
    entries: u64,
}

impl SumLayout {
    /// The table of a chunk whose checksummed parts (every part but the
    /// table) have lengths `parts`, in table order, with `code_bits`-bit codes.
    pub fn new(parts: impl IntoIterator<Item = (Part, usize)>, code_bits: u8) -> Self {
        let mut s = Self {
            first: [0; PART_SLOTS],
            block: [0; PART_SLOTS],
            count: [0; PART_SLOTS],
            entries: 0,
        };
        for (p, len) in parts {
            debug_assert!(p != Part::Checksums);
            let b = block_len(p, code_bits);
            let n = len.div_ceil(b) as u64;
            s.first[p.slot()] = s.entries as u32;
            s.block[p.slot()] = b as u32;
            s.count[p.slot()] = n as u32;
            s.entries += n;
        }
        s
    }

    /// The table's length in bytes: four per block.
    pub fn table_len(&self) -> u64 {
        4 * self.entries
    }

    /// Entries in the table.
    pub fn entries(&self) -> usize {
        self.entries as usize
    }

    /// The block length of `part`.
    pub fn block_len(&self, part: Part) -> usize {
        self.block[part.slot()] as usize
    }

    /// The blocks of `part` that hold its bytes `range` (relative to the
    /// part; empty for an empty range).
    pub fn blocks_of(&self, part: Part, range: Range<usize>) -> Range<usize> {
        let b = self.block_len(part).max(1);
        if range.is_empty() {
            return 0..0;
        }
        range.start / b..range.end.div_ceil(b)
    }

    /// The table entry of block `block` of `part`.
    pub fn entry(&self, part: Part, block: usize) -> usize {
        self.first[part.slot()] as usize + block
    }

    /// The blocks of `part`.
    pub fn blocks(&self, part: Part) -> usize {
        self.count[part.slot()] as usize
    }
}

/// Appends the checksum table of `parts` (every part but the table, in
/// table order, as stored, unpadded) to `out`.
pub fn write_table(parts: &[(Part, &[u8])], code_bits: u8, out: &mut Vec<u8>) {
    use rayon::prelude::*;
    for &(p, bytes) in parts {
        let block = block_len(p, code_bits);
        if bytes.len() < PARALLEL_SUM_BYTES {
            for b in bytes.chunks(block) {
                out.extend_from_slice(&crc32fast::hash(b).to_le_bytes());
            }
            continue;
        }
        // A large part's blocks on all threads, each into its own entry:
        // the same table (a chunk's 16 MB of codes summed on one thread
        // held every thread of `fastpair compress` waiting on it).
        let at = out.len();
        out.resize(at + 4 * bytes.len().div_ceil(block), 0);
        out[at..]
            .par_chunks_mut(4)
            .zip(bytes.par_chunks(block))
            .for_each(|(e, b)| e.copy_from_slice(&crc32fast::hash(b).to_le_bytes()));
    }
}

/// Parts at least this long have their blocks summed on all threads.
const PARALLEL_SUM_BYTES: usize = 1 << 20;

/// The recorded CRC32 of entry `k` of `table`.
pub fn recorded(table: &[u8], k: usize) -> u32 {
    u32::from_le_bytes(table[4 * k..4 * k + 4].try_into().expect("4 bytes"))
}

/// Checks block `block` of `part`, whose bytes are `bytes` (at file offset
/// `at`), against the CRC32 `want` recorded for it (§5.7).
pub fn check_block(bytes: &[u8], want: u32, section: Section, at: u64) -> Result<()> {
    let crc = crc32fast::hash(bytes);
    if crc != want {
        return Err(Error::corrupt(
            section,
            at,
            Invariant::ChecksumMismatch {
                recorded: want,
                computed: crc,
            },
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_entries() {
        let s = SumLayout::new(
            [
                (Part::Codes, 1536 * 2 + 3),
                (Part::Sidecar, 0),
                (Part::RowCodes, 4096),
                (Part::Validity, 4097),
            ],
            12,
        );
        assert_eq!(s.entries(), 3 + 1 + 2);
        assert_eq!(s.table_len(), 24);
        assert_eq!(s.blocks_of(Part::Codes, 1535..1537), 0..2);
        assert_eq!(s.blocks_of(Part::Codes, 5..5), 0..0);
        assert_eq!(s.entry(Part::RowCodes, 0), 3);
        assert_eq!(s.entry(Part::Validity, 1), 5);
        assert_eq!(block_len(Part::Codes, 16), 2048);
        let mut t = Vec::new();
        write_table(
            &[(Part::Codes, &[1, 2, 3]), (Part::Sidecar, &[])],
            12,
            &mut t,
        );
        assert_eq!(recorded(&t, 0), crc32fast::hash(&[1, 2, 3]));
        assert_eq!(t.len(), 4);
    }

    /// Parts summed on all threads (1 MiB and longer) give the table that
    /// summing each block in turn gives, entry for entry, whatever the
    /// part's length against its block.
    #[test]
    fn large_parts_summed_in_parallel_give_the_same_table() {
        let bytes: Vec<u8> = (0..(3u32 << 20) + 4099)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for bits in [12u8, 16] {
            for len in [
                PARALLEL_SUM_BYTES - 1,
                PARALLEL_SUM_BYTES,
                PARALLEL_SUM_BYTES + 1,
                3 << 20,
                bytes.len(),
            ] {
                let parts = [
                    (Part::Codes, &bytes[..len]),
                    (Part::Sidecar, &bytes[..100]),
                    (Part::RowBytes, &bytes[7..len]),
                ];
                let mut t = Vec::new();
                write_table(&parts, bits, &mut t);
                let mut want = Vec::new();
                for (p, b) in parts {
                    for block in b.chunks(block_len(p, bits)) {
                        want.extend_from_slice(&crc32fast::hash(block).to_le_bytes());
                    }
                }
                assert_eq!(t, want, "bits {bits}, part of {len} bytes");
            }
        }
    }
}
