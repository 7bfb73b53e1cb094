//! A file's bytes depend only on the input and the options (issue 7, finding
//! 8): never on the thread count or the memory budget. Before, the shared
//! dictionary was trained on the first *thread-count* chunks, so
//! `RAYON_NUM_THREADS=1` and `2` wrote different files.

use std::process::Command;

use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, LogTemplates, Reader, WriterOptions};

const BIN: &str = env!("CARGO_BIN_EXE_fastpair");
const THREADS: [usize; 3] = [1, 2, 8];

#[path = "support/corpus.rs"]
mod corpus;

/// The repository's bundled column plus a few corpus columns (without a
/// corpus the TPC-H ones are generated and the others skipped).
fn columns() -> Vec<corpus::Column> {
    let picks = [
        corpus::BUNDLED,
        "loghub_Linux_full",
        "dbtext_movies",
        "tpch_sf1_c_address",
        "dbtext_chinese",
        // Value-dictionary chunks (spec/FORMAT.md §5.6).
        "tpch_sf1_o_clerk",
    ];
    picks.iter().filter_map(|&p| corpus::column(p)).collect()
}

fn lines(c: &corpus::Column) -> Vec<Vec<u8>> {
    c.rows().into_iter().map(<[u8]>::to_vec).collect()
}

/// Writes `rows` inside a rayon pool of `threads` threads, with the options'
/// thread-dependent defaults (`parallel_chunks`) taken inside the pool.
fn write_with_threads(
    rows: &[Vec<u8>],
    threads: usize,
    f: &(dyn Fn() -> WriterOptions + Sync),
) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let o = f();
        assert_eq!(o.parallel_chunks, threads);
        write_to_vec(rows.iter().map(|r| Some(&r[..])), o).unwrap()
    })
}

#[test]
fn bytes_do_not_depend_on_thread_count_or_memory_budget() {
    type Opts = (&'static str, Box<dyn Fn() -> WriterOptions + Sync>);
    let variants: Vec<Opts> = vec![
        ("default", Box::new(WriterOptions::default)),
        (
            "tiny chunks, shared dictionary",
            Box::new(|| WriterOptions::default().with_chunk_rows(2000)),
        ),
        (
            "tiny chunks, training window closing mid-column",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_rows(500)
                    .with_sample_bytes(32 << 10)
                    .with_codec(Codec::OnPair12)
            }),
        ),
        (
            "tiny chunks, per-chunk dictionaries",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_rows(3000)
                    .with_dict_mode(DictMode::PerChunk)
            }),
        ),
        (
            "small chunk_bytes",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_bytes(100_000)
                    .with_codec(Codec::OnPair12)
            }),
        ),
    ];
    let mut compared = 0;
    for col in columns() {
        let rows = lines(&col);
        for (name, f) in &variants {
            let reference = write_with_threads(&rows, THREADS[0], f.as_ref());
            let r = Reader::from_bytes(reference.clone()).unwrap();
            assert_eq!(r.rows(), rows.len() as u64);
            for &t in &THREADS[1..] {
                let other = write_with_threads(&rows, t, f.as_ref());
                assert!(
                    other == reference,
                    "{}: {name}: {t} threads wrote {} bytes, 1 thread {} bytes",
                    col.name,
                    other.len(),
                    reference.len()
                );
                compared += 1;
            }
            // The memory budget only changes how many chunks are encoded at
            // once: the smallest allowed budget writes the same bytes.
            let tight = write_with_threads(&rows, 8, &|| {
                let mut o = f();
                o.memory_budget = o.min_memory_budget();
                o
            });
            assert!(tight == reference, "{}: {name}: budget", col.name);
        }
    }
    assert!(compared >= 2 * variants.len());
}

