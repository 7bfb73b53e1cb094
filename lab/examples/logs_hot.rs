//! Hot loop of one part of the log template codec (issue 20), for `perf`:
//! `logs_hot MODE [FILTER...]`, MODE = `encode`, `decode` or `get` (`parts`, `dump`: sizes, payloads); repeats
//! the operation over the selected Loghub columns for ~3 s each.
//!
//! ```text
//! cargo build --release -p fastpair-lab --example logs_hot
//! perf record -g target/release/examples/logs_hot decode loghub_Mac_2k
//! LOGS_HOT_ONCE=1 valgrind --tool=callgrind target/release/examples/logs_hot encode loghub_Mac_2k
//! ```

use std::hint::black_box;
use std::time::Instant;

use fastpair::logs::{encode_column, LogColumn, LogOptions};

/// Thread CPU seconds (the build machine is shared; wall time measures the
/// neighbours).
fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "decode".into());
    let mut filters: Vec<String> = args.collect();
    if filters.is_empty() {
        filters.push("loghub".into());
    }
    for f in fastpair::testing::corpus::files(&filters) {
        let data = std::fs::read(&f).unwrap();
        let rows = fastpair::testing::corpus::lines(&data);
        let text: usize = rows.iter().map(|r| r.len()).sum();
        let opts = LogOptions::default();
        let enc = encode_column(&rows, &opts);
        let col = LogColumn::open(&enc).unwrap();
        if mode == "dump" {
            // `dump`: the payload to $LOGS_HOT_DUMP/NAME.fpl (for offline
            // experiments on its parts).
            let dir = std::env::var("LOGS_HOT_DUMP").unwrap_or_else(|_| ".".into());
            let name = f.file_stem().unwrap().to_string_lossy().into_owned();
            std::fs::write(format!("{dir}/{name}.fpl"), &enc).unwrap();
            continue;
        }
        if mode == "parts" {
            let blocks: Vec<&[u8]> = if enc.starts_with(b"FPS6") {
                let n = u32::from_le_bytes(enc[4..8].try_into().unwrap()) as usize;
                vec![&enc[8..8 + n], &enc[8 + n..]]
            } else {
                vec![&enc[..]]
            };
            for b in blocks {
                println!(
                    "{} {} bytes: [header, meta, rowidx, data, pool, pad] = {:?}",
                    f.file_stem().unwrap().to_string_lossy(),
                    b.len(),
                    fastpair::logs::part_sizes(b).unwrap()
                );
            }
            continue;
        }
        let (mut v, mut o) = (Vec::new(), Vec::new());
        let t = Instant::now();
        let c0 = cpu();
        let mut n = 0usize;
        // `LOGS_HOT_ONCE=1`: one operation (instruction counts under
        // callgrind, one encode each).
        let once = std::env::var_os("LOGS_HOT_ONCE").is_some();
        while n == 0 || (!once && t.elapsed().as_secs_f64() < 3.0) {
            match mode.as_str() {
                "encode" => {
                    black_box(encode_column(&rows, &opts));
                }
                "get" => {
                    let mut buf = Vec::new();
                    for r in (0..rows.len()).map(|i| i * 7919 % rows.len()) {
                        buf.clear();
                        col.get_into(r, &mut buf).unwrap();
                        black_box(&buf);
                    }
                }
                _ => col.decode_all(&mut v, &mut o),
            }
            n += 1;
        }
        let s = (cpu() - c0) / n as f64;
        println!(
            "{} {mode}: {:.1} MB/s (thread CPU time)",
            f.file_stem().unwrap().to_string_lossy(),
            text as f64 / s / 1e6
        );
    }
}
