//! The `fastpair` binary end to end: round trips through files and pipes,
//! `get`, `inspect`, `scan`, and the one-line errors.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

#[path = "support/cli.rs"]
mod support;
use support::{fails, ok, run, run_stdin, Scratch, BIN};

const TESTDATA: &str = "testdata/dbtext_movies_20k.txt";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[path = "support/corpus.rs"]
mod corpus;

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
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without one (tests/support/corpus.rs).
    let cols = corpus::columns(&[]);
    assert!(!cols.is_empty(), "no columns to check");
    let dir = Scratch::new("cli", "corpus");
    let input = dir.path("in.txt");
    for c in &cols {
        std::fs::write(&input, &c.text).unwrap();
        for codec in ["onpair16", "onpair12"] {
            roundtrip_file(&input, &["--codec", codec], &dir);
        }
    }
    eprintln!("{} columns round-tripped with both codecs", cols.len());
}

#[test]
fn testdata_roundtrip_with_small_chunks() {
    let dir = Scratch::new("cli", "chunks");
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
    let dir = Scratch::new("cli", "nul");
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
    let dir = Scratch::new("cli", "lines");
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
    let dir = Scratch::new("cli", "get");
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
    let dir = Scratch::new("cli", "inspect");
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
        "front-coded",
        "chunks             1",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    // --dict-planes always: the dictionary stores its planes (format
    // version 5, spec/FORMAT.md §4.5), the rows are the same.
    let planes = dir.path("p.fpc");
    ok(&[
        "compress",
        TESTDATA,
        "-o",
        s(&planes),
        "--codec",
        "onpair12",
        "--dict-planes",
        "always",
        "-q",
    ]);
    let p = String::from_utf8(ok(&["inspect", s(&planes)]).stdout).unwrap();
    assert!(p.contains("%  planes") && !p.contains("front-coded"), "{p}");
    assert_eq!(
        ok(&["decompress", s(&planes), "-o", "-"]).stdout,
        ok(&["decompress", s(&fpc), "-o", "-"]).stdout
    );
    assert!(std::fs::metadata(&planes).unwrap().len() > std::fs::metadata(&fpc).unwrap().len());
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

/// Issue 20: `inspect` shows a log-template file's templates (count, the
/// top ones with their slot types), its slot types and the bytes of each
/// part of the payloads, and the parts add up to the payload.
#[test]
fn inspect_shows_log_templates_slot_types_and_parts() {
    let dir = Scratch::new("cli", "inspect-logs");
    let txt = dir.path("log.txt");
    let mut lines = String::new();
    for i in 0..3000u32 {
        lines += &match i % 3 {
            0 => format!(
                "Accepted password for user{} from 10.0.{}.{} port {}\n",
                i % 7,
                i % 256,
                i % 13,
                1000 + i
            ),
            1 => format!("session opened for user root by (uid={})\n", i % 5),
            _ => format!("kernel: device {:x} reset, code {}\n", 0xbeef + i, i * 3),
        };
    }
    std::fs::write(&txt, lines).unwrap();
    let fpc = dir.path("log.fpc");
    let o = ok(&["compress", s(&txt), "-o", s(&fpc), "--codec", "logs"]);
    // A file of log chunks alone stores no dictionary (format 11, §3): the
    // report says so rather than quoting the trained one's estimates.
    let report = String::from_utf8(o.stderr).unwrap();
    assert!(
        report.contains("0 dictionaries")
            && report.contains("dictionary 0: ")
            && report.contains("not stored"),
        "{report}"
    );
    let text = String::from_utf8(ok(&["inspect", s(&fpc)]).stdout).unwrap();
    let line = |p: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(p))
            .unwrap_or_else(|| panic!("no line {p:?} in\n{text}"))
            .to_string()
    };
    let head = line("log templates");
    assert!(head.contains("1 chunks"), "{head}");
    // Parts, and they add up to the payload.
    let num = |l: &str, k: usize| -> u64 {
        l.split_whitespace()
            .nth(k)
            .unwrap()
            .replace(',', "")
            .parse()
            .unwrap()
    };
    let payload = num(&head, 5);
    let parts: u64 = [
        "meta",
        "row index",
        "integer columns",
        "text pool",
        "framing",
    ]
    .iter()
    .map(|p| {
        let l = line(p);
        num(&l, p.split(' ').count())
    })
    .sum();
    assert_eq!(parts, payload, "{text}");
    // The pools' size and code width (format 6: the pool's own, at most 12 bits).
    let pool = line("text pool");
    assert!(
        pool.contains("learned tokens") && pool.contains("-bit codes"),
        "{pool}"
    );
    // The file's breakdown names the payloads (they are not "other", the
    // header, footer, section headers and padding: a few hundred bytes for
    // one chunk; the payload alone is 3.6 KB here).
    assert_eq!(num(&line("log payloads"), 2), payload, "{text}");
    let other = num(&line("other"), 1);
    assert!(other < 512, "other {other}, payload {payload}: {text}");
    // Slot types: decimals and hex numbers are typed columns.
    let dec = line("dec ");
    assert!(num(&dec, 2) >= 3000, "{dec}");
    assert!(text.contains("\n  hex "), "{text}");
    // The top templates with their slot types and static text.
    assert!(text.contains("top templates"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("Accepted password for") && l.contains("<dec>")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.contains("[hex dec]") && l.contains("kernel: device <hex>")),
        "{text}"
    );
    // The default (`--log-templates auto`) finds these lines' templates
    // too, whatever the codec; `off` keeps every chunk coded, and a file
    // without log chunks has no such section.
    let default = dir.path("default.fpc");
    ok(&[
        "compress",
        s(&txt),
        "-o",
        s(&default),
        "--codec",
        "onpair12",
        "-q",
    ]);
    let text = String::from_utf8(ok(&["inspect", s(&default)]).stdout).unwrap();
    assert!(text.contains("log templates"), "{text}");
    let plain = dir.path("plain.fpc");
    ok(&[
        "compress",
        s(&txt),
        "-o",
        s(&plain),
        "--codec",
        "onpair12",
        "--log-templates",
        "off",
        "-q",
    ]);
    let text = String::from_utf8(ok(&["inspect", s(&plain)]).stdout).unwrap();
    assert!(!text.contains("log templates"), "{text}");
    assert!(
        std::fs::metadata(&plain).unwrap().len() > std::fs::metadata(&default).unwrap().len(),
        "log templates kept where they are not smaller"
    );
}

