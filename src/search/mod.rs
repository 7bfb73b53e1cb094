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
//! disjunction of needles, one per needle of a conjunction; equality and
//! prefix built as a chain, substring and suffix as a KMP automaton, the
//! rest by subset construction), plus `memmem` finders when the pattern is
//! one plain case-sensitive substring, plus the shortest and longest row
//! that can match. An automaton has at most 16,384 states (a state a byte
//! of a literal, 1 KiB each): a case-sensitive equality, prefix, suffix or
//! substring longer than that has none and is matched on its rows' bytes
//! on every chunk kind; any other pattern that needs more states (a
//! case-insensitive substring of more than 16,381 bytes, a LIKE of as many
//! literal bytes) is an [`crate::Error::InvalidArgument`]. Then per chunk,
//! by what measured fastest (bench/SEARCH.md):
//!
//! * **value-dictionary chunks** (§5.6): each distinct value is matched
//!   once on its decoded bytes (decoded when the chunk was validated), and
//!   each row takes its value's answer. A plain substring is one `memmem`
//!   pass over the distinct values, which lie end to end (a hit counts for
//!   the value it starts in when it ends there too): a call per value cost
//!   more than decode + memmem of the whole column (0.6× on
//!   `dbtext_hamlet`, bench/SEARCH.md round 4).
//! * **equality and prefix, case-sensitive** (any coded chunk): the
//!   **literal path** (`literal`): each row's tokens are compared with the
//!   literal, one masked 16-byte compare per code, from the row's first
//!   code until one decides (equality first drops rows of another length,
//!   from the row byte boundaries). Exact for any tokenization (nothing
//!   about the writer's parse is assumed) and no table to build. It
//!   replaced the token path for these (0.46× decode + compare on
//!   `dbtext_c_name` prefix "Cust", a lazily filled DFA table per search).
//! * **patterns that require a literal** (plain substrings, suffix, LIKE
//!   with a literal, case-insensitive, several needles; not anchored at the
//!   row's start), on chunks of at least 4 codes per dictionary token: the
//!   **sparse path** (`sparse`, `index`) when it pays. Per chunk a plan
//!   (`index::plan`): for a literal byte `p`, the tokens that can cover it
//!   at some alignment (`anchor`: a row holding none of them cannot
//!   contain the literal, for any tokenization), found through a byte index
//!   of the dictionary's tokens, dropping the tokens the chunk never uses,
//!   at the position whose tokens the chunk uses least (its code
//!   frequencies); several needles of a disjunction take the union. The
//!   plan's weight is the chunk's exact count of code positions holding
//!   one, so the choice is selectivity-aware before any scan: the sparse
//!   path runs when the scan (1.5 decoded bytes per code) plus the
//!   candidates (each 192 + 48 per code of its row) cost within three quarters of
//!   the chunk's bytes, and the plan has at most 96 codes. The packed codes
//!   are then scanned 16 at a time (AVX2: compares with up to 8 codes,
//!   else two 256-bit byte-shuffle set tests and an exact bitset check of
//!   the lanes that pass) and only the rows holding one are decoded
//!   (inline, a token word per code) and matched; a block whose candidates
//!   cost more than three quarters of its bytes is decoded whole instead.
//!   A plain substring (one literal) checks each hit in a **window around
//!   its code** instead of its whole row: every plan code covers the same
//!   literal byte `p`, so an occurrence through the hit lies within the
//!   codes from `p` bytes before the hit's token to `n - p - 1` bytes after
//!   it; a hit then costs 96 plus 48 per window code (about the literal's
//!   bytes and a token each side) in the rule above instead of 192 plus 48
//!   per code of its row. Exact: any occurrence has its byte `p` in some
//!   token, which is a plan code and so a hit whose window holds it.
//!   Its block fallback weighs the hits against decoding the whole block
//!   (the scan is spent by then), not three quarters of it.
//!   The byte index (per dictionary) and code frequencies (per chunk) do
//!   not depend on the pattern and are kept by a [`Searcher`]; a plan
//!   costs a few microseconds per chunk and search.
//! * **plain substrings that many rows hold** (of at most 16 bytes, no
//!   sparse plan that pays), on coded chunks of at least 131,072 codes: the
//!   **sure path** (`eval/sure.rs`) when a sample of about 512 codes in 16
//!   runs of rows says it costs at most nine tenths of the decode path. The
//!   dictionary's tokens that hold the whole literal are found once (a
//!   bitset); one pass over the block's codes settles each row at its first
//!   such code (a hit, never decoded, its later codes never read), and only
//!   the rows it passes over are decoded, runs of consecutive rows at a
//!   time, and searched as on the decode path. A one-byte literal never
//!   spans tokens, so there no row is decoded at all. It pays on long rows
//!   that hold the literal early (prose: `" the "` in speeches, digits in
//!   news), not on short rows, where a settled row's branch costs about
//!   what decoding it does.
//! * **small coded chunks** (fewer than 16 codes per dictionary token: the
//!   2,000-row Loghub columns) and **other plain substrings** (no plan
//!   that pays): the **decode path**. Blocks of 4096 rows are decoded, about
//!   64 KiB of rows at a time (a row longer than that alone), into one reused
//!   per-thread buffer (never the whole column, and never more than the
//!   longest row past 64 KiB however long the block's rows) and matched
//!   there: one `memmem` pass over the piece for a substring (a hit counts for the row it starts in
//!   when it ends there too), a masked 16-byte compare per row for an
//!   equality or prefix literal, a hash lookup per row for IN sets, the
//!   byte DFA otherwise. Memmem over freshly decoded, cache-resident bytes
//!   runs at several GB/s per core; the byte-flag anchor scan below costs a
//!   table lookup per code, as much as decoding the code on long-token
//!   columns (measured: it lost to this path on every large column tried,
//!   bench/SEARCH.md), so plain substrings use the sparse path or this.
//! * **other patterns on coded chunks** (LIKE with wildcards, ASCII
//!   case-insensitive, several needles, suffix, where the sparse path does
//!   not pay or does not apply): the **token path**. Each DFA is lifted to the chunk's dictionary
//!   (`tokens`: `next(state, code)` = the state after the token's bytes,
//!   computed lazily, shared by all chunks of the dictionary), so a row is
//!   one table lookup per code, stopping at the first code that decides
//!   it; no row is decoded, hit or miss. Per block:
//!   - patterns anchored at the row's start (case-insensitive equality
//!     and prefix, LIKE not starting with `%`) walk each row from its first
//!     code (most rows die there), after an exact length window from the
//!     row byte boundaries when the pattern bounds the length;
//!   - patterns that require a literal, on chunks of at least 16 codes per
//!     token: the **anchor scan** (`anchor`): the packed codes are scanned
//!     for tokens that can cover chosen bytes of the literal (a necessary
//!     condition for any tokenization, one flag lookup per code), and only
//!     the rows holding them are walked; more than 1 anchor code in 16
//!     and the block walks every row instead;
//!   - otherwise every row is walked.
//!
//! * **log-template chunks** (spec/FORMAT.md §5.8), an equality, prefix or
//!   one plain substring: **laid over each template** (`logs::lay`,
//!   `logs::equals`): every way the literal can stand in a row of the
//!   template pins the slots it covers (an integer's value, or its
//!   rendering starting, ending with or holding digits; dictionary ids;
//!   free text, a substring's found by one search of the block's decoded
//!   text pool), and the rows are decided on the slot columns in bulk, 128
//!   values a block, blocks settled from their bounds; only the rows that
//!   pass have their integers rendered to confirm. A template whose static
//!   text holds the literal selects all its rows. Templates past the bounds
//!   of laying have their rows rendered; past a quarter of the rows, a
//!   substring is matched as below. A plain substring otherwise:
//!   **templates matched once** (`logs::search`): a template whose static
//!   text holds the literal selects all its rows, one that cannot hold it
//!   in a row (not in its static text, and no slot whose values could
//!   overlap it: integers when the literal has no digit, dictionary values
//!   without its bytes) selects none, and only the rows of the others are
//!   rendered (O(1) each) and searched. **Other patterns** whose automata
//!   have at most 4,096 states (equality, prefix, suffix, LIKE, ASCII
//!   case-insensitive, several needles; `logs::skeleton`): each template's
//!   skeleton run through the automata on sets of states gives the same
//!   all / none / check verdicts, and for a checked template with one
//!   automaton, each dictionary and integer slot whose values cannot all
//!   lead to a match becomes a filter (a dictionary id's answer computed
//!   once, an integer rendered alone), so only the rows whose slot values
//!   pass are rendered (an equality renders about the rows equal to it).
//!   IN lists, larger automata and [`Strategy::Decode`]: every row
//!   rendered and matched.
//!
//! The token path is exact for any tokenization, so it needs none of the
//! dictionary properties (sorted, distinct, complete, canonical spelling)
//! that files of versions 1–3 do not promise (spec/FORMAT.md §9.1, §10.1),
//! and checks none at open: in particular equality never compares the
//! literal's codes with the row's (that is exact only when both are greedy
//! parses over a dictionary in which each token has one code — guaranteed
//! by nothing before version 4, §10.1 — and would otherwise need a check of
//! every row's spelling, which costs a decode). Used when a DFA's table
//! (states × tokens) fits `tokens::MAX_ENTRIES` (64 Mi entries), else the decode path.
//! [`Strategy`] forces either path (tests, benchmarks).
//!
//! On the GPU, `fastpair::gpu::search` runs one literal (substring,
//! prefix, suffix, equality) through a fused decode-and-match kernel over
//! the coded chunks (spec/DECODER.md §6e) and uses this module's per-chunk
//! code for the other kinds, with the same selection.
//!
//! Chunks are searched in parallel, and coded chunks in blocks of 4096 rows
//! in parallel (rayon); each task writes its own words of the bitmap, so
//! the result does not depend on the thread count.

