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
use super::tokenize::{has_digit, Tokens};

/// Templates of one shape a skeleton is compared with when merging.
const MERGE_CANDIDATES: usize = 64;

/// Most skeletons the match cache remembers, and most bytes of their keys
/// (bounds its memory on hostile or non-log input; a memo only: the
/// templates found do not depend on it).
const CACHE_LIMIT: usize = 1 << 18;
const CACHE_BYTES: usize = 4 << 20;

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

    /// True when `line` (split into `t`) renders from this template.
    fn matches(&self, line: &[u8], t: &Tokens) -> bool {
        self.words.len() == t.words.len()
            && self.words.iter().zip(&t.words).all(|(p, &(a, b))| match p {
                Some(w) => w[..] == line[a as usize..b as usize],
                None => true,
            })
    }
}

/// Appends the shape key of `line` (its separators) to `key`.
fn shape_key(line: &[u8], t: &Tokens, key: &mut Vec<u8>) {
    for &(a, b) in &t.seps {
        put_varint(key, (b - a) as u64);
        key.extend_from_slice(&line[a as usize..b as usize]);
    }
}

/// Appends the word part of the skeleton key (0 = slot, else length + bytes).
fn words_key(line: &[u8], t: &Tokens, key: &mut Vec<u8>) {
    for &(a, b) in &t.words {
        let w = &line[a as usize..b as usize];
        if has_digit(w) {
            key.push(0);
        } else {
            put_varint(key, w.len() as u64);
            key.extend_from_slice(w);
        }
    }
}

/// The skeleton of `line` as a pattern.
fn skeleton(line: &[u8], t: &Tokens) -> Pattern {
    Pattern {
        seps: t
            .seps
            .iter()
            .map(|&(a, b)| line[a as usize..b as usize].to_vec())
            .collect(),
        words: t
            .words
            .iter()
            .map(|&(a, b)| {
                let w = &line[a as usize..b as usize];
                (!has_digit(w)).then(|| w.to_vec())
            })
            .collect(),
    }
}

/// Similarity of a template and a skeleton of the same shape.
fn similarity(t: &[Option<Vec<u8>>], s: &[Option<Vec<u8>>]) -> f64 {
    let (mut same, mut either) = (0usize, 0usize);
    for (a, b) in t.iter().zip(s) {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => {
                either += 1;
                same += (a == b) as usize;
            }
            _ => either += 1,
        }
    }
    if either == 0 {
        1.0
    } else {
        same as f64 / either as f64
    }
}

/// The mined templates and the indexes that match rows to them.
#[derive(Default)]
pub(crate) struct Miner {
    pub(crate) patterns: Vec<Pattern>,
    pub(crate) by_shape: HashMap<Vec<u8>, Vec<u32>>,
    pub(crate) cache: HashMap<Vec<u8>, u32>,
    /// Bytes of the cache's keys.
    pub(crate) cache_bytes: usize,
    pub(crate) key: Vec<u8>,
    /// Tokenize with mixed runs split (`Tokens::mixed`).
    pub(crate) mixed: bool,
}

/// No template matches (cached as this value).
const NONE: u32 = u32::MAX;

impl Miner {
    /// Mines templates from `rows` and appends those used at least
    /// `min_count` times (merged) to the miner.
    /// `threshold` is the share of static positions that must agree for
    /// two skeletons to merge.
    pub(crate) fn learn(&mut self, rows: &[&[u8]], min_count: usize, threshold: f64) {
        let mut t = Tokens {
            mixed: self.mixed,
            ..Default::default()
        };
        let mut key = Vec::new();
        // Skeleton → index in `skels` (first-appearance order).
        let mut index: HashMap<Vec<u8>, usize> = HashMap::default();
        let mut skels: Vec<(Vec<u8>, Pattern, usize)> = Vec::new(); // (shape, pattern, count)
        for &row in rows {
            t.split(row);
            key.clear();
            shape_key(row, &t, &mut key);
            let shape_len = key.len();
            words_key(row, &t, &mut key);
            match index.get(&key) {
                Some(&i) => skels[i].2 += 1,
                None => {
                    index.insert(key.clone(), skels.len());
                    skels.push((key[..shape_len].to_vec(), skeleton(row, &t), 1));
                }
            }
        }
        // Group by shape, in first-appearance order.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of: HashMap<&[u8], usize> = HashMap::default();
        for (i, (shape, _, _)) in skels.iter().enumerate() {
            let g = *group_of.entry(&shape[..]).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(i);
        }
        for members in groups {
            let mut order = members.clone();
            order.sort_by_key(|&i| (std::cmp::Reverse(skels[i].2), i));
            let mut merged: Vec<(Pattern, usize)> = Vec::new();
            for i in order {
                let (_, s, c) = &skels[i];
                // The most frequent MERGE_CANDIDATES templates of the shape
                // only (Drain bounds its children likewise): a shape of
                // thousands of unrelated skeletons (random words) is
                // otherwise quadratic (measured: 70% of 9 s on TPC-H
                // c_address).
                let best = merged
                    .iter()
                    .take(MERGE_CANDIDATES)
                    .position(|(m, _)| similarity(&m.words, &s.words) >= threshold);
                match best {
                    Some(k) => {
                        let m = &mut merged[k];
                        for (a, b) in m.0.words.iter_mut().zip(&s.words) {
                            if a.is_some() && a != b {
                                *a = None;
                            }
                        }
                        m.1 += c;
                    }
                    None => merged.push((s.clone(), *c)),
                }
            }
            for (p, c) in merged {
                if c >= min_count {
                    self.add(p, &skels[members[0]].0);
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

    /// The template `line` (split into `t`) renders from, if any: the first
    /// template of its shape whose static words it shares.
    pub(crate) fn find(&mut self, line: &[u8], t: &Tokens) -> Option<u32> {
        self.key.clear();
        shape_key(line, t, &mut self.key);
        let shape_len = self.key.len();
        words_key(line, t, &mut self.key);
        if let Some(&id) = self.cache.get(&self.key) {
            return (id != NONE).then_some(id);
        }
        let found = self
            .by_shape
            .get(&self.key[..shape_len])
            .and_then(|ids| {
                ids.iter()
                    .copied()
                    .find(|&id| self.patterns[id as usize].matches(line, t))
            })
            .unwrap_or(NONE);
        if self.cache.len() < CACHE_LIMIT && self.cache_bytes < CACHE_BYTES {
            self.cache_bytes += self.key.len();
            self.cache.insert(self.key.clone(), found);
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
        assert_eq!(m.find(rows[1], &t), Some(0));
        t.split(rows[3]);
        assert_eq!(m.find(rows[3], &t), None);
        let other: &[u8] = b"Failed password for x from 1.1.1.1 port 1";
        t.split(other);
        assert_eq!(m.find(other, &t), Some(0));
    }
}
