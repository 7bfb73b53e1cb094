//! What a [`super::Searcher`] keeps per dictionary and per chunk so that
//! choosing the sparse path's codes costs microseconds, not a pass over the
//! dictionary: a byte index of the tokens (which tokens hold byte `b`, at
//! which offset) and each chunk's code frequencies. Both are independent
//! of the pattern, built once per open file (like the row byte boundaries).
//!
//! With them, [`plan`] finds, for a literal every matching row contains,
//! the smallest set of codes one of which such a row must hold (the tokens
//! that can cover one chosen byte of the literal, `anchor`), weighed by how
//! often the chunk uses them: a necessary condition for any tokenization,
//! and the chunk's exact count of candidate code positions, which is the
//! selectivity-aware choice between the sparse scan and decoding
//! (`eval`'s rule).

use super::anchor::Anchor;
use super::sparse::MAX_CODES;
use crate::decode::CheckedCodes;
use crate::dict::{TokenTable, MAX_TOKEN_LEN};

/// Per byte value, the (code, offset) of each occurrence in the tokens.
#[derive(Debug)]
pub(crate) struct ByteIndex {
    /// Entries of byte `b`: `entries[start[b]..start[b + 1]]`.
    start: Box<[u32]>,
    /// `code | offset << 16`, in code order per byte.
    entries: Box<[u32]>,
}

impl ByteIndex {
    /// The index of `table` (one pass over its token bytes, twice).
    pub(crate) fn new(table: &TokenTable) -> Self {
        let mut count = vec![0u32; 257];
        for t in table.iter() {
            for &b in t {
                count[b as usize + 1] += 1;
            }
        }
        for b in 0..256 {
            count[b + 1] += count[b];
        }
        let mut at = count.clone();
        let mut entries = vec![0u32; count[256] as usize];
        for (c, t) in table.iter().enumerate() {
            for (o, &b) in t.iter().enumerate() {
                entries[at[b as usize] as usize] = c as u32 | (o as u32) << 16;
                at[b as usize] += 1;
            }
        }
        Self {
            start: count.into_boxed_slice(),
            entries: entries.into_boxed_slice(),
        }
    }

    pub(crate) fn of(&self, b: u8) -> &[u32] {
        &self.entries[self.start[b as usize] as usize..self.start[b as usize + 1] as usize]
    }
}

/// A chunk's code statistics.
#[derive(Debug)]
pub(crate) struct ChunkStats {
    /// How often each code occurs (indexed by code; `1 << bits` entries,
    /// so any packed code indexes it).
    pub(crate) freq: Vec<u32>,
    /// Per byte value, how many code positions hold a token containing it:
    /// which byte of a literal the chunk's tokens cover least, without
    /// reading the tokens per search.
    pub(crate) byte_weight: Box<[u64; 256]>,
}

impl ChunkStats {
    /// The statistics of the first `n` codes of `codes` over `table`.
    pub(crate) fn new(codes: &CheckedCodes<'_>, n: usize, table: &TokenTable) -> Self {
        Self::of(frequencies(codes, n), table)
    }

    /// The statistics of code frequencies `freq` over `table`.
    fn of(freq: Vec<u32>, table: &TokenTable) -> Self {
        let mut byte_weight = Box::new([0u64; 256]);
        for (c, t) in table.iter().enumerate() {
            let f = freq.get(c).copied().unwrap_or(0) as u64;
            if f == 0 {
                continue;
            }
            let mut seen = [false; 256];
            for &b in t {
                if !seen[b as usize] {
                    seen[b as usize] = true;
                    byte_weight[b as usize] += f;
                }
            }
        }
        Self { freq, byte_weight }
    }
}

