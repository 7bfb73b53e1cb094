//! Chunk validation alone, repeated, for profiling: `validate_probe COLUMN.txt [REPS]`
//! (the file is written once with default options, then every chunk of a
//! fresh reader is validated REPS times).
use fastpair::{Reader, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .expect("usage: validate_probe COLUMN.txt [REPS]");
    let reps: usize = args.next().map_or(20, |s| s.parse().unwrap());
    let text = std::fs::read(&name).unwrap();
    let rows = fastpair::testing::corpus::lines(&text);
    let buf = bytes::Bytes::from(
        fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), WriterOptions::default())
            .unwrap(),
    );
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let r = Reader::from_bytes(buf.clone()).unwrap();
        let t = std::time::Instant::now();
        for i in 0..r.num_chunks() {
            std::hint::black_box(r.chunk(i).unwrap());
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("{name}: validate {:.3} ms (best of {reps})", best * 1e3);
}
