//! The shared harness of the CPU benchmarks (`cpu`, `codecs`, `parquet`): one
//! way to find and load corpus columns, one command-line and environment
//! vocabulary, one timing discipline and one machine line, so that tables from
//! different benches are read the same way.
//!
//! Vocabulary (every bench that uses this module):
//!
//! | where | name | meaning |
//! |---|---|---|
//! | argument | `NAME` (any word not starting with `--`) | keep columns whose name contains it |
//! | argument | `--out FILE` | also write the Markdown report to FILE |
//! | env | `FASTPAIR_CORPUS` | directory of `*.txt` columns, one value per line (default `target/corpus`) |
//! | env | `FASTPAIR_BENCH_FILTER` | comma-separated name filters, added to the arguments' |
//! | env | `FASTPAIR_BENCH_OUT` | as `--out` |
//! | env | `FASTPAIR_BENCH_TARGET_MS` | time per side and measurement (each bench has its default) |
//!
//! Timing: the sides of one measurement (ours and each peer) run alternately,
//! one repetition each in turn, so that all see the same load on a shared
//! machine (DESIGN.md §7: peers are only ever compared inside one run); the
//! series stops once every side has the fewest repetitions asked for and the
//! time target per side is spent. Each side reports its median and its best.
//!
//! Each bench includes this file with `mod harness;` and uses what it needs.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// ───────────────────────────── arguments ─────────────────────────────

/// A bench's command line and environment, parsed once.
pub struct Args {
    /// Column-name filters (arguments and `FASTPAIR_BENCH_FILTER`).
    pub filters: Vec<String>,
    /// Where to write the Markdown report (`--out`, `FASTPAIR_BENCH_OUT`).
    pub out: Option<String>,
    /// Time per side and measurement.
    pub target: Duration,
    values: HashMap<String, String>,
    switches: HashSet<String>,
}