/// How often each code occurs in the first `n` codes (`1 << bits` entries).
fn frequencies(codes: &CheckedCodes<'_>, n: usize) -> Vec<u32> {
    let mut freq = vec![0u32; 1 << codes.bits()];
    let mut buf = vec![0u16; 4096];
    let mut i = 0;
    while i < n {
        let k = buf.len().min(n - i);
        codes.unpack(i, &mut buf[..k]);
        for &c in &buf[..k] {
            freq[c as usize] += 1;
        }
        i += k;
    }
    freq
}

/// The codes a row matching the anchor must hold one of, and how many
/// code positions of the chunk hold one (`weight`).
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) codes: Vec<u16>,
    pub(crate) weight: u64,
    /// With one literal: the byte of it that each of `codes` covers (at
    /// some alignment), so a hit can be checked around its code alone.
    pub(crate) pos: Option<usize>,
}

/// Index entries read per literal while looking for its best position
/// (past the first position): a bound on the planning time (each entry is
/// a few nanoseconds; 4,096 cost 35 µs, more than decoding a 2,000-row
/// Loghub column).
const EVAL_BUDGET: usize = 768;

/// Positions of a literal tried (in order of their byte's weight).
const EVAL_POSITIONS: usize = 5;

#[inline(always)]
fn lower(w: u128) -> u128 {
    u128::from_le_bytes(w.to_le_bytes().map(|b| b.to_ascii_lowercase()))
}

/// Whether a token (`word`, its first `len` bytes; folded when `fold`)
/// placed with its byte `o` on byte `p` of the literal agrees with it where
/// they overlap (token bytes `lo..hi`; token byte `i` lines up with literal
/// byte `i + p - o`). `padded` is the `n`-byte literal (folded when `fold`)
/// followed by `MAX_TOKEN_LEN` zero bytes.
#[inline]
fn token_fits(
    word: [u8; MAX_TOKEN_LEN],
    len: usize,
    o: usize,
    p: usize,
    padded: &[u8],
    n: usize,
    fold: bool,
) -> bool {
    let lo = o.saturating_sub(p);
    let hi = len.min(o + n - p);
    let mut tw = u128::from_le_bytes(word) >> (8 * lo);
    if fold {
        tw = lower(tw);
    }
    let at = lo + p - o;
    let lw = u128::from_le_bytes(padded[at..at + 16].try_into().expect("16 bytes"));
    (tw ^ lw) & MASKS[hi - lo] == 0
}

/// `MASKS[k]`: the low `k` bytes of a `u128` set.
const MASKS: [u128; 17] = {
    let mut m = [0u128; 17];
    let mut k = 1;
    while k <= 16 {
        m[k] = if k == 16 {
            u128::MAX
        } else {
            (1u128 << (8 * k)) - 1
        };
        k += 1;
    }
    m
};

