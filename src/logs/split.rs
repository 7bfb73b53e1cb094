//! Header / body split: the leading words that (almost) every row shares in
//! shape — timestamp, level, host, pid, a JSON object's fixed keys — are
//! cut off into a *header* block and the rest into a *body* block, each
//! encoded as its own log block. The header block then has few templates,
//! so its integer columns run in row order (a timestamp field is one dense,
//! steadily growing column instead of one short column per body template)
//! and the body's templates no longer repeat header slots.
//!
//! Two cut rules (the format stores two blocks, whatever the rule):
//! - *words*: the end of the separator after word `h` (or the row's end
//!   when it has fewer words); `h` is chosen on a sample: the largest
//!   `h ≤ MAX_HEADER_WORDS` whose most common *header shape* (the
//!   separators of the first `h` words) covers ≥ [`COVERAGE`] of the rows
//!   (JSON lines, fixed-shape headers);
//! - *fields*: the end of the blanks after the `k`-th space/tab-delimited
//!   field, `k` the largest `≤ MAX_HEADER_FIELDS` whose [`FIELD_SHAPES`]
//!   most common shapes cover ≥ [`COVERAGE`] (syslog headers whose day
//!   padding or hostname changes the word shape: on Mac_2k the word rule
//!   cut mid-hostname, 61,949 B; the field rule 51,296 B).
//!
//! The writer encodes the column whole and at each cut found and keeps the
//! smallest, so a split never costs bytes (for a column of more than 1,024
//! rows the choice is made on a 512-row sample).
//!
//! ```text
//! "FPS2" | u32 header_len | header block (header_len bytes) | body block
//! ```
//! or a single log block ("FPL2"; "FPS1" / "FPL1" in format versions 4–5).
//! Row `r` = header row `r` ++ body row `r`.

use bytes::Bytes;

use super::bits::VarReader;
use super::decode::LogBlock;
use super::header::Cut;
use super::header::{header_fields, header_words};
use super::layouts::Layouts;
use super::render::Bulk;
use super::tokenize::{continuation, Tokenized, Tokens};
use super::LogForm;
use super::LogOptions;
use crate::error::{Error, Invariant, Result};

/// The split form's magic (format version 11: its blocks "FPL7").
pub(super) const SPLIT_MAGIC: &[u8; 4] = b"FPS7";
/// The split form's magic in format version 10 (its blocks "FPL6").
const SPLIT_MAGIC_6: &[u8; 4] = b"FPS6";
/// The split form's magic in format version 9 (its blocks "FPL5").
const SPLIT_MAGIC_5: &[u8; 4] = b"FPS5";
/// The split form's magic in format version 8 (its blocks "FPL4").
const SPLIT_MAGIC_4: &[u8; 4] = b"FPS4";
/// The split form's magic in format version 7 (its blocks "FPL3").
const SPLIT_MAGIC_3: &[u8; 4] = b"FPS3";
/// The split form's magic in format version 6 (its blocks "FPL2").
const SPLIT_MAGIC_2: &[u8; 4] = b"FPS2";
/// The split form's magic in format versions 4–5 (its blocks "FPL1").
const SPLIT_MAGIC_1: &[u8; 4] = b"FPS1";

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

/// Encodes a column of log rows: split into header and body when that is
/// smaller, else one block; tokenized at every non-alphanumeric byte or,
/// when smaller, at blanks only (`LogOptions::try_coarse`).
pub fn encode_column(rows: &[&[u8]], opts: &LogOptions) -> Vec<u8> {
    let opts = &small_column_options(rows, opts);
    // The candidates' blocks carry their open sections stored, compared
    // so; the one kept is packed once (`packed::seal`).
    super::packed::seal(encode_candidates(rows, opts), opts.resident)
}

/// `opts` with what only a small column may use ([`UNIQUE_DICT_COLUMN`]:
/// value dictionaries of distinct values, resident row index and column
/// data) turned off for `rows` past it.
pub(super) fn small_column_options(rows: &[&[u8]], opts: &LogOptions) -> LogOptions {
    let small = small_column(rows);
    LogOptions {
        unique_dicts: opts.unique_dicts && small,
        resident: opts.resident && small,
        ..opts.clone()
    }
}

