//! A text column's size as text, as Parquet (ZSTD and SNAPPY, arrow-rs with
//! default settings otherwise, as `benches/parquet.rs` writes it) and as a
//! fastpair file, each with its compression ratio: value bytes (the rows
//! without their newlines, as `fastpair compress` counts them) over the
//! size. `demo.sh` prints this.
//!
//! ```text
//! cargo run --release --features parquet --example vs_parquet -- COLUMN.txt COLUMN.fpc
//! ```
//!
//! COLUMN.txt holds one value per line (a final newline ends the last value);
//! COLUMN.fpc is the same column as written by `fastpair compress`.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

fn parquet_len(batch: &RecordBatch, c: Compression) -> parquet::errors::Result<usize> {
    let props = WriterProperties::builder().set_compression(c).build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props))?;
    w.write(batch)?;
    w.close()?;
    Ok(out.len())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [txt, fpc] = &args[..] else {
        eprintln!("usage: vs_parquet COLUMN.txt COLUMN.fpc");
        std::process::exit(2);
    };
    let text = std::fs::read(txt).map_err(|e| format!("{txt}: {e}"))?;
    let fpc_len = std::fs::metadata(fpc)
        .map_err(|e| format!("{fpc}: {e}"))?
        .len() as usize;
    let rows: Vec<&[u8]> = if text.is_empty() {
        Vec::new()
    } else {
        let body = text.strip_suffix(b"\n").unwrap_or(&text);
        body.split(|&b| b == b'\n').collect()
    };
    // Utf8 where every row is UTF-8 (as the corpus benchmarks), else Binary.
    let arr: ArrayRef = match std::str::from_utf8(&text) {
        Ok(_) => Arc::new(StringArray::from_iter_values(
            rows.iter()
                .map(|r| std::str::from_utf8(r).expect("UTF-8 checked whole")),
        )),
        Err(_) => Arc::new(BinaryArray::from_iter_values(rows.iter())),
    };
    let batch = RecordBatch::try_from_iter([("value", arr)])?;
    let values: usize = rows.iter().map(|r| r.len()).sum();
    let sizes = [
        ("values", values),
        ("text file", text.len()),
        (
            "Parquet ZSTD",
            parquet_len(&batch, Compression::ZSTD(ZstdLevel::default()))?,
        ),
        ("Parquet SNAPPY", parquet_len(&batch, Compression::SNAPPY)?),
        ("fastpair", fpc_len),
    ];
    println!("{:<15} {:>12}  {:>6}", "", "bytes", "ratio");
    for (name, len) in sizes {
        println!(
            "{name:<15} {len:>12}  {:>6.2}",
            values as f64 / len.max(1) as f64
        );
    }
    Ok(())
}
