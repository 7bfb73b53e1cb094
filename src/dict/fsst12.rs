//! FSST-12 dictionary training (spec/FORMAT.md §4.2 codec 3).
//!
//! The FSST training loop adapted to escape-free 12-bit codes:
//!
//! * codes `0..=255` are the single bytes, always present (no escape code, no
//!   terminator trick: every byte has a code of its own);
//! * up to [`MAX_SYMBOLS`] = 3840 learned symbols of 2..=8 bytes;
//! * a few rounds over a sample: greedy-encode (a growing share of) the
//!   sample with the current table, count each symbol's uses and each adjacent
//!   pair of symbols (and each symbol followed by the first byte of the next),
//!   make candidates of the used symbols and of the concatenations of at most
//!   8 bytes, score them by gain and keep the best;
//! * gain is charged at 1.5 bytes per emitted code: a symbol of `len` bytes
//!   used `n` times replaces `n·len` single-byte codes by `n` codes, saving
//!   `1.5·n·(len − 1)` code bytes; it costs its stored dictionary bytes
//!   ([`stored_token_cost`]), so a candidate whose
//!   gain, scaled from the sample to the whole input, does not exceed that cost
//!   is not kept.
//!
//! Encoding shares the greedy longest-prefix [`Matcher`] with OnPair. The
//! learned symbols are finally sorted lexicographically after the 256 single
//! bytes, like OnPair's.
//!
//! The sample size and the round schedule are in [`Fsst12Params::default`],
//! chosen by measurement on the corpus (the numbers are there).

use rayon::prelude::*;

use super::matcher::{count_uses, Matcher};
use super::onpair::{count_uses_keep, renumber, RowCodes, Sampled};
use super::planes::stored_token_cost;
use super::TokenTable;

/// Most learned (multi-byte) symbols: 4096 codes minus the 256 single bytes.
pub const MAX_SYMBOLS: usize = 4096 - 256;

/// Longest symbol, in bytes.
pub const MAX_SYMBOL_LEN: usize = 8;

/// Stored bytes of one symbol in format versions 1–2: an 8-byte low-plane
/// slot plus a length nibble. Version 3 stores symbols front-coded: the
/// trainer charges [`stored_token_cost`].
pub const SYMBOL_COST: f64 = 8.5;

/// Code bytes per emitted code (12 bits).
const CODE_BYTES: f64 = 1.5;

/// Parameters of [`train`].
#[derive(Clone, Debug)]
pub struct Fsst12Params {
    /// Bytes of rows in the training sample (spread over the input).
    pub sample_bytes: usize,
    /// Training rounds; round `r` (0-based) of `R` encodes the first
    /// `(r + 1) / R` of the sample.
    pub rounds: usize,
    /// Longest piece of one row taken into the sample (long rows are cut so
    /// that the sample still spans many rows).
    pub max_piece: usize,
}

impl Default for Fsst12Params {
    /// A 256 KiB sample and 5 rounds, measured on the 41 corpus columns with
    /// `examples/fsst12_tune.rs` (geomean of value bytes / (codes + stored
    /// dictionary); training time summed over the columns, one loaded 2-core
    /// machine, so times are rough):
    ///
    /// | sample | 3 rounds | 5 rounds | 8 rounds |
    /// |---|---|---|---|
    /// | 16 KiB | 1.680 (0.15 s) | 1.882 (0.16 s) | 1.831 (0.22 s) |
    /// | 64 KiB | 2.292 (0.32 s) | 2.331 (0.60 s) | 2.319 (0.77 s) |
    /// | 256 KiB | 2.469 (1.16 s) | 2.460 (1.67 s) | 2.490 (2.32 s) |
    /// | 1 MiB | 2.486 (2.67 s) | 2.483 (4.20 s) | 2.520 (5.67 s) |
    ///
    /// The published choices (16 KiB / 5 rounds, 128 KiB / 4 rounds) are too
    /// small for 3840 symbols: most symbols are seen only a few times in the
    /// sample. Past 256 KiB the ratio gains ≤ 1–2% for 2–3× the training
    /// time; the round count matters less than the sample (±1%, not monotone).
    fn default() -> Self {
        Self {
            sample_bytes: 256 << 10,
            rounds: 5,
            max_piece: 512,
        }
    }
}

