//! GPU decoder parity: the FastPair kernel's column is byte-identical to the
//! CPU decoder's on every corpus column and codec, on proptest cases, on
//! multi-chunk multi-dictionary files and on row ranges; corrupted device
//! buffers raise the device status flag. Without a GPU these tests print a
//! notice and pass, unless FASTPAIR_REQUIRE_GPU=1 (then they fail).
#![cfg(feature = "gpu")]

use fastpair::gpu::{self, DecoderConfig, Prepared, ScanOptions};
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, Error, LogTemplates, Reader, WriterOptions};
use proptest::prelude::*;

#[path = "support/gpu.rs"]
mod device;
use device::{have_gpu, have_nvrtc};

#[path = "support/corpus.rs"]
mod corpus;

/// `FASTPAIR_CORPUS_ONLY=a,b` limits the corpus columns (e.g. under
/// compute-sanitizer).
fn corpus_only() -> Vec<String> {
    std::env::var("FASTPAIR_CORPUS_ONLY")
        .map(|o| o.split(',').map(String::from).collect())
        .unwrap_or_default()
}

fn write(values: &[&[u8]], codec: Codec, chunk_rows: usize, mode: DictMode) -> Reader {
    // Coded chunks only: this is the decode kernel's parity test (value-
    // dictionary chunks have their own, tests/gpu_values.rs).
    let opts = WriterOptions::default()
        .with_codec(codec)
        .with_chunk_rows(chunk_rows)
        .with_dict_mode(mode)
        .with_value_dict(false)
        .with_log_templates(fastpair::LogTemplates::Off);
    let file = write_to_vec(values.iter().map(|v| Some(*v)), opts).expect("write");
    Reader::from_bytes(file).expect("open")
}

/// GPU (poisoned output first) vs CPU over `rows`, for `cfg`.
fn parity(r: &Reader, rows: std::ops::Range<u64>, cfg: DecoderConfig, force: bool) {
    let cpu = r.read_range(rows.clone()).expect("cpu");
    let opts = ScanOptions::default()
        .with_config(cfg)
        .with_force_width(force);
    let mut p = Prepared::new(r, rows.clone(), &opts, 1).expect("prepare");
    p.upload().expect("upload");
    // Poisoned first (the hook needs the `test-util` feature) so that
    // unwritten bytes show.
    #[cfg(feature = "test-util")]
    p.poison(0xa5).expect("poison");
    p.run().expect("run");
    p.check().expect("device status");
    let gpu = p.to_host().expect("to_host");
    assert_eq!(gpu.offsets, cpu.offsets, "offsets, rows {rows:?}, {cfg:?}");
    assert_eq!(gpu.validity, cpu.validity, "validity, rows {rows:?}");
    if gpu.values != cpu.values {
        let i = gpu
            .values
            .iter()
            .zip(&cpu.values)
            .position(|(a, b)| a != b)
            .unwrap_or(cpu.values.len());
        panic!(
            "values differ at byte {i} of {} (rows {rows:?}, {cfg:?})",
            cpu.values.len()
        );
    }
}

#[test]
fn kernel_source_compiles_for_every_variant() {
    // Needs only NVRTC (no device): catches kernel compile errors on CI
    // machines that have the library.
    if !have_nvrtc("kernel_source_compiles_for_every_variant") {
        return;
    }
    for k in [2, 4, 6, 8] {
        for w in [8u8, 16] {
            for bits in [12u8, 16] {
                for h in [0, 1, 2] {
                    for emit in [2, 3, 4] {
                        let cfg = DecoderConfig::default()
                            .with_k(k)
                            .with_h(h)
                            .with_t(256)
                            .with_b(4)
                            .with_w(w)
                            .with_emit(emit)
                            .with_m(1 + (k + h + emit) % 8);
                        gpu::compile_check(&cfg, bits, "compute_90")
                            .unwrap_or_else(|e| panic!("{cfg:?} bits {bits}: {e}"));
                    }
                }
            }
        }
    }
}

#[test]
fn corpus_columns_match_cpu() {
    if !have_gpu("corpus_columns_match_cpu") {
        return;
    }
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without a corpus (tests/support).
    let only = corpus_only();
    let cols = corpus::columns(&only.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!cols.is_empty(), "no columns to check");
    for c in &cols {
        let vals = c.rows();
        for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
            let r = write(&vals, codec, 1 << 20, DictMode::Shared);
            eprintln!(
                "{} {codec:?}: {} rows, {} chunks",
                c.name,
                r.rows(),
                r.num_chunks()
            );
            let n = r.rows();
            parity(&r, 0..n, DecoderConfig::default(), false);
            // The other plane width, and a different K.
            let other = DecoderConfig::default()
                .with_w(if gpu::scan_width(&r).unwrap() == 8 {
                    16
                } else {
                    8
                })
                .with_k(4)
                .with_h(2)
                .with_emit(3)
                .with_m(1);
            parity(&r, 0..n, other, true);
            // Every staging-write variant at the file's width.
            for emit in [2, 3] {
                let cfg = DecoderConfig::default().with_emit(emit);
                parity(&r, 0..n, cfg, false);
            }
            // Row ranges cutting batches.
            if n > 10 {
                // Offsets warps of 2, 3 and 8 row blocks (the default is 4).
                parity(&r, 1..n - 1, DecoderConfig::default().with_m(3), false);
                parity(
                    &r,
                    n / 5..n - n / 7,
                    DecoderConfig::default().with_m(2),
                    false,
                );
                parity(
                    &r,
                    n / 3..n / 3 + 7,
                    DecoderConfig::default().with_m(8),
                    false,
                );
            }
        }
    }
}

