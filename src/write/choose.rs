//! Codec choice: `auto` trains the codecs on the same rows (those a cheap
//! screen does not rule out, below), estimates the bytes each would put in
//! the file and keeps the smallest (spec/FORMAT.md
//! §4.2 says what each codec id means; nothing here changes the bytes a
//! chosen codec writes).
//!
//! The estimate for one codec, for the rows a dictionary will serve:
//!
//! * codes: the codes of an evaluation sample (rows spread over the input,
//!   at a different phase from the training sample, all rows when the input is
//!   small) scaled to the whole input, at 12 or 16 bits each;
//! * sidecar: one entry per `G` codes at [`SIDECAR_ENTRY_BYTES`];
//! * dictionary: the exact length of its stored (front-coded) section
//!   (`dict::planes::stored_section_len`, spec/FORMAT.md §4).
//!
//! Row boundaries are left out: they are the same for every codec but for
//! the row-code deltas, which follow the codes.
//!
//! Value dictionaries (spec/FORMAT.md §5.6) are a candidate layout next to
//! the codecs: when the rows hold at most half as many distinct values as
//! rows, each codec's estimate is also taken for the value-dictionary layout
//! (the distinct values encoded exactly with the candidate's dictionary, the
//! dictionary, and the bit-packed row indices: `write/values.rs`), and the
//! smaller of the two counts. The index costs the same for every codec, so
//! where the layout wins, what decides between codecs is how well each codes
//! the few distinct values and how big its dictionary is. The writer then
//! makes the exact per-chunk choice (both sections, the smaller kept).
//!
//! OnPair-12 or OnPair-16 (`auto`, rows of at least
//! [`AUTO_ONPAIR16_MIN_BYTES`] with no value-dictionary layout in play): before
//! any full training, both are trained on a [`PLAN_TRAIN_BYTES`] sample
//! (runs of rows spread over the input, each scanned once) and estimated on
//! [`PLAN_EVAL_BYTES`] of other rows. Where OnPair-16's sample estimate is
//! below [`PLAN_ONLY16_BELOW`] × OnPair-12's, only OnPair-16 trains in full;
//! above [`PLAN_ONLY12_ABOVE`], only OnPair-12; between, both (OnPair-16
//! where OnPair-12's scan filled, as below). Measured on the corpus
//! (2026-12-03, bench/COMPRESS.md): the 7 columns where OnPair-16's file is
//! more than 1% smaller than OnPair-12's had sample ratios 0.955–1.082, the
//! 7 where it is more than 1% larger 1.137–1.321 (the sample underrates
//! OnPair-16, whose 65536 tokens need more rows than the sample to pay); no
//! corpus column falls between the bounds, and every corpus file is the same
//! as when both trained in full. Otherwise (smaller rows, value dictionaries)
//! OnPair-12 trains first, then OnPair-16 only when OnPair-12's scan filled
//! all 4096 tokens before pruning: where 4096 were not all created, 65536
//! only widen the codes (corpus: OnPair-16 was 1.00–1.33× OnPair-12's file on
//! the four columns this skips, c_name, c_address, l_shipinstruct, o_clerk).
//!
//! Screening FSST-12 (`auto`): the OnPair dictionary trained first (OnPair-16
//! where the sample ruled OnPair-12 out, else OnPair-12) is the yardstick.
//! Where OnPair-12 has at least [`SCREEN_MAX_BYTES_PER_CODE`] value bytes per
//! code, FSST-12 is left out (no screen, no training: its symbols of at most
//! 8 bytes lost by 39% or more on every such corpus column). Otherwise, next
//! to it (when no value-dictionary layout is in play) FSST-12 is trained on a
//! small sample ([`SCREEN_FSST12`], about a quarter of its full training).
//! The screening dictionary is estimated on at most [`SCREEN_EVAL_BYTES`] of
//! the evaluation rows, the yardstick on the evaluation rows when they are
//! every row (its trainer's codes: no extra pass) and on the screen's rows
//! otherwise (its estimate on the whole evaluation sample is made only where
//! another candidate trains in full, for [`pick`]), and the full FSST-12
//! training runs only when the screening estimate is within [`SCREEN_MARGIN`]
//! of the yardstick's. On the 41
//! corpus columns (2026-12-01, bench/notes/r4-comp.md) the screening ratio
//! (FSST-12 screen / OnPair-12 estimate) was at most 1.30× the full files'
//! ratio (loghub_Linux_full: 2.09 against 1.61), and every column whose
//! screening ratio exceeded 1.25 had a full FSST-12 file at least 1.19× the
//! best OnPair file: no choice changed (same bytes on every column), and
//! FSST-12's full training is skipped on 26 of the 38 screened columns.
//! With the margin at 12% (2026-12-02, 45 columns, [`SCREEN_MARGIN`] says
//! why) it is skipped on 36 of 42 screened columns, again with no choice
//! changed. The margin rests on the corpus: a column whose full training
//! gains as much over its screen as loghub_Linux_full's (file ratio 1.30×)
//! and whose screen lands at 1.12–1.25× could lose FSST-12's win.
//!
//! Tie-breaker: among the codecs whose estimate is within [`TIE_MARGIN`] of
//! the smallest, the one with the most value bytes per code wins (decoders
//! spend their time per code, so fewer codes decode faster).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::{train_codec, WriterOptions};
use crate::dict::fsst12::{self, Fsst12Params};
use crate::dict::matcher::Matcher;
use crate::dict::onpair::{self, OnPairParams};
use crate::dict::planes::stored_section_len;
use crate::dict::TokenTable;
use crate::format::Codec;

