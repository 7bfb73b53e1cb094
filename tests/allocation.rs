//! Sizes read from a file are checked against the bytes present before
//! anything is allocated for them: reading any damaged file never makes a
//! single allocation larger than a small multiple of the file (the largest
//! legitimate one is the row offsets: 8 bytes per row, and a file can hold
//! 8 empty rows per byte).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use fastpair::testing::{exercise, recompute_checksums};

struct Peak;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only records sizes.
unsafe impl GlobalAlloc for Peak {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LARGEST.fetch_max(n, Ordering::Relaxed);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Peak = Peak;

/// Bytes one allocation may take when reading a file of `len` bytes.
fn allowed(len: usize) -> usize {
    80 * len + (1 << 20)
}

fn check(name: &str, bytes: &[u8]) {
    LARGEST.store(0, Ordering::Relaxed);
    exercise(bytes);
    let got = LARGEST.load(Ordering::Relaxed);
    assert!(
        got <= allowed(bytes.len()),
        "{name}: allocated {got} bytes at once for a file of {} bytes",
        bytes.len()
    );
}

#[test]
fn damaged_files_allocate_in_proportion() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut paths: Vec<PathBuf> = ["corrupt", "golden"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fpc"))
        .collect();
    paths.sort();
    for p in paths {
        let bytes = std::fs::read(&p).unwrap();
        check(&p.display().to_string(), &bytes);
        if !p.ends_with("golden/per_chunk_dicts.fpc") {
            continue;
        }
        // Every 4-byte-aligned field set to a large value, checksums fixed:
        // counts and lengths that claim far more than the file holds.
        for at in (0..bytes.len().saturating_sub(4)).step_by(4) {
            for v in [0xFFFF_FFFFu32, 0x0100_0000] {
                let mut m = bytes.clone();
                m[at..at + 4].copy_from_slice(&v.to_le_bytes());
                recompute_checksums(&mut m);
                check(&format!("{} with {v:#x} at {at}", p.display()), &m);
            }
        }
    }
}
