//! The UTF-8 checks of text outputs: a whole column (SIMD, in parallel),
//! the rows chunk validation did not prove, and pieces checked as the
//! decoder writes them (module notes of `arrow`, "UTF-8").

use std::ops::Range;

use crate::error::{Error, Result};
use crate::read::Reader;

/// Checks that every row `values[o[i]..o[i+1]]` is UTF-8; the error names
/// the first bad row, numbered from `first` (the column's row number of
/// `o[0]`, so a range's error names the file's row).
pub(super) fn check_utf8(offs: &[i64], values: &[u8], first: u64) -> Result<()> {
    use rayon::prelude::*;
    let rows = offs.len().saturating_sub(1);
    if rows == 0 {
        return Ok(());
    }
    // Row-aligned pieces of about 1 MiB: each piece, valid on its own, starts
    // and ends on a char boundary, so all valid means the range is valid.
    let total = (offs[rows] - offs[0]) as usize;
    let pieces = (total >> 20).clamp(1, rows);
    let bounds: Vec<usize> = (0..=pieces).map(|k| k * rows / pieces).collect();
    let ok = bounds.par_windows(2).all(|w| {
        let (a, b) = (offs[w[0]] as usize, offs[w[1]] as usize);
        // All ASCII: valid, and every byte is a char boundary (no second
        // pass over the offsets).
        values[a..b].is_ascii()
            || simdutf8::basic::from_utf8(&values[a..b]).is_ok()
                && offs[w[0]..w[1]]
                    .iter()
                    .all(|&x| (x as usize) >= values.len() || (values[x as usize] as i8) >= -0x40)
    });
    if ok {
        return Ok(());
    }
    let bad = (0..rows)
        .find(|&i| std::str::from_utf8(&values[offs[i] as usize..offs[i + 1] as usize]).is_err())
        .unwrap_or(0);
    Err(Error::InvalidArgument(format!(
        "row {} is not valid UTF-8; read the column as binary",
        first + bad as u64
    )))
}

/// The rows of `rows` (numbered from its start) that chunk validation did
/// not prove UTF-8 ([`crate::read::ChunkView::rows_not_utf8`]), as sorted,
/// disjoint spans of at most `1 << 14` rows (spans less than 64 rows apart
/// are joined: checking a proven row too is harmless, and one long span
/// checks faster than many short ones), and how many rows they hold.
/// `rows` lies within the column.
pub(super) fn unproven_rows(
    reader: &Reader,
    rows: &Range<u64>,
) -> Result<(Vec<Range<usize>>, usize)> {
    const SPAN: usize = 1 << 14;
    const GAP: usize = 64;
    let mut spans: Vec<Range<usize>> = Vec::new();
    let mut count = 0usize;
    let mut push = |mut r: Range<usize>| {
        if let Some(l) = spans.last() {
            if r.start > l.end && r.start - l.end < GAP {
                r.start = l.end;
            }
        }
        count += r.len();
        while !r.is_empty() {
            match spans.last_mut() {
                Some(l) if l.end == r.start && l.len() < SPAN => {
                    let take = (SPAN - l.len()).min(r.len());
                    l.end += take;
                    r.start += take;
                }
                _ => {
                    let take = SPAN.min(r.len());
                    spans.push(r.start..r.start + take);
                    r.start += take;
                }
            }
        }
    };
    let n = reader.num_chunks();
    // The first chunk holding `rows.start` (chunks are few: a linear search
    // would do, a binary one is as short).
    let (mut lo_i, mut hi_i) = (0, n);
    while lo_i + 1 < hi_i {
        let mid = (lo_i + hi_i) / 2;
        if reader.chunk_info(mid).first_row <= rows.start {
            lo_i = mid;
        } else {
            hi_i = mid;
        }
    }
    for i in lo_i..n {
        let info = reader.chunk_info(i);
        let f = info.first_row;
        if f >= rows.end {
            break;
        }
        let lo = (rows.start.max(f) - f) as usize;
        let hi = (rows.end.min(f + info.entry.rows as u64) - f) as usize;
        if lo >= hi {
            continue;
        }
        let col = |r: usize| (f + r as u64 - rows.start) as usize;
        let view = reader.chunk(i)?;
        if view.tokens_utf8() {
            continue;
        }
        let Some(bits) = view.rows_not_utf8() else {
            push(col(lo)..col(hi));
            continue;
        };
        let words = bits.iter().enumerate().take(hi.div_ceil(64)).skip(lo / 64);
        for (w, &word) in words {
            if word == 0 {
                continue;
            }
            let (a, b) = ((w * 64).max(lo), (w * 64 + 64).min(hi));
            let len = b - a;
            let m = (word >> (a - w * 64)) & (u64::MAX >> (64 - len));
            if m == 0 {
                continue;
            }
            let first = a + m.trailing_zeros() as usize;
            let last = a + 63 - m.leading_zeros() as usize;
            push(col(first)..col(last + 1));
        }
    }
    Ok((spans, count))
}

