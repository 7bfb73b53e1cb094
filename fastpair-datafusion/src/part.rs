//! One part's scan as a stream of batches of the session's batch size
//! (spec/DATASET.md: a part is row-aligned `.fpc` files plus one Parquet
//! file). The pushed predicates are searched on the codes first (whole
//! part, fastpair's parallel search); then each output batch takes the next
//! `batch_size` selected rows: the Parquet columns through one reader with
//! the row selection (its batches are exactly those rows), the `.fpc`
//! columns by decoding only the input rows the batch spans (dense
//! selections) or reading the selected rows one by one (sparse ones).
//! Nothing part-sized is built, so the batches stay in cache for the
//! operators above and memory stays bounded by a batch.

use std::fs::File;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, LargeBinaryArray, LargeStringArray, RecordBatch, RecordBatchOptions,
    StringViewArray,
};
use datafusion::arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::compute::{cast, filter};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::Result;
use fastpair::dataset::Dataset;
use fastpair::search::Selection;
use fastpair::{Column, Reader};
use parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder, RowSelection,
    RowSelector,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::PageIndexPolicy;

use crate::metrics::{CountingFile, ScanMetrics};
use crate::pushdown::Pushed;
use crate::readers::{Open, ReaderCache};
use crate::table::df_err;

/// Above this fraction of selected rows a `.fpc` column's batch is decoded
/// over the input rows it spans and filtered; below it the selected rows
/// are read one by one (a point read costs about as much as decoding a few
/// dozen rows in bulk).
const DENSE_SELECTION: f64 = 0.05;

/// What the pieces of one part cut into several share (every partition of
/// one scan): the search result, computed once by the first piece opened,
/// and the open `.fpc` readers, so that a file's chunks are read and
/// validated once (by the search or the first piece to decode them), not
/// once per piece; let go when the part's last piece is done.
#[derive(Debug)]
pub(crate) struct SplitPart {
    search: OnceLock<std::result::Result<Option<Selection>, String>>,
    readers: Mutex<Vec<Option<Open>>>,
    /// Pieces not yet done.
    left: AtomicUsize,
}

impl SplitPart {
    /// A part cut into `pieces` pieces, with `files` `.fpc` files.
    pub fn new(pieces: usize, files: usize) -> Self {
        Self {
            search: OnceLock::new(),
            readers: Mutex::new(vec![None; files]),
            left: AtomicUsize::new(pieces),
        }
    }

    /// One of the part's pieces is done: the last one lets the readers go
    /// (a later execution of the plan opens them again).
    fn piece_done(&self) {
        let prev = self
            .left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0);
        if prev <= 1 {
            if let Ok(mut r) = self.readers.lock() {
                r.iter_mut().for_each(|x| *x = None);
            }
        }
    }
}

/// Per part, its [`SplitPart`] when the scan cut it into several pieces.
pub(crate) type SharedParts = Arc<Vec<Option<SplitPart>>>;

/// What every part of a scan shares.
pub(crate) struct PartJob {
    pub ds: Arc<Dataset>,
    pub table_schema: SchemaRef,
    pub fpc: Vec<bool>,
    pub slot: Vec<usize>,
    pub projection: Vec<usize>,
    pub out_schema: SchemaRef,
    pub pushed: Vec<Pushed>,
    pub batch_size: usize,
    /// Per part cut into several pieces, what they share (None for whole
    /// parts: searched and read by their one scan).
    pub shared: SharedParts,
}

/// A slice of a part's rows scanned as one unit: a whole part, or a piece
/// of one cut so that a table of fewer parts than cores still spreads over
/// the cores (rows `start..end`; cuts at multiples of 64 rows, so a piece's
/// selection bits are whole words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub part: usize,
    pub start: u64,
    pub end: u64,
}

