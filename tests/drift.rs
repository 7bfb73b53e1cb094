//! Shared-dictionary drift (`fastpair::write::DRIFT_MARGIN`): a column whose
//! second half is other data than its first gets a retrained dictionary at the
//! switch, shared by the chunks after it; a column that does not change keeps
//! one dictionary. Real corpus columns; without a corpus the TPC-H ones are
//! generated and the others skipped (tests/support/corpus.rs).

#[path = "support/corpus.rs"]
mod corpus;

/// Column `name`'s text: from the corpus, or generated (TPC-H).
fn column(name: &str) -> Option<Vec<u8>> {
    corpus::column(name).map(|c| c.text)
}
use fastpair::write::{write_to_vec, write_to_vec_with_summary, WriteSummary};
use fastpair::{DictMode, Reader, WriterOptions};

/// The first `bytes` bytes of whole rows of `data`.
fn rows_of(data: &[u8], bytes: usize) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut got = 0;
    for r in data.split(|&b| b == b'\n') {
        if got >= bytes {
            break;
        }
        got += r.len();
        out.push(r);
    }
    out
}

/// Small chunks and a small training window, so that a few MB make many
/// chunks after the window.
fn opts() -> WriterOptions {
    let mut o = WriterOptions::default();
    o.sample_bytes = 128 << 10; // window: 4 × 128 KiB
    o.chunk_bytes = 256 << 10;
    o
}

fn write(rows: &[&[u8]], o: WriterOptions) -> (Vec<u8>, WriteSummary) {
    write_to_vec_with_summary(rows.iter().map(|r| Some(*r)), o).expect("write")
}

fn check_rows(file: &[u8], rows: &[&[u8]]) {
    let r = Reader::from_bytes(file.to_vec()).expect("open");
    let col = r.read_all().expect("read_all");
    assert_eq!(col.len(), rows.len());
    for (i, want) in rows.iter().enumerate() {
        assert_eq!(col.value(i), Some(*want), "row {i}");
    }
}

/// The dictionary of each chunk, in file order.
fn chunk_dicts(file: &[u8]) -> Vec<u32> {
    let r = Reader::from_bytes(file.to_vec()).expect("open");
    r.footer().chunks.iter().map(|c| c.dict).collect()
}

#[test]
fn second_half_of_other_data_retrains_at_the_switch() {
    let (Some(a), Some(b)) = (column("tpch_sf1_l_comment"), column("nltk_abc_news_en")) else {
        return;
    };
    let first = rows_of(&a, 2 << 20);
    let second = rows_of(&b, 2 << 20);
    let both: Vec<&[u8]> = first.iter().chain(&second).copied().collect();

    let (file, summary) = write(&both, opts());
    check_rows(&file, &both);
    let dicts = chunk_dicts(&file);
    assert!(dicts.len() >= 12, "{} chunks", dicts.len());
    // The first half (window and after) keeps the window's dictionary; the
    // second half switches at or right after its first chunk and then shares
    // one (or at most two) retrained dictionaries.
    let first_chunks = dicts.iter().take_while(|&&d| d == 0).count();
    let first_rows_chunks = {
        let r = Reader::from_bytes(file.clone()).expect("open");
        let mut rows = 0u64;
        let mut n = 0;
        for c in &r.footer().chunks {
            if rows + u64::from(c.rows) > first.len() as u64 {
                break;
            }
            rows += u64::from(c.rows);
            n += 1;
        }
        n
    };
    assert!(
        first_chunks >= first_rows_chunks && first_chunks <= first_rows_chunks + 2,
        "switch at chunk {first_chunks}, second half starts in chunk {first_rows_chunks}: {dicts:?}"
    );
    assert!(
        (2..=3).contains(&summary.dicts),
        "{} dictionaries: {dicts:?}",
        summary.dicts
    );
    assert!(dicts.windows(2).all(|w| w[0] <= w[1]), "{dicts:?}");

    // Retraining recovers what writing the halves as separate files gets
    // (without it, the second half is coded with the first half's tokens:
    // measured 25% larger overall).
    let (fa, _) = write(&first, opts());
    let (fb, _) = write(&second, opts());
    let separate = (fa.len() + fb.len()) as f64;
    assert!(
        (file.len() as f64) < separate * 1.03,
        "drifted column {} B, halves written apart {} B",
        file.len(),
        separate
    );

    // Same bytes for every thread count and every parallel chunk count.
    for (threads, parallel) in [(1, 1), (2, 3), (3, 8)] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut o = opts();
        o.parallel_chunks = parallel;
        let again = pool.install(|| write_to_vec(both.iter().map(|r| Some(*r)), o).unwrap());
        assert!(
            again == file,
            "{threads} threads, {parallel} parallel chunks"
        );
    }
}

#[test]
fn column_that_does_not_change_keeps_one_dictionary() {
    // (Time-ordered logs such as loghub_Linux_full do drift: with chunks this
    // small each of their later chunks retrains, and the file is smaller.)
    for name in [
        "tpch_sf1_l_comment",
        "tpch_sf1_ps_comment",
        "nltk_abc_news_en",
        "dbtext_uuid",
    ] {
        let Some(a) = column(name) else {
            return;
        };
        let rows = rows_of(&a, 4 << 20);
        // Coded chunks (as log templates a file stores no dictionary at
        // all, spec/FORMAT.md §3, and nothing would drift).
        let o = opts().with_log_templates(fastpair::LogTemplates::Off);
        let (file, summary) = write(&rows, o);
        check_rows(&file, &rows);
        assert_eq!(summary.dicts, 1, "{name}: {:?}", chunk_dicts(&file));
    }
}

#[test]
fn per_chunk_dictionaries_are_unchanged_by_drift() {
    let Some(a) = column("loghub_Linux_full") else {
        return;
    };
    let rows = rows_of(&a, 2 << 20);
    let mut o = opts();
    o.dict_mode = DictMode::PerChunk;
    let (file, summary) = write(&rows, o);
    check_rows(&file, &rows);
    let dicts = chunk_dicts(&file);
    assert_eq!(summary.dicts as usize, dicts.len());
    assert!(dicts.iter().enumerate().all(|(i, &d)| d as usize == i));
}