#[test]
fn multi_chunk_multi_dictionary() {
    if !have_gpu("multi_chunk_multi_dictionary") {
        return;
    }
    let mut vals: Vec<Vec<u8>> = Vec::new();
    for i in 0..20_000u32 {
        let v = match i % 4 {
            0 => format!("GET /api/v1/items/{i}?page={} HTTP/1.1 200", i % 17),
            1 => format!("user{}@example.com", i * 7919 % 10007),
            2 => String::new(),
            _ => format!("{:x}{:x}", i.wrapping_mul(2654435761), i),
        };
        vals.push(v.into_bytes());
    }
    let refs: Vec<&[u8]> = vals.iter().map(|v| v.as_slice()).collect();
    for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
        let r = write(&refs, codec, 1500, DictMode::PerChunk);
        assert!(r.num_chunks() > 10 && r.dictionaries().unwrap().len() > 10);
        let n = r.rows();
        for cfg in [
            DecoderConfig::default(),
            DecoderConfig::default()
                .with_k(2)
                .with_h(0)
                .with_t(128)
                .with_b(8)
                .with_w(16)
                .with_emit(2),
            DecoderConfig::default()
                .with_k(8)
                .with_h(2)
                .with_t(512)
                .with_b(2)
                .with_w(8)
                .with_emit(3),
            DecoderConfig::default().with_m(3),
        ] {
            parity(&r, 0..n, cfg, true);
        }
        // Chunk boundaries ±1, with offsets warps of 1 and 4 row blocks.
        for b in [1500u64, 3000, 15000] {
            for m in [1, 4] {
                let cfg = DecoderConfig::default().with_m(m);
                parity(&r, b - 1..b + 1, cfg, false);
                parity(&r, b + 1..n - 1, cfg, false);
                parity(&r, 0..b - 1, cfg, false);
            }
        }
        parity(&r, 5..5, DecoderConfig::default(), false);
        // The public entry points agree too.
        let (c, backend) = gpu::read_range(&r, 0..n).unwrap();
        assert_eq!(backend, gpu::Backend::Gpu);
        assert_eq!(c, r.read_all().unwrap());
        let d = gpu::scan(&r, 10..n).unwrap();
        assert_eq!(d.len() as u64, n - 10);
        assert_eq!(d.to_host().unwrap(), r.read_range(10..n).unwrap());
    }
}

#[test]
fn nulls_and_empty_values() {
    if !have_gpu("nulls_and_empty_values") {
        return;
    }
    let vals: Vec<Option<Vec<u8>>> = (0..5000u32)
        .map(|i| match i % 5 {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some(format!("value-{}-{}", i, "x".repeat((i % 40) as usize)).into_bytes()),
        })
        .collect();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair16)
        .with_chunk_rows(700);
    let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    parity(&r, 0..r.rows(), DecoderConfig::default(), false);
    parity(&r, 699..1401, DecoderConfig::default(), false);
}

#[cfg(feature = "test-util")]
#[test]
fn corrupted_device_buffers_raise_the_status_flag() {
    if !have_gpu("corrupted_device_buffers_raise_the_status_flag") {
        return;
    }
    let vals: Vec<Vec<u8>> = (0..4000u32)
        .map(|i| format!("row {i} of a small test column {}", i % 13).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = vals.iter().map(|v| v.as_slice()).collect();
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        let r = write(&refs, codec, 1000, DictMode::PerChunk);
        let n = r.rows();
        let opts = ScanOptions::default();
        // Codes out of range (0xfff / 0xffff beyond these small dictionaries).
        let mut p = Prepared::new(&r, 0..n, &opts, 1).unwrap();
        p.upload().unwrap();
        let at = p.piece_input(1).unwrap().start;
        p.corrupt_input(at + 32, &[0xff; 48]).unwrap();
        p.run().unwrap();
        match p.check() {
            Err(Error::Gpu(m)) => assert!(m.contains("status"), "{m}"),
            other => panic!("expected a device status error, got {other:?}"),
        }
        // Codes in range but of other lengths: batches disagree with the sidecar.
        let mut p = Prepared::new(&r, 0..n, &opts, 1).unwrap();
        p.upload().unwrap();
        let at = p.piece_input(2).unwrap().start;
        p.corrupt_input(at, &[0x41, 0, 0x41, 0, 0x41, 0, 0x41, 0])
            .unwrap();
        p.run().unwrap();
        match p.check() {
            Err(Error::Gpu(m)) => assert!(m.contains("sidecar") || m.contains("size"), "{m}"),
            other => panic!("expected a device status error, got {other:?}"),
        }
        // A damaged cascaded sidecar (block base / first value).
        let mut p = Prepared::new(&r, 0..n, &opts, 1).unwrap();
        p.upload().unwrap();
        let codes_len = {
            let c = r.chunk(0).unwrap();
            c.codes_bytes().len().next_multiple_of(16)
        };
        let at = p.piece_input(0).unwrap().start + codes_len;
        p.corrupt_input(at + 8, &[0x77, 0x77, 0, 0]).unwrap();
        p.run().unwrap();
        assert!(matches!(p.check(), Err(Error::Gpu(_))));
        // After an error the same plan decodes cleanly again.
        let mut p = Prepared::new(&r, 0..n, &opts, 1).unwrap();
        p.upload().unwrap();
        p.run().unwrap();
        p.check().unwrap();
        assert_eq!(p.to_host().unwrap(), r.read_all().unwrap());
    }
}