impl PartJob {
    /// The reader of `.fpc` file `k` of part `p`: from `readers`, else the
    /// part's shared ones (split parts), else opened (and kept in both).
    fn reader(
        &self,
        p: usize,
        k: usize,
        readers: &mut [Option<Open>],
        m: &ScanMetrics,
    ) -> Result<Open> {
        if let Some(r) = &readers[k] {
            return Ok(r.clone());
        }
        // Through the process's kept readers (`readers.rs`); a kept one is
        // checked against the manifest as `open_fpc` checks a new one.
        let open = || -> Result<Open> {
            let path = self.ds.file(&self.ds.manifest().parts[p].fpc[k].path);
            let (r, kept) = ReaderCache::global()
                .get_or_open(&path, || self.ds.open_fpc(p, k))
                .map_err(df_err)?;
            if kept {
                let rows = self.ds.manifest().parts[p].rows;
                if r.reader().rows() != rows {
                    return Err(df_err(format!(
                        "{}: holds {} rows, part {p} has {rows}",
                        path.display(),
                        r.reader().rows()
                    )));
                }
                m.fpc_readers_kept.add(1);
            } else {
                m.fpc_file_bytes.add(r.reader().file_bytes() as usize);
            }
            Ok(r)
        };
        let r = match self.shared.get(p).and_then(|s| s.as_ref()) {
            Some(split) => {
                let mut shared = split
                    .readers
                    .lock()
                    .map_err(|_| df_err(format!("part {p}: a scan of another piece failed")))?;
                match &shared[k] {
                    Some(r) => r.clone(),
                    None => {
                        let r = open()?;
                        shared[k] = Some(r.clone());
                        r
                    }
                }
            }
            None => open()?,
        };
        readers[k] = Some(r.clone());
        Ok(r)
    }

    /// The rows of part `p` the pushed predicates select (None: no
    /// predicate), searching the codes of each predicate's column; the
    /// readers opened are kept in `readers`.
    fn search(
        &self,
        p: usize,
        readers: &mut [Option<Open>],
        m: &ScanMetrics,
    ) -> Result<Option<Selection>> {
        let rows = self.ds.manifest().parts[p].rows;
        let mut sel: Option<Selection> = None;
        for pushed in &self.pushed {
            let k = self.slot[pushed.column];
            let s = self
                .reader(p, k, readers, m)?
                .search(&pushed.predicate)
                .map_err(df_err)?;
            sel = Some(match sel {
                None => s,
                Some(prev) => {
                    let words: Vec<u64> = prev
                        .words()
                        .iter()
                        .zip(s.words())
                        .map(|(a, b)| a & b)
                        .collect();
                    Selection::from_bits(rows, words)
                }
            });
            if sel.as_ref().is_some_and(|s| s.is_empty()) {
                break;
            }
        }
        Ok(sel)
    }
}

/// The scan of one piece of a part, batch by batch (an iterator; the
/// caller drives it from its stream).
pub(crate) struct PartScan {
    job: Arc<PartJob>,
    /// The part.
    p: usize,
    /// Open `.fpc` readers by slot (opened when first needed, or the
    /// part's shared ones).
    readers: Vec<Option<Open>>,
    /// The selection over the part's rows, rows outside the piece cleared
    /// (None: the rows `next_row..next_row + n_out`).
    sel: Option<Selection>,
    /// The selection as an Arrow bitmap (for filtering dense batches).
    mask: Option<BooleanBuffer>,
    dense: bool,
    /// The Parquet reader of the projected Parquet columns, and where each
    /// of them sits in its batches.
    pq: Option<(ParquetRecordBatchReader, Vec<usize>)>,
    n_out: usize,
    done_out: usize,
    /// The next input row to look at.
    next_row: u64,
    /// Scratch for point reads.
    row_buf: Vec<u8>,
    /// The partition's metrics.
    m: ScanMetrics,
}

