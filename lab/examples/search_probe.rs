//! Search probe (issue 21): one column, one predicate, the search repeated
//! on one thread with its phases timed, for profiling (`perf record`).
//!
//! `cargo run --release -p fastpair-lab --example search_probe -- COLUMN NEEDLE [KIND] [REPS]`
//! KIND: contains (default), equals, prefix, like, in (values split at
//! newlines), any (substrings split at newlines); REPS default 50.
//! `FASTPAIR_PROBE_LOGS=1` writes the column as log-template chunks.

use std::time::Instant;

use fastpair::search::{Predicate, SearchOptions, Searcher, Strategy};
use fastpair::write::write_to_vec;
use fastpair::{Reader, WriterOptions};

/// The calling thread's CPU time in seconds.
fn thread_cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a
    // constant every Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The predicate the arguments name (NEEDLE, KIND).
fn predicate(a: &[String]) -> Predicate {
    let lit = a[1].as_bytes().to_vec();
    match a.get(2).map(String::as_str) {
        Some("equals") => Predicate::equals(lit),
        Some("prefix") => Predicate::prefix(lit),
        Some("like") => Predicate::like(lit),
        // An IN list: the values separated by newlines.
        Some("in") => Predicate::in_list(lit.split(|&c| c == b'\n').map(<[u8]>::to_vec)),
        // Any of several substrings (split at newlines).
        Some("any") => Predicate::contains_any(lit.split(|&c| c == b'\n').map(<[u8]>::to_vec)),
        _ => Predicate::contains(lit),
    }
}

/// Each rep: a fresh reader over the file's bytes and its first search
/// (`Strategy::Auto`) on one thread; the minimum and median, thread CPU.
fn fresh(file: &[u8], a: &[String]) {
    let p = predicate(a);
    let reps: usize = a.get(3).and_then(|x| x.parse().ok()).unwrap_or(50);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let mut times = Vec::with_capacity(reps);
    let mut n = 0;
    for _ in 0..reps {
        let bytes = file.to_vec();
        let (k, secs) = one.install(|| {
            let t = thread_cpu();
            let r = Reader::from_bytes(bytes).unwrap();
            let k = Searcher::new(&r).search(&p).unwrap().count();
            (k, thread_cpu() - t)
        });
        n = k;
        times.push(secs);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "fresh reader + first search: {n} rows, min {:.3} ms, median {:.3} ms",
        times[0] * 1e3,
        times[reps / 2] * 1e3
    );
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let path = fastpair::testing::corpus::dir().join(format!("{}.txt", a[0]));
    let text = std::fs::read(&path).unwrap();
    let rows = fastpair::testing::corpus::lines(&text);
    // FASTPAIR_PROBE_LOGS=1: the column as log-template chunks.
    let opts = if std::env::var_os("FASTPAIR_PROBE_LOGS").is_some() {
        WriterOptions::default().with_log_templates(fastpair::LogTemplates::Always)
    } else {
        WriterOptions::default()
    };
    let file = write_to_vec(rows.iter().map(|r| Some(*r)), opts).unwrap();
    // `FASTPAIR_PROBE_FRESH=1`: every search on a fresh reader (its chunks
    // validated on first touch, as a new process's first query is), Auto
    // only, timed as a whole; then exit.
    if std::env::var_os("FASTPAIR_PROBE_FRESH").is_some() {
        fresh(&file, &a);
        return;
    }
    let r = Reader::from_bytes(file).unwrap();
    let p = predicate(&a);
    let reps: usize = a.get(3).and_then(|x| x.parse().ok()).unwrap_or(50);
    let searcher = Searcher::new(&r);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let d = &r.dictionaries().unwrap()[r.chunk(0).unwrap().entry().dict as usize];
    println!(
        "{} rows, {} chunks, dict 0: {:?} {} tokens, codes {}",
        r.rows(),
        r.num_chunks(),
        d.codec(),
        d.num_tokens(),
        r.chunk(0).unwrap().entry().codes
    );
    // Both strategies alternately, one run each in turn; the minimum of
    // each (the machine is shared and noisy), in the pool thread's CPU time.
    let strategies = [
        Strategy::Auto,
        Strategy::Decode,
        Strategy::Tokens,
        Strategy::Sparse,
        Strategy::Sure,
    ];
    let mut best = [f64::MAX; 5];
    let mut counts = [0u64; 5];
    for _ in 0..reps {
        // `FASTPAIR_PROBE_AUTO=1`: Auto only (profiles of its path alone);
        // `FASTPAIR_PROBE_ONLY=K`: strategy K of the four only.
        let only: Option<usize> = match std::env::var("FASTPAIR_PROBE_ONLY") {
            Ok(k) => k.parse().ok(),
            Err(_) => std::env::var_os("FASTPAIR_PROBE_AUTO").map(|_| 0),
        };
        for (k, &strategy) in strategies.iter().enumerate() {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            let o = SearchOptions { strategy };
            // The pool thread's CPU time (as the search bench's one-thread
            // sides): waking the pool and other processes are not counted.
            let (n, secs) = one.install(|| {
                let t = thread_cpu();
                let n = searcher.search_with(&p, o).unwrap().count();
                (n, thread_cpu() - t)
            });
            counts[k] = n;
            best[k] = best[k].min(secs);
        }
    }
    // The bench's peer: the whole column decoded by `read_all`, then one
    // `memmem` pass over the values mapped to rows (contains only);
    // `FASTPAIR_PROBE_ONLY=9` times it alone.
    let only_mm = std::env::var("FASTPAIR_PROBE_ONLY").ok();
    if only_mm
        .as_deref()
        .map_or(std::env::var_os("FASTPAIR_PROBE_AUTO").is_none(), |o| {
            o == "4"
        })
    {
        let lit = a[1].as_bytes();
        let finder = memchr::memmem::Finder::new(lit);
        let mut best_mm = f64::MAX;
        let mut hits = 0usize;
        for _ in 0..reps {
            let (h, secs) = one.install(|| {
                let t = thread_cpu();
                let col = r.read_all().unwrap();
                let (v, o) = (&col.values, &col.offsets);
                let n = o.len() - 1;
                let (mut at, mut row, mut h) = (0usize, 0usize, 0usize);
                while let Some(p) = finder.find(&v[at..]) {
                    let pos = at + p;
                    while o[row + 1] as usize <= pos {
                        row += 1;
                    }
                    if pos + lit.len() <= o[row + 1] as usize {
                        h += 1;
                        at = o[row + 1] as usize;
                        row += 1;
                        if row >= n {
                            break;
                        }
                    } else {
                        at = pos + 1;
                    }
                }
                (h, thread_cpu() - t)
            });
            hits = h;
            best_mm = best_mm.min(secs);
        }
        println!("decode+memmem: {hits} rows, min {:.3} ms", best_mm * 1e3);
    }
    for k in 0..strategies.len() {
        println!(
            "{:?}: {} rows, min {:.3} ms",
            strategies[k],
            counts[k],
            best[k] * 1e3
        );
    }
    let t = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(fastpair::search::Compiled::new(&p).unwrap());
    }
    println!(
        "compile: {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3 / reps as f64
    );
    let t = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(r.chunk(0).unwrap().row_byte_bounds().unwrap());
    }
    println!(
        "row byte bounds: {:.3} ms",
        t.elapsed().as_secs_f64() * 1e3 / reps as f64
    );
    let _ = searcher.search(&p);
}