/// Whether `rows` hold at most [`UNIQUE_DICT_COLUMN`] bytes of text.
pub(super) fn small_column(rows: &[&[u8]]) -> bool {
    rows.iter().map(|r| r.len()).sum::<usize>() <= UNIQUE_DICT_COLUMN
}

/// Bytes of text up to which a column's slots of distinct values may be
/// value dictionaries ([`LogOptions::unique_dicts`]): its open sections
/// then hold at most this much more. The Debian logs (up to 360 KB) gain
/// 5-17% from it, the 2,000-row Loghub columns 0.9% (bench/LOGS.md,
/// "Distinct values in the open section"); a real-size chunk gained 0.2%
/// and would hold up to its whole text decoded in memory once opened.
pub(crate) const UNIQUE_DICT_COLUMN: usize = 4 << 20;

/// [`encode_column`] before its open sections are packed.
fn encode_candidates(rows: &[&[u8]], opts: &LogOptions) -> Vec<u8> {
    let step = rows.len().div_ceil(opts.sample_rows.max(1)).max(1);
    let sample: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
    // The sample's words as the default setting splits them: read by both
    // header rules and, when the sample is every row, by the encodes below
    // (the decision sample's rows and the final encode's: `layouts.rs`),
    // which would otherwise split the same rows again.
    let words = Tokenized::of(&sample, &mut Tokens::default());
    let h = header_words(&sample, &words);
    let k = header_fields(&sample, &words);
    let words = (step == 1).then_some(words);
    drop(sample);
    // The candidates: whole or split (at a word or a field header, when
    // found), each with mixed letter/digit runs kept or split
    // (`Tokens::mixed`), or split at blanks only (`Tokens::coarse`).
    let mut cuts = Vec::new();
    if opts.split != Some(true) || (h == 0 && k == 0) {
        cuts.push(Cut::Whole);
    }
    if opts.split != Some(false) {
        if h > 0 {
            cuts.push(Cut::Words(h));
        }
        if k > 0 {
            cuts.push(Cut::Fields(k));
        }
    }
    // Decided on an evenly spaced sample of `DECIDE_ROWS` rows when the
    // column is larger (then one full encode), else by encoding them all.
    // On a sample, the cut first (with `opts.mixed`), then mixed runs kept
    // or split at that cut, then the coarse split (`Tokens::coarse`) of
    // the whole block: 2 + cuts encodes of the sample, not 3 × cuts; when
    // the coarse candidate and the best fine one are close (`CLOSE_CALL`),
    // both are encoded in full.
    // Candidates are compared without
    // template families (`family.rs`) or pool pruning (`text.rs`); the one
    // kept is then laid out with them when that is smaller.
    //
    // The coarse split is what line logs whose fields carry punctuation
    // need (a package `libc-bin:amd64`, a version `2.36-9+deb12u10`: at
    // every non-alphanumeric byte each field's shape is a template of its
    // own): `/var/log/dpkg.log` 61,380 → 42,307 bytes, apt's `term.log`
    // 44,110 → 38,529 (bench/LOGS.md); on the Loghub columns the fine split
    // stays smaller but for a few bodies.
    let plain = LogOptions {
        families: false,
        prune_pool: false,
        ..opts.clone()
    };
    let fine = |mixed| Tok {
        mixed,
        coarse: false,
    };
    let coarse = Tok {
        mixed: false,
        coarse: true,
    };
    let pick: Vec<(Tok, Cut)> = if rows.len() > 2 * DECIDE_ROWS {
        let picked = decision_sample(rows.len());
        let small: Vec<&[u8]> = picked.iter().map(|&i| rows[i]).collect();
        // The candidates share the sample's tokenizations and cuts, and a
        // part tokenized as one before it is not encoded again
        // (`layouts.rs`).
        let mut sample = Layouts::new(&small, &plain)
            .seeded(words.as_ref().map(|w| w.select(&picked)))
            .sizes_only();
        let mut size = |tok: Tok, c: Cut| sample.size(tok, c);
        let sized: Vec<(Cut, usize)> = cuts
            .iter()
            .map(|&c| (c, size(fine(opts.mixed), c)))
            .collect();
        let (cut, n) = sized
            .iter()
            .copied()
            .min_by_key(|&(_, n)| n)
            .unwrap_or((Cut::Whole, 0));
        let flipped = size(fine(!opts.mixed), cut);
        let fine_best = if flipped < n {
            (fine(!opts.mixed), cut, flipped)
        } else {
            (fine(opts.mixed), cut, n)
        };
        // Where the sample holds continuation lines (`tokenize::continuation`:
        // no header, so a cut gives each an empty header row and its id),
        // a cut that beats the whole rows by less than `CUT_CLOSE` on the
        // sample is settled on all the rows, the whole layout beside it.
        let whole_too = cut != Cut::Whole
            && small.iter().any(|r| continuation(r))
            && sized
                .iter()
                .any(|&(c, w)| c == Cut::Whole && w as f64 <= n as f64 * (1.0 + CUT_CLOSE));
        let fine_picks = |best: (Tok, Cut, usize)| {
            let mut v = vec![(best.0, best.1)];
            if whole_too {
                v.push((best.0, Cut::Whole));
            }
            v
        };
        // The coarse split of the whole block: one more sample encode (its
        // body under a cut lost to it on the real logs measured, and a
        // second coarse candidate cost ~10% of the compress speed).
        if !opts.try_coarse {
            fine_picks(fine_best)
        } else {
            let c0 = (coarse, Cut::Whole, size(coarse, Cut::Whole));
            // When the two kinds are within `CLOSE_CALL`, both are encoded on
            // all the rows: a sample can still misjudge what depends on the
            // whole column (the pool its rows share, dictionary values;
            // dpkg.log: two coarse layouts 1% apart on the sample, 19% on the
            // column).
            let close = |a: usize, b: usize| a as f64 <= b as f64 * (1.0 + CLOSE_CALL);
            let mut finalists = Vec::new();
            if close(fine_best.2, c0.2) {
                finalists.extend(fine_picks(fine_best));
            }
            if close(c0.2, fine_best.2) {
                finalists.push((c0.0, c0.1));
            }
            finalists
        }
    } else {
        let coarse_whole = opts.try_coarse.then_some((coarse, Cut::Whole));
        [fine(opts.mixed), fine(!opts.mixed)]
            .iter()
            .flat_map(|&t| cuts.iter().map(move |&c| (t, c)))
            .chain(coarse_whole)
            .collect()
    };
    if let [(tok, c)] = pick[..] {
        return Layouts::new(rows, opts).seeded(words).into_bytes(tok, c);
    }
    settle(rows, opts, &plain, &pick, words)
}

