//! Search (issue 21) against an oracle written here from the documented
//! semantics (src/search/predicate.rs): naive byte matching, a DP matcher
//! for LIKE. Every corpus column and codec, a fixed predicate set drawn from
//! each column, both matching strategies, nulls; proptest on random
//! columns and patterns; thread-count independence.

#[path = "support/corpus.rs"]
mod corpus;

use fastpair::search::{search, search_with, Pattern, Predicate, SearchOptions, Strategy};
use fastpair::write::write_to_vec;
use fastpair::{Codec, DictMode, LogTemplates, Reader, WriterOptions};
use proptest::prelude::*;
use proptest::strategy::Strategy as _;

fn fold(b: u8, ic: bool) -> u8 {
    if ic {
        b.to_ascii_lowercase()
    } else {
        b
    }
}

fn eq(a: &[u8], b: &[u8], ic: bool) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| fold(x, ic) == fold(y, ic))
}

fn has(hay: &[u8], needle: &[u8], ic: bool) -> bool {
    needle.is_empty()
        || (0..hay.len())
            .any(|i| hay.len() - i >= needle.len() && eq(&hay[i..i + needle.len()], needle, ic))
}

/// Bytes `_` consumes at the start of `s` (None: no character there), per
/// the documented rule.
fn char_len(s: &[u8]) -> Option<usize> {
    let b = *s.first()?;
    let k = match b {
        0xC0..=0xDF => 1,
        0xE0..=0xEF => 2,
        0xF0..=0xF7 => 3,
        _ => return Some(1),
    };
    (s.len() > k && s[1..=k].iter().all(|&c| (0x80..=0xBF).contains(&c))).then_some(k + 1)
}

#[derive(Clone, Copy, PartialEq)]
enum T {
    B(u8),
    One,
    Any,
}

fn like_tokens(p: &[u8], esc: Option<u8>) -> Vec<T> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < p.len() {
        if Some(p[i]) == esc {
            v.push(T::B(p[i + 1]));
            i += 2;
            continue;
        }
        v.push(match p[i] {
            b'%' => T::Any,
            b'_' => T::One,
            b => T::B(b),
        });
        i += 1;
    }
    v
}

/// LIKE by dynamic programming: `ok[i][j]` = pattern tokens `i..` match
/// bytes `j..`.
fn like(p: &[T], s: &[u8], ic: bool) -> bool {
    let (n, m) = (p.len(), s.len());
    let mut ok = vec![vec![false; m + 1]; n + 1];
    ok[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            ok[i][j] = match p[i] {
                T::Any => ok[i + 1][j] || (j < m && ok[i][j + 1]),
                T::One => char_len(&s[j..]).is_some_and(|k| ok[i + 1][j + k]),
                T::B(b) => j < m && fold(s[j], ic) == fold(b, ic) && ok[i + 1][j + 1],
            };
        }
    }
    ok[0][0]
}

fn oracle(p: &Predicate, row: Option<&[u8]>) -> bool {
    let Some(r) = row else { return false };
    let ic = p.ignore_case;
    let m = match &p.pattern {
        Pattern::Equals(v) => eq(r, v, ic),
        Pattern::In(vs) => vs.iter().any(|v| eq(r, v, ic)),
        Pattern::Prefix(v) => r.len() >= v.len() && eq(&r[..v.len()], v, ic),
        Pattern::Suffix(v) => r.len() >= v.len() && eq(&r[r.len() - v.len()..], v, ic),
        Pattern::Contains { needles, all: true } => needles.iter().all(|n| has(r, n, ic)),
        Pattern::Contains {
            needles,
            all: false,
        } => needles.iter().any(|n| has(r, n, ic)),
        Pattern::Like { pattern, escape } => like(&like_tokens(pattern, *escape), r, ic),
    };
    m != p.negated
}

