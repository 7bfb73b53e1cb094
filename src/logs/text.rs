//! The text pool of a log block: every variable-length string of the block
//! (template static text, value-dictionary entries, free-text slot values,
//! escaped rows) as codes of one OnPair-12 token dictionary, trained on the
//! pool by the crate's trainer and encoded with its matcher
//! (spec/FORMAT.md §5.8.4).
//!
//! ```text
//! varint learned            tokens after the 256 single bytes (implicit)
//! ⌈learned/2⌉ bytes          token lengths − 1, 4 bits each, low nibble first
//! [⌈learned/2⌉ bytes         shared prefixes, 4 bits each (form 2 only)]
//! token bytes                form 1: every token whole; form 2: each token's
//!                            bytes after the prefix it shares with the one
//!                            before (front coding, as a dictionary section)
//! varint strings
//! varint meta_len, meta     code offsets of the strings (strings + 1
//! varint data_len, data     values) as an integer column (`column.rs`)
//! codes                     form 1: 12 bits each; form 2: ⌈log2(256 +
//!                            learned)⌉ bits each (8..=12), LSB first
//! ```
//! String `i` is codes `off[i] .. off[i+1]`. The offsets are an integer
//! column, not the format's cascade (spec/FORMAT.md §6): a cascade read sums
//! up to 128 deltas, a linear-FoR read is one residual (measured: the
//! cascade's unpack + sum was the largest cost of a point read on rows with
//! several free-text slots), at a similar size for steadily growing offsets.
//!
//! Form 1 is the pool of format versions 4–5 (payload magics "FPL1" /
//! "FPS1"), form 2 that of version 6 ("FPL2" / "FPS2"): its learned tokens
//! are strictly increasing, at least 2 bytes long, front-coded with the
//! longest shared prefix (capped at 15), so a pool has one spelling; a pool
//! of few tokens no longer pays 12 bits a code (bench/LOGS.md, format 6).

use super::bits::{pack, packed_len, put_varint, varint_len};
use super::column;
#[cfg(test)]
use super::pool::Pool;
use super::pool::{front_code_bits, shared_prefix};
#[cfg(test)]
use super::LogForm;
use crate::dict::matcher::Matcher;
use crate::dict::onpair::{self, OnPairParams};
use crate::dict::{TokenTable, MAX_TOKEN_LEN};

/// Code width of a form-1 pool, and the widest of a form-2 pool.
const CODE_BITS: u8 = 12;

/// Appends the pool of `strings` to `out`.
///
/// The token table is trained by OnPair (as coded chunks are); the codes
/// are then an *optimal* parse of each string under it (fewest codes, a
/// shortest path over the string's positions) rather than the greedy
/// longest-prefix parse, and learned tokens that no string's parse uses are
/// left out of the stored table. With `prune`, tokens whose table bytes
/// exceed what their uses save are dropped too ([`paying_tokens`], the
/// smaller pool kept). All are the writer's free choice (spec/FORMAT.md
/// §5.8.5: the pool's tokens and the code spelling of each string), so
/// readers are unchanged.
/// (A whole pool, as version 6–9 blocks hold it: the tests' reference.)
#[cfg(test)]
pub(crate) fn write(strings: &[&[u8]], prune: bool, out: &mut Vec<u8>) {
    let (table, codes, offs) = chosen(strings, prune);
    let at = out.len();
    put_pool(&table, &codes, &offs, out);
    debug_assert_eq!(out.len() - at, pool_len(&table, &codes, &offs));
}

/// The pool of `strings` cut where a block of format version 10 stores it
/// (§5.8.6): its token table (for the open section) and the rest — string
/// count, offsets, codes — for the pool section.
pub(crate) fn write_split(strings: &[&[u8]], prune: bool) -> (Vec<u8>, Vec<u8>) {
    let (table, codes, offs) = chosen(strings, prune);
    let mut all = Vec::new();
    put_pool(&table, &codes, &offs, &mut all);
    let rest = all.split_off(table_len(&table));
    (all, rest)
}

