//! Golden files (testdata/golden/): small valid files and their source values.
//! Reading them must give the values; re-serializing their contents must give
//! the same bytes; and writing the values with the same options must reproduce
//! each file byte for byte as long as the trainer picks the same dictionary.
//!
//! Generations: the files named `v11_*` pin format version 11 (the current
//! one; `v11_planes_*` store their dictionaries' planes, §4.5;
//! `v11_logs_only` is a file of log-template chunks alone, which stores no
//! dictionary, §3) and are what the writer gives today; regenerate them
//! (`cargo test --test golden -- --ignored regenerate`) only on a
//! deliberate format change. The `v10_*` files pin version 10 (a log
//! block's open section), the `v9_*`
//! files version 9 (stepped runs blocks), the `v8_*`
//! files version 8 (runs integer blocks, §5.8.3), the `v7_*`,
//! `v6_*`, `v5_*` files pin versions 7 (delta integer blocks, §5.8.3), 6
//! and 5, the `v4_*` files version 4 (chunk kind and parts table in the
//! chunk header, a checksum per block, §5.0, §5.7), the `v3_*` files
//! version 3 (front-coded dictionaries, §4), the others versions 1 and 2
//! (planes on disk, §4.5): they were written by older writers, are never
//! regenerated, and must keep reading (and re-serializing, with the
//! format's writers of their version) exactly as before. The writer writes
//! version 11 only: the byte-for-byte rewrite test compares it with the
//! `v11_*` files.
//! testdata/corrupt/ is derived from nulls_multichunk.fpc,
//! v3_nulls_multichunk.fpc, v4_nulls_multichunk.fpc and
//! v5_planes_nulls_multichunk.fpc and its recipes name offsets in them:
//! regenerate those too (`cargo test --test corrupt -- --ignored
//! regenerate`) and check them.
//!
//! `NAME.values`: one value per line; a line `\N` is a null; the values hold
//! no newline.

use std::path::PathBuf;

use fastpair::dict::Dictionary;
use fastpair::format::layout::{self, ChunkParts, ChunkSection, DictSection, SectionRef};
use fastpair::format::wire::PutLe;
use fastpair::format::{cascade, codes};
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, DictPlanes, LogTemplates, ReadOptions, Reader, WriterOptions};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/golden")
}

/// Writer options of a golden file (`parallel_chunks` 2: the bytes do not
/// depend on it).
fn opts(codec: Codec, chunk_rows: usize, batch: u32, dict_mode: DictMode) -> WriterOptions {
    WriterOptions::default()
        .with_value_dict(false)
        .with_codec(codec)
        .with_chunk_rows(chunk_rows)
        .with_batch(batch)
        .with_dict_mode(dict_mode)
        .with_seed(1)
        .with_parallel_chunks(2)
        // These files pin the coded layouts (log templates have their own).
        .with_log_templates(LogTemplates::Off)
}

/// Each golden file of the current format (version 10): name, writer
/// options, and the generator of its values. The same columns as the
/// version 1–2 files of [`columns`], named `v11_*`, and the same columns
/// again with stored planes (§4.5), named `v11_planes_*`.
#[allow(clippy::type_complexity)]
fn golden() -> Vec<(String, WriterOptions, fn() -> Vec<Option<String>>)> {
    let mut v: Vec<(String, WriterOptions, fn() -> Vec<Option<String>>)> = columns()
        .into_iter()
        .map(|(name, o, gen)| (format!("v11_{name}"), o, gen))
        .collect();
    // Log-template chunks (§5.8): nulls, empty values, three chunks, the
    // last of them all null (so it stays coded: no bytes, §5.8).
    v.push((
        "v11_log_templates".into(),
        opts(Codec::OnPair12, 130, 64, DictMode::Shared).with_log_templates(LogTemplates::Always),
        log_template_rows,
    ));
    // Version 11 (§3): log-template chunks alone, so no dictionary stored
    // (two chunks, each with a dictionary of its own before it was left
    // out: the entries name the implicit dictionary 0 all the same).
    v.push((
        "v11_logs_only".into(),
        opts(Codec::OnPair12, 100, 64, DictMode::PerChunk).with_log_templates(LogTemplates::Always),
        log_lines,
    ));
    v.extend(columns().into_iter().map(|(name, o, gen)| {
        (
            format!("v11_planes_{name}"),
            o.with_dict_planes(DictPlanes::Always),
            gen,
        )
    }));
    // Stored planes with a high plane: W = 8 (few long codes), some tokens
    // longer than 8 bytes (flags 0x03, §4.5).
    v.push((
        "v11_planes_high_plane".into(),
        opts(Codec::OnPair12, 1 << 20, 64, DictMode::Shared).with_dict_planes(DictPlanes::Always),
        movie_titles,
    ));
    v
}

/// The first 1,500 titles of testdata/dbtext_movies_20k.txt.
fn movie_titles() -> Vec<Option<String>> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/dbtext_movies_20k.txt");
    let text = std::fs::read_to_string(p).unwrap();
    text.lines()
        .take(1500)
        .map(|l| Some(l.to_string()))
        .collect()
}

