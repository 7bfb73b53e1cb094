//! Evaluating a compiled predicate over a file: one task per chunk and,
//! inside a coded chunk, one per block of [`BLOCK`] rows (rayon), each
//! writing its own words of the chunk's bitmap, so the result does not
//! depend on the thread count.

use std::sync::OnceLock;

use rayon::prelude::*;

use super::anchor::{self, AnchorFlags};
use super::compiled::{Compiled, Test};
use super::dfa::Dfa;
use super::index::{self, ByteIndex, ChunkStats};
use super::literal::{Literal, FIRST_NO, FIRST_YES};
use super::sparse;

use super::tokens::TokenDfa;
use super::{Selection, Strategy};
use crate::error::Result;
use crate::read::{ChunkKind, ChunkView, Reader};

// Chunks of the kinds without codes of the file's dictionaries.
mod kinds;
// Plain substrings that many rows hold, settled by their tokens.
mod sure;
// The decode path: blocks decoded in pieces and matched.
mod pieces;

/// Rows per task in a coded chunk (a multiple of 64: each task owns whole
/// bitmap words).
const BLOCK: usize = 4096;

/// Codes per dictionary token a chunk needs before anchor tokens are
/// computed for it (finding them reads every token a few times).
const ANCHOR_MIN_CODES_PER_TOKEN: usize = 16;

/// Below this many codes per dictionary token, a chunk takes the decode
/// path (measured on the 2,000-row Loghub columns, ~12 codes per token:
/// decode + memmem 0.054 ms against 0.18 ms for building the tables and
/// anchors and scanning; equality 0.05 ms against 0.14 ms).
const SMALL_CODES_PER_TOKEN: usize = 16;

/// The anchor scan gives up on a block when more than one code in this
/// many is an anchor token (the candidates are then most rows).
const SCAN_BUDGET_SHARE: usize = 16;

/// The sparse path's cost model, in bytes of the decode path (decoding and
/// searching one byte of a block, ~0.12–0.24 ns): a candidate row is
/// decoded and matched on its own, a fixed cost of about this many plus
/// [`SPARSE_CODE_COST`] per code. Probes of 2026-12-02 on the development VM (sparse against
/// decode path, every row forced sparse): `dbtext_city` (9-byte rows)
/// "GRA", 830 candidate code positions in 32,483 codes, 38.7 against
/// 30.0 µs (~40 ns a candidate); `loghub_Apache_2k` (83-byte rows)
/// "Mon Dec ", 949 in 15,396, 38.5 against 20.3 µs; ":24:", 110
/// candidates, 11.6 against 15.9 µs.
const SPARSE_ROW_COST: usize = 192;

/// A candidate row's cost per code, in the same bytes: its codes unpacked
/// and decoded one at a time, then searched (`tpch_sf1_ps_comment`, 124-byte
/// rows of ~12 codes, "ickly special fo": 16,327 candidate positions took
/// 2.4 ms on the sparse path against 1.76 ms decoding, ~125 ns a
/// candidate; `nltk_speeches_en`, ~48 codes a row, "r, unemploymen":
/// 1,765, 0.69 against 0.47 ms).
const SPARSE_CODE_COST: usize = 48;

/// Bytes decoded and matched at a time on the decode path: within a
/// core's L2 cache, so the match reads the decoder's output there.
const DECODE_PIECE: usize = 64 * 1024;

/// Room past a decoded block given to the decoder (its fast loop needs
/// 64 codes × 16 bytes of room).
const DECODE_SLACK: usize = 1024 + 16;

/// A hit's fixed cost on the local sparse path (`Block::sparse_local`:
/// its row found, a window of codes decoded and searched), in the same
/// bytes.
const SPARSE_HIT_COST: usize = 96;

/// The scan's cost per code, in eighths of a decoded byte (the filtered
/// scan, 12-bit codes: ~0.3 ns per code on the probes above).
const SPARSE_SCAN_EIGHTHS: u64 = 12;

/// The sparse path runs on chunks of at least this many codes per
/// dictionary token: below, building the byte index and the frequencies
/// (once per `Searcher`) costs about as much as decoding the chunk.
const SPARSE_MIN_CODES_PER_TOKEN: usize = 4;