#[test]
fn corrupt_files_are_refused_before_launch() {
    if !have_gpu("corrupt_files_are_refused_before_launch") {
        return;
    }
    let vals: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| format!("entry {i} {}", i * 31 % 97).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = vals.iter().map(|v| v.as_slice()).collect();
    let opts = WriterOptions::default().with_chunk_rows(500);
    let file = write_to_vec(refs.iter().map(|v| Some(*v)), opts).unwrap();
    let mut flipped = 0;
    for pos in (0..file.len()).step_by(97) {
        let mut f = file.clone();
        f[pos] ^= 0x5a;
        let Ok(r) = Reader::from_bytes(f) else {
            continue;
        };
        match gpu::read_range(&r, 0..r.rows()) {
            Ok((c, _)) => assert_eq!(c, r.read_all().unwrap()),
            Err(Error::Corrupt { .. }) => flipped += 1,
            Err(e) => panic!("byte {pos}: unexpected {e}"),
        }
    }
    assert!(flipped > 0);
}

fn arb_values() -> impl Strategy<Value = Vec<Option<Vec<u8>>>> {
    let value = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::collection::vec(
            prop_oneof![Just(b'a'), Just(b'b'), Just(b' '), Just(b'/')],
            0..200
        ),
        "[a-z]{0,3}(abc|defgh|ijklmnopqrstu){0,12}".prop_map(|s| s.into_bytes()),
    ];
    proptest::collection::vec(proptest::option::weighted(0.95, value), 1..600)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn proptest_parity(
        vals in arb_values(),
        codec in prop_oneof![Just(Codec::Fsst12), Just(Codec::OnPair12), Just(Codec::OnPair16)],
        chunk_rows in 1usize..300,
        per_chunk in any::<bool>(),
        k in prop_oneof![Just(2u32), Just(4), Just(6), Just(8)],
        w in prop_oneof![Just(8u8), Just(16)],
        cut in any::<(u16, u16)>(),
    ) {
        if !have_gpu("proptest_parity") {
            return Ok(());
        }
        let opts = WriterOptions::default().with_codec(codec).with_chunk_rows(chunk_rows).with_dict_mode(if per_chunk { DictMode::PerChunk } else { DictMode::Shared });
        let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let n = r.rows();
        let cfg = DecoderConfig::default().with_k(k).with_w(w).with_emit(2 + (k / 2) % 3);
        parity(&r, 0..n, cfg, true);
        let a = cut.0 as u64 % (n + 1);
        let b = cut.1 as u64 % (n + 1);
        parity(&r, a.min(b)..a.max(b), cfg, true);
    }
}

#[test]
fn cpu_fallback_without_gpu_is_the_cpu_decoder() {
    // Runs everywhere: on a machine without a GPU, read_range must give the
    // CPU column and say so.
    let vals: Vec<Vec<u8>> = (0..1000u32)
        .map(|i| format!("fallback {i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = vals.iter().map(|v| v.as_slice()).collect();
    let r = write(&refs, Codec::OnPair16, 300, DictMode::Shared);
    let (c, backend) = gpu::read_range(&r, 3..900).unwrap();
    assert_eq!(c, r.read_range(3..900).unwrap());
    if gpu::available().is_err() {
        assert_eq!(backend, gpu::Backend::Cpu);
    }
}

/// `DeviceRows::get` of random, repeated and edge rows equals CPU `get`.
#[test]
fn random_rows_match_cpu_get() {
    if !have_gpu("random_rows_match_cpu_get") {
        return;
    }
    let vals: Vec<Option<Vec<u8>>> = (0..30_000u32)
        .map(|i| match i % 11 {
            0 => None,
            1 => Some(Vec::new()),
            2 => Some(format!("{:x}", i.wrapping_mul(2654435761)).into_bytes()),
            _ => Some(
                format!(
                    "GET /v1/item/{i} status={} {}",
                    i % 7,
                    "y".repeat((i % 37) as usize)
                )
                .into_bytes(),
            ),
        })
        .collect();
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        for mode in [DictMode::Shared, DictMode::PerChunk] {
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_chunk_rows(4000)
                .with_dict_mode(mode);
            let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
            let r = Reader::from_bytes(file).unwrap();
            let n = r.rows();
            let mut rows = gpu::DeviceRows::new(&r).unwrap();
            let mut x = 88172645463325252u64;
            let mut ids: Vec<u64> = (0..5000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % n
                })
                .collect();
            // Edges: first, last, chunk boundaries, repeats, block edges.
            ids.extend([
                0,
                n - 1,
                3999,
                4000,
                4001,
                127,
                128,
                129,
                0,
                n - 1,
                7999,
                8000,
            ]);
            let col = rows.get(&ids).unwrap().to_host().unwrap();
            assert_eq!(col.offsets.len(), ids.len() + 1);
            for (k, &id) in ids.iter().enumerate() {
                let valid = col
                    .validity
                    .as_ref()
                    .map_or(true, |v| v[k / 8] >> (k % 8) & 1 == 1);
                let got = &col.values[col.offsets[k] as usize..col.offsets[k + 1] as usize];
                assert_eq!(
                    valid.then(|| got.to_vec()),
                    r.get(id).unwrap(),
                    "row {id} ({codec:?}, {mode:?})"
                );
            }
            assert!(rows.get(&[n]).is_err());
            assert_eq!(rows.get(&[]).unwrap().len(), 0);
        }
    }
}

