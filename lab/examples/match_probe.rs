//! Speed of the greedy encoder alone (`Matcher::encode_into`), one thread:
//! trains OnPair-12 and OnPair-16 dictionaries on each column once, then
//! encodes the column `RUNS` times and reports the best run.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example match_probe -- RUNS FILE...
//! ```
use std::time::Instant;

use fastpair::dict::matcher::Matcher;
use fastpair::dict::onpair::{self, OnPairParams};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().expect("RUNS").parse().expect("RUNS");
    for f in args {
        let data = std::fs::read(&f).expect("read");
        let rows = fastpair::testing::corpus::lines(&data);
        let bytes: usize = rows.iter().map(|r| r.len()).sum();
        let name = f.rsplit('/').next().unwrap_or(&f).to_string();
        let mut line = format!("{name:<28}");
        for params in [OnPairParams::onpair12(), OnPairParams::onpair16()] {
            let table = onpair::train(&rows, &params);
            let m = Matcher::new(&table);
            let mut codes = Vec::with_capacity(bytes);
            let mut best = f64::MAX;
            for _ in 0..runs {
                codes.clear();
                let t = Instant::now();
                for r in &rows {
                    m.encode_into(r, &mut codes);
                }
                best = best.min(t.elapsed().as_secs_f64());
            }
            let ns = best * 1e9 / codes.len() as f64;
            line += &format!(
                " w{}: {:6.1} MB/s {:5.1} ns/code",
                params.code_bits,
                bytes as f64 / best / 1e6,
                ns
            );
        }
        println!("{line}");
    }
}
