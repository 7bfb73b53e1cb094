//! Encoding one chunk: training a codec's dictionary on rows, coding rows
//! greedily in parallel segments, the sidecar and histogram, and the chunk
//! section in each layout the options allow (the one dispatch on the chunk
//! kind in the writer: [`encode_as`]).

use rayon::prelude::*;

use super::{
    choose, logs, values, Choice, EncodedChunk, LogTemplates, PendingChunk, SectionBytes,
    WriterOptions,
};
use crate::dict::fsst12::{self, Fsst12Params};
use crate::dict::matcher::Matcher;
use crate::dict::onpair::{self, OnPairParams};
use crate::dict::TokenTable;
use crate::error::Result;
use crate::format::layout::{ChunkParts, ChunkSection};
use crate::format::ChunkKind;
use crate::format::{cascade, Codec};

/// `auto` keeps a log-template chunk (spec/FORMAT.md §5.8) only when it is
/// at least this share smaller than the coded chunk, both with their
/// [`DictShare`] (and never replaces a value dictionary): the GPU decodes a
/// log chunk several times slower than a coded one (bench/LOGS.md), so it
/// must pay for itself.
pub(super) const LOG_MARGIN: f64 = 0.10;

/// `auto` does not try log templates on a chunk kept as a value dictionary
/// whose distinct values are at most `1/VDICT_KEEP_SHARE` of its rows.
const VDICT_KEEP_SHARE: usize = 8;

/// The dictionary bytes a chunk's layout brings into the file, for the
/// choice between layouts. A log-template chunk names a dictionary but uses
/// none of its tokens (§5.8), and a dictionary no code uses is written as
/// the 256 single bytes (write/dicts.rs): so a log chunk saves the trained
/// tokens where it is the dictionary's only user. Comparing chunk bytes
/// alone charged the coded layout nothing for them, and on small log files
/// the dictionary is a large share of the file (e.g. /var/log/dpkg.log,
/// 5,273 rows: 13,440 of the coded file's 75,296 bytes; the log file was
/// 17% smaller, yet the coded chunk was kept).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DictShare {
    /// Charged to the coded and value-dictionary layouts: the trained
    /// dictionary's section (or the chunk's share of it).
    pub(super) coded: usize,
    /// Charged to a log-template layout: the single-byte section (or the
    /// chunk's share of it).
    pub(super) logs: usize,
}

/// The dictionary a chunk is encoded with: its own (trained on its rows,
/// and how it was chosen), or the file's shared one, with the chunk's share
/// of its bytes.
pub(super) enum DictUse {
    Own(TokenTable, Choice),
    Shared(DictShare),
}

impl DictShare {
    /// The whole dictionary of `table` for one chunk (a chunk's own
    /// dictionary), or `1/users` of it for each of the `users` chunks of a
    /// shared dictionary's training window (the chunks known to share it
    /// when it is trained; later chunks are charged nothing, as the
    /// dictionary stays for the window's coded chunks). Sizes are the
    /// front-coded sections' (§4), which depend on the tokens only.
    pub(super) fn of(table: &TokenTable, users: usize) -> Self {
        let users = users.max(1);
        Self {
            coded: crate::dict::planes::stored_section_len(table) / users,
            logs: crate::dict::planes::stored_section_len(&TokenTable::single_bytes()) / users,
        }
    }
}

/// Bytes of rows per parallel encoding task.
const ENCODE_SEGMENT: usize = 1 << 16;

