//! Plain substrings that many rows hold: the rows with a code whose token
//! holds the whole literal are hits without decoding them (bench/SEARCH.md,
//! "Rows settled by a token that holds the literal").
//!
//! A block's codes are scanned row by row against a bitset of the holding
//! tokens (a row's scan stops at its first such code); the rows it does not
//! settle are decoded, runs of consecutive rows at a time by the bulk
//! decoder, about 64 KiB of them at once, and searched by one `memmem` pass,
//! as on the decode path. Exact: a token that holds the literal puts it in
//! the row; a row without one can only hold it across tokens, which its
//! decoded bytes show. A one-byte literal never lies across tokens, so
//! there the rows the scan does not settle are not decoded at all.

use std::cell::RefCell;

use memchr::memmem::Finder;

use super::{Block, Search, DECODE_PIECE, DECODE_SLACK};
use crate::decode;
use crate::dict::{TokenTable, MAX_TOKEN_LEN};
use crate::error::Result;
use crate::read::ChunkView;

/// Per code of a dictionary, whether its token holds a literal.
#[derive(Debug)]
pub(super) struct Holding {
    /// One bit per code value of the stream (`1 << bits`): set when the
    /// code's token holds the literal (8 KiB for 16-bit codes: in L1).
    bits: Vec<u64>,
    /// The literal is one byte: it never lies across tokens.
    one_byte: bool,
}

impl Holding {
    /// The tokens of `table` that hold `needle` (a stream of `bits`-wide
    /// codes), or `None` when no token can (a literal longer than a token).
    pub(super) fn new(table: &TokenTable, needle: &[u8], bits: u8) -> Option<Self> {
        let n = needle.len();
        if n == 0 || n > MAX_TOKEN_LEN {
            return None;
        }
        let (words, lens) = (table.words(), table.lens());
        let mut set = vec![0u64; (1usize << bits).div_ceil(64)];
        if n == 1 && needle[0] != 0 {
            // A byte compare of each zero-padded word, eight bytes at a
            // time (padding never equals a non-zero byte), 64 tokens a
            // bitset word, without a branch (half the tokens may hold it).
            for (word, ws) in set.iter_mut().zip(words.chunks(64)) {
                for (j, w) in ws.iter().enumerate() {
                    *word |= u64::from(byte_positions(w, needle[0]) != 0) << j;
                }
            }
        } else {
            let mut mark = |c: usize| set[c / 64] |= 1 << (c % 64);
            // One pass over the words end to end; a hit counts for the
            // token it starts in when it ends within the token's length.
            let flat = words.as_flattened();
            for p in Finder::new(needle).find_iter(flat) {
                let c = p / MAX_TOKEN_LEN;
                if p % MAX_TOKEN_LEN + n <= lens[c] as usize {
                    mark(c);
                }
            }
        }
        Some(Self {
            bits: set,
            one_byte: n == 1,
        })
    }

    /// Whether code `c`'s token holds the literal.
    #[inline(always)]
    fn holds(&self, c: u16) -> bool {
        self.bits[c as usize / 64] >> (c % 64) & 1 == 1
    }
}

/// Codes sampled (in rows spread over the chunk) to estimate what the sure
/// path would scan and decode there: at most this many, in at most
/// [`SURE_SAMPLE_ROWS`] rows.
const SURE_SAMPLE_CODES: usize = 512;
const SURE_SAMPLE_ROWS: usize = 512;

/// Chunks with fewer codes than this take the decode path without a
/// sample. The sample took 5–20 µs (its runs' first rows miss the cache):
/// about a tenth of decoding a chunk of this size (~110 µs), less on
/// larger ones; at 32,768 codes it could be a third.
const SURE_MIN_CODES: u64 = 256 * SURE_SAMPLE_CODES as u64;

/// Runs of consecutive rows the sample takes.
const SAMPLE_RUNS: usize = 16;

