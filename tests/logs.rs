//! Round trips of the log template codec (issue 20): every corpus column and
//! arbitrary bytes come back byte-exact through the serialized block, by
//! point reads and by bulk decode.

use fastpair::logs::{encode, encode_column, LogBlock, LogColumn, LogForm, LogOptions};
use proptest::prelude::*;

fn check(rows: &[&[u8]], opts: &LogOptions) -> (usize, LogBlock) {
    let bytes: &'static [u8] = Box::leak(encode(rows, opts).into_boxed_slice());
    let block = LogBlock::open(bytes).expect("own output opens");
    assert_eq!(block.rows(), rows.len());
    let (mut values, mut offsets) = (Vec::new(), Vec::new());
    block.decode_all(&mut values, &mut offsets);
    assert_eq!(offsets.len(), rows.len() + 1);
    for (i, r) in rows.iter().enumerate() {
        let got = &values[offsets[i] as usize..offsets[i + 1] as usize];
        assert_eq!(got, *r, "bulk row {i}");
        assert_eq!(block.get(i).unwrap(), *r, "get row {i}");
    }
    assert!(block.get(rows.len()).is_err());
    (bytes.len(), block)
}

/// The header/body split column: same checks.
fn check_column(rows: &[&[u8]], opts: &LogOptions) -> usize {
    let bytes = encode_column(rows, opts);
    let col = LogColumn::open(&bytes).expect("own output opens");
    assert_serves(&col, rows);
    bytes.len()
}

/// `col` holds `rows`: each by the bulk decode and by `get`, and no row
/// past them.
fn assert_serves(col: &LogColumn, rows: &[&[u8]]) {
    assert_eq!(col.rows(), rows.len());
    let (mut values, mut offsets) = (Vec::new(), Vec::new());
    col.decode_all(&mut values, &mut offsets);
    assert_eq!(offsets.len(), rows.len() + 1);
    let mut one = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(
            &values[offsets[i] as usize..offsets[i + 1] as usize],
            *r,
            "bulk row {i}"
        );
        one.clear();
        col.get_into(i, &mut one).unwrap();
        assert_eq!(one, *r, "get row {i}");
    }
    assert!(col.get_into(rows.len(), &mut one).is_err());
}

/// Pins a golden payload (testdata/golden/`fpl`) and its rows (`txt`, one
/// a line): `FASTPAIR_BLESS_LOGS=1` rewrites both after an intended
/// change; otherwise `bytes` and `rows` must be what the files hold.
fn pinned(fpl: &str, txt: &str, bytes: &[u8], rows: &[String]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/golden");
    let (fpl, txt) = (dir.join(fpl), dir.join(txt));
    if std::env::var_os("FASTPAIR_BLESS_LOGS").is_some() {
        std::fs::write(&fpl, bytes).unwrap();
        std::fs::write(&txt, rows.join("\n") + "\n").unwrap();
    }
    assert_eq!(
        std::fs::read(&txt).unwrap(),
        (rows.join("\n") + "\n").into_bytes()
    );
    assert_eq!(
        std::fs::read(&fpl).unwrap(),
        bytes,
        "log payload bytes changed"
    );
}

#[path = "support/corpus.rs"]
mod corpus;

fn lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.ends_with(b"\n") {
        v.pop();
    }
    v
}

#[test]
fn every_corpus_column_round_trips() {
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without one (tests/support/corpus.rs).
    let cols = corpus::columns(&[]);
    assert!(!cols.is_empty(), "no columns to check");
    for c in &cols {
        // Bound the test's time on the big columns.
        let rows: Vec<&[u8]> = lines(&c.text).into_iter().take(30_000).collect();
        for (typed, mixed) in [(true, false), (false, false), (true, true)] {
            let opts = LogOptions {
                typed,
                mixed,
                ..Default::default()
            };
            let (size, block) = check(&rows, &opts);
            let split = if typed && !mixed {
                check_column(&rows, &opts)
            } else {
                0
            };
            eprintln!(
                "{}: {} rows, typed {typed} mixed {mixed}: {size} bytes ({split} as a column), {} templates, {} escaped",
                c.name,
                rows.len(),
                block.templates(),
                block.escaped_rows()
            );
        }
    }
}

