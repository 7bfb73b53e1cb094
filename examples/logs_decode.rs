//! CPU bulk decode of log-template payloads (issue 20: ≥ 2 GB/s per thread),
//! one thread, in thread CPU time (the shared VM's wall time is noise).
//!
//! `cargo run --release --example logs_decode [FILTER] [ITERS]`: every
//! corpus column whose name contains FILTER (default `loghub`), encoded with
//! `fastpair::logs::encode_column` (one block of all its rows, as a chunk
//! holds it), opened once, then `LogColumn::decode_all` into values + i64
//! offsets ITERS times (default 20; best run kept). Prints GB/s of decoded
//! text per column and the geomean. With ITERS = 1 it is the workload for
//! `valgrind --tool=callgrind` (instruction counts are what is reliable on a
//! loaded machine).

use fastpair::logs::{encode_column, LogColumn, LogOptions};

fn thread_secs() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.first().cloned().unwrap_or_else(|| "loghub".into());
    let iters: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let files = fastpair::testing::corpus::files(&[filter]);
    let (mut logsum, mut n) = (0.0f64, 0usize);
    let (mut values, mut offsets) = (Vec::new(), Vec::new());
    for p in files {
        let text = std::fs::read(&p).unwrap();
        let rows = fastpair::testing::corpus::lines(&text);
        let bytes: usize = rows.iter().map(|r| r.len()).sum();
        let payload = encode_column(&rows, &LogOptions::default());
        let col = LogColumn::open(&payload).unwrap();
        let mut best = f64::MAX;
        for _ in 0..iters {
            let t = thread_secs();
            col.decode_all(&mut values, &mut offsets);
            best = best.min(thread_secs() - t);
        }
        assert_eq!(values.len(), bytes);
        let gbs = bytes as f64 / best.max(1e-9) / 1e9;
        logsum += gbs.ln();
        n += 1;
        println!(
            "{:<28} {:>8} rows {:>9} B  {:>6.2} GB/s",
            p.file_stem().unwrap().to_string_lossy(),
            rows.len(),
            bytes,
            gbs
        );
    }
    if n > 0 {
        println!(
            "geomean {:.2} GB/s over {n} columns",
            (logsum / n as f64).exp()
        );
    }
}
