//! Times open + first read_all (validation included) and a second read_all
//! of a column written with and without value dictionaries:
//! `cargo run --release -p fastpair-lab --example vdict_time -- FILE`.
use std::time::Instant;

use fastpair::write::write_to_vec;
use fastpair::{Reader, WriterOptions};

fn main() {
    let path = std::env::args().nth(1).expect("a column file");
    let text = std::fs::read(&path).expect("read column");
    let mut rows: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    rows.pop();
    for value_dict in [false, true] {
        let o = WriterOptions::default().with_value_dict(value_dict);
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), o).expect("write");
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let t = Instant::now();
            let r = Reader::from_bytes(file.clone()).expect("open");
            let c = r.read_all().expect("read");
            let first = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let c2 = r.read_all().expect("read");
            let second = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(c.values.len(), c2.values.len());
            best = (best.0.min(first), best.1.min(second));
        }
        println!(
            "value_dict={value_dict}: {} bytes; open+validate+read_all {:.2} ms, read_all again {:.2} ms",
            file.len(),
            best.0,
            best.1
        );
    }
}
