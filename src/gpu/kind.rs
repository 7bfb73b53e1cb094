//! The one capability check of the GPU paths: what the device does with a
//! chunk of each kind. The whole-column scan (`plan`), the streaming scan's
//! batch sizing (`stream`) and random rows (`rows`) each match on [`Kind`]
//! or [`GpuChunk`] in one place, so a new chunk kind is one arm per match
//! (and its kernel), not a refusal in each path.

use crate::format::layout::ChunkEntry;
use crate::format::limits::MIN_BATCH;
use crate::read::ChunkView;

use super::values::ValueChunk;

/// A chunk's kind as the GPU sees it, from its footer entry alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Every row's codes (spec/FORMAT.md §5.2–§5.4): the decode kernel.
    Coded,
    /// Distinct values and a value number per row (§5.6): the value gather.
    ValueDict,
}

impl Kind {
    /// The kind of the chunk `e` describes (validation later checks that
    /// the chunk's header agrees: its value-dictionary flag is set iff
    /// `values > 0`).
    pub(crate) fn of(e: &ChunkEntry) -> Kind {
        if e.values > 0 {
            Kind::ValueDict
        } else {
            Kind::Coded
        }
    }

    /// Device bytes (input, values, offsets, de-cascaded sequences) that a
    /// streaming batch needs for `rows` rows of the chunk, an upper bound
    /// from the footer alone (no chunk is read to size a batch).
    pub(crate) fn device_bytes(self, e: &ChunkEntry, rows: u64) -> usize {
        let values = e.bytes as usize;
        let offsets = 8 * (rows as usize + 1);
        match self {
            // The chunk's whole section for its uploaded parts, the smallest
            // sidecar batch the format allows for its de-cascaded sidecar.
            Kind::Coded => {
                let input = (e.section.len as usize).saturating_add(64);
                let seq = 4 * (e.codes / MIN_BATCH + 2) as usize + 4096;
                input + values + offsets + seq
            }
            // Distinct values (each is used by a row, so at most the rows'
            // bytes, plus the reader's padding), their starts, up to 4 bytes
            // of value number per row, three 16-byte alignments.
            Kind::ValueDict => {
                let input = values + 64 + 4 * (e.values as usize + 1) + 4 * rows as usize + 48;
                input + values + offsets
            }
        }
    }
}

/// A validated chunk as the GPU paths take it.
pub(crate) enum GpuChunk<'r> {
    /// Coded: its parts are uploaded as stored.
    Coded(ChunkView<'r>),
    /// Value dictionary: its decoded distinct values and row value numbers.
    ValueDict(ValueChunk<'r>),
}

impl<'r> GpuChunk<'r> {
    /// The GPU's view of validated chunk `view`.
    pub(crate) fn of(view: ChunkView<'r>) -> Self {
        match ValueChunk::new(view) {
            Some(v) => GpuChunk::ValueDict(v),
            None => GpuChunk::Coded(view),
        }
    }
}
