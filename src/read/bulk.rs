//! Bulk reads: a row range decoded in parallel, across chunks and across
//! sidecar batches within a chunk, into Arrow layout. A chunk is seen only
//! through its kind's `KindRows` (`read/chunk/mod.rs`).

use std::ops::Range;

use rayon::prelude::*;

use super::chunk::SubCheck;
use super::{Column, Reader};
use crate::error::{Error, Result};

impl Reader {
    /// Decodes every row. Checks the whole file, every dictionary first
    /// (in versions 1–3 a dictionary may be used by no chunk: it is checked
    /// too), so a damaged file is an error here even where point reads of
    /// its healthy chunks succeed (spec/FORMAT.md §9). So does any read of
    /// the range of every row.
    pub fn read_all(&self) -> Result<Column> {
        self.read_range(0..self.rows())
    }

    /// Decodes rows `rows` into Arrow layout, in parallel across chunks and
    /// across sidecar batches within a chunk.
    pub fn read_range(&self, rows: Range<u64>) -> Result<Column> {
        let mut col = Column::default();
        self.read_range_into(rows, &mut col)?;
        Ok(col)
    }

    /// [`Self::read_range`] into `col`, reusing its buffers (a scan loop that
    /// decodes chunk after chunk avoids fresh allocations and page faults).
    pub fn read_range_into(&self, rows: Range<u64>, col: &mut Column) -> Result<()> {
        self.read_range_impl(rows, col, None).map(|_| ())
    }

    /// [`Self::read_range_into`] that runs `check` on the decoded values
    /// piece by piece, each right after the decoder wrote it (while it is
    /// in cache), instead of in a second pass over the column: `check(at,
    /// bytes, offsets, utf8)` gets a piece's first byte in `col.values`, its
    /// bytes, the column's row offsets, and whether validation found that
    /// every token of the piece's chunk is valid UTF-8 on its own (then the
    /// piece's rows are UTF-8 by construction). Returns whether every check
    /// passed (the column is decoded either way).
    #[cfg(feature = "arrow")]
    pub(crate) fn read_range_checked(
        &self,
        rows: Range<u64>,
        col: &mut Column,
        check: PieceCheck<'_>,
    ) -> Result<bool> {
        self.read_range_impl(rows, col, Some(check))
    }

    fn read_range_impl(
        &self,
        rows: Range<u64>,
        col: &mut Column,
        check: Option<PieceCheck<'_>>,
    ) -> Result<bool> {
        self.check_range(&rows)?;
        if rows == (0..self.rows()) {
            // The whole column: every dictionary first, used or not (as
            // `read_all` promises), so the first error is eager open's.
            self.load_dictionaries()?;
        }
        let n = (rows.end - rows.start) as usize;
        let pieces = self.plan(rows.clone())?;
        let total: u64 = pieces.iter().map(|p| p.bytes.len() as u64).sum();
        let needed = total + 8 * (n as u64 + 1);
        if let Some(cap) = self.opts.memory_cap {
            if needed > cap {
                return Err(Error::MemoryCap { needed, cap });
            }
        }
        let mut values = std::mem::take(&mut col.values);
        values.clear();
        values.reserve(total as usize);
        let mut offsets = std::mem::take(&mut col.offsets);
        offsets.clear();
        offsets.reserve(n + 1);
        offsets.push(0i64);
        let mut any_null = false;
        let mut base = 0i64;
        for p in &pieces {
            let c = self.valid_chunk(p.chunk)?;
            let shift = base - p.bytes.start as i64;
            c.body
                .rows()
                .extend_offsets(c, p.rows.clone(), shift, &mut offsets);
            base += p.bytes.len() as i64;
            any_null |= c.validity.is_some();
        }
        let checked = self.decode_values(
            &pieces,
            total as usize,
            &mut values,
            check.map(|c| (c, &offsets[..])),
        )?;
        let validity = if any_null {
            let mut bits = vec![0u8; n.div_ceil(8)];
            let mut k = 0usize;
            for p in &pieces {
                let c = self.valid_chunk(p.chunk)?;
                for r in p.rows.clone() {
                    let valid = c.is_valid(r);
                    bits[k / 8] |= (valid as u8) << (k % 8);
                    k += 1;
                }
            }
            Some(bits)
        } else {
            None
        };
        *col = Column {
            values,
            offsets,
            validity,
        };
        Ok(checked)
    }

    /// Rejects reversed ranges and ranges past the last row.
    fn check_range(&self, rows: &Range<u64>) -> Result<()> {
        if rows.start > rows.end {
            return Err(Error::InvalidArgument(format!(
                "row range {}..{} is reversed",
                rows.start, rows.end
            )));
        }
        if rows.end > self.rows() {
            return Err(Error::RowOutOfRange {
                row: rows.end,
                rows: self.rows(),
            });
        }
        Ok(())
    }