/// Which codec a writer uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CodecChoice {
    /// Train FSST-12, OnPair-12 and OnPair-16 (on rows of at least
    /// [`AUTO_ONPAIR16_MIN_BYTES`]) on each dictionary's rows and keep the one
    /// with the smallest estimated size (default). A codec is not trained in
    /// full where a cheap estimate on a sample says it cannot win
    /// (`write/choose.rs`).
    #[default]
    Auto,
    /// Always this codec.
    Fixed(Codec),
}

impl From<Codec> for CodecChoice {
    fn from(c: Codec) -> Self {
        CodecChoice::Fixed(c)
    }
}

impl CodecChoice {
    /// Every choice, in the CLI's spelling order.
    pub const ALL: [CodecChoice; 4] = [
        CodecChoice::Auto,
        CodecChoice::Fixed(Codec::Fsst12),
        CodecChoice::Fixed(Codec::OnPair12),
        CodecChoice::Fixed(Codec::OnPair16),
    ];

    /// Name as the CLI spells it: `auto`, `fsst12`, `onpair12`, `onpair16`.
    pub fn name(self) -> &'static str {
        match self {
            CodecChoice::Auto => "auto",
            CodecChoice::Fixed(c) => c.name(),
        }
    }

    /// Parses a CLI name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The codecs this choice trains for rows of `bytes` bytes.
    fn candidates(self, bytes: usize) -> &'static [Codec] {
        match self {
            CodecChoice::Auto if bytes < AUTO_ONPAIR16_MIN_BYTES => {
                &[Codec::Fsst12, Codec::OnPair12]
            }
            CodecChoice::Auto => &[Codec::Fsst12, Codec::OnPair12, Codec::OnPair16],
            CodecChoice::Fixed(Codec::Fsst12) => &[Codec::Fsst12],
            CodecChoice::Fixed(Codec::OnPair12) => &[Codec::OnPair12],
            CodecChoice::Fixed(Codec::OnPair16) => &[Codec::OnPair16],
        }
    }
}

/// `auto` trains OnPair-16 only for rows of at least this many bytes. A
/// 16-bit dictionary needs several MB to fill. With dictionaries
/// stored front-coded (format version 3) a large dictionary costs little, and
/// OnPair-16 gives the smallest file on corpus columns from 1.8 MB up
/// (dbtext_yago, dbtext_movies, loghub_Linux_full, nltk_speeches_en: 5–7%
/// smaller than OnPair-12); under 1 MiB its file is at least 10% larger than
/// the best codec's on every corpus column (closest: dbtext_chinese, 0.75 MB,
/// +11%), and skipping it saves two of auto's five trainings there.
/// (With planes on disk, format version 2, the bound was 4 MiB.)
pub const AUTO_ONPAIR16_MIN_BYTES: usize = 1 << 20;

