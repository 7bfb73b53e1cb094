//! Dictionaries load on first use (issue 19, finding 4; spec/FORMAT.md §9
//! step 7): opening a file reads none, a point read loads only its row's
//! dictionary, and a damaged dictionary fails the reads that need it (and
//! every bulk read of the whole column) but not point reads of chunks that
//! use another one.

use fastpair::error::{Error, Invariant, Section};
use fastpair::write::{write_to_vec, DictMode, WriterOptions};
use fastpair::{ReadOptions, Reader};

/// Four chunks of 500 rows, each with a dictionary of its own (coded
/// chunks: as log templates, the default for such rows, the file would
/// store no dictionary, spec/FORMAT.md §3).
fn per_chunk_file() -> (Vec<Vec<u8>>, Vec<u8>) {
    let rows: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| format!("row {} of chunk {}: {}", i, i / 500, i * 7919).into_bytes())
        .collect();
    let o = WriterOptions::default()
        .with_dict_mode(DictMode::PerChunk)
        .with_chunk_rows(500)
        .with_log_templates(fastpair::LogTemplates::Off);
    let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), o).unwrap();
    (rows, file)
}

#[test]
fn open_loads_no_dictionary_and_a_get_loads_one() {
    let (rows, file) = per_chunk_file();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.num_dictionaries(), 4);
    assert_eq!(r.loaded_dictionaries(), 0, "open loads no dictionary");
    assert_eq!(r.get(1234).unwrap().as_deref(), Some(&rows[1234][..]));
    assert_eq!(r.loaded_dictionaries(), 1, "one get loads its chunk's");
    assert_eq!(r.get(1300).unwrap().as_deref(), Some(&rows[1300][..]));
    assert_eq!(r.loaded_dictionaries(), 1, "the same chunk: no other");
    assert_eq!(r.get(10).unwrap().as_deref(), Some(&rows[10][..]));
    assert_eq!(r.loaded_dictionaries(), 2);
    // A range read loads the dictionaries of the chunks it touches.
    let col = r.read_range(1600..1700).unwrap();
    assert_eq!(col.value(0), Some(&rows[1600][..]));
    assert_eq!(r.loaded_dictionaries(), 3);
    // The whole column (and `dictionaries()`) loads every one.
    assert_eq!(r.read_all().unwrap().len(), rows.len());
    assert_eq!(r.loaded_dictionaries(), 4);
    assert_eq!(r.dictionaries().unwrap().len(), 4);
    // Eager validation loads them at open.
    let (_, file) = per_chunk_file();
    let e = Reader::from_bytes_with(file, ReadOptions::default().with_eager(true)).unwrap();
    assert_eq!(e.loaded_dictionaries(), 4);
}

/// A pass that lets each chunk go after use (`release_chunk`, as decompress,
/// inspect and the Parquet/Arrow outputs do) holds one dictionary of a
/// per-chunk-dictionary file at a time; rows read after a release are still
/// right (the dictionary loads again); a dictionary stays while a chunk
/// naming it is validated, and a shared one until its last chunk goes.
#[test]
fn releasing_the_last_chunk_of_a_dictionary_lets_it_go() {
    let (rows, file) = per_chunk_file();
    let mut r = Reader::from_bytes(file.clone()).unwrap();
    for i in 0..r.num_chunks() {
        r.chunk(i).unwrap();
        let row = i * 500 + 7;
        assert_eq!(r.get(row as u64).unwrap().as_deref(), Some(&rows[row][..]));
        assert_eq!(r.loaded_dictionaries(), 1, "chunk {i}: only its own");
        r.release_chunk(i);
        assert_eq!(r.loaded_dictionaries(), 0, "chunk {i} released");
    }
    assert_eq!(r.get(1999).unwrap().as_deref(), Some(&rows[1999][..]));
    assert_eq!(r.read_all().unwrap().len(), rows.len());

    // One dictionary shared by four chunks: it stays while any of them is
    // validated (a validated chunk's get context points into it).
    let shared = write_to_vec(
        rows.iter().map(|r| Some(&r[..])),
        WriterOptions::default().with_chunk_rows(500),
    )
    .unwrap();
    let mut r = Reader::from_bytes(shared).unwrap();
    assert_eq!((r.num_dictionaries(), r.num_chunks()), (1, 4));
    r.chunk(0).unwrap();
    r.chunk(3).unwrap();
    r.release_chunk(3); // its last chunk, but chunk 0 is still validated
    assert_eq!(r.loaded_dictionaries(), 1, "chunk 0 still holds it");
    assert_eq!(r.get(5).unwrap().as_deref(), Some(&rows[5][..]));
    r.release_chunk(0);
    assert_eq!(
        r.loaded_dictionaries(),
        1,
        "released only with the last chunk"
    );
    r.release_chunk(3);
    assert_eq!(r.loaded_dictionaries(), 0, "no chunk holds it now");
    assert_eq!(r.get(1700).unwrap().as_deref(), Some(&rows[1700][..]));
}

