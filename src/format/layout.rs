//! Footer, dictionary and chunk sections (spec/FORMAT.md §2–§5): writing them,
//! and parsing untrusted bytes into size-checked views.

use super::wire::{Cursor, PutLe};
use super::*;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};

/// The header at offset 0 (§2).
pub fn header_bytes() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// The tail at the end of the file (§2).
pub fn tail_bytes(footer_len: u32, footer_crc: u32) -> [u8; TAIL_LEN] {
    let mut t = [0u8; TAIL_LEN];
    t[0..4].copy_from_slice(&footer_len.to_le_bytes());
    t[4..8].copy_from_slice(&footer_crc.to_le_bytes());
    t[8..12].copy_from_slice(&VERSION.to_le_bytes());
    t[16..24].copy_from_slice(&MAGIC);
    t
}

/// The tail's fields (§2), after its checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tail {
    /// Length of the footer in bytes.
    pub footer_len: u32,
    /// CRC32 of the footer.
    pub footer_crc: u32,
    /// Format version (1, 2 or 3; header and tail agree).
    pub version: u32,
}

impl Tail {
    /// Checks the file's two ends, in the order of §9 steps 2–3: tail magic,
    /// header magic, both versions, reserved tail then header bytes. `header`
    /// and `tail` are the first [`HEADER_LEN`] and last [`TAIL_LEN`] bytes of
    /// a file whose tail starts at `tail_at`.
    pub fn parse(header: &[u8; HEADER_LEN], tail: &[u8; TAIL_LEN], tail_at: u64) -> Result<Self> {
        let le32 = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        if tail[16..24] != MAGIC {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + 16,
                Invariant::BadMagic,
            ));
        }
        if header[..8] != MAGIC {
            return Err(Error::corrupt(Section::Header, 0, Invariant::BadMagic));
        }
        let (version, hversion) = (le32(&tail[8..12]), le32(&header[8..12]));
        let known = |v: u32| (VERSION_1..=VERSION).contains(&v);
        if !known(version) || !known(hversion) {
            let found = if known(version) { hversion } else { version };
            return Err(Error::UnsupportedVersion {
                found,
                supported: VERSION,
            });
        }
        if version != hversion {
            return Err(Error::corrupt(
                Section::Header,
                8,
                Invariant::VersionMismatch {
                    header: hversion,
                    tail: version,
                },
            ));
        }
        if tail[12..16] != [0; 4] {
            return Err(Error::corrupt(
                Section::Tail,
                tail_at + 12,
                Invariant::NonZeroReserved {
                    what: "tail reserved",
                },
            ));
        }
        if header[12..16] != [0; 4] {
            return Err(Error::corrupt(
                Section::Header,
                12,
                Invariant::NonZeroReserved {
                    what: "header reserved",
                },
            ));
        }
        Ok(Self {
            footer_len: le32(&tail[0..4]),
            footer_crc: le32(&tail[4..8]),
            version,
        })
    }
}

/// Where a section lies and its checksum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRef {
    /// Absolute offset of the first byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// CRC32 (IEEE, `crc32fast`) of those bytes.
    pub crc: u32,
}

/// A footer chunk entry (§3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkEntry {
    /// The chunk section.
    pub section: SectionRef,
    /// Index of its dictionary.
    pub dict: u32,
    /// Rows in the chunk.
    pub rows: u32,
    /// Codes in the chunk.
    pub codes: u32,
    /// Decoded bytes in the chunk.
    pub bytes: u64,
    /// Null rows in the chunk.
    pub nulls: u32,
    /// Distinct values of a value-dictionary chunk (§5.6, version 2); 0 for
    /// a chunk that stores every row's codes (always 0 in version 1).
    pub values: u32,
}

/// The footer (§3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footer {
    /// Dictionary sections, by id.
    pub dicts: Vec<SectionRef>,
    /// Chunk sections, in row order.
    pub chunks: Vec<ChunkEntry>,
    /// Sum of the chunks' rows.
    pub total_rows: u64,
    /// Sum of the chunks' decoded bytes.
    pub total_bytes: u64,
}

