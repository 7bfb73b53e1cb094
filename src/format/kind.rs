//! Chunk kinds and chunk part tags (spec/FORMAT.md §5.0). A chunk's kind
//! says how it stores its rows and which parts its section holds; from
//! version 4 it is written in the chunk header, with a counted table of the
//! parts (tag and length), so a new kind adds a kind code and its list of
//! parts, never a new header layout. In versions 1–3 the kind is told by
//! the footer entry's `values` (and the chunk header's flag bit 1).

use super::footer::ChunkEntry;
use crate::error::ChunkPart;

/// Kind code of a coded chunk (§5.0).
pub const KIND_CODED: u32 = 1;
/// Kind code of a value-dictionary chunk (§5.0, §5.6).
pub const KIND_VALUE_DICT: u32 = 2;
/// Kind code of log-template chunks (§5.0, §5.8).
pub const KIND_LOG_TEMPLATES: u32 = 3;

/// How a chunk stores its rows (spec/FORMAT.md §5.0, §5, §5.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkKind {
    /// Every row's codes, back to back (§5.2–§5.5).
    Coded,
    /// The distinct values' codes and each row's value number (§5.6).
    ValueDict,
    /// Templates and typed slot columns (§5.8): no codes of the file's
    /// dictionaries.
    LogTemplates,
}

impl ChunkKind {
    /// The kind of the chunk `entry` describes, from the footer alone: a
    /// value dictionary when it counts distinct values (all versions; in
    /// version 4 the chunk header's kind must agree, §5.0).
    /// Log templates when it has bytes but no codes (§5.8: a coded chunk
    /// with bytes has codes).
    pub fn of(entry: &ChunkEntry) -> Self {
        if entry.values > 0 {
            Self::ValueDict
        } else if entry.codes == 0 && entry.bytes > 0 {
            Self::LogTemplates
        } else {
            Self::Coded
        }
    }

    /// The kind's code in a version-4 chunk header (§5.0).
    pub fn code(self) -> u32 {
        match self {
            Self::Coded => KIND_CODED,
            Self::ValueDict => KIND_VALUE_DICT,
            Self::LogTemplates => KIND_LOG_TEMPLATES,
        }
    }

    /// The kind of code `code`; `None` for an unknown or reserved code.
    pub fn from_code(code: u32) -> Option<Self> {
        match code {
            KIND_CODED => Some(Self::Coded),
            KIND_VALUE_DICT => Some(Self::ValueDict),
            KIND_LOG_TEMPLATES => Some(Self::LogTemplates),
            _ => None,
        }
    }

    /// The parts of a version-4 chunk of this kind, in the order of its
    /// section and of its parts table (§5.0). The checksum table is last.
    pub fn parts(self) -> &'static [Part] {
        use Part::*;
        match self {
            Self::Coded => &[Codes, Sidecar, RowCodes, RowBytes, Validity, Checksums],
            Self::ValueDict => &[
                Codes, Sidecar, RowCodes, RowBytes, Validity, ValueIndex, Checksums,
            ],
            Self::LogTemplates => &[Validity, LogPayload, Checksums],
        }
    }

    /// How many "rows" the chunk's codes, row-code and row-byte sequences
    /// describe (§9 steps 10–12): its rows, or a value dictionary's `D`
    /// distinct values.
    pub fn code_rows(self, entry: &ChunkEntry) -> usize {
        match self {
            Self::Coded => entry.rows as usize,
            Self::ValueDict => entry.values as usize,
            Self::LogTemplates => 0,
        }
    }

    /// Whether the code sequences are per row (then the sidecar ends at the
    /// entry's `bytes` and a null row's code range is empty, §9 steps 10 and
    /// 13), or per something else (a value dictionary's values, whose rows
    /// the kind's own step 13b checks).
    pub fn codes_per_row(self) -> bool {
        match self {
            Self::Coded => true,
            Self::ValueDict | Self::LogTemplates => false,
        }
    }
}

/// A chunk part, by its tag in a version-4 parts table (§5.0). The tag minus
/// one is the part's slot in [`super::chunk_section::ChunkHeader::parts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Part {
    /// The packed codes (§5.2).
    Codes = 1,
    /// The sidecar (§5.3).
    Sidecar = 2,
    /// The row code boundaries (§5.4).
    RowCodes = 3,
    /// The row byte boundaries (§5.4).
    RowBytes = 4,
    /// The validity bitmap (§5.5); length 0 when the chunk has no null.
    Validity = 5,
    /// The value index (§5.6).
    ValueIndex = 6,
    /// The checksum table (§5.7, version 4).
    Checksums = 7,
    /// The log-template payload (§5.8).
    LogPayload = 8,
}

/// Number of part slots ([`Part`] tags 1..=8).
pub const PART_SLOTS: usize = 8;

/// Most parts a version-4 parts table may count (§5.0, §8): bounds the
/// header a point read fetches before it knows the kind's list.
pub const MAX_PARTS: u32 = 16;

impl Part {
    /// The part's tag on disk.
    pub fn tag(self) -> u32 {
        self as u32
    }

    /// The part's slot (tag − 1).
    pub fn slot(self) -> usize {
        self as usize - 1
    }

    /// The part of slot `slot`.
    pub fn of_slot(slot: usize) -> Self {
        use Part::*;
        [
            Codes, Sidecar, RowCodes, RowBytes, Validity, ValueIndex, Checksums, LogPayload,
        ][slot]
    }

    /// The part as errors name it.
    pub fn chunk_part(self) -> ChunkPart {
        match self {
            Part::Codes => ChunkPart::Codes,
            Part::Sidecar => ChunkPart::Sidecar,
            Part::RowCodes => ChunkPart::RowCodes,
            Part::RowBytes => ChunkPart::RowBytes,
            Part::Validity => ChunkPart::Validity,
            Part::ValueIndex => ChunkPart::ValueIndex,
            Part::Checksums => ChunkPart::Checksums,
            Part::LogPayload => ChunkPart::LogPayload,
        }
    }

    /// The part's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Part::Codes => "codes",
            Part::Sidecar => "sidecar",
            Part::RowCodes => "row code boundaries",
            Part::RowBytes => "row byte boundaries",
            Part::Validity => "validity bitmap",
            Part::ValueIndex => "value indices",
            Part::Checksums => "checksum table",
            Part::LogPayload => "log payload",
        }
    }
}
