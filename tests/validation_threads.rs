//! Chunk validation on many threads: the per-dictionary tables built on
//! first use inside validation's parallel walk (`OnceLock`s) must not wait
//! on themselves. A parallel table builder once deadlocked here: a worker
//! building the UTF-8 automaton table stole a task of the same walk, which
//! then waited on the table being built. Fresh readers of a column whose
//! tokens cut characters are validated on a 16-thread pool, under a
//! watchdog (a hang fails the test instead of stalling CI).

use std::sync::mpsc;
use std::time::Duration;

use fastpair::write::write_to_vec;
use fastpair::{Codec, Reader, WriterOptions};

#[test]
fn fresh_readers_validate_on_16_threads_without_deadlock() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // Random CJK text: many tokens end inside a three-byte character.
    let rows: Vec<Vec<u8>> = (0..120_000)
        .map(|i| {
            (0..1 + i % 30)
                .map(|_| char::from_u32(0x4e00 + (next() % 2500) as u32).unwrap())
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let files: Vec<Vec<u8>> = [Codec::OnPair16, Codec::OnPair12]
        .into_iter()
        .map(|codec| {
            let opts = WriterOptions::default().with_codec(codec);
            write_to_vec(rows.iter().map(|r| Some(r.as_slice())), opts).unwrap()
        })
        .collect();
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(16)
            .build()
            .unwrap();
        pool.install(|| {
            for _ in 0..25 {
                for f in &files {
                    let r = Reader::from_bytes(f.clone()).unwrap();
                    for i in 0..r.num_chunks() {
                        let c = r.chunk(i).unwrap();
                        assert!(c.rows_not_utf8().is_some_and(|b| b.iter().all(|&w| w == 0)));
                    }
                }
            }
        });
        done.send(()).unwrap();
    });
    assert!(
        wait.recv_timeout(Duration::from_secs(120)).is_ok(),
        "validation did not finish in 120 s (deadlock?)"
    );
}