impl Footer {
    /// Serializes the footer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.put_u32(self.dicts.len() as u32);
        b.put_u32(self.chunks.len() as u32);
        b.put_u64(self.total_rows);
        b.put_u64(self.total_bytes);
        b.put_u64(0);
        for d in &self.dicts {
            b.put_u64(d.offset);
            b.put_u64(d.len);
            b.put_u32(d.crc);
            b.put_u32(0);
        }
        for c in &self.chunks {
            b.put_u64(c.section.offset);
            b.put_u64(c.section.len);
            b.put_u32(c.section.crc);
            b.put_u32(c.dict);
            b.put_u32(c.rows);
            b.put_u32(c.codes);
            b.put_u64(c.bytes);
            b.put_u32(c.nulls);
            b.put_u32(c.values);
        }
        b
    }

    /// Parses the footer of a file of the current [`VERSION`]
    /// ([`Self::parse_version`]).
    pub fn parse(bytes: &[u8], base: u64) -> Result<Self> {
        Self::parse_version(bytes, base, VERSION)
    }

    /// Parses footer bytes (already checksummed) located at `base` in a file
    /// of format `version`; checks counts against limits and the bytes
    /// present, every section against the region `[HEADER_LEN, base)`,
    /// ordering, and the totals. In version 1 the entries' `values` field is
    /// reserved (zero).
    pub fn parse_version(bytes: &[u8], base: u64, version: u32) -> Result<Self> {
        let mut c = Cursor::new(bytes, base, Section::Footer);
        let num_dicts = c.u32("dictionary count")?;
        let num_chunks = c.u32("chunk count")?;
        let total_rows = c.u64("total rows")?;
        let total_bytes = c.u64("total bytes")?;
        c.zeros(8, "footer reserved")?;
        if num_chunks > limits::MAX_CHUNKS {
            return Err(c.error(Invariant::LimitExceeded {
                what: "chunk count",
                value: num_chunks as u64,
                limit: limits::MAX_CHUNKS as u64,
            }));
        }
        if num_dicts > limits::MAX_DICTS {
            return Err(c.error(Invariant::LimitExceeded {
                what: "dictionary count",
                value: num_dicts as u64,
                limit: limits::MAX_DICTS as u64,
            }));
        }
        let need = num_dicts as usize * DICT_ENTRY_LEN + num_chunks as usize * CHUNK_ENTRY_LEN;
        if need != c.remaining() {
            return Err(c.error(Invariant::SizeMismatch {
                what: "footer entries",
                expected: need as u64,
                found: c.remaining() as u64,
            }));
        }
        let region = HEADER_LEN as u64..base;
        let mut prev_end = HEADER_LEN as u64;
        let check_ref = |c: &Cursor, r: SectionRef, what: &'static str, prev_end: &mut u64| {
            if r.offset < region.start {
                // A section may not start inside the header.
                return Err(c.error(Invariant::Overlap {
                    what: "header and sections",
                }));
            }
            let end = r.offset.checked_add(r.len);
            match end {
                Some(end) if end <= region.end => {}
                _ => {
                    return Err(c.error(Invariant::LengthPastEnd {
                        what,
                        end: end.unwrap_or(u64::MAX),
                        available: region.end,
                    }))
                }
            }
            if r.offset < *prev_end {
                return Err(c.error(Invariant::Overlap { what: "sections" }));
            }
            // One spelling: sections follow the header and each other with
            // no byte between them, each a whole number of 16-byte units.
            if r.offset != *prev_end {
                return Err(c.error(Invariant::Gap {
                    expected: *prev_end,
                    found: r.offset,
                }));
            }
            if r.len % SECTION_ALIGN as u64 != 0 {
                return Err(c.error(Invariant::SizeMismatch {
                    what,
                    expected: r.len.next_multiple_of(SECTION_ALIGN as u64),
                    found: r.len,
                }));
            }
            *prev_end = r.offset + r.len;
            Ok(())
        };
        let mut chunks = Vec::with_capacity(num_chunks as usize);
        let mut dicts = Vec::with_capacity(num_dicts as usize);
        for _ in 0..num_dicts {
            let r = SectionRef {
                offset: c.u64("dictionary offset")?,
                len: c.u64("dictionary length")?,
                crc: c.u32("dictionary checksum")?,
            };
            c.zeros(4, "dictionary entry reserved")?;
            dicts.push(r);
        }
        let mut rows = 0u64;
        let mut bytes_sum = 0u64;
        for _ in 0..num_chunks {
            let at = c.offset();
            let e = ChunkEntry {
                section: SectionRef {
                    offset: c.u64("chunk offset")?,
                    len: c.u64("chunk length")?,
                    crc: c.u32("chunk checksum")?,
                },
                dict: c.u32("chunk dictionary")?,
                rows: c.u32("chunk rows")?,
                codes: c.u32("chunk codes")?,
                bytes: c.u64("chunk bytes")?,
                nulls: c.u32("chunk nulls")?,
                values: 0,
            };
            let mut e = e;
            if version == VERSION_1 {
                c.zeros(4, "chunk entry reserved")?;
            } else {
                e.values = c.u32("chunk values")?;
            }
            let err = |inv| Err(Error::corrupt(Section::Footer, at, inv));
            if e.dict >= num_dicts {
                return err(Invariant::BadDictionaryRef {
                    dict: e.dict,
                    dicts: num_dicts,
                });
            }
            if e.rows > limits::MAX_CHUNK_ROWS {
                return err(Invariant::LimitExceeded {
                    what: "chunk rows",
                    value: e.rows as u64,
                    limit: limits::MAX_CHUNK_ROWS as u64,
                });
            }
            if e.codes > limits::MAX_CHUNK_CODES {
                return err(Invariant::LimitExceeded {
                    what: "chunk codes",
                    value: e.codes as u64,
                    limit: limits::MAX_CHUNK_CODES as u64,
                });
            }
            if e.bytes > limits::MAX_CHUNK_BYTES {
                return err(Invariant::LimitExceeded {
                    what: "chunk bytes",
                    value: e.bytes,
                    limit: limits::MAX_CHUNK_BYTES,
                });
            }
            if e.nulls > e.rows {
                return err(Invariant::NullsOverRows {
                    nulls: e.nulls as u64,
                    rows: e.rows as u64,
                });
            }
            if e.values > e.rows - e.nulls {
                return err(Invariant::ValuesOverRows {
                    values: e.values as u64,
                    rows: (e.rows - e.nulls) as u64,
                });
            }
            // A code decodes to 1..=16 bytes, so bytes and codes bound each
            // other; a value-dictionary chunk's rows repeat its values, each
            // used at least once, so only the lower bound holds (§5.6).
            if e.bytes < e.codes as u64 || (e.values == 0 && e.bytes > 16 * e.codes as u64) {
                return err(Invariant::BytesAgainstCodes {
                    codes: e.codes as u64,
                    bytes: e.bytes,
                });
            }
            rows += e.rows as u64;
            bytes_sum += e.bytes;
            chunks.push(e);
        }
        // Sections are laid out in file order: chunks first, then dictionaries.
        for e in &chunks {
            check_ref(&c, e.section, "chunk section", &mut prev_end)?;
        }
        for d in &dicts {
            check_ref(&c, *d, "dictionary section", &mut prev_end)?;
        }
        // The footer follows the last section directly.
        if prev_end != base {
            return Err(Error::corrupt(
                Section::Footer,
                base,
                Invariant::Gap {
                    expected: prev_end,
                    found: base,
                },
            ));
        }
        if rows != total_rows {
            return Err(Error::corrupt(
                Section::Footer,
                base + 8,
                Invariant::TotalRows {
                    expected: rows,
                    found: total_rows,
                },
            ));
        }
        if bytes_sum != total_bytes {
            return Err(Error::corrupt(
                Section::Footer,
                base + 16,
                Invariant::TotalBytes {
                    expected: bytes_sum,
                    found: total_bytes,
                },
            ));
        }
        Ok(Footer {
            dicts,
            chunks,
            total_rows,
            total_bytes,
        })
    }
}