/// Estimates within this share of the smallest count as a tie, broken by
/// bytes per code. 1%: below the estimate's own error on small inputs, and
/// the choice still stays within 3% of the best codec on every corpus column
/// (`tests/choose.rs`).
pub const TIE_MARGIN: f64 = 0.01;

/// Bytes of one sidecar entry in the estimate: a cascaded delta of about
/// 10–14 bits.
pub const SIDECAR_ENTRY_BYTES: f64 = 1.75;

/// Rows per parallel task of an estimate's encoding pass.
const ESTIMATE_TASK_ROWS: usize = 4096;

/// Most bytes of rows encoded to estimate each candidate's size.
const EVAL_BYTES: usize = 1 << 20;

/// Runs of consecutive rows in an evaluation sample of a large input.
const EVAL_RUNS: usize = 256;

/// One codec's estimate for one dictionary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The codec.
    pub codec: Codec,
    /// Estimated bytes of codes, sidecar and dictionary.
    pub bytes: f64,
    /// Value bytes per code on the evaluation sample.
    pub bytes_per_code: f64,
    /// Longest token of the candidate dictionary (OnPair's short-token
    /// candidate keeps to 8 bytes: no high plane).
    pub longest_token: u8,
    /// `bytes` is the value-dictionary layout's estimate (§5.6), smaller
    /// than the plain layout's.
    pub value_dict: bool,
}

/// What was chosen for one dictionary, and the estimates behind it: one per
/// candidate dictionary (FSST-12; OnPair-12 and OnPair-16, each also with
/// short tokens on inputs up to 8 MiB); empty when there was one candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The codec of the dictionary.
    pub codec: Codec,
    /// The estimates, in candidate order; under `auto`, a codec screened
    /// out before its full training (FSST-12: module notes of
    /// `write/choose.rs`) comes last, with the estimate of its screening
    /// dictionary. Where a single OnPair dictionary trained in full on rows
    /// larger than the evaluation sample, its estimate is the screen's
    /// yardstick (on the screen's rows). OnPair dictionaries ruled out by the
    /// sample before any full training have no estimate here.
    pub estimates: Vec<Estimate>,
}