/// The training sample, at most about `sample_bytes` in all: runs of about
/// `max_piece` bytes of consecutive rows, one run every `stride` input bytes,
/// so the sample spreads over the whole input; a row longer than `max_piece`
/// contributes one piece per sampling point inside it. The second value is the
/// number of input bytes the sample stands for.
fn sample<'a>(rows: &[&'a [u8]], p: &Fsst12Params) -> (Vec<&'a [u8]>, usize) {
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let mut out = Vec::new();
    if total == 0 {
        return (out, 0);
    }
    let max_piece = p.max_piece.max(1);
    if total <= p.sample_bytes && rows.iter().all(|r| r.len() <= max_piece) {
        out.extend(rows.iter().copied().filter(|r| !r.is_empty()));
        return (out, total);
    }
    let runs = p.sample_bytes.div_ceil(max_piece).max(1);
    let stride = (total / runs).max(1);
    let (mut at, mut next_at, mut taken, mut remaining) = (0usize, 0usize, 0usize, 0usize);
    for r in rows {
        let end = at + r.len();
        if r.len() > max_piece {
            remaining = 0;
            while next_at < end && taken < p.sample_bytes {
                let off = next_at.saturating_sub(at).min(r.len() - max_piece);
                out.push(&r[off..off + max_piece]);
                taken += max_piece;
                next_at += stride;
            }
        } else {
            if remaining == 0 && next_at < end && taken < p.sample_bytes {
                remaining = max_piece;
                while next_at < end {
                    next_at += stride;
                }
            }
            if remaining > 0 && !r.is_empty() {
                out.push(r);
                taken += r.len();
                remaining = remaining.saturating_sub(r.len());
            }
        }
        at = end;
        if taken >= p.sample_bytes {
            break;
        }
    }
    (out, total)
}

/// A candidate symbol: its bytes (zero padded), length and gain.
#[derive(Clone, Copy)]
struct Candidate {
    word: u64,
    len: u8,
    gain: f64,
}

