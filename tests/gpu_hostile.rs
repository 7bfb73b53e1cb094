//! Hostile files through the GPU scan (issue 4, item 5): every corrupt file in
//! testdata/corrupt/ and many mutated valid files (checksums recomputed so the
//! damage reaches the structural checks) go through `gpu::read_range`. The
//! result must equal the CPU decoder's: both refuse, or both return the same
//! column. Files with value-dictionary chunks (spec/FORMAT.md §5.6) go
//! through every GPU path: the scan, the streaming scan and random rows on
//! the device. Run it under `compute-sanitizer --tool memcheck` on the
//! device. Skips without a GPU unless FASTPAIR_REQUIRE_GPU=1.

use fastpair::gpu::{self, Backend};
use fastpair::testing::recompute_checksums;
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, Reader, WriterOptions};

#[path = "support/gpu.rs"]
mod device;
use device::have_gpu;

/// Opens `bytes`; if it opens, the GPU and CPU must agree on every row.
fn same_on_gpu_and_cpu(bytes: Vec<u8>) -> bool {
    let Ok(r) = Reader::from_bytes(bytes) else {
        return false;
    };
    let cpu = r.read_all();
    let gpu = gpu::read_range(&r, 0..r.rows());
    match (cpu, gpu) {
        (Ok(c), Ok((g, backend))) => {
            assert_eq!(backend, Backend::Gpu);
            assert!(c == g, "GPU column differs from CPU column");
            true
        }
        (Err(_), Err(_)) => false,
        (c, g) => panic!(
            "CPU and GPU disagree: cpu ok={} gpu ok={}",
            c.is_ok(),
            g.is_ok()
        ),
    }
}

thread_local! {
    /// Files the streaming scan did not refuse as it must (each test checks
    /// its own thread's list at its end, so one run names them all).
    static REFUSED_BADLY: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(feature = "gpu")]
fn refused_badly(m: String) {
    eprintln!("{m}");
    REFUSED_BADLY.with(|v| v.borrow_mut().push(m));
}

/// Panics with the files the streaming scan did not refuse as it must.
fn no_bad_refusals() {
    REFUSED_BADLY.with(|v| {
        let v = v.borrow();
        assert!(v.is_empty(), "{} files: {v:#?}", v.len());
    });
}

/// The streaming scans each file goes through: from the page-locked file,
/// and through pinned staging buffers of 1,000 bytes.
#[cfg(feature = "gpu")]
fn stream_options() -> [gpu::StreamOptions; 2] {
    let so = gpu::StreamOptions::default().with_device_bytes(1 << 20);
    [so, so.with_page_lock_file(false).with_staging_bytes(1000)]
}

/// Opens `bytes`; if it opens, the streaming scan and random rows on the
/// device agree with the CPU reader too: the same rows where the CPU reads
/// the whole column, an error where it refuses. Returns whether it decoded.
#[cfg(feature = "gpu")]
fn same_on_every_gpu_path(bytes: Vec<u8>) -> bool {
    if !same_on_gpu_and_cpu(bytes.clone()) {
        // Refused by both (or not opened): the other paths must refuse too.
        if let Ok(r) = Reader::from_bytes(bytes.clone()) {
            let cpu = Reader::from_bytes(bytes.clone())
                .unwrap()
                .read_all()
                .expect_err("refused above");
            // A fresh reader, uploading from the page-locked file and
            // through pinned staging (1,000-byte buffers, which check the
            // codes' checksum blocks as they copy them, blocks split across
            // buffers): what the device flags is named by the host's whole
            // validation of the batch (the CPU reader's error), never left
            // as a bare device status.
            for (so, fresh) in
                stream_options().map(|so| (so, Reader::from_bytes(bytes.clone()).unwrap()))
            {
                match gpu::scan_stream(&fresh, 0..fresh.rows(), &so, |_| Ok(())) {
                    Err(fastpair::Error::Gpu(m)) => {
                        refused_badly(format!("bare device error {m} ({cpu})"))
                    }
                    Err(_) => {}
                    // §9 step 14 (a dictionary's histogram against its chunks'
                    // token lengths) is left to whole validation by the device
                    // checks (spec/DECODER.md §6b): a one-spelling check that
                    // changes no decoded byte.
                    Ok(_)
                        if matches!(
                            cpu,
                            fastpair::Error::Corrupt {
                                invariant: fastpair::error::Invariant::HistogramMismatch { .. },
                                ..
                            }
                        ) => {}
                    Ok(st) => {
                        refused_badly(format!("streamed a file the CPU refuses ({cpu}): {st:?}"))
                    }
                }
            }
            let ids: Vec<u64> = (0..r.rows()).collect();
            assert!(gpu::DeviceRows::new(&r)
                .and_then(|mut d| d.get(&ids))
                .is_err());
        }
        return false;
    }
    let r = Reader::from_bytes(bytes.clone()).unwrap();
    let cpu = r.read_all().unwrap();
    for so in stream_options() {
        let mut next = 0u64;
        // A fresh reader: its coded chunks' codes and rows are checked by the
        // device (`StreamOptions::device_checks`), not validated on the host.
        let fresh = Reader::from_bytes(bytes.clone()).unwrap();
        gpu::scan_stream(&fresh, 0..fresh.rows(), &so, |b| {
            let host = b.to_host()?;
            for k in 0..b.len() {
                assert_eq!(
                    host.value(k),
                    cpu.value(next as usize + k),
                    "row {}",
                    next + k as u64
                );
            }
            next += b.len() as u64;
            Ok(())
        })
        .unwrap();
        assert_eq!(next, r.rows());
    }
    let ids: Vec<u64> = (0..r.rows()).rev().collect();
    let col = gpu::DeviceRows::new(&r)
        .and_then(|mut d| d.get(&ids))
        .and_then(|c| c.to_host())
        .unwrap();
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!(col.value(k), cpu.value(id as usize), "row {id}");
    }
    true
}

