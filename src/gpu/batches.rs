//! How a streaming scan (spec/DECODER.md §6b, `super::stream`) cuts its
//! rows into batches: groups of whole chunks whose input, values and
//! offsets fit one ring slot, sized from the footer alone (no chunk is read
//! to plan).

use std::ops::Range;

use super::kind;
use crate::error::{Error, Result};
use crate::read::Reader;

/// A batch's share of the column: rows, the chunks they lie in, and the
/// device memory it needs.
pub(super) struct Group {
    pub(super) rows: Range<u64>,
    pub(super) chunks: Range<usize>,
    pub(super) input: usize,
    pub(super) values: usize,
    pub(super) offsets: usize,
}

/// Bytes of one ring slot for `groups`: each of its buffers (input, values,
/// offsets) is as large as that buffer's largest batch, and those may be
/// different batches.
pub(super) fn slot_bytes(groups: &[Group]) -> usize {
    let imax = groups.iter().map(|g| g.input).max().unwrap_or(1).max(1);
    let vmax = groups.iter().map(|g| g.values).max().unwrap_or(1).max(1);
    let omax = groups
        .iter()
        .map(|g| g.offsets / 8)
        .max()
        .unwrap_or(1)
        .max(1);
    imax + vmax + 8 * omax
}

/// Cuts `rows` into batches whose ring slot (sized by [`slot_bytes`]) fits
/// `budget`. Batches are cut to `budget` first; when the largest input of
/// one batch and the largest values of another add up past it, the batches
/// are cut again to a proportionally smaller size, until the slot fits (at
/// a third of `budget` it always does: no buffer of any batch is larger).
pub(super) fn groups(reader: &Reader, rows: Range<u64>, budget: usize) -> Result<Vec<Group>> {
    let mut cut = budget;
    loop {
        let gs = match cut_groups(reader, rows.clone(), cut) {
            Ok(gs) => gs,
            // A chunk that fits the ring alone but not a smaller cut.
            Err(_) if cut < budget => {
                return Err(Error::InvalidArgument(format!(
                    "the ring buffer's {budget} bytes of device memory cannot hold the largest \
                     input, values and offsets of these chunks' batches at once; give the scan \
                     more device memory or fewer ring slots"
                )))
            }
            Err(e) => return Err(e),
        };
        let slot = slot_bytes(&gs);
        if slot <= budget {
            return Ok(gs);
        }
        let smaller = (cut as u128 * budget as u128 / slot as u128) as usize;
        cut = smaller.min(cut - 1).max(budget / 3);
    }
}

/// Cuts `rows` into batches of whole chunks that fit `budget` bytes of device
/// memory each. Sizes come from the footer alone (upper bounds by chunk
/// kind, `Kind::device_bytes`), so no chunk is read here: chunks are
/// validated in the background, ahead of the uploads (`stream::validate_ahead`). Coded and
/// value-dictionary chunks mix freely in a batch.
fn cut_groups(reader: &Reader, rows: Range<u64>, budget: usize) -> Result<Vec<Group>> {
    let mut out: Vec<Group> = Vec::new();
    for i in 0..reader.num_chunks() {
        let info = reader.chunk_info(i);
        let e = info.entry;
        let n = e.rows as u64;
        let (lo, hi) = (
            rows.start.max(info.first_row),
            rows.end.min(info.first_row + n),
        );
        if lo >= hi {
            continue;
        }
        let need = kind::device_bytes(&e, hi - lo);
        // The batch's buffers: its values and offsets exactly, the rest
        // (input, sequences) as one sum.
        let values = e.bytes as usize;
        let offsets = 8 * (hi - lo + 1) as usize;
        let input = need - values - offsets;
        // + 8: a batch's offsets hold one more entry than its rows.
        if need + 8 > budget {
            return Err(Error::InvalidArgument(format!(
                "chunk {i} needs {} bytes of device memory, more than one ring buffer's {budget}",
                need + 8
            )));
        }
        match out.last_mut() {
            Some(g) if g.rows.end == lo && g.input + g.values + g.offsets + need <= budget => {
                g.rows.end = hi;
                g.chunks.end = i + 1;
                g.input += input;
                g.values += values;
                g.offsets += offsets;
            }
            _ => out.push(Group {
                rows: lo..hi,
                chunks: i..i + 1,
                input,
                values,
                offsets: offsets + 8,
            }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::write_to_vec;
    use crate::{Codec, DictMode, WriterOptions};

    /// Rows of varied lengths, so that the batch with the most input and the
    /// batch with the most values are different batches.
    fn mixed_file(codec: Codec, mode: DictMode) -> Reader {
        let vals: Vec<Option<Vec<u8>>> = (0..40_000u32)
            .map(|i| match i % 13 {
                0 => None,
                1 => Some(Vec::new()),
                _ => Some(
                    format!(
                        "{} host-{} took {} ms {}",
                        i * 7,
                        i % 91,
                        i % 1000,
                        "z".repeat((i % 29 + (i / 5000) * 40) as usize)
                    )
                    .into_bytes(),
                ),
            })
            .collect();
        let opts = WriterOptions::default()
            .with_codec(codec)
            .with_chunk_rows(1500)
            .with_dict_mode(mode);
        Reader::from_bytes(write_to_vec(vals.iter().map(|v| v.as_deref()), opts).unwrap()).unwrap()
    }

    /// The ring's slot (each buffer as large as its largest batch) fits the
    /// budget for every budget that holds the largest chunk, every range
    /// is covered by consecutive batches of whole chunks, and a budget
    /// below one chunk is an error, not a plan.
    #[test]
    fn ring_slots_fit_the_budget() {
        for (codec, mode) in [
            (Codec::OnPair12, DictMode::Shared),
            (Codec::OnPair16, DictMode::PerChunk),
        ] {
            let r = mixed_file(codec, mode);
            let n = r.rows();
            for budget in [
                200 << 10,
                256 << 10,
                300_001,
                512 << 10,
                700 << 10,
                1 << 20,
                4 << 20,
            ] {
                for range in [0..n, 777..n - 333, 1499..1501] {
                    let gs = match groups(&r, range.clone(), budget) {
                        Ok(gs) => gs,
                        Err(Error::InvalidArgument(m)) => {
                            assert!(m.contains("device memory"), "{m}");
                            continue;
                        }
                        Err(e) => panic!("{e}"),
                    };
                    assert!(slot_bytes(&gs) <= budget, "{budget}: {}", slot_bytes(&gs));
                    assert_eq!(gs.first().unwrap().rows.start, range.start);
                    assert_eq!(gs.last().unwrap().rows.end, range.end);
                    for w in gs.windows(2) {
                        assert_eq!(w[0].rows.end, w[1].rows.start);
                        assert_eq!(w[0].chunks.end, w[1].chunks.start);
                    }
                }
            }
            // Far below one chunk: refused.
            assert!(matches!(
                groups(&r, 0..n, 4 << 10),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
}
