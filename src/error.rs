//! The one public error type. Corruption names the section, the byte offset
//! (absolute, in the file) and the broken invariant (spec/FORMAT.md §9).

use std::fmt;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A part of a file, as named in spec/FORMAT.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// The value-dictionary row indices (§5.6, format version 2).
    ValueIndex,
    /// The checksum table (§5.7, format version 4).
    Checksums,
    /// The log-template payload (§5.8, format version 4).
    LogPayload,
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
            ChunkPart::ValueIndex => "value indices",
            ChunkPart::Checksums => "checksum table",
            ChunkPart::LogPayload => "log payload",
            ChunkPart::Whole => "section",
        }
    }
}

/// The invariant a damaged file breaks: one variant per check of
/// spec/FORMAT.md §9 (a `what` label names the field where one check applies
/// to several fields of the same kind).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invariant {
    /// The file is shorter than header + tail.
    FileTooSmall {
        /// The file's length.
        len: u64,
    },
    /// Magic bytes differ from `FASTPAIR`.
    BadMagic,
    /// A length or offset points past the bytes available.
    LengthPastEnd {
        /// What was being read.
        what: &'static str,
        /// Where it would end.
        end: u64,
        /// Where the bytes available end.
        available: u64,
    },
    /// CRC32 over a section differs from the recorded one.
    ChecksumMismatch {
        /// The CRC32 in the file.
        recorded: u32,
        /// The CRC32 of the bytes.
        computed: u32,
    },
    /// A count or size exceeds a format limit (§8).
    LimitExceeded {
        /// The count or size.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A field holds a value the format does not define.
    BadField {
        /// The field.
        what: &'static str,
        /// Its value.
        value: u64,
    },
    /// A version-4 chunk header names a chunk kind this reader does not
    /// know, or one reserved and not yet specified (§5.0: 3, log templates).
    UnknownChunkKind {
        /// The kind code.
        kind: u32,
    },
    /// Reserved bytes or padding are not zero.
    NonZeroReserved {
        /// The reserved field or padding.
        what: &'static str,
    },
    /// A section's parts do not fill it exactly.
    SizeMismatch {
        /// The part or section.
        what: &'static str,
        /// Bytes it must have.
        expected: u64,
        /// Bytes it has.
        found: u64,
    },
    /// Sections overlap or are out of order.
    Overlap {
        /// What overlaps.
        what: &'static str,
    },
    /// Bytes between sections, after the header or before the footer: a
    /// section (or the footer) does not start where the previous one ends.
    Gap {
        /// Where it must start.
        expected: u64,
        /// Where it starts.
        found: u64,
    },
    /// A code is not below the dictionary size.
    CodeOutOfRange {
        /// Index of the code in its chunk.
        index: u64,
        /// The code.
        code: u32,
        /// The dictionary's token count.
        tokens: u32,
    },
    /// The 12-bit padding code after an odd number of codes is not zero.
    NonZeroPaddingCode {
        /// The padding code.
        code: u32,
    },
    /// A token length is outside 1..=16 or exceeds the plane width without a high plane.
    BadTokenLength {
        /// The token's code.
        token: u32,
        /// Its length.
        len: u32,
    },
    /// The single-byte tokens are not all present.
    MissingSingleByte {
        /// The first missing byte.
        byte: u8,
    },
    /// A high plane is present although no token is longer than the plane width.
    UnusedHighPlane,
    /// A front-coded token's shared prefix (format version 3, §4) is not the
    /// longest prefix it shares with the previous token, capped at 15 (or
    /// is longer than either token).
    TokenPrefix {
        /// The token's code.
        token: u32,
        /// The recorded prefix length.
        prefix: u32,
    },
    /// The token-length histogram differs from the lengths of the tokens that
    /// the chunks using the dictionary encode.
    HistogramMismatch {
        /// Token length (1..=16) of the first bucket that differs.
        len: u8,
        /// The count in the file.
        recorded: u64,
        /// The count in the chunks.
        counted: u64,
    },
    /// A cascaded block's frame of reference is not canonical: its smallest
    /// residual is not 0, or its bit width is not that of its largest residual.
    NonCanonicalFrame {
        /// Block index.
        block: u64,
        /// The stored frame of reference.
        min: u32,
        /// The stored bit width.
        bits: u8,
    },
    /// A cascaded sequence's block count disagrees with its value count.
    SequenceBlockCount {
        /// Blocks the count needs.
        expected: u64,
        /// Blocks stored.
        found: u64,
    },
    /// A cascaded block's base disagrees with the running sum.
    SequenceBase {
        /// Block index.
        block: u64,
        /// The running sum.
        expected: u64,
        /// The stored base.
        found: u64,
    },
    /// A sequence holds the wrong number of values.
    SequenceLength {
        /// Values it must hold.
        expected: u64,
        /// Values it holds.
        found: u64,
    },
    /// A sequence does not start at 0.
    SequenceFirst {
        /// Its first value.
        found: u64,
    },
    /// A sequence's last value disagrees with the footer entry's total.
    SequenceLast {
        /// The footer entry's total.
        expected: u64,
        /// Its last value.
        found: u64,
    },
    /// A batch's token lengths do not add up to the sidecar's positions.
    SidecarMismatch {
        /// Batch index.
        batch: u64,
        /// Bytes the sidecar gives.
        expected: u64,
        /// Bytes the tokens give.
        found: u64,
    },
    /// A row's token lengths do not add up to its byte boundaries.
    RowLengthMismatch {
        /// Row within the chunk.
        row: u64,
        /// Bytes the boundaries give.
        expected: u64,
        /// Bytes the tokens give.
        found: u64,
    },
    /// A row's code boundaries leave the chunk's codes (found by a point read).
    RowCodesPastEnd {
        /// Row within the chunk.
        row: u64,
        /// Its end code.
        end: u64,
        /// Codes in the chunk.
        codes: u64,
    },
    /// A chunk names a dictionary that does not exist.
    BadDictionaryRef {
        /// The dictionary named.
        dict: u32,
        /// Dictionaries in the file.
        dicts: u32,
    },
    /// A chunk entry counts more nulls than rows.
    NullsOverRows {
        /// Nulls.
        nulls: u64,
        /// Rows.
        rows: u64,
    },
    /// A chunk entry's decoded bytes lie outside `codes ..= 16 * codes`.
    BytesAgainstCodes {
        /// Codes.
        codes: u64,
        /// Decoded bytes.
        bytes: u64,
    },
    /// The footer's total rows differ from the sum of the chunks' rows.
    TotalRows {
        /// The sum over chunks.
        expected: u64,
        /// The footer's total.
        found: u64,
    },
    /// The footer's total bytes differ from the sum of the chunks' bytes.
    TotalBytes {
        /// The sum over chunks.
        expected: u64,
        /// The footer's total.
        found: u64,
    },
    /// A chunk entry counts nulls but the chunk has no validity bitmap.
    NullsWithoutValidity {
        /// Nulls counted.
        nulls: u64,
    },
    /// A chunk has a validity bitmap but no null row (absent is the one spelling).
    ValidityWithoutNulls,
    /// The validity bitmap's null count differs from the footer entry's.
    NullCount {
        /// The footer entry's count.
        expected: u64,
        /// Zero bits in the bitmap.
        found: u64,
    },
    /// A null row has a non-empty value.
    NullWithValue {
        /// Row within the chunk.
        row: u64,
    },
    /// The header's and the tail's format versions differ (§2).
    VersionMismatch {
        /// The header's version.
        header: u32,
        /// The tail's version.
        tail: u32,
    },
    /// A footer entry names more distinct values than the chunk has
    /// non-null rows (§3, §5.6).
    ValuesOverRows {
        /// Distinct values recorded.
        values: u64,
        /// Non-null rows of the chunk.
        rows: u64,
    },
    /// A row's value index is not below the chunk's value count (§5.6).
    ValueIndexOutOfRange {
        /// Row within the chunk.
        row: u64,
        /// The index.
        index: u64,
        /// Distinct values of the chunk.
        values: u64,
    },
    /// Values are not numbered in order of first use, or one is unused (§5.6).
    ValueOrder {
        /// Row within the chunk (the number of rows when a value is unused).
        row: u64,
        /// The index found.
        index: u64,
        /// The largest index the row may use.
        allowed: u64,
    },
    /// A version-4 chunk has no row (§9 step 6, one spelling).
    ZeroRowChunk {
        /// The chunk.
        chunk: u32,
    },
    /// A version-4 chunk names a dictionary out of first-use order: chunk 0
    /// names dictionary 0 and each chunk at most one more than the largest
    /// id so far (§9 step 6).
    DictionaryOrder {
        /// The chunk.
        chunk: u32,
        /// The dictionary it names.
        dict: u32,
        /// The largest id it may name.
        allowed: u32,
    },
    /// A version-4 file holds a dictionary no chunk uses (§9 step 6).
    UnusedDictionary {
        /// The first unused dictionary.
        dict: u32,
    },
    /// Codes 0–255 of a version-4 dictionary are not the 256 single bytes
    /// in byte order (§4.4).
    SingleByteOrder {
        /// The first code that is not its own byte.
        token: u32,
    },
    /// A learned token (code ≥ 256) of a version-4 dictionary is a single
    /// byte, which codes 0–255 already hold (§4.4).
    DuplicateToken {
        /// The token.
        token: u32,
    },
    /// A learned token of a version-4 dictionary is not strictly after the
    /// one before it in byte order (§4.4: sorted and distinct).
    TokenOrder {
        /// The token.
        token: u32,
    },
    /// A version-4 dictionary's `W` is not the one §4.3 derives from its
    /// histogram.
    WidthNotDerived {
        /// The header's `W`.
        width: u8,
        /// The `W` the histogram gives.
        derived: u8,
    },
    /// Two distinct values of a chunk are equal (§5.6).
    DuplicateValue {
        /// The later value's index.
        value: u64,
        /// The earlier, equal value's index.
        first: u64,
    },
    /// The rows' expanded value bytes differ from the footer entry's (§5.6).
    ValueBytesMismatch {
        /// The footer entry's bytes.
        expected: u64,
        /// Bytes of the values the rows name.
        found: u64,
    },
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Invariant::*;
        match self {
            FileTooSmall { len } => write!(f, "file of {len} bytes is smaller than header + tail"),
            BadMagic => write!(
                f,
                "magic bytes are not the section's (FASTPAIR for a file; FPL5 or FPS5 for a log payload, FPL4 or FPS4 in format version 8, FPL3 or FPS3 in 7, FPL2 or FPS2 in 6, FPL1 or FPS1 in 4-5)"
            ),
            LengthPastEnd {
                what,
                end,
                available,
            } => write!(
                f,
                "{what} ends at byte {end}, past the {available} bytes available"
            ),
            ChecksumMismatch { recorded, computed } => write!(
                f,
                "CRC32 mismatch: recorded {recorded:#010x}, computed {computed:#010x}"
            ),
            LimitExceeded { what, value, limit } => {
                write!(f, "{what} is {value}, over the limit of {limit}")
            }
            BadField { what, value } => write!(f, "{what} has undefined value {value}"),
            UnknownChunkKind { kind } if *kind == crate::format::kind::KIND_LOG_TEMPLATES => write!(
                f,
                "chunk kind {kind} (log templates) is reserved and not yet specified: \
                 this reader cannot read it"
            ),
            UnknownChunkKind { kind } => write!(
                f,
                "unknown chunk kind {kind}: written by a newer writer, or damaged"
            ),
            NonZeroReserved { what } => write!(f, "{what} must be zero"),
            SizeMismatch {
                what,
                expected,
                found,
            } => write!(f, "{what}: expected {expected} bytes, found {found}"),
            Overlap { what } => write!(f, "{what} overlap or are out of order"),
            Gap { expected, found } => write!(
                f,
                "starts at byte {found}, not where the previous part ends ({expected})"
            ),
            CodeOutOfRange {
                index,
                code,
                tokens,
            } => write!(
                f,
                "code {code} at index {index} is not below the dictionary size {tokens}"
            ),
            NonZeroPaddingCode { code } => {
                write!(f, "the 12-bit padding code is {code}, not 0")
            }
            BadTokenLength { token, len } => write!(f, "token {token} has invalid length {len}"),
            MissingSingleByte { byte } => write!(
                f,
                "single-byte token {byte:#04x} is missing from the dictionary"
            ),
            UnusedHighPlane => write!(
                f,
                "high plane present although no token is longer than the plane width"
            ),
            TokenPrefix { token, prefix } => write!(
                f,
                "token {token}'s shared prefix {prefix} is not its longest common prefix with the previous token (capped at 15)"
            ),
            HistogramMismatch {
                len,
                recorded,
                counted,
            } => write!(
                f,
                "token-length histogram says {recorded} tokens of length {len}, the chunks encode {counted}"
            ),
            NonCanonicalFrame { block, min, bits } => write!(
                f,
                "block {block}: frame of reference {min} / bit width {bits} is not the canonical one"
            ),
            SequenceBlockCount { expected, found } => write!(
                f,
                "sequence has {found} blocks, its count needs {expected}"
            ),
            SequenceBase {
                block,
                expected,
                found,
            } => write!(
                f,
                "block {block} base is {found}, the running sum is {expected}"
            ),
            SequenceLength { expected, found } => {
                write!(f, "sequence holds {found} values, expected {expected}")
            }
            SequenceFirst { found } => write!(f, "sequence starts at {found}, not 0"),
            SequenceLast { expected, found } => write!(
                f,
                "sequence ends at {found}, the footer entry says {expected}"
            ),
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
            RowCodesPastEnd { row, end, codes } => write!(
                f,
                "row {row} ends at code {end}, past the chunk's {codes} codes"
            ),
            BadDictionaryRef { dict, dicts } => {
                write!(f, "names dictionary {dict}, but the file has {dicts}")
            }
            NullsOverRows { nulls, rows } => {
                write!(f, "{nulls} nulls in a chunk of {rows} rows")
            }
            BytesAgainstCodes { codes, bytes } => write!(
                f,
                "{bytes} decoded bytes from {codes} codes (each code is 1..=16 bytes)"
            ),
            TotalRows { expected, found } => {
                write!(f, "total rows {found}, the chunks hold {expected}")
            }
            TotalBytes { expected, found } => {
                write!(f, "total bytes {found}, the chunks hold {expected}")
            }
            NullsWithoutValidity { nulls } => {
                write!(f, "{nulls} nulls but no validity bitmap")
            }
            ValidityWithoutNulls => write!(f, "validity bitmap present but no row is null"),
            NullCount { expected, found } => write!(
                f,
                "validity bitmap has {found} nulls, the footer entry says {expected}"
            ),
            NullWithValue { row } => write!(f, "row {row} is null but has a non-empty value"),
            VersionMismatch { header, tail } => write!(
                f,
                "header says format version {header}, tail says {tail}"
            ),
            ValuesOverRows { values, rows } => write!(
                f,
                "{values} distinct values for {rows} non-null rows"
            ),
            ValueIndexOutOfRange { row, index, values } => write!(
                f,
                "row {row} names value {index} of {values}"
            ),
            ValueOrder {
                row,
                index,
                allowed,
            } => write!(
                f,
                "row {row} names value {index}; values are numbered by first use, so at most {allowed} (or a value is never used)"
            ),
            DuplicateValue { value, first } => {
                write!(f, "value {value} equals value {first}")
            }
            ZeroRowChunk { chunk } => write!(f, "chunk {chunk} has no row"),
            DictionaryOrder {
                chunk,
                dict,
                allowed,
            } => write!(
                f,
                "chunk {chunk} names dictionary {dict}; dictionaries are numbered by first use, so at most {allowed}"
            ),
            UnusedDictionary { dict } => write!(f, "dictionary {dict} is used by no chunk"),
            SingleByteOrder { token } => write!(
                f,
                "code {token} is not the single byte {token} (codes 0-255 are the single bytes in byte order)"
            ),
            DuplicateToken { token } => write!(
                f,
                "token {token} is a single byte, which codes 0-255 already hold"
            ),
            TokenOrder { token } => write!(
                f,
                "token {token} is not after token {} in byte order (learned tokens are sorted and distinct)",
                token - 1
            ),
            WidthNotDerived { width, derived } => write!(
                f,
                "W = {width}, but the histogram gives W = {derived} (§4.3)"
            ),
            ValueBytesMismatch { expected, found } => write!(
                f,
                "rows expand to {found} value bytes, the footer entry says {expected}"
            ),
        }
    }
}

