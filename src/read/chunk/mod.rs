//! Validated chunks (spec/FORMAT.md §5, §9 steps 8–13) and point reads of
//! chunks not validated whole, one concern per file:
//!
//! - `mod.rs` (here): the validated chunk ([`ValidChunk`])
//!   with its kind's state ([`Body`]), the one dispatch of the get and
//!   bulk-read paths ([`Body::rows`], through [`KindRows`]) and the borrowed
//!   [`ChunkView`];
//! - `validate.rs`: `Reader::validate_chunk`, one function per §9 step, and
//!   the one dispatch of validation on the kind (step 13b);
//! - `walk.rs`: steps 11 and 12 in one pass over the codes (validation's
//!   fast path; the steps one by one report what it finds wrong);
//! - `head.rs`: what a point read keeps of a chunk (its header and row-code
//!   directory), `Reader::point_read` and its one dispatch on the kind;
//! - `device.rs`: coded chunks checked on the host for the GPU's streaming
//!   scan, their per-code checks left to the device;
//! - `coded.rs`: chunks that store every row's codes (§5.2–§5.5);
//! - `value_dict.rs`: value-dictionary chunks (§5.6);
//! - `verify.rs`: what a point read reads of a version-4 chunk, checked
//!   against the chunk's checksum table once per block (§5.7);
//! - `utf8.rs`: the UTF-8 automaton that proves rows valid text.
//!
//! # Adding a chunk kind
//!
//! A new kind (e.g. a log-template codec) touches, on the read side:
//!
//! 1. `chunk/<kind>.rs` (new): its validated state, an `impl KindRows` (get,
//!    byte spans, offsets, bulk decode, UTF-8 flags), its step-13b check
//!    and its point read;
//! 2. `src/format/kind.rs`: one arm in [`ChunkKind`] (its code, its list
//!    of parts, [`ChunkKind::code_rows`], [`ChunkKind::codes_per_row`]);
//!    `chunk/mod.rs`: one variant in [`Body`] and one arm in [`Body::rows`]
//!    / [`Body::kind`];
//! 3. `chunk/validate.rs`: one arm in the step-13b `match`;
//! 4. `chunk/head.rs`: one variant in `HeadKind` and one arm in each of
//!    its two `match`es (building the head, serving a point read);
//!
//! and on the other layers:
//!
//! 5. `src/write/<kind>.rs` (new, like `write/values.rs`): encoding a chunk
//!    in the kind's layout, and one arm in `encode_as`
//!    (`src/write/encode.rs`), the writer's one `match`;
//! 6. `src/format/kind.rs`: the kind's code (reserved in spec/FORMAT.md
//!    §5.0) and its parts (new part tags where it needs them); version 4's
//!    chunk header and checksum table need no change;
//! 7. `src/gpu/kind.rs`: one arm in each of its `match`es (device bytes,
//!    dictionary use, `GpuChunk`), plus the kind's kernel under `kernels/`.
//!
//! `read/mod.rs` and `read/bulk.rs` need no change: they see a chunk only
//! through [`KindRows`]. (The reader's get fast path also tests for
//! `Body::ValueDict` itself, to stay inlined; a new kind takes the general
//! path, `Body::rows`, until it earns one.)

mod coded;
mod device;
mod head;
mod logs;
mod utf8;
pub(super) mod validate;
mod value_dict;
mod verify;
mod walk;

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;

use crate::decode::CheckedCodes;
use crate::dict::Dictionary;
use crate::error::{ChunkPart, Result, Section};
use crate::format::cascade::Sequence;
use crate::format::layout::ChunkEntry;
pub use crate::format::ChunkKind;

pub(super) use coded::FastGet;
#[cfg(feature = "gpu")]
pub(crate) use device::CodesCheck;
pub(crate) use device::{CodedParts, DeviceChunk};
pub(super) use head::ChunkHead;
#[cfg(feature = "gpu")]
pub(crate) use value_dict::device_index_width;
pub use value_dict::ValueDictParts;

