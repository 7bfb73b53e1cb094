//! Template mining (a Drain-like pass over a sample) and matching rows to
//! the mined templates.
//!
//! A line's *skeleton* is its separators plus its words, with every word that
//! holds a digit replaced by a slot. Lines with the same separators and word
//! count share a *shape*. Within a shape, skeletons are merged greedily (most
//! frequent first): a skeleton joins the first template whose static words
//! agree with it at ≥ `similarity` (default ½) of the positions where
//! either has a static word;
//! the positions where they disagree become slots. That is Drain's
//! similarity rule with the shape (separators + length) as its tree prefix,
//! which also makes JSON keys static (they sit between fixed separators) and
//! JSON values slots when they vary. Templates seen fewer than `min_count`
//! times are dropped (their rows take the escape path or a later pass).
//!
//! Everything is ordered by first appearance, never by hash order, so the
//! mined templates depend only on the input.

use super::bits::{put_varint, FastMap as HashMap};
use super::tokenize::{has_digit, seps};
#[cfg(test)]
use super::tokenize::{Tokenized, Tokens};

/// Templates of one shape a skeleton is compared with when merging.
const MERGE_CANDIDATES: usize = 64;

/// Most skeletons the match cache remembers, and most bytes of their keys
/// (bounds its memory on hostile or non-log input; a memo only: the
/// templates found do not depend on it).
const CACHE_LIMIT: usize = 1 << 18;
const CACHE_BYTES: usize = 4 << 20;

/// Rows a task of [`Miner::find_all`] matches (its cache holds at most
/// this many keys).
const FIND_RUN: usize = 1 << 13;
/// Most bytes of keys each task of [`Miner::find_all`] caches.
const FIND_CACHE_BYTES: usize = 512 << 10;

/// A mined template: the separators and, per word position, the static word
/// or `None` for a slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    pub(crate) seps: Vec<Vec<u8>>,
    pub(crate) words: Vec<Option<Vec<u8>>>,
}

impl Pattern {
    /// Number of slots.
    pub(crate) fn slots(&self) -> usize {
        self.words.iter().filter(|w| w.is_none()).count()
    }

    /// The static text between slots: `slots() + 1` strings.
    pub(crate) fn statics(&self) -> Vec<Vec<u8>> {
        let mut out = vec![self.seps[0].clone()];
        for (w, s) in self.words.iter().zip(&self.seps[1..]) {
            match w {
                Some(w) => out.last_mut().expect("non-empty").extend_from_slice(w),
                None => out.push(Vec::new()),
            }
            out.last_mut().expect("non-empty").extend_from_slice(s);
        }
        out
    }

    /// True when `line` (whose words are `words`) renders from this template.
    fn matches(&self, line: &[u8], words: &[(u32, u32)]) -> bool {
        self.words.len() == words.len()
            && self.words.iter().zip(words).all(|(p, &(a, b))| match p {
                Some(w) => w[..] == line[a as usize..b as usize],
                None => true,
            })
    }
}

/// Appends the shape key of `line` (its separators; `words` are its words)
/// to `key`.
fn shape_key(line: &[u8], words: &[(u32, u32)], key: &mut Vec<u8>) {
    for (a, b) in seps(words, line.len()) {
        put_varint(key, (b - a) as u64);
        key.extend_from_slice(&line[a as usize..b as usize]);
    }
}

/// Appends the word part of the skeleton key (0 = slot, else length + bytes).
fn words_key(line: &[u8], words: &[(u32, u32)], key: &mut Vec<u8>) {
    for &(a, b) in words {
        let w = &line[a as usize..b as usize];
        if has_digit(w) {
            key.push(0);
        } else {
            put_varint(key, w.len() as u64);
            key.extend_from_slice(w);
        }
    }
}

/// Every row's skeleton key ([`shape_key`] then [`words_key`]), made once
/// per row: mining and matching both key each row, and building the keys
/// twice was 8% of the encoder's instructions (callgrind, the 21 Loghub
/// encodes; bench/LOGS.md round 10). About a byte per byte of the rows.
#[derive(Default)]
pub(crate) struct Keys {
    buf: Vec<u8>,
    /// Row `i`'s key is `buf[at[i].0..at[i + 1].0]`, its shape key the
    /// part before `at[i].1`.
    at: Vec<(usize, usize)>,
}