#[test]
fn edge_cases() {
    let opts = LogOptions::default();
    check(&[], &opts);
    check(&[b""], &opts);
    check(&[b"", b"", b""], &opts);
    let zeros: Vec<&[u8]> = vec![
        b"id=0007 x",
        b"id=0008 x",
        b"id=12 x",
        b"id=00 x",
        b"id=0 x",
    ];
    check(&zeros, &opts);
    let big: Vec<&[u8]> = vec![
        b"n 18446744073709551615 h ffffffffffffffff H FFFFFFFFFFFFFFFF",
        b"n 99999999999999999999 h 0000000000000000 H 0",
        b"n 0 h 0 H 00000000000000000",
        b"n 1 h aB H 1",
    ];
    check(&big, &opts);
    // More than one row block, a template per row.
    let many: Vec<Vec<u8>> = (0..1000)
        .map(|i| format!("k{} v {} w {}", i % 7, i * 13, i % 3).into_bytes())
        .collect();
    let refs: Vec<&[u8]> = many.iter().map(|v| &v[..]).collect();
    check(&refs, &opts);
    // Tiny sample: most templates come from the second pass.
    check(
        &refs,
        &LogOptions {
            sample_rows: 3,
            ..Default::default()
        },
    );
}

#[test]
fn truncated_or_flipped_blocks_are_errors_not_panics() {
    let rows: Vec<Vec<u8>> = (0..300)
        .map(|i| {
            format!(
                "2024-01-{:02} user{} GET /a/{} 200 {:x}",
                i % 28 + 1,
                i % 5,
                i,
                i * 977
            )
            .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = rows.iter().map(|v| &v[..]).collect();
    let bytes = encode(&refs, &LogOptions::default());
    for cut in 0..bytes.len() {
        assert!(LogBlock::open(&bytes[..cut]).is_err(), "cut {cut}");
    }
    // Flipped bytes either fail to open or decode without panicking.
    for i in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[i] ^= bit;
            if let Ok(block) = LogBlock::open(&b) {
                let (mut v, mut o) = (Vec::new(), Vec::new());
                block.decode_all(&mut v, &mut o);
                for r in 0..block.rows() {
                    let _ = block.get(r);
                }
            }
        }
    }
}

/// A damaged block names the same error whatever the threads opening it:
/// its columns are checked on all threads (`LogBlock::open`), the first
/// failure in slot order reported.
#[test]
fn damaged_blocks_name_the_same_error_on_any_thread_count() {
    let rows: Vec<Vec<u8>> = (0..3000)
        .map(|i| {
            format!(
                "2024-01-{:02} user{} GET /a/{} 200 {:x} host{} w{:03}",
                i % 28 + 1,
                i % 5,
                i,
                i * 977,
                i % 37,
                i % 7
            )
            .into_bytes()
        })
        .collect();
    let refs: Vec<&[u8]> = rows.iter().map(|v| &v[..]).collect();
    let bytes = encode(&refs, &LogOptions::default());
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (one, four) = (pool(1), pool(4));
    let mut errors = 0;
    for i in 0..bytes.len() {
        // Two bytes apart: two columns damaged, the error the first's.
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        b[(i + bytes.len() / 3) % bytes.len()] ^= 0x40;
        let open = || LogBlock::open(&b).err().map(|e| e.to_string());
        let (e1, e4) = (one.install(open), four.install(open));
        assert_eq!(e1, e4, "byte {i}");
        errors += e1.is_some() as usize;
    }
    assert!(
        errors > bytes.len() / 4,
        "{errors} of {} flips refused",
        bytes.len()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn arbitrary_bytes_round_trip(rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..300), typed: bool, mixed: bool) {
        let refs: Vec<&[u8]> = rows.iter().map(|v| &v[..]).collect();
        check(&refs, &LogOptions { typed, mixed, ..Default::default() });
        check_column(&refs, &LogOptions { typed, ..Default::default() });
    }

    #[test]
    fn log_like_rows_round_trip(rows in proptest::collection::vec("[\t ]?[a-c]{1,3}[ =:.,_-]{1,2}[0-9a-fA-F]{0,21}[ \"]?[0-9]{0,3}[g-j]{0,2}[0-9]{0,2}", 0..400), mixed: bool, group_slots: bool) {
        let refs: Vec<&[u8]> = rows.iter().map(|v| v.as_bytes()).collect();
        check(&refs, &LogOptions { mixed, group_slots, ..Default::default() });
        check_column(&refs, &LogOptions::default());
    }
}

