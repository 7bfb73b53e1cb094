//! Writer ⊆ reader: whatever the writer produces passes every check of the
//! stricter reader (one spelling per file: spec §9), eagerly and through
//! point reads alone, across codecs, dictionary modes, empty columns, all-null
//! columns, empty values and wide (W = 16) planes.

use fastpair::write::write_to_vec;
use fastpair::{Codec, CodecChoice, DictMode, LogTemplates, ReadOptions, Reader, WriterOptions};
#[test]
fn every_writer_output_passes_every_reader_check() {
    let long: Vec<Vec<u8>> = (0..3000)
        .map(|i| format!("abcdefghijklmnopqrstuvwxyz0123456789-{}", i % 3).into_bytes())
        .collect();
    let cases: Vec<Vec<Option<Vec<u8>>>> = vec![
        vec![],
        vec![None; 100],
        vec![Some(vec![])],
        vec![Some(vec![]), None],
        long.iter().cloned().map(Some).collect(),
        (0..5000)
            .map(|i| {
                if i % 2 == 0 {
                    None
                } else {
                    Some(format!("x{i}").into_bytes())
                }
            })
            .collect(),
        // Low cardinality with nulls and empty values: value dictionaries (§5.6).
        (0..4000)
            .map(|i| match i % 9 {
                0 => None,
                1 => Some(vec![]),
                k => Some(format!("city number {}", k % 5).into_bytes()),
            })
            .collect(),
    ];
    for (k, rows) in cases.iter().enumerate() {
        for codec in [
            CodecChoice::Auto,
            Codec::Fsst12.into(),
            Codec::OnPair12.into(),
            Codec::OnPair16.into(),
        ] {
            for mode in [DictMode::Shared, DictMode::PerChunk] {
                let opts = WriterOptions::default()
                    .with_codec(codec)
                    .with_chunk_rows(777)
                    .with_dict_mode(mode)
                    // Case 4 (3 distinct long values) is about the wide
                    // plane: keep every row's codes there (no value
                    // dictionary, no log templates).
                    .with_value_dict(k != 4)
                    .with_log_templates(if k == 4 {
                        LogTemplates::Off
                    } else {
                        LogTemplates::Auto
                    });
                let f = write_to_vec(rows.iter().map(|v| v.as_deref()), opts).unwrap();
                let r = Reader::from_bytes_with(f.clone(), ReadOptions::default().with_eager(true))
                    .unwrap_or_else(|e| panic!("case {k} {codec:?} {mode:?}: {e}"));
                let col = r.read_all().unwrap();
                for (i, v) in rows.iter().enumerate() {
                    assert_eq!(col.value(i), v.as_deref());
                }
                let p = Reader::from_bytes_with(
                    f,
                    ReadOptions::default().with_validate_after_gets(None),
                )
                .unwrap();
                for (i, v) in rows.iter().enumerate() {
                    assert_eq!(p.get(i as u64).unwrap(), *v, "case {k} row {i}");
                }
                if k == 6 {
                    let n = r.footer().chunks.iter().filter(|c| c.values > 0).count();
                    assert_eq!(n, r.num_chunks(), "every chunk a value dictionary");
                }
                if k == 4 && matches!(codec, CodecChoice::Fixed(Codec::OnPair12 | Codec::OnPair16))
                {
                    // Long tokens: the wide plane is exercised (FSST-12, and
                    // auto when it picks it, never has tokens over 8 bytes).
                    assert!(r
                        .dictionaries()
                        .unwrap()
                        .iter()
                        .all(|d| d.planes().width == 16));
                }
            }
        }
    }
}
