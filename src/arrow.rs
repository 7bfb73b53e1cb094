//! Arrow in and out (feature `arrow`).
//!
//! * In: [`WriteArrow::write_array`] pushes every row of a `Utf8`,
//!   `LargeUtf8`, `Binary`, `LargeBinary`, `Utf8View`, `BinaryView` or
//!   dictionary-encoded array of those (any key type) into a [`Writer`],
//!   nulls included (a null key or a key pointing at a null value is a null
//!   row). A `Null`-typed array writes that many null rows.
//! * Out: [`large_binary`], [`large_string`] and [`string_view`] /
//!   [`binary_view`] turn a decoded [`Column`] into an Arrow array **without
//!   copying its values**: the values `Vec` the decoder filled becomes the
//!   array's value buffer (`Buffer::from_vec` takes the allocation), the `i64`
//!   offsets become its offsets and the validity bitmap its null buffer.
//! * [`ReadArrow`] adds [`ReadArrow::read_arrow`], [`ReadArrow::take_arrow`]
//!   and [`ReadArrow::batches`] (a [`RecordBatch`] iterator of one column,
//!   configurable rows per batch, so a column larger than memory streams) to
//!   [`Reader`].
//!
//! ## UTF-8
//! The file format does not record whether the rows were text: fastpair
//! stores bytes, and a file is untrusted. [`ArrowType::LargeUtf8`] /
//! [`ArrowType::Utf8View`] therefore **validate on read**. A text read of a
//! [`Reader`] ([`ReadArrow::read_arrow`], [`read_decoded`]) uses what chunk
//! validation found while it walked every code: a row whose codes are all
//! tokens that are complete, valid UTF-8 on their own is valid UTF-8 by
//! construction, and so is a row whose tokens cut characters but whose
//! tokens' transitions over a UTF-8 automaton (computed once per dictionary
//! from its tokens, never from a flag in the file) chain from the start state
//! back to it ([`crate::read::ChunkView::rows_not_utf8`]). In a coded chunk
//! that leaves only the rows that are not UTF-8; they, and the rows of
//! value-dictionary chunks, are checked (SIMD, in parallel; or, when they are
//! most of the range, each decode task's bytes right after the task wrote
//! them). The columns
//! given to [`large_string`] / [`string_view`] are checked whole. Invalid
//! bytes give [`Error::InvalidArgument`] naming the first bad row. Binary
//! outputs are never checked.
//!
//! ## Which output
//! `LargeBinary`/`LargeUtf8` are the decoder's own layout: nothing is built
//! but the array header. `Utf8View`/`BinaryView` cost one 16-byte view per
//! row on top (the values are still shared, not copied); they are cheaper for
//! consumers that compare, sort or filter (short values sit inline in the
//! view) and for [`ReadArrow::take_arrow`] of rows no longer than 12 bytes,
//! which then need no value buffer at all.

use std::ops::Range;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{BinaryViewType, StringViewType};
use arrow_array::{
    Array, ArrayRef, BinaryViewArray, GenericByteViewArray, LargeBinaryArray, LargeStringArray,
    RecordBatch, StringViewArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{Error, Result};
use crate::read::{Column, Reader};
use crate::write::{Sink, Writer};

/// The Arrow type a column is read into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ArrowType {
    /// `LargeBinary`: the decoder's layout, no check (default).
    #[default]
    LargeBinary,
    /// `LargeUtf8`: the decoder's layout, UTF-8 validated once on read.
    LargeUtf8,
    /// `BinaryView`: views over the decoder's value buffer.
    BinaryView,
    /// `Utf8View`: views over the decoder's value buffer, UTF-8 validated.
    Utf8View,
}

impl ArrowType {
    /// The Arrow data type.
    pub fn data_type(self) -> DataType {
        match self {
            Self::LargeBinary => DataType::LargeBinary,
            Self::LargeUtf8 => DataType::LargeUtf8,
            Self::BinaryView => DataType::BinaryView,
            Self::Utf8View => DataType::Utf8View,
        }
    }
}

fn arrow_err(what: &str, e: arrow_schema::ArrowError) -> Error {
    Error::InvalidArgument(format!("{what}: {e}"))
}