/// Trains the dictionary for `rows` under `opts.codec`. A fixed codec's
/// single candidate is kept without estimating it. Under `auto`, on large
/// inputs a sample first says whether OnPair-12, OnPair-16 or both train in
/// full; the first OnPair dictionary and FSST-12's screen train (in
/// parallel), then FSST-12 and OnPair-16 where the screen and OnPair-12's
/// fill say they may win (module notes); where more than one candidate
/// trained in full, each is estimated on one shared evaluation sample and
/// the best kept.
/// Deterministic: the result depends on the rows and options only.
///
/// When the evaluation sample is every row (at most [`EVAL_BYTES`]), the
/// chosen candidate's codes of every row come back too: the writer writes
/// them instead of encoding the rows a second time (same codes, one pass less).
pub(super) fn train(
    opts: &WriterOptions,
    rows: &[&[u8]],
) -> (Codec, TokenTable, Choice, Option<RowCodes>) {
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let candidates = opts.codec.candidates(total);
    if candidates.len() == 1 {
        let codec = candidates[0];
        // OnPair's pruning pass may already hold every row's codes.
        let (table, _, codes) = train_codec(opts, codec, rows, true);
        let choice = Choice {
            codec,
            estimates: Vec::new(),
        };
        return (codec, table, choice, codes);
    }
    let distinct = opts
        .value_dict
        .then(|| super::values::distinct_rows(rows))
        .flatten();
    let eval = eval_sample(rows);
    // When the evaluation sample is every row, the chosen candidate's codes
    // are the chunk's codes: kept, so the writer need not encode again.
    let whole = total <= EVAL_BYTES;
    // `pre`: the trainer's codes of every row (asked for when `whole`:
    // then `eval` is every row).
    let est = |codec: Codec, table: &TokenTable, pre: Option<RowCodes>| {
        let pre = pre.filter(|_| whole);
        let (mut e, codes) = estimate(opts, codec, table, &eval, total, whole, pre);
        if let Some(d) = &distinct {
            let d_bytes = d.iter().map(|r| r.len()).sum();
            let (v, _) = estimate(opts, codec, table, d, d_bytes, false, None);
            let vd = super::values::estimate(rows.len(), d.len(), v.bytes);
            if vd < e.bytes {
                e.bytes = vd;
                e.value_dict = true;
            }
        }
        (e, codes)
    };
    // A candidate trained and estimated.
    let train_est = |codec: Codec| {
        let (table, _, pre) = train_codec(opts, codec, rows, whole);
        let (e, codes) = est(codec, &table, pre);
        (codec, table, e, codes)
    };
    // Which OnPair dictionaries train in full: from a sample on inputs
    // where OnPair-16 is a candidate (module notes), both otherwise.
    let plan = if candidates.contains(&Codec::OnPair16) && distinct.is_none() {
        onpair_plan(opts, rows, total)
    } else {
        OnPairPlan::Both
    };
    // The OnPair dictionary trained first: the FSST-12 screen's yardstick.
    let first = if plan == OnPairPlan::Only16 {
        Codec::OnPair16
    } else {
        Codec::OnPair12
    };
    // FSST-12 screened and OnPair-16 gated (module notes): the first OnPair
    // dictionary and FSST-12's screening dictionary train first (in
    // parallel); the first's estimate is the screen's yardstick, then the
    // candidates that may still win train and are estimated.
    // Where OnPair-12 codes at least SCREEN_MAX_BYTES_PER_CODE value bytes
    // per code, FSST-12 is neither screened nor trained. The screen runs
    // next to OnPair-12 and skips its work once OnPair-12's estimate says
    // so: on one thread OnPair-12 runs first and the screen never starts;
    // on more, a screen that started anyway is discarded. Either way the
    // choice depends on OnPair-12's estimate only, not on timing.
    let screen = distinct.is_none() && candidates.contains(&Codec::Fsst12);
    // The rows the screen is estimated on; on inputs larger than the
    // evaluation sample, the first OnPair dictionary's yardstick is estimated
    // on the same rows, and its estimate on the evaluation sample is made
    // only where another candidate trains in full (`lazy`).
    let screen_eval = screen_rows(&eval);
    let lazy = !whole && distinct.is_none();
    let long_codes = AtomicBool::new(false);
    let ((o1, o1_filled, (o1_e, o1_codes)), screened) = rayon::join(
        || {
            let (table, filled, pre) = train_codec(opts, first, rows, whole);
            let e = if lazy {
                (
                    estimate(opts, first, &table, &screen_eval, total, false, None).0,
                    None,
                )
            } else {
                est(first, &table, pre)
            };
            if screen && first == Codec::OnPair12 && e.0.bytes_per_code >= SCREEN_MAX_BYTES_PER_CODE
            {
                long_codes.store(true, Ordering::Relaxed);
            }
            (table, filled, e)
        },
        || {
            (screen && !long_codes.load(Ordering::Relaxed)).then(|| {
                let small = fsst12::train(rows, &SCREEN_FSST12);
                estimate(
                    opts,
                    Codec::Fsst12,
                    &small,
                    &screen_eval,
                    total,
                    false,
                    None,
                )
                .0
            })
        },
    );
    // The same rule where a value-dictionary layout is in play (no screen):
    // the three such corpus columns code 5.4–15 bytes per code with
    // OnPair-12, and the full FSST-12 lost on each. The rule is OnPair-12's
    // (where OnPair-16 trains first, only the screen's margin applies).
    let skip_fsst = first == Codec::OnPair12 && o1_e.bytes_per_code >= SCREEN_MAX_BYTES_PER_CODE;
    let screened = screened.filter(|_| !skip_fsst);
    let want_fsst = candidates.contains(&Codec::Fsst12)
        && !skip_fsst
        && screened.map_or(true, |f| f.bytes <= o1_e.bytes * (1.0 + SCREEN_MARGIN));
    let want16 = plan == OnPairPlan::Both && candidates.contains(&Codec::OnPair16) && o1_filled;
    let (fsst, o16) = rayon::join(
        || want_fsst.then(|| train_est(Codec::Fsst12)),
        || want16.then(|| train_est(Codec::OnPair16)),
    );
    // Another candidate to pick against: the first's estimate on the
    // evaluation sample (the yardstick's rows are a subset of it).
    let o1_e = if lazy && (fsst.is_some() || o16.is_some()) {
        est(first, &o1, None).0
    } else {
        o1_e
    };
    // Candidate order (FSST-12, OnPair-12, OnPair-16): `pick` breaks exact
    // ties by it.
    let mut all: Vec<(Codec, TokenTable, Estimate, Option<RowCodes>)> = fsst
        .into_iter()
        .chain([(first, o1, o1_e, o1_codes)])
        .chain(o16)
        .collect();
    let mut estimates: Vec<Estimate> = all.iter().map(|c| c.2).collect();
    let best = pick(estimates.iter().copied());
    if !want_fsst {
        // Reported after the trained candidates', never picked.
        estimates.extend(screened);
    }
    let (codec, table, _, codes) = all.swap_remove(best);
    (codec, table, Choice { codec, estimates }, codes)
}

