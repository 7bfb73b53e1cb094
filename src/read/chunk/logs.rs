//! Log-template chunks (spec/FORMAT.md §5.8): the payload opened and checked
//! once (`logs::LogColumn`), every row rendered once at validation to check
//! the chunk-level invariants (row count, null rows empty, the bytes the
//! footer counts, each row's length) and to keep the rows' byte offsets and
//! which rows are not UTF-8; then gets read one row in O(1) and bulk reads
//! render the rows straight into the output.

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;

use super::{ChunkView, KindRows, SubCheck, ValidChunk};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::layout::ChunkEntry;
use crate::format::limits;
use crate::logs::{LogColumn, LogForm};

/// A validated log-template chunk.
pub(in crate::read) struct LogChunk {
    col: LogColumn,
    /// Byte offset of every row in the chunk's values, and the total.
    ends: Vec<u64>,
    /// Rows that are not valid UTF-8 (bit `r % 64` of word `r / 64`), when
    /// any is.
    not_utf8: Option<Vec<u64>>,
    /// The GPU decoder's tables, laid out on the chunk's first GPU use and
    /// kept with it (`logs::DeviceImage`).
    #[cfg(feature = "gpu")]
    device: std::sync::OnceLock<crate::logs::DeviceImage>,
}

impl std::fmt::Debug for LogChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogChunk")
            .field("rows", &self.col.rows())
            .field("templates", &self.col.templates())
            .finish()
    }
}

/// `e`, raised inside the payload (offsets from its first byte), as an
/// error of chunk `id`'s payload part at file offset `at`.
fn in_payload(e: Error, id: u32, at: u64) -> Error {
    match e {
        Error::Corrupt {
            offset, invariant, ..
        } => Error::corrupt(
            Section::Chunk(id, ChunkPart::LogPayload),
            at + offset,
            invariant,
        ),
        e => e,
    }
}

impl LogChunk {
    /// The opened payload (template search, `search::eval`).
    pub(in crate::read) fn column(&self) -> &LogColumn {
        &self.col
    }

    /// §9 step 13c: opens the payload (every check of §5.8.1–§5.8.4; its
    /// magic the one of the file's `version`: "FPL5"/"FPS5" in version 9,
    /// "FPL4"/"FPS4" in version 8,
    /// "FPL3"/"FPS3" in version 7,
    /// "FPL2"/"FPS2" in version 6,
    /// "FPL1"/"FPS1" in versions 4–5), then renders every row: `rows` rows,
    /// null rows empty, each row at most `MAX_VALUE_LEN`, their total the
    /// entry's `bytes`. Returns the chunk and whether every row is valid
    /// UTF-8.
    pub(super) fn validate(
        id: u32,
        entry: &ChunkEntry,
        payload: Bytes,
        at: u64,
        validity: Option<&[u8]>,
        version: u32,
    ) -> Result<(Self, bool)> {
        let section = Section::Chunk(id, ChunkPart::LogPayload);
        let magic = payload
            .get(..4)
            .map_or(0, |m| u32::from_le_bytes(m.try_into().expect("4 bytes")));
        let col = LogColumn::open_shared(payload).map_err(|e| in_payload(e, id, at))?;
        if col.form() != LogForm::of_version(version) {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::BadField {
                    what: "log payload magic (FPL5/FPS5 in format version 9, FPL4/FPS4 in 8, FPL3/FPS3 in 7, FPL2/FPS2 in 6, FPL1/FPS1 in 4-5)",
                    value: magic as u64,
                },
            ));
        }
        let rows = entry.rows as usize;
        if col.rows() != rows {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::SizeMismatch {
                    what: "log payload rows",
                    expected: rows as u64,
                    found: col.rows() as u64,
                },
            ));
        }
        let (mut values, mut offsets) = (Vec::new(), Vec::new());
        col.decode_all(&mut values, &mut offsets);
        let mut not_utf8 = vec![0u64; rows.div_ceil(64)];
        let mut all_utf8 = true;
        for r in 0..rows {
            let (a, b) = (offsets[r] as usize, offsets[r + 1] as usize);
            if (b - a) as u64 > limits::MAX_VALUE_LEN {
                return Err(Error::corrupt(
                    section,
                    at,
                    Invariant::LimitExceeded {
                        what: "value length",
                        value: (b - a) as u64,
                        limit: limits::MAX_VALUE_LEN,
                    },
                ));
            }
            let valid = validity.map_or(true, |v| v[r / 8] >> (r % 8) & 1 == 1);
            if !valid && b > a {
                return Err(Error::corrupt(
                    Section::Chunk(id, ChunkPart::Validity),
                    at,
                    Invariant::NullWithValue { row: r as u64 },
                ));
            }
            if std::str::from_utf8(&values[a..b]).is_err() {
                not_utf8[r / 64] |= 1 << (r % 64);
                all_utf8 = false;
            }
        }
        if values.len() as u64 != entry.bytes {
            return Err(Error::corrupt(
                section,
                at,
                Invariant::SizeMismatch {
                    what: "log rows bytes",
                    expected: entry.bytes,
                    found: values.len() as u64,
                },
            ));
        }
        let ends = offsets.iter().map(|&o| o as u64).collect();
        let chunk = LogChunk {
            col,
            ends,
            not_utf8: (!all_utf8).then_some(not_utf8),
            #[cfg(feature = "gpu")]
            device: std::sync::OnceLock::new(),
        };
        Ok((chunk, all_utf8))
    }

    /// The payload summarized (`ChunkView::log_summary`).
    pub(super) fn summary(&self) -> crate::logs::LogSummary {
        self.col.summary()
    }

    /// Rows `rows` rendered into `buf` (cleared): in bulk when they are all
    /// the chunk's rows, else one by one (each O(1)).
    fn render(&self, rows: Range<usize>, buf: &mut Vec<u8>) {
        buf.clear();
        if rows.start == 0 && rows.end == self.col.rows() {
            let mut offsets = Vec::new();
            self.col.decode_all(buf, &mut offsets);
            return;
        }
        for r in rows {
            // In range: `rows` lies inside the chunk (`Reader::plan`).
            let _ = self.col.get_into(r, buf);
        }
    }
}