/// Writing Arrow arrays: implemented for every [`Writer`].
pub trait WriteArrow {
    /// Pushes every row of `array` (see the module docs for accepted types),
    /// in order, nulls as nulls. An unsupported type is
    /// [`Error::InvalidArgument`] and pushes nothing.
    fn write_array(&mut self, array: &dyn Array) -> Result<()>;
}

impl<S: Sink> WriteArrow for Writer<S> {
    fn write_array(&mut self, array: &dyn Array) -> Result<()> {
        let rows = RowAccess::new(array)?;
        for i in 0..array.len() {
            self.push(rows.get(i))?;
        }
        Ok(())
    }
}

/// Row access to an accepted array: `get(i)` is `None` for a null row.
enum RowAccess<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a LargeStringArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    Utf8View(&'a StringViewArray),
    BinaryView(&'a BinaryViewArray),
    Null,
    Dict {
        keys: Vec<usize>,
        nulls: Option<NullBuffer>,
        values: Box<RowAccess<'a>>,
    },
}

impl<'a> RowAccess<'a> {
    fn new(a: &'a dyn Array) -> Result<Self> {
        Ok(match a.data_type() {
            DataType::Utf8 => Self::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => Self::LargeUtf8(a.as_string::<i64>()),
            DataType::Binary => Self::Binary(a.as_binary::<i32>()),
            DataType::LargeBinary => Self::LargeBinary(a.as_binary::<i64>()),
            DataType::Utf8View => Self::Utf8View(a.as_string_view()),
            DataType::BinaryView => Self::BinaryView(a.as_binary_view()),
            DataType::Null => Self::Null,
            DataType::Dictionary(_, v) if !matches!(**v, DataType::Dictionary(..)) => {
                let d = a.as_any_dictionary();
                let values = Box::new(Self::new(d.values().as_ref())?);
                // `normalized_keys` panics on empty values; then every row
                // must be null (a valid key would point past the values).
                let keys = if d.values().is_empty() {
                    vec![0; a.len()]
                } else {
                    d.normalized_keys()
                };
                let nulls = a.logical_nulls();
                if d.values().is_empty() && nulls.as_ref().map_or(a.len(), |n| n.null_count()) != a.len() {
                    return Err(Error::InvalidArgument(
                        "dictionary array has valid rows but no values".into(),
                    ));
                }
                Self::Dict {
                    keys,
                    nulls,
                    values,
                }
            }
            t => {
                return Err(Error::InvalidArgument(format!(
                    "cannot write an Arrow array of type {t}: fastpair stores strings and bytes \
                     (Utf8, LargeUtf8, Binary, LargeBinary, Utf8View, BinaryView, or a dictionary of those)"
                )))
            }
        })
    }

    fn get(&self, i: usize) -> Option<&'a [u8]> {
        fn pick<'v, T: AsRef<[u8]> + ?Sized + 'v>(
            a: &dyn Array,
            i: usize,
            v: impl FnOnce() -> &'v T,
        ) -> Option<&'v [u8]> {
            a.is_valid(i).then(|| v().as_ref())
        }
        match self {
            Self::Utf8(a) => pick(*a, i, || a.value(i)),
            Self::LargeUtf8(a) => pick(*a, i, || a.value(i)),
            Self::Binary(a) => pick(*a, i, || a.value(i)),
            Self::LargeBinary(a) => pick(*a, i, || a.value(i)),
            Self::Utf8View(a) => pick(*a, i, || a.value(i)),
            Self::BinaryView(a) => pick(*a, i, || a.value(i)),
            Self::Null => None,
            Self::Dict {
                keys,
                nulls,
                values,
            } => {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    None
                } else {
                    values.get(keys[i])
                }
            }
        }
    }
}

/// The parts of a column as Arrow buffers, values and offsets zero-copy.
fn parts(col: Column) -> Result<(OffsetBuffer<i64>, Buffer, Option<NullBuffer>)> {
    parts_of(col, false)
}