impl Args {
    /// Parses `std::env::args` and the environment. `with_value` names the
    /// bench's own options that take a value (`--width 12`), `switches` its
    /// flags (`--get-only`); anything else starting with `--` is reported
    /// and ignored (cargo passes `--bench`).
    pub fn parse(default_target_ms: u64, with_value: &[&str], switches: &[&str]) -> Args {
        let mut filters: Vec<String> = std::env::var("FASTPAIR_BENCH_FILTER")
            .map(|s| {
                s.split(',')
                    .filter(|x| !x.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        let mut out = std::env::var("FASTPAIR_BENCH_OUT").ok();
        let (mut values, mut on) = (HashMap::new(), HashSet::new());
        let mut args = std::env::args().skip(1);
        while let Some(a) = args.next() {
            match a.as_str() {
                "--out" => out = args.next(),
                "--bench" => {}
                s if with_value.contains(&s) => {
                    if let Some(v) = args.next() {
                        values.insert(s.to_string(), v);
                    }
                }
                s if switches.contains(&s) => {
                    on.insert(s.to_string());
                }
                s if s.starts_with("--") => eprintln!("ignoring {s}"),
                s => filters.push(s.to_string()),
            }
        }
        let target = Duration::from_millis(
            std::env::var("FASTPAIR_BENCH_TARGET_MS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(default_target_ms),
        );
        Args {
            filters,
            out,
            target,
            values,
            switches: on,
        }
    }

    /// The value of one of the bench's own options, parsed.
    pub fn value<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.values.get(name).and_then(|v| v.parse().ok())
    }

    /// Whether one of the bench's own flags was given.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.contains(name)
    }

    /// The corpus files whose names contain a filter (all without filters);
    /// panics with the way to get a corpus when none matches.
    pub fn columns(&self) -> Vec<PathBuf> {
        let files = fastpair::testing::corpus::files(&self.filters);
        assert!(
            !files.is_empty(),
            "no corpus column matches {:?} (FASTPAIR_CORPUS, else target/corpus: \
             bash ../shared/tools/corpus-unpack target/corpus)",
            self.filters
        );
        files
    }

    /// Writes the Markdown report where `--out`/`FASTPAIR_BENCH_OUT` asks.
    pub fn write_report(&self, md: &str) {
        if let Some(path) = &self.out {
            std::fs::write(path, md).unwrap_or_else(|e| panic!("writing {path}: {e}"));
            eprintln!("wrote {path}");
        }
    }
}

// ───────────────────────────── corpus ─────────────────────────────

/// One corpus column: values back to back plus `u32` offsets (Arrow layout).
pub struct Column {
    pub name: String,
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
}

impl Column {
    /// Reads a corpus file (one value per line; the corpus's line rules are
    /// `fastpair::testing::corpus::lines`).
    pub fn load(path: &Path) -> Column {
        let data =
            std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let mut bytes = Vec::with_capacity(data.len());
        let mut offsets = vec![0u32];
        for r in fastpair::testing::corpus::lines(&data) {
            bytes.extend_from_slice(r);
            offsets.push(bytes.len() as u32);
        }
        Column {
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            bytes,
            offsets,
        }
    }

    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn row(&self, i: usize) -> &[u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub fn refs(&self) -> Vec<&[u8]> {
        (0..self.rows()).map(|i| self.row(i)).collect()
    }

    pub fn max_row(&self) -> usize {
        self.offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }
}

// ───────────────────────────── timing ─────────────────────────────

/// Median and best of a series of timings, in seconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
}

impl Stat {
    fn of(mut t: Vec<f64>) -> Stat {
        t.sort_by(f64::total_cmp);
        let n = t.len();
        let median = if n % 2 == 1 {
            t[n / 2]
        } else {
            (t[n / 2 - 1] + t[n / 2]) / 2.0
        };
        Stat { median, min: t[0] }
    }
}

/// How a series is run: warm-up runs, fewest and most timed repetitions per
/// side, and the time to spend per side.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    pub warmup: usize,
    pub min_reps: usize,
    pub max_reps: usize,
    pub target: Duration,
}

impl Timing {
    pub fn new(warmup: usize, min_reps: usize, target: Duration) -> Timing {
        Timing {
            warmup,
            min_reps,
            max_reps: 1000,
            target,
        }
    }
}

/// Times every side alternately (one repetition each in turn) and returns
/// each side's median and best.
pub fn time_alternately(sides: &mut [&mut dyn FnMut()], t: Timing) -> Vec<Stat> {
    for _ in 0..t.warmup {
        for f in sides.iter_mut() {
            f();
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); sides.len()];
    let budget = t.target * sides.len().max(1) as u32;
    let start = Instant::now();
    while times[0].len() < t.min_reps || (start.elapsed() < budget && times[0].len() < t.max_reps) {
        for (f, v) in sides.iter_mut().zip(&mut times) {
            let s = Instant::now();
            f();
            v.push(s.elapsed().as_secs_f64());
        }
    }
    times.into_iter().map(Stat::of).collect()
}

/// Two sides, ours and theirs: [`time_alternately`] for the common case.
pub fn measure_pair(t: Timing, mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (Stat, Stat) {
    let s = time_alternately(&mut [&mut ours, &mut theirs], t);
    (s[0], s[1])
}

// ───────────────────────────── numbers ─────────────────────────────

pub fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

pub fn gbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

pub fn geomean(v: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        s += x.ln();
        n += 1;
    }
    (s / n.max(1) as f64).exp()
}

/// `n` pseudo-random row indexes below `rows` (xorshift64*; the same sequence
/// for every side given the same seed).
pub fn random_rows(rows: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_F491_4F6C_DD1D) % rows as u64) as usize
        })
        .collect()
}

/// `k` distinct row indexes below `rows`, sorted (a row selection).
pub fn random_sorted_rows(rows: usize, k: usize, seed: u64) -> Vec<usize> {
    let k = k.min(rows);
    let mut set = std::collections::BTreeSet::new();
    let mut draws = random_rows(rows, k, seed);
    let mut next_seed = seed;
    while set.len() < k {
        if draws.is_empty() {
            next_seed = next_seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
            draws = random_rows(rows, k - set.len(), next_seed);
        }
        set.insert(draws.pop().unwrap());
    }
    set.into_iter().collect()
}

// ───────────────────────────── the machine ─────────────────────────────

fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// One line naming what the numbers were measured on: date, CPU model,
/// logical CPUs, rayon threads, compiler and commit (marked when `src/` has
/// uncommitted changes), for the report's header.
pub fn machine_line() -> String {
    let dirty = !sh(
        "git",
        &["status", "--porcelain", "--untracked-files=no", "src"],
    )
    .is_empty();
    format!(
        "Measured {} on {} · {} logical CPUs ({} rayon threads) · {} · commit {}{}\n",
        sh("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        sh(
            "sh",
            &["-c", "lscpu | sed -n 's/^Model name: *//p' | head -1"]
        ),
        sh("nproc", &[]),
        rayon::current_num_threads(),
        sh("rustc", &["-V"]),
        sh("git", &["rev-parse", "--short", "HEAD"]),
        if dirty {
            " (src/ has uncommitted changes)"
        } else {
            ""
        }
    )
}
