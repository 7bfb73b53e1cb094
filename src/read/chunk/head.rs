//! What a point read keeps of a chunk not validated whole (its header and
//! row-code directory, read once), and the point read itself (spec/FORMAT.md
//! §9, point reads): the one dispatch on the chunk's kind for point reads,
//! and the parts every kind shares (a row's code range, its validity bit,
//! its codes).

use std::ops::Range;

use bytes::Bytes;

use super::value_dict::IndexHead;
use super::verify::BlockBits;
use super::{part, ChunkKind};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::codes;
use crate::format::kind::Part;
use crate::format::layout::ChunkHeader;
use crate::format::limits;
use crate::read::Reader;

/// What a point read needs of a chunk it has not validated whole: the header
/// (where the parts lie) and the row code boundaries' block directory.
#[derive(Debug)]
pub(in crate::read) struct ChunkHead {
    pub(super) header: ChunkHeader,
    row_codes: Sequence,
    /// What the chunk's kind adds.
    kind: HeadKind,
    /// The whole row-code part and validity bitmap, where the storage
    /// prefers whole parts ([`crate::read::Storage::whole_parts`]).
    pub(super) row_codes_bytes: Option<Bytes>,
    pub(super) validity: Option<Bytes>,
    /// Which checksum blocks point reads have verified (version 4, §5.7).
    pub(super) bits: BlockBits,
}

/// A chunk kind's part of a [`ChunkHead`].
#[derive(Debug)]
enum HeadKind {
    Coded,
    /// The value index's head (§5.6).
    ValueDict(IndexHead),
}

