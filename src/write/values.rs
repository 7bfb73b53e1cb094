//! Value dictionaries (spec/FORMAT.md §5.6): a chunk whose rows repeat few
//! distinct values stores each distinct value once, token-coded with the
//! chunk's dictionary like any row, and each row as an index into them.
//!
//! The indices are bit-packed at one width for the chunk, `ceil(log2
//! values)` bits per row (format version 3, `format::index`); version 2
//! stored them as a cascaded running sum, whose 16-byte directory per 128
//! rows cost a third of the index at 2 bits per row.
//!
//! The writer tries the layout on every chunk whose distinct values are at
//! most half its non-null rows and keeps whichever section is smaller (an
//! exact comparison, so the choice depends on the bytes only).

use super::many;
use super::seen::Seen;
use super::{EncodedChunk, PendingChunk, SectionBytes, WriterOptions};
use crate::dict::matcher::Matcher;
use crate::dict::TokenTable;
use crate::format::layout::{ChunkParts, ChunkSection};
use crate::format::ChunkKind;
use crate::format::{cascade, codes, index, Codec};

/// The distinct values of a chunk, numbered by first use.
pub(super) struct Distinct {
    /// For each value, the first row that holds it.
    pub first_rows: Vec<u32>,
    /// For each row, its value's number (0 for a null row).
    pub index: Vec<u32>,
}

/// A chunk may become a value-dictionary chunk when its distinct values are
/// at most this share of its non-null rows.
pub const MAX_VALUES_SHARE: usize = 2;

/// Rows numbered one by one before a chunk whose rows were more than half
/// distinct so far is counted on all threads instead ([`many`]): the count
/// pays on large chunks of distinct rows and would only add to the others.
const PROOF_AFTER: usize = 8192;

/// Whether the screen, at row [`PROOF_AFTER`] of `n`, having numbered
/// `values` distinct values in `seen` rows that count, should try
/// [`many::more_than`].
fn try_proof(n: usize, seen: usize, values: usize) -> bool {
    n >= 2 * PROOF_AFTER && values * MAX_VALUES_SHARE > seen
}

/// The distinct values of `p`, or `None` when there are more than half as
/// many as non-null rows (or none).
pub(super) fn distinct(p: &PendingChunk) -> Option<Distinct> {
    let nonnull = p.rows() - p.nulls;
    let cap = nonnull / MAX_VALUES_SHARE;
    if cap == 0 {
        return None;
    }
    // Sized for up to 2^16 values at once (fewer growths on the way to
    // `cap`, which most chunks without repeats reach).
    let mut seen = Seen::with_capacity(cap.min(1 << 16) + 1);
    let mut first_rows: Vec<u32> = Vec::new();
    let mut index = Vec::with_capacity(p.rows());
    for i in 0..p.rows() {
        if i == PROOF_AFTER
            && try_proof(
                p.rows(),
                i - p.valid[..i].iter().filter(|&&v| !v).count(),
                first_rows.len(),
            )
            && many::more_than(p.rows(), cap, |r| p.valid[r].then(|| p.row(r)))
        {
            return None;
        }
        if !p.valid[i] {
            index.push(0);
            continue;
        }
        let next = first_rows.len() as u32;
        let k = seen.number_of(p.row(i), next, |k| p.row(first_rows[k as usize] as usize));
        if k == next {
            if first_rows.len() >= cap {
                return None;
            }
            first_rows.push(i as u32);
        }
        index.push(k);
    }
    Some(Distinct { first_rows, index })
}