/// Continuation lines (a tab first: configuration dumps, stack frames) are
/// split at blanks (`tokenize.rs`), so a dump of many keys is a few
/// templates, not one a key, and every row still comes back.
#[test]
fn continuation_lines_share_templates() {
    let mut rows = Vec::new();
    for dump in 0..6 {
        rows.push(format!(
            "[2021-05-0{} 17:14:35,{:03}] INFO KafkaConfig values: (kafka.server.KafkaConfig)",
            dump + 1,
            dump * 7
        ));
        for k in 0..80 {
            let value = match k % 4 {
                0 => format!("{}", k * 1000 + dump % 2),
                1 => "null".to_string(),
                2 => format!("[PLAINTEXT://host{}:9092]", k % 3),
                _ => format!("org.apache.kafka.Part{k}"),
            };
            // Keys of words only, as configuration keys are.
            const WORDS: [&str; 10] = [
                "log",
                "num",
                "replica",
                "socket",
                "offsets",
                "retention",
                "fetch",
                "max",
                "bytes",
                "threads",
            ];
            let key = [
                WORDS[k % 10],
                WORDS[(k / 10 + 3) % 10],
                WORDS[k / 10 % 8],
                WORDS[k % 7],
            ][..2 + k % 3]
                .join(".");
            rows.push(format!("\t{key} = {value}"));
        }
        for f in 0..12 {
            rows.push(format!(
                "\tat kafka.server.Frame{f}.run(Frame{f}.scala:{})",
                40 + f
            ));
        }
        // Rows that want the fine split (numbers inside punctuation), so
        // the column as a whole is not split at blanks.
        for i in 0..150 {
            let n = dump * 150 + i;
            rows.push(format!(
                "[2021-05-0{} 17:{:02}:{:02},{:03}] INFO Accepted connection from /10.0.{}.{}:{} (id={}, epoch={}) (kafka.network.Acceptor)",
                dump + 1,
                n / 60 % 60,
                n % 60,
                n * 37 % 1000,
                n % 7,
                n * 13 % 256,
                40000 + n * 31 % 9000,
                n,
                n % 3
            ));
        }
    }
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    // The fine split only, so the rule is the one thing at blanks.
    let opts = LogOptions {
        try_coarse: false,
        ..Default::default()
    };
    let bytes = encode_column(&refs, &opts);
    let col = LogColumn::open(&bytes).expect("own output opens");
    assert_serves(&col, &refs);
    // 80 keys and 12 frames, split at every punctuation byte: 37 templates
    // (families merge some keys); at blanks: 5.
    assert!(col.templates() < 10, "{} templates", col.templates());
    // The header the other rows share is found, though 38% of the rows
    // are continuation lines (which get an empty header): a split asked
    // for is made, and serves every row.
    let split = encode_column(
        &refs,
        &LogOptions {
            split: Some(true),
            ..opts
        },
    );
    let split = LogColumn::open(&split).expect("own output opens");
    assert!(split.is_split());
    assert_serves(&split, &refs);
}

