use fastpair::{Codec, Reader, WriterOptions};
use std::time::Instant;
fn main() {
    let f = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&f).unwrap();
    let rows = fastpair::testing::corpus::lines(&data);
    let o = WriterOptions::default().with_codec(if std::env::var("W16").is_ok() {
        Codec::OnPair16
    } else {
        Codec::OnPair12
    });
    let file = fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), o).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let _ = r.read_all().unwrap();
        let mut best = f64::MAX;
        for _ in 0..10 {
            let t = Instant::now();
            let c = r.read_all().unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            std::hint::black_box(c);
        }
        println!(
            "read_all 1T: {:.2} GB/s",
            r.decoded_bytes() as f64 / best / 1e9
        );
        let c = r.chunk(0).unwrap();
        let codes = c.codes();
        let d = c.dictionary();
        let mut out = vec![0u8; codes.decoded_len()];
        let mut best = f64::MAX;
        for _ in 0..10 {
            let t = Instant::now();
            fastpair::decode::decode_range(d, &codes, 0..codes.len(), &mut out);
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "decode_range 1T: {:.2} GB/s ({} codes, {:.2} B/code)",
            codes.decoded_len() as f64 / best / 1e9,
            codes.len(),
            codes.decoded_len() as f64 / codes.len() as f64
        );
        let mut buf = Vec::new();
        let n = r.rows();
        let t = Instant::now();
        let mut x = 12345u64;
        for _ in 0..200000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            r.get_into(x % n, &mut buf).unwrap();
        }
        println!(
            "get: {:.0} ns/row",
            t.elapsed().as_secs_f64() / 200000.0 * 1e9
        );
    });
}
