//! Search benchmark (issue 21): fastpair's search on its codes next to the
//! `onpair` crate's search on its own encoding of the same column, decode +
//! `memchr::memmem`, and ripgrep over the decompressed text, on every corpus
//! column, in one run (the machine is noisy: peers are compared inside one
//! run only; DESIGN.md §7).
//!
//! ```text
//! cargo bench --bench search                          # every corpus column
//! cargo bench --bench search -- HDFS l_comment        # columns whose name contains a filter
//! cargo bench --bench search -- --out bench/search-table.md
//! ```
//!
//! Environment: `FASTPAIR_CORPUS` (default `target/corpus`),
//! `FASTPAIR_BENCH_TARGET_MS` (time per measurement and side, default 60),
//! `FASTPAIR_BENCH_LOGS=1` (columns written as log-template chunks,
//! `LogTemplates::Always`, instead of the default options: "ours
//! decode-path" is then every row rendered and matched, the path before
//! templates were matched once).
//!
//! Per column: substring needles picked from the column's own rows at
//! selectivities near 0.001%, 0.01%, 0.1%, 1%, 10% and 50% of the rows (the
//! exact share is printed; a column of n rows cannot go below 1/n), plus
//! one equality (a row's value) and one prefix (a row's first 4 bytes).
//! Timed: ours on one thread (a 1-thread rayon pool) and on all threads
//! (`Searcher::search`, `Strategy::Auto`, one `Searcher` per column held
//! across its searches as a query engine holds an open file), ours forced to the decode path on one
//! thread, `onpair` (`rows_containing` / `rows_equal_to` /
//! `rows_starting_with`, one thread), decode + memmem on one thread (the
//! whole column decoded by `Reader::read_all`, then one `memmem` pass over
//! the values mapped to rows; equality and prefix compare each row), and
//! `rg -c -F` (or `-x` / a `^` regex) over the column's text file, wall time
//! including process start. Every side's row count is checked equal. Each
//! time is the median of at least 5 runs after one warm-up; one-thread sides
//! in the timing thread's CPU time (the machine is shared: time another
//! process holds the core is not counted; `FASTPAIR_BENCH_WALL=1` for wall
//! clock), "ours all" in wall-clock time.

use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use fastpair::search::{Predicate, SearchOptions, Searcher, Strategy};
use fastpair::write::write_to_vec;
use fastpair::{Reader, WriterOptions};
use memchr::memmem::Finder;

/// Target selectivities (share of rows), from rare to common.
const TARGETS: &[f64] = &[1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 0.5];
/// Candidate needles drawn per column to find the targets.
const CANDIDATES: usize = 80;
const MIN_REPS: usize = 5;