/// Everything that can go wrong in fastpair.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error, with the path or operation involved.
    Io {
        /// The path or operation.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is damaged or hostile: what is wrong and where.
    Corrupt {
        /// The part of the file.
        section: Section,
        /// Absolute byte offset in the file.
        offset: u64,
        /// The broken invariant.
        invariant: Invariant,
    },
    /// The file was written by a format version this reader does not know.
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The version this reader reads.
        supported: u32,
    },
    /// A row index past the end of the column.
    RowOutOfRange {
        /// The row asked for.
        row: u64,
        /// Rows in the column.
        rows: u64,
    },
    /// A caller-supplied argument or option is invalid.
    InvalidArgument(String),
    /// Input the writer cannot store (e.g. a value over the size limit).
    LimitExceeded {
        /// The count or size.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A decode would need more memory than the reader's cap allows.
    MemoryCap {
        /// Bytes the decode needs.
        needed: u64,
        /// The cap.
        cap: u64,
    },
    /// No usable GPU (no driver, no NVRTC, no device).
    GpuUnavailable(String),
    /// A dataset (spec/DATASET.md) whose manifest or files break one of its
    /// rules: the dataset's path and what is wrong, naming the field or file.
    Dataset {
        /// The dataset directory.
        path: String,
        /// What is wrong (the manifest field or the file, and the rule).
        what: String,
    },
    /// The kernel reported a disagreement, or a GPU precondition failed.
    Gpu(String),
    /// A CUDA driver or NVRTC call failed; the binding's (cudarc's) error is
    /// kept as [`std::error::Error::source`].
    GpuCall {
        /// What was being done (e.g. "alloc", "upload").
        what: String,
        /// The binding's error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
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
            Error::Dataset { path, what } => write!(f, "dataset {path}: {what}"),
            Error::Gpu(m) => write!(f, "GPU error: {m}"),
            Error::GpuCall { what, source } => write!(f, "GPU error: {what}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::GpuCall { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}