/// The rows of `testdata/golden/logs_payload.{rows,fpl}`: syslog-like lines
/// (a header the writer splits off, decimal, hex, zero-padded and
/// variable-width integers, a value dictionary, free text, rows no template
/// takes) and JSON lines, over three row blocks.
fn golden_rows() -> Vec<String> {
    (0..300u64)
        .map(|i| {
            let host = ["alpha", "beta", "gamma"][(i % 3) as usize];
            match i % 10 {
                0..=3 => format!(
                    "2024-05-{:02} 10:{:02}:{:02} {host} sshd[{}]: Accepted key for user{} from 10.0.{}.{} port {}",
                    1 + i / 100,
                    i % 60,
                    (i * 7) % 60,
                    4000 + i * 3,
                    i % 4,
                    i % 7,
                    i * 13 % 256,
                    50000 + i
                ),
                4..=5 => format!(
                    "2024-05-{:02} 10:{:02}:{:02} {host} kernel: block 0x{:08x} id {:X} seq {:06} len {}",
                    1 + i / 100,
                    i % 60,
                    (i * 11) % 60,
                    i * 4096,
                    i * 977,
                    i,
                    if i % 4 == 0 { format!("{:03}", i % 50) } else { format!("{}", i % 500) }
                ),
                6..=7 => format!(
                    "2024-05-{:02} 10:{:02}:00 {host} {{\"ts\":{},\"level\":\"{}\",\"msg\":\"request done\",\"ms\":{}}}",
                    1 + i / 100,
                    i % 60,
                    1_700_000_000 + i * 2,
                    ["info", "warn"][(i % 2) as usize],
                    i * 31 % 1000
                ),
                8 => format!("2024-05-{:02} 10:00:00 {host} unique message number {} {}", 1 + i / 100, i, "x".repeat((i % 5) as usize)),
                // A shape of its own (escaped: no template for one row).
                _ if i % 20 == 9 => format!("odd{}line {}", "-+".repeat(i as usize / 20 + 1), i),
                _ => format!("free-form line {} without structure ~{}~", i * i, i % 3),
            }
        })
        .collect()
}

