//! Shared-dictionary drift retraining on columns made of two corpus columns
//! back to back (or one column): file size, dictionaries, chunks.
//!
//! ```text
//! cargo run --release -p fastpair-lab --example drift_probe -- CHUNK_KIB SAMPLE_KIB MB FILE [FILE2]
//! ```

use fastpair::WriterOptions;

fn rows_of(data: &[u8], bytes: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut got = 0;
    for r in data.split(|&b| b == b'\n') {
        if got >= bytes {
            break;
        }
        got += r.len();
        out.push(r);
    }
    out
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let chunk_kib: usize = a[0].parse().expect("CHUNK_KIB");
    let sample_kib: usize = a[1].parse().expect("SAMPLE_KIB");
    let mb: f64 = a[2].parse().expect("MB");
    let datas: Vec<Vec<u8>> = a[3..]
        .iter()
        .map(|f| std::fs::read(f).expect("read"))
        .collect();
    let per = (mb * 1e6) as usize / datas.len();
    let rows: Vec<&[u8]> = datas.iter().flat_map(|d| rows_of(d, per)).collect();
    let bytes: usize = rows.iter().map(|r| r.len()).sum();
    let mut o = WriterOptions::default();
    o.chunk_bytes = chunk_kib << 10;
    o.sample_bytes = sample_kib << 10;
    let t = std::time::Instant::now();
    let (file, s) = fastpair::write::write_to_vec_with_summary(rows.iter().map(|r| Some(*r)), o)
        .expect("write");
    println!(
        "{} MB in {} chunks: {} B, ratio {:.3}, {} dictionaries, {:.2} s",
        bytes as f64 / 1e6,
        s.chunks,
        file.len(),
        bytes as f64 / file.len() as f64,
        s.dicts,
        t.elapsed().as_secs_f64()
    );
}
