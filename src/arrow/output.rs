//! Arrow out: a decoded [`Column`] as an Arrow array without copying its
//! values, and a reader's rows decoded for one array type ([`read_decoded`]).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::types::{BinaryViewType, StringViewType};
use arrow_array::{
    ArrayRef, BinaryViewArray, GenericByteViewArray, LargeBinaryArray, LargeStringArray,
    StringViewArray,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};

use super::text::{check_spans, check_utf8, unproven_rows, Utf8Pieces};
use super::{arrow_err, ArrowType};
use crate::error::{Error, Result};
use crate::read::{Column, Reader};

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

/// Builds views over `values` split into buffers of at most `i32::MAX`
/// bytes (views hold 32-bit offsets); the buffers are slices of one
/// allocation, the column's own.
pub(super) fn views(
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

/// `col` as an array of type `ty`.
pub fn to_array(col: Column, ty: ArrowType) -> Result<ArrayRef> {
    Ok(match ty {
        ArrowType::LargeBinary => Arc::new(large_binary(col)?),
        ArrowType::LargeUtf8 => Arc::new(large_string(col)?),
        ArrowType::BinaryView => Arc::new(binary_view(col)?),
        ArrowType::Utf8View => Arc::new(string_view(col)?),
    })
}