/// The smallest of the candidates `pick` (at least two) on all the rows.
/// Two (a close call between the sample's best fine and coarse layouts,
/// or between a cut and the whole rows: `CUT_CLOSE`) are each encoded with `opts` (families, pruned pool): one encode each,
/// compared as stored. More (a small column, every layout tried) are
/// encoded with `plain` options, the cheaper encode, and the smallest again
/// with `opts`, kept if smaller still.
/// `words`: the rows' default tokenization, when made already.
fn settle(
    rows: &[&[u8]],
    opts: &LogOptions,
    plain: &LogOptions,
    pick: &[(Tok, Cut)],
    words: Option<Tokenized>,
) -> Vec<u8> {
    if pick.len() <= 2 {
        // Each on its own (a full encode of a large column: nothing held
        // for reuse between them).
        // A close call: each sealed, the smaller kept.
        drop(words);
        return pick
            .iter()
            .map(|&(tok, c)| {
                super::packed::seal(Layouts::new(rows, opts).into_bytes(tok, c), opts.resident)
            })
            .min_by_key(Vec::len)
            .expect("at least one candidate");
    }
    let mut all = Layouts::new(rows, plain).seeded(words.clone());
    let (_, (tok, c)) = pick
        .iter()
        .map(|&(tok, c)| (all.size(tok, c), (tok, c)))
        .min_by_key(|e| e.0)
        .expect("at least one candidate");
    let best = all.bytes(tok, c);
    if !opts.families && !opts.prune_pool {
        return best;
    }
    let fam = Layouts::new(rows, opts).seeded(words).into_bytes(tok, c);
    let price = super::packed::price;
    if price(&fam) < price(&best) {
        fam
    } else {
        best
    }
}

