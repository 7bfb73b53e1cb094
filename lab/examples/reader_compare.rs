//! Bulk and warm random-read speed of one build of the reader, with only API
//! that every version since format v1 has (`Reader::open`, `read_all`,
//! `read_values_into`, `get_into`), so `bench/reader.sh` can build this same
//! file against an older commit and compare both in one run.
//!
//! `cargo run --release -p fastpair-lab --example reader_compare -- FILE` prints one line:
//! `read_all GB/s  values GB/s  get ns/row  open+first read_all s` (best
//! of several passes, warm; the last column is open plus the first
//! `read_all`, which validates every chunk; the file is in the page cache).

use std::time::Instant;

use fastpair::Reader;

fn main() {
    let path = std::env::args().nth(1).expect("usage: reader_compare FILE");
    let t = Instant::now();
    let r = Reader::open(&path).expect("open");
    let rows = r.rows();
    let bytes = r.decoded_bytes() as f64;
    // Warm: every chunk validated, pages in memory.
    std::hint::black_box(r.read_all().expect("read_all"));
    let first = t.elapsed().as_secs_f64();
    let best = |n: usize, f: &mut dyn FnMut()| {
        let mut b = f64::MAX;
        for _ in 0..n {
            let t = Instant::now();
            f();
            b = b.min(t.elapsed().as_secs_f64());
        }
        b
    };
    let all = best(5, &mut || {
        std::hint::black_box(r.read_all().expect("read_all"));
    });
    let mut vals = Vec::new();
    let values = best(5, &mut || {
        r.read_values_into(0..rows, &mut vals).expect("values");
        std::hint::black_box(&vals);
    });
    // 200 000 pseudo-random rows (xorshift64*), the same for every build.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let picks: Vec<u64> = (0..200_000)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D) % rows
        })
        .collect();
    let mut buf = Vec::new();
    let mut pass = || {
        for &row in &picks {
            r.get_into(row, &mut buf).expect("get");
            std::hint::black_box(&buf);
        }
    };
    pass();
    let get = best(3, &mut pass);
    println!(
        "{:.3}\t{:.3}\t{:.1}\t{:.3}",
        bytes / all / 1e9,
        bytes / values / 1e9,
        get * 1e9 / picks.len() as f64,
        first
    );
}
