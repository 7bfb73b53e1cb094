//! Value dictionaries (spec/FORMAT.md §5.6): low-cardinality columns take the
//! layout, every read path returns the rows, and the file shrinks.

use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, ReadOptions, Reader, WriterOptions};

fn rows_of(n: usize, distinct: usize, nulls: bool) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| {
            if nulls && i % 7 == 3 {
                return None;
            }
            let k = (i * 2654435761usize) % distinct;
            Some(if k == 0 {
                Vec::new()
            } else {
                format!("Clerk#{:09} value {}", k, "x".repeat(k % 13)).into_bytes()
            })
        })
        .collect()
}

fn check_reads(file: &[u8], rows: &[Option<Vec<u8>>]) {
    // Point reads before any chunk is validated whole.
    let r = Reader::from_bytes(file.to_vec()).expect("open");
    for i in (0..rows.len()).step_by(7).chain([0, rows.len() - 1]) {
        assert_eq!(
            r.get(i as u64).expect("point get"),
            rows[i],
            "point row {i}"
        );
    }
    let r = Reader::from_bytes_with(file.to_vec(), ReadOptions::default().with_eager(true))
        .expect("open eager");
    let col = r.read_all().expect("read_all");
    assert_eq!(col.len(), rows.len());
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(col.value(i), want.as_deref(), "bulk row {i}");
        assert_eq!(
            r.get(i as u64).expect("get").as_ref(),
            want.as_ref(),
            "get {i}"
        );
    }
    let (a, b) = (rows.len() as u64 / 3, rows.len() as u64 / 3 * 2 + 1);
    let part = r.read_range(a..b).expect("range");
    for i in a..b {
        assert_eq!(part.value((i - a) as usize), rows[i as usize].as_deref());
    }
    let mut vals = Vec::new();
    r.read_values_into(a..b, &mut vals).expect("values");
    let want: Vec<u8> = (a..b)
        .flat_map(|i| rows[i as usize].clone().unwrap_or_default())
        .collect();
    assert_eq!(vals, want);
}

fn uses_value_dict(file: &[u8]) -> usize {
    let r = Reader::from_bytes(file.to_vec()).expect("open");
    r.footer().chunks.iter().filter(|c| c.values > 0).count()
}

#[test]
fn low_cardinality_round_trips_every_codec_and_mode() {
    for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
        for mode in [DictMode::Shared, DictMode::PerChunk] {
            for nulls in [false, true] {
                let rows = rows_of(3000, 40, nulls);
                let opts = WriterOptions::default()
                    .with_codec(codec)
                    .with_chunk_rows(1000)
                    .with_dict_mode(mode)
                    .with_batch(16);
                let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts.clone()).unwrap();
                assert_eq!(uses_value_dict(&file), 3, "{codec:?} {mode:?} {nulls}");
                check_reads(&file, &rows);
                // The coded layout (without value dictionaries `auto` would
                // write these few distinct values as log templates, §5.8).
                let plain = write_to_vec(
                    rows.iter().map(|r| r.as_deref()),
                    opts.with_value_dict(false)
                        .with_log_templates(fastpair::LogTemplates::Off),
                )
                .unwrap();
                assert_eq!(uses_value_dict(&plain), 0);
                check_reads(&plain, &rows);
                assert!(
                    file.len() < plain.len(),
                    "{} vs {}",
                    file.len(),
                    plain.len()
                );
            }
        }
    }
}

#[test]
fn high_cardinality_keeps_the_plain_layout() {
    let rows: Vec<Option<Vec<u8>>> = (0..2000)
        .map(|i| Some(format!("unique value number {i}").into_bytes()))
        .collect();
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), WriterOptions::default()).unwrap();
    assert_eq!(uses_value_dict(&file), 0);
    check_reads(&file, &rows);
}

#[test]
fn mixed_chunks_and_all_null_chunks() {
    // Chunk 0 low-cardinality, chunk 1 unique values, chunk 2 all null,
    // chunk 3 one repeated value.
    let mut rows: Vec<Option<Vec<u8>>> = Vec::new();
    rows.extend(rows_of(500, 5, true));
    rows.extend((0..500).map(|i| Some(format!("row {i} is unique").into_bytes())));
    rows.extend((0..500).map(|_| None));
    rows.extend((0..500).map(|_| Some(b"same".to_vec())));
    let opts = WriterOptions::default().with_chunk_rows(500);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    let r = Reader::from_bytes(file.clone()).unwrap();
    let used: Vec<u32> = r.footer().chunks.iter().map(|c| c.values).collect();
    assert_eq!(used, vec![5, 0, 0, 1]);
    check_reads(&file, &rows);
}