/// The plan for `anchor` over a dictionary (`table`, its `index`) in a
/// chunk whose code frequencies are `freq`: per literal, the position whose
/// covering tokens the chunk uses least (codes it never uses dropped);
/// several literals (a disjunction): the union. `None` when a literal is
/// empty (every row contains it). A position whose weight passes
/// `max_weight` is given up as soon as it does and weighs `u64::MAX` (its
/// set is incomplete; a plan that holds one is never used): the search of
/// a literal of common bytes stops early.
pub(crate) fn plan(
    anchor: &Anchor,
    table: &TokenTable,
    index: &ByteIndex,
    stats: &ChunkStats,
    max_weight: u64,
) -> Option<Plan> {
    let freq = &stats.freq[..];
    if anchor.lits.is_empty() || anchor.lits.iter().any(|l| l.is_empty()) {
        return None;
    }
    let fold = anchor.fold;
    let (words, lens) = (table.words(), table.lens());
    let mut codes: Vec<u16> = Vec::new();
    let mut weight = 0u64;
    let mut pos = None;
    for lit in &anchor.lits {
        let lit: Vec<u8> = if fold {
            lit.to_ascii_lowercase()
        } else {
            lit.clone()
        };
        let n = lit.len();
        let mut padded = lit.clone();
        padded.resize(n + MAX_TOKEN_LEN, 0);
        // The index lists holding byte `b` (both cases when folding).
        let lists = |b: u8| -> [&[u32]; 2] {
            if fold && b.is_ascii_lowercase() {
                [index.of(b), index.of(b.to_ascii_uppercase())]
            } else {
                [index.of(b), &[]]
            }
        };
        // Positions by how many code positions hold a token with their
        // byte (both cases when folding): the likely smallest sets first.
        let bw = |b: u8| -> u64 {
            let w = stats.byte_weight[b as usize];
            if fold && b.is_ascii_lowercase() {
                w + stats.byte_weight[b.to_ascii_uppercase() as usize]
            } else {
                w
            }
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&p| bw(lit[p]));
        order.truncate(EVAL_POSITIONS);
        let mut best: Option<((bool, u64), Vec<u16>, usize)> = None;
        let mut spent = 0usize;
        let mut set: Vec<u16> = Vec::new();
        for &p in &order {
            let ls = lists(lit[p]);
            let cost: usize = ls.iter().map(|l| l.len()).sum();
            if best.is_some() && spent + cost > EVAL_BUDGET {
                break;
            }
            spent += cost;
            set.clear();
            let mut w = 0u64;
            let mut over = false;
            for &e in ls.iter().flat_map(|l| l.iter()) {
                let (c, o) = ((e & 0xffff) as usize, (e >> 16) as usize);
                if freq[c] == 0 || set.last() == Some(&(c as u16)) {
                    continue;
                }
                if token_fits(words[c], lens[c] as usize, o, p, &padded[..], n, fold) {
                    set.push(c as u16);
                    w += freq[c] as u64;
                    if w > max_weight {
                        over = true;
                        break;
                    }
                }
            }
            if fold {
                // Two lists: codes may repeat.
                set.sort_unstable();
                set.dedup();
                w = set.iter().map(|&c| freq[c as usize] as u64).sum();
            }
            if over {
                // An incomplete set: never usable (weight beyond any bound).
                w = u64::MAX;
            }
            // The lightest set the scan can take, else the lightest.
            let key = (set.len() > MAX_CODES, w);
            if best.as_ref().map_or(true, |b| key < b.0) {
                best = Some((key, std::mem::take(&mut set), p));
            }
            if w == 0 {
                break;
            }
        }
        let ((_, w), s, p) = best.expect("a non-empty literal has a position");
        weight = weight.saturating_add(w);
        codes.extend(s);
        pos = Some(p);
    }
    codes.sort_unstable();
    codes.dedup();
    if anchor.lits.len() > 1 {
        pos = None;
    }
    Some(Plan { codes, weight, pos })
}

/// Most anchor positions of the GPU kernel's prefilter (one flag bit each,
/// `u8` flags per token).
#[cfg(any(test, feature = "gpu"))]
pub(crate) const GPU_POSITIONS: usize = 8;

/// The GPU kernel's anchor (spec/DECODER.md §6e): per token of a
/// dictionary, a bit per chosen position of the literal whose byte the
/// token can cover (at some alignment); positions in literal order (bit `i`
/// is `pos[i]`, increasing), so the kernel can also require the covering
/// codes in that order within the positions' distances (the chain);
/// the positions come from [`gpu_positions`].
#[cfg(any(test, feature = "gpu"))]
#[derive(Debug, Clone)]
pub(crate) struct GpuAnchor {
    /// One byte per token of the table.
    pub(crate) flags: Vec<u8>,
    /// Per position, how many code positions of the chunks hold one of its
    /// tokens (`freq` summed over its set).
    pub(crate) weight: Vec<u64>,
}

