//! Replays, without libFuzzer, every minimized crasher in fuzz/regressions/
//! and every seed (fuzz/seeds/, and testdata/ for the readers) through the
//! same logic as the fuzz targets (`fastpair::testing::fuzz_*`).

use std::path::{Path, PathBuf};

use fastpair::testing;

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.is_file()
                        && !p
                            .file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with('.') || n.ends_with(".md"))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn replay(target: &str, seeds: &[&str], f: fn(&[u8])) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![
        root.join("fuzz/regressions").join(target),
        root.join("fuzz/seeds").join(target),
    ];
    dirs.extend(seeds.iter().map(|s| root.join(s)));
    let mut n = 0;
    for d in dirs {
        for p in files(&d) {
            let data = std::fs::read(&p).unwrap();
            eprintln!("{target}: {}", p.display());
            f(&data);
            n += 1;
        }
    }
    assert!(n > 0, "{target}: nothing to replay");
}

const READER_SEEDS: &[&str] = &["testdata/golden", "testdata/corrupt"];

#[test]
fn open_any() {
    replay("open_any", READER_SEEDS, testing::fuzz_open_any);
}

#[test]
fn open_mutated() {
    replay("open_mutated", READER_SEEDS, testing::fuzz_open_mutated);
}

#[test]
fn roundtrip() {
    replay("roundtrip", &[], testing::fuzz_roundtrip);
}

#[test]
fn decode_parity() {
    replay("decode_parity", &[], testing::fuzz_decode_parity);
}

#[test]
fn logs_open() {
    replay("logs_open", &[], testing::fuzz_logs_open);
}

#[test]
fn logs_roundtrip() {
    replay("logs_roundtrip", &[], testing::fuzz_logs_roundtrip);
}
