//! Round trips: every corpus column with every codec (generated TPC-H columns
//! and the bundled one without a corpus: tests/support/corpus.rs), proptest
//! columns, and a random-access matrix over chunk boundaries.

#[path = "support/corpus.rs"]
mod corpus;

use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, Reader, WriterOptions};
use proptest::prelude::*;

fn opts(codec: Codec, chunk_rows: usize) -> WriterOptions {
    WriterOptions::default()
        .with_codec(codec)
        .with_chunk_rows(chunk_rows)
}

fn check_column(rows: &[Option<Vec<u8>>], o: WriterOptions) {
    let bytes = write_to_vec(rows.iter().map(|r| r.as_deref()), o).unwrap();
    let r = Reader::from_bytes(bytes).unwrap();
    assert_eq!(r.rows(), rows.len() as u64);
    let col = r.read_all().unwrap();
    assert_eq!(col.len(), rows.len());
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(col.value(i), want.as_deref(), "bulk row {i}");
        assert_eq!(r.get(i as u64).unwrap(), *want, "get row {i}");
    }
    let mut values = vec![0xAA; 3];
    r.read_values_into(0..r.rows(), &mut values).unwrap();
    assert_eq!(values, col.values, "values-only decode");
}

#[test]
fn corpus_roundtrip_every_codec() {
    let columns = corpus::columns(&[]);
    assert!(!columns.is_empty(), "no columns to test");
    for c in &columns {
        let (data, f) = (&c.text, &c.name);
        let rows = c.rows();
        for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
            // Several chunks per column so boundaries are exercised everywhere.
            let o = WriterOptions::default()
                .with_codec(codec)
                .with_chunk_rows(50_000);
            let bytes = write_to_vec(rows.iter().map(|r| Some(*r)), o).unwrap();
            let r = Reader::from_bytes(bytes).unwrap();
            let col = r.read_all().unwrap();
            assert_eq!(col.len(), rows.len(), "{}", f);
            let mut joined = Vec::with_capacity(data.len());
            for i in 0..col.len() {
                joined.extend_from_slice(col.value(i).unwrap());
            }
            let want: Vec<u8> = rows.concat();
            assert!(joined == want, "{} {:?}: bulk decode differs", f, codec);
            for i in (0..rows.len()).step_by(997).chain([rows.len() - 1]) {
                assert_eq!(
                    r.get(i as u64).unwrap().as_deref(),
                    Some(rows[i]),
                    "{} row {i}",
                    f
                );
            }
        }
    }
}

#[test]
fn random_access_matrix_across_chunk_boundaries() {
    let rows: Vec<Option<Vec<u8>>> = (0..1000u32)
        .map(|i| {
            if i % 17 == 3 {
                None
            } else {
                Some(format!("row-{i}-{}", "x".repeat((i % 40) as usize)).into_bytes())
            }
        })
        .collect();
    for chunk_rows in [1usize, 7, 100, 128, 129, 1000, 5000] {
        for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
            let bytes =
                write_to_vec(rows.iter().map(|r| r.as_deref()), opts(codec, chunk_rows)).unwrap();
            let r = Reader::from_bytes(bytes).unwrap();
            let mut probe: Vec<u64> = vec![0, 999];
            for b in (chunk_rows..1000).step_by(chunk_rows).take(20) {
                probe.extend([b as u64 - 1, b as u64, (b as u64 + 1).min(999)]);
            }
            for &i in &probe {
                assert_eq!(
                    r.get(i).unwrap(),
                    rows[i as usize],
                    "chunk_rows {chunk_rows} row {i}"
                );
            }
            for (a, b) in [
                (0u64, 1000u64),
                (1, 999),
                (chunk_rows as u64 % 1000, 1000),
                (500, 500),
            ] {
                let col = r.read_range(a..b).unwrap();
                for k in 0..(b - a) as usize {
                    assert_eq!(col.value(k), rows[a as usize + k].as_deref());
                }
            }
            assert!(r.get(1000).is_err());
        }
    }
}

#[test]
fn per_chunk_dictionaries() {
    let rows: Vec<Option<Vec<u8>>> = (0..3000u32)
        .map(|i| Some(format!("{}:{}", i % 7, i * 31).into_bytes()))
        .collect();
    // Coded chunks: as log templates (the default for such rows) the file
    // would store no dictionary (spec/FORMAT.md §3).
    let o = WriterOptions::default()
        .with_dict_mode(DictMode::PerChunk)
        .with_chunk_rows(700)
        .with_log_templates(fastpair::LogTemplates::Off);
    let bytes = write_to_vec(rows.iter().map(|r| r.as_deref()), o.clone()).unwrap();
    let r = Reader::from_bytes(bytes).unwrap();
    assert_eq!(r.dictionaries().unwrap().len(), 5);
    check_column(&rows, o);
}

/// A chunk fills the buffers of one written before it (`Writer` keeps them):
/// nulls, row counts and bytes of the earlier chunk must not carry over.
/// Chunks with nulls, then without, then with again, of shrinking and
/// growing rows, written from this thread (groups encoded in the background)
/// and inside a one-thread pool (one group at a time).
#[test]
fn chunks_refill_the_buffers_of_written_chunks() {
    let rows: Vec<Option<Vec<u8>>> = (0..9000u32)
        .map(|i| {
            let block = i / 1000;
            if block % 3 == 0 && i % 7 == 0 {
                None
            } else {
                let len = (if block % 2 == 0 { 40 } else { 3 }) + (i % 11) as usize;
                Some(
                    format!("{i:06} ")
                        .into_bytes()
                        .into_iter()
                        .cycle()
                        .take(len)
                        .collect(),
                )
            }
        })
        .collect();
    for codec in [Codec::OnPair12, Codec::Fsst12] {
        let o = || opts(codec, 1000).with_sample_bytes(16 << 10);
        check_column(&rows, o());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| check_column(&rows, o().with_parallel_chunks(1)));
        let bytes = write_to_vec(rows.iter().map(|r| r.as_deref()), o()).unwrap();
        let r = Reader::from_bytes(bytes).unwrap();
        let nulls: Vec<u32> = r.footer().chunks.iter().map(|c| c.nulls).collect();
        let want: Vec<u32> = rows
            .chunks(1000)
            .map(|c| c.iter().filter(|r| r.is_none()).count() as u32)
            .collect();
        assert_eq!(nulls, want);
    }
}

#[test]
fn empty_column_and_empty_values() {
    check_column(&[], WriterOptions::default());
    check_column(&[Some(vec![])], WriterOptions::default());
    check_column(&[None], WriterOptions::default());
    check_column(
        &[Some(vec![]), None, Some(vec![0, 255, 0]), Some(vec![])],
        opts(Codec::OnPair12, 2),
    );
}

#[test]
fn very_long_value() {
    let long: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    check_column(
        &[Some(b"a".to_vec()), Some(long), Some(b"b".to_vec())],
        WriterOptions::default(),
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn prop_roundtrip(
        rows in proptest::collection::vec(
            proptest::option::weighted(0.9, proptest::collection::vec(prop_oneof![Just(0u8), Just(255u8), any::<u8>(), b'a'..=b'e'], 0..60)),
            0..300),
        chunk_rows in 1usize..120,
        wide in any::<bool>(),
    ) {
        let codec = if wide { Codec::OnPair16 } else { Codec::OnPair12 };
        check_column(&rows, opts(codec, chunk_rows));
    }
}
