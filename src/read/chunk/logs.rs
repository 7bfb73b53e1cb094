//! Log-template chunks (spec/FORMAT.md §5.8): the payload opened and checked
//! once (`logs::LogColumn`), every row walked once at validation — its
//! length counted as its render would write it, without the bytes
//! (`RowRanges::visit_lens`) — to check the chunk-level invariants (row
//! count, null rows empty, the bytes the footer counts, each row's length)
//! and to keep the rows' byte offsets and which rows are not UTF-8; then
//! gets read one row in O(1) and bulk reads render the rows straight into
//! the output.

use std::mem::MaybeUninit;
use std::ops::Range;

use bytes::Bytes;

use super::{ChunkView, KindRows, SubCheck, ValidChunk};
use crate::error::{ChunkPart, Error, Invariant, Result, Section};
use crate::format::layout::ChunkEntry;
use crate::format::limits;
use crate::logs::{LogColumn, LogForm, RowRanges};
use rayon::prelude::*;

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

/// Bytes of rows rendered at a time (`RowRanges::visit`): small enough to
/// stay in the core's cache while each batch is checked or copied out.
const VALIDATE_BATCH: usize = 64 << 10;

/// Rows a batch of [`check_rows`]' length walk holds.
const LENS_BATCH: usize = 4096;

/// The rows rendered to `found` bytes where the footer counts `expected`.
fn rows_bytes(section: Section, at: u64, expected: u64, found: u64) -> Error {
    Error::corrupt(
        section,
        at,
        Invariant::SizeMismatch {
            what: "log rows bytes",
            expected,
            found,
        },
    )
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

/// Rows of a log chunk rendered by one task (validation, bulk reads): the
/// ranges depend on the row count only, never on the thread count, so the
/// error a damaged chunk gets is the same on any machine.
const ROWS_PER_TASK: usize = 8 << 10;

/// The cuts of `rows` into tasks of about [`ROWS_PER_TASK`] rows.
fn task_cuts(rows: Range<usize>) -> Vec<usize> {
    let n = rows.len();
    let tasks = (n / ROWS_PER_TASK).max(1);
    (0..=tasks).map(|k| rows.start + k * n / tasks).collect()
}

/// One range's findings: each row's end from the range's first byte, the
/// rows that are not UTF-8, the range's bytes.
struct RangeCheck {
    ends: Vec<u64>,
    not_utf8: Vec<usize>,
    bytes: u64,
}

/// Walks every row of `col` once, in ranges on the pool's threads, checking
/// each row's length (the length its render writes, counted without
/// rendering it: `RowRanges::visit_lens`) and null and whether it is UTF-8
/// (a row made of strings each valid UTF-8 is; any other is rendered and
/// checked); returns every row's start and
/// the end (`rows + 1` offsets) and, when some row is not UTF-8, which
/// (bit `r % 64` of word `r / 64`). The first failing row (in row order)
/// names the error; a range stops once its bytes pass the footer's count.
fn check_rows(
    col: &LogColumn,
    id: u32,
    expected: u64,
    at: u64,
    validity: Option<&[u8]>,
) -> Result<(Vec<u64>, Option<Vec<u64>>)> {
    let section = Section::Chunk(id, ChunkPart::LogPayload);
    let rows = col.rows();
    let walk = RowRanges::new(col);
    let utf8 = walk.piece_utf8();
    let cuts = task_cuts(0..rows);
    let starts = walk.starts(&cuts[..cuts.len() - 1]);
    let checked: Vec<Result<RangeCheck>> = cuts
        .windows(2)
        .zip(starts)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(w, start)| {
            let mut out = RangeCheck {
                ends: Vec::with_capacity(w[1] - w[0]),
                not_utf8: Vec::new(),
                bytes: 0,
            };
            let mut row = Vec::new();
            // Each row's length without rendering it (`visit_lens`: the
            // lengths a render writes); a row with a string that is not
            // valid UTF-8 on its own is rendered and checked whole.
            walk.visit_lens(w[0]..w[1], start, &utf8, LENS_BATCH, |first, lens| {
                for (j, &(len, pieces_utf8)) in lens.iter().enumerate() {
                    let r = first + j;
                    if len as u64 > limits::MAX_VALUE_LEN {
                        return Err(Error::corrupt(
                            section,
                            at,
                            Invariant::LimitExceeded {
                                what: "value length",
                                value: len as u64,
                                limit: limits::MAX_VALUE_LEN,
                            },
                        ));
                    }
                    let valid = validity.map_or(true, |v| v[r / 8] >> (r % 8) & 1 == 1);
                    if !valid && len > 0 {
                        return Err(Error::corrupt(
                            Section::Chunk(id, ChunkPart::Validity),
                            at,
                            Invariant::NullWithValue { row: r as u64 },
                        ));
                    }
                    if !pieces_utf8 {
                        row.clear();
                        // In range: `r < rows`.
                        let _ = col.get_into(r, &mut row);
                        if std::str::from_utf8(&row).is_err() {
                            out.not_utf8.push(r);
                        }
                    }
                    out.bytes += len as u64;
                    out.ends.push(out.bytes);
                    if out.bytes > expected {
                        return Err(rows_bytes(section, at, expected, out.bytes));
                    }
                }
                Ok(())
            })?;
            Ok(out)
        })
        .collect();
    let mut ends: Vec<u64> = Vec::with_capacity(rows + 1);
    ends.push(0);
    let mut not_utf8: Option<Vec<u64>> = None;
    let mut total = 0u64;
    for c in checked {
        let c = c?;
        ends.extend(c.ends.iter().map(|&e| total + e));
        for r in c.not_utf8 {
            not_utf8.get_or_insert_with(|| vec![0u64; rows.div_ceil(64)])[r / 64] |= 1 << (r % 64);
        }
        total += c.bytes;
    }
    if total != expected || ends.len() != rows + 1 {
        return Err(rows_bytes(section, at, expected, total));
    }
    Ok((ends, not_utf8))
}

