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
//! ```
//!
//! Each timing is the best (minimum) of `REPS` runs after one warm-up, the
//! three formats alternating so that all see the same machine load (the
//! minimum is the least noisy statistic on a shared machine).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow_array::{Array, ArrayRef, BinaryArray, RecordBatch, StringArray};
use bytes::Bytes;
use fastpair::arrow::{write_arrays_to_vec, ArrowType, ReadArrow};
use fastpair::{Reader, WriterOptions};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

const REPS: usize = 9;
const RANDOM_ROWS: usize = 10_000;

fn best(v: Vec<f64>) -> f64 {
    v.into_iter().fold(f64::INFINITY, f64::min)
}

/// Pseudo-random sorted distinct row indexes (same for every format).
fn random_rows(n: usize, k: usize, seed: u64) -> Vec<usize> {
    let mut x = seed | 1;
    let mut set = std::collections::BTreeSet::new();
    let k = k.min(n);
    while set.len() < k {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        set.insert((x % n as u64) as usize);
    }
    set.into_iter().collect()
}

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
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let out_dir = Path::new("target/bench-parquet");
    std::fs::create_dir_all(out_dir).unwrap();
    let files = fastpair::testing::corpus::files(&filters);
    assert!(
        !files.is_empty(),
        "no corpus column: run ../shared/tools/corpus-unpack target/corpus"
    );
    println!("| column | rows | MB | fastpair KB | zstd KB | snappy KB | read fastpair ms | read zstd ms | read snappy ms | 10k rows fastpair ms | 10k rows zstd ms | 10k rows snappy ms |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read(&path).unwrap();
        let rows = fastpair::testing::corpus::lines(&text);
        let utf8 = std::str::from_utf8(&text).is_ok();
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
        let idx = random_rows(n, RANDOM_ROWS, 0x9E37_79B9);
        let idx64: Vec<u64> = idx.iter().map(|&i| i as u64).collect();
        // Check once that all three give the same rows.
        let ours = reader.read_arrow(0..n as u64, ty).unwrap();
        assert_eq!(ours.len(), n);
        assert_eq!(parquet_read_all(&zstd, n).len(), n);
        assert_eq!(parquet_take(&snappy, n, &idx), idx.len());
        let mut t = [(); 6].map(|_| Vec::new());
        for rep in 0..=REPS {
            let mut time = |slot: usize, f: &mut dyn FnMut()| {
                let s = Instant::now();
                f();
                if rep > 0 {
                    t[slot].push(s.elapsed().as_secs_f64() * 1e3);
                }
            };
            time(0, &mut || {
                black_box(reader.read_arrow(0..n as u64, ty).unwrap());
            });
            time(1, &mut || {
                black_box(parquet_read_all(&zstd, n));
            });
            time(2, &mut || {
                black_box(parquet_read_all(&snappy, n));
            });
            time(3, &mut || {
                black_box(reader.take_arrow(&idx64, ty).unwrap());
            });
            time(4, &mut || {
                black_box(parquet_take(&zstd, n, &idx));
            });
            time(5, &mut || {
                black_box(parquet_take(&snappy, n, &idx));
            });
        }
        let m: Vec<f64> = t.into_iter().map(best).collect();
        println!(
            "| {name} | {n} | {:.1} | {} | {} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
            text.strip_suffix(b"\n").unwrap_or(&text).len() as f64 / 1e6,
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
    }
}
