//! Log-template chunks in files (spec/FORMAT.md §5.8, issue 20): the writer
//! emits them (`LogTemplates::Auto` when smaller, `Always` when asked), the
//! reader serves every row by get and in bulk, with nulls, across chunks.

use fastpair::read::ChunkKind;
use fastpair::write::write_to_vec;
use fastpair::{LogTemplates, Reader, WriterOptions};

fn log_rows(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| match i % 13 {
            12 => None,
            7 => Some(Vec::new()),
            k => Some(
                format!(
                    "2024-05-{:02} 10:{:02}:{:02} host{} sshd[{}]: {} for user{} from 10.0.{}.{} port {}",
                    1 + i / 5000,
                    i / 60 % 60,
                    i % 60,
                    i % 3,
                    4000 + i,
                    ["Accepted key", "Failed password", "Disconnected"][k % 3],
                    i % 17,
                    i % 5,
                    i * 7 % 256,
                    40000 + i % 1000
                )
                .into_bytes(),
            ),
        })
        .collect()
}

fn check(rows: &[Option<Vec<u8>>], file: Vec<u8>) -> Reader {
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.rows(), rows.len() as u64);
    let col = r.read_all().unwrap();
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(col.value(i), want.as_deref(), "bulk row {i}");
        assert_eq!(r.get(i as u64).unwrap(), *want, "get row {i}");
    }
    // A range inside a chunk, and one across chunks.
    let part = r.read_range(5..rows.len() as u64 - 3).unwrap();
    for (k, want) in rows[5..rows.len() - 3].iter().enumerate() {
        assert_eq!(part.value(k), want.as_deref(), "range row {}", k + 5);
    }
    r
}

fn kinds(r: &Reader) -> Vec<ChunkKind> {
    (0..r.num_chunks())
        .map(|i| r.chunk_info(i).kind())
        .collect()
}

#[test]
fn auto_writes_log_chunks_for_logs_and_reads_them_back() {
    let rows = log_rows(6000);
    let it = || rows.iter().map(|r| r.as_deref());
    let opts = WriterOptions::default()
        .with_chunk_rows(2500)
        .with_log_templates(LogTemplates::Auto);
    let auto = write_to_vec(it(), opts.clone()).unwrap();
    let off = write_to_vec(it(), opts.with_log_templates(LogTemplates::Off)).unwrap();
    let r = check(&rows, auto.clone());
    assert_eq!(kinds(&r), vec![ChunkKind::LogTemplates; 3]);
    assert!(
        auto.len() * 2 < off.len(),
        "{} vs {}",
        auto.len(),
        off.len()
    );
    // Fresh reader: gets before any bulk read (point reads open the chunk).
    let r = Reader::from_bytes(auto).unwrap();
    for i in (0..rows.len()).rev().step_by(97) {
        assert_eq!(r.get(i as u64).unwrap(), rows[i], "cold get row {i}");
    }
}

#[test]
fn always_forces_log_chunks_and_empty_chunks_stay_coded() {
    let mut rows: Vec<Option<Vec<u8>>> = (0..300)
        .map(|i| Some(format!("v{}", i % 7).into_bytes()))
        .collect();
    rows.extend((0..100).map(|_| None));
    let opts = WriterOptions::default()
        .with_chunk_rows(300)
        .with_log_templates(LogTemplates::Always);
    let r = check(
        &rows,
        write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap(),
    );
    assert_eq!(kinds(&r), vec![ChunkKind::LogTemplates, ChunkKind::Coded]);
}

#[test]
fn auto_keeps_other_layouts_where_logs_are_not_smaller() {
    // Random letters: no template, no number; the template codec would
    // escape every row.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let rows: Vec<Option<Vec<u8>>> = (0..3000)
        .map(|_| {
            let n = 5 + (x % 20) as usize;
            Some(
                (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        b"abcdefghijklmnop  "[(x % 18) as usize]
                    })
                    .collect(),
            )
        })
        .collect();
    let it = || rows.iter().map(|r| r.as_deref());
    let auto = write_to_vec(
        it(),
        WriterOptions::default().with_log_templates(LogTemplates::Auto),
    )
    .unwrap();
    let off = write_to_vec(it(), WriterOptions::default()).unwrap();
    assert!(auto.len() <= off.len());
    let r = check(&rows, auto);
    assert!(!kinds(&r).contains(&ChunkKind::LogTemplates));
}