/// Which OnPair dictionaries `auto` trains in full (module notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnPairPlan {
    /// OnPair-12 only (OnPair-16 ruled out by the sample).
    Only12,
    /// OnPair-16 only (OnPair-12 ruled out by the sample).
    Only16,
    /// OnPair-12, then OnPair-16 where OnPair-12's scan filled.
    Both,
}

/// Bytes of rows OnPair-12 and OnPair-16 train on to decide between them.
const PLAN_TRAIN_BYTES: usize = 512 << 10;

/// Runs of consecutive rows in that training sample.
const PLAN_TRAIN_RUNS: usize = 256;

/// Bytes of rows the two sample dictionaries are estimated on (held out:
/// half a stride off the training sample's runs).
const PLAN_EVAL_BYTES: usize = 128 << 10;

/// Runs of consecutive rows in that evaluation sample.
const PLAN_EVAL_RUNS: usize = 128;

/// OnPair-16 alone trains where its sample estimate is below this share of
/// OnPair-12's. Measured on the corpus (2026-12-03, bench/COMPRESS.md): the
/// 7 columns whose OnPair-16 file is smaller than OnPair-12's by more than
/// 1% had sample ratios 0.955–1.082, those where it is larger by more than
/// 1% 1.137–1.32 (the sample underrates OnPair-16: its 65536 tokens need
/// more rows than 512 KiB to pay).
const PLAN_ONLY16_BELOW: f64 = 1.09;

/// OnPair-12 alone trains where OnPair-16's sample estimate is above this
/// share of OnPair-12's; between the two bounds both train (as before the
/// sample: OnPair-16 where OnPair-12's scan filled).
const PLAN_ONLY12_ABOVE: f64 = 1.13;