/// Trains the dictionary of `codec` on a sample of `rows` spread over all of
/// them (the passes inside run in parallel); `write/choose.rs` keeps the
/// candidate with the smallest estimated size. The flag says whether an
/// OnPair scan filled its dictionary before pruning (always false for
/// FSST-12).
pub(super) fn train_codec(
    opts: &WriterOptions,
    codec: Codec,
    rows: &[&[u8]],
    want_codes: bool,
) -> (TokenTable, bool, Option<choose::RowCodes>) {
    if codec == Codec::Fsst12 {
        // FSST-12 samples the rows itself (pieces spread over the input);
        // when its sample is every row it can return their codes.
        let (table, codes) = fsst12::train_codes(rows, &Fsst12Params::default(), want_codes);
        return (table, false, codes);
    }
    // Spread the sample over the given rows rather than taking a prefix.
    let total: usize = rows.iter().map(|r| r.len()).sum();
    let sample: Vec<&[u8]> = if total <= opts.sample_bytes {
        rows.to_vec()
    } else {
        let stride = total.div_ceil(opts.sample_bytes).max(1);
        rows.iter().step_by(stride).copied().collect()
    };
    let mut params = match codec {
        Codec::OnPair12 => OnPairParams::onpair12(),
        _ => OnPairParams::onpair16(),
    };
    params.seed = opts.seed;
    // One candidate per codec. Before format version 3 inputs up to 8 MiB
    // also trained a dictionary of tokens ≤ 8 bytes (no high plane on disk:
    // half the bytes per stored token); with front-coded dictionaries it
    // never gave a smaller file on any corpus column (bench/RESULTS.md,
    // 2026-12-01).
    // When asked and the sample is every row, the trainer returns every
    // row's codes: those its pruning pass found, renumbered, and the rest
    // encoded (`onpair::train_codes`), so they are not encoded again. Up to
    // PRECODE_MAX_BYTES of rows (the codes are held until written).
    let want = want_codes && total <= opts.sample_bytes && total <= PRECODE_MAX_BYTES;
    onpair::train_codes(&sample, &params, want)
}

/// Rows of at most this many bytes get their codes from the OnPair trainer
/// ([`train_codec`]).
const PRECODE_MAX_BYTES: usize = 4 << 20;

/// A chunk's codes, already produced by `m.encode_into` on its rows (while
/// the dictionary was chosen): `codes` are the chunk's, `ends[i] - base` is
/// the number of them in rows `0..=i`.
pub(super) struct Precoded<'a> {
    pub(super) codes: &'a [u16],
    pub(super) ends: &'a [u32],
    pub(super) base: u32,
}

/// The trainer's codes `w` of rows `rows` of its input (a chunk's rows
/// within the training window's).
pub(super) fn precoded(w: &choose::RowCodes, rows: std::ops::Range<usize>) -> Precoded<'_> {
    let (r0, r1) = (rows.start, rows.end);
    let base = if r0 == 0 { 0 } else { w.ends[r0 - 1] };
    let end = if r1 == 0 { 0 } else { w.ends[r1 - 1] };
    Precoded {
        codes: &w.codes[base as usize..end as usize],
        ends: &w.ends[r0..r1],
        base,
    }
}

/// A dictionary trained on one chunk alone (its codec chosen as
/// `opts.codec` says) and the chunk encoded with it.
pub(super) struct OwnDict {
    pub(super) codec: Codec,
    pub(super) table: TokenTable,
    pub(super) matcher: Matcher,
    pub(super) encoded: EncodedChunk,
    /// Codes of the chunk's rows as coded (`encode_chunk`'s second value).
    pub(super) plain_codes: usize,
}

/// Trains a dictionary on chunk `p`'s rows and encodes `p` with it: the
/// per-chunk mode, and a shared-dictionary chunk that drifted.
pub(super) fn encode_with_own_dict(opts: &WriterOptions, p: &PendingChunk) -> Result<OwnDict> {
    let rows: Vec<&[u8]> = (0..p.rows()).map(|i| p.row(i)).collect();
    let (codec, table, choice, codes) = choose::train(opts, &rows);
    let matcher = Matcher::new(&table);
    let pre = codes.as_ref().map(|w| Precoded {
        codes: &w.codes,
        ends: &w.ends,
        base: 0,
    });
    let own = DictUse::Own(table.clone(), choice);
    let (encoded, plain_codes) = encode_chunk(opts, codec, p, &table, &matcher, own, pre)?;
    Ok(OwnDict {
        codec,
        table,
        matcher,
        encoded,
        plain_codes,
    })
}