/// Bytes of the token table at the start of a form-2 pool.
fn table_len(table: &TokenTable) -> usize {
    let learned = table.len() - 256;
    let mut tokens = 0;
    let mut prev: &[u8] = &[];
    for c in 256..table.len() {
        let t = table.token(c);
        tokens += t.len() - shared_prefix(prev, t);
        prev = t;
    }
    varint_len(learned as u64) + 2 * learned.div_ceil(2) + tokens
}

/// Bytes [`write`] appends for `strings`, without packing them (what the
/// column's decision encodes need: `encode.rs`).
pub(crate) fn size(strings: &[&[u8]], prune: bool) -> usize {
    let (table, codes, offs) = chosen(strings, prune);
    pool_len(&table, &codes, &offs)
}

/// The pool [`write`] stores for `strings`: its table, codes and the
/// strings' code offsets. Candidates are compared by [`pool_len`], so only
/// the kept one is packed.
fn chosen(strings: &[&[u8]], prune: bool) -> (TokenTable, Vec<u16>, Vec<u32>) {
    let trained = if strings.iter().all(|s| s.is_empty()) {
        TokenTable::single_bytes()
    } else {
        form2_table(&onpair::train(strings, &OnPairParams::onpair12()))
    };
    debug_assert!(trained.len() <= 1 << CODE_BITS);
    let mut parse = Parse::default();
    let m = PoolMatcher::new(&trained);
    let (mut codes, mut offs) = parse_strings(&m, strings, &mut parse);
    let mut table = compact(&trained, &mut codes);
    if !prune {
        return (table, codes, offs);
    }
    let mut best = pool_len(&table, &codes, &offs);
    // Tokens that do not pay for their own bytes in the table (a small
    // pool's trained table is a large share of it: 18% of Linux_2k's
    // payload) are dropped, the strings that used them parsed again, and
    // the smaller pool kept. Once: a second and a third round (each drop
    // changes the others' uses) never made a pool smaller on the 33 log
    // columns measured, and cost 2.3% of the encoder's instructions
    // (bench/LOGS.md, "Continuation lines split at blanks").
    let (keep, map) = paying_tokens(&table, &codes, &mut parse);
    if keep.len() < table.len() {
        let (t, c, o, cand) = reduced(&keep, &map, &codes, &offs, strings, &mut parse);
        if cand < best {
            (table, codes, offs, best) = (t, c, o, cand);
        }
    }
    // A pool's code width is ⌈log2(256 + L)⌉ (form 2): a table just past a
    // power of two pays a bit on every code. Try keeping only the tokens
    // worth most at one bit fewer, and keep what is smaller (a second step
    // down never paid on the columns measured).
    let learned = table.len() - 256;
    let bits = front_code_bits(learned);
    if learned > 0 && bits > 8 {
        let cap = (1usize << (bits - 1)) - 256;
        let worth = token_worth(&table, &codes, &mut parse);
        let (keep, map) = narrowed(&table, &worth, cap);
        let (t, c, o, cand) = reduced(&keep, &map, &codes, &offs, strings, &mut parse);
        if cand < best {
            (table, codes, offs) = (t, c, o);
        }
    }
    (table, codes, offs)
}

/// The pool of `keep`, a subset of the table of `codes` (`map`: old code →
/// code in `keep`, `u32::MAX` if dropped): the strings that used a dropped
/// token parsed again ([`reparse_dropped`]), unused tokens left out
/// ([`compact`]). Returns its table, codes, code offsets and size in bytes
/// ([`pool_len`]), for [`chosen`] to keep when smaller.
fn reduced(
    keep: &TokenTable,
    map: &[u32],
    codes: &[u16],
    offs: &[u32],
    strings: &[&[u8]],
    parse: &mut Parse,
) -> (TokenTable, Vec<u16>, Vec<u32>, usize) {
    let (mut c, o) = reparse_dropped(keep, map, codes, offs, strings, parse);
    let t = compact(keep, &mut c);
    let len = pool_len(&t, &c, &o);
    (t, c, o, len)
}

