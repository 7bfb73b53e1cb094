//! The one public error type. Corruption names the section, the byte offset
//! (absolute, in the file) and the broken invariant (spec/FORMAT.md §9).

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A part of a file, as named in spec/FORMAT.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// The 16-byte header (§2).
    Header,
    /// The 24-byte tail at the end of the file (§2).
    Tail,
    /// The footer (§3).
    Footer,
    /// Dictionary section `n` (§4).
    Dictionary(u32),
    /// Part of chunk section `chunk` (§5).
    Chunk(u32, ChunkPart),
}

/// The parts of a chunk section (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkPart {
    /// The chunk header.
    Header,
    /// The packed codes.
    Codes,
    /// The sidecar of batch output positions.
    Sidecar,
    /// Row boundaries in codes.
    RowCodes,
    /// Row boundaries in bytes.
    RowBytes,
    /// The validity bitmap.
    Validity,
    /// The section as a whole (checksum, length).
    Whole,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::Header => write!(f, "header"),
            Section::Tail => write!(f, "tail"),
            Section::Footer => write!(f, "footer"),
            Section::Dictionary(d) => write!(f, "dictionary {d}"),
            Section::Chunk(c, ChunkPart::Whole) => write!(f, "chunk {c}"),
            Section::Chunk(c, p) => write!(f, "chunk {c} {}", p.name()),
        }
    }
}

impl ChunkPart {
    fn name(self) -> &'static str {
        match self {
            ChunkPart::Header => "header",
            ChunkPart::Codes => "codes",
            ChunkPart::Sidecar => "sidecar",
            ChunkPart::RowCodes => "row code boundaries",
            ChunkPart::RowBytes => "row byte boundaries",
            ChunkPart::Validity => "validity bitmap",
            ChunkPart::Whole => "section",
        }
    }
}

