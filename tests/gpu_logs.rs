//! Log-template chunks (spec/FORMAT.md §5.8) on the GPU (issue 20 item 3,
//! spec/DECODER.md §6d): every Loghub column of the corpus written with log
//! templates always, through the whole-column scan (poisoned output first)
//! and the streaming scan through a ring smaller than the column, and their
//! random rows through `DeviceRows`, each equal to the CPU reader; files that mix log-template, coded and
//! value-dictionary chunks; hostile log chunks (mutated files with their
//! checksums recomputed, corrupted device buffers). Without a GPU these
//! tests print a notice and pass, unless FASTPAIR_REQUIRE_GPU=1 (then they
//! fail). The file-building checks run everywhere.
#![cfg(feature = "gpu")]

use std::ops::Range;

use fastpair::gpu::{self, Prepared, ScanOptions};
use fastpair::read::ChunkKind;
use fastpair::write::write_to_vec;
use fastpair::{Error, LogTemplates, Reader, WriterOptions};

#[path = "support/corpus.rs"]
mod corpus;

#[path = "support/gpu.rs"]
mod device;
use device::{have_gpu, have_nvrtc};

fn kinds(r: &Reader) -> Vec<ChunkKind> {
    (0..r.num_chunks())
        .map(|i| r.chunk(i).unwrap().kind())
        .collect()
}

/// Log lines made here (when there is no corpus): a header, varied
/// templates, integers with leading zeros and hex, free words, nulls, empty
/// rows and rows that match no template.
fn synthetic_logs(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| match i % 97 {
            5 => None,
            11 => Some(Vec::new()),
            13 => Some(format!("~~ {} ~~", "q".repeat(i % 300)).into_bytes()),
            k => Some(
                format!(
                    "2026-12-02 12:{:02}:{:02}.{:03} {} [{}] {}",
                    i / 60 % 60,
                    i % 60,
                    i % 1000,
                    ["INFO", "WARN", "ERROR"][i % 3],
                    ["main", "worker-7", "gc"][k % 3],
                    match k % 4 {
                        0 => format!("GET /api/v{}/item/{:06} 200 {}ms", k % 3, i, i * 7 % 911),
                        1 => format!(
                            "session 0x{:08x} closed by {}",
                            i * 2654435761usize % (1 << 32),
                            ["peer", "timeout"][i % 2]
                        ),
                        2 => format!(
                            "{{\"user\":\"u{}\",\"bytes\":{},\"ok\":{}}}",
                            i % 41,
                            i * 13,
                            i % 2 == 0
                        ),
                        _ => format!("free text {} {}", "w".repeat(i % 17), i % 5),
                    }
                )
                .into_bytes(),
            ),
        })
        .collect()
}

/// A JVM service's log as Kafka writes it: headed lines, each startup
/// followed by a configuration dump (lines led by a tab), stack traces (a
/// tab), and GC details (led by spaces) — continuation lines, which the
/// writer splits at blanks (a tab) and gives an empty header when it splits
/// the header off (logs/tokenize.rs; this column is split: 62% of its rows
/// get an empty header).
fn continued_logs(n: usize) -> Vec<Option<Vec<u8>>> {
    const KEYS: [&str; 6] = ["log", "num", "replica", "socket", "fetch", "bytes"];
    const EVENTS: [&str; 8] = [
        "Processing event",
        "Checking need to trigger balancing",
        "Removed fetcher for partitions",
        "Shutting down thread",
        "Loading offsets from partition",
        "Rolled new log segment at offset",
        "Deleting segment",
        "Session expired:",
    ];
    (0..n)
        .map(|i| {
            let k = i % 64;
            let header = format!(
                "[2021-05-0{} 17:{:02}:{:02},{:03}] {} ",
                1 + i / 64 % 9,
                i / 60 % 60,
                i % 60,
                i * 37 % 1000,
                ["INFO", "DEBUG", "TRACE"][i % 3]
            );
            let line = match k {
                0 => format!("{header}KafkaConfig values: (kafka.server.KafkaConfig)"),
                1..=24 => format!(
                    "\t{}.{}.{} = {}",
                    KEYS[k % 6],
                    KEYS[k / 6 % 6],
                    KEYS[(k + 2) % 6],
                    match k % 3 {
                        0 => format!("{}", k * 100),
                        1 => "null".to_string(),
                        _ => format!("[PLAINTEXT://:{}]", 9000 + k),
                    }
                ),
                25..=34 => format!(
                    "\tat kafka.server.Frame{k}.run(Frame{k}.scala:{})",
                    40 + k % 5
                ),
                35..=40 => format!(
                    "   [Parallel Time: {}.{} ms, GC Workers: {k}]",
                    i % 9,
                    i % 10
                ),
                _ => format!(
                    "{header}[Controller id={}] {} {}",
                    i % 3,
                    EVENTS[i * 7 % 8],
                    i % 1000
                ),
            };
            Some(line.into_bytes())
        })
        .collect()
}