impl LogChunk {
    /// The opened payload (template search, `search::eval`).
    pub(in crate::read) fn column(&self) -> &LogColumn {
        &self.col
    }

    /// §9 step 13c: opens the payload (every check of §5.8.1–§5.8.4; its
    /// magic the one of the file's `version`: "FPL7"/"FPS7" in version 11,
    /// "FPL6"/"FPS6" in version 10,
    /// "FPL5"/"FPS5" in version 9,
    /// "FPL4"/"FPS4" in version 8,
    /// "FPL3"/"FPS3" in version 7,
    /// "FPL2"/"FPS2" in version 6,
    /// "FPL1"/"FPS1" in versions 4–5), then walks every row: `rows` rows,
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
                    what: "log payload magic (FPL7/FPS7 in format version 11, FPL6/FPS6 in 10, FPL5/FPS5 in 9, FPL4/FPS4 in 8, FPL3/FPS3 in 7, FPL2/FPS2 in 6, FPL1/FPS1 in 4-5)",
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
        let (ends, not_utf8) = check_rows(&col, id, entry.bytes, at, validity)?;
        let all_utf8 = not_utf8.is_none();
        let chunk = LogChunk {
            col,
            ends,
            not_utf8,
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
    /// [`KindRows::decode`] of many rows: cut into ranges rendered on the
    /// pool's threads, each straight into its part of `out` (which the
    /// validated row offsets place), a batch at a time; `check` runs on each
    /// batch as it is written.
    fn decode_ranges(
        &self,
        rows: Range<usize>,
        out: &mut [MaybeUninit<u8>],
        check: Option<SubCheck<'_>>,
    ) -> (usize, bool) {
        let walk = RowRanges::new(&self.col);
        let cuts = task_cuts(rows.clone());
        let starts = walk.starts(&cuts[..cuts.len() - 1]);
        let base = self.ends[rows.start] as usize;
        let mut parts = Vec::with_capacity(cuts.len() - 1);
        let mut rest = out;
        for w in cuts.windows(2) {
            let len = (self.ends[w[1]] - self.ends[w[0]]) as usize;
            let (part, tail) = rest.split_at_mut(len.min(rest.len()));
            parts.push((w[0]..w[1], part));
            rest = tail;
        }
        parts
            .into_par_iter()
            .zip(starts)
            .map(|((range, part), start)| {
                let at = self.ends[range.start] as usize - base;
                let (mut written, mut ok) = (0usize, true);
                let _ = walk.visit(range, start, VALIDATE_BATCH, |_, bytes, _| {
                    let room = part.len() - written;
                    let n = bytes.len().min(room);
                    for (d, &s) in part[written..written + n].iter_mut().zip(bytes) {
                        d.write(s);
                    }
                    if let Some(f) = check {
                        ok &= f(at + written, &bytes[..n]);
                    }
                    written += n;
                    // More bytes than the offsets hold (validation said
                    // otherwise): the caller sees the short count.
                    if n < bytes.len() {
                        return Err(());
                    }
                    Ok(())
                });
                (written, ok)
            })
            .reduce(|| (0, true), |a, b| (a.0 + b.0, a.1 && b.1))
    }

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
        if rows.len() >= ROWS_PER_TASK {
            return self.decode_ranges(rows, out, check);
        }
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