/// What a [`super::Searcher`] keeps across searches (its doc): per chunk
/// the row byte boundaries and code frequencies, per dictionary the byte
/// index of its tokens.
#[derive(Debug)]
pub(crate) struct Caches {
    bb: Vec<OnceLock<Vec<u32>>>,
    stats: Vec<OnceLock<ChunkStats>>,
    index: Vec<OnceLock<ByteIndex>>,
}

impl Caches {
    pub(crate) fn new(reader: &Reader) -> Self {
        let n = reader.num_chunks();
        Self {
            bb: (0..n).map(|_| OnceLock::new()).collect(),
            stats: (0..n).map(|_| OnceLock::new()).collect(),
            index: (0..reader.num_dictionaries())
                .map(|_| OnceLock::new())
                .collect(),
        }
    }
}

thread_local! {
    /// Each thread's buffer for decoded blocks (reused: never zeroed, never
    /// the whole column).
    static DECODED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One search over one reader.
pub(crate) struct Search<'a> {
    pub(crate) reader: &'a Reader,
    pub(crate) c: &'a Compiled,
    pub(crate) strategy: Strategy,
    /// Kept by a [`super::Searcher`] across searches.
    caches: &'a Caches,
    /// Per dictionary, once needed: its token tables, one per automaton
    /// (`None`: too large, match on decoded bytes).
    tables: Vec<OnceLock<Option<Vec<TokenDfa>>>>,
    /// Per dictionary, once needed: its anchor tokens (`None`: no anchor).
    anchors: Vec<OnceLock<Option<AnchorFlags>>>,
    /// Per dictionary, once needed: the tokens that hold a plain substring
    /// (`None`: none can).
    sure: Vec<OnceLock<Option<sure::Holding>>>,
}

