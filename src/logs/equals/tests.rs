//! Tests of `equals.rs`: every literal, prefix and substring against a
//! comparison of every rendered row.
use super::*;
use crate::logs::pinned::parse;
use crate::logs::Kind;
use crate::logs::{encode_column, LogOptions};

/// `rows` encoded as a log column (`split` as `LogOptions::split`) and
/// opened.
fn open(rows: &[&[u8]], split: Option<bool>) -> LogColumn {
    let opts = LogOptions {
        split,
        ..LogOptions::default()
    };
    LogColumn::open(&encode_column(rows, &opts)).unwrap()
}

/// Rows of several shapes: dates and times with leading zeros, hex ids
/// of both cases, dictionary words, free text, rows no template takes,
/// a row that is a prefix of another, empty rows.
fn shapes(header: bool) -> Vec<Vec<u8>> {
    (0..900usize)
        .map(|i| {
            let head = if header {
                format!(
                    "Dec {:2} 10:{:02}:{:02} host{} ",
                    i % 30 + 1,
                    i % 60,
                    i % 7,
                    i % 3
                )
            } else {
                String::new()
            };
            (head
                + &match i % 7 {
                    0 => format!(
                        "2026-12-0{} 10:{:02}:{:02} INFO conn {} opened",
                        i % 9 + 1,
                        i % 60,
                        i % 17,
                        i
                    ),
                    1 => format!(
                        "2026-12-03 10:{:02}:{:02} WARN took {} ms",
                        i % 60,
                        i % 13,
                        i * 7
                    ),
                    2 => format!(
                        "[{}] user {} failed: {}",
                        i % 5,
                        ["alice", "bob", "carol"][i % 3],
                        ["timeout", "reset by peer"][i % 2]
                    ),
                    3 => format!("id=0x{:x} ID=0x{:X} pad={:05}", i * 977, i * 31, i % 1000),
                    4 => format!("free {} text {}", "x".repeat(i % 11), i % 3),
                    5 => ["", "conn", "conn 1", "took 7 ms"][i % 4].to_string(),
                    _ => format!("unique line {} {}", i * i, "~".repeat(i % 5)),
                })
                .into_bytes()
        })
        .collect()
}

/// Literals to try on `rows`: every row, and each with a byte changed,
/// cut short, grown, a leading zero added to its first number.
fn literals(rows: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut lits: Vec<Vec<u8>> = Vec::new();
    for (i, r) in rows.iter().enumerate().step_by(3) {
        lits.push(r.clone());
        if !r.is_empty() {
            let mut m = r.clone();
            let k = i % r.len();
            m[k] = m[k].wrapping_add(1);
            lits.push(m);
            lits.push(r[..r.len() - 1].to_vec());
        }
        lits.push([r.as_slice(), b"0"].concat());
        // Prefixes ending in every kind of part (a static string, a
        // digit run, a word, free text).
        for cut in [1, 3, 6, 9, 13, 17, 22, 28] {
            if cut < r.len() {
                lits.push(r[..cut].to_vec());
            }
        }
        if let Some(p) = r.iter().position(u8::is_ascii_digit) {
            lits.push([&r[..p], b"0", &r[p..]].concat());
        }
    }
    lits.push(Vec::new());
    lits
}

/// Asserts that the rows `rows_laid` finds for `lit` (equal to it, or
/// starting with it) are those of `rows` that do; false (nothing checked)
/// when it leaves the literal to the caller.
fn laid_rows_are_the_rendered_ones(
    col: &LogColumn,
    rows: &[&[u8]],
    lit: &[u8],
    prefix: bool,
) -> bool {
    let mut bits = vec![0u64; rows.len().div_ceil(64)];
    if col.rows_laid(lit, prefix, &mut bits).is_none() {
        return false;
    }
    for (r, row) in rows.iter().enumerate() {
        let want = if prefix {
            row.starts_with(lit)
        } else {
            *row == lit
        };
        assert_eq!(
            bits[r / 64] >> (r % 64) & 1 == 1,
            want,
            "row {r} {:?} against {:?} (prefix: {prefix})",
            String::from_utf8_lossy(row),
            String::from_utf8_lossy(lit)
        );
    }
    true
}

/// Every literal's rows equal a comparison of every rendered row, on a
/// single block and on a header/body split, whether each template is
/// decided on its slots or rendered.
#[test]
fn equal_rows_are_those_that_render_the_literal() {
    let mut split_seen = [false, false];
    for (header, split, coarse) in [
        (false, None, false),
        (true, Some(false), false),
        (true, Some(true), false),
        (true, Some(true), true),
    ] {
        let owned = shapes(header);
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let opts = LogOptions {
            split,
            coarse,
            ..LogOptions::default()
        };
        let col = LogColumn::open(&encode_column(&rows, &opts)).unwrap();
        split_seen[col.is_split() as usize] = true;
        let mut decided = [0, 0];
        for lit in literals(&owned) {
            for prefix in [false, true] {
                if laid_rows_are_the_rendered_ones(&col, &rows, &lit, prefix) {
                    decided[prefix as usize] += 1;
                }
            }
        }
        assert!(
            decided[0] > 100 && decided[1] > 100,
            "{decided:?} decided on the slots"
        );
    }
    assert!(split_seen[0] && split_seen[1], "{split_seen:?}");
}