#[path = "support/corpus.rs"]
mod corpus;

/// Corpus columns (FASTPAIR_CORPUS, else target/corpus; the TPC-H ones
/// generated without a corpus, tests/support/corpus.rs): the
/// low-cardinality ones take the layout, round-trip, and shrink.
#[test]
fn corpus_low_cardinality_columns() {
    let mut checked = 0;
    for name in [
        "tpch_sf1_l_shipinstruct",
        "tpch_sf1_o_clerk",
        "dbtext_city",
        "dbtext_firstname",
        "dbtext_lastname",
    ] {
        // A notice when neither in a corpus nor generated; a failure then
        // under FASTPAIR_REQUIRE_CORPUS=1.
        let Some(col) = corpus::column(name) else {
            continue;
        };
        let rows = col.rows();
        let rows = &rows[..rows.len().min(300_000)];
        let file = write_to_vec(rows.iter().map(|r| Some(*r)), WriterOptions::default()).unwrap();
        let plain = write_to_vec(
            rows.iter().map(|r| Some(*r)),
            WriterOptions::default().with_value_dict(false),
        )
        .unwrap();
        // The dbtext columns are deduplicated (every value distinct): they
        // keep the plain layout; the TPC-H ones repeat and shrink.
        if name.starts_with("tpch") {
            assert!(uses_value_dict(&file) > 0, "{name}");
            assert!(file.len() < plain.len(), "{name}");
        } else {
            assert_eq!(uses_value_dict(&file), 0, "{name}");
            assert_eq!(file.len(), plain.len(), "{name}");
        }
        let r = Reader::from_bytes(file).unwrap();
        let col = r.read_all().unwrap();
        for (i, want) in rows.iter().enumerate() {
            assert_eq!(col.value(i), Some(*want), "{name} row {i}");
        }
        for i in (0..rows.len()).step_by(997) {
            assert_eq!(r.get(i as u64).unwrap().as_deref(), Some(rows[i]));
        }
        checked += 1;
    }
    // The TPC-H columns are generated without a corpus: never nothing.
    assert!(checked >= 2, "only {checked} columns checked");
}

#[test]
fn short_values_across_gather_blocks() {
    // Values of 0..=16, 0..=20 and 0..=40 bytes, with and without nulls (the bulk gather copies a
    // chunk whose values are at most 16 or 32 bytes one 16- or 32-byte
    // block per row, longer ones in as many 16-byte blocks as they need,
    // and the last rows of a block exactly), nulls, and chunks of more rows
    // than one parallel gather block (16,384 rows), so block edges,
    // over-copies next to them and ranges starting mid-block are all read
    // back and compared.
    for (longest, nulls) in [16usize, 20, 40]
        .into_iter()
        .flat_map(|l| [(l, true), (l, false)])
    {
        let rows: Vec<Option<Vec<u8>>> = (0..50_000usize)
            .map(|i| {
                if nulls && i % 11 == 5 {
                    return None;
                }
                let k = (i * 2654435761usize) % (longest + 1);
                Some((0..k).map(|j| b'a' + ((j + k) % 26) as u8).collect())
            })
            .collect();
        for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_chunk_rows(40_000);
            let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
            assert_eq!(uses_value_dict(&file), 2, "{codec:?} {longest} {nulls}");
            check_reads(&file, &rows);
            let r = Reader::from_bytes(file).unwrap();
            for range in [
                16_380u64..16_390,
                100..39_999,
                16_384..32_769,
                39_990..40_010,
            ] {
                let col = r.read_range(range.clone()).unwrap();
                let mut vals = Vec::new();
                r.read_values_into(range.clone(), &mut vals).unwrap();
                let mut want = Vec::new();
                for i in range.clone() {
                    assert_eq!(
                        col.value((i - range.start) as usize),
                        rows[i as usize].as_deref(),
                        "{codec:?} {longest} {nulls} row {i} of {range:?}"
                    );
                    want.extend_from_slice(rows[i as usize].as_deref().unwrap_or_default());
                }
                assert_eq!(vals, want, "{codec:?} {longest} {nulls} values {range:?}");
            }
        }
    }
}
