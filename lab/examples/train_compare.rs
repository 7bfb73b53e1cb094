//! Compares OnPair training against the published `onpair` crate on every file
//! of a corpus directory (one value per line; default `target/corpus`, unpack
//! it with `../shared/tools/corpus-unpack target/corpus`).
//!
//! ```text
//! cargo run --release -p fastpair-lab --example train_compare [DIR] [NAME_FILTER]
//! ```
//!
//! Ratio = value bytes / (codes × bits/8 + dictionary bytes); row offsets are
//! left out for both. MB/s is our training plus encoding, single-threaded.

use std::time::Instant;

use fastpair::dict::matcher::Matcher;
use fastpair::dict::onpair::{train, OnPairParams};

/// Our ratio, dictionary size and training + encoding time in seconds.
fn ours(rows: &[&[u8]], bits: u8) -> (f64, usize, f64) {
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let params = OnPairParams {
        code_bits: bits,
        ..OnPairParams::default()
    };
    let t0 = Instant::now();
    let table = train(rows, &params);
    let matcher = Matcher::new(&table);
    let mut codes = Vec::with_capacity(total / 2);
    for r in rows {
        matcher.encode_into(r, &mut codes);
    }
    let secs = t0.elapsed().as_secs_f64();
    let dict_bytes: usize = table.lens().iter().map(|&l| l as usize).sum();
    let size = codes.len() as f64 * f64::from(bits) / 8.0 + dict_bytes as f64;
    (total as f64 / size, table.len(), secs)
}

/// The `onpair` crate's ratio, dictionary size and time in seconds.
fn theirs(bytes: &[u8], offsets: &[u32], bits: u8) -> (f64, usize, f64) {
    let cfg = onpair::Config {
        max_dict_bits: onpair::MaxDictBits::new(bits).expect("valid bits"),
        ..onpair::Config::default()
    };
    let t0 = Instant::now();
    let col = onpair::compress(bytes, offsets, cfg).expect("compress");
    let secs = t0.elapsed().as_secs_f64();
    let (dict, codes, _) = col.into_raw();
    let size = codes.len() as f64 * f64::from(bits) / 8.0 + dict.logical_len() as f64;
    let total = (offsets[offsets.len() - 1] - offsets[0]) as f64;
    (total / size, dict.num_tokens(), secs)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| "target/corpus".to_string());
    let filter = args.next().unwrap_or_default();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.to_string_lossy().contains(&filter))
        .collect();
    files.sort();
    println!(
        "{:<28} {:>9} {:>7} {:>8} {:>7} {:>8} {:>6} {:>6} {:>7} {:>7}",
        "column",
        "MB",
        "ours12",
        "theirs12",
        "ours16",
        "theirs16",
        "tok16",
        "their",
        "MB/s",
        "theirMB/s"
    );
    let (mut wins12, mut wins16, mut n) = (0, 0, 0);
    for path in files {
        let data = std::fs::read(&path).expect("read");
        let mut rows: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        if data.last() == Some(&b'\n') {
            rows.pop();
        }
        let mut bytes = Vec::with_capacity(data.len());
        let mut offsets = vec![0u32];
        for r in &rows {
            bytes.extend_from_slice(r);
            offsets.push(bytes.len() as u32);
        }
        let (o12, _, t12) = ours(&rows, 12);
        let (o16, k16, t16) = ours(&rows, 16);
        let (p12, _, _) = theirs(&bytes, &offsets, 12);
        let (p16, pk16, pt16) = theirs(&bytes, &offsets, 16);
        let mb = bytes.len() as f64 / 1e6;
        n += 1;
        wins12 += usize::from(o12 >= p12);
        wins16 += usize::from(o16 >= p16);
        println!(
            "{:<28} {:>9.2} {:>7.3} {:>8.3} {:>7.3} {:>8.3} {:>6} {:>6} {:>7.0} {:>7.0}",
            path.file_stem().unwrap().to_string_lossy(),
            mb,
            o12,
            p12,
            o16,
            p16,
            k16,
            pk16,
            2.0 * mb / (t12 + t16),
            mb / pt16
        );
    }
    println!("ours >= theirs: 12-bit {wins12}/{n}, 16-bit {wins16}/{n}");
}