/// Pieces of rows to look for: at several offsets and lengths (across
/// static text, digits, words, free text and the header/body seam),
/// each also with a byte changed, a digit run alone, a digit added.
fn pieces(rows: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut lits: Vec<Vec<u8>> = Vec::new();
    for (i, r) in rows.iter().enumerate().step_by(5) {
        for (at, len) in [
            (0, 3),
            (2, 5),
            (5, 2),
            (7, 9),
            (11, 4),
            (13, 14),
            (20, 6),
            (24, 30),
        ] {
            let at = (at + i) % r.len().max(1);
            let Some(p) = r.get(at..(at + len).min(r.len())) else {
                continue;
            };
            if p.is_empty() {
                continue;
            }
            lits.push(p.to_vec());
            let mut m = p.to_vec();
            let k = i % m.len();
            m[k] = m[k].wrapping_add(1);
            lits.push(m);
        }
        if let Some(p) = r.iter().position(u8::is_ascii_digit) {
            let run = r[p..].iter().take_while(|c| c.is_ascii_digit()).count();
            lits.push(r[p..p + run].to_vec());
            lits.push(r[p + run / 2..p + run].to_vec());
            lits.push([&r[p..p + run], b"0"].concat());
        }
    }
    lits.extend([
        b"0".to_vec(),
        b"00".to_vec(),
        b"1 ".to_vec(),
        b":0".to_vec(),
    ]);
    lits
}

/// Every substring's rows equal a search of every rendered row, on a
/// single block and on header/body splits.
#[test]
fn held_rows_are_those_that_render_the_literal() {
    for (header, split) in [(false, None), (true, Some(false)), (true, Some(true))] {
        let owned = shapes(header);
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let col = open(&rows, split);
        let mut decided = 0;
        for lit in pieces(&owned) {
            let mut bits = vec![0u64; rows.len().div_ceil(64)];
            if col.rows_holding(&lit, &mut bits).is_none() {
                assert!(
                    bits.iter().all(|&w| w == 0),
                    "bits written before giving up"
                );
                continue;
            }
            decided += 1;
            let f = memchr::memmem::Finder::new(&lit);
            for (r, row) in rows.iter().enumerate() {
                assert_eq!(
                    bits[r / 64] >> (r % 64) & 1 == 1,
                    f.find(row).is_some(),
                    "row {r} {:?} holding {:?} (split: {split:?})",
                    String::from_utf8_lossy(row),
                    String::from_utf8_lossy(&lit)
                );
            }
        }
        assert!(decided > 300, "{decided} decided on the slots");
    }
}

/// A rank's row (`LogBlock::row_of`) is the row that has it, for every
/// row of single and header/body blocks; past a template's rows, none.
#[test]
fn every_rank_finds_its_row() {
    for (header, split) in [(false, None), (true, Some(true))] {
        let owned = shapes(header);
        let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
        let col = open(&rows, split);
        for b in col.blocks() {
            for r in 0..b.rows {
                let (t, k) = b.locate(r);
                assert_eq!(b.row_of(t, k), Some(r), "row {r}: template {t} rank {k}");
            }
            for (t, tm) in b.templates.iter().enumerate() {
                assert_eq!(b.row_of(t, tm.count as usize), None, "template {t}");
            }
        }
    }
}

/// Templates past the bounds (free slots over a long literal) leave
/// their rows to be rendered; past a quarter of the rows the equality
/// is left to the caller, never answered wrongly.
#[test]
fn bounds_render_or_give_up() {
    let owned: Vec<Vec<u8>> = (0..400)
        .map(|i| {
            format!(
                "{} {} {} {}",
                "a".repeat(i % 7),
                "b".repeat(i % 5),
                i % 3,
                "c".repeat(i % 4)
            )
            .into_bytes()
        })
        .collect();
    let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
    let col = open(&rows, None);
    for lit in literals(&owned) {
        for prefix in [false, true] {
            let mut bits = vec![0u64; rows.len().div_ceil(64)];
            if col.rows_laid(&lit, prefix, &mut bits).is_none() {
                assert!(
                    bits.iter().all(|&w| w == 0),
                    "bits written before giving up"
                );
                continue;
            }
            for (r, row) in rows.iter().enumerate() {
                let want = if prefix {
                    row.starts_with(&lit)
                } else {
                    *row == &lit[..]
                };
                assert_eq!(bits[r / 64] >> (r % 64) & 1 == 1, want, "row {r}");
            }
        }
    }
}

