//! Dictionaries that store their planes (spec/FORMAT.md §4.5, version 5,
//! `WriterOptions::dict_planes`): the same rows as front-coded files, read
//! in place (the CPU decoder's plane pointer lies inside the file's map),
//! and `DictPlanes::Auto`'s rule.

use std::sync::Arc;

use fastpair::read::{MmapStorage, Storage};
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, DictPlanes, LogTemplates, ReadOptions, Reader, WriterOptions};

/// Rows with long and short tokens (a high plane at `W = 8` where few
/// codes are long), nulls and empty values.
fn rows(n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|i| match i % 11 {
            0 => None,
            1 => Some(Vec::new()),
            2 => Some(format!("https://example.com/some/long/path/{i}").into_bytes()),
            _ => Some(
                format!("{} x{} y{}", ["GET", "PUT", "DEL"][i % 3], i % 97, i * 7).into_bytes(),
            ),
        })
        .collect()
}

fn write(rows: &[Option<Vec<u8>>], opts: WriterOptions) -> Vec<u8> {
    write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap()
}

/// The option settings the tests cover: every codec, both dictionary modes;
/// coded chunks only (these rows are log-like, and a log-template chunk
/// uses none of its dictionary's tokens).
fn settings() -> Vec<WriterOptions> {
    let mut v = Vec::new();
    for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
        for mode in [DictMode::Shared, DictMode::PerChunk] {
            v.push(
                WriterOptions::default()
                    .with_codec(codec)
                    .with_dict_mode(mode)
                    .with_chunk_rows(700)
                    .with_value_dict(false)
                    .with_log_templates(LogTemplates::Off),
            );
        }
    }
    v
}

/// `Always` and `Never` read back the same rows, through every read path;
/// `Always` stores every dictionary's planes (flag bit 1) and `Never` none,
/// and their tokens agree.
#[test]
fn stored_planes_read_back_the_same_rows() {
    let rows = rows(2500);
    let mut widths = std::collections::BTreeSet::new();
    for o in settings() {
        let a = write(&rows, o.clone().with_dict_planes(DictPlanes::Always));
        let n = write(&rows, o.clone().with_dict_planes(DictPlanes::Never));
        assert!(a.len() > n.len(), "planes are larger than front coding");
        let (ra, rn) = (
            Reader::from_bytes(a.clone()).unwrap(),
            Reader::from_bytes(n).unwrap(),
        );
        assert_eq!(ra.format_version(), fastpair::format::VERSION);
        assert_eq!(ra.read_all().unwrap(), rn.read_all().unwrap());
        for (i, want) in rows.iter().enumerate() {
            assert_eq!(
                ra.get(i as u64).unwrap().as_deref(),
                want.as_deref(),
                "row {i}"
            );
        }
        // Point reads before any chunk is validated whole.
        let cold = Reader::from_storage(
            Arc::new(fastpair::read::MemoryStorage::new(a.clone())),
            ReadOptions::default().with_validate_after_gets(None),
        )
        .unwrap();
        for i in (0..rows.len()).step_by(7) {
            assert_eq!(cold.get(i as u64).unwrap().as_deref(), rows[i].as_deref());
        }
        for (id, (da, dn)) in ra
            .dictionaries()
            .unwrap()
            .iter()
            .zip(rn.dictionaries().unwrap())
            .enumerate()
        {
            assert!(da.planes_stored() && !dn.planes_stored());
            assert_eq!(da.planes(), dn.planes());
            assert_eq!(da.table(), dn.table());
            let at = ra.footer().dicts[id].offset as usize;
            assert_eq!(a[at + 3] & 2, 2, "flag bit 1");
            widths.insert((da.planes().width, da.planes().hi.is_empty()));
        }
    }
    // Both plane widths, with and without a high plane at W = 8.
    assert!(widths.contains(&(16, true)), "{widths:?}");
    assert!(widths.contains(&(8, true)), "{widths:?}");
    assert!(widths.contains(&(8, false)), "{widths:?}");
}