/// `scan_stream` through a ring far smaller than the column: every batch
/// equals the CPU decoder's rows, batches tile the range in order, device
/// memory stays within the budget, and a budget below one chunk is refused.
#[test]
fn streaming_scan_matches_cpu() {
    if !have_gpu("streaming_scan_matches_cpu") {
        return;
    }
    let vals: Vec<Option<Vec<u8>>> = (0..40_000u32)
        .map(|i| match i % 13 {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some(
                format!(
                    "{} host-{} took {} ms {}",
                    i * 7,
                    i % 91,
                    i % 1000,
                    "z".repeat((i % 29) as usize)
                )
                .into_bytes(),
            ),
        })
        .collect();
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        for mode in [DictMode::Shared, DictMode::PerChunk] {
            // Coded chunks, cut into batches by rows (log-template chunks,
            // which these rows would become, stream in tests/gpu_logs.rs).
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_chunk_rows(1500)
                .with_dict_mode(mode)
                .with_log_templates(LogTemplates::Off);
            let file = write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap();
            let r = Reader::from_bytes(file).unwrap();
            let n = r.rows();
            let budget = 512 << 10;
            // Staging buffers of 1 KiB (`false, 1024`): every batch goes
            // through many of them in turn, chunk parts split across them.
            for (so, range) in [
                (true, 0, 0..n),
                (false, 0, 0..n),
                (false, 1024, 0..n),
                (true, 0, 777..n - 333),
                (false, 0, 1499..1501),
                (false, 1000, 777..n - 333),
            ]
            .map(|(lock, stage, r)| {
                let mut so = gpu::StreamOptions::default()
                    .with_device_bytes(budget)
                    .with_page_lock_file(lock);
                if stage > 0 {
                    so = so.with_staging_bytes(stage);
                }
                (so, r)
            }) {
                let mut next = range.start;
                let st = gpu::scan_stream(&r, range.clone(), &so, |b| {
                    assert_eq!(b.first_row, next, "batches in order, no gap");
                    let rows = b.first_row..b.first_row + b.len() as u64;
                    assert_eq!(b.to_host()?, r.read_range(rows.clone())?, "rows {rows:?}");
                    next = rows.end;
                    Ok(())
                })
                .unwrap();
                assert_eq!(next, range.end);
                assert_eq!(st.rows, range.end - range.start);
                if so.page_lock_file && device::required() {
                    // On the device machine the file's bytes can be page-locked.
                    assert!(st.registered, "{st:?}");
                }
                assert!(st.ring_bytes <= budget, "{st:?}");
                if range.end - range.start == n {
                    assert!(st.batches > 4, "{st:?}");
                }
            }
            // A callback's error stops the scan and comes back.
            let so = gpu::StreamOptions::default().with_device_bytes(budget);
            let mut calls = 0;
            let e = gpu::scan_stream(&r, 0..n, &so, |_| {
                calls += 1;
                Err(Error::InvalidArgument("stop".into()))
            });
            assert!(matches!(e, Err(Error::InvalidArgument(_))));
            assert_eq!(calls, 1);
            let tiny = gpu::StreamOptions::default().with_device_bytes(4096);
            assert!(matches!(
                gpu::scan_stream(&r, 0..n, &tiny, |_| Ok(())),
                Err(Error::InvalidArgument(_))
            ));
            let no_staging = so.with_page_lock_file(false).with_staging_bytes(0);
            assert!(matches!(
                gpu::scan_stream(&r, 0..n, &no_staging, |_| Ok(())),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}

/// `scan_stream_on` with the same GPU listed twice (two independent stream
/// pipelines, as two GPUs would be driven): batches alternate between them
/// and still arrive in row order, identical to the CPU decoder.
#[test]
fn streaming_scan_on_two_pipelines() {
    if !have_gpu("streaming_scan_on_two_pipelines") {
        return;
    }
    let vals: Vec<Vec<u8>> = (0..30_000u32)
        .map(|i| format!("req {i} /path/{} {}", i % 53, "q".repeat((i % 17) as usize)).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = vals.iter().map(|v| v.as_slice()).collect();
    let r = write(&refs, Codec::OnPair16, 1000, DictMode::PerChunk);
    let n = r.rows();
    let so = gpu::StreamOptions::default().with_device_bytes(256 << 10);
    let mut next = 0;
    let st = gpu::scan_stream_on(&r, 0..n, &so, &[0, 0], |b| {
        assert_eq!(b.first_row, next);
        let rows = b.first_row..b.first_row + b.len() as u64;
        assert_eq!(b.to_host()?, r.read_range(rows.clone())?);
        next = rows.end;
        Ok(())
    })
    .unwrap();
    assert_eq!(next, n);
    assert!(st.batches >= 4, "{st:?}");
    assert!(gpu::scan_stream_on(&r, 0..n, &so, &[], |_| Ok(())).is_err());
    assert!(gpu::scan_stream_on(&r, 0..n, &so, &[4096], |_| Ok(())).is_err());
}

/// `scan_stream_on` over every visible GPU (issue 11 item 4), from a
/// memory-mapped file: once through pinned staging, once over the file
/// page-locked once (`PageLockedFile`, registered portable, so every GPU's
/// copies read it). Batches alternate between the devices, arrive in row
/// order and equal the CPU decoder. Needs two GPUs: with one it prints a
/// notice (and fails when `FASTPAIR_REQUIRE_GPUS=2`).
#[test]
fn streaming_scan_on_two_gpus() {
    if !have_gpu("streaming_scan_on_two_gpus") {
        return;
    }
    let devices = gpu::devices().unwrap();
    if devices.len() < 2 {
        if std::env::var("FASTPAIR_REQUIRE_GPUS").as_deref() == Ok("2") {
            panic!("streaming_scan_on_two_gpus: FASTPAIR_REQUIRE_GPUS=2 but {devices:?}");
        }
        eprintln!("streaming_scan_on_two_gpus: skipped, one GPU ({devices:?})");
        return;
    }
    let vals: Vec<Vec<u8>> = (0..40_000u32)
        .map(|i| {
            format!(
                "GET /a/{}/{} 200 {}",
                i % 97,
                i * 7 % 1013,
                "z".repeat((i % 23) as usize)
            )
            .into_bytes()
        })
        .collect();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair16)
        .with_chunk_rows(1500)
        .with_log_templates(LogTemplates::Off);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.fpc");
    std::fs::write(
        &path,
        write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap(),
    )
    .unwrap();
    let r = Reader::open(&path).unwrap();
    let n = r.rows();
    let so = gpu::StreamOptions::default()
        .with_device_bytes(256 << 10)
        .with_page_lock_file(false);
    // One batch: in row order after the previous one, equal to the CPU
    // decoder; records which GPU held it.
    let batch = |b: &gpu::DeviceBatch<'_>, next: &mut u64, seen: &mut Vec<usize>| {
        assert_eq!(b.first_row, *next);
        let rows = b.first_row..b.first_row + b.len() as u64;
        assert_eq!(b.to_host()?, r.read_range(rows.clone())?);
        seen.push(b.device());
        *next = rows.end;
        Ok(())
    };
    // The whole scan: every row, at least 8 batches, dealt round-robin.
    let check = |st: gpu::StreamStats, next: u64, seen: &[usize]| {
        assert_eq!(next, n);
        assert!(st.batches >= 8, "{st:?}");
        for (i, &d) in seen.iter().enumerate() {
            assert_eq!(d, devices[i % devices.len()], "batch {i} on GPU {d}");
        }
    };
    let (mut next, mut seen) = (0, Vec::new());
    let st =
        gpu::scan_stream_on(&r, 0..n, &so, &devices, |b| batch(b, &mut next, &mut seen)).unwrap();
    assert!(!st.registered);
    check(st, next, &seen);
    let lock = gpu::PageLockedFile::new(&r).unwrap();
    let (mut next, mut seen) = (0, Vec::new());
    let st = lock
        .scan_stream_on(0..n, &so, &devices, |b| batch(b, &mut next, &mut seen))
        .unwrap();
    assert!(st.registered);
    check(st, next, &seen);
}

#[test]
fn streaming_scan_reports_a_damaged_chunk() {
    if !have_gpu("streaming_scan_reports_a_damaged_chunk") {
        return;
    }
    let vals: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| format!("GET /item/{} {}", i * 31 % 977, i % 7).into_bytes())
        .collect();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair16)
        .with_chunk_rows(1000)
        .with_log_templates(LogTemplates::Off);
    let mut file = write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap();
    let probe = Reader::from_bytes(file.clone()).unwrap();
    let e = probe.chunk_info(13).entry;
    // A byte in the middle of chunk 13's section: its checksum no longer holds.
    file[(e.section.offset + e.section.len / 2) as usize] ^= 0x40;
    // Chunks are validated one batch ahead of the decode, in the background:
    // the damage must come back as the scan's error, after the batches before it.
    let r = Reader::from_bytes(file).unwrap();
    let so = gpu::StreamOptions::default().with_device_bytes(256 << 10);
    let mut seen = 0u64;
    let err = gpu::scan_stream(&r, 0..r.rows(), &so, |b| {
        seen = b.first_row + b.len() as u64;
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(err, fastpair::Error::Corrupt { .. }),
        "expected a corrupt-chunk error, got {err}"
    );
    assert!(seen <= 13_000, "no batch past the damaged chunk: {seen}");
}

/// File offsets of chunk `i`'s codes part (from its header, as the reader
/// parses it).
fn codes_range(r: &Reader, file: &[u8], i: usize) -> std::ops::Range<usize> {
    use fastpair::format::chunk_section::ChunkHeader;
    use fastpair::format::kind::Part;
    let e = r.chunk_info(i).entry;
    let (off, len) = (e.section.offset as usize, e.section.len as usize);
    let bits = r.dictionary(e.dict as usize).unwrap().code_bits();
    let h = ChunkHeader::parse(
        &file[off..off + len],
        off as u64,
        i as u32,
        &e,
        bits,
        len as u64,
        r.format_version(),
    )
    .unwrap();
    let c = h.parts()[Part::Codes.slot()].clone();
    off + c.start..off + c.end
}

/// A column of 6,000 rows in 2,000-row coded chunks whose codes span many
/// checksum blocks (§5.7).
fn staging_file(codec: Codec) -> Vec<u8> {
    let vals: Vec<Vec<u8>> = (0..6_000u32)
        .map(|i| {
            format!(
                "{} GET /shop/{}/item/{} {} ms",
                i * 17 % 10007,
                i % 61,
                i * 31 % 4001,
                i % 900
            )
            .into_bytes()
        })
        .collect();
    let opts = WriterOptions::default()
        .with_codec(codec)
        .with_chunk_rows(2_000)
        .with_value_dict(false)
        .with_log_templates(fastpair::LogTemplates::Off);
    write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap()
}

/// The host part of a scan through pinned staging (issue 23 item 1), no
/// GPU needed: a fresh reader's coded chunks are checked with their codes'
/// checksum blocks (but the last) left to the staging copy, which checks
/// each block as it copies it. A damaged block is refused by the copy with
/// the error whole validation gives (the same block, offset and CRCs),
/// whatever the staging buffers' size; a chunk checked that way and not
/// copied yet is still refused by every other use (`device_parts` checks
/// what is left).
#[test]
fn staging_copy_checks_the_codes_left_to_it() {
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        let file = staging_file(codec);
        let r = Reader::from_bytes(file.clone()).unwrap();
        assert!(r.num_chunks() >= 3);
        let codes = codes_range(&r, &file, 1);
        assert!(codes.len() > 4 * 2048, "{codes:?}");
        let staged = |bytes: &[u8], stage: usize, leave: bool| {
            let fresh = Reader::from_bytes(bytes.to_vec()).unwrap();
            let so = gpu::StreamOptions::default()
                .with_device_bytes(1 << 20)
                .with_staging_bytes(stage);
            gpu::host_stage_probe(&fresh, &so, leave)
        };
        let stages = [32 << 20, 4096, 3072, 1536, 1000];
        for &stage in &stages {
            let a = staged(&file, stage, true).unwrap();
            assert_eq!(a, staged(&file, stage, false).unwrap(), "{codec:?} {stage}");
            assert!(a as usize > codes.len());
        }
        // A bit flipped in the first, a middle and the second-to-last
        // block of chunk 1's codes, and in its last block (checked with
        // the chunk, as step 11's padding check reads it).
        let last = codes.end - 1;
        for at in [
            codes.start,
            codes.start + codes.len() / 2,
            last - 2100,
            last,
        ] {
            let mut bad = file.clone();
            bad[at] ^= 0x10;
            let want = Reader::from_bytes(bad.clone())
                .unwrap()
                .read_all()
                .expect_err("damaged")
                .to_string();
            assert!(want.contains("CRC32 mismatch"), "{want}");
            let fresh = Reader::from_bytes(bad.clone()).unwrap();
            let left = fresh.check_chunk_for_staging(1);
            if at == last {
                assert_eq!(left.expect_err("last block").to_string(), want);
            } else {
                assert!(left.is_ok(), "left to the copy: {left:?}");
                // Not copied yet: every other use checks what is left.
                let e = fresh.check_chunk_for_device(1).expect_err("damaged");
                assert_eq!(e.to_string(), want);
                assert!(fresh.chunk(1).is_err());
            }
            for &stage in &stages {
                for leave in [true, false] {
                    let e = staged(&bad, stage, leave).expect_err("damaged");
                    assert_eq!(e.to_string(), want, "{codec:?} at {at}, staging {stage}");
                }
            }
        }
    }
}

