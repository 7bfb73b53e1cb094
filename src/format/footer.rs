//! The footer (spec/FORMAT.md §3): its prefix, one entry per dictionary and
//! per chunk, and the layout of the sections it points at (§2).

use binrw::binrw;

use super::wire::{start_of, Cursor, Fixed};
use super::*;
use crate::error::{Error, Invariant, Result, Section};

/// The footer's prefix (§3 "Prefix").
#[binrw]
#[brw(little)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FooterPrefix {
    /// Number of dictionary entries.
    pub num_dicts: u32,
    /// Number of chunk entries.
    pub num_chunks: u32,
    /// Σ chunk rows.
    pub total_rows: u64,
    /// Σ chunk decoded bytes.
    pub total_bytes: u64,
    /// Zero.
    pub reserved: u64,
}

impl Fixed for FooterPrefix {
    const LEN: usize = FOOTER_PREFIX_LEN;
}

/// A footer dictionary entry (§3 "Dictionary entry"): the section and a
/// reserved word.
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DictEntry {
    /// The dictionary section.
    pub section: SectionRef,
    /// Zero.
    pub reserved: u32,
}

impl Fixed for DictEntry {
    const LEN: usize = DICT_ENTRY_LEN;
}

impl Fixed for ChunkEntry {
    const LEN: usize = CHUNK_ENTRY_LEN;
}

/// Where a section lies and its checksum: the first three fields of both
/// footer entries (§3).
#[binrw]
#[brw(little)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionRef {
    /// Absolute offset of the first byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    /// CRC32 (IEEE, `crc32fast`) of those bytes.
    pub crc: u32,
}

