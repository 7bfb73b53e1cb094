//! The chunk section (spec/FORMAT.md §5): a header, then the parts (codes,
//! sidecar, row boundaries, validity, value index and, from version 4, the
//! checksum table), each padded to 16. Versions 1–3 have a fixed 32-byte
//! header (§5.1); version 4 a kind and a counted parts table (§5.0).

use std::ops::Range;

use binrw::binrw;

use super::checksum::{self, SumLayout};
use super::footer::ChunkEntry;
use super::kind::{ChunkKind, Part, MAX_PARTS, PART_SLOTS};
use super::wire::{end_of, pad_from, start_of, Cursor, Fixed};
use super::*;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};

/// The chunk header of versions 1–3 as stored (§5.1); [`ChunkHeader::parse`] checks it.
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

/// The fixed start of a version-4 chunk header (§5.0); the parts table
/// follows it.
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkFrameFields {
    /// The chunk's kind code (`kind::KIND_*`).
    pub kind: u32,
    /// `G`, the sidecar batch size in codes.
    pub batch: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// `P`, the number of entries of the parts table.
    pub parts: u32,
}

impl Fixed for ChunkFrameFields {
    const LEN: usize = CHUNK_FRAME_LEN;
}

/// One entry of a version-4 parts table (§5.0).
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartEntry {
    /// The part's tag ([`Part`]).
    pub tag: u32,
    /// The part's exact length, without its padding.
    pub len: u32,
}

impl Fixed for PartEntry {
    const LEN: usize = PART_ENTRY_LEN;
}

/// The length of a version-4 chunk header with `parts` table entries: the
/// fixed start and the table, padded to 16 (§5.0).
pub const fn frame_len(parts: u32) -> usize {
    align16(CHUNK_FRAME_LEN + PART_ENTRY_LEN * parts as usize)
}

/// The most bytes a chunk header takes in a file of `version` (what a
/// point read fetches before it knows the header's length).
pub const fn max_header_len(version: u32) -> usize {
    if version >= VERSION_4 {
        frame_len(MAX_PARTS)
    } else {
        CHUNK_HEADER_LEN
    }
}

/// The CRC32 a chunk's footer entry records (§3): of the whole section in
/// versions 1–3, of its header (the fixed start and the parts table, padded)
/// in version 4, whose parts the checksum table covers (§5.7). `None` when
/// a version-4 section is too short for the header it announces.
pub fn section_crc(version: u32, section: &[u8]) -> Option<u32> {
    if version < VERSION_4 {
        return Some(crc32fast::hash(section));
    }
    let parts = u32::from_le_bytes(section.get(12..16)?.try_into().ok()?);
    let len = CHUNK_FRAME_LEN.checked_add(PART_ENTRY_LEN.checked_mul(parts as usize)?)?;
    Some(crc32fast::hash(section.get(..align16(len))?))
}

/// A chunk's encoded parts, to be written as a section ([`ChunkSection::write`]).
#[derive(Clone, Copy, Debug)]
pub struct ChunkParts<'p> {
    /// The chunk's kind; a value dictionary has a `value_index`.
    pub kind: ChunkKind,
    /// `G`.
    pub batch: u32,
    /// The dictionary's code width (sizes the codes' checksum blocks).
    pub code_bits: u8,
    /// Packed codes (§5.2).
    pub codes: &'p [u8],
    /// Cascaded sidecar (§5.3).
    pub sidecar: &'p [u8],
    /// Cascaded row code boundaries (§5.4).
    pub row_codes: &'p [u8],
    /// Cascaded row byte boundaries (§5.4).
    pub row_bytes: &'p [u8],
    /// Validity bitmap, when the chunk has a null (§5.5).
    pub validity: Option<&'p [u8]>,
    /// Value index of a value-dictionary chunk (§5.6).
    pub value_index: Option<&'p [u8]>,
    /// Payload of a log-template chunk (§5.8).
    pub log_payload: Option<&'p [u8]>,
}