/// The distinct values of `rows` in order of first use, or `None` when
/// there are more than half as many as rows (the writer's rule, §5.6).
pub(super) fn distinct_rows<'a>(rows: &[&'a [u8]]) -> Option<Vec<&'a [u8]>> {
    let cap = rows.len() / MAX_VALUES_SHARE;
    let mut seen = Seen::with_capacity(cap.min(1 << 16) + 1);
    let mut out: Vec<&[u8]> = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        if i == PROOF_AFTER
            && try_proof(rows.len(), i, out.len())
            && many::more_than(rows.len(), cap, |k| Some(rows[k]))
        {
            return None;
        }
        let next = out.len() as u32;
        if seen.number_of(r, next, |k| out[k as usize]) == next {
            if out.len() >= cap {
                return None;
            }
            out.push(r);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Encodes `p` as a value-dictionary chunk (§5.6) with `table` of `codec`.
pub(super) fn encode(
    opts: &WriterOptions,
    codec: Codec,
    p: &PendingChunk,
    d: &Distinct,
    table: &TokenTable,
    m: &Matcher,
) -> EncodedChunk {
    let lens = table.lens();
    let mut all = Vec::new();
    let mut row_codes = vec![0u32];
    let mut row_bytes = vec![0u32];
    let mut vbytes = 0u32;
    for &r in &d.first_rows {
        let v = p.row(r as usize);
        m.encode_into(v, &mut all);
        vbytes += v.len() as u32;
        row_codes.push(all.len() as u32);
        row_bytes.push(vbytes);
    }
    let (sidecar, hist) = super::sidecar_and_hist(&all, lens, opts.batch as usize);
    let mut index_part = Vec::new();
    index::pack(
        &d.index,
        index::width(d.first_rows.len() as u32),
        &mut index_part,
    );
    let mut packed = Vec::new();
    codes::pack(codec.code_bits(), &all, &mut packed);
    let enc = |v: &[u32]| {
        let mut b = Vec::new();
        cascade::encode(v, &mut b);
        b
    };
    let validity = super::encode::validity_bits(p);
    let mut bytes = Vec::new();
    let (sc, rc, rb) = (enc(&sidecar), enc(&row_codes), enc(&row_bytes));
    ChunkSection::write(
        crate::format::VERSION,
        &ChunkParts {
            kind: ChunkKind::ValueDict,
            batch: opts.batch,
            code_bits: codec.code_bits(),
            codes: &packed,
            sidecar: &sc,
            row_codes: &rc,
            row_bytes: &rb,
            validity: validity.as_deref(),
            value_index: Some(&index_part),
            log_payload: None,
        },
        &mut bytes,
    );
    EncodedChunk {
        bytes: SectionBytes::whole(bytes),
        rows: p.rows() as u32,
        codes: all.len() as u32,
        decoded: p.data.len() as u64,
        nulls: p.nulls as u32,
        values: d.first_rows.len() as u32,
        hist,
        codec,
        dict: None,
    }
}

/// Estimated file bytes of `rows` rows as a value-dictionary chunk whose
/// `values` distinct values take `value_bytes` coded: the bit-packed indices
/// plus the values.
pub(super) fn estimate(rows: usize, values: usize, value_bytes: f64) -> f64 {
    let bits = index::width(u32::try_from(values).unwrap_or(u32::MAX));
    index::packed_len(rows, bits) as f64 + value_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `i` of a test chunk (`None`: null).
    type Shape = dyn Fn(usize) -> Option<Vec<u8>>;

    fn chunk(rows: &[Option<Vec<u8>>]) -> PendingChunk {
        let mut p = PendingChunk::default();
        for r in rows {
            p.data.extend_from_slice(r.as_deref().unwrap_or(&[]));
            p.ends.push(p.data.len());
            p.valid.push(r.is_some());
            p.nulls += r.is_none() as usize;
        }
        p
    }

    /// The screen's rule numbered plainly: values by first use, `None` past
    /// half the non-null rows.
    fn reference(rows: &[Option<Vec<u8>>]) -> Option<Vec<u32>> {
        let cap = rows.iter().flatten().count() / MAX_VALUES_SHARE;
        let mut map = std::collections::HashMap::new();
        let mut index = Vec::new();
        for r in rows {
            match r {
                None => index.push(0),
                Some(v) => {
                    let next = map.len() as u32;
                    let k = *map.entry(v.clone()).or_insert(next);
                    if k == next && map.len() > cap {
                        return None;
                    }
                    index.push(k);
                }
            }
        }
        (cap > 0).then_some(index)
    }

    /// Chunks past `PROOF_AFTER` rows whose first rows are distinct: the
    /// count on all threads runs; where it cannot prove "too many" (the
    /// later rows repeat) the screen goes on and numbers them as before.
    #[test]
    fn the_count_on_all_threads_never_changes_the_screens() {
        let n = 3 * PROOF_AFTER;
        let shapes: [(&str, Box<Shape>); 4] = [
            (
                "all distinct",
                Box::new(|i| Some(format!("row {i}").into_bytes())),
            ),
            (
                "distinct, then repeats: at most half distinct",
                Box::new(move |i| {
                    Some(format!("row {}", if i < PROOF_AFTER { i } else { i % 97 }).into_bytes())
                }),
            ),
            (
                "just over half distinct, nulls between",
                Box::new(move |i| {
                    (i % 5 != 0)
                        .then(|| format!("v{}", if i % 2 == 0 { i } else { i % 3 }).into_bytes())
                }),
            ),
            (
                "repeats from the start",
                Box::new(|i| Some(format!("{}", i % 1000).into_bytes())),
            ),
        ];
        for (what, shape) in shapes {
            let rows: Vec<Option<Vec<u8>>> = (0..n).map(shape).collect();
            let p = chunk(&rows);
            let want = reference(&rows);
            let got = distinct(&p).map(|d| d.index);
            assert_eq!(got, want, "{what}");
            let flat: Vec<&[u8]> = rows.iter().map(|r| r.as_deref().unwrap_or(&[])).collect();
            let whole: Vec<Option<Vec<u8>>> = flat.iter().map(|r| Some(r.to_vec())).collect();
            let want_rows = reference(&whole).map(|ix| {
                let mut firsts = Vec::new();
                for (i, &k) in ix.iter().enumerate() {
                    if k as usize == firsts.len() {
                        firsts.push(flat[i]);
                    }
                }
                firsts
            });
            assert_eq!(distinct_rows(&flat), want_rows, "{what} (rows)");
        }
    }
}