/// A coarse candidate whose sample encoding is within this share of the
/// best fine one (or the reverse) is settled on all the rows.
const CLOSE_CALL: f64 = 0.03;

/// A header/body cut whose sample encoding is within this share of the
/// whole rows', on a column with continuation lines, is settled on all the
/// rows. Kafka `state-change.log` (8,830 of 11,367 lines stack frames): the
/// cut 7% smaller on the sample, 5% larger on the column (the frames' empty
/// headers cost a row-index id each: +2.3 KB; the timestamps in one column
/// save 1.5 KB); `server.log`: 2% smaller on the sample, 10% on the column.
/// On the Loghub columns (no continuation lines) a band this wide would
/// settle 8 of 21 columns in full, each to the sample's choice.
const CUT_CLOSE: f64 = 0.08;

/// Rows of the sample that decides how a large column is encoded.
const DECIDE_ROWS: usize = 512;

/// The decision sample of `rows` (more than `2 · DECIDE_ROWS`): runs of
/// [`ROW_RUN`] consecutive rows spread evenly over the column,
/// `DECIDE_ROWS` in all. Consecutive, because what a layout saves often
/// lies between neighbouring rows (integer columns framed per 128 rows:
/// timestamps and counters step by little from row to row, by much between
/// rows far apart); every k-th row, the sample before, underrated the
/// layouts that split numbers out (loghub_Thunderbird_2k: mixed runs 2.4%
/// larger on such a sample, 24% smaller on the column). Measured on the 21
/// Loghub columns (bench/LOGS.md, format 6): runs of 64 rows, geomean ratio
/// 14.36 → 14.75, same compress speed; runs of 128 lost 4% on
/// loghub_Linux_full (fewer places of a long column seen).
///
/// Returns the indexes of its rows among the column's `rows` rows.
fn decision_sample(rows: usize) -> Vec<usize> {
    let runs = DECIDE_ROWS / ROW_RUN;
    let gap = (rows - ROW_RUN) / (runs - 1);
    (0..runs).flat_map(|k| k * gap..k * gap + ROW_RUN).collect()
}

/// Rows of each run of [`decision_sample`] (half a row block).
const ROW_RUN: usize = 64;

/// How a candidate tokenizes: mixed letter/digit runs split or not
/// (`Tokens::mixed`), and the body (or the whole block) split at blanks
/// only (`Tokens::coarse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Tok {
    pub(super) mixed: bool,
    pub(super) coarse: bool,
}