/// The plan for rows of `total` bytes: OnPair-12 and OnPair-16 trained on
/// [`PLAN_TRAIN_BYTES`] of rows spread over the input (each sample row
/// scanned once), both estimated on [`PLAN_EVAL_BYTES`] of other rows, and
/// the ratio of the two estimates compared with the bounds.
fn onpair_plan(opts: &WriterOptions, rows: &[&[u8]], total: usize) -> OnPairPlan {
    let train = spread(rows, PLAN_TRAIN_BYTES, PLAN_TRAIN_RUNS, false);
    let eval = spread(rows, PLAN_EVAL_BYTES, PLAN_EVAL_RUNS, true);
    let est = |codec: Codec| {
        let mut p = if codec == Codec::OnPair12 {
            OnPairParams::onpair12()
        } else {
            OnPairParams::onpair16()
        };
        p.seed = opts.seed;
        p.budget_fraction = 0.0;
        p.min_budget_bytes = PLAN_TRAIN_BYTES;
        let (table, _, _) = onpair::train_codes(&train, &p, false);
        estimate(opts, codec, &table, &eval, total, false, None)
            .0
            .bytes
    };
    let (e12, e16) = rayon::join(|| est(Codec::OnPair12), || est(Codec::OnPair16));
    let r = e16 / e12;
    if r < PLAN_ONLY16_BELOW {
        OnPairPlan::Only16
    } else if r > PLAN_ONLY12_ABOVE {
        OnPairPlan::Only12
    } else {
        OnPairPlan::Both
    }
}

/// FSST-12 screening dictionary: a 64 KiB sample and 3 rounds (about a
/// quarter of the default training's work; geomean ratio 2.29 against the
/// default's 2.46 in `Fsst12Params::default`'s table).
const SCREEN_FSST12: Fsst12Params = Fsst12Params {
    sample_bytes: 64 << 10,
    rounds: 3,
    max_piece: 512,
};

/// `auto` neither screens nor trains FSST-12 where OnPair-12's estimate has
/// at least this many value bytes per code. FSST-12's symbols are at most 8
/// bytes; where OnPair-12's tokens average 5 bytes or more, its screen
/// was 1.39–2.07× OnPair-12's estimate on every such corpus column (24 of
/// the 42 screened, 2026-12-02, bench/COMPRESS.md), far above
/// the screen's margin (12%); below 5 the screens spread from 0.83× to 1.58×. The
/// screen was as costly as OnPair-12's training on small columns
/// (loghub_HDFS_2k: 21.8M of auto's 54.8M instructions). Columns with a
/// value-dictionary layout in play are not screened; the rule holds there
/// too (the three such corpus columns: OnPair-12 at 5.4–15 B/code, the
/// full FSST-12 estimate 0.00–16% larger, never chosen).
pub const SCREEN_MAX_BYTES_PER_CODE: f64 = 5.0;

/// Most bytes of rows the screening estimate encodes.
const SCREEN_EVAL_BYTES: usize = 128 << 10;

/// FSST-12 is trained in full when its screening dictionary's estimate is
/// at most this share above OnPair-12's estimate. It covers what the full
/// sample gains over the screening sample plus the estimates' noise.
///
/// Measured on the 45 corpus columns (2026-12-02, bench/COMPRESS.md): on the
/// 12 columns where both were made, the full training's estimate was
/// 0.89–0.985× the screen's (dbtext_faust 0.89, dbtext_yago 0.90), so a
/// screen more than 1/0.89 ≈ 1.12× OnPair-12's leaves a full FSST-12 at best
/// in the 1% tie band, where bytes per code decide. 0.25 (the previous
/// value) also trained FSST-12 in full on six columns whose screens were
/// 1.13–1.22× and where it then lost by 3–11%; 0.12 skips them and changes
/// no choice (auto's file digests identical on every column).
pub const SCREEN_MARGIN: f64 = 0.12;

/// The rows of the evaluation sample `eval` the screen is estimated on: at
/// most about [`SCREEN_EVAL_BYTES`], evenly spaced.
fn screen_rows<'a>(eval: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let eval_bytes: usize = eval.iter().map(|r| r.len()).sum();
    let step = eval_bytes.div_ceil(SCREEN_EVAL_BYTES).max(1);
    eval.iter().step_by(step).copied().collect()
}

/// The codes of every row of a dictionary's rows, as the writer's greedy
/// encoder (`Matcher::encode_into`) produces them: `ends[i]` is the number of
/// codes of rows `0..=i`.
pub(super) use crate::dict::onpair::RowCodes;