/// A log payload as `encode_column` writes it, byte for byte: the golden
/// file `spec/reader.py` decodes (python/tests/test_spec_logs.py), of
/// format version 9 ("FPS5": front-coded pools, codes at the pool's width,
/// delta, runs and stepped runs integer blocks). `FASTPAIR_BLESS_LOGS=1`
/// rewrites it after an intended change. The version-5 to -8 payloads of
/// the same rows (`logs_payload.fpl`, "FPS1", `logs_payload_v6.fpl`,
/// "FPS2", `logs_payload_v7.fpl`, "FPS3", and `logs_payload_v8.fpl`,
/// "FPS4", never rewritten) still decode to them.
#[test]
fn golden_payload_is_stable_and_decodes() {
    let rows = golden_rows();
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    let opts = LogOptions {
        split: Some(true),
        ..Default::default()
    };
    let bytes = encode_column(&refs, &opts);
    pinned("logs_payload_v11.fpl", "logs_payload.rows", &bytes, &rows);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/golden");
    let col = LogColumn::open(&bytes).unwrap();
    assert!(col.is_split(), "the golden payload covers the split form");
    // The rows that match no template are one template's value
    // dictionary here (`LogOptions::unique_dicts`); without it they are
    // the escape template's pool strings, in more bytes.
    assert!(col.escaped_rows() > 0, "and escaped rows");
    let escaping = LogOptions {
        unique_dicts: false,
        ..opts.clone()
    };
    let pooled = encode_column(&refs, &escaping);
    assert!(LogColumn::open(&pooled).unwrap().escaped_rows() > 0);
    check_column(&refs, &escaping);
    assert!(
        bytes.len() < pooled.len(),
        "{} vs {}",
        bytes.len(),
        pooled.len()
    );
    assert_eq!(col.form(), LogForm::V11);
    // Format 11 (§5.8.6): a small column's blocks keep their row index and
    // column data in the open section where that is smaller.
    assert!(col.summary().resident_blocks > 0, "and resident parts");
    let [_, _, delta, runs, stepped] = col.integer_block_modes();
    assert!(delta > 0, "and delta integer blocks");
    assert!(runs > 0, "and runs integer blocks");
    assert!(stepped > 0, "and stepped runs integer blocks");
    check_column(&refs, &opts);
    let mut older = u64::MAX;
    for (file, form) in [
        ("logs_payload.fpl", LogForm::V4),
        ("logs_payload_v6.fpl", LogForm::V6),
        ("logs_payload_v7.fpl", LogForm::V7),
        ("logs_payload_v8.fpl", LogForm::V8),
        ("logs_payload_v9.fpl", LogForm::V9),
        ("logs_payload_v10.fpl", LogForm::V10),
    ] {
        let old = LogColumn::open(&std::fs::read(dir.join(file)).unwrap()).unwrap();
        assert_eq!(old.form(), form);
        let modes = old.integer_block_modes();
        if !matches!(form, LogForm::V9 | LogForm::V10) {
            assert_eq!(modes[4], 0, "{file}: no stepped runs blocks");
        }
        if !matches!(form, LogForm::V8 | LogForm::V9 | LogForm::V10) {
            assert_eq!(modes[3], 0, "{file}: no runs blocks");
        }
        if form == LogForm::V4 || form == LogForm::V6 {
            assert_eq!(modes[2], 0, "{file}: no delta blocks");
        }
        assert_eq!(old.rows(), rows.len());
        let (mut buf, mut offs) = (Vec::new(), Vec::new());
        old.decode_all(&mut buf, &mut offs);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(
                &buf[offs[i] as usize..offs[i + 1] as usize],
                r.as_bytes(),
                "{file} row {i}"
            );
        }
        older = older.min(std::fs::metadata(dir.join(file)).unwrap().len());
    }
    assert!(
        (bytes.len() as u64) < older,
        "{} vs {older} bytes",
        bytes.len()
    );
}

/// Access-log lines (combined format): clients, request paths of one to
/// four words under a site, referrers and user agents, drawn from pools
/// of values whose sorted neighbours share long prefixes.
fn access_rows(n: usize) -> Vec<String> {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words = [
        "presentations",
        "logstash",
        "images",
        "blog",
        "geekery",
        "files",
        "xdotool",
        "docs",
        "html",
        "projects",
        "reviews",
        "articles",
        "2013",
        "kibana",
        "search",
        "dashboard",
    ];
    let exts = ["png", "html", "js", "css", "jpg", "xml"];
    let paths: Vec<String> = (0..150)
        .map(|_| {
            let depth = 1 + rnd() % 4;
            let p: Vec<&str> = (0..depth).map(|_| words[(rnd() % 16) as usize]).collect();
            format!("/{}.{}", p.join("/"), exts[(rnd() % 6) as usize])
        })
        .collect();
    let agents = [
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_9_1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.",
        "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.",
        "Mozilla/5.0 (X11; Linux x86_64; rv:27.0) Gecko/20100101 Firefox/27.",
    ];
    (0..n)
        .map(|i| {
            let (p, r) = (rnd() % 150, rnd() % 150);
            format!(
                "{}.{}.{}.{} - - [17/May/2015:10:{:02}:{:02} +0000] \"GET {} HTTP/1.1\" 200 {} \"http://semicomplete.com{}\" \"{}{}\"",
                rnd() % 200,
                rnd() % 256,
                rnd() % 256,
                rnd() % 256,
                i / 60 % 60,
                i % 60,
                paths[p as usize],
                rnd() % 90000,
                paths[r as usize],
                agents[(rnd() % 3) as usize],
                rnd() % 120
            )
        })
        .collect()
}

