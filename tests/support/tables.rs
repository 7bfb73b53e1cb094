//! Parquet and Arrow IPC files for the tabular tests (tests/cli_tabular.rs,
//! tests/cli_dataset.rs, tests/arrow.rs): written and read with arrow-rs as a
//! user's own tools would, and a corpus column as an Arrow array with nulls.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};

/// Writes `batches` (one schema) as a Parquet file with arrow-rs's defaults,
/// row groups of at most `row_group_rows` rows when given.
pub fn write_parquet(p: &Path, batches: &[RecordBatch], row_group_rows: Option<usize>) {
    let f = std::fs::File::create(p).unwrap();
    let mut props = parquet::file::properties::WriterProperties::builder();
    if let Some(n) = row_group_rows {
        props = props.set_max_row_group_size(n);
    }
    let mut w =
        parquet::arrow::ArrowWriter::try_new(f, batches[0].schema(), Some(props.build())).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// Every record batch of a Parquet file, in order.
pub fn read_parquet(p: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(p).unwrap();
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// Every record batch of an Arrow IPC file, in order.
pub fn read_ipc(p: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(p).unwrap();
    arrow_ipc::reader::FileReader::try_new(f, None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// A corpus column's text (one value per line) as rows with every 13th row
/// (from row 5) null, and as an Arrow array of them: `Utf8` when the text is
/// UTF-8, else `Binary`.
pub fn column_with_nulls(text: &[u8]) -> (Vec<Option<&[u8]>>, ArrayRef) {
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    let rows: Vec<Option<&[u8]>> = body
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, v)| (i % 13 != 5).then_some(v))
        .collect();
    let array: ArrayRef = if std::str::from_utf8(body).is_ok() {
        Arc::new(StringArray::from_iter(
            rows.iter()
                .map(|v| v.map(|b| std::str::from_utf8(b).unwrap())),
        ))
    } else {
        Arc::new(BinaryArray::from(rows.clone()))
    };
    (rows, array)
}
