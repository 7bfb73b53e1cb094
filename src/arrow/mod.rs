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

mod batches;
mod input;
mod output;
mod text;

use arrow_schema::DataType;

use crate::error::Error;
#[cfg(doc)]
use crate::{read::Column, read::Reader, write::Writer};
#[cfg(doc)]
use arrow_array::RecordBatch;

pub use batches::{take, BatchOptions, Batches, ReadArrow};
pub use input::{write_arrays_to_vec, WriteArrow};
pub use output::{
    binary_view, large_binary, large_string, read_decoded, string_view, to_array, Decoded,
};

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
