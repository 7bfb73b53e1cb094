//! Reader at scale (issue 8): builds a ~4 GB column file and measures cold
//! point reads on it. Used by `bench/reader.sh`, which records the results in
//! bench/READER.md.
//!
//! * `reader_bench make FILE SRC... [GB]`: rows = the lines of the SRC text
//!   files, cycled until 64 MiB, compressed (OnPair-12, one chunk); the file
//!   is that chunk repeated until it holds `GB` gigabytes (default 4), with
//!   one shared dictionary whose histogram counts every repetition. A valid
//!   file (every check of spec §9 passes) whose size costs seconds, not the
//!   half hour compressing 4 GB of distinct rows takes on a 2-core machine.
//! * `reader_bench cold FILE [mmap|pread] [TRIALS]`: per trial, drops the
//!   file's pages from the page cache (`posix_fadvise(DONTNEED)`), then opens
//!   it and reads one row of a different chunk; prints the wall time and the
//!   bytes this process read from disk (`read_bytes` of `/proc/self/io`) and
//!   through the storage.
//! * `reader_bench drop FILE`: drops the file's pages from the page cache.
//! * `reader_bench remote URL ROW...` (feature `object_store`): opens the file
//!   at an HTTP URL and reads the rows, printing the requests and bytes
//!   each step made.

use std::fs::File;
use std::io::Write;
use std::time::Instant;

use fastpair::format::layout::{self, Footer, SectionRef};
use fastpair::read::LocalIo;
use fastpair::{Codec, ReadOptions, Reader, WriterOptions};

