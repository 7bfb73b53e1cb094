//! TPC-H tables for bench/sql.sh: `cargo run --release -p
//! fastpair-datafusion --example tpch_data -- SF DIR` writes, per table,
//! `DIR/zstd/T.parquet` and `DIR/snappy/T.parquet` (arrow-rs writer defaults
//! but the codec) and the dataset `DIR/fastpair/T.fpd` (written from the ZSTD
//! file by `fastpair::dataset`, default options), and prints their sizes.

use std::path::Path;

use datafusion::arrow::array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

fn dir_bytes(p: &Path) -> u64 {
    if p.is_file() {
        return std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    }
    std::fs::read_dir(p)
        .map(|d| d.flatten().map(|e| dir_bytes(&e.path())).sum())
        .unwrap_or(0)
}

fn main() {
    use tpchgen::generators::*;
    use tpchgen_arrow::*;
    let args: Vec<String> = std::env::args().collect();
    let sf: f64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .expect("usage: tpch_data SF DIR");
    let out = Path::new(args.get(2).expect("usage: tpch_data SF DIR"));
    for sub in ["zstd", "snappy", "fastpair"] {
        std::fs::create_dir_all(out.join(sub)).unwrap();
    }
    /// A table's batches, generated afresh on each call.
    type Batches = Box<dyn Fn() -> Box<dyn Iterator<Item = RecordBatch>>>;
    let tables: [(&str, Batches); 8] = [
        (
            "nation",
            Box::new(move || {
                Box::new(NationArrow::new(NationGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "region",
            Box::new(move || {
                Box::new(RegionArrow::new(RegionGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "part",
            Box::new(move || {
                Box::new(PartArrow::new(PartGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "supplier",
            Box::new(move || {
                Box::new(SupplierArrow::new(SupplierGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "partsupp",
            Box::new(move || {
                Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "customer",
            Box::new(move || {
                Box::new(CustomerArrow::new(CustomerGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "orders",
            Box::new(move || {
                Box::new(OrderArrow::new(OrderGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
        (
            "lineitem",
            Box::new(move || {
                Box::new(LineItemArrow::new(LineItemGenerator::new(sf, 1, 1)).map(|b| b.unwrap()))
            }),
        ),
    ];
    println!(
        "| table | rows | Parquet ZSTD | Parquet SNAPPY | fastpair dataset | dataset / ZSTD |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let (mut tz, mut ts, mut tf) = (0u64, 0u64, 0u64);
    for (name, gen) in &tables {
        let mut rows = 0usize;
        for (sub, codec) in [
            ("zstd", Compression::ZSTD(ZstdLevel::default())),
            ("snappy", Compression::SNAPPY),
        ] {
            let path = out.join(sub).join(format!("{name}.parquet"));
            let mut it = gen().peekable();
            let schema = it.peek().expect("a batch").schema();
            let props = WriterProperties::builder().set_compression(codec).build();
            let f = std::fs::File::create(&path).unwrap();
            let mut w = ArrowWriter::try_new(f, schema, Some(props)).unwrap();
            rows = 0;
            for b in it {
                rows += b.num_rows();
                w.write(&b).unwrap();
            }
            w.close().unwrap();
        }
        let ds = out.join("fastpair").join(format!("{name}.fpd"));
        let _ = std::fs::remove_dir_all(&ds);
        let exe =
            std::env::var("FASTPAIR_BIN").unwrap_or_else(|_| "target/release/fastpair".into());
        let st = std::process::Command::new(&exe)
            .arg("compress")
            .arg(out.join("zstd").join(format!("{name}.parquet")))
            .arg("-o")
            .arg(&ds)
            .arg("-q")
            .status()
            .expect("running fastpair (FASTPAIR_BIN, default target/release/fastpair)");
        assert!(st.success(), "fastpair compress {name}");
        let (z, s, f) = (
            dir_bytes(&out.join("zstd").join(format!("{name}.parquet"))),
            dir_bytes(&out.join("snappy").join(format!("{name}.parquet"))),
            dir_bytes(&ds),
        );
        tz += z;
        ts += s;
        tf += f;
        println!(
            "| {name} | {rows} | {z} | {s} | {f} | {:.3} |",
            f as f64 / z as f64
        );
    }
    println!(
        "| **all** | | {tz} | {ts} | {tf} | {:.3} |",
        tf as f64 / tz as f64
    );
}