/// The fixed predicate set for a column: literals taken from its rows
/// (frequent, rare, at odd offsets so they span token boundaries), absent
/// and non-ASCII literals, empty strings and LIKE edge cases.
fn predicates(rows: &[Option<&[u8]>]) -> Vec<Predicate> {
    let vals: Vec<&[u8]> = rows.iter().flatten().copied().collect();
    let pick = |i: usize| vals.get(i % vals.len().max(1)).copied().unwrap_or(b"");
    let sub = |r: &[u8], a: usize, n: usize| {
        let a = a.min(r.len());
        r[a..(a + n).min(r.len())].to_vec()
    };
    let first = pick(0);
    let late = pick(vals.len().saturating_sub(7));
    let mid = pick(vals.len() / 2);
    let frequent = sub(first, first.len() / 2, 2);
    let rare = sub(late, 3, 14);
    let odd = sub(mid, 1, 7);
    let mut v = vec![
        Predicate::contains(frequent.clone()),
        Predicate::contains(rare.clone()),
        Predicate::contains(odd.clone()),
        Predicate::contains(b"zq#qz\xff".to_vec()),
        Predicate::contains("é".as_bytes()),
        Predicate::contains("的".as_bytes()),
        Predicate::contains(b"".to_vec()),
        Predicate::contains_any([frequent.clone(), rare.clone()]),
        Predicate::contains_all([frequent.clone(), odd.clone()]),
        Predicate::contains_any(Vec::<Vec<u8>>::new()),
        Predicate::equals(pick(2)),
        Predicate::equals(b"".to_vec()),
        Predicate::in_list([pick(3), pick(4), b"no such row"]),
        Predicate::prefix(sub(first, 0, 5)),
        Predicate::prefix(b"".to_vec()),
        Predicate::suffix(sub(pick(1), pick(1).len().saturating_sub(4), 4)),
        Predicate::like(b"".to_vec()),
        Predicate::like(b"%".to_vec()),
        Predicate::like(b"_".to_vec()),
        Predicate::like(b"%_%".to_vec()),
        Predicate::like(b"__%".to_vec()),
        Predicate::like(b"_%_".to_vec()),
        Predicate::like_escape(b"%\\%%".to_vec(), b'\\'),
        Predicate::like_escape(b"%\\_%".to_vec(), b'\\'),
        Predicate::like(b"%e_t%".to_vec()),
    ];
    let mut lk = b"%".to_vec();
    lk.extend(sub(&odd, 0, 3));
    lk.push(b'_');
    lk.extend(sub(&odd, 4, 3));
    lk.push(b'%');
    v.push(Predicate::like(lk));
    let mut pre = sub(first, 0, 3);
    pre.extend(b"%");
    v.push(Predicate::like(pre));
    v.push(Predicate::contains(frequent.to_ascii_uppercase()).ignore_case());
    v.push(Predicate::prefix(sub(first, 0, 4).to_ascii_uppercase()).ignore_case());
    v.push(Predicate::equals(pick(2).to_ascii_lowercase()).ignore_case());
    v.push(Predicate::like(b"%ERROR%".to_vec()).ignore_case());
    let negs: Vec<Predicate> = v.iter().take(8).map(|p| p.clone().not()).collect();
    v.extend(negs);
    v.push(Predicate::like(b"%".to_vec()).not());
    v
}

fn check(file: &[u8], rows: &[Option<&[u8]>], preds: &[Predicate], what: &str) {
    let r = Reader::from_bytes(file.to_vec()).unwrap();
    for p in preds {
        let want: Vec<u64> = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| oracle(p, row.as_deref()))
            .map(|(i, _)| i as u64)
            .collect();
        for strategy in [
            Strategy::Auto,
            Strategy::Tokens,
            Strategy::Decode,
            Strategy::Sparse,
            Strategy::Sure,
        ] {
            let sel = search_with(&r, p, SearchOptions { strategy }).unwrap();
            assert_eq!(sel.count(), want.len() as u64, "{what} {strategy:?} {p:?}");
            assert_eq!(sel.row_ids(), want, "{what} {strategy:?} {p:?}");
        }
        let sel = search(&r, p).unwrap();
        let col = sel.take(&r).unwrap();
        assert_eq!(col.len(), want.len());
        for (k, &i) in want.iter().enumerate().take(50) {
            assert_eq!(col.value(k), rows[i as usize], "{what} take {p:?}");
        }
    }
}

