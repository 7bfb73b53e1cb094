//! Compression ratios only (no timing) of our codecs next to every peer the
//! issue-10 targets name, per corpus column, in one run: the `onpair` crate
//! (12 and 16 bits), `fsst-rs` (FSST-8) and Parquet (arrow-rs, ZSTD and
//! SNAPPY, default settings otherwise). Ratios do not depend on machine load.
//!
//! ```text
//! cargo run --release --example ratio_table -- [FILTER...] [--out t.md]
//! ```
//!
//! Sizes are defined as in `benches/codecs.rs` (its header): ours core = the
//! `.fpc` file minus its cascaded row boundaries; onpair crate core = codes at
//! w bits + token bytes + `(tokens + 1)` u32 offsets; fsst-rs core = the
//! compressed rows + 9 bytes per symbol; peers' whole file = core +
//! `(rows + 1)` u32 row offsets; Parquet = the whole `.parquet` file of one
//! column (Utf8, or Binary for a non-UTF-8 column), as `benches/parquet.rs`
//! writes it. `FASTPAIR_CORPUS` names the corpus folder (default
//! `target/corpus`).

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
use fastpair::write::write_to_vec;
use fastpair::{Codec, CodecChoice, Reader, WriterOptions};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

const OURS: [(&str, CodecChoice); 4] = [
    ("fsst12", CodecChoice::Fixed(Codec::Fsst12)),
    ("onpair12", CodecChoice::Fixed(Codec::OnPair12)),
    ("onpair16", CodecChoice::Fixed(Codec::OnPair16)),
    ("auto", CodecChoice::Auto),
];

struct Row {
    name: String,
    bytes: usize,
    /// Ours (core, file) per codec of `OURS`.
    ours: Vec<(usize, usize)>,
    auto_codec: &'static str,
    /// onpair crate 12, 16: (core, file).
    onpair: [(usize, usize); 2],
    /// fsst-rs: (core, file).
    fsst: (usize, usize),
    /// Parquet ZSTD, SNAPPY file bytes.
    parquet: (usize, usize),
}

fn parquet_len(batch: &RecordBatch, c: Compression) -> usize {
    let props = WriterProperties::builder().set_compression(c).build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out.len()
}

fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        s += x.ln();
        n += 1;
    }
    (s / n.max(1) as f64).exp()
}

