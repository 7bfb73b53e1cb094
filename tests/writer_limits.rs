//! Writer ⊆ reader (issue 7, finding 2): every file the writer finishes opens
//! and decodes, and input the format cannot hold fails *before* anything is
//! published.

use fastpair::format::limits;
use fastpair::write::write_to_vec;
use fastpair::{Codec, CodecChoice, DictMode, Error, ReadOptions, Reader, Writer, WriterOptions};
use proptest::prelude::*;

/// A sink that records whether it was committed.
struct Probe {
    bytes: Vec<u8>,
    committed: std::rc::Rc<std::cell::Cell<bool>>,
}

impl std::io::Write for Probe {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl fastpair::write::Sink for Probe {
    fn commit(self) -> fastpair::Result<()> {
        self.committed.set(true);
        Ok(())
    }
}

/// Finding 2: `--per-chunk-dict` with many small chunks used to finish a
/// file with more dictionaries than the reader accepts ("dictionary count is
/// 70792, over the limit of 65536"). The writer now stops at the chunk that
/// would need dictionary 65,537, and never commits.
#[test]
fn per_chunk_dictionaries_past_the_reader_limit_fail_before_commit() {
    let committed = std::rc::Rc::new(std::cell::Cell::new(false));
    let sink = Probe {
        bytes: Vec::new(),
        committed: committed.clone(),
    };
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(1)
        .with_dict_mode(DictMode::PerChunk);
    let mut w = Writer::new(sink, opts).unwrap();
    let n = limits::MAX_DICTS as u64 + 1;
    let mut err = None;
    for i in 0..n {
        if let Err(e) = w.push_value(format!("{}", i % 7).as_bytes()) {
            err = Some((i, e));
            break;
        }
    }
    let (i, e) = match err {
        Some(x) => x,
        None => (n, w.finish().map(|_| ()).unwrap_err()),
    };
    assert!(
        matches!(
            e,
            Error::LimitExceeded {
                what, value, limit
            } if what.starts_with("dictionary count") && value == n && limit == limits::MAX_DICTS as u64
        ),
        "{e}"
    );
    // It failed at the row that opens the chunk past the limit (or at finish).
    assert!(i >= limits::MAX_DICTS as u64, "failed early at row {i}");
    assert!(!committed.get(), "a file the reader rejects was committed");
}

/// Exactly the limit is fine, and the reader opens it.
#[test]
fn per_chunk_dictionaries_at_the_limit_are_readable() {
    let opts = WriterOptions::default()
        .with_codec(Codec::OnPair12)
        .with_chunk_rows(1)
        .with_dict_mode(DictMode::PerChunk);
    let n = limits::MAX_DICTS as usize;
    let rows: Vec<Vec<u8>> = (0..n).map(|i| format!("{}", i % 7).into_bytes()).collect();
    let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    assert_eq!(r.dictionaries().unwrap().len(), n);
    assert_eq!(r.get(n as u64 - 1).unwrap().unwrap(), rows[n - 1]);
}

/// Options that cannot work are refused up front, before a byte is written.
#[test]
fn impossible_options_are_refused_up_front() {
    let base = WriterOptions::default();
    let cases = [
        base.clone().with_chunk_rows(0),
        base.clone()
            .with_chunk_rows(limits::MAX_CHUNK_ROWS as usize + 1),
        base.clone().with_chunk_bytes(0),
        base.clone().with_batch(48),
        base.clone().with_parallel_chunks(0),
        // One chunk of 2^26 rows needs gigabytes; 64 MiB cannot hold it.
        base.clone()
            .with_chunk_rows(limits::MAX_CHUNK_ROWS as usize)
            .with_memory_budget(64 << 20),
    ];
    for o in cases {
        match Writer::new(Vec::new(), o.clone()) {
            Err(Error::InvalidArgument(_)) => {}
            Err(e) => panic!("{o:?}: unexpected error {e}"),
            Ok(_) => panic!("{o:?} accepted"),
        }
    }
}

fn arb_options() -> impl Strategy<Value = WriterOptions> {
    (
        prop_oneof![
            Just(CodecChoice::Auto),
            Just(CodecChoice::Fixed(Codec::Fsst12)),
            Just(CodecChoice::Fixed(Codec::OnPair12)),
            Just(CodecChoice::Fixed(Codec::OnPair16))
        ],
        1usize..40,
        1usize..3000,
        any::<bool>(),
        prop_oneof![Just(16u32), Just(64), Just(256), Just(65536)],
        1usize..5,
        0u64..4,
        prop_oneof![Just(64usize), Just(4096), Just(1 << 16)],
        any::<bool>(),
    )
        .prop_map(
            |(codec, chunk_rows, chunk_bytes, per_chunk, batch, par, seed, sample, value_dict)| {
                let mut o = WriterOptions::default()
                    .with_codec(codec)
                    .with_chunk_rows(chunk_rows)
                    .with_chunk_bytes(chunk_bytes)
                    .with_dict_mode(if per_chunk {
                        DictMode::PerChunk
                    } else {
                        DictMode::Shared
                    })
                    .with_batch(batch)
                    .with_parallel_chunks(par)
                    .with_seed(seed)
                    .with_sample_bytes(sample)
                    .with_value_dict(value_dict);
                // A tight budget: groups of chunks are cut by memory too.
                o.memory_budget = o.min_memory_budget();
                o
            },
        )
}

fn arb_rows() -> impl Strategy<Value = Vec<Option<Vec<u8>>>> {
    let value = prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..40),
        4 => proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b' '), Just(b'\n'), Just(0u8)], 0..200),
        1 => proptest::collection::vec(any::<u8>(), 1000..5000),
        // Few distinct values: value-dictionary chunks (§5.6).
        6 => prop_oneof![Just(b"alpha".to_vec()), Just(b"beta".to_vec()), Just(Vec::new()), Just(b"a".to_vec())],
    ];
    proptest::collection::vec(proptest::option::weighted(0.9, value), 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Writer ⊆ reader: whatever the options (per-chunk dictionaries, tiny
    /// chunks, any batch size, tight memory budgets) and values (empty, null,
    /// binary, long), a finished file opens with every chunk validated
    /// eagerly and decodes to exactly the input.
    #[test]
    fn the_reader_accepts_every_file_the_writer_finishes(opts in arb_options(), rows in arb_rows()) {
        let file = write_to_vec(rows.iter().map(|r| r.as_deref()), opts.clone()).unwrap();
        let r = Reader::from_bytes_with(
            file,
            ReadOptions::default().with_eager(true),
        ).unwrap();
        prop_assert_eq!(r.rows(), rows.len() as u64);
        let col = r.read_all().unwrap();
        for (i, want) in rows.iter().enumerate() {
            let want = want.as_deref();
            prop_assert_eq!(col.value(i), want);
            let got = r.get(i as u64).unwrap();
            prop_assert_eq!(got.as_deref(), want);
        }
        if opts.dict_mode == DictMode::PerChunk {
            // One per chunk; the empty column has none (format version 4).
            prop_assert_eq!(r.dictionaries().unwrap().len(), r.num_chunks());
        }
    }
}

/// The summary says when the memory budget, not the thread count, kept
/// chunks from being encoded together: at the smallest budget chunks go one
/// at a time and it counts the points where more were waiting; with room
/// for every group, `parallel_chunks` of them go at once and it counts none.
/// The bytes are the same either way.
#[test]
fn summary_reports_chunks_held_back_by_memory() {
    let rows: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| {
            format!(
                "row {i} of a column long enough to fill several chunks {}",
                i % 97
            )
            .into_bytes()
        })
        .collect();
    let opts = |budget: Option<usize>| {
        let mut o = WriterOptions::default()
            .with_codec(CodecChoice::Fixed(Codec::OnPair12))
            .with_chunk_rows(1000)
            .with_dict_mode(DictMode::PerChunk)
            .with_parallel_chunks(4);
        o.memory_budget = budget.unwrap_or_else(|| o.min_memory_budget());
        o
    };
    let values = || rows.iter().map(|r| Some(&r[..]));
    let (tight, s1) = fastpair::write::write_to_vec_with_summary(values(), opts(None)).unwrap();
    let (roomy, s2) =
        fastpair::write::write_to_vec_with_summary(values(), opts(Some(1 << 30))).unwrap();
    assert_eq!(tight, roomy, "the budget changed the bytes");
    assert_eq!(s1.chunks, 20);
    assert_eq!(s1.most_chunks_at_once, 1, "{s1:?}");
    assert!(s1.held_back_by_memory > 0, "{s1:?}");
    assert_eq!(s2.most_chunks_at_once, 4, "{s2:?}");
    assert_eq!(s2.held_back_by_memory, 0, "{s2:?}");
}