/// How one coded chunk is matched.
enum Path<'t> {
    /// No row can match (before negation).
    Never,
    /// Walk the codes through the token tables (of the rows that hold an
    /// anchor token, when there are anchor tokens).
    Tokens(&'t [Dfa], &'t [TokenDfa], Option<&'t AnchorFlags>),
    /// Decode blocks of rows and match their bytes.
    Decode,
    /// Compare each row's tokens with an equality or prefix literal.
    Literal(&'t Literal),
    /// A pattern that requires a literal: decode and match only the rows
    /// that hold one of a few codes (`sparse`, `index::plan`).
    /// `pos`: the literal's byte each of the codes covers, when there is
    /// one literal and the pattern is that plain substring (each hit is
    /// then checked around its code, not in its whole row).
    Sparse(sparse::CodeSet, Option<usize>),
    /// A plain substring many rows hold: the rows with a token that holds
    /// it settled without decoding, the others decoded (`sure`).
    Sure(&'t sure::Holding),
}

impl<'a> Search<'a> {
    pub(crate) fn new(
        reader: &'a Reader,
        c: &'a Compiled,
        strategy: Strategy,
        caches: &'a Caches,
    ) -> Self {
        let d = reader.num_dictionaries();
        Self {
            reader,
            c,
            strategy,
            caches,
            tables: (0..d).map(|_| OnceLock::new()).collect(),
            anchors: (0..d).map(|_| OnceLock::new()).collect(),
            sure: (0..d).map(|_| OnceLock::new()).collect(),
        }
    }

    pub(crate) fn run(&self) -> Result<Selection> {
        let n = self.reader.num_chunks();
        let parts: Vec<Vec<u64>> = (0..n)
            .into_par_iter()
            .map(|i| self.chunk(i))
            .collect::<Result<_>>()?;
        let mut sel = Selection::empty(self.reader.rows());
        for (i, bits) in parts.iter().enumerate() {
            let info = self.reader.chunk_info(i);
            sel.or_at(info.first_row, bits, info.entry.rows as u64);
        }
        sel.recount();
        Ok(sel)
    }

    /// Chunk `i`'s bitmap (negation and nulls applied).
    pub(crate) fn chunk(&self, i: usize) -> Result<Vec<u64>> {
        let view = self.reader.chunk(i)?;
        let rows = view.entry().rows as usize;
        let mut bits = vec![0u64; rows.div_ceil(64)];
        match view.kind() {
            ChunkKind::ValueDict => self.value_dict(view, &mut bits),
            ChunkKind::Coded => self.coded(view, &mut bits)?,
            ChunkKind::LogTemplates => {
                let matched = match view.log_column() {
                    Some(col) if self.strategy != Strategy::Decode => {
                        self.templates(col, view, &mut bits)?
                    }
                    _ => false,
                };
                if !matched {
                    self.decoded(i, &mut bits)?;
                }
            }
        }
        Ok(bits)
    }

    /// The token tables of `view`'s dictionary, when the token path fits.
    fn tables(&self, view: &ChunkView<'_>) -> Option<&[TokenDfa]> {
        let Test::Automata { .. } = &self.c.test else {
            return None;
        };
        if !self.c.automata {
            return None;
        }
        let dfas = self.c.dfas();
        let d = view.entry().dict as usize;
        let n = view.dictionary().num_tokens() as usize;
        self.tables[d]
            .get_or_init(|| dfas.iter().map(|f| TokenDfa::new(f, n)).collect())
            .as_deref()
    }

    /// The anchor tokens of `view`'s dictionary, when the pattern has an
    /// anchor and the chunk is long enough next to its dictionary for them
    /// to pay (computing them reads every token once).
    fn anchors(&self, view: &ChunkView<'_>) -> Option<&AnchorFlags> {
        // A start-anchored pattern walks each row's first codes instead.
        if self.c.start_anchored {
            return None;
        }
        let a = self.c.anchor.as_ref()?;
        let dict = view.dictionary();
        if (view.entry().codes as usize) < ANCHOR_MIN_CODES_PER_TOKEN * dict.num_tokens() as usize {
            return None;
        }
        self.anchors[view.entry().dict as usize]
            .get_or_init(|| a.tokens(dict.table()))
            .as_ref()
    }

    /// The sparse path's codes for `view`, when the pattern requires a
    /// literal, is not anchored at the row's start (those walk each row's
    /// first codes) and is not an equality or prefix literal (the literal
    /// path), and the chunk's plan fits the scan and, under
    /// [`Strategy::Auto`], pays: the scan of every code
    /// ([`SPARSE_SCAN_EIGHTHS`]) plus its candidate code positions (the
    /// plan's weight, exact for the chunk), each costed as an average row's
    /// codes ([`SPARSE_CODE_COST`]) plus [`SPARSE_ROW_COST`], within three
    /// quarters of the
    /// chunk's bytes (the decode path's cost). `Some(empty)`: no row can
    /// match.
    fn sparse_plan(&self, view: &ChunkView<'_>) -> Option<(Vec<u16>, Option<usize>)> {
        let forced = match self.strategy {
            Strategy::Auto => false,
            Strategy::Sparse => true,
            _ => return None,
        };
        if self.c.start_anchored || self.c.literal.is_some() {
            return None;
        }
        let a = self.c.anchor.as_ref()?;
        let e = view.entry();
        let dict = view.dictionary();
        let tokens = dict.num_tokens() as usize;
        if !forced && (e.codes as usize) < SPARSE_MIN_CODES_PER_TOKEN * tokens {
            return None;
        }
        let table = dict.table();
        let idx = self.caches.index[e.dict as usize].get_or_init(|| ByteIndex::new(table));
        let stats = self.caches.stats[view.id() as usize]
            .get_or_init(|| ChunkStats::new(&view.codes(), e.codes as usize, table));
        let rows = (e.rows as u64).max(1);
        let row_codes = e.codes as u64 / rows;
        // A plain substring checks each hit in a window of about the
        // literal's bytes and a token each side (`Block::sparse_local`),
        // other patterns the whole row.
        let local = a.lits.len() == 1 && self.c.block_finder().is_some();
        let row_cost = if local {
            let per_code = (e.bytes / (e.codes as u64).max(1)).max(1);
            let n = a.lits[0].len() as u64;
            let win = (n + 2 * per_code).div_ceil(per_code) + 1;
            row_codes.min(win) * SPARSE_CODE_COST as u64 + SPARSE_HIT_COST as u64
        } else {
            row_codes * SPARSE_CODE_COST as u64 + SPARSE_ROW_COST as u64
        };
        let scan = e.codes as u64 * SPARSE_SCAN_EIGHTHS / 8;
        // The most candidate code positions that can pay.
        let max_weight = match forced {
            true => u64::MAX,
            false => (e.bytes / 4 * 3).saturating_sub(scan) / row_cost,
        };
        let plan = index::plan(a, table, idx, stats, max_weight)?;
        // Each hit checked around its code (a plain substring): costed
        // as the codes that can hold an occurrence through it.
        let pos = plan.pos.filter(|_| self.c.block_finder().is_some());
        if plan.codes.is_empty() {
            return Some((plan.codes, pos));
        }
        (plan.codes.len() <= sparse::MAX_CODES && plan.weight <= max_weight)
            .then_some((plan.codes, pos))
    }

    fn path<'t>(&'t self, view: &ChunkView<'_>) -> Path<'t> {
        // A chunk with few codes per dictionary token: building the token
        // tables and anchors would cost more than decoding it, so it takes
        // the decode path.
        let e = view.entry();
        let small =
            (e.codes as usize) < SMALL_CODES_PER_TOKEN * view.dictionary().num_tokens() as usize;
        // A pattern that requires a literal: the sparse scan when the
        // chunk's plan is small and its candidates few (bench/SEARCH.md).
        if let Some((codes, pos)) = self.sparse_plan(view) {
            if codes.is_empty() {
                return Path::Never;
            }
            return Path::Sparse(sparse::CodeSet::new(&codes, view.codes().bits()), pos);
        }
        if matches!(self.strategy, Strategy::Auto | Strategy::Sure) {
            if let Some(h) = self.sure_plan(view, self.strategy == Strategy::Sure) {
                return Path::Sure(h);
            }
        }
        let auto = matches!(
            self.strategy,
            Strategy::Auto | Strategy::Sparse | Strategy::Sure
        );
        // Otherwise a plain substring takes the decode path: one memmem
        // pass over decoded blocks beat the anchor scan on the corpus as a
        // whole (bench/SEARCH.md); the token path serves what memmem cannot.
        let tables = match self.strategy {
            Strategy::Decode => None,
            _ if auto && (small || self.c.block_finder().is_some()) => None,
            _ => self.tables(view),
        };
        if let (true, Some(l)) = (auto, &self.c.literal) {
            // Equality and prefix: the literal compared with each row's
            // tokens (no table to build, so small chunks too).
            return Path::Literal(l);
        }
        match (&self.c.test, tables) {
            (Test::Never, _) => Path::Never,
            (Test::Automata { .. }, Some(t)) => Path::Tokens(self.c.dfas(), t, self.anchors(view)),
            _ => Path::Decode,
        }
    }

    /// A coded chunk, block by block.
    fn coded(&self, view: ChunkView<'_>, bits: &mut [u64]) -> Result<()> {
        let rows = view.entry().rows as usize;
        let path = self.path(&view);
        let decoded;
        let cb = match view.row_code_bounds_cached() {
            Some(cb) => cb,
            None => {
                decoded = view.row_code_bounds()?;
                &decoded[..]
            }
        };
        // Row byte boundaries: decoded once per chunk, when a block first
        // needs them (the decode path; the token path without anchors,
        // whose length filter skips rows too long or too short to match).
        let bb = &self.caches.bb[view.id() as usize];
        let validity = view.validity();
        // An equality or prefix: what each code says as a row's first code
        // (most rows decided by one lookup), when the chunk has rows enough
        // to pay for a pass over its dictionary.
        let first = match path {
            // (An empty literal is decided at a row's first code anyway.)
            Path::Literal(l) if l.n > 0 => {
                // The rows compared: an equality's are those of its length,
                // estimated from up to `FIRST_CODES_SAMPLE` rows spread over
                // the chunk (counting them all cost as much as the search on
                // prose columns).
                let compared = if l.prefix || rows == 0 {
                    rows
                } else {
                    if bb.get().is_none() {
                        let _ = bb.set(view.row_byte_bounds()?);
                    }
                    let b = bb.get().expect("just set");
                    let step = rows.div_ceil(FIRST_CODES_SAMPLE);
                    let seen = (0..rows).step_by(step);
                    let (n, hits) = seen.fold((0, 0), |(n, h), r| {
                        (n + 1, h + ((b[r + 1] - b[r]) as usize == l.n) as usize)
                    });
                    rows * hits / n.max(1)
                };
                let table = view.dictionary().table();
                (compared >= FIRST_CODES_ROWS * table.lens().len()).then(|| {
                    let first = l.first_codes(table.words(), table.lens());
                    // An equality's rows whose first token agrees are
                    // then checked on their last one (rows sharing a
                    // leading token: `Customer#0…`, a path, a date).
                    let last = (!l.prefix).then(|| l.last_codes(table.words(), table.lens()));
                    (first, last)
                })
            }
            _ => None,
        };
        bits.par_chunks_mut(BLOCK / 64)
            .enumerate()
            .try_for_each(|(k, words)| {
                let lo = k * BLOCK;
                let hi = rows.min(lo + BLOCK);
                let ctx = Block {
                    view: &view,
                    c: self.c,
                    forced: self.strategy == Strategy::Sparse,
                    cb,
                    bb,
                    first: first.as_ref().map(|f| &f.0[..]),
                    last: first.as_ref().and_then(|f| f.1.as_deref()),
                    validity,
                    lo,
                    hi,
                };
                ctx.run(&path, words)
            })
    }
}

/// A chunk's first-code table for an equality or prefix is built when it
/// compares at least this many rows per code of its dictionary (an
/// equality's rows of its length, a prefix's every row): an entry costs
/// about 0.85 ns, and a row decided by its first code spares about 0.8 ns
/// of its compare (100,000 rows of 4,096 codes: 20–25 % less; a prefix of
/// 8,215 prose rows with 33,267 codes, built there, took twice as long; 9,000
/// rows of 4,096 codes, built, 5–20 % more).
const FIRST_CODES_ROWS: usize = 4;

/// Rows sampled to estimate how many rows an equality compares.
const FIRST_CODES_SAMPLE: usize = 1024;

/// One block of rows of a coded chunk.
struct Block<'b, 'v> {
    view: &'b ChunkView<'v>,
    c: &'b Compiled,
    /// [`Strategy::Sparse`]: the sparse path never falls back.
    forced: bool,
    cb: &'b [u32],
    bb: &'b OnceLock<Vec<u32>>,
    /// [`Path::Literal`]: per code, what it says as a row's first code
    /// (`Literal::first_codes`).
    first: Option<&'b [u8]>,
    /// With `first`, for an equality: per code, whether a row equal to the
    /// literal can end with it (`Literal::last_codes`).
    last: Option<&'b [bool]>,
    validity: Option<&'b [u8]>,
    lo: usize,
    hi: usize,
}

impl Block<'_, '_> {
    #[inline]
    fn valid(&self, r: usize) -> bool {
        match self.validity {
            Some(v) => v[r / 8] >> (r % 8) & 1 == 1,
            None => true,
        }
    }

    /// The chunk's row byte boundaries.
    fn bb(&self) -> Result<&[u32]> {
        if let Some(v) = self.bb.get() {
            return Ok(v);
        }
        // Two blocks may both decode them; the first stored is kept.
        let v = self.view.row_byte_bounds()?;
        let _ = self.bb.set(v);
        Ok(self.bb.get().expect("just set"))
    }

    /// Writes the block's selection given the rows the pattern matched
    /// (ascending). `nonnull`: the hits are known not to be null rows (found
    /// in their codes or bytes, which a null row lacks), else null hits
    /// (e.g. of a pattern that matches the empty row) are dropped here.
    fn finish(&self, words: &mut [u64], hits: &[usize], nonnull: bool) {
        let lo = self.lo;
        if !self.c.negated {
            for &r in hits {
                if nonnull || self.valid(r) {
                    words[(r - lo) / 64] |= 1 << ((r - lo) % 64);
                }
            }
            return;
        }
        // Every valid row of the block, then the matches cleared.
        let n = self.hi - lo;
        for (k, w) in words.iter_mut().enumerate() {
            let rows = (n - 64 * k).min(64);
            *w = if rows == 64 {
                u64::MAX
            } else {
                (1 << rows) - 1
            };
            if let Some(v) = self.validity {
                // `lo` is a multiple of 64: the row's validity bytes start
                // at a byte boundary.
                let at = (lo + 64 * k) / 8;
                let mut b = [0u8; 8];
                let take = (v.len() - at).min(8);
                b[..take].copy_from_slice(&v[at..at + take]);
                *w &= u64::from_le_bytes(b);
            }
        }
        for &r in hits {
            words[(r - lo) / 64] &= !(1 << ((r - lo) % 64));
        }
    }

    fn run(&self, path: &Path<'_>, words: &mut [u64]) -> Result<()> {
        let (lo, hi) = (self.lo, self.hi);
        match path {
            Path::Never => self.finish(words, &[], false),
            Path::Tokens(dfas, tables, _) if self.c.start_anchored => {
                // Most rows fail on their first code: walk each row's codes
                // from the packed stream, one at a time.
                let checked = self.view.codes();
                let table = self.view.dictionary().table();
                // An exact length window (equality, LIKE without `%`) first.
                let bb = if self.c.max_len < usize::MAX {
                    Some(self.bb()?)
                } else {
                    None
                };
                let (min, max) = (self.c.min_len, self.c.max_len);
                let hits: Vec<usize> = (lo..hi)
                    .filter(|&r| match bb {
                        Some(bb) => (min..=max).contains(&((bb[r + 1] - bb[r]) as usize)),
                        None => true,
                    })
                    .filter(|&r| {
                        let codes = self.cb[r] as usize..self.cb[r + 1] as usize;
                        dfas.iter()
                            .zip(tables.iter())
                            .all(|(d, t)| t.matches_packed(d, table, &checked, codes.clone()))
                    })
                    .collect();
                self.finish(words, &hits, false);
            }
            Path::Tokens(dfas, tables, Some(af)) => {
                // Rows whose codes cover every anchor position: a scan of
                // the packed codes, OR-ing each row's flags.
                let checked = self.view.codes();
                let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
                let mut cand: Vec<usize> = Vec::new();
                // Anchor tokens too common for the scan to pay: stop.
                let budget = (c1 - c0) / SCAN_BUDGET_SHARE;
                let (mut r, mut acc, mut calls) = (lo, 0u8, 0usize);
                anchor::scan(
                    checked.bits(),
                    checked.packed(),
                    c0..c1,
                    &af.flags,
                    |at, x| {
                        calls += 1;
                        if self.cb[r + 1] as usize <= at {
                            if acc == af.full {
                                cand.push(r);
                            }
                            r += 1;
                            while self.cb[r + 1] as usize <= at {
                                r += 1;
                            }
                            acc = 0;
                        }
                        acc |= x;
                        calls < budget
                    },
                );
                if calls >= budget {
                    return self.run(&Path::Tokens(dfas, tables, None), words);
                }
                if acc == af.full {
                    cand.push(r);
                }
                // The candidates' codes through the automata.
                let table = self.view.dictionary().table();
                let mut codes: Vec<u16> = Vec::new();
                cand.retain(|&r| {
                    let (a, b) = (self.cb[r] as usize, self.cb[r + 1] as usize);
                    codes.resize(b - a, 0);
                    checked.unpack(a, &mut codes);
                    dfas.iter()
                        .zip(tables.iter())
                        .all(|(d, t)| t.matches(d, table, &codes))
                });
                self.finish(words, &cand, true);
            }
            Path::Tokens(dfas, tables, None) => {
                let table = self.view.dictionary().table();
                let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
                let mut codes = vec![0u16; c1 - c0];
                self.view.codes().unpack(c0, &mut codes);
                // An exact length filter (equality, fixed-width LIKE) from
                // the row byte boundaries; other rows are only walked.
                let bb = if self.c.max_len < usize::MAX {
                    Some(self.bb()?)
                } else {
                    None
                };
                let mut hits = Vec::new();
                for r in lo..hi {
                    if let Some(bb) = bb {
                        let n = (bb[r + 1] - bb[r]) as usize;
                        if n < self.c.min_len || n > self.c.max_len {
                            continue;
                        }
                    }
                    let (a, b) = (self.cb[r] as usize - c0, self.cb[r + 1] as usize - c0);
                    let row = &codes[a..b];
                    if dfas
                        .iter()
                        .zip(tables.iter())
                        .all(|(d, t)| t.matches(d, table, row))
                    {
                        hits.push(r);
                    }
                }
                self.finish(words, &hits, false);
            }
            Path::Literal(l) => {
                let codes = self.view.codes();
                let table = self.view.dictionary().table();
                let (tw, tl) = (table.words(), table.lens());
                // Equality: only rows of the literal's length are compared.
                let bb = if l.prefix { None } else { Some(self.bb()?) };
                let mut hits = Vec::new();
                let length_ok =
                    |r: usize| bb.map_or(true, |bb| (bb[r + 1] - bb[r]) as usize == l.n);
                match self.first {
                    // The first code decides most rows; the others are
                    // compared token by token.
                    Some(first) => {
                        for r in lo..hi {
                            if !length_ok(r) {
                                continue;
                            }
                            let (a, b) = (self.cb[r] as usize, self.cb[r + 1] as usize);
                            let says = if a < b {
                                first.get(codes.get(a) as usize).copied()
                            } else {
                                None
                            };
                            let last_ok = |b: usize| {
                                self.last.map_or(true, |last| {
                                    last.get(codes.get(b - 1) as usize).copied().unwrap_or(true)
                                })
                            };
                            let hit = match says {
                                Some(FIRST_NO) => false,
                                Some(FIRST_YES) => true,
                                _ if a < b && !last_ok(b) => false,
                                _ => l.matches(tw, tl, (a..b).map(|i| codes.get(i))),
                            };
                            if hit {
                                hits.push(r);
                            }
                        }
                    }
                    None => {
                        for r in lo..hi {
                            if !length_ok(r) {
                                continue;
                            }
                            let (a, b) = (self.cb[r] as usize, self.cb[r + 1] as usize);
                            if l.matches(tw, tl, (a..b).map(|i| codes.get(i))) {
                                hits.push(r);
                            }
                        }
                    }
                }
                self.finish(words, &hits, false);
            }
            Path::Sparse(want, None) => return self.sparse(want, words),
            Path::Sparse(want, Some(p)) => return self.sparse_local(want, *p, words),
            Path::Decode => return self.decode(words),
            Path::Sure(h) => return self.sure(h, words),
        }
        Ok(())
    }

    /// The sparse path: the rows holding one of the codes `want` (a
    /// necessary condition, `anchor`), each decoded and matched; the
    /// block's decode path when the candidates cost too much
    /// ([`SPARSE_ROW_COST`]).
    fn sparse(&self, want: &sparse::CodeSet, words: &mut [u64]) -> Result<()> {
        let (lo, hi) = (self.lo, self.hi);
        let f = self.c.block_finder();
        let codes = self.view.codes();
        let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
        let bb = self.bb()?;
        let budget = if self.forced {
            usize::MAX
        } else {
            (bb[hi] - bb[lo]) as usize / 4 * 3
        };
        let (mut cand, mut r, mut cost) = (Vec::new(), lo, 0usize);
        sparse::scan(codes.bits(), codes.packed(), c0..c1, want, |at| {
            while self.cb[r + 1] as usize <= at {
                r += 1;
            }
            if cand.last() == Some(&r) {
                return true;
            }
            cand.push(r);
            let n = (self.cb[r + 1] - self.cb[r]) as usize;
            cost = cost.saturating_add(n * SPARSE_CODE_COST + SPARSE_ROW_COST);
            cost <= budget
        });
        if cost > budget {
            return self.decode(words);
        }
        let table = self.view.dictionary().table();
        let (tw, tl) = (table.words(), table.lens());
        DECODED.with(|cell| {
            let mut buf = cell.borrow_mut();
            cand.retain(|&r| {
                // The row decoded inline, one 16-byte token word per code
                // (16 bytes of slack): a decoder call per row cost ~50 ns
                // of setup, more than a short row's bytes.
                let n = (bb[r + 1] - bb[r]) as usize;
                if buf.len() < n + 16 {
                    buf.resize(n + 16, 0);
                }
                let mut pos = 0;
                for i in self.cb[r] as usize..self.cb[r + 1] as usize {
                    let c = codes.get(i) as usize;
                    let len = tl[c] as usize;
                    if pos + 16 > buf.len() {
                        // Only with lengths inconsistent with `bb`.
                        buf.resize(pos + 16, 0);
                    }
                    buf[pos..pos + 16].copy_from_slice(&tw[c]);
                    pos += len;
                }
                let row = &buf[..pos];
                match f {
                    Some(f) => f.find(row).is_some(),
                    None => self.c.pattern_matches(row),
                }
            });
        });
        self.finish(words, &cand, true);
        Ok(())
    }

    /// The sparse path of a plain substring whose plan's codes all cover
    /// its byte `p`: each hit is checked in a window of its row around its
    /// code (the codes holding the bytes from `p` before the token to
    /// `n - p - 1` after its end), not in the whole row. Exact: an
    /// occurrence anywhere in a row has its byte `p` in some token, which
    /// covers the literal's byte `p` and so is one of the plan's codes,
    /// i.e. a hit whose window holds that occurrence. The block's decode
    /// path when the hits cost more than three quarters of its bytes.
    fn sparse_local(&self, want: &sparse::CodeSet, p: usize, words: &mut [u64]) -> Result<()> {
        let (lo, hi) = (self.lo, self.hi);
        let f = self.c.block_finder().expect("a plain substring");
        let n = f.needle().len();
        let codes = self.view.codes();
        let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
        let bb = self.bb()?;
        let bytes = (bb[hi] - bb[lo]) as usize;
        // The hits are weighed against decoding the whole block: the chunk's
        // plan already kept a quarter of its bytes for the scan. With three
        // quarters here, blocks of clustered hits (`dbtext_c_name` "060",
        // sorted ids) scanned, gave up midway and decoded: slower than
        // either path.
        let budget = if self.forced { usize::MAX } else { bytes };
        // A window's codes, about: the literal's bytes and a token on each
        // side, at the block's bytes per code.
        let per_code = (bytes / (c1 - c0).max(1)).max(1);
        let win = (n + 2 * per_code).div_ceil(per_code) + 1;
        let (mut hits, mut r, mut cost) = (Vec::new(), lo, 0usize);
        sparse::scan(codes.bits(), codes.packed(), c0..c1, want, |at| {
            while self.cb[r + 1] as usize <= at {
                r += 1;
            }
            hits.push((r as u32, at as u32));
            let k = (self.cb[r + 1] - self.cb[r]) as usize;
            cost = cost.saturating_add(k.min(win) * SPARSE_CODE_COST + SPARSE_HIT_COST);
            cost <= budget
        });
        if cost > budget {
            return self.decode(words);
        }
        let table = self.view.dictionary().table();
        let (tw, tl) = (table.words(), table.lens());
        let mut rows: Vec<usize> = Vec::new();
        DECODED.with(|cell| {
            let mut buf = cell.borrow_mut();
            for &(r, at) in &hits {
                let (r, at) = (r as usize, at as usize);
                if rows.last() == Some(&r) {
                    continue;
                }
                let (a, b) = (self.cb[r] as usize, self.cb[r + 1] as usize);
                // Back to a code at least `p` bytes before the hit's token
                // (or the row's first).
                let (mut j, mut back) = (at, 0usize);
                while j > a && back < p {
                    j -= 1;
                    back += tl[codes.get(j) as usize] as usize;
                }
                // Forward to the last byte an occurrence through the hit's
                // token can reach (or the row's end).
                let need = back + tl[codes.get(at) as usize] as usize + (n - p - 1);
                if buf.len() < need + 32 {
                    buf.resize(need + 32, 0);
                }
                let mut pos = 0;
                while j < b && pos < need {
                    let c = codes.get(j) as usize;
                    buf[pos..pos + 16].copy_from_slice(&tw[c]);
                    pos += tl[c] as usize;
                    j += 1;
                }
                if f.find(&buf[back.saturating_sub(p)..pos]).is_some() {
                    rows.push(r);
                }
            }
        });
        self.finish(words, &rows, true);
        Ok(())
    }
}