/// Access-log lines as one block with its words cut at blanks only (the
/// coarse candidate `encode_column` tries): whole request paths,
/// referrers and user agents as dictionary values.
fn access_block(rows: &[&[u8]]) -> Vec<u8> {
    let opts = LogOptions {
        coarse: true,
        ..LogOptions::default()
    };
    encode(rows, &opts)
}

/// A log payload of access-log lines as `encode_column` writes it, byte
/// for byte: front-coded dictionaries (format version 9, spec/FORMAT.md
/// §5.8.2 rule 1), pinned for `spec/reader.py`
/// (python/tests/test_spec_logs.py). `FASTPAIR_BLESS_LOGS=1` rewrites it.
#[test]
fn golden_access_payload_is_stable_and_decodes() {
    let rows = access_rows(400);
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    let bytes = access_block(&refs);
    pinned(
        "logs_payload_access_v11.fpl",
        "logs_payload_access.rows",
        &bytes,
        &rows,
    );
    let col = LogColumn::open(&bytes).unwrap();
    assert_eq!(col.form(), LogForm::V11);
    assert!(
        col.front_coded_dictionaries() >= 2,
        "front-coded dictionaries"
    );
    // Rule 1 is format 9's: the same block labelled "FPL4" is refused
    // (and its open section is no version-8 meta).
    let mut v8 = bytes.clone();
    v8[3] = b'4';
    assert!(LogColumn::open(&v8).is_err());
    assert_serves(&col, &refs);
    // Version 9's payload of the same rows still reads them, and its
    // front-coded dictionaries are pool codes there.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/golden");
    let v9 = std::fs::read(dir.join("logs_payload_access_v9.fpl")).unwrap();
    let old = LogColumn::open(&v9).unwrap();
    assert_eq!(old.form(), LogForm::V9);
    assert!(old.front_coded_dictionaries() >= 2);
    assert_serves(&old, &refs);
    assert!(
        bytes.len() < v9.len(),
        "{} vs {} bytes",
        bytes.len(),
        v9.len()
    );
}

/// Flipped bits in a payload with front-coded dictionaries: an error or
/// rows, never a panic, and no row longer than the prefixes' bound allows
/// (32 bytes a pool code).
#[test]
fn damaged_front_coded_payloads_error_or_read() {
    let rows = access_rows(400);
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    // Its row index and column data in the block (not resident in the
    // LZMA2 open section, §5.8.6, where a flipped bit fails the stream):
    // flips that still read must reach the prefixes.
    let opts = LogOptions {
        coarse: true,
        resident: false,
        ..LogOptions::default()
    };
    let bytes = encode(&refs, &opts);
    let mut x = 0x51ed_270b_7a3c_9e11u64;
    let (mut rejected, mut read) = (0, 0);
    for _ in 0..3000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut bad = bytes.clone();
        let at = (x >> 8) as usize % bad.len();
        bad[at] ^= 1 << (x % 8);
        match LogColumn::open(&bad) {
            Err(_) => rejected += 1,
            Ok(col) => {
                read += 1;
                let (mut v, mut o) = (Vec::new(), Vec::new());
                col.decode_all(&mut v, &mut o);
                assert!(v.len() <= 32 * 16 * bytes.len());
            }
        }
    }
    assert!(rejected > 0 && read > 0, "{rejected} rejected, {read} read");
}