/// Real logs from outside the corpus (testdata/logs: the first 2,000 lines
/// of a Debian machine's `dpkg.log`, and its `alternatives.log`): small
/// files, where the coded layout's trained dictionary is a large share of
/// the file while a log chunk needs none of its tokens (§5.8: the file then
/// stores the single bytes). `auto` charges each layout its dictionary
/// bytes (write/encode.rs `DictShare`), so it writes log chunks here; when
/// it compared chunk bytes alone it kept the coded chunk, in a file 1.28×
/// (dpkg) and 1.30× (alternatives) the size of this one.
#[test]
fn auto_counts_the_dictionary_a_log_chunk_saves() {
    for name in ["dpkg_2k.log", "alternatives.log"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/logs")
            .join(name);
        let text = std::fs::read(&path).unwrap();
        let rows: Vec<Option<Vec<u8>>> = text
            .strip_suffix(b"\n")
            .unwrap()
            .split(|&b| b == b'\n')
            .map(|r| Some(r.to_vec()))
            .collect();
        let it = || rows.iter().map(|r| r.as_deref());
        let auto = write_to_vec(it(), WriterOptions::default()).unwrap();
        let coded = write_to_vec(
            it(),
            WriterOptions::default().with_log_templates(LogTemplates::Off),
        )
        .unwrap();
        assert!(
            auto.len() as f64 <= (1.0 - 0.10) * coded.len() as f64,
            "{name}: auto {} bytes, coded {} bytes",
            auto.len(),
            coded.len()
        );
        let r = check(&rows, auto);
        assert!(
            kinds(&r).iter().all(|k| *k == ChunkKind::LogTemplates),
            "{name}: {:?}",
            kinds(&r)
        );
    }
}

/// Arrow reads of log-template chunks: `LargeUtf8` of UTF-8 rows, and a row
/// that is not UTF-8 refused by name (validation marks it, §5.8); `take`.
#[test]
fn arrow_reads_of_log_chunks() {
    use arrow_array::{Array, LargeStringArray};
    use fastpair::arrow::{ArrowType, ReadArrow};
    let mut rows = log_rows(3000);
    let opts = || WriterOptions::default().with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts()).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(kinds(&r), vec![ChunkKind::LogTemplates]);
    let a = r.read_arrow(0..3000, ArrowType::LargeUtf8).unwrap();
    let s = a.as_any().downcast_ref::<LargeStringArray>().unwrap();
    for (i, want) in rows.iter().enumerate() {
        match want {
            None => assert!(s.is_null(i), "row {i}"),
            Some(w) => assert_eq!(s.value(i).as_bytes(), &w[..], "row {i}"),
        }
    }
    let t = r
        .take_arrow(&[2999, 0, 1500], ArrowType::LargeBinary)
        .unwrap();
    assert_eq!(t.len(), 3);
    // One row with a byte that is no UTF-8: binary reads serve it, a text
    // read names it.
    rows[1234] = Some(b"2024-05-01 10:00:00 host1 \xff broken".to_vec());
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts()).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let b = r.read_arrow(0..3000, ArrowType::LargeBinary).unwrap();
    assert_eq!(b.len(), 3000);
    let e = r.read_arrow(0..3000, ArrowType::LargeUtf8).unwrap_err();
    assert!(e.to_string().contains("1234"), "{e}");
}

/// A character cut between two rows: the rows' bytes back to back are
/// UTF-8, each row alone is not. Validation checks rows in batches (a
/// batch valid as a whole has each row valid where it starts on a
/// character), so both rows must still be marked, whatever batch or range
/// holds them, and the rows around them served as text; every row read
/// back as written.
#[test]
fn a_character_cut_between_rows_marks_both_rows() {
    use fastpair::arrow::{ArrowType, ReadArrow};
    let mut rows = log_rows(60_000);
    let cuts = [100u64, 16_383, 30_000, 59_998];
    for &c in &cuts {
        let c = c as usize;
        rows[c] = Some(b"2024-05-01 10:00:00 host1 caf\xc3".to_vec());
        rows[c + 1] = Some(b"\xa9 2024-05-01 10:00:01 host1 ok".to_vec());
    }
    rows[500] = Some(
        "2024-05-01 10:00:02 host1 caf\u{e9} \u{4e2d}"
            .as_bytes()
            .to_vec(),
    );
    let opts = WriterOptions::default().with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert!(kinds(&r).iter().all(|k| *k == ChunkKind::LogTemplates));
    let mut from = 0;
    for &c in &cuts {
        for bad in [c, c + 1] {
            let e = r
                .read_arrow(bad..bad + 1, ArrowType::LargeUtf8)
                .unwrap_err();
            assert!(e.to_string().contains(&bad.to_string()), "row {bad}: {e}");
        }
        r.read_arrow(from..c, ArrowType::LargeUtf8).unwrap();
        from = c + 2;
    }
    r.read_arrow(from..60_000, ArrowType::LargeUtf8).unwrap();
    // The whole column and a range inside it, in binary: row for row (the
    // reader renders a range of this many rows in parts on its threads).
    use arrow_array::{Array, LargeBinaryArray};
    for range in [0..60_000u64, 12_345..47_000] {
        let b = r.read_arrow(range.clone(), ArrowType::LargeBinary).unwrap();
        let b = b.as_any().downcast_ref::<LargeBinaryArray>().unwrap();
        assert_eq!(b.len() as u64, range.end - range.start);
        for (i, want) in rows[range.start as usize..range.end as usize]
            .iter()
            .enumerate()
        {
            match want {
                None => assert!(b.is_null(i), "row {}", range.start as usize + i),
                Some(w) => assert_eq!(b.value(i), &w[..], "row {}", range.start as usize + i),
            }
        }
    }
}
