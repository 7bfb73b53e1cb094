//! Arrow in and out: every accepted array type (nulls, slices, dictionaries),
//! zero-copy outputs (buffer addresses), UTF-8 checks, record batches, and
//! every corpus column through Parquet -> fastpair -> Arrow.
#![cfg(feature = "arrow")]

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int8Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, DictionaryArray, LargeBinaryArray,
    LargeStringArray, NullArray, StringArray, StringViewArray,
};
use fastpair::arrow::{
    binary_view, large_binary, large_string, string_view, write_arrays_to_vec, ArrowType,
    BatchOptions, ReadArrow,
};
use fastpair::{Codec, Reader, WriterOptions};

fn opts(chunk_rows: usize) -> WriterOptions {
    WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(chunk_rows)
}

/// Rows of any accepted array as `Option<Vec<u8>>`, through arrow-rs's own
/// accessors (independent of fastpair's row access).
fn rows_of(a: &dyn Array) -> Vec<Option<Vec<u8>>> {
    use arrow_schema::DataType::*;
    let n = a.len();
    let valid = |i: usize| a.logical_nulls().map_or(true, |m| m.is_valid(i));
    match a.data_type() {
        Null => vec![None; n],
        Dictionary(..) => {
            let d = a.as_any_dictionary();
            let keys = d.normalized_keys();
            let vals = rows_of(d.values().as_ref());
            (0..n)
                .map(|i| valid(i).then(|| vals[keys[i]].clone().unwrap()))
                .collect()
        }
        _ => {
            let b = arrow_cast_binary(a);
            (0..n).map(|i| valid(i).then(|| b(i))).collect()
        }
    }
}

fn arrow_cast_binary(a: &dyn Array) -> Box<dyn Fn(usize) -> Vec<u8> + '_> {
    use arrow_schema::DataType::*;
    match a.data_type() {
        Utf8 => Box::new(|i| a.as_string::<i32>().value(i).as_bytes().to_vec()),
        LargeUtf8 => Box::new(|i| a.as_string::<i64>().value(i).as_bytes().to_vec()),
        Binary => Box::new(|i| a.as_binary::<i32>().value(i).to_vec()),
        LargeBinary => Box::new(|i| a.as_binary::<i64>().value(i).to_vec()),
        Utf8View => Box::new(|i| a.as_string_view().value(i).as_bytes().to_vec()),
        BinaryView => Box::new(|i| a.as_binary_view().value(i).to_vec()),
        t => panic!("unexpected {t}"),
    }
}

fn sample() -> Vec<Option<&'static str>> {
    let mut v = vec![
        Some("GET /index.html HTTP/1.1"),
        None,
        Some(""),
        Some("short"),
        Some("GET /about.html HTTP/1.1 200 OK and a long tail"),
        None,
        Some("ünïcödé ✓"),
    ];
    for i in 0..300 {
        v.push(if i % 7 == 3 {
            None
        } else {
            Some(["a", "bb", "a longer value here", ""][i % 4])
        });
    }
    v
}

fn check_roundtrip(a: &dyn Array) {
    let want = rows_of(a);
    for chunk_rows in [1000, 7] {
        let file = write_arrays_to_vec(&[a], opts(chunk_rows)).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        assert_eq!(r.rows(), want.len() as u64);
        for ty in [
            ArrowType::LargeBinary,
            ArrowType::BinaryView,
            ArrowType::LargeUtf8,
            ArrowType::Utf8View,
        ] {
            let got = r.read_arrow(0..r.rows(), ty).unwrap();
            assert_eq!(got.data_type(), &ty.data_type());
            assert_eq!(rows_of(got.as_ref()), want, "{:?} as {ty:?}", a.data_type());
            assert_eq!(
                got.null_count(),
                want.iter().filter(|v| v.is_none()).count()
            );
        }
        // take: any order, repeats.
        let idx: Vec<u64> = (0..r.rows()).rev().chain([0, 0, 3]).collect();
        let got = r.take_arrow(&idx, ArrowType::LargeBinary).unwrap();
        let exp: Vec<_> = idx.iter().map(|&i| want[i as usize].clone()).collect();
        assert_eq!(rows_of(got.as_ref()), exp);
    }
}