/// [`parts`]; `reader_offsets`: the offsets were built by a [`Reader`] bulk
/// read, so they never decrease (see [`Decoded`]) and are not walked again.
fn parts_of(
    col: Column,
    reader_offsets: bool,
) -> Result<(OffsetBuffer<i64>, Buffer, Option<NullBuffer>)> {
    let n = col.len();
    if col.offsets.is_empty() {
        // `Column::default()`: zero rows.
        return Ok((
            OffsetBuffer::new_empty(),
            Buffer::from_vec(col.values),
            None,
        ));
    }
    if col.offsets[0] < 0
        || !(reader_offsets || offsets_monotonic(&col.offsets))
        || col.offsets[n] as u64 > col.values.len() as u64
    {
        return Err(Error::InvalidArgument(
            "column offsets are not monotonic within the values".into(),
        ));
    }
    let nulls = match col.validity {
        None => None,
        Some(bits) => {
            if bits.len() < n.div_ceil(8) {
                return Err(Error::InvalidArgument(format!(
                    "column validity has {} bytes for {n} rows",
                    bits.len()
                )));
            }
            let b = BooleanBuffer::new(Buffer::from_vec(bits), 0, n);
            Some(NullBuffer::new(b)).filter(|nb| nb.null_count() > 0)
        }
    };
    debug_assert!(offsets_monotonic(&col.offsets));
    // SAFETY: checked above: non-empty, starts at >= 0, never decreases
    // (the conditions of `OffsetBuffer::new`, whose own check would be a
    // second pass over the offsets). With `reader_offsets`, "never
    // decreases" holds by construction: `Reader::read_range_impl` builds
    // each piece's offsets from the chunk's row byte boundaries (a sequence
    // `validate_chunk` decoded whole with `Sequence::decode_all`, which
    // rejects any u32 overflow, so it never decreases) shifted to start
    // where the previous piece ended, or from a value-dictionary chunk's
    // row starts (prefix sums checked by `ValueDict::check`).
    let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(col.offsets)) };
    Ok((offsets, Buffer::from_vec(col.values), nulls))
}

/// True when no offset is smaller than the one before (in parallel over
/// blocks; each block also checks the pair across its start).
fn offsets_monotonic(o: &[i64]) -> bool {
    use rayon::prelude::*;
    const BLOCK: usize = 1 << 16;
    o.par_chunks(BLOCK).enumerate().all(|(k, c)| {
        let prev = if k == 0 { c[0] } else { o[k * BLOCK - 1] };
        let mut bad = prev > c[0];
        let mut last = c[0];
        for &x in c {
            bad |= last > x;
            last = x;
        }
        !bad
    })
}

/// `col` as a `LargeBinary` array; the value and offset buffers are the
/// column's own allocations (no copy).
pub fn large_binary(col: Column) -> Result<LargeBinaryArray> {
    let (o, v, n) = parts(col)?;
    LargeBinaryArray::try_new(o, v, n).map_err(|e| arrow_err("building a LargeBinary array", e))
}

/// `col` as a `LargeUtf8` array (no copy). UTF-8 is validated once, in
/// parallel over row-aligned pieces of the value buffer with SIMD
/// (`simdutf8`), plus a char-boundary check at every row offset; invalid bytes
/// are an [`Error::InvalidArgument`] naming the first bad row.
pub fn large_string(col: Column) -> Result<LargeStringArray> {
    let (o, v, n) = parts(col)?;
    check_utf8(&o[..], v.as_slice(), 0)?;
    // SAFETY: `parts` checked that the offsets start at >= 0, never
    // decrease and end within `v`, and that the null buffer has one bit per
    // row; `check_utf8` checked that every row's bytes are UTF-8 (the
    // whole range between the first and last offset is UTF-8 and every
    // offset is a char boundary). These are `LargeStringArray::try_new`'s
    // conditions.
    Ok(unsafe { LargeStringArray::new_unchecked(o, v, n) })
}

