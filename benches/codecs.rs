//! Codec benchmark (issue 10): compression ratio and compress speed of our
//! codecs (FSST-12, OnPair-12, OnPair-16, auto) next to the `onpair` crate
//! (0.3, same code width) and the `fsst-rs` crate (FSST-8), per corpus column,
//! in one run, with geomeans.
//!
//! ```text
//! cargo bench --bench codecs                              # every column
//! cargo bench --bench codecs -- HDFS o_clerk --out t.md   # name filters, Markdown to a file
//! ```
//!
//! Arguments and environment: the shared vocabulary of `benches/harness`
//! (name filters, `--out`); `FASTPAIR_CORPUS` (directory of `*.txt`, one value per line;
//! default `target/corpus`), `FASTPAIR_BENCH_TARGET_MS` (time per compress
//! measurement and side, default 200).
//!
//! Sizes (value bytes = the values back to back, newlines excluded):
//! - **ours, file**: the whole `.fpc` file of `write_to_vec` with default
//!   options and the codec; **ours, core**: the file minus its cascaded row
//!   boundaries (codes, sidecar, dictionary, headers, footer, padding).
//! - **onpair crate**: core = codes packed at w bits + dictionary (token bytes
//!   + `(tokens + 1)` u32 offsets); file = core + `(rows + 1)` u32 row offsets.
//! - **fsst-rs** (FSST-8): core = the compressed rows' bytes + its symbol
//!   table (8 bytes per symbol + 1 length byte); file = core + `(rows + 1)` u32
//!   row offsets.
//!
//! Compress speed: value bytes / time, training + encoding (+ file layout for
//! ours). "1T" runs in a 1-thread rayon pool (their crates are single
//! threaded); "all-T" is ours on rayon's global pool. The sides of one column
//! are timed alternately, repetition by repetition, so they see the same load.

use std::hint::black_box;

use fastpair::write::write_to_vec;
use fastpair::{Codec, CodecChoice, LogTemplates, Reader, WriterOptions};

mod harness;
use harness::{geomean, time_alternately, Args, Column, Timing};

/// Our codecs, in table order. `auto` is the library and CLI default.
const OURS: &[(&str, CodecChoice)] = &[
    ("fsst12", CodecChoice::Fixed(Codec::Fsst12)),
    ("onpair12", CodecChoice::Fixed(Codec::OnPair12)),
    ("onpair16", CodecChoice::Fixed(Codec::OnPair16)),
    ("auto", CodecChoice::Auto),
];

/// Fewest timed repetitions per side.
const MIN_REPS: usize = 3;
/// Default time per side and measurement.
const TARGET_MS: u64 = 200;

fn ours_write(c: &Column, codec: CodecChoice) -> Vec<u8> {
    // The codec's own layout (what is compared with the peers): no log
    // templates (bench/LOGS.md measures those).
    let opts = WriterOptions::default()
        .with_codec(codec)
        .with_log_templates(LogTemplates::Off);
    write_to_vec((0..c.rows()).map(|i| Some(c.row(i))), opts).expect("compress")
}

/// (core, file) bytes of our file, and the codec of its first dictionary.
fn ours_sizes(file: Vec<u8>, c: &Column) -> (usize, usize, Codec) {
    let len = file.len();
    let r = Reader::from_bytes(file).expect("open");
    assert_eq!(r.rows(), c.rows() as u64);
    let col = r.read_all().expect("decode");
    assert!(col.values == c.bytes, "{}: our round trip differs", c.name);
    let rowb: usize = (0..r.num_chunks())
        .map(|i| {
            let ch = r.chunk(i).expect("chunk");
            ch.row_codes_bytes().len() + ch.row_bytes_bytes().len()
        })
        .sum();
    (len - rowb, len, r.dictionaries().unwrap()[0].codec())
}

fn onpair_compress(c: &Column, bits: u8) -> onpair::Column<u32> {
    let cfg = onpair::Config {
        max_dict_bits: onpair::MaxDictBits::new(bits).expect("9..=16"),
        ..onpair::DEFAULT_CONFIG
    };
    onpair::compress(&c.bytes, &c.offsets, cfg).expect("compress")
}