#[test]
fn every_accepted_array_type_roundtrips_with_nulls() {
    let s = sample();
    let b: Vec<Option<&[u8]>> = s.iter().map(|v| v.map(str::as_bytes)).collect();
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(s.clone())),
        Arc::new(LargeStringArray::from(s.clone())),
        Arc::new(BinaryArray::from(b.clone())),
        Arc::new(LargeBinaryArray::from(b.clone())),
        Arc::new(StringViewArray::from(s.clone())),
        Arc::new(BinaryViewArray::from(b.clone())),
        Arc::new(s.iter().copied().collect::<DictionaryArray<Int32Type>>()),
        Arc::new(NullArray::new(9)),
    ];
    for a in &arrays {
        check_roundtrip(a.as_ref());
        // A slice starts at a non-zero offset into its buffers.
        check_roundtrip(a.slice(3, a.len() - 5).as_ref());
    }
    // Dictionary whose values hold a null, with null keys too, 8-bit keys
    // over large binary values.
    let keys =
        arrow_array::Int8Array::from(vec![Some(0), Some(1), None, Some(2), Some(1), Some(0)]);
    let values = LargeBinaryArray::from(vec![Some(&b"x0"[..]), None, Some(&b"\xff\x00raw"[..])]);
    let d = DictionaryArray::<Int8Type>::try_new(keys, Arc::new(values)).unwrap();
    let want = rows_of(&d);
    assert_eq!(want.iter().filter(|v| v.is_none()).count(), 3);
    let file = write_arrays_to_vec(&[&d], opts(1000)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let got = r.read_arrow(0..r.rows(), ArrowType::LargeBinary).unwrap();
    assert_eq!(rows_of(got.as_ref()), want);
    // Several arrays append as one column.
    let a = StringArray::from(vec!["one", "two"]);
    let c = LargeBinaryArray::from(vec![None, Some(&b"three"[..])]);
    let file = write_arrays_to_vec(&[&a, &c], opts(1000)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.get(1).unwrap().as_deref(), Some(&b"two"[..]));
    assert_eq!(r.get(2).unwrap(), None);
    assert_eq!(r.get(3).unwrap().as_deref(), Some(&b"three"[..]));
}

#[test]
fn unsupported_types_are_refused_with_a_message() {
    let a = arrow_array::Int64Array::from(vec![1, 2, 3]);
    let e = write_arrays_to_vec(&[&a], opts(1000))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot write an Arrow array of type Int64"),
        "{e}"
    );
}