/// Checks that every row `values[o[i]..o[i+1]]` is UTF-8; the error names
/// the first bad row, numbered from `first` (the column's row number of
/// `o[0]`, so a range's error names the file's row).
fn check_utf8(offs: &[i64], values: &[u8], first: u64) -> Result<()> {
    use rayon::prelude::*;
    let rows = offs.len().saturating_sub(1);
    if rows == 0 {
        return Ok(());
    }
    // Row-aligned pieces of about 1 MiB: each piece, valid on its own, starts
    // and ends on a char boundary, so all valid means the range is valid.
    let total = (offs[rows] - offs[0]) as usize;
    let pieces = (total >> 20).clamp(1, rows);
    let bounds: Vec<usize> = (0..=pieces).map(|k| k * rows / pieces).collect();
    let ok = bounds.par_windows(2).all(|w| {
        let (a, b) = (offs[w[0]] as usize, offs[w[1]] as usize);
        // All ASCII: valid, and every byte is a char boundary (no second
        // pass over the offsets).
        values[a..b].is_ascii()
            || simdutf8::basic::from_utf8(&values[a..b]).is_ok()
                && offs[w[0]..w[1]]
                    .iter()
                    .all(|&x| (x as usize) >= values.len() || (values[x as usize] as i8) >= -0x40)
    });
    if ok {
        return Ok(());
    }
    let bad = (0..rows)
        .find(|&i| std::str::from_utf8(&values[offs[i] as usize..offs[i + 1] as usize]).is_err())
        .unwrap_or(0);
    Err(Error::InvalidArgument(format!(
        "row {} is not valid UTF-8; read the column as binary",
        first + bad as u64
    )))
}

/// Builds views over `values` split into buffers of at most `i32::MAX`
/// bytes (views hold 32-bit offsets); the buffers are slices of one
/// allocation, the column's own.
fn views(
    offsets: OffsetBuffer<i64>,
    values: Buffer,
    nulls: Option<NullBuffer>,
) -> (ScalarBuffer<u128>, Vec<Buffer>, Option<NullBuffer>) {
    let mut views = Vec::with_capacity(offsets.len().saturating_sub(1));
    let mut buffers = Vec::new();
    let limit = i32::MAX as i64;
    let mut buf_start = 0i64; // start of the current buffer in `values`
    let mut buf_index = 0u32;
    let mut any_long = false;
    for w in offsets.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = (b - a) as usize;
        let bytes = &values.as_slice()[a as usize..b as usize];
        if len <= 12 {
            let mut raw = [0u8; 16];
            raw[..4].copy_from_slice(&(len as u32).to_le_bytes());
            raw[4..4 + len].copy_from_slice(bytes);
            views.push(u128::from_le_bytes(raw));
            continue;
        }
        if b - buf_start > limit {
            buffers.push(values.slice_with_length(buf_start as usize, (a - buf_start) as usize));
            buf_start = a;
            buf_index += 1;
        }
        any_long = true;
        let mut raw = [0u8; 16];
        raw[..4].copy_from_slice(&(len as u32).to_le_bytes());
        raw[4..8].copy_from_slice(&bytes[..4]);
        raw[8..12].copy_from_slice(&buf_index.to_le_bytes());
        raw[12..].copy_from_slice(&((a - buf_start) as u32).to_le_bytes());
        views.push(u128::from_le_bytes(raw));
    }
    if any_long {
        let end = offsets.last().copied().unwrap_or(0);
        buffers.push(values.slice_with_length(buf_start as usize, (end - buf_start) as usize));
    }
    (ScalarBuffer::from(views), buffers, nulls)
}

/// `col` as a `BinaryView` array: one view per row, values shared with the
/// column (no copy; rows of at most 12 bytes are inline in their view).
pub fn binary_view(col: Column) -> Result<BinaryViewArray> {
    let (o, v, n) = parts(col)?;
    let (v, b, n) = views(o, v, n);
    GenericByteViewArray::<BinaryViewType>::try_new(v, b, n)
        .map_err(|e| arrow_err("building a BinaryView array", e))
}

/// `col` as a `Utf8View` array (values shared; UTF-8 checked like
/// [`large_string`], then once more per view by arrow-rs's safe constructor).
pub fn string_view(col: Column) -> Result<StringViewArray> {
    let (o, v, n) = parts(col)?;
    check_utf8(&o[..], v.as_slice(), 0)?;
    let (v, b, n) = views(o, v, n);
    GenericByteViewArray::<StringViewType>::try_new(v, b, n)
        .map_err(|e| arrow_err("building a Utf8View array", e))
}

/// Rows of a reader decoded for an Arrow array of one type
/// ([`read_decoded`]); a text column's UTF-8 was checked while decoding.
///
/// Only [`read_decoded`] makes one: [`Decoded::into_array`] trusts its
/// UTF-8 mark (an unchecked `LargeStringArray`), so safe code cannot build a
/// `Decoded` around arbitrary bytes:
///
/// ```compile_fail
/// use fastpair::arrow::{ArrowType, Decoded};
/// let col = fastpair::Column { values: vec![0xff], offsets: vec![0, 1], validity: None };
/// let forged = Decoded { col, ty: ArrowType::LargeUtf8, utf8_checked: true };
/// ```
#[derive(Debug)]
pub struct Decoded {
    col: Column,
    ty: ArrowType,
    utf8_checked: bool,
    /// The reader's row number of the column's first row (for errors).
    first: u64,
}