/// A fresh reader's first scan through pinned staging checks the codes'
/// checksum blocks in the staging copy (issue 23 item 1): a valid file
/// decodes as the CPU reads it (then again from the same reader, the
/// blocks now recorded as checked), and a damaged codes block stops the
/// scan with the CPU reader's error before any batch past its chunk.
#[test]
fn staged_scan_checks_the_codes_as_it_copies() {
    if !have_gpu("staged_scan_checks_the_codes_as_it_copies") {
        return;
    }
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        let file = staging_file(codec);
        let cpu = Reader::from_bytes(file.clone()).unwrap();
        let codes = codes_range(&cpu, &file, 1);
        let first_damaged = cpu.chunk_info(1).first_row;
        for stage in [32 << 20, 1000] {
            let so = gpu::StreamOptions::default()
                .with_device_bytes(256 << 10)
                .with_page_lock_file(false)
                .with_staging_bytes(stage);
            let fresh = Reader::from_bytes(file.clone()).unwrap();
            for _ in 0..2 {
                let mut next = 0;
                let st = gpu::scan_stream(&fresh, 0..fresh.rows(), &so, |b| {
                    assert_eq!(b.first_row, next);
                    let rows = b.first_row..b.first_row + b.len() as u64;
                    assert_eq!(b.to_host()?, cpu.read_range(rows.clone())?, "rows {rows:?}");
                    next = rows.end;
                    Ok(())
                })
                .unwrap();
                assert!(!st.registered && st.batches >= 3, "{st:?}");
                assert_eq!(next, fresh.rows());
            }
            for at in [codes.start + 5, codes.start + codes.len() / 2] {
                let mut bad = file.clone();
                bad[at] ^= 0x02;
                let want = Reader::from_bytes(bad.clone())
                    .unwrap()
                    .read_all()
                    .expect_err("damaged")
                    .to_string();
                let fresh = Reader::from_bytes(bad).unwrap();
                let mut seen = 0;
                let e = gpu::scan_stream(&fresh, 0..fresh.rows(), &so, |b| {
                    seen = b.first_row + b.len() as u64;
                    Ok(())
                })
                .expect_err("damaged");
                assert_eq!(e.to_string(), want, "{codec:?} at {at}, staging {stage}");
                assert!(
                    seen <= first_damaged,
                    "no batch of the damaged chunk: {seen}"
                );
            }
        }
    }
}