fn write_logs(rows: &[Option<&[u8]>], chunk_rows: usize) -> Reader {
    let opts = WriterOptions::default()
        .with_chunk_rows(chunk_rows)
        .with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().copied(), opts).expect("write");
    Reader::from_bytes(file).expect("open")
}

/// The corpus's Loghub columns, else (no corpus, which fails under
/// `FASTPAIR_REQUIRE_CORPUS=1`, or one without logs) synthetic log lines:
/// never nothing. Either way also the real logs of testdata/logs (shapes
/// Loghub lacks: dpkg.log's lines take the coarse split, logs/split.rs) and
/// a JVM-like log of continuation lines ([`continued_logs`]).
fn log_columns() -> Vec<(String, Vec<Option<Vec<u8>>>)> {
    let cols: Vec<_> = corpus::corpus_files(&[])
        .into_iter()
        .filter(|p| {
            p.file_stem()
                .is_some_and(|n| n.to_string_lossy().contains("loghub"))
        })
        .collect();
    // Relative: cargo runs tests in the package root, and a bundle runs on
    // the device from the repository root (its build path is not there).
    let shipped =
        ["dpkg_2k.log", "alternatives.log"].map(|n| std::path::Path::new("testdata/logs").join(n));
    let continued = ("continued".to_string(), continued_logs(12_000));
    if cols.is_empty() {
        eprintln!("NOTICE: no Loghub column in the corpus: synthetic log lines");
        let mut out = vec![("synthetic".to_string(), synthetic_logs(20_000)), continued];
        out.extend(shipped.iter().map(|p| read_column(p)));
        return out;
    }
    cols.iter()
        .chain(&shipped)
        .map(|p| read_column(p))
        .chain([continued])
        .collect()
}

/// A column of one value per line from `p`, named by its file stem.
fn read_column(p: &std::path::Path) -> (String, Vec<Option<Vec<u8>>>) {
    let text = std::fs::read(p).unwrap();
    let rows = fastpair::testing::corpus::lines(&text)
        .into_iter()
        .map(|r| Some(r.to_vec()))
        .collect();
    (p.file_stem().unwrap().to_string_lossy().into_owned(), rows)
}

/// `Prepared` over `rows` with its output poisoned first (unwritten bytes
/// show), then `gpu::scan`: both equal the CPU reader's column.
fn scan_matches(name: &str, r: &Reader, rows: Range<u64>) {
    let cpu = r.read_range(rows.clone()).unwrap();
    let mut p = Prepared::new(r, rows.clone(), &ScanOptions::default(), 1)
        .unwrap_or_else(|e| panic!("{name}: prepare {rows:?}: {e}"));
    p.upload().unwrap();
    p.poison(0xa5).unwrap();
    p.run().unwrap();
    p.check()
        .unwrap_or_else(|e| panic!("{name}: device status {rows:?}: {e}"));
    let gpu = p.to_host().unwrap();
    assert!(gpu.offsets == cpu.offsets, "{name}: offsets of {rows:?}");
    if gpu.values != cpu.values {
        let i = gpu
            .values
            .iter()
            .zip(&cpu.values)
            .position(|(a, b)| a != b)
            .unwrap_or(cpu.values.len());
        panic!(
            "{name}: values of {rows:?} differ at byte {i} of {}",
            cpu.values.len()
        );
    }
    assert!(gpu.validity == cpu.validity, "{name}: validity of {rows:?}");
    let col = gpu::scan(r, rows.clone())
        .and_then(|c| c.to_host())
        .unwrap_or_else(|e| panic!("{name}: scan {rows:?}: {e}"));
    assert!(col == cpu, "{name}: gpu::scan of {rows:?}");
}