/// Encodes one chunk with `table` of `codec` (whose matcher is `m`); `dict`
/// says whether `table` is the chunk's private dictionary (and how it was
/// chosen) or the shared one; `pre` its codes when they are known already
/// (the same codes `m` gives). Also returns the number of codes of the
/// plain layout (its rows encoded with `table`), whichever layout was kept.
#[allow(clippy::too_many_arguments)]
pub(super) fn encode_chunk(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    dict: DictUse,
    pre: Option<Precoded<'_>>,
) -> Result<(EncodedChunk, usize)> {
    // The value-dictionary screen (a hash of the rows, serial) runs beside
    // the coded encode (parallel inside) instead of after it. (The log
    // layout's estimate does not: beside the coded encode its samples'
    // encodes would add to that encode's memory, where the writer's budget
    // counts the larger of the two, `WriterOptions::encode_cost_with`.)
    let (coded, distinct) = rayon::join(
        || encode_coded(opts, codec, p, table, m, pre),
        || opts.value_dict.then(|| values::distinct(p)).flatten(),
    );
    let coded = coded?;
    let plain_codes = coded.codes as usize;
    let (own, share) = match dict {
        DictUse::Own(t, choice) => {
            let share = DictShare::of(&t, 1);
            (Some((t, choice)), share)
        }
        DictUse::Shared(share) => (None, share),
    };
    // Every other layout the options allow, kept when strictly smaller (an
    // exact comparison, so the choice depends on the bytes only).
    // `--codec logs` (`LogTemplates::Always`) keeps a log-template chunk
    // whatever its size; `auto` when, with the dictionary bytes each brings
    // (`DictShare`), it is at least `LOG_MARGIN` smaller.
    let mut best = coded;
    let mut others = Vec::new();
    if opts.value_dict {
        others.push(ChunkKind::ValueDict);
    }
    if opts.log_templates != LogTemplates::Off {
        others.push(ChunkKind::LogTemplates);
    }
    for kind in others {
        // `auto` leaves a value-dictionary chunk of few distinct values as it
        // is (GPU-readable at the write rate, and within a few percent of the
        // templates there); one of many distinct values (apt's eipp.log:
        // 2,646 of 5,869 rows) meets the log layout under the same margin.
        let auto = opts.log_templates == LogTemplates::Auto;
        if kind == ChunkKind::LogTemplates
            && auto
            && best.values > 0
            && (best.values as usize) * VDICT_KEEP_SHARE <= p.rows()
        {
            continue;
        }
        let logs = kind == ChunkKind::LogTemplates;
        // What the best layout so far costs the file, as the log layout's
        // bytes would be counted (so `logs::encode`'s estimate compares the
        // payload with it).
        let best_len = if logs {
            (best.bytes.len() + share.coded).saturating_sub(share.logs)
        } else {
            best.bytes.len()
        };
        if let Some(e) = encode_as(kind, opts, codec, p, table, m, distinct.as_ref(), best_len) {
            let forced = logs && opts.log_templates == LogTemplates::Always;
            let (have, want) = if logs {
                (
                    e.bytes.len() + share.logs,
                    ((best.bytes.len() + share.coded) as f64 * (1.0 - LOG_MARGIN)) as usize,
                )
            } else {
                (e.bytes.len(), best.bytes.len())
            };
            if forced || have < want {
                best = e;
            }
        }
    }
    best.dict = own;
    Ok((best, plain_codes))
}

/// Chunk `p` in the layout of `kind` other than [`ChunkKind::Coded`]
/// (which every chunk has, [`encode_coded`]), or `None` where the kind does
/// not apply to its rows (or, for log templates, will not beat `best`
/// bytes): the one dispatch on the chunk kind in the writer. `distinct`:
/// the distinct values of `p` ([`values::distinct`]) when a value
/// dictionary applies.
#[allow(clippy::too_many_arguments)]
fn encode_as(
    kind: ChunkKind,
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    distinct: Option<&values::Distinct>,
    best: usize,
) -> Option<EncodedChunk> {
    match kind {
        ChunkKind::Coded => None,
        // write/values.rs.
        ChunkKind::ValueDict => distinct.map(|d| values::encode(opts, codec, p, d, table, m)),
        // write/logs.rs.
        ChunkKind::LogTemplates => logs::encode(opts, codec, p, best),
    }
}

