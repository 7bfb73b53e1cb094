//! Where a log row's header ends (`split.rs` cuts a column into a header
//! block and a body block there): the two cut rules, found on a sample of
//! the rows, and the cut of a row under each.
//!
//! Both rules read the rows' words as the default setting splits them
//! ([`Tokenized`], made once per column and shared with the encodes that
//! follow: `layouts.rs`).

use std::hash::Hasher;

use super::bits::{FastMap as HashMap, FoldHasher};
#[cfg(test)]
use super::tokenize::Tokens;
use super::tokenize::{continuation, Tokenized};

/// Longest header, in words.
const MAX_HEADER_WORDS: usize = 48;

/// Share of the rows the most common header shape must cover.
const COVERAGE: f64 = 0.9;

/// The header length (in words) for `sample`; 0 = no split: the largest
/// `h` for which one header shape (the separators of the first `h` words)
/// covers ≥ [`COVERAGE`] of the rows.
///
/// A shape of `h` words covers no more rows than its `h − 1`-word prefix,
/// and more than half of the rows can share only one shape, so level by
/// level only the rows of the previous level's covering shape are looked
/// at, and the one separator that could cover them is their majority
/// (Boyer–Moore vote, then counted): a pass of byte comparisons per level
/// instead of a hash-map entry per word per row.
/// `tok`: the sample's words as the default setting splits them.
pub(super) fn header_words(sample: &[&[u8]], tok: &Tokenized) -> usize {
    // Per row, the separators of its first MAX_HEADER_WORDS words (the
    // gap before each word).
    let mut seps: Vec<(u32, u32)> = Vec::new();
    let mut at: Vec<(usize, usize)> = Vec::with_capacity(sample.len());
    for i in 0..sample.len() {
        let words = tok.row(i);
        let n = MAX_HEADER_WORDS.min(words.len());
        at.push((seps.len(), n));
        seps.extend(super::tokenize::seps(&words[..n], 0).take(n));
    }
    // Continuation lines (a tab first) carry no header: their record's
    // first line did.
    let heads = sample.iter().filter(|r| !continuation(r)).count();
    let need = ((heads as f64 * COVERAGE).ceil() as usize).max(1);
    let sep = |i: usize, j: usize| {
        let (a, b) = seps[at[i].0 + j];
        &sample[i][a as usize..b as usize]
    };
    let mut alive: Vec<usize> = (0..sample.len())
        .filter(|&i| !continuation(sample[i]))
        .collect();
    for h in 1..=MAX_HEADER_WORDS {
        let j = h - 1;
        alive.retain(|&i| at[i].1 >= h);
        if alive.len() < need {
            return h - 1;
        }
        let (mut cand, mut votes) = (alive[0], 0usize);
        for &i in &alive {
            if votes == 0 {
                cand = i;
                votes = 1;
            } else if sep(i, j) == sep(cand, j) {
                votes += 1;
            } else {
                votes -= 1;
            }
        }
        let c = sep(cand, j);
        alive.retain(|&i| sep(i, j) == c);
        if alive.len() < need {
            return h - 1;
        }
    }
    MAX_HEADER_WORDS
}

/// Where a row is cut into header and body (encoder-side only: the format
/// stores the two blocks, whatever the rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cut {
    /// One block, no cut.
    Whole,
    /// After the separator that follows word `h` (words as `tokenize.rs`).
    Words(usize),
    /// After the `k`-th whitespace-delimited field and the blanks after it:
    /// syslog-style headers (`Jun 14 15:16:01 combo `) whose fields change
    /// word count or padding between rows (`Jul  1` / `Jun 14`, a hostname
    /// `calvisitor-10-105-160-95` / `authorMacBook-Pro`), which no single
    /// word shape covers.
    Fields(usize),
}

/// Where row `r` is cut for `c` (`r.len()` when it is shorter): the
/// tests' oracle of `layouts.rs`, which reads the cuts off a tokenization.
#[cfg(test)]
pub(super) fn cut(r: &[u8], t: &mut Tokens, c: Cut) -> usize {
    match c {
        Cut::Whole => 0,
        Cut::Words(h) => {
            t.split(r);
            if t.words.len() <= h {
                r.len()
            } else {
                t.seps[h].1 as usize
            }
        }
        Cut::Fields(k) => field_cut(r, k),
    }
}

