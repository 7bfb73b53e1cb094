//! fastpair next to Parquet (ZSTD and SNAPPY, default settings otherwise) on
//! corpus columns, read through arrow-rs: file size, the whole column read
//! into one Arrow array, and 10,000 random rows. It also leaves the files in
//! `target/bench-parquet/` (`NAME.fpc`, `NAME.zstd.parquet`,
//! `NAME.snappy.parquet`) for `bench/parquet.py`, which measures the same
//! files from Python in the same run (`bench/parquet.sh` runs both).
//!
//! ```text
//! cargo bench --bench parquet                     # every corpus column
//! cargo bench --bench parquet -- Linux l_comment  # names containing a filter
//! cargo bench --bench parquet -- --out t.md       # also write the table to a file
//! ```
//!
//! Arguments and environment: the shared vocabulary of `benches/harness`.
//! Each timing is the best (minimum) of `REPS` runs after one warm-up, the
//! six sides (three formats, whole column and random rows) alternating so
//! that all see the same machine load (the minimum is the least noisy
//! statistic on a shared machine).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray};
use bytes::Bytes;
use fastpair::arrow::{write_arrays_to_vec, ArrowType, ReadArrow};
use fastpair::{Reader, WriterOptions};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

mod harness;
use harness::{time_alternately, Args, Column, Timing};

const REPS: usize = 9;
const RANDOM_ROWS: usize = 10_000;

fn parquet_bytes(batch: &RecordBatch, c: Compression) -> Vec<u8> {
    let props = WriterProperties::builder().set_compression(c).build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

fn parquet_read_all(pq: &Bytes, rows: usize) -> ArrayRef {
    let r = ParquetRecordBatchReaderBuilder::try_new(pq.clone())
        .unwrap()
        .with_batch_size(rows.max(1))
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
    batches[0].column(0).clone()
}

fn parquet_take(pq: &Bytes, rows: usize, idx: &[usize]) -> usize {
    let sel = RowSelection::from_consecutive_ranges(idx.iter().map(|&i| i..i + 1), rows);
    let r = ParquetRecordBatchReaderBuilder::try_new(pq.clone())
        .unwrap()
        .with_row_selection(sel)
        .with_batch_size(idx.len().max(1))
        .build()
        .unwrap();
    r.map(|b| b.unwrap().num_rows()).sum()
}

fn main() {
    let args = Args::parse(0, &[], &[]);
    let out_dir = Path::new("target/bench-parquet");
    std::fs::create_dir_all(out_dir).unwrap();
    let files = args.columns();
    // Best of REPS after one warm-up, the six sides alternating.
    let timing = Timing {
        warmup: 1,
        min_reps: REPS,
        max_reps: REPS,
        target: Duration::ZERO,
    };
    let mut md = harness::machine_line();
    md += "| column | rows | MB | fastpair KB | zstd KB | snappy KB | read fastpair ms | read zstd ms | read snappy ms | 10k rows fastpair ms | 10k rows zstd ms | 10k rows snappy ms |\n";
    md += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    print!("{md}");
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let col = Column::load(&path);
        let rows = col.refs();
        let utf8 = std::str::from_utf8(&col.bytes).is_ok();
        let arr: ArrayRef = if utf8 {
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| std::str::from_utf8(r).unwrap()),
            ))
        } else {
            Arc::new(BinaryArray::from_iter_values(rows.iter()))
        };
        let n = arr.len();
        let batch = RecordBatch::try_from_iter([("value", arr.clone())]).unwrap();
        let fpc = write_arrays_to_vec(&[arr.as_ref()], WriterOptions::default()).unwrap();
        let zstd = parquet_bytes(&batch, Compression::ZSTD(ZstdLevel::default()));
        let snappy = parquet_bytes(&batch, Compression::SNAPPY);
        std::fs::write(out_dir.join(format!("{name}.fpc")), &fpc).unwrap();
        std::fs::write(out_dir.join(format!("{name}.zstd.parquet")), &zstd).unwrap();
        std::fs::write(out_dir.join(format!("{name}.snappy.parquet")), &snappy).unwrap();
        let sizes = (fpc.len(), zstd.len(), snappy.len());
        let reader = Reader::from_bytes(fpc).unwrap();
        let (zstd, snappy) = (Bytes::from(zstd), Bytes::from(snappy));
        let ty = if utf8 {
            ArrowType::LargeUtf8
        } else {
            ArrowType::LargeBinary
        };
        let idx = harness::random_sorted_rows(n, RANDOM_ROWS, 0x9E37_79B9);
        let idx64: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
        // Check once that all three give the same rows.
        let ours = reader.read_arrow(0..n as u64, ty).unwrap();
        assert_eq!(ours.len(), n);
        assert_eq!(parquet_read_all(&zstd, n).len(), n);
        assert_eq!(parquet_take(&snappy, n, &idx), idx.len());
        let m: Vec<f64> = time_alternately(
            &mut [
                &mut || {
                    black_box(reader.read_arrow(0..n as u64, ty).unwrap());
                },
                &mut || {
                    black_box(parquet_read_all(&zstd, n));
                },
                &mut || {
                    black_box(parquet_read_all(&snappy, n));
                },
                &mut || {
                    black_box(reader.take_arrow(&idx64, ty).unwrap());
                },
                &mut || {
                    black_box(parquet_take(&zstd, n, &idx));
                },
                &mut || {
                    black_box(parquet_take(&snappy, n, &idx));
                },
            ],
            timing,
        )
        .into_iter()
        .map(|s| s.min * 1e3)
        .collect();
        let line = format!(
            "| {name} | {n} | {:.1} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            col.bytes.len() as f64 / 1e6,
            sizes.0 / 1024,
            sizes.1 / 1024,
            sizes.2 / 1024,
            m[0],
            m[1],
            m[2],
            m[3],
            m[4],
            m[5]
        );
        println!("{line}");
        md += &line;
        md += "\n";
    }
    args.write_report(&md);
}