#[test]
fn page_locked_file_serves_several_streaming_scans() {
    if !have_gpu("page_locked_file_serves_several_streaming_scans") {
        return;
    }
    let vals: Vec<Vec<u8>> = (0..30_000u32)
        .map(|i| {
            format!(
                "user {} opened /doc/{} in {} ms",
                i % 977,
                i * 13 % 4099,
                i % 250
            )
            .into_bytes()
        })
        .collect();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(2000)
        .with_log_templates(LogTemplates::Off);
    let file = write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let n = r.rows();
    let lock = gpu::PageLockedFile::new(&r).unwrap();
    let so = gpu::StreamOptions::default().with_device_bytes(256 << 10);
    for range in [0..n, 1234..n - 77] {
        let mut next = range.start;
        let st = lock
            .scan_stream(range.clone(), &so, |b| {
                assert_eq!(b.first_row, next);
                let rows = b.first_row..b.first_row + b.len() as u64;
                assert_eq!(b.to_host()?, r.read_range(rows.clone())?, "rows {rows:?}");
                next = rows.end;
                Ok(())
            })
            .unwrap();
        assert_eq!(next, range.end);
        assert!(st.registered && st.batches > 2, "{st:?}");
        assert_eq!(st.lock_seconds, 0.0, "the guard's lock is not taken again");
    }
    drop(lock);
    // A file read through positioned reads is not resident: nothing to lock.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.fpc");
    std::fs::write(
        &path,
        write_to_vec(
            vals.iter().take(100).map(|v| Some(v.as_slice())),
            WriterOptions::default(),
        )
        .unwrap(),
    )
    .unwrap();
    let pr = Reader::open_with(
        &path,
        fastpair::ReadOptions::default().with_local_io(fastpair::read::LocalIo::PositionedRead),
    )
    .unwrap();
    assert!(matches!(
        gpu::PageLockedFile::new(&pr),
        Err(fastpair::Error::InvalidArgument(_))
    ));
}