fn onpair_sizes(col: &onpair::Column<u32>, bits: u8) -> (usize, usize) {
    let codes = (col.codes.len() * bits as usize).div_ceil(8);
    let core = codes + col.dict.logical_len() + col.dict.offsets().len() * 4;
    (core, core + col.row_offsets.len() * 4)
}

fn fsst_compress(rows: &Vec<&[u8]>) -> (fsst::Compressor, Vec<Vec<u8>>) {
    let c = fsst::Compressor::train(rows);
    let out = c.compress_bulk(rows);
    (c, out)
}

fn fsst_sizes(c: &Column, comp: &fsst::Compressor, out: &[Vec<u8>]) -> (usize, usize) {
    let d = comp.decompressor();
    for (i, o) in out.iter().enumerate().step_by(97) {
        assert!(
            d.decompress(o) == c.row(i),
            "{}: fsst-rs round trip",
            c.name
        );
    }
    let core = out.iter().map(|o| o.len()).sum::<usize>() + comp.symbol_table().len() * 9;
    (core, core + (c.rows() + 1) * 4)
}

/// One column's results.
struct Row {
    name: String,
    mb: f64,
    /// Ours per codec of `OURS`: (core, file) bytes, 1T and all-T seconds.
    ours: Vec<(usize, usize, f64, f64)>,
    /// The codec auto chose.
    auto_codec: Codec,
    /// onpair crate at 12 and 16 bits: (core, file), seconds.
    onpair: [(usize, usize, f64); 2],
    /// fsst-rs: (core, file), seconds.
    fsst: (usize, usize, f64),
}