/// `trained` as form 2 requires it (spec/FORMAT.md §5.8.4): the 256 single
/// bytes at codes 0–255, then the learned tokens of two bytes or more,
/// sorted and distinct. The trainer already gives that (its dictionaries
/// pass version 4's same rules, `dict::canonical`); rebuilding it here makes
/// a pool the reader would reject unwritable, whatever the trainer does,
/// and the tokens kept later (`compact`, pruning) keep this order.
fn form2_table(trained: &TokenTable) -> TokenTable {
    let mut learned: Vec<&[u8]> = (256..trained.len())
        .map(|c| trained.token(c))
        .filter(|t| t.len() >= 2)
        .collect();
    learned.sort_unstable();
    learned.dedup();
    let mut table = TokenTable::single_bytes();
    for t in learned {
        table.push(t);
    }
    table
}

/// Every string of `strings` as an optimal parse under `m`'s table: the
/// codes and each string's code offsets.
fn parse_strings(m: &PoolMatcher, strings: &[&[u8]], parse: &mut Parse) -> (Vec<u16>, Vec<u32>) {
    let mut codes: Vec<u16> = Vec::new();
    let mut offs = Vec::with_capacity(strings.len() + 1);
    offs.push(0u32);
    for s in strings {
        parse.encode_into(m, s, &mut codes);
        offs.push(u32::try_from(codes.len()).expect("pool under 2^32 codes"));
    }
    (codes, offs)
}

/// `table` without the learned tokens no code of `codes` uses, and `codes`
/// renumbered to it (kept tokens in their order).
fn compact(table: &TokenTable, codes: &mut [u16]) -> TokenTable {
    let mut new_code = vec![u16::MAX; table.len()];
    for &c in codes.iter() {
        new_code[c as usize] = 0;
    }
    let mut out = TokenTable::single_bytes();
    for (c, n) in new_code.iter_mut().enumerate() {
        if c < 256 {
            *n = c as u16;
        } else if *n == 0 {
            *n = out.len() as u16;
            out.push(table.token(c));
        }
    }
    for c in codes.iter_mut() {
        *c = new_code[*c as usize];
    }
    out
}

/// The strings' optimal parses under `keep`, a subset of the table of
/// `codes` (`map`: old code → code in `keep`, `u32::MAX` if dropped). A
/// string whose parse used no dropped token keeps it, renumbered: dropping
/// tokens off the fewest-codes path changes neither that path's count nor,
/// among equal counts, its longer-token choice at any of its positions
/// ([`Parse::encode_into`]), so parsing it again would give the same codes.
/// Only the others are parsed again. Returns the codes and the strings'
/// code offsets.
fn reparse_dropped(
    keep: &TokenTable,
    map: &[u32],
    codes: &[u16],
    offs: &[u32],
    strings: &[&[u8]],
    parse: &mut Parse,
) -> (Vec<u16>, Vec<u32>) {
    let mut m: Option<PoolMatcher> = None;
    let mut out = Vec::with_capacity(codes.len());
    let mut new_offs = Vec::with_capacity(offs.len());
    new_offs.push(0u32);
    for (i, s) in strings.iter().enumerate() {
        let old = &codes[offs[i] as usize..offs[i + 1] as usize];
        if old.iter().all(|&c| map[c as usize] != u32::MAX) {
            out.extend(old.iter().map(|&c| map[c as usize] as u16));
        } else {
            let m = m.get_or_insert_with(|| PoolMatcher::new(keep));
            parse.encode_into(m, s, &mut out);
        }
        new_offs.push(u32::try_from(out.len()).expect("pool under 2^32 codes"));
    }
    (out, new_offs)
}

/// `table` without the learned tokens that cost more to store than they
/// save: token `t` of `L` bytes, used `u` times, takes `8L + 8` bits in the
/// table (its bytes and two nibbles; front coding usually stores fewer
/// bytes, an upper bound), and without it each use is spelled by `p ≥ 2`
/// codes of the others (`p`: the fewest, an optimal parse of its bytes that
/// does not use `t` itself), `b (p − 1)` bits more each at the pool's code
/// width `b`.
/// Also returns each old code's code in the kept table (`u32::MAX`:
/// dropped).
fn paying_tokens(table: &TokenTable, codes: &[u16], parse: &mut Parse) -> (TokenTable, Vec<u32>) {
    let worth = token_worth(table, codes, parse);
    keep_tokens(table, |c| worth[c - 256] >= 0)
}

