//! A predicate compiled once for a search: its automata (for the token
//! path and byte matching), literal finders (`memchr::memmem`, for byte
//! matching of plain substrings) or a value set (equality and IN lists), and
//! the row lengths that can match at all.

use std::collections::HashSet;
use std::sync::OnceLock;

use memchr::memmem::Finder;

use super::anchor::Anchor;
use super::dfa::{Dfa, MAX_STATES};
use super::literal::Literal;
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
        /// The automata, built when first needed (the decode path of a
        /// literal never needs them) or at compile time when building them
        /// can fail.
        dfas: OnceLock<Vec<Dfa>>,
        /// Per conjunct, its alternatives (what `dfas` is built from).
        conj: Vec<Vec<Vec<Item>>>,
        fold: bool,
        finders: Option<Vec<Finder<'static>>>,
        /// Equality, prefix or suffix: the row's bytes compared directly
        /// (ASCII-folded when `fold`).
        simple: Option<(Simple, Vec<u8>)>,
        /// `dfas` are literals' automata built directly, in time linear in
        /// their states (`Dfa::new`: a chain or KMP), not determinized.
        direct: bool,
    },
}

/// A predicate decided by one comparison of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Simple {
    Equals,
    Prefix,
    Suffix,
}

/// A [`Predicate`] compiled for matching.
#[derive(Debug)]
pub struct Compiled {
    pub(crate) test: Test,
    pub(crate) negated: bool,
    /// Whether the pattern has automata ([`Self::dfas`]); when not (a
    /// literal past [`MAX_STATES`] bytes), every path that walks automata
    /// gives way to one that compares the rows' bytes.
    pub(crate) automata: bool,
    /// Rows shorter than this never match (before negation).
    pub(crate) min_len: usize,
    /// Rows longer than this never match (before negation).
    pub(crate) max_len: usize,
    /// Literals one of which a matching row must contain, when the pattern
    /// requires one (the anchor-token prefilter).
    pub(crate) anchor: Option<Anchor>,
    /// Every alternative of the one automaton starts with a byte or `_`
    /// (equality, prefix, LIKE not starting with `%`): most rows fail on
    /// their first code.
    pub(crate) start_anchored: bool,
    /// Equality or prefix, case-sensitive: each row's tokens compared with
    /// the literal on the codes (`literal`).
    pub(crate) literal: Option<Literal>,
}