/// Rows per column in the corpus oracle (the first ones; every row of the
/// smaller columns).
const ORACLE_ROWS: usize = 30_000;

#[test]
fn oracle_on_every_corpus_column_and_codec() {
    for col in corpus::columns(&[]) {
        let all = col.rows();
        let base: Vec<&[u8]> = all.iter().take(ORACLE_ROWS).copied().collect();
        // Every 13th row null in the second variant.
        let with_nulls: Vec<Option<&[u8]>> = base
            .iter()
            .enumerate()
            .map(|(i, r)| (i % 13 != 5).then_some(*r))
            .collect();
        let plain: Vec<Option<&[u8]>> = base.iter().map(|r| Some(*r)).collect();
        let preds = predicates(&plain);
        for codec in [Codec::OnPair12, Codec::OnPair16, Codec::Fsst12] {
            let (rows, opts) = match codec {
                // Per-chunk dictionaries, several chunks, nulls.
                Codec::OnPair16 => (
                    &with_nulls,
                    WriterOptions::default()
                        .with_codec(codec)
                        .with_chunk_rows(7_000)
                        .with_dict_mode(DictMode::PerChunk),
                ),
                _ => (&plain, WriterOptions::default().with_codec(codec)),
            };
            let file = write_to_vec(rows.iter().copied(), opts).unwrap();
            check(&file, rows, &preds, &format!("{} {codec:?}", col.name));
        }
    }
}

/// Log-template chunks (spec/FORMAT.md §5.8; plain substrings are matched
/// against each template's static text once, `src/logs/search.rs`): the
/// Loghub columns and three other columns written as log templates, with and
/// without nulls, several chunks, against the oracle.
#[test]
fn oracle_on_log_template_chunks() {
    let mut checked = 0;
    for col in corpus::columns(&["loghub", "dbtext_hamlet", "o_clerk", "dbtext_movies"]) {
        let base: Vec<&[u8]> = col.rows().iter().take(6_000).copied().collect();
        let plain: Vec<Option<&[u8]>> = base.iter().map(|r| Some(*r)).collect();
        let with_nulls: Vec<Option<&[u8]>> = base
            .iter()
            .enumerate()
            .map(|(i, r)| (i % 11 != 3).then_some(*r))
            .collect();
        let preds = predicates(&plain);
        for (rows, chunk) in [(&plain, 1 << 20), (&with_nulls, 2_500)] {
            let opts = WriterOptions::default()
                .with_log_templates(LogTemplates::Always)
                .with_chunk_rows(chunk);
            let file = write_to_vec(rows.iter().copied(), opts).unwrap();
            check(&file, rows, &preds, &format!("{} log templates", col.name));
            checked += 1;
        }
    }
    corpus::checked("oracle_on_log_template_chunks", checked);
}

/// The corpus columns matching `names`, else (a corpus without them) the
/// first two columns there are (under `FASTPAIR_REQUIRE_CORPUS=1`, a
/// failure only when there are none).
fn named_or_any(names: &[&str]) -> Vec<corpus::Column> {
    let named: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    if fastpair::testing::corpus::files(&named).is_empty() {
        corpus::columns(&[]).into_iter().take(2).collect()
    } else {
        corpus::columns(names)
    }
}