/// Chunk `p` coded row by row (spec/FORMAT.md §5.2–§5.5) with `table` (whose
/// matcher is `m`; `pre` the codes when known already); no dictionary of
/// its own. With `opts.gpu_encode` on, the rows are coded on the GPU
/// ([`gpu_coded`]): the same parts, so the same bytes.
fn encode_coded(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    pre: Option<Precoded<'_>>,
) -> Result<EncodedChunk> {
    // The GPU's parts stay in its pinned output buffers: the section is
    // built straight from them.
    #[cfg(feature = "gpu")]
    if let Some(c) = gpu_coded(opts, codec, p, table)? {
        let parts = CodedRef {
            codes: c.codes,
            row_codes: c.row_codes()?,
            sidecar: c.sidecar()?,
            hist: c.hist,
        };
        // The sink keeps what it is handed: the codes leave the pinned
        // buffers (which go back to the GPU encoder's pool).
        return Ok(coded_chunk(opts, codec, p, &parts, c.packed()?.to_vec()));
    }
    let parts = cpu_coded(opts, codec, p, table, m, pre);
    Ok(coded_chunk(
        opts,
        codec,
        p,
        &CodedRef {
            codes: parts.codes,
            row_codes: &parts.row_codes,
            sidecar: &parts.sidecar,
            hist: parts.hist,
        },
        parts.packed,
    ))
}

/// A coded chunk's parts but its packed codes, wherever they were computed.
struct CodedRef<'a> {
    codes: usize,
    row_codes: &'a [u32],
    sidecar: &'a [u32],
    hist: [u64; 16],
}

/// The chunk section of `p` from its coded parts.
fn coded_chunk(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    parts: &CodedRef<'_>,
    packed: Vec<u8>,
) -> EncodedChunk {
    let mut row_bytes = Vec::with_capacity(p.rows() + 1);
    row_bytes.push(0u32);
    row_bytes.extend(p.ends.iter().map(|&e| e as u32));
    debug_assert_eq!(*parts.sidecar.last().unwrap() as usize, p.data.len());
    // The three sequences at once (each also on all threads when long).
    let enc = |v: &[u32]| {
        let mut b = Vec::new();
        cascade::encode(v, &mut b);
        b
    };
    let (sc, (rc, rb)) = rayon::join(
        || enc(parts.sidecar),
        || rayon::join(|| enc(parts.row_codes), || enc(&row_bytes)),
    );
    let validity = validity_bits(p);
    let (head, tail) = ChunkSection::write_split(
        crate::format::VERSION,
        &ChunkParts {
            kind: ChunkKind::Coded,
            batch: opts.batch,
            code_bits: codec.code_bits(),
            codes: &packed,
            sidecar: &sc,
            row_codes: &rc,
            row_bytes: &rb,
            validity: validity.as_deref(),
            value_index: None,
            log_payload: None,
        },
    );
    EncodedChunk {
        bytes: SectionBytes {
            head,
            codes: packed,
            tail,
        },
        rows: p.rows() as u32,
        codes: parts.codes as u32,
        decoded: p.data.len() as u64,
        nulls: p.nulls as u32,
        values: 0,
        hist: parts.hist,
        codec,
        dict: None,
    }
}

/// A coded chunk's parts before the cascades (spec/FORMAT.md §5.2–§5.4).
struct CodedParts {
    /// Codes packed at the codec's width.
    packed: Vec<u8>,
    codes: usize,
    /// Codes before each row and after the last.
    row_codes: Vec<u32>,
    /// Output position of every `batch`-th code, then the total.
    sidecar: Vec<u32>,
    hist: [u64; 16],
}