/// A dictionary section's fields (§4), parsed and size-checked but not yet
/// checked against the token model.
#[derive(Clone, Debug)]
pub struct DictSection<'a> {
    /// Codec.
    pub codec: Codec,
    /// Code width (12 or 16).
    pub code_bits: u8,
    /// Low-plane width `W` (8 or 16).
    pub width: u8,
    /// Number of tokens.
    pub num_tokens: u32,
    /// Encoded-token length histogram: `hist[i]` = tokens of length `i+1` emitted.
    pub hist: [u64; 16],
    /// Nibble-packed `len - 1`, token `c` in byte `c / 2`, low nibble for even `c`.
    pub lens: &'a [u8],
    /// The tokens' bytes: fixed-stride planes (versions 1–2) or front-coded
    /// (version 3).
    pub body: DictBody<'a>,
}

/// How a dictionary section stores its tokens' bytes.
#[derive(Clone, Debug)]
pub enum DictBody<'a> {
    /// Versions 1 and 2 (§4.5): the fixed-stride planes as a decoder uses them.
    Planes {
        /// Low plane: `W` bytes per token.
        lo: &'a [u8],
        /// High plane: `16 - W` bytes per token, empty when absent.
        hi: &'a [u8],
    },
    /// Version 3 (§4): front-coded tokens; the reader materializes the planes.
    Packed {
        /// Nibble-packed shared-prefix lengths (0..=15), laid out as `lens`.
        prefixes: &'a [u8],
        /// Each token's bytes after its shared prefix, in code order.
        suffixes: &'a [u8],
    },
}