/// Per learned token of `table` (code `256 + i` at `i`): the bits its uses
/// in `codes` save minus the bits it takes in the table ([`paying_tokens`]'
/// estimate, at the table's current code width).
fn token_worth(table: &TokenTable, codes: &[u16], parse: &mut Parse) -> Vec<i64> {
    let mut uses = vec![0u64; table.len()];
    for &c in codes {
        uses[c as usize] += 1;
    }
    let m = PoolMatcher::new(table);
    let bits = front_code_bits(table.len() - 256) as u64;
    (256..table.len())
        .map(|c| {
            let tok = table.token(c);
            let p = parse.fewest_without_whole(&m, tok) as u64;
            let saved = uses[c] * bits * (p.max(2) - 1);
            saved as i64 - (8 * tok.len() as i64 + 8)
        })
        .collect()
}

/// The learned tokens of `table` that `keep(code)` accepts, in their
/// order, and each old code's code in the result (`u32::MAX`: dropped).
fn keep_tokens(table: &TokenTable, keep: impl Fn(usize) -> bool) -> (TokenTable, Vec<u32>) {
    let mut out = TokenTable::single_bytes();
    let mut map: Vec<u32> = (0..256)
        .chain((256..table.len()).map(|_| u32::MAX))
        .collect();
    for (c, m) in map.iter_mut().enumerate().skip(256) {
        if keep(c) {
            *m = out.len() as u32;
            out.push(table.token(c));
        }
    }
    (out, map)
}

/// `table` cut to its `cap` most worth-while learned tokens (ties: the
/// earlier code), so that its codes fit one bit fewer ([`front_code_bits`]).
fn narrowed(table: &TokenTable, worth: &[i64], cap: usize) -> (TokenTable, Vec<u32>) {
    let mut order: Vec<usize> = (0..worth.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(worth[i]), i));
    let mut kept = vec![false; worth.len()];
    for &i in order.iter().take(cap) {
        kept[i] = true;
    }
    keep_tokens(table, |c| kept[c - 256])
}

/// The form-2 pool bytes of `table`, `codes` and the strings' code offsets
/// `offs` (the layout in this module's header). `table`'s learned tokens are
/// the trainer's, sorted and distinct, none a single byte (debug-checked:
/// form 2 requires it).
fn put_pool(table: &TokenTable, codes: &[u16], offs: &[u32], out: &mut Vec<u8>) {
    let learned = table.len() - 256;
    put_varint(out, learned as u64);
    let nibbles = |v: &[u8], out: &mut Vec<u8>| {
        for pair in v.chunks(2) {
            out.push(pair[0] | pair.get(1).map_or(0, |h| h << 4));
        }
    };
    let lens: Vec<u8> = (256..table.len())
        .map(|c| table.token_len(c) as u8 - 1)
        .collect();
    nibbles(&lens, out);
    let mut prefixes = Vec::with_capacity(learned);
    let mut prev: &[u8] = &[];
    for c in 256..table.len() {
        let t = table.token(c);
        debug_assert!(
            t.len() >= 2 && prev < t,
            "pool tokens sorted, distinct, not bytes"
        );
        prefixes.push(shared_prefix(prev, t) as u8);
        prev = t;
    }
    nibbles(&prefixes, out);
    prev = &[];
    for c in 256..table.len() {
        let t = table.token(c);
        out.extend_from_slice(&t[shared_prefix(prev, t)..]);
        prev = t;
    }
    put_varint(out, (offs.len() - 1) as u64);
    let (mut meta, mut data) = (Vec::new(), Vec::new());
    column::write(
        &offs.iter().map(|&o| o as u64).collect::<Vec<_>>(),
        &mut meta,
        &mut data,
        column::Use::PoolOffsets,
    );
    for part in [&meta, &data] {
        put_varint(out, part.len() as u64);
        out.extend_from_slice(part);
    }
    pack(
        codes.iter().map(|&c| c as u64),
        front_code_bits(learned),
        out,
    );
}

