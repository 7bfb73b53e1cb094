//! What version 4's checksum table (spec/FORMAT.md §5.7) costs, in one run
//! next to version 3 (one CRC32 per chunk): `checksum_probe COLUMN.txt [REPS]`.
//!
//! The column is written once with the defaults (version 4) and re-spelled
//! as version 3 with the same dictionaries and codes (only the chunk headers,
//! the checksum tables and the chunk CRC32s differ). Prints: the table's
//! share of the file; whole-chunk validation (every chunk of a fresh reader,
//! best of REPS, file bytes per second); `get` latency, cold (the first
//! point read of a fresh reader: header, row-code directory and blocks, and
//! in version 4 the blocks' checks) and warm (point reads of rows already
//! touched), through memory and through positioned reads of a file.
use std::time::Instant;

use fastpair::format::layout::{self, ChunkParts, ChunkSection};
use fastpair::{ReadOptions, Reader, WriterOptions};

/// The version-3 spelling of version-4 file `v4`.
fn as_v3(v4: &[u8]) -> Vec<u8> {
    let r = Reader::from_bytes(v4.to_vec()).unwrap();
    let mut footer = r.footer().clone();
    let mut out = layout::header_bytes().to_vec();
    for (i, e) in r.footer().chunks.iter().enumerate() {
        let (at, len) = (e.section.offset as usize, e.section.len as usize);
        let bits = r.dictionaries().unwrap()[e.dict as usize].code_bits();
        let p = ChunkSection::parse(&v4[at..at + len], at as u64, i as u32, e, bits, 4).unwrap();
        let mut s = Vec::new();
        ChunkSection::write(
            3,
            &ChunkParts {
                kind: p.kind,
                batch: p.batch,
                code_bits: bits,
                codes: p.codes,
                sidecar: p.sidecar.0,
                row_codes: p.row_codes.0,
                row_bytes: p.row_bytes.0,
                validity: p.validity,
                value_index: p.value_index.map(|x| x.0),
                // Version 3 has no log-template chunks.
                log_payload: None,
            },
            &mut s,
        );
        footer.chunks[i].section.offset = out.len() as u64;
        footer.chunks[i].section.len = s.len() as u64;
        footer.chunks[i].section.crc = crc32fast::hash(&s);
        out.extend_from_slice(&s);
    }
    for (i, d) in r.footer().dicts.iter().enumerate() {
        let s = &v4[d.offset as usize..(d.offset + d.len) as usize];
        footer.dicts[i].offset = out.len() as u64;
        out.extend_from_slice(s);
    }
    let fb = footer.to_bytes();
    out.extend_from_slice(&fb);
    out.extend_from_slice(&layout::tail_bytes(fb.len() as u32, crc32fast::hash(&fb)));
    let n = out.len();
    out[8..12].copy_from_slice(&3u32.to_le_bytes());
    out[n - 16..n - 12].copy_from_slice(&3u32.to_le_bytes());
    out
}

/// Checksum-table bytes of a version-4 file.
fn table_bytes(v4: &[u8]) -> u64 {
    let r = Reader::from_bytes(v4.to_vec()).unwrap();
    let mut n = 0;
    for (i, e) in r.footer().chunks.iter().enumerate() {
        let (at, len) = (e.section.offset as usize, e.section.len as usize);
        let bits = r.dictionaries().unwrap()[e.dict as usize].code_bits();
        let p = ChunkSection::parse(&v4[at..at + len], at as u64, i as u32, e, bits, 4).unwrap();
        n += p.checksums.unwrap().len() as u64;
    }
    n
}

fn validate_best(file: &bytes::Bytes, reps: usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let r = Reader::from_bytes(file.clone()).unwrap();
        let t = Instant::now();
        for i in 0..r.num_chunks() {
            std::hint::black_box(r.chunk(i).unwrap());
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// Row numbers spread over the column (a fixed LCG).
fn rows(n: u64, k: usize) -> Vec<u64> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    (0..k)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 11) % n
        })
        .collect()
}

