//! Single-thread training and encoding speed on one column:
//! `cargo run --release -p fastpair-lab --example enc_probe FILE`.
use fastpair::dict::matcher::Matcher;
use fastpair::dict::onpair::{self, OnPairParams};
use std::time::Instant;

fn main() {
    let f = std::env::args().nth(1).expect("FILE");
    let data = std::fs::read(&f).unwrap();
    let rows = fastpair::testing::corpus::lines(&data);
    let bytes: usize = rows.iter().map(|r| r.len()).sum();
    for params in [OnPairParams::onpair12(), OnPairParams::onpair16()] {
        let t = Instant::now();
        let table = onpair::train(&rows, &params);
        let train = t.elapsed().as_secs_f64();
        let m = Matcher::new(&table);
        let mut codes = Vec::new();
        let t = Instant::now();
        for r in &rows {
            m.encode_into(r, &mut codes);
        }
        let enc = t.elapsed().as_secs_f64();
        println!(
            "{}-bit: train {:.0} ms, encode {:.0} MB/s ({:.2} B/code), total {:.0} MB/s",
            params.code_bits,
            train * 1e3,
            bytes as f64 / enc / 1e6,
            bytes as f64 / codes.len() as f64,
            bytes as f64 / (train + enc) / 1e6
        );
    }
}
