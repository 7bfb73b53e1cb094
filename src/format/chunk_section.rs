//! The chunk section (spec/FORMAT.md §5): a fixed header, then the parts
//! (codes, sidecar, row boundaries, validity, value index), each padded to 16.

use binrw::binrw;

use super::footer::ChunkEntry;
use super::wire::{end_of, pad_from, start_of, Cursor, Fixed};
use super::*;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};

/// The chunk header as stored (§5.1); [`ChunkHeader::parse`] checks it.
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkHeaderFields {
    /// `G`, the sidecar batch size in codes.
    pub batch: u32,
    /// Flags: [`CHUNK_FLAG_VALIDITY`], [`CHUNK_FLAG_VALUE_DICT`].
    pub flags: u32,
    /// Length of the codes part.
    pub codes_len: u32,
    /// Length of the sidecar part.
    pub sidecar_len: u32,
    /// Length of the row-codes part.
    pub row_codes_len: u32,
    /// Length of the row-bytes part.
    pub row_bytes_len: u32,
    /// Length of the validity part.
    pub validity_len: u32,
    /// Length of the value-index part (value-dictionary chunks), else zero.
    pub value_index_len: u32,
}

impl Fixed for ChunkHeaderFields {
    const LEN: usize = CHUNK_HEADER_LEN;
}

/// Flag bit: the chunk has a validity bitmap (§5).
pub const CHUNK_FLAG_VALIDITY: u32 = 1;
/// Flag bit: the chunk is a value-dictionary chunk (§5.6, version 2).
pub const CHUNK_FLAG_VALUE_DICT: u32 = 2;

