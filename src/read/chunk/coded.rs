//! Coded chunks: every row's codes back to back (spec/FORMAT.md §5.2–§5.5).
//! Their read state (the get context), their reads once validated whole and
//! their point read.

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;

use super::head::ChunkHead;
use super::{part, ChunkView, KindRows, SubCheck, ValidChunk};
use crate::decode;
use crate::dict::Dictionary;
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::read::Reader;

/// What a validated coded chunk keeps for reads.
#[derive(Debug)]
pub(in crate::read) struct Coded {
    /// What `get` reads when the chunk's row boundaries are kept decoded
    /// (`ReadOptions::cache_row_index`); `None` without the row index.
    fast: Option<FastGet>,
    /// When some token is not UTF-8 on its own: bit `r % 64` of word `r /
    /// 64` is set for each row `r` that validation could not prove UTF-8
    /// from its codes alone (its tokens' transitions over the UTF-8
    /// automaton do not lead from the start state back to it: the row is not
    /// UTF-8). The other rows are valid UTF-8 by construction.
    rows_not_utf8: Option<Vec<u64>>,
}

impl Coded {
    /// The read state of a coded chunk that passed §9 steps 8–13: `bounds`
    /// are its row code boundaries (checked in steps 10 and 12: first 0,
    /// last the code count, each row's token lengths add up, so monotone),
    /// `codes` its packed codes (checked against `dict` in step 11),
    /// `validity` its bitmap, `rows_not_utf8` step 12's flags (kept unless
    /// `tokens_utf8`).
    pub(super) fn new(
        cache_row_index: bool,
        bounds: Vec<u32>,
        codes: Bytes,
        dict: &Dictionary,
        validity: Option<Bytes>,
        tokens_utf8: bool,
        rows_not_utf8: Vec<u64>,
    ) -> Self {
        let fast = cache_row_index.then(|| FastGet {
            bounds,
            codes,
            bits: dict.code_bits(),
            validity,
            tokens: decode::tokens::Layout::of(dict),
        });
        Self {
            fast,
            rows_not_utf8: (!tokens_utf8).then_some(rows_not_utf8),
        }
    }
}

impl KindRows for Coded {
    fn get(&self, view: ChunkView<'_>, r: usize, out: &mut Vec<u8>) {
        let c = view.chunk;
        let (a, b) = match &self.fast {
            Some(f) => (f.bounds[r], f.bounds[r + 1]),
            None => c.row_codes.0.get_pair(c.row_codes_bytes(), r),
        };
        decode::decode_append(view.dict, &view.codes(), a as usize..b as usize, out);
    }

    fn span(&self, c: &ValidChunk, rows: Range<usize>) -> (Range<usize>, Range<usize>) {
        let (rcb, rbb) = (c.row_codes_bytes(), c.row_bytes_bytes());
        let (lo, hi) = (rows.start, rows.end);
        let (c0, c1) = (c.row_codes.0.get(rcb, lo), c.row_codes.0.get(rcb, hi));
        let (b0, b1) = (c.row_bytes.0.get(rbb, lo), c.row_bytes.0.get(rbb, hi));
        (c0 as usize..c1 as usize, b0 as usize..b1 as usize)
    }

    fn extend_offsets(&self, c: &ValidChunk, rows: Range<usize>, shift: i64, out: &mut Vec<i64>) {
        // The sequence passed `decode_all` when the chunk was validated:
        // decode the needed blocks straight into the offsets.
        c.row_bytes.0.extend_i64(
            c.row_bytes_bytes(),
            rows.start + 1..rows.end + 1,
            shift,
            out,
        );
    }

    fn decode(
        &self,
        view: ChunkView<'_>,
        _rows: Range<usize>,
        codes: Range<usize>,
        bytes: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        check: Option<SubCheck<'_>>,
    ) -> (usize, bool) {
        match check {
            None => (
                decode::decode_range_parallel_uninit(
                    view.dictionary(),
                    &view.codes(),
                    codes,
                    bytes.start,
                    out,
                ),
                true,
            ),
            Some(f) => decode::decode_range_parallel_checked(
                view.dictionary(),
                &view.codes(),
                codes,
                bytes.start,
                out,
                f,
            ),
        }
    }