/// The parts from the CPU encoder (`m`, or the trainer's codes `pre`),
/// assembled from the codes where they lie (`write/segments.rs`).
fn cpu_coded(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
    m: &Matcher,
    pre: Option<Precoded<'_>>,
) -> CodedParts {
    // The codes in segments: the encoder's, or the trainer's cut into runs.
    let encoded;
    let (segs, row_codes): (Vec<&[u16]>, Vec<u32>) = match pre {
        Some(pre) => {
            debug_assert_eq!(pre.ends.len(), p.rows());
            let mut row_codes = Vec::with_capacity(p.rows() + 1);
            row_codes.push(0u32);
            row_codes.extend(pre.ends.iter().map(|&e| e - pre.base));
            (pre.codes.chunks(PRECODED_SEGMENT).collect(), row_codes)
        }
        None => {
            let row_codes;
            (encoded, row_codes) = encode_rows(p, m);
            (encoded.iter().map(Vec::as_slice).collect(), row_codes)
        }
    };
    let a = super::segments::assemble(&segs, table.lens(), codec.code_bits(), opts.batch as usize);
    CodedParts {
        packed: a.packed,
        codes: a.codes,
        row_codes,
        sidecar: a.sidecar,
        hist: a.hist,
    }
}

/// Codes per segment of the trainer's codes (assembled on all threads).
const PRECODED_SEGMENT: usize = 1 << 16;

/// The parts from the GPU encoder (src/gpu/encode.rs) when `opts.gpu_encode`
/// asks for it and, for `GpuEncode::Auto`, it works; `None` for the CPU.
/// Every coded chunk goes to the device, even one whose codes the trainer
/// returned (`pre`): they are the same codes.
#[cfg(feature = "gpu")]
fn gpu_coded(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    table: &TokenTable,
) -> Result<Option<crate::gpu::encode::Coded>> {
    use super::GpuEncode;
    if opts.gpu_encode == GpuEncode::Off {
        return Ok(None);
    }
    let bits = codec.code_bits();
    match crate::gpu::encode::encode_rows(table, &p.data, &p.ends, bits, opts.batch) {
        Ok((c, _)) => Ok(Some(c)),
        Err(_) if opts.gpu_encode == GpuEncode::Auto => Ok(None),
        Err(e) => Err(e),
    }
}

/// The codes of the rows of `p` (greedy, `m`), one vector per segment of
/// rows in row order, and the cumulative code count before each row and
/// after the last.
fn encode_rows(p: &PendingChunk, m: &Matcher) -> (Vec<Vec<u16>>, Vec<u32>) {
    // Encode row segments of about ENCODE_SEGMENT bytes in parallel; a
    // single large chunk still uses every core.
    let mut segments = Vec::new();
    let mut start = 0usize;
    while start < p.rows() {
        let base = if start == 0 { 0 } else { p.ends[start - 1] };
        let mut end = start + 1;
        while end < p.rows() && p.ends[end - 1] - base < ENCODE_SEGMENT {
            end += 1;
        }
        segments.push(start..end);
        start = end;
    }
    let parts: Vec<(Vec<u16>, Vec<u32>)> = segments
        .into_par_iter()
        .map(|rows| {
            let mut codes = Vec::new();
            let mut ends = Vec::with_capacity(rows.len());
            for i in rows {
                m.encode_into(p.row(i), &mut codes);
                ends.push(codes.len() as u32);
            }
            (codes, ends)
        })
        .collect();
    // Row ends stitched on all threads: each segment's go to their places
    // (disjoint slices), moved by the codes before it.
    let mut row_codes = vec![0u32; p.rows() + 1];
    let mut places = Vec::with_capacity(parts.len());
    let mut ends_rest = &mut row_codes[1..];
    let mut base = 0u32;
    for (codes, ends) in &parts {
        let (e, er) = std::mem::take(&mut ends_rest).split_at_mut(ends.len());
        places.push((e, base));
        ends_rest = er;
        base += codes.len() as u32;
    }
    places
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|((e, base), (_, ends))| {
            for (d, &x) in e.iter_mut().zip(ends) {
                *d = base + x;
            }
        });
    (
        parts.into_iter().map(|(codes, _)| codes).collect(),
        row_codes,
    )
}

/// The validity bitmap of `p` (§5.5), when it has a null.
pub(super) fn validity_bits(p: &PendingChunk) -> Option<Vec<u8>> {
    (p.nulls > 0).then(|| {
        let mut bits = vec![0u8; p.rows().div_ceil(8)];
        for (i, &v) in p.valid.iter().enumerate() {
            bits[i / 8] |= (v as u8) << (i % 8);
        }
        bits
    })
}