impl Keys {
    /// The keys of `rows`, whose words are `words(i)`.
    pub(crate) fn of<'t>(rows: &[&[u8]], words: impl Fn(usize) -> &'t [(u32, u32)]) -> Self {
        let mut k = Keys {
            buf: Vec::with_capacity(rows.iter().map(|r| r.len() + 8).sum()),
            at: Vec::with_capacity(rows.len() + 1),
        };
        for (i, r) in rows.iter().enumerate() {
            let start = k.buf.len();
            let shape = key_into(r, words(i), &mut k.buf);
            k.at.push((start, start + shape));
        }
        k.at.push((k.buf.len(), k.buf.len()));
        k
    }

    /// Row `i`'s key and the length of its shape key.
    #[inline]
    pub(crate) fn key(&self, i: usize) -> (&[u8], usize) {
        let (a, s) = self.at[i];
        (&self.buf[a..self.at[i + 1].0], s - a)
    }
}

/// Appends the skeleton key of `line` (words `words`) to `key`: its shape
/// key, then its words key; returns the shape key's length.
pub(crate) fn key_into(line: &[u8], words: &[(u32, u32)], key: &mut Vec<u8>) -> usize {
    let start = key.len();
    shape_key(line, words, key);
    let shape = key.len() - start;
    words_key(line, words, key);
    shape
}

/// A distinct skeleton of the rows being learned, as ranges: its shape
/// key `shapes[shape.0..shape.1]`, its words `spans[words.0..words.1]`
/// (byte ranges of row `row`; [`SLOT`] for a word holding a digit).
/// Kept as ranges, not owned strings: on rows of rare messages nearly every
/// row is a new skeleton, and allocating its words one by one was a third
/// of the encoder's instructions (callgrind, Loghub Mac_2k).
struct Skel {
    row: u32,
    shape: (usize, usize),
    words: (usize, usize),
    count: usize,
}

/// A word span that is a slot.
const SLOT: (u32, u32) = (u32::MAX, u32::MAX);

/// The mined templates and the indexes that match rows to them.
#[derive(Default)]
pub(crate) struct Miner {
    pub(crate) patterns: Vec<Pattern>,
    pub(crate) by_shape: HashMap<Vec<u8>, Vec<u32>>,
    pub(crate) cache: HashMap<Vec<u8>, u32>,
    /// Bytes of the cache's keys.
    pub(crate) cache_bytes: usize,
}

/// No template matches (cached as this value).
const NONE: u32 = u32::MAX;

impl Miner {
    /// Mines templates from `rows` and appends those used at least
    /// `min_count` times (merged) to the miner.
    /// `threshold` is the share of static positions that must agree for
    /// two skeletons to merge.
    #[cfg(test)]
    pub(crate) fn learn(&mut self, rows: &[&[u8]], min_count: usize, threshold: f64) {
        let tok = Tokenized::of(rows, &mut Tokens::default());
        let keys = Keys::of(rows, |i| tok.row(i));
        self.learn_tokenized(rows, |r| tok.row(r), |r| keys.key(r), min_count, threshold);
    }

