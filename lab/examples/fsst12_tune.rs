//! Sweep of the FSST-12 trainer's sample size and round count on the corpus:
//! prints, per setting, the geomean ratio of value bytes over codes +
//! dictionary (the dictionary at 8.5 bytes per learned symbol and 256 single
//! bytes, as stored) and the total training time.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example fsst12_tune -- [CORPUS_DIR] [SAMPLE_KIB,...] [ROUNDS,...]
//! ```
use std::time::Instant;

use fastpair::dict::fsst12::{self, Fsst12Params};
use fastpair::dict::matcher::Matcher;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "target/corpus".into());
    let list = |s: Option<String>, d: &str| -> Vec<usize> {
        s.unwrap_or_else(|| d.into())
            .split(',')
            .map(|x| x.parse().expect("number"))
            .collect()
    };
    let samples = list(args.next(), "16,64,256,1024");
    let rounds = list(args.next(), "3,5,8");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let data: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|p| {
            (
                p.file_stem().unwrap().to_string_lossy().into_owned(),
                std::fs::read(p).expect("read"),
            )
        })
        .collect();
    for &s in &samples {
        for &r in &rounds {
            let p = Fsst12Params {
                sample_bytes: s << 10,
                rounds: r,
                ..Fsst12Params::default()
            };
            let (mut log_sum, mut train_s) = (0.0f64, 0.0f64);
            let mut per = Vec::new();
            for (name, d) in &data {
                let rows: Vec<&[u8]> = d
                    .strip_suffix(b"\n")
                    .unwrap_or(d)
                    .split(|&b| b == b'\n')
                    .collect();
                let t0 = Instant::now();
                let t = fsst12::train(&rows, &p);
                train_s += t0.elapsed().as_secs_f64();
                let m = Matcher::new(&t);
                let mut codes = Vec::new();
                let (mut n, mut bytes) = (0usize, 0usize);
                for row in &rows {
                    codes.clear();
                    m.encode_into(row, &mut codes);
                    n += codes.len();
                    bytes += row.len();
                }
                let size = n as f64 * 1.5 + t.len() as f64 * 8.5;
                let ratio = bytes as f64 / size;
                log_sum += ratio.ln();
                if std::env::var("FSST_RS").is_ok() {
                    let c = fsst::Compressor::train(&rows);
                    let out = c.compress_bulk(&rows);
                    let theirs =
                        out.iter().map(|o| o.len()).sum::<usize>() + c.symbol_table().len() * 9;
                    let tr = bytes as f64 / theirs as f64;
                    per.push(format!(
                        "{name}: ours {ratio:.3} fsst-rs {tr:.3}{}",
                        if ratio < tr { "  <-- behind" } else { "" }
                    ));
                } else {
                    per.push(format!("{name}={ratio:.3}"));
                }
            }
            println!(
                "sample {s:>5} KiB rounds {r}: geomean ratio {:.4}, train {:.2} s",
                (log_sum / data.len() as f64).exp(),
                train_s
            );
            if std::env::var("VERBOSE").is_ok() {
                println!("  {}", per.join("\n  "));
            }
        }
    }
}