/// `gpu::scan_stream` of `rows` through the smallest ring (from 64 KiB,
/// doubling) that holds each batch; every batch equals the CPU reader's
/// rows. Returns the number of batches.
fn stream_matches(name: &str, r: &Reader, rows: Range<u64>) -> usize {
    let once = |so: &gpu::StreamOptions| {
        let mut next = rows.start;
        let got = gpu::scan_stream(r, rows.clone(), so, |b| {
            assert_eq!(b.first_row, next, "{name}: batches in order");
            let span = b.first_row..b.first_row + b.len() as u64;
            let host = b.to_host()?;
            let cpu = r.read_range(span.clone())?;
            assert!(host == cpu, "{name}: batch {span:?}");
            next = span.end;
            Ok(())
        });
        if got.is_ok() {
            assert_eq!(next, rows.end, "{name}: every row streamed");
        }
        got
    };
    let mut budget = 64usize << 10;
    loop {
        let so = gpu::StreamOptions::default().with_device_bytes(budget);
        match once(&so) {
            // Either way the ring is too small for these chunks: a chunk
            // alone, or the largest buffers of two batches together.
            Err(Error::InvalidArgument(m))
                if m.contains("more than one ring buffer") || m.contains("cannot hold") =>
            {
                budget *= 2;
            }
            Err(e) => panic!("{name}: scan_stream {rows:?}: {e}"),
            Ok(st) => {
                assert!(st.ring_bytes <= budget);
                // The same batches through pinned staging buffers of 4 KiB
                // (the blocks' bytes and the kept tables cut across them).
                let staged = so.with_page_lock_file(false).with_staging_bytes(4096);
                let st2 = once(&staged)
                    .unwrap_or_else(|e| panic!("{name}: staged scan_stream {rows:?}: {e}"));
                assert!(!st2.registered);
                assert_eq!(st2.batches, st.batches);
                return st.batches;
            }
        }
    }
}

/// The kernels (logs.cu with the others) compile with NVRTC: needs only
/// the library, no device.
#[test]
fn kernels_compile_with_the_log_decoder() {
    if !have_nvrtc("kernels_compile_with_the_log_decoder") {
        return;
    }
    for bits in [12u8, 16] {
        let cfg = fastpair::gpu::DecoderConfig::default();
        gpu::compile_check(&cfg, bits, "compute_90").unwrap_or_else(|e| panic!("bits {bits}: {e}"));
        gpu::compile_check_logs(&cfg, bits, "compute_90")
            .unwrap_or_else(|e| panic!("log decoder, bits {bits}: {e}"));
    }
}

#[test]
fn loghub_columns_match_cpu() {
    if !have_gpu("loghub_columns_match_cpu") {
        return;
    }
    for (name, vals) in log_columns() {
        let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
        // One chunk per column (the writer's default), then chunks of 300
        // rows (several pieces in one launch, partial 128-row blocks).
        for chunk_rows in [1 << 20, 300] {
            let r = write_logs(&rows, chunk_rows);
            let k = kinds(&r);
            assert!(
                k.contains(&ChunkKind::LogTemplates),
                "{name}: no log-template chunk"
            );
            let n = r.rows();
            eprintln!("{name}: {n} rows, {} chunks of {chunk_rows}", k.len());
            scan_matches(&name, &r, 0..n);
            if n > 300 {
                // Ranges cutting 128-row blocks and chunks.
                scan_matches(&name, &r, 1..n - 1);
                scan_matches(&name, &r, 127..257);
                scan_matches(&name, &r, n / 3..n / 3 + 1);
                scan_matches(&name, &r, 299..301);
            }
        }
    }
}