/// Bytes [`put_pool`] appends for `table`, `codes` and `offs`, counted
/// without packing (the pruning rounds and the decision encodes compare
/// sizes only).
fn pool_len(table: &TokenTable, codes: &[u16], offs: &[u32]) -> usize {
    let learned = table.len() - 256;
    let offs: Vec<u64> = offs.iter().map(|&o| o as u64).collect();
    let (meta, data) = column::sizes(&offs, column::Use::PoolOffsets);
    table_len(table)
        + varint_len((offs.len() - 1) as u64)
        + varint_len(meta as u64)
        + meta
        + varint_len(data as u64)
        + data
        + packed_len(codes.len(), front_code_bits(learned))
}

/// A pool table's matcher and, per code, the code of its longest proper
/// prefix that is a learned token (`NO_LINK`: none of 2 bytes or more). The
/// tokens matching at a position are the longest match and its prefixes
/// that are tokens, so following the links from the longest match visits
/// exactly them, longest first: the optimal parse then costs a few steps
/// per position instead of a hash lookup per shorter length (14 at most).
struct PoolMatcher {
    m: Matcher,
    links: Vec<u16>,
    lens: Vec<u8>,
}

/// A code without a learned proper prefix ([`PoolMatcher`]).
const NO_LINK: u16 = u16::MAX;

impl PoolMatcher {
    fn new(table: &TokenTable) -> Self {
        let m = Matcher::new(table);
        let links = (0..table.len())
            .map(|c| {
                let t = table.token(c);
                (2..t.len())
                    .rev()
                    .find_map(|l| m.get(&t[..l]))
                    .unwrap_or(NO_LINK)
            })
            .collect();
        Self {
            m,
            links,
            lens: table.lens().to_vec(),
        }
    }

    /// The learned tokens that are proper prefixes of token `code`, longest
    /// first, as (code, length).
    fn prefixes(&self, code: u16) -> impl Iterator<Item = (u16, usize)> + '_ {
        let link = |c: u16| Some(self.links[c as usize]).filter(|&l| l != NO_LINK);
        std::iter::successors(link(code), move |&c| link(c))
            .map(|c| (c, self.lens[c as usize] as usize))
    }
}

/// Buffers of an optimal (fewest codes) parse.
#[derive(Default)]
struct Parse {
    padded: Vec<u8>,
    /// `best[i]`: (codes to encode `s[i..]`, code of the first token, its length).
    best: Vec<(u32, u16, u8)>,
}

impl Parse {
    /// `s` zero padded (every match loads its 16-byte window directly) and
    /// the DP table sized for it.
    fn start(&mut self, s: &[u8]) {
        self.padded.clear();
        self.padded.extend_from_slice(s);
        self.padded.resize(s.len() + MAX_TOKEN_LEN, 0);
        self.best.clear();
        self.best.resize(s.len() + 1, (0, 0, 0));
    }

    /// Appends the fewest codes of `pm`'s table that spell `s`. Every token
    /// matching at a position is a prefix of the longest match there, so
    /// the candidates are the longest match and its prefixes that are
    /// tokens ([`PoolMatcher::prefixes`]); ties keep the longer token (the
    /// greedy choice).
    fn encode_into(&mut self, pm: &PoolMatcher, s: &[u8], out: &mut Vec<u16>) {
        let n = s.len();
        self.start(s);
        for i in (0..n).rev() {
            let (code, len) = pm.m.longest_match_padded(&self.padded, i, n - i);
            let mut b = (self.best[i + len].0 + 1, code, len as u8);
            if len > 2 {
                for (c, l) in pm.prefixes(code) {
                    let cost = self.best[i + l].0 + 1;
                    if cost < b.0 {
                        b = (cost, c, l as u8);
                    }
                }
            }
            if len > 1 && self.best[i + 1].0 + 1 < b.0 {
                b = (self.best[i + 1].0 + 1, s[i] as u16, 1);
            }
            self.best[i] = b;
        }
        let mut i = 0;
        while i < n {
            let (_, code, len) = self.best[i];
            out.push(code);
            i += len as usize;
        }
    }

