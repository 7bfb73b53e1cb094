//! The `fastpair` binary end to end: round trips through files and pipes,
//! `get`, `inspect`, `scan`, and the one-line errors.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_fastpair");
const TESTDATA: &str = "testdata/dbtext_movies_20k.txt";

/// A scratch folder under the system temp dir, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("fastpair-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str]) -> Output {
    run_stdin(args, None)
}

fn run_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut c = Command::new(BIN)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fastpair");
    if let Some(data) = stdin {
        let mut i = c.stdin.take().unwrap();
        let data = data.to_vec();
        // Feed stdin from a thread so a full stdout pipe cannot deadlock us.
        std::thread::spawn(move || {
            let _ = i.write_all(&data);
        });
    }
    c.wait_with_output().unwrap()
}

fn ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(
        o.status.success(),
        "fastpair {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Asserts failure with exactly one line on stderr, `fastpair: error: ...`;
/// returns that line.
fn fails(o: &Output) -> String {
    assert!(!o.status.success(), "expected failure");
    assert_ne!(o.status.code(), Some(101), "panicked");
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(e.lines().count(), 1, "one line of error, got {e:?}");
    assert!(e.starts_with("fastpair: error: "), "{e:?}");
    assert!(!e.contains("panicked"), "{e:?}");
    e
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The corpus, unpacked by ../shared/tools/corpus-unpack into target/corpus.
fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new("target/corpus");
    if !dir.exists() {
        let tool = Path::new("../shared/tools/corpus-unpack");
        if tool.exists() {
            let _ = Command::new(tool).arg("target/corpus").status();
        }
    }
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn roundtrip_file(input: &Path, extra: &[&str], dir: &Scratch) {
    let fpc = dir.path("col.fpc");
    let back = dir.path("col.txt");
    let mut args = vec!["compress", s(input), "-o", s(&fpc), "--quiet"];
    args.extend_from_slice(extra);
    ok(&args);
    let mut args = vec!["decompress", s(&fpc), "-o", s(&back)];
    if extra.contains(&"--nul") {
        args.push("--nul");
    }
    ok(&args);
    let want = std::fs::read(input).unwrap();
    let got = std::fs::read(&back).unwrap();
    assert!(
        want == got,
        "{} {extra:?}: round trip differs ({} vs {} bytes)",
        input.display(),
        want.len(),
        got.len()
    );
}

#[test]
fn corpus_roundtrip_through_cli_both_codecs() {
    let files = corpus_files();
    if files.is_empty() {
        eprintln!(
            "NOTICE: corpus not found (target/corpus, ../shared/tools/corpus-unpack); skipping"
        );
        return;
    }
    let dir = Scratch::new("corpus");
    for f in &files {
        for codec in ["onpair16", "onpair12"] {
            roundtrip_file(f, &["--codec", codec], &dir);
        }
    }
    eprintln!(
        "{} corpus columns round-tripped with both codecs",
        files.len()
    );
}

#[test]
fn testdata_roundtrip_with_small_chunks() {
    let dir = Scratch::new("chunks");
    let input = Path::new(TESTDATA);
    roundtrip_file(input, &["--chunk-rows", "3000"], &dir);
    roundtrip_file(
        input,
        &[
            "--chunk-rows",
            "777",
            "--per-chunk-dict",
            "--codec",
            "onpair12",
        ],
        &dir,
    );
    let o = ok(&["inspect", s(&dir.path("col.fpc"))]);
    let text = String::from_utf8(o.stdout).unwrap();
    // 20,000 rows in chunks of 777: 26 chunks, each with its own dictionary.
    assert!(text.contains("chunks             26"), "{text}");
    assert!(text.contains("dictionaries       26"), "{text}");
}

/// Values with every byte but NUL, including newlines, CR, 0xFF, empty and
/// long values.
fn arbitrary_values() -> Vec<Vec<u8>> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut v = vec![Vec::new(), b"\n".to_vec(), b"\r\n".to_vec(), vec![0xFF; 3]];
    for i in 0..3000 {
        let len = match i % 10 {
            0 => 0,
            1 => 5000,
            _ => (next() % 60) as usize,
        };
        let val: Vec<u8> = (0..len).map(|_| (next() % 255 + 1) as u8).collect();
        v.push(val);
    }
    v.push(Vec::new());
    v
}

#[test]
fn nul_roundtrip_arbitrary_bytes_files_and_pipes() {
    let dir = Scratch::new("nul");
    let values = arbitrary_values();
    let mut input = Vec::new();
    for v in &values {
        input.extend_from_slice(v);
        input.push(0);
    }
    let raw = dir.path("in.bin");
    std::fs::write(&raw, &input).unwrap();
    for codec in ["onpair16", "onpair12", "fsst12", "auto"] {
        roundtrip_file(&raw, &["--nul", "--codec", codec], &dir);
    }
    // Stdin to stdout through a pipe, with `-`.
    let c = run_stdin(&["compress", "--nul", "-", "-o", "-", "-q"], Some(&input));
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let d = run_stdin(&["decompress", "--nul", "-", "-o", "-"], Some(&c.stdout));
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    assert!(d.stdout == input, "pipe round trip differs");
    // Every row through `get --nul`.
    let fpc = dir.path("col.fpc");
    std::fs::write(&fpc, &c.stdout).unwrap();
    let rows: Vec<String> = (0..values.len()).rev().map(|i| i.to_string()).collect();
    let mut args = vec!["get", "--nul", s(&fpc)];
    args.extend(rows.iter().map(|r| r.as_str()));
    let o = ok(&args);
    let mut want = Vec::new();
    for v in values.iter().rev() {
        want.extend_from_slice(v);
        want.push(0);
    }
    assert!(o.stdout == want, "get --nul differs");
    // Values with newlines cannot be written one per line.
    let e = fails(&run(&["decompress", s(&fpc), "-o", "-"]));
    assert!(e.contains("newline") && e.contains("--nul"), "{e}");
}

#[test]
fn lines_final_newline_and_empty_input() {
    let dir = Scratch::new("lines");
    let cases: &[(&[u8], u64, &[u8])] = &[
        (b"", 0, b""),
        (b"\n", 1, b"\n"),
        (b"a\nb", 2, b"a\nb\n"),
        (b"a\nb\n", 2, b"a\nb\n"),
        (b"a\n\n\nb\n\n", 5, b"a\n\n\nb\n\n"),
        (b"x\r\n", 1, b"x\r\n"),
    ];
    for &(input, rows, back) in cases {
        let f = dir.path("in.txt");
        std::fs::write(&f, input).unwrap();
        let fpc = dir.path("x.fpc");
        ok(&["compress", s(&f), "-o", s(&fpc), "-q"]);
        let o = ok(&["inspect", s(&fpc)]);
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(
            text.contains(&format!("rows               {rows} (0 null)")),
            "{input:?}: {text}"
        );
        let o = ok(&["decompress", s(&fpc), "-o", "-"]);
        assert_eq!(o.stdout, back, "{input:?}");
    }
}

#[test]
fn get_prints_rows_and_rejects_bad_rows() {
    let dir = Scratch::new("get");
    let fpc = dir.path("m.fpc");
    ok(&[
        "compress",
        TESTDATA,
        "-o",
        s(&fpc),
        "--chunk-rows",
        "1000",
        "-q",
    ]);
    let lines: Vec<String> = std::fs::read_to_string(TESTDATA)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let rows = [0usize, 999, 1000, 1001, 12345, 19999, 0];
    let args: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    let mut a = vec!["get", s(&fpc)];
    a.extend(args.iter().map(|x| x.as_str()));
    let o = ok(&a);
    let want: String = rows.iter().map(|&r| format!("{}\n", lines[r])).collect();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), want);

    let o = run(&["get", s(&fpc), "5", "20000"]);
    let e = fails(&o);
    assert!(e.contains("row 20000") && e.contains("20,000 rows"), "{e}");
    assert!(o.stdout.is_empty(), "nothing printed before the error");
    fails(&run(&["get", s(&fpc), "-3"]));
    fails(&run(&["get", s(&fpc), "abc"]));
}