    fn rows_not_utf8(&self) -> Option<&[u64]> {
        self.rows_not_utf8.as_deref()
    }

    fn fast(&self) -> Option<&FastGet> {
        self.fast.as_ref()
    }
}

/// A validated coded chunk's random-read context, built once at validation:
/// everything `Reader::get_into` touches, in one place, with the checks it
/// would otherwise repeat per row proven here once.
#[derive(Debug)]
pub(in crate::read) struct FastGet {
    /// Row code boundaries, `rows + 1` of them: validated to start at 0, be
    /// monotone (each row's tokens add up to its byte length) and end at the
    /// chunk's code count.
    pub(in crate::read) bounds: Vec<u32>,
    /// The packed codes (`codes::packed_len(bits, codes)` bytes at least),
    /// every one checked below the dictionary's token count.
    pub(in crate::read) codes: Bytes,
    /// Code width (12 or 16).
    pub(in crate::read) bits: u8,
    /// The validity bitmap (`rows.div_ceil(8)` bytes), when the chunk has nulls.
    pub(in crate::read) validity: Option<Bytes>,
    /// The chunk's dictionary's tokens (its dense table, or its stored
    /// planes in place: `decode::tokens::Layout`), so that a get needs no
    /// dictionary lookup. The pointers point into the buffers of a
    /// dictionary in `Reader::dicts`, set when first used (before the chunk
    /// that built this was validated) and never changed after; it is
    /// dropped only by `Reader::release_dictionary` (`&mut Reader`), which
    /// first checks that no chunk naming it is validated, i.e. that no
    /// `FastGet` pointing into it exists; and a `FastGet` is only reached
    /// through the reader that built it, so they outlive every use.
    pub(in crate::read) tokens: decode::tokens::Layout,
}

impl FastGet {
    /// Row `r`'s code range, or `None` for a null row.
    ///
    /// # Safety
    /// `r + 1 < self.bounds.len()` (`r` is below the chunk's row count).
    #[inline(always)]
    pub(in crate::read) unsafe fn row(&self, r: usize) -> Option<Range<usize>> {
        if let Some(v) = &self.validity {
            debug_assert!(r / 8 < v.len());
            // SAFETY: the bitmap holds `rows.div_ceil(8)` bytes (`ChunkSection::parse`
            // checks its length) and `r < rows` (the caller's contract).
            if unsafe { *v.get_unchecked(r / 8) } >> (r % 8) & 1 == 0 {
                return None;
            }
        }
        debug_assert!(r + 1 < self.bounds.len());
        // SAFETY: the caller's contract.
        let (a, b) = unsafe {
            (
                *self.bounds.get_unchecked(r),
                *self.bounds.get_unchecked(r + 1),
            )
        };
        Some(a as usize..b as usize)
    }
}

impl Reader {
    /// A point read's code range of row `r` of coded chunk `i` (whose head
    /// is `head`), checked (§9, point reads); `None` for a null row.
    pub(super) fn coded_row(
        &self,
        i: usize,
        head: &ChunkHead,
        r: usize,
    ) -> Result<Option<Range<usize>>> {
        let entry = self.footer.chunks[i];
        let (a, b) = self.row_code_pair(i, head, r, entry.rows as usize)?;
        if head.header.has_validity && !self.row_valid_bit(i, head, r)? {
            if a != b {
                return Err(Error::corrupt(
                    Section::Chunk(i as u32, ChunkPart::Validity),
                    entry.section.offset + head.header.parts()[part::VALIDITY].start as u64,
                    Invariant::NullWithValue { row: r as u64 },
                ));
            }
            return Ok(None);
        }
        Ok(Some(a..b))
    }
}
