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
//!   dictionary), so a row is one table lookup per code, stopping at the
//!   first code that decides it. No row is decoded, hit or miss. It is
//!   exact for any tokenization, so it needs none of the dictionary
//!   properties (sorted, distinct, complete, canonical spelling) that
//!   files of versions 1–3 do not promise (spec/FORMAT.md §9.1, §10.1),
//!   and checks none at open: in particular equality never compares the
//!   literal's codes with the row's (that is exact only when both are
//!   greedy parses over a dictionary in which each token has one code —
//!   guaranteed by nothing before version 4). Used when the table (states ×
//!   tokens) fits [`tokens::MAX_ENTRIES`]. Per block of 4096 rows:
//!   - when the pattern requires a literal (every alternative has a run of
//!     literal bytes) and the chunk has at least 2 codes per dictionary
//!     token: the **anchor scan** (`anchor`): the packed codes are scanned
//!     for tokens that can cover chosen bytes of the literal (a necessary
//!     condition for any tokenization, one flag lookup per code), and only
//!     the rows holding them are walked through the automaton;
//!   - the scan gives up when more than 1 code in 16 is an anchor token,
//!     or (for a plain case-sensitive substring) more than 1 row in 32 is a
//!     candidate: then a plain substring takes the decode path for that
//!     block (one memmem pass beats walking most rows) and other patterns
//!     walk every row;
//!   - without an anchor every row is walked, after an exact length filter
//!     when the pattern bounds the length (equality, LIKE without `%`).
//! * **coded chunks, otherwise** (IN lists of two or more values, or an
//!   automaton too large for the token path): the **decode path**: the
//!   block is decoded into one buffer and matched there (one `memmem` pass
//!   over the block for a plain substring, a hash lookup per row for sets,
//!   the byte DFA else); the column is never written whole.
//!
//! Measured with `lab/examples/search_probe` and `cargo bench --bench
//! search` (bench/SEARCH.md, on a shared, noisy 2-core machine): on
//! `tpch_sf1_l_comment` (OnPair-12) a rare substring (0.001%) took 2.1 ms
//! through the anchor scan against 3.0 ms on the decode path; from about
//! 1% selectivity up the decode path wins for plain substrings (4.4 against
//! 6.8 ms at 1%), which is what the two give-up thresholds encode.
//! [`Strategy`] forces either path (tests, benchmarks).
//!
//! Chunks are searched in parallel, and coded chunks in blocks of 4096 rows
//! in parallel (rayon); each task writes its own words of the bitmap, so
//! the result does not depend on the thread count.

mod anchor;
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
    /// The token path where it fits, never switching a block to the decode
    /// path (tests and benchmarks).
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
/// A one-off search; [`Searcher`] keeps what searches of one file share.
pub fn search(reader: &Reader, pred: &Predicate) -> Result<Selection> {
    search_with(reader, pred, SearchOptions::default())
}

/// [`search`] with options.
pub fn search_with(reader: &Reader, pred: &Predicate, opts: SearchOptions) -> Result<Selection> {
    Searcher::new(reader).search_with(pred, opts)
}

/// Searches of one open file that share what they decode beyond the
/// reader's own state: each chunk's row byte boundaries (its rows' lengths,
/// 4 bytes per row, decoded the first time a search needs them: the decode
/// path and length filters), as a query engine holding a file open would.
#[derive(Debug)]
pub struct Searcher<'r> {
    reader: &'r Reader,
    bb: Vec<std::sync::OnceLock<Vec<u32>>>,
}

impl<'r> Searcher<'r> {
    /// A searcher of `reader`.
    pub fn new(reader: &'r Reader) -> Self {
        let bb = (0..reader.num_chunks())
            .map(|_| Default::default())
            .collect();
        Self { reader, bb }
    }
    /// The rows `pred` selects.
    pub fn search(&self, pred: &Predicate) -> Result<Selection> {
        self.search_with(pred, SearchOptions::default())
    }
    /// [`Self::search`] with options.
    pub fn search_with(&self, pred: &Predicate, opts: SearchOptions) -> Result<Selection> {
        let c = Compiled::new(pred)?;
        eval::Search::new(self.reader, &c, opts.strategy, &self.bb).run()
    }
}
