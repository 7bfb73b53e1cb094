//! The predicate: what a search asks of each row's bytes, shared by the CPU
//! search, the GPU search and query engines that push filters down.
//!
//! A [`Predicate`] is plain data: a [`Pattern`] and two flags. Build one with
//! the constructors ([`Predicate::equals`], [`Predicate::like`], ...) or as a
//! struct literal; [`Predicate::matches`] is its meaning, row by row.
//!
//! # Semantics
//!
//! * Rows are byte strings; literals are byte strings. Nothing requires
//!   UTF-8.
//! * **Nulls follow SQL**: a null row matches no predicate, negated or not
//!   (`NULL LIKE p` and `NOT (NULL LIKE p)` are both unknown, hence not
//!   selected).
//! * **`ignore_case`** folds ASCII letters (`A`–`Z` to `a`–`z`) on both
//!   sides before comparing; other bytes compare as they are (SQL `ILIKE`
//!   on ASCII).
//! * **`negated`** selects the non-null rows the pattern does not match.
//! * **LIKE**: `%` matches any sequence of bytes (zero or more), `_` exactly
//!   one character, every other byte itself; the `escape` byte makes the
//!   next byte literal (`\%`, `\_`, `\\`), and a pattern ending in the
//!   escape byte is an error. A *character* for `_` is a UTF-8 sequence: a
//!   byte below `0x80` (or a stray byte `0x80`–`0xBF`, `0xF8`–`0xFF`) alone,
//!   or a lead byte `0xC0`–`0xDF`, `0xE0`–`0xEF`, `0xF0`–`0xF7` followed by
//!   its 1, 2 or 3 continuation bytes (`0x80`–`0xBF`). On valid UTF-8 that
//!   is one Unicode code point, as in SQL; a lead byte without its
//!   continuations matches no `_`.
//! * **Contains** with no needle matches every non-null row when `all`
//!   (an empty conjunction) and none when not (an empty disjunction); an
//!   empty needle matches every row. **In** with no value matches nothing.

use crate::error::{Error, Result};

/// What a row's bytes must satisfy (before [`Predicate::negated`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// The row equals the literal (SQL `=`).
    Equals(Vec<u8>),
    /// The row equals one of the literals (SQL `IN (...)`).
    In(Vec<Vec<u8>>),
    /// The row starts with the literal (SQL `LIKE 'lit%'`).
    Prefix(Vec<u8>),
    /// The row ends with the literal (SQL `LIKE '%lit'`).
    Suffix(Vec<u8>),
    /// The row contains the needles as substrings: all of them (`all`) or
    /// at least one.
    Contains {
        /// The literals.
        needles: Vec<Vec<u8>>,
        /// Every needle must occur (else at least one).
        all: bool,
    },
    /// SQL `LIKE pattern [ESCAPE escape]` (see the module's semantics).
    Like {
        /// The pattern, with `%` and `_` wildcards.
        pattern: Vec<u8>,
        /// The escape byte, if any (SQL's `ESCAPE '\'`).
        escape: Option<u8>,
    },
}

/// A search predicate: a [`Pattern`], ASCII case folding and negation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Predicate {
    /// What the row must match.
    pub pattern: Pattern,
    /// Fold ASCII letters on both sides (SQL `ILIKE`).
    pub ignore_case: bool,
    /// Select the non-null rows that do *not* match (SQL `NOT`).
    pub negated: bool,
}