/// The positions of `lit` (folded when `fold`, ASCII) the GPU anchor
/// takes: up to [`GPU_POSITIONS`], those whose byte the fewest code
/// positions of the searched chunks hold a token with (`byte_weight`, from
/// their code frequencies; both cases when folding), increasing.
#[cfg(any(test, feature = "gpu"))]
pub(crate) fn gpu_positions(lit: &[u8], fold: bool, byte_weight: &[u64; 256]) -> Vec<usize> {
    let f = |b: u8| if fold { b.to_ascii_lowercase() } else { b };
    let bw = |b: u8| -> u64 {
        let b = f(b);
        let w = byte_weight[b as usize];
        if fold && b.is_ascii_lowercase() {
            w.saturating_add(byte_weight[b.to_ascii_uppercase() as usize])
        } else {
            w
        }
    };
    let mut order: Vec<usize> = (0..lit.len()).collect();
    order.sort_by_key(|&p| (bw(lit[p]), p));
    order.truncate(GPU_POSITIONS);
    order.sort_unstable();
    order
}

/// The GPU anchor of `lit` (folded when `fold`) at positions `pos`
/// (increasing, at most [`GPU_POSITIONS`]) over `table`: each position's
/// covering tokens found through the byte `index`, weighed by the code
/// frequencies `freq`. Every token that can cover a position is flagged,
/// used or not: the flags are a necessary condition for a match whatever
/// the frequencies say.
#[cfg(any(test, feature = "gpu"))]
pub(crate) fn gpu_anchor(
    lit: &[u8],
    fold: bool,
    pos: &[usize],
    table: &TokenTable,
    index: &ByteIndex,
    freq: &[u32],
) -> GpuAnchor {
    debug_assert!(pos.len() <= GPU_POSITIONS && pos.iter().all(|&p| p < lit.len()));
    let lit: Vec<u8> = if fold {
        lit.to_ascii_lowercase()
    } else {
        lit.to_vec()
    };
    let n = lit.len();
    let (words, lens) = (table.words(), table.lens());
    let mut padded = lit.clone();
    padded.resize(n + MAX_TOKEN_LEN, 0);
    let mut flags = vec![0u8; table.len()];
    let mut weight = Vec::with_capacity(pos.len());
    for (bit, &p) in pos.iter().enumerate() {
        let b = lit[p];
        let upper: &[u32] = if fold && b.is_ascii_lowercase() {
            index.of(b.to_ascii_uppercase())
        } else {
            &[]
        };
        let mut w = 0u64;
        for &e in index.of(b).iter().chain(upper) {
            let (c, o) = ((e & 0xffff) as usize, (e >> 16) as usize);
            if flags[c] >> bit & 1 == 1 {
                continue;
            }
            if token_fits(words[c], lens[c] as usize, o, p, &padded[..], n, fold) {
                flags[c] |= 1 << bit;
                w += freq.get(c).copied().unwrap_or(0) as u64;
            }
        }
        weight.push(w);
    }
    GpuAnchor { flags, weight }
}