/// The invariant a damaged file breaks (spec/FORMAT.md §9 lists each check).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invariant {
    /// The file is shorter than header + tail.
    FileTooSmall { len: u64 },
    /// Magic bytes differ from `FASTPAIR`.
    BadMagic,
    /// A length or offset points past the bytes available.
    LengthPastEnd {
        what: &'static str,
        end: u64,
        available: u64,
    },
    /// CRC32 over a section differs from the recorded one.
    ChecksumMismatch { recorded: u32, computed: u32 },
    /// A count or size exceeds a format limit (§8).
    LimitExceeded {
        what: &'static str,
        value: u64,
        limit: u64,
    },
    /// A field holds a value the format does not define.
    BadField { what: &'static str, value: u64 },
    /// Reserved bytes or padding are not zero.
    NonZeroReserved { what: &'static str },
    /// A section's parts do not fill it exactly.
    SizeMismatch {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    /// Sections overlap or are out of order.
    Overlap { what: &'static str },
    /// A code is not below the dictionary size.
    CodeOutOfRange { index: u64, code: u32, tokens: u32 },
    /// A token length is outside 1..=16 or exceeds the plane width without a high plane.
    BadTokenLength { token: u32, len: u32 },
    /// The single-byte tokens are not all present.
    MissingSingleByte { byte: u8 },
    /// A monotone sequence decreases.
    NotMonotone { what: &'static str, index: u64 },
    /// A sequence's total disagrees with the count it must match.
    TotalMismatch {
        what: &'static str,
        expected: u64,
        found: u64,
    },
    /// A batch's token lengths do not add up to the sidecar's positions.
    SidecarMismatch {
        batch: u64,
        expected: u64,
        found: u64,
    },
    /// A row's token lengths do not add up to its byte boundaries.
    RowLengthMismatch { row: u64, expected: u64, found: u64 },
    /// A chunk names a dictionary that does not exist or has another width.
    BadDictionaryRef { dict: u32, dicts: u32 },
    /// A null row has a non-empty value.
    NullWithValue { row: u64 },
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Invariant::*;
        match self {
            FileTooSmall { len } => write!(f, "file of {len} bytes is smaller than header + tail"),
            BadMagic => write!(f, "magic bytes are not FASTPAIR"),
            LengthPastEnd {
                what,
                end,
                available,
            } => {
                write!(
                    f,
                    "{what} ends at byte {end}, past the {available} bytes available"
                )
            }
            ChecksumMismatch { recorded, computed } => {
                write!(
                    f,
                    "CRC32 mismatch: recorded {recorded:#010x}, computed {computed:#010x}"
                )
            }
            LimitExceeded { what, value, limit } => {
                write!(f, "{what} is {value}, over the limit of {limit}")
            }
            BadField { what, value } => write!(f, "{what} has undefined value {value}"),
            NonZeroReserved { what } => write!(f, "{what} must be zero"),
            SizeMismatch {
                what,
                expected,
                found,
            } => {
                write!(f, "{what}: expected {expected} bytes, found {found}")
            }
            Overlap { what } => write!(f, "{what} overlap or are out of order"),
            CodeOutOfRange {
                index,
                code,
                tokens,
            } => {
                write!(
                    f,
                    "code {code} at index {index} is not below the dictionary size {tokens}"
                )
            }
            BadTokenLength { token, len } => write!(f, "token {token} has invalid length {len}"),
            MissingSingleByte { byte } => {
                write!(
                    f,
                    "single-byte token {byte:#04x} is missing from the dictionary"
                )
            }
            NotMonotone { what, index } => write!(f, "{what} decreases at index {index}"),
            TotalMismatch {
                what,
                expected,
                found,
            } => {
                write!(
                    f,
                    "{what}: total {found} disagrees with expected {expected}"
                )
            }
            SidecarMismatch {
                batch,
                expected,
                found,
            } => write!(
                f,
                "batch {batch}: token lengths give {found} bytes, sidecar says {expected}"
            ),
            RowLengthMismatch {
                row,
                expected,
                found,
            } => write!(
                f,
                "row {row}: token lengths give {found} bytes, row boundaries say {expected}"
            ),
            BadDictionaryRef { dict, dicts } => {
                write!(f, "names dictionary {dict}, but the file has {dicts}")
            }
            NullWithValue { row } => write!(f, "row {row} is null but has a non-empty value"),
        }
    }
}

/// Everything that can go wrong in fastpair.
#[derive(Debug)]
pub enum Error {
    /// An I/O error, with the path or operation involved.
    Io {
        context: String,
        source: std::io::Error,
    },
    /// The file is damaged or hostile: what is wrong and where.
    Corrupt {
        section: Section,
        offset: u64,
        invariant: Invariant,
    },
    /// The file was written by a format version this reader does not know.
    UnsupportedVersion { found: u32, supported: u32 },
    /// A row index past the end of the column.
    RowOutOfRange { row: u64, rows: u64 },
    /// A caller-supplied argument or option is invalid.
    InvalidArgument(String),
    /// Input the writer cannot store (e.g. a value over the size limit).
    LimitExceeded {
        what: &'static str,
        value: u64,
        limit: u64,
    },
    /// A decode would need more memory than the reader's cap allows.
    MemoryCap { needed: u64, cap: u64 },
    /// No usable GPU (no driver, no NVRTC, no device).
    GpuUnavailable(String),
    /// A GPU call failed, or the kernel reported a disagreement.
    Gpu(String),
}

impl Error {
    pub(crate) fn corrupt(section: Section, offset: u64, invariant: Invariant) -> Self {
        Error::Corrupt {
            section,
            offset,
            invariant,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// The broken invariant, when this is a corruption error.
    pub fn invariant(&self) -> Option<&Invariant> {
        match self {
            Error::Corrupt { invariant, .. } => Some(invariant),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "{context}: {source}"),
            Error::Corrupt {
                section,
                offset,
                invariant,
            } => {
                write!(f, "corrupt file: {section} at byte {offset}: {invariant}")
            }
            Error::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported format version {found} (this reader supports version {supported})"
            ),
            Error::RowOutOfRange { row, rows } => {
                write!(f, "row {row} is out of range (the column has {rows} rows)")
            }
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::LimitExceeded { what, value, limit } => {
                write!(f, "{what} is {value}, over the limit of {limit}")
            }
            Error::MemoryCap { needed, cap } => write!(
                f,
                "decode needs {needed} bytes, over the reader's memory cap of {cap} bytes"
            ),
            Error::GpuUnavailable(m) => write!(f, "GPU unavailable: {m}"),
            Error::Gpu(m) => write!(f, "GPU error: {m}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