/// End of the blanks after the `k`-th field of `r` (fields: maximal runs of
/// bytes other than space and tab); `r.len()` when `r` has fewer.
pub(super) fn field_cut(r: &[u8], k: usize) -> usize {
    (0..k).fold(skip_blanks(r, 0), |at, _| next_field_cut(r, at))
}

/// The cut after the field following `at` (a cut: `field_cut(r, k + 1)`
/// from `at = field_cut(r, k)`).
fn next_field_cut(r: &[u8], at: usize) -> usize {
    let mut i = skip_blanks(r, at);
    while i < r.len() && !is_blank(r[i]) {
        i += 1;
    }
    skip_blanks(r, i)
}

fn skip_blanks(r: &[u8], mut i: usize) -> usize {
    while i < r.len() && is_blank(r[i]) {
        i += 1;
    }
    i
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Longest field header.
const MAX_HEADER_FIELDS: usize = 8;

/// Shapes (word separators) a field header may take.
const FIELD_SHAPES: usize = 4;

/// The field-header length for `sample`; 0 = none: the largest `k` whose
/// headers' [`FIELD_SHAPES`] most common shapes (separators and the words
/// without digits) cover ≥ [`COVERAGE`]
/// of the rows (a few header templates, each with its typed slots).
///
/// Level by level (`k` = 1, 2, …), each row's key extends the one before:
/// the running hash of its header's separators and words, snapshotted where
/// the header's last separator begins (the same keys as hashing each header
/// apart: a header ends in blanks, so its words are the row's words that
/// end inside it and its last separator is the row's, cut at the header's
/// end). A header of `k + 1` fields determines the one of `k` (fields end
/// at blanks, kept verbatim in the separators), so the shapes of level
/// `k + 1` split those of level `k` and cover no more rows with as many:
/// the first level that fails ends the search, and the longer headers'
/// words are never hashed. A key is one 64-bit hash of the separators and
/// words with their lengths (two hashes made 128-bit keys before: twice
/// the hashing, for a collision among a few thousand shapes that 64 bits
/// already make negligible). `tok`: the sample's words as the default
/// setting splits them.
pub(super) fn header_fields(sample: &[&[u8]], tok: &Tokenized) -> usize {
    let heads = sample.iter().filter(|r| !continuation(r)).count();
    let need = (heads as f64 * COVERAGE).ceil() as usize;
    // Per row: the running hash of its header so far, the next word to
    // add, and the end of its header so far.
    let mut h = FoldHasher::default();
    h.write_u64(0x5bd1_e995);
    let mut rows: Vec<(FoldHasher, usize, usize)> = vec![(h, 0, 0); sample.len()];
    let mut counts: HashMap<u64, usize> = HashMap::default();
    let mut shares: Vec<usize> = Vec::new();
    let mut best = 0;
    for k in 0..MAX_HEADER_FIELDS {
        counts.clear();
        let mut ended = 0;
        for (row, (r, (h, i, at))) in sample.iter().zip(rows.iter_mut()).enumerate() {
            if continuation(r) {
                continue;
            }
            // The cut after field k + 1, from the cut after field k.
            let c = next_field_cut(r, *at);
            debug_assert_eq!(c, field_cut(r, k + 1));
            *at = c;
            if c == r.len() {
                ended += 1;
            }
            let words = tok.row(row);
            // Start of the separator before word `i` (or after the last word).
            let sep_start = |i: usize| if i == 0 { 0 } else { words[i - 1].1 };
            // Add the (separator, word) pairs that lie inside this header.
            while *i < words.len() && words[*i].1 as usize <= c {
                let (a, b) = (sep_start(*i), words[*i].0);
                let sep = &r[a as usize..b as usize];
                h.write(sep);
                h.write_u64(b as u64 - a as u64);
                let (a, b) = words[*i];
                let w = &r[a as usize..b as usize];
                let w: &[u8] = if w.iter().any(u8::is_ascii_digit) {
                    b"#"
                } else {
                    w
                };
                h.write(w);
                h.write_u64(w.len() as u64);
                *i += 1;
            }
            // The header's last separator: the row's separator `i`, cut at `c`.
            let a = sep_start(*i);
            let sep = &r[a as usize..c];
            let mut e = *h;
            e.write(sep);
            e.write_u64(c as u64 - a as u64);
            let key = e.finish();
            *counts.entry(key).or_default() += 1;
        }
        // A header that swallows whole rows is no header.
        if ended * 4 > heads {
            break;
        }
        shares.clear();
        shares.extend(counts.values());
        shares.sort_unstable_by(|a, b| b.cmp(a));
        if shares.iter().take(FIELD_SHAPES).sum::<usize>() < need.max(1) {
            break;
        }
        best = k + 1;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `header_fields` was before it stopped at the first level that
    /// fails: every level counted in one pass per row.
    fn every_level(sample: &[&[u8]], tok: &Tokenized) -> usize {
        let heads = sample.iter().filter(|r| !continuation(r)).count();
        let need = (heads as f64 * COVERAGE).ceil() as usize;
        let mut counts: Vec<HashMap<u128, usize>> = vec![HashMap::default(); MAX_HEADER_FIELDS];
        let mut ended = [0usize; MAX_HEADER_FIELDS];
        let mut cuts = [0usize; MAX_HEADER_FIELDS];
        for (row, r) in sample.iter().enumerate() {
            if continuation(r) {
                continue;
            }
            // Cuts after fields 1..=MAX_HEADER_FIELDS (non-decreasing; each
            // `field_cut(r, k + 1)`, found in one scan).
            let blank = |b: u8| b == b' ' || b == b'\t';
            let mut i = 0;
            for c in cuts.iter_mut() {
                while i < r.len() && blank(r[i]) {
                    i += 1;
                }
                while i < r.len() && !blank(r[i]) {
                    i += 1;
                }
                while i < r.len() && blank(r[i]) {
                    i += 1;
                }
                *c = i;
            }
            debug_assert!(cuts
                .iter()
                .enumerate()
                .all(|(k, &c)| c == field_cut(r, k + 1)));
            let words = tok.row(row);
            // Start of the separator before word `i` (or after the last word).
            let sep_start = |i: usize| if i == 0 { 0 } else { words[i - 1].1 };
            let (mut h1, mut h2) = (FoldHasher::default(), FoldHasher::default());
            h2.write_u64(0x5bd1_e995);
            // Separator `i` of the longest header and the word after it.
            let mut i = 0;
            for (k, &c) in cuts.iter().enumerate() {
                if c == r.len() {
                    ended[k] += 1;
                }
                // Add the (separator, word) pairs that lie inside this header.
                while i < words.len() && words[i].1 as usize <= c {
                    let (a, b) = (sep_start(i), words[i].0);
                    let sep = &r[a as usize..b as usize];
                    h1.write(sep);
                    h2.write(sep);
                    h2.write_u64(b as u64 - a as u64);
                    let (a, b) = words[i];
                    let w = &r[a as usize..b as usize];
                    let w: &[u8] = if w.iter().any(u8::is_ascii_digit) {
                        b"#"
                    } else {
                        w
                    };
                    h1.write(w);
                    h2.write(w);
                    h2.write_u64(w.len() as u64);
                    i += 1;
                }
                // The header's last separator: the row's separator `i`, cut at `c`.
                let a = sep_start(i);
                let sep = &r[a as usize..c];
                let (mut e1, mut e2) = (h1, h2);
                e1.write(sep);
                e2.write(sep);
                e2.write_u64(c as u64 - a as u64);
                let key = (e1.finish() as u128) << 64 | e2.finish() as u128;
                *counts[k].entry(key).or_default() += 1;
            }
        }
        let mut best = 0;
        for (k, counts) in counts.into_iter().enumerate() {
            // A header that swallows whole rows is no header.
            if ended[k] * 4 > heads {
                break;
            }
            let mut c: Vec<usize> = counts.into_values().collect();
            c.sort_unstable_by(|a, b| b.cmp(a));
            if c.iter().take(FIELD_SHAPES).sum::<usize>() >= need.max(1) {
                best = k + 1;
            }
        }
        best
    }

    /// Stopping at the first failing level gives what counting every
    /// level gave: syslog, dpkg and JSON-like rows, mixed and cut short.
    #[test]
    fn header_fields_stops_where_every_level_agrees() {
        let dpkg = include_bytes!("../../testdata/logs/dpkg_2k.log");
        let dpkg: Vec<&[u8]> = dpkg.split(|&b| b == b'\n').take(500).collect();
        let syslog: Vec<String> = (0..300)
            .map(|i| match i % 7 {
                0 => format!(
                    "Jul {:2} 10:0{}:00 host{} kernel: eth{} up",
                    1 + i % 30,
                    i % 10,
                    i % 3,
                    i % 2
                ),
                1 => "short".to_string(),
                _ => format!(
                    "Jul {:2} 10:00:{:02} host sshd[{}]: session {} opened",
                    1 + i % 9,
                    i % 60,
                    i * 7,
                    i
                ),
            })
            .collect();
        let json: Vec<String> = (0..200)
            .map(|i| {
                format!(
                    "{{\"t\": {i}, \"level\": \"{}\", \"msg\": \"x y z {}\"}}",
                    ["INFO", "WARN"][i % 2],
                    i % 5
                )
            })
            .collect();
        let continued = continued_syslog(&syslog);
        let sets: Vec<Vec<&[u8]>> = vec![
            dpkg.clone(),
            syslog.iter().map(|s| s.as_bytes()).collect(),
            json.iter().map(|s| s.as_bytes()).collect(),
            dpkg.iter()
                .copied()
                .chain(syslog.iter().map(|s| s.as_bytes()))
                .collect(),
            continued.iter().map(|s| s.as_bytes()).collect(),
            Vec::new(),
        ];
        for rows in &sets {
            let tok = Tokenized::of(rows, &mut Tokens::default());
            assert_eq!(header_fields(rows, &tok), every_level(rows, &tok));
        }
    }

    /// `syslog` with three continuation lines after each row: two stack
    /// frames (a tab first) and a GC detail (spaces first).
    fn continued_syslog(syslog: &[String]) -> Vec<String> {
        syslog
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                [
                    s.clone(),
                    "\tat kafka.server.X.run(X.scala:52)".to_string(),
                    "\tat java.lang.Thread.run(Thread.java:748)".to_string(),
                    format!(
                        "   [Parallel Time: {}.{} ms, GC Workers: 10]",
                        i % 7,
                        i % 10
                    ),
                ]
            })
            .collect()
    }

    /// Continuation lines (a blank first) neither count for nor against a
    /// header: three quarters of the rows are frames and GC details, and the
    /// header the other rows share is found as without them.
    #[test]
    fn continuation_lines_carry_no_header() {
        let syslog: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "[2021-05-0{} 17:{:02}:{:02},{:03}] INFO [Controller id={}] event {}",
                    1 + i % 9,
                    i % 60,
                    i * 7 % 60,
                    i * 37 % 1000,
                    i % 3,
                    i
                )
            })
            .collect();
        let alone: Vec<&[u8]> = syslog.iter().map(|s| s.as_bytes()).collect();
        let continued = continued_syslog(&syslog);
        let with: Vec<&[u8]> = continued.iter().map(|s| s.as_bytes()).collect();
        let tok = |rows: &[&[u8]]| Tokenized::of(rows, &mut Tokens::default());
        let (w, f) = (
            header_words(&alone, &tok(&alone)),
            header_fields(&alone, &tok(&alone)),
        );
        assert!(w > 0 && f > 0);
        assert_eq!(header_words(&with, &tok(&with)), w);
        assert_eq!(header_fields(&with, &tok(&with)), f);
    }

    #[test]
    fn field_cut_ends_after_the_blanks_of_field_k() {
        assert_eq!(field_cut(b"Jul  1 09:00:55 host msg", 0), 0);
        assert_eq!(field_cut(b"  Jul  1 x", 0), 2);
        assert_eq!(field_cut(b"Jul  1 09:00:55 host msg", 2), 7);
        assert_eq!(field_cut(b"Jul\t 1\t09:00:55 host msg", 3), 16);
        assert_eq!(field_cut(b"Jul 1", 3), 5);
        assert_eq!(field_cut(b"Jul 1 ", 2), 6);
        assert_eq!(field_cut(b"", 1), 0);
    }
}