#[test]
fn outputs_share_the_decoders_buffers() {
    let s = sample();
    let file = write_arrays_to_vec(&[&StringArray::from(s)], opts(50)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let col = r.read_all().unwrap();
    let (vp, op) = (col.values.as_ptr(), col.offsets.as_ptr());
    let a = large_binary(col.clone()).unwrap();
    // `clone` made new allocations: compare against the clone's own pointers.
    let col2 = r.read_all().unwrap();
    let (vp2, op2) = (col2.values.as_ptr(), col2.offsets.as_ptr());
    let b = large_binary(col2).unwrap();
    assert_eq!(
        b.values().as_ptr(),
        vp2,
        "LargeBinary values are the decoder's buffer"
    );
    assert_eq!(b.offsets().inner().inner().as_ptr(), op2 as *const u8);
    assert_ne!(a.values().as_ptr(), vp2);
    let _ = (vp, op);
    let col3 = r.read_all().unwrap();
    let vp3 = col3.values.as_ptr();
    let s3 = large_string(col3).unwrap();
    assert_eq!(
        s3.values().as_ptr(),
        vp3,
        "LargeUtf8 values are the decoder's buffer"
    );
    let col4 = r.read_all().unwrap();
    let vp4 = col4.values.as_ptr();
    let v4 = string_view(col4).unwrap();
    assert_eq!(
        v4.data_buffers()[0].as_ptr(),
        vp4,
        "Utf8View data buffer is the decoder's buffer"
    );
    let col5 = r.read_all().unwrap();
    let vp5 = col5.values.as_ptr();
    let v5 = binary_view(col5).unwrap();
    assert_eq!(v5.data_buffers()[0].as_ptr(), vp5);
}

#[test]
fn utf8_is_checked_once_on_read() {
    let b: Vec<Option<&[u8]>> = vec![
        Some(b"ok"),
        Some(b"fine \xc3\xa9"),
        None,
        Some(b"bad \xff"),
        Some(b"x"),
    ];
    let file = write_arrays_to_vec(&[&BinaryArray::from(b.clone())], opts(1000)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    for ty in [ArrowType::LargeUtf8, ArrowType::Utf8View] {
        let e = r.read_arrow(0..5, ty).unwrap_err().to_string();
        assert!(e.contains("row 3 is not valid UTF-8"), "{e}");
        // Rows before the bad one are fine as text.
        assert_eq!(r.read_arrow(0..3, ty).unwrap().len(), 3);
    }
    let a = r.read_arrow(0..5, ArrowType::LargeBinary).unwrap();
    assert_eq!(a.as_binary::<i64>().value(3), b"bad \xff");
    // A boundary inside a multi-byte character: whole buffer is UTF-8 but a
    // row is not.
    let split: Vec<Option<&[u8]>> = vec![Some(b"\xc3"), Some(b"\xa9")];
    let file = write_arrays_to_vec(&[&BinaryArray::from(split)], opts(1000)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let e = r
        .read_arrow(0..2, ArrowType::LargeUtf8)
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 0 is not valid UTF-8"), "{e}");
}

#[test]
fn batches_stream_the_column_in_order() {
    let s = sample();
    let file = write_arrays_to_vec(&[&StringArray::from(s.clone())], opts(64)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    for per in [1u64, 10, 64, 100, 1000] {
        let it = r
            .batches(
                BatchOptions::default()
                    .with_rows_per_batch(per)
                    .with_ty(ArrowType::LargeUtf8)
                    .with_field("url"),
            )
            .unwrap();
        let expect_n = (s.len() as u64).div_ceil(per) as usize;
        assert_eq!(it.size_hint(), (expect_n, Some(expect_n)));
        let mut got = Vec::new();
        let mut n = 0;
        for b in it {
            let b = b.unwrap();
            assert_eq!(b.schema().field(0).name(), "url");
            assert!(b.num_rows() as u64 <= per);
            got.extend(
                b.column(0)
                    .as_string::<i64>()
                    .iter()
                    .map(|v| v.map(str::to_string)),
            );
            n += 1;
        }
        assert_eq!(n, expect_n);
        let want: Vec<_> = s.iter().map(|v| v.map(str::to_string)).collect();
        assert_eq!(got, want);
    }
    assert!(r
        .batches(BatchOptions::default().with_rows_per_batch(0))
        .is_err());
}

#[test]
fn empty_column() {
    let a = StringArray::from(Vec::<&str>::new());
    let file = write_arrays_to_vec(&[&a], opts(1000)).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.read_arrow(0..0, ArrowType::LargeUtf8).unwrap().len(), 0);
    assert_eq!(r.batches(BatchOptions::default()).unwrap().count(), 0);
}

/// Every corpus column, with a null every 13th row, through Parquet (written
/// and read by arrow-rs) -> fastpair -> Arrow: identical values and nulls.
#[cfg(feature = "parquet")]
#[test]
fn corpus_parquet_to_fastpair_to_arrow() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ArrowWriter;
    // The corpus's columns (FASTPAIR_CORPUS, else target/corpus), or
    // generated TPC-H and bundled ones without one (tests/support/corpus.rs).
    let cols = corpus::columns(&[]);
    assert!(!cols.is_empty(), "no columns to check");
    for col in &cols {
        let path = &col.name;
        let (rows, src) = tables::column_with_nulls(&col.text);
        let utf8 = matches!(src.data_type(), arrow_schema::DataType::Utf8);
        let batch = arrow_array::RecordBatch::try_from_iter([("col", src.clone())]).unwrap();
        let mut pq = Vec::new();
        let mut w = ArrowWriter::try_new(&mut pq, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes_of(pq))
            .unwrap()
            .with_batch_size(8192)
            .build()
            .unwrap();
        let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
        let arrays: Vec<&dyn Array> = batches.iter().map(|b| b.column(0).as_ref()).collect();
        let file = write_arrays_to_vec(&arrays, WriterOptions::default()).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let ty = if utf8 {
            ArrowType::LargeUtf8
        } else {
            ArrowType::LargeBinary
        };
        let got = r.read_arrow(0..r.rows(), ty).unwrap();
        assert_eq!(got.len(), rows.len(), "{path}");
        assert_eq!(rows_of(got.as_ref()), rows_of(src.as_ref()), "{path}");
        eprintln!("ok {path} ({} rows)", rows.len());
    }
}

#[cfg(feature = "parquet")]
#[path = "support/corpus.rs"]
mod corpus;
#[cfg(feature = "parquet")]
#[path = "support/tables.rs"]
mod tables;

#[cfg(feature = "parquet")]
fn bytes_of(v: Vec<u8>) -> bytes::Bytes {
    v.into()
}

/// Builds a column from rows directly (no file).
fn column_of(rows: &[Vec<u8>]) -> fastpair::Column {
    let mut c = fastpair::Column {
        values: Vec::new(),
        offsets: vec![0],
        validity: None,
    };
    for r in rows {
        c.values.extend_from_slice(r);
        c.offsets.push(c.values.len() as i64);
    }
    c
}

proptest::proptest! {
    /// The parallel SIMD UTF-8 check agrees with `std::str::from_utf8` row by
    /// row, including code points split across rows, and names the first bad row.
    #[test]
    fn utf8_check_agrees_with_std(
        rows in proptest::collection::vec(
            proptest::collection::vec(proptest::sample::select(vec![b'a', b' ', 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xff]), 0..12),
            0..200,
        )
    ) {
        let first_bad = rows.iter().position(|r| std::str::from_utf8(r).is_err());
        let col = column_of(&rows);
        match (large_string(col.clone()), first_bad) {
            (Ok(a), None) => {
                for (i, r) in rows.iter().enumerate() {
                    proptest::prop_assert_eq!(a.value(i).as_bytes(), &r[..]);
                }
            }
            (Err(e), Some(i)) => {
                let want = format!("row {i} is not valid UTF-8");
                proptest::prop_assert!(e.to_string().contains(&want), "{}", e);
            }
            (r, b) => proptest::prop_assert!(false, "check {:?} vs first bad row {:?}", r.map(|_| ()), b),
        }
        proptest::prop_assert_eq!(string_view(col).is_ok(), first_bad.is_none());
    }
}

#[test]
fn malformed_columns_are_errors_not_panics() {
    let bad = [
        fastpair::Column {
            values: b"abc".to_vec(),
            offsets: vec![0, 2, 1],
            validity: None,
        },
        fastpair::Column {
            values: b"abc".to_vec(),
            offsets: vec![-1, 2],
            validity: None,
        },
        fastpair::Column {
            values: b"abc".to_vec(),
            offsets: vec![0, 9],
            validity: None,
        },
        fastpair::Column {
            values: b"abc".to_vec(),
            offsets: vec![0; 10],
            validity: Some(vec![0xff]),
        },
    ];
    for c in bad {
        assert!(large_binary(c.clone()).is_err());
        assert!(large_string(c.clone()).is_err());
        assert!(string_view(c.clone()).is_err());
        assert!(binary_view(c).is_err());
    }
    assert_eq!(large_string(fastpair::Column::default()).unwrap().len(), 0);
}

/// Multi-byte text rows (1- to 4-byte characters), deterministic.
fn multibyte_rows(n: usize, seed: u64) -> Vec<Vec<u8>> {
    const CHARS: [&str; 7] = ["a", "é", "中", "𝄞", " ", "ж", "✓"];
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|_| {
            let len = next() % 12;
            (0..len)
                .flat_map(|_| CHARS[(next() % 7) as usize].bytes())
                .collect()
        })
        .collect()
}

/// `read_arrow(LargeUtf8)` checks UTF-8 while decoding, piece by piece (a
/// decode task's bytes right after the task wrote them), stitching the
/// characters cut by the tasks' ends. It must agree with `std::str::from_utf8`
/// row by row whatever the cuts: valid columns decode identically, and a bad
/// byte, a truncated character or a character split across two rows (the
/// buffer is UTF-8, the rows are not) is an error naming the first bad row,
/// for 1, 3 and 8 threads and chunk sizes that put row and task cuts
/// everywhere.
#[test]
fn utf8_check_fused_into_decoding_agrees_with_std() {
    let good = multibyte_rows(40_000, 7);
    let mut cases: Vec<(Vec<Vec<u8>>, Option<usize>)> = vec![(good.clone(), None)];
    let mut bad = good.clone();
    bad[31_337].extend_from_slice(b"x\xffy");
    cases.push((bad, Some(31_337)));
    let mut cut = good.clone();
    cut[20_001] = "中".as_bytes()[..2].to_vec();
    cases.push((cut, Some(20_001)));
    let mut split = good.clone();
    split[9_999] = b"ab\xe4".to_vec();
    split[10_000] = b"\xb8\xadcd".to_vec();
    cases.push((split, Some(9_999)));
    for (rows, first_bad) in &cases {
        let arr = BinaryArray::from_iter_values(rows.iter());
        for chunk_rows in [40_000, 6_007] {
            let file = write_arrays_to_vec(&[&arr], opts(chunk_rows)).unwrap();
            let r = Reader::from_bytes(file).unwrap();
            for threads in [1, 3, 8] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    for range in [0..rows.len(), 123..rows.len() - 77] {
                        let got = r.read_arrow(range.start as u64..range.end as u64, ArrowType::LargeUtf8);
                        let want_bad = first_bad.filter(|b| range.contains(b));
                        match (got, want_bad) {
                            (Ok(a), None) => {
                                let a = a.as_string::<i64>();
                                for (k, row) in rows[range.clone()].iter().enumerate() {
                                    assert_eq!(a.value(k).as_bytes(), &row[..]);
                                }
                            }
                            (Err(e), Some(b)) => {
                                // Errors name the file's row (issue 19 finding 6).
                                let want = format!("row {b} is not valid UTF-8");
                                assert!(e.to_string().contains(&want), "{e}");
                            }
                            (g, b) => panic!(
                                "threads {threads}, chunk rows {chunk_rows}, {range:?}: {:?} vs first bad row {b:?}",
                                g.map(|_| ())
                            ),
                        }
                    }
                });
            }
        }
    }
}