impl Decoded {
    /// The decoded column (its buffers become the array's).
    pub fn column(&self) -> &Column {
        &self.col
    }

    /// The array (no copy; a text column is not checked again).
    pub fn into_array(self) -> Result<ArrayRef> {
        // The offsets are a reader's (only `read_decoded` makes a `Decoded`).
        let (o, v, n) = parts_of(self.col, true)?;
        Ok(match self.ty {
            ArrowType::LargeUtf8 if self.utf8_checked => {
                // SAFETY: `parts_of` checked (or the reader built) the
                // offsets (start >= 0, never decrease, end within `v`) and
                // checked the null buffer's length; `read_decoded` proved
                // every row UTF-8: rows whose chunk validation found only
                // tokens that are UTF-8 on their own are concatenations of
                // such tokens, and the others were checked (`check_spans`,
                // or piece by piece as they were decoded, `Utf8Pieces`),
                // row offsets included. These are
                // `LargeStringArray::try_new`'s conditions.
                Arc::new(unsafe { LargeStringArray::new_unchecked(o, v, n) })
            }
            ArrowType::LargeBinary => Arc::new(
                LargeBinaryArray::try_new(o, v, n)
                    .map_err(|e| arrow_err("building a LargeBinary array", e))?,
            ),
            ArrowType::LargeUtf8 => {
                check_utf8(&o[..], v.as_slice(), self.first)?;
                // SAFETY: as above, with every row checked by `check_utf8`.
                Arc::new(unsafe { LargeStringArray::new_unchecked(o, v, n) })
            }
            ArrowType::BinaryView => {
                let (v, b, n) = views(o, v, n);
                Arc::new(
                    GenericByteViewArray::<BinaryViewType>::try_new(v, b, n)
                        .map_err(|e| arrow_err("building a BinaryView array", e))?,
                )
            }
            ArrowType::Utf8View => {
                check_utf8(&o[..], v.as_slice(), self.first)?;
                let (v, b, n) = views(o, v, n);
                Arc::new(
                    GenericByteViewArray::<StringViewType>::try_new(v, b, n)
                        .map_err(|e| arrow_err("building a Utf8View array", e))?,
                )
            }
        })
    }
}

/// Decodes rows `rows` of `reader` for an array of type `ty`. For
/// `LargeUtf8`, only the rows that chunk validation did not prove UTF-8
/// (see the module docs) are checked: when they are at most half of the
/// range, after decoding at full speed, row spans in parallel; else as the
/// decoder writes, each parallel piece right after it is decoded, while it
/// is in cache (pieces of chunks whose tokens are all UTF-8 skipped).
/// Invalid bytes are an [`Error::InvalidArgument`] naming the first bad row.
pub fn read_decoded(reader: &Reader, rows: Range<u64>, ty: ArrowType) -> Result<Decoded> {
    let mut col = Column::default();
    let first = rows.start;
    if ty != ArrowType::LargeUtf8 {
        reader.read_range_into(rows, &mut col)?;
        return Ok(Decoded {
            col,
            ty,
            utf8_checked: false,
            first,
        });
    }
    if rows.start <= rows.end && rows.end <= reader.rows() {
        let (spans, unproven) = unproven_rows(reader, &rows)?;
        // Few rows left to check: decode at full speed, then check those
        // rows alone (a second pass, but over a small part of the values).
        if unproven * 2 <= (rows.end - rows.start) as usize {
            reader.read_range_into(rows, &mut col)?;
            if !check_spans(&col.offsets, &col.values, &spans) {
                // The exact check names the first bad row.
                check_utf8(&col.offsets, &col.values, first)?;
            }
            return Ok(Decoded {
                col,
                ty,
                utf8_checked: true,
                first,
            });
        }
    }
    let pieces = Utf8Pieces::default();
    let ok = reader.read_range_checked(rows, &mut col, &|at, bytes, offsets, utf8| {
        pieces.check(at, bytes, offsets, utf8)
    })?;
    if !(ok && pieces.stitch(&col.values)) {
        // A bad byte, or a piece too small for the fast check: the exact
        // check, which names the first bad row (or passes).
        check_utf8(&col.offsets, &col.values, first)?;
    }
    Ok(Decoded {
        col,
        ty,
        utf8_checked: true,
        first,
    })
}