fn main() {
    let mut filters = Vec::new();
    let mut out_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--out" {
            out_file = args.next();
        } else {
            filters.push(a);
        }
    }
    let files = fastpair::testing::corpus::files(&filters);
    let mut rows = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let vals = fastpair::testing::corpus::lines(&data);
        let bytes: usize = vals.iter().map(|r| r.len()).sum();
        let mut ours = Vec::new();
        let mut auto_codec = "";
        for (name, codec) in OURS {
            let mut o = WriterOptions::default();
            o.codec = codec;
            let file = write_to_vec(vals.iter().map(|r| Some(*r)), o).unwrap();
            let len = file.len();
            let r = Reader::from_bytes(file).unwrap();
            let col = r.read_all().unwrap();
            assert_eq!(col.values.len(), bytes, "{name}: round trip");
            let rowb: usize = (0..r.num_chunks())
                .map(|i| {
                    let ch = r.chunk(i).unwrap();
                    ch.row_codes_bytes().len() + ch.row_bytes_bytes().len()
                })
                .sum();
            if name == "auto" {
                auto_codec = r.dictionaries().unwrap()[0].codec().name();
            }
            ours.push((len - rowb, len));
        }
        let mut concat = Vec::with_capacity(bytes);
        let mut offsets = vec![0u32];
        for v in &vals {
            concat.extend_from_slice(v);
            offsets.push(concat.len() as u32);
        }
        let onpair = [12u8, 16].map(|bits| {
            let cfg = onpair::Config {
                max_dict_bits: onpair::MaxDictBits::new(bits).unwrap(),
                ..onpair::DEFAULT_CONFIG
            };
            let col = onpair::compress(&concat, &offsets, cfg).unwrap();
            let codes = (col.codes.len() * bits as usize).div_ceil(8);
            let core = codes + col.dict.logical_len() + col.dict.offsets().len() * 4;
            (core, core + col.row_offsets.len() * 4)
        });
        let fc = fsst::Compressor::train(&vals);
        let fo = fc.compress_bulk(&vals);
        let fcore = fo.iter().map(|o| o.len()).sum::<usize>() + fc.symbol_table().len() * 9;
        let fsst = (fcore, fcore + (vals.len() + 1) * 4);
        let arr: ArrayRef = if std::str::from_utf8(&data).is_ok() {
            Arc::new(StringArray::from_iter_values(
                vals.iter().map(|r| std::str::from_utf8(r).unwrap()),
            ))
        } else {
            Arc::new(BinaryArray::from_iter_values(vals.iter()))
        };
        let batch = RecordBatch::try_from_iter([("value", arr)]).unwrap();
        let parquet = (
            parquet_len(&batch, Compression::ZSTD(ZstdLevel::default())),
            parquet_len(&batch, Compression::SNAPPY),
        );
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        eprintln!("{name} done");
        rows.push(Row {
            name,
            bytes,
            ours,
            auto_codec,
            onpair,
            fsst,
            parquet,
        });
    }

    let n = rows.len();
    let q = |b: usize, r: &Row| r.bytes as f64 / b as f64;
    let mut s = String::new();
    s += "#### Ratio: value bytes / (codes + dictionary), row offsets excluded (ours: file − row boundaries)\n\n";
    s += "| column | MB | fsst12 | fsst-rs (FSST-8) | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto | auto chose |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for r in &rows {
        s += &format!(
            "| {} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |\n",
            r.name,
            r.bytes as f64 / 1e6,
            q(r.ours[0].0, r),
            q(r.fsst.0, r),
            q(r.ours[1].0, r),
            q(r.onpair[0].0, r),
            q(r.ours[2].0, r),
            q(r.onpair[1].0, r),
            q(r.ours[3].0, r),
            r.auto_codec
        );
    }
    s += "\n#### Ratio: value bytes / whole file (ours: the .fpc file; crates: core + u32 row offsets; Parquet: the file)\n\n";
    s += "| column | fsst12 | fsst-rs (FSST-8) | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto | Parquet ZSTD | Parquet SNAPPY |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for r in &rows {
        s += &format!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
            r.name,
            q(r.ours[0].1, r),
            q(r.fsst.1, r),
            q(r.ours[1].1, r),
            q(r.onpair[0].1, r),
            q(r.ours[2].1, r),
            q(r.onpair[1].1, r),
            q(r.ours[3].1, r),
            q(r.parquet.0, r),
            q(r.parquet.1, r),
        );
    }
    let gm = |f: &dyn Fn(&Row) -> usize| geomean(rows.iter().map(|r| q(f(r), r)));
    let wins = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    s += "\n#### Geomeans\n\n";
    s += "| | fsst12 | fsst-rs | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto | Parquet ZSTD | Parquet SNAPPY |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    s += &format!(
        "| core | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | | |\n",
        gm(&|r| r.ours[0].0),
        gm(&|r| r.fsst.0),
        gm(&|r| r.ours[1].0),
        gm(&|r| r.onpair[0].0),
        gm(&|r| r.ours[2].0),
        gm(&|r| r.onpair[1].0),
        gm(&|r| r.ours[3].0),
    );
    s += &format!(
        "| whole file | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
        gm(&|r| r.ours[0].1),
        gm(&|r| r.fsst.1),
        gm(&|r| r.ours[1].1),
        gm(&|r| r.onpair[0].1),
        gm(&|r| r.ours[2].1),
        gm(&|r| r.onpair[1].1),
        gm(&|r| r.ours[3].1),
        gm(&|r| r.parquet.0),
        gm(&|r| r.parquet.1),
    );
    let lose = |f: &dyn Fn(&Row) -> bool| {
        let v: Vec<&str> = rows
            .iter()
            .filter(|r| !f(r))
            .map(|r| r.name.as_str())
            .collect();
        if v.is_empty() {
            String::new()
        } else {
            format!(" (behind: {})", v.join(", "))
        }
    };
    s += "\n#### Targets\n\n";
    type Test<'a> = (&'a str, &'a dyn Fn(&Row) -> bool);
    let tests: [Test; 9] = [
        ("core: onpair12 ≥ onpair crate 12", &|r| {
            r.ours[1].0 <= r.onpair[0].0
        }),
        ("core: onpair16 ≥ onpair crate 16", &|r| {
            r.ours[2].0 <= r.onpair[1].0
        }),
        ("core: fsst12 ≥ fsst-rs", &|r| r.ours[0].0 <= r.fsst.0),
        ("file: fsst12 ≥ fsst-rs", &|r| r.ours[0].1 <= r.fsst.1),
        ("file: onpair12 ≥ onpair crate 12", &|r| {
            r.ours[1].1 <= r.onpair[0].1
        }),
        ("file: onpair16 ≥ onpair crate 16", &|r| {
            r.ours[2].1 <= r.onpair[1].1
        }),
        ("file: auto ≥ every crate peer", &|r| {
            r.ours[3].1 <= r.fsst.1.min(r.onpair[0].1).min(r.onpair[1].1)
        }),
        ("file: auto ≥ Parquet SNAPPY", &|r| {
            r.ours[3].1 <= r.parquet.1
        }),
        ("file: auto ≥ Parquet ZSTD", &|r| {
            r.ours[3].1 <= r.parquet.0
        }),
    ];
    for (what, f) in tests {
        s += &format!("- {what}: {}/{n}{}\n", wins(f), lose(f));
    }
    println!("{s}");
    if let Some(p) = out_file {
        std::fs::write(&p, &s).unwrap_or_else(|e| panic!("writing {p}: {e}"));
    }
}