/// `opts` with a codec (built by assignment: `WriterOptions` is becoming
/// `#[non_exhaustive]`, which rules out a struct literal outside the crate).
fn codec_opts(codec: Codec, chunk_rows: usize) -> WriterOptions {
    let mut o = WriterOptions::default();
    o.codec = codec.into();
    o.chunk_rows = chunk_rows;
    // Coded chunks (their tokens' UTF-8 proofs): no log templates (§5.8),
    // which tests/logs_chunk.rs reads through Arrow.
    o.log_templates = fastpair::LogTemplates::Off;
    o
}

/// Rows that chunk validation proved UTF-8 (every token they use is UTF-8
/// on its own, or their tokens' transitions over the UTF-8 automaton chain
/// back to its start: `ChunkView::tokens_utf8` / `rows_not_utf8`) must be
/// UTF-8, and a coded chunk (not a value-dictionary one) leaves unproven
/// exactly its rows that are not UTF-8; returns how many rows were left
/// unproven.
///
/// `Reader::rows_proven_utf8` of any range is whether every row of it is
/// proven so (ranges of 1 to 300 rows, within and across chunks).
fn check_proofs(r: &Reader) -> usize {
    let mut unproven = 0;
    let mut first = 0u64;
    let mut all = Vec::new();
    for i in 0..r.num_chunks() {
        let c = r.chunk(i).unwrap();
        let rows = c.entry().rows as u64;
        let col = r.read_range(first..first + rows).unwrap();
        for k in 0..rows as usize {
            let bits = c.rows_not_utf8();
            let proven = c.tokens_utf8() || bits.is_some_and(|b| b[k / 64] >> (k % 64) & 1 == 0);
            all.push(proven);
            let v = col.value(k).unwrap_or(b"");
            let ok = std::str::from_utf8(v).is_ok();
            if proven {
                assert!(ok, "chunk {i} row {k} proven UTF-8 but is not: {v:?}");
            } else {
                assert!(
                    !ok || bits.is_none(),
                    "chunk {i} row {k} is UTF-8 but was not proven: {v:?}"
                );
                unproven += 1;
            }
        }
        first += rows;
    }
    for len in [1usize, 7, 64, 65, 300] {
        for start in (0..all.len().saturating_sub(len)).step_by(len.max(13)) {
            let want = all[start..start + len].iter().all(|&p| p);
            let range = start as u64..(start + len) as u64;
            assert_eq!(
                r.rows_proven_utf8(range.clone()).unwrap(),
                want,
                "rows {range:?}"
            );
        }
    }
    assert!(r.rows_proven_utf8(0..r.rows() + 1).is_err());
    unproven
}