/// Flag bit: the high plane is present (§4.5, versions 1–2).
pub const DICT_FLAG_HI_PLANE: u8 = 1;

/// Nibble `c` of a nibble-packed table (low nibble of byte `c / 2` for even `c`).
#[inline]
pub fn nibble(table: &[u8], c: usize) -> usize {
    ((table[c / 2] >> ((c & 1) * 4)) & 0xf) as usize
}

impl<'a> DictSection<'a> {
    /// Serializes a dictionary section, in the layout of its body: planes
    /// (versions 1–2) or front-coded tokens (version 3).
    pub fn write(&self, out: &mut Vec<u8>) {
        let start = out.len();
        let flags = match self.body {
            DictBody::Planes { hi, .. } if !hi.is_empty() => DICT_FLAG_HI_PLANE,
            _ => 0,
        };
        out.extend_from_slice(&[self.codec as u8, self.code_bits, self.width, flags]);
        out.put_u32(self.num_tokens);
        for h in self.hist {
            out.put_u64(h);
        }
        match self.body {
            DictBody::Planes { lo, hi } => {
                out.extend_from_slice(self.lens);
                pad_from(out, start);
                out.extend_from_slice(lo);
                pad_from(out, start);
                out.extend_from_slice(hi);
                pad_from(out, start);
            }
            DictBody::Packed { prefixes, suffixes } => {
                out.extend_from_slice(self.lens);
                out.extend_from_slice(prefixes);
                out.extend_from_slice(suffixes);
                pad_from(out, start);
            }
        }
    }

    /// Parses a dictionary section of a file of the current [`VERSION`].
    pub fn parse(bytes: &'a [u8], base: u64, id: u32) -> Result<Self> {
        Self::parse_version(bytes, base, id, VERSION)
    }

