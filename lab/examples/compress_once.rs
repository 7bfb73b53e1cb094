//! One compress of one column by one side, one thread: a target for
//! callgrind instruction counts (ours next to the peers, bench/COMPRESS.md).
//!
//! ```text
//! cargo build --release -p fastpair-lab --example compress_once
//! valgrind --tool=callgrind target/release/examples/compress_once FILE SIDE
//! # SIDE: fsst12 | onpair12 | onpair16 | auto (ours) | crate12 | crate16 | fsst-rs | read
//! # COMPRESS_THREADS=N: an N-thread pool (default 1)
//! # COMPRESS_LOGS=off|auto|always: our sides' log templates (default: the writer's)
//! ```

use std::hint::black_box;

use fastpair::{CodecChoice, LogTemplates, WriterOptions};

fn main() {
    let mut a = std::env::args().skip(1);
    let f = a.next().expect("FILE");
    let side = a.next().expect("SIDE");
    let data = std::fs::read(&f).expect("read");
    let rows = fastpair::testing::corpus::lines(&data);
    // One thread unless COMPRESS_THREADS says otherwise (thread scaling).
    let threads: usize = std::env::var("COMPRESS_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let out_len = pool.install(|| match side.as_str() {
        "crate12" | "crate16" => {
            let mut bytes = Vec::new();
            let mut offsets = vec![0u32];
            for r in &rows {
                bytes.extend_from_slice(r);
                offsets.push(bytes.len() as u32);
            }
            let bits = if side == "crate12" { 12 } else { 16 };
            let cfg = onpair::Config {
                max_dict_bits: onpair::MaxDictBits::new(bits).expect("9..=16"),
                ..onpair::DEFAULT_CONFIG
            };
            let col = onpair::compress(&bytes, &offsets, cfg).expect("compress");
            col.codes.len()
        }
        // Reading and splitting only: the part every side shares.
        "read" => rows.len(),
        "fsst-rs" => {
            let c = fsst::Compressor::train(&rows);
            let out = c.compress_bulk(&rows);
            out.iter().map(|o| o.len()).sum()
        }
        name => {
            let mut o = WriterOptions::default();
            o.codec = CodecChoice::from_name(name).expect("codec name");
            match std::env::var("COMPRESS_LOGS").as_deref() {
                Ok("off") => o.log_templates = LogTemplates::Off,
                Ok("auto") => o.log_templates = LogTemplates::Auto,
                Ok("always") => o.log_templates = LogTemplates::Always,
                _ => {}
            }
            fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), o)
                .expect("write")
                .len()
        }
    });
    println!("{side} {}", black_box(out_len));
}
