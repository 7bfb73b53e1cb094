//! Chunk validation alone, repeated, for profiling: `validate_probe COLUMN.txt [REPS]`
//! (the file is written once with default options, then every chunk of a
//! fresh reader is validated REPS times). Next to it, where the host time
//! goes (issue 23): the CRC32 of every chunk section alone, and whole
//! validation on one thread and on all threads, each as GB/s of file.
//!
//! `validate_probe --fpc FILE.fpc [THREADS,...]`: an existing file (e.g.
//! made by `reader_bench make`), every chunk of a fresh reader validated in
//! parallel on pools of each thread count, through a memory map and through
//! positioned reads (the library's default storage), next to the CRC32 of
//! every chunk section over a fresh map: how validation scales with host
//! threads, and what the checksum alone costs.
use std::sync::Arc;

use fastpair::{ReadOptions, Reader, WriterOptions};
use rayon::prelude::*;

fn fpc(path: &str, threads: &[usize]) {
    let opts = ReadOptions::default().with_cache_row_index(false);
    let mmap = || {
        // SAFETY: the probe's own file, not changed while it runs.
        let s = unsafe { fastpair::read::MmapStorage::open(path) }.expect("map");
        Reader::from_storage(Arc::new(s), opts.clone()).expect("open")
    };
    let probe = mmap();
    let gb = probe.file_bytes() as f64 / 1e9;
    println!(
        "{path}: file {gb:.2} GB, {} chunks, decoded {:.2} GB",
        probe.num_chunks(),
        probe.decoded_bytes() as f64 / 1e9
    );
    drop(probe);
    for &n in threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .expect("pool");
        let time = |r: &Reader| {
            let t = std::time::Instant::now();
            pool.install(|| {
                (0..r.num_chunks()).into_par_iter().for_each(|i| {
                    let _ = r.chunk(i).expect("valid");
                })
            });
            t.elapsed().as_secs_f64()
        };
        let m = time(&mmap());
        // The host's share when the device checks the codes and rows
        // (`StreamOptions::device_checks`, the streaming scan's default).
        let dev = {
            let r = mmap();
            let t = std::time::Instant::now();
            pool.install(|| {
                (0..r.num_chunks()).into_par_iter().for_each(|i| {
                    r.check_chunk_for_device(i).expect("valid");
                })
            });
            t.elapsed().as_secs_f64()
        };
        let p = time(&Reader::open_with(path, opts.clone()).expect("open"));
        let r = mmap();
        let t = std::time::Instant::now();
        pool.install(|| {
            (0..r.num_chunks()).into_par_iter().for_each(|i| {
                let s = r.chunk_info(i).entry.section;
                let b = r.storage().read(s.offset..s.offset + s.len).expect("read");
                std::hint::black_box(crc32fast::hash(&b));
            })
        });
        let c = t.elapsed().as_secs_f64();
        println!(
            "threads {n:>3}: validate mmap {m:.3} s = {:.2} GB/s, positioned reads {p:.3} s = {:.2} GB/s; CRC32 alone (fresh map) {c:.3} s = {:.2} GB/s of file; host checks for the device (mmap) {dev:.3} s = {:.2} GB/s",
            gb / m,
            gb / p,
            gb / c,
            gb / dev
        );
    }
}

fn main() {
    let all: Vec<String> = std::env::args().skip(1).collect();
    if all.first().map(String::as_str) == Some("--fpc") {
        let threads: Vec<usize> = all
            .get(2)
            .map_or("1,2,4,8,16", String::as_str)
            .split(',')
            .filter_map(|t| t.parse().ok())
            .collect();
        return fpc(&all[1], &threads);
    }
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
    let gb = buf.len() as f64 / 1e9;
    let best = |f: &dyn Fn(&Reader)| {
        let mut best = f64::INFINITY;
        for _ in 0..reps {
            let r = Reader::from_bytes(buf.clone()).unwrap();
            let t = std::time::Instant::now();
            f(&r);
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let one = best(&|r| {
        for i in 0..r.num_chunks() {
            std::hint::black_box(r.chunk(i).unwrap());
        }
    });
    let all = best(&|r| {
        (0..r.num_chunks()).into_par_iter().for_each(|i| {
            let _ = std::hint::black_box(r.chunk(i).unwrap());
        })
    });
    let dev = best(&|r| {
        for i in 0..r.num_chunks() {
            std::hint::black_box(r.check_chunk_for_device(i).unwrap());
        }
    });
    let seqs = best(&|r| {
        for i in 0..r.num_chunks() {
            r.check_chunk_parse_only(i).unwrap();
        }
    });
    let crc = best(&|r| {
        for i in 0..r.num_chunks() {
            let s = r.chunk_info(i).entry.section;
            let (a, b) = (s.offset as usize, (s.offset + s.len) as usize);
            std::hint::black_box(crc32fast::hash(&buf[a..b]));
        }
    });
    println!(
        "{name}: file {:.1} MB, {} chunks; validate one thread {:.3} ms ({:.2} GB/s), all {} threads {:.3} ms ({:.2} GB/s); CRC32 alone one thread {:.3} ms ({:.2} GB/s) = {:.0}% of one thread's validation (best of {reps})",
        gb * 1e3,
        Reader::from_bytes(buf.clone()).unwrap().num_chunks(),
        one * 1e3,
        gb / one,
        rayon::current_num_threads(),
        all * 1e3,
        gb / all,
        crc * 1e3,
        gb / crc,
        100.0 * crc / one
    );
    println!(
        "{name}: one thread, host checks for the device {:.3} ms ({:.2} GB/s) = {:.0}% of validation; of which read + checksums + header parse {:.3} ms = {:.0}%",
        dev * 1e3,
        gb / dev,
        100.0 * dev / one,
        seqs * 1e3,
        100.0 * seqs / one,
    );
}
