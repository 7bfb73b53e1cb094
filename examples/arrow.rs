//! The Arrow example of README.md (kept here so that it compiles):
//! `cargo run --release --example arrow`.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use fastpair::arrow::{ArrowType, BatchOptions, ReadArrow, WriteArrow};
use fastpair::{Reader, Writer, WriterOptions};

fn main() -> fastpair::Result<()> {
    let path = std::env::temp_dir().join("fastpair-arrow.fpc");
    // Any Arrow string/binary array goes in (plain, large, view, dictionary); nulls kept.
    let urls =
        StringArray::from_iter((0..100_000).map(|i| (i % 10 != 0).then(|| format!("/items/{i}"))));
    let mut w = Writer::create(&path, WriterOptions::default())?;
    w.write_array(&urls)?;
    w.finish()?;

    let r = Reader::open(&path)?;
    // Rows out as a LargeStringArray built on the decoder's own buffers (UTF-8 checked once).
    let a = r.read_arrow(0..r.rows(), ArrowType::LargeUtf8)?;
    assert_eq!(a.null_count(), 10_000);
    // Random rows, any order.
    let some = r.take_arrow(&[7, 99_999, 3], ArrowType::LargeUtf8)?;
    assert_eq!(some.len(), 3);
    // A column larger than memory streams as record batches.
    let opts = BatchOptions::default()
        .with_rows_per_batch(32_768)
        .with_ty(ArrowType::LargeUtf8)
        .with_field("url");
    let batches: Vec<RecordBatch> = r.batches(opts)?.collect::<fastpair::Result<_>>()?;
    assert_eq!(batches.len(), 4);
    let _col: Arc<dyn Array> = batches[0].column(0).clone();
    std::fs::remove_file(&path).ok();
    Ok(())
}
