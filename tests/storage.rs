//! Every storage gives the same rows, and a point read reads only a small
//! part of the file.

use std::sync::Arc;

use fastpair::read::{FileStorage, LocalIo, MemoryStorage, MmapStorage, Storage};
use fastpair::write::write_to_vec;
use fastpair::{Codec, ReadOptions, Reader, WriterOptions};

fn values(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| (i % 31 != 7).then(|| format!("row {i} of {}", i * 7 % 113).into_bytes()))
        .collect()
}

fn file(vals: &[Option<Vec<u8>>]) -> Vec<u8> {
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(5000);
    write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap()
}

#[test]
fn all_storages_read_the_same_rows() {
    let vals = values(23_456);
    let bytes = file(&vals);
    let path = std::env::temp_dir().join(format!("fastpair-storage-{}.fpc", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let storages: Vec<(&str, Arc<dyn Storage>)> = vec![
        ("memory", Arc::new(MemoryStorage::new(bytes.clone()))),
        ("mmap", Arc::new(MmapStorage::open(&path).unwrap())),
        ("pread", Arc::new(FileStorage::open(&path).unwrap())),
    ];
    for (name, s) in storages {
        for after in [None, Some(0), Some(3)] {
            let opts = ReadOptions::default().with_validate_after_gets(after);
            let r = Reader::from_storage(s.clone(), opts).unwrap();
            for i in (0..vals.len()).step_by(97).chain([0, vals.len() - 1]) {
                assert_eq!(
                    r.get(i as u64).unwrap(),
                    vals[i],
                    "{name} {after:?} row {i}"
                );
            }
            let col = r.read_all().unwrap();
            for (i, v) in vals.iter().enumerate() {
                assert_eq!(col.value(i), v.as_deref(), "{name} bulk row {i}");
            }
        }
    }
    for io in [LocalIo::Mmap, LocalIo::PositionedRead] {
        let r = Reader::open_with(&path, ReadOptions::default().with_local_io(io)).unwrap();
        assert_eq!(r.get(12_345).unwrap(), vals[12_345]);
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_point_read_reads_little() {
    let vals = values(200_000);
    let bytes = file(&vals);
    let path = std::env::temp_dir().join(format!("fastpair-point-{}.fpc", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let s = Arc::new(FileStorage::open(&path).unwrap());
    let r = Reader::from_storage(s.clone(), ReadOptions::default()).unwrap();
    let open = s.stats().unwrap();
    assert_eq!(r.get(150_001).unwrap(), vals[150_001]);
    let after = s.stats().unwrap();
    let got = after.bytes - open.bytes;
    println!(
        "file {} B; open {} B in {} reads; get {got} B in {} reads",
        bytes.len(),
        open.bytes,
        open.requests,
        after.requests - open.requests
    );
    // The chunk holds 5000 of 200,000 rows; the get reads a fraction of it.
    assert!(
        got < bytes.len() as u64 / 100,
        "get read {got} of {} bytes",
        bytes.len()
    );
    std::fs::remove_file(&path).unwrap();
}

/// `Reader::release_chunk` lets a chunk go (its validation, and a map's
/// pages through `Storage::release`); the chunk is validated again on the
/// next touch and reads the same rows, on every storage, with the
/// dictionary's histogram check counted once (a double count would fail it).
#[test]
fn released_chunks_read_the_same_rows_again() {
    let vals = values(23_456);
    let bytes = file(&vals);
    let path = std::env::temp_dir().join(format!("fastpair-release-{}.fpc", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let storages: Vec<(&str, Arc<dyn Storage>)> = vec![
        ("memory", Arc::new(MemoryStorage::new(bytes.clone()))),
        ("mmap", Arc::new(MmapStorage::open(&path).unwrap())),
        ("pread", Arc::new(FileStorage::open(&path).unwrap())),
    ];
    for (name, s) in storages {
        let mut r = Reader::from_storage(s, ReadOptions::default()).unwrap();
        assert!(r.num_chunks() > 2, "{name}: several chunks");
        for pass in 0..3 {
            let col = r.read_all().unwrap();
            for (i, v) in vals.iter().enumerate() {
                assert_eq!(col.value(i), v.as_deref(), "{name} pass {pass} row {i}");
            }
            for i in 0..r.num_chunks() {
                r.release_chunk(i);
            }
            assert_eq!(r.get(12_345).unwrap(), vals[12_345], "{name} pass {pass}");
        }
    }
    std::fs::remove_file(&path).unwrap();
}

/// Directories, FIFOs and devices are refused by both local storages with a
/// message naming what they are, and a FIFO with no writer does not block the
/// open (it is examined before it is opened).
#[test]
fn local_storages_refuse_what_is_not_a_regular_file() {
    let dir = std::env::temp_dir().join(format!("fastpair-storage-{}-special", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut cases = vec![
        (dir.clone(), "is a directory"),
        ("/dev/null".into(), "not a regular file"),
    ];
    if made {
        cases.push((fifo.clone(), "not a regular file"));
    } else {
        println!("mkfifo unavailable: the FIFO case is not checked");
    }
    for (path, want) in cases {
        for io in [LocalIo::Mmap, LocalIo::PositionedRead] {
            let (tx, rx) = std::sync::mpsc::channel();
            let p = path.clone();
            std::thread::spawn(move || {
                let r = Reader::open_with(&p, ReadOptions::default().with_local_io(io));
                let _ = tx.send(r.err().map(|e| e.to_string()));
            });
            let e = rx
                .recv_timeout(std::time::Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("opening {} ({io:?}) blocked", path.display()))
                .unwrap_or_else(|| panic!("{} ({io:?}) opened", path.display()));
            assert!(
                e.contains(want) && e.contains(&*path.to_string_lossy()),
                "{io:?}: {e}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