impl PartScan {
    /// Opens `piece`: runs the pushed searches (or takes the part's shared
    /// result), keeps the piece's rows of the selection, cuts it at `limit`
    /// rows, opens the Parquet reader.
    pub fn open(
        job: Arc<PartJob>,
        piece: &Piece,
        limit: Option<usize>,
        m: ScanMetrics,
    ) -> Result<Self> {
        let p = piece.part;
        let part = &job.ds.manifest().parts[p];
        let rows = part.rows;
        let (start, mut end) = (piece.start, piece.end.min(rows));
        m.pieces_opened.add(1);
        m.input_rows.add((end - start) as usize);
        let mut readers: Vec<Option<Open>> = vec![None; part.fpc.len()];
        let searched = !job.pushed.is_empty();
        let t0 = Instant::now();
        let mut ran: Option<Duration> = None;
        let mut sel = match job.shared.get(p).and_then(|s| s.as_ref()) {
            Some(split) => split
                .search
                .get_or_init(|| {
                    let t = Instant::now();
                    let mut rs: Vec<Option<Open>> = vec![None; part.fpc.len()];
                    let r = job.search(p, &mut rs, &m).map_err(|e| e.to_string());
                    ran = Some(t.elapsed());
                    r
                })
                .clone()
                .map_err(df_err)?,
            None => {
                let r = job.search(p, &mut readers, &m)?;
                ran = Some(t0.elapsed());
                r
            }
        };
        if searched {
            let all = t0.elapsed();
            if let Some(d) = ran {
                m.parts_searched.add(1);
                m.search_time.add_duration(d);
            }
            m.search_wait_time
                .add_duration(all.saturating_sub(ran.unwrap_or_default()));
        }
        if let Some(s) = &mut sel {
            if start > 0 || end < rows {
                let mut words = s.words().to_vec();
                for (w, word) in words.iter_mut().enumerate() {
                    let lo = w as u64 * 64;
                    if lo + 64 <= start || lo >= end {
                        *word = 0;
                    } else {
                        if lo < start {
                            *word &= !0u64 << (start - lo);
                        }
                        if end < lo + 64 {
                            *word &= (1u64 << (end - lo)) - 1;
                        }
                    }
                }
                *s = Selection::from_bits(rows, words);
            }
        }
        m.rows_selected.add(match &sel {
            Some(s) => s.count() as usize,
            None => (end - start) as usize,
        });
        if let Some(l) = limit {
            match &mut sel {
                None => end = end.min(start + l as u64),
                Some(s) if s.count() > l as u64 => *s = first_selected(s, l as u64),
                Some(_) => {}
            }
        }
        let n_out = match &sel {
            Some(s) => s.count(),
            None => end - start,
        } as usize;
        let mask = sel
            .as_ref()
            .map(|s| BooleanBuffer::new(Buffer::from_vec(s.words().to_vec()), 0, rows as usize));
        let dense = sel
            .as_ref()
            .is_some_and(|s| s.count() as f64 > DENSE_SELECTION * (end - start) as f64);
        let mut scan = Self {
            job: job.clone(),
            p,
            readers,
            sel,
            mask,
            dense,
            pq: None,
            n_out,
            done_out: 0,
            next_row: start,
            row_buf: Vec::new(),
            m,
        };
        if n_out > 0 {
            let t = Instant::now();
            scan.pq = scan.open_parquet(p, start..end)?;
            scan.m.parquet_open_time.add_elapsed(t);
        }
        Ok(scan)
    }

    /// The Parquet reader of the projected Parquet columns, `batch_size`
    /// rows a batch, with the selection (or the rows `range`); the page
    /// index lets a sparse selection or a piece skip whole pages.
    fn open_parquet(
        &self,
        p: usize,
        range: std::ops::Range<u64>,
    ) -> Result<Option<(ParquetRecordBatchReader, Vec<usize>)>> {
        let job = &self.job;
        let part = &job.ds.manifest().parts[p];
        let rows = part.rows;
        let mut leaves: Vec<usize> = job
            .projection
            .iter()
            .filter(|&&c| !job.fpc[c])
            .map(|&c| job.slot[c])
            .collect();
        if leaves.is_empty() {
            return Ok(None);
        }
        leaves.sort_unstable();
        leaves.dedup();
        let f = part
            .parquet
            .as_ref()
            .expect("validated: Parquet columns have a file");
        let path = job.ds.file(&f.path);
        let file = File::open(&path).map_err(|e| df_err(format!("{}: {e}", path.display())))?;
        let policy = if (self.sel.is_some() && !self.dense) || range.start > 0 {
            PageIndexPolicy::Optional
        } else {
            PageIndexPolicy::Skip
        };
        let opts = ArrowReaderOptions::new().with_page_index_policy(policy);
        let file = CountingFile::new(file, self.m.parquet_bytes_read.clone());
        let b = ParquetRecordBatchReaderBuilder::try_new_with_options(file, opts)
            .map_err(|e| df_err(format!("{}: {e}", f.path)))?;
        let file_rows = b.metadata().file_metadata().num_rows();
        if file_rows as u64 != rows {
            return Err(df_err(format!(
                "{}: {file_rows} rows, part {p} has {rows}",
                f.path
            )));
        }
        let mask_p = ProjectionMask::roots(b.parquet_schema(), leaves.iter().copied());
        let mut b = b.with_projection(mask_p).with_batch_size(job.batch_size);
        match &self.mask {
            Some(m) => {
                let m = BooleanArray::new(m.clone(), None);
                b = b.with_row_selection(RowSelection::from_filters(&[m]));
            }
            None if range.start == 0 => b = b.with_limit(range.end as usize),
            None => {
                let sel = RowSelection::from(vec![
                    RowSelector::skip(range.start as usize),
                    RowSelector::select((range.end - range.start) as usize),
                    RowSelector::skip((rows - range.end) as usize),
                ]);
                b = b.with_row_selection(sel);
            }
        }
        let reader = b.build().map_err(|e| df_err(format!("{}: {e}", f.path)))?;
        // The projected Parquet columns in the order the reader gives them
        // (file order): the position of each table column's leaf.
        let at: Vec<usize> = job
            .projection
            .iter()
            .filter(|&&c| !job.fpc[c])
            .map(|&c| {
                leaves
                    .iter()
                    .position(|&l| l == job.slot[c])
                    .expect("every projected leaf is read")
            })
            .collect();
        Ok(Some((reader, at)))
    }

