//! The matcher's two-byte index (65,536 entries, 256 KiB), recycled per
//! thread.
//!
//! A matcher is built for every dictionary a writer tries, and the log
//! codec builds several per text pool (training, the parse, each pruning
//! round): zeroing a fresh 256 KiB table each time was 41% of the
//! instructions of encoding a 16-row log column and 4% of the 21 Loghub
//! columns (callgrind, bench/LOGS.md), whatever the dictionary's size. A
//! table remembers the entries it set; when its matcher is dropped those
//! are cleared and the table is kept for the thread's next matcher, so a
//! matcher costs what its tokens touch.

use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::ops::Index;

use super::PREFIX2_COUNT;

/// Zeroed tables each thread keeps for its next matchers: 512 KiB a thread
/// that ever built a matcher, held until it exits. Two save what four did
/// (a log pool's matchers live one or two at a time: 5,063 M instructions
/// over the 21 Loghub encodes with two or four, 5,083 M with one).
const KEPT_PER_THREAD: usize = 2;

type Table = Box<[u32; PREFIX2_COUNT]>;

thread_local! {
    /// All-zero tables, ready for a new matcher.
    static ZEROED: RefCell<Vec<Table>> = const { RefCell::new(Vec::new()) };
}

/// A two-byte index: entry `p` for the prefix `u16::from_le_bytes([a, b])`.
/// Entries are only ever OR-ed into ([`Prefix2::or`]), which records the
/// ones that leave zero, so that dropping the index can restore an all-zero
/// table.
pub(super) struct Prefix2 {
    /// Taken only by `drop` (back to the thread's kept tables). Not an
    /// `Option`: the matcher reads this table at every input position, and
    /// a check there cost 6% of the encoder's instructions (callgrind).
    table: ManuallyDrop<Table>,
    /// Entries that are not zero, each once.
    touched: Vec<u16>,
}

impl Prefix2 {
    /// An all-zero index: a table the thread kept, or a fresh one.
    pub(super) fn new() -> Self {
        let kept = ZEROED.try_with(|z| z.borrow_mut().pop()).ok().flatten();
        let table = kept.unwrap_or_else(|| {
            vec![0u32; PREFIX2_COUNT]
                .into_boxed_slice()
                .try_into()
                .expect("65536 entries")
        });
        debug_assert!(table.iter().all(|&e| e == 0), "a kept table is zero");
        Self {
            table: ManuallyDrop::new(table),
            touched: Vec::new(),
        }
    }

    /// ORs `bits` into entry `p`.
    #[inline]
    pub(super) fn or(&mut self, p: u16, bits: u32) {
        let e = &mut self.table[p as usize];
        if *e == 0 && bits != 0 {
            self.touched.push(p);
        }
        *e |= bits;
    }
}

impl Index<usize> for Prefix2 {
    type Output = u32;

    #[inline(always)]
    fn index(&self, p: usize) -> &u32 {
        &self.table[p]
    }
}

impl Clone for Prefix2 {
    fn clone(&self) -> Self {
        let mut out = Self::new();
        for &p in &self.touched {
            out.or(p, self[p as usize]);
        }
        out
    }
}

impl Drop for Prefix2 {
    fn drop(&mut self) {
        // SAFETY: `drop` runs once and nothing reads `self.table` after this
        // take.
        let mut table = unsafe { ManuallyDrop::take(&mut self.table) };
        for &p in &self.touched {
            table[p as usize] = 0;
        }
        let _ = ZEROED.try_with(|z| {
            let mut z = z.borrow_mut();
            if z.len() < KEPT_PER_THREAD {
                z.push(table);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::Matcher;
    use super::*;
    use crate::dict::TokenTable;

    fn table(tokens: &[&[u8]]) -> TokenTable {
        let mut t = TokenTable::single_bytes();
        for tok in tokens {
            t.push(tok);
        }
        t
    }

    /// A matcher built on a recycled table knows only its own tokens: the
    /// entries an earlier matcher set are gone (clones recycle too).
    #[test]
    fn recycled_tables_start_empty() {
        let a = Matcher::new(&table(&[b"ab", b"abcd", b"xyz", b"q\x00"]));
        let a2 = a.clone();
        assert_eq!(a2.get(b"abcd"), a.get(b"abcd"));
        drop(a);
        drop(a2);
        let b = Matcher::new(&table(&[b"xy"]));
        assert_eq!(b.get(b"ab"), None);
        assert_eq!(b.get(b"abcd"), None);
        assert_eq!(b.get(b"q\x00"), None);
        assert_eq!(b.longest_match(b"abcd"), (u16::from(b'a'), 1));
        assert_eq!(b.longest_match(b"xyz"), (256, 2));
        drop(b);
        for _ in 0..KEPT_PER_THREAD + 2 {
            let p = Prefix2::new();
            assert!(p.table.iter().all(|&e| e == 0));
        }
    }

    /// The one `unsafe` here (taking the table in `drop`) against what a
    /// caller can do with matchers through safe calls: clone them, drop
    /// them on other threads than the one that built them, and drop them
    /// while a thread exits, after its kept tables may be gone (then the
    /// table is freed, not kept). Each matcher still answers for its own
    /// tokens only.
    #[test]
    fn matchers_dropped_anywhere_free_or_keep_their_table_once() {
        thread_local! {
            static HELD: std::cell::RefCell<Option<Matcher>> = const { std::cell::RefCell::new(None) };
        }
        let built: Vec<Matcher> = (0..8)
            .map(|i| Matcher::new(&table(&[&[b'a', b'0' + i as u8][..], b"zz9"])))
            .collect();
        std::thread::scope(|s| {
            for (i, m) in built.into_iter().enumerate() {
                s.spawn(move || {
                    let c = m.clone();
                    drop(m);
                    assert_eq!(c.get(&[b'a', b'0' + i as u8]), Some(256));
                    // Dropped at thread exit, in any order with ZEROED.
                    HELD.with(|h| *h.borrow_mut() = Some(c));
                    let fresh = Matcher::new(&table(&[b"q1"]));
                    assert_eq!(fresh.get(b"zz9"), None);
                    assert_eq!(fresh.get(&[b'a', b'0' + i as u8]), None);
                });
            }
        });
        let after = Matcher::new(&table(&[b"b2"]));
        assert_eq!(after.get(b"a0"), None);
        assert_eq!(after.get(b"b2"), Some(256));
    }
}
