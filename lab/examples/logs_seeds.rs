//! Writes the seed inputs of the `logs_open` fuzz target (fuzz/seeds/logs_open/):
//! the first rows of a few log columns (text and JSON lines) encoded by the
//! template codec, small enough for the fuzzer to mutate. They are payloads
//! of the current format (version 8: pools of form 2, delta and runs
//! integer blocks); the `v7-*`, `v6-*` and `v5-*` seeds beside them are the
//! same rows as versions 7, 6 and 5 wrote them (no runs blocks; no delta
//! blocks before 7; form 1 in version 5), kept so that the older forms'
//! parsers are fuzzed too.
//!
//!   cargo run --release -p fastpair-lab --example logs_seeds   (corpus in target/corpus)

use fastpair::logs::{encode_column, LogOptions};
use fastpair::testing::corpus;

const COLUMNS: &[(&str, usize)] = &[
    ("loghub_Apache_2k", 150),
    ("loghub_HDFS_2k", 150),
    ("loghub_OpenSSH_2k", 200),
    ("loghub_Hadoop_2k_json", 60),
];

fn main() {
    let out = std::path::Path::new("fuzz/seeds/logs_open");
    std::fs::create_dir_all(out).expect("seed folder");
    for &(name, rows) in COLUMNS {
        let text = corpus::column(name).unwrap_or_else(|| panic!("{name} not in the corpus"));
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