/// Hundreds of substrings at once (`contains_any`, one Aho–Corasick
/// automaton), cut from rows and absent, negated too, on every codec and
/// on log templates.
#[test]
fn many_substrings_at_once() {
    let mut checked = 0;
    for col in named_or_any(&["loghub_Linux_full", "dbtext_movies"]) {
        let rows: Vec<Option<&[u8]>> = col.rows().iter().take(8_000).map(|r| Some(*r)).collect();
        let mut needles: Vec<Vec<u8>> = rows
            .iter()
            .step_by(41)
            .filter_map(|r| {
                let r = r.unwrap();
                (r.len() >= 9).then(|| r[r.len() / 2 - 4..r.len() / 2 + 3].to_vec())
            })
            .collect();
        needles.extend((0..200).map(|i| format!("~{i}~").into_bytes()));
        let preds = [
            Predicate::contains_any(needles.clone()),
            Predicate::contains_any(needles.clone()).ignore_case(),
            Predicate::contains_any(needles).not(),
        ];
        for codec in [Codec::OnPair16, Codec::Fsst12] {
            let opts = WriterOptions::default().with_codec(codec);
            let file = write_to_vec(rows.iter().copied(), opts).unwrap();
            check(
                &file,
                &rows,
                &preds,
                &format!("{} many substrings {codec:?}", col.name),
            );
        }
        let opts = WriterOptions::default().with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(
            &file,
            &rows,
            &preds,
            &format!("{} many substrings, log templates", col.name),
        );
        checked += 1;
    }
    corpus::checked("many_substrings_at_once", checked);
}

/// A long IN list on log-template chunks: the values laid over the
/// templates until their time is spent, then every row rendered and looked
/// up; the same rows either way.
#[test]
fn long_in_lists_on_log_template_chunks() {
    let mut checked = 0;
    for col in named_or_any(&["loghub_Linux", "loghub_HDFS"]) {
        let rows: Vec<Option<&[u8]>> = col.rows().iter().take(6_000).map(|r| Some(*r)).collect();
        let mut values: Vec<Vec<u8>> = (0..3_000)
            .map(|i| format!("absent {i}").into_bytes())
            .collect();
        values.extend(rows.iter().step_by(97).map(|r| r.unwrap().to_vec()));
        let preds = [
            Predicate::in_list(values.clone()),
            Predicate::in_list(values).not(),
        ];
        let opts = WriterOptions::default().with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(&file, &rows, &preds, &format!("{} long IN list", col.name));
        checked += 1;
    }
    corpus::checked("long_in_lists_on_log_template_chunks", checked);
}

/// Large chunks next to their dictionary (the sparse scan of plain
/// substrings, src/search/sparse.rs): rare and common substrings cut from
/// rows, across token boundaries, at row starts and ends, with nulls.
#[test]
fn plain_substrings_on_large_chunks() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words = [
        "alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota",
    ];
    let owned: Vec<Vec<u8>> = (0..60_000)
        .map(|_| {
            let k = 2 + next() % 5;
            let mut r = Vec::new();
            for _ in 0..k {
                r.extend_from_slice(words[(next() % 9) as usize].as_bytes());
                r.extend_from_slice(format!("{} ", next() % 1000).as_bytes());
            }
            r
        })
        .collect();
    let rows: Vec<Option<&[u8]>> = owned
        .iter()
        .enumerate()
        .map(|(i, r)| (i % 97 != 3).then_some(&r[..]))
        .collect();
    let mut preds = Vec::new();
    for i in [5usize, 777, 31_000, 59_999] {
        let r = &owned[i];
        // Long literals too: a hit's window (the local sparse check of
        // plain substrings) must reach many tokens each side.
        for (a, b) in [
            (0, 4),
            (1, 9),
            (r.len() - 6, r.len()),
            (2, 14),
            (3, 4),
            (1, r.len() - 1),
            (0, r.len()),
        ] {
            preds.push(Predicate::contains(r[a..b].to_vec()));
        }
    }
    preds.push(Predicate::contains("zeta999 "));
    preds.push(Predicate::contains("a1 ").not());
    for codec in [Codec::OnPair12, Codec::Fsst12, Codec::OnPair16] {
        let opts = WriterOptions::default().with_codec(codec);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(&file, &rows, &preds, &format!("large chunk {codec:?}"));
    }
}