/// A walk over the dictionaries themselves (`fastpair inspect` lists each,
/// then lets it go) holds one at a time: `release_dictionary` drops one no
/// chunk holds, keeps one a validated chunk still points into, and a
/// released dictionary loads again, the same, on its next use.
#[test]
fn release_dictionary_drops_only_what_no_chunk_holds() {
    let (rows, file) = per_chunk_file();
    let mut r = Reader::from_bytes(file).unwrap();
    for id in 0..r.num_dictionaries() {
        let tokens = r.dictionary(id).unwrap().num_tokens();
        assert_eq!(r.loaded_dictionaries(), 1, "dictionary {id} alone");
        assert!(r.release_dictionary(id), "no chunk holds dictionary {id}");
        assert_eq!(r.loaded_dictionaries(), 0);
        assert_eq!(r.dictionary(id).unwrap().num_tokens(), tokens);
        assert!(r.release_dictionary(id));
    }
    // Chunk 2 validated (a get through it): its dictionary stays.
    assert_eq!(r.get(1001).unwrap().as_deref(), Some(&rows[1001][..]));
    assert!(!r.release_dictionary(2), "chunk 2 still points into it");
    assert_eq!(r.loaded_dictionaries(), 1);
    assert_eq!(r.get(1002).unwrap().as_deref(), Some(&rows[1002][..]));
    r.release_chunk(2);
    assert_eq!(r.loaded_dictionaries(), 0);
    assert!(r.release_dictionary(2), "already gone: nothing holds it");
}

/// Dictionary 2 (chunk 2's) with a byte of its tokens flipped: its CRC32 fails.
fn damaged_file() -> (Vec<Vec<u8>>, Vec<u8>, u64) {
    let (rows, mut file) = per_chunk_file();
    let r = Reader::from_bytes(file.clone()).unwrap();
    let d = r.footer().dicts[2];
    drop(r);
    let at = (d.offset + d.len - 20) as usize;
    file[at] ^= 0x40;
    (rows, file, d.offset)
}

#[test]
fn a_damaged_dictionary_fails_only_the_reads_that_need_it() {
    let (rows, file, dict_at) = damaged_file();
    let is_dict2_crc = |e: &Error| {
        matches!(
            e,
            Error::Corrupt {
                section: Section::Dictionary(2),
                invariant: Invariant::ChecksumMismatch { .. },
                offset,
                ..
            } if *offset == dict_at
        )
    };
    // Before issue 19's fix, opening this file failed: every dictionary
    // was checked at open.
    let r = Reader::from_bytes(file.clone()).unwrap();
    for row in (0..1000).chain(1500..2000) {
        assert_eq!(
            r.get(row).unwrap().as_deref(),
            Some(&rows[row as usize][..])
        );
    }
    for row in [1000, 1234, 1499] {
        let e = r.get(row).unwrap_err();
        assert!(is_dict2_crc(&e), "row {row}: {e:?}");
    }
    // Every bulk read of the whole column rejects the file; a range read
    // rejects it when the range needs the dictionary.
    assert!(is_dict2_crc(&r.read_all().unwrap_err()));
    assert!(is_dict2_crc(&r.read_range(900..1100).unwrap_err()));
    assert!(r.read_range(0..1000).is_ok());
    assert!(is_dict2_crc(&r.dictionaries().unwrap_err()));
    assert!(is_dict2_crc(&r.chunk(2).unwrap_err()));
    // The error is kept per dictionary: asking again fails again.
    assert!(is_dict2_crc(&r.dictionary(2).unwrap_err()));
    // Eager open rejects it.
    let e = Reader::from_bytes_with(file, ReadOptions::default().with_eager(true)).unwrap_err();
    assert!(is_dict2_crc(&e), "{e:?}");
}

#[test]
fn threads_racing_on_the_first_use_share_one_dictionary() {
    let (rows, file) = per_chunk_file();
    let r = Reader::from_bytes(file).unwrap();
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let (r, rows) = (&r, &rows);
            s.spawn(move || {
                for k in 0..200u64 {
                    let row = (k * 37 + t * 101) % 2000;
                    assert_eq!(
                        r.get(row).unwrap().as_deref(),
                        Some(&rows[row as usize][..])
                    );
                }
            });
        }
    });
    assert_eq!(r.loaded_dictionaries(), 4);
    let a = r.dictionary(1).unwrap() as *const _;
    assert_eq!(a, r.dictionary(1).unwrap() as *const _);
}