    /// [`Miner::learn`] of rows already tokenized and keyed: `words(i)` are
    /// the words of `rows[i]` (split as the rows are matched), `keys(i)`
    /// its key and shape key length ([`Keys`]).
    pub(crate) fn learn_tokenized<'t>(
        &mut self,
        rows: &[&[u8]],
        words: impl Fn(usize) -> &'t [(u32, u32)],
        keys: impl Fn(usize) -> (&'t [u8], usize),
        min_count: usize,
        threshold: f64,
    ) {
        let tok_words = words;
        // Skeleton → index in `skels` (first-appearance order).
        let mut index: HashMap<&[u8], usize> = HashMap::default();
        let mut skels: Vec<Skel> = Vec::new();
        let (mut shapes, mut spans) = (Vec::new(), Vec::new());
        for (r, &row) in rows.iter().enumerate() {
            let words = tok_words(r);
            let (key, shape_len) = keys(r);
            match index.get(key) {
                Some(&i) => skels[i].count += 1,
                None => {
                    index.insert(key, skels.len());
                    let (s0, w0) = (shapes.len(), spans.len());
                    shapes.extend_from_slice(&key[..shape_len]);
                    spans.extend(words.iter().map(|&(a, b)| {
                        if has_digit(&row[a as usize..b as usize]) {
                            SLOT
                        } else {
                            (a, b)
                        }
                    }));
                    skels.push(Skel {
                        row: r as u32,
                        shape: (s0, shapes.len()),
                        words: (w0, spans.len()),
                        count: 1,
                    });
                }
            }
        }
        let shape = |k: &Skel| &shapes[k.shape.0..k.shape.1];
        // Word `j` of skeleton `k`, or `None` for a slot.
        let word = |k: &Skel, j: usize| {
            let (a, b) = spans[k.words.0 + j];
            (a != u32::MAX).then(|| &rows[k.row as usize][a as usize..b as usize])
        };
        // Group by shape, in first-appearance order.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: HashMap<&[u8], usize> = HashMap::default();
        for (i, k) in skels.iter().enumerate() {
            let g = *group_of.entry(shape(k)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        // A merged template: its first skeleton, which of that skeleton's
        // static words stayed static (`statics[m·n..][..n]`), its rows.
        let mut statics: Vec<bool> = Vec::new();
        for members in groups {
            let mut order = members.clone();
            order.sort_by_key(|&i| (std::cmp::Reverse(skels[i].count), i));
            let n = skels[members[0]].words.1 - skels[members[0]].words.0;
            let mut merged: Vec<(usize, usize)> = Vec::new();
            statics.clear();
            for i in order {
                let s = &skels[i];
                // The most frequent MERGE_CANDIDATES templates of the shape
                // only (Drain bounds its children likewise): a shape of
                // thousands of unrelated skeletons (random words) is
                // otherwise quadratic (measured: 70% of 9 s on TPC-H
                // c_address).
                // Drain's similarity: the share of positions static in
                // either whose words agree.
                let similar = |m: usize, first: usize| {
                    let (mut same, mut either) = (0usize, 0usize);
                    for j in 0..n {
                        let a = if statics[m * n + j] {
                            word(&skels[first], j)
                        } else {
                            None
                        };
                        match (a, word(s, j)) {
                            (None, None) => {}
                            (Some(a), Some(b)) => {
                                either += 1;
                                same += (a == b) as usize;
                            }
                            _ => either += 1,
                        }
                    }
                    let sim = if either == 0 {
                        1.0
                    } else {
                        same as f64 / either as f64
                    };
                    sim >= threshold
                };
                let best = merged
                    .iter()
                    .take(MERGE_CANDIDATES)
                    .enumerate()
                    .position(|(m, &(first, _))| similar(m, first));
                match best {
                    Some(m) => {
                        let first = merged[m].0;
                        for j in 0..n {
                            if statics[m * n + j] && word(&skels[first], j) != word(s, j) {
                                statics[m * n + j] = false;
                            }
                        }
                        merged[m].1 += s.count;
                    }
                    None => {
                        statics.extend((0..n).map(|j| word(s, j).is_some()));
                        merged.push((i, s.count));
                    }
                }
            }
            for (m, &(first, c)) in merged.iter().enumerate() {
                if c >= min_count {
                    let k = &skels[first];
                    let row = rows[k.row as usize];
                    let p = Pattern {
                        seps: seps(tok_words(k.row as usize), row.len())
                            .map(|(a, b)| row[a as usize..b as usize].to_vec())
                            .collect(),
                        words: (0..n)
                            .map(|j| {
                                word(k, j)
                                    .filter(|_| statics[m * n + j])
                                    .map(|w| w.to_vec())
                            })
                            .collect(),
                    };
                    self.add(p, shape(&skels[members[0]]));
                }
            }
        }
        // New templates may match rows that were cached as unmatched.
        self.cache.clear();
        self.cache_bytes = 0;
    }

    fn add(&mut self, p: Pattern, shape: &[u8]) {
        let id = self.patterns.len() as u32;
        self.patterns.push(p);
        self.by_shape.entry(shape.to_vec()).or_default().push(id);
    }

    /// The template `line` (split into `words` and `seps`) renders from, if
    /// any: the first template of its shape whose static words it shares.
    #[cfg(test)]
    pub(crate) fn find(&mut self, line: &[u8], words: &[(u32, u32)]) -> Option<u32> {
        let mut key = Vec::new();
        let shape_len = key_into(line, words, &mut key);
        self.find_keyed(line, words, (&key, shape_len))
    }

    /// The template `line` matches (`NONE` for none), looked up without
    /// the cache: what [`Miner::find_keyed`] gives and caches.
    fn lookup(&self, line: &[u8], words: &[(u32, u32)], shape: &[u8]) -> u32 {
        self.by_shape
            .get(shape)
            .and_then(|ids| {
                ids.iter()
                    .copied()
                    .find(|&id| self.patterns[id as usize].matches(line, words))
            })
            .unwrap_or(NONE)
    }

    /// [`Miner::find`] of rows `pick` (`words(i)`: row `i`'s words), in
    /// parallel, runs of rows each with a cache of its own (the cache is a
    /// memo of a skeleton's match, so the answers are those of a serial
    /// pass; this miner's cache is left as it is).
    pub(crate) fn find_all<'w>(
        &self,
        rows: &[&[u8]],
        words: impl Fn(usize) -> &'w [(u32, u32)] + Sync,
        pick: &[usize],
    ) -> Vec<Option<u32>> {
        use rayon::prelude::*;
        pick.par_chunks(FIND_RUN)
            .flat_map_iter(|run| {
                let mut cache: HashMap<Vec<u8>, u32> = HashMap::default();
                let (mut key, mut cached) = (Vec::new(), 0);
                let words = &words;
                run.iter()
                    .map(move |&i| {
                        key.clear();
                        let w = words(i);
                        let shape = key_into(rows[i], w, &mut key);
                        let found = match cache.get(&key) {
                            Some(&id) => id,
                            None => {
                                let id = self.lookup(rows[i], w, &key[..shape]);
                                if cached + key.len() <= FIND_CACHE_BYTES {
                                    cached += key.len();
                                    cache.insert(key.clone(), id);
                                }
                                id
                            }
                        };
                        (found != NONE).then_some(found)
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// [`Miner::find`] of a line already keyed (`key`: its [`Keys`] entry).
    pub(crate) fn find_keyed(
        &mut self,
        line: &[u8],
        words: &[(u32, u32)],
        (key, shape_len): (&[u8], usize),
    ) -> Option<u32> {
        if let Some(&id) = self.cache.get(key) {
            return (id != NONE).then_some(id);
        }
        let found = self.lookup(line, words, &key[..shape_len]);
        if self.cache.len() < CACHE_LIMIT && self.cache_bytes < CACHE_BYTES {
            self.cache_bytes += key.len();
            self.cache.insert(key.to_vec(), found);
        }
        (found != NONE).then_some(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_variants_and_types_digits_as_slots() {
        let rows: Vec<&[u8]> = vec![
            b"Failed password for root from 10.0.0.1 port 22",
            b"Failed password for admin from 10.0.0.2 port 23",
            b"Failed password for root from 10.0.0.3 port 24",
            b"Connection closed by 1.2.3.4",
            b"something unique here",
        ];
        let mut m = Miner::default();
        m.learn(&rows, 2, 0.5);
        assert_eq!(m.patterns.len(), 1);
        let p = &m.patterns[0];
        // user, 4 IP parts, port.
        assert_eq!(p.slots(), 6);
        assert_eq!(p.statics()[0], b"Failed password for ");
        assert_eq!(p.statics()[1], b" from ");
        let mut t = Tokens::default();
        t.split(rows[1]);
        assert_eq!(m.find(rows[1], &t.words), Some(0));
        t.split(rows[3]);
        assert_eq!(m.find(rows[3], &t.words), None);
        let other: &[u8] = b"Failed password for x from 1.1.1.1 port 1";
        t.split(other);
        assert_eq!(m.find(other, &t.words), Some(0));
    }
}