#[test]
fn loghub_columns_stream_through_a_small_ring() {
    if !have_gpu("loghub_columns_stream_through_a_small_ring") {
        return;
    }
    for (name, vals) in log_columns() {
        let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
        let r = write_logs(&rows, 250);
        let n = r.rows();
        let batches = stream_matches(&name, &r, 0..n);
        // A column of more than twice the first ring (64 KiB) streams in
        // several batches (every Loghub column; not alternatives.log, 26 KB).
        if r.decoded_bytes() > 128 << 10 {
            assert!(batches > 1, "{name}: the ring held the whole column");
        }
        stream_matches(&name, &r, n / 4..n - n / 5);
    }
}

/// Rows at the edges of the scan kernel's segment list (spec/DECODER.md
/// §6d): runs of identical rows (a template that is one static string),
/// empty rows and nulls, rows of 40 integer fields (more segments than a
/// lane emits per step), a static string longer than a staging window, and
/// free-text rows of 5–20 KB (tokens crossing windows; a round of one row).
fn edge_logs(n: usize) -> Vec<Option<Vec<u8>>> {
    let mut x = 0x1234_5678_9ABC_DEF1u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "kernel:",
        "eth0",
        "0x1f",
        "ERR",
        "/var/log",
        "connection",
        "reset",
        "by",
        "peer",
        "=",
        "[",
        "]",
        "timeout",
    ];
    let long_static = "S".repeat(4500);
    (0..n)
        .map(|i| match i % 31 {
            0..=5 => Some(b"service heartbeat ok".to_vec()),
            6 => Some(Vec::new()),
            7 => None,
            8..=11 => Some(
                (0..40)
                    .map(|k| format!("f{k}={}", (i * 7919 + k * 104729) % 100_000))
                    .collect::<Vec<_>>()
                    .join(" ")
                    .into_bytes(),
            ),
            12 | 13 => Some(format!("{long_static} id={i} end").into_bytes()),
            14 if i % 3 == 0 => {
                let len = 5000 + (rnd() % 15000) as usize;
                let mut row = String::new();
                while row.len() < len {
                    row.push_str(words[(rnd() % words.len() as u64) as usize]);
                    row.push(if rnd() % 5 == 0 { ':' } else { ' ' });
                }
                Some(row.into_bytes())
            }
            k => Some(
                format!(
                    "2026-12-03 10:{:02}:{:02} node{} {} pid={} {}",
                    i / 60 % 60,
                    i % 60,
                    k,
                    words[i % words.len()],
                    i * 31 % 4099,
                    words[(i / 7) % words.len()]
                )
                .into_bytes(),
            ),
        })
        .collect()
}

/// The segment list's edges (`edge_logs`) through the scan, the streaming
/// scan and `DeviceRows`, in one chunk and in chunks of 300 rows, against
/// the CPU reader.
#[test]
fn edge_rows_match_cpu() {
    let vals = edge_logs(3000);
    assert!(vals.iter().flatten().any(|v| v.len() > 4096 * 3));
    if !have_gpu("edge_rows_match_cpu") {
        return;
    }
    let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
    for chunk_rows in [1 << 20, 300] {
        let r = write_logs(&rows, chunk_rows);
        assert!(kinds(&r).contains(&ChunkKind::LogTemplates));
        let n = r.rows();
        for range in [0..n, 1..n - 1, 12..14, 127..257, 299..301, 1000..1400] {
            scan_matches("edges", &r, range);
        }
        stream_matches("edges", &r, 0..n);
        rows_match("edges", &r);
    }
}

/// Rows whose chunks the writer (log templates `Auto`, value dictionaries
/// on) stores as all three kinds: log lines, few distinct values, random
/// words (coded), and an all-null chunk (coded).
fn mixed_file() -> Reader {
    let logs = synthetic_logs(2000);
    let mut rows: Vec<Option<Vec<u8>>> = Vec::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for part in 0..8 {
        for i in 0..1000usize {
            rows.push(match part % 4 {
                0 => logs[(part * 1000 + i) % 2000].clone(),
                1 => Some(["DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"][i % 3].into()),
                2 => Some(
                    (0..(rnd() % 40) as usize)
                        .map(|_| b"abcdefghijklmnopqrstuvwxyz ,.;"[(rnd() % 30) as usize])
                        .collect(),
                ),
                _ if part == 3 => None,
                _ => logs[i].clone(),
            });
        }
    }
    let opts = WriterOptions::default()
        .with_chunk_rows(1000)
        .with_log_templates(LogTemplates::Auto);
    let file = write_to_vec(rows.iter().map(|v| v.as_deref()), opts).unwrap();
    Reader::from_bytes(file).unwrap()
}