impl LogChunk {
    /// The opened payload and the rows' `rows + 1` byte offsets (the GPU
    /// decoder places each 128-row block's output from them).
    #[cfg(feature = "gpu")]
    pub(in crate::read) fn parts(&self) -> (&LogColumn, &[u64]) {
        (&self.col, &self.ends)
    }

    /// The GPU decoder's tables of the chunk, laid out on first use and
    /// kept (`logs::DeviceImage`).
    #[cfg(feature = "gpu")]
    pub(in crate::read) fn device_image(&self) -> &crate::logs::DeviceImage {
        self.device
            .get_or_init(|| crate::logs::DeviceImage::new(&self.col, &self.ends))
    }
}

impl KindRows for LogChunk {
    fn get(&self, _view: ChunkView<'_>, r: usize, out: &mut Vec<u8>) {
        // `r` is below the row count (the caller's contract); an error is
        // impossible then and leaves `out` as it was.
        let _ = self.col.get_into(r, out);
    }

    fn span(&self, _c: &ValidChunk, rows: Range<usize>) -> (Range<usize>, Range<usize>) {
        (
            0..0,
            self.ends[rows.start] as usize..self.ends[rows.end] as usize,
        )
    }

    fn extend_offsets(&self, _c: &ValidChunk, rows: Range<usize>, shift: i64, out: &mut Vec<i64>) {
        out.extend(
            self.ends[rows.start + 1..rows.end + 1]
                .iter()
                .map(|&e| e as i64 + shift),
        );
    }

    fn decode(
        &self,
        _view: ChunkView<'_>,
        rows: Range<usize>,
        _codes: Range<usize>,
        _bytes: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        check: Option<SubCheck<'_>>,
    ) -> (usize, bool) {
        let mut buf = Vec::new();
        self.render(rows, &mut buf);
        let n = buf.len().min(out.len());
        for (d, &s) in out[..n].iter_mut().zip(&buf) {
            d.write(s);
        }
        let ok = check.map_or(true, |f| f(0, &buf[..n]));
        (n, ok)
    }

    fn rows_not_utf8(&self) -> Option<&[u64]> {
        self.not_utf8.as_deref()
    }
}