/// Checks that the rows of each span are UTF-8 (in parallel; the other
/// rows are known valid). A span's bytes checked as one string prove each
/// of its rows when every row offset inside is a char boundary.
pub(super) fn check_spans(offs: &[i64], values: &[u8], spans: &[Range<usize>]) -> bool {
    use rayon::prelude::*;
    // Tasks of several spans (a span may be a single short row).
    spans.par_chunks(16).all(|task| {
        task.iter().all(|r| {
            let (a, b) = (offs[r.start] as usize, offs[r.end] as usize);
            let v = &values[a..b];
            // All ASCII: valid, and every byte is a char boundary.
            v.iter().fold(0u8, |x, &c| x | c) < 0x80
                || simdutf8::basic::from_utf8(v).is_ok()
                    && offs[r.start + 1..r.end]
                        .iter()
                        .all(|&x| (x as usize) >= b || !is_cont(values[x as usize]))
        })
    })
}

/// UTF-8 check of a column's values piece by piece, as they are decoded.
///
/// Each piece (a decode task's bytes) is checked on its own but for a
/// character cut by its ends: up to three leading continuation bytes and a
/// trailing incomplete character are left out, and every row offset inside
/// the piece must be a char boundary. What each piece proved is a region of
/// the values; [`Utf8Pieces::stitch`] then checks the few bytes between
/// regions. Valid regions and valid gaps that tile the values, each starting
/// on a char boundary, make the whole valid.
#[derive(Default)]
pub(super) struct Utf8Pieces {
    /// The checked regions `(start, end)` of the values.
    regions: std::sync::Mutex<Vec<(usize, usize)>>,
    /// Bytes seen by `check` (must equal the values' length).
    seen: std::sync::atomic::AtomicUsize,
}

/// A UTF-8 continuation byte (0b10xx_xxxx).
#[inline]
fn is_cont(b: u8) -> bool {
    (b as i8) < -0x40
}

/// The length of the character a lead byte starts (0: not a lead byte).
#[inline]
fn lead_len(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 0,
    }
}

impl Utf8Pieces {
    /// Checks one decoded piece of the values, `bytes` at `at`. `utf8`:
    /// the reader's validation found every token of the piece's chunk to be
    /// valid UTF-8 on its own; the piece (whole tokens, cut between tokens,
    /// rows made of whole tokens) is then valid, with a char boundary at its
    /// ends and at every row offset, and is not read.
    pub(super) fn check(&self, at: usize, bytes: &[u8], offsets: &[i64], utf8: bool) -> bool {
        use std::sync::atomic::Ordering;
        let n = bytes.len();
        self.seen.fetch_add(n, Ordering::Relaxed);
        // All ASCII: valid, and every byte is a char boundary. (An OR over
        // the whole piece, which compiles to wide SIMD, is cheaper on cached
        // bytes than `is_ascii`'s early-exit word loop.)
        let (a, e) = if utf8 || bytes.iter().fold(0u8, |x, &b| x | b) < 0x80 {
            (0, n)
        } else {
            let a = bytes.iter().take(3).take_while(|&&b| is_cont(b)).count();
            let mut e = n;
            if let Some(k) = (a.max(n.saturating_sub(4))..n)
                .rev()
                .find(|&k| !is_cont(bytes[k]))
            {
                let l = lead_len(bytes[k]);
                if l > 0 && k + l > n {
                    e = k;
                }
            }
            if a > e || simdutf8::basic::from_utf8(&bytes[a..e]).is_err() {
                return false;
            }
            // Row offsets inside the piece fall on char boundaries.
            let lo = offsets.partition_point(|&o| (o as usize) < at);
            for &o in &offsets[lo..] {
                let o = o as usize;
                if o >= at + n {
                    break;
                }
                if is_cont(bytes[o - at]) {
                    return false;
                }
            }
            (a, e)
        };
        self.regions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((at + a, at + e));
        true
    }

    /// Checks the bytes between the pieces' regions (and that the pieces
    /// covered the values).
    pub(super) fn stitch(self, values: &[u8]) -> bool {
        if self.seen.into_inner() != values.len() {
            return false;
        }
        let mut regions = self.regions.into_inner().unwrap_or_else(|e| e.into_inner());
        regions.sort_unstable();
        let mut prev = 0;
        for (s, e) in regions {
            if s < prev || s > values.len() || std::str::from_utf8(&values[prev..s]).is_err() {
                return false;
            }
            prev = e;
        }
        prev <= values.len() && std::str::from_utf8(&values[prev..]).is_ok()
    }
}
