//! The log template codec (issue 20, `fastpair::logs`) on every Loghub column
//! of the corpus: bytes and ratio of design A (templates + typed slots) and
//! design B (templates, every slot token-coded text) next to the best
//! existing fastpair file (`Writer` default options), Parquet ZSTD and
//! SNAPPY (arrow-rs, one string column, default writer properties) and
//! `zstd -3` / `-19` over the whole text; then A's point-read ns/row (warm,
//! random rows), bulk decode GB/s and compress MB/s (one thread, best of
//! several runs, in thread CPU time: the machine these ran on is shared;
//! wall-clock figures are printed after them in parentheses), next to the
//! same run's `zstd -3` compress MB/s and decompress GB/s over the column's
//! text (the peer's speed; it keeps no row boundaries).
//!
//! ```text
//! cargo run --release -p fastpair-lab --example logs_ratio -- [FILTER...]   (default: loghub)
//! ```
//! `LOGS_MIN_COUNT` and `LOGS_SIMILARITY` override those `LogOptions` (sweeps);
//! `LOGS_NO_FAMILY=1` turns template families off, `LOGS_NO_COARSE=1` the
//! coarse-split candidate (`LogOptions::try_coarse`), `LOGS_NO_PRUNE=1` the pool
//! pruning (`LogOptions::prune_pool`).

fn main() {
    probe::main()
}

mod probe {
    use std::hint::black_box;
    use std::sync::Arc;
    use std::time::Instant;

    use arrow_array::{ArrayRef, BinaryArray, RecordBatch, StringArray};
    use fastpair::logs::{encode_column as encode, LogColumn as LogBlock, LogOptions};
    use fastpair::write::write_to_vec;
    use fastpair::WriterOptions;
    use parquet::arrow::ArrowWriter;
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;

    fn parquet_len(batch: &RecordBatch, c: Compression) -> usize {
        let props = WriterProperties::builder().set_compression(c).build();
        let mut out = Vec::new();
        let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
        out.len()
    }

    fn geomean(v: &[f64]) -> f64 {
        (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
    }

    /// CPU seconds this thread has used (excludes time spent descheduled:
    /// the build machine is shared, 2 cores for several engineers, and wall
    /// time there measures the neighbours).
    fn thread_cpu() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }

    /// Best (shortest) thread-CPU seconds of `f` over `runs` runs, and the
    /// best wall seconds.
    fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
        let mut cpu = f64::INFINITY;
        let mut wall = f64::INFINITY;
        for _ in 0..runs {
            let (t, c) = (Instant::now(), thread_cpu());
            black_box(f());
            cpu = cpu.min(thread_cpu() - c);
            wall = wall.min(t.elapsed().as_secs_f64());
        }
        WALL.with(|w| w.set(wall));
        cpu
    }

    thread_local! {
        /// Wall seconds of the last [`best`] (printed next to CPU time).
        static WALL: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
    }

    pub fn main() {
        let mut filters: Vec<String> = std::env::args().skip(1).collect();
        if filters.is_empty() {
            filters.push("loghub".into());
        }
        let files = fastpair::testing::corpus::files(&filters);
        println!("| column | rows | text bytes | A bytes | A ratio | B bytes | B ratio | fastpair | fp ratio | PQ-ZSTD | ratio | PQ-SNAPPY | ratio | zstd-3 | ratio | zstd-19 | ratio | A templates | A escaped | A split | A get ns/row | A decode GB/s | A compress MB/s | zstd-3 decompress GB/s | zstd-3 compress MB/s |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut ratios: Vec<[f64; 7]> = Vec::new();
        let mut gets = Vec::new();
        let mut speeds: Vec<[f64; 4]> = Vec::new();
        let mut misses = Vec::new();
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let vals = fastpair::testing::corpus::lines(&data);
            let text: usize = vals.iter().map(|r| r.len()).sum();
            let name = f.file_stem().unwrap().to_string_lossy().into_owned();
            let mut a_opts = LogOptions::default();
            if let Some(v) = std::env::var("LOGS_MIN_COUNT")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                a_opts.min_count = v;
            }
            if let Some(v) = std::env::var("LOGS_SIMILARITY")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                a_opts.similarity = v;
            }
            // `LOGS_NO_FAMILY=1`: without template families (round 6's A/B).
            a_opts.families = std::env::var_os("LOGS_NO_FAMILY").is_none();
            // `LOGS_NO_PRUNE=1`: the pool's table as trained (before round 7).
            a_opts.prune_pool = std::env::var_os("LOGS_NO_PRUNE").is_none();
            // `LOGS_NO_COARSE=1`: no coarse-split candidate (before its round).
            a_opts.try_coarse = std::env::var_os("LOGS_NO_COARSE").is_none();
            let b_opts = LogOptions {
                typed: false,
                ..Default::default()
            };
            let a = encode(&vals, &a_opts);
            let b = encode(&vals, &b_opts);
            let block = LogBlock::open(&a).unwrap();
            // Correctness before timing.
            let (mut v, mut o) = (Vec::new(), Vec::new());
            block.decode_all(&mut v, &mut o);
            assert_eq!(v.len(), text, "{name}: bulk decode");
            assert!(vals
                .iter()
                .enumerate()
                .all(|(i, r)| &v[o[i] as usize..o[i + 1] as usize] == *r));
            let bb = LogBlock::open(&b).unwrap();
            bb.decode_all(&mut v, &mut o);
            assert_eq!(v.len(), text, "{name}: B bulk decode");
            let fp = write_to_vec(
                vals.iter().map(|r| Some(*r)),
                WriterOptions::default().with_log_templates(fastpair::LogTemplates::Auto),
            )
            .unwrap()
            .len();
            let arr: ArrayRef = if std::str::from_utf8(&data).is_ok() {
                Arc::new(StringArray::from_iter_values(
                    vals.iter().map(|r| std::str::from_utf8(r).unwrap()),
                ))
            } else {
                Arc::new(BinaryArray::from_iter_values(vals.iter()))
            };
            let batch = RecordBatch::try_from_iter([("value", arr)]).unwrap();
            let pqz = parquet_len(&batch, Compression::ZSTD(ZstdLevel::default()));
            let pqs = parquet_len(&batch, Compression::SNAPPY);
            let z3 = zstd::bulk::compress(&data, 3).unwrap().len();
            let z19 = zstd::bulk::compress(&data, 19).unwrap().len();
            // The peer's speed, same conditions: zstd -3 over the text.
            let z3_bytes = zstd::bulk::compress(&data, 3).unwrap();
            let t_z3c = best(3, || zstd::bulk::compress(&data, 3).unwrap().len());
            let t_z3d = best(10, || {
                zstd::bulk::decompress(&z3_bytes, data.len()).unwrap().len()
            });
            // Timing (one thread).
            let t_enc = best(3, || encode(&vals, &a_opts));
            let w_enc = WALL.with(|w| w.get());
            let t_dec = best(10, || {
                block.decode_all(&mut v, &mut o);
                v.len()
            });
            let w_dec = WALL.with(|w| w.get());
            let n = vals.len().max(1);
            let mut rng = 0x9E37_79B9_7F4A_7C15u64;
            let order: Vec<usize> = (0..200_000)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    (rng % n as u64) as usize
                })
                .collect();
            let mut buf = Vec::with_capacity(1 << 16);
            let t_get = best(3, || {
                for &r in &order {
                    buf.clear();
                    block.get_into(r, &mut buf).unwrap();
                    black_box(&buf);
                }
            }) / order.len() as f64;
            let w_get = WALL.with(|w| w.get()) / order.len() as f64;
            let ratio = |x: usize| text as f64 / x as f64;
            let row = [a.len(), b.len(), fp, pqz, pqs, z3, z19].map(ratio);
            println!(
                "| {name} | {} | {text} | {} | {:.2} | {} | {:.2} | {fp} | {:.2} | {pqz} | {:.2} | {pqs} | {:.2} | {z3} | {:.2} | {z19} | {:.2} | {} | {} | {} | {:.0} ({:.0}) | {:.2} ({:.2}) | {:.1} ({:.1}) | {:.2} | {:.1} |",
                vals.len(), a.len(), row[0], b.len(), row[1], row[2], row[3], row[4], row[5], row[6],
                block.templates(), block.escaped_rows(), if block.is_split() { "yes" } else { "no" },
                t_get * 1e9, w_get * 1e9, text as f64 / t_dec / 1e9, text as f64 / w_dec / 1e9,
                text as f64 / t_enc / 1e6, text as f64 / w_enc / 1e6,
                data.len() as f64 / t_z3d / 1e9, data.len() as f64 / t_z3c / 1e6,
            );
            if row[0] < row[3] {
                misses.push(format!("{name} (A {:.2} < PQ-ZSTD {:.2})", row[0], row[3]));
            }
            gets.push(t_get * 1e9);
            speeds.push([
                text as f64 / t_dec / 1e9,
                text as f64 / t_enc / 1e6,
                data.len() as f64 / t_z3d / 1e9,
                data.len() as f64 / t_z3c / 1e6,
            ]);
            ratios.push([row[0], row[1], row[2], row[3], row[4], row[5], row[6]]);
            eprintln!("{name} done");
        }
        let gm = |k: usize| geomean(&ratios.iter().map(|r| r[k]).collect::<Vec<_>>());
        println!(
            "| **geomean** | | | | {:.2} | | {:.2} | | {:.2} | | {:.2} | | {:.2} | | {:.2} | | {:.2} | | | | {:.0} (max {:.0}) | {:.2} | {:.1} | {:.2} | {:.1} |",
            gm(0), gm(1), gm(2), gm(3), gm(4), gm(5), gm(6),
            geomean(&gets), gets.iter().cloned().fold(0.0, f64::max),
            geomean(&speeds.iter().map(|s| s[0]).collect::<Vec<_>>()),
            geomean(&speeds.iter().map(|s| s[1]).collect::<Vec<_>>()),
            geomean(&speeds.iter().map(|s| s[2]).collect::<Vec<_>>()),
            geomean(&speeds.iter().map(|s| s[3]).collect::<Vec<_>>()),
        );
        println!();
        println!(
            "A below Parquet-ZSTD on: {}",
            if misses.is_empty() {
                "none".to_string()
            } else {
                misses.join(", ")
            }
        );
    }
}
