//! Header / body split: the leading words that (almost) every row shares in
//! shape — timestamp, level, host, pid, a JSON object's fixed keys — are
//! cut off into a *header* block and the rest into a *body* block, each
//! encoded as its own log block. The header block then has few templates,
//! so its integer columns run in row order (a timestamp field is one dense,
//! steadily growing column instead of one short column per body template)
//! and the body's templates no longer repeat header slots.
//!
//! The cut of row `r` is the end of the separator after word `h` (or the
//! row's end when it has fewer words); `h` is chosen on a sample: the
//! largest `h ≤ MAX_HEADER_WORDS` whose most common *header shape* (the
//! separators of the first `h` words) covers ≥ [`COVERAGE`] of the rows.
//! The writer encodes the column both whole and split and keeps the
//! smaller, so the split never costs bytes.
//!
//! ```text
//! "FPS1" | u32 header_len | header block (header_len bytes) | body block
//! ```
//! or a single log block ("FPL1"). Row `r` = header row `r` ++ body row `r`.

use std::hash::Hasher;

use bytes::Bytes;

use super::bits::{FastMap as HashMap, FoldHasher, VarReader};
use super::decode::LogBlock;
use super::encode::{encode, LogOptions};
use super::render::Bulk;
use super::tokenize::Tokens;
use crate::error::{Error, Invariant, Result};

const SPLIT_MAGIC: &[u8; 4] = b"FPS1";

/// `e` with its offset moved by `by` bytes (a block's errors count from the
/// block's first byte).
fn relocate(e: Error, by: u64) -> Error {
    match e {
        Error::Corrupt {
            section,
            offset,
            invariant,
        } => Error::Corrupt {
            section,
            offset: offset + by,
            invariant,
        },
        e => e,
    }
}

/// Longest header, in words.
const MAX_HEADER_WORDS: usize = 48;

/// Share of the rows the most common header shape must cover.
const COVERAGE: f64 = 0.9;

/// The header length (in words) for `sample`; 0 = no split.
fn header_words(sample: &[&[u8]]) -> usize {
    let mut t = Tokens::default();
    // Per row, the separators of its first MAX_HEADER_WORDS words.
    // Keyed by a running hash of the shape (128-bit: a collision would
    // only merge two shapes' counts, and is not expected).
    let mut counts: Vec<HashMap<u128, usize>> = vec![HashMap::default(); MAX_HEADER_WORDS + 1];
    for r in sample {
        t.split(r);
        let (mut h1, mut h2) = (FoldHasher::default(), FoldHasher::default());
        h2.write_u64(0x5bd1_e995);
        let n = MAX_HEADER_WORDS.min(t.words.len());
        for (&(a, b), count) in t.seps[..n].iter().zip(&mut counts[1..]) {
            let sep = &r[a as usize..b as usize];
            h1.write(sep);
            h2.write(sep);
            h2.write_u64(b as u64 - a as u64);
            let key = (h1.finish() as u128) << 64 | h2.finish() as u128;
            *count.entry(key).or_default() += 1;
        }
    }
    let need = (sample.len() as f64 * COVERAGE).ceil() as usize;
    (1..=MAX_HEADER_WORDS)
        .rev()
        .find(|&h| counts[h].values().any(|&c| c >= need.max(1)))
        .unwrap_or(0)
}

/// Where row `r` splits for a header of `h` words.
fn cut(r: &[u8], t: &mut Tokens, h: usize) -> usize {
    t.split(r);
    if t.words.len() <= h {
        r.len()
    } else {
        t.seps[h].1 as usize
    }
}

/// Encodes a column of log rows: split into header and body when that is
/// smaller, else one block.
pub fn encode_column(rows: &[&[u8]], opts: &LogOptions) -> Vec<u8> {
    let step = rows.len().div_ceil(opts.sample_rows.max(1)).max(1);
    let sample: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
    let h = header_words(&sample);
    // The candidates: whole or split (when a header was found), each with
    // mixed letter/digit runs kept or split (`Tokens::mixed`).
    let mut cands: Vec<(bool, usize)> = Vec::new();
    for mixed in [opts.mixed, !opts.mixed] {
        if opts.split != Some(true) || h == 0 {
            cands.push((mixed, 0));
        }
        if h > 0 && opts.split != Some(false) {
            cands.push((mixed, h));
        }
    }
    // Decided on an evenly spaced sample of `DECIDE_ROWS` rows when the
    // column is larger (then one full encode), else by encoding them all.
    let pick = if rows.len() > 2 * DECIDE_ROWS {
        let step = rows.len().div_ceil(DECIDE_ROWS);
        let small: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
        let best = cands
            .iter()
            .min_by_key(|&&(mixed, h)| encode_as(&small, opts, mixed, h).len())
            .copied();
        vec![best.unwrap_or((opts.mixed, 0))]
    } else {
        cands
    };
    pick.iter()
        .map(|&(mixed, h)| encode_as(rows, opts, mixed, h))
        .min_by_key(|e| e.len())
        .expect("at least one candidate")
}