/// The GPU prefilter on the host (kernels/search.cu, spec/DECODER.md §6e),
/// for measurement and tests: over one chunk's `codes` in batches of `kb`,
/// each with up to `m - 1` lookahead codes, whether each batch would be
/// decoded: its and its lookahead's codes' `flags` OR to every bit of
/// `pos` (positions increasing, bit `i` for `pos[i]`), and, with `chain`,
/// some codes `j_0 <= j_1 <= ...` carry bits 0, 1, ... with
/// `j_{i+1} - j_i <= pos[i+1] - pos[i]`.
#[cfg(any(test, all(feature = "gpu", feature = "test-util")))]
pub(crate) fn gpu_prefilter(
    codes: &[u16],
    kb: usize,
    m: usize,
    flags: &[u8],
    pos: &[usize],
    chain: bool,
) -> Vec<bool> {
    let full = if pos.is_empty() {
        0u8
    } else {
        (((1u32 << pos.len()) - 1) & 0xff) as u8
    };
    let flag = |c: u16| flags.get(c as usize).copied().unwrap_or(0xff);
    codes
        .chunks(kb.max(1))
        .enumerate()
        .map(|(b, batch)| {
            let start = b * kb;
            let la = if batch.len() == kb {
                m.saturating_sub(1).min(codes.len() - start - kb)
            } else {
                0
            };
            let win = &codes[start..start + batch.len() + la];
            let or = win.iter().fold(0u8, |a, &c| a | flag(c));
            if or & full != full {
                return false;
            }
            if !chain || pos.len() < 2 {
                return true;
            }
            // Codes where a chain through bits 0..=i can end.
            let mut ends: Vec<usize> = (0..win.len()).filter(|&j| flag(win[j]) & 1 != 0).collect();
            for i in 1..pos.len() {
                let d = pos[i] - pos[i - 1];
                let mut next = Vec::new();
                let mut k = 0;
                for j in (0..win.len()).filter(|&j| flag(win[j]) >> i & 1 != 0) {
                    // The last chain end at or before j.
                    while k + 1 < ends.len() && ends[k + 1] <= j {
                        k += 1;
                    }
                    if ends.get(k).is_some_and(|&e| e <= j && j - e <= d) {
                        next.push(j);
                    }
                }
                ends = next;
                if ends.is_empty() {
                    return false;
                }
            }
            true
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{plan, ByteIndex, ChunkStats};
    use crate::dict::TokenTable;
    use crate::search::anchor::Anchor;

    /// The GPU anchor flags, bit by bit, exactly the tokens that cover its
    /// position (the plain definition), positions increasing.
    #[test]
    fn gpu_anchor_flags_cover_their_positions() {
        let mut t = TokenTable::single_bytes();
        for tok in [
            &b"fox"[..],
            b"a fo",
            b"xes!",
            b"_foxes_",
            b"ax",
            b"Fo",
            b"OXE",
        ] {
            t.push(tok);
        }
        let index = ByteIndex::new(&t);
        let freq = vec![1u32; t.len()];
        let stats = ChunkStats::of(freq.clone(), &t);
        for fold in [false, true] {
            for lit in [&b"foxes"[..], b"x", b"FOX", b"the quick brown fox jumps"] {
                let pos = super::gpu_positions(lit, fold, &stats.byte_weight);
                let a = super::gpu_anchor(lit, fold, &pos, &t, &index, &freq);
                assert!(pos.len() <= super::GPU_POSITIONS && !pos.is_empty());
                assert!(pos.windows(2).all(|w| w[0] < w[1]));
                assert_eq!(a.weight.len(), pos.len());
                let f = |b: u8| if fold { b.to_ascii_lowercase() } else { b };
                for (bit, &pos) in pos.iter().enumerate() {
                    for c in 0..t.len() {
                        let tok = t.token(c);
                        let covers = (0..tok.len()).any(|o| {
                            f(tok[o]) == f(lit[pos])
                                && (o.saturating_sub(pos)..tok.len().min(o + lit.len() - pos))
                                    .all(|i| f(tok[i]) == f(lit[i + pos - o]))
                        });
                        assert_eq!(
                            a.flags[c] >> bit & 1 == 1,
                            covers,
                            "{lit:?} {fold} {pos} {c}"
                        );
                    }
                }
            }
        }
        assert!(super::gpu_positions(b"", false, &stats.byte_weight).is_empty());
    }

    /// The host mirror of the GPU prefilter never drops a batch in which an
    /// occurrence of the literal starts, with or without the chain, on
    /// random tables, random (not greedy) tokenizations and literals cut
    /// across token boundaries.
    #[test]
    fn gpu_prefilter_keeps_every_batch_with_a_match() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        for case in 0..40 {
            let alpha: &[u8] = if case % 2 == 0 { b"ab" } else { b"abcA x" };
            let mut t = TokenTable::single_bytes();
            for _ in 0..60 {
                let n = 2 + rnd(8);
                let tok: Vec<u8> = (0..n).map(|_| alpha[rnd(alpha.len())]).collect();
                t.push(&tok);
            }
            let text: Vec<u8> = (0..3000).map(|_| alpha[rnd(alpha.len())]).collect();
            // A random tokenization: at each byte, any token that matches.
            let mut codes = Vec::new();
            let mut starts = Vec::new();
            let mut at = 0;
            while at < text.len() {
                let fits: Vec<usize> = (0..t.len())
                    .filter(|&c| text[at..].starts_with(t.token(c)))
                    .collect();
                let c = fits[rnd(fits.len())];
                codes.push(c as u16);
                starts.push(at);
                at += t.token(c).len();
            }
            let mut freq = vec![0u32; t.len()];
            for &c in &codes {
                freq[c as usize] += 1;
            }
            let stats = ChunkStats::of(freq.clone(), &t);
            let index = ByteIndex::new(&t);
            for _ in 0..8 {
                let m = 1 + rnd(12);
                let s0 = rnd(text.len() - m);
                let lit = text[s0..s0 + m].to_vec();
                for fold in [false, true] {
                    let pos = super::gpu_positions(&lit, fold, &stats.byte_weight);
                    let a = super::gpu_anchor(&lit, fold, &pos, &t, &index, &freq);
                    for chain in [false, true] {
                        let kb = 8 + rnd(24);
                        let pass = super::gpu_prefilter(&codes, kb, m, &a.flags, &pos, chain);
                        let f = |b: &u8| if fold { b.to_ascii_lowercase() } else { *b };
                        let low: Vec<u8> = lit.iter().map(f).collect();
                        for s in 0..=text.len() - m {
                            if text[s..s + m].iter().map(f).eq(low.iter().copied()) {
                                // The code holding byte s.
                                let j = starts.partition_point(|&x| x <= s) - 1;
                                assert!(
                                    pass[j / kb],
                                    "case {case} {lit:?} fold {fold} chain {chain} at {s}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// The plan's codes are exactly the used tokens that cover the chosen
    /// position (checked against the plain definition at every position).
    #[test]
    fn plan_codes_cover_the_literal() {
        let mut t = TokenTable::single_bytes();
        for tok in [
            &b"fox"[..],
            b"a fo",
            b"xes!",
            b"_foxes_",
            b"ax",
            b"Fo",
            b"OXE",
            b"s",
        ] {
            t.push(tok);
        }
        let index = ByteIndex::new(&t);
        for fold in [false, true] {
            for lit in [&b"foxes"[..], b"x", b"FOX"] {
                let mut freq = vec![1u32; 4096];
                freq[b'q' as usize] = 0;
                let a = Anchor {
                    lits: vec![lit.to_vec()],
                    fold,
                };
                let p = plan(&a, &t, &index, &ChunkStats::of(freq, &t), u64::MAX).unwrap();
                let f = |b: u8| if fold { b.to_ascii_lowercase() } else { b };
                // Some position's covering set equals the plan.
                let sets: Vec<Vec<u16>> = (0..lit.len())
                    .map(|pos| {
                        (0..t.len())
                            .filter(|&c| {
                                let tok = t.token(c);
                                (0..tok.len()).any(|o| {
                                    f(tok[o]) == f(lit[pos])
                                        && (o.saturating_sub(pos)
                                            ..tok.len().min(o + lit.len() - pos))
                                            .all(|i| f(tok[i]) == f(lit[i + pos - o]))
                                })
                            })
                            .map(|c| c as u16)
                            .collect()
                    })
                    .collect();
                assert!(sets.contains(&p.codes), "{lit:?} {fold} {:?}", p.codes);
                // The position it reports is the one whose set it is.
                let at = p.pos.expect("one literal: its position");
                assert_eq!(sets[at], p.codes, "{lit:?} {fold} at {at}");
                assert_eq!(p.weight, p.codes.len() as u64);
            }
        }
    }
}
