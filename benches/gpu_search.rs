//! GPU search benchmark (issue 21, bench/SEARCH.md "GPU"): substring
//! search over log columns with the fused decode-and-match kernel
//! (`gpu::PreparedSearch`), in effective GB/s of decoded bytes, next to, in
//! the same run: the kernels run in one pass and in two (`Passes`), the
//! GPU decode-only scan of the same tiled plan (`Prepared::time_decode`),
//! the CPU `Searcher` on all cores over a file of the column repeated, GNU
//! `grep -F -c` over the column's text repeated to the GPU's size, and
//! ripgrep over the same text cut into one file per core (`rg -c -F` over
//! a folder searches its files in parallel; over one file it runs on one
//! thread). `rg` is taken from `PATH` (or `RG`, a path).
//!
//!   cargo bench --bench gpu_search --features test-util
//! Environment: CORPUS (dir, default target/corpus), ONLY (comma-separated
//! columns, default loghub_Linux_full,loghub_Proxifier_full), MIN_BYTES
//! (GPU tile target, default 256 MiB), CPU_BYTES (size of the CPU's file,
//! default 64 MiB), REPS (default 20), TMP (folder for the text file,
//! default the system's), GPU_ONLY=1 (the GPU sides only: no CPU file,
//! Searcher or grep; for profiling runs), PICK (comma-separated indices
//! of the needles to run, default all), EXTRA (more needles, separated by
//! `|`, run after the picked ones).

#[cfg(feature = "test-util")]
fn main() {
    bench::main()
}

#[cfg(not(feature = "test-util"))]
fn main() {
    eprintln!("gpu_search: skipped, built without the `test-util` feature (the timing hooks)");
    if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}

#[cfg(feature = "test-util")]
mod bench {
    use std::hint::black_box;
    use std::path::PathBuf;
    use std::process::Command;
    use std::time::Instant;

    use fastpair::gpu::{self, Passes, Prepared, PreparedSearch, ScanOptions};
    use fastpair::search::{Predicate, Searcher};
    use fastpair::write::write_to_vec;
    use fastpair::{LogTemplates, Reader, WriterOptions};
    use memchr::memmem::Finder;

    /// Target selectivities: ≤ 1 % (the target) and higher.
    const TARGETS: &[f64] = &[1e-4, 1e-3, 1e-2, 1e-1, 0.5];
    const CANDIDATES: usize = 200;

    fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn count_containing(rows: &[&[u8]], needle: &[u8]) -> usize {
        let f = Finder::new(needle);
        rows.iter().filter(|r| f.find(r).is_some()).count()
    }

    /// Needles (3..=16 bytes, cut from random rows) nearest each target
    /// selectivity: (needle, rows matching in one copy).
    fn pick_needles(rows: &[&[u8]]) -> Vec<(Vec<u8>, usize)> {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut cands: Vec<(Vec<u8>, usize)> = Vec::new();
        for _ in 0..CANDIDATES {
            let r = rows[rng.below(rows.len())];
            if r.len() < 3 {
                continue;
            }
            let len = 3 + rng.below(14.min(r.len() - 2));
            let at = rng.below(r.len() - len + 1);
            let n = r[at..at + len].to_vec();
            if cands.iter().any(|c| c.0 == n) || n.contains(&b'\n') {
                continue;
            }
            let k = count_containing(rows, &n);
            cands.push((n, k));
        }
        for n in [&b"e"[..], b" ", b"a", b"0", b"in", b": "] {
            cands.push((n.to_vec(), count_containing(rows, n)));
        }
        let total = rows.len() as f64;
        let mut out: Vec<(Vec<u8>, usize)> = Vec::new();
        for &t in TARGETS {
            let best = cands
                .iter()
                .filter(|c| c.1 > 0)
                .min_by(|a, b| {
                    let da = ((a.1 as f64 / total).ln() - t.ln()).abs();
                    let db = ((b.1 as f64 / total).ln() - t.ln()).abs();
                    da.total_cmp(&db)
                })
                .cloned();
            if let Some(b) = best {
                if !out.iter().any(|o| o.0 == b.0) {
                    out.push(b);
                }
            }
        }
        out
    }

    fn stats(ms: &[f32]) -> (f64, f64) {
        let mut v: Vec<f64> = ms.iter().map(|&x| x as f64).collect();
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    }

