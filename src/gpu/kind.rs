//! The one capability check of the GPU paths: what the device does with a
//! chunk of each kind ([`ChunkKind`], the reader's type). The whole-column
//! scan (`plan`), the streaming scan's batch sizing (`stream`) and random
//! rows (`rows`) each match on it in one place (exhaustively: a new kind
//! does not compile until each GPU layer has its arm and kernel), so no path
//! refuses a chunk kind the writer makes.

use crate::error::{Error, Result};
use crate::format::layout::ChunkEntry;
use crate::format::limits::MIN_BATCH;
use crate::read::{ChunkKind, ChunkView};

use super::values::ValueChunk;
use crate::logs::LogColumn;

/// Device bytes (input, values, offsets, de-cascaded sequences) that a
/// streaming batch needs for `rows` rows of the chunk `e` describes, an
/// upper bound from the footer alone (no chunk is read to size a batch).
pub(crate) fn device_bytes(e: &ChunkEntry, rows: u64) -> usize {
    let values = e.bytes as usize;
    let offsets = 8 * (rows as usize + 1);
    match ChunkKind::of(e) {
        // The chunk's whole section for its uploaded parts, the smallest
        // sidecar batch the format allows for its de-cascaded sidecar.
        ChunkKind::Coded => {
            let input = (e.section.len as usize).saturating_add(64);
            let seq = 4 * (e.codes / MIN_BATCH + 2) as usize + 4096;
            input + values + offsets + seq
        }
        // Distinct values (each is used by a row, so at most the rows'
        // bytes, plus the reader's padding; or a table of at most 64 bytes
        // per value and a length byte each), their starts, up to 4 bytes of
        // value number per row, three 16-byte alignments.
        ChunkKind::ValueDict => {
            let d = e.values as usize;
            let input = values.max(64 * d) + d + 64 + 4 * (d + 1) + 4 * rows as usize + 48;
            input + values + offsets
        }
        // Its blocks' bytes (at most the section) and the tables laid out
        // from their meta and pool (`logs::DeviceBlock`): each table entry
        // comes from at least one meta byte and is at most 32 bytes, the
        // decoded static strings and dictionary values at most 32 bytes per
        // code (16 for its tokens, 16 for a front-coded value's copied
        // prefix, FORMAT §5.8.2; a code takes at least 8 bits of the
        // section, §5.8.4), a delta block's
        // running sums at most 8 bytes per byte of its residuals and group
        // sums (`logs::DeviceBlock::sums`), so 48 bytes per section byte
        // covers every kind of byte and its own copy; the pool
        // tokens at most 17 bytes per token of each of the (at most two)
        // blocks, one tile per 128 rows, the piece and its rows' lengths
        // (4 bytes each); plus each region's alignment. Since format
        // version 10 the meta and the shared strings are LZMA2 in the
        // section (FORMAT §5.8.6) and may expand past that argument; the
        // device input of real logs measured 4.4–6.0 bytes per section
        // byte (bench/LOGS.md, "Format 10"), and a plan larger than its
        // ring slot is an error (`DevicePlan::with_input_on`), never a
        // write past it.
        ChunkKind::LogTemplates => {
            let s = e.section.len as usize;
            let tokens = 2 * 17 * 4096;
            let tiles = 24 * (rows as usize / 128 + 2) + 32;
            let lens = 4 * rows as usize + 16;
            let input = s.saturating_mul(48) + tokens + tiles + lens + 2 * 14 * 32;
            input + values + offsets
        }
    }
}

/// Whether the dictionary of the chunk `e` describes is read by a kernel
/// (coded chunks), so that a launch's dictionary table holds it.
pub(crate) fn uses_dictionary_planes(e: &ChunkEntry) -> bool {
    match ChunkKind::of(e) {
        ChunkKind::Coded => true,
        // Its values were decoded when it was validated.
        ChunkKind::ValueDict => false,
        // Its pool has its own tokens (spec/FORMAT.md §5.8).
        ChunkKind::LogTemplates => false,
    }
}

/// A validated chunk as the GPU paths take it.
pub(crate) enum GpuChunk<'r> {
    /// Coded: its parts are uploaded as stored.
    Coded(ChunkView<'r>),
    /// Value dictionary: its decoded distinct values and row value numbers.
    ValueDict(ValueChunk<'r>),
    /// Log templates: its opened payload and its rows' byte offsets.
    Logs(LogChunkParts<'r>),
}

/// A validated log-template chunk's parts as the GPU takes them.
#[derive(Clone, Copy)]
pub(crate) struct LogChunkParts<'r> {
    /// The payload, opened and checked (one block, or header and body).
    pub(crate) col: &'r LogColumn,
    /// The rows' `rows + 1` byte offsets, from validation.
    pub(crate) ends: &'r [u64],
    /// The validated chunk (its kept device tables, [`Self::image`]).
    view: ChunkView<'r>,
}

impl<'r> LogChunkParts<'r> {
    /// The chunk's tables for the decoder, laid out on the chunk's first
    /// GPU use and kept with the validated chunk (`logs::DeviceImage`).
    pub(crate) fn image(&self) -> Result<&'r crate::logs::DeviceImage> {
        self.view.log_device_image().ok_or_else(|| {
            Error::Gpu(format!(
                "chunk {}: a log-template chunk without its opened payload",
                self.view.id()
            ))
        })
    }
}

impl<'r> GpuChunk<'r> {
    /// The GPU's view of validated chunk `view`.
    pub(crate) fn of(view: ChunkView<'r>) -> Result<Self> {
        Ok(match view.kind() {
            ChunkKind::Coded => GpuChunk::Coded(view),
            ChunkKind::ValueDict => {
                GpuChunk::ValueDict(ValueChunk::new(view).ok_or_else(|| {
                    Error::Gpu(format!(
                        "chunk {}: a value-dictionary chunk without its decoded values",
                        view.id()
                    ))
                })?)
            }
            ChunkKind::LogTemplates => {
                let (col, ends) = view.log_parts().ok_or_else(|| {
                    Error::Gpu(format!(
                        "chunk {}: a log-template chunk without its opened payload",
                        view.id()
                    ))
                })?;
                GpuChunk::Logs(LogChunkParts { col, ends, view })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::GpuChunk;
    use crate::write::{write_to_vec, LogTemplates, WriterOptions};
    use crate::Reader;

    /// The capability check takes a log-template chunk (spec/FORMAT.md
    /// §5.8) with its opened payload and row offsets.
    #[test]
    fn log_template_chunks_are_taken_with_their_parts() {
        let rows: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("GET /a/{i} 200 {}ms", i % 17).into_bytes())
            .collect();
        let opts = WriterOptions::default()
            .with_chunk_rows(100)
            .with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let view = r.chunk(2).unwrap();
        let Ok(GpuChunk::Logs(l)) = GpuChunk::of(view) else {
            panic!("a log-template chunk was not taken as one")
        };
        assert_eq!(l.col.rows(), 100);
        assert_eq!(l.ends.len(), 101);
        let bytes: usize = rows[200..].iter().map(|r| r.len()).sum();
        assert_eq!(l.ends[100] as usize, bytes);
    }
}
