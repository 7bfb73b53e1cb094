//! GPU encoder vs CPU encoder (issue 24 items 2 and 4), same run, same
//! dictionaries: per corpus column and codec (OnPair-12, OnPair-16, FSST-12)
//! a dictionary trained on the CPU, then
//! * CPU encode (the writer's `Matcher`, row by row) on 1 thread and on
//!   THREADS threads (rows split into 64 KiB segments, as `write/encode.rs`);
//! * the GPU encoder (`gpu::encode_rows_timed`, the writer's path) on the
//!   column tiled to at least MIN_BYTES: kernel GB/s of input (CUDA events
//!   around each slice's launches, slices run one at a time, summed; min
//!   over REPS) and end to end (host wall time of the call: row bounds,
//!   upload, kernels, downloads of codes, sidecar and row ends into the
//!   pinned buffers the writer builds the chunk section from; min over
//!   REPS + 1) from the rows in pinned memory, and from the same rows in
//!   pageable memory (the driver stages them);
//! * a pinned host-to-device copy of the same bytes (the upload rate that
//!   end to end is compared with).
//!
//! The GPU's packed codes are checked against the CPU's before timing.
//!
//!   cargo bench --bench gpu_encode --features test-util
//! Environment: CORPUS (dir, default target/corpus), ONLY (comma-separated
//! substrings of column names, default all), MIN_BYTES (default 256 MiB),
//! REPS (default 3), THREADS (default 16), SAMPLE (training bytes, default
//! 4 MiB), GPU_ONLY (1: no CPU timings), WIN (parse window bytes), SLICE
//! (the ring's slice bytes).

#[cfg(feature = "test-util")]
fn main() {
    bench::main()
}

#[cfg(not(feature = "test-util"))]
fn main() {
    eprintln!("gpu_encode: skipped, built without the `test-util` feature (the timing hooks)");
    if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}

#[cfg(feature = "test-util")]
mod bench {
    use std::time::Instant;

    use fastpair::dict::matcher::Matcher;
    use fastpair::dict::{fsst12, onpair, TokenTable};
    use fastpair::format::codes;
    use fastpair::{gpu, Codec};
    use rayon::prelude::*;

    fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    }

    fn train(codec: Codec, rows: &[&[u8]], sample: usize) -> TokenTable {
        let total: usize = rows.iter().map(|r| r.len()).sum();
        let stride = total.div_ceil(sample.max(1)).max(1);
        let s: Vec<&[u8]> = rows.iter().step_by(stride).copied().collect();
        match codec {
            Codec::Fsst12 => fsst12::train(&s, &Default::default()),
            Codec::OnPair12 => onpair::train(&s, &onpair::OnPairParams::onpair12()),
            _ => onpair::train(&s, &onpair::OnPairParams::onpair16()),
        }
    }

    fn cpu_encode(m: &Matcher, rows: &[&[u8]]) -> Vec<u16> {
        let mut out = Vec::new();
        for r in rows {
            m.encode_into(r, &mut out);
        }
        out
    }

    /// Rows in ~64 KiB segments, encoded in parallel (write/encode.rs).
    fn cpu_encode_par(m: &Matcher, rows: &[&[u8]]) -> usize {
        let mut segs = Vec::new();
        let (mut start, mut bytes) = (0, 0);
        for (i, r) in rows.iter().enumerate() {
            bytes += r.len();
            if bytes >= 1 << 16 {
                segs.push(start..i + 1);
                start = i + 1;
                bytes = 0;
            }
        }
        segs.push(start..rows.len());
        segs.into_par_iter()
            .map(|s| cpu_encode(m, &rows[s]).len())
            .sum()
    }

    /// Min seconds of `f` over runs until `min_s` total (at least 2 runs).
    fn best<F: FnMut()>(mut f: F, min_s: f64) -> f64 {
        let (mut best, mut spent, mut n) = (f64::MAX, 0.0, 0);
        while n < 2 || spent < min_s {
            let t = Instant::now();
            f();
            let s = t.elapsed().as_secs_f64();
            best = best.min(s);
            spent += s;
            n += 1;
        }
        best
    }

    fn geomean(v: &[f64]) -> f64 {
        (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
    }

    pub fn main() {
        if let Err(e) = gpu::available() {
            eprintln!("gpu_encode: no GPU ({e})");
            if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
                std::process::exit(1);
            }
            return;
        }
        let only: Vec<String> = std::env::var("ONLY")
            .map(|o| o.split(',').map(String::from).collect())
            .unwrap_or_default();
        let min_bytes: usize = env("MIN_BYTES", 256 << 20);
        let reps: usize = env("REPS", 3);
        let threads: usize = env("THREADS", 16);
        let sample: usize = env("SAMPLE", 4 << 20);
        // GPU_ONLY=1: no CPU timings (their columns print 0), for sweeps of
        // kernel variants (FASTPAIR_ENCODE_CU) and windows (WIN, bytes).
        let gpu_only = env("GPU_ONLY", 0u32) == 1;
        if let Ok(w) = std::env::var("WIN") {
            gpu::set_encode_window_bytes(w.parse().expect("WIN: bytes"));
        }
        if let Ok(b) = std::env::var("SLICE") {
            gpu::set_encode_slice_bytes(b.parse().expect("SLICE: bytes"));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let (name, sms) = gpu::device_info().expect("device");
        println!("# GPU encoder vs CPU encoder: {name} ({sms} SMs), CPU 1 and {threads} threads, GPU input tiled to >= {} MiB, {reps} reps", min_bytes >> 20);
        println!("| column | codec | MB | B/code | CPU 1t MB/s | CPU {threads}t MB/s | GPU kernel GB/s | GPU e2e from pinned GB/s | pinned upload GB/s | e2e / upload | GPU e2e from pageable GB/s |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        let mut agg: Vec<(Codec, [f64; 6])> = Vec::new();
        for path in fastpair::testing::corpus::files(&only) {
            let col = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read(&path).expect("column");
            let rows = fastpair::testing::corpus::lines(&text);
            let bytes: usize = rows.iter().map(|r| r.len()).sum();
            if bytes == 0 {
                continue;
            }
            // The column tiled to at least MIN_BYTES (rows and their ends).
            let tiles = min_bytes.div_ceil(bytes).max(1);
            let mut data = Vec::with_capacity(bytes * tiles);
            let mut ends = Vec::with_capacity(rows.len() * tiles);
            for _ in 0..tiles {
                for r in &rows {
                    data.extend_from_slice(r);
                    ends.push(data.len());
                }
            }
            let up = gpu::time_pinned_upload(data.len(), reps.max(2)).expect("upload");
            let pinned = gpu::PinnedBytes::new(&data).expect("pinned copy");
            let up_gbps = data.len() as f64 / up.iter().cloned().fold(f64::MAX, f64::min) / 1e9;
            for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
                let table = train(codec, &rows, sample);
                let m = Matcher::new(&table);
                let bits = codec.code_bits();
                // Parity first: the GPU's packed codes of the untiled
                // column against the CPU's.
                let want = cpu_encode(&m, &rows);
                let mut want_packed = Vec::new();
                codes::pack(bits, &want, &mut want_packed);
                let row_ends: Vec<usize> = rows
                    .iter()
                    .scan(0usize, |a, r| {
                        *a += r.len();
                        Some(*a)
                    })
                    .collect();
                let flat: Vec<u8> = rows.concat();
                let (got, n, _) =
                    gpu::encode_rows_timed(&table, &flat, &row_ends, bits, 64).expect("gpu encode");
                assert_eq!(n, want.len(), "{col} {codec:?}: code count");
                assert!(
                    got == want_packed,
                    "{col} {codec:?}: GPU codes differ from the CPU's"
                );
                let (cpu1, cpun) = if gpu_only {
                    (f64::INFINITY, f64::INFINITY)
                } else {
                    let one = best(
                        || {
                            std::hint::black_box(cpu_encode(&m, &rows));
                        },
                        0.3,
                    );
                    let all = pool.install(|| {
                        best(
                            || {
                                std::hint::black_box(cpu_encode_par(&m, &rows));
                            },
                            0.3,
                        )
                    });
                    (one, all)
                };
                let (mut kern, mut e2e, mut e2e_page) = (f64::MAX, f64::MAX, f64::MAX);
                let pdata = pinned.as_slice().expect("pinned");
                // Kernel: slices one at a time (overlapping slices' events
                // would count shared time twice); end to end: the ring.
                gpu::set_encode_serial(true);
                for _ in 0..reps {
                    let (_, _, t) =
                        gpu::encode_rows_timed(&table, &pdata[..data.len()], &ends, bits, 64)
                            .expect("gpu encode");
                    kern = kern.min(t.kernel_seconds);
                }
                gpu::set_encode_serial(false);
                for _ in 0..reps + 1 {
                    let (_, _, t) =
                        gpu::encode_rows_timed(&table, &pdata[..data.len()], &ends, bits, 64)
                            .expect("gpu encode");
                    e2e = e2e.min(t.total_seconds);
                }
                let mut outs = Vec::new();
                for _ in 0..2 {
                    let (o, _, t) =
                        gpu::encode_rows_timed(&table, &data, &ends, bits, 64).expect("gpu encode");
                    e2e_page = e2e_page.min(t.total_seconds);
                    outs.push(o);
                }
                // The two ways in (pinned rows uploaded as they are,
                // pageable ones staged) give the same codes.
                let (o, _, _) =
                    gpu::encode_rows_timed(&table, &pdata[..data.len()], &ends, bits, 64)
                        .expect("gpu encode");
                assert!(
                    outs.iter().all(|p| *p == o),
                    "{col} {codec:?}: pinned and pageable rows coded differently"
                );
                if std::env::var_os("TIMELINE").is_some() {
                    // One more call each way, slice by slice: where the
                    // end-to-end time goes (milliseconds from the call's
                    // start; host: stage 1 begun / issued, stage 2 issued,
                    // collected; device: upload begun / done, parsed,
                    // stage 2 begun / done, downloads done).
                    for (how, rows) in [("pinned", &pdata[..data.len()]), ("pageable", &data[..])] {
                        let (_, _, t) = gpu::encode_rows_timed(&table, rows, &ends, bits, 64)
                            .expect("gpu encode");
                        eprintln!(
                            "timeline {col} {codec:?} from {how}: {:.3} ms",
                            t.total_seconds * 1e3
                        );
                        for (i, sl) in t.timeline.iter().enumerate() {
                            let f = |v: &[f64]| {
                                v.iter()
                                    .map(|x| format!("{x:7.3}"))
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            };
                            eprintln!(
                                "  slice {i}: host {} | device {}",
                                f(&sl.host),
                                f(&sl.device)
                            );
                        }
                    }
                }
                let d = data.len() as f64;
                let r = [
                    bytes as f64 / cpu1 / 1e6,
                    bytes as f64 / cpun / 1e6,
                    d / kern / 1e9,
                    d / e2e / 1e9,
                    up_gbps,
                    d / e2e_page / 1e9,
                ];
                println!(
                    "| {col} | {codec:?} | {:.1} | {:.2} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} |",
                    bytes as f64 / 1e6,
                    bytes as f64 / want.len().max(1) as f64,
                    r[0],
                    r[1],
                    r[2],
                    r[3],
                    r[4],
                    r[3] / r[4],
                    r[5]
                );
                agg.push((codec, r));
            }
        }
        println!();
        println!("| codec (geomean over columns) | CPU 1t MB/s | CPU {threads}t MB/s | GPU kernel GB/s | GPU e2e from pinned GB/s | pinned upload GB/s | e2e / upload | GPU e2e from pageable GB/s |");
        println!("|---|---|---|---|---|---|---|---|");
        for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
            let v: Vec<[f64; 6]> = agg.iter().filter(|a| a.0 == codec).map(|a| a.1).collect();
            let g = |i: usize| geomean(&v.iter().map(|r| r[i]).collect::<Vec<_>>());
            println!(
                "| {codec:?} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} | {:.2} | {:.1} |",
                g(0),
                g(1),
                g(2),
                g(3),
                g(4),
                g(3) / g(4),
                g(5)
            );
        }
    }
}
