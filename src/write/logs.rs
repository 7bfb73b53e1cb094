//! Log-template chunks (spec/FORMAT.md §5.8): a chunk's rows through the
//! template codec (`crate::logs`), and the chunk section around its payload.

use super::encode::validity_bits;
use super::{EncodedChunk, LogTemplates, PendingChunk, WriterOptions};
use crate::format::layout::{ChunkParts, ChunkSection};
use crate::format::{ChunkKind, Codec};
use crate::logs::{encode_column, LogOptions};

/// Rows of the sample `auto` encodes first, as one plain block (one
/// candidate, no families), to tell log lines from other text; at most
/// `SCREEN_BYTES` of them.
const SCREEN_SAMPLE_ROWS: usize = 256;

/// Bytes of that first sample at most (rows are skipped evenly to fit).
const SCREEN_SAMPLE_BYTES: usize = 32 << 10;

/// `auto` goes on (to the estimate below, or a full encode) only when that
/// sample's log payload is at least this many times smaller than its text.
/// Measured (lab/examples/logs_screen.rs, 256 rows / 32 KiB): the 21
/// Loghub columns 2.16 (Mac) to 12.8, free text at most 1.58 (speeches;
/// news, reviews, code, names 0.7–1.5); text with short repeated shapes
/// (uuid, hex, addresses, TPC-H comments) passes and is left to the
/// estimate or the exact comparison, as before.
const SCREEN_MIN_RATIO: f64 = 1.8;

/// Rows of the smaller of the two samples `auto` encodes first to estimate
/// a chunk's log payload (a column of non-log text costs these, not a full
/// encode); chunks of at most `8·SCREEN_ROWS` rows are encoded whole.
const SCREEN_ROWS: usize = 1024;

/// Rows of a chunk from which [`estimate`] encodes its two samples at once.
const ESTIMATE_PAR_ROWS: usize = 1 << 16;

/// `auto` tries a full encode of a screened chunk only when the estimated
/// payload is at most this share of the coded chunk (see [`encode`]).
const SCREEN_SHARE: f64 = 0.6;

/// Whether an evenly spaced sample of `p`'s rows (`SCREEN_SAMPLE_ROWS` rows,
/// at most about `SCREEN_SAMPLE_BYTES`) encoded as one plain log block
/// reaches `SCREEN_MIN_RATIO`: a few milliseconds that spare free text the
/// sample encodes of [`estimate`] or a full log encode (on prose the log
/// encoder runs at 2–5 MB/s: every line is a template of its own).
fn looks_like_logs(p: &PendingChunk) -> bool {
    let by_rows = p.rows().div_ceil(SCREEN_SAMPLE_ROWS);
    let by_bytes = p.data.len().div_ceil(SCREEN_SAMPLE_BYTES);
    let step = by_rows.max(by_bytes).max(1);
    let mut sample = Vec::with_capacity(SCREEN_SAMPLE_ROWS + 1);
    let mut text = 0;
    for r in (0..p.rows()).step_by(step).map(|i| p.row(i)) {
        // A long row ends the sample once it holds something (a row of
        // megabytes is not a log line; its cost stays bounded).
        if text + r.len() > 2 * SCREEN_SAMPLE_BYTES && !sample.is_empty() {
            break;
        }
        text += r.len();
        sample.push(r);
    }
    let plain = LogOptions {
        families: false,
        prune_pool: false,
        ..LogOptions::default()
    };
    let payload = crate::logs::encode(&sample, &plain).len();
    text as f64 >= SCREEN_MIN_RATIO * payload.max(1) as f64
}

/// Whether the writer will try chunk `p` as log templates: never with
/// [`LogTemplates::Off`] or when it has no bytes, always with
/// [`LogTemplates::Always`], with [`LogTemplates::Auto`] when it passes
/// [`looks_like_logs`]. Decided once, when the chunk is closed, so that
/// its memory estimate counts the log encoder only then.
pub(super) fn tries(opts: &WriterOptions, p: &PendingChunk) -> bool {
    if p.data.is_empty() {
        return false;
    }
    match opts.log_templates {
        LogTemplates::Off => false,
        LogTemplates::Always => true,
        LogTemplates::Auto => looks_like_logs(p),
    }
}