fn target() -> Duration {
    let ms = std::env::var("FASTPAIR_BENCH_TARGET_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    Duration::from_millis(ms)
}

/// The calling thread's CPU time in seconds: on a shared machine, time
/// spent while another process holds the core is not counted (one-thread
/// sides run their whole work on the calling thread).
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Median seconds of `f` (one warm-up, then at least `MIN_REPS` runs and
/// the target time), in the calling thread's CPU time: for the one-thread
/// sides, whose work all runs on the calling thread (`FASTPAIR_BENCH_WALL=1`
/// times wall clock instead).
fn time<R>(f: impl FnMut() -> R) -> f64 {
    if std::env::var_os("FASTPAIR_BENCH_WALL").is_some() {
        time_wall(f)
    } else {
        time_with(f, thread_cpu)
    }
}

/// [`time`] in wall-clock time (sides that use several threads).
fn time_wall<R>(f: impl FnMut() -> R) -> f64 {
    let start = Instant::now();
    time_with(f, move || start.elapsed().as_secs_f64())
}

fn time_with<R>(mut f: impl FnMut() -> R, clock: impl Fn() -> f64) -> f64 {
    black_box(f());
    let mut v = Vec::new();
    let start = Instant::now();
    while v.len() < MIN_REPS || (start.elapsed() < target() && v.len() < 1000) {
        let t = clock();
        black_box(f());
        v.push(clock() - t);
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A tiny deterministic generator (xorshift).
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

/// Needles near each target selectivity: (needle, rows matching).
fn pick_needles(rows: &[&[u8]], seed: u64) -> Vec<(Vec<u8>, usize)> {
    let mut rng = Rng(seed | 1);
    let mut cands: Vec<(Vec<u8>, usize)> = Vec::new();
    for _ in 0..CANDIDATES {
        let r = rows[rng.below(rows.len())];
        if r.len() < 3 {
            continue;
        }
        let len = 3 + rng.below(14.min(r.len() - 2));
        let at = rng.below(r.len() - len + 1);
        let n = r[at..at + len].to_vec();
        if cands.iter().any(|c| c.0 == n) {
            continue;
        }
        let k = count_containing(rows, &n);
        cands.push((n, k));
    }
    // Short, frequent needles too (single common bytes and pairs).
    for n in [&b"e"[..], b" ", b"a", b"e ", b"th", b"0", b"in"] {
        let k = count_containing(rows, n);
        cands.push((n.to_vec(), k));
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

fn rg(path: &Path, args: &[&str], pat: &[u8]) -> Option<(usize, f64)> {
    let pat = std::str::from_utf8(pat).ok()?;
    let run = || {
        Command::new("rg")
            .args(args)
            .arg("--")
            .arg(pat)
            .arg(path)
            .output()
            .ok()
    };
    let out = run()?;
    let n: usize = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    let mut ts = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        black_box(run());
        ts.push(t.elapsed().as_secs_f64());
    }
    ts.sort_by(f64::total_cmp);
    Some((n, ts[1]))
}

#[derive(Clone, Copy)]
enum Kind {
    Contains,
    Equals,
    Prefix,
}

struct Row {
    col: String,
    what: String,
    sel: f64,
    ours1: f64,
    ours_all: f64,
    decode1: f64,
    onpair: f64,
    memmem: f64,
    rg: Option<f64>,
}

fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

fn main() {
    let mut filters = Vec::new();
    let mut out_path = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--bench" => {}
            "--out" => out_path = args.next(),
            _ => filters.push(a),
        }
    }
    let files = fastpair::testing::corpus::files(&filters);
    assert!(
        !files.is_empty(),
        "no corpus columns in {}",
        fastpair::testing::corpus::dir().display()
    );
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let rg_version = Command::new("rg")
        .arg("--version")
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_else(|_| "not installed".into());
    let mut table: Vec<Row> = Vec::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(path).unwrap();
        let rows = fastpair::testing::corpus::lines(&text);
        let opts = if std::env::var_os("FASTPAIR_BENCH_LOGS").is_some() {
            WriterOptions::default().with_log_templates(fastpair::LogTemplates::Always)
        } else {
            WriterOptions::default()
        };
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), opts).unwrap();
        let reader = Reader::from_bytes(file).unwrap();
        // Held across the column's searches, as a query engine holds an open file.
        let searcher = Searcher::new(&reader);
        let mut bytes = Vec::new();
        let mut offs = vec![0u32];
        for r in &rows {
            bytes.extend_from_slice(r);
            offs.push(bytes.len() as u32);
        }
        let theirs = onpair::Column::compress(&bytes, &offs, onpair::DEFAULT_CONFIG).unwrap();
        let view = theirs.view();
        let n = rows.len();
        let mut preds: Vec<(Kind, Vec<u8>, usize)> = pick_needles(&rows, 0x51_7e ^ n as u64)
            .into_iter()
            .map(|(nd, k)| (Kind::Contains, nd, k))
            .collect();
        let eq = rows[n / 3].to_vec();
        let k = rows.iter().filter(|r| **r == &eq[..]).count();
        preds.push((Kind::Equals, eq, k));
        let src = rows[n / 5];
        let pre = src[..src.len().min(4)].to_vec();
        let k = rows.iter().filter(|r| r.starts_with(&pre)).count();
        preds.push((Kind::Prefix, pre, k));
        for (kind, lit, want) in preds {
            let p = match kind {
                Kind::Contains => Predicate::contains(lit.clone()),
                Kind::Equals => Predicate::equals(lit.clone()),
                Kind::Prefix => Predicate::prefix(lit.clone()),
            };
            let got = searcher.search(&p).unwrap().count() as usize;
            assert_eq!(got, want, "{name} {p:?}");
            let theirs_rows = || match kind {
                Kind::Contains => view.rows_containing(&lit),
                Kind::Equals => view.rows_equal_to(&lit),
                Kind::Prefix => view.rows_starting_with(&lit),
            };
            assert_eq!(theirs_rows().len(), want, "onpair {name} {p:?}");
            let ours1 = one.install(|| time(|| searcher.search(&p).unwrap().count()));
            let ours_all = time_wall(|| searcher.search(&p).unwrap().count());
            let dec = SearchOptions {
                strategy: Strategy::Decode,
            };
            let decode1 = one.install(|| time(|| searcher.search_with(&p, dec).unwrap().count()));
            let onpair = time(|| theirs_rows().len());
            let finder = Finder::new(&lit);
            let memmem = one.install(|| {
                time(|| {
                    let col = reader.read_all().unwrap();
                    let (v, o) = (&col.values, &col.offsets);
                    let mut hits = 0usize;
                    match kind {
                        Kind::Contains => {
                            let mut at = 0usize;
                            let mut r = 0usize;
                            while let Some(p) = finder.find(&v[at..]) {
                                let pos = at + p;
                                while o[r + 1] as usize <= pos {
                                    r += 1;
                                }
                                if pos + lit.len() <= o[r + 1] as usize {
                                    hits += 1;
                                    at = o[r + 1] as usize;
                                    r += 1;
                                    if r >= n {
                                        break;
                                    }
                                } else {
                                    at = pos + 1;
                                }
                            }
                        }
                        Kind::Equals | Kind::Prefix => {
                            for r in 0..n {
                                let row = &v[o[r] as usize..o[r + 1] as usize];
                                let m = match kind {
                                    Kind::Equals => row == &lit[..],
                                    _ => row.starts_with(&lit),
                                };
                                hits += m as usize;
                            }
                        }
                    }
                    assert_eq!(hits, want, "decode+memmem {name}");
                    hits
                })
            });
            let rg = match kind {
                Kind::Contains => rg(path, &["-c", "-F"], &lit),
                Kind::Equals => rg(path, &["-c", "-F", "-x"], &lit),
                Kind::Prefix => None,
            };
            if let Some((k, _)) = rg {
                assert_eq!(k, want, "rg {name} {p:?}");
            }
            let what = match kind {
                Kind::Contains => format!("contains {:?}", String::from_utf8_lossy(&lit)),
                Kind::Equals => "equals (a row)".to_string(),
                Kind::Prefix => format!("prefix {:?}", String::from_utf8_lossy(&lit)),
            };
            let row = Row {
                col: name.clone(),
                what,
                sel: want as f64 / n as f64,
                ours1,
                ours_all,
                decode1,
                onpair,
                memmem,
                rg: rg.map(|x| x.1),
            };
            eprintln!(
                "{:<28} {:<34} {:>8.4}% ours1 {:>8.3} ms  all {:>8.3}  decode1 {:>8.3}  onpair {:>8.3}  dec+memmem {:>8.3}  rg {}",
                row.col,
                row.what.chars().take(34).collect::<String>(),
                row.sel * 100.0,
                row.ours1 * 1e3,
                row.ours_all * 1e3,
                row.decode1 * 1e3,
                row.onpair * 1e3,
                row.memmem * 1e3,
                row.rg.map_or("-".into(), |t| format!("{:.3}", t * 1e3)),
            );
            table.push(row);
        }
    }
    let mut md = String::new();
    md.push_str(&format!(
        "Machine: {} threads (rayon); ripgrep: {rg_version}. Times in ms (median; 1T sides: {}).\n\n",
        rayon::current_num_threads(),
        if std::env::var_os("FASTPAIR_BENCH_WALL").is_some() { "wall clock" } else { "thread CPU time" }
    ));
    md.push_str("| column | predicate | selectivity | ours 1T | ours all | ours decode-path 1T | onpair 1T | decode+memmem 1T | rg | ours1/onpair | ours1/dec+memmem |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &table {
        md.push_str(&format!(
            "| {} | {} | {:.4}% | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {:.2}× | {:.2}× |\n",
            r.col,
            r.what.replace('|', "\\|"),
            r.sel * 100.0,
            r.ours1 * 1e3,
            r.ours_all * 1e3,
            r.decode1 * 1e3,
            r.onpair * 1e3,
            r.memmem * 1e3,
            r.rg.map_or("-".into(), |t| format!("{:.3}", t * 1e3)),
            r.onpair / r.ours1,
            r.memmem / r.ours1,
        ));
    }
    let vs_onpair: Vec<f64> = table.iter().map(|r| r.onpair / r.ours1).collect();
    let vs_onpair_all: Vec<f64> = table.iter().map(|r| r.onpair / r.ours_all).collect();
    let low: Vec<f64> = table
        .iter()
        .filter(|r| r.sel <= 0.01)
        .map(|r| r.memmem / r.ours1)
        .collect();
    let all_mm: Vec<f64> = table.iter().map(|r| r.memmem / r.ours1).collect();
    let worst = table
        .iter()
        .min_by(|a, b| (a.memmem / a.ours1).total_cmp(&(b.memmem / b.ours1)));
    let vs_rg: Vec<f64> = table
        .iter()
        .filter_map(|r| r.rg.map(|t| t / r.ours_all))
        .collect();
    md.push_str(&format!(
        "\nSummary over {} measurements on {} columns:\n\n\
         - ours (1 thread) vs onpair (1 thread), geomean: {:.2}× (target ≥ 1.5×); ours all threads vs onpair: {:.2}×\n\
         - ours (1 thread) vs decode+memmem (1 thread) at ≤ 1% selectivity, geomean: {:.2}× (target ≥ 3×)\n\
         - ours vs decode+memmem, all selectivities: geomean {:.2}×, worst {:.2}× ({}) (target: never below 1×)\n\
         - ours (all threads) vs rg (process wall time), geomean: {:.2}×\n",
        table.len(),
        files.len(),
        geomean(&vs_onpair),
        geomean(&vs_onpair_all),
        geomean(&low),
        geomean(&all_mm),
        worst.map_or(f64::NAN, |r| r.memmem / r.ours1),
        worst.map_or(String::new(), |r| format!("{} {}", r.col, r.what)),
        geomean(&vs_rg),
    ));
    println!("{md}");
    if let Some(p) = out_path {
        std::fs::write(p, md).unwrap();
    }
}