/// The longest run of literal bytes in `items` (a substring every match
/// contains), if any.
fn required_literal(items: &[Item]) -> Option<Vec<u8>> {
    let mut best: Vec<u8> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    for i in items.iter().chain([&Item::AnySeq]) {
        match i {
            Item::Byte(b) => cur.push(*b),
            _ => {
                if cur.len() > best.len() {
                    best = std::mem::take(&mut cur);
                }
                cur.clear();
            }
        }
    }
    (!best.is_empty()).then_some(best)
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
                    automata: false,
                    min_len,
                    max_len,
                    anchor: None,
                    start_anchored: false,
                    literal: None,
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
                        automata: false,
                        min_len: 0,
                        max_len: usize::MAX,
                        anchor: None,
                        start_anchored: false,
                        literal: None,
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
        // The anchor: of the conjuncts whose every alternative requires a
        // literal, the one whose shortest such literal is longest.
        let anchor = conj
            .iter()
            .filter_map(|alts| {
                alts.iter()
                    .map(|a| required_literal(a))
                    .collect::<Option<Vec<_>>>()
            })
            .max_by_key(|lits| lits.iter().map(Vec::len).min().unwrap_or(0))
            .map(|lits| Anchor { lits, fold: f });
        let simple = match &p.pattern {
            Pattern::Equals(v) => Some((Simple::Equals, v.clone())),
            Pattern::In(vs) => Some((Simple::Equals, vs[0].clone())),
            Pattern::Prefix(v) => Some((Simple::Prefix, v.clone())),
            Pattern::Suffix(v) => Some((Simple::Suffix, v.clone())),
            _ => None,
        };
        // Literals (direct chain or KMP automata, which cannot fail) are
        // built lazily; anything else now, so that its errors surface here.
        let literal =
            (simple.is_some() || finders.is_some()) && conj.iter().all(|alts| alts.len() == 1);
        let longest = conj.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let dfas = OnceLock::new();
        let direct = literal && longest + 3 <= MAX_STATES;
        // A literal too long for a direct automaton (its table would take
        // 1 KiB a byte) is matched on rows' bytes only: an equality, prefix
        // or suffix by one comparison, a substring by `memmem`.
        let automata = direct || !(simple.is_some() || finders.is_some());
        if automata && !direct {
            let built = conj
                .iter()
                .map(|alts| Dfa::new(alts, f))
                .collect::<Result<Vec<_>>>()?;
            let _ = dfas.set(built);
        }
        let literal = match &simple {
            Some((Simple::Equals, v)) if !f => Some(Literal::new(v, false)),
            Some((Simple::Prefix, v)) if !f => Some(Literal::new(v, true)),
            _ => None,
        };
        Ok(Self {
            literal,
            test: Test::Automata {
                dfas,
                conj: conj.clone(),
                fold: f,
                finders,
                simple,
                direct,
            },
            negated: p.negated,
            automata,
            min_len,
            max_len,
            anchor,
            start_anchored: conj.len() == 1
                && conj[0]
                    .iter()
                    .all(|a| matches!(a.first(), Some(Item::Byte(_) | Item::AnyChar))),
        })
    }

    /// The literal a case-sensitive equality (or one-value IN list) or
    /// prefix compares rows with, and whether it is a prefix.
    pub(crate) fn plain_literal(&self) -> Option<(&[u8], bool)> {
        match &self.test {
            Test::Automata {
                simple: Some((s @ (Simple::Equals | Simple::Prefix), v)),
                fold: false,
                ..
            } => Some((v, *s == Simple::Prefix)),
            _ => None,
        }
    }

    /// The one non-empty plain substring this predicate is, when it is one
    /// (case-sensitive): then a block of decoded rows is searched with one
    /// `memmem` pass.
    pub(crate) fn block_finder(&self) -> Option<&Finder<'static>> {
        match &self.test {
            Test::Automata {
                finders: Some(fs), ..
            } if fs.len() == 1 && !fs[0].needle().is_empty() => Some(&fs[0]),
            _ => None,
        }
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
                simple: Some((kind, lit)),
                fold,
                ..
            } => {
                let part = match kind {
                    Simple::Equals => row,
                    Simple::Prefix => &row[..lit.len()],
                    Simple::Suffix => &row[row.len() - lit.len()..],
                };
                if *fold {
                    part.eq_ignore_ascii_case(lit)
                } else {
                    part == &lit[..]
                }
            }
            Test::Automata {
                finders: Some(fs), ..
            } => fs.iter().all(|f| f.find(row).is_some()),
            Test::Automata { .. } => self.dfas().iter().all(|d| d.matches(row)),
        }
    }

    /// Whether every alternative of every automaton ends in a byte or `_`
    /// (equality, suffix, LIKE not ending in `%`): a matching row is then
    /// spelled to its end by the pattern, so each part of it is pinned
    /// (log templates filter rows by their slot values only then).
    pub(crate) fn end_anchored(&self) -> bool {
        match &self.test {
            Test::Automata { conj, .. } => conj.iter().all(|alts| {
                alts.iter()
                    .all(|a| matches!(a.last(), Some(Item::Byte(_) | Item::AnyChar)))
            }),
            _ => false,
        }
    }

    /// Whether [`Self::dfas`] are built directly from literals (a chain or
    /// KMP automaton: a fill of 256 transitions per state), not by subset
    /// construction (about 4 ns per transition).
    pub(crate) fn direct_automata(&self) -> bool {
        matches!(self.test, Test::Automata { direct: true, .. })
    }

    /// The automata (built on first use for literals). Only called when
    /// [`Self::automata`] holds.
    pub(crate) fn dfas(&self) -> &[Dfa] {
        match &self.test {
            Test::Automata {
                dfas, conj, fold, ..
            } => dfas.get_or_init(|| {
                conj.iter()
                    .map(|alts| {
                        Dfa::new(alts, *fold).expect("a literal's automaton is always built")
                    })
                    .collect()
            }),
            _ => &[],
        }
    }

    /// Whether a non-null `row` is selected (negation applied).
    #[inline]
    pub fn matches(&self, row: &[u8]) -> bool {
        self.pattern_matches(row) != self.negated
    }
}