fn main() {
    let args = Args::parse(TARGET_MS, &[], &[]);
    let target = args.target;
    let files = args.columns();
    let pool1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("1-thread pool");
    let threads = rayon::current_num_threads();

    let mut rows = Vec::new();
    for f in &files {
        let c = Column::load(f);
        let refs = c.refs();
        let mb = c.bytes.len() as f64 / 1e6;
        // Sizes (and round trips) first.
        let mut ours = Vec::new();
        let mut auto_codec = Codec::OnPair12;
        for &(name, codec) in OURS {
            let (core, file, got) = ours_sizes(ours_write(&c, codec), &c);
            if name == "auto" {
                auto_codec = got;
            }
            ours.push((core, file, 0.0, 0.0));
        }
        let op: Vec<(usize, usize)> = [12u8, 16]
            .iter()
            .map(|&b| onpair_sizes(&onpair_compress(&c, b), b))
            .collect();
        let (fc, fo) = fsst_compress(&refs);
        let fs = fsst_sizes(&c, &fc, &fo);
        // 1-thread compress: all seven sides alternately.
        let t1 = pool1.install(|| {
            let mut sides: Vec<Box<dyn FnMut()>> = Vec::new();
            for &(_, codec) in OURS {
                let c = &c;
                sides.push(Box::new(move || {
                    black_box(ours_write(c, codec));
                }));
            }
            for b in [12u8, 16] {
                let c = &c;
                sides.push(Box::new(move || {
                    black_box(onpair_compress(c, b));
                }));
            }
            let r = &refs;
            sides.push(Box::new(move || {
                black_box(fsst_compress(r));
            }));
            let mut refs_mut: Vec<&mut dyn FnMut()> = sides
                .iter_mut()
                .map(|b| &mut **b as &mut dyn FnMut())
                .collect();
            median_secs(time_alternately(
                &mut refs_mut,
                Timing::new(0, MIN_REPS, target),
            ))
        });
        // All-threads compress, ours.
        let tn = {
            let mut sides: Vec<Box<dyn FnMut()>> = Vec::new();
            for &(_, codec) in OURS {
                let c = &c;
                sides.push(Box::new(move || {
                    black_box(ours_write(c, codec));
                }));
            }
            let mut refs_mut: Vec<&mut dyn FnMut()> = sides
                .iter_mut()
                .map(|b| &mut **b as &mut dyn FnMut())
                .collect();
            median_secs(time_alternately(
                &mut refs_mut,
                Timing::new(0, MIN_REPS, target),
            ))
        };
        for (i, o) in ours.iter_mut().enumerate() {
            o.2 = t1[i];
            o.3 = tn[i];
        }
        let n = OURS.len();
        let row = Row {
            name: c.name.clone(),
            mb,
            ours,
            auto_codec,
            onpair: [(op[0].0, op[0].1, t1[n]), (op[1].0, op[1].1, t1[n + 1])],
            fsst: (fs.0, fs.1, t1[n + 2]),
        };
        let vb = c.bytes.len() as f64;
        eprintln!(
            "{}: {:.1} MB; core ratio fsst12 {:.3} onpair12 {:.3} onpair16 {:.3} auto {:.3} ({}) | onpair crate 12 {:.3} 16 {:.3} | fsst-rs {:.3}",
            row.name,
            mb,
            vb / row.ours[0].0 as f64,
            vb / row.ours[1].0 as f64,
            vb / row.ours[2].0 as f64,
            vb / row.ours[3].0 as f64,
            row.auto_codec.name(),
            vb / row.onpair[0].0 as f64,
            vb / row.onpair[1].0 as f64,
            vb / row.fsst.0 as f64,
        );
        rows.push((row, c.bytes.len()));
    }

    let mut s = String::new();
    s += &harness::machine_line();
    s += &format!(
        "Compress timing: medians of ≥ {} alternating repetitions, ≥ {} ms per side; all-T = {threads} rayon threads\n",
        MIN_REPS,
        target.as_millis()
    );
    s += "\n### Ratio: value bytes / (codes + dictionary), row offsets excluded (ours: file − row boundaries)\n\n";
    s += "| column | MB | fsst12 | fsst-rs (FSST-8) | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto | auto chose |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (r, vb) in &rows {
        let q = |b: usize| *vb as f64 / b as f64;
        s += &format!(
            "| {} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |\n",
            r.name,
            r.mb,
            q(r.ours[0].0),
            q(r.fsst.0),
            q(r.ours[1].0),
            q(r.onpair[0].0),
            q(r.ours[2].0),
            q(r.onpair[1].0),
            q(r.ours[3].0),
            r.auto_codec.name()
        );
    }
    s += "\n### Ratio: value bytes / whole file (ours: the .fpc file; peers: core + u32 row offsets)\n\n";
    s += "| column | fsst12 | fsst-rs (FSST-8) | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (r, vb) in &rows {
        let q = |b: usize| *vb as f64 / b as f64;
        s += &format!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
            r.name,
            q(r.ours[0].1),
            q(r.fsst.1),
            q(r.ours[1].1),
            q(r.onpair[0].1),
            q(r.ours[2].1),
            q(r.onpair[1].1),
            q(r.ours[3].1),
        );
    }
    s += "\n### Compress MB/s (training + encoding; 1T = one thread, all-T = ours on every thread)\n\n";
    s += "| column | fsst12 1T | all-T | fsst-rs 1T | onpair12 1T | all-T | onpair crate 12 1T | onpair16 1T | all-T | onpair crate 16 1T | auto 1T | all-T |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (r, vb) in &rows {
        let m = |t: f64| *vb as f64 / t / 1e6;
        s += &format!(
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
            r.name,
            m(r.ours[0].2),
            m(r.ours[0].3),
            m(r.fsst.2),
            m(r.ours[1].2),
            m(r.ours[1].3),
            m(r.onpair[0].2),
            m(r.ours[2].2),
            m(r.ours[2].3),
            m(r.onpair[1].2),
            m(r.ours[3].2),
            m(r.ours[3].3),
        );
    }
    // Geomeans and win counts.
    let n = rows.len();
    let gm = |f: &dyn Fn(&Row, usize) -> f64| geomean(rows.iter().map(|(r, vb)| f(r, *vb)));
    let ratio = |b: usize, vb: usize| vb as f64 / b as f64;
    let wins = |f: &dyn Fn(&Row) -> bool| rows.iter().filter(|(r, _)| f(r)).count();
    s += "\n### Geomeans over the columns above\n\n";
    s +=
        "| | fsst12 | fsst-rs | onpair12 | onpair crate 12 | onpair16 | onpair crate 16 | auto |\n";
    s += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    s += &format!(
        "| ratio, core | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
        gm(&|r, vb| ratio(r.ours[0].0, vb)),
        gm(&|r, vb| ratio(r.fsst.0, vb)),
        gm(&|r, vb| ratio(r.ours[1].0, vb)),
        gm(&|r, vb| ratio(r.onpair[0].0, vb)),
        gm(&|r, vb| ratio(r.ours[2].0, vb)),
        gm(&|r, vb| ratio(r.onpair[1].0, vb)),
        gm(&|r, vb| ratio(r.ours[3].0, vb)),
    );
    s += &format!(
        "| ratio, whole file | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |\n",
        gm(&|r, vb| ratio(r.ours[0].1, vb)),
        gm(&|r, vb| ratio(r.fsst.1, vb)),
        gm(&|r, vb| ratio(r.ours[1].1, vb)),
        gm(&|r, vb| ratio(r.onpair[0].1, vb)),
        gm(&|r, vb| ratio(r.ours[2].1, vb)),
        gm(&|r, vb| ratio(r.onpair[1].1, vb)),
        gm(&|r, vb| ratio(r.ours[3].1, vb)),
    );
    s += &format!(
        "| compress 1T MB/s | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |\n",
        gm(&|r, vb| vb as f64 / r.ours[0].2 / 1e6),
        gm(&|r, vb| vb as f64 / r.fsst.2 / 1e6),
        gm(&|r, vb| vb as f64 / r.ours[1].2 / 1e6),
        gm(&|r, vb| vb as f64 / r.onpair[0].2 / 1e6),
        gm(&|r, vb| vb as f64 / r.ours[2].2 / 1e6),
        gm(&|r, vb| vb as f64 / r.onpair[1].2 / 1e6),
        gm(&|r, vb| vb as f64 / r.ours[3].2 / 1e6),
    );
    s += "\n### Summary\n\n";
    s += &format!(
        "- Core ratio (row offsets excluded) ours ≥ peer: fsst12 vs fsst-rs {}/{n}; onpair12 vs onpair crate 12 {}/{n}; onpair16 vs onpair crate 16 {}/{n}.\n",
        wins(&|r| r.ours[0].0 <= r.fsst.0),
        wins(&|r| r.ours[1].0 <= r.onpair[0].0),
        wins(&|r| r.ours[2].0 <= r.onpair[1].0),
    );
    s += &format!(
        "- Whole-file ratio ours ≥ peer: fsst12 vs fsst-rs {}/{n}; onpair12 vs onpair crate 12 {}/{n}; onpair16 vs onpair crate 16 {}/{n}; auto ≥ every peer {}/{n}.\n",
        wins(&|r| r.ours[0].1 <= r.fsst.1),
        wins(&|r| r.ours[1].1 <= r.onpair[0].1),
        wins(&|r| r.ours[2].1 <= r.onpair[1].1),
        wins(&|r| r.ours[3].1 <= r.fsst.1.min(r.onpair[0].1).min(r.onpair[1].1)),
    );
    s += &format!(
        "- Compress, 1 thread, ours / theirs (geomean of speed ratios): onpair12 {:.2}×, onpair16 {:.2}×, fsst12 vs fsst-rs {:.2}×; auto vs onpair crate 16 {:.2}×.\n",
        gm(&|r, _| r.onpair[0].2 / r.ours[1].2),
        gm(&|r, _| r.onpair[1].2 / r.ours[2].2),
        gm(&|r, _| r.fsst.2 / r.ours[0].2),
        gm(&|r, _| r.onpair[1].2 / r.ours[3].2),
    );
    s += &format!(
        "- Compress, all {threads} threads / 1 thread, ours (geomean): fsst12 {:.2}×, onpair12 {:.2}×, onpair16 {:.2}×, auto {:.2}×.\n",
        gm(&|r, _| r.ours[0].2 / r.ours[0].3),
        gm(&|r, _| r.ours[1].2 / r.ours[1].3),
        gm(&|r, _| r.ours[2].2 / r.ours[2].3),
        gm(&|r, _| r.ours[3].2 / r.ours[3].3),
    );
    println!("{s}");
    args.write_report(&s);
}

fn median_secs(stats: Vec<harness::Stat>) -> Vec<f64> {
    stats.into_iter().map(|s| s.median).collect()
}