/// A chunk section's parts (§5), located and size-checked.
#[derive(Clone, Debug)]
pub struct ChunkSection<'a> {
    /// Sidecar batch size `G` in codes.
    pub batch: u32,
    /// Packed codes.
    pub codes: &'a [u8],
    /// Cascaded sidecar bytes, and their file offset.
    pub sidecar: (&'a [u8], u64),
    /// Cascaded row code boundaries, and their file offset (of the distinct
    /// values in a value-dictionary chunk).
    pub row_codes: (&'a [u8], u64),
    /// Cascaded row byte boundaries, and their file offset (of the distinct
    /// values in a value-dictionary chunk).
    pub row_bytes: (&'a [u8], u64),
    /// Validity bitmap (LSB first, 1 = valid), if present.
    pub validity: Option<&'a [u8]>,
    /// Cascaded running sum of the rows' value indices, and its file offset
    /// (value-dictionary chunks only, §5.6).
    pub value_index: Option<(&'a [u8], u64)>,
}

impl<'a> ChunkSection<'a> {
    /// Serializes a chunk section from already encoded parts.
    pub fn write(
        batch: u32,
        codes: &[u8],
        sidecar: &[u8],
        row_codes: &[u8],
        row_bytes: &[u8],
        validity: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) {
        Self::write_parts(
            batch, codes, sidecar, row_codes, row_bytes, validity, None, out,
        )
    }

    /// Serializes a chunk section from already encoded parts; `value_index`
    /// makes it a value-dictionary chunk (§5.6), whose codes and boundaries
    /// are those of its distinct values.
    #[allow(clippy::too_many_arguments)]
    pub fn write_parts(
        batch: u32,
        codes: &[u8],
        sidecar: &[u8],
        row_codes: &[u8],
        row_bytes: &[u8],
        validity: Option<&[u8]>,
        value_index: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) {
        let start = out.len();
        let mut flags = 0;
        if validity.is_some() {
            flags |= CHUNK_FLAG_VALIDITY;
        }
        if value_index.is_some() {
            flags |= CHUNK_FLAG_VALUE_DICT;
        }
        let parts = [
            codes,
            sidecar,
            row_codes,
            row_bytes,
            validity.unwrap_or(&[]),
            value_index.unwrap_or(&[]),
        ];
        let [codes_len, sidecar_len, row_codes_len, row_bytes_len, validity_len, value_index_len] =
            parts.map(|p| p.len() as u32);
        let header = ChunkHeaderFields {
            batch,
            flags,
            codes_len,
            sidecar_len,
            row_codes_len,
            row_bytes_len,
            validity_len,
            value_index_len,
        };
        header.put(out);
        for part in parts {
            out.extend_from_slice(part);
            pad_from(out, start);
        }
    }

    /// Parses a chunk section (`bytes` is exactly the section, at `base`) of
    /// the chunk described by `entry` whose dictionary has `code_bits`.
    pub fn parse(
        bytes: &'a [u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
    ) -> Result<Self> {
        let h = ChunkHeader::parse(bytes, base, id, entry, code_bits, bytes.len() as u64)?;
        // Padding after each part must be zero (the header check placed them).
        let section = Section::Chunk(id, ChunkPart::Header);
        let parts = h.parts();
        for (k, r) in parts.iter().enumerate() {
            let pad_end = parts.get(k + 1).map_or(bytes.len(), |n| n.start);
            let pad = &bytes[r.end..pad_end];
            if let Some(p) = pad.iter().position(|&b| b != 0) {
                return Err(Error::corrupt(
                    section,
                    base + (r.end + p) as u64,
                    Invariant::NonZeroReserved {
                        what: "chunk part padding",
                    },
                ));
            }
        }
        let at = |k: usize| (&bytes[parts[k].clone()], base + parts[k].start as u64);
        Ok(Self {
            batch: h.batch,
            codes: at(0).0,
            sidecar: at(1),
            row_codes: at(2),
            row_bytes: at(3),
            validity: h.has_validity.then(|| at(4).0),
            value_index: h.value_dict.then(|| at(5)),
        })
    }
}

/// A chunk section's fixed header (§5.1), checked against its footer entry:
/// where each part lies, without reading the parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Sidecar batch size `G` in codes.
    pub batch: u32,
    /// The validity bitmap is present.
    pub has_validity: bool,
    /// A value-dictionary chunk (§5.6).
    pub value_dict: bool,
    /// Part lengths: codes, sidecar, row code boundaries, row byte
    /// boundaries, validity, value indices (0 unless `value_dict`).
    pub lens: [u32; 6],
}

impl ChunkHeader {
    /// Parses the header from the first [`CHUNK_HEADER_LEN`] bytes of
    /// `bytes` (a prefix of the section, at `base`) of chunk `id`, whose
    /// footer entry is `entry`, dictionary width `code_bits` and section
    /// length `section_len`. Checks `G`, flags, reserved bytes, the codes and
    /// validity lengths against the entry, the validity flag against the null
    /// count both ways, and that the parts, each padded to 16 bytes, fill the
    /// section exactly.
    pub fn parse(
        bytes: &[u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        section_len: u64,
    ) -> Result<Self> {
        let section = Section::Chunk(id, ChunkPart::Header);
        let head = &bytes[..bytes.len().min(CHUNK_HEADER_LEN)];
        let mut c = Cursor::new(head, base, section);
        if (section_len as usize) < CHUNK_HEADER_LEN {
            return Err(c.error(Invariant::LengthPastEnd {
                what: "chunk header",
                end: base + CHUNK_HEADER_LEN as u64,
                available: base + section_len,
            }));
        }
        let f: ChunkHeaderFields = c.fixed("chunk header")?;
        let batch = f.batch;
        if !batch.is_power_of_two() || !(limits::MIN_BATCH..=limits::MAX_BATCH).contains(&batch) {
            return Err(Error::corrupt(
                section,
                base + end_of!(ChunkHeaderFields, batch),
                Invariant::BadField {
                    what: "batch size",
                    value: batch as u64,
                },
            ));
        }
        let flags = f.flags;
        // The value-dictionary flag is set iff the footer entry counts
        // distinct values (always 0 in version 1, so the flag is refused there).
        if flags & !(CHUNK_FLAG_VALIDITY | CHUNK_FLAG_VALUE_DICT) != 0
            || (flags & CHUNK_FLAG_VALUE_DICT != 0) != (entry.values > 0)
        {
            return Err(Error::corrupt(
                section,
                base + end_of!(ChunkHeaderFields, flags),
                Invariant::BadField {
                    what: "chunk flags",
                    value: flags as u64,
                },
            ));
        }
        let value_dict = flags & CHUNK_FLAG_VALUE_DICT != 0;
        if !value_dict && f.value_index_len != 0 {
            return Err(Error::corrupt(
                section,
                base + start_of!(ChunkHeaderFields, value_index_len),
                Invariant::NonZeroReserved {
                    what: "chunk header reserved",
                },
            ));
        }
        let ChunkHeaderFields {
            codes_len,
            sidecar_len,
            row_codes_len,
            row_bytes_len,
            validity_len,
            value_index_len: index_len,
            ..
        } = f;
        let want_codes = codes::packed_len(code_bits, entry.codes as usize);
        if codes_len as usize != want_codes {
            return Err(c.error(Invariant::SizeMismatch {
                what: "codes",
                expected: want_codes as u64,
                found: codes_len as u64,
            }));
        }
        let has_validity = flags & CHUNK_FLAG_VALIDITY != 0;
        let want_validity = if has_validity {
            (entry.rows as usize).div_ceil(8)
        } else {
            0
        };
        if validity_len as usize != want_validity {
            return Err(c.error(Invariant::SizeMismatch {
                what: "validity bitmap",
                expected: want_validity as u64,
                found: validity_len as u64,
            }));
        }
        if !has_validity && entry.nulls != 0 {
            return Err(c.error(Invariant::NullsWithoutValidity {
                nulls: entry.nulls as u64,
            }));
        }
        if has_validity && entry.nulls == 0 {
            return Err(c.error(Invariant::ValidityWithoutNulls));
        }
        let h = Self {
            batch,
            has_validity,
            value_dict,
            lens: [
                codes_len,
                sidecar_len,
                row_codes_len,
                row_bytes_len,
                validity_len,
                index_len,
            ],
        };
        let names = [
            "codes",
            "sidecar",
            "row code boundaries",
            "row byte boundaries",
            "validity bitmap",
            "value indices",
        ];
        let mut at = CHUNK_HEADER_LEN as u64;
        for (len, what) in h.lens.iter().zip(names) {
            let end = at + *len as u64;
            if end > section_len {
                return Err(c.error(Invariant::LengthPastEnd {
                    what,
                    end: base + end,
                    available: base + section_len,
                }));
            }
            at = end.next_multiple_of(SECTION_ALIGN as u64);
        }
        if at != section_len {
            return Err(c.error(Invariant::SizeMismatch {
                what: "chunk section",
                expected: at,
                found: section_len,
            }));
        }
        Ok(h)
    }

    /// Byte ranges of the six parts within the section (codes, sidecar,
    /// row code boundaries, row byte boundaries, validity, value indices).
    pub fn parts(&self) -> [std::ops::Range<usize>; 6] {
        let mut at = CHUNK_HEADER_LEN;
        self.lens.map(|len| {
            let r = at..at + len as usize;
            at = align16(r.end);
            r
        })
    }
}