impl ChunkParts<'_> {
    /// The bytes of part `p` (empty when absent).
    fn part(&self, p: Part) -> &[u8] {
        match p {
            Part::Codes => self.codes,
            Part::Sidecar => self.sidecar,
            Part::RowCodes => self.row_codes,
            Part::RowBytes => self.row_bytes,
            Part::Validity => self.validity.unwrap_or(&[]),
            Part::ValueIndex => self.value_index.unwrap_or(&[]),
            Part::LogPayload => self.log_payload.unwrap_or(&[]),
            Part::Checksums => &[],
        }
    }
}

/// A chunk section's parts (§5), located and size-checked.
#[derive(Clone, Debug)]
pub struct ChunkSection<'a> {
    /// The chunk's kind.
    pub kind: ChunkKind,
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
    /// The value index and its file offset (value-dictionary chunks only,
    /// §5.6).
    pub value_index: Option<(&'a [u8], u64)>,
    /// The checksum table (version 4, §5.7).
    pub checksums: Option<&'a [u8]>,
    /// The payload and its file offset (log-template chunks only, §5.8).
    pub log_payload: Option<(&'a [u8], u64)>,
}

impl<'a> ChunkSection<'a> {
    /// Serializes a chunk section of format `version` from already encoded
    /// parts: the fixed header of §5.1 (versions 1–3) or the kind, parts
    /// table and checksum table of §5.0 and §5.7 (version 4).
    pub fn write(version: u32, p: &ChunkParts<'_>, out: &mut Vec<u8>) {
        debug_assert_eq!(p.value_index.is_some(), p.kind == ChunkKind::ValueDict);
        let start = out.len();
        if version < VERSION_4 {
            let mut flags = 0;
            if p.validity.is_some() {
                flags |= CHUNK_FLAG_VALIDITY;
            }
            if p.value_index.is_some() {
                flags |= CHUNK_FLAG_VALUE_DICT;
            }
            let parts = [
                Part::Codes,
                Part::Sidecar,
                Part::RowCodes,
                Part::RowBytes,
                Part::Validity,
                Part::ValueIndex,
            ]
            .map(|k| p.part(k));
            let [codes_len, sidecar_len, row_codes_len, row_bytes_len, validity_len, value_index_len] =
                parts.map(|p| p.len() as u32);
            let header = ChunkHeaderFields {
                batch: p.batch,
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
            return;
        }
        let (head, tail) = Self::write_split(version, p);
        out.reserve(head.len() + p.codes.len() + tail.len());
        out.extend_from_slice(&head);
        out.extend_from_slice(p.codes);
        out.extend_from_slice(&tail);
    }

    /// A version-4+ section (§5.0, §5.7) in two pieces: the bytes before
    /// the packed codes (frame, parts table, padding) and those after them
    /// (the codes' padding, every later part, the checksum table), so that
    /// `head`, `p.codes` and `tail` in that order are [`Self::write`]'s
    /// bytes. A writer hands a large codes buffer to its sink as it is
    /// instead of copying it into one section buffer (a 16 MB copy and
    /// its page faults a chunk, on one thread: bench/COMPRESS.md). A kind
    /// with no codes part (log templates) is all `head`.
    pub fn write_split(version: u32, p: &ChunkParts<'_>) -> (Vec<u8>, Vec<u8>) {
        debug_assert!(version >= VERSION_4);
        debug_assert_eq!(p.value_index.is_some(), p.kind == ChunkKind::ValueDict);
        let list = p.kind.parts();
        let summed: Vec<(Part, &[u8])> = list
            .iter()
            .filter(|&&k| k != Part::Checksums)
            .map(|&k| (k, p.part(k)))
            .collect();
        let mut table = Vec::new();
        checksum::write_table(&summed, p.code_bits, &mut table);
        let part = |k: Part| {
            if k == Part::Checksums {
                &table[..]
            } else {
                p.part(k)
            }
        };
        // Frame, entries and each part's padding take at most 16 bytes each
        // beyond their lengths.
        let around: usize = list
            .iter()
            .filter(|&&k| k != Part::Codes)
            .map(|&k| part(k).len())
            .sum();
        let rest = around + 16 * list.len();
        let (head_cap, tail_cap) = if list.contains(&Part::Codes) {
            (16 * (list.len() + 2), rest)
        } else {
            (16 * (list.len() + 2) + rest, 0)
        };
        let mut head = Vec::with_capacity(head_cap);
        let mut tail = Vec::with_capacity(tail_cap);
        ChunkFrameFields {
            kind: p.kind.code(),
            batch: p.batch,
            reserved: 0,
            parts: list.len() as u32,
        }
        .put(&mut head);
        for &k in list {
            PartEntry {
                tag: k.tag(),
                len: part(k).len() as u32,
            }
            .put(&mut head);
        }
        pad_from(&mut head, 0);
        // Every part padded to 16 from the section's start; the codes'
        // padding opens the tail.
        let mut in_tail = false;
        for &k in list {
            if k == Part::Codes {
                in_tail = true;
            } else if in_tail {
                tail.extend_from_slice(part(k));
            } else {
                head.extend_from_slice(part(k));
            }
            let (buf, at) = if in_tail {
                (&mut tail, head.len() + p.codes.len())
            } else {
                (&mut head, 0)
            };
            let pos = at + buf.len();
            buf.resize(buf.len() + align16(pos) - pos, 0);
        }
        (head, tail)
    }

    /// Parses a chunk section of a file of `version` (`bytes` is exactly
    /// the section, at `base`) of the chunk described by `entry` whose
    /// dictionary has `code_bits`: the header (§9 step 9, with version 4's
    /// header checksum, step 8), every checksum block (version 4, §5.7),
    /// then the padding after each part.
    pub fn parse(
        bytes: &'a [u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        version: u32,
    ) -> Result<Self> {
        Ok(Self::parse_impl(bytes, base, id, entry, code_bits, version, false)?.0)
    }

    /// [`Self::parse`], except that the checksum blocks of the codes part
    /// but its last one are left to the caller, who reads the codes anyway
    /// (the GPU's streaming scan checks them as it copies them into pinned
    /// staging, `gpu::stream::stage`). Returns where the codes' checksums
    /// lie, when the section has a checksum table and the codes have a
    /// block the caller must check: until the caller has checked every
    /// block of the codes against it, the section is not validated (no
    /// byte of the codes may be decoded or trusted).
    pub(crate) fn parse_leaving_codes(
        bytes: &'a [u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        version: u32,
    ) -> Result<(Self, Option<CodesSums>)> {
        Self::parse_impl(bytes, base, id, entry, code_bits, version, true)
    }

    fn parse_impl(
        bytes: &'a [u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        version: u32,
        leave_codes: bool,
    ) -> Result<(Self, Option<CodesSums>)> {
        let h = ChunkHeader::parse(
            bytes,
            base,
            id,
            entry,
            code_bits,
            bytes.len() as u64,
            version,
        )?;
        let parts = h.parts();
        let mut left = None;
        if let Some(sums) = &h.sums {
            // §9 step 9b: every block of every part against its CRC32 (but
            // the codes' blocks before their last when they are left to the
            // caller: the last is read by step 11's padding check).
            let table = &bytes[parts[Part::Checksums.slot()].clone()];
            for &p in h.kind.parts().iter().filter(|&&p| p != Part::Checksums) {
                let r = parts[p.slot()].clone();
                let section = Section::Chunk(id, p.chunk_part());
                let b = sums.block_len(p);
                let skip = if leave_codes && p == Part::Codes {
                    let n = sums.blocks(p);
                    if n > 1 {
                        let e = sums.entry(p, 0);
                        left = Some(CodesSums {
                            table: parts[Part::Checksums.slot()].start + 4 * e
                                ..parts[Part::Checksums.slot()].start + 4 * (e + n),
                            block: b,
                            at: base + r.start as u64,
                        });
                    }
                    n.saturating_sub(1)
                } else {
                    0
                };
                for (k, block) in bytes[r.clone()].chunks(b).enumerate().skip(skip) {
                    let at = base + (r.start + k * b) as u64;
                    let want = checksum::recorded(table, sums.entry(p, k));
                    checksum::check_block(block, want, section, at)?;
                }
            }
        }
        // Padding after each part must be zero (the header check placed them).
        let section = Section::Chunk(id, ChunkPart::Header);
        let mut order: Vec<Range<usize>> = parts.iter().filter(|r| r.end > 0).cloned().collect();
        order.sort_by_key(|r| r.start);
        order.dedup();
        for (k, r) in order.iter().enumerate() {
            let pad_end = order.get(k + 1).map_or(bytes.len(), |n| n.start);
            let pad = &bytes[r.end.min(pad_end)..pad_end];
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
        let at = |p: Part| {
            let r = parts[p.slot()].clone();
            (&bytes[r.clone()], base + r.start as u64)
        };
        let parsed = Self {
            kind: h.kind,
            batch: h.batch,
            codes: at(Part::Codes).0,
            sidecar: at(Part::Sidecar),
            row_codes: at(Part::RowCodes),
            row_bytes: at(Part::RowBytes),
            validity: h.has_validity.then(|| at(Part::Validity).0),
            value_index: h.value_dict.then(|| at(Part::ValueIndex)),
            checksums: h.sums.is_some().then(|| at(Part::Checksums).0),
            log_payload: (h.kind == ChunkKind::LogTemplates).then(|| at(Part::LogPayload)),
        };
        Ok((parsed, left))
    }
}

/// Where the checksums of a chunk's codes lie (version 4, §5.7), for a
/// caller that checks the codes' blocks itself
/// ([`ChunkSection::parse_leaving_codes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodesSums {
    /// The codes' entries in the checksum table, as a range of the
    /// section: block `k`'s CRC32 is at `table.start + 4k`.
    pub(crate) table: Range<usize>,
    /// Bytes per block of the codes ([`checksum::block_len`]).
    pub(crate) block: usize,
    /// The codes' file offset (block `k` is at `at + k · block`).
    pub(crate) at: u64,
}

/// A chunk section's header (§5.0, §5.1), checked against its footer entry:
/// where each part lies, without reading the parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    /// The chunk's kind.
    pub kind: ChunkKind,
    /// Sidecar batch size `G` in codes.
    pub batch: u32,
    /// The validity bitmap is present.
    pub has_validity: bool,
    /// A value-dictionary chunk (§5.6).
    pub value_dict: bool,
    /// Where each part lies in the section, by slot ([`Part::slot`]); an
    /// empty range (at the section's start) for a part the chunk lacks.
    ranges: [Range<usize>; PART_SLOTS],
    /// The checksum table's layout (version 4, §5.7).
    pub sums: Option<SumLayout>,
}

impl ChunkHeader {
    /// Parses the header from the first bytes of `bytes` (a prefix of the
    /// section, at `base`, of at least [`max_header_len`] bytes or the whole
    /// section) of chunk `id` of a file of `version`, whose footer entry is
    /// `entry`, dictionary width `code_bits` and section length
    /// `section_len`. Version 4 first checks the header's CRC32 against the
    /// entry (§9 step 8) and its kind and parts table (§5.0); both check
    /// `G`, reserved bytes, the codes and validity lengths against the
    /// entry, the validity against the null count both ways, and that the
    /// parts, each padded to 16 bytes, fill the section exactly.
    pub fn parse(
        bytes: &[u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        section_len: u64,
        version: u32,
    ) -> Result<Self> {
        if version >= VERSION_4 {
            return Self::parse_v4(bytes, base, id, entry, code_bits, section_len);
        }
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
        check_batch(batch, section, base + end_of!(ChunkHeaderFields, batch))?;
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
        check_codes_len(&c, codes_len, code_bits, entry)?;
        let has_validity = flags & CHUNK_FLAG_VALIDITY != 0;
        check_validity_len(&c, has_validity, validity_len, entry)?;
        let kind = if value_dict {
            ChunkKind::ValueDict
        } else {
            ChunkKind::Coded
        };
        let lens = [
            (Part::Codes, codes_len),
            (Part::Sidecar, sidecar_len),
            (Part::RowCodes, row_codes_len),
            (Part::RowBytes, row_bytes_len),
            (Part::Validity, validity_len),
            (Part::ValueIndex, index_len),
        ];
        let ranges = place_parts(&c, &lens, CHUNK_HEADER_LEN, section_len, base)?;
        Ok(Self {
            kind,
            batch,
            has_validity,
            value_dict,
            ranges,
            sums: None,
        })
    }

    /// [`Self::parse`] of a version-4 header (§5.0).
    fn parse_v4(
        bytes: &[u8],
        base: u64,
        id: u32,
        entry: &ChunkEntry,
        code_bits: u8,
        section_len: u64,
    ) -> Result<Self> {
        let section = Section::Chunk(id, ChunkPart::Header);
        let avail = bytes.len().min(section_len as usize);
        let mut c = Cursor::new(&bytes[..avail], base, section);
        if (section_len as usize) < CHUNK_FRAME_LEN {
            return Err(c.error(Invariant::LengthPastEnd {
                what: "chunk header",
                end: base + CHUNK_FRAME_LEN as u64,
                available: base + section_len,
            }));
        }
        let f: ChunkFrameFields = c.fixed("chunk header")?;
        // §9 step 8 (version 4): the part count bounds the header, whose
        // bytes the footer entry's CRC32 covers.
        if f.parts > MAX_PARTS {
            return Err(Error::corrupt(
                section,
                base + end_of!(ChunkFrameFields, parts),
                Invariant::LimitExceeded {
                    what: "chunk parts",
                    value: f.parts as u64,
                    limit: MAX_PARTS as u64,
                },
            ));
        }
        let hlen = frame_len(f.parts);
        if hlen as u64 > section_len || hlen > avail {
            return Err(c.error(Invariant::LengthPastEnd {
                what: "chunk parts table",
                end: base + hlen as u64,
                available: base + section_len,
            }));
        }
        let crc = crc32fast::hash(&bytes[..hlen]);
        if crc != entry.section.crc {
            return Err(Error::corrupt(
                section,
                base,
                Invariant::ChecksumMismatch {
                    recorded: entry.section.crc,
                    computed: crc,
                },
            ));
        }
        // §9 step 9: the kind, agreeing with the footer entry.
        let Some(kind) = ChunkKind::from_code(f.kind) else {
            return Err(Error::corrupt(
                section,
                base,
                Invariant::UnknownChunkKind { kind: f.kind },
            ));
        };
        if kind != ChunkKind::of(entry) {
            return Err(Error::corrupt(
                section,
                base + end_of!(ChunkFrameFields, kind),
                Invariant::BadField {
                    what: "chunk kind",
                    value: f.kind as u64,
                },
            ));
        }
        check_batch(f.batch, section, base + end_of!(ChunkFrameFields, batch))?;
        if f.reserved != 0 {
            return Err(Error::corrupt(
                section,
                base + start_of!(ChunkFrameFields, reserved),
                Invariant::NonZeroReserved {
                    what: "chunk header reserved",
                },
            ));
        }
        let list = kind.parts();
        if f.parts as usize != list.len() {
            return Err(Error::corrupt(
                section,
                base + end_of!(ChunkFrameFields, parts),
                Invariant::BadField {
                    what: "chunk part count",
                    value: f.parts as u64,
                },
            ));
        }
        let mut lens = Vec::with_capacity(list.len());
        for &want in list {
            let e: PartEntry = c.fixed("chunk parts table")?;
            if e.tag != want.tag() {
                return Err(c.error(Invariant::BadField {
                    what: "chunk part kind",
                    value: e.tag as u64,
                }));
            }
            lens.push((want, e.len));
        }
        let pad_at = CHUNK_FRAME_LEN + PART_ENTRY_LEN * list.len();
        if let Some(p) = bytes[pad_at..hlen].iter().position(|&b| b != 0) {
            return Err(Error::corrupt(
                section,
                base + (pad_at + p) as u64,
                Invariant::NonZeroReserved {
                    what: "chunk header padding",
                },
            ));
        }
        let len_of = |p: Part| lens.iter().find(|l| l.0 == p).map_or(0, |l| l.1);
        check_codes_len(&c, len_of(Part::Codes), code_bits, entry)?;
        // Validity present iff the chunk has a null: length 0 is absent.
        let validity_len = len_of(Part::Validity);
        check_validity_len(&c, validity_len > 0, validity_len, entry)?;
        let sums = SumLayout::new(
            lens.iter()
                .filter(|l| l.0 != Part::Checksums)
                .map(|&(p, l)| (p, l as usize)),
            code_bits,
        );
        let table_len = len_of(Part::Checksums) as u64;
        if table_len != sums.table_len() {
            return Err(c.error(Invariant::SizeMismatch {
                what: "checksum table",
                expected: sums.table_len(),
                found: table_len,
            }));
        }
        let ranges = place_parts(&c, &lens, hlen, section_len, base)?;
        Ok(Self {
            kind,
            batch: f.batch,
            has_validity: validity_len > 0,
            value_dict: kind == ChunkKind::ValueDict,
            ranges,
            sums: Some(sums),
        })
    }

    /// Byte ranges of the parts within the section, by slot
    /// ([`Part::slot`]: codes, sidecar, row code boundaries, row byte
    /// boundaries, validity, value indices, checksum table); a part the
    /// chunk lacks is an empty range.
    pub fn parts(&self) -> [Range<usize>; PART_SLOTS] {
        self.ranges.clone()
    }

    /// Byte range of part `p` within the section.
    pub fn part(&self, p: Part) -> Range<usize> {
        self.ranges[p.slot()].clone()
    }
}

/// `G`: a power of two in `MIN_BATCH..=MAX_BATCH` (§5.1).
fn check_batch(batch: u32, section: Section, at: u64) -> Result<()> {
    if !batch.is_power_of_two() || !(limits::MIN_BATCH..=limits::MAX_BATCH).contains(&batch) {
        return Err(Error::corrupt(
            section,
            at,
            Invariant::BadField {
                what: "batch size",
                value: batch as u64,
            },
        ));
    }
    Ok(())
}

/// The codes part's length against the entry's code count (§5.2).
fn check_codes_len(c: &Cursor<'_>, len: u32, code_bits: u8, entry: &ChunkEntry) -> Result<()> {
    let want = codes::packed_len(code_bits, entry.codes as usize);
    if len as usize != want {
        return Err(c.error(Invariant::SizeMismatch {
            what: "codes",
            expected: want as u64,
            found: len as u64,
        }));
    }
    Ok(())
}

/// The validity bitmap's presence and length against the entry (§5.5).
fn check_validity_len(c: &Cursor<'_>, has: bool, len: u32, entry: &ChunkEntry) -> Result<()> {
    let want = if has {
        (entry.rows as usize).div_ceil(8)
    } else {
        0
    };
    if len as usize != want {
        return Err(c.error(Invariant::SizeMismatch {
            what: "validity bitmap",
            expected: want as u64,
            found: len as u64,
        }));
    }
    if !has && entry.nulls != 0 {
        return Err(c.error(Invariant::NullsWithoutValidity {
            nulls: entry.nulls as u64,
        }));
    }
    if has && entry.nulls == 0 {
        return Err(c.error(Invariant::ValidityWithoutNulls));
    }
    Ok(())
}

/// Lays out `lens` (parts in section order, each padded to 16) from byte
/// `start` and checks that they fill the section exactly.
fn place_parts(
    c: &Cursor<'_>,
    lens: &[(Part, u32)],
    start: usize,
    section_len: u64,
    base: u64,
) -> Result<[Range<usize>; PART_SLOTS]> {
    let mut ranges: [Range<usize>; PART_SLOTS] = Default::default();
    let mut at = start as u64;
    for &(p, len) in lens {
        let end = at + len as u64;
        if end > section_len {
            return Err(c.error(Invariant::LengthPastEnd {
                what: p.name(),
                end: base + end,
                available: base + section_len,
            }));
        }
        ranges[p.slot()] = at as usize..end as usize;
        at = end.next_multiple_of(SECTION_ALIGN as u64);
    }
    if at != section_len {
        return Err(c.error(Invariant::SizeMismatch {
            what: "chunk section",
            expected: at,
            found: section_len,
        }));
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `write_split` cuts the section right before the codes: the head is
    /// the frame and parts table, padded (all a section's CRC covers), and
    /// head, codes and tail are the section, each part where its entry
    /// says; a kind without codes is all head.
    #[test]
    fn split_sections_are_the_section_cut_at_the_codes() {
        let blob: Vec<u8> = (0..5000u32).map(|i| (i * 7 + 3) as u8).collect();
        for kind in [
            ChunkKind::Coded,
            ChunkKind::ValueDict,
            ChunkKind::LogTemplates,
        ] {
            for (codes, other) in [(0, 0), (1, 17), (4099, 33), (4096, 1)] {
                let has_codes = kind != ChunkKind::LogTemplates;
                let codes = if has_codes { &blob[..codes] } else { &[][..] };
                let p = ChunkParts {
                    kind,
                    batch: 64,
                    code_bits: 12,
                    codes,
                    sidecar: if has_codes { &blob[1..1 + other] } else { &[] },
                    row_codes: if has_codes { &blob[2..2 + other] } else { &[] },
                    row_bytes: if has_codes { &blob[3..3 + other] } else { &[] },
                    validity: (other % 2 == 1).then(|| &blob[4..4 + other]),
                    value_index: (kind == ChunkKind::ValueDict).then(|| &blob[5..5 + other]),
                    log_payload: (kind == ChunkKind::LogTemplates).then(|| &blob[6..6 + other]),
                };
                let (head, tail) = ChunkSection::write_split(VERSION, &p);
                let mut whole = Vec::new();
                ChunkSection::write(VERSION, &p, &mut whole);
                assert_eq!([&head[..], codes, &tail[..]].concat(), whole);
                let n = kind.parts().len();
                let header = align16(CHUNK_FRAME_LEN + PART_ENTRY_LEN * n);
                if has_codes {
                    assert_eq!(head.len(), header, "{kind:?}");
                } else {
                    assert!(tail.is_empty());
                }
                assert_eq!(section_crc(VERSION, &head), section_crc(VERSION, &whole));
                // Each part at the next multiple of 16 after the one before.
                let mut at = header;
                for (i, &k) in kind.parts().iter().enumerate() {
                    let e = CHUNK_FRAME_LEN + PART_ENTRY_LEN * i;
                    let len = u32::from_le_bytes(whole[e + 4..e + 8].try_into().unwrap()) as usize;
                    if k != Part::Checksums {
                        assert_eq!(&whole[at..at + len], p.part(k), "{kind:?} {k:?}");
                    }
                    at = align16(at + len);
                }
                assert_eq!(at, whole.len());
            }
        }
    }
}
