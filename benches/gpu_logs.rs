//! GPU scan of log-template chunks (issue 20 item 3, spec/DECODER.md §6d):
//! for each Loghub column of the corpus, written once with log templates
//! (`LogTemplates::Always`) and once as coded chunks (the default codec),
//! each tiled to at least MIN_BYTES decoded, in the same run: the decode
//! launches alone (`Prepared::decode_only`: the log decoder, or the FastPair
//! decode kernel) and the full device scan (`Prepared::run`: + Arrow
//! offsets), GB/s of decoded bytes (min time and median over REPS runs, CUDA
//! events), a write-only fill of the same size, and each tile checked
//! against the CPU reader first.
//!
//!   cargo bench --bench gpu_logs --features test-util
//! Environment: CORPUS (dir, default target/corpus), ONLY (comma-separated
//! substrings of the column names, default "loghub"), REPS (default 20),
//! MIN_BYTES (default 256 MiB), CODED (0: log templates only, default 1).

#[cfg(feature = "test-util")]
fn main() {
    bench::main()
}

#[cfg(not(feature = "test-util"))]
fn main() {
    eprintln!("gpu_logs: skipped, built without the `test-util` feature (the timing hooks)");
    if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
        std::process::exit(1);
    }
}

#[cfg(feature = "test-util")]
mod bench {
    use fastpair::gpu::{self, Prepared, ScanOptions};
    use fastpair::write::write_to_vec;
    use fastpair::{LogTemplates, Reader, WriterOptions};

    fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    }

    /// (min-time, median) GB/s of `bytes` over `ms` runs.
    fn stats(ms: &[f32], bytes: u64) -> (f64, f64) {
        let mut v: Vec<f64> = ms.iter().map(|&m| m as f64).collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let gbps = |m: f64| bytes as f64 / (m * 1e6);
        (gbps(v[0]), gbps(v[v.len() / 2]))
    }

    /// Decode GB/s, scan GB/s, fill GB/s (min, median each) of `r` tiled
    /// `tiles` times, after checking every tile against the CPU reader.
    fn measure(r: &Reader, tiles: usize, reps: usize) -> fastpair::Result<[(f64, f64); 3]> {
        let mut p = Prepared::new(r, 0..r.rows(), &ScanOptions::default(), tiles)?;
        p.upload()?;
        p.poison(0xa5)?;
        p.run()?;
        p.check()?;
        let g = p.to_host()?;
        let cpu = r.read_all()?;
        let n = cpu.values.len();
        for t in 0..tiles {
            assert!(
                g.values[t * n..(t + 1) * n] == cpu.values[..],
                "tile {t} differs from the CPU reader"
            );
        }
        let rows = cpu.offsets.len() - 1;
        assert_eq!(g.offsets.len(), tiles * rows + 1);
        assert_eq!(g.offsets[tiles * rows], (tiles * n) as i64);
        drop(g);
        let bytes = p.decoded_bytes();
        let dec = stats(&p.time_decode(reps)?, bytes);
        p.check()?;
        let scan = stats(&p.time_run(reps)?, bytes);
        p.check()?;
        let fill = stats(&p.time_fill(reps)?, bytes);
        Ok([dec, scan, fill])
    }

    pub fn main() {
        if let Err(e) = gpu::available() {
            eprintln!("gpu_logs: skipped, {e}");
            if std::env::var("FASTPAIR_REQUIRE_GPU").as_deref() == Ok("1") {
                std::process::exit(1);
            }
            return;
        }
        let reps: usize = env("REPS", 20);
        let min_bytes: u64 = env("MIN_BYTES", 256 << 20);
        let only: String = env("ONLY", "loghub".to_string());
        let coded: u32 = env("CODED", 1);
        let filters: Vec<String> = only.split(',').map(String::from).collect();
        let files = fastpair::testing::corpus::files(&filters);
        assert!(!files.is_empty(), "no corpus column matches {filters:?}");
        let (name, sms) = gpu::device_info().unwrap();
        println!("device: {name}, {sms} SMs; REPS={reps}, MIN_BYTES={min_bytes}");
        println!(
            "| column | layout | ratio | tiles | decoded MB | decode GB/s (min-time / median) | \
             scan GB/s | fill GB/s |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        let mut geo = [(0.0f64, 0usize); 4];
        for f in &files {
            let col = f.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read(f).unwrap();
            let rows = fastpair::testing::corpus::lines(&text);
            for (k, (layout, lt)) in [
                ("log templates", LogTemplates::Always),
                ("coded", LogTemplates::Off),
            ]
            .into_iter()
            .enumerate()
            .take(if coded == 0 { 1 } else { 2 })
            {
                let opts = WriterOptions::default().with_log_templates(lt);
                let file = write_to_vec(rows.iter().map(|r| Some(*r)), opts).unwrap();
                let ratio = text.len() as f64 / file.len() as f64;
                let r = Reader::from_bytes(file).unwrap();
                let tiles = (min_bytes.div_ceil(r.decoded_bytes().max(1))) as usize;
                match measure(&r, tiles, reps) {
                    Ok([dec, scan, fill]) => {
                        println!(
                            "| {col} | {layout} | {ratio:.1} | {tiles} | {:.0} | {:.0} / {:.0} | {:.0} / {:.0} | {:.0} |",
                            (r.decoded_bytes() * tiles as u64) as f64 / 1e6,
                            dec.0,
                            dec.1,
                            scan.0,
                            scan.1,
                            fill.1
                        );
                        geo[2 * k].0 += dec.1.ln();
                        geo[2 * k].1 += 1;
                        geo[2 * k + 1].0 += scan.1.ln();
                        geo[2 * k + 1].1 += 1;
                    }
                    Err(e) => println!("| {col} | {layout} | {ratio:.1} | {tiles} | error: {e} |"),
                }
            }
        }
        let g = |(s, n): (f64, usize)| if n == 0 { 0.0 } else { (s / n as f64).exp() };
        println!(
            "geomean of medians: log templates decode {:.0} GB/s, scan {:.0}; coded decode {:.0}, scan {:.0}",
            g(geo[0]),
            g(geo[1]),
            g(geo[2]),
            g(geo[3])
        );
    }
}
