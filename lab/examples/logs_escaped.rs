//! Share of escaped rows (template 0: rows no mined template holds) in the
//! writer's first log screen (`write::logs::looks_like_logs`: 256 evenly
//! spaced rows, about 32 KiB, one plain block) and in a 1,024-row sample,
//! per column, next to the screen's ratio, and the 1,024-row sample mined only
//! (`logs::unmatched_share`, every tokenization): does it tell logs from prose?
//!
//! ```text
//! FASTPAIR_CORPUS=DIR cargo run --release -p fastpair-lab --example logs_escaped
//! ```

use fastpair::logs::{encode, encode_column, unmatched_share, LogBlock, LogColumn, LogOptions};
use std::time::Instant;

fn sample<'a>(rows: &[&'a [u8]], max_rows: usize, max_bytes: usize) -> Vec<&'a [u8]> {
    let step = rows.len().div_ceil(max_rows).max(1);
    let step = step.max(
        rows.iter()
            .map(|r| r.len())
            .sum::<usize>()
            .div_ceil(max_bytes),
    );
    let mut out = Vec::new();
    let mut text = 0;
    for r in rows.iter().step_by(step) {
        if text + r.len() > 2 * max_bytes && !out.is_empty() {
            break;
        }
        text += r.len();
        out.push(*r);
    }
    out
}

fn main() {
    let plain = LogOptions {
        families: false,
        prune_pool: false,
        ..LogOptions::default()
    };
    println!("| column | rows | screen ratio | screen escaped | screen templates | 1K ratio | 1K escaped | 1K templates | 1K unmatched (mined only) | 1K encode us | 1K mine us |");
    for f in fastpair::testing::corpus::files(&[]) {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let data = std::fs::read(&f).expect("read");
        let rows = fastpair::testing::corpus::lines(&data);
        let mut cells = Vec::new();
        let s = sample(&rows, 256, 32 << 10);
        let text: usize = s.iter().map(|r| r.len()).sum();
        let payload = encode(&s, &plain);
        let block = LogBlock::open(&payload).expect("open");
        cells.push(format!(
            "{:.2} | {:.3} | {}",
            text as f64 / payload.len() as f64,
            block.escaped_rows() as f64 / s.len() as f64,
            block.templates()
        ));
        // The writer's estimate's smaller sample: every n-th row, the
        // column's candidates (`encode_column`).
        let step = rows.len().div_ceil(1024);
        let s: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
        let text: usize = s.iter().map(|r| r.len()).sum();
        let payload = encode_column(&s, &plain);
        let col = LogColumn::open(&payload).expect("open");
        let blocks = if col.is_split() { 2 } else { 1 };
        cells.push(format!(
            "{:.2} | {:.3} | {}",
            text as f64 / payload.len() as f64,
            col.escaped_rows() as f64 / (s.len() * blocks) as f64,
            col.templates()
        ));
        // The same sample mined only (`unmatched_share`), and what each
        // costs.
        let t0 = Instant::now();
        let _ = encode_column(&s, &plain);
        let enc_us = t0.elapsed().as_micros();
        let t0 = Instant::now();
        let u = unmatched_share(&s, &plain, 0.0);
        let mine_us = t0.elapsed().as_micros();
        cells.push(format!("{u:.3} | {enc_us} | {mine_us}"));
        println!("| {name} | {} | {} |", rows.len(), cells.join(" | "));
    }
}