    /// The fewest codes of `pm`'s table that spell `s` without using a
    /// token equal to all of `s` (so at least 2 when `s` is longer than a
    /// byte): what a learned token's uses would cost without it.
    fn fewest_without_whole(&mut self, pm: &PoolMatcher, s: &[u8]) -> u32 {
        let n = s.len();
        if n < 2 {
            return 1;
        }
        self.start(s);
        for i in (0..n).rev() {
            let (code, longest) = pm.m.longest_match_padded(&self.padded, i, n - i);
            let top = if i == 0 { longest.min(n - 1) } else { longest };
            let mut b = self.best[i + 1].0 + 1;
            if longest >= 2 && longest <= top {
                b = b.min(self.best[i + longest].0 + 1);
            }
            if longest > 2 {
                for (_, l) in pm.prefixes(code) {
                    b = b.min(self.best[i + l].0 + 1);
                }
            }
            self.best[i].0 = b;
        }
        self.best[0].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever order the trainer gives, the written table is form 2's:
    /// sorted, distinct, no learned single byte (and the pool reads back).
    #[test]
    fn form2_table_sorts_dedups_and_drops_single_bytes() {
        let mut t = TokenTable::single_bytes();
        for tok in [&b"zz"[..], b"ab", b"q", b"ab", b"abc"] {
            t.push(tok);
        }
        let f = form2_table(&t);
        let learned: Vec<&[u8]> = (256..f.len()).map(|c| f.token(c)).collect();
        assert_eq!(learned, [&b"ab"[..], b"abc", b"zz"]);
        let strings: Vec<&[u8]> = vec![b"abczz", b"ab", b""];
        let m = PoolMatcher::new(&f);
        let mut parse = Parse::default();
        let (mut codes, offs) = parse_strings(&m, &strings, &mut parse);
        let table = compact(&f, &mut codes);
        let mut out = Vec::new();
        put_pool(&table, &codes, &offs, &mut out);
        let n = out.len();
        out.extend_from_slice(&[0; 16]);
        let p = Pool::parse(&out[..n], 0, LogForm::V8).unwrap();
        for (i, s) in strings.iter().enumerate() {
            let mut got = Vec::new();
            p.get(&out, i, &mut got);
            assert_eq!(&got[..], *s);
        }
    }

    #[test]
    fn pool_round_trip() {
        for prune in [false, true] {
            pool_round_trip_with(prune);
        }
    }

    fn pool_round_trip_with(prune: bool) {
        let strings: Vec<&[u8]> = vec![b"", b"hello world", b"hello there", b"\xff\x00x", b""];
        let mut out = Vec::new();
        write(&strings, prune, &mut out);
        let n = out.len();
        assert_eq!(size(&strings, prune), n);
        out.resize(n + 16, 0);
        let p = Pool::parse(&out[..n], 0, LogForm::V8).unwrap();
        assert_eq!(p.len(), strings.len());
        for (i, s) in strings.iter().enumerate() {
            let mut o = Vec::new();
            p.get(&out, i, &mut o);
            assert_eq!(&o, s);
        }
        let (mut buf, mut ends) = (Vec::new(), Vec::new());
        p.decode_all(&out, &mut buf, &mut ends, 0);
        assert_eq!(buf, strings.concat());
        assert_eq!(ends.len(), strings.len());
        // Unused learned tokens are not stored.
        let learned = super::super::bits::VarReader::new(&out, 0)
            .varint("learned")
            .unwrap();
        assert!(learned <= 8, "{learned} tokens for 3 strings");
        // Truncations are errors, never panics.
        for cut in 0..n {
            assert!(Pool::parse(&out[..cut], 0, LogForm::V8).is_err());
        }
    }

    /// Pruning the pool's table never makes the pool larger, and the pool
    /// still spells every string: pools of log-like lines, repeated
    /// strings, and many one-off strings (whose trained tokens mostly do
    /// not pay for their bytes).
    #[test]
    fn pruned_pools_are_never_larger_and_exact() {
        let lines: Vec<Vec<u8>> = (0..600u32)
            .map(|i| match i % 3 {
                0 => format!(
                    "session opened for user u{} by (uid={})",
                    i % 17,
                    i * 7 % 1000
                ),
                1 => format!(
                    "{:08x}-{:04x}",
                    i.wrapping_mul(2_654_435_761),
                    i * 31 % 65536
                ),
                _ => format!("GET /static/{}/img{}.png HTTP/1.1", i % 5, i),
            })
            .map(String::into_bytes)
            .collect();
        let one_offs: Vec<Vec<u8>> = (0..300u32)
            .map(|i| format!("{:x}", i.wrapping_mul(0x9E37_79B9) ^ 0x5bd1_e995).into_bytes())
            .collect();
        for set in [&lines, &one_offs] {
            let strings: Vec<&[u8]> = set.iter().map(Vec::as_slice).collect();
            let (mut plain, mut pruned) = (Vec::new(), Vec::new());
            write(&strings, false, &mut plain);
            write(&strings, true, &mut pruned);
            // `size` counts exactly what `write` packs.
            assert_eq!(size(&strings, false), plain.len());
            assert_eq!(size(&strings, true), pruned.len());
            assert!(
                pruned.len() <= plain.len(),
                "{} > {}",
                pruned.len(),
                plain.len()
            );
            let n = pruned.len();
            pruned.resize(n + 16, 0);
            let p = Pool::parse(&pruned[..n], 0, LogForm::V8).unwrap();
            let mut o = Vec::new();
            for (i, s) in strings.iter().enumerate() {
                o.clear();
                p.get(&pruned, i, &mut o);
                assert_eq!(&o, s, "string {i}");
            }
        }
    }

    /// Parsing again only the strings that used a dropped token gives the
    /// codes a parse of every string under the kept table gives.
    #[test]
    fn reparsing_the_affected_strings_equals_parsing_all() {
        let rows: Vec<Vec<u8>> = (0..400u32)
            .map(|i| {
                format!("user{} GET /a/{}/b{} ok {}", i % 13, i % 7, i * 37 % 101, i).into_bytes()
            })
            .collect();
        let strings: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
        let trained = onpair::train(&strings, &OnPairParams::onpair12());
        let mut parse = Parse::default();
        let (mut codes, offs) = parse_strings(&PoolMatcher::new(&trained), &strings, &mut parse);
        let table = compact(&trained, &mut codes);
        // Every third learned token dropped, and what paying_tokens drops.
        let (paying, _) = paying_tokens(&table, &codes, &mut parse);
        let paid: std::collections::HashSet<&[u8]> =
            (256..paying.len()).map(|k| paying.token(k)).collect();
        let third = |c: usize| c % 3 != 0;
        let pays = |c: usize| paid.contains(table.token(c));
        for keep_it in [&third as &dyn Fn(usize) -> bool, &pays] {
            let mut keep = TokenTable::single_bytes();
            let mut map: Vec<u32> = (0..256).collect();
            for c in 256..table.len() {
                if keep_it(c) {
                    map.push(keep.len() as u32);
                    keep.push(table.token(c));
                } else {
                    map.push(u32::MAX);
                }
            }
            let (fast, fast_offs) =
                reparse_dropped(&keep, &map, &codes, &offs, &strings, &mut parse);
            let (all, all_offs) = parse_strings(&PoolMatcher::new(&keep), &strings, &mut parse);
            assert_eq!(fast, all);
            assert_eq!(fast_offs, all_offs);
        }
    }

    /// A token's cost without itself: its bytes' fewest codes with every
    /// other token, never the token itself.
    #[test]
    fn fewest_without_whole_skips_the_token_itself() {
        let mut t = TokenTable::single_bytes();
        for tok in [&b"abcd"[..], b"ab", b"cd", b"abc"] {
            t.push(tok);
        }
        let m = PoolMatcher::new(&t);
        let mut parse = Parse::default();
        assert_eq!(parse.fewest_without_whole(&m, b"abcd"), 2); // ab + cd
        assert_eq!(parse.fewest_without_whole(&m, b"abc"), 2); // ab + c
        assert_eq!(parse.fewest_without_whole(&m, b"ab"), 2); // a + b
        assert_eq!(parse.fewest_without_whole(&m, b"x"), 1);
    }

    /// The optimal parse spells every string exactly, never with more codes
    /// than the greedy parse, and with fewer where greedy is trapped (a long
    /// first token that leaves an unmatched tail).
    #[test]
    fn optimal_parse_is_exact_and_never_longer() {
        let mut t = TokenTable::single_bytes();
        for tok in [&b"abcd"[..], b"ab", b"cdef", b"ef", b"xyzxyz"] {
            t.push(tok);
        }
        let m = PoolMatcher::new(&t);
        let mut p = Parse::default();
        let mut rng = 0x1234_5678_9ABC_DEF1u64;
        for k in 0..2000 {
            let len = k % 40;
            let s: Vec<u8> = (0..len)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    b"abcdefxyz\x00\xff"[(rng % 11) as usize]
                })
                .collect();
            let (mut opt, mut greedy) = (Vec::new(), Vec::new());
            p.encode_into(&m, &s, &mut opt);
            m.m.encode_into(&s, &mut greedy);
            assert!(opt.len() <= greedy.len());
            let spelled: Vec<u8> = opt
                .iter()
                .flat_map(|&c| t.token(c as usize).to_vec())
                .collect();
            assert_eq!(spelled, s);
        }
        // Greedy: abcd|e|f (3 codes); optimal: ab|cdef (2).
        let mut opt = Vec::new();
        p.encode_into(&m, b"abcdef", &mut opt);
        assert_eq!(opt.len(), 2);
    }

    /// The optimal parse through prefix links equals the plain dynamic
    /// program that asks the matcher for every shorter length (the parse
    /// before the links), and so does the cost without the whole token:
    /// random tables rich in nested prefixes, random strings over their
    /// bytes.
    #[test]
    fn prefix_links_parse_as_every_length_lookup() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move |k: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % k
        };
        for _ in 0..40 {
            let mut t = TokenTable::single_bytes();
            for _ in 0..(1 + next(300)) {
                let len = 2 + next(15) as usize;
                let tok: Vec<u8> = (0..len).map(|_| b"abcab"[next(5) as usize]).collect();
                t.push(&tok);
            }
            let t = form2_table(&t);
            let pm = PoolMatcher::new(&t);
            let mut p = Parse::default();
            for _ in 0..50 {
                let s: Vec<u8> = (0..next(60)).map(|_| b"abcx"[next(4) as usize]).collect();
                let mut got = Vec::new();
                p.encode_into(&pm, &s, &mut got);
                assert_eq!(got, reference_parse(&pm.m, &s), "{s:?}");
                if s.len() >= 2 {
                    assert_eq!(
                        p.fewest_without_whole(&pm, &s),
                        reference_without_whole(&pm.m, &s)
                    );
                }
            }
        }
    }

    /// The optimal parse as a lookup per candidate length.
    fn reference_parse(m: &Matcher, s: &[u8]) -> Vec<u16> {
        let n = s.len();
        let mut best = vec![(0u32, 0u16, 0usize); n + 1];
        for i in (0..n).rev() {
            let (code, len) = m.longest_match(&s[i..]);
            let mut b = (best[i + len].0 + 1, code, len);
            for l in (2..len).rev() {
                if let Some(c) = m.get(&s[i..i + l]) {
                    if best[i + l].0 + 1 < b.0 {
                        b = (best[i + l].0 + 1, c, l);
                    }
                }
            }
            if len > 1 && best[i + 1].0 + 1 < b.0 {
                b = (best[i + 1].0 + 1, s[i] as u16, 1);
            }
            best[i] = b;
        }
        let (mut out, mut i) = (Vec::new(), 0);
        while i < n {
            out.push(best[i].1);
            i += best[i].2;
        }
        out
    }

    /// The fewest codes spelling `s` without a token equal to all of it.
    fn reference_without_whole(m: &Matcher, s: &[u8]) -> u32 {
        let n = s.len();
        let mut best = vec![0u32; n + 1];
        for i in (0..n).rev() {
            let mut b = best[i + 1] + 1;
            for l in 2..=(n - i) {
                if (i, l) != (0, n) && m.get(&s[i..i + l]).is_some() {
                    b = b.min(best[i + l] + 1);
                }
            }
            best[i] = b;
        }
        best[0]
    }
}
