//! `--codec auto` on the real corpus: on every column the file it writes is
//! the file of the codec it chose (same bytes), and never more than 3% larger
//! than the smallest single-codec file. Without a corpus: on generated TPC-H
//! columns and the bundled one (tests/support/corpus.rs).

#[path = "support/corpus.rs"]
mod corpus;

use fastpair::{Codec, CodecChoice, LogTemplates, Reader, WriterOptions};

/// Auto may lose at most this share to the best single codec.
const MAX_LOSS: f64 = 0.03;

fn write(rows: &[&[u8]], codec: CodecChoice) -> (Vec<u8>, Vec<fastpair::write::Choice>) {
    // The dictionary codec's choice, compared on coded chunks: a log-template
    // chunk (tried per chunk whatever the codec) would make a weaker
    // dictionary's file the smaller one (tests/logs_chunk.rs covers them).
    let opts = WriterOptions::default()
        .with_codec(codec)
        .with_log_templates(LogTemplates::Off);
    let (file, s) =
        fastpair::write::write_to_vec_with_summary(rows.iter().map(|r| Some(*r)), opts).unwrap();
    (file, s.choices)
}

#[test]
fn auto_within_three_percent_of_best_codec_on_every_corpus_column() {
    let files = corpus::columns(&[]);
    assert!(!files.is_empty(), "no columns to test");
    let mut worst = (0.0f64, String::new());
    for c in &files {
        let rows = c.rows();
        let name = c.name.clone();
        let (auto, choices) = write(&rows, CodecChoice::Auto);
        assert_eq!(choices.len(), 1, "{name}: one shared dictionary");
        // An estimate per candidate, but for FSST-12 where OnPair-12's
        // tokens are long enough that it is neither screened nor trained
        // (write/choose.rs, SCREEN_MAX_BYTES_PER_CODE).
        let est = &choices[0].estimates;
        let fsst_skipped = est.iter().all(|e| e.codec != Codec::Fsst12)
            && est.iter().any(|e| {
                e.codec == Codec::OnPair12
                    && e.bytes_per_code >= fastpair::write::SCREEN_MAX_BYTES_PER_CODE
            });
        assert!(
            est.len() >= 2 || fsst_skipped,
            "{name}: an estimate per candidate ({est:?})"
        );
        let mut sizes = Vec::new();
        for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
            let (file, _) = write(&rows, codec.into());
            if codec == choices[0].codec {
                assert!(file == auto, "{name}: auto's file differs from {codec:?}'s");
            }
            sizes.push((codec, file.len()));
        }
        let best = sizes.iter().map(|s| s.1).min().unwrap();
        let loss = auto.len() as f64 / best as f64 - 1.0;
        eprintln!(
            "{name}: auto chose {} ({} bytes); {:?}; loss {:.2}%",
            choices[0].codec.name(),
            auto.len(),
            sizes,
            100.0 * loss
        );
        assert!(
            loss <= MAX_LOSS,
            "{name}: auto ({:?}, {} bytes) loses {:.2}% to the best codec ({sizes:?})",
            choices[0].codec,
            auto.len(),
            100.0 * loss
        );
        if loss > worst.0 {
            worst = (loss, name.clone());
        }
        // The chosen file reads back.
        let r = Reader::from_bytes(auto).unwrap();
        assert_eq!(r.rows(), rows.len() as u64);
        assert_eq!(r.dictionaries().unwrap()[0].codec(), choices[0].codec);
    }
    eprintln!(
        "worst loss {:.2}% ({}) over {} columns",
        100.0 * worst.0,
        worst.1,
        files.len()
    );
}

/// File bytes depend only on input and options, never on the thread count:
/// every codec choice, shared and per-chunk dictionaries, 1, 2 and 3 threads.
#[test]
fn file_bytes_do_not_depend_on_thread_count() {
    // Without a corpus only the generated c_address is among these.
    let cols = corpus::columns(&["loghub_Linux_full", "dbtext_city", "tpch_sf1_c_address"]);
    assert!(!cols.is_empty(), "no columns to test");
    for c in &cols {
        let data = &c.text;
        let rows: Vec<&[u8]> = data.split(|&b| b == b'\n').take(60_000).collect();
        for codec in CodecChoice::ALL {
            for dict_mode in [fastpair::DictMode::Shared, fastpair::DictMode::PerChunk] {
                let write_with = |threads: usize| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    pool.install(|| {
                        let opts = WriterOptions::default()
                            .with_codec(codec)
                            .with_dict_mode(dict_mode)
                            .with_chunk_rows(25_000)
                            .with_parallel_chunks(2);
                        fastpair::write::write_to_vec(rows.iter().map(|r| Some(*r)), opts).unwrap()
                    })
                };
                let one = write_with(1);
                for t in [2, 3] {
                    assert!(
                        write_with(t) == one,
                        "{codec:?} {dict_mode:?}: {t} threads write other bytes than 1"
                    );
                }
            }
        }
    }
}

mod edge_cases {
    use fastpair::write::write_to_vec_with_summary;
    use fastpair::{CodecChoice, DictMode, Reader, WriterOptions};
    use proptest::prelude::*;

    fn round_trip(
        rows: &[Option<Vec<u8>>],
        codec: CodecChoice,
        dict_mode: DictMode,
        chunk_rows: usize,
    ) {
        let opts = WriterOptions::default()
            .with_codec(codec)
            .with_dict_mode(dict_mode)
            .with_chunk_rows(chunk_rows);
        let (file, summary) =
            write_to_vec_with_summary(rows.iter().map(|r| r.as_deref()), opts).unwrap();
        assert_eq!(
            summary.choices.len(),
            summary.dicts as usize,
            "a choice per dictionary"
        );
        let r = Reader::from_bytes(file).unwrap();
        for (d, c) in r.dictionaries().unwrap().iter().zip(&summary.choices) {
            assert_eq!(d.codec(), c.codec);
        }
        assert_eq!(r.rows(), rows.len() as u64);
        let col = r.read_all().unwrap();
        for (i, want) in rows.iter().enumerate() {
            assert_eq!(col.value(i), want.as_deref(), "{codec:?} row {i}");
        }
    }

    #[test]
    fn empty_null_and_huge_columns_with_every_codec() {
        let huge: Vec<u8> = (0..3_000_000u32)
            .flat_map(|i| format!("{} ", i % 977).into_bytes())
            .take(3 << 20)
            .collect();
        let columns: Vec<Vec<Option<Vec<u8>>>> = vec![
            vec![],
            vec![Some(vec![]); 100],
            vec![None; 50],
            vec![Some(huge), None, Some(b"tail".to_vec())],
            (0..=255u8).map(|b| Some(vec![b; 3])).collect(),
        ];
        for rows in &columns {
            for codec in CodecChoice::ALL {
                for mode in [DictMode::Shared, DictMode::PerChunk] {
                    round_trip(rows, codec, mode, 2);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn any_rows_round_trip_with_every_codec(
            rows in prop::collection::vec(
                prop::option::weighted(0.9, prop::collection::vec(
                    prop_oneof![Just(b'a'), Just(b'b'), Just(0u8), any::<u8>()], 0..40)),
                0..300),
            chunk_rows in 1usize..120,
            per_chunk in any::<bool>(),
            which in 0usize..4,
        ) {
            let mode = if per_chunk { DictMode::PerChunk } else { DictMode::Shared };
            round_trip(&rows, CodecChoice::ALL[which], mode, chunk_rows);
        }
    }
}