    /// The input rows `next_row..end` holding the next `len` output rows.
    fn span(&self, len: usize) -> u64 {
        let Some(s) = &self.sel else {
            return self.next_row + len as u64;
        };
        let words = s.words();
        let mut need = len as u64;
        let mut w = (self.next_row / 64) as usize;
        // Bits before `next_row` in its word were consumed.
        let mut word = words[w] & (!0u64 << (self.next_row % 64));
        loop {
            let c = word.count_ones() as u64;
            if c >= need {
                for _ in 1..need {
                    word &= word - 1;
                }
                return w as u64 * 64 + word.trailing_zeros() as u64 + 1;
            }
            need -= c;
            w += 1;
            word = words[w];
        }
    }

    fn reader(&mut self, k: usize) -> Result<Open> {
        self.job.reader(self.p, k, &mut self.readers, &self.m)
    }

    /// The next batch (None after the last).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.done_out >= self.n_out {
            return Ok(None);
        }
        let p = self.p;
        let left = self.n_out - self.done_out;
        // The Parquet reader decides the batch's rows (its batches need not
        // be full under a row selection); the `.fpc` columns follow it.
        let pq_batch = match &mut self.pq {
            Some((r, _)) => {
                let t = Instant::now();
                let batch = r.next();
                self.m.parquet_decode_time.add_elapsed(t);
                let batch = batch
                    .ok_or_else(|| df_err(format!("part {p}: Parquet file ended early")))?
                    .map_err(|e| df_err(format!("part {p}: {e}")))?;
                if batch.num_rows() == 0 || batch.num_rows() > left {
                    return Err(df_err(format!(
                        "part {p}: Parquet batch of {} rows, {left} expected at most",
                        batch.num_rows()
                    )));
                }
                Some(batch)
            }
            None => None,
        };
        let len = pq_batch
            .as_ref()
            .map_or(self.job.batch_size.min(left), |b| b.num_rows());
        let (a, b) = (self.next_row, self.span(len));
        let job = self.job.clone();
        let mut out: Vec<ArrayRef> = Vec::with_capacity(job.projection.len());
        let mut pq_i = 0;
        for &c in &job.projection {
            if !job.fpc[c] {
                let (_, at) = self.pq.as_ref().expect("opened: Parquet columns");
                out.push(
                    pq_batch
                        .as_ref()
                        .expect("read above")
                        .column(at[pq_i])
                        .clone(),
                );
                pq_i += 1;
                continue;
            }
            let k = job.slot[c];
            let t = job.table_schema.field(c).data_type();
            let (mask, dense) = (self.mask.clone(), self.dense);
            let open = self.reader(k)?;
            let r = open.reader();
            let t_dec = Instant::now();
            let col = if mask.is_none() || dense {
                self.m.fpc_rows_decoded.add((b - a) as usize);
                r.read_range(a..b).map_err(df_err)?
            } else {
                self.m.fpc_rows_decoded.add(len);
                self.take(r, a, b, len)?
            };
            let t_arrow = Instant::now();
            self.m.fpc_decode_time.add_duration(t_arrow - t_dec);
            // A view column of rows the chunks' validation proved UTF-8 is
            // not checked again (only `Utf8View` uses the proof).
            let proven = *t == DataType::Utf8View && r.rows_proven_utf8(a..b).map_err(df_err)?;
            let arr = match mask {
                Some(m) if dense => {
                    let keep = BooleanArray::new(m.slice(a as usize, (b - a) as usize), None);
                    filter(column_array(col, t, proven)?.as_ref(), &keep)?
                }
                _ => column_array(col, t, proven)?,
            };
            self.m.fpc_arrow_time.add_elapsed(t_arrow);
            out.push(arr);
        }
        self.next_row = b;
        self.done_out += len;
        Ok(Some(RecordBatch::try_new_with_options(
            job.out_schema.clone(),
            out,
            &RecordBatchOptions::new().with_row_count(Some(len)),
        )?))
    }

    /// The selected rows of `a..b` (`len` of them) of `r`, read one by
    /// one, nulls kept.
    fn take(&mut self, r: &Reader, a: u64, b: u64, len: usize) -> Result<Column> {
        let s = self.sel.as_ref().expect("a selection");
        let mut values = Vec::new();
        let mut offsets = Vec::with_capacity(len + 1);
        offsets.push(0i64);
        let mut validity = vec![0u8; len.div_ceil(8)];
        let mut any_null = false;
        let words = s.words();
        let mut i = 0usize;
        let (first, end) = ((a / 64) as usize, b.div_ceil(64) as usize);
        for (w, &bits) in words.iter().enumerate().take(end).skip(first) {
            let mut word = bits;
            while word != 0 {
                let row = w as u64 * 64 + word.trailing_zeros() as u64;
                word &= word - 1;
                if row < a || row >= b {
                    continue;
                }
                if r.get_into(row, &mut self.row_buf).map_err(df_err)? {
                    validity[i / 8] |= 1 << (i % 8);
                } else {
                    any_null = true;
                }
                values.extend_from_slice(&self.row_buf);
                offsets.push(values.len() as i64);
                i += 1;
            }
        }
        Ok(Column {
            values,
            offsets,
            validity: any_null.then_some(validity),
        })
    }
}

