//! Does splitting a small read over the pool pay when the caller is outside
//! it? `split_probe FILE.fpc [ROWS...] [--gap-us N] [--reps N]` reads rows
//! `0..ROWS` (default: the whole column) two ways, taking turns in one
//! process with `gap-us` of busy work between calls (a caller that does
//! something else between reads, so pool workers may fall asleep):
//! - pool: `read_range` from the main thread, outside the global pool, as a
//!   library user calls it (parallel tasks go to the pool; rayon's caller
//!   waits and does not help);
//! - caller: the same call from a second thread that a one-thread pool was
//!   built on (`use_current_thread`), so the decode runs on that thread,
//!   sequentially. The two threads take turns through channels (outside
//!   the timed calls); only one reads at a time.
//!
//! Prints min / p50 / p90 µs of each.
use std::time::{Duration, Instant};

use fastpair::Reader;

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}

fn summary(mut ts: Vec<f64>) -> String {
    ts.sort_by(f64::total_cmp);
    let at = |q: f64| ts[((ts.len() - 1) as f64 * q) as usize];
    format!(
        "min {:7.1} p50 {:7.1} p90 {:7.1}",
        at(0.0),
        at(0.5),
        at(0.9)
    )
}

fn main() -> fastpair::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: split_probe FILE.fpc [ROWS...] [--gap-us N] [--reps N]");
    let (mut gap, mut reps, mut sizes) = (50u64, 2000usize, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--gap-us" => {
                gap = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--gap-us N")
            }
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            n => sizes.push(n.parse::<u64>().expect("ROWS")),
        }
    }
    let r = std::sync::Arc::new(Reader::open(&path)?);
    if sizes.is_empty() {
        sizes.push(r.rows());
    }
    println!(
        "{path}: global pool {} threads, gap {gap} us, {reps} calls each",
        rayon::current_num_threads()
    );
    // The caller-side reader: a thread of its own, registered as the only
    // worker of a one-thread pool, answering each request with its time.
    let (ask, asked) = std::sync::mpsc::channel::<std::ops::Range<u64>>();
    let (tell, told) = std::sync::mpsc::channel::<f64>();
    let rc = r.clone();
    let gap_d = Duration::from_micros(gap);
    std::thread::spawn(move || {
        let local = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .use_current_thread()
            .build()
            .expect("a one-thread pool on this thread");
        local.install(|| {
            for rows in asked {
                spin(gap_d);
                let t = Instant::now();
                let c = rc.read_range(rows).expect("read_range");
                let us = t.elapsed().as_secs_f64() * 1e6;
                drop(c);
                tell.send(us).expect("reply");
            }
        });
    });
    for n in sizes {
        let rows = 0..n.min(r.rows());
        r.read_range(rows.clone())?; // validates the chunks touched
        let (mut pool, mut caller) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            spin(gap_d);
            let t = Instant::now();
            let c = r.read_range(rows.clone())?;
            pool.push(t.elapsed().as_secs_f64() * 1e6);
            drop(c);
            ask.send(rows.clone()).expect("ask");
            caller.push(told.recv().expect("answer"));
        }
        println!("{:>8} rows  pool:   {}", rows.end, summary(pool));
        println!("{:>8} rows  caller: {}", rows.end, summary(caller));
    }
    Ok(())
}