#[test]
fn inspect_reports_sizes_ratios_and_dictionaries() {
    let dir = Scratch::new("inspect");
    let fpc = dir.path("m.fpc");
    ok(&[
        "compress",
        TESTDATA,
        "-o",
        s(&fpc),
        "--codec",
        "onpair12",
        "-q",
    ]);
    let o = ok(&["inspect", s(&fpc)]);
    let text = String::from_utf8(o.stdout).unwrap();
    for want in [
        "rows               20,000 (0 null)",
        "value bytes        405,772",
        "compression ratio",
        "without row offsets",
        "row boundaries",
        "onpair12",
        "mean tok",
        "<=8 B",
        "chunks             1",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // The two ratios: value bytes / file bytes, and without row offsets.
    let file_bytes = std::fs::metadata(&fpc).unwrap().len() as f64;
    let ratio: f64 = text
        .lines()
        .find(|l| l.starts_with("compression ratio"))
        .and_then(|l| l.split_whitespace().nth(2))
        .unwrap()
        .parse()
        .unwrap();
    assert!((ratio - 405_772.0 / file_bytes).abs() < 1e-3, "{ratio}");
    let without: f64 = text
        .lines()
        .find(|l| l.contains("without row offsets"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(without > ratio, "{without} vs {ratio}");
}

#[test]
fn scan_reports_throughput() {
    let dir = Scratch::new("scan");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let o = ok(&["scan", "--cpu", "--iters", "2", s(&fpc)]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("GB/s") && text.contains("cpu"), "{text}");
    // Without a flag: the GPU where one is usable, else the CPU.
    let o = ok(&["scan", s(&fpc)]);
    assert!(String::from_utf8(o.stdout).unwrap().contains("GB/s"));
}

#[test]
fn errors_are_one_line_for_missing_and_corrupt_files() {
    let dir = Scratch::new("errors");
    let missing = dir.path("nope.fpc");
    for cmd in [
        vec!["inspect", s(&missing)],
        vec!["get", s(&missing), "0"],
        vec!["scan", "--cpu", s(&missing)],
        vec!["decompress", s(&missing), "-o", "-"],
        vec!["compress", s(&missing), "-o", s(&dir.path("out.fpc"))],
    ] {
        let e = fails(&run(&cmd));
        assert!(e.contains("nope.fpc"), "{e}");
    }
    assert!(!dir.path("out.fpc").exists());

    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let good = std::fs::read(&fpc).unwrap();
    let bad = dir.path("bad.fpc");
    // Truncated, and single bytes flipped in the header, a chunk, the
    // dictionary/footer region and the tail.
    let mut variants = vec![
        good[..good.len() / 2].to_vec(),
        b"not a fastpair file".to_vec(),
    ];
    for at in [
        0,
        20,
        good.len() / 3,
        good.len() - 200,
        good.len() - 30,
        good.len() - 1,
    ] {
        let mut b = good.clone();
        b[at] ^= 0x40;
        variants.push(b);
    }
    for b in variants {
        std::fs::write(&bad, &b).unwrap();
        for cmd in [
            vec!["inspect", s(&bad)],
            vec!["decompress", s(&bad), "-o", "-"],
            vec!["scan", "--cpu", s(&bad)],
        ] {
            let e = fails(&run(&cmd));
            assert!(e.contains("bad.fpc"), "{e}");
        }
    }
    // A bad argument is an error too (clap's own message).
    let o = run(&["compress", TESTDATA]);
    assert!(!o.status.success());
}

#[test]
fn failed_compress_leaves_existing_output_untouched() {
    let dir = Scratch::new("atomic");
    let out = dir.path("out.fpc");
    std::fs::write(&out, b"precious").unwrap();
    // Missing input: fails before anything is written.
    fails(&run(&[
        "compress",
        s(&dir.path("missing.txt")),
        "-o",
        s(&out),
    ]));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // Input that fails while reading (a directory): the temporary file is
    // created, then removed.
    let sub = dir.path("subdir");
    std::fs::create_dir(&sub).unwrap();
    fails(&run(&["compress", s(&sub), "-o", s(&out)]));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // Same for decompress of a corrupt file.
    let bad = dir.path("bad.fpc");
    std::fs::write(&bad, b"FASTPAIR but not really a file at all").unwrap();
    fails(&run(&["decompress", s(&bad), "-o", s(&out)]));
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    // No temporary files left behind.
    let left: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A successful compress does replace it.
    ok(&["compress", TESTDATA, "-o", s(&out), "-q"]);
    assert_ne!(std::fs::read(&out).unwrap(), b"precious");
}

#[test]
fn closed_stdout_exits_quietly() {
    let dir = Scratch::new("pipe");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let mut c = Command::new(BIN)
        .args(["decompress", s(&fpc), "-o", "-"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 10];
    c.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(c.stdout.take());
    let o = c.wait_with_output().unwrap();
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{:?}", o.status);
}

/// `--codec auto` is the default and says what it chose; every codec name parses.
#[test]
fn codec_auto_is_default_and_reports_its_choice() {
    let dir = Scratch::new("auto");
    let input = dir.path("in.txt");
    let text: String = (0..3000)
        .map(|i| {
            format!(
                "2024-05-{:02} INFO worker-{} finished job {}\n",
                i % 28 + 1,
                i % 7,
                i
            )
        })
        .collect();
    std::fs::write(&input, text).unwrap();
    let out = dir.path("out.fpc");
    let c = run_stdin(
        &[
            "compress",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let err = String::from_utf8_lossy(&c.stderr);
    assert!(
        err.contains("dictionary 0: ") && err.contains("fsst12 ") && err.contains("onpair12 "),
        "auto reports its estimates: {err}"
    );
    let i = run_stdin(&["inspect", out.to_str().unwrap()], None);
    assert!(i.status.success());
    assert!(String::from_utf8_lossy(&i.stdout).contains("codec "));
    let bad = run_stdin(
        &[
            "compress",
            "--codec",
            "zstd",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert!(!bad.status.success());
}
