//! The token-level automaton: a byte [`Dfa`] lifted to a dictionary's
//! tokens, so a row is matched by one table lookup per code, without
//! decoding it.
//!
//! `next(s, c)` is the DFA state after the bytes of token `c` from state
//! `s`. That is exact for *any* spelling of a row: a row's bytes are the
//! concatenation of its tokens, whatever codes the writer chose, so walking
//! the codes visits the same DFA states the bytes would (at token
//! boundaries). It needs no sorted, distinct or complete dictionary and no
//! canonical tokenization, which files of versions 1–3 do not promise
//! (spec/FORMAT.md §9.1, §10.1).
//!
//! The table is dense (`states × tokens` entries of `u16`) and filled
//! lazily: an entry is computed (by running the DFA over the token's bytes)
//! the first time a scan needs it, and kept. Entries are atomics so the
//! threads of one search share one table; two threads computing the same
//! entry store the same value.

use std::sync::atomic::{AtomicU16, Ordering};

use super::dfa::Dfa;
use crate::dict::TokenTable;

/// An entry not computed yet.
const UNKNOWN: u16 = u16::MAX;

/// Largest table (entries) the token path builds; beyond it a chunk is
/// matched on decoded bytes instead. 8 Mi entries = 16 MiB: e.g. 128
/// states over a 16-bit dictionary.
pub(crate) const MAX_ENTRIES: usize = 8 << 20;

/// One DFA over one dictionary's tokens.
#[derive(Debug)]
pub(crate) struct TokenDfa {
    tokens: usize,
    table: Box<[AtomicU16]>,
}

impl TokenDfa {
    /// The (empty) table of `dfa` over `tokens` tokens, or `None` when it
    /// would exceed [`MAX_ENTRIES`] or state numbers do not fit a `u16`.
    pub(crate) fn new(dfa: &Dfa, tokens: usize) -> Option<Self> {
        let n = dfa.states().checked_mul(tokens)?;
        if n > MAX_ENTRIES || dfa.states() >= UNKNOWN as usize {
            return None;
        }
        let table: Box<[AtomicU16]> = (0..n).map(|_| AtomicU16::new(UNKNOWN)).collect();
        Some(Self { tokens, table })
    }

    /// The state after token `c` (below the dictionary's token count) from
    /// state `s` (a state of `dfa`, below its state count).
    #[inline(always)]
    pub(crate) fn next(&self, dfa: &Dfa, table: &TokenTable, s: u32, c: u16) -> u32 {
        let i = s as usize * self.tokens + c as usize;
        let v = self.table[i].load(Ordering::Relaxed);
        if v != UNKNOWN {
            return v as u32;
        }
        self.fill(dfa, table, i, s, c)
    }

    #[cold]
    #[inline(never)]
    fn fill(&self, dfa: &Dfa, table: &TokenTable, i: usize, s: u32, c: u16) -> u32 {
        let t = dfa.run(s, table.token(c as usize));
        self.table[i].store(t as u16, Ordering::Relaxed);
        t
    }
}