/// Whether some chunk of `r` uses a token that is not UTF-8 on its own.
fn cuts_characters(r: &Reader) -> bool {
    (0..r.num_chunks()).any(|i| !r.chunk(i).unwrap().tokens_utf8())
}

/// `read_arrow(LargeUtf8)` of `rows` (range `range`) agrees with
/// `std::str::from_utf8` row by row: the same values, or an error naming the
/// first bad row.
fn text_read_agrees(r: &Reader, rows: &[Vec<u8>], range: std::ops::Range<usize>) {
    let got = r.read_arrow(range.start as u64..range.end as u64, ArrowType::LargeUtf8);
    let want_bad = rows[range.clone()]
        .iter()
        .position(|v| std::str::from_utf8(v).is_err());
    match (got, want_bad) {
        (Ok(a), None) => {
            let a = a.as_string::<i64>();
            assert_eq!(a.len(), range.len());
            for (k, row) in rows[range.clone()].iter().enumerate() {
                assert_eq!(a.value(k).as_bytes(), &row[..]);
            }
        }
        (Err(e), Some(b)) => {
            // Errors name the file's row, not the range's (issue 19 finding 6).
            let want = format!("row {} is not valid UTF-8", range.start + b);
            assert!(e.to_string().contains(&want), "{e}");
        }
        (g, b) => panic!("{range:?}: {:?} vs first bad row {b:?}", g.map(|_| ())),
    }
}