impl Reader {
    /// The header and row-code directory of chunk `i`, read once.
    fn head(&self, i: usize) -> Result<&ChunkHead> {
        if let Some(h) = self.slots[i].head.get() {
            return Ok(h);
        }
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let r = entry.section;
        let dict = self.dictionary(entry.dict as usize)?;
        let want = crate::format::layout::max_header_len(self.version) as u64;
        let hb = self.storage.read(r.offset..r.offset + want.min(r.len))?;
        let header = ChunkHeader::parse(
            &hb,
            r.offset,
            id,
            &entry,
            dict.code_bits(),
            r.len,
            self.version,
        )?;
        let parts = header.parts();
        let part = parts[part::ROW_CODES].clone();
        let at = r.offset + part.start as u64;
        // The directory is read whole: one read-ahead instead of a fault per page.
        let head_len = Sequence::head_len(entry.rows as usize + 1).min(part.len());
        self.storage.will_need(at..at + head_len as u64);
        let bits = BlockBits::new(&header);
        let (sb, row_codes_bytes, validity) = if self.storage.whole_parts() {
            // One request for the row codes and the validity bitmap.
            let abs = |p: &Range<usize>| r.offset + p.start as u64..r.offset + p.end as u64;
            let mut want = vec![abs(&part)];
            if header.has_validity {
                want.push(abs(&parts[part::VALIDITY]));
            }
            let mut got = self.storage.read_ranges(&want)?.into_iter();
            let rc = got.next().expect("one per range");
            let sb =
                self.read_checked(i, &header, &bits, Some(&rc), Part::RowCodes, 0..head_len)?;
            (sb, Some(rc), got.next())
        } else {
            let sb = self.read_checked(i, &header, &bits, None, Part::RowCodes, 0..head_len)?;
            (sb, None, None)
        };
        let section = Section::Chunk(id, ChunkPart::RowCodes);
        let row_codes = Sequence::parse_head(&sb, part.len(), at, section)?;
        // (The header's kind agrees with the entry: `ChunkHeader::parse`.)
        let kind = header.kind;
        let seq_rows = kind.code_rows(&entry);
        if row_codes.len() != seq_rows + 1 {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::SequenceLength {
                    expected: seq_rows as u64 + 1,
                    found: row_codes.len() as u64,
                },
            ));
        }
        // The kind's own head: the one dispatch of building a head.
        let kind = match kind {
            ChunkKind::Coded => HeadKind::Coded,
            // `point_read` validates a log-template chunk whole instead.
            ChunkKind::LogTemplates => unreachable!("no head for log templates"),
            ChunkKind::ValueDict => HeadKind::ValueDict(self.value_index_head(i, &header)?),
        };
        let slot = &self.slots[i].head;
        let _ = slot.set(ChunkHead {
            header,
            row_codes,
            kind,
            row_codes_bytes,
            validity,
            bits,
        });
        Ok(slot.get().expect("just set"))
    }

    /// Row `r` of chunk `i` without validating the chunk whole: reads the
    /// header, the row-code block(s) of the row, its validity byte and its
    /// codes, and checks each (codes below the token count, boundaries
    /// inside the chunk, blocks canonical, the value within the size limit).
    pub(in crate::read) fn point_read(
        &self,
        i: usize,
        r: usize,
        out: &mut Vec<u8>,
    ) -> Result<bool> {
        // A log-template chunk is opened whole (its templates' static text
        // is decoded once), then every get is O(1) (§5.8).
        if ChunkKind::of(&self.footer.chunks[i]) == ChunkKind::LogTemplates {
            let c = self.valid_chunk(i)?;
            return Ok(self.get_valid(c, r, out));
        }
        let head = self.head(i)?;
        // The row's code range: the one dispatch on the kind for point reads.
        let range = match &head.kind {
            HeadKind::Coded => self.coded_row(i, head, r)?,
            HeadKind::ValueDict(ix) => self.value_dict_row(i, head, ix, r)?,
        };
        match range {
            None => Ok(false),
            Some(range) => {
                self.read_codes(i, head, range, out)?;
                Ok(true)
            }
        }
    }

    /// Entries `r` and `r + 1` of chunk `i`'s row code boundaries (a
    /// sequence of `seq_rows + 1`), read from the block(s) holding them and
    /// checked: the first 0, the last the code count, in order and inside
    /// the chunk.
    pub(super) fn row_code_pair(
        &self,
        i: usize,
        head: &ChunkHead,
        r: usize,
        seq_rows: usize,
    ) -> Result<(usize, usize)> {
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let base = entry.section.offset;
        let parts = head.header.parts();
        // Row code boundaries r and r + 1.
        let seq = &head.row_codes;
        let rc_at = base + parts[part::ROW_CODES].start as u64;
        let rc_section = Section::Chunk(id, ChunkPart::RowCodes);
        let blocks = seq.blocks_range(seq.blocks_of_pair(r));
        let bb = self.read_checked(
            i,
            &head.header,
            &head.bits,
            head.row_codes_bytes.as_ref(),
            Part::RowCodes,
            blocks,
        )?;
        let (a, b) = seq.get_pair_from_blocks(&bb, r, "row code boundaries", rc_section, rc_at)?;
        if r == 0 && a != 0 {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::SequenceFirst { found: a as u64 },
            ));
        }
        if r + 1 == seq_rows && b != entry.codes {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::SequenceLast {
                    expected: entry.codes as u64,
                    found: b as u64,
                },
            ));
        }
        if a > b || b > entry.codes {
            return Err(Error::corrupt(
                rc_section,
                rc_at,
                Invariant::RowCodesPastEnd {
                    row: r as u64,
                    end: b.max(a) as u64,
                    codes: entry.codes as u64,
                },
            ));
        }
        Ok((a as usize, b as usize))
    }

    /// Whether row `r` of chunk `i` (which has a validity bitmap) is valid:
    /// its bit, from the kept bitmap or one byte read.
    pub(super) fn row_valid_bit(&self, i: usize, head: &ChunkHead, r: usize) -> Result<bool> {
        let byte = self.read_checked(
            i,
            &head.header,
            &head.bits,
            head.validity.as_ref(),
            Part::Validity,
            r / 8..r / 8 + 1,
        )?[0];
        Ok(byte >> (r % 8) & 1 == 1)
    }

    /// Appends the tokens of codes `range` of chunk `i` (whose head is `head`) to `out`, reading
    /// only those codes and checking each below the token count and their
    /// total length within `MAX_VALUE_LEN` before anything is allocated.
    fn read_codes(
        &self,
        i: usize,
        head: &ChunkHead,
        range: Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let (a, b) = (range.start, range.end);
        let id = i as u32;
        let entry = self.footer.chunks[i];
        let base = entry.section.offset;
        let dict = self.dictionary(entry.dict as usize)?;
        let parts = head.header.parts();
        if a == b {
            return Ok(());
        }
        // The codes of the row: whole 3-byte pairs for 12-bit codes.
        let bits = dict.code_bits();
        let (lo, hi, skip) = if bits == 12 {
            (a / 2 * 3, b.div_ceil(2) * 3, a % 2)
        } else {
            (2 * a, 2 * b, 0)
        };
        let codes_at = base + parts[part::CODES].start as u64;
        let cb = self.read_checked(i, &head.header, &head.bits, None, Part::Codes, lo..hi)?;
        let n = b - a;
        let mut buf = [0u16; 256];
        let tokens = dict.num_tokens();
        let mut len = 0u64;
        // First pass: check codes, sum lengths (bounded before any allocation).
        let mut k = 0;
        while k < n {
            let m = (n - k).min(buf.len());
            codes::unpack(bits, &cb, skip + k, &mut buf[..m]);
            for (j, &c) in buf[..m].iter().enumerate() {
                if c as u32 >= tokens {
                    let index = (a + k + j) as u64;
                    return Err(Error::corrupt(
                        Section::Chunk(id, ChunkPart::Codes),
                        codes_at + index * bits as u64 / 8,
                        Invariant::CodeOutOfRange {
                            index,
                            code: c as u32,
                            tokens,
                        },
                    ));
                }
                len += dict.token_len(c as usize) as u64;
            }
            k += m;
        }
        if len > limits::MAX_VALUE_LEN {
            return Err(Error::corrupt(
                Section::Chunk(id, ChunkPart::Codes),
                codes_at + lo as u64,
                Invariant::LimitExceeded {
                    what: "value length",
                    value: len,
                    limit: limits::MAX_VALUE_LEN,
                },
            ));
        }
        out.reserve(len as usize);
        let mut k = 0;
        while k < n {
            let m = (n - k).min(buf.len());
            codes::unpack(bits, &cb, skip + k, &mut buf[..m]);
            for &c in &buf[..m] {
                // Stored planes are read where they lie (§4.5); a
                // front-coded dictionary through its table.
                let (word, l) = dict.word(c as usize);
                out.extend_from_slice(&word[..l]);
            }
            k += m;
        }
        Ok(())
    }
}
