//! Exhaustive damage to small valid files: every truncation, every byte
//! inverted and one bit flipped in every byte, each read as is and with the
//! checksums recomputed (so the damage reaches the structural checks). Open,
//! read everything and read every row: errors are fine, panics are not (and
//! a bulk read and a row read that both succeed must agree). Plus the reader's
//! memory cap.

use std::path::PathBuf;

use fastpair::testing::{exercise, recompute_checksums};
use fastpair::write::write_to_vec;
use fastpair::{Codec, Error, ReadOptions, Reader, WriterOptions};

fn golden(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/golden")
        .join(format!("{name}.fpc"));
    std::fs::read(p).unwrap()
}

/// A small file: two chunks (one with nulls and empty values), one 12-bit
/// dictionary, batch 16.
fn small_file() -> Vec<u8> {
    let rows: Vec<Option<Vec<u8>>> = (0..40u32)
        .map(|i| match i % 7 {
            3 => None,
            5 => Some(Vec::new()),
            _ => Some(format!("k{}={}", i % 5, i * 37).into_bytes()),
        })
        .collect();
    let o = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(25)
        .with_batch(16);
    write_to_vec(rows.iter().map(|r| r.as_deref()), o).unwrap()
}

fn damaged(file: &[u8], f: impl Fn(&mut Vec<u8>, usize)) {
    damaged_at(file, 0..file.len(), f)
}

fn damaged_at(file: &[u8], at: impl Iterator<Item = usize>, f: impl Fn(&mut Vec<u8>, usize)) {
    for i in at {
        let mut v = file.to_vec();
        f(&mut v, i);
        exercise(&v);
        if recompute_checksums(&mut v) {
            exercise(&v);
        }
    }
}

#[test]
fn every_truncation() {
    for file in [small_file(), golden("per_chunk_dicts")] {
        for n in 0..file.len() {
            let cut = &file[..n];
            assert!(
                Reader::from_bytes(cut.to_vec()).is_err(),
                "prefix of {n} bytes opened"
            );
            exercise(cut);
            // Cut the body but keep the tail: the footer names sections past the end.
            if n >= 40 {
                let mut v = file[..n - 24].to_vec();
                v.extend_from_slice(&file[file.len() - 24..]);
                exercise(&v);
            }
        }
    }
}

#[test]
fn every_byte_inverted() {
    damaged(&small_file(), |v, i| v[i] ^= 0xff);
}

#[test]
fn one_bit_flipped_in_every_byte() {
    damaged(&small_file(), |v, i| v[i] ^= 1 << (i % 8));
}

#[test]
fn every_byte_set_to_extremes() {
    damaged(&small_file(), |v, i| {
        v[i] = if v[i] == 0 { 0x80 } else { 0 }
    });
}

#[test]
fn golden_files_with_damage_every_few_bytes() {
    for name in ["nulls_multichunk", "onpair16"] {
        let file = golden(name);
        damaged_at(&file, (0..file.len()).step_by(7), |v, i| {
            v[i] = v[i].wrapping_add(1 + (i / 7 % 255) as u8)
        });
    }
}

#[test]
fn recompute_checksums_is_identity_on_valid_files() {
    for file in [
        small_file(),
        golden("nulls_multichunk"),
        golden("per_chunk_dicts"),
    ] {
        let mut v = file.clone();
        assert!(recompute_checksums(&mut v));
        assert_eq!(v, file);
    }
    assert!(!recompute_checksums(&mut [0u8; 10]));
}

#[test]
fn memory_cap_is_honored() {
    let file = golden("nulls_multichunk");
    let open = |cap| {
        Reader::from_bytes_with(file.clone(), ReadOptions::default().with_memory_cap(cap)).unwrap()
    };
    let r = open(None);
    let rows = r.rows();
    let needed = r.decoded_bytes() + 8 * (rows + 1);
    assert!(open(Some(needed)).read_all().is_ok());
    match open(Some(needed - 1)).read_all() {
        Err(Error::MemoryCap { needed: n, cap }) => {
            assert_eq!((n, cap), (needed, needed - 1));
        }
        other => panic!("expected MemoryCap, got {other:?}"),
    }
    // A range is charged for its own rows only.
    let small = open(Some(4096));
    assert!(matches!(small.read_all(), Err(Error::MemoryCap { .. })));
    let part = small.read_range(10..20).unwrap();
    assert_eq!(part.len(), 10);
    assert!(matches!(
        small.read_range(0..rows),
        Err(Error::MemoryCap { .. })
    ));
    // Single rows are not capped beyond the format's value limit.
    assert!(small.get(rows - 1).is_ok());
}