fn log_template_rows() -> Vec<Option<String>> {
    (0..300u32)
        .map(|i| match i {
            260.. => None,
            _ if i % 11 == 5 => None,
            _ if i % 13 == 7 => Some(String::new()),
            _ => Some(format!(
                "2024-03-{:02} 12:{:02}:{:02} node{} {} user=u{} took {}ms id=0x{:06x}",
                1 + i / 100,
                i % 60,
                (i * 7) % 60,
                i % 4,
                ["GET /index.html", "POST /api/v1/users", "login ok"][(i % 3) as usize],
                i % 9,
                (i * 37) % 1000,
                i * 4099
            )),
        })
        .collect()
}

/// The golden files of format versions 1 to 9 (never regenerated: they pin
/// how old files read): the version 1–2 files of [`columns`] and the same
/// columns as version 3, 4, 5 and 6, named `v3_*`, `v4_*`, `v5_*`, `v6_*`
/// (and `v5_planes_*`, `v6_planes_*`).
fn legacy() -> Vec<String> {
    let base: Vec<String> = columns().iter().map(|c| c.0.to_string()).collect();
    let v3 = base.iter().map(|n| format!("v3_{n}")).collect::<Vec<_>>();
    let v4 = base
        .iter()
        .map(|n| format!("v4_{n}"))
        .chain(["v4_log_templates".to_string()])
        .collect::<Vec<_>>();
    let v5 = base
        .iter()
        .flat_map(|n| [format!("v5_{n}"), format!("v5_planes_{n}")])
        .chain([
            "v5_log_templates".to_string(),
            "v5_planes_high_plane".to_string(),
        ])
        .collect::<Vec<_>>();
    let v6 = v5.iter().map(|n| n.replacen("v5_", "v6_", 1));
    let v7 = v5.iter().map(|n| n.replacen("v5_", "v7_", 1));
    let v8 = v5.iter().map(|n| n.replacen("v5_", "v8_", 1));
    let v9 = v5.iter().map(|n| n.replacen("v5_", "v9_", 1));
    let v10 = v5.iter().map(|n| n.replacen("v5_", "v10_", 1));
    base.into_iter()
        .chain(v3)
        .chain(v4)
        .chain(v5.clone())
        .chain(v6)
        .chain(v7)
        .chain(v8)
        .chain(v9)
        .chain(v10)
        .collect()
}

/// The golden columns, with the options and values an older writer wrote
/// the version 1–2 files from (the later generations use the same).
#[allow(clippy::type_complexity)]
fn columns() -> Vec<(&'static str, WriterOptions, fn() -> Vec<Option<String>>)> {
    vec![
        (
            "onpair12",
            opts(Codec::OnPair12, 1 << 20, 64, DictMode::Shared),
            log_lines,
        ),
        (
            "onpair16",
            opts(Codec::OnPair16, 1 << 20, 64, DictMode::Shared),
            urls,
        ),
        // Nulls, empty values, three chunks (150 rows: not a multiple of 8, so
        // the validity bitmap has padding bits), batch 16. testdata/corrupt/ is
        // derived from this file.
        (
            "nulls_multichunk",
            opts(Codec::OnPair12, 150, 16, DictMode::Shared),
            with_nulls,
        ),
        // FSST-12 (codec 3): W = 8, no high plane.
        (
            "fsst12",
            opts(Codec::Fsst12, 1 << 20, 64, DictMode::Shared),
            log_lines,
        ),
        // One dictionary per chunk.
        (
            "per_chunk_dicts",
            opts(Codec::OnPair16, 60, 32, DictMode::PerChunk),
            mixed,
        ),
        // Format version 2: value-dictionary chunks (§5.6), with nulls and
        // empty values, next to a chunk that keeps the plain layout.
        (
            "value_dict",
            opts(Codec::OnPair12, 100, 16, DictMode::Shared).with_value_dict(true),
            low_cardinality,
        ),
    ]
}

/// The format version of golden file `name`.
fn version_of(name: &str) -> u32 {
    if name.starts_with("v11_") {
        11
    } else if name.starts_with("v10_") {
        10
    } else if name.starts_with("v9_") {
        9
    } else if name.starts_with("v8_") {
        8
    } else if name.starts_with("v7_") {
        7
    } else if name.starts_with("v6_") {
        6
    } else if name.starts_with("v5_") {
        5
    } else if name.starts_with("v4_") {
        4
    } else if name.starts_with("v3_") {
        3
    } else if name == "value_dict" {
        2
    } else {
        1
    }
}

/// Every golden file's name, both generations.
fn all_names() -> Vec<String> {
    let mut v = legacy();
    v.extend(golden().into_iter().map(|g| g.0));
    v
}

/// Sets the version in the header and the tail.
fn set_version(file: &mut [u8], version: u32) {
    let n = file.len();
    file[8..12].copy_from_slice(&version.to_le_bytes());
    file[n - 16..n - 12].copy_from_slice(&version.to_le_bytes());
}

fn low_cardinality() -> Vec<Option<String>> {
    let cities = ["Paris", "", "Lyon", "Saint-Étienne", "Aix-en-Provence"];
    (0..300u32)
        .map(|i| match i {
            200..=299 => Some(format!("unique {i}")),
            _ if i % 11 == 5 => None,
            _ => Some(cities[(i * 7 % 5) as usize].to_string()),
        })
        .collect()
}

