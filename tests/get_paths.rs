//! Random `get` agrees with the bulk decode on every row, through each of its
//! paths: the per-chunk fast path (validated chunk, row index kept), the
//! validated path without the row index, and point reads of unvalidated
//! chunks; rows of 0–3 codes, odd and even first codes, rows longer than one
//! 256-code block, and rows that end at the last code of a chunk.

use fastpair::write::write_to_vec;
use fastpair::{Codec, ReadOptions, Reader, WriterOptions};

/// Rows whose code counts cover the decoder's cases: empty, short (singles),
/// 8+ codes (pair alignment and 4-code loads), over 256 codes (blocks),
/// and nulls.
fn rows() -> Vec<Option<Vec<u8>>> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..3000u32)
        .map(|i| {
            if i % 29 == 5 {
                return None;
            }
            let len = match i % 7 {
                0 => 0,
                1 => 1 + (next() % 3) as usize,
                2 => 2000 + (next() % 3000) as usize,
                _ => 5 + (next() % 120) as usize,
            };
            // Words from a small vocabulary (long tokens) mixed with noise
            // bytes (single-byte tokens), so rows have many codes.
            let mut v = Vec::with_capacity(len);
            while v.len() < len {
                match next() % 4 {
                    0 => v.push((next() % 256) as u8),
                    1 => v.extend_from_slice(b"error "),
                    2 => v.extend_from_slice(format!("{:x}", next() % 4096).as_bytes()),
                    _ => v.extend_from_slice(b"the quick brown fox "),
                }
            }
            v.truncate(len);
            Some(v)
        })
        .collect()
}

// Options are built field by field (they are becoming `#[non_exhaustive]`).
#[test]
fn get_matches_bulk_on_every_row_and_path() {
    let rows = rows();
    for codec in [Codec::Fsst12, Codec::OnPair12, Codec::OnPair16] {
        for chunk_rows in [3000usize, 701] {
            let mut o = WriterOptions::default();
            o.codec = codec.into();
            o.chunk_rows = chunk_rows;
            o.value_dict = false;
            let file = write_to_vec(rows.iter().map(|r| r.as_deref()), o).unwrap();
            for (cache, after) in [(true, Some(0)), (false, Some(0)), (true, None)] {
                let opts = ReadOptions::default()
                    .with_cache_row_index(cache)
                    .with_validate_after_gets(after);
                let r = Reader::from_bytes_with(file.clone(), opts).unwrap();
                let mut buf = vec![0xAA; 7];
                // Backwards, so a reused buffer shrinks and grows.
                for i in (0..rows.len()).rev() {
                    let valid = r.get_into(i as u64, &mut buf).unwrap();
                    let got = valid.then(|| buf.clone());
                    assert_eq!(
                        got, rows[i],
                        "{codec:?} chunk_rows {chunk_rows} cache {cache} after {after:?} row {i}"
                    );
                }
                for past in [rows.len() as u64, u64::MAX] {
                    assert!(matches!(
                        r.get_into(past, &mut buf),
                        Err(fastpair::Error::RowOutOfRange { .. })
                    ));
                }
                let col = r.read_all().unwrap();
                for (i, want) in rows.iter().enumerate() {
                    assert_eq!(col.value(i), want.as_deref());
                    assert_eq!(r.get(i as u64).unwrap(), *want, "after bulk, row {i}");
                }
            }
        }
    }
}

// Options are built field by field (they are becoming `#[non_exhaustive]`).
#[test]
fn value_dictionary_get_matches_rows() {
    // Few distinct values of 0..=70 bytes (the 16-byte block copy's edges),
    // with nulls.
    let distinct: Vec<Vec<u8>> = [0usize, 1, 15, 16, 17, 31, 32, 33, 70]
        .iter()
        .map(|&n| (0..n).map(|k| b'a' + (k * 7 + n) as u8 % 26).collect())
        .collect();
    let rows: Vec<Option<Vec<u8>>> = (0..5000usize)
        .map(|i| (i % 13 != 4).then(|| distinct[(i * 31 + i / 7) % distinct.len()].clone()))
        .collect();
    for codec in [Codec::OnPair12, Codec::OnPair16] {
        let mut o = WriterOptions::default();
        o.codec = codec.into();
        o.chunk_rows = 1200;
        let file = write_to_vec(rows.iter().map(|r| r.as_deref()), o).unwrap();
        for after in [Some(0), None] {
            let opts = ReadOptions::default().with_validate_after_gets(after);
            let r = Reader::from_bytes_with(file.clone(), opts).unwrap();
            assert!(
                (0..r.num_chunks()).all(|i| r.chunk_info(i).entry.values > 0),
                "value dictionaries expected"
            );
            let mut buf = vec![0x55; 40];
            for i in (0..rows.len()).rev() {
                let valid = r.get_into(i as u64, &mut buf).unwrap();
                assert_eq!(
                    valid.then(|| buf.clone()),
                    rows[i],
                    "{codec:?} {after:?} row {i}"
                );
            }
            // Bulk reads gather the same values (16-byte block copies).
            let col = r.read_range(7..4321).unwrap();
            let mut values = vec![1, 2, 3];
            r.read_values_into(7..4321, &mut values).unwrap();
            assert_eq!(values, col.values);
            for (k, want) in rows[7..4321].iter().enumerate() {
                assert_eq!(col.value(k), want.as_deref(), "bulk row {}", k + 7);
            }
        }
    }
}

/// A histogram mismatch found after gets took the fast path of a chunk using
/// that dictionary: later gets of the chunk fail with the dictionary's error
/// (the fast path is withdrawn), before and after the failing validation.
#[test]
fn histogram_failure_withdraws_the_fast_path() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/corrupt/dictionary_histogram_mismatch.fpc");
    let bytes = std::fs::read(path).unwrap();
    let opts = ReadOptions::default().with_validate_after_gets(Some(0));
    let r = Reader::from_bytes_with(bytes, opts).unwrap();
    assert!(
        r.num_chunks() >= 2,
        "the test needs two chunks sharing a dictionary"
    );
    let mut buf = Vec::new();
    // Chunk 0 validated (the histogram check waits for the other chunks),
    // then served by the fast path.
    for _ in 0..3 {
        r.get_into(0, &mut buf).unwrap();
    }
    let err = r.read_all().unwrap_err();
    assert!(matches!(err, fastpair::Error::Corrupt { .. }), "{err}");
    for row in [0, r.rows() - 1] {
        let e = r.get_into(row, &mut buf).unwrap_err();
        assert_eq!(e.to_string(), err.to_string());
    }
}

/// The fast path's published per-chunk pointer must not outlive the chunk:
/// after every chunk served warm gets, `release_chunk` drops them all
/// (`&mut self`, so no get is running), and the next gets validate the
/// chunks again and return the same rows, warm again afterwards.
#[test]
fn released_chunks_withdraw_the_fast_path() {
    let rows = rows();
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(400);
    let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap();
    let read = ReadOptions::default().with_validate_after_gets(Some(0));
    let mut r = Reader::from_bytes_with(file, read).unwrap();
    assert!(r.num_chunks() > 3);
    let mut buf = Vec::new();
    for pass in 0..3 {
        // Twice per row: the first get validates and publishes, the second
        // takes the fast path.
        for _ in 0..2 {
            for (i, want) in rows.iter().enumerate() {
                let some = r.get_into(i as u64, &mut buf).unwrap();
                assert_eq!(
                    some.then_some(&buf[..]),
                    want.as_deref(),
                    "pass {pass} row {i}"
                );
            }
        }
        for i in 0..r.num_chunks() {
            r.release_chunk(i);
        }
    }
}
