//! What a point read reads of a version-4 chunk, verified (spec/FORMAT.md
//! §5.7, §9 point reads): the checksum blocks that hold the bytes it reads,
//! each checked against the chunk's checksum table the first time a point
//! read touches it and then remembered with one bit, so a warm point read
//! tests a bit per part instead of hashing. Versions 1–3 have no table:
//! their bytes are read as they are (their chunk CRC32 is checked when the
//! chunk is validated whole).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

use crate::error::{Result, Section};
use crate::format::checksum;
use crate::format::kind::Part;
use crate::format::layout::ChunkHeader;
use crate::read::Reader;

/// One bit per checksum block of a chunk: set once the block passed its check.
#[derive(Debug, Default)]
pub(super) struct BlockBits(Box<[AtomicU64]>);

impl BlockBits {
    /// Bits for the blocks of the chunk whose header is `header` (none
    /// without a checksum table).
    pub(super) fn new(header: &ChunkHeader) -> Self {
        let n = header.sums.as_ref().map_or(0, |s| s.entries());
        Self((0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    fn get(&self, k: usize) -> bool {
        self.0[k / 64].load(Ordering::Relaxed) >> (k % 64) & 1 == 1
    }

    fn set(&self, k: usize) {
        self.0[k / 64].fetch_or(1 << (k % 64), Ordering::Relaxed);
    }
}

impl Reader {
    /// Bytes `range` (relative to the part) of part `p` of chunk `i`, whose
    /// header is `header`: from `whole` (the whole part, where the storage
    /// prefers whole parts) or read; in version 4, every checksum block
    /// holding them checked once (§5.7) and marked in `bits`.
    pub(super) fn read_checked(
        &self,
        i: usize,
        header: &ChunkHeader,
        bits: &BlockBits,
        whole: Option<&Bytes>,
        p: Part,
        range: Range<usize>,
    ) -> Result<Bytes> {
        let entry = &self.footer.chunks[i];
        let part = header.part(p);
        let part_at = entry.section.offset + part.start as u64;
        let read = |r: Range<usize>| -> Result<Bytes> {
            match whole {
                Some(w) => Ok(w.slice(r)),
                None if r.is_empty() => Ok(Bytes::new()),
                None => self
                    .storage
                    .read(part_at + r.start as u64..part_at + r.end as u64),
            }
        };
        let Some(sums) = &header.sums else {
            return read(range);
        };
        let blocks = sums.blocks_of(p, range.clone());
        let first = sums.entry(p, blocks.start);
        if (first..first + blocks.len()).all(|k| bits.get(k)) {
            return read(range);
        }
        // Read whole blocks, and their entries of the table.
        let b = sums.block_len(p);
        let span = blocks.start * b..(blocks.end * b).min(part.len());
        let data = read(span.clone())?;
        let table = header.part(Part::Checksums);
        let t_at = entry.section.offset + (table.start + 4 * first) as u64;
        let recorded = self.storage.read(t_at..t_at + 4 * blocks.len() as u64)?;
        let section = Section::Chunk(i as u32, p.chunk_part());
        for (j, block) in data.chunks(b).enumerate() {
            let k = first + j;
            if bits.get(k) {
                continue;
            }
            let at = part_at + (span.start + j * b) as u64;
            checksum::check_block(block, checksum::recorded(&recorded, j), section, at)?;
            bits.set(k);
        }
        Ok(data.slice(range.start - span.start..range.end - span.start))
    }
}