/// The sure path's cost model, in eighths of decoding one code on the
/// decode path (its `memmem` included): a code scanned, a row settled (the
/// scan's branch mispredicted and a jump), a code of an open row decoded
/// and searched, a code unpacked (12-bit / 16-bit codes). Fitted to the
/// probe on 12 corpus searches, where it came out 0–0.2 under the measured
/// ratio, more on short rows of 12-bit codes (bench/SEARCH.md, "Rows
/// settled by a token that holds the literal"); the path is taken at up to
/// [`SURE_MAX_SHARE`] of the decode path's estimate.
const SCAN_EIGHTHS: u64 = 4;
const SETTLED_EIGHTHS: u64 = 40;
const OPEN_EIGHTHS: u64 = 11;
const UNPACK_EIGHTHS: [u64; 2] = [4, 1];
const SURE_MAX_SHARE: (u64, u64) = (9, 10);

thread_local! {
    /// Each thread's buffers: a block's codes, the open rows of a piece
    /// (decoded end to end), and their start offsets there.
    static WALK: RefCell<(Vec<u16>, Vec<u8>, Vec<u32>)> =
        const { RefCell::new((Vec::new(), Vec::new(), Vec::new())) };
}

impl Search<'_> {
    /// The holding tokens of `view`'s dictionary when the pattern is one
    /// plain substring that a token can hold, and (unless `forced`) the
    /// chunk's sampled rows say the sure path costs at most nine tenths of
    /// the decode path (the cost model above).
    pub(super) fn sure_plan(&self, view: &ChunkView<'_>, forced: bool) -> Option<&Holding> {
        let f = self.c.block_finder()?;
        let needle = f.needle();
        if needle.len() > MAX_TOKEN_LEN {
            return None;
        }
        let e = view.entry();
        let codes = view.codes();
        if !forced && !self.sure_pays(view, f) {
            return None;
        }
        self.sure[e.dict as usize]
            .get_or_init(|| Holding::new(view.dictionary().table(), needle, codes.bits()))
            .as_ref()
    }

    /// Whether the sure path pays on `view` by the cost model above, on a
    /// sample of its rows; each sampled code's token is checked on its own,
    /// so a chunk that does not take the path never reads its whole
    /// dictionary for [`Holding::new`].
    fn sure_pays(&self, view: &ChunkView<'_>, f: &Finder<'_>) -> bool {
        let Some(cb) = view.row_code_bounds_cached() else {
            return false;
        };
        if u64::from(view.entry().codes) < SURE_MIN_CODES {
            return false;
        }
        let (e, codes) = (view.entry(), view.codes());
        let table = view.dictionary().table();
        let (words, lens) = (table.words(), table.lens());
        let needle = f.needle();
        let n = needle.len();
        // Each sampled code's token on its own (a few ns: cheaper than a
        // memo the size of the dictionary).
        let holds = |c: usize| word_holds(&words[c], lens[c] as usize, needle);
        let rows = e.rows as usize;
        let per_row = (e.codes as usize).div_ceil(rows.max(1)).max(1);
        // Runs of consecutive rows (a row spread over the chunk alone cost
        // two cache misses), spread over the chunk.
        let sampled = SURE_SAMPLE_ROWS
            .min(SURE_SAMPLE_CODES / per_row)
            .max(SAMPLE_RUNS);
        let run = sampled / SAMPLE_RUNS;
        let step = rows.div_ceil(SAMPLE_RUNS).max(run);
        let sample = (0..rows)
            .step_by(step)
            .flat_map(|r0| r0..(r0 + run).min(rows));
        let (mut all, mut scanned, mut settled, mut open) = (0u64, 0u64, 0u64, 0u64);
        for r in sample {
            let (a, b) = (cb[r] as usize, cb[r + 1] as usize);
            all += (b - a) as u64;
            match (a..b).position(|k| holds(codes.get(k) as usize)) {
                Some(p) => {
                    scanned += p as u64 + 1;
                    settled += 1;
                }
                None => {
                    scanned += (b - a) as u64;
                    open += (b - a) as u64;
                }
            }
        }
        let open = if n == 1 { 0 } else { open };
        let unpack = UNPACK_EIGHTHS[usize::from(codes.bits() == 16)];
        let sure =
            scanned * SCAN_EIGHTHS + settled * SETTLED_EIGHTHS + open * OPEN_EIGHTHS + all * unpack;
        let (num, den) = SURE_MAX_SHARE;
        sure * den <= all * 8 * num
    }
}

