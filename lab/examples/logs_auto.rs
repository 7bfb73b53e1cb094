//! `auto` with log-template chunks (issue 20) against `auto` without them
//! on every corpus column: file bytes both ways, the chunks that became log
//! templates, and compress time. `auto` must never give a larger file.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example logs_auto -- [FILTER...]   (default: every column)
//! ```

use std::time::Instant;

use fastpair::read::ChunkKind;
use fastpair::write::write_to_vec;
use fastpair::{LogTemplates, Reader, WriterOptions};

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).collect();
    let files = fastpair::testing::corpus::files(&filters);
    println!("| column | MB | auto (logs) bytes | ratio | auto without logs | ratio | log chunks | compress s (with / without) |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut worse = Vec::new();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let vals = fastpair::testing::corpus::lines(&data);
        let text: usize = vals.iter().map(|r| r.len()).sum();
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let t = Instant::now();
        let with = write_to_vec(
            vals.iter().map(|r| Some(*r)),
            WriterOptions::default().with_log_templates(LogTemplates::Auto),
        )
        .unwrap();
        let tw = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let without = write_to_vec(
            vals.iter().map(|r| Some(*r)),
            WriterOptions::default().with_log_templates(LogTemplates::Off),
        )
        .unwrap();
        let to = t.elapsed().as_secs_f64();
        let r = Reader::from_bytes(with.clone()).unwrap();
        let logs = (0..r.num_chunks())
            .filter(|&i| r.chunk_info(i).kind() == ChunkKind::LogTemplates)
            .count();
        println!(
            "| {name} | {:.2} | {} | {:.2} | {} | {:.2} | {logs} of {} | {tw:.2} / {to:.2} |",
            text as f64 / 1e6,
            with.len(),
            text as f64 / with.len() as f64,
            without.len(),
            text as f64 / without.len() as f64,
            r.num_chunks()
        );
        if with.len() > without.len() {
            worse.push(name);
        }
    }
    println!();
    println!(
        "larger with log templates: {}",
        if worse.is_empty() {
            "none".into()
        } else {
            worse.join(", ")
        }
    );
}