/// The rows of `rows` (numbered from its start) that chunk validation did
/// not prove UTF-8 ([`crate::read::ChunkView::rows_not_utf8`]), as sorted,
/// disjoint spans of at most `1 << 14` rows (spans less than 64 rows apart
/// are joined: checking a proven row too is harmless, and one long span
/// checks faster than many short ones), and how many rows they hold.
/// `rows` lies within the column.
fn unproven_rows(reader: &Reader, rows: &Range<u64>) -> Result<(Vec<Range<usize>>, usize)> {
    const SPAN: usize = 1 << 14;
    const GAP: usize = 64;
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut count = 0usize;
    let mut push = |mut r: Range<usize>| {
        if let Some(l) = spans.last() {
            if r.start > l.end && r.start - l.end < GAP {
                r.start = l.end;
            }
        }
        count += r.len();
        while !r.is_empty() {
            match spans.last_mut() {
                Some(l) if l.end == r.start && l.len() < SPAN => {
                    let take = (SPAN - l.len()).min(r.len());
                    l.end += take;
                    r.start += take;
                }
                _ => {
                    let take = SPAN.min(r.len());
                    spans.push(r.start..r.start + take);
                    r.start += take;
                }
            }
        }
    };
    let n = reader.num_chunks();
    // The first chunk holding `rows.start` (chunks are few: a linear search
    // would do, a binary one is as short).
    let (mut lo_i, mut hi_i) = (0, n);
    while lo_i + 1 < hi_i {
        let mid = (lo_i + hi_i) / 2;
        if reader.chunk_info(mid).first_row <= rows.start {
            lo_i = mid;
        } else {
            hi_i = mid;
        }
    }
    for i in lo_i..n {
        let info = reader.chunk_info(i);
        let f = info.first_row;
        if f >= rows.end {
            break;
        }
        let lo = (rows.start.max(f) - f) as usize;
        let hi = (rows.end.min(f + info.entry.rows as u64) - f) as usize;
        if lo >= hi {
            continue;
        }
        let col = |r: usize| (f + r as u64 - rows.start) as usize;
        let view = reader.chunk(i)?;
        if view.tokens_utf8() {
            continue;
        }
        let Some(bits) = view.rows_not_utf8() else {
            push(col(lo)..col(hi));
            continue;
        };
        let words = bits.iter().enumerate().take(hi.div_ceil(64)).skip(lo / 64);
        for (w, &word) in words {
            if word == 0 {
                continue;
            }
            let (a, b) = ((w * 64).max(lo), (w * 64 + 64).min(hi));
            let len = b - a;
            let m = (word >> (a - w * 64)) & (u64::MAX >> (64 - len));
            if m == 0 {
                continue;
            }
            let first = a + m.trailing_zeros() as usize;
            let last = a + 63 - m.leading_zeros() as usize;
            push(col(first)..col(last + 1));
        }
    }
    Ok((spans, count))
}

/// Checks that the rows of each span are UTF-8 (in parallel; the other
/// rows are known valid). A span's bytes checked as one string prove each
/// of its rows when every row offset inside is a char boundary.
fn check_spans(offs: &[i64], values: &[u8], spans: &[Range<usize>]) -> bool {
    use rayon::prelude::*;
    // Tasks of several spans (a span may be a single short row).
    spans.par_chunks(16).all(|task| {
        task.iter().all(|r| {
            let (a, b) = (offs[r.start] as usize, offs[r.end] as usize);
            let v = &values[a..b];
            // All ASCII: valid, and every byte is a char boundary.
            v.iter().fold(0u8, |x, &c| x | c) < 0x80
                || simdutf8::basic::from_utf8(v).is_ok()
                    && offs[r.start + 1..r.end]
                        .iter()
                        .all(|&x| (x as usize) >= b || !is_cont(values[x as usize]))
        })
    })
}