/// Dictionaries that store their planes (spec/FORMAT.md §4.5, version 5):
/// the launch table takes the planes as they lie in the file (no host-side
/// plane build), at their own width and re-laid at the other, and the
/// column equals the CPU decoder's (which reads the same planes in place).
#[test]
fn stored_planes_match_cpu() {
    if !have_gpu("stored_planes_match_cpu") {
        return;
    }
    let mut vals: Vec<Vec<u8>> = Vec::new();
    for i in 0..12_000u32 {
        let v = match i % 5 {
            0 => format!("GET /api/v1/items/{i}?page={} HTTP/1.1 200", i % 17),
            1 => format!("user{}@example.com", i * 7919 % 10007),
            2 => String::new(),
            3 => "a fairly long repeated phrase, over sixteen bytes".to_string(),
            _ => format!("{:x}{:x}", i.wrapping_mul(2654435761), i),
        };
        vals.push(v.into_bytes());
    }
    for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
        for mode in [DictMode::Shared, DictMode::PerChunk] {
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_chunk_rows(2000)
                .with_dict_mode(mode)
                .with_value_dict(false)
                .with_log_templates(fastpair::LogTemplates::Off)
                .with_dict_planes(fastpair::DictPlanes::Always);
            let file = write_to_vec(vals.iter().map(|v| Some(v.as_slice())), opts).unwrap();
            let r = Reader::from_bytes(file).unwrap();
            assert!(r.dictionaries().unwrap().iter().all(|d| d.planes_stored()));
            let n = r.rows();
            for w in [8, 16] {
                parity(&r, 0..n, DecoderConfig::default().with_w(w), true);
            }
            parity(&r, 0..n, DecoderConfig::default(), false);
            parity(&r, 1999..4001, DecoderConfig::default(), false);
            let (c, backend) = gpu::read_range(&r, 0..n).unwrap();
            assert_eq!(backend, gpu::Backend::Gpu);
            assert_eq!(c, r.read_all().unwrap(), "{codec:?} {mode:?}");
        }
    }
}