/// Runs everywhere: the mixed file has every kind of chunk.
#[test]
fn mixed_file_has_every_chunk_kind() {
    let k = kinds(&mixed_file());
    for want in [
        ChunkKind::LogTemplates,
        ChunkKind::Coded,
        ChunkKind::ValueDict,
    ] {
        assert!(k.contains(&want), "no {want:?} chunk in {k:?}");
    }
}

#[test]
fn mixed_chunks_match_cpu() {
    if !have_gpu("mixed_chunks_match_cpu") {
        return;
    }
    let r = mixed_file();
    let n = r.rows();
    for rows in [0..n, 1..n - 1, 999..1001, 1500..6500, 2999..3001] {
        scan_matches("mixed", &r, rows);
    }
    let batches = stream_matches("mixed", &r, 0..n);
    assert!(batches > 1);
    stream_matches("mixed", &r, 1234..7001);
}

/// `DeviceRows::get` of random, sorted, repeated, edge and whole-block
/// rows equals the CPU reader's `get`, row for row (a null row is `None`).
fn rows_match(name: &str, r: &Reader) {
    let n = r.rows();
    if n == 0 {
        return;
    }
    let mut dev = gpu::DeviceRows::new(r).unwrap_or_else(|e| panic!("{name}: DeviceRows: {e}"));
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let random: Vec<u64> = (0..3000).map(|_| rnd() % n).collect();
    let mut sorted = random.clone();
    sorted.sort_unstable();
    let repeated: Vec<u64> = (0..2000).map(|i| [0, n - 1, n / 2][i % 3]).collect();
    // First and last row of every chunk and their neighbours; every row of
    // the first two 128-row blocks (each rank of each local) and backwards.
    let mut edges = Vec::new();
    for i in 0..r.num_chunks() {
        let info = r.chunk_info(i);
        let (a, b) = (info.first_row, info.first_row + info.entry.rows as u64);
        for row in [a.wrapping_sub(1), a, a + 1, b.wrapping_sub(1), b] {
            if row < n {
                edges.push(row);
            }
        }
    }
    let blocks: Vec<u64> = (0..n.min(256)).rev().collect();
    for (what, ids) in [
        ("random", random),
        ("sorted", sorted),
        ("repeated", repeated),
        ("edges", edges),
        ("blocks", blocks),
    ] {
        let col = dev
            .get(&ids)
            .unwrap_or_else(|e| panic!("{name}: {what}: {e}"))
            .to_host()
            .unwrap();
        assert_eq!(col.len(), ids.len());
        for (k, &id) in ids.iter().enumerate() {
            let cpu = r.get(id).unwrap();
            assert_eq!(col.value(k), cpu.as_deref(), "{name}: {what} row {id}");
        }
    }
}

/// `DeviceRows` serves log-template chunks: every Loghub column written
/// with log templates always, in one chunk and in chunks of 300 rows.
#[test]
fn device_rows_match_cpu_on_log_columns() {
    if !have_gpu("device_rows_match_cpu_on_log_columns") {
        return;
    }
    for (name, vals) in log_columns() {
        let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
        for chunk_rows in [1 << 20, 300] {
            let r = write_logs(&rows, chunk_rows);
            assert!(kinds(&r).contains(&ChunkKind::LogTemplates), "{name}");
            rows_match(&name, &r);
        }
    }
    // Header and body blocks, nulls, empty and unmatched rows.
    let vals = synthetic_logs(5000);
    let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
    rows_match("synthetic", &write_logs(&rows, 1000));
}

/// `DeviceRows` over a file mixing log-template, coded and value-dictionary
/// chunks (one launch each step for all of them).
#[test]
fn device_rows_serve_mixed_chunks() {
    if !have_gpu("device_rows_serve_mixed_chunks") {
        return;
    }
    rows_match("mixed", &mixed_file());
}

