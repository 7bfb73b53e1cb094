//! OnPair dictionary training (spec/FORMAT.md §4.2 codecs 1 and 2).
//!
//! Start from the 256 single bytes, visit rows in a seeded random order and
//! parse each greedily by longest match against the dictionary as it grows. For
//! every adjacent pair of tokens `(prev, curr)` whose concatenation fits in 16
//! bytes a saturating counter is bumped; when it reaches the current threshold
//! the concatenation becomes a token at once and takes the place of `prev`, so
//! it may merge again with the next token. Training stops when the dictionary
//! is full or the byte budget is scanned.
//!
//! The threshold starts at 2 and is nudged up or down at checkpoints so that
//! the rate at which tokens are created tracks the remaining capacity over the
//! remaining budget. The budget is a share of the input with a floor and a
//! ceiling; the floor is capped at the input size, so a small input is scanned
//! whole, once (passing over it again was measured to overfit: repeated pairs
//! merge on every pass and fill the dictionary with tokens used only a few
//! times).
//!
//! Unlike the published trainer, a final pruning step greedy-encodes a sample
//! with the learned dictionary and drops tokens whose dictionary bytes exceed
//! the code bytes they save (see [`PRUNE_MARGIN`]); on small inputs this is
//! what keeps a 16-bit dictionary from costing more than it saves. Learned
//! tokens are finally sorted lexicographically after the 256 single bytes,
//! which keep codes `0..=255`.
//!
//! Memory stays bounded: the pair counters live in a hash table with a fixed
//! maximum size (32 slots per dictionary entry), pruned of rare pairs when it
//! fills up.

use super::matcher::{count_uses, Matcher};
use super::{TokenTable, MAX_TOKEN_LEN};

/// Parameters of [`train`].
#[derive(Clone, Debug)]
pub struct OnPairParams {
    /// Code width in bits (9..=16): the dictionary holds at most `2^code_bits`
    /// tokens (12 → 4096, 16 → 65536).
    pub code_bits: u8,
    /// Seed of the row order: the same input and parameters give the same table.
    pub seed: u64,
    /// Share of the input bytes scanned.
    pub budget_fraction: f64,
    /// Scan at least this many bytes, or the whole input if it is smaller.
    pub min_budget_bytes: usize,
    /// Scan at most this many bytes.
    pub max_budget_bytes: usize,
    /// Bytes a learned token costs in the stored dictionary; `None` = what
    /// a format-version-3 section stores for it
    /// ([`stored_token_cost`](super::planes::stored_token_cost)). Version 1–2
    /// files stored fixed-stride planes: [`PLANE_TOKEN_COST`].
    pub token_cost_bytes: Option<f64>,
    /// A learned token is kept when its estimated uses × code bytes reach
    /// this share of its cost (see [`PRUNE_MARGIN`]).
    pub prune_margin: f64,
    /// Longest token to learn (2..=16). 8 keeps a fixed-stride dictionary to
    /// its 8-byte low plane (no high plane): half the stored bytes per token,
    /// which wins on small inputs.
    pub max_token_len: usize,
}

impl Default for OnPairParams {
    fn default() -> Self {
        Self::onpair16()
    }
}

impl OnPairParams {
    /// OnPair-12: 4096 tokens.
    ///
    /// Defaults, measured on the developer corpus (41 columns) against the
    /// `onpair` crate 0.3: 15% of the input (as OnPair publishes), at least
    /// 2 MiB (whole input when smaller; 1 MiB loses ~0.3% ratio on 2–4 MB
    /// columns, 4 MiB gains <0.1% for ~1.5× the training time) and at most
    /// 64 MiB (bounds training time on huge inputs).
    pub fn onpair12() -> Self {
        Self {
            code_bits: 12,
            seed: 0x5EED_0A1B,
            budget_fraction: 0.15,
            min_budget_bytes: 2 << 20,
            max_budget_bytes: 64 << 20,
            token_cost_bytes: None,
            prune_margin: PRUNE_MARGIN,
            max_token_len: MAX_TOKEN_LEN,
        }
    }

