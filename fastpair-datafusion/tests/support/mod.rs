//! Helpers shared by the SQL crates' integration tests: the `fastpair` CLI
//! that writes datasets (as users write them), Parquet input files and the
//! TPC-H tables. Included with `mod support;` by this crate's tests and with
//! `#[path]` by `fastpair-ballista/tests/cluster.rs`.
//!
//! Each test binary uses only some of these, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use datafusion::arrow::array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

/// TPC-H scale factor of the test tables.
pub const SF: f64 = 0.01;

/// The eight TPC-H tables.
pub const TABLES: [&str; 8] = [
    "nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem",
];

/// The `fastpair` CLI: `FASTPAIR_BIN`, or the root package's release build
/// (`cargo build --release --features cli`, which .ci/run does before the
/// SQL tests). Datasets are written by the library's own writer through it.
pub fn fastpair_exe() -> PathBuf {
    let exe = std::env::var_os("FASTPAIR_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target/release/fastpair")
        });
    assert!(
        exe.is_file(),
        "{} is missing: run `cargo build --release --features cli` first (or set FASTPAIR_BIN)",
        exe.display()
    );
    exe
}

/// Runs `fastpair ARGS`, failing the test with its stderr if it fails.
pub fn fastpair_cli(args: &[&str]) {
    let o = std::process::Command::new(fastpair_exe())
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fastpair {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `fastpair compress PQ -o DS --part-rows N -q`.
pub fn compress(pq: &Path, ds: &Path, part_rows: u64) {
    let n = part_rows.to_string();
    fastpair_cli(&[
        "compress",
        pq.to_str().unwrap(),
        "-o",
        ds.to_str().unwrap(),
        "--part-rows",
        &n,
        "-q",
    ]);
}

/// `batches` as one Parquet file (ZSTD, default level).
pub fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let f = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(f, batches[0].schema(), Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// TPC-H table `table` at [`SF`], generated in one part.
pub fn tpch_batches(table: &str) -> Vec<RecordBatch> {
    use tpchgen::generators::*;
    use tpchgen_arrow::*;
    let b: Result<Vec<RecordBatch>, _> = match table {
        "nation" => NationArrow::new(NationGenerator::new(SF, 1, 1)).collect(),
        "region" => RegionArrow::new(RegionGenerator::new(SF, 1, 1)).collect(),
        "part" => PartArrow::new(PartGenerator::new(SF, 1, 1)).collect(),
        "supplier" => SupplierArrow::new(SupplierGenerator::new(SF, 1, 1)).collect(),
        "partsupp" => PartSuppArrow::new(PartSuppGenerator::new(SF, 1, 1)).collect(),
        "customer" => CustomerArrow::new(CustomerGenerator::new(SF, 1, 1)).collect(),
        "orders" => OrderArrow::new(OrderGenerator::new(SF, 1, 1)).collect(),
        "lineitem" => LineItemArrow::new(LineItemGenerator::new(SF, 1, 1)).collect(),
        other => panic!("not a TPC-H table: {other}"),
    };
    b.unwrap()
}
