//! Cost of the UTF-8 check on a whole-column text read (issue 9): `read_all`
//! (no check) next to `read_all` + `arrow::large_string` (a second pass over
//! the decoded values) and `read_arrow(LargeUtf8)` (the check fused into
//! decoding: each decode task's bytes right after the task wrote them).
//! Process CPU time, best of 40 (robust to a loaded machine when run with
//! `RAYON_NUM_THREADS=1`).
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p fastpair-lab --example utf8_read -- target/corpus/tpch_sf1_l_comment.txt ...`
use fastpair::arrow::{large_string, ArrowType, ReadArrow};
use fastpair::{Reader, WriterOptions};
fn main() {
    for name in std::env::args().skip(1) {
        let text = std::fs::read(&name).unwrap();
        let buf = fastpair::write::write_to_vec(
            text.split(|&b| b == b'\n').map(Some),
            WriterOptions::default(),
        )
        .unwrap();
        let r = Reader::from_bytes(buf).unwrap();
        let cpu = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid out pointer to a timespec.
            unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
            ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
        };
        let best = |f: &dyn Fn()| {
            let mut b = f64::MAX;
            for _ in 0..40 {
                let t = cpu();
                f();
                b = b.min(cpu() - t);
            }
            b * 1e3
        };
        let raw = best(&|| {
            std::hint::black_box(r.read_all().unwrap());
        });
        let old = best(&|| {
            std::hint::black_box(large_string(r.read_all().unwrap()).unwrap());
        });
        let new = best(&|| {
            std::hint::black_box(r.read_arrow(0..r.rows(), ArrowType::LargeUtf8).unwrap());
        });
        let bin = best(&|| {
            std::hint::black_box(r.read_arrow(0..r.rows(), ArrowType::LargeBinary).unwrap());
        });
        let clean = (0..r.num_chunks())
            .filter(|&i| r.chunk(i).unwrap().tokens_utf8())
            .count();
        println!(
            "{name}: read_all {raw:.2} ms, read_all+large_string {old:.2} ms ({:.2}x), fused {new:.2} ms ({:.2}x), LargeBinary {bin:.2} ms ({:.2}x); chunks with UTF-8 tokens only {clean}/{}",
            raw / old,
            raw / new,
            raw / bin,
            r.num_chunks()
        );
    }
}