/// UTF-8 check of a column's values piece by piece, as they are decoded.
///
/// Each piece (a decode task's bytes) is checked on its own but for a
/// character cut by its ends: up to three leading continuation bytes and a
/// trailing incomplete character are left out, and every row offset inside
/// the piece must be a char boundary. What each piece proved is a region of
/// the values; [`Utf8Pieces::stitch`] then checks the few bytes between
/// regions. Valid regions and valid gaps that tile the values, each starting
/// on a char boundary, make the whole valid.
#[derive(Default)]
struct Utf8Pieces {
    /// The checked regions `(start, end)` of the values.
    regions: std::sync::Mutex<Vec<(usize, usize)>>,
    /// Bytes seen by `check` (must equal the values' length).
    seen: std::sync::atomic::AtomicUsize,
}

/// A UTF-8 continuation byte (0b10xx_xxxx).
#[inline]
fn is_cont(b: u8) -> bool {
    (b as i8) < -0x40
}

/// The length of the character a lead byte starts (0: not a lead byte).
#[inline]
fn lead_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

impl Utf8Pieces {
    /// Checks one decoded piece of the values, `bytes` at `at`. `utf8`:
    /// the reader's validation found every token of the piece's chunk to be
    /// valid UTF-8 on its own; the piece (whole tokens, cut between tokens,
    /// rows made of whole tokens) is then valid, with a char boundary at its
    /// ends and at every row offset, and is not read.
    fn check(&self, at: usize, bytes: &[u8], offsets: &[i64], utf8: bool) -> bool {
        use std::sync::atomic::Ordering;
        let n = bytes.len();
        self.seen.fetch_add(n, Ordering::Relaxed);
        // All ASCII: valid, and every byte is a char boundary. (An OR over
        // the whole piece, which compiles to wide SIMD, is cheaper on cached
        // bytes than `is_ascii`'s early-exit word loop.)
        let (a, e) = if utf8 || bytes.iter().fold(0u8, |x, &b| x | b) < 0x80 {
            (0, n)
        } else {
            let a = bytes.iter().take(3).take_while(|&&b| is_cont(b)).count();
            let mut e = n;
            if let Some(k) = (a.max(n.saturating_sub(4))..n)
                .rev()
                .find(|&k| !is_cont(bytes[k]))
            {
                let l = lead_len(bytes[k]);
                if l > 0 && k + l > n {
                    e = k;
                }
            }
            if a > e || simdutf8::basic::from_utf8(&bytes[a..e]).is_err() {
                return false;
            }
            // Row offsets inside the piece fall on char boundaries.
            let lo = offsets.partition_point(|&o| (o as usize) < at);
            for &o in &offsets[lo..] {
                let o = o as usize;
                if o >= at + n {
                    break;
                }
                if is_cont(bytes[o - at]) {
                    return false;
                }
            }
            (a, e)
        };
        self.regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((at + a, at + e));
        true
    }

    /// Checks the bytes between the pieces' regions (and that the pieces
    /// covered the values).
    fn stitch(self, values: &[u8]) -> bool {
        if self.seen.into_inner() != values.len() {
            return false;
        }
        let mut regions = self.regions.into_inner().unwrap_or_else(|e| e.into_inner());
        regions.sort_unstable();
        let mut prev = 0;
        for (s, e) in regions {
            if s < prev || s > values.len() || std::str::from_utf8(&values[prev..s]).is_err() {
                return false;
            }
            prev = e;
        }
        prev <= values.len() && std::str::from_utf8(&values[prev..]).is_ok()
    }
}

/// `col` as an array of type `ty`.
pub fn to_array(col: Column, ty: ArrowType) -> Result<ArrayRef> {
    Ok(match ty {
        ArrowType::LargeBinary => Arc::new(large_binary(col)?),
        ArrowType::LargeUtf8 => Arc::new(large_string(col)?),
        ArrowType::BinaryView => Arc::new(binary_view(col)?),
        ArrowType::Utf8View => Arc::new(string_view(col)?),
    })
}

/// Options of [`ReadArrow::batches`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BatchOptions {
    /// Rows per batch (the last may hold fewer); default 65,536.
    pub rows_per_batch: u64,
    /// Array type of the column.
    pub ty: ArrowType,
    /// Field name in the batch schema; default `"value"`.
    pub field: String,
}

