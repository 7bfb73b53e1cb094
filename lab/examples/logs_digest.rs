//! A check that a log-writer change kept the bytes (issue 20): per corpus
//! column, the FNV-1a digest and size of the `encode_column` payload
//! (default `LogOptions`), of the whole file under `LogTemplates::Always`
//! and of the whole file under `LogTemplates::Auto`, and the thread CPU
//! seconds of the payload encode. Run it before and after a change and
//! `diff` the outputs (the seconds column aside).
//!
//! ```text
//! cargo run --release -p fastpair-lab --example logs_digest -- [FILTER...]   (default: loghub)
//! LOGS_DIGEST_FILES=0   payload digests only (no Always / Auto files)
//! LOGS_DIGEST_AUTO=1    the `Auto` file only (the whole corpus: `-- ""`)
//! ```

use fastpair::logs::{encode_column, LogOptions};
use fastpair::write::write_to_vec;
use fastpair::{LogTemplates, WriterOptions};

/// Thread CPU seconds (the build machine is shared).
fn cpu() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn fnv(b: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &x in b {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn main() {
    let mut filters: Vec<String> = std::env::args().skip(1).collect();
    if filters.is_empty() {
        filters.push("loghub".into());
    }
    let files_too = std::env::var("LOGS_DIGEST_FILES").map_or(true, |v| v != "0");
    let auto_only = std::env::var("LOGS_DIGEST_AUTO").is_ok_and(|v| v == "1");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let mut total = 0f64;
    for f in fastpair::testing::corpus::files(&filters) {
        let data = std::fs::read(&f).unwrap();
        let rows = fastpair::testing::corpus::lines(&data);
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let c0 = cpu();
        if !auto_only {
            let payload = encode_column(&rows, &LogOptions::default());
            print!("{name} payload {} {:016x}", payload.len(), fnv(&payload));
        } else {
            print!("{name}");
        }
        let s = cpu() - c0;
        total += s;
        if files_too {
            let sides: &[(&str, LogTemplates)] = if auto_only {
                &[("auto", LogTemplates::Auto)]
            } else {
                &[
                    ("always", LogTemplates::Always),
                    ("auto", LogTemplates::Auto),
                ]
            };
            for &(label, lt) in sides {
                let file = pool
                    .install(|| {
                        write_to_vec(
                            rows.iter().map(|r| Some(*r)),
                            WriterOptions::default().with_log_templates(lt),
                        )
                    })
                    .unwrap();
                print!(" {label} {} {:016x}", file.len(), fnv(&file));
            }
        }
        println!(" # {s:.3} s");
    }
    println!("# payload encode total {total:.3} s (thread CPU)");
}
