//! The cheap screen in front of `LogTemplates::Auto` (src/write/logs.rs):
//! per corpus column, one plain log encode (one block, no families) of an
//! evenly spaced sample capped by rows and bytes: its ratio and time, next
//! to the coded chunk's ratio and whether `auto` keeps log templates.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example logs_screen -- [FILTER...]
//! ```

use std::time::Instant;

use fastpair::logs::{encode, LogOptions};
use fastpair::read::ChunkKind;
use fastpair::write::write_to_vec;
use fastpair::{LogTemplates, Reader, WriterOptions};

fn sample<'a>(rows: &[&'a [u8]], max_rows: usize, max_bytes: usize) -> Vec<&'a [u8]> {
    let step = rows.len().div_ceil(max_rows.max(1)).max(1);
    let mut out = Vec::new();
    let mut bytes = 0;
    for r in rows.iter().step_by(step) {
        if bytes + r.len() > max_bytes && !out.is_empty() {
            break;
        }
        bytes += r.len();
        out.push(*r);
    }
    out
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).collect();
    let files = fastpair::testing::corpus::files(&filters);
    let plain = LogOptions {
        families: false,
        ..LogOptions::default()
    };
    let shapes = [
        (64, 8 << 10),
        (128, 16 << 10),
        (256, 16 << 10),
        (256, 32 << 10),
    ];
    print!("| column | rows | coded ratio | auto keeps logs |");
    for (r, b) in shapes {
        print!(" {r}r/{}K ratio | us |", b >> 10);
    }
    println!();
    for f in &files {
        let data = std::fs::read(f).unwrap();
        let vals = fastpair::testing::corpus::lines(&data);
        let text: usize = vals.iter().map(|r| r.len()).sum();
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let coded = write_to_vec(
            vals.iter().map(|r| Some(*r)),
            WriterOptions::default().with_log_templates(LogTemplates::Off),
        )
        .unwrap();
        let auto = write_to_vec(
            vals.iter().map(|r| Some(*r)),
            WriterOptions::default().with_log_templates(LogTemplates::Auto),
        )
        .unwrap();
        let r = Reader::from_bytes(auto).unwrap();
        let logs = (0..r.num_chunks())
            .filter(|&i| r.chunk_info(i).kind() == ChunkKind::LogTemplates)
            .count();
        print!(
            "| {name} | {} | {:.2} | {logs}/{} |",
            vals.len(),
            text as f64 / coded.len() as f64,
            r.num_chunks()
        );
        for (mr, mb) in shapes {
            let s = sample(&vals, mr, mb);
            let st: usize = s.iter().map(|r| r.len()).sum();
            let mut best = f64::MAX;
            let mut len = 0;
            for _ in 0..3 {
                let t = Instant::now();
                len = encode(&s, &plain).len();
                best = best.min(t.elapsed().as_secs_f64());
            }
            print!(
                " {:.2} | {:.0} |",
                st as f64 / len.max(1) as f64,
                best * 1e6
            );
        }
        println!();
    }
}
