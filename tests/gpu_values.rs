//! Value-dictionary chunks (spec/FORMAT.md §5.6) through every GPU path
//! (issue 26): the whole-column scan, the streaming scan through a ring
//! smaller than the column, and random rows on the device, each equal to the
//! CPU reader, on every corpus column written with default options (value
//! dictionaries wherever the writer chooses them), on synthetic columns of
//! 1, 2, 7, 256, 1,000 and 65,536 distinct values, and on files that mix
//! coded and value-dictionary chunks. Without a GPU these tests print a
//! notice and pass, unless FASTPAIR_REQUIRE_GPU=1 (then they fail).
#![cfg(feature = "gpu")]

use std::ops::Range;

use fastpair::gpu;
use fastpair::write::write_to_vec;
use fastpair::{Error, LogTemplates, Reader, WriterOptions};

#[path = "support/gpu.rs"]
mod device;
use device::have_gpu;

/// Chunks of `r` that are value-dictionary chunks.
fn value_dict_chunks(r: &Reader) -> usize {
    (0..r.num_chunks())
        .filter(|&i| r.chunk_info(i).entry.values > 0)
        .count()
}

/// `gpu::scan` of `rows` equals the CPU reader's column.
fn scan_matches(name: &str, r: &Reader, rows: Range<u64>) {
    let gpu = gpu::scan(r, rows.clone())
        .unwrap_or_else(|e| panic!("{name}: scan {rows:?}: {e}"))
        .to_host()
        .unwrap();
    let cpu = r.read_range(rows.clone()).unwrap();
    assert!(gpu.offsets == cpu.offsets, "{name}: offsets of {rows:?}");
    assert!(gpu.values == cpu.values, "{name}: values of {rows:?}");
    assert!(gpu.validity == cpu.validity, "{name}: validity of {rows:?}");
}

/// `gpu::scan_stream` of `rows` through the smallest ring (from 64 KiB,
/// doubling) that holds each batch: batches in order, each equal to the CPU
/// reader's rows. Returns (batches, ring bytes).
fn stream_matches(name: &str, r: &Reader, rows: Range<u64>) -> (usize, usize) {
    let mut budget = 64usize << 10;
    loop {
        let so = gpu::StreamOptions::default().with_device_bytes(budget);
        let mut next = rows.start;
        let got = gpu::scan_stream(r, rows.clone(), &so, |b| {
            assert_eq!(b.first_row, next, "{name}: batches in order");
            let span = b.first_row..b.first_row + b.len() as u64;
            let host = b.to_host()?;
            let cpu = r.read_range(span.clone())?;
            assert!(
                host.offsets == cpu.offsets,
                "{name}: batch {span:?} offsets"
            );
            assert!(host.values == cpu.values, "{name}: batch {span:?} values");
            for k in 0..cpu.len() {
                assert_eq!(
                    host.value(k),
                    cpu.value(k),
                    "{name}: row {}",
                    span.start + k as u64
                );
            }
            next = span.end;
            Ok(())
        });
        match got {
            Err(Error::InvalidArgument(m)) if m.contains("more than one ring buffer") => {
                budget *= 2;
            }
            Err(e) => panic!("{name}: scan_stream {rows:?}: {e}"),
            Ok(st) => {
                assert_eq!(next, rows.end, "{name}: every row streamed");
                assert_eq!(st.rows, rows.end - rows.start);
                assert!(st.ring_bytes <= budget);
                return (st.batches, st.ring_bytes);
            }
        }
    }
}

/// `DeviceRows::get` of random, sorted, repeated and edge rows equals the
/// CPU reader's `get`.
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
    // First and last row of every chunk, and their neighbours.
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
    for (what, ids) in [
        ("random", random),
        ("sorted", sorted),
        ("repeated", repeated),
        ("edges", edges),
    ] {
        let col = dev.get(&ids).unwrap().to_host().unwrap();
        assert_eq!(col.len(), ids.len());
        for (k, &id) in ids.iter().enumerate() {
            let cpu = r.get(id).unwrap();
            assert_eq!(col.value(k), cpu.as_deref(), "{name}: {what} row {id}");
        }
    }
}