impl Block<'_, '_> {
    /// The rows of the block that hold the literal (module doc).
    pub(super) fn sure(&self, h: &Holding, words: &mut [u64]) -> Result<()> {
        let (lo, hi) = (self.lo, self.hi);
        let f = self.c.block_finder().expect("a plain substring");
        let (c0, c1) = (self.cb[lo] as usize, self.cb[hi] as usize);
        let mut hits: Vec<usize> = Vec::new();
        // The rows no token settles (none for a one-byte literal).
        let mut open: Vec<usize> = Vec::new();
        WALK.with(|cell| -> Result<()> {
            let (codes, buf, starts) = &mut *cell.borrow_mut();
            codes.clear();
            codes.resize(c1 - c0, 0);
            let checked = self.view.codes();
            checked.unpack(c0, codes);
            // One pass over the codes, not a loop per row: from code `i`,
            // the next holding code settles its row and the scan goes on
            // at the next row's first code; the rows passed over are open.
            let end = |r: usize| self.cb[r + 1] as usize - c0;
            let (mut i, mut r) = (0usize, lo);
            while r < hi {
                let Some(p) = codes[i..].iter().position(|&c| h.holds(c)) else {
                    if !h.one_byte {
                        open.extend(r..hi);
                    }
                    break;
                };
                let at = i + p;
                while end(r) <= at {
                    if !h.one_byte {
                        open.push(r);
                    }
                    r += 1;
                }
                hits.push(r);
                i = end(r);
                r += 1;
            }
            if open.is_empty() {
                return Ok(());
            }
            let bb = self.bb()?;
            let dict = self.view.dictionary();
            let table = dict.table();
            let (tw, tl) = (table.words(), table.lens());
            let mut k = 0;
            while k < open.len() {
                // A piece: runs of consecutive open rows, about
                // DECODE_PIECE bytes (at least one row), decoded end to end
                // into `buf[..pos]`.
                let k0 = k;
                let mut pos = 0usize;
                starts.clear();
                while k < open.len() && (k == k0 || pos < DECODE_PIECE) {
                    let r0 = open[k];
                    let mut r1 = r0 + 1;
                    k += 1;
                    while k < open.len() && open[k] == r1 && pos < DECODE_PIECE {
                        r1 += 1;
                        k += 1;
                    }
                    starts.extend((r0..r1).map(|r| (pos + (bb[r] - bb[r0]) as usize) as u32));
                    let len = (bb[r1] - bb[r0]) as usize;
                    let (a, b) = (self.cb[r0] as usize, self.cb[r1] as usize);
                    if buf.len() < pos + len + DECODE_SLACK {
                        buf.resize(pos + len + DECODE_SLACK, 0);
                    }
                    if b - a >= SHORT_RUN_CODES {
                        decode::decode_range(dict, &checked, a..b, &mut buf[pos..]);
                    } else {
                        // A short run: its codes' 16-byte words copied here
                        // (a decoder call's setup costs more).
                        let mut at = pos;
                        for &c in &codes[a - c0..b - c0] {
                            let c = c as usize;
                            if at + MAX_TOKEN_LEN > buf.len() {
                                // Only with lengths inconsistent with `bb`.
                                break;
                            }
                            buf[at..at + MAX_TOKEN_LEN].copy_from_slice(&tw[c]);
                            at += tl[c] as usize;
                        }
                    }
                    // Consistent lengths decode to exactly `len` bytes
                    // (checked row byte boundaries); the rows are searched
                    // within their bounds whatever was decoded.
                    pos += len;
                }
                search_pending(f, &mut hits, &open[k0..k], starts, &buf[..pos]);
            }
            Ok(())
        })?;
        // Hits come from the rows' codes or bytes, which a null row lacks.
        self.finish(words, &hits, true);
        Ok(())
    }
}

/// Runs of open rows with fewer codes than this are copied token by token
/// rather than through the bulk decoder, whose fast loop takes 64 codes.
const SHORT_RUN_CODES: usize = 64;

/// The positions of byte `b` in a zero-padded token word: bit `8o + 7`
/// set for each byte `o` equal to `b`, eight bytes at a time and exact (no
/// carry from one byte to the next).
#[inline(always)]
fn byte_positions(word: &[u8; MAX_TOKEN_LEN], b: u8) -> u128 {
    let b = u64::from_ne_bytes([b; 8]);
    let zeros = |v: u64| {
        !(((v & 0x7f7f_7f7f_7f7f_7f7f) + 0x7f7f_7f7f_7f7f_7f7f) | v) & 0x8080_8080_8080_8080
    };
    let (x, y) = word.split_at(8);
    let x = zeros(u64::from_le_bytes(x.try_into().expect("8 bytes")) ^ b);
    let y = zeros(u64::from_le_bytes(y.try_into().expect("8 bytes")) ^ b);
    u128::from(y) << 64 | u128::from(x)
}