with_setters!(BatchOptions {
    with_rows_per_batch => rows_per_batch: u64,
    with_ty => ty: ArrowType,
});

impl BatchOptions {
    /// Sets [`Self::field`].
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            rows_per_batch: 1 << 16,
            ty: ArrowType::default(),
            field: "value".into(),
        }
    }
}

/// Reading Arrow arrays: implemented for [`Reader`].
pub trait ReadArrow {
    /// Rows `rows` as one array of type `ty` (decoded like
    /// [`Reader::read_range`], then wrapped without copying).
    fn read_arrow(&self, rows: Range<u64>, ty: ArrowType) -> Result<ArrayRef>;
    /// The rows at `indices` (any order, repeats allowed) as one array.
    fn take_arrow(&self, indices: &[u64], ty: ArrowType) -> Result<ArrayRef>;
    /// One-column record batches over all rows, in order.
    fn batches(&self, opts: BatchOptions) -> Result<Batches<'_>>;
}

impl ReadArrow for Reader {
    fn read_arrow(&self, rows: Range<u64>, ty: ArrowType) -> Result<ArrayRef> {
        read_decoded(self, rows, ty)?.into_array()
    }

    fn take_arrow(&self, indices: &[u64], ty: ArrowType) -> Result<ArrayRef> {
        to_array(take(self, indices)?, ty)
    }

    fn batches(&self, opts: BatchOptions) -> Result<Batches<'_>> {
        if opts.rows_per_batch == 0 {
            return Err(Error::InvalidArgument(
                "rows per batch must be at least 1".into(),
            ));
        }
        let schema = Arc::new(Schema::new(vec![Field::new(
            opts.field.clone(),
            opts.ty.data_type(),
            true,
        )]));
        Ok(Batches {
            reader: self,
            next: 0,
            opts,
            schema,
        })
    }
}

/// The rows at `indices` as a [`Column`] (each decoded with
/// [`Reader::get_into`] straight into the shared value buffer).
pub fn take(reader: &Reader, indices: &[u64]) -> Result<Column> {
    let mut values = Vec::new();
    let mut offsets = Vec::with_capacity(indices.len() + 1);
    offsets.push(0i64);
    let mut bits = vec![0u8; indices.len().div_ceil(8)];
    let mut any_null = false;
    let mut row = Vec::new();
    for (k, &i) in indices.iter().enumerate() {
        if reader.get_into(i, &mut row)? {
            values.extend_from_slice(&row);
            bits[k / 8] |= 1 << (k % 8);
        } else {
            any_null = true;
        }
        offsets.push(values.len() as i64);
    }
    Ok(Column {
        values,
        offsets,
        validity: any_null.then_some(bits),
    })
}

/// Iterator of one-column [`RecordBatch`]es (see [`ReadArrow::batches`]).
pub struct Batches<'r> {
    reader: &'r Reader,
    next: u64,
    opts: BatchOptions,
    schema: SchemaRef,
}

impl Batches<'_> {
    /// The schema of every batch: one nullable field.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Iterator for Batches<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let rows = self.reader.rows();
        if self.next >= rows {
            return None;
        }
        let end = rows.min(self.next.saturating_add(self.opts.rows_per_batch));
        let range = self.next..end;
        self.next = end;
        Some(self.reader.read_arrow(range, self.opts.ty).and_then(|a| {
            RecordBatch::try_new(self.schema.clone(), vec![a])
                .map_err(|e| arrow_err("building a record batch", e))
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.reader.rows().saturating_sub(self.next);
        let n = left.div_ceil(self.opts.rows_per_batch) as usize;
        (n, Some(n))
    }
}

/// Compresses the rows of `arrays` (in order, as one column) into an
/// in-memory file.
pub fn write_arrays_to_vec(arrays: &[&dyn Array], opts: crate::WriterOptions) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut w = Writer::new(BorrowedVec(&mut out), opts)?;
    for a in arrays {
        w.write_array(*a)?;
    }
    w.finish()?;
    Ok(out)
}

/// Borrows a Vec as a sink.
struct BorrowedVec<'a>(&'a mut Vec<u8>);

impl std::io::Write for BorrowedVec<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Sink for BorrowedVec<'_> {
    fn commit(self) -> Result<()> {
        Ok(())
    }
}