pub(crate) mod anchor;
mod compiled;
pub(crate) mod dfa;
pub(crate) mod eval;
pub(crate) mod index;
mod literal;
pub mod predicate;
mod selection;
mod short;
mod spans;
mod sparse;
mod tokens;

pub use compiled::Compiled;
pub use predicate::{Pattern, Predicate};
pub use selection::Selection;
pub(crate) use spans::values_containing;

use crate::error::Result;
use crate::read::Reader;

/// How coded chunks are matched (see the module's rule).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Strategy {
    /// The rule of the module doc.
    #[default]
    Auto,
    /// The token path wherever its table fits, also for small chunks,
    /// plain substrings, equality and prefix (no literal or sparse path;
    /// tests and benchmarks).
    Tokens,
    /// Always decode blocks and match bytes (log-template chunks: every
    /// row rendered and matched, no template matching).
    Decode,
    /// The sparse path wherever the pattern has an anchor whose plan fits
    /// the scan, whatever the chunk's size and the candidates' cost (no
    /// fallback to decoding a block), and log-template chunks matched
    /// through their templates whatever the time it takes (no budget);
    /// elsewhere as [`Strategy::Auto`] (tests and benchmarks).
    Sparse,
    /// On coded chunks, a plain substring of at most 16 bytes always
    /// through the rows its tokens settle (the rest decoded), whatever it
    /// costs; elsewhere as [`Strategy::Auto`] (tests and benchmarks).
    Sure,
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
/// reader's own state, as a query engine holding a file open would, each
/// built the first time a search needs it and independent of the pattern:
/// each chunk's row byte boundaries (its rows' lengths, 4 bytes per row:
/// the decode path and length filters) and code frequencies (4 bytes per
/// code value: the sparse path's plan), and per dictionary a byte index of
/// its tokens (4 bytes per token byte: the sparse path's anchor codes).
///
/// [`Searcher::new`] borrows its reader; [`Searcher::shared`] holds a share
/// of it, so that a caller keeping files open across queries (a query
/// engine's open files) can keep the searcher beside them and build that
/// state once per file, not once per query.
#[derive(Debug)]
pub struct Searcher<'r> {
    reader: Held<'r>,
    caches: eval::Caches,
}

