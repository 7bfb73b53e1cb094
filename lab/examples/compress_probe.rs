//! Compress-time probe: ours (one rayon thread and all threads) next to the
//! `onpair` crate, one column, best of N runs.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example compress_probe -- FILE [onpair12|onpair16|fsst12|auto] [RUNS]
//! ```
use std::time::Instant;

use fastpair::write::write_to_vec;
use fastpair::{CodecChoice, WriterOptions};

fn main() {
    let mut a = std::env::args().skip(1);
    let f = a.next().expect("FILE");
    let codec =
        CodecChoice::from_name(&a.next().unwrap_or_else(|| "onpair16".into())).expect("codec name");
    let runs: usize = a.next().map_or(3, |s| s.parse().expect("runs"));
    let data = std::fs::read(&f).expect("read");
    let rows = fastpair::testing::corpus::lines(&data);
    let mut bytes = Vec::new();
    let mut offsets = vec![0u32];
    for r in &rows {
        bytes.extend_from_slice(r);
        offsets.push(bytes.len() as u32);
    }
    let mb = bytes.len() as f64 / 1e6;
    let ours = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| {
            let mut best = f64::MAX;
            let mut len = 0;
            for _ in 0..runs {
                let t = Instant::now();
                let o = WriterOptions::default().with_codec(codec);
                let file = write_to_vec(rows.iter().map(|r| Some(*r)), o).expect("write");
                best = best.min(t.elapsed().as_secs_f64());
                len = file.len();
            }
            (best, len)
        })
    };
    let (o1, len) = ours(1);
    let (on, _) = ours(rayon::current_num_threads());
    let bits = match codec {
        CodecChoice::Fixed(c) => c.code_bits(),
        _ => 16,
    };
    let cfg = onpair::Config {
        max_dict_bits: onpair::MaxDictBits::new(bits).expect("bits"),
        ..onpair::DEFAULT_CONFIG
    };
    let mut theirs = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let c = onpair::compress(&bytes, &offsets, cfg).expect("compress");
        std::hint::black_box(&c);
        theirs = theirs.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} {}: {:.1} MB, ours 1T {:.1} MB/s, all-T {:.1} MB/s ({:.2}x 1T), theirs({bits}) 1T {:.1} MB/s; ours/theirs 1T {:.2}x; file {} B",
        f.rsplit('/').next().unwrap_or(&f),
        codec.name(),
        mb,
        mb / o1,
        mb / on,
        o1 / on,
        mb / theirs,
        theirs / o1,
        len
    );
}