/// The rows the estimates encode: all of them when they hold at most
/// [`EVAL_BYTES`], else runs of consecutive rows spread over the input,
/// starting half a stride in (the OnPair training sample starts at row 0).
fn eval_sample<'a>(rows: &[&'a [u8]]) -> Vec<&'a [u8]> {
    spread(rows, EVAL_BYTES, EVAL_RUNS, true)
}

/// `runs` runs of consecutive rows of about `bytes / runs` bytes each (a
/// long row counts with at most a run's bytes), one every `rows.len() / runs`
/// rows, starting at row 0 or, with `half`, half a stride in; every row when
/// the rows hold at most `bytes`.
fn spread<'a>(rows: &[&'a [u8]], bytes: usize, runs: usize, half: bool) -> Vec<&'a [u8]> {
    let total: usize = rows.iter().map(|r| r.len()).sum();
    if total <= bytes {
        return rows.to_vec();
    }
    let run_bytes = (bytes / runs).max(1);
    let stride = rows.len().div_ceil(runs).max(1);
    let mut out = Vec::new();
    let mut i = if half { stride / 2 } else { 0 };
    while i < rows.len() {
        let mut got = 0usize;
        let mut j = i;
        while j < rows.len() && got < run_bytes {
            // A long row counts with at most a run's bytes.
            let r = rows[j];
            let r = &r[..r.len().min(run_bytes)];
            out.push(r);
            got += r.len();
            j += 1;
        }
        i += stride;
    }
    out
}

/// Index of the chosen estimate: the most bytes per code among those within
/// [`TIE_MARGIN`] of the smallest (first wins on equal values).
fn pick(estimates: impl Iterator<Item = Estimate> + Clone) -> usize {
    let min = estimates
        .clone()
        .map(|e| e.bytes)
        .fold(f64::INFINITY, f64::min);
    let mut best: Option<(usize, f64)> = None;
    for (i, e) in estimates.enumerate() {
        if e.bytes <= min * (1.0 + TIE_MARGIN) && best.map_or(true, |(_, b)| e.bytes_per_code > b) {
            best = Some((i, e.bytes_per_code));
        }
    }
    best.map_or(0, |(i, _)| i)
}

/// Estimated file bytes of codes, sidecar and dictionary when rows of
/// `total` bytes, of which `eval` is a sample, are encoded with `table`
/// (module notes); with `keep`, also the rows' codes. `pre`, when given,
/// holds the codes of every row of `eval` under `table` (as the encoder
/// gives them: the trainer's, `onpair::train_codes`), so the rows are not
/// encoded again.
fn estimate(
    opts: &WriterOptions,
    codec: Codec,
    table: &TokenTable,
    eval: &[&[u8]],
    total: usize,
    keep: bool,
    pre: Option<RowCodes>,
) -> (Estimate, Option<RowCodes>) {
    if let Some(pre) = pre {
        debug_assert_eq!(pre.ends.len(), eval.len());
        let seen: usize = eval.iter().map(|r| r.len()).sum();
        let n = pre.codes.len();
        let e = estimate_of(opts, codec, table, n, seen, total);
        return (e, keep.then_some(pre));
    }
    let m = Matcher::new(table);
    // Fixed groups of rows encoded on all cores, then joined in row order:
    // the counts are sums and the codes keep their order, so the result does
    // not depend on the thread count.
    let parts: Vec<(Vec<u16>, Vec<u32>, usize, usize)> = eval
        .par_chunks(ESTIMATE_TASK_ROWS)
        .map(|part| {
            let mut codes = Vec::new();
            let mut ends = Vec::with_capacity(if keep { part.len() } else { 0 });
            let (mut n, mut seen) = (0usize, 0usize);
            for r in part {
                m.encode_into(r, &mut codes);
                seen += r.len();
                if keep {
                    ends.push(codes.len() as u32);
                } else {
                    n += codes.len();
                    codes.clear();
                }
            }
            if keep {
                n = codes.len();
            }
            (codes, ends, n, seen)
        })
        .collect();
    let n: usize = parts.iter().map(|p| p.2).sum();
    let seen: usize = parts.iter().map(|p| p.3).sum();
    let (mut codes, mut ends) = if keep {
        (Vec::with_capacity(n), Vec::with_capacity(eval.len()))
    } else {
        (Vec::new(), Vec::new())
    };
    if keep {
        for (c, e, _, _) in parts {
            let base = codes.len() as u32;
            ends.extend(e.into_iter().map(|x| x + base));
            codes.extend_from_slice(&c);
        }
    }
    let e = estimate_of(opts, codec, table, n, seen, total);
    (e, keep.then_some(RowCodes { codes, ends }))
}