/// A payload whose blocks keep their row index and column data in the open
/// section (format 11, §5.8.6 methods 2 and 3), damaged: cut anywhere,
/// bits flipped anywhere, its parts' lengths in the block header changed:
/// an error or rows, never a panic; and the same payload with the parts
/// in the block (methods 0 and 1) reads the same rows.
#[test]
fn damaged_resident_payloads_error_or_read() {
    let rows = golden_rows();
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    let opts = LogOptions {
        split: Some(false),
        ..Default::default()
    };
    let bytes = encode_column(&refs, &opts);
    let col = LogColumn::open(&bytes).unwrap();
    assert_eq!(col.summary().resident_blocks, 1);
    assert_serves(&col, &refs);
    let plain = encode_column(
        &refs,
        &LogOptions {
            resident: false,
            ..opts.clone()
        },
    );
    assert!(
        bytes.len() < plain.len(),
        "{} vs {}",
        bytes.len(),
        plain.len()
    );
    assert_eq!(
        LogColumn::open(&plain).unwrap().summary().resident_blocks,
        0
    );
    let read = |b: &[u8]| {
        if let Ok(c) = LogColumn::open(b) {
            let (mut v, mut o) = (Vec::new(), Vec::new());
            c.decode_all(&mut v, &mut o);
        }
    };
    for cut in (0..bytes.len()).step_by(13) {
        assert!(LogColumn::open(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut bad = bytes.clone();
        let at = (x >> 8) as usize % bad.len();
        bad[at] ^= 1 << (x % 8);
        read(&bad);
    }
    // The header's row index and column data lengths (bytes 8..16): any
    // value, including ones past the image.
    for v in [0u32, 1, 7, 255, 1 << 16, u32::MAX] {
        for at in [8, 12] {
            let mut bad = bytes.clone();
            bad[at..at + 4].copy_from_slice(&v.to_le_bytes());
            read(&bad);
        }
    }
}

/// `LogColumn::breakdown` parts (where a payload's bytes go) add up to the
/// payload and none exceeds it, for every payload form the golden files
/// hold (pool form 1 and form 2 at their code widths; it once counted 12
/// bits a code and whole tokens, and a part wrapped below zero).
#[test]
fn breakdown_parts_add_up() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/golden");
    for file in [
        "logs_payload.fpl",
        "logs_payload_v6.fpl",
        "logs_payload_v7.fpl",
        "logs_payload_v8.fpl",
        "logs_payload_v9.fpl",
        "logs_payload_access_v9.fpl",
        "logs_payload_v10.fpl",
        "logs_payload_access_v10.fpl",
        "logs_payload_v11.fpl",
        "logs_payload_access_v11.fpl",
    ] {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let parts = LogColumn::open(&bytes).unwrap().breakdown();
        let len = bytes.len() as u64;
        assert!(parts.iter().all(|&p| p <= len), "{file}: {parts:?}");
        assert_eq!(parts.iter().sum::<u64>(), len, "{file}");
    }
}

/// A slot whose values are all distinct (package names and versions, as in
/// dpkg.log) is a value dictionary in a small column (its values then live
/// in the block's LZMA2 open section), free text with
/// `LogOptions::unique_dicts` off; both read back, and the dictionary form
/// is the smaller.
#[test]
fn distinct_values_of_a_small_column_are_a_dictionary() {
    // A name of letters a row: 8 from a linear congruential walk.
    let name = |i: u32| -> String {
        let mut x = i.wrapping_mul(2_654_435_761).wrapping_add(12_345);
        (0..8)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (b'a' + (x >> 16) as u8 % 26) as char
            })
            .collect()
    };
    let rows: Vec<String> = (0..1500u32)
        .map(|i| {
            format!(
                "2025-06-10 12:{:02}:{:02} status installed {}:amd64",
                i / 60 % 60,
                i % 60,
                name(i)
            )
        })
        .collect();
    let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
    let kinds = |opts: &LogOptions| {
        let payload = encode_column(&refs, opts);
        let col = LogColumn::open(&payload).unwrap();
        assert_serves(&col, &refs);
        let s = col.summary();
        let slots = |name: &str| {
            s.slot_types
                .iter()
                .filter(|t| t.name == name)
                .map(|t| t.slots)
                .sum::<u64>()
        };
        (payload.len(), slots("dict"), slots("text"))
    };
    let on = kinds(&LogOptions::default());
    let off = kinds(&LogOptions {
        unique_dicts: false,
        ..LogOptions::default()
    });
    assert!(
        on.1 > off.1,
        "dictionary slots with / without: {on:?} {off:?}"
    );
    assert!(on.0 < off.0, "bytes with / without: {on:?} {off:?}");
}