/// Driven from a thread outside any pool (as the CLI drives it), the writer
/// encodes each group of chunks after the training window on the pool while
/// it buffers the next rows, and collects the group when the next is due:
/// the same bytes as a writer inside a one-thread pool, which encodes every
/// group before it reads on. Chunk shapes where groups hold several chunks,
/// where the training window is one chunk (trained and encoded in the
/// background), where the budget holds one group at a time, a column whose second half
/// retrains the dictionary (the group in flight then holds chunks to encode
/// again), per-chunk dictionaries and value-dictionary chunks.
#[test]
fn groups_encoded_while_rows_are_buffered_write_the_same_bytes() {
    // Tests of this binary may have started the global pool already: any
    // size of two threads or more takes the path.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build_global();
    assert!(
        rayon::current_num_threads() >= 2,
        "the global pool has one thread: the path under test cannot run"
    );
    type Opts = (&'static str, Box<dyn Fn() -> WriterOptions + Sync>);
    let variants: Vec<Opts> = vec![
        (
            "small chunks, a shared dictionary",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_rows(700)
                    .with_sample_bytes(32 << 10)
            }),
        ),
        (
            "a training window of one chunk (trained in the background too)",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_rows(2000)
                    .with_sample_bytes(8 << 10)
            }),
        ),
        (
            "one group at a time (the smallest budget)",
            Box::new(|| {
                let mut o = WriterOptions::default()
                    .with_chunk_rows(700)
                    .with_sample_bytes(32 << 10)
                    .with_codec(Codec::OnPair12);
                o.memory_budget = o.min_memory_budget();
                o
            }),
        ),
        (
            "per-chunk dictionaries",
            Box::new(|| {
                WriterOptions::default()
                    .with_chunk_rows(1500)
                    .with_dict_mode(DictMode::PerChunk)
            }),
        ),
    ];
    let sets: Vec<(String, Vec<Vec<u8>>)> = columns()
        .iter()
        .map(|c| (c.name.to_string(), lines(c)))
        .collect();
    let mut background = 0;
    for (name, rows) in &sets {
        for (what, f) in &variants {
            let (file, summary) =
                fastpair::write::write_to_vec_with_summary(rows.iter().map(|r| Some(&r[..])), f())
                    .unwrap();
            background += summary.groups_in_background;
            let reference = write_with_threads(rows, 1, &|| {
                let mut o = f();
                o.parallel_chunks = 1;
                o
            });
            assert!(
                file == reference,
                "{name}: {what}: {} bytes with groups in the background, {} without",
                file.len(),
                reference.len()
            );
        }
    }
    assert!(background > 0, "no group was encoded in the background");

    // A column whose second half is other text: a chunk of a group in
    // flight retrains the dictionary, and the group's later chunks are
    // encoded again with the new one (groups of four chunks of 256 KiB; the
    // window is the first two).
    // The bundled column, then lines of another alphabet: the same on any
    // corpus, or none.
    let bundled = lines(&corpus::column(corpus::BUNDLED).expect("the bundled column"));
    let first = bundled.iter().cycle().scan(0usize, |got, r| {
        *got += r.len();
        (*got <= 2 << 20).then(|| r.clone())
    });
    let words = [
        "привет",
        "мир",
        "строка",
        "данные",
        "журнал",
        "сервер",
        "ошибка",
        "запрос",
    ];
    let second = (0..40_000u32).map(|i| {
        let w = |k: u32| words[(i.wrapping_mul(2_654_435_761) >> k) as usize % words.len()];
        format!("{} {} {} {} №{}", w(3), w(7), w(11), w(17), i % 500).into_bytes()
    });
    let rows: Vec<Vec<u8>> = first.chain(second).collect();
    let drifting = || {
        // Coded chunks only: a log-template chunk is not a drift candidate.
        let mut o = WriterOptions::default().with_log_templates(LogTemplates::Off);
        o.sample_bytes = 128 << 10;
        o.chunk_bytes = 256 << 10;
        o
    };
    let (file, summary) = fastpair::write::write_to_vec_with_summary(
        rows.iter().map(|r| Some(&r[..])),
        drifting().with_parallel_chunks(4),
    )
    .unwrap();
    assert!(
        summary.dicts >= 2 && summary.groups_in_background > 0,
        "{summary:?}"
    );
    let reference = write_with_threads(&rows, 1, &|| drifting().with_parallel_chunks(1));
    assert!(file == reference, "the drifting column");
}

