//! Instruction-count probe for random `get` (run under callgrind).
use fastpair::{Codec, Reader, WriterOptions};
fn main() {
    let f = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&f).unwrap();
    let rows: Vec<&[u8]> = data
        .strip_suffix(b"\n")
        .unwrap_or(&data)
        .split(|&b| b == b'\n')
        .collect();
    let o = WriterOptions {
        codec: Codec::OnPair12,
        ..WriterOptions::default()
    };
    let file = fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), o).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let mut buf = Vec::new();
    r.get_into(0, &mut buf).unwrap();
    let n = r.rows();
    let mut x = 12345u64;
    let t = std::time::Instant::now();
    for _ in 0..1_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.get_into(x % n, &mut buf).unwrap();
    }
    println!("{:.0} ns/get", t.elapsed().as_secs_f64() * 1e3);
}