/// One candidate encoding: whole or split at `c`, tokenized as `tok`.
#[cfg(test)]
fn encode_as(rows: &[&[u8]], opts: &LogOptions, tok: Tok, c: Cut) -> Vec<u8> {
    Layouts::new(rows, opts).into_bytes(tok, c)
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
        let form = if bytes.starts_with(SPLIT_MAGIC) {
            LogForm::V11
        } else if bytes.starts_with(SPLIT_MAGIC_6) {
            LogForm::V10
        } else if bytes.starts_with(SPLIT_MAGIC_5) {
            LogForm::V9
        } else if bytes.starts_with(SPLIT_MAGIC_4) {
            LogForm::V8
        } else if bytes.starts_with(SPLIT_MAGIC_3) {
            LogForm::V7
        } else if bytes.starts_with(SPLIT_MAGIC_2) {
            LogForm::V6
        } else if bytes.starts_with(SPLIT_MAGIC_1) {
            LogForm::V4
        } else {
            return Ok(LogColumn::Single(Box::new(LogBlock::open_shared(bytes)?)));
        };
        let mut r = VarReader::new(&bytes, 0);
        r.take(4, "split magic")?;
        let n = r.u32("header block length")? as usize;
        r.take(n, "header block")?;
        let head = LogBlock::open_shared(bytes.slice(8..8 + n)).map_err(|e| relocate(e, 8))?;
        let body =
            LogBlock::open_shared(bytes.slice(8 + n..)).map_err(|e| relocate(e, 8 + n as u64))?;
        // Both blocks of the split's own form ("FPS7": "FPL7" blocks).
        for (b, at) in [(&head, 8), (&body, 8 + n as u64)] {
            if b.form() != form {
                return Err(Error::corrupt(
                    super::bits::SECTION,
                    at,
                    Invariant::BadMagic,
                ));
            }
        }
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

    /// The payload form its magic names (spec/FORMAT.md §5.8.1): that of
    /// the file version that may hold it.
    pub fn form(&self) -> LogForm {
        match self {
            LogColumn::Single(b) => b.form(),
            LogColumn::Split(p) => p.0.form(),
        }
    }

    /// The column's blocks: the one block, or header and body.
    pub(super) fn blocks(&self) -> Vec<&LogBlock> {
        match self {
            LogColumn::Single(b) => vec![b],
            LogColumn::Split(hb) => vec![&hb.0, &hb.1],
        }
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
                    for _ in 0..h.rows() {
                        hs.put_next(values);
                        bs.put_next(values);
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

#[cfg(test)]
/// `n` syslog-style lines (`n` a multiple of 20, at most 3,600): two months,
/// days padded to two columns, hostnames of one and of several words, four
/// programs; a header of four fields that `header_fields` finds and a
/// column that splits there (tests here and in `ranges`).
pub(super) fn syslog_rows(n: u32) -> Vec<String> {
    (0..n)
        .map(|i| {
            let host = ["calvisitor-10-105-160-95", "authorMacBook-Pro"][(i % 3 == 0) as usize];
            let prog = [
                "kernel[0]",
                "sshd(pam_unix)[1234]",
                "com.apple.cts[258]",
                "ftpd[99]",
            ][(i * 7 % 4) as usize];
            format!(
                "{} {:>2} 10:{:02}:{:02} {host} {prog}: message {} of {}",
                ["Jun", "Jul"][(i / (n / 2)) as usize],
                1 + i / (n / 20),
                i / 60,
                i % 60,
                i * 13,
                ["alpha", "beta", "gamma"][(i % 3) as usize]
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Day padding (`Jul  1` / `Jun 14`) and hostnames of different word
    /// counts change the word shape of a syslog header; the field header
    /// covers them, stops before the program name, and the column is
    /// smaller split there and round trips.
    #[test]
    fn syslog_headers_are_cut_at_a_field() {
        let rows = syslog_rows(600);
        let refs: Vec<&[u8]> = rows.iter().map(|r| r.as_bytes()).collect();
        let words = Tokenized::of(&refs, &mut Tokens::default());
        assert_eq!(header_fields(&refs, &words), 4);
        let opts = LogOptions::default();
        let fine = Tok {
            mixed: false,
            coarse: false,
        };
        let split = encode_as(&refs, &opts, fine, Cut::Fields(4));
        assert!(split.len() < encode_as(&refs, &opts, fine, Cut::Whole).len());
        let col = LogColumn::open(&split).unwrap();
        assert!(col.is_split());
        let (mut values, mut offsets) = (Vec::new(), Vec::new());
        col.decode_all(&mut values, &mut offsets);
        for (r, w) in rows.iter().zip(offsets.windows(2)) {
            assert_eq!(&values[w[0] as usize..w[1] as usize], r.as_bytes());
        }
    }
}

#[cfg(test)]
mod coarse_tests {
    use super::*;

    /// Real dpkg lines (testdata/logs/dpkg_2k.log): the coarse candidate is
    /// kept, the payload is much smaller than the fine split's, and it
    /// reads back row for row.
    #[test]
    fn coarse_split_wins_on_dpkg_lines_and_reads_back() {
        let text = include_bytes!("../../testdata/logs/dpkg_2k.log");
        let rows: Vec<&[u8]> = text
            .strip_suffix(b"\n")
            .unwrap()
            .split(|&b| b == b'\n')
            .collect();
        let with = encode_column(&rows, &LogOptions::default());
        let without = encode_column(
            &rows,
            &LogOptions {
                try_coarse: false,
                ..LogOptions::default()
            },
        );
        assert!(
            (with.len() as f64) < 0.85 * without.len() as f64,
            "coarse {} vs fine {}",
            with.len(),
            without.len()
        );
        let col = LogColumn::open(&with).unwrap();
        assert_eq!(col.rows(), rows.len());
        let mut out = Vec::new();
        for (i, r) in rows.iter().enumerate() {
            out.clear();
            col.get_into(i, &mut out).unwrap();
            assert_eq!(&out[..], *r, "row {i}");
        }
    }
}