/// The parts of a chunk section by name: their slots in
/// `ChunkHeader::parts` (`format::kind::Part::slot`).
mod part {
    use crate::format::kind::Part;
    pub(super) const CODES: usize = Part::Codes as usize - 1;
    pub(super) const ROW_CODES: usize = Part::RowCodes as usize - 1;
    pub(super) const VALIDITY: usize = Part::Validity as usize - 1;
    pub(super) const VALUE_INDEX: usize = Part::ValueIndex as usize - 1;
}

/// A chunk that passed every check. Private: the outside world sees it only
/// through a [`ChunkView`] borrowed from the reader that validated it, so its
/// positions can never be applied to another file's bytes.
#[derive(Debug)]
pub(super) struct ValidChunk {
    pub(super) id: u32,
    pub(super) entry: ChunkEntry,
    pub(super) batch: u32,
    /// The chunk section's bytes (a slice of a map or of memory, or a buffer).
    pub(super) section: Bytes,
    /// The parts, as ranges of `section`.
    pub(super) codes: Range<usize>,
    pub(super) sidecar: Vec<u32>,
    pub(super) sidecar_range: Range<usize>,
    pub(super) row_codes: (Sequence, Range<usize>),
    pub(super) row_bytes: (Sequence, Range<usize>),
    pub(super) validity: Option<Range<usize>>,
    /// The part only this kind has (a value-dictionary chunk's value index,
    /// §5.6; a log-template chunk's payload, §5.8); empty for a coded chunk.
    pub(super) kind_part: Range<usize>,
    /// The kind and what it keeps for reads.
    pub(super) body: Body,
    /// Every token the chunk's codes use is valid UTF-8 on its own
    /// (`utf8::token_len_flags`), so every value, a concatenation of
    /// whole tokens, is valid UTF-8. Found by validation's walk over the
    /// codes, never read from the file.
    pub(super) tokens_utf8: bool,
}

/// A validated chunk's kind and the state that kind keeps for reads.
#[derive(Debug)]
pub(super) enum Body {
    Coded(coded::Coded),
    ValueDict(value_dict::ValueDict),
    LogTemplates(logs::LogChunk),
}

impl Body {
    /// What the get and bulk-read paths ask of the chunk: the one dispatch
    /// on the kind for reads of a validated chunk.
    #[inline]
    pub(super) fn rows(&self) -> &dyn KindRows {
        match self {
            Self::Coded(c) => c,
            Self::ValueDict(v) => v,
            Self::LogTemplates(l) => l,
        }
    }

    /// The kind.
    pub(super) fn kind(&self) -> ChunkKind {
        match self {
            Self::Coded(_) => ChunkKind::Coded,
            Self::ValueDict(_) => ChunkKind::ValueDict,
            Self::LogTemplates(_) => ChunkKind::LogTemplates,
        }
    }
}

/// A check of one decoded piece's bytes: `(offset of the bytes in the
/// piece, bytes) -> passed`.
pub(super) type SubCheck<'a> = crate::decode::TaskCheck<'a>;