/// Every path on `r`: whole column, ranges cutting chunks, streaming, rows.
fn every_path(name: &str, r: &Reader) {
    let n = r.rows();
    scan_matches(name, r, 0..n);
    let mut cuts = vec![n / 3..n - n / 3, n / 2..n / 2 + 1, 0..0];
    for i in 1..r.num_chunks() {
        let b = r.chunk_info(i).first_row;
        cuts.push(b - 1..(b + 1).min(n));
    }
    for c in cuts {
        scan_matches(name, r, c);
    }
    stream_matches(name, r, 0..n);
    stream_matches(name, r, n / 5..n - n / 7);
    rows_match(name, r);
}

#[path = "support/corpus.rs"]
mod corpus;

#[test]
fn corpus_columns_with_default_options() {
    if !have_gpu("corpus_columns_with_default_options") {
        return;
    }
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without a corpus (tests/support).
    let only: Vec<String> = std::env::var("FASTPAIR_CORPUS_ONLY")
        .map(|o| o.split(',').map(String::from).collect())
        .unwrap_or_default();
    let cols = corpus::columns(&only.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!cols.is_empty(), "no columns to check");
    let mut with_values = Vec::new();
    for c in &cols {
        let rows = c.rows();
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), WriterOptions::default()).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let name = c.name.clone();
        let vd = value_dict_chunks(&r);
        eprintln!(
            "{name}: {} rows, {} chunks, {vd} value-dictionary",
            r.rows(),
            r.num_chunks()
        );
        if vd > 0 {
            with_values.push(name.clone());
        }
        every_path(&name, &r);
    }
    // The writer's defaults choose value dictionaries for these columns.
    for name in ["tpch_sf1_l_shipinstruct", "tpch_sf1_o_clerk"] {
        if cols.iter().any(|c| c.name == name) {
            assert!(
                with_values.iter().any(|w| w == name),
                "{name}: {with_values:?}"
            );
        }
    }
}

/// A column of `rows` rows over `d` distinct values (every 13th row null,
/// value 0 of the numbering empty): row i names value 7919·i mod d, so
/// neighbouring rows name different values and any d consecutive rows name
/// every value (7919 is a prime that divides none of the counts).
fn synthetic(d: usize, rows: usize) -> Vec<Option<Vec<u8>>> {
    (0..rows)
        .map(|i| {
            if i % 13 == 5 {
                return None;
            }
            let k = i * 7919 % d;
            Some(if k == 0 && d > 1 {
                Vec::new()
            } else {
                format!("v{k:05}-{}", "ab".repeat(k % 11)).into_bytes()
            })
        })
        .collect()
}

#[test]
fn synthetic_distinct_value_counts() {
    if !have_gpu("synthetic_distinct_value_counts") {
        return;
    }
    for d in [1usize, 2, 7, 256, 1000, 65_536] {
        // Enough rows that every value repeats (a value dictionary pays),
        // several chunks so that streaming goes through a ring smaller than
        // the column; the 65,536-value chunks need at least 2·D rows each.
        let chunk_rows = (3 * d).max(7_000);
        let rows = 6 * chunk_rows;
        let vals = synthetic(d, rows);
        // Value-dictionary chunks are what this tests: log templates off
        // (numbered values like these are smaller as templates at 65,536).
        let opts = WriterOptions::default()
            .with_chunk_rows(chunk_rows)
            .with_log_templates(LogTemplates::Off);
        let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let name = format!("{d} distinct values");
        assert!(r.num_chunks() >= 2, "{name}");
        assert_eq!(
            r.chunk_info(0).entry.values as usize,
            d,
            "{name}: the first chunk holds every value"
        );
        assert_eq!(
            value_dict_chunks(&r),
            r.num_chunks(),
            "{name}: every chunk a value dictionary"
        );
        every_path(&name, &r);
        let (batches, ring) = stream_matches(&name, &r, 0..r.rows());
        assert!(batches >= 2, "{name}: {batches} batches");
        // Smaller than the column in device memory (values and offsets).
        let column = r.decoded_bytes() + 8 * (r.rows() + 1);
        assert!(
            (ring as u64) < column,
            "{name}: the ring ({ring} bytes) is smaller than the column ({column})"
        );
        // Spot check against the rows written.
        let col = gpu::scan(&r, 0..r.rows()).unwrap().to_host().unwrap();
        for k in (0..vals.len()).step_by(97) {
            assert_eq!(col.value(k), vals[k].as_deref(), "{name}: row {k}");
        }
    }
}

