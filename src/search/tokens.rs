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
//! The table is dense (`states × tokens` entries of `u16`, each the state
//! plus one, 0 = not computed yet) and filled lazily: an entry is computed
//! (by running the DFA over the token's bytes) the first time a scan needs
//! it, and kept. It is allocated zeroed, so pages no scan touches cost
//! nothing. Entries are atomics so the threads of one search share one
//! table; two threads computing the same entry store the same value.

use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::OnceLock;

use super::dfa::Dfa;
use crate::dict::TokenTable;

/// Largest table (entries) the token path builds; beyond it a chunk is
/// matched on decoded bytes instead. 64 Mi entries = 128 MiB of address
/// space, allocated zeroed (untouched pages cost nothing): e.g. 1024
/// states over a 16-bit dictionary.
pub(crate) const MAX_ENTRIES: usize = 64 << 20;

/// One DFA over one dictionary's tokens.
#[derive(Debug)]
pub(crate) struct TokenDfa {
    tokens: usize,
    /// Per state, once reached: its row of `tokens` entries.
    rows: Box<[OnceLock<Box<[AtomicU16]>>]>,
}

/// `n` zeroed atomics.
fn zeroed(n: usize) -> Box<[AtomicU16]> {
    let zeroed: Box<[u16]> = vec![0u16; n].into_boxed_slice();
    let raw = Box::into_raw(zeroed) as *mut [AtomicU16];
    // SAFETY: `AtomicU16` has the same size, alignment and bit validity as
    // `u16` (its documentation), so the allocation of `n` `u16`s is an
    // allocation of `n` `AtomicU16`s with the same layout, owned once.
    unsafe { Box::from_raw(raw) }
}

impl TokenDfa {
    /// The (empty) table of `dfa` over `tokens` tokens, or `None` when it
    /// could exceed [`MAX_ENTRIES`] or a state plus one does not fit a `u16`.
    pub(crate) fn new(dfa: &Dfa, tokens: usize) -> Option<Self> {
        let n = dfa.states().checked_mul(tokens)?;
        if n > MAX_ENTRIES || dfa.states() >= u16::MAX as usize {
            return None;
        }
        let rows = (0..dfa.states()).map(|_| OnceLock::new()).collect();
        Some(Self { tokens, rows })
    }

    /// State `s`'s row.
    #[inline(always)]
    fn row(&self, s: u32) -> &[AtomicU16] {
        self.rows[s as usize].get_or_init(|| zeroed(self.tokens))
    }

    /// The state after token `c` (below the dictionary's token count) from
    /// state `s` (a state of `dfa`, below its state count).
    #[inline(always)]
    pub(crate) fn next(&self, dfa: &Dfa, table: &TokenTable, s: u32, c: u16) -> u32 {
        let e = &self.row(s)[c as usize];
        let v = e.load(Ordering::Relaxed);
        if v != 0 {
            return v as u32 - 1;
        }
        fill(dfa, table, e, s, c)
    }
    /// [`Self::matches`] over codes `range` of `codes`, read one at a time
    /// (for patterns anchored at the row's start, which most rows fail on
    /// their first code: nothing is unpacked ahead).
    #[inline]
    pub(crate) fn matches_packed(
        &self,
        dfa: &Dfa,
        table: &TokenTable,
        codes: &crate::decode::CheckedCodes<'_>,
        range: std::ops::Range<usize>,
    ) -> bool {
        let mut s = dfa.start();
        for i in range {
            if s < 2 {
                break;
            }
            s = self.next(dfa, table, s, codes.get(i));
        }
        dfa.accepts_at_end(s)
    }

    /// Walks `codes` from `dfa`'s start state, stopping in an absorbing
    /// state; returns whether the row matches. The start state's entries
    /// are loaded before the state is known (a predicted branch), so the
    /// loads of a row that stays in the start state do not wait on each
    /// other.
    #[inline]
    pub(crate) fn matches(&self, dfa: &Dfa, table: &TokenTable, codes: &[u16]) -> bool {
        let start = dfa.start();
        let base = self.row(start);
        let mut s = start;
        for &c in codes {
            if s < 2 {
                break;
            }
            if s == start {
                let v = base[c as usize].load(Ordering::Relaxed);
                s = if v != 0 {
                    v as u32 - 1
                } else {
                    self.next(dfa, table, s, c)
                };
            } else {
                s = self.next(dfa, table, s, c);
            }
        }
        dfa.accepts_at_end(s)
    }
}

/// Computes and stores entry `e` (state `s`, token `c`).
#[cold]
#[inline(never)]
fn fill(dfa: &Dfa, table: &TokenTable, e: &AtomicU16, s: u32, c: u16) -> u32 {
    let t = dfa.run(s, table.token(c as usize));
    e.store(t as u16 + 1, Ordering::Relaxed);
    t
}
