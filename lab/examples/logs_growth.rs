//! How a log payload grows with the rows sampled (`write::logs`'s estimate):
//! per column, evenly spaced samples of 1,024, 4,096 and 16,384 rows encoded
//! plain (no families, no pool pruning), the fitted exponent `k` of
//! `payload = a·text^k` between each pair, and the whole column's payload.
//!
//! ```text
//! FASTPAIR_CORPUS=DIR cargo run --release -p fastpair-lab --example logs_growth -- [FILTER...]
//! ```

use fastpair::logs::{encode_column, LogOptions};

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).collect();
    let lo = LogOptions {
        families: false,
        prune_pool: false,
        ..LogOptions::default()
    };
    println!("| column | rows | text | 1K text | 1K payload | 4K payload | k(1K,4K) | 16K payload | k(4K,16K) | whole payload | k(4K,whole) |");
    for f in fastpair::testing::corpus::files(&filters) {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let data = std::fs::read(&f).expect("read");
        let rows = fastpair::testing::corpus::lines(&data);
        if rows.len() <= 8 * 1024 {
            continue;
        }
        let total: usize = rows.iter().map(|r| r.len()).sum();
        let point = |n: usize| {
            let step = rows.len().div_ceil(n);
            let s: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
            let text: usize = s.iter().map(|r| r.len()).sum();
            (text.max(1) as f64, encode_column(&s, &lo).len() as f64)
        };
        let k = |(t1, c1): (f64, f64), (t2, c2): (f64, f64)| (c2 / c1).ln() / (t2 / t1).ln();
        let p1 = point(1024);
        let p2 = point(4096);
        let p3 = point(16384);
        let whole = (total as f64, encode_column(&rows, &lo).len() as f64);
        println!(
            "| {name} | {} | {total} | {:.0} | {:.0} | {:.0} | {:.3} | {:.0} | {:.3} | {:.0} | {:.3} |",
            rows.len(),
            p1.0,
            p1.1,
            p2.1,
            k(p1, p2),
            p3.1,
            k(p2, p3),
            whole.1,
            k(p2, whole)
        );
    }
}