/// A file whose chunks alternate between value-dictionary and coded layouts
/// (low-cardinality rows, then unique rows, ...), with nulls.
fn mixed_file() -> (Vec<u8>, Vec<Option<Vec<u8>>>) {
    let rows: Vec<Option<Vec<u8>>> = (0..35_000usize)
        .map(|i| {
            let block = i / 7_000;
            if i % 23 == 4 {
                None
            } else if block % 2 == 0 {
                Some(format!("TAKE BACK RETURN {}", i % 5).into_bytes())
            } else {
                Some(format!("order {i} shipped to {} street", i * 7919 % 100_003).into_bytes())
            }
        })
        .collect();
    let opts = WriterOptions::default().with_chunk_rows(7_000);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    (file, rows)
}

#[test]
fn mixed_chunk_kinds_through_every_path() {
    if !have_gpu("mixed_chunk_kinds_through_every_path") {
        return;
    }
    let (file, rows) = mixed_file();
    let r = Reader::from_bytes(file).unwrap();
    let vd = value_dict_chunks(&r);
    assert!(
        vd > 0 && vd < r.num_chunks(),
        "the file must mix layouts: {vd} of {}",
        r.num_chunks()
    );
    let n = r.rows();
    assert_eq!(n as usize, rows.len());
    every_path("mixed", &r);
    // Ranges inside one chunk of each kind and crossing kinds.
    for range in [10..6_990, 7_001..13_999, 6_000..15_000, 20_999..21_001] {
        scan_matches("mixed", &r, range.clone());
        let col = gpu::scan(&r, range.clone()).unwrap().to_host().unwrap();
        for (k, row) in range.enumerate() {
            assert_eq!(col.value(k), rows[row as usize].as_deref(), "row {row}");
        }
    }
    // The prepared scan (as `fastpair scan --gpu` runs it) of the mixed file.
    let mut p = gpu::Prepared::new(&r, 0..n, &gpu::ScanOptions::default(), 1).unwrap();
    p.upload().unwrap();
    p.run().unwrap();
    p.check().unwrap();
    assert!(p.to_host().unwrap() == r.read_all().unwrap());
    p.end_to_end(3).unwrap();
    p.check().unwrap();
    assert!(p.to_host().unwrap() == r.read_all().unwrap());
    // Tiled (a benchmark's selection repeated): each copy is the column.
    let mut p = gpu::Prepared::new(&r, 0..n, &gpu::ScanOptions::default(), 3).unwrap();
    p.upload().unwrap();
    p.run().unwrap();
    p.check().unwrap();
    let t = p.to_host().unwrap();
    let cpu = r.read_all().unwrap();
    assert_eq!(t.len(), 3 * cpu.len());
    for k in 0..t.len() {
        assert_eq!(t.value(k), cpu.value(k % cpu.len()), "tiled row {k}");
    }
}

/// Value-dictionary chunks only, through the pipelined end-to-end path
/// (no coded piece: one copy, then the gather).
#[test]
fn value_dict_only_end_to_end() {
    if !have_gpu("value_dict_only_end_to_end") {
        return;
    }
    let vals = synthetic(7, 20_000);
    let opts = WriterOptions::default().with_chunk_rows(5_000);
    let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(value_dict_chunks(&r), r.num_chunks());
    let mut p = gpu::Prepared::new(&r, 0..r.rows(), &gpu::ScanOptions::default(), 1).unwrap();
    p.end_to_end(4).unwrap();
    p.check().unwrap();
    assert!(p.to_host().unwrap() == r.read_all().unwrap());
}

/// Rows longer than a gather tile (16 KiB) are copied straight by the block,
/// and rows longer than a warp's pass (1 KiB) straight by the warp, next to
/// short ones in the same chunk.
#[test]
fn long_values_bypass_the_staging() {
    if !have_gpu("long_values_bypass_the_staging") {
        return;
    }
    let long: Vec<Vec<u8>> = (0..3)
        .map(|k| {
            (0..20_000 + 4_099 * k)
                .map(|i| (i * 31 + k) as u8)
                .collect()
        })
        .collect();
    let mid: Vec<u8> = (0..2_500).map(|i| (i * 7 + 1) as u8).collect();
    let vals: Vec<Option<Vec<u8>>> = (0..6_000usize)
        .map(|i| match i % 40 {
            3 => Some(long[i % 3].clone()),
            9 => None,
            13 | 14 => Some(mid.clone()),
            k => Some(format!("short {}", k % 4).into_bytes()),
        })
        .collect();
    let opts = WriterOptions::default().with_chunk_rows(3_000);
    let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert!(value_dict_chunks(&r) > 0);
    every_path("long values", &r);
}