/// The two small files of the kernel cache test: coded chunks, and
/// log-template chunks (their decoder is a unit of its own).
fn cache_test_files() -> [Reader; 2] {
    let rows: Vec<Vec<u8>> = (0..6000u32)
        .map(|i| {
            format!(
                "2026-12-03 16:{:02}:{:02} INFO worker{} GET /api/item/{} 200 {}ms",
                i / 60 % 60,
                i % 60,
                i % 7,
                i * 31 % 1000,
                i % 97
            )
            .into_bytes()
        })
        .collect();
    [LogTemplates::Off, LogTemplates::Always].map(|lt| {
        let opts = WriterOptions::default()
            .with_chunk_rows(2000)
            .with_log_templates(lt);
        let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
        Reader::from_bytes(file).unwrap()
    })
}

/// Child half of `kernel_cache_serves_a_second_process`, which runs it in
/// fresh processes (`FASTPAIR_KERNEL_CACHE_CHILD` = `coded` or `both`):
/// streams the files on the GPU, checks every row against the CPU decoder
/// and prints how the kernels were obtained.
#[test]
#[ignore = "run in a child process by kernel_cache_serves_a_second_process"]
fn kernel_cache_child() {
    let which = std::env::var("FASTPAIR_KERNEL_CACHE_CHILD")
        .expect("run by kernel_cache_serves_a_second_process");
    let files = cache_test_files();
    let n = if which == "both" { 2 } else { 1 };
    for r in &files[..n] {
        let cpu = r.read_range(0..r.rows()).unwrap();
        let (mut values, mut offsets) = (Vec::new(), vec![0i64]);
        let so = gpu::StreamOptions::default().with_device_bytes(64 << 20);
        gpu::scan_stream(r, 0..r.rows(), &so, |b| {
            let c = b.to_host()?;
            let base = values.len() as i64;
            values.extend_from_slice(&c.values);
            offsets.extend(c.offsets[1..].iter().map(|o| o + base));
            Ok(())
        })
        .unwrap();
        assert_eq!(offsets, cpu.offsets);
        assert!(values == cpu.values, "the GPU's rows differ from the CPU's");
    }
    let k = gpu::kernel_stats();
    println!("KERNEL-STATS {} {} {}", k.compiled, k.from_cache, k.stored);
}

/// The kernel cache on disk across processes: a first process compiles the
/// units it needs and keeps them, a second loads them all from the cache
/// (no NVRTC) and decodes the same rows; damaged files (cut, one byte
/// changed) are ignored and compiled again; `off`, and a folder that cannot
/// be made, only skip the cache; PTX images are kept apart and round-trip
/// too. Each process checks its rows against the CPU decoder.
#[test]
fn kernel_cache_serves_a_second_process() {
    if !have_gpu("kernel_cache_serves_a_second_process") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |which: &str, cache: &std::path::Path, image: &str| -> [u32; 3] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "kernel_cache_child", "--ignored", "--nocapture"])
            .env("FASTPAIR_KERNEL_CACHE_CHILD", which)
            .env("FASTPAIR_KERNEL_CACHE", cache)
            .env("FASTPAIR_KERNEL_IMAGE", image)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "child failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = text
            .lines()
            .find_map(|l| l.strip_prefix("KERNEL-STATS "))
            .unwrap_or_else(|| panic!("no stats from the child: {text}"));
        let v: Vec<u32> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        eprintln!("{which} {cache:?} {image}: compiled, from cache, stored = {v:?}");
        [v[0], v[1], v[2]]
    };
    let cache = dir.path().join("kernels");
    let [c, h, s] = run("both", &cache, "cubin");
    assert!(c >= 2, "the log decoder is a unit of its own: {c}");
    assert_eq!((h, s), (0, c), "a fresh cache");
    assert_eq!(run("both", &cache, "cubin"), [0, c, 0], "second process");
    // Damage every file: cut the first, change one byte of the others.
    let mut files: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), c as usize, "{files:?}");
    for (i, f) in files.iter().enumerate() {
        let mut b = std::fs::read(f).unwrap();
        if i == 0 {
            b.truncate(b.len() / 2);
        } else {
            let at = b.len() / 3 * (i % 3);
            b[at] ^= 0x10;
        }
        std::fs::write(f, b).unwrap();
    }
    assert_eq!(run("both", &cache, "cubin"), [c, 0, c], "damaged files");
    assert_eq!(run("both", &cache, "cubin"), [0, c, 0], "replaced files");
    // PTX images are other keys: compiled once, then loaded.
    let [pc, ph, ps] = run("coded", &cache, "ptx");
    assert!(pc >= 1 && ph == 0 && ps == pc, "{pc} {ph} {ps}");
    assert_eq!(run("coded", &cache, "ptx"), [0, pc, 0]);
    // Off, and a folder under a file: compiled, nothing kept, no error.
    let [oc, oh, os] = run("coded", std::path::Path::new("off"), "cubin");
    assert!(oc >= 1 && oh == 0 && os == 0);
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let [uc, uh, us] = run("coded", &blocker.join("kernels"), "cubin");
    assert!(uc >= 1 && uh == 0 && us == 0);
}
