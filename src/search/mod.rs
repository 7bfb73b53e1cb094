//! Search without decompressing: equality, IN lists, prefix, suffix,
//! substring and SQL `LIKE` over a column's codes (issue 21).
//!
//! ```
//! use fastpair::search::{search, Predicate};
//! let rows = ["GET /api/users", "POST /login", "GET /api/items", "timeout"];
//! let file = fastpair::write::write_to_vec(rows.iter().map(|r| Some(r.as_bytes())), Default::default()).unwrap();
//! let reader = fastpair::Reader::from_bytes(file).unwrap();
//! let sel = search(&reader, &Predicate::like("GET /api/%")).unwrap();
//! assert_eq!(sel.row_ids(), [0, 2]);
//! let sel = search(&reader, &Predicate::contains("O").ignore_case().not()).unwrap();
//! assert_eq!(sel.row_ids(), [0, 2]);
//! assert_eq!(sel.take(&reader).unwrap().value(1), Some(&b"GET /api/items"[..]));
//! ```
//!
//! One [`Predicate`] type serves the CPU search here, the GPU search and
//! query engines pushing filters down; [`Predicate::matches`] is its
//! meaning for one row (semantics in [`predicate`]: SQL nulls, ASCII case
//! folding, `_` as one UTF-8 character). A search returns a [`Selection`]:
//! a bitmap with its count, the sorted row ids on request, and the
//! selected values in Arrow layout ([`Selection::take`]).
//!
//! # How each chunk is matched (the rule)
//!
//! The predicate is compiled once ([`Compiled`]): a value set for IN lists
//! of two or more values, else byte automata (one DFA for a pattern or a
//! disjunction of needles, one per needle of a conjunction), plus `memmem`
//! finders when every automaton is a plain case-sensitive substring, plus
//! the shortest and longest row that can match. Then per chunk:
//!
//! * **value-dictionary chunks** (§5.6): each distinct value is matched
//!   once on its decoded bytes (already decoded when the chunk was
//!   validated), and each row takes its value's answer.
//! * **coded chunks, automata**: the **token path**. Each DFA is lifted to
//!   the chunk's dictionary ([`tokens`]: `next(state, code)` = the state
//!   after the token's bytes, computed lazily, shared by all chunks of the
//!   dictionary), and each row is one table lookup per code, stopping at
//!   the first code that decides it; rows whose byte length (from the row
//!   byte boundaries, no decode) cannot match are skipped. No row is
//!   decoded, hit or miss. It is exact for any tokenization, so it needs
//!   none of the dictionary properties (sorted, distinct, complete,
//!   canonical spelling) that files of versions 1–3 do not promise
//!   (spec/FORMAT.md §9.1, §10.1), and checks none at open: in particular
//!   equality never compares the literal's codes with the row's (that is
//!   exact only when both are greedy parses over a dictionary in which
//!   each token has one code — guaranteed by nothing before version 4).
//!   Used when the table (states × tokens) fits [`tokens::MAX_ENTRIES`].
//! * **coded chunks, otherwise** (an IN set, or an automaton too large for
//!   the token path): the **decode path**: blocks of 4096 rows are decoded
//!   into one reused buffer and each row is matched on its bytes (`memmem`
//!   for plain substrings, a hash lookup for sets, the byte DFA else); the
//!   column is never written whole.
//!
//! Measured (bench/SEARCH.md, `cargo bench --bench search`): the token path
//! beats the decode path at every selectivity the benchmark covers on
//! every corpus column, because a row costs one dependent lookup per code
//! (~2–6 bytes) and stops at the first deciding code, where the decode path
//! writes and then reads every byte; so `Strategy::Auto` takes the token
//! path whenever it fits. [`Strategy`] forces either (tests, benchmarks).
//!
//! Chunks are searched in parallel, and coded chunks in blocks of 4096 rows
//! in parallel (rayon); each task writes its own words of the bitmap, so
//! the result does not depend on the thread count.

mod compiled;
mod dfa;
mod eval;
pub mod predicate;
mod selection;
pub mod tokens;

pub use compiled::Compiled;
pub use predicate::{Pattern, Predicate};
pub use selection::Selection;

use crate::error::Result;
use crate::read::Reader;

/// How coded chunks are matched (see the module's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// The rule: the token path when its table fits, else decode.
    #[default]
    Auto,
    /// The token path where it fits (as `Auto`).
    Tokens,
    /// Always decode blocks and match bytes.
    Decode,
}

/// Options of a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchOptions {
    /// How coded chunks are matched.
    pub strategy: Strategy,
}

/// The rows of `reader` that `pred` selects (the rule in the module doc).
pub fn search(reader: &Reader, pred: &Predicate) -> Result<Selection> {
    search_with(reader, pred, SearchOptions::default())
}

/// [`search`] with options.
pub fn search_with(reader: &Reader, pred: &Predicate, opts: SearchOptions) -> Result<Selection> {
    let c = Compiled::new(pred)?;
    eval::Search::new(reader, &c, opts.strategy).run()
}