/// Payload bytes of `rows`, extrapolated from evenly spaced samples of
/// `SCREEN_ROWS` and `4·SCREEN_ROWS` rows by a power law through the two
/// (`c = a·text^k`): the pool's tokens and the templates grow slower than
/// the rows (measured on Loghub Linux, 25,567 rows: one sample scaled up
/// linearly, or a line through two, estimated 2.5× the payload).
fn estimate(rows: &[&[u8]], lo: &LogOptions) -> f64 {
    // Without template families (a second layout per block, for a few
    // percent: not what decides whether to try).
    let lo = &LogOptions {
        families: false,
        prune_pool: false,
        ..lo.clone()
    };
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let point = |n: usize| {
        let step = rows.len().div_ceil(n);
        let s: Vec<&[u8]> = rows.iter().step_by(step).copied().collect();
        let text: usize = s.iter().map(|r| r.len()).sum();
        (text.max(1) as f64, encode_column(&s, lo).len() as f64)
    };
    // The two samples are encoded at once (each its own work) when the
    // chunk is large (the estimate is then a small share of its encode; on
    // a chunk of 20,000 rows, 4.3 MB, the second thread's first
    // allocations cost more than the sample it took: 0.26 s against 0.23
    // for the whole compress on 2 threads).
    let ((t1, c1), (t2, c2)) = crate::logs::join_maybe(
        lo.threads && rows.len() >= ESTIMATE_PAR_ROWS,
        || point(SCREEN_ROWS),
        || point(4 * SCREEN_ROWS),
    );
    let k = if t2 > t1 && c1 > 0.0 {
        ((c2 / c1).ln() / (t2 / t1).ln()).clamp(0.5, 1.0)
    } else {
        1.0
    };
    c2 * (total as f64 / t2).powf(k)
}

/// Chunk `p` as a log-template chunk, or `None` where it cannot be one (no
/// bytes: the footer tells the kind by `bytes > 0`, §5.8) or, under
/// [`LogTemplates::Auto`], where a sample says it will not beat
/// `coded_len` bytes. `codec` is the dictionary the chunk names (whose
/// tokens it does not use). The log encoder uses rayon's threads inside
/// the chunk (`LogOptions::threads`; the same bytes either way), also when
/// the writer encodes several chunks at once: an idle thread steals the
/// inner tasks of a chunk still running (bench/COMPRESS.md, "Threads inside
/// every log chunk": 435 MB of access-log lines on 16 cores at `--memory
/// 8G`, 6.5-6.7 s -> 4.0-4.3 s; measured slower before the CLI stopped
/// serialising every thread on one malloc arena).
pub(super) fn encode(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    coded_len: usize,
) -> Option<EncodedChunk> {
    // Decided when the chunk was closed ([`tries`]).
    if !p.logs {
        return None;
    }
    let rows: Vec<&[u8]> = (0..p.rows()).map(|i| p.row(i)).collect();
    let lo = LogOptions {
        threads: true,
        ..LogOptions::default()
    };
    // The estimate decides only whether to try (the kept layout is then
    // the smaller by exact bytes, by `LOG_MARGIN`): tried when it predicts
    // at most `SCREEN_SHARE` of the coded chunk. Measured on the corpus's
    // screened columns (estimate / coded): Loghub Linux and Proxifier full
    // 0.47, 0.35 (payload 0.42, 0.39); text where the payload came out
    // larger than coded or within 3% of it (the estimate underrates a
    // growing vocabulary): 0.63 (TPC-H c_address) to 0.94 (l_comment), and
    // a full log encode of such a column cost up to 20× the coded write.
    // So only clear wins are tried; dbtext uuid, hex, location and c_name
    // (payload 0.68–0.79 of coded, estimates 0.67–0.79) stay coded.
    if opts.log_templates == LogTemplates::Auto
        && rows.len() > 8 * SCREEN_ROWS
        && estimate(&rows, &lo) > SCREEN_SHARE * coded_len as f64
    {
        return None;
    }
    let payload = encode_column(&rows, &lo);
    if payload.len() > u32::MAX as usize {
        return None;
    }
    let validity = validity_bits(p);
    let mut bytes = Vec::new();
    ChunkSection::write(
        crate::format::VERSION,
        &ChunkParts {
            kind: ChunkKind::LogTemplates,
            batch: opts.batch,
            code_bits: codec.code_bits(),
            codes: &[],
            sidecar: &[],
            row_codes: &[],
            row_bytes: &[],
            validity: validity.as_deref(),
            value_index: None,
            log_payload: Some(&payload),
        },
        &mut bytes,
    );
    Some(EncodedChunk {
        bytes,
        rows: p.rows() as u32,
        codes: 0,
        decoded: p.data.len() as u64,
        nulls: p.nulls as u32,
        values: 0,
        hist: [0; 16],
        codec,
        dict: None,
    })
}
