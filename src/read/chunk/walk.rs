//! Steps 11 and 12 of spec/FORMAT.md §9 in one pass over a chunk's codes
//! (issue 23 item 1: host validation bounds a GPU first scan).
//!
//! The step-by-step checks (`check_codes`, then `check_rows`) unpack every
//! code twice and look its length up twice. Here each code is unpacked and
//! looked up once: its range check, its token length's histogram, a running
//! sum of lengths and a running count of tokens that cut a character. A
//! batch boundary `b` (code `min(b·G, count)`) then compares the running sum
//! there with `sidecar[b]`, and a row's end with its byte boundary. That is
//! the same claim as the steps' (every batch's lengths add up to its sidecar
//! span, every row's to its byte span): with `sidecar[0] = rb[0] = 0` and the
//! running sum checked at every row end, the sum at any code is the true
//! prefix of lengths, so comparing prefixes at boundaries compares spans.
//!
//! The pass only says "all of it holds" or "something does not": on the
//! latter the caller runs the step-by-step checks, which find and report the
//! first broken invariant in the spec's order. So errors are unchanged, and
//! nothing is accepted that the steps would refuse.

use std::ops::Range;

use crate::format::{codes, limits};

/// Codes unpacked at a time.
const BLOCK: usize = 256;

/// Per-task buffers (one per rayon job, not per 64 rows: zeroing them per
/// word of rows showed in the profile).
pub(super) struct Scratch {
    codes: [u16; BLOCK],
    /// `bytes[k]`: the value bytes before code `at + k` of the block at
    /// `at` (from the chunk's start, like the row bytes).
    bytes: [u64; BLOCK + 1],
    /// `cuts[k]`: tokens cutting a character before code `at + k`.
    cuts: [u32; BLOCK + 1],
}

impl Scratch {
    pub(super) fn new() -> Box<Self> {
        Box::new(Scratch {
            codes: [0; BLOCK],
            bytes: [0; BLOCK + 1],
            cuts: [0; BLOCK + 1],
        })
    }
}

/// What the pass reads: a chunk's packed codes and its decoded sequences.
#[derive(Clone, Copy)]
pub(super) struct Walk<'a> {
    pub bits: u8,
    pub packed: &'a [u8],
    pub count: usize,
    /// Dictionary size: codes must be below it.
    pub tokens: u32,
    /// Per token: its length (1..=16), plus 0x80 when it cuts a character
    /// (`utf8::token_len_flags`).
    pub len_utf8: &'a [u8],
    /// Sidecar batch size `G` and positions (`ceil(count/G) + 1` values).
    pub batch: usize,
    pub sidecar: &'a [u32],
    /// Row code and row byte boundaries (`rows + 1` values each).
    pub rc: &'a [u32],
    pub rb: &'a [u32],
}