#[test]
fn scan_reports_throughput() {
    let dir = Scratch::new("cli", "scan");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let o = ok(&["scan", "--cpu", "--iters", "2", s(&fpc)]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("GB/s") && text.contains("cpu"), "{text}");
    // Without a flag: the GPU where one is usable, else the CPU.
    let o = ok(&["scan", s(&fpc)]);
    assert!(String::from_utf8(o.stdout).unwrap().contains("GB/s"));
}

/// `scan`'s GPU flags: `--device-memory` and `--devices` parse (usage
/// errors without a GPU too) and, on a GPU, stream the column batch by batch
/// (coded and value-dictionary files), report the first scan from the file
/// end to end next to the kernel rate, agree with the CPU decoder, and turn
/// a damaged file or a ring too small for a chunk into one-line errors.
/// Without a GPU the GPU part is skipped with a notice, unless
/// `FASTPAIR_REQUIRE_GPU=1`.
#[test]
fn scan_gpu_streams_through_device_memory_and_devices() {
    let dir = Scratch::new("cli", "scan-gpu");
    let fpc = dir.path("m.fpc");
    ok(&[
        "compress",
        TESTDATA,
        "-o",
        s(&fpc),
        "-q",
        "--chunk-rows",
        "2000",
    ]);
    for bad in [
        ["--device-memory", "0"],
        ["--device-memory", "lots"],
        ["--devices", "0,x"],
        ["--devices", ""],
    ] {
        let o = run(&["scan", bad[0], bad[1], s(&fpc)]);
        assert!(!o.status.success(), "{bad:?}");
        assert_ne!(o.status.code(), Some(101), "{bad:?} panicked");
    }
    let o = run(&["scan", "--cpu", "--device-memory", "1M", s(&fpc)]);
    assert!(!o.status.success(), "--cpu with --device-memory");
    // The GPU part.
    let probe = run(&["scan", "--gpu", "--iters", "1", "--no-check", s(&fpc)]);
    if !probe.status.success() {
        let why = String::from_utf8_lossy(&probe.stderr).into_owned();
        assert!(
            std::env::var("FASTPAIR_REQUIRE_GPU").map_or(true, |v| v != "1"),
            "FASTPAIR_REQUIRE_GPU=1 but scan --gpu failed: {why}"
        );
        eprintln!(
            "NOTICE: no usable GPU ({}); skipping the GPU part",
            why.trim()
        );
        return;
    }
    // Without the flags a column that fits is streamed first, then scanned whole.
    let text = String::from_utf8(probe.stdout).unwrap();
    assert!(
        text.contains("gpu stream (")
            && text.contains("first scan from the file")
            && text.contains("gpu whole column")
            && text.contains("gpu kernel"),
        "{text}"
    );
    // A value-dictionary file: 7 distinct values.
    let vd_txt = dir.path("vd.txt");
    let vd = dir.path("vd.fpc");
    let body: String = (0..30_000)
        .map(|i| format!("clerk#{:09}\n", i * 7919 % 7))
        .collect();
    std::fs::write(&vd_txt, body).unwrap();
    ok(&[
        "compress",
        s(&vd_txt),
        "-o",
        s(&vd),
        "-q",
        "--chunk-rows",
        "3000",
    ]);
    for (file, extra) in [
        // 10 chunks of about 80 KB on the device each: one a batch.
        (&fpc, vec!["--device-memory", "256K"]),
        (&fpc, vec!["--device-memory", "256K", "--devices", "0,0"]),
        (&fpc, vec!["--devices", "0"]),
        (&vd, vec!["--device-memory", "256K"]),
    ] {
        let mut args = vec!["scan", "--gpu", "--iters", "2", s(file)];
        args.extend(&extra);
        let text = String::from_utf8(ok(&args).stdout).unwrap();
        assert!(
            text.contains("gpu stream (")
                && text.contains("first scan from the file")
                && text.contains("kernel")
                && text.contains("chunks already validated")
                && text.contains("identical to the CPU decoder: yes"),
            "{args:?}: {text}"
        );
        let batches: usize = text
            .split(" batches through")
            .next()
            .and_then(|h| h.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if extra.contains(&"--device-memory") {
            assert!(batches > 1, "{args:?}: {batches} batches: {text}");
        }
    }
    // A ring too small for one chunk, and a damaged chunk: one-line errors.
    let e = fails(&run(&["scan", "--gpu", "--device-memory", "1K", s(&fpc)]));
    assert!(e.contains("m.fpc") && e.contains("device memory"), "{e}");
    let mut bytes = std::fs::read(&fpc).unwrap();
    let at = bytes.len() / 3;
    bytes[at] ^= 0x10;
    let bad = dir.path("bad.fpc");
    std::fs::write(&bad, bytes).unwrap();
    for extra in [vec![], vec!["--device-memory", "2M"]] {
        let mut args = vec!["scan", "--gpu", s(&bad)];
        args.extend(&extra);
        let e = fails(&run(&args));
        assert!(e.contains("bad.fpc"), "{args:?}: {e}");
    }
}

#[test]
fn errors_are_one_line_for_missing_and_corrupt_files() {
    let dir = Scratch::new("cli", "errors");
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
    let dir = Scratch::new("cli", "atomic");
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
    let dir = Scratch::new("cli", "pipe");
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
    let dir = Scratch::new("cli", "auto");
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
    // Log templates off: these lines would be a log-template chunk, whose
    // dictionary is reported unused (`inspect_shows_log_templates_…`).
    let c = run_stdin(
        &[
            "compress",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--log-templates",
            "off",
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

// ---- Issue 7: never lose or expose a user's data. One test (or more) per
// numbered finding; each failed before the fix.

fn mkfifo(p: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// Hidden temporary files left in `dir` (ours are `.fp-*.tmp`; the old ones
/// were `.NAME.fastpair-tmp-PID`).
fn temp_files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && (n.contains("tmp") || n.starts_with(".fp-")))
        .collect()
}

/// Finding 1: an output that is a symlink to /dev/null is written through,
/// and /dev/null stays a character device (it used to be replaced by a
/// regular file when run as root; otherwise the rename failed).
#[test]
fn f1_output_symlink_to_dev_null_keeps_the_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Scratch::new("cli", "devnull");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let link = dir.path("null-link");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    ok(&["decompress", s(&fpc), "-o", s(&link)]);
    ok(&["compress", TESTDATA, "-o", s(&link), "-q"]);
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(temp_files_in(&dir.0).is_empty());
}

/// Finding 1: a FIFO output is written directly and streamed to its reader;
/// it stays a FIFO (it used to be replaced by a regular file, leaving the
/// reader hanging).
#[test]
fn f1_output_fifo_is_streamed_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Scratch::new("cli", "fifo-out");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let fifo = dir.path("out.fifo");
    mkfifo(&fifo);
    let f2 = fifo.clone();
    let reader = std::thread::spawn(move || std::fs::read(&f2).unwrap());
    ok(&["decompress", s(&fpc), "-o", s(&fifo)]);
    let got = reader.join().unwrap();
    assert_eq!(got, std::fs::read(TESTDATA).unwrap());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

/// Finding 1: an output symlink to a regular file: the target is replaced
/// atomically (temporary file in the target's directory), the link stays.
#[test]
fn f1_output_symlink_replaces_its_target() {
    let dir = Scratch::new("cli", "symlink");
    std::fs::create_dir(dir.path("real")).unwrap();
    let target = dir.path("real/col.fpc");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path("link.fpc");
    std::os::unix::fs::symlink("real/col.fpc", &link).unwrap();
    ok(&["compress", TESTDATA, "-o", s(&link), "-q"]);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let o = ok(&["get", s(&target), "0"]);
    assert!(!o.stdout.is_empty());
    // A dangling link gets its target created.
    std::fs::remove_file(&target).unwrap();
    ok(&["compress", TESTDATA, "-o", s(&link), "-q"]);
    assert!(target.is_file());
    assert!(temp_files_in(&dir.0).is_empty());
    assert!(temp_files_in(&dir.path("real")).is_empty());
}

/// Finding 1: `/dev/stdout`, `/proc/self/fd/1` and a link to it are written
/// in place (stdout here is a pipe).
///
/// Run as root, a binary with the old bug would *replace* `/dev/stdout` with
/// a regular file (seen when checking that this test fails before the fix),
/// so as root the literal `/dev/stdout` is left out: a link in the scratch
/// folder to `/proc/self/fd/1` exercises the same path, and a regression
/// there can only replace the scratch link (nothing can be renamed into
/// `/proc`).
#[test]
fn f1_dev_stdout_is_written_in_place() {
    let dir = Scratch::new("cli", "devstdout");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let link = dir.path("stdout-link");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let mut outs = vec!["/proc/self/fd/1", s(&link)];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        outs.push("/dev/stdout");
    }
    for out in outs {
        let o = ok(&["decompress", s(&fpc), "-o", out]);
        let want = std::fs::read(TESTDATA).unwrap();
        assert!(
            o.stdout == want,
            "{out}: {} bytes on stdout, want {}; stderr: {}",
            o.stdout.len(),
            want.len(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Finding 3: a symlink planted at the old predictable temporary name
/// (`.NAME.fastpair-tmp-PID`) is not followed: its target is untouched.
/// The temporary file has a short unpredictable name.
#[test]
fn f3_planted_symlink_at_temp_name_is_not_followed() {
    let dir = Scratch::new("cli", "planted");
    let victim = dir.path("victim.txt");
    std::fs::write(&victim, b"do not touch").unwrap();
    let input = dir.path("in.fifo");
    mkfifo(&input);
    let out = dir.path("out.fpc");
    // The child blocks opening the FIFO: plant the link knowing its pid.
    let mut c = Command::new(BIN)
        .args(["compress", s(&input), "-o", s(&out), "-q"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let planted = dir.path(&format!(".out.fpc.fastpair-tmp-{}", c.id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&input)
        .unwrap();
    w.write_all(b"alpha\nbeta\n").unwrap();
    // While the input is open the temporary file exists: check its name.
    let mut seen = Vec::new();
    for _ in 0..200 {
        seen = temp_files_in(&dir.0)
            .into_iter()
            .filter(|n| n.starts_with(".fp-"))
            .collect();
        if !seen.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(w);
    let st = c.wait().unwrap();
    assert!(st.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"do not touch");
    assert_eq!(seen.len(), 1, "{seen:?}");
    let name = &seen[0];
    assert!(name.len() <= 16, "{name}");
    assert!(!name.contains(&c.id().to_string()), "{name}");
    let o = ok(&["get", s(&out), "1"]);
    assert_eq!(o.stdout, b"beta\n");
}

/// Finding 4: a replaced file keeps its permissions (0600 stayed 0600? it
/// became 0644); a read-only file is refused unless --force, and keeps 0444.
#[test]
fn f4_permissions_kept_and_read_only_refused_without_force() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Scratch::new("cli", "perms");
    let out = dir.path("secret.fpc");
    std::fs::write(&out, b"old").unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(&["compress", TESTDATA, "-o", s(&out), "-q"]);
    assert_eq!(mode(&out), 0o600);
    // Owner and group are kept where the process may set them (root here;
    // otherwise a file can only be ours anyway).
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&out, Some(4321), Some(4322)).unwrap();
            ok(&["compress", TESTDATA, "-o", s(&out), "-q"]);
            let m = std::fs::metadata(&out).unwrap();
            assert_eq!((m.uid(), m.gid()), (4321, 4322));
            assert_eq!(mode(&out), 0o600);
        }
    }
    let txt = dir.path("secret.txt");
    std::fs::write(&txt, b"old").unwrap();
    std::fs::set_permissions(&txt, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(&["decompress", s(&out), "-o", s(&txt)]);
    assert_eq!(mode(&txt), 0o640);
    assert_eq!(
        std::fs::read(&txt).unwrap(),
        std::fs::read(TESTDATA).unwrap()
    );

    let ro = dir.path("ro.fpc");
    std::fs::write(&ro, b"read only").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = fails(&run(&["compress", TESTDATA, "-o", s(&ro), "-q"]));
    assert!(
        e.contains(s(&ro)) && e.contains("read-only") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(std::fs::read(&ro).unwrap(), b"read only");
    ok(&["compress", TESTDATA, "-o", s(&ro), "-q", "--force"]);
    assert_eq!(mode(&ro), 0o444);
    assert_ne!(std::fs::read(&ro).unwrap(), b"read only");
    assert!(temp_files_in(&dir.0).is_empty());
}

/// Finding 5: SIGINT, SIGTERM and SIGHUP remove the temporary file and exit
/// with 130, 143 and 129; the destination is untouched.
#[test]
fn f5_signals_remove_the_temporary_file() {
    let dir = Scratch::new("cli", "signals");
    let out = dir.path("out.fpc");
    std::fs::write(&out, b"precious").unwrap();
    for (sig, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let input = dir.path("in.fifo");
        let _ = std::fs::remove_file(&input);
        mkfifo(&input);
        let mut c = Command::new(BIN)
            .args(["compress", s(&input), "-o", s(&out), "-q"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = std::fs::OpenOptions::new()
            .write(true)
            .open(&input)
            .unwrap();
        w.write_all(&std::fs::read(TESTDATA).unwrap()).unwrap();
        // Wait until the temporary file exists, then signal.
        let mut found = false;
        for _ in 0..500 {
            if !temp_files_in(&dir.0).is_empty() {
                found = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(found, "no temporary file appeared");
        // SAFETY: kill(2) on the pid of the child we spawned and still own.
        assert_eq!(unsafe { libc::kill(c.id() as libc::pid_t, sig) }, 0);
        let st = c.wait().unwrap();
        drop(w);
        assert_eq!(st.code(), Some(code), "signal {sig}: {st:?}");
        assert!(temp_files_in(&dir.0).is_empty(), "signal {sig}");
        assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    }
}

/// Finding 6: `scan --iters 4294967295` is a usage error, not a 64 GB
/// allocation; a closed or full stdout never panics in scan.
#[test]
fn f6_scan_bounded_iters_and_closed_or_full_stdout() {
    let dir = Scratch::new("cli", "scan-f6");
    let fpc = dir.path("m.fpc");
    ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
    let o = run(&["scan", s(&fpc), "--cpu", "--iters", "4294967295"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("--iters") && !e.contains("internal error"),
        "{e}"
    );
    // Full stdout: an error line, status 1, no panic.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(BIN)
        .args(["scan", s(&fpc), "--cpu", "--iters", "1"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("<stdout>") && !e.contains("internal error"),
        "{e}"
    );
    // Closed stdout (like `| head -c0`): quiet success.
    let mut c = Command::new(BIN)
        .args(["scan", s(&fpc), "--cpu", "--iters", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(c.stdout.take());
    let o = c.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!e.contains("internal error"), "{e}");
    assert!(o.status.success(), "{:?} {e}", o.status);
    // A full stderr does not turn compress's summary line into a crash.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let st = Command::new(BIN)
        .args(["compress", TESTDATA, "-o", s(&dir.path("again.fpc"))])
        .stderr(full)
        .status()
        .unwrap();
    assert!(st.success(), "{st:?}");
}

/// Finding 7: errors name the user's output path; a long valid name
/// (249 characters) works; `-o >(cmd)` works.
#[test]
fn f7_user_paths_in_errors_long_names_and_process_substitution() {
    let dir = Scratch::new("cli", "names");
    let missing = dir.path("no/such/dir/out.fpc");
    let e = fails(&run(&["compress", TESTDATA, "-o", s(&missing), "-q"]));
    assert!(e.contains(s(&missing)), "{e}");
    assert!(!e.contains("fastpair-tmp") && !e.contains(".fp-"), "{e}");

    let long = dir.path(&format!("{}.fpc", "n".repeat(245)));
    assert_eq!(long.file_name().unwrap().len(), 249);
    ok(&["compress", TESTDATA, "-o", s(&long), "-q"]);
    ok(&["get", s(&long), "0"]);

    if Path::new("/bin/bash").exists() {
        let fpc = dir.path("m.fpc");
        ok(&["compress", TESTDATA, "-o", s(&fpc), "-q"]);
        let copy = dir.path("copy.txt");
        let st = Command::new("/bin/bash")
            .args([
                "-c",
                r#""$0" decompress "$1" -o >(cat > "$2"); wait $!"#,
                BIN,
                s(&fpc),
                s(&copy),
            ])
            .status()
            .unwrap();
        assert!(st.success());
        assert_eq!(
            std::fs::read(&copy).unwrap(),
            std::fs::read(TESTDATA).unwrap()
        );
    }
}

/// Finding 9 (get): a value containing the separator is refused with a
/// pointer to --nul (as decompress does) instead of printing as two rows;
/// with --nul it prints unambiguously.
#[test]
fn f9_get_refuses_values_containing_the_separator() {
    let dir = Scratch::new("cli", "get-sep");
    let input = dir.path("in.bin");
    std::fs::write(&input, b"plain\0two\nlines\0last\0").unwrap();
    let fpc = dir.path("m.fpc");
    ok(&["compress", "--nul", s(&input), "-o", s(&fpc), "-q"]);
    let o = ok(&["get", s(&fpc), "0"]);
    assert_eq!(o.stdout, b"plain\n");
    let o = run(&["get", s(&fpc), "1"]);
    let e = fails(&o);
    assert!(e.contains("row 1") && e.contains("--nul"), "{e}");
    assert!(!o.stdout.windows(5).any(|w| w == b"lines"), "printed raw");
    let o = ok(&["get", "--nul", s(&fpc), "1", "2"]);
    assert_eq!(o.stdout, b"two\nlines\0last\0");
    // Consistent with decompress.
    let e = fails(&run(&[
        "decompress",
        s(&fpc),
        "-o",
        s(&dir.path("out.txt")),
    ]));
    assert!(e.contains("row 1") && e.contains("--nul"), "{e}");
}

/// Finding 2 (CLI): per-chunk dictionaries past the reader's limit fail with
/// a clear error and leave the existing output untouched (this used to exit
/// 0 and replace it with a file every command rejected).
#[test]
fn f2_cli_refuses_a_file_the_reader_would_reject() {
    let dir = Scratch::new("cli", "dict-limit");
    let input = dir.path("in.txt");
    let mut data = Vec::new();
    for i in 0..(65_536 + 1) {
        data.extend_from_slice(format!("{}\n", i % 10).as_bytes());
    }
    std::fs::write(&input, &data).unwrap();
    let out = dir.path("out.fpc");
    std::fs::write(&out, b"precious").unwrap();
    let e = fails(&run(&[
        "compress",
        s(&input),
        "-o",
        s(&out),
        "--codec",
        "onpair12",
        "--per-chunk-dict",
        "--chunk-rows",
        "1",
    ]));
    assert!(e.contains("dictionary count") && e.contains("65536"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
    assert!(temp_files_in(&dir.0).is_empty());
    // An impossible combination is refused up front.
    let e = fails(&run(&[
        "compress",
        s(&input),
        "-o",
        s(&out),
        "--chunk-rows",
        "67108864",
        "--memory",
        "64M",
    ]));
    assert!(e.contains("--memory"), "{e}");
    assert_eq!(std::fs::read(&out).unwrap(), b"precious");
}

/// `-o` naming the input (directly, through a link, or as the shell's
/// redirection of stdout or stdin) is refused before anything is written, and
/// the input keeps its bytes; so is a fastpair file given to `compress`.
#[test]
fn output_that_is_the_input_is_refused() {
    let dir = Scratch::new("cli", "same-file");
    let txt = dir.path("col.txt");
    std::fs::write(&txt, "alpha\nbeta\ngamma\n").unwrap();
    let fpc = dir.path("col.fpc");
    ok(&["compress", s(&txt), "-o", s(&fpc), "-q"]);
    let (txt_bytes, fpc_bytes) = (std::fs::read(&txt).unwrap(), std::fs::read(&fpc).unwrap());
    let link = dir.path("link.txt");
    std::os::unix::fs::symlink(&txt, &link).unwrap();
    let fpc_link = dir.path("link.fpc");
    std::os::unix::fs::symlink(&fpc, &fpc_link).unwrap();
    let unchanged = || {
        assert_eq!(std::fs::read(&txt).unwrap(), txt_bytes);
        assert_eq!(std::fs::read(&fpc).unwrap(), fpc_bytes);
    };
    for cmd in [
        vec!["compress", s(&txt), "-o", s(&txt)],
        vec!["compress", s(&link), "-o", s(&txt)],
        vec!["compress", s(&txt), "-o", s(&link)],
        vec!["decompress", s(&fpc), "-o", s(&fpc)],
        vec!["decompress", s(&fpc_link), "-o", s(&fpc)],
        vec!["decompress", s(&fpc), "-o", s(&fpc_link)],
    ] {
        let e = fails(&run(&cmd));
        assert!(e.contains("is the input file"), "{cmd:?}: {e}");
        unchanged();
    }
    // `fastpair decompress col.fpc -o - >> col.fpc`, and `-o /dev/stdout`.
    for out in ["-", "/dev/stdout"] {
        let append = std::fs::OpenOptions::new().append(true).open(&fpc).unwrap();
        let o = Command::new(BIN)
            .args(["decompress", s(&fpc), "-o", out])
            .stdout(Stdio::from(append))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let e = fails(&o);
        assert!(e.contains("is the input file"), "{out}: {e}");
        unchanged();
    }
    // `fastpair decompress - -o col.fpc < col.fpc`.
    let o = Command::new(BIN)
        .args(["decompress", "-", "-o", s(&fpc)])
        .stdin(Stdio::from(std::fs::File::open(&fpc).unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(fails(&o).contains("is the input file"));
    unchanged();
    // A fastpair file is not a text column: nothing is written.
    let again = dir.path("again.fpc");
    for cmd in [
        vec!["compress", s(&fpc), "-o", s(&again)],
        vec!["compress", s(&fpc), "-o", s(&fpc)],
    ] {
        let e = fails(&run(&cmd));
        assert!(
            e.contains("is a fastpair file already") || e.contains("is the input file"),
            "{e}"
        );
        assert!(!again.exists());
        unchanged();
    }
    let e = fails(&run_stdin(
        &["compress", "-", "-o", s(&again)],
        Some(&fpc_bytes),
    ));
    assert!(e.contains("<stdin> is a fastpair file already"), "{e}");
    assert!(!again.exists());
    // Different files, and /dev/null on both ends, still work.
    ok(&["decompress", s(&fpc), "-o", s(&dir.path("back.txt"))]);
    assert_eq!(std::fs::read(dir.path("back.txt")).unwrap(), txt_bytes);
    ok(&["decompress", s(&fpc), "-o", "/dev/null"]);
}

/// Inputs that are not regular files: a directory is refused by name; a pipe
/// (`<(cmd)`, a named FIFO, `/dev/stdin`) is read like stdin; a stream that
/// does not start with the magic is refused at once, not read to its end.
#[test]
fn inputs_that_are_not_regular_files() {
    let dir = Scratch::new("cli", "special-inputs");
    let fpc = dir.path("c.fpc");
    let txt = dir.path("c.txt");
    std::fs::write(&txt, "one\ntwo\nthree\n").unwrap();
    ok(&["compress", s(&txt), "-o", s(&fpc), "-q"]);
    for cmd in [
        vec!["inspect", s(&dir.0)],
        vec!["get", s(&dir.0), "0"],
        vec!["decompress", s(&dir.0), "-o", "-"],
    ] {
        let e = fails(&run(&cmd));
        assert!(e.contains("is a directory"), "{cmd:?}: {e}");
    }
    // /dev/zero never ends: refused after its first 8 bytes.
    let e = fails(&run(&["get", "/dev/zero", "0"]));
    assert!(e.contains("not a fastpair file"), "{e}");
    let o = Command::new(BIN)
        .args(["get", "/dev/stdin", "1"])
        .stdin(Stdio::from(std::fs::File::open(&fpc).unwrap()))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "two\n");
    let fifo = dir.path("pipe");
    if !Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success())
    {
        println!("mkfifo unavailable: the named-pipe case is not checked");
        return;
    }
    let (f2, bytes) = (fifo.clone(), std::fs::read(&fpc).unwrap());
    let writer = std::thread::spawn(move || std::fs::write(f2, bytes).unwrap());
    let o = ok(&["get", s(&fifo), "2", "0"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "three\none\n");
    writer.join().unwrap();
}

/// `get` and `decompress` run while their input is rewritten in place (like
/// `cp new.fpc x.fpc`) and truncated: each run prints the rows of one of the
/// two files and exits 0, or fails with the one-line error; never a signal
/// (SIGBUS from a memory map) or an internal error (a panic).
#[test]
fn readers_survive_a_file_rewritten_and_truncated_underneath() {
    let dir = Scratch::new("cli", "rewrite");
    let texts: Vec<String> = [
        |i: usize| format!("alpha row {i} {}", i * 31 % 1009),
        |i: usize| format!("beta {} line {i}", i % 97),
    ]
    .iter()
    .map(|f| (0..40_000).map(f).collect::<Vec<_>>().join("\n") + "\n")
    .collect();
    let mut files = Vec::new();
    for (k, t) in texts.iter().enumerate() {
        let (txt, fpc) = (dir.path(&format!("{k}.txt")), dir.path(&format!("{k}.fpc")));
        std::fs::write(&txt, t).unwrap();
        ok(&[
            "compress",
            s(&txt),
            "-o",
            s(&fpc),
            "--quiet",
            "--chunk-rows",
            "3000",
        ]);
        files.push(std::fs::read(&fpc).unwrap());
    }
    let target = dir.path("x.fpc");
    std::fs::write(&target, &files[0]).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (target, stop) = (target.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut k = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                k += 1;
                let src = &files[k % 2];
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&target)
                    .unwrap();
                for piece in src.chunks(16 << 10) {
                    f.write_all(piece).unwrap();
                }
                if k % 3 == 0 {
                    f.set_len((src.len() * (k % 5 + 1) / 7) as u64).unwrap();
                }
                drop(f);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            k
        })
    };
    let rows = ["0", "12345", "39999", "777", "20000"];
    let (mut good, mut errors, mut odd) = (0, 0, 0);
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(4) {
        for cmd in [
            vec!["decompress", s(&target), "-o", "-"],
            [&["get", s(&target)][..], &rows[..]].concat(),
        ] {
            let o = run(&cmd);
            assert!(
                o.status.code().is_some(),
                "{cmd:?} killed by {:?}",
                o.status
            );
            if !o.status.success() {
                let e = fails(&o);
                assert!(!e.contains("internal error"), "{cmd:?}: {e}");
                errors += 1;
                continue;
            }
            let out = String::from_utf8_lossy(&o.stdout).into_owned();
            if cmd[0] == "decompress" {
                assert!(
                    texts.contains(&out),
                    "decompress printed {} bytes that are neither file",
                    out.len()
                );
            } else {
                let want: Vec<String> = texts
                    .iter()
                    .map(|t| {
                        let lines: Vec<&str> = t.lines().collect();
                        rows.iter()
                            .map(|r| format!("{}\n", lines[r.parse::<usize>().unwrap()]))
                            .collect()
                    })
                    .collect();
                // `get` verifies the structure it reads, not a checksum
                // (issue 19 finding 1): a mix of the two files is counted.
                if !want.contains(&out) {
                    odd += 1;
                }
            }
            good += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    println!("{rewrites} rewrites: {good} runs printed rows ({odd} get runs a mix), {errors} clean errors");
    assert!(good > 0 && errors > 0, "the race was not exercised");
}

/// `-o /dev/stdout` writes through the descriptor the shell gave us: under
/// `>>` it appends to the log instead of overwriting its start. A closed
/// stdout (`>&-`) makes `get` and `decompress -o -` fail with a message
/// instead of exiting 0 having written nothing.
#[test]
fn stdout_outputs_append_and_a_closed_stdout_fails() {
    let dir = Scratch::new("cli", "stdout");
    let (txt, fpc, log) = (dir.path("v.txt"), dir.path("v.fpc"), dir.path("log"));
    std::fs::write(&txt, "one\ntwo\nthree\n").unwrap();
    ok(&["compress", s(&txt), "-o", s(&fpc), "--quiet"]);
    let sh = |script: &str| {
        Command::new("sh")
            .args(["-c", script, BIN, s(&fpc), s(&log)])
            .output()
            .unwrap()
    };
    std::fs::write(&log, "first line of the log\n").unwrap();
    for script in [
        r#""$0" decompress "$1" -o /dev/stdout >>"$2""#,
        r#""$0" decompress "$1" -o /dev/fd/1 >>"$2""#,
        r#""$0" decompress "$1" -o - >>"$2""#,
    ] {
        let o = sh(script);
        assert!(
            o.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("first line of the log\n{}", "one\ntwo\nthree\n".repeat(3))
    );
    // Under `>`, the file holds exactly the output.
    let o = sh(r#""$0" decompress "$1" -o /dev/stdout >"$2""#);
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\nthree\n");
    for script in [
        r#""$0" get "$1" 0 >&-"#,
        r#""$0" decompress "$1" -o - >&-"#,
        r#""$0" decompress "$1" -o /dev/stdout >&-"#,
    ] {
        let e = fails(&sh(script));
        assert!(e.contains("stdout is closed"), "{script}: {e}");
    }
    // Discarding the output on purpose still works.
    assert!(sh(r#""$0" get "$1" 0 >/dev/null"#).status.success());
}

/// The read-only check is the kernel's access check for this user, not the
/// mode bits: as `nobody`, a root-owned 0644 file in a world-writable folder
/// is not replaced without --force (before, it was replaced and changed
/// owner). Needs root and setpriv; skipped with a notice otherwise.
#[test]
fn a_file_this_user_cannot_write_is_not_replaced() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || Command::new("setpriv").arg("--version").output().is_err()
    {
        println!("NOTICE: needs root and setpriv; skipped");
        return;
    }
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = Scratch::new("cli", "access");
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    // The binary where `nobody` can run it.
    let bin = dir.path("fastpair");
    std::fs::copy(BIN, &bin).unwrap();
    let (txt, fpc) = (dir.path("v.txt"), dir.path("v.fpc"));
    std::fs::write(&txt, "one\ntwo\n").unwrap();
    std::fs::write(&fpc, "root's file\n").unwrap();
    std::fs::set_permissions(&fpc, std::fs::Permissions::from_mode(0o644)).unwrap();
    let as_nobody = |extra: &[&str]| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin)
            .args(["compress", s(&txt), "-o", s(&fpc), "-q"])
            .args(extra)
            .output()
            .unwrap()
    };
    let e = fails(&as_nobody(&[]));
    assert!(
        e.contains("read-only for this user") && e.contains("--force"),
        "{e}"
    );
    assert_eq!(std::fs::read(&fpc).unwrap(), b"root's file\n");
    assert_eq!(std::fs::metadata(&fpc).unwrap().uid(), 0);
    // --force: replaced (the folder allows it).
    let o = as_nobody(&["--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read(&fpc).unwrap().starts_with(b"FASTPAIR"));
}

/// Messages name the right thing: a full or size-limited output names the
/// output (not the temporary file, not nothing), `--chunk-bytes 0` speaks of
/// a byte count, and an empty column's range reads sensibly.
#[test]
fn messages_name_the_output_and_the_option() {
    let dir = Scratch::new("cli", "messages");
    let txt = dir.path("v.txt");
    let text: String = (0..60_000)
        .map(|i| format!("{i} {}\n", i * 7919 % 100_003))
        .collect();
    std::fs::write(&txt, &text).unwrap();
    let fpc = dir.path("v.fpc");
    ok(&["compress", s(&txt), "-o", s(&fpc), "-q"]);
    // /dev/full: ENOSPC on the first write or flush.
    for args in [
        vec!["compress", s(&txt), "-o", "/dev/full", "-q"],
        vec!["decompress", s(&fpc), "-o", "/dev/full"],
    ] {
        let e = fails(&run(&args));
        assert!(
            e.contains("writing /dev/full") && e.contains("No space left"),
            "{args:?}: {e}"
        );
    }
    // A regular output that cannot grow (RLIMIT_FSIZE; SIGXFSZ ignored, so
    // writes fail with EFBIG like a full disk fails with ENOSPC).
    for cmd in [
        r#""$0" compress "$1" -o "$2/out.fpc" -q"#,
        r#""$0" decompress "$3" -o "$2/out.txt""#,
    ] {
        let o = Command::new("sh")
            .args([
                "-c",
                &format!("trap '' XFSZ; ulimit -f 8; {cmd}"),
                BIN,
                s(&txt),
                s(&dir.0),
                s(&fpc),
            ])
            .output()
            .unwrap();
        let e = fails(&o);
        assert!(
            e.contains(&format!("writing {}/out.", s(&dir.0))) && !e.contains(".fp-"),
            "{cmd}: {e}"
        );
        let left: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".fp-"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
    let e = fails(&run(&[
        "compress",
        s(&txt),
        "-o",
        "x",
        "--chunk-bytes",
        "0",
    ]));
    assert!(e.contains("--chunk-bytes") && !e.contains("memory"), "{e}");
    let empty = dir.path("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let efpc = dir.path("empty.fpc");
    ok(&["compress", s(&empty), "-o", s(&efpc), "-q"]);
    let e = fails(&run(&["get", s(&efpc), "0"]));
    assert!(
        e.contains("the column is empty") && !e.contains("0..=0"),
        "{e}"
    );
}

/// `get` never prints a value that reads like a null row: a real value equal
/// to the null marker is refused (exit 1, pointing at --null) instead of
/// being printed exactly like a null.
#[test]
fn get_tells_a_null_from_the_text_of_the_null_marker() {
    let dir = Scratch::new("cli", "nullmark");
    let fpc = dir.path("v.fpc");
    let rows: [Option<&[u8]>; 3] = [Some(b"<null>"), None, Some(b"plain")];
    let bytes =
        fastpair::write::write_to_vec(rows.iter().copied(), fastpair::WriterOptions::default())
            .unwrap();
    std::fs::write(&fpc, bytes).unwrap();
    let o = ok(&["get", s(&fpc), "1", "2"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "<null>\nplain\n");
    let e = fails(&run(&["get", s(&fpc), "0"]));
    assert!(e.contains("row 0") && e.contains("--null"), "{e}");
    let o = ok(&["get", s(&fpc), "--null", "NULL", "0", "1"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "<null>\nNULL\n");
}

/// Temporary outputs left by a killed run (`.fp-XXXXXXXX.tmp`) are removed by
/// the next run writing into that folder, but only ours: the exact name
/// pattern, a regular file of this user, untouched for a while, and held by
/// no live process (a running command keeps a lock on its own).
#[test]
fn stale_temporary_files_are_cleaned_safely() {
    let dir = Scratch::new("cli", "stale");
    let txt = dir.path("v.txt");
    std::fs::write(&txt, "one\ntwo\n").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86400);
    let make = |name: &str, age_old: bool| {
        let p = dir.path(name);
        std::fs::write(&p, b"partial").unwrap();
        if age_old {
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(old).unwrap();
        }
        p
    };
    let stale = make(".fp-AbCd1234.tmp", true);
    let fresh = make(".fp-Fresh123.tmp", false);
    let held = make(".fp-Held1234.tmp", true);
    let other = make(".fp-short.tmp", true);
    let not_ours = make("data.tmp", true);
    let link = dir.path(".fp-Link1234.tmp");
    std::os::unix::fs::symlink(&not_ours, &link).unwrap();
    // A live process's lock on `held` (this test holds it).
    let h = std::fs::File::open(&held).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(h.as_raw_fd(), libc::LOCK_SH) }, 0);
    ok(&["compress", s(&txt), "-o", s(&dir.path("v.fpc")), "-q"]);
    assert!(!stale.exists(), "the stale temporary file was kept");
    for p in [&fresh, &held, &other, &not_ours, &link] {
        assert!(
            std::fs::symlink_metadata(p).is_ok(),
            "{} was removed",
            p.display()
        );
    }
    drop(h);
}

/// A signal that lands after the output replaced its destination must not
/// report failure: every run ends either with status 0 and the new output in
/// place, or with 143 and the old file untouched (and no temporary file).
#[test]
fn a_late_signal_reports_what_happened() {
    let dir = Scratch::new("cli", "late");
    let txt = dir.path("v.txt");
    let text: String = (0..20_000).map(|i| format!("value {i}\n")).collect();
    std::fs::write(&txt, &text).unwrap();
    let fpc = dir.path("v.fpc");
    ok(&["compress", s(&txt), "-o", s(&fpc), "-q"]);
    let new = std::fs::read(&fpc).unwrap();
    let t = std::time::Instant::now();
    ok(&["compress", s(&txt), "-o", s(&fpc), "-q"]);
    let took = t.elapsed();
    let (mut replaced, mut interrupted) = (0, 0);
    for k in 0..40u32 {
        std::fs::write(&fpc, b"old").unwrap();
        let mut c = Command::new(BIN)
            .args(["compress", s(&txt), "-o", s(&fpc), "-q"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(took.mul_f64(0.5 + k as f64 / 40.0));
        // SAFETY: a signal to the child we spawned and have not reaped.
        unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
        let st = c.wait().unwrap();
        let now = std::fs::read(&fpc).unwrap();
        match st.code() {
            Some(0) => {
                assert_eq!(now, new, "exit 0 without the new output");
                replaced += 1;
            }
            Some(143) => {
                assert_eq!(now, b"old", "exit 143 after the output was replaced");
                interrupted += 1;
            }
            other => panic!("status {other:?}"),
        }
        let temps = std::fs::read_dir(&dir.0)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with(".fp-"))
            })
            .count();
        assert_eq!(temps, 0, "a temporary file was left");
    }
    println!("{replaced} runs finished, {interrupted} were interrupted");
}

/// `compress` says when the memory budget, not the threads, kept its chunks
/// from being encoded together (and says nothing with room enough).
#[test]
fn compress_notes_chunks_held_back_by_memory() {
    let dir = Scratch::new("cli", "held-back");
    let input = dir.path("in.txt");
    let lines: String = (0..20_000u32)
        .map(|i| {
            format!(
                "row {i} of a column long enough to fill several chunks {}\n",
                i % 97
            )
        })
        .collect();
    std::fs::write(&input, lines).unwrap();
    let opts = fastpair::WriterOptions::default()
        .with_chunk_rows(1000)
        .with_dict_mode(fastpair::DictMode::PerChunk)
        .with_log_templates(fastpair::LogTemplates::Off);
    let tight = format!("{}", opts.min_memory_budget());
    let fpc = dir.path("out.fpc");
    for (budget, noted) in [(tight.as_str(), true), ("1G", false)] {
        let o = Command::new(BIN)
            .env("RAYON_NUM_THREADS", "4")
            .args([
                "compress",
                s(&input),
                "-o",
                s(&fpc),
                "--force",
                "--chunk-rows",
                "1000",
                "--per-chunk-dict",
                "--log-templates",
                "off",
                "--memory",
                budget,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "--memory {budget}: {err}");
        assert_eq!(
            err.contains("note: chunks were encoded at most 1 at a time on 4 thread(s)"),
            noted,
            "--memory {budget}: {err}"
        );
    }
}