/// Bit flips in files of value-dictionary chunks (value index, values'
/// codes, starts, validity, headers; checksums recomputed so the damage
/// reaches the structural checks), through every GPU path.
#[cfg(feature = "gpu")]
#[test]
fn mutated_value_dict_files_through_every_gpu_path() {
    if !have_gpu("mutated_value_dict_files_through_every_gpu_path") {
        return;
    }
    let rows: Vec<Option<Vec<u8>>> = (0..2800u32)
        .map(|i| match i % 11 {
            4 => None,
            7 => Some(Vec::new()),
            _ => Some(
                format!(
                    "DELIVER IN PERSON {}",
                    "#".repeat((i * 7 % 300 % 9) as usize)
                )
                .into_bytes(),
            ),
        })
        .collect();
    let mut seeds = Vec::new();
    for (codec, mode) in [
        (Codec::OnPair12, DictMode::Shared),
        (Codec::OnPair16, DictMode::PerChunk),
    ] {
        let o = WriterOptions::default()
            .with_codec(codec)
            .with_dict_mode(mode)
            .with_chunk_rows(700);
        let f = write_to_vec(rows.iter().map(|r| r.as_deref()), o).unwrap();
        let r = Reader::from_bytes(f.clone()).unwrap();
        let vd = (0..r.num_chunks())
            .filter(|&i| r.chunk_info(i).entry.values > 0)
            .count();
        assert_eq!(vd, r.num_chunks(), "value-dictionary chunks throughout");
        assert!(same_on_every_gpu_path(f.clone()));
        seeds.push(f);
    }
    // The corrupt-file set too (it holds damaged value-dictionary chunks).
    for e in std::fs::read_dir("testdata/corrupt").expect("testdata/corrupt") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fpc") {
            let n = REFUSED_BADLY.with(|v| v.borrow().len());
            same_on_every_gpu_path(std::fs::read(&p).unwrap());
            if REFUSED_BADLY.with(|v| v.borrow().len()) > n {
                eprintln!("  ^ {}", p.display());
            }
        }
    }
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut opened, mut total) = (0, 0);
    // FASTPAIR_MUTATIONS: files per seed (default 250; fewer under
    // compute-sanitizer, which slows every launch).
    let per_seed: usize = std::env::var("FASTPAIR_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250);
    for seed in &seeds {
        for _ in 0..per_seed {
            let mut f = seed.clone();
            for _ in 0..1 + next() % 3 {
                let at = (next() % f.len() as u64) as usize;
                f[at] ^= 1 << (next() % 8);
            }
            recompute_checksums(&mut f);
            opened += same_on_every_gpu_path(f) as u32;
            total += 1;
        }
    }
    eprintln!("mutated value-dictionary files: {total}, decoded on every path: {opened}");
    no_bad_refusals();
}

#[test]
fn corrupt_files_through_gpu_scan() {
    if !have_gpu("corrupt_files_through_gpu_scan") {
        return;
    }
    let mut n = 0;
    for e in std::fs::read_dir("testdata/corrupt").expect("testdata/corrupt") {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fpc") {
            same_on_gpu_and_cpu(std::fs::read(&p).unwrap());
            n += 1;
        }
    }
    assert!(n > 10, "expected the corrupt-file set, found {n} files");
}

#[test]
fn mutated_files_through_gpu_scan() {
    if !have_gpu("mutated_files_through_gpu_scan") {
        return;
    }
    let rows: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| {
            format!(
                "GET /item/{}?q={} HTTP/1.1 {}",
                i % 97,
                i * 7,
                "x".repeat((i % 23) as usize)
            )
            .into_bytes()
        })
        .collect();
    let mut seeds = Vec::new();
    for (codec, mode) in [
        (Codec::OnPair12, DictMode::Shared),
        (Codec::OnPair16, DictMode::PerChunk),
    ] {
        let o = WriterOptions::default()
            .with_codec(codec)
            .with_dict_mode(mode)
            .with_chunk_rows(700);
        seeds.push(write_to_vec(rows.iter().map(|r| Some(r.as_slice())), o).unwrap());
    }
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut opened, mut total) = (0, 0);
    // Through every GPU path: the streaming scan of a fresh reader checks
    // these coded chunks' codes and rows on the device. FASTPAIR_MUTATIONS:
    // files per seed (default 300).
    let per_seed: usize = std::env::var("FASTPAIR_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for seed in &seeds {
        for _ in 0..per_seed {
            let mut f = seed.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() % f.len() as u64) as usize;
                f[at] ^= 1 << (next() % 8);
            }
            // One file in four keeps its damaged checksums: refused by
            // the checksums (of codes blocks, by the staging copy).
            if next() % 4 != 0 {
                recompute_checksums(&mut f);
            }
            #[cfg(feature = "gpu")]
            {
                opened += same_on_every_gpu_path(f) as u32;
            }
            #[cfg(not(feature = "gpu"))]
            {
                opened += same_on_gpu_and_cpu(f) as u32;
            }
            total += 1;
        }
    }
    eprintln!("mutated files: {total}, decoded on both: {opened}");
    no_bad_refusals();
}
