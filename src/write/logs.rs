//! Log-template chunks (spec/FORMAT.md §5.8): a chunk's rows through the
//! template codec (`crate::logs`), and the chunk section around its payload.

use super::encode::validity_bits;
use super::{EncodedChunk, LogTemplates, PendingChunk, SectionBytes, WriterOptions};
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

/// [`estimate`] stops at its smaller sample where at least this share of
/// its rows (of each block's, when split) take the escape template: no
/// mined template holds them, as in prose. Measured (`lab logs_escaped`,
/// the 1,024-row sample through the column's candidates): at most 0.15 on
/// every log column with more than `8·SCREEN_ROWS` rows or near it (the
/// Loghub columns, seven public and five Debian logs, 65 MB Linux and
/// access logs; apt's 84-row history.log 0.41), and 0.88 (TPC-H l_comment)
/// to 1.0 (news, reviews, speeches, ps_comment) on the text columns whose
/// estimate ran before. The sample mined alone (`logs::unmatched_share`,
/// rows no template holds before the encoder escapes more) gives at most
/// 0.08 on those logs and 0.88–1.00 on that text but for the reviews (0.07:
/// CJK sentences mine to templates of slots and punctuation, which the
/// encoder then escapes), which the encoded sample catches.
const ESCAPED_SHARE: f64 = 0.75;

/// [`encode`] tries no log layout beside an OnPair dictionary where at least
/// this share of the first screen's rows (`SCREEN_SAMPLE_ROWS`, one block,
/// words split at every non-alphanumeric byte) took the escape template.
/// Measured in the writer: at most 0.81 on every log column of the corpus,
/// the public and Debian logs and the 65 MB logs (an Apache access log:
/// its fields want the coarse split, which this screen does not try; the
/// others at most 0.55), and 0.97–1.00 on the text that passed the screen
/// (TPC-H comments, speeches, reviews), whose log layout never won.
const SCREEN_ESCAPED: f32 = 0.95;

/// `auto` tries a full encode of a screened chunk only when the estimated
/// payload is at most this share of the coded chunk (see [`encode`]).
const SCREEN_SHARE: f64 = 0.6;

/// An evenly spaced sample of `p`'s rows (`SCREEN_SAMPLE_ROWS` rows, at
/// most about `SCREEN_SAMPLE_BYTES`) encoded as one plain log block: whether
/// it reaches `SCREEN_MIN_RATIO` (a few milliseconds that spare free text the
/// sample encodes of [`estimate`] or a full log encode: on prose the log
/// encoder runs at 2–5 MB/s, every line a template of its own), and the
/// share of its rows the escape template holds.
fn first_screen(p: &PendingChunk) -> (bool, f32) {
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
    let payload = crate::logs::encode(&sample, &plain);
    let escaped = crate::logs::LogBlock::open(&payload)
        .map_or(1.0, |b| b.escaped_rows() as f32 / b.rows().max(1) as f32);
    (
        text as f64 >= SCREEN_MIN_RATIO * payload.len().max(1) as f64,
        escaped,
    )
}

/// Whether the writer will try chunk `p` as log templates: never with
/// [`LogTemplates::Off`] or when it has no bytes, always with
/// [`LogTemplates::Always`], with [`LogTemplates::Auto`] when it passes
/// [`first_screen`] (then also the share of the screen's rows that took the
/// escape template, which [`encode`] reads once the chunk's codec is known).
/// Decided once, when the chunk is closed, so that its memory estimate
/// counts the log encoder only then.
pub(super) fn tries(opts: &WriterOptions, p: &PendingChunk) -> Option<f32> {
    if p.data.is_empty() {
        return None;
    }
    match opts.log_templates {
        LogTemplates::Off => None,
        LogTemplates::Always => Some(0.0),
        LogTemplates::Auto => match first_screen(p) {
            (true, escaped) => Some(escaped),
            (false, _) => None,
        },
    }
}

/// A chunk's log payload as `auto` foresees it before any full log encode:
/// two evenly spaced samples of `SCREEN_ROWS` and `4·SCREEN_ROWS` rows
/// encoded, and a power law through the two (`c = a·text^k`): the pool's
/// tokens and the templates grow slower than the rows (measured on Loghub
/// Linux, 25,567 rows: one sample scaled up linearly, or a line through
/// two, estimated 2.5× the payload).
///
/// [`estimate`] stops early where the rows are not log lines: on text that
/// passes the first screen without being a log (reviews, news, TPC-H
/// comments) the two samples were a third to a half of a one-thread
/// compress (bench/COMPRESS.md, "The screens beside the coded encode").
#[derive(Clone, Copy, Debug)]
struct Estimate {
    /// The chunk's text bytes.
    total: f64,
    /// The smaller sample's text and payload bytes; `None` where its rows
    /// mined alone already said the log layout will not pay ([`estimate`]).
    small: Option<(f64, f64)>,
    /// The larger sample's; `None` where the smaller one already said the
    /// log layout will not pay ([`estimate`]).
    large: Option<(f64, f64)>,
}