    /// Parses a dictionary section (`bytes` is exactly the section, at `base`)
    /// of a file of format `version`: planes in versions 1–2 (§4.5),
    /// front-coded tokens in version 3 (§4). Every size is checked against
    /// the bytes present before anything is sized from it.
    pub fn parse_version(bytes: &'a [u8], base: u64, id: u32, version: u32) -> Result<Self> {
        let section = Section::Dictionary(id);
        let mut c = Cursor::new(bytes, base, section);
        let codec_id = c.u8("codec")?;
        let codec = Codec::from_id(codec_id).ok_or_else(|| {
            c.error(Invariant::BadField {
                what: "codec",
                value: codec_id as u64,
            })
        })?;
        let code_bits = c.u8("code width")?;
        if code_bits != codec.code_bits() {
            return Err(c.error(Invariant::BadField {
                what: "code width",
                value: code_bits as u64,
            }));
        }
        let width = c.u8("plane width")?;
        if width != 8 && width != 16 {
            return Err(c.error(Invariant::BadField {
                what: "plane width",
                value: width as u64,
            }));
        }
        let flags = c.u8("dictionary flags")?;
        let packed = version >= VERSION_3;
        // Version 3 has no flags (the planes are materialized, §4); versions
        // 1–2 have bit 0 (high plane), never with `W = 16`.
        if (packed && flags != 0) || flags & !DICT_FLAG_HI_PLANE != 0 || (width == 16 && flags != 0)
        {
            return Err(c.error(Invariant::BadField {
                what: "dictionary flags",
                value: flags as u64,
            }));
        }
        let num_tokens = c.u32("token count")?;
        if !(256..=1u32 << code_bits).contains(&num_tokens) {
            return Err(c.error(Invariant::BadField {
                what: "token count",
                value: num_tokens as u64,
            }));
        }
        let mut hist = [0u64; 16];
        for h in &mut hist {
            *h = c.u64("token length histogram")?;
        }
        let n = num_tokens as usize;
        let lens = c.take(n.div_ceil(2), "token lengths")?;
        let body = if packed {
            let prefixes = c.take(n.div_ceil(2), "token prefixes")?;
            // Σ (len − prefix) over tokens whose prefix fits them; a prefix
            // longer than its token is rejected by `Dictionary::validate`
            // with its code, so count it as 0 here.
            let suffix_len: usize = (0..n)
                .map(|t| (nibble(lens, t) + 1).saturating_sub(nibble(prefixes, t)))
                .sum();
            let suffixes = c.take(suffix_len, "token suffixes")?;
            c.align16("dictionary padding")?;
            DictBody::Packed { prefixes, suffixes }
        } else {
            c.align16("token lengths padding")?;
            let lo = c.take(n * width as usize, "low plane")?;
            c.align16("low plane padding")?;
            let hi = if flags & DICT_FLAG_HI_PLANE != 0 {
                let hi = c.take(n * (16 - width as usize), "high plane")?;
                c.align16("high plane padding")?;
                hi
            } else {
                &[]
            };
            DictBody::Planes { lo, hi }
        };
        if c.remaining() != 0 {
            return Err(c.error(Invariant::SizeMismatch {
                what: "dictionary section",
                expected: (bytes.len() - c.remaining()) as u64,
                found: bytes.len() as u64,
            }));
        }
        Ok(Self {
            codec,
            code_bits,
            width,
            num_tokens,
            hist,
            lens,
            body,
        })
    }
}

fn pad_from(out: &mut Vec<u8>, start: usize) {
    let n = start + align16(out.len() - start);
    out.resize(n, 0);
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
        out.put_u32(batch);
        let mut flags = 0;
        if validity.is_some() {
            flags |= CHUNK_FLAG_VALIDITY;
        }
        if value_index.is_some() {
            flags |= CHUNK_FLAG_VALUE_DICT;
        }
        out.put_u32(flags);
        let parts = [
            codes,
            sidecar,
            row_codes,
            row_bytes,
            validity.unwrap_or(&[]),
            value_index.unwrap_or(&[]),
        ];
        for part in parts {
            out.put_u32(part.len() as u32);
        }
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
        let batch = c.u32("batch size")?;
        if !batch.is_power_of_two() || !(limits::MIN_BATCH..=limits::MAX_BATCH).contains(&batch) {
            return Err(c.error(Invariant::BadField {
                what: "batch size",
                value: batch as u64,
            }));
        }
        let flags = c.u32("chunk flags")?;
        // The value-dictionary flag is set iff the footer entry counts
        // distinct values (always 0 in version 1, so the flag is refused there).
        if flags & !(CHUNK_FLAG_VALIDITY | CHUNK_FLAG_VALUE_DICT) != 0
            || (flags & CHUNK_FLAG_VALUE_DICT != 0) != (entry.values > 0)
        {
            return Err(c.error(Invariant::BadField {
                what: "chunk flags",
                value: flags as u64,
            }));
        }
        let codes_len = c.u32("codes length")?;
        let sidecar_len = c.u32("sidecar length")?;
        let row_codes_len = c.u32("row code boundaries length")?;
        let row_bytes_len = c.u32("row byte boundaries length")?;
        let validity_len = c.u32("validity length")?;
        let value_dict = flags & CHUNK_FLAG_VALUE_DICT != 0;
        let index_len = if value_dict {
            c.u32("value index length")?
        } else {
            c.zeros(4, "chunk header reserved")?;
            0
        };
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
