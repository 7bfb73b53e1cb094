//! Chunk validation's UTF-8 proof (issue 9), per corpus file: how many rows
//! it leaves unproven (checked with SIMD at read time), what validating
//! every chunk costs (a fresh reader each time, so the per-dictionary
//! tables are built too), and a whole-column text read
//! (`read_arrow(LargeUtf8)`) next to `read_all` (no check) on the validated
//! reader. Process CPU time, best of `REPS` (run with `RAYON_NUM_THREADS=1`
//! for single-thread costs that a loaded machine does not skew).
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p fastpair-lab --example utf8_proof -- target/corpus/dbtext_chinese.txt ...`
use fastpair::arrow::{ArrowType, ReadArrow};
use fastpair::{Reader, WriterOptions};

const REPS: usize = 30;

fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn best(f: &mut dyn FnMut()) -> f64 {
    let mut b = f64::MAX;
    for _ in 0..REPS {
        let t = cpu();
        f();
        b = b.min(cpu() - t);
    }
    b * 1e3
}

fn main() {
    for name in std::env::args().skip(1) {
        let text = std::fs::read(&name).unwrap();
        let rows = fastpair::testing::corpus::lines(&text);
        let buf = bytes::Bytes::from(
            fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), WriterOptions::default())
                .unwrap(),
        );
        let validate = best(&mut || {
            let r = Reader::from_bytes(buf.clone()).unwrap();
            for i in 0..r.num_chunks() {
                std::hint::black_box(r.chunk(i).unwrap());
            }
        });
        let open = best(&mut || {
            std::hint::black_box(Reader::from_bytes(buf.clone()).unwrap());
        });
        let r = Reader::from_bytes(buf.clone()).unwrap();
        let mut unproven = 0u64;
        let mut cut = 0;
        for i in 0..r.num_chunks() {
            let c = r.chunk(i).unwrap();
            let n = c.entry().rows as usize;
            if !c.tokens_utf8() {
                cut += 1;
                unproven += match c.rows_not_utf8() {
                    Some(b) => b.iter().map(|w| w.count_ones() as u64).sum(),
                    None => n as u64,
                };
            }
        }
        let raw = best(&mut || {
            std::hint::black_box(r.read_all().unwrap());
        });
        let text = best(&mut || {
            std::hint::black_box(r.read_arrow(0..r.rows(), ArrowType::LargeUtf8).unwrap());
        });
        println!(
            "{name}: rows {}, unproven {unproven}, chunks with cut tokens {cut}/{}; validate all chunks {:.3} ms (open {open:.3} ms); read_all {raw:.3} ms, text read {text:.3} ms ({:.2}x)",
            r.rows(),
            r.num_chunks(),
            validate - open,
            raw / text
        );
    }
}