/// A kind's reads of a validated chunk (one implementation per kind, in the
/// kind's file).
pub(super) trait KindRows: std::fmt::Debug + Sync {
    /// Appends row `r` (below the chunk's row count, not null) to `out`.
    fn get(&self, view: ChunkView<'_>, r: usize, out: &mut Vec<u8>);
    /// The code range and the value-byte range (counted from the chunk's
    /// first value byte) of rows `rows`.
    fn span(&self, c: &ValidChunk, rows: Range<usize>) -> (Range<usize>, Range<usize>);
    /// Appends the end offsets of rows `rows`, each shifted by `shift`.
    fn extend_offsets(&self, c: &ValidChunk, rows: Range<usize>, shift: i64, out: &mut Vec<i64>);
    /// Writes rows `rows` (whose [`Self::span`] is `codes`, `bytes`) into
    /// `out`, which is `bytes.len()` long, running `check` on what it wrote;
    /// returns the bytes written and whether every check passed.
    fn decode(
        &self,
        view: ChunkView<'_>,
        rows: Range<usize>,
        codes: Range<usize>,
        bytes: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        check: Option<SubCheck<'_>>,
    ) -> (usize, bool);
    /// See [`ChunkView::rows_not_utf8`].
    fn rows_not_utf8(&self) -> Option<&[u64]>;
    /// The get context of a chunk that keeps one (`Reader::get_into`'s
    /// fast path).
    fn fast(&self) -> Option<&FastGet> {
        None
    }
}

impl ValidChunk {
    pub(super) fn row_codes_bytes(&self) -> &[u8] {
        &self.section[self.row_codes.1.clone()]
    }
    pub(super) fn row_bytes_bytes(&self) -> &[u8] {
        &self.section[self.row_bytes.1.clone()]
    }
    /// Whether row `r` is valid (not null).
    #[inline]
    pub(super) fn is_valid(&self, r: usize) -> bool {
        match &self.validity {
            Some(v) => self.section[v.start + r / 8] >> (r % 8) & 1 == 1,
            None => true,
        }
    }
}

/// A validated chunk, borrowed from the [`Reader`](crate::Reader) that validated it: its
/// dictionary, checked codes, sidecar and row boundaries, with no way to
/// hand it to another reader.
///
/// ```compile_fail
/// // A view cannot outlive its reader.
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let view = {
///     let reader = fastpair::Reader::from_bytes(file).unwrap();
///     reader.chunk(0).unwrap()
/// };
/// let _ = view.codes();
/// ```
///
/// ```compile_fail
/// // No API takes a chunk back from the caller: the old
/// // `reader.checked_codes(&chunk)` (which paired a chunk with any reader's
/// // bytes) is gone, and checked codes cannot be made without a check.
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let (a, b) = (
///     fastpair::Reader::from_bytes(file.clone()).unwrap(),
///     fastpair::Reader::from_bytes(file).unwrap(),
/// );
/// let c = a.chunk(0).unwrap();
/// let _ = b.checked_codes(&c);
/// ```
///
/// ```compile_fail
/// let file = fastpair::write::write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
/// let r = fastpair::Reader::from_bytes(file).unwrap();
/// let d = r.dictionary(0).unwrap();
/// // `new_unchecked` is private to the crate.
/// let _ = unsafe { fastpair::decode::CheckedCodes::new_unchecked(d, &[], 0, 64, &[0]) };
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ChunkView<'a> {
    pub(super) chunk: &'a ValidChunk,
    pub(super) dict: &'a Dictionary,
}

impl<'a> ChunkView<'a> {
    /// The chunk's kind.
    pub fn kind(&self) -> ChunkKind {
        self.chunk.body.kind()
    }
    /// Chunk index.
    pub fn id(&self) -> u32 {
        self.chunk.id
    }
    /// The footer entry.
    pub fn entry(&self) -> &'a ChunkEntry {
        &self.chunk.entry
    }
    /// Sidecar batch size `G`.
    pub fn batch(&self) -> u32 {
        self.chunk.batch
    }
    /// The chunk's dictionary.
    pub fn dictionary(&self) -> &'a Dictionary {
        self.dict
    }
    /// True when every token the chunk's codes use is a complete, valid
    /// UTF-8 string on its own, so every value of the chunk is valid UTF-8
    /// (found while validating the chunk; a text read checks no other
    /// bytes of it).
    pub fn tokens_utf8(&self) -> bool {
        self.chunk.tokens_utf8
    }
    /// Which rows validation did not prove UTF-8: bit `r % 64` of word `r /
    /// 64` for row `r` (the other rows are valid UTF-8 by construction:
    /// every token they use is UTF-8 on its own, or their tokens'
    /// transitions over a UTF-8 automaton, computed once per dictionary,
    /// chain from its start state back to it). `None`: no row is unproven
    /// when [`Self::tokens_utf8`], else (a value-dictionary chunk, whose
    /// codes are per distinct value) any row may be.
    pub fn rows_not_utf8(&self) -> Option<&'a [u64]> {
        self.chunk.body.rows().rows_not_utf8()
    }
    /// The codes, checked against [`Self::dictionary`].
    #[inline]
    pub fn codes(&self) -> CheckedCodes<'a> {
        let c = self.chunk;
        // SAFETY: `c` was built by `validate_chunk`, which ran
        // `CheckedCodes::check` on exactly these buffers (its own section
        // bytes and sidecar) and this dictionary (`entry.dict`); the view
        // pairs it with nothing else.
        unsafe {
            CheckedCodes::new_unchecked(
                self.dict,
                &c.section[c.codes.clone()],
                c.entry.codes as usize,
                c.batch,
                &c.sidecar,
            )
        }
    }
    /// A log-template chunk's opened payload (spec/FORMAT.md §5.8), for
    /// the search's per-template matching.
    pub(crate) fn log_column(&self) -> Option<&'a crate::logs::LogColumn> {
        match &self.chunk.body {
            Body::LogTemplates(l) => Some(l.column()),
            _ => None,
        }
    }
    /// The parts of a coded chunk as the GPU plan takes them.
    #[cfg(feature = "gpu")]
    pub(crate) fn coded_parts(&self) -> CodedParts<'a> {
        self.chunk.coded_parts()
    }
    /// Sidecar positions (one per batch, plus the end).
    pub fn sidecar(&self) -> &'a [u32] {
        &self.chunk.sidecar
    }
    /// The row code boundaries (rows + 1 values).
    pub fn row_code_bounds(&self) -> Result<Vec<u32>> {
        let c = self.chunk;
        c.row_codes.0.decode_all(
            c.row_codes_bytes(),
            "row code boundaries",
            Section::Chunk(c.id, ChunkPart::RowCodes),
            c.entry.section.offset + c.row_codes.1.start as u64,
        )
    }
    /// The row code boundaries when the reader keeps them decoded (a coded
    /// chunk read with `ReadOptions::cache_row_index`, the default): the
    /// same values as [`Self::row_code_bounds`], without a decode.
    pub fn row_code_bounds_cached(&self) -> Option<&'a [u32]> {
        self.chunk.body.rows().fast().map(|f| &f.bounds[..])
    }
    /// The row byte boundaries (rows + 1 values).
    pub fn row_byte_bounds(&self) -> Result<Vec<u32>> {
        let c = self.chunk;
        c.row_bytes.0.decode_all(
            c.row_bytes_bytes(),
            "row byte boundaries",
            Section::Chunk(c.id, ChunkPart::RowBytes),
            c.entry.section.offset + c.row_bytes.1.start as u64,
        )
    }
    /// The validity bitmap (LSB first, 1 = valid), when the chunk has nulls.
    pub fn validity(&self) -> Option<&'a [u8]> {
        self.chunk.validity.clone().map(|v| &self.chunk.section[v])
    }
    /// The packed codes as stored (§5.2).
    pub fn codes_bytes(&self) -> &'a [u8] {
        &self.chunk.section[self.chunk.codes.clone()]
    }
    /// The cascaded sidecar as stored (§6).
    pub fn sidecar_bytes(&self) -> &'a [u8] {
        &self.chunk.section[self.chunk.sidecar_range.clone()]
    }
    /// The cascaded row code boundaries as stored (§6).
    pub fn row_codes_bytes(&self) -> &'a [u8] {
        self.chunk.row_codes_bytes()
    }
    /// The cascaded row byte boundaries as stored (§6).
    pub fn row_bytes_bytes(&self) -> &'a [u8] {
        self.chunk.row_bytes_bytes()
    }
    /// The part only this chunk's kind has, as stored: a value-dictionary
    /// chunk's value index (§5.6), a log-template chunk's payload (§5.8);
    /// empty for a coded chunk.
    pub fn kind_part_bytes(&self) -> &'a [u8] {
        &self.chunk.section[self.chunk.kind_part.clone()]
    }
    /// The decoded side of a value-dictionary chunk (§5.6): the distinct
    /// values back to back, their `D + 1` byte offsets, each row's value
    /// number (`u32::MAX` for a null row) and the rows' `rows + 1` byte
    /// offsets. `None` for a chunk that stores every row's codes. All checked
    /// when the chunk was validated.
    pub fn value_dict_parts(&self) -> Option<ValueDictParts<'a>> {
        match &self.chunk.body {
            Body::ValueDict(v) => Some(v.parts()),
            Body::Coded(_) | Body::LogTemplates(_) => None,
        }
    }
    /// A value-dictionary chunk's row value numbers as the GPU gather reads
    /// them (`ValueDict::device_index`: laid out on first use and kept).
    /// `None` for a chunk of another kind.
    #[cfg(feature = "gpu")]
    pub(crate) fn value_device_index(&self) -> Option<&'a [u8]> {
        match &self.chunk.body {
            Body::ValueDict(v) => Some(v.device_index()),
            Body::Coded(_) | Body::LogTemplates(_) => None,
        }
    }
    /// What a log-template chunk (§5.8) holds and what each part of its
    /// payload costs: templates with their slot types, slot types, bytes
    /// per part. `None` for the other kinds.
    pub fn log_summary(&self) -> Option<crate::logs::LogSummary> {
        match &self.chunk.body {
            Body::LogTemplates(l) => Some(l.summary()),
            Body::Coded(_) | Body::ValueDict(_) => None,
        }
    }
    /// The opened payload of a log-template chunk (§5.8) and its rows'
    /// `rows + 1` byte offsets, both checked when the chunk was validated.
    /// `None` for a chunk of another kind. For the GPU decoder.
    #[cfg(feature = "gpu")]
    pub(crate) fn log_parts(&self) -> Option<(&'a crate::logs::LogColumn, &'a [u64])> {
        match &self.chunk.body {
            Body::LogTemplates(l) => Some(l.parts()),
            Body::Coded(_) | Body::ValueDict(_) => None,
        }
    }

    /// A log-template chunk's tables for the GPU decoder, laid out on the
    /// chunk's first GPU use and kept with the validated chunk (the
    /// streaming scan's batches and later scans reuse them).
    #[cfg(feature = "gpu")]
    pub(crate) fn log_device_image(&self) -> Option<&'a crate::logs::DeviceImage> {
        match &self.chunk.body {
            Body::LogTemplates(l) => Some(l.device_image()),
            Body::Coded(_) | Body::ValueDict(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkKind;
    use crate::write::{write_to_vec, WriterOptions};
    use crate::Reader;

    /// The kind the footer entry gives, the kind the validated chunk keeps
    /// and the parts it exposes agree, for both kinds.
    #[test]
    fn kind_of_entry_matches_the_validated_chunk() {
        // Few distinct values (a value dictionary), then distinct ones.
        let repeated: Vec<Vec<u8>> = (0..4000).map(|i| format!("v{}", i % 3).into()).collect();
        let distinct: Vec<Vec<u8>> = (0..4000).map(|i| format!("row {i}").into()).collect();
        let rows = repeated.iter().chain(&distinct).map(|r| Some(&r[..]));
        // (`row {i}` is one template: `auto` would write log templates.)
        let opts = WriterOptions::default()
            .with_chunk_rows(4000)
            .with_log_templates(crate::write::LogTemplates::Off);
        let r = Reader::from_bytes(write_to_vec(rows, opts).unwrap()).unwrap();
        assert_eq!(r.num_chunks(), 2);
        let kinds: Vec<ChunkKind> = (0..2).map(|i| r.chunk_info(i).kind()).collect();
        assert_eq!(kinds, [ChunkKind::ValueDict, ChunkKind::Coded]);
        for (i, &kind) in kinds.iter().enumerate() {
            let view = r.chunk(i).unwrap();
            assert_eq!(view.kind(), kind);
            assert_eq!(
                view.value_dict_parts().is_some(),
                kind == ChunkKind::ValueDict
            );
            assert_eq!(
                kind.code_rows(view.entry()),
                view.row_code_bounds().unwrap().len() - 1
            );
        }
    }
}