fn log_lines() -> Vec<Option<String>> {
    let verbs = ["GET", "POST", "PUT", "DELETE"];
    let paths = ["/index.html", "/api/v1/users", "/static/app.js", "/login"];
    (0..200u32)
        .map(|i| {
            Some(format!(
                "2024-03-{:02}T12:{:02}:{:02}Z {} {} {} {}ms",
                1 + i % 28,
                i % 60,
                (i * 7) % 60,
                verbs[(i % 4) as usize],
                paths[((i / 4) % 4) as usize],
                [200, 404, 500, 302][((i / 3) % 4) as usize],
                (i * 37) % 1000
            ))
        })
        .collect()
}

fn urls() -> Vec<Option<String>> {
    let hosts = ["example.com", "www.wikipedia.org", "docs.rs", "crates.io"];
    (0..200u32)
        .map(|i| {
            Some(format!(
                "https://{}/{}/page-{}?q=term{}&lang=en",
                hosts[(i % 4) as usize],
                ["wiki", "search", "crate", "blog"][((i / 4) % 4) as usize],
                i,
                i % 13
            ))
        })
        .collect()
}

fn with_nulls() -> Vec<Option<String>> {
    (0..450u32)
        .map(|i| match i % 11 {
            5 => None,
            9 => Some(String::new()),
            _ => Some(format!(
                "user-{:04}@mail.example.org;{}",
                (i * 7919) % 10000,
                "abc".repeat((i % 5) as usize)
            )),
        })
        .collect()
}

fn mixed() -> Vec<Option<String>> {
    (0..150u32)
        .map(|i| {
            if i % 13 == 0 {
                None
            } else if i < 60 {
                Some(format!("alpha-{i}-alpha"))
            } else {
                Some(format!("{}:{}:omega", i * 31, i % 7))
            }
        })
        .collect()
}

fn values_text(values: &[Option<String>]) -> String {
    values
        .iter()
        .map(|v| match v {
            None => "\\N\n".to_string(),
            Some(s) => {
                // testdata/README.md: the `.values` format has no escapes.
                assert!(!s.contains('\n') && !s.ends_with('\r') && s != "\\N");
                format!("{s}\n")
            }
        })
        .collect()
}

fn parse_values(text: &str) -> Vec<Option<Vec<u8>>> {
    text.lines()
        .map(|l| (l != "\\N").then(|| l.as_bytes().to_vec()))
        .collect()
}

fn load(name: &str) -> (Vec<u8>, Vec<Option<Vec<u8>>>) {
    let file = std::fs::read(dir().join(format!("{name}.fpc"))).unwrap();
    let text = std::fs::read_to_string(dir().join(format!("{name}.values"))).unwrap();
    (file, parse_values(&text))
}

#[test]
fn golden_files_read_back() {
    for name in all_names() {
        let name = name.as_str();
        let (file, values) = load(name);
        for eager in [false, true] {
            let r = Reader::from_bytes_with(file.clone(), ReadOptions::default().with_eager(eager))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(r.rows(), values.len() as u64, "{name}");
            let col = r.read_all().unwrap();
            for (i, want) in values.iter().enumerate() {
                assert_eq!(col.value(i), want.as_deref(), "{name} bulk row {i}");
                assert_eq!(r.get(i as u64).unwrap(), *want, "{name} row {i}");
            }
        }
    }
}

/// Re-serializes everything a golden file holds (codes, sidecar, row
/// boundaries, validity, dictionaries, footer) with the format's writers and
/// compares byte for byte: pins the layout independently of the trainer.
#[test]
fn golden_files_reserialize_byte_for_byte() {
    // Value-dictionary chunks are pinned by the rewrite test and tests/corrupt.rs.
    // Log-template chunks have no codes: tests/logs.rs pins their payload.
    for name in all_names().iter().filter(|n| {
        !n.ends_with("value_dict") && !n.ends_with("log_templates") && !n.ends_with("logs_only")
    }) {
        let (name, version) = (name.as_str(), version_of(name));
        let (file, _) = load(name);
        let r = Reader::from_bytes(file.clone()).unwrap();
        let mut out = layout::header_bytes().to_vec();
        let mut footer = r.footer().clone();
        let place = |out: &mut Vec<u8>, s: &[u8], crc: u32| {
            let at = out.len() as u64;
            out.extend_from_slice(s);
            out.pad16();
            SectionRef {
                offset: at,
                len: s.len() as u64,
                crc,
            }
        };
        for i in 0..r.num_chunks() {
            let c = r.chunk(i).unwrap();
            let cc = c.codes();
            let all: Vec<u16> = (0..cc.len()).map(|k| cc.get(k)).collect();
            let mut packed = Vec::new();
            codes::pack(cc.bits(), &all, &mut packed);
            let seq = |v: &[u32]| {
                let mut b = Vec::new();
                cascade::encode(v, &mut b);
                b
            };
            let (sc, rc, rb) = (
                seq(c.sidecar()),
                seq(&c.row_code_bounds().unwrap()),
                seq(&c.row_byte_bounds().unwrap()),
            );
            let mut s = Vec::new();
            ChunkSection::write(
                version,
                &ChunkParts {
                    kind: c.kind(),
                    batch: c.batch(),
                    code_bits: cc.bits(),
                    codes: &packed,
                    sidecar: &sc,
                    row_codes: &rc,
                    row_bytes: &rb,
                    validity: c.validity(),
                    value_index: None,
                    log_payload: None,
                },
                &mut s,
            );
            let crc = layout::section_crc(version, &s).unwrap();
            footer.chunks[i].section = place(&mut out, &s, crc);
        }
        for (i, d) in r.dictionaries().unwrap().iter().enumerate() {
            let mut s = Vec::new();
            d.write_section_as(version, version < 3 || d.planes_stored(), &mut s);
            footer.dicts[i] = place(&mut out, &s, crc32fast::hash(&s));
        }
        let fb = footer.to_bytes();
        out.extend_from_slice(&fb);
        out.extend_from_slice(&layout::tail_bytes(fb.len() as u32, crc32fast::hash(&fb)));
        set_version(&mut out, version);
        assert!(
            out == file,
            "{name}: re-serializing its contents gives different bytes: the layout of format v{version} changed"
        );
    }
}