/// Chinese text (random CJK characters, so the rare ones are coded as
/// single bytes >= 0x80 and many tokens cut characters), alone, as the odd
/// row of an ASCII column, and as few values repeated (value-dictionary
/// chunks), through the codecs whose tokens split multi-byte characters:
/// validation proves every UTF-8 row of a coded chunk; read as text it
/// equals the source; a bad byte or a character split across two rows is
/// an error naming the row, in the dense (checked while decoding: most rows
/// unproven) and sparse (only unproven rows checked) paths alike.
#[test]
fn text_read_of_tokens_that_split_characters() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut chinese = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| char::from_u32(0x4e00 + (next() % 3000) as u32).unwrap())
            .collect::<String>()
            .into_bytes()
    };
    let dense: Vec<Vec<u8>> = (0..6000).map(|i| chinese(1 + i % 40)).collect();
    let sparse: Vec<Vec<u8>> = (0..20_000)
        .map(|i| {
            if i % 97 == 5 {
                chinese(8)
            } else {
                format!("row {i} of an ascii column {}", i * 7919 % 1000).into_bytes()
            }
        })
        .collect();
    let few: Vec<Vec<u8>> = (0..40).map(|i| chinese(3 + i % 9)).collect();
    let repeats: Vec<Vec<u8>> = (0..6000).map(|i| few[i * 7 % 40].clone()).collect();
    for (name, good) in [("dense", dense), ("sparse", sparse), ("repeats", repeats)] {
        let n = good.len();
        let mut bad = good.clone();
        bad[n / 2 + 3].extend_from_slice(b"\xff");
        let mut split = good.clone();
        split[n / 3] = b"ab\xe4".to_vec();
        split[n / 3 + 1] = b"\xb8\xadcd".to_vec();
        // Most rows bad (a character truncated at the row's end): a text
        // read of coded chunks checks them while decoding.
        let mut mostly_bad = good.clone();
        for v in mostly_bad.iter_mut().skip(n / 4) {
            v.push(0xe4);
        }
        for codec in [Codec::OnPair16, Codec::Fsst12, Codec::OnPair12] {
            for rows in [&good, &bad, &split, &mostly_bad] {
                let arr = BinaryArray::from_iter_values(rows.iter());
                let file = write_arrays_to_vec(&[&arr], codec_opts(codec, 4096)).unwrap();
                let r = Reader::from_bytes(file).unwrap();
                let unproven = check_proofs(&r);
                assert!(
                    cuts_characters(&r),
                    "{name} {codec:?}: no token cuts a character"
                );
                let vdict = (0..r.num_chunks()).all(|i| r.chunk(i).unwrap().entry().values > 0);
                if name == "repeats" {
                    // (Not `mostly_bad`: twice the distinct values.)
                    assert!(
                        vdict || rows == &mostly_bad,
                        "{codec:?}: no value dictionary"
                    );
                } else {
                    // Every UTF-8 row is proven, whatever its tokens cut.
                    let bad_rows = rows
                        .iter()
                        .filter(|v| std::str::from_utf8(v).is_err())
                        .count();
                    assert_eq!(unproven, bad_rows, "{name} {codec:?}");
                }
                for range in [0..n, 1000..n - 17, n / 3 + 1..n / 2 + 3] {
                    text_read_agrees(&r, rows, range);
                }
            }
        }
    }
}