impl Estimate {
    /// Whether the estimated payload is above `limit` bytes (always, where
    /// the larger sample was not needed).
    fn above(&self, limit: f64) -> bool {
        let (Some((t1, c1)), Some((t2, c2))) = (self.small, self.large) else {
            return true;
        };
        let k = if t2 > t1 && c1 > 0.0 {
            ((c2 / c1).ln() / (t2 / t1).ln()).clamp(0.5, 1.0)
        } else {
            1.0
        };
        c2 * (self.total / t2).powf(k) > limit
    }
}

/// Whether rows no template holds (escaped rows: pool strings, an OnPair-12
/// table trained on them) cannot make a log layout pay beside a chunk coded
/// with `codec`: an OnPair dictionary trained on the same rows codes them
/// about as well, so a chunk of mostly escaped rows never comes near
/// `SCREEN_SHARE` of it. Against FSST-12 they can (`--codec fsst12`: TPC-H
/// ps_comment's and zh_reviews' log layouts are 0.61 and 0.68 of the coded
/// file, from a smaller sample 1.00 escaped), so there the escaped shares
/// ([`ESCAPED_SHARE`], [`SCREEN_ESCAPED`]) decide nothing.
fn escapes_cannot_pay(codec: Codec) -> bool {
    matches!(codec, Codec::OnPair12 | Codec::OnPair16)
}

/// Whether [`encode`] needs an [`Estimate`] of `p`: under
/// [`LogTemplates::Auto`], for a chunk that passed the first screen and
/// has more than `8·SCREEN_ROWS` rows (smaller ones are encoded whole).
fn needs_estimate(opts: &WriterOptions, p: &PendingChunk) -> bool {
    opts.log_templates == LogTemplates::Auto && p.logs && p.rows() > 8 * SCREEN_ROWS
}

/// The [`Estimate`] of `p`'s log payload beside a chunk coded with `codec`.
/// The smaller sample first, mined alone (`logs::unmatched_share`), then
/// encoded: where most of its rows are held by no template
/// ([`ESCAPED_SHARE`]), after either step, and `codec` is an OnPair
/// dictionary ([`escapes_cannot_pay`]), nothing more is encoded (the
/// larger sample is four times the smaller one's work, the smaller one's
/// encode 2–7 times its mining).
fn estimate(p: &PendingChunk, codec: Codec) -> Estimate {
    // Without template families (a second layout per block, for a few
    // percent: not what decides whether to try).
    let lo = &LogOptions {
        families: false,
        prune_pool: false,
        ..LogOptions::default()
    };
    // Every row's bytes, nulls' empty: the chunk's text.
    let total = p.data.len();
    // Evenly spaced rows, read straight from the chunk (the estimate needs
    // no slice of every row).
    let sample = |n: usize| {
        let step = p.rows().div_ceil(n);
        let s: Vec<&[u8]> = (0..p.rows()).step_by(step).map(|i| p.row(i)).collect();
        let text: usize = s.iter().map(|r| r.len()).sum();
        (s, text.max(1) as f64)
    };
    let (s, t1) = sample(SCREEN_ROWS);
    let escapes_decide = escapes_cannot_pay(codec);
    // Rows no template holds even before they are encoded (mined alone,
    // several times cheaper than the sample's encode: prose) stop here.
    if escapes_decide && crate::logs::unmatched_share(&s, lo, ESCAPED_SHARE) >= ESCAPED_SHARE {
        return Estimate {
            total: total as f64,
            small: None,
            large: None,
        };
    }
    let payload = encode_column(&s, lo);
    let small = Some((t1, payload.len() as f64));
    let escaped = || {
        crate::logs::LogColumn::open(&payload).map_or(1.0, |c| {
            let blocks = if c.is_split() { 2 } else { 1 };
            c.escaped_rows() as f64 / (c.rows() * blocks).max(1) as f64
        })
    };
    let large = (!escapes_decide || escaped() < ESCAPED_SHARE).then(|| {
        let (s, t2) = sample(4 * SCREEN_ROWS);
        (t2, encode_column(&s, lo).len() as f64)
    });
    Estimate {
        total: total as f64,
        small,
        large,
    }
}