/// The rows a sparse visit yields: every row of a rendered template and
/// the row of each rank whose mask passes, nothing else.
#[test]
fn sparse_rows_are_the_ranks_passing_and_the_rendered_rows() {
    let owned = shapes(false);
    let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
    let col = open(&rows, None);
    let LogColumn::Single(b) = &col else {
        panic!("one block")
    };
    let pool = PoolText::new(b, b"");
    // The smallest templates rendered, while they hold few rows.
    let mut by_count: Vec<usize> = (0..b.templates()).collect();
    by_count.sort_by_key(|&t| b.templates[t].count);
    let (mut render, mut held) = (vec![false; b.templates()], 0);
    for t in by_count {
        let n = b.templates[t].count as usize;
        if n > 0 && (held + n) * SPARSE_SHARE <= b.rows {
            render[t] = true;
            held += n;
        }
    }
    assert!(held > 0, "no template small enough");
    let sides: Vec<Side<'_>> = (0..b.templates())
        .map(|t| {
            let n = b.templates[t].count as usize;
            if render[t] {
                Side::Render
            } else {
                // Every seventh rank passes.
                let mask = (0..n).map(|k| (k % 7 == 3) as u64).collect();
                Side::Entries(Vec::new(), mask, Columns::new(b, t, &pool))
            }
        })
        .collect();
    let mut got = sparse_rows(b, &sides, 1).expect("sparse");
    got.sort_unstable();
    let want: Vec<(usize, usize, usize)> = (0..b.rows)
        .map(|r| (r, b.locate(r)))
        .filter(|&(_, (t, k))| render[t] || k % 7 == 3)
        .map(|(r, (t, k))| (r, t, k))
        .collect();
    assert_eq!(got, want);
    // Past the share, the caller walks.
    assert!(sparse_rows(b, &sides, b.rows).is_none());
}

/// A header and a body meet only at the same cut: a header holding
/// up to byte 5 and a body holding from byte 7 do not spell the
/// literal.
#[test]
fn header_and_body_meet_at_one_cut() {
    let e = |end| Entry {
        end,
        first: 0,
        wants: Vec::new(),
    };
    let (he, be) = ([e(5), e(7)], [e(7)]);
    assert!(!meets(&he, 0b01, &be, 0b1, |_, _| true));
    assert!(meets(&he, 0b10, &be, 0b1, |_, _| true));
    assert!(meets(&he, 0b11, &be, 0b1, |_, _| true));
    assert!(!meets(&he, 0b10, &be, 0b1, |_, _| false));
    assert!(!meets(&he, 0b10, &be, 0b0, |_, _| true));
}

#[test]
fn digits_parse_within_64_bits() {
    assert_eq!(parse(Kind::Dec, b"007"), Some(7));
    assert_eq!(parse(Kind::Dec, b"18446744073709551615"), Some(u64::MAX));
    assert_eq!(parse(Kind::Dec, b"18446744073709551616"), None);
    assert_eq!(parse(Kind::HexLower, b"ff"), Some(255));
    assert_eq!(parse(Kind::HexUpper, b"00000000000000000FF"), Some(255));
    assert_eq!(parse(Kind::HexLower, b"1ffffffffffffffff"), None);
}

/// A literal long enough to pass the work budget is left to the caller's
/// search (nothing written); a short one is laid.
#[test]
fn long_substrings_are_left_to_the_caller() {
    let owned = shapes(false);
    let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
    let col = open(&rows, None);
    let mut bits = vec![0u64; rows.len().div_ceil(64)];
    let long = [b"conn ".as_slice(), &b"7".repeat(20_000)].concat();
    assert!(col.rows_holding(&long, &mut bits).is_none());
    assert!(bits.iter().all(|&w| w == 0));
    assert!(col.rows_holding(b"conn 7", &mut bits).is_some());
    assert!(bits.iter().any(|&w| w != 0));
}

/// Free text that runs on past the literal at a token's end: rows that
/// are other rows with letters added (values too many and too varied for
/// a dictionary: free text of the pool, whose tokens often end where the
/// shorter row does), every fifth row as an equality and as a prefix
/// (fails when `Pool::compare` takes a longer value as equal).
#[test]
fn free_text_longer_than_the_literal_is_not_equal() {
    // Letters from a small alphabet in a pseudo-random order: values too
    // many and too varied for a dictionary, tokens the pool learns.
    let mut x = 12345u64;
    let mut letter = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        b"abcdeabcab"[(x >> 33) as usize % 10]
    };
    let mut owned: Vec<Vec<u8>> = Vec::new();
    for i in 0..300usize {
        let base: Vec<u8> = (0..20 + i % 13).map(|_| letter()).collect();
        let more: Vec<u8> = (0..1 + i % 4).map(|_| letter()).collect();
        owned.push([base.as_slice(), &more].concat());
        owned.push(base);
    }
    let rows: Vec<&[u8]> = owned.iter().map(|r| r.as_slice()).collect();
    let col = open(&rows, None);
    let mut decided = 0;
    for lit in owned.iter().step_by(5) {
        for prefix in [false, true] {
            if laid_rows_are_the_rendered_ones(&col, &rows, lit, prefix) {
                decided += 1;
            }
        }
    }
    assert!(decided > 100, "{decided}");
}