impl Predicate {
    /// A predicate of `pattern`, case-sensitive, not negated.
    pub fn new(pattern: Pattern) -> Self {
        Self {
            pattern,
            ignore_case: false,
            negated: false,
        }
    }
    /// Rows equal to `lit`.
    pub fn equals(lit: impl Into<Vec<u8>>) -> Self {
        Self::new(Pattern::Equals(lit.into()))
    }
    /// Rows equal to one of `lits`.
    pub fn in_list<I: IntoIterator<Item = L>, L: Into<Vec<u8>>>(lits: I) -> Self {
        Self::new(Pattern::In(lits.into_iter().map(Into::into).collect()))
    }
    /// Rows starting with `lit`.
    pub fn prefix(lit: impl Into<Vec<u8>>) -> Self {
        Self::new(Pattern::Prefix(lit.into()))
    }
    /// Rows ending with `lit`.
    pub fn suffix(lit: impl Into<Vec<u8>>) -> Self {
        Self::new(Pattern::Suffix(lit.into()))
    }
    /// Rows containing `lit`.
    pub fn contains(lit: impl Into<Vec<u8>>) -> Self {
        Self::contains_any([lit])
    }
    /// Rows containing at least one of `lits`.
    pub fn contains_any<I: IntoIterator<Item = L>, L: Into<Vec<u8>>>(lits: I) -> Self {
        Self::new(Pattern::Contains {
            needles: lits.into_iter().map(Into::into).collect(),
            all: false,
        })
    }
    /// Rows containing every one of `lits`.
    pub fn contains_all<I: IntoIterator<Item = L>, L: Into<Vec<u8>>>(lits: I) -> Self {
        Self::new(Pattern::Contains {
            needles: lits.into_iter().map(Into::into).collect(),
            all: true,
        })
    }
    /// Rows matching the SQL `LIKE` pattern `pat` (no escape byte).
    pub fn like(pat: impl Into<Vec<u8>>) -> Self {
        Self::new(Pattern::Like {
            pattern: pat.into(),
            escape: None,
        })
    }
    /// Rows matching `LIKE pat ESCAPE escape`.
    pub fn like_escape(pat: impl Into<Vec<u8>>, escape: u8) -> Self {
        Self::new(Pattern::Like {
            pattern: pat.into(),
            escape: Some(escape),
        })
    }
    /// The same predicate with ASCII case folding (`ILIKE`).
    pub fn ignore_case(mut self) -> Self {
        self.ignore_case = true;
        self
    }
    /// The negation (non-null rows that do not match).
    #[allow(clippy::should_implement_trait)]
    pub fn not(mut self) -> Self {
        self.negated = !self.negated;
        self
    }

    /// Checks the predicate (a LIKE pattern ending in its escape byte is an
    /// [`Error::InvalidArgument`]).
    pub fn check(&self) -> Result<()> {
        if let Pattern::Like { pattern, escape } = &self.pattern {
            parse_like(pattern, *escape)?;
        }
        Ok(())
    }

    /// Whether a row matches (`None`: a null row, which never does). The
    /// definition the searches implement, one row at a time; slow (it
    /// compiles the predicate on every call): search a column with
    /// [`super::search`], or compile once with [`super::Compiled`].
    pub fn matches(&self, row: Option<&[u8]>) -> Result<bool> {
        let c = super::Compiled::new(self)?;
        Ok(row.is_some_and(|r| c.matches(r)))
    }
}

/// One element of a LIKE pattern after escapes are resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// This byte.
    Byte(u8),
    /// `_`: one character.
    AnyChar,
    /// `%`: any bytes (consecutive `%` are merged).
    AnySeq,
}

/// The items of a LIKE pattern.
pub(crate) fn parse_like(pattern: &[u8], escape: Option<u8>) -> Result<Vec<Item>> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        let b = pattern[i];
        i += 1;
        let item = if Some(b) == escape {
            match pattern.get(i) {
                Some(&n) => {
                    i += 1;
                    Item::Byte(n)
                }
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "LIKE pattern ends in its escape byte {:?} (byte {})",
                        b as char,
                        i - 1
                    )))
                }
            }
        } else if b == b'%' {
            Item::AnySeq
        } else if b == b'_' {
            Item::AnyChar
        } else {
            Item::Byte(b)
        };
        if item == Item::AnySeq && out.last() == Some(&Item::AnySeq) {
            continue;
        }
        out.push(item);
    }
    Ok(out)
}

/// The items of a literal with `%` before and/or after it.
pub(crate) fn literal_items(lit: &[u8], any_before: bool, any_after: bool) -> Vec<Item> {
    let mut v = Vec::with_capacity(lit.len() + 2);
    if any_before {
        v.push(Item::AnySeq);
    }
    v.extend(lit.iter().map(|&b| Item::Byte(b)));
    if any_after && v.last() != Some(&Item::AnySeq) {
        v.push(Item::AnySeq);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_parse() {
        use Item::*;
        assert_eq!(
            parse_like(b"a%%_\\%", Some(b'\\')).unwrap(),
            [Byte(b'a'), AnySeq, AnyChar, Byte(b'%')]
        );
        assert_eq!(parse_like(b"a\\", None).unwrap(), [Byte(b'a'), Byte(b'\\')]);
        assert!(parse_like(b"a\\", Some(b'\\')).is_err());
        assert_eq!(literal_items(b"", true, true), [AnySeq]);
    }
}
