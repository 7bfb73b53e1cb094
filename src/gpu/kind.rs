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
        // per value), their starts, up to 4 bytes of value number per row,
        // three 16-byte alignments.
        ChunkKind::ValueDict => {
            let d = e.values as usize;
            let input = values.max(64 * d) + 64 + 4 * (d + 1) + 4 * rows as usize + 48;
            input + values + offsets
        }
        // No kernel reads it (`GpuChunk::of` refuses it); its section and
        // output, should a later kernel take it.
        ChunkKind::LogTemplates => (e.section.len as usize).saturating_add(64) + values + offsets,
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
            // No GPU decoder for log templates yet (issue 20): refused here,
            // the one capability check, so every GPU path names the chunk.
            ChunkKind::LogTemplates => {
                return Err(Error::Gpu(format!(
                    "chunk {}: a log-template chunk (spec/FORMAT.md §5.8) has no GPU \
                     decoder yet; read it on the CPU (Reader::read_range, get)",
                    view.id()
                )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::GpuChunk;
    use crate::write::{write_to_vec, LogTemplates, WriterOptions};
    use crate::Reader;

    /// The one capability check refuses a log-template chunk (no kernel yet,
    /// spec/FORMAT.md §5.8) with an error naming it; the CPU reads it.
    #[test]
    fn log_template_chunks_are_refused_naming_the_chunk() {
        let rows: Vec<Vec<u8>> = (0..300)
            .map(|i| format!("GET /a/{i} 200 {}ms", i % 17).into_bytes())
            .collect();
        let opts = WriterOptions::default()
            .with_chunk_rows(100)
            .with_log_templates(LogTemplates::Always);
        let file = write_to_vec(rows.iter().map(|r| Some(&r[..])), opts).unwrap();
        let r = Reader::from_bytes(file).unwrap();
        let view = r.chunk(2).unwrap();
        let Err(e) = GpuChunk::of(view) else {
            panic!("a log-template chunk was accepted by the GPU path")
        };
        let m = e.to_string();
        assert!(m.contains("chunk 2") && m.contains("log-template"), "{m}");
        assert_eq!(r.get(250).unwrap().unwrap(), rows[250]);
    }
}