/// Whether a token (its zero-padded word and length) holds `needle`
/// (1..=16 bytes): the positions of the needle's first byte found eight
/// bytes at a time, then compared there.
#[inline]
fn word_holds(word: &[u8; MAX_TOKEN_LEN], len: usize, needle: &[u8]) -> bool {
    let n = needle.len();
    if n > len {
        return false;
    }
    // Bit `8o` for a first byte at `o`; starts past `len - n` cannot fit.
    let mut at = byte_positions(word, needle[0]) >> 7;
    while at != 0 {
        let o = at.trailing_zeros() as usize / 8;
        if o + n > len {
            return false;
        }
        if &word[o..o + n] == needle {
            return true;
        }
        at &= at - 1;
    }
    false
}

/// Appends to `hits` the rows of `rows` whose bytes (`values`, row `v`
/// from `starts[v]` to the next start or the end) hold `f`'s literal.
fn search_pending(
    f: &Finder<'_>,
    hits: &mut Vec<usize>,
    rows: &[usize],
    starts: &mut Vec<u32>,
    values: &[u8],
) {
    starts.push(values.len() as u32);
    let found = crate::search::values_containing(f, values, rows.len(), |v| starts[v] as usize);
    hits.extend(found.into_iter().map(|v| rows[v]));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A token holds the literal exactly when its bytes contain it: every
    /// token of a table against every one- to three-byte literal over its
    /// bytes, a NUL byte included.
    #[test]
    fn holding_tokens_are_those_that_contain_the_literal() {
        let mut t = TokenTable::single_bytes();
        for tok in [
            &b"ab"[..],
            b"abc",
            b"xaby",
            b"b\0a",
            b"0123456789abcdef",
            b"zz",
        ] {
            t.push(tok);
        }
        for needle in [
            &b"a"[..],
            b"b",
            b"\0",
            b"ab",
            b"ba",
            b"\0a",
            b"fa",
            b"bc",
            b"cdef",
            b"q",
        ] {
            let h = Holding::new(&t, needle, 12).unwrap();
            for c in 0..t.len() {
                let want = t.token(c).windows(needle.len()).any(|w| w == needle);
                assert_eq!(h.holds(c as u16), want, "{needle:?} token {:?}", t.token(c));
            }
            assert!((t.len()..1 << 12).all(|c| !h.holds(c as u16)));
            assert_eq!(h.one_byte, needle.len() == 1);
        }
        assert!(Holding::new(&t, &[b'a'; MAX_TOKEN_LEN + 1], 12).is_none());
    }

    /// `word_holds` is a substring test of the token's bytes: every token
    /// of every length against literals cut from it and beside it, with
    /// bytes that differ from the first only in their top bit or by a
    /// carry (the SWAR test must not see them as equal).
    #[test]
    fn word_holds_is_a_substring_test() {
        let alphabet = [b'a', b'b', 0x80 | b'a', 0, 0x60, 0xff, 0x01, b'a' - 1];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 16) as usize;
            let mut word = [0u8; MAX_TOKEN_LEN];
            for (k, w) in word.iter_mut().take(len).enumerate() {
                *w = alphabet[(x >> (4 + 3 * k)) as usize % alphabet.len()];
            }
            let tok = &word[..len];
            let a = (x >> 52) as usize % len;
            let n = 1 + (x >> 56) as usize % (MAX_TOKEN_LEN - a).min(len + 1);
            let mut needle = word[a..(a + n).min(MAX_TOKEN_LEN)].to_vec();
            if x >> 63 == 1 {
                let k = (x >> 40) as usize % needle.len();
                needle[k] = alphabet[(x >> 44) as usize % alphabet.len()];
            }
            let want = tok.windows(needle.len()).any(|w| w == &needle[..]);
            assert_eq!(word_holds(&word, len, &needle), want, "{tok:?} {needle:?}");
        }
    }
}