/// Rows shorter and longer than the decode path's piece (64 KiB, decoded
/// and matched at a time): every row is matched whole, wherever the pieces
/// end, a row longer than a piece included. Literals past 16 KiB (too long
/// for an automaton) on every chunk kind: coded, log templates, value
/// dictionaries (each row three times).
#[test]
fn rows_around_and_past_the_decode_piece() {
    let sizes = [
        10usize,
        30_000,
        65_535,
        65_536,
        65_537,
        140_000,
        5,
        64 * 1024 - 9,
    ];
    let owned: Vec<Vec<u8>> = (0..24)
        .map(|i| {
            let n = sizes[i % sizes.len()];
            let mut r: Vec<u8> = (0..n)
                .map(|k| b"abcdefghij klmnop"[(k * 7 + i) % 17])
                .collect();
            // A marker at the row's start, middle or end (its index in it).
            let m = format!("<{i}>");
            let at = [0, n / 2, n.saturating_sub(m.len())][i % 3];
            r.splice(at..(at + m.len()).min(n), m.bytes());
            r
        })
        .collect();
    let rows: Vec<Option<&[u8]>> = owned.iter().map(|r| Some(&r[..])).collect();
    let mut preds = vec![
        Predicate::contains("<7>"),
        Predicate::contains("<23>"),
        Predicate::contains("<5>").not(),
        Predicate::contains("j klm"),
        Predicate::contains("qq"),
        Predicate::like(b"%<1_>%".to_vec()),
    ];
    for i in [0usize, 5, 12, 21] {
        preds.push(Predicate::equals(owned[i].clone()));
        preds.push(Predicate::prefix(
            owned[i][..40.min(owned[i].len())].to_vec(),
        ));
    }
    preds.push(Predicate::contains(owned[5][100..30_000].to_vec()));
    preds.push(Predicate::suffix(owned[13][20_000..].to_vec()));
    preds.push(Predicate::equals(owned[5].clone()).not());
    for codec in [Codec::OnPair12, Codec::Fsst12, Codec::OnPair16] {
        let opts = WriterOptions::default().with_codec(codec);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(&file, &rows, &preds, &format!("long rows {codec:?}"));
    }
    let opts = WriterOptions::default().with_log_templates(LogTemplates::Always);
    let file = write_to_vec(rows.iter().copied(), opts).unwrap();
    check(&file, &rows, &preds, "long rows, log templates");
    let thrice: Vec<Option<&[u8]>> = rows.iter().cycle().take(3 * rows.len()).copied().collect();
    let file = write_to_vec(thrice.iter().copied(), WriterOptions::default()).unwrap();
    let r = Reader::from_bytes(file.clone()).unwrap();
    assert!(
        r.footer().chunks.iter().all(|c| c.values > 0),
        "value dictionaries"
    );
    check(&file, &thrice, &preds, "long rows, value dictionaries");
}

#[test]
fn value_dictionary_chunks_and_nulls() {
    let vals = ["GET /a", "GET /b", "POST /a", "", "x%y", "x_y", "é"];
    let rows: Vec<Option<&[u8]>> = (0..20_000)
        .map(|i| (i % 11 != 3).then_some(vals[i % vals.len()].as_bytes()))
        .collect();
    let file = write_to_vec(
        rows.iter().copied(),
        WriterOptions::default().with_chunk_rows(3000),
    )
    .unwrap();
    let r = Reader::from_bytes(file.clone()).unwrap();
    assert!(
        r.footer().chunks.iter().all(|c| c.values > 0),
        "value-dictionary chunks"
    );
    let mut preds = predicates(&rows);
    preds.push(Predicate::like_escape(b"x\\%y".to_vec(), b'\\'));
    preds.push(Predicate::like(b"x_y".to_vec()));
    check(&file, &rows, &preds, "value dict");
}

#[test]
fn result_does_not_depend_on_threads() {
    let col = corpus::column("tpch_sf1_l_comment")
        .or_else(|| corpus::columns(&[]).pop())
        .unwrap();
    let rows = col.rows();
    let file = write_to_vec(
        rows.iter().map(|r| Some(*r)),
        WriterOptions::default().with_chunk_rows(50_000),
    )
    .unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for p in [
        Predicate::contains("furious"),
        Predicate::like("%ly %s%"),
        Predicate::prefix("the").not(),
    ] {
        let a = one.install(|| search(&r, &p).unwrap());
        let b = search(&r, &p).unwrap();
        assert_eq!(a, b, "{p:?}");
    }
}