/// The reader a [`Searcher`] searches: borrowed, or a share of it.
#[derive(Debug)]
enum Held<'r> {
    Borrowed(&'r Reader),
    Shared(std::sync::Arc<Reader>),
}

impl<'r> Searcher<'r> {
    /// A searcher of `reader`.
    pub fn new(reader: &'r Reader) -> Self {
        Self {
            caches: eval::Caches::new(reader),
            reader: Held::Borrowed(reader),
        }
    }
    /// The reader searched.
    pub fn reader(&self) -> &Reader {
        match &self.reader {
            Held::Borrowed(r) => r,
            Held::Shared(r) => r,
        }
    }
    /// The rows `pred` selects.
    pub fn search(&self, pred: &Predicate) -> Result<Selection> {
        self.search_with(pred, SearchOptions::default())
    }
    /// [`Self::search`] with options.
    pub fn search_with(&self, pred: &Predicate, opts: SearchOptions) -> Result<Selection> {
        let c = Compiled::new(pred)?;
        eval::Search::new(self.reader(), &c, opts.strategy, &self.caches).run()
    }
}

impl Searcher<'static> {
    /// A searcher holding a share of `reader` (see the type's doc).
    pub fn shared(reader: std::sync::Arc<Reader>) -> Self {
        Self {
            caches: eval::Caches::new(&reader),
            reader: Held::Shared(reader),
        }
    }
}
