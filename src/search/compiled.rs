//! A predicate compiled once for a search: its automata (for the token
//! path and byte matching), literal finders (`memchr::memmem`, for byte
//! matching of plain substrings) or a value set (equality and IN lists), and
//! the row lengths that can match at all.

use std::collections::HashSet;

use memchr::memmem::Finder;

use super::dfa::Dfa;
use super::predicate::{literal_items, parse_like, Item, Pattern, Predicate};
use crate::error::Result;

/// How a compiled predicate decides a row (before negation).
#[derive(Debug)]
pub(crate) enum Test {
    /// No row matches (an empty IN list or disjunction).
    Never,
    /// The row is in the set (ASCII-folded first when `fold`).
    Set {
        values: HashSet<Vec<u8>>,
        fold: bool,
    },
    /// Every automaton accepts the row (one, or one per needle of a
    /// conjunction). `finders`: the same test as plain substrings, when
    /// every automaton is one case-sensitive literal between `%`s.
    Automata {
        dfas: Vec<Dfa>,
        finders: Option<Vec<Finder<'static>>>,
    },
}

/// A [`Predicate`] compiled for matching.
#[derive(Debug)]
pub struct Compiled {
    pub(crate) test: Test,
    pub(crate) negated: bool,
    /// Rows shorter than this never match (before negation).
    pub(crate) min_len: usize,
    /// Rows longer than this never match (before negation).
    pub(crate) max_len: usize,
}

/// Whether `items` are `% literal %` (a plain substring), and the literal.
fn plain_substring(items: &[Item]) -> Option<Vec<u8>> {
    let n = items.len();
    if n < 2 || items[0] != Item::AnySeq || items[n - 1] != Item::AnySeq {
        return None;
    }
    items[1..n - 1]
        .iter()
        .map(|i| match i {
            Item::Byte(b) => Some(*b),
            _ => None,
        })
        .collect()
}

/// Shortest and longest row `items` can match.
fn len_bounds(items: &[Item]) -> (usize, usize) {
    let mut lo = 0usize;
    let mut hi = 0usize;
    for i in items {
        match i {
            Item::Byte(_) => {
                lo += 1;
                hi = hi.saturating_add(1);
            }
            Item::AnyChar => {
                lo += 1;
                hi = hi.saturating_add(4);
            }
            Item::AnySeq => hi = usize::MAX,
        }
    }
    (lo, hi)
}

fn fold(v: &[u8]) -> Vec<u8> {
    v.to_ascii_lowercase()
}

impl Compiled {
    /// Compiles `p` (an error for a LIKE pattern ending in its escape byte,
    /// or one whose automaton would exceed 16 Ki states).
    pub fn new(p: &Predicate) -> Result<Self> {
        let f = p.ignore_case;
        // Each conjunct: the alternatives of one automaton.
        let conj: Vec<Vec<Vec<Item>>> = match &p.pattern {
            Pattern::In(vs) if vs.len() != 1 => {
                let values: HashSet<Vec<u8>> = vs
                    .iter()
                    .map(|v| if f { fold(v) } else { v.clone() })
                    .collect();
                let min_len = vs.iter().map(Vec::len).min().unwrap_or(0);
                let max_len = vs.iter().map(Vec::len).max().unwrap_or(0);
                let test = if vs.is_empty() {
                    Test::Never
                } else {
                    Test::Set { values, fold: f }
                };
                return Ok(Self {
                    test,
                    negated: p.negated,
                    min_len,
                    max_len,
                });
            }
            Pattern::In(vs) => vec![vec![literal_items(&vs[0], false, false)]],
            Pattern::Equals(v) => vec![vec![literal_items(v, false, false)]],
            Pattern::Prefix(v) => vec![vec![literal_items(v, false, true)]],
            Pattern::Suffix(v) => vec![vec![literal_items(v, true, false)]],
            Pattern::Contains { needles, all: true } => needles
                .iter()
                .map(|n| vec![literal_items(n, true, true)])
                .collect(),
            Pattern::Contains {
                needles,
                all: false,
            } => {
                if needles.is_empty() {
                    return Ok(Self {
                        test: Test::Never,
                        negated: p.negated,
                        min_len: 0,
                        max_len: usize::MAX,
                    });
                }
                vec![needles
                    .iter()
                    .map(|n| literal_items(n, true, true))
                    .collect()]
            }
            Pattern::Like { pattern, escape } => vec![vec![parse_like(pattern, *escape)?]],
        };
        let mut min_len = 0;
        let mut max_len = usize::MAX;
        for alts in &conj {
            let lo = alts.iter().map(|a| len_bounds(a).0).min().unwrap_or(0);
            let hi = alts.iter().map(|a| len_bounds(a).1).max().unwrap_or(0);
            min_len = min_len.max(lo);
            max_len = max_len.min(hi);
        }
        let finders = if f {
            None
        } else {
            conj.iter()
                .map(|alts| match &alts[..] {
                    [one] => plain_substring(one).map(|l| Finder::new(&l).into_owned()),
                    _ => None,
                })
                .collect()
        };
        let dfas = conj
            .iter()
            .map(|alts| Dfa::new(alts, f))
            .collect::<Result<_>>()?;
        Ok(Self {
            test: Test::Automata { dfas, finders },
            negated: p.negated,
            min_len,
            max_len,
        })
    }

    /// Whether the pattern matches `row` (before negation).
    #[inline]
    pub(crate) fn pattern_matches(&self, row: &[u8]) -> bool {
        if row.len() < self.min_len || row.len() > self.max_len {
            return false;
        }
        match &self.test {
            Test::Never => false,
            Test::Set {
                values,
                fold: false,
            } => values.contains(row),
            Test::Set { values, fold: true } => values.contains(&fold(row)),
            Test::Automata {
                finders: Some(fs), ..
            } => fs.iter().all(|f| f.find(row).is_some()),
            Test::Automata { dfas, .. } => dfas.iter().all(|d| d.matches(row)),
        }
    }

    /// Whether a non-null `row` is selected (negation applied).
    #[inline]
    pub fn matches(&self, row: &[u8]) -> bool {
        self.pattern_matches(row) != self.negated
    }
}