/// Every file of testdata/corrupt/ is rejected by a read of every row
/// through `read_range` (the Python package's and the Arrow path's bulk
/// read), not only by `read_all`: a range of every row checks every
/// dictionary first, as `read_all` does (versions 1–3 allow unused ones).
#[test]
fn whole_column_range_reads_reject_every_corrupt_file() {
    // Relative to the working directory (the repository root under cargo
    // test, and in a bundle carried to the GPU machine).
    let dir = std::path::Path::new("testdata/corrupt");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        n += 1;
        if let Ok(r) = Reader::from_bytes(bytes) {
            assert!(
                r.read_range(0..r.rows()).is_err(),
                "{}: read_range of every row accepted it",
                p.display()
            );
        }
    }
    assert!(n > 100);
}

/// What loading one dictionary costs, and how much of it is building the
/// planes (the measurement behind issue 18's "planes on disk" choice):
/// `FILE=x.fpc cargo test --release --test lazy_dictionaries
/// dictionary_load_cost -- --ignored --nocapture`. Prints, per codec,
/// the mean time of `Reader::dictionary` on a fresh reader (read, CRC32,
/// parse, check, token table, planes) and of `Planes::from_table` alone,
/// and the planes' size against the section's and the file's.
#[test]
#[ignore]
fn dictionary_load_cost() {
    use fastpair::dict::{Dictionary, Planes};
    use fastpair::format::layout::DictSection;
    use std::time::Instant;
    let mut steps: Vec<[f64; 4]> = Vec::new();
    let path = std::env::var("FILE").expect("FILE=path to a .fpc");
    let file = std::fs::read(&path).unwrap();
    let r = Reader::from_bytes(file.clone()).unwrap();
    let mut rows: Vec<(String, f64, f64, u64, u64)> = Vec::new();
    for id in 0..r.num_dictionaries() {
        let mut load = f64::MAX;
        for _ in 0..3 {
            let fresh = Reader::from_bytes(file.clone()).unwrap();
            let t = Instant::now();
            fresh.dictionary(id).unwrap();
            load = load.min(t.elapsed().as_secs_f64());
        }
        let d = r.dictionary(id).unwrap();
        // Where a load goes: CRC32, parse, token-model checks (front
        // coding, token table, planes), version-4 one-spelling checks.
        let e = r.footer().dicts[id];
        let s = &file[e.offset as usize..(e.offset + e.len) as usize];
        let (mut crc, mut parse, mut validate, mut canon) =
            (f64::MAX, f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..3 {
            let t = Instant::now();
            std::hint::black_box(crc32fast::hash(s));
            crc = crc.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let p = DictSection::parse_version(s, e.offset, id as u32, r.format_version()).unwrap();
            parse = parse.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let v = Dictionary::validate(&p, id as u32, e.offset).unwrap();
            validate = validate.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            fastpair::dict::canonical::check(&v, id as u32, e.offset, r.format_version()).unwrap();
            canon = canon.min(t.elapsed().as_secs_f64());
        }
        steps.push([crc, parse, validate, canon]);
        let mut planes = f64::MAX;
        let mut bytes = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let p = Planes::from_table(d.table(), d.planes().width);
            planes = planes.min(t.elapsed().as_secs_f64());
            bytes = (p.lens.len() + p.lo.len() + p.hi.len()) as u64;
        }
        let name = format!("{} W={}", d.codec().name(), d.planes().width);
        rows.push((name, load, planes, bytes, r.footer().dicts[id].len));
    }
    let k = steps.len() as f64;
    let mean = |i: usize| 1e3 * steps.iter().map(|s| s[i]).sum::<f64>() / k;
    println!(
        "mean over all: crc32 {:.3} ms, parse {:.3} ms, validate (front coding, table, planes) {:.3} ms, one-spelling check {:.3} ms",
        mean(0),
        mean(1),
        mean(2),
        mean(3)
    );
    let mut names: Vec<&String> = rows.iter().map(|r| &r.0).collect();
    names.sort();
    names.dedup();
    println!(
        "{path}: {} B, {} dictionaries, planes of all {} B ({:.2}% of the file), sections {} B",
        file.len(),
        rows.len(),
        rows.iter().map(|r| r.3).sum::<u64>(),
        100.0 * rows.iter().map(|r| r.3).sum::<u64>() as f64 / file.len() as f64,
        rows.iter().map(|r| r.4).sum::<u64>(),
    );
    for n in names {
        let sel: Vec<_> = rows.iter().filter(|r| &r.0 == n).collect();
        let k = sel.len() as f64;
        println!(
            "{n}: {} dictionaries, load {:.3} ms, of which planes {:.3} ms; planes {:.0} B, section {:.0} B",
            sel.len(),
            1e3 * sel.iter().map(|r| r.1).sum::<f64>() / k,
            1e3 * sel.iter().map(|r| r.2).sum::<f64>() / k,
            sel.iter().map(|r| r.3 as f64).sum::<f64>() / k,
            sel.iter().map(|r| r.4 as f64).sum::<f64>() / k,
        );
    }
}