/// The bytes of symbol `code` (at most 8, zero padded) as a little-endian word.
#[inline]
fn word_of(table: &TokenTable, code: usize) -> u64 {
    let w = table.word(code);
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// Trains an FSST-12 table on `rows` (the input; it may be empty).
///
/// Returns a [`TokenTable`] with the 256 single bytes at codes `0..=255`
/// followed by at most [`MAX_SYMBOLS`] learned symbols of 2..=8 bytes in
/// lexicographic order. Deterministic for equal input and parameters.
pub fn train(rows: &[&[u8]], params: &Fsst12Params) -> TokenTable {
    train_codes(rows, params, false).0
}

/// [`train`], also returning (when `want_codes` and the sample is every
/// row: inputs of at most `sample_bytes` whose rows are at most `max_piece`
/// long) the codes of every row under the returned table: the last pass's
/// codes renumbered where every symbol of a row was kept, the other rows
/// encoded (the final table is a subset of the last pass's, so a row whose
/// parse used only kept symbols parses the same: `onpair::train_codes`).
pub fn train_codes(
    rows: &[&[u8]],
    params: &Fsst12Params,
    want_codes: bool,
) -> (TokenTable, Option<RowCodes>) {
    let (sample, total) = sample(rows, params);
    let sample_bytes: usize = sample.iter().map(|r| r.len()).sum();
    if sample_bytes == 0 {
        return (TokenTable::single_bytes(), None);
    }
    // `sample` is then every non-empty row, in order (its first case).
    let whole =
        total <= params.sample_bytes && rows.iter().all(|r| r.len() <= params.max_piece.max(1));
    let rounds = params.rounds.max(1);
    let mut symbols: Vec<(u64, u8)> = Vec::new();
    // Counters kept from round to round, one per lane (at most one lane per
    // thread). Fresh per-round pair tables (up to 4 MiB each, zeroed by the
    // kernel page by page) made 80% of FSST-12's page faults and more
    // system time than its user time (bench/COMPRESS.md, round 4): a kept
    // table is emptied by the pass that reads it and grows once. Counts
    // are sums, so the result does not depend on the lane count.
    let mut lanes: Vec<Counts> = Vec::new();
    // Kept from round to round too (up to 2^20 slots).
    let mut index = CandidateIndex::default();
    let mut cands: Vec<Candidate> = Vec::new();
    let mut keys: Vec<u128> = Vec::new();
    for round in 0..rounds {
        let table = table_of(&symbols);
        let matcher = Matcher::new(&table);
        // Growing share of the sample: early rounds are cheap and coarse.
        let limit = sample_bytes * (round + 1) / rounds;
        let (mut n_rows, mut seen) = (0usize, 0usize);
        while n_rows < sample.len() && seen < limit {
            seen += sample[n_rows].len();
            n_rows += 1;
        }
        // Fixed groups of rows, a contiguous run of groups per lane.
        let groups = tasks(&sample[..n_rows]);
        let n_lanes = rayon::current_num_threads().clamp(1, groups.len().max(1));
        while lanes.len() < n_lanes {
            lanes.push(Counts::new());
        }
        let per = groups.len().div_ceil(n_lanes).max(1);
        lanes[..n_lanes]
            .par_iter_mut()
            .enumerate()
            .for_each(|(l, acc)| {
                acc.uses.clear();
                acc.uses.resize(table.len(), 0);
                for r in groups.iter().skip(l * per).take(per) {
                    acc.count(&table, &matcher, &sample[r.clone()]);
                }
            });
        let (first, rest) = lanes.split_at_mut(1);
        let Counts { uses, pairs, .. } = &mut first[0];
        for other in &mut rest[..n_lanes - 1] {
            for (x, y) in uses.iter_mut().zip(&other.uses) {
                *x += y;
            }
            pairs.reserve(other.pairs.len());
            other.pairs.drain(|k, n| pairs.add(k, n));
        }
        // Gains are scaled from the encoded share of the sample to the input.
        let scale = total as f64 / seen.max(1) as f64;
        cands.clear();
        cands.reserve(uses.len() + pairs.len());
        for (c, &n) in uses.iter().enumerate().skip(256) {
            if n > 0 {
                let len = table.token_len(c);
                cands.push(Candidate {
                    word: word_of(&table, c),
                    len: len as u8,
                    gain: f64::from(n) * CODE_BYTES * (len - 1) as f64,
                });
            }
        }
        index.reset(cands.len() + pairs.len());
        for i in 0..cands.len() {
            index.insert(&cands, cands[i].word, cands[i].len, i);
        }
        pairs.drain(|key, n| {
            let (a, b) = ((key >> 12) as usize, (key & 0xfff) as usize);
            let la = table.token_len(a);
            let len = la + table.token_len(b);
            let word = word_of(&table, a) | (word_of(&table, b) << (8 * la));
            let gain = f64::from(n) * CODE_BYTES * (len - 1) as f64;
            // A used symbol may also be a pair's concatenation, and different
            // pairs may concatenate to the same bytes: keep the larger gain.
            match index.insert(&cands, word, len as u8, cands.len()) {
                Some(i) => cands[i].gain = cands[i].gain.max(gain),
                None => cands.push(Candidate {
                    word,
                    len: len as u8,
                    gain,
                }),
            }
        });
        cands.retain(|c| c.gain * scale > stored_token_cost(c.len as usize));
        // The best gains; ties by (len, bytes) so the result is deterministic.
        // Every gain is `n × 1.5 × (len − 1)` for a count `n < 2^32`, so twice
        // it is an integer below 2^37, exact in an f64: the order (gain
        // descending, then len and bytes ascending) is that of one integer
        // key, compared faster than the f64 and the tuple.
        if cands.len() > MAX_SYMBOLS {
            keys.clear();
            keys.extend(cands.iter().map(|c| {
                let g2 = (c.gain * 2.0) as u64;
                debug_assert!(g2 < 1 << 40 && g2 as f64 == c.gain * 2.0);
                (u128::from((1u64 << 40) - 1 - g2) << 72)
                    | (u128::from(c.len) << 64)
                    | u128::from(c.word)
            }));
            keys.select_nth_unstable(MAX_SYMBOLS);
            keys.truncate(MAX_SYMBOLS);
            symbols = keys.iter().map(|&k| (k as u64, (k >> 64) as u8)).collect();
        } else {
            symbols = cands.iter().map(|c| (c.word, c.len)).collect();
        }
    }
    // A last pass with the final table drops symbols that no longer pay for
    // their slot (pair gains overestimate: the greedy parse may not use a
    // merged symbol everywhere its parts were adjacent).
    let table = table_of(&symbols);
    let matcher = Matcher::new(&table);
    let parts = tasks(&sample).into_iter().map(|r| &sample[r]).collect();
    let keep = want_codes && whole;
    let (uses, codes) = if keep {
        let (uses, codes) = count_uses_keep(&matcher, parts, table.len());
        (uses, Some(codes))
    } else {
        (count_uses(&matcher, parts, table.len()), None)
    };
    let scale = total as f64 / sample_bytes as f64;
    // Kept symbols with their codes in `table`, sorted by bytes (distinct).
    let mut learned: Vec<((u128, u8), u32)> = (256..table.len())
        .filter(|&c| {
            let len = table.token_len(c);
            f64::from(uses[c]) * scale * CODE_BYTES * (len - 1) as f64 > stored_token_cost(len)
        })
        .map(|c| (table.lex_key(c), c as u32))
        .collect();
    learned.sort_unstable_by_key(|e| e.0);
    let mut out = TokenTable::single_bytes();
    // `kept[c]`: index in `out` of `table`'s code `c`; `order`: the
    // identity here (`out` is already in its final order).
    let mut kept: Vec<u32> = (0..256).collect();
    kept.resize(table.len(), u32::MAX);
    for &(_, c) in &learned {
        kept[c as usize] = out.len() as u32;
        out.push(table.token(c as usize));
    }
    let codes = codes.map(|codes| {
        let index = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(i, _)| i as u32)
            .collect();
        let order: Vec<u32> = (0..out.len() as u32).collect();
        let sampled = Sampled {
            rows: Some(index),
            codes,
        };
        renumber(rows, sampled, &table, &kept, &order, &out)
    });
    (out, codes)
}

