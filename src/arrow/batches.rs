//! [`ReadArrow`] on a [`Reader`]: one array of a row range, a take of rows
//! by index, and one-column record batches ([`Batches`]).

use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema, SchemaRef};

use super::output::{read_decoded, to_array};
use super::{arrow_err, ArrowType};
use crate::error::{Error, Result};
use crate::read::{Column, Reader};

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