fn read_bytes() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    s.lines()
        .find_map(|l| l.strip_prefix("read_bytes: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("read_bytes")
}

fn drop_cache(path: &str) {
    extern "C" {
        fn posix_fadvise(fd: i32, offset: i64, len: i64, advice: i32) -> i32;
    }
    const POSIX_FADV_DONTNEED: i32 = 4;
    let f = File::open(path).expect("open");
    f.sync_all().ok();
    use std::os::fd::AsRawFd;
    // SAFETY: a valid open descriptor; the call only drops cached pages.
    let rc = unsafe { posix_fadvise(f.as_raw_fd(), 0, 0, POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise");
}

fn make(out: &str, srcs: &[String], gb: f64) {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for s in srcs {
        let t = std::fs::read(s).expect("source");
        lines.extend(t.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    let mut rows = Vec::new();
    let mut size = 0usize;
    for l in lines.iter().cycle() {
        if size + l.len() > 64 << 20 {
            break;
        }
        size += l.len();
        rows.push(l.as_slice());
    }
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_bytes(64 << 20)
        .with_chunk_rows(fastpair::format::limits::MAX_CHUNK_ROWS as usize)
        // One chunk of up to 64 MiB: the estimate for so many rows is above the 1 GiB default.
        .with_memory_budget(8 << 30)
        // Cycled lines repeat: keep the coded layout this benchmark is about
        // (a value dictionary would store each distinct line once, log
        // templates each line's template once).
        .with_value_dict(false)
        .with_log_templates(fastpair::LogTemplates::Off);
    let t = Instant::now();
    let one = fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), opts).expect("write");
    let r = Reader::from_bytes(one.clone()).expect("read");
    assert_eq!(r.num_chunks(), 1);
    let f = r.footer().clone();
    let e = f.chunks[0];
    let chunk = &one[e.section.offset as usize..(e.section.offset + e.section.len) as usize];
    let d = f.dicts[0];
    let mut dict = one[d.offset as usize..(d.offset + d.len) as usize].to_vec();
    let n = ((gb * 1e9) / chunk.len() as f64).ceil() as u64;
    for h in 0..16 {
        let at = 8 + 8 * h;
        let v = u64::from_le_bytes(dict[at..at + 8].try_into().unwrap()) * n;
        dict[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    let mut w = std::io::BufWriter::with_capacity(8 << 20, File::create(out).expect("create"));
    w.write_all(&layout::header_bytes()).unwrap();
    let mut footer = Footer::default();
    let mut at = 16u64;
    for _ in 0..n {
        w.write_all(chunk).unwrap();
        let mut c = e;
        c.section.offset = at;
        at += chunk.len() as u64;
        footer.chunks.push(c);
        footer.total_rows += c.rows as u64;
        footer.total_bytes += c.bytes;
    }
    w.write_all(&dict).unwrap();
    footer.dicts.push(SectionRef {
        offset: at,
        len: dict.len() as u64,
        crc: crc32fast::hash(&dict),
    });
    let fb = footer.to_bytes();
    w.write_all(&fb).unwrap();
    w.write_all(&layout::tail_bytes(fb.len() as u32, crc32fast::hash(&fb)))
        .unwrap();
    w.flush().unwrap();
    println!(
        "{out}: {n} chunks of {} rows, {:.2} GB on disk, {:.2} GB of values, dictionary {} bytes; {:.1} s",
        e.rows,
        (at + fb.len() as u64 + 24) as f64 / 1e9,
        footer.total_bytes as f64 / 1e9,
        dict.len(),
        t.elapsed().as_secs_f64()
    );
}

fn cold(path: &str, mmap: bool, trials: usize) {
    let probe = Reader::open(path).expect("open");
    let (rows, chunks) = (probe.rows(), probe.num_chunks() as u64);
    drop(probe);
    for k in 0..trials as u64 {
        // A row in a different chunk each time, away from chunk edges.
        let row = (rows / chunks) * ((k * 37 + 11) % chunks) + (rows / chunks) / 3 + k * 101;
        drop_cache(path);
        let b0 = read_bytes();
        let t = Instant::now();
        let r = if mmap {
            // SAFETY: a benchmark over a file nothing else writes.
            let map = unsafe { fastpair::read::MmapStorage::open(path) }.expect("map");
            Reader::from_storage(std::sync::Arc::new(map), ReadOptions::default()).expect("open")
        } else {
            Reader::open_with(
                path,
                ReadOptions::default().with_local_io(LocalIo::PositionedRead),
            )
            .expect("open")
        };
        let io = if mmap { "Mmap" } else { "PositionedRead" };
        let t_open = t.elapsed();
        let b_open = read_bytes();
        let v = r.get(row).expect("get");
        let dt = t.elapsed();
        let b1 = read_bytes();
        let s = r.storage().stats().unwrap_or_default();
        println!(
            "{io}\trow {row}\topen {:.3} ms\topen+get {:.3} ms\tdisk {} B (open {} B)\tstorage {} requests {} B\tvalue {} B",
            t_open.as_secs_f64() * 1e3,
            dt.as_secs_f64() * 1e3,
            b1 - b0,
            b_open - b0,
            s.requests,
            s.bytes,
            v.map_or(0, |v| v.len())
        );
    }
}

#[cfg(feature = "object_store")]
fn remote(url: &str, rows: &[u64]) {
    use fastpair::read::{ObjectOptions, ObjectStorage};
    let t = Instant::now();
    let st = ObjectStorage::http(url, ObjectOptions::default()).expect("connect");
    let r = Reader::open_object(st, ReadOptions::default()).expect("open");
    let s0 = r.storage().stats().unwrap_or_default();
    println!(
        "remote open: {:.3} ms, {} requests after HEAD, {} B",
        t.elapsed().as_secs_f64() * 1e3,
        s0.requests,
        s0.bytes
    );
    let mut prev = s0;
    for &row in rows {
        let t = Instant::now();
        let v = r.get(row).expect("get");
        let s = r.storage().stats().unwrap_or_default();
        println!(
            "remote get {row}: {:.3} ms, {} range requests, {} B, value {} B",
            t.elapsed().as_secs_f64() * 1e3,
            s.requests - prev.requests,
            s.bytes - prev.bytes,
            v.map_or(0, |v| v.len())
        );
        prev = s;
    }
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    match a.first().map(String::as_str) {
        Some("make") => {
            let gb = a.last().and_then(|s| s.parse::<f64>().ok());
            let srcs = &a[2..a.len() - gb.is_some() as usize];
            make(&a[1], srcs, gb.unwrap_or(4.0))
        }
        Some("cold") => {
            let io = a.get(2).map(String::as_str) != Some("pread");
            cold(&a[1], io, a.get(3).and_then(|s| s.parse().ok()).unwrap_or(5))
        }
        Some("drop") => drop_cache(&a[1]),
        #[cfg(feature = "object_store")]
        Some("remote") => remote(
            &a[1],
            &a[2..].iter().map(|s| s.parse().expect("row")).collect::<Vec<_>>(),
        ),
        _ => eprintln!("usage: reader_bench make FILE SRC... [GB] | cold FILE [mmap|pread] [TRIALS] | drop FILE"),
    }
}