/// Counts of `u32` keys in an open-addressing table (linear probing) that
/// doubles when half full. Slots pack `(key + 1) << 32 | count`; 0 is empty
/// (keys are below 2^24, so no key packs to it), so a new table is zeroed
/// memory (a fresh `calloc`, no fill pass: filling with a non-zero marker
/// was 10% of FSST-12's instructions, callgrind).
struct PairCounter {
    slots: Vec<u64>,
    used: usize,
}

impl PairCounter {
    /// An empty counter of 2^15 slots (it doubles as needed and keeps its
    /// size when drained, ready for the next round).
    fn new() -> Self {
        Self::with_slots(1 << 15)
    }

    /// An empty counter of `slots` slots (a power of two).
    fn with_slots(slots: usize) -> Self {
        Self {
            slots: vec![0; slots],
            used: 0,
        }
    }

    fn len(&self) -> usize {
        self.used
    }

    #[inline]
    fn slot(key: u32, mask: usize) -> usize {
        ((u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize) & mask
    }

    /// Adds `n` to the count of `key`.
    #[inline(always)]
    fn add(&mut self, key: u32, n: u32) {
        if self.used * 2 >= self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        debug_assert!(key < 1 << 24);
        let tag = key + 1;
        let mut i = Self::slot(tag, mask);
        loop {
            let s = self.slots[i];
            if s == 0 {
                self.slots[i] = (u64::from(tag) << 32) | u64::from(n);
                self.used += 1;
                return;
            }
            if (s >> 32) as u32 == tag {
                let c = (s as u32).saturating_add(n);
                self.slots[i] = (s & !0xFFFF_FFFF) | u64::from(c);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![0; old.len() * 2];
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|&s| s != 0) {
            let mut i = Self::slot((s >> 32) as u32, mask);
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Grows the table (before any insertion) until `extra` more keys fit
    /// without a doubling.
    fn reserve(&mut self, extra: usize) {
        while (self.used + extra) * 2 >= self.slots.len() {
            self.grow();
        }
    }

    /// Calls `f` with every `(key, count)` pair, in table order, emptying
    /// the counter as it reads it (no separate clearing pass; the table
    /// keeps its size).
    fn drain(&mut self, mut f: impl FnMut(u32, u32)) {
        if self.used == 0 {
            return;
        }
        for s in &mut self.slots {
            let v = std::mem::take(s);
            if v != 0 {
                f((v >> 32) as u32 - 1, v as u32);
            }
        }
        self.used = 0;
    }
}

/// Candidate symbols by bytes: `(word, len)` → index in the candidate
/// list, the bytes compared in the list itself (4 bytes a slot: the index
/// of a round with 300k pairs is 4 MiB, not the 20 MiB of slots holding
/// their keys, bench/COMPRESS.md).
#[derive(Default)]
struct CandidateIndex {
    /// Candidate index per slot, `u32::MAX` when empty.
    at: Vec<u32>,
}

impl CandidateIndex {
    /// Empties the index, sized for `n` candidates (the memory is reused).
    fn reset(&mut self, n: usize) {
        let slots = (n * 2).next_power_of_two().max(16);
        self.at.clear();
        self.at.resize(slots, u32::MAX);
    }

    /// Records `(word, len)` at `index` unless present (`cands[..index]`
    /// holds the candidates recorded so far); returns the index already
    /// recorded for it.
    fn insert(&mut self, cands: &[Candidate], word: u64, len: u8, index: usize) -> Option<usize> {
        let mask = self.at.len() - 1;
        let h = (word ^ u64::from(len)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut i = (h >> 32) as usize & mask;
        loop {
            let at = self.at[i];
            if at == u32::MAX {
                self.at[i] = index as u32;
                return None;
            }
            let c = &cands[at as usize];
            if c.word == word && c.len == len {
                return Some(at as usize);
            }
            i = (i + 1) & mask;
        }
    }
}

/// Bytes of rows per parallel counting task of a training round: large
/// enough that merging the tasks' pair counts costs little next to counting.
const COUNT_TASK_BYTES: usize = 64 << 10;

/// Consecutive ranges of `rows` of about [`COUNT_TASK_BYTES`] each (the
/// split depends on the rows only, not on the thread count).
fn tasks(rows: &[&[u8]]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0usize, 0usize);
    for (i, r) in rows.iter().enumerate() {
        bytes += r.len();
        if bytes >= COUNT_TASK_BYTES {
            out.push(start..i + 1);
            start = i + 1;
            bytes = 0;
        }
    }
    if start < rows.len() {
        out.push(start..rows.len());
    }
    out
}

/// One training round's counts, accumulated over groups of rows: uses of
/// each code, and adjacent pairs (symbol, next symbol) and (symbol, first
/// byte of the next symbol).
struct Counts {
    uses: Vec<u32>,
    pairs: PairCounter,
    /// Scratch: one row's codes.
    codes: Vec<u16>,
}

impl Counts {
    /// Empty counters (`uses` is sized by each round; the pair table grows
    /// as needed: its size never changes a count).
    fn new() -> Self {
        Self {
            uses: Vec::new(),
            pairs: PairCounter::new(),
            codes: Vec::new(),
        }
    }

    /// Adds the counts of `rows`, encoded with `matcher` (built from `table`).
    fn count(&mut self, table: &TokenTable, matcher: &Matcher, rows: &[&[u8]]) {
        let Self { uses, pairs, codes } = self;
        for row in rows {
            codes.clear();
            matcher.encode_into(row, codes);
            let mut pos = 0usize;
            for (i, &c) in codes.iter().enumerate() {
                uses[c as usize] += 1;
                let len = table.token_len(c as usize);
                if let Some(&n) = codes.get(i + 1) {
                    let nlen = table.token_len(n as usize);
                    if len + nlen <= MAX_SYMBOL_LEN {
                        pairs.add((u32::from(c) << 12) | u32::from(n), 1);
                    }
                    // The next symbol's first byte: lets a symbol grow by one
                    // byte even when the next symbol is long.
                    if nlen > 1 && len < MAX_SYMBOL_LEN {
                        pairs.add((u32::from(c) << 12) | u32::from(row[pos + len]), 1);
                    }
                }
                pos += len;
            }
        }
    }
}

/// The single bytes followed by `symbols`.
fn table_of(symbols: &[(u64, u8)]) -> TokenTable {
    let mut t = TokenTable::single_bytes();
    for &(word, len) in symbols {
        t.push(&word.to_le_bytes()[..len as usize]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<u8>> {
        (0..4000)
            .map(|i| {
                format!(
                    "user{} logged in from 10.0.{}.{} ok",
                    i % 37,
                    i % 7,
                    i % 250
                )
                .into_bytes()
            })
            .collect()
    }

    fn check(t: &TokenTable) {
        assert!(t.len() <= 4096);
        for b in 0..256 {
            assert_eq!(t.token(b), &[b as u8]);
        }
        let mut seen = std::collections::HashSet::new();
        for tok in t.iter() {
            assert!((1..=8).contains(&tok.len()), "{tok:?}");
            assert!(seen.insert(tok.to_vec()), "duplicate {tok:?}");
        }
    }

    /// `train_codes`'s codes are the greedy codes of every row (empty
    /// rows included) under the returned table.
    #[test]
    fn train_codes_match_encoding() {
        let rows = rows();
        let mut refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        refs.insert(3, b"");
        let p = Fsst12Params::default();
        let (t, codes) = train_codes(&refs, &p, true);
        assert_eq!(t, train(&refs, &p));
        let codes = codes.expect("the sample is every row");
        let want = RowCodes::encode(&Matcher::new(&t), &refs);
        assert_eq!(codes.codes, want.codes);
        assert_eq!(codes.ends, want.ends);
    }

    #[test]
    fn empty_input() {
        let none: Vec<&[u8]> = vec![];
        assert_eq!(
            train(&none, &Fsst12Params::default()),
            TokenTable::single_bytes()
        );
        let empty: Vec<&[u8]> = vec![b"", b""];
        assert_eq!(
            train(&empty, &Fsst12Params::default()),
            TokenTable::single_bytes()
        );
    }

    #[test]
    fn learns_and_round_trips() {
        let rows = rows();
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
        let t = train(&refs, &Fsst12Params::default());
        check(&t);
        assert!(t.len() > 300, "only {} symbols", t.len() - 256);
        assert_eq!(t, train(&refs, &Fsst12Params::default()), "deterministic");
        let m = Matcher::new(&t);
        let (mut codes, mut n) = (Vec::new(), 0usize);
        let mut bytes = 0usize;
        for r in &refs {
            codes.clear();
            m.encode_into(r, &mut codes);
            n += codes.len();
            bytes += r.len();
            let dec: Vec<u8> = codes
                .iter()
                .flat_map(|&c| t.token(c as usize).iter().copied())
                .collect();
            assert_eq!(&dec, r);
        }
        // Repetitive text: well over 3 bytes per code.
        assert!(bytes as f64 / n as f64 > 3.0, "{bytes} bytes in {n} codes");
    }

    #[test]
    fn long_rows_are_sampled_in_pieces() {
        let long: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{} ", i % 1000).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = vec![&long];
        let p = Fsst12Params {
            sample_bytes: 16 << 10,
            ..Fsst12Params::default()
        };
        let (s, total) = sample(&refs, &p);
        assert_eq!(total, long.len());
        let taken: usize = s.iter().map(|r| r.len()).sum();
        assert!(
            taken <= (16 << 10) + p.max_piece && taken > 8 << 10,
            "{taken}"
        );
        assert!(s.iter().all(|r| r.len() <= p.max_piece));
        check(&train(&refs, &p));
    }
}