    /// OnPair-16: 65536 tokens.
    pub fn onpair16() -> Self {
        Self {
            code_bits: 16,
            ..Self::onpair12()
        }
    }
}

/// splitmix64: a tiny seeded PRNG, enough for shuffling rows.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-enough value in `0..n` (`n > 0`), by multiply-shift.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Rows per block of [`RowOrder`]. Measured: the same ratios as single-row
/// order (within ±0.3% per column but for code, where 16-row blocks lost
/// 1.6%: neighbouring lines correlate), and several times faster training on
/// short rows (random row order misses the cache on every row).
const ROWS_PER_BLOCK: usize = 8;

/// Rows in a seeded random order of blocks of [`ROWS_PER_BLOCK`] consecutive
/// rows (consecutive rows share cache lines: visiting them together keeps the
/// scan from missing the cache on every short row). The block shuffle is
/// incremental (one Fisher–Yates step per block drawn), so a scan that stops
/// early pays only for the blocks it visited; after the last block a new,
/// reshuffled pass starts.
struct RowOrder {
    blocks: Vec<u32>,
    next: usize,
    cur: usize,
    end: usize,
    rows: usize,
    rng: SplitMix64,
}

impl RowOrder {
    fn new(rows: usize, seed: u64) -> Self {
        let n = rows.div_ceil(ROWS_PER_BLOCK);
        Self {
            blocks: (0..n as u32).collect(),
            next: 0,
            cur: 0,
            end: 0,
            rows,
            rng: SplitMix64(seed),
        }
    }

    /// The next row index (`rows > 0`).
    fn next_row(&mut self) -> usize {
        if self.cur == self.end {
            if self.next == self.blocks.len() {
                self.next = 0;
            }
            let i = self.next;
            let j = i + self.rng.below(self.blocks.len() - i);
            self.blocks.swap(i, j);
            self.next += 1;
            self.cur = self.blocks[i] as usize * ROWS_PER_BLOCK;
            self.end = (self.cur + ROWS_PER_BLOCK).min(self.rows);
        }
        self.cur += 1;
        self.cur - 1
    }
}

/// Saturating pair counters in an open-addressing table (linear probing) with a
/// hard size limit. Keys pack `(prev << 16) | curr`. A slot stores its count
/// plus one, so 0 marks an empty slot and 1 a pair whose count was reset.
struct PairCounts {
    keys: Vec<u32>,
    stored: Vec<u8>,
    shift: u32,
    used: usize,
    max_slots: usize,
}

impl PairCounts {
    fn new(initial_slots: usize, max_slots: usize) -> Self {
        let slots = initial_slots.next_power_of_two().clamp(1024, max_slots);
        Self {
            keys: vec![0; slots],
            stored: vec![0; slots],
            shift: 64 - slots.trailing_zeros(),
            used: 0,
            max_slots,
        }
    }