impl Drop for PartScan {
    fn drop(&mut self) {
        if let Some(split) = self.job.shared.get(self.p).and_then(|s| s.as_ref()) {
            split.piece_done();
        }
    }
}

/// The first `l` selected rows of `s`.
fn first_selected(s: &Selection, l: u64) -> Selection {
    let mut words = s.words().to_vec();
    let mut kept = 0u64;
    for w in words.iter_mut() {
        let c = w.count_ones() as u64;
        if kept + c <= l {
            kept += c;
        } else {
            let mut m = 0u64;
            let mut x = *w;
            while kept < l {
                let low = x & x.wrapping_neg();
                m |= low;
                x &= x - 1;
                kept += 1;
            }
            *w = m;
        }
    }
    Selection::from_bits(s.rows(), words)
}

/// Whether a column of type `t` holds text.
fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// A decoded column as an array of type `t`: a `Utf8View` whose rows the
/// reader proved UTF-8 (`proven`, [`fastpair::Reader::rows_proven_utf8`])
/// as views over the column's values, neither checked nor copied again
/// ([`proven_views`]); else values and offsets moved, not copied, into a
/// large array (text checked to be UTF-8), other types cast from it.
pub(crate) fn column_array(col: Column, t: &DataType, proven: bool) -> Result<ArrayRef> {
    if proven && *t == DataType::Utf8View && col.values.len() <= i32::MAX as usize {
        return Ok(Arc::new(proven_views(col)));
    }
    let n = col.len();
    let offsets = if col.offsets.is_empty() {
        OffsetBuffer::new_empty()
    } else {
        OffsetBuffer::new(ScalarBuffer::from(col.offsets))
    };
    let nulls = col
        .validity
        .map(|bits| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(bits), 0, n)));
    let values = Buffer::from_vec(col.values);
    let text = is_text(t);
    let large: ArrayRef = if text {
        Arc::new(LargeStringArray::try_new(offsets, values, nulls).map_err(df_err)?)
    } else {
        Arc::new(LargeBinaryArray::try_new(offsets, values, nulls).map_err(df_err)?)
    };
    if matches!(t, DataType::LargeUtf8 | DataType::LargeBinary) {
        Ok(large)
    } else {
        Ok(cast(large.as_ref(), t)?)
    }
}