    /// Decodes the values of rows `rows`, back to back, into `values`
    /// (cleared first; its buffer is reused) — no offsets, no validity: for
    /// consumers that want the concatenated bytes.
    pub fn read_values_into(&self, rows: Range<u64>, values: &mut Vec<u8>) -> Result<()> {
        self.check_range(&rows)?;
        let pieces = self.plan(rows)?;
        let total: u64 = pieces.iter().map(|p| p.bytes.len() as u64).sum();
        if let Some(cap) = self.opts.memory_cap {
            if total > cap {
                return Err(Error::MemoryCap { needed: total, cap });
            }
        }
        values.clear();
        values.reserve(total as usize);
        self.decode_values(&pieces, total as usize, values, None)
            .map(|_| ())
    }

    /// Decodes `pieces` (of `total` bytes) into `values`, which is empty with
    /// at least `total` bytes of capacity; runs `check` (with the column's
    /// offsets) on each decoded task's bytes and returns whether all passed.
    fn decode_values(
        &self,
        pieces: &[Piece],
        total: usize,
        values: &mut Vec<u8>,
        check: Option<(PieceCheck<'_>, &[i64])>,
    ) -> Result<bool> {
        debug_assert!(values.is_empty() && values.capacity() >= total);
        // Split the (uninitialized) output among pieces and decode them
        // concurrently; every piece must fill its part exactly.
        let mut slices = Vec::with_capacity(pieces.len());
        let mut rest = &mut values.spare_capacity_mut()[..total];
        let mut at = 0usize;
        for p in pieces {
            let (s, t) = rest.split_at_mut(p.bytes.len());
            slices.push((at, s));
            at += p.bytes.len();
            rest = t;
        }
        let (written, ok) = pieces
            .par_iter()
            .zip(slices)
            .map(|(p, (at, out))| -> Result<(usize, bool)> {
                let c = self.chunk(p.chunk)?;
                let want = out.len();
                let utf8 = c.chunk.tokens_utf8;
                let sub = check.map(|(f, offsets)| {
                    move |s: usize, bytes: &[u8]| f(at + s, bytes, offsets, utf8)
                });
                let (got, ok) = c.chunk.body.rows().decode(
                    c,
                    p.rows.clone(),
                    p.codes.clone(),
                    p.bytes.clone(),
                    out,
                    sub.as_ref().map(|f| f as SubCheck<'_>),
                );
                Ok((got.min(want), ok))
            })
            .try_reduce(|| (0, true), |a, b| Ok((a.0 + b.0, a.1 && b.1)))?;
        // Validation proved each piece's codes decode to exactly its bytes.
        assert_eq!(
            written, total,
            "decoded length disagrees with validated boundaries"
        );
        // SAFETY: each piece initialized its whole slice (got == want for every
        // piece, as the sum of min(got, want) equals the total), and the slices
        // tile 0..total of the capacity.
        unsafe { values.set_len(total) };
        Ok(ok)
    }

    /// The per-chunk pieces of a row range (validating each chunk touched).
    fn plan(&self, rows: Range<u64>) -> Result<Vec<Piece>> {
        if rows.start == rows.end {
            return Ok(Vec::new());
        }
        let (first, _) = self.locate(rows.start)?;
        let (last, _) = self.locate(rows.end - 1)?;
        // Every chunk's result, then the first error in chunk order: a
        // short-circuiting parallel collect returns whichever error a
        // thread met first, so a file damaged in two chunks named either
        // from run to run (and not the one eager validation names).
        let all: Vec<Result<Piece>> = (first..=last)
            .into_par_iter()
            .map(|i| {
                let c = self.valid_chunk(i)?;
                let f = self.first_rows[i];
                let lo = (rows.start.max(f) - f) as usize;
                let hi = (rows.end.min(self.first_rows[i + 1]) - f) as usize;
                let (codes, bytes) = c.body.rows().span(c, lo..hi);
                Ok(Piece {
                    chunk: i,
                    rows: lo..hi,
                    codes,
                    bytes,
                })
            })
            .collect();
        all.into_iter().collect()
    }
}

/// A check of a bulk read's decoded values, piece by piece
/// ([`Reader::read_range_checked`]): `(first byte in the column's values,
/// the piece's bytes, the column's row offsets, whether the piece's chunk
/// uses only tokens that are valid UTF-8 on their own) -> passed`.
pub(crate) type PieceCheck<'a> = &'a (dyn Fn(usize, &[u8], &[i64], bool) -> bool + Sync);

/// Part of a row range that lies in one chunk.
#[derive(Clone, Debug)]
struct Piece {
    chunk: usize,
    rows: Range<usize>,
    /// The rows' codes (empty where the kind does not decode codes).
    codes: Range<usize>,
    /// The rows' value bytes, counted from the chunk's first.
    bytes: Range<usize>,
}