use proptest::strategy::Strategy as _;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// Random byte and text columns written with every codec and read as
    /// text agree with `std::str::from_utf8` row by row, and every row that
    /// chunk validation proved UTF-8 is UTF-8.
    #[test]
    fn text_read_agrees_with_std(
        rows in proptest::collection::vec(
            proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::sample::select(vec!["the ", "abc", "x", "0", "row ", "==\n"]).prop_map(|s| s.as_bytes().to_vec()),
                    2 => proptest::sample::select(vec!["é", "中", "文", "𝄞", "ж", "✓", "é中"]).prop_map(|s| s.as_bytes().to_vec()),
                    1 => proptest::sample::select(vec![vec![0xffu8], vec![0xe4], vec![0xb8], vec![0xc3], vec![0xa9, 0xa9]]),
                ],
                0..10,
            ).prop_map(|p| p.concat()),
            1..1500,
        ),
        codec in proptest::sample::select(vec![Codec::OnPair16, Codec::Fsst12, Codec::OnPair12]),
        chunk_rows in proptest::sample::select(vec![64usize, 700, 100_000]),
        cut in (0usize..1000, 0usize..1000),
    ) {
        let arr = BinaryArray::from_iter_values(rows.iter());
        let file = write_arrays_to_vec(&[&arr], codec_opts(codec, chunk_rows)).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        check_proofs(&r);
        let n = rows.len();
        let (a, b) = (cut.0 % n, cut.1 % n);
        text_read_agrees(&r, &rows, 0..n);
        text_read_agrees(&r, &rows, a.min(b)..a.max(b) + 1);
    }
}