/// `col` as a `Utf8View` array: one view per row over the column's value
/// buffer (moved, not copied), rows of at most 12 bytes inline. The caller
/// knows every row to be UTF-8 (the reader proved it while validating the
/// chunks) and the values to fit 32-bit view offsets.
fn proven_views(col: Column) -> StringViewArray {
    let n = col.len();
    let nulls = col
        .validity
        .map(|bits| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(bits), 0, n)));
    let values = &col.values;
    let mut views: Vec<u128> = Vec::with_capacity(n);
    let mut long = false;
    for w in col.offsets.windows(2) {
        // Indexing checks what the views claim: each row lies in the values.
        let row = &values[w[0] as usize..w[1] as usize];
        let mut raw = [0u8; 16];
        raw[..4].copy_from_slice(&(row.len() as u32).to_le_bytes());
        if row.len() <= 12 {
            raw[4..4 + row.len()].copy_from_slice(row);
        } else {
            long = true;
            raw[4..8].copy_from_slice(&row[..4]);
            // Buffer 0, at the row's offset (below 2^31: checked by the caller).
            raw[12..].copy_from_slice(&(w[0] as u32).to_le_bytes());
        }
        views.push(u128::from_le_bytes(raw));
    }
    let buffers = if long {
        vec![Buffer::from_vec(col.values)]
    } else {
        Vec::new()
    };
    // SAFETY: `StringViewArray::new_unchecked`'s conditions hold. Each view
    // was built from a row slice that indexing proved inside the values
    // (offsets from the reader: non-negative, non-decreasing, within the
    // values): a row of at most 12 bytes is inline, zero-padded, with its
    // length; a longer row names buffer 0 (present whenever such a row
    // is), its offset (below 2^31, so it fits the view) and its first four
    // bytes, and `offset + length` lies within that buffer. The null buffer
    // has one bit per row. Every row is UTF-8: the caller passes only
    // columns whose rows `Reader::rows_proven_utf8` proved (tokens UTF-8 on
    // their own, or rows checked by chunk validation).
    unsafe { StringViewArray::new_unchecked(ScalarBuffer::from(views), buffers, nulls) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Array;

    /// Views built over proven text are the array arrow-rs's checked
    /// constructor builds from the same rows: rows around the 12-byte
    /// inline limit, empty and null rows, multi-byte characters.
    #[test]
    fn proven_views_are_the_checked_array() {
        let rows: Vec<Option<String>> = (0..600u32)
            .map(|i| match i % 9 {
                0 => None,
                1 => Some(String::new()),
                2 => Some("x".repeat((i % 15) as usize)),
                3 => Some("ü".repeat((i % 8) as usize)),
                4 => Some(format!("row {i} of the column, longer than twelve")),
                _ => Some("é".repeat(6) + &"a".repeat((i % 3) as usize)),
            })
            .collect();
        let mut col = Column::default();
        col.offsets.push(0);
        let mut bits = vec![0u8; rows.len().div_ceil(8)];
        for (i, r) in rows.iter().enumerate() {
            if let Some(s) = r {
                col.values.extend_from_slice(s.as_bytes());
                bits[i / 8] |= 1 << (i % 8);
            }
            col.offsets.push(col.values.len() as i64);
        }
        col.validity = Some(bits);
        let got = column_array(col, &DataType::Utf8View, true).unwrap();
        let got = got.as_any().downcast_ref::<StringViewArray>().unwrap();
        got.to_data().validate_full().unwrap();
        let want: StringViewArray = rows.iter().map(|r| r.as_deref()).collect();
        assert_eq!(got, &want);
    }
}