/// Writing a golden file's values with its options gives the same file —
/// whenever the trainer and matcher still choose the same dictionary and
/// codes. When they do not (the trainer changed), this prints a notice: the
/// layout itself is pinned by `golden_files_reserialize_byte_for_byte`.
/// A mined template as `inspect` shows it: block, rows, text, slot types.
type MinedTemplate = (&'static str, u64, String, Vec<&'static str>);

#[test]
fn golden_files_rewrite_byte_for_byte() {
    for (name, o, _) in golden() {
        let (file, values) = load(&name);
        let again = write_to_vec(values.iter().map(|v| v.as_deref()), o).unwrap();
        if again == file {
            continue;
        }
        let (a, b) = (
            Reader::from_bytes(again.clone()).unwrap(),
            Reader::from_bytes(file.clone()).unwrap(),
        );
        let same_dicts = a.dictionaries().unwrap().len() == b.dictionaries().unwrap().len()
            && a.dictionaries()
                .unwrap()
                .iter()
                .zip(b.dictionaries().unwrap())
                .all(|(x, y)| x.table() == y.table());
        let codes = |r: &Reader| -> Vec<Vec<u16>> {
            (0..r.num_chunks())
                .map(|i| {
                    let cc = r.chunk(i).unwrap().codes();
                    (0..cc.len()).map(|k| cc.get(k)).collect()
                })
                .collect()
        };
        // Templates a log-template chunk mined (§5.8): a miner change gives
        // other templates, which is not a layout change.
        let templates = |r: &Reader| -> Vec<Vec<MinedTemplate>> {
            (0..r.num_chunks())
                .map(|i| {
                    r.chunk(i)
                        .unwrap()
                        .log_summary()
                        .map(|s| {
                            s.top
                                .into_iter()
                                .map(|t| (t.block, t.rows, t.text, t.slots))
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        };
        if same_dicts && codes(&a) == codes(&b) && templates(&a) == templates(&b) {
            let at = again
                .iter()
                .zip(&file)
                .position(|(x, y)| x != y)
                .unwrap_or(again.len().min(file.len()));
            panic!(
                "{name}: same dictionary and codes, but the writer gives different bytes (first \
                 difference at byte {at}, {} vs {} bytes). A format change must be deliberate; if \
                 it is, regenerate: cargo test --test golden -- --ignored regenerate",
                again.len(),
                file.len()
            );
        }
        eprintln!(
            "NOTICE: {name}: the trainer/matcher now choose other tokens or codes; the golden \
             file still reads back and its layout is pinned by re-serialization"
        );
    }
}

#[test]
fn golden_files_have_what_they_claim() {
    for p in [
        "",
        "v3_",
        "v4_",
        "v5_",
        "v5_planes_",
        "v6_",
        "v6_planes_",
        "v7_",
        "v7_planes_",
        "v8_",
        "v8_planes_",
        "v9_",
        "v9_planes_",
        "v10_",
        "v10_planes_",
        "v11_",
        "v11_planes_",
    ] {
        let load = |name: &str| load(&format!("{p}{name}"));
        let r = Reader::from_bytes(load("nulls_multichunk").0).unwrap();
        assert_eq!(r.num_chunks(), 3);
        assert_eq!(r.dictionaries().unwrap()[0].codec(), Codec::OnPair12);
        assert!(r.read_all().unwrap().validity.is_some());
        // Tokens longer than 8 bytes (a high plane in the version-1 file;
        // the v3 file's longer tokens chose W = 16).
        assert!(r.dictionaries().unwrap()[0]
            .table()
            .lens()
            .iter()
            .any(|&l| l > 8));
        let stored = r.dictionaries().unwrap()[0].planes_stored();
        if p.ends_with("planes_") {
            let r = Reader::from_bytes(load("high_plane").0).unwrap();
            let d = r.dictionary(0).unwrap();
            assert!(d.planes_stored() && d.planes().width == 8 && !d.planes().hi.is_empty());
        }
        assert_eq!(stored, p.is_empty() || p.ends_with("planes_"), "{p}");
        if p.is_empty() {
            let planes = r.dictionaries().unwrap()[0].planes();
            assert!(!planes.hi.is_empty() && planes.width == 8, "a high plane");
        }
        let r = Reader::from_bytes(load("per_chunk_dicts").0).unwrap();
        assert_eq!(r.dictionaries().unwrap().len(), r.num_chunks());
        assert!(r.num_chunks() >= 3);
        let r = Reader::from_bytes(load("onpair16").0).unwrap();
        assert_eq!(r.dictionaries().unwrap()[0].codec(), Codec::OnPair16);
        let r = Reader::from_bytes(load("fsst12").0).unwrap();
        let d = &r.dictionaries().unwrap()[0];
        assert_eq!(d.codec(), Codec::Fsst12);
        assert!(d.num_tokens() > 256, "learned symbols");
        assert!(d.table().lens().iter().all(|&l| l <= 8));
        assert!(d.planes().hi.is_empty() && d.planes().width == 8);
        let r = Reader::from_bytes(load("value_dict").0).unwrap();
        let values: Vec<u32> = r.footer().chunks.iter().map(|c| c.values).collect();
        assert_eq!(
            values,
            vec![5, 5, 0],
            "{p}: two value-dictionary chunks, one plain"
        );
    }
    for name in all_names() {
        let file = load(&name).0;
        assert_eq!(file[8..12], version_of(&name).to_le_bytes(), "{name}");
    }
    // A version-3 dictionary section is smaller than the planes it
    // materializes (the point of §4's front coding).
    for g in golden().iter().filter(|g| !g.0.starts_with("v11_planes_")) {
        let file = load(&g.0).0;
        let r = Reader::from_bytes(file).unwrap();
        for (d, s) in r.dictionaries().unwrap().iter().zip(&r.footer().dicts) {
            let p = d.planes();
            assert!(
                (s.len as usize) < 136 + p.lens.len() + p.lo.len() + p.hi.len(),
                "{}",
                g.0
            );
        }
    }
}

/// A version-1 or -2 file and the version-3 file of the same values and
/// options hold the same rows; and the old file's own dictionaries, spelled
/// as version-3 sections, read back the same tokens, planes, codec and
/// histogram from fewer bytes: only the dictionary section's spelling
/// changed (the trainer changed too, so the v3 golden files' tokens differ).
#[test]
fn version_3_files_hold_what_version_1_and_2_files_hold() {
    for (name, _, _) in columns() {
        let (file, _) = load(name);
        let old = Reader::from_bytes(file.clone()).unwrap();
        let new = Reader::from_bytes(load(&format!("v3_{name}")).0).unwrap();
        assert_eq!(old.read_all().unwrap(), new.read_all().unwrap(), "{name}");
        for (id, d) in old.dictionaries().unwrap().iter().enumerate() {
            let id = id as u32;
            let mut v3 = Vec::new();
            d.write_section(3, &mut v3);
            let p = DictSection::parse_version(&v3, 0, id, 3).unwrap();
            let back = Dictionary::validate(&p, id, 0).unwrap();
            assert_eq!(back.table(), d.table(), "{name}");
            assert_eq!(back.planes(), d.planes(), "{name}");
            assert_eq!((back.codec(), back.hist()), (d.codec(), d.hist()), "{name}");
            let r = old.footer().dicts[id as usize];
            assert!(
                (v3.len() as u64) < r.len,
                "{name}: {} vs {}",
                v3.len(),
                r.len
            );
            // The planes spelling is still what the old file holds.
            let mut v2 = Vec::new();
            d.write_section(2, &mut v2);
            let at = r.offset as usize;
            assert!(v2 == file[at..at + r.len as usize], "{name}");
        }
    }
}

/// Rewrites testdata/golden/. Run on a deliberate format change only.
#[test]
#[ignore]
fn regenerate() {
    std::fs::create_dir_all(dir()).unwrap();
    for (name, o, gen) in golden() {
        let values = gen();
        let file = write_to_vec(values.iter().map(|v| v.as_deref().map(str::as_bytes)), o).unwrap();
        std::fs::write(dir().join(format!("{name}.fpc")), &file).unwrap();
        std::fs::write(dir().join(format!("{name}.values")), values_text(&values)).unwrap();
        eprintln!("{name}: {} rows, {} bytes", values.len(), file.len());
    }
}

/// Version 4 changed the chunk header (kind, parts table) and added the
/// checksum table (§5.0, §5.7), nothing else: each `v4_*` file holds the
/// rows of its `v3_*` file, its dictionary sections are spelled as in
/// version 3, and its chunks' parts, without the table, are a version-3
/// chunk's (re-serialized at version 3 they parse back to the same parts).
#[test]
fn version_4_files_hold_what_version_3_files_hold() {
    for (name, _, _) in columns() {
        let v3 = Reader::from_bytes(load(&format!("v3_{name}")).0).unwrap();
        let (file, _) = load(&format!("v4_{name}"));
        let v4 = Reader::from_bytes(file.clone()).unwrap();
        assert_eq!(v3.read_all().unwrap(), v4.read_all().unwrap(), "{name}");
        for (d, r) in v4.dictionaries().unwrap().iter().zip(&v4.footer().dicts) {
            let mut s = Vec::new();
            d.write_section(3, &mut s);
            let at = r.offset as usize;
            assert!(s == file[at..at + r.len as usize], "{name}");
        }
        for (i, e) in v4.footer().chunks.iter().enumerate() {
            let (at, len) = (e.section.offset as usize, e.section.len as usize);
            let bits = v4.dictionaries().unwrap()[e.dict as usize].code_bits();
            let p =
                ChunkSection::parse(&file[at..at + len], at as u64, i as u32, e, bits, 4).unwrap();
            let table = p.checksums.unwrap();
            // At least the codes' and the row sequences' blocks.
            assert!(table.len() >= 12, "{name}: table {}", table.len());
            let mut s = Vec::new();
            let parts = ChunkParts {
                kind: p.kind,
                batch: p.batch,
                code_bits: bits,
                codes: p.codes,
                sidecar: p.sidecar.0,
                row_codes: p.row_codes.0,
                row_bytes: p.row_bytes.0,
                validity: p.validity,
                value_index: p.value_index.map(|x| x.0),
                log_payload: p.log_payload.map(|x| x.0),
            };
            ChunkSection::write(3, &parts, &mut s);
            let mut e3 = *e;
            e3.section.len = s.len() as u64;
            let q = ChunkSection::parse(&s, 0, i as u32, &e3, bits, 3).unwrap();
            assert_eq!(
                (q.kind, q.batch, q.codes, q.validity),
                (p.kind, p.batch, p.codes, p.validity),
                "{name}"
            );
            assert_eq!(
                (q.sidecar.0, q.row_codes.0, q.row_bytes.0),
                (p.sidecar.0, p.row_codes.0, p.row_bytes.0)
            );
        }
    }
}

/// Version 5 changed one thing: a dictionary may store its planes (§4.5,
/// flag bit 1). Each `v5_*` file (front-coded: these small columns stay
/// under `DictPlanes::Auto`'s 1%) is its `v4_*` file with 5 for 4; each
/// `v5_planes_*` file holds the same rows, chunks and footer counts, its
/// dictionaries the same tokens, spelled as the planes.
#[test]
fn version_5_files_hold_what_version_4_files_hold() {
    for name in columns().iter().map(|c| c.0).chain(["log_templates"]) {
        let (mut v4, _) = load(&format!("v4_{name}"));
        let (v5, _) = load(&format!("v5_{name}"));
        set_version(&mut v4, 5);
        assert!(v4 == v5, "{name}: v5 is not v4 relabelled");
        if name == "log_templates" {
            continue;
        }
        let (p, _) = load(&format!("v5_planes_{name}"));
        let (a, b) = (
            Reader::from_bytes(v5).unwrap(),
            Reader::from_bytes(p.clone()).unwrap(),
        );
        assert_eq!(a.read_all().unwrap(), b.read_all().unwrap(), "{name}");
        for (i, (x, y)) in a.footer().chunks.iter().zip(&b.footer().chunks).enumerate() {
            assert_eq!(
                (x.section, x.dict, x.rows, x.codes),
                (y.section, y.dict, y.rows, y.codes),
                "{name} chunk {i}"
            );
        }
        for ((x, y), r) in a
            .dictionaries()
            .unwrap()
            .iter()
            .zip(b.dictionaries().unwrap())
            .zip(&b.footer().dicts)
        {
            assert!(y.planes_stored() && !x.planes_stored());
            assert_eq!(
                (x.table(), x.planes(), x.hist()),
                (y.table(), y.planes(), y.hist())
            );
            let at = r.offset as usize;
            assert_eq!(p[at + 3] & 2, 2, "{name}: flag bit 1");
            assert_eq!(r.len as usize, y.planes().section_len(), "{name}");
        }
    }
}

/// Version 6 changed two spellings: a front-coded dictionary section leaves
/// the 256 single bytes implicit (§4), and a log-template payload's pool is
/// front-coded with codes at its own width (§5.8.4, magic "FPL2"/"FPS2").
/// Each `v6_*` file holds its `v5_*` file's rows; their dictionaries hold
/// the same tokens, planes and histograms (the trainer did not change), a
/// front-coded section exactly 512 bytes smaller before padding (the 256
/// single bytes' two nibbles and byte each), a stored-planes section the
/// same bytes; their coded chunks are the same bytes; a log chunk's payload
/// is smaller.
#[test]
fn version_6_files_hold_what_version_5_files_hold() {
    let names = columns()
        .iter()
        .flat_map(|c| [c.0.to_string(), format!("planes_{}", c.0)])
        .chain(["log_templates".to_string(), "planes_high_plane".to_string()])
        .collect::<Vec<_>>();
    for name in names {
        let (f5, _) = load(&format!("v5_{name}"));
        let (f6, _) = load(&format!("v6_{name}"));
        let (a, b) = (
            Reader::from_bytes(f5.clone()).unwrap(),
            Reader::from_bytes(f6.clone()).unwrap(),
        );
        assert_eq!(a.read_all().unwrap(), b.read_all().unwrap(), "{name}");
        let (da, db) = (a.dictionaries().unwrap(), b.dictionaries().unwrap());
        assert_eq!(da.len(), db.len(), "{name}");
        for (i, (x, y)) in da.iter().zip(db).enumerate() {
            assert_eq!(
                (x.table(), x.planes(), x.hist()),
                (y.table(), y.planes(), y.hist()),
                "{name} dictionary {i}"
            );
            let (ra, rb) = (a.footer().dicts[i], b.footer().dicts[i]);
            let sa = &f5[ra.offset as usize..(ra.offset + ra.len) as usize];
            let sb = &f6[rb.offset as usize..(rb.offset + rb.len) as usize];
            if y.planes_stored() {
                assert_eq!(sa, sb, "{name}: stored planes are spelled as in version 5");
            } else {
                let mut v5 = Vec::new();
                y.write_section(5, &mut v5);
                assert_eq!(v5, sa, "{name}: the version-5 spelling of the same tokens");
                let suffixes = |s: &[u8], n: usize| s.len() - 136 - 2 * n.div_ceil(2);
                let n = y.num_tokens() as usize;
                assert!(
                    suffixes(sa, n) >= 256 && sb.len() + 512 <= sa.len() + 15,
                    "{name}: {} vs {} bytes",
                    sb.len(),
                    sa.len()
                );
            }
        }
        assert_eq!(a.num_chunks(), b.num_chunks(), "{name}");
        for i in 0..a.num_chunks() {
            let (ea, eb) = (a.footer().chunks[i], b.footer().chunks[i]);
            assert_eq!((ea.rows, ea.codes, ea.bytes), (eb.rows, eb.codes, eb.bytes));
            let ca = &f5[ea.section.offset as usize..][..ea.section.len as usize];
            let cb = &f6[eb.section.offset as usize..][..eb.section.len as usize];
            if a.chunk(i).unwrap().kind() == fastpair::format::ChunkKind::LogTemplates {
                assert!(
                    cb.len() < ca.len(),
                    "{name} chunk {i}: {} vs {}",
                    cb.len(),
                    ca.len()
                );
            } else {
                assert_eq!(
                    ca, cb,
                    "{name} chunk {i}: coded chunks are version 5's bytes"
                );
            }
        }
    }
}

/// Version 7 added the delta integer block (§5.8.3, payload magics
/// "FPL3"/"FPS3") and nothing else: each `v7_*` file holds its `v6_*`
/// file's rows, its dictionary sections and coded chunks are version 6's
/// bytes, and its log-template chunks hold a version-7 payload (delta
/// blocks where they are smaller) that is not larger than version 6's.
#[test]
fn version_7_files_hold_what_version_6_files_hold() {
    use fastpair::logs::LogForm;
    let added = next_version_holds_the_same(6, (LogForm::V6, LogForm::V7), Some(2));
    assert!(added > 0, "the golden log chunks hold delta blocks");
}

/// Version 8 added the runs integer block (§5.8.3, payload magics
/// "FPL4"/"FPS4") and nothing else: each `v8_*` file holds its `v7_*`
/// file's rows, its dictionary sections and coded chunks are version 7's
/// bytes, and its log-template chunks hold a version-8 payload (runs
/// blocks where they are smaller) that is not larger than version 7's.
#[test]
fn version_8_files_hold_what_version_7_files_hold() {
    use fastpair::logs::LogForm;
    let added = next_version_holds_the_same(7, (LogForm::V7, LogForm::V8), Some(3));
    assert!(added > 0, "the golden log chunks hold runs blocks");
}

/// Version 9 let a runs block step (§5.8.3, payload magics "FPL5"/"FPS5")
/// and nothing else: each `v9_*` file holds its `v8_*` file's rows, its
/// dictionary sections and coded chunks are version 8's bytes, and its
/// log-template chunks hold a version-9 payload (stepped runs blocks
/// where they are smaller) that is not larger than version 8's.
#[test]
fn version_9_files_hold_what_version_8_files_hold() {
    use fastpair::logs::LogForm;
    let added = next_version_holds_the_same(8, (LogForm::V8, LogForm::V9), Some(4));
    assert!(added > 0, "the golden log chunks hold stepped runs blocks");
}

/// Version 10 moved a log block's meta, pool token table and shared
/// strings into its LZMA2 open section (§5.8.6, payload magics
/// "FPL6"/"FPS6") and nothing else: each `v10_*` file holds its `v9_*`
/// file's rows, dictionary sections and coded chunks byte for byte, and its
/// log-template chunks hold version-10 payloads no larger than version 9's.
#[test]
fn version_10_files_hold_what_version_9_files_hold() {
    use fastpair::logs::LogForm;
    // No integer block mode of its own: the blocks are version 9's kinds.
    next_version_holds_the_same(9, (LogForm::V9, LogForm::V10), None);
}

/// Version 11 left out the dictionary of a file whose chunks are all log
/// templates (§3) and nothing else: each `v11_*` file holds its `v10_*`
/// file's rows, dictionary sections and coded chunks byte for byte (the
/// golden log file has a coded chunk, so it keeps its dictionary), and log
/// payloads ("FPL7"/"FPS7", whose blocks may keep their row index and
/// column data in the open section, §5.8.6) no larger; `v11_logs_only`
/// stores no dictionary,
/// and the same rows written as version 10 stored the single bytes'
/// section, which is all the version-11 file is smaller by.
#[test]
fn version_11_files_hold_what_version_10_files_hold() {
    use fastpair::logs::LogForm;
    // The same payload form; dictionaries and coded chunks byte for byte.
    next_version_holds_the_same(10, (LogForm::V10, LogForm::V11), None);
    let (file, values) = load("v11_logs_only");
    let r = Reader::from_bytes(file.clone()).unwrap();
    assert!(r.footer().dicts.is_empty() && r.num_chunks() == 2);
    assert!(r
        .footer()
        .chunks
        .iter()
        .all(|c| c.dict == 0 && c.codes == 0));
    assert_eq!(r.num_dictionaries(), 1, "the implicit dictionary");
    let d = r.dictionary(0).unwrap();
    assert_eq!(
        (d.codec(), d.num_tokens(), d.hist()),
        (Codec::OnPair12, 256, &[0; 16])
    );
    // Written as version 10 the file stored a dictionary section of the
    // single bytes (144 bytes) and its footer entry (24) per chunk: this
    // file is the same chunk sections with none of those.
    let single = {
        let mut s = Vec::new();
        Dictionary::from_table(
            Codec::OnPair12,
            fastpair::dict::TokenTable::single_bytes(),
            [0; 16],
        )
        .write_section(10, &mut s);
        s.len()
    };
    assert_eq!(single, 144);
    let chunks: u64 = r.footer().chunks.iter().map(|c| c.section.len).sum();
    assert_eq!(file.len() as u64, 16 + chunks + 32 + 48 * 2 + 24);
    assert_eq!(r.read_all().unwrap().len(), values.len());
}

/// Checks that each golden file of version `old + 1` holds its version
/// `old` file's rows, dictionary sections and coded chunks byte for byte,
/// and log payloads of `forms` no larger, the new version's with blocks of
/// mode `mode` (`LogColumn::integer_block_modes`) the old one lacks, when
/// the new version added a mode.
/// Returns how many such blocks the new files' log payloads hold.
fn next_version_holds_the_same(
    old: u32,
    forms: (fastpair::logs::LogForm, fastpair::logs::LogForm),
    mode: Option<usize>,
) -> usize {
    use fastpair::logs::{LogColumn, LogForm};
    let new = old + 1;
    let names = columns()
        .iter()
        .flat_map(|c| [c.0.to_string(), format!("planes_{}", c.0)])
        .chain(["log_templates".to_string(), "planes_high_plane".to_string()])
        .collect::<Vec<_>>();
    let mut added = 0;
    for name in names {
        let (f6, _) = load(&format!("v{old}_{name}"));
        let (f7, _) = load(&format!("v{new}_{name}"));
        let (a, b) = (
            Reader::from_bytes(f6.clone()).unwrap(),
            Reader::from_bytes(f7.clone()).unwrap(),
        );
        assert_eq!(a.read_all().unwrap(), b.read_all().unwrap(), "{name}");
        assert_eq!(a.footer().dicts.len(), b.footer().dicts.len(), "{name}");
        for (ra, rb) in a.footer().dicts.iter().zip(&b.footer().dicts) {
            assert_eq!(
                &f6[ra.offset as usize..(ra.offset + ra.len) as usize],
                &f7[rb.offset as usize..(rb.offset + rb.len) as usize],
                "{name}: dictionary sections are version {old}'s bytes"
            );
        }
        assert_eq!(a.num_chunks(), b.num_chunks(), "{name}");
        for i in 0..a.num_chunks() {
            let (ea, eb) = (a.footer().chunks[i], b.footer().chunks[i]);
            assert_eq!((ea.rows, ea.codes, ea.bytes), (eb.rows, eb.codes, eb.bytes));
            let ca = &f6[ea.section.offset as usize..][..ea.section.len as usize];
            let cb = &f7[eb.section.offset as usize..][..eb.section.len as usize];
            if a.chunk(i).unwrap().kind() == fastpair::format::ChunkKind::LogTemplates {
                let payload = |r: &Reader, s: &[u8], e: &layout::ChunkEntry, v| {
                    let bits = r.dictionaries().unwrap()[e.dict as usize].code_bits();
                    let p = ChunkSection::parse(s, e.section.offset, i as u32, e, bits, v).unwrap();
                    p.log_payload.unwrap().0.to_vec()
                };
                let (pa, pb) = (payload(&a, ca, &ea, old), payload(&b, cb, &eb, new));
                let (la, lb) = (LogColumn::open(&pa).unwrap(), LogColumn::open(&pb).unwrap());
                assert_eq!((la.form(), lb.form()), forms);
                if let Some(mode) = mode {
                    assert_eq!(la.integer_block_modes()[mode], 0);
                    added += lb.integer_block_modes()[mode];
                }
                // Version 10's open section has ~16 bytes of framing (LZMA2's
                // chunk header, end marker and range coder flush, the image's
                // length), which the golden files' small log chunks
                // (130 rows) need not win back.
                let framing = if matches!(forms.1, LogForm::V10 | LogForm::V11) {
                    16
                } else {
                    0
                };
                assert!(
                    pb.len() <= pa.len() + framing,
                    "{name} chunk {i}: {} > {}",
                    pb.len(),
                    pa.len()
                );
            } else {
                assert_eq!(
                    ca, cb,
                    "{name} chunk {i}: coded chunks are version {old}'s bytes"
                );
            }
        }
    }
    added
}