    fn median_secs(reps: usize, mut f: impl FnMut()) -> f64 {
        let mut v: Vec<f64> = (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// (count, median seconds of 3) of `tool -c -F -a PAT PATHS...`, the
    /// counts of every file summed (`--no-filename`); `None` when the tool
    /// does not run or the needle is not UTF-8.
    fn grep_tool(tool: &str, paths: &[PathBuf], pat: &[u8]) -> Option<(u64, f64)> {
        let pat = std::str::from_utf8(pat).ok()?;
        let run = || {
            Command::new(tool)
                .args(["-c", "-F", "-a", "--no-filename", "--", pat])
                .args(paths)
                .output()
                .ok()
        };
        let out = run()?;
        if !out.status.success() && out.status.code() != Some(1) {
            return None;
        }
        let n: u64 = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse::<u64>().ok())
            .sum();
        let t = median_secs(3, || {
            black_box(run());
        });
        Some((n, t))
    }

    fn version(tool: &str) -> String {
        Command::new(tool)
            .arg("--version")
            .output()
            .ok()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_else(|| "absent".into())
    }

    pub fn main() {
        let dir = PathBuf::from(env("CORPUS", "target/corpus".to_string()));
        let only: String = env(
            "ONLY",
            "loghub_Linux_full,loghub_Proxifier_full".to_string(),
        );
        let min_bytes: u64 = env("MIN_BYTES", 256u64 << 20);
        let cpu_bytes: u64 = env("CPU_BYTES", 64u64 << 20);
        let reps: usize = env("REPS", 20);
        let gpu_only = env("GPU_ONLY", 0u32) == 1;
        let pick: Option<Vec<usize>> = std::env::var("PICK")
            .ok()
            .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect());
        let tmp = PathBuf::from(env(
            "TMP",
            std::env::temp_dir().to_string_lossy().into_owned(),
        ));
        let (name, sms) = gpu::device_info().expect("a GPU");
        let rg = env("RG", "rg".to_string());
        let parts = rayon::current_num_threads();
        println!(
            "# device: {name} ({sms} SMs); rayon threads {parts}; rg: {} ({parts} files); grep: {}",
            version(&rg),
            version("grep")
        );
        println!(
            "gpusearch,column,needle,selectivity_pct,decoded_MB,tiles,gpu_search_min_GBps,\
             gpu_search_median_GBps,one_pass_min_GBps,one_pass_median_GBps,two_over_one,\
             two_pass_median_GBps,\
             gpu_decode_median_GBps,search_over_decode,cpu_searcher_GBps,grep_GBps,rg_GBps,\
             gpu_over_cpu,gpu_over_grep,gpu_over_rg,host_flags_ms,search_call_ms,batches_decoded_pct,auto"
        );
        for col in only.split(',') {
            let path = dir.join(format!("{col}.txt"));
            let Ok(text) = std::fs::read(&path) else {
                println!("# {}: missing", path.display());
                continue;
            };
            let rows = fastpair::testing::corpus::lines(&text);
            // Coded chunks: the fused kernel's input (log-template chunks are
            // searched on the host, benches/search.rs FASTPAIR_BENCH_LOGS=1).
            let file = write_to_vec(
                rows.iter().map(|v| Some(*v)),
                WriterOptions::default().with_log_templates(LogTemplates::Off),
            )
            .expect("write");
            let r = Reader::from_bytes(file).expect("open");
            let bytes = r.decoded_bytes();
            let tiles = min_bytes.div_ceil(bytes.max(1)) as usize;
            let mut needles = pick_needles(&rows);
            if let Ok(extra) = std::env::var("EXTRA") {
                for n in extra.split('|').filter(|n| !n.is_empty()) {
                    let k = count_containing(&rows, n.as_bytes());
                    needles.push((n.as_bytes().to_vec(), k));
                }
            }
            // GPU: the search plan and the decode-only scan of the same tiles.
            let mut s = PreparedSearch::new(&r, tiles).expect("search plan");
            let dec_ms = s.time_decascade().expect("decascade");
            let gbytes = s.decoded_bytes();
            let mut p =
                Prepared::new(&r, 0..r.rows(), &ScanOptions::default(), tiles).expect("scan plan");
            p.upload().expect("upload");
            p.run().expect("scan");
            p.check().expect("scan status");
            let (_, dmed) = stats(&p.time_decode(reps).expect("time decode"));
            p.check().expect("scan status");
            drop(p);
            let decode_gbps = gbytes as f64 / dmed / 1e6;
            println!(
                "# {col}: {} rows, {bytes} B decoded, {tiles} tiles = {:.1} MB on the GPU; \
                 de-cascade of sidecars + row bounds {dec_ms:.3} ms (once per prepared search)",
                r.rows(),
                gbytes as f64 / 1e6
            );
            // CPU: a file of the column repeated to CPU_BYTES (one copy
            // under GPU_ONLY, and no Searcher or grep runs).
            let copies = if gpu_only {
                1
            } else {
                cpu_bytes.div_ceil(bytes.max(1)) as usize
            };
            let big: Vec<&[u8]> = (0..copies).flat_map(|_| rows.iter().copied()).collect();
            let t = Instant::now();
            let cfile = write_to_vec(
                big.iter().map(|v| Some(*v)),
                WriterOptions::default().with_log_templates(LogTemplates::Off),
            )
            .expect("write cpu file");
            let cr = Reader::from_bytes(cfile).expect("open");
            println!(
                "# {col}: CPU file {copies} copies, {} B decoded, written in {:.1} s",
                cr.decoded_bytes(),
                t.elapsed().as_secs_f64()
            );
            let searcher = Searcher::new(&cr);
            // Text for grep: the column repeated `tiles` times; for rg the
            // same copies dealt out to one file per core.
            let tpath = tmp.join(format!("fastpair-gpu-search-{col}.txt"));
            let pdir = tmp.join(format!("fastpair-gpu-search-{col}"));
            let mut ppaths: Vec<PathBuf> = Vec::new();
            if !gpu_only {
                use std::io::Write;
                let line_end: &[u8] = if text.ends_with(b"\n") { b"" } else { b"\n" };
                let mut f = std::io::BufWriter::new(std::fs::File::create(&tpath).expect("tmp"));
                for _ in 0..tiles {
                    f.write_all(&text).expect("write text");
                    f.write_all(line_end).expect("write text");
                }
                std::fs::create_dir_all(&pdir).expect("tmp dir");
                for i in 0..parts.min(tiles) {
                    let path = pdir.join(format!("part-{i:02}.txt"));
                    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("tmp"));
                    for _ in (i..tiles).step_by(parts) {
                        f.write_all(&text).expect("write text");
                        f.write_all(line_end).expect("write text");
                    }
                    ppaths.push(path);
                }
            }
            let tbytes = std::fs::metadata(&tpath).map(|m| m.len()).unwrap_or(0);
            for (i, (needle, k)) in needles.iter().enumerate() {
                if pick.as_ref().is_some_and(|v| !v.contains(&i)) {
                    continue;
                }
                let pred = Predicate::contains(needle.clone());
                // One pass first (the count checked both ways), then the
                // default (two passes when the literal has anchors).
                s.set_passes(Passes::One);
                let got = s.count_coded(&pred).expect("gpu count");
                assert_eq!(
                    got,
                    (*k * tiles) as u64,
                    "{col}: one-pass GPU count of {needle:?}"
                );
                let (omin, omed) = stats(&s.time_search(&pred, reps).expect("time search"));
                s.set_passes(Passes::Two);
                let got = s.count_coded(&pred).expect("gpu count");
                assert_eq!(
                    got,
                    (*k * tiles) as u64,
                    "{col}: two-pass GPU count of {needle:?}"
                );
                let (_, tmed) = stats(&s.time_search(&pred, reps).expect("time search"));
                s.set_passes(Passes::Auto);
                let got = s.count_coded(&pred).expect("gpu count");
                assert_eq!(got, (*k * tiles) as u64, "{col}: GPU count of {needle:?}");
                let flags_ms = s.time_set_pattern(&pred).expect("flags");
                // The warp batches the kernel decodes (its prefilter on the host).
                let decoded = 100.0 * s.decoded_fraction(&pred).expect("prefilter");
                let (smin, smed) = stats(&s.time_search(&pred, reps).expect("time search"));
                // One whole call (flags cached): launch, host chunks, bitmap
                // download of every tile, selection of the first.
                let call_ms = 1e3
                    * median_secs(5, || {
                        black_box(s.search(&pred).expect("search"));
                    });
                let gmin = gbytes as f64 / smin / 1e6;
                let gmed = gbytes as f64 / smed / 1e6;
                let csel = searcher.search(&pred).expect("cpu");
                assert_eq!(csel.count(), (*k * copies) as u64, "{col}: CPU count");
                let cgbps = if gpu_only {
                    f64::NAN
                } else {
                    let ct = median_secs(5, || {
                        black_box(searcher.search(&pred).expect("cpu"));
                    });
                    cr.decoded_bytes() as f64 / ct / 1e9
                };
                let tool = |tool: &str, paths: &[PathBuf]| -> f64 {
                    if gpu_only {
                        return f64::NAN;
                    }
                    match grep_tool(tool, paths, needle) {
                        Some((n, t)) => {
                            assert_eq!(n, (*k * tiles) as u64, "{col}: {tool} count");
                            tbytes as f64 / t / 1e9
                        }
                        None => f64::NAN,
                    }
                };
                let grep_gbps = tool("grep", std::slice::from_ref(&tpath));
                let rg_gbps = tool(&rg, &ppaths);
                let (omin, omed) = (gbytes as f64 / omin / 1e6, gbytes as f64 / omed / 1e6);
                let auto = s.auto_passes(&pred).expect("passes");
                let tmed = gbytes as f64 / tmed / 1e6;
                println!(
                    "gpusearch,{col},{:?},{:.4},{:.1},{tiles},{gmin:.1},{gmed:.1},{omin:.1},{omed:.1},\
                     {:.2},{tmed:.1},{decode_gbps:.1},{:.2},{cgbps:.2},{grep_gbps:.2},{rg_gbps:.2},{:.1},{:.1},\
                     {:.1},{flags_ms:.2},{call_ms:.2},{decoded:.3},{auto:?}",
                    String::from_utf8_lossy(needle),
                    100.0 * *k as f64 / rows.len() as f64,
                    gbytes as f64 / 1e6,
                    tmed / omed,
                    gmed / decode_gbps,
                    gmed / cgbps,
                    gmed / grep_gbps,
                    gmed / rg_gbps
                );
            }
            let _ = std::fs::remove_dir_all(&pdir);
            let _ = std::fs::remove_file(&tpath);
        }
    }
}
