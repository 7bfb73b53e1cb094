//! File-level compression ratio (value bytes / file bytes) per column and codec.
//! `cargo run --release --example file_ratio DIR [MARGIN]`
use fastpair::{Codec, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "target/corpus".into());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.sort();
    println!("{:<32} {:>8} {:>8} {:>8}", "column", "MB", "fp12", "fp16");
    for f in files {
        let data = std::fs::read(&f).unwrap();
        let rows = fastpair::testing::corpus::lines(&data);
        let bytes: usize = rows.iter().map(|r| r.len()).sum();
        let mut ratios = Vec::new();
        for codec in [Codec::OnPair12, Codec::OnPair16] {
            let o = WriterOptions::default().with_codec(codec);
            let file = fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), o).unwrap();
            ratios.push(bytes as f64 / file.len() as f64);
        }
        let name = f.file_stem().unwrap().to_string_lossy();
        println!(
            "{:<32} {:>8.2} {:>8.3} {:>8.3}",
            name,
            bytes as f64 / 1e6,
            ratios[0],
            ratios[1]
        );
    }
}