impl Walk<'_> {
    /// Whether the buffers have the sizes the pass relies on (the
    /// sequences' checks ran, but the pass checks what it indexes).
    pub(super) fn fits(&self) -> bool {
        let nb = self.count.div_ceil(self.batch.max(1));
        self.batch > 0
            && self.packed.len() >= codes::packed_len(self.bits, self.count)
            && self.sidecar.len() == nb + 1
            && self.sidecar[0] == 0
            && !self.rc.is_empty()
            && self.rc.len() == self.rb.len()
            && self.rc[0] == 0
            && self.rb[0] == 0
            && *self.rc.last().expect("non-empty") as usize == self.count
            && self.len_utf8.len() >= self.tokens as usize
    }

    /// Rows `rows` (at most 64, a word of the UTF-8 marks): every code
    /// below the dictionary size, every row at most `MAX_VALUE_LEN` bytes,
    /// every row's lengths adding up to its byte boundaries, every batch
    /// boundary inside the rows' codes agreeing with the sidecar. Adds the
    /// codes' token lengths to `hist` (`hist[k % 4][len - 1]`, four
    /// interleaved tables) and returns the rows (bit `r - rows.start`) that
    /// use a token cutting a character; `None` when anything does not hold
    /// (the caller then finds what).
    pub(super) fn word(
        &self,
        rows: Range<usize>,
        s: &mut Scratch,
        hist: &mut [[u32; 16]; 4],
    ) -> Option<u64> {
        let (first, end) = (rows.start, rows.end);
        debug_assert!(end - first <= 64);
        let (rc, rb) = (self.rc, self.rb);
        // Monotone boundaries are what the sequences' checks give; checked
        // here too, so that a difference below cannot wrap. One fold over
        // the rows' pairs, without a branch or bounds check per row.
        let (rb_w, rc_w) = (&rb[first..=end], &rc[first..=end]);
        let bad = rb_w
            .windows(2)
            .zip(rc_w.windows(2))
            .fold(false, |bad, (b, c)| {
                bad | (b[1] < b[0])
                    | (c[1] < c[0])
                    | (u64::from(b[1].wrapping_sub(b[0])) > limits::MAX_VALUE_LEN)
            });
        if bad {
            return None;
        }
        let (c0, c1) = (rc[first] as usize, rc[end] as usize);
        let (g, count) = (self.batch, self.count);
        let nb = count.div_ceil(g);
        // The next batch boundary after code c0: batch b ends at
        // min(b·G, count).
        let mut b = c0 / g + 1;
        let boundary = |b: usize| {
            if b > nb {
                usize::MAX
            } else {
                (b * g).min(count)
            }
        };
        let mut bpos = boundary(b);
        let (mut acc, mut cut_acc) = (rb[first] as u64, 0u32);
        let (mut row, mut at, mut ok) = (first, c0, true);
        let (mut cut_rows, mut cuts_before) = (0u64, 0u32);
        // Rows with no codes before the first code.
        while row < end && rc[row + 1] as usize == c0 {
            ok &= rb[row + 1] as u64 == acc;
            row += 1;
        }
        while at < c1 {
            let n = (c1 - at).min(BLOCK);
            let block = &mut s.codes[..n];
            codes::unpack(self.bits, self.packed, at, block);
            // The range check as one max (vectorized).
            if block.iter().fold(0u16, |m, &c| m.max(c)) as u32 >= self.tokens {
                return None;
            }
            (s.bytes[0], s.cuts[0]) = (acc, cut_acc);
            let mut quads = block.chunks_exact(4);
            let mut k = 0;
            for q in &mut quads {
                for (h, &c) in hist.iter_mut().zip(q) {
                    let x = self.len_utf8[c as usize];
                    let l = (x & 0x1f) as usize;
                    h[(l.wrapping_sub(1)) & 15] += 1;
                    acc += l as u64;
                    cut_acc += (x >> 7) as u32;
                    k += 1;
                    (s.bytes[k], s.cuts[k]) = (acc, cut_acc);
                }
            }
            for &c in quads.remainder() {
                let x = self.len_utf8[c as usize];
                let l = (x & 0x1f) as usize;
                hist[0][(l.wrapping_sub(1)) & 15] += 1;
                acc += l as u64;
                cut_acc += (x >> 7) as u32;
                k += 1;
                (s.bytes[k], s.cuts[k]) = (acc, cut_acc);
            }
            // Batch boundaries in this block: codes at + 1..=at + n.
            while bpos <= at + n {
                ok &= s.bytes[bpos - at] == self.sidecar[b] as u64;
                b += 1;
                bpos = boundary(b);
            }
            // Rows that end in this block: rc[row + 1] in at + 1..=at + n.
            while row < end && (rc[row + 1] as usize) <= at + n {
                let e = rc[row + 1] as usize - at;
                ok &= s.bytes[e] == rb[row + 1] as u64;
                cut_rows |= ((s.cuts[e] != cuts_before) as u64) << (row - first);
                cuts_before = s.cuts[e];
                row += 1;
            }
            at += n;
        }
        (ok && row == end).then_some(cut_rows)
    }
}

#[cfg(all(test, feature = "test-util"))]
mod tests {
    use crate::read::chunk::validate::STEPS_ONLY;
    use crate::testing::recompute_checksums;
    use crate::write::write_to_vec;
    use crate::{Codec, DictMode, Reader, WriterOptions};

