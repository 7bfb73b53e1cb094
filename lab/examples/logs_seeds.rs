//! Writes the seed inputs of the `logs_open` fuzz target (fuzz/seeds/logs_open/):
//! the first rows of a few log columns (text and JSON lines) encoded by the
//! template codec, small enough for the fuzzer to mutate. They are payloads
//! of the current format (version 11: open sections, resident row indexes
//! and columns where smaller, pools of form 2,
//! delta, runs and stepped runs integer blocks), one generated column of stack traces
//! (frames whose dictionary ids count up by one: stepped runs blocks), and
//! one block of access-log lines cut at blanks (testdata/golden/
//! logs_payload_access.rows: front-coded dictionaries); the
//! `v10-*`, `v9-*`, `v8-*`, `v7-*`, `v6-*` and `v5-*` seeds beside them are
//! the same rows as versions 10, 9, 8, 7, 6 and 5 wrote them (no resident
//! parts in 10; no open section before it; no stepped runs before 9; no
//! runs blocks before 8; no delta blocks before 7; form 1 in version 5),
//! kept so that the older forms' parsers are fuzzed too.
//!
//!   cargo run --release -p fastpair-lab --example logs_seeds   (corpus in target/corpus)

use fastpair::logs::{encode, encode_column, LogOptions};
use fastpair::testing::corpus;

const COLUMNS: &[(&str, usize)] = &[
    ("loghub_Apache_2k", 150),
    ("loghub_HDFS_2k", 150),
    ("loghub_OpenSSH_2k", 200),
    ("loghub_Hadoop_2k_json", 60),
];

/// 40 exceptions, each a message and its stack trace of 6 to 12 frames
/// out of a pool of 24 (a trace logged again repeats its frames in order).
fn traces() -> Vec<u8> {
    let mut out = Vec::new();
    for e in 0..40u32 {
        out.extend_from_slice(
            format!("ERROR [worker-{}] request {} failed\n", e % 3, 9000 + e).as_bytes(),
        );
        let (first, len) = (e % 4 * 6, 6 + e % 7);
        for f in first..first + len {
            let f = f % 24;
            out.extend_from_slice(
                format!(
                    "\tat org.example.svc.Stage{f}.run(Stage{f}.java:{})\n",
                    40 + f * 7
                )
                .as_bytes(),
            );
        }
    }
    out
}

fn main() {
    let out = std::path::Path::new("fuzz/seeds/logs_open");
    std::fs::create_dir_all(out).expect("seed folder");
    let access = std::fs::read("testdata/golden/logs_payload_access.rows").expect("access rows");
    let lines: Vec<&[u8]> = corpus::lines(&access).into_iter().take(150).collect();
    let coarse = LogOptions {
        coarse: true,
        ..Default::default()
    };
    let bytes = encode(&lines, &coarse);
    let file = out.join("access-150-coarse");
    std::fs::write(&file, &bytes).expect("write seed");
    println!("{}: {} bytes", file.display(), bytes.len());
    let generated = traces();
    for &(name, rows) in COLUMNS.iter().chain(&[("traces", 400)]) {
        let text = if name == "traces" {
            generated.clone()
        } else {
            corpus::column(name).unwrap_or_else(|| panic!("{name} not in the corpus"))
        };
        let lines: Vec<&[u8]> = corpus::lines(&text).into_iter().take(rows).collect();
        for typed in [true, false] {
            let opts = LogOptions {
                typed,
                ..Default::default()
            };
            let bytes = encode_column(&lines, &opts);
            let file = out.join(format!("{name}-{rows}-{}", if typed { "a" } else { "b" }));
            std::fs::write(&file, &bytes).expect("write seed");
            println!("{}: {} bytes", file.display(), bytes.len());
        }
    }
}
