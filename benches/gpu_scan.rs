//! GPU scan benchmark (issue 3): for each corpus column and codec, the
//! FastPair decode kernel's GB/s of decoded bytes (min and median over REPS
//! runs, CUDA events), a device-to-device copy of the same size in the same
//! run and a write-only fill, the full device scan (what `gpu::scan` runs:
//! sidecar de-cascade, then decode + offsets in one launch), end to end from
//! pinned host memory (pipelined copies + decode) against a plain pinned
//! upload of the uncompressed bytes, and a sweep of K, H, T, B, W.
//!
//!   cargo bench --bench gpu_scan                  (REPS=100, all columns)
//!   ONLY=loghub SWEEP=0 cargo bench --bench gpu_scan
//! Environment: CORPUS (dir, default target/corpus), ONLY (comma-separated substrings),
//! CODEC (onpair12 or onpair16: only that codec),
//! REPS, MIN_BYTES (tile target, default 256 MiB), SWEEP (1 = run the sweep,
//! default 1), SWEEP_COLS (comma-separated substrings), SWEEP_CODEC (the codec swept, default onpair16), GROUPS (pipelined
//! end-to-end groups, default 16), VDICT (0 = skip the value-dictionary
//! columns, default 1), VDICT_ONLY (1 = only them), VDICT_COLS
//! (comma-separated corpus columns for them), TABLE_ONLY (1 = skip the random-row
//! and streaming parts before the table), PEER_DUMP (a folder: each table column's
//! codes, dictionary and values written there for lab/vortex-peer's harness, which
//! times the peer's kernels on the same codes). Needs `--features test-util`.

#[cfg(feature = "test-util")]
fn main() {
    bench::main()
}

/// The timing hooks (`Prepared::time_*`, `plain_upload`) are behind the
/// `test-util` feature: `cargo bench --bench gpu_scan --features test-util`.
#[cfg(not(feature = "test-util"))]
fn main() {
    eprintln!("gpu_scan: skipped, built without the `test-util` feature (the timing hooks)");
    if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}

#[cfg(feature = "test-util")]
mod bench {
    // Option structs are built by assignment from `default()` (they are becoming
    // `#[non_exhaustive]`, where a literal would not compile).

    use std::path::PathBuf;

    use fastpair::gpu::{self, DecoderConfig, Prepared, ScanOptions};
    use fastpair::write::write_to_vec;
    use fastpair::{Codec, LogTemplates, Reader, WriterOptions};

    /// Codecs measured; FSST-12 has no trainer yet.
    const CODECS: &[Codec] = &[Codec::OnPair12, Codec::OnPair16];
    /// Sweep axes; each is tried with the others at their current best.
    const KS: &[u32] = &[2, 4, 6, 8]; // codes per lane (even: 12-bit pairs; 32K multiple of G=64)
    const HS: &[u32] = &[0, 1, 2, 4]; // hoisted high-plane rounds
    const TS: &[u32] = &[128, 256, 512]; // threads per block
    const BS: &[u32] = &[1, 2, 4, 8]; // blocks per SM in __launch_bounds__
    const WS: &[u8] = &[8, 16]; // low-plane width

    fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    }

    /// A reader of `file` memory-mapped, as a user would open it (so a
    /// streaming scan page-locks it in place).
    fn map_reader(file: &str, ropts: fastpair::ReadOptions) -> Reader {
        // SAFETY: the benchmark's own file, not changed while read.
        let map = unsafe { fastpair::read::MmapStorage::open(file) }.expect("map");
        Reader::from_storage(std::sync::Arc::new(map), ropts).expect("open")
    }

    fn stats(ms: &[f32], bytes: u64) -> (f64, f64) {
        let mut v: Vec<f64> = ms.iter().map(|&m| m as f64).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let gbps = |m: f64| bytes as f64 / (m * 1e6);
        (gbps(v[0]), gbps(v[v.len() / 2]))
    }

    struct Col {
        name: String,
        codec: Codec,
        reader: Reader,
        ratio: f64,
        tiles: usize,
    }

    fn prepare(c: &Col, cfg: DecoderConfig, force: bool) -> fastpair::Result<Prepared> {
        let opts = ScanOptions::default()
            .with_config(cfg)
            .with_force_width(force);
        let mut p = Prepared::new(&c.reader, 0..c.reader.rows(), &opts, c.tiles)?;
        p.upload()?;
        p.run()?;
        p.check()?;
        Ok(p)
    }

    fn verify(p: &Prepared, c: &Col) {
        let g = p.to_host().expect("download");
        let cpu = c.reader.read_all().expect("cpu");
        let n = cpu.values.len();
        for t in 0..c.tiles {
            assert!(
                g.values[t * n..(t + 1) * n] == cpu.values[..],
                "{} {:?}: tile {t} differs from the CPU decoder",
                c.name,
                c.codec
            );
        }
        assert_eq!(g.offsets.len(), c.tiles * (cpu.offsets.len() - 1) + 1);
        let rows = cpu.offsets.len() - 1;
        for (i, &o) in g.offsets.iter().enumerate() {
            let (t, r) = if i == 0 {
                (0, 0)
            } else {
                ((i - 1) / rows, (i - 1) % rows + 1)
            };
            assert_eq!(
                o,
                (t * n) as i64 + cpu.offsets[r],
                "{} {:?}: offset {i} differs from the CPU decoder",
                c.name,
                c.codec
            );
        }
    }

    fn sweep(c: &Col, reps: usize) -> (DecoderConfig, f64) {
        let mut best = DecoderConfig::default()
            .with_w(gpu::scan_width(&c.reader).unwrap())
            .with_emit(env("EMIT", DecoderConfig::default().emit));
        let mut best_gb = 0.0;
        let measure = |cfg: DecoderConfig| -> f64 {
            match prepare(c, cfg, true).and_then(|mut p| p.time_decode(reps)) {
                Ok(ms) => {
                    let (mn, med) = stats(&ms, c.reader.decoded_bytes() * c.tiles as u64);
                    println!(
                        "sweep,{},{},{},{},{},{},{},{:.1},{:.1}",
                        c.name,
                        c.codec.name(),
                        cfg.k,
                        cfg.h,
                        cfg.t,
                        cfg.b,
                        cfg.w,
                        mn,
                        med
                    );
                    med
                }
                Err(e) => {
                    println!("sweep,{},{},{:?},error {e}", c.name, c.codec.name(), cfg);
                    0.0
                }
            }
        };
        for _pass in 0..2 {
            for axis in 0..5 {
                let n = [KS.len(), HS.len(), TS.len(), BS.len(), WS.len()][axis];
                for i in 0..n {
                    let mut cfg = best;
                    match axis {
                        0 => cfg.k = KS[i],
                        1 => cfg.h = HS[i],
                        2 => cfg.t = TS[i],
                        3 => cfg.b = BS[i],
                        _ => cfg.w = WS[i],
                    }
                    if cfg == best && best_gb > 0.0 {
                        continue;
                    }
                    let gb = measure(cfg);
                    if gb > best_gb {
                        best_gb = gb;
                        best = cfg;
                    }
                }
            }
        }
        println!(
            "sweep-best,{},{},{:?},{:.1}",
            c.name,
            c.codec.name(),
            best,
            best_gb
        );
        (best, best_gb)
    }

    /// Random rows (issue 11 item 5): a column of `RANDOM_ROWS` rows made by
    /// repeating the corpus column `RANDOM_COL`, then `RANDOM_IDS` random row ids
    /// decoded on the device by `DeviceRows::get` (wall clock, row-id upload and
    /// every launch included), a sample compared with CPU `get`.
    fn random_rows(dir: &std::path::Path) {
        let rows: u64 = env("RANDOM_ROWS", 0);
        if rows == 0 {
            return;
        }
        let col = env("RANDOM_COL", "tpch_sf1_o_clerk".to_string());
        let nids: usize = env("RANDOM_IDS", 1_000_000);
        let data = std::fs::read(dir.join(format!("{col}.txt"))).expect("random-rows column");
        let body = data.strip_suffix(b"\n").unwrap_or(&data);
        let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
        let t = std::time::Instant::now();
        let opts = WriterOptions::default()
            .with_codec(Codec::OnPair16)
            .with_log_templates(LogTemplates::Off);
        let values = (0..rows).map(|i| Some(lines[(i % lines.len() as u64) as usize]));
        let file = write_to_vec(values, opts).expect("write");
        let reader = Reader::from_bytes(file).expect("open");
        println!(
            "random,column {col} x{}: {} rows, {} chunks, file {:.0} MB, written in {:.1} s",
            rows.div_ceil(lines.len() as u64),
            reader.rows(),
            reader.num_chunks(),
            reader.file_bytes() as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
        let t = std::time::Instant::now();
        let mut dr = gpu::DeviceRows::new(&reader).expect("device rows");
        println!(
            "random,resident on the device in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let mut x = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut times = Vec::new();
        for rep in 0..7 {
            let ids: Vec<u64> = (0..nids).map(|_| next() % reader.rows()).collect();
            let t = std::time::Instant::now();
            let c = dr.get(&ids).expect("get");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if rep > 0 {
                times.push(ms);
            }
            if rep == 1 {
                let h = c.to_host().expect("download");
                for k in (0..nids).step_by((nids / 20_000).max(1)) {
                    let got = &h.values[h.offsets[k] as usize..h.offsets[k + 1] as usize];
                    assert_eq!(
                        Some(got.to_vec()),
                        reader.get(ids[k]).unwrap(),
                        "row {}",
                        ids[k]
                    );
                }
                println!(
                    "random,{} rows, {} bytes: sample of {} rows identical to CPU get",
                    nids,
                    c.values_len(),
                    nids.div_ceil((nids / 20_000).max(1))
                );
            }
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
        "random,{nids} random rows of {}: best {:.2} ms, median {:.2} ms over {} runs (ids uploaded from pageable memory, wall clock)",
        reader.rows(),
        times[0],
        times[times.len() / 2],
        times.len()
    );
    }

    /// Streaming scan (issue 11 item 3). The column is either the file
    /// `STREAM_FILE` (opened memory-mapped, as a user would; e.g. made by
    /// `reader_bench make` from corpus chunks), or about `STREAM_GB` decoded
    /// gigabytes made by repeating the corpus column `STREAM_COL`, held in host
    /// memory. Decoded by `gpu::scan_stream` with device memory capped at
    /// `STREAM_DEV` bytes; next to it a pinned upload of the same run. The
    /// first run starts from a fresh reader (chunk validation inside the scan);
    /// later runs reuse the validated chunks. One untimed run checks the first,
    /// a middle and the last batch against the CPU decoder.
    fn streaming(dir: &std::path::Path) {
        let gb: f64 = env("STREAM_GB", 0.0);
        let file: String = env("STREAM_FILE", String::new());
        if gb <= 0.0 && file.is_empty() {
            return;
        }
        let cap: usize = env("STREAM_DEV", 1usize << 30);
        let runs: usize = env("STREAM_RUNS", 4);
        let t = std::time::Instant::now();
        // Billions of rows: keep no per-row index of validated chunks.
        let ropts = fastpair::ReadOptions::default().with_cache_row_index(false);
        let (reader, what) = if file.is_empty() {
            let col = env("STREAM_COL", "loghub_Linux_full".to_string());
            let data = std::fs::read(dir.join(format!("{col}.txt"))).expect("stream column");
            let body = data.strip_suffix(b"\n").unwrap_or(&data);
            let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
            let reps = ((gb * 1e9) / data.len() as f64).ceil() as usize;
            let values = (0..reps).flat_map(|_| lines.iter().map(|v| Some(*v)));
            let opts = WriterOptions::default()
                .with_codec(Codec::OnPair16)
                .with_log_templates(LogTemplates::Off);
            let bytes = write_to_vec(values, opts).expect("write");
            (
                Reader::from_bytes_with(bytes, ropts).expect("open"),
                format!("column {col} x{reps} in host memory"),
            )
        } else {
            (
                map_reader(&file, ropts),
                format!("file {file} (memory-mapped)"),
            )
        };
        let decoded = reader.decoded_bytes();
        let cr = decoded as f64 / reader.file_bytes() as f64;
        println!(
        "stream,{what}: {} rows, {:.2} GB decoded, file {:.2} GB (CR {cr:.2}), {} chunks, ready in {:.0} s",
        reader.rows(),
        decoded as f64 / 1e9,
        reader.file_bytes() as f64 / 1e9,
        reader.num_chunks(),
        t.elapsed().as_secs_f64()
    );
        let report = |label: &str, st: &gpu::StreamStats| {
            println!(
            "stream,{label} ({}): {} batches, ring {:.2} GB of device memory, {:.2} s = {:.1} GB/s decoded ({:.1} GB/s compressed in; kernel {:.1} GB/s); lock {:.2} s, validation {:.2} s in the background, validation wait {:.2} s, issue {:.2} s, device wait {:.2} s, callback {:.2} s",
            if st.registered { "page-locked file" } else { "pinned staging" },
            st.batches,
            st.ring_bytes as f64 / 1e9,
            st.seconds,
            st.bytes as f64 / st.seconds / 1e9,
            st.input_bytes as f64 / st.seconds / 1e9,
            st.bytes as f64 / st.kernel_seconds.max(1e-12) / 1e9,
            st.lock_seconds,
            st.validate_seconds,
            st.validate_wait_seconds,
            st.issue_seconds,
            st.device_wait_seconds,
            st.callback_seconds,
        );
        };
        let lock: bool = env("STREAM_LOCK", 1usize) == 1;
        let so = gpu::StreamOptions::default()
            .with_device_bytes(cap)
            .with_page_lock_file(lock);
        // Issue 23 item 1, before and after in the same run: a fresh reader
        // of the same file scanned once with every chunk validated whole on
        // the host first (`device_checks(false)`, the scan before), then the
        // benchmark's own fresh reader (run 0 below) with the per-code checks
        // on the device (the default).
        if !file.is_empty() {
            // A fresh reader of the file, memory-mapped as a user would.
            let open_fresh = || {
                map_reader(
                    &file,
                    fastpair::ReadOptions::default().with_cache_row_index(false),
                )
            };
            let fresh = open_fresh();
            let st = gpu::scan_stream(
                &fresh,
                0..fresh.rows(),
                &so.with_device_checks(false),
                |_| Ok(()),
            )
            .expect("stream");
            report(
                "fresh reader, chunks validated whole on the host (device_checks off)",
                &st,
            );
            // Fresh readers with the per-code checks on the device, through
            // pinned staging instead of a per-scan page lock of the file
            // (`STREAM_FRESH_REPS` of them, default 1: the first allocates
            // the staging, later ones reuse what the GPU kept).
            for k in 0..env("STREAM_FRESH_REPS", 1usize) {
                let fresh = open_fresh();
                let st = gpu::scan_stream(
                    &fresh,
                    0..fresh.rows(),
                    &so.with_page_lock_file(false),
                    |_| Ok(()),
                )
                .expect("stream");
                report(
                    &format!("fresh reader {k}, per-code checks on the device, no page lock"),
                    &st,
                );
            }
        }
        let mut best = f64::MAX;
        let mut batches = 0usize;
        for rep in 0..runs {
            let st = gpu::scan_stream(&reader, 0..reader.rows(), &so, |_| Ok(())).expect("stream");
            best = best.min(st.seconds);
            batches = st.batches;
            report(
                &format!(
                    "run {rep}{}",
                    if rep == 0 {
                        ", fresh reader, per-code checks on the device"
                    } else {
                        ""
                    }
                ),
                &st,
            );
        }
        // The page-locked path on the same reader (locking counted in its time).
        if env("STREAM_TRY_LOCK", 0usize) == 1 {
            let so = so.with_page_lock_file(true);
            let st = gpu::scan_stream(&reader, 0..reader.rows(), &so, |_| Ok(())).expect("stream");
            report("run with the file page-locked", &st);
        }
        // The file page-locked once (`PageLockedFile`), then scanned twice:
        // the lock's cost is paid once, not per scan.
        // The GPUs of the multi-GPU runs: `STREAM_DEVICES` (ordinals; one listed
        // twice = two pipelines on it), by default every visible GPU.
        let devices: Vec<usize> = match std::env::var("STREAM_DEVICES") {
            Ok(list) => list
                .split(',')
                .filter_map(|d| d.trim().parse().ok())
                .collect(),
            Err(_) => gpu::devices().expect("devices"),
        };
        if env("STREAM_GUARD", 0usize) == 1 {
            let t = std::time::Instant::now();
            let lock = gpu::PageLockedFile::new(&reader).expect("page-lock the file");
            println!(
                "stream,file page-locked once: {:.2} s",
                t.elapsed().as_secs_f64()
            );
            let mut one = f64::MAX;
            for rep in 0..2 {
                let st = lock
                    .scan_stream(0..reader.rows(), &so, |_| Ok(()))
                    .expect("stream");
                one = one.min(st.seconds);
                report(&format!("run {rep} over the page-locked file"), &st);
            }
            // The same scan spread over several GPUs (issue 11 item 4): each GPU
            // its own ring of `STREAM_DEV` bytes, uploading from the same lock.
            if devices.len() > 1 {
                let mut many = f64::MAX;
                for rep in 0..2 {
                    let st = lock
                        .scan_stream_on(0..reader.rows(), &so, &devices, |_| Ok(()))
                        .expect("stream on several GPUs");
                    many = many.min(st.seconds);
                    report(
                        &format!("run {rep} over the page-locked file on GPUs {devices:?}"),
                        &st,
                    );
                }
                println!(
                "stream,scaling: GPUs {devices:?} {:.1} GB/s vs one GPU {:.1} GB/s = {:.2}x (best of 2 each, same lock)",
                decoded as f64 / many / 1e9,
                decoded as f64 / one / 1e9,
                one / many
            );
                // Checked (untimed): first, middle and last batch of the
                // multi-GPU scan against the CPU decoder, and which GPU held them.
                let mut seen = 0usize;
                let mut per_gpu = std::collections::BTreeMap::new();
                lock.scan_stream_on(0..reader.rows(), &so, &devices, |b| {
                    *per_gpu.entry(b.device()).or_insert(0usize) += 1;
                    if seen == 0
                        || seen == batches / 2
                        || b.first_row + b.len() as u64 == reader.rows()
                    {
                        let rows = b.first_row..b.first_row + b.len() as u64;
                        assert_eq!(b.to_host()?, reader.read_range(rows)?, "batch {seen}");
                    }
                    seen += 1;
                    Ok(())
                })
                .expect("checked multi-GPU stream");
                println!(
                "stream,checked on GPUs {devices:?}: first, middle and last batch equal the CPU decoder; batches per GPU {per_gpu:?}"
            );
            }
        }
        // The rate the file can be read at, same run: positioned reads of 4 MiB
        // pieces on all host threads (from the page cache when it holds the file).
        if !file.is_empty() {
            let rate = file_read_gbps(&file);
            println!(
            "stream,file read {rate:.1} GB/s (all threads, 4 MiB positioned reads); 0.8 x CR x read = {:.1} GB/s",
            0.8 * cr * rate
        );
        }
        // Checked run (untimed): three batches against the CPU decoder.
        let mut seen = 0usize;
        let st = gpu::scan_stream(&reader, 0..reader.rows(), &so, |b| {
            if seen == 0 || seen == batches / 2 || b.first_row + b.len() as u64 == reader.rows() {
                let rows = b.first_row..b.first_row + b.len() as u64;
                assert_eq!(b.to_host()?, reader.read_range(rows)?, "batch {seen}");
            }
            seen += 1;
            Ok(())
        })
        .expect("checked stream");
        println!(
            "stream,checked: first, middle and last of {} batches equal the CPU decoder",
            st.batches
        );
        // The multi-GPU scan through pinned staging (no lock).
        let st = gpu::scan_stream_on(&reader, 0..reader.rows(), &so, &devices, |_| Ok(()))
            .expect("stream on several pipelines");
        report(&format!("devices {devices:?}"), &st);
        // Pinned upload rate in the same run: 1 GiB, best of 5.
        let up = pinned_upload_gbps(1 << 30);
        println!(
        "stream,best {:.1} GB/s decoded; pinned upload {up:.1} GB/s; 0.8 x CR x upload = {:.1} GB/s",
        decoded as f64 / best / 1e9,
        0.8 * cr * up
    );
    }

    /// Reads `path` whole with positioned reads of 4 MiB on all host threads
    /// (each thread into its own buffer); GB/s.
    fn file_read_gbps(path: &str) -> f64 {
        use rayon::prelude::*;
        use std::os::unix::fs::FileExt;
        const PIECE: u64 = 4 << 20;
        let f = std::fs::File::open(path).expect("open");
        let len = f.metadata().expect("metadata").len();
        let t = std::time::Instant::now();
        (0..len.div_ceil(PIECE)).into_par_iter().for_each_init(
            || vec![0u8; PIECE as usize],
            |buf, k| {
                let at = k * PIECE;
                let n = (len - at).min(PIECE) as usize;
                f.read_exact_at(&mut buf[..n], at).expect("read");
            },
        );
        len as f64 / t.elapsed().as_secs_f64() / 1e9
    }

    /// Pinned host-to-device copy rate (GB/s), best of 5, through a small
    /// throwaway plan of the same process's GPU.
    fn pinned_upload_gbps(bytes: usize) -> f64 {
        let vals: Vec<Vec<u8>> = (0..bytes / 64)
            .map(|i| format!("{i:064}").into_bytes())
            .collect();
        let file = write_to_vec(
            vals.iter().map(|v| Some(v.as_slice())),
            WriterOptions::default().with_log_templates(LogTemplates::Off),
        )
        .expect("write");
        let r = Reader::from_bytes(file).expect("open");
        let mut p = Prepared::new(&r, 0..r.rows(), &ScanOptions::default(), 1).expect("plan");
        let ms = (0..5)
            .map(|_| p.plain_upload().expect("upload"))
            .fold(f64::MAX, f64::min);
        p.decoded_bytes() as f64 / (ms * 1e6)
    }

    /// CPU seconds (user, system) of this process so far.
    fn cpu_seconds() -> (f64, f64) {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
        (t(u.ru_utime), t(u.ru_stime))
    }

    /// `HOST_STAGE=1` (no GPU needed): the host's share of a fresh reader's
    /// first streaming scan through pinned staging (`gpu::host_stage_probe`:
    /// chunk checks on all threads, then every batch planned and copied into
    /// staging buffers), on the file `STREAM_FILE` (memory-mapped), as main
    /// ran it (9e41acf: the sequences decoded into fresh buffers per chunk,
    /// the codes' checksums checked with the chunks, then copied), with the
    /// sequence buffers kept, and after (the codes' checksums checked by the
    /// staging copy, issue 23 item 1), alternating, `HOST_STAGE_REPS` rounds
    /// (default 3), each from a fresh reader.
    /// Prints wall-clock and CPU seconds and GB/s of file per each.
    fn host_stage() {
        let file: String = env("STREAM_FILE", String::new());
        assert!(!file.is_empty(), "HOST_STAGE=1 needs STREAM_FILE");
        let so = gpu::StreamOptions::default().with_device_bytes(env("STREAM_DEV", 1usize << 30));
        let open_fresh = || {
            map_reader(
                &file,
                fastpair::ReadOptions::default().with_cache_row_index(false),
            )
        };
        let gb = open_fresh().file_bytes() as f64 / 1e9;
        println!(
            "host-stage,file {file}: {gb:.2} GB, {} threads, staging {} MiB",
            rayon::current_num_threads(),
            so.staging_bytes >> 20
        );
        for round in 0..env("HOST_STAGE_REPS", 3usize) {
            for (label, keep, leave) in [
                (
                    "main: checks (fresh sequence buffers), then copy",
                    false,
                    false,
                ),
                ("checks, then copy", true, false),
                ("after: checks, copy checks the codes", true, true),
            ] {
                Reader::keep_sequence_buffers(keep);
                let r = open_fresh();
                let (t, c) = (std::time::Instant::now(), cpu_seconds());
                let n = gpu::host_stage_probe(&r, &so, leave).expect("host stage");
                let ((u1, s1), wall) = (cpu_seconds(), t.elapsed().as_secs_f64());
                let (user, sys) = (u1 - c.0, s1 - c.1);
                let cpu = user + sys;
                println!(
                    "host-stage,round {round},{label}: {:.2} GB copied, wall {wall:.3} s = {:.2} GB/s of file, cpu {cpu:.3} s (user {user:.3}, system {sys:.3}) = {:.2} GB/s of file per CPU second",
                    n as f64 / 1e9,
                    gb / wall,
                    gb / cpu
                );
            }
        }
    }

    /// Writes `c`'s codes for lab/vortex-peer/peer.cu (its header has the
    /// layout): every code widened to a u16, each token's length and its 16
    /// bytes zero padded, the values the CPU decodes, and the tiles this
    /// bench times, so that the peer's kernels run on exactly these codes at
    /// the same decoded size. Coded chunks of one dictionary only (what one
    /// launch of the peer's kernels takes); others are skipped with a line.
    fn peer_dump(c: &Col, dir: &std::path::Path) {
        let r = &c.reader;
        let tag = format!("{}.{}", c.name, c.codec.name());
        let dicts: std::collections::BTreeSet<u32> = (0..r.num_chunks())
            .map(|i| r.chunk_info(i).entry.dict)
            .collect();
        let coded = (0..r.num_chunks()).all(|i| {
            r.chunk(i)
                .is_ok_and(|v| v.kind() == fastpair::format::ChunkKind::Coded)
        });
        if dicts.len() != 1 || !coded {
            println!(
                "peer-dump,{tag},skipped: {} dictionaries, coded {coded}",
                dicts.len()
            );
            return;
        }
        let dict = r
            .dictionary(dicts.into_iter().next().unwrap() as usize)
            .expect("dictionary");
        let ntok = dict.num_tokens() as usize;
        let mut codes: Vec<u16> = Vec::new();
        for i in 0..r.num_chunks() {
            let v = r.chunk(i).expect("chunk");
            let n = r.chunk_info(i).entry.codes as usize;
            let b = v.codes_bytes();
            // spec/FORMAT.md §5.2: 16-bit codes one u16 each; 12-bit codes
            // in pairs of 3 little-endian bytes (`a | b << 12`).
            if dict.code_bits() == 16 {
                codes.extend(
                    b.chunks_exact(2)
                        .take(n)
                        .map(|x| u16::from_le_bytes([x[0], x[1]])),
                );
            } else {
                let start = codes.len();
                for x in b.chunks_exact(3) {
                    let v = x[0] as u32 | (x[1] as u32) << 8 | (x[2] as u32) << 16;
                    codes.extend([(v & 0xfff) as u16, (v >> 12) as u16]);
                }
                codes.truncate(start + n);
            }
        }
        let values = r.read_all().expect("cpu").values;
        let mut out = Vec::with_capacity(40 + 17 * ntok + 2 * codes.len() + values.len());
        out.extend_from_slice(b"FPPEER1\0");
        out.extend_from_slice(&(dict.code_bits() as u32).to_le_bytes());
        out.extend_from_slice(&(ntok as u32).to_le_bytes());
        out.extend_from_slice(&(codes.len() as u64).to_le_bytes());
        out.extend_from_slice(&(values.len() as u64).to_le_bytes());
        out.extend_from_slice(&(c.tiles as u64).to_le_bytes());
        out.extend((0..ntok).map(|k| dict.word(k).1 as u8));
        for k in 0..ntok {
            out.extend_from_slice(&dict.word(k).0);
        }
        for &x in &codes {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.extend_from_slice(&values);
        let path = dir.join(format!("{tag}.peer"));
        std::fs::create_dir_all(dir).expect("peer dump folder");
        std::fs::write(&path, out).expect("peer dump");
        println!("peer-dump,{tag},{} codes,{ntok} tokens", codes.len());
    }

    pub fn main() {
        if env("HOST_STAGE", 0u32) == 1 {
            host_stage();
            return;
        }
        if let Err(e) = gpu::available() {
            eprintln!("gpu_scan: skipped, {e}");
            if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
                std::process::exit(1);
            }
            return;
        }
        let dir = PathBuf::from(env("CORPUS", "target/corpus".to_string()));
        let only = env("ONLY", String::new());
        let codec_only = env("CODEC", String::new());
        let reps: usize = env("REPS", 100);
        let min_bytes: u64 = env("MIN_BYTES", 256u64 << 20);
        let do_sweep: u32 = env("SWEEP", 1);
        let sweep_cols = env(
            "SWEEP_COLS",
            "loghub_Linux_full,tpch_sf1_l_comment,dbtext_hex,code_python".to_string(),
        );
        // The codec whose columns the sweep runs on (SWEEP_CODEC, default
        // onpair16; onpair12 sweeps the short-token 12-bit dictionaries).
        let sweep_codec = env("SWEEP_CODEC", "onpair16".to_string());
        let groups: usize = env("GROUPS", 16);
        // Variants A/B-ed in the same process: ALT_EMITS=2,3 (staging writes),
        // ALT_M=1,2,8 (row blocks per offsets warp), ALT_B=3,5 (blocks an SM in
        // the launch bounds: registers against occupancy).
        let alt_list = |name: &str| -> Vec<u32> {
            env(name, String::new())
                .split(',')
                .filter_map(|e| e.trim().parse().ok())
                .collect()
        };
        let alts: Vec<(String, DecoderConfig)> = alt_list("ALT_EMITS")
            .into_iter()
            .map(|e| (format!("emit{e}"), DecoderConfig::default().with_emit(e)))
            .chain(
                alt_list("ALT_M")
                    .into_iter()
                    .map(|m| (format!("m{m}"), DecoderConfig::default().with_m(m))),
            )
            .chain(
                alt_list("ALT_B")
                    .into_iter()
                    .map(|b| (format!("b{b}"), DecoderConfig::default().with_b(b))),
            )
            .collect();
        let (name, sms) = gpu::device_info().expect("gpu");
        println!("device: {name} ({sms} SMs)");
        if env("VDICT", 1u32) == 1 {
            value_dict(&dir, reps, min_bytes, groups);
        }
        if env("VDICT_ONLY", 0u32) == 1 {
            return;
        }
        if env("TABLE_ONLY", 0u32) == 0 {
            random_rows(&dir);
            streaming(&dir);
            if env("RANDOM_ONLY", 0u32) == 1 {
                return;
            }
        }
        let peer_dir = env("PEER_DUMP", String::new());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .filter(|p| only.split(',').any(|o| p.to_string_lossy().contains(o)))
            .collect();
        files.sort();
        let mut cols = Vec::new();
        for f in &files {
            let data = std::fs::read(f).unwrap();
            // One value per line, exactly as `fastpair compress` reads them: a
            // final newline ends the last value (no empty row after it).
            let body = data.strip_suffix(b"\n").unwrap_or(&data);
            let vals: Vec<&[u8]> = if data.is_empty() {
                Vec::new()
            } else {
                body.split(|&b| b == b'\n').collect()
            };
            for &codec in CODECS
                .iter()
                .filter(|c| codec_only.is_empty() || c.name() == codec_only)
            {
                // Coded chunks only (VALUE_DICT=1 keeps the writer's default):
                // the decode launch times coded chunks; value-dictionary chunks,
                // which the default writer picks for low-cardinality columns,
                // are gathered by `gpu::scan` instead (spec/DECODER.md §6c).
                // Coded chunks: log templates have their own bench
                // (benches/gpu_logs.rs).
                let opts = WriterOptions::default()
                    .with_codec(codec)
                    .with_value_dict(env("VALUE_DICT", 0u32) == 1)
                    .with_log_templates(LogTemplates::Off);
                let file = write_to_vec(vals.iter().map(|v| Some(*v)), opts).expect("write");
                let reader = Reader::from_bytes(file).expect("open");
                let bytes = reader.decoded_bytes().max(1);
                let ratio = bytes as f64 / reader.file_bytes() as f64;
                let tiles = min_bytes.div_ceil(bytes) as usize;
                cols.push(Col {
                    name: f.file_stem().unwrap().to_string_lossy().into_owned(),
                    codec,
                    reader,
                    ratio,
                    tiles,
                });
            }
        }
        // The sweep first, so the table can show the best configuration too.
        let mut best_cfg = DecoderConfig::default();
        if do_sweep == 1 {
            println!("sweep,column,codec,K,H,T,B,W,min_GBps,median_GBps");
            let mut tally: std::collections::HashMap<DecoderConfig, f64> = Default::default();
            for c in cols.iter().filter(|c| {
                c.codec.name() == sweep_codec && sweep_cols.split(',').any(|s| c.name.contains(s))
            }) {
                let (b, gb) = sweep(c, 20);
                *tally.entry(b.with_w(8)).or_default() += gb;
            }
            if let Some((c, _)) = tally
                .into_iter()
                .max_by(|a, b| a.1.partial_cmp(&b.1).unwrap())
            {
                best_cfg = c;
            }
            println!("best-config,{best_cfg:?}");
        }
        println!(
        "table,column,codec,ratio,decoded_MB,tiles,W,decode_min_GBps,decode_median_GBps,\
         best_cfg_median_GBps,scan_median_GBps,copy_median_GBps,fill_median_GBps,e2e_GBps,upload_GBps"
    );
        for c in &cols {
            let mut p = match prepare(c, DecoderConfig::default(), false) {
                Ok(p) => p,
                Err(e) => {
                    println!("table,{},{},error {e}", c.name, c.codec.name());
                    continue;
                }
            };
            verify(&p, c);
            let bytes = p.decoded_bytes();
            let (dmin, dmed) = stats(&p.time_decode(reps).unwrap(), bytes);
            let (_, smed) = stats(&p.time_run(reps).unwrap(), bytes);
            let (_, cmed) = stats(&p.time_copy(reps).unwrap(), bytes);
            let (_, fmed) = stats(&p.time_fill(reps).unwrap(), bytes);
            let e2e = (0..5)
                .map(|_| p.end_to_end(groups).unwrap())
                .fold(f64::MAX, f64::min);
            p.check().expect("status after end to end");
            verify(&p, c);
            let up = (0..5)
                .map(|_| p.plain_upload().unwrap())
                .fold(f64::MAX, f64::min);
            let w = p.config().w;
            drop(p);
            if !peer_dir.is_empty() {
                peer_dump(c, std::path::Path::new(&peer_dir));
            }
            // Other variants (ALT_EMITS, ALT_M, ALT_B): decode and scan of the same
            // column, checked against the CPU first.
            for (tag, cfg) in alts.iter() {
                match prepare(c, *cfg, false) {
                    Ok(mut q) => {
                        verify(&q, c);
                        let (_, d) = stats(&q.time_decode(reps).unwrap(), bytes);
                        let (_, s) = stats(&q.time_run(reps).unwrap(), bytes);
                        q.check().expect("status");
                        println!("alt,{},{},{tag},{:.1},{:.1}", c.name, c.codec.name(), d, s);
                    }
                    Err(err) => println!("alt,{},{},{tag},error {err}", c.name, c.codec.name()),
                }
            }
            let bmed = if best_cfg != DecoderConfig::default() {
                prepare(c, best_cfg, false)
                    .and_then(|mut q| q.time_decode(reps))
                    .map(|ms| stats(&ms, bytes).1)
                    .unwrap_or(0.0)
            } else {
                dmed
            };
            println!(
                "table,{},{},{:.2},{:.0},{},{},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1}",
                c.name,
                c.codec.name(),
                c.ratio,
                bytes as f64 / 1e6,
                c.tiles,
                w,
                dmin,
                dmed,
                bmed,
                smed,
                cmed,
                fmed,
                bytes as f64 / (e2e * 1e6),
                bytes as f64 / (up * 1e6)
            );
        }
    }

    /// Value-dictionary columns (issue 26): each listed corpus column (VDICT_COLS,
    /// default the TPC-H low-cardinality ones) and synthetic columns of 7,
    /// 1,000 and 65,536 distinct values, written with the writer's defaults
    /// (value-dictionary chunks where it chooses them; every chunk of these is
    /// one), tiled to at least `min_bytes` decoded. Per column: the gather
    /// kernel alone (values, no offsets) and the full device scan (values +
    /// offsets), median GB/s of decoded bytes over `reps` CUDA-event-timed runs
    /// (checked against the CPU before and after), a write-only fill of the same
    /// bytes, and end to end from pinned host memory.
    fn value_dict(dir: &std::path::Path, reps: usize, min_bytes: u64, groups: usize) {
        let cols = env(
            "VDICT_COLS",
            "tpch_sf1_l_shipinstruct,tpch_sf1_o_clerk".to_string(),
        );
        let mut sets: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
        for name in cols.split(',').filter(|c| !c.is_empty()) {
            match std::fs::read(dir.join(format!("{name}.txt"))) {
                Ok(data) => {
                    let body = data.strip_suffix(b"\n").unwrap_or(&data);
                    sets.push((
                        name.to_string(),
                        body.split(|&b| b == b'\n').map(|v| v.to_vec()).collect(),
                    ));
                }
                Err(e) => println!("vdict,{name},error {e}"),
            }
        }
        for d in [7usize, 1000, 65_536] {
            let rows = (d * 8).max(600_000);
            let vals = (0..rows)
                .map(|i| {
                    let k = (i.wrapping_mul(2_654_435_761) >> 3) % d;
                    format!("value {k:05} {}", "xy".repeat(k % 5)).into_bytes()
                })
                .collect();
            sets.push((format!("synthetic_{d}_distinct"), vals));
        }
        println!(
            "vdict,column,rows,distinct_max,chunks,vd_chunks,ratio,decoded_MB,tiles,\
         gather_median_GBps,scan_median_GBps,fill_median_GBps,scan_over_gather,e2e_GBps"
        );
        for (name, vals) in sets {
            let file = write_to_vec(
                vals.iter().map(|v| Some(v.as_slice())),
                WriterOptions::default(),
            )
            .expect("write");
            let reader = Reader::from_bytes(file).expect("open");
            let n = reader.num_chunks();
            let vd = (0..n)
                .filter(|&i| reader.chunk_info(i).entry.values > 0)
                .count();
            let dmax = (0..n)
                .map(|i| reader.chunk_info(i).entry.values)
                .max()
                .unwrap_or(0);
            let bytes = reader.decoded_bytes().max(1);
            let c = Col {
                name: name.clone(),
                codec: Codec::OnPair16,
                ratio: bytes as f64 / reader.file_bytes() as f64,
                tiles: min_bytes.div_ceil(bytes) as usize,
                reader,
            };
            let mut p = match prepare(&c, DecoderConfig::default(), false) {
                Ok(p) => p,
                Err(e) => {
                    println!("vdict,{name},error {e}");
                    continue;
                }
            };
            verify(&p, &c);
            let total = p.decoded_bytes();
            let (_, gmed) = stats(&p.time_decode(reps).unwrap(), total);
            let (_, smed) = stats(&p.time_run(reps).unwrap(), total);
            let (_, fmed) = stats(&p.time_fill(reps).unwrap(), total);
            p.check().expect("status");
            verify(&p, &c);
            let e2e = (0..5)
                .map(|_| p.end_to_end(groups).unwrap())
                .fold(f64::MAX, f64::min);
            p.check().expect("status after end to end");
            verify(&p, &c);
            println!(
            "vdict,{name},{},{dmax},{n},{vd},{:.2},{:.0},{},{gmed:.1},{smed:.1},{fmed:.1},{:.3},{:.1}",
            c.reader.rows(),
            c.ratio,
            total as f64 / 1e6,
            c.tiles,
            smed / gmed,
            total as f64 / (e2e * 1e6)
        );
        }
    }
}