/// A stored-planes file opened through a memory map is decoded from the
/// map itself: the low plane the CPU decoder reads (and the one the GPU
/// plan copies from) lies inside the mapped file's bytes, and no token
/// table is built by reads.
#[test]
fn stored_planes_are_decoded_in_place_from_the_map() {
    let rows = rows(3000);
    let file = write(
        &rows,
        WriterOptions::default()
            .with_codec(Codec::OnPair16)
            .with_dict_planes(DictPlanes::Always)
            .with_log_templates(LogTemplates::Off),
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("planes.fpc");
    std::fs::write(&path, &file).unwrap();
    // SAFETY: the test owns the file and does not change it while mapped.
    let map = Arc::new(unsafe { MmapStorage::open(&path) }.unwrap());
    let whole = map.resident().unwrap().as_ptr_range();
    let r = Reader::from_storage(map.clone(), ReadOptions::default()).unwrap();
    assert_eq!(r.get(5).unwrap().as_deref(), rows[5].as_deref());
    assert_eq!(r.read_all().unwrap().len(), rows.len());
    let d = r.dictionary(0).unwrap();
    assert!(d.planes_stored());
    let p = d.decoder_words_ptr();
    assert!(
        whole.contains(&p),
        "decoder plane {p:?} outside the map {whole:?}"
    );
    let lo = d.planes().lo.as_ptr_range();
    assert!(whole.contains(&lo.start) && lo.end <= whole.end);
    assert_eq!(p, lo.start);
    // In memory (positioned reads, or bytes): in place in the buffer read.
    let r = Reader::from_bytes(file).unwrap();
    let d = r.dictionary(0).unwrap();
    assert_eq!(d.decoder_words_ptr(), d.planes().lo.as_ptr());
    // A front-coded dictionary is decoded from its table instead.
    let n = write(
        &rows,
        WriterOptions::default().with_dict_planes(DictPlanes::Never),
    );
    let r = Reader::from_bytes(n).unwrap();
    let d = r.dictionary(0).unwrap();
    assert!(!d.planes_stored());
    assert_eq!(d.decoder_words_ptr(), d.table().words().as_ptr().cast());
}

/// `Auto` stores a dictionary's planes exactly when their section is at
/// most 1% of the bytes of the chunk sections naming it (§4.5's rule): not
/// for a small column, yes for a column whose chunks dwarf the dictionary.
#[test]
fn auto_stores_planes_when_they_cost_under_one_percent() {
    let mut seen = [false; 2];
    // Random bytes: few tokens pay, so the dictionary stays near its 256
    // single bytes (planes of about 2.3 KB) while the chunks grow with the
    // rows (12-bit codes per byte).
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for n in [200, 80_000] {
        let rows: Vec<Option<Vec<u8>>> = (0..n)
            .map(|_| Some((0..4).flat_map(|_| next().to_le_bytes()).collect()))
            .collect();
        let o = WriterOptions::default()
            .with_codec(Codec::Fsst12)
            .with_value_dict(false);
        let file = write(&rows, o.clone());
        let r = Reader::from_bytes(file.clone()).unwrap();
        let chunks: u64 = r.footer().chunks.iter().map(|c| c.section.len).sum();
        let d = r.dictionary(0).unwrap();
        eprintln!("{n} rows: {} tokens", d.num_tokens());
        let planes = r.footer().dicts[0].len;
        let stored = d.planes_stored();
        let planes_len = if stored {
            planes
        } else {
            // The section the planes would take (§4.5).
            let again = write(&rows, o.with_dict_planes(DictPlanes::Always));
            Reader::from_bytes(again).unwrap().footer().dicts[0].len
        };
        assert_eq!(
            stored,
            100 * planes_len <= chunks,
            "{n} rows: {planes_len} vs {chunks}"
        );
        seen[stored as usize] = true;
        assert_eq!(r.read_all().unwrap().len(), n);
    }
    assert_eq!(seen, [true, true], "both outcomes of the rule");
}

/// The choice, like every byte, does not depend on the thread count.
#[test]
fn stored_planes_do_not_depend_on_threads() {
    let rows = rows(4000);
    for planes in [DictPlanes::Auto, DictPlanes::Always] {
        let o = WriterOptions::default()
            .with_dict_mode(DictMode::PerChunk)
            .with_chunk_rows(500)
            .with_dict_planes(planes);
        let one = write(&rows, o.clone().with_parallel_chunks(1));
        let four = write(&rows, o.with_parallel_chunks(4));
        assert!(one == four, "{planes:?}");
    }
}

/// What stored planes change on real files (bench/READER.md "Stored
/// planes"): `FILES=a.fpc,b.fpc,.. cargo test --release --features cli
/// --test stored_planes planes_cost -- --ignored --nocapture`. Per file,
/// through a memory map (the in-place case): its size and dictionary
/// bytes, whether its dictionaries store planes, the best of 15 of open +
/// first `get` (row 0) on a fresh reader, of loading every dictionary on a
/// fresh reader, and of a bulk `read_all`, the files interleaved round by
/// round so that machine noise hits them alike.
#[test]
#[ignore]
fn planes_cost() {
    use std::time::Instant;
    let files: Vec<String> = std::env::var("FILES")
        .expect("FILES=a.fpc,b.fpc")
        .split(',')
        .map(String::from)
        .collect();
    let maps: Vec<Arc<MmapStorage>> = files
        .iter()
        // SAFETY: benchmark input files, not changed while mapped.
        .map(|f| Arc::new(unsafe { MmapStorage::open(f) }.unwrap()))
        .collect();
    let mut best = vec![[f64::MAX; 3]; files.len()];
    for _ in 0..15 {
        for (k, m) in maps.iter().enumerate() {
            let open = || Reader::from_storage(m.clone(), ReadOptions::default()).unwrap();
            let t = Instant::now();
            let r = open();
            std::hint::black_box(r.get(0).unwrap());
            best[k][0] = best[k][0].min(t.elapsed().as_secs_f64());
            let r = open();
            let t = Instant::now();
            std::hint::black_box(r.dictionaries().unwrap());
            best[k][1] = best[k][1].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            std::hint::black_box(r.read_all().unwrap());
            best[k][2] = best[k][2].min(t.elapsed().as_secs_f64());
        }
    }
    println!("| file | bytes | dictionary bytes | planes stored | open + first get | load every dictionary | read_all | read_all GB/s |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|");
    for (k, f) in files.iter().enumerate() {
        let r = Reader::from_storage(maps[k].clone(), ReadOptions::default()).unwrap();
        let dict_bytes: u64 = r.footer().dicts.iter().map(|d| d.len).sum();
        let ds = r.dictionaries().unwrap();
        let stored = ds.iter().filter(|d| d.planes_stored()).count();
        println!(
            "| {} | {} | {} | {}/{} | {:.1} µs | {:.1} µs | {:.2} ms | {:.2} |",
            std::path::Path::new(f)
                .file_name()
                .unwrap()
                .to_string_lossy(),
            maps[k].len(),
            dict_bytes,
            stored,
            ds.len(),
            1e6 * best[k][0],
            1e6 * best[k][1],
            1e3 * best[k][2],
            r.footer().total_bytes as f64 / best[k][2] / 1e9,
        );
    }
}

/// Stored planes live and go with their dictionary (issue 19): a pass that
/// releases each chunk of a per-chunk-dictionary file holds one dictionary
/// at a time, and a released dictionary's planes are read again, in place,
/// on its next use.
#[test]
fn stored_planes_are_released_with_their_last_chunk() {
    let rows = rows(3000);
    let file = write(
        &rows,
        WriterOptions::default()
            .with_dict_mode(DictMode::PerChunk)
            .with_chunk_rows(500)
            .with_dict_planes(DictPlanes::Always)
            .with_log_templates(LogTemplates::Off),
    );
    let mut r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.num_dictionaries(), 6);
    for i in 0..r.num_chunks() {
        let c = r.read_range(i as u64 * 500..(i as u64 + 1) * 500).unwrap();
        assert_eq!(c.value(7), rows[i * 500 + 7].as_deref());
        r.release_chunk(i);
        assert_eq!(r.loaded_dictionaries(), 0, "chunk {i}");
    }
    for i in (0..rows.len()).step_by(97) {
        assert_eq!(r.get(i as u64).unwrap().as_deref(), rows[i].as_deref());
    }
    assert!(r.dictionary(3).unwrap().planes_stored());
}