/// Rows of the sample that decides how a large column is encoded.
const DECIDE_ROWS: usize = 512;

/// One candidate encoding: whole (`h` = 0) or split after `h` words.
fn encode_as(rows: &[&[u8]], opts: &LogOptions, mixed: bool, h: usize) -> Vec<u8> {
    let opts = LogOptions {
        mixed,
        ..opts.clone()
    };
    if h == 0 {
        return encode(rows, &opts);
    }
    let mut t = Tokens::default();
    let cuts: Vec<usize> = rows.iter().map(|r| cut(r, &mut t, h)).collect();
    let heads: Vec<&[u8]> = rows.iter().zip(&cuts).map(|(r, &c)| &r[..c]).collect();
    let bodies: Vec<&[u8]> = rows.iter().zip(&cuts).map(|(r, &c)| &r[c..]).collect();
    let head = encode(&heads, &opts);
    let body = encode(&bodies, &opts);
    let mut out = Vec::with_capacity(8 + head.len() + body.len());
    out.extend_from_slice(SPLIT_MAGIC);
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&body);
    out
}

/// An opened column: one block, or a header and a body block of equal rows.
pub enum LogColumn {
    /// One log block.
    Single(Box<LogBlock>),
    /// Header block and body block.
    Split(Box<(LogBlock, LogBlock)>),
}

impl LogColumn {
    /// Opens and validates what [`encode_column`] wrote (copied).
    pub fn open(bytes: &[u8]) -> Result<Self> {
        Self::open_shared(Bytes::copy_from_slice(bytes))
    }

    /// [`Self::open`] without a copy. Error offsets count from the
    /// payload's first byte.
    pub fn open_shared(bytes: Bytes) -> Result<Self> {
        if !bytes.starts_with(SPLIT_MAGIC) {
            return Ok(LogColumn::Single(Box::new(LogBlock::open_shared(bytes)?)));
        }
        let mut r = VarReader::new(&bytes, 0);
        r.take(4, "split magic")?;
        let n = r.u32("header block length")? as usize;
        r.take(n, "header block")?;
        let head = LogBlock::open_shared(bytes.slice(8..8 + n)).map_err(|e| relocate(e, 8))?;
        let body =
            LogBlock::open_shared(bytes.slice(8 + n..)).map_err(|e| relocate(e, 8 + n as u64))?;
        if head.rows() != body.rows() {
            return Err(Error::corrupt(
                super::bits::SECTION,
                8 + n as u64,
                Invariant::SizeMismatch {
                    what: "body rows",
                    expected: head.rows() as u64,
                    found: body.rows() as u64,
                },
            ));
        }
        Ok(LogColumn::Split(Box::new((head, body))))
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        match self {
            LogColumn::Single(b) => b.rows(),
            LogColumn::Split(hb) => hb.0.rows(),
        }
    }

    /// Templates (both blocks' when split).
    pub fn templates(&self) -> usize {
        match self {
            LogColumn::Single(b) => b.templates(),
            LogColumn::Split(hb) => hb.0.templates() + hb.1.templates(),
        }
    }

    /// Escaped rows (when split: header rows plus body rows that took the
    /// escape template).
    pub fn escaped_rows(&self) -> usize {
        match self {
            LogColumn::Single(b) => b.escaped_rows(),
            LogColumn::Split(hb) => hb.0.escaped_rows() + hb.1.escaped_rows(),
        }
    }

    /// True when split into header and body.
    pub fn is_split(&self) -> bool {
        matches!(self, LogColumn::Split(..))
    }

    /// Appends row `row` to `out` (O(1): one row of each block).
    pub fn get_into(&self, row: usize, out: &mut Vec<u8>) -> Result<()> {
        match self {
            LogColumn::Single(b) => b.get_into(row, out),
            LogColumn::Split(hb) => {
                hb.0.get_into(row, out)?;
                hb.1.get_into(row, out)
            }
        }
    }

    /// Every row into Arrow layout (`values`, `rows + 1` offsets from 0).
    pub fn decode_all(&self, values: &mut Vec<u8>, offsets: &mut Vec<i64>) {
        match self {
            LogColumn::Single(b) => b.decode_all(values, offsets),
            LogColumn::Split(hb) => {
                let (h, b) = (&hb.0, &hb.1);
                values.clear();
                offsets.clear();
                offsets.reserve(h.rows() + 1);
                offsets.push(0);
                if let (Some(mut hs), Some(mut bs)) = (Bulk::new(h), Bulk::new(b)) {
                    for (ht, bt) in h.row_templates().into_iter().zip(b.row_templates()) {
                        hs.put_row(ht, values);
                        bs.put_row(bt, values);
                        offsets.push(values.len() as i64);
                    }
                } else {
                    for r in 0..h.rows() {
                        // In range: both blocks have `rows` rows.
                        let _ = self.get_into(r, values);
                        offsets.push(values.len() as i64);
                    }
                }
            }
        }
    }
}