/// The estimate of `n` codes found on `seen` bytes of rows of `total`
/// bytes, with `table` of `codec`.
fn estimate_of(
    opts: &WriterOptions,
    codec: Codec,
    table: &TokenTable,
    n: usize,
    seen: usize,
    total: usize,
) -> Estimate {
    let scale = if seen == 0 {
        0.0
    } else {
        total as f64 / seen as f64
    };
    let est_codes = n as f64 * scale;
    let code_bytes = est_codes * f64::from(codec.code_bits()) / 8.0;
    let sidecar = est_codes / f64::from(opts.batch) * SIDECAR_ENTRY_BYTES;
    let dict = stored_section_len(table) as f64;
    Estimate {
        codec,
        bytes: code_bytes + sidecar + dict,
        bytes_per_code: if n == 0 { 0.0 } else { seen as f64 / n as f64 },
        longest_token: table.lens().iter().copied().max().unwrap_or(1),
        value_dict: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(codec: Codec, bytes: f64, bpc: f64) -> Estimate {
        Estimate {
            codec,
            bytes,
            bytes_per_code: bpc,
            longest_token: 8,
            value_dict: false,
        }
    }

    #[test]
    fn names_round_trip() {
        for c in CodecChoice::ALL {
            assert_eq!(CodecChoice::from_name(c.name()), Some(c));
        }
        assert_eq!(CodecChoice::from_name("zstd"), None);
        assert_eq!(CodecChoice::default(), CodecChoice::Auto);
    }

    #[test]
    fn pick_smallest_then_bytes_per_code() {
        let v = [
            e(Codec::Fsst12, 1000.0, 3.0),
            e(Codec::OnPair12, 900.0, 4.0),
            e(Codec::OnPair16, 950.0, 8.0),
        ];
        assert_eq!(pick(v.iter().copied()), 1);
        // Within the margin, more bytes per code wins.
        let v = [
            e(Codec::Fsst12, 1000.0, 3.0),
            e(Codec::OnPair12, 1000.0, 4.0),
            e(Codec::OnPair16, 1000.0 * (1.0 + TIE_MARGIN / 2.0), 8.0),
        ];
        assert_eq!(pick(v.iter().copied()), 2);
    }

    #[test]
    fn spread_takes_runs_at_either_phase() {
        let data: Vec<[u8; 10]> = (0..1000u32).map(|i| [(i % 251) as u8; 10]).collect();
        let rows: Vec<&[u8]> = data.iter().map(|r| &r[..]).collect();
        // Small enough: every row.
        assert_eq!(spread(&rows, 10_000, 4, true).len(), 1000);
        // 4 runs of 100 bytes (10 rows each), a stride of 250 rows apart.
        let a = spread(&rows, 400, 4, false);
        let b = spread(&rows, 400, 4, true);
        assert_eq!(a.len(), 40);
        assert_eq!(b.len(), 40);
        assert_eq!(a[0].as_ptr(), rows[0].as_ptr());
        assert_eq!(a[10].as_ptr(), rows[250].as_ptr());
        assert_eq!(b[0].as_ptr(), rows[125].as_ptr());
        // A long row counts with at most a run's bytes.
        let long = vec![7u8; 5000];
        let one: Vec<&[u8]> = vec![&long[..]];
        let c = spread(&one, 400, 4, false);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].len(), 100);
        // The evaluation sample is the half-phase spread.
        assert_eq!(eval_sample(&rows).len(), rows.len());
    }
}