#[test]
fn take_returns_the_selected_values() {
    let rows = ["apple", "banana", "cherry", "grape"];
    let file = write_to_vec(rows.iter().map(|r| Some(r.as_bytes())), Default::default()).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let sel = search(&r, &Predicate::contains("an")).unwrap();
    let col = sel.take(&r).unwrap();
    assert_eq!(col.len(), 1);
    assert_eq!(col.value(0), Some(&b"banana"[..]));
    let sel = search(&r, &Predicate::like("%e")).unwrap();
    assert_eq!(sel.row_ids(), [0, 3]);
    assert_eq!(sel.to_bytes(), [0b1001]);
}

#[test]
fn bad_patterns_are_errors() {
    let file = write_to_vec([Some(&b"a"[..])], Default::default()).unwrap();
    let r = Reader::from_bytes(file).unwrap();
    let e = search(&r, &Predicate::like_escape(b"ab\\".to_vec(), b'\\')).unwrap_err();
    assert!(e.to_string().contains("escape"), "{e}");
}

/// A log-like row: a few fixed shapes with integer, word and free-text
/// variables drawn from small alphabets (so literals meet static text,
/// slots and the seams between them).
fn log_row() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    (
        0u8..5,
        0u32..3000,
        0usize..4,
        prop::collection::vec(alphabet(), 0..6),
    )
        .prop_map(|(shape, n, w, free)| {
            let word = ["ab", "", "Ab a", "%_"][w];
            let mut r = match shape {
                0 => format!("t{} INFO conn {} from {word}", n % 60, n).into_bytes(),
                1 => format!("t{} WARN slow {:x} ms", n % 60, n * 7).into_bytes(),
                2 => format!("[{word}] user={word} op=a size={n}").into_bytes(),
                3 => format!("{n}").into_bytes(),
                _ => Vec::new(),
            };
            r.extend(free);
            r
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_log_columns_and_patterns(
        rows in prop::collection::vec(prop::option::weighted(0.95, log_row()), 1..300),
        lit in prop::collection::vec(prop::sample::select(b"aAb %_=t0123456789 INFOWARNms[]".to_vec()), 0..6),
        from_row in any::<prop::sample::Index>(),
        cut in (0usize..40, 1usize..12),
        neg in any::<bool>(),
        chunk in 30usize..400,
    ) {
        let rows: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        // One literal drawn from the alphabet, one cut from a row.
        let vals: Vec<&[u8]> = rows.iter().flatten().copied().collect();
        let cut_lit = if vals.is_empty() { Vec::new() } else {
            let r = vals[from_row.index(vals.len())];
            let a = cut.0.min(r.len());
            r[a..(a + cut.1).min(r.len())].to_vec()
        };
        let mut preds: Vec<Predicate> = [lit.clone(), cut_lit.clone()]
            .into_iter()
            .map(Predicate::contains)
            .collect();
        // Patterns matched through the templates' skeletons (equality,
        // prefix, suffix, LIKE, case-insensitive): a whole row, its start,
        // its end, the cut with one byte as `_`, and the literal.
        let whole = vals.get(from_row.index(vals.len().max(1))).map_or(Vec::new(), |r| r.to_vec());
        let start = whole[..cut.1.min(whole.len())].to_vec();
        let end = whole[whole.len().saturating_sub(cut.1)..].to_vec();
        let mut like: Vec<u8> = b"%".to_vec();
        for (i, &b) in cut_lit.iter().enumerate() {
            like.extend(match b {
                b'%' | b'_' | b'\\' => vec![b'\\', b],
                _ if i == 1 => vec![b'_'],
                _ => vec![b],
            });
        }
        like.push(b'%');
        preds.extend([
            Predicate::equals(whole.clone()),
            Predicate::equals(lit.clone()),
            Predicate::prefix(start.clone()),
            Predicate::suffix(end),
            Predicate::like_escape(like, b'\\'),
            Predicate::equals(whole.to_ascii_uppercase()).ignore_case(),
            Predicate::prefix(start.to_ascii_lowercase()).ignore_case(),
            Predicate::contains_all([start, cut_lit]),
        ]);
        for p in &mut preds {
            p.negated = neg;
        }
        let opts = WriterOptions::default()
            .with_chunk_rows(chunk)
            .with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(&file, &rows, &preds, "log proptest");
    }
}

fn alphabet() -> impl proptest::strategy::Strategy<Value = u8> {
    prop::sample::select(vec![b'a', b'b', b'A', b'%', b'_', b'\\', 0xC3, 0xA9, b' '])
}

fn pattern_kind() -> impl proptest::strategy::Strategy<Value = u8> {
    0u8..7
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn random_columns_and_patterns(
        rows in prop::collection::vec(prop::option::weighted(0.9, prop::collection::vec(alphabet(), 0..12)), 1..400),
        lit in prop::collection::vec(alphabet(), 0..5),
        lit2 in prop::collection::vec(alphabet(), 0..4),
        kind in pattern_kind(),
        ic in any::<bool>(),
        neg in any::<bool>(),
        chunk in 20usize..200,
    ) {
        let mut p = match kind {
            0 => Predicate::equals(lit.clone()),
            1 => Predicate::prefix(lit.clone()),
            2 => Predicate::suffix(lit.clone()),
            3 => Predicate::contains(lit.clone()),
            4 => Predicate::contains_all([lit.clone(), lit2.clone()]),
            5 => Predicate::in_list([lit.clone(), lit2.clone()]),
            _ => {
                // A LIKE pattern; a trailing escape byte is doubled.
                let mut l = lit.clone();
                if l.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1 { l.push(b'\\'); }
                Predicate::like_escape(l, b'\\')
            }
        };
        p.ignore_case = ic;
        p.negated = neg;
        let rows: Vec<Option<&[u8]>> = rows.iter().map(|r| r.as_deref()).collect();
        let opts = WriterOptions::default().with_chunk_rows(chunk).with_codec(Codec::OnPair12);
        let file = write_to_vec(rows.iter().copied(), opts).unwrap();
        check(&file, &rows, &[p], "proptest");
    }
}

/// A searcher holding a share of its reader (kept across queries by an
/// engine's open files) answers as a borrowing one, search after search,
/// with the state it keeps built once.
#[test]
fn shared_searchers_answer_as_borrowing_ones() {
    let owned: Vec<Vec<u8>> = (0..30_000)
        .map(|i| format!("user{} GET /api/{} {}", i % 311, i % 17, i * 7).into_bytes())
        .collect();
    let rows: Vec<Option<&[u8]>> = owned
        .iter()
        .enumerate()
        .map(|(i, r)| (i % 53 != 1).then_some(&r[..]))
        .collect();
    let file = write_to_vec(rows.iter().copied(), WriterOptions::default()).unwrap();
    let reader = std::sync::Arc::new(Reader::from_bytes(file.clone()).unwrap());
    let shared = fastpair::search::Searcher::shared(reader.clone());
    let other = Reader::from_bytes(file).unwrap();
    let borrowed = fastpair::search::Searcher::new(&other);
    assert_eq!(shared.reader().rows(), 30_000);
    for _ in 0..2 {
        for p in [
            Predicate::contains("api/1"),
            Predicate::contains("7 GET").not(),
            Predicate::equals("user5 GET /api/5 35"),
            Predicate::prefix("user30"),
            Predicate::like("%/api/1_ %9"),
        ] {
            let (a, b) = (shared.search(&p).unwrap(), borrowed.search(&p).unwrap());
            assert_eq!(a.row_ids(), b.row_ids(), "{p:?}");
            let want: Vec<u64> = (0..rows.len() as u64)
                .filter(|&i| oracle(&p, rows[i as usize]))
                .collect();
            assert_eq!(a.row_ids(), want, "{p:?}");
        }
    }
}