/// A log-template chunk encodes its rows in parallel inside the chunk
/// (tokenizing and matching runs of rows, typing a large template's slots,
/// searching template families by bucket, the header and the body at
/// once): large chunks of the Loghub columns, mixed and tiled to more rows
/// than those paths start at, write the same bytes on 1, 2 and 8 threads,
/// and read back.
#[test]
fn log_chunks_do_not_depend_on_thread_count() {
    let loghub = corpus::columns(&["loghub"]);
    if loghub.is_empty() {
        eprintln!("notice: no Loghub columns in the corpus; log-chunk determinism not checked");
        return;
    }
    // Each column alone, tiled past 40,000 rows; and all of them
    // interleaved in runs of 50 rows (many templates, families, escapes).
    let mut inputs: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    for c in loghub.iter().filter(|c| c.name.contains("_full")) {
        let rows = lines(c);
        let tiled: Vec<Vec<u8>> = rows
            .iter()
            .cycle()
            .take(40_000.max(rows.len()))
            .cloned()
            .collect();
        inputs.push((c.name.clone(), tiled));
    }
    let all: Vec<Vec<Vec<u8>>> = loghub.iter().map(lines).collect();
    let mut mixed = Vec::new();
    for k in 0.. {
        let before = mixed.len();
        for rows in &all {
            mixed.extend(rows.iter().skip(50 * k).take(50).cloned());
        }
        if mixed.len() == before || mixed.len() >= 120_000 {
            break;
        }
    }
    inputs.push(("loghub interleaved".into(), mixed));
    // The log encoder with threads inside the block and without: the
    // same payload (every parallel path against its serial one).
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap();
    for (name, rows) in &inputs {
        let refs: Vec<&[u8]> = rows.iter().map(|r| &r[..]).collect();
        let encode = |threads| {
            let o = fastpair::logs::LogOptions {
                threads,
                ..Default::default()
            };
            pool.install(|| fastpair::logs::encode_column(&refs, &o))
        };
        assert!(
            encode(true) == encode(false),
            "{name}: threads inside the block changed the payload"
        );
    }
    let opts = || WriterOptions::default().with_log_templates(LogTemplates::Always);
    for (name, rows) in &inputs {
        let reference = write_with_threads(rows, THREADS[0], &opts);
        let r = Reader::from_bytes(reference.clone()).unwrap();
        assert_eq!(r.rows(), rows.len() as u64, "{name}");
        for i in (0..rows.len()).step_by(997) {
            assert_eq!(
                r.get(i as u64).unwrap().as_deref(),
                Some(&rows[i][..]),
                "{name}: row {i}"
            );
        }
        for &t in &THREADS[1..] {
            let other = write_with_threads(rows, t, &opts);
            assert!(
                other == reference,
                "{name}: {t} threads wrote {} bytes, 1 thread {} bytes",
                other.len(),
                reference.len()
            );
        }
    }
}

/// The CLI with `RAYON_NUM_THREADS` = 1, 2 and 8 writes identical files (the
/// issue's reproduction: `--chunk-rows 2000`).
#[test]
fn cli_bytes_do_not_depend_on_rayon_num_threads() {
    let dir = std::env::temp_dir().join(format!("fastpair-determinism-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for col in columns().iter().take(3) {
        let input = dir.join(format!("{}.txt", col.name));
        std::fs::write(&input, &col.text).unwrap();
        let mut files = Vec::new();
        for t in THREADS {
            let out = dir.join(format!("t{t}.fpc"));
            let st = Command::new(BIN)
                .args(["compress", "-q", "--chunk-rows", "2000"])
                .arg(&input)
                .arg("-o")
                .arg(&out)
                .env("RAYON_NUM_THREADS", t.to_string())
                .status()
                .unwrap();
            assert!(st.success());
            files.push(std::fs::read(&out).unwrap());
        }
        assert!(
            files.iter().all(|f| *f == files[0]),
            "{}: sizes {:?}",
            col.name,
            files.iter().map(|f| f.len()).collect::<Vec<_>>()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