/// Bit flips in log-template files (checksums recomputed): `DeviceRows`
/// and the CPU reader both refuse the file or return the same rows.
#[test]
fn mutated_log_files_through_device_rows() {
    if !have_gpu("mutated_log_files_through_device_rows") {
        return;
    }
    let vals = synthetic_logs(1500);
    let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
    let opts = WriterOptions::default()
        .with_chunk_rows(500)
        .with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().copied(), opts).unwrap();
    let (mut served, mut refused) = (0, 0);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mutations: usize = std::env::var("FASTPAIR_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for _ in 0..mutations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut m = file.clone();
        let at = (x % m.len() as u64) as usize;
        m[at] ^= 1 << (x >> 60 & 7);
        fastpair::testing::recompute_checksums(&mut m);
        let Ok(r) = Reader::from_bytes(m) else {
            refused += 1;
            continue;
        };
        let cpu = r.read_all();
        match gpu::DeviceRows::new(&r) {
            Ok(mut dev) => {
                let cpu = cpu.expect("DeviceRows took a file the CPU refuses");
                let ids: Vec<u64> = (0..r.rows()).rev().collect();
                let col = dev.get(&ids).unwrap().to_host().unwrap();
                for (k, &id) in ids.iter().enumerate() {
                    assert_eq!(col.value(k), cpu.value(id as usize), "row {id}");
                }
                served += 1;
            }
            Err(e) => {
                assert!(cpu.is_err(), "DeviceRows refused a file the CPU reads: {e}");
                refused += 1;
            }
        }
    }
    eprintln!("mutated log files through DeviceRows: {served} served the same, {refused} refused");
}

/// Bit flips in log-template files (checksums recomputed so the damage
/// reaches the structural checks): the GPU scan and the CPU reader both
/// refuse or return the same column.
#[test]
fn mutated_log_files_through_gpu_scan() {
    if !have_gpu("mutated_log_files_through_gpu_scan") {
        return;
    }
    let vals = synthetic_logs(1500);
    let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
    let opts = WriterOptions::default()
        .with_chunk_rows(500)
        .with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().copied(), opts).unwrap();
    let (mut decoded, mut refused) = (0, 0);
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..400 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut m = file.clone();
        let at = (x % m.len() as u64) as usize;
        m[at] ^= 1 << (x >> 60 & 7);
        fastpair::testing::recompute_checksums(&mut m);
        let Ok(r) = Reader::from_bytes(m) else {
            refused += 1;
            continue;
        };
        match (r.read_all(), gpu::read_range(&r, 0..r.rows())) {
            (Ok(c), Ok((g, backend))) => {
                assert_eq!(backend, gpu::Backend::Gpu);
                assert!(c == g, "GPU column differs from the CPU's");
                decoded += 1;
            }
            (Err(_), Err(_)) => refused += 1,
            (c, g) => panic!("CPU ok={} GPU ok={}: {:?}", c.is_ok(), g.is_ok(), g.err()),
        }
    }
    eprintln!("mutated log files: {decoded} decoded the same, {refused} refused");
}

/// Corrupted device copies of a log file's input (the host's copy stays
/// valid): the kernel stays inside its buffers (the context keeps working),
/// and a damage it sees raises the status flag.
#[test]
fn corrupted_log_device_buffers_stay_inside() {
    if !have_gpu("corrupted_log_device_buffers_stay_inside") {
        return;
    }
    let vals = synthetic_logs(3000);
    let rows: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
    let r = write_logs(&rows, 1000);
    let n = r.rows();
    let mut p = Prepared::new(&r, 0..n, &ScanOptions::default(), 1).unwrap();
    let len = p.input_bytes() as usize;
    let mut flagged = 0;
    for k in 0..60usize {
        p.upload().unwrap();
        let at = (k * 7919 + 13) % len.saturating_sub(8).max(1);
        p.corrupt_input(at, &[0xff; 8]).unwrap();
        p.run().unwrap();
        match p.check() {
            Ok(()) => {}
            Err(Error::Gpu(m)) => {
                assert!(m.contains("device status"), "{m}");
                flagged += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("corrupted device input: {flagged} of 60 raised the status flag");
    // The context is healthy: a clean scan still matches.
    scan_matches("after corruption", &r, 0..n);
}