    #[inline(always)]
    fn slot_of(&self, key: u32) -> usize {
        (u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// Bumps the counter of `key` and returns its new value (saturating at 254).
    #[inline]
    fn bump(&mut self, key: u32) -> u8 {
        if self.used * 2 >= self.keys.len() {
            self.make_room();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot_of(key);
        loop {
            let s = self.stored[i];
            if s == 0 {
                self.keys[i] = key;
                self.stored[i] = 2;
                self.used += 1;
                return 1;
            }
            if self.keys[i] == key {
                let s = s.saturating_add(1);
                self.stored[i] = s;
                return s - 1;
            }
            i = (i + 1) & mask;
        }
    }

    /// Resets the counter of `key` (after it was merged).
    fn reset(&mut self, key: u32) {
        let mask = self.keys.len() - 1;
        let mut i = self.slot_of(key);
        while self.stored[i] != 0 {
            if self.keys[i] == key {
                self.stored[i] = 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    /// Grows the table, or once at its limit, drops rare pairs.
    fn make_room(&mut self) {
        let old_keys = std::mem::take(&mut self.keys);
        let old_stored = std::mem::take(&mut self.stored);
        // Keep every pair with a stored value of at least `min_keep`.
        let mut min_keep = 1u8;
        let mut slots = old_keys.len();
        if slots < self.max_slots {
            slots *= 2;
        } else {
            // At the limit: drop pairs seen at most once since their last reset;
            // if that still leaves the table more than a quarter full, drop
            // more frequent ones too.
            let mut hist = [0usize; 256];
            for &s in &old_stored {
                hist[s as usize] += 1;
            }
            min_keep = 3;
            let mut kept: usize = hist[3..].iter().sum();
            while kept * 4 > slots && min_keep < 255 {
                kept -= hist[min_keep as usize];
                min_keep += 1;
            }
        }
        self.keys = vec![0; slots];
        self.stored = vec![0; slots];
        self.shift = 64 - slots.trailing_zeros();
        self.used = 0;
        let mask = slots - 1;
        for (&k, &s) in old_keys.iter().zip(&old_stored) {
            if s >= min_keep {
                let mut i = self.slot_of(k);
                while self.stored[i] != 0 {
                    i = (i + 1) & mask;
                }
                self.keys[i] = k;
                self.stored[i] = s;
                self.used += 1;
            }
        }
    }
}

/// Nudges the merge threshold so that tokens are created at the rate that
/// fills the remaining capacity with the remaining budget.
struct Threshold {
    value: u8,
    capacity: usize,
    budget: usize,
    /// Tokens created and bytes scanned at the last checkpoint.
    tokens_at_check: usize,
    bytes_at_check: usize,
    token_interval: usize,
    byte_interval: usize,
}

impl Threshold {
    fn new(capacity: usize, budget: usize) -> Self {
        Self {
            value: 2,
            capacity,
            budget,
            tokens_at_check: 0,
            bytes_at_check: 0,
            token_interval: (capacity / 128).max(32),
            byte_interval: (budget / 256).max(4096),
        }
    }

    /// Called after each token or scanned byte count update.
    #[inline]
    fn maybe_adjust(&mut self, tokens: usize, bytes: usize) {
        if tokens - self.tokens_at_check < self.token_interval
            && bytes - self.bytes_at_check < self.byte_interval
        {
            return;
        }
        let d_tokens = (tokens - self.tokens_at_check) as f64;
        let d_bytes = (bytes - self.bytes_at_check).max(1) as f64;
        let recent = d_tokens / d_bytes;
        let left_tokens = self.capacity.saturating_sub(tokens).max(1) as f64;
        let left_bytes = self.budget.saturating_sub(bytes).max(1) as f64;
        let target = left_tokens / left_bytes;
        if recent > 2.0 * target {
            self.value = self.value.saturating_add(1);
        } else if recent < 0.5 * target && self.value > 2 {
            self.value -= 1;
        }
        self.tokens_at_check = tokens;
        self.bytes_at_check = bytes;
    }
}

/// Trains a dictionary on `rows` (the sample; it may be empty, rows may be
/// empty or long).
///
/// Returns a [`TokenTable`] with the 256 single bytes at codes `0..=255`
/// followed by the learned tokens in lexicographic order; it holds at most
/// `2^code_bits` tokens.
///
/// # Panics
/// If `params.code_bits` is outside 9..=16.
pub fn train(rows: &[&[u8]], params: &OnPairParams) -> TokenTable {
    train_report(rows, params).0
}

/// [`train`], also saying whether the scan filled the dictionary to
/// `2^code_bits` tokens before pruning (`auto` trains a 16-bit dictionary
/// only where a 12-bit one filled up).
pub fn train_report(rows: &[&[u8]], params: &OnPairParams) -> (TokenTable, bool) {
    let (table, filled, _) = train_codes(rows, params, false);
    (table, filled)
}

/// The codes of every row of `rows` (in order) under a table, as
/// [`Matcher::encode_into`] gives them: `ends[i]` is the number of codes of
/// rows `0..=i`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowCodes {
    /// The codes, row after row.
    pub codes: Vec<u16>,
    /// Cumulative code count after each row.
    pub ends: Vec<u32>,
}

#[cfg(test)]
impl RowCodes {
    /// Every row encoded with `m`, one after the other: what the trainers'
    /// reused codes must equal.
    pub(crate) fn encode(m: &Matcher, rows: &[&[u8]]) -> Self {
        let mut out = Self::default();
        for r in rows {
            m.encode_into(r, &mut out.codes);
            out.ends.push(out.codes.len() as u32);
        }
        out
    }
}

/// [`train_report`], also returning (when `want_codes`) the codes of every
/// row of `rows` under the returned table.
///
/// The rows the pruning pass encoded cost no second encoding: greedy
/// longest-prefix parsing with a subset of a dictionary parses a row exactly
/// as the whole dictionary does whenever every token of the whole
/// dictionary's parse is in the subset (at each position the longest match
/// is a kept token, and no kept token is longer, so the parse does not
/// change). Pruning keeps a subset, so a sampled row whose pruning-pass codes
/// are all kept tokens keeps its parse, renumbered to the sorted table; the
/// other rows (and those the pruning pass did not sample) are encoded with
/// the returned table.
pub fn train_codes(
    rows: &[&[u8]],
    params: &OnPairParams,
    want_codes: bool,
) -> (TokenTable, bool, Option<RowCodes>) {
    assert!(
        (9..=16).contains(&params.code_bits),
        "code_bits {} outside 9..=16",
        params.code_bits
    );
    let capacity = 1usize << params.code_bits;
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let mut table = TokenTable::single_bytes();
    if total == 0 {
        return (table, false, None);
    }
    let budget = ((total as f64 * params.budget_fraction) as usize)
        .max(params.min_budget_bytes.min(total))
        .min(params.max_budget_bytes)
        .max(1);

    // Sized for the tokens a scan of this budget plausibly creates; it grows.
    let mut matcher = Matcher::with_capacity(capacity.min(budget / 16 + 256));
    for b in 0..=255u8 {
        matcher.insert(&[b], u16::from(b));
    }
    let max_pair_slots = (capacity * 32).next_power_of_two().max(1 << 16);
    let mut pairs = PairCounts::new((capacity * 4).min(budget / 4), max_pair_slots);
    let mut threshold = Threshold::new(capacity - 256, budget);
    let mut order = RowOrder::new(rows.len(), params.seed);
    let mut scanned = 0usize;
    // Each row is copied once into a zero-padded buffer, so every match
    // loads its 16-byte window directly (no copy per position near the end).
    let mut padded: Vec<u8> = Vec::new();

    'scan: while scanned < budget && table.len() < capacity {
        let row = rows[order.next_row()];
        if row.is_empty() {
            continue;
        }
        padded.clear();
        padded.extend_from_slice(row);
        padded.resize(row.len() + MAX_TOKEN_LEN, 0);
        let (mut prev, mut prev_len) = matcher.longest_match_padded(&padded, 0, row.len());
        let mut pos = prev_len;
        scanned += prev_len;
        while pos < row.len() {
            let (curr, curr_len) = matcher.longest_match_padded(&padded, pos, row.len() - pos);
            scanned += curr_len;
            let merged_len = prev_len + curr_len;
            if merged_len <= params.max_token_len.min(MAX_TOKEN_LEN) {
                let key = (u32::from(prev) << 16) | u32::from(curr);
                if pairs.bump(key) >= threshold.value {
                    pairs.reset(key);
                    let token = &row[pos - prev_len..pos + curr_len];
                    let code = table.len() as u16;
                    if matcher.insert(token, code) {
                        table.push(token);
                        if table.len() == capacity {
                            break 'scan;
                        }
                        threshold.maybe_adjust(table.len() - 256, scanned);
                        prev = code;
                    } else {
                        prev = matcher.get(token).unwrap_or(code);
                    }
                    prev_len = merged_len;
                    pos += curr_len;
                    if scanned >= budget {
                        break 'scan;
                    }
                    continue;
                }
            }
            prev = curr;
            prev_len = curr_len;
            pos += curr_len;
            if scanned >= budget {
                break 'scan;
            }
        }
        threshold.maybe_adjust(table.len() - 256, scanned);
    }

    let filled = table.len() == capacity;
    let (pruned, kept, sampled) = prune(
        rows,
        &table,
        &matcher,
        params,
        budget.min(total),
        total,
        want_codes,
    );
    let (sorted, order) = sort_learned(&pruned);
    let codes = sampled.map(|s| renumber(rows, s, &table, &kept, &order, &sorted));
    (sorted, filled, codes)
}

/// The pruning pass's rows and their codes under the training table:
/// `rows[i]` is the input row of sampled row `i` (`None`: every row, in
/// order).
pub(crate) struct Sampled {
    pub(crate) rows: Option<Vec<u32>>,
    pub(crate) codes: RowCodes,
}

/// Appends the codes of `row` under the final table (`matcher`), given
/// `old`, its codes under the training table (token lengths `lens`), some of
/// them dropped (`new_code[c] == u32::MAX`). Greedy parsing from a position
/// depends only on the bytes from there on, so the old parse is kept up to
/// the first dropped token; the row is parsed again from there until a
/// position that is also an old boundary after the last dropped token, from
/// where the old parse uses kept tokens only and is kept
/// ([`train_codes`]).
fn patch_row(
    row: &[u8],
    old: &[u16],
    new_code: &[u32],
    lens: &[u8],
    matcher: &Matcher,
    out: &mut Vec<u16>,
) {
    let first = old
        .iter()
        .position(|&c| new_code[c as usize] == u32::MAX)
        .unwrap_or(old.len());
    let last = old
        .iter()
        .rposition(|&c| new_code[c as usize] == u32::MAX)
        .unwrap_or(0);
    let mut pos = 0usize;
    for &c in &old[..first] {
        out.push(new_code[c as usize] as u16);
        pos += usize::from(lens[c as usize]);
    }
    // `i`, `at`: the next old code after `pos` and where it starts.
    let (mut i, mut at) = (first, pos);
    while pos < row.len() {
        while at < pos && i < old.len() {
            at += usize::from(lens[old[i] as usize]);
            i += 1;
        }
        if at == pos && i > last {
            out.extend(old[i..].iter().map(|&c| new_code[c as usize] as u16));
            return;
        }
        let (code, len) = matcher.longest_match(&row[pos..]);
        out.push(code);
        pos += len;
    }
}

/// Rows per parallel task of [`renumber`].
const RENUMBER_TASK_ROWS: usize = 4096;

/// The codes of every row of `rows` under `sorted` (the pruned and sorted
/// table): a sampled row's pruning-pass codes (training table) renumbered
/// when every one of them was kept ([`train_codes`] says why its parse is
/// unchanged), any other row encoded. `kept[c]` is the index in the pruned
/// table of training code `c` (`u32::MAX`: dropped); `order[i]` is the
/// pruned-table index of sorted code `i`. Groups of rows run on all cores,
/// joined in row order (the result does not depend on the thread count).
pub(crate) fn renumber(
    rows: &[&[u8]],
    sampled: Sampled,
    table: &TokenTable,
    kept: &[u32],
    order: &[u32],
    sorted: &TokenTable,
) -> RowCodes {
    use rayon::prelude::*;
    debug_assert_eq!(kept.len(), table.len());
    // Training code -> sorted code, or u32::MAX when dropped.
    let mut pos_of = vec![0u32; order.len()];
    for (i, &o) in order.iter().enumerate() {
        pos_of[o as usize] = i as u32;
    }
    let new_code: Vec<u32> = kept
        .iter()
        .map(|&k| if k == u32::MAX { k } else { pos_of[k as usize] })
        .collect();
    // Input row -> sampled row (u32::MAX: not sampled).
    let slot: Option<Vec<u32>> = sampled.rows.as_ref().map(|v| {
        let mut slot = vec![u32::MAX; rows.len()];
        for (k, &r) in v.iter().enumerate() {
            slot[r as usize] = k as u32;
        }
        slot
    });
    let old = &sampled.codes;
    let lens = table.lens();
    let matcher = Matcher::new(sorted);
    let groups: Vec<(Vec<u16>, Vec<u32>)> = (0..rows.len().div_ceil(RENUMBER_TASK_ROWS))
        .into_par_iter()
        .map(|g| {
            let r0 = g * RENUMBER_TASK_ROWS;
            let r1 = (r0 + RENUMBER_TASK_ROWS).min(rows.len());
            // Every code covers at least one byte: no reallocation (the
            // doublings' copies were 9% of OnPair-12's page faults,
            // bench/COMPRESS.md); untouched capacity costs nothing.
            let mut out = Vec::with_capacity(rows[r0..r1].iter().map(|r| r.len()).sum());
            let mut ends = Vec::with_capacity(r1 - r0);
            for r in r0..r1 {
                let k = slot.as_ref().map_or(r as u32, |s| s[r]);
                let at = out.len();
                let mut all_kept = k != u32::MAX;
                if all_kept {
                    let k = k as usize;
                    let start = if k == 0 { 0 } else { old.ends[k - 1] as usize };
                    let row_old = &old.codes[start..old.ends[k] as usize];
                    for &c in row_old {
                        let n = new_code[c as usize];
                        all_kept &= n != u32::MAX;
                        out.push(n as u16);
                    }
                    if !all_kept {
                        out.truncate(at);
                        patch_row(rows[r], row_old, &new_code, lens, &matcher, &mut out);
                    }
                } else {
                    matcher.encode_into(rows[r], &mut out);
                }
                ends.push(out.len() as u32);
            }
            (out, ends)
        })
        .collect();
    let n: usize = groups.iter().map(|g| g.0.len()).sum();
    let mut out = RowCodes {
        codes: Vec::with_capacity(n),
        ends: Vec::with_capacity(rows.len()),
    };
    for (c, e) in groups {
        let base = out.codes.len() as u32;
        out.ends.extend(e.into_iter().map(|x| x + base));
        out.codes.extend_from_slice(&c);
    }
    out
}

/// A learned token is kept when its estimated uses × code bytes reach this
/// share of its length. Below 1 because dropping a token usually costs more
/// than one extra code per use (greedy parsing falls back to shorter tokens),
/// and merged tokens are building blocks of longer ones. Measured on the
/// corpus: 0.25–0.5 are equally good, 1.0 and above lose ratio.
pub const PRUNE_MARGIN: f64 = 0.35;

/// Rows per parallel task of [`prune`]'s encoding pass.
const PRUNE_TASK_ROWS: usize = 4096;

/// Stored bytes of one token in fixed-stride planes with a high plane: a
/// 16-byte slot and a length nibble (spec/FORMAT.md §4).
pub const PLANE_TOKEN_COST: f64 = 16.5;

/// Stored bytes of one token when no token is longer than 8 bytes: an 8-byte
/// low-plane slot and a length nibble, no high plane.
pub const SHORT_PLANE_TOKEN_COST: f64 = 8.5;

/// Drops learned tokens that cost more dictionary bytes than the code bytes
/// they save: greedy-encodes a seeded sample of about `eval_budget` bytes,
/// counts the uses of each code, scales them to the whole input and keeps a
/// token of `len` bytes when `uses × code_bits / 8 ≥ PRUNE_MARGIN × len`.
///
/// This matters most for small inputs, where a dictionary filled to capacity
/// would cost more bytes than it saves.
///
/// Also returns, for each code of `table`, its index in the pruned table
/// (`u32::MAX` when dropped), and when `keep`, the sampled rows and their
/// codes under `table`.
fn prune(
    rows: &[&[u8]],
    table: &TokenTable,
    matcher: &Matcher,
    params: &OnPairParams,
    eval_budget: usize,
    total: usize,
    keep: bool,
) -> (TokenTable, Vec<u32>, Option<Sampled>) {
    // The rows to encode, in the seeded order; then encoded on all cores
    // (counts are sums, so the result does not depend on the thread count).
    // When the sample is every row, the order does not change the sums:
    // the rows are encoded in row order.
    let whole = eval_budget >= total;
    let (visit, index, seen): (Vec<&[u8]>, Option<Vec<u32>>, usize) = if whole {
        (rows.to_vec(), None, total)
    } else {
        let mut order = RowOrder::new(rows.len(), params.seed ^ 0xA5A5_5A5A);
        let mut seen = 0usize;
        let mut visit = Vec::new();
        let mut index = Vec::new();
        for _ in 0..rows.len() {
            if seen >= eval_budget {
                break;
            }
            let r = order.next_row();
            let row = rows[r];
            visit.push(row);
            index.push(r as u32);
            seen += row.len();
        }
        (visit, Some(index), seen)
    };
    let parts = visit.chunks(PRUNE_TASK_ROWS).collect();
    let (uses, sampled) = if keep {
        let (uses, codes) = count_uses_keep(matcher, parts, table.len());
        let sampled = Sampled { rows: index, codes };
        (uses, Some(sampled))
    } else {
        (count_uses(matcher, parts, table.len()), None)
    };
    let scale = total as f64 / seen.max(1) as f64;
    let code_bytes = f64::from(params.code_bits) / 8.0;
    let mut out = TokenTable::single_bytes();
    let mut kept: Vec<u32> = (0..256).collect();
    kept.resize(table.len(), u32::MAX);
    for (code, token) in table.iter().enumerate().skip(256) {
        let cost = params
            .token_cost_bytes
            .unwrap_or_else(|| super::planes::stored_token_cost(token.len()));
        if f64::from(uses[code]) * scale * code_bytes >= params.prune_margin * cost {
            kept[code] = out.len() as u32;
            out.push(token);
        }
    }
    (out, kept, sampled)
}

/// [`count_uses`] over `parts` (consecutive groups of rows, in row order),
/// also keeping the codes of every row in order.
pub(crate) fn count_uses_keep(
    m: &Matcher,
    parts: Vec<&[&[u8]]>,
    tokens: usize,
) -> (Vec<u32>, RowCodes) {
    use rayon::prelude::*;
    let done: Vec<(Vec<u32>, Vec<u16>, Vec<u32>)> = parts
        .into_par_iter()
        .map(|part| {
            let mut uses = vec![0u32; tokens];
            // Every code covers at least one byte: no reallocation.
            let mut codes = Vec::with_capacity(part.iter().map(|r| r.len()).sum());
            let mut ends = Vec::with_capacity(part.len());
            for row in part {
                let at = codes.len();
                m.encode_into(row, &mut codes);
                for &c in &codes[at..] {
                    uses[c as usize] += 1;
                }
                ends.push(codes.len() as u32);
            }
            (uses, codes, ends)
        })
        .collect();
    let mut uses = vec![0u32; tokens];
    let n: usize = done.iter().map(|d| d.1.len()).sum();
    let mut out = RowCodes {
        codes: Vec::with_capacity(n),
        ends: Vec::new(),
    };
    for (u, c, e) in done {
        for (x, y) in uses.iter_mut().zip(u) {
            *x += y;
        }
        let base = out.codes.len() as u32;
        out.ends.extend(e.into_iter().map(|x| x + base));
        out.codes.extend_from_slice(&c);
    }
    (uses, out)
}

/// Sorts the learned tokens (codes 256..) lexicographically, keeping the single
/// bytes at codes 0..=255.
///
/// Also returns, for each code of the result, its code in `table`.
fn sort_learned(table: &TokenTable) -> (TokenTable, Vec<u32>) {
    // (lexicographic key, code); tokens are distinct, so the keys are and
    // the order is total.
    let mut learned: Vec<((u128, u8), u32)> = (256..table.len())
        .map(|c| (table.lex_key(c), c as u32))
        .collect();
    learned.sort_unstable_by_key(|e| e.0);
    let mut out = TokenTable::single_bytes();
    let mut order: Vec<u32> = (0..256).collect();
    for (_, c) in learned {
        out.push(table.token(c as usize));
        order.push(c);
    }
    (out, order)
}

#[cfg(test)]
mod tests;