/// A footer chunk entry (§3 "Chunk entry").
#[binrw]
#[brw(little)]
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
    /// The dictionaries the chunks name: the stored ones, or, in a version-11
    /// file whose chunks are all log templates, the one *implicit*
    /// dictionary 0 (§3: stored nowhere; the parse accepts an empty
    /// dictionary list under chunks only then).
    pub fn named_dicts(&self) -> usize {
        if self.dicts.is_empty() && !self.chunks.is_empty() {
            1
        } else {
            self.dicts.len()
        }
    }

    /// Serializes the footer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(
            FOOTER_PREFIX_LEN
                + self.dicts.len() * DICT_ENTRY_LEN
                + self.chunks.len() * CHUNK_ENTRY_LEN,
        );
        let prefix = FooterPrefix {
            num_dicts: self.dicts.len() as u32,
            num_chunks: self.chunks.len() as u32,
            total_rows: self.total_rows,
            total_bytes: self.total_bytes,
            reserved: 0,
        };
        prefix.put(&mut b);
        for d in &self.dicts {
            let e = DictEntry {
                section: *d,
                reserved: 0,
            };
            e.put(&mut b);
        }
        for c in &self.chunks {
            c.put(&mut b);
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
        let p: FooterPrefix = c.fixed("footer prefix")?;
        let FooterPrefix {
            num_dicts,
            num_chunks,
            total_rows,
            total_bytes,
            ..
        } = p;
        if p.reserved != 0 {
            return Err(Error::corrupt(
                Section::Footer,
                base + start_of!(FooterPrefix, reserved),
                Invariant::NonZeroReserved {
                    what: "footer reserved",
                },
            ));
        }
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
            let at = c.offset();
            let e: DictEntry = c.fixed("dictionary entry")?;
            if e.reserved != 0 {
                // The reserved word is the entry's last.
                return Err(Error::corrupt(
                    Section::Footer,
                    at + (DICT_ENTRY_LEN - 4) as u64,
                    Invariant::NonZeroReserved {
                        what: "dictionary entry reserved",
                    },
                ));
            }
            dicts.push(e.section);
        }
        let mut rows = 0u64;
        let mut bytes_sum = 0u64;
        for _ in 0..num_chunks {
            let at = c.offset();
            let e: ChunkEntry = c.fixed("chunk entry")?;
            if version == VERSION_1 && e.values != 0 {
                // Reserved in version 1; `values` is the entry's last word.
                return Err(Error::corrupt(
                    Section::Footer,
                    at + (CHUNK_ENTRY_LEN - 4) as u64,
                    Invariant::NonZeroReserved {
                        what: "chunk entry reserved",
                    },
                ));
            }
            let err = |inv| Err(Error::corrupt(Section::Footer, at, inv));
            // Version 11: a file of log-template chunks alone stores no
            // dictionary; its chunks name dictionary 0, the implicit one
            // (§3; checked with the chunks' kinds in `one_spelling`).
            let implicit = version >= VERSION_11 && num_dicts == 0 && e.dict == 0;
            if e.dict >= num_dicts && !implicit {
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
            // A log-template chunk (version 4, §5.8) has no codes: `codes =
            // 0`, `values = 0`, `bytes > 0` is its footer spelling.
            let log = version >= VERSION_4 && e.codes == 0 && e.values == 0 && e.bytes > 0;
            if e.bytes < e.codes as u64 || (e.values == 0 && !log && e.bytes > 16 * e.codes as u64)
            {
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
        if version >= VERSION_4 {
            one_spelling(&chunks, num_dicts, base, version)?;
        }
        Ok(Footer {
            dicts,
            chunks,
            total_rows,
            total_bytes,
        })
    }
}

/// Version 4's one-spelling rules of the footer (§9 step 6, §10.1): no
/// chunk of zero rows, dictionaries numbered by first use (chunk 0 names
/// dictionary 0, each chunk at most one more than the largest id so far),
/// no dictionary that no chunk uses (so the empty column is no chunk and no
/// dictionary). Version 11 (§3): a file whose chunks are all log
/// templates stores no dictionary (its chunks name the implicit dictionary
/// 0), and one with any other chunk stores them as before. `base` is the
/// footer's offset.
fn one_spelling(chunks: &[ChunkEntry], num_dicts: u32, base: u64, version: u32) -> Result<()> {
    let entries = base + (FOOTER_PREFIX_LEN + DICT_ENTRY_LEN * num_dicts as usize) as u64;
    let entry_at = |i: usize| entries + (i * CHUNK_ENTRY_LEN) as u64;
    for (i, e) in chunks.iter().enumerate() {
        if e.rows == 0 {
            return Err(Error::corrupt(
                Section::Footer,
                entry_at(i),
                Invariant::ZeroRowChunk { chunk: i as u32 },
            ));
        }
    }
    let log = |e: &ChunkEntry| ChunkKind::of(e) == ChunkKind::LogTemplates;
    if version >= VERSION_11 && !chunks.is_empty() {
        if num_dicts == 0 {
            // The implicit dictionary (every entry's `dict` is 0, checked
            // with the entry) is named by log-template chunks only.
            return match chunks.iter().position(|e| !log(e)) {
                Some(i) => Err(Error::corrupt(
                    Section::Footer,
                    entry_at(i),
                    Invariant::BadDictionaryRef { dict: 0, dicts: 0 },
                )),
                None => Ok(()),
            };
        }
        if chunks.iter().all(log) {
            // No chunk uses a dictionary: storing one is a second spelling.
            return Err(Error::corrupt(
                Section::Footer,
                base + FOOTER_PREFIX_LEN as u64,
                Invariant::UnusedDictionary { dict: 0 },
            ));
        }
    }
    let mut next = 0u32;
    for (i, e) in chunks.iter().enumerate() {
        if e.dict > next {
            return Err(Error::corrupt(
                Section::Footer,
                entry_at(i),
                Invariant::DictionaryOrder {
                    chunk: i as u32,
                    dict: e.dict,
                    allowed: next,
                },
            ));
        }
        next = next.max(e.dict + 1);
    }
    if next != num_dicts {
        return Err(Error::corrupt(
            Section::Footer,
            base + (FOOTER_PREFIX_LEN + DICT_ENTRY_LEN * next as usize) as u64,
            Invariant::UnusedDictionary { dict: next },
        ));
    }
    Ok(())
}