/// (cold, warm) median nanoseconds of one `get`.
fn get_latency(open: &dyn Fn() -> Reader, n: u64) -> (f64, f64) {
    let opts_rows = rows(n, 200);
    let mut cold = Vec::new();
    for &row in &opts_rows {
        let r = open();
        let t = Instant::now();
        std::hint::black_box(r.get(row).unwrap());
        cold.push(t.elapsed().as_nanos() as f64);
    }
    let r = open();
    let warm_rows = rows(n, 2000);
    for &row in &warm_rows {
        r.get(row).unwrap();
    }
    let mut warm = Vec::new();
    let mut out = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for &row in &warm_rows {
            std::hint::black_box(r.get_into(row, &mut out).unwrap());
        }
        warm.push(t.elapsed().as_nanos() as f64 / warm_rows.len() as f64);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (med(&mut cold), med(&mut warm))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args
        .next()
        .expect("usage: checksum_probe COLUMN.txt [REPS]");
    let reps: usize = args.next().map_or(10, |s| s.parse().unwrap());
    let text = std::fs::read(&name).unwrap();
    let lines = fastpair::testing::corpus::lines(&text);
    let v4 =
        fastpair::write::write_to_vec(lines.iter().map(|r| Some(*r)), WriterOptions::default())
            .unwrap();
    let v3 = as_v3(&v4);
    let (b4, b3) = (
        bytes::Bytes::from(v4.clone()),
        bytes::Bytes::from(v3.clone()),
    );
    assert_eq!(
        Reader::from_bytes(b3.clone()).unwrap().read_all().unwrap(),
        Reader::from_bytes(b4.clone()).unwrap().read_all().unwrap()
    );
    let t = table_bytes(&v4);
    println!(
        "{name}: {} rows, {} chunks; v4 {} B, v3 {} B; checksum tables {} B = {:.3}% of the v4 file (v4 - v3 = {:+.3}%)",
        lines.len(),
        Reader::from_bytes(b4.clone()).unwrap().num_chunks(),
        v4.len(),
        v3.len(),
        t,
        100.0 * t as f64 / v4.len() as f64,
        100.0 * (v4.len() as f64 - v3.len() as f64) / v3.len() as f64
    );
    let decoded = text.len() as f64;
    for _ in 0..2 {
        let (s3, s4) = (validate_best(&b3, reps), validate_best(&b4, reps));
        println!(
            "validate whole (best of {reps}): v3 {:.2} ms = {:.2} GB/s file, {:.2} GB/s decoded; v4 {:.2} ms = {:.2} GB/s file, {:.2} GB/s decoded",
            s3 * 1e3,
            v3.len() as f64 / s3 / 1e9,
            decoded / s3 / 1e9,
            s4 * 1e3,
            v4.len() as f64 / s4 / 1e9,
            decoded / s4 / 1e9
        );
    }
    // The hashing alone: v3's one CRC32 per chunk section against v4's
    // per-block CRC32s (1,536/2,048-byte code blocks, 4 KiB others).
    let crc_best = |f: &dyn Fn() -> u32| {
        let mut best = f64::INFINITY;
        for _ in 0..reps.max(5) {
            let t = Instant::now();
            std::hint::black_box(f());
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let r4 = Reader::from_bytes(b4.clone()).unwrap();
    let sections: Vec<(usize, usize, u8)> = r4
        .footer()
        .chunks
        .iter()
        .map(|e| {
            let bits = r4.dictionaries().unwrap()[e.dict as usize].code_bits();
            (e.section.offset as usize, e.section.len as usize, bits)
        })
        .collect();
    let whole = crc_best(&|| {
        sections
            .iter()
            .map(|&(a, l, _)| crc32fast::hash(&v4[a..a + l]))
            .fold(0, |x, y| x ^ y)
    });
    let blocks = crc_best(&|| {
        let mut x = 0;
        for &(a, l, bits) in &sections {
            let s = &v4[a..a + l];
            let cb = 1024 * bits as usize / 8;
            for (k, b) in s.chunks(4096).enumerate() {
                // Code-sized blocks for the first part of the section.
                x ^= if k == 0 {
                    b.chunks(cb).map(crc32fast::hash).fold(0, |p, q| p ^ q)
                } else {
                    crc32fast::hash(b)
                };
            }
        }
        x
    });
    let tot: usize = sections.iter().map(|s| s.1).sum();
    println!(
        "CRC32 alone over the chunk sections ({tot} B): whole sections {:.2} GB/s, 4 KiB blocks {:.2} GB/s",
        tot as f64 / whole / 1e9,
        tot as f64 / blocks / 1e9
    );
    let n = lines.len() as u64;
    let point = ReadOptions::default().with_validate_after_gets(None);
    let dir = std::env::temp_dir().join(format!("checksum_probe_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (label, file, bytes) in [("v3", &v3, &b3), ("v4", &v4, &b4)] {
        let (c, w) = get_latency(
            &|| Reader::from_bytes_with(bytes.clone(), point.clone()).unwrap(),
            n,
        );
        let path = dir.join(format!("{label}.fpc"));
        std::fs::write(&path, file).unwrap();
        let (fc, fw) = get_latency(&|| Reader::open_with(&path, point.clone()).unwrap(), n);
        println!(
            "{label} get (point reads, median ns): memory cold {c:.0} warm {w:.0}; file cold {fc:.0} warm {fw:.0}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