/// Chunk `p` as a log-template chunk, or `None` where it cannot be one (no
/// bytes: the footer tells the kind by `bytes > 0`, §5.8) or, under
/// [`LogTemplates::Auto`], where a sample says it will not beat
/// `coded_len` bytes ([`Estimate`]). `codec` is the dictionary the chunk
/// names (whose tokens it does not use). The log encoder uses rayon's threads inside
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
    // A chunk whose first screen held (almost) none of its rows in a
    // template is prose to the template codec: beside an OnPair dictionary
    // its log layout cannot pay ([`escapes_cannot_pay`]), and nothing more
    // is encoded, whatever the chunk's size.
    if opts.log_templates == LogTemplates::Auto
        && escapes_cannot_pay(codec)
        && p.screen_escaped >= SCREEN_ESCAPED
    {
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
    if needs_estimate(opts, p) && estimate(p, codec).above(SCREEN_SHARE * coded_len as f64) {
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
        bytes: SectionBytes::whole(bytes),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(rows: &[Vec<u8>]) -> PendingChunk {
        let mut p = PendingChunk {
            logs: true,
            ..PendingChunk::default()
        };
        for r in rows {
            p.data.extend_from_slice(r);
            p.ends.push(p.data.len());
            p.valid.push(true);
        }
        p
    }

    /// A deterministic stream of pseudo-random numbers.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    }

    /// `rows` sentences of words drawn at random from a vocabulary of
    /// `vocab` random words (2–10 letters), 5–40 words a row, each followed
    /// by one of `stops`: every row a shape of its own.
    fn prose(seed: u64, vocab: usize, rows: usize, stops: &[&str]) -> Vec<Vec<u8>> {
        let mut seed = seed;
        let words: Vec<String> = (0..vocab)
            .map(|_| {
                let n = 2 + lcg(&mut seed) as usize % 9;
                (0..n)
                    .map(|_| (b'a' + (lcg(&mut seed) % 26) as u8) as char)
                    .collect()
            })
            .collect();
        (0..rows)
            .map(|_| {
                let n = 5 + lcg(&mut seed) as usize % 36;
                let mut row = String::new();
                for _ in 0..n {
                    row.push_str(&words[lcg(&mut seed) as usize % words.len()]);
                    row.push_str(stops[lcg(&mut seed) as usize % stops.len()]);
                }
                row.into_bytes()
            })
            .collect()
    }

    /// Sentences of words drawn at random: every row its own shape, so the
    /// smaller sample escapes its rows and the larger one is not encoded;
    /// log lines of a few templates take both samples and come out far below
    /// their text.
    #[test]
    fn prose_stops_at_the_smaller_sample() {
        let stops = [" ", " ", " ", " ", ", ", ". ", "; ", " (", ") ", ": ", "? "];
        let prose = prose(7, 5_000, 10_000, &stops);
        let mut seed = 7;
        let p = chunk(&prose);
        assert!(needs_estimate(&WriterOptions::default(), &p));
        let e = estimate(&p, Codec::OnPair12);
        assert!(e.large.is_none(), "prose took the larger sample: {e:?}");
        assert!(
            e.small.is_none(),
            "prose's smaller sample was encoded: {e:?}"
        );
        assert!(e.above(f64::MAX / 2.0));
        // Beside FSST-12 the pool of escaped rows can pay: both samples.
        assert!(estimate(&p, Codec::Fsst12).large.is_some());

        let logs: Vec<Vec<u8>> = (0..10_000u64)
            .map(|i| {
                let r = lcg(&mut seed);
                match r % 3 {
                    0 => format!("2026-12-06 10:{:02}:{:02} host{} sshd[{}]: Accepted password for user{} from 10.0.{}.{} port {}", i / 60 % 60, i % 60, r % 4, 1000 + r % 5000, r % 50, r % 7, r % 250, 40000 + r % 20000),
                    1 => format!("2026-12-06 10:{:02}:{:02} host{} kernel: eth{} link up, {} Mbps, full duplex", i / 60 % 60, i % 60, r % 4, r % 2, 100 * (1 + r % 10)),
                    _ => format!("2026-12-06 10:{:02}:{:02} host{} cron[{}]: session opened for user root by (uid=0)", i / 60 % 60, i % 60, r % 4, 2000 + r % 3000),
                }
                .into_bytes()
            })
            .collect();
        let p = chunk(&logs);
        let e = estimate(&p, Codec::OnPair12);
        assert!(
            e.large.is_some(),
            "log lines stopped at the smaller sample: {e:?}"
        );
        let text = p.data.len() as f64;
        assert!(
            !e.above(text / 8.0),
            "log lines estimated above an eighth of their text: {e:?}"
        );
    }

    /// Prose from a small vocabulary passes the first screen's ratio, but
    /// the screen's block escapes its rows: beside an OnPair dictionary no
    /// log layout is encoded however large the coded chunk, beside FSST-12
    /// it still is; log lines come out of the screen held by templates.
    #[test]
    fn a_screen_of_escaped_rows_stops_the_log_layout_beside_onpair() {
        let prose = prose(3, 300, 3_000, &[" ", " ", " ", " ", " ", " ", ", "]);
        let opts = WriterOptions::default();
        let mut p = chunk(&prose);
        let escaped = tries(&opts, &p).expect("the prose passes the ratio screen");
        assert!(escaped >= SCREEN_ESCAPED, "screen escaped {escaped}");
        p.screen_escaped = escaped;
        assert!(encode(&opts, Codec::OnPair12, &p, usize::MAX / 4).is_none());
        assert!(encode(&opts, Codec::Fsst12, &p, usize::MAX / 4).is_some());

        let logs: Vec<Vec<u8>> = (0..3_000u64)
            .map(|i| {
                format!(
                    "2026-12-06 10:{:02}:{:02} worker{} job {} finished in {} ms",
                    i / 60 % 60,
                    i % 60,
                    i % 4,
                    5000 + i,
                    i % 97
                )
                .into_bytes()
            })
            .collect();
        let escaped = tries(&opts, &chunk(&logs)).expect("log lines pass the screen");
        assert!(escaped < 0.1, "screen escaped {escaped} of log lines");
    }
}