    thread_local! {
        static STEP_ERRORS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Every chunk of `file` validated with the one-pass walk and with the
    /// steps one by one: the same histogram and UTF-8 result, or the same
    /// error. Returns how many chunks the walk accepted.
    fn same_both_ways(file: &[u8]) -> usize {
        let open = || Reader::from_bytes(file.to_vec()).ok();
        let (Some(a), Some(b)) = (open(), open()) else {
            return 0;
        };
        let mut accepted = 0;
        for i in 0..a.num_chunks() as u32 {
            let walk = a.validate_chunk(i).map(|(c, h)| (h, c.tokens_utf8));
            STEPS_ONLY.with(|s| s.set(true));
            let steps = b.validate_chunk(i).map(|(c, h)| (h, c.tokens_utf8));
            STEPS_ONLY.with(|s| s.set(false));
            match (&walk, &steps) {
                (Ok(x), Ok(y)) => {
                    assert_eq!(x, y, "chunk {i}");
                    accepted += 1;
                }
                (Err(x), Err(y)) => {
                    assert_eq!(x.to_string(), y.to_string(), "chunk {i}");
                    let e = x.to_string();
                    if ["code", "sidecar", "row"].iter().any(|w| e.contains(w)) {
                        STEP_ERRORS.with(|c| c.set(c.get() + 1));
                    }
                }
                _ => panic!("chunk {i}: walk {walk:?}, steps {steps:?}"),
            }
        }
        accepted
    }

    /// Files with 12- and 16-bit codes, shared and per-chunk dictionaries,
    /// value-dictionary chunks, nulls, empty rows, non-UTF-8 tokens and rows
    /// longer than a block of codes; then each mutated (1–3 bit flips, the
    /// checksums recomputed so the damage reaches the structural checks).
    #[test]
    fn the_walk_accepts_and_refuses_what_the_steps_do() {
        let rows: Vec<Option<Vec<u8>>> = (0..6_000usize)
            .map(|i| match i % 41 {
                3 => None,
                7 => Some(Vec::new()),
                11 => Some(
                    (0..3_000)
                        .map(|k| b"abcdefgh \xc3\xa9"[(k + i) % 11])
                        .collect(),
                ),
                13 => Some(vec![0xff, 0xc3, (i % 251) as u8]),
                _ => Some(
                    format!("GET /api/{} {} \u{e9}t\u{e9} {}", i % 97, i * 7, i % 5).into_bytes(),
                ),
            })
            .collect();
        let low: Vec<Option<Vec<u8>>> = (0..6_000usize)
            .map(|i| (i % 17 != 2).then(|| format!("clerk#{}", i % 7).into_bytes()))
            .collect();
        let mut seeds = Vec::new();
        for (codec, mode) in [
            (Codec::OnPair12, DictMode::Shared),
            (Codec::OnPair16, DictMode::PerChunk),
            (Codec::Fsst12, DictMode::Shared),
        ] {
            let opts = WriterOptions::default()
                .with_codec(codec)
                .with_dict_mode(mode)
                .with_chunk_rows(1_000);
            seeds.push(write_to_vec(rows.iter().map(|r| r.as_deref()), opts).unwrap());
        }
        let opts = WriterOptions::default().with_chunk_rows(1_500);
        seeds.push(write_to_vec(low.iter().map(|r| r.as_deref()), opts).unwrap());
        for s in &seeds {
            let n = Reader::from_bytes(s.clone()).unwrap().num_chunks();
            assert_eq!(same_both_ways(s), n, "a valid file passes both ways");
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for s in &seeds {
            for _ in 0..300 {
                let mut f = s.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() % f.len() as u64) as usize;
                    f[at] ^= 1 << (next() % 8);
                }
                recompute_checksums(&mut f);
                same_both_ways(&f);
            }
        }
        // The mutations reach steps 11 and 12 (codes, sidecar, rows).
        let n = STEP_ERRORS.with(|c| c.get());
        eprintln!("errors in steps 11-12: {n}");
        assert!(n > 20, "{n}");
    }
}
