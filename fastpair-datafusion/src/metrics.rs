//! What the scan reports in `EXPLAIN ANALYZE`, per partition: DataFusion's
//! baseline (`output_rows`, `elapsed_compute`, `output_bytes`,
//! `output_batches`) and where the scan's time and bytes go.
//!
//! | metric | what |
//! |---|---|
//! | `parts_pruned_statistics` | parts skipped by their manifest statistics (plan time, partition 0) |
//! | `pieces_opened` | pieces of parts scanned |
//! | `parts_searched` | searches of the pushed predicates run (a part cut into pieces is searched once) |
//! | `input_rows` | rows of the pieces scanned |
//! | `rows_selected` | rows of those the pushed predicates keep (all of them without predicates; before `LIMIT`) |
//! | `fpc_rows_decoded` | `.fpc` rows decoded: the input rows a dense batch spans, or each selected row of a sparse one, per column |
//! | `fpc_file_bytes` | sizes of the `.fpc` files opened (a file of a part cut into pieces counts once: its reader is shared); the reader reads the chunks it touches |
//! | `fpc_readers_kept` | `.fpc` files whose reader an earlier scan of the process had opened and kept (`readers`: their checked chunks are not read or checked again) |
//! | `parquet_bytes_read` | bytes read from the Parquet side files (footers, page indexes, column chunks) |
//! | `search_time` | in `fastpair::search` (the pushed predicates on the codes) |
//! | `search_wait_time` | waiting for another partition's search of the same part |
//! | `fpc_decode_time` | decoding `.fpc` rows (ranges or point reads; the first read of a chunk also checks it) |
//! | `fpc_arrow_time` | making Arrow arrays of them (UTF-8 check, cast to the column's type, filter by the selection) |
//! | `parquet_open_time` | opening the side file: footer, page index, row selection |
//! | `parquet_decode_time` | reading and decoding its batches |
//!
//! The timers are parts of `elapsed_compute` (the time in the scan's
//! stream), which also holds what is not named (batch assembly).

use std::io::{Read, Seek, SeekFrom};

use bytes::Bytes;
use datafusion::physical_plan::metrics::{
    BaselineMetrics, Count, ExecutionPlanMetricsSet, MetricBuilder, Time,
};
use parquet::file::reader::{ChunkReader, Length};

/// The metrics of one partition of a scan.
#[derive(Debug, Clone)]
pub(crate) struct ScanMetrics {
    pub baseline: BaselineMetrics,
    pub pieces_opened: Count,
    pub parts_searched: Count,
    pub input_rows: Count,
    pub rows_selected: Count,
    pub fpc_rows_decoded: Count,
    pub fpc_file_bytes: Count,
    pub fpc_readers_kept: Count,
    pub parquet_bytes_read: Count,
    pub search_time: Time,
    pub search_wait_time: Time,
    pub fpc_decode_time: Time,
    pub fpc_arrow_time: Time,
    pub parquet_open_time: Time,
    pub parquet_decode_time: Time,
}

impl ScanMetrics {
    /// The metrics of `partition`, registered in `set`.
    pub fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let count = |name: &'static str| MetricBuilder::new(set).counter(name, partition);
        let time = |name: &'static str| MetricBuilder::new(set).subset_time(name, partition);
        Self {
            baseline: BaselineMetrics::new(set, partition),
            pieces_opened: count("pieces_opened"),
            parts_searched: count("parts_searched"),
            input_rows: count("input_rows"),
            rows_selected: count("rows_selected"),
            fpc_rows_decoded: count("fpc_rows_decoded"),
            fpc_file_bytes: count("fpc_file_bytes"),
            fpc_readers_kept: count("fpc_readers_kept"),
            parquet_bytes_read: count("parquet_bytes_read"),
            search_time: time("search_time"),
            search_wait_time: time("search_wait_time"),
            fpc_decode_time: time("fpc_decode_time"),
            fpc_arrow_time: time("fpc_arrow_time"),
            parquet_open_time: time("parquet_open_time"),
            parquet_decode_time: time("parquet_decode_time"),
        }
    }
}

/// Records the parts the manifest statistics pruned (`kept` of `total`
/// scanned), as partition 0's pruning metric.
pub(crate) fn record_pruning(set: &ExecutionPlanMetricsSet, total: usize, kept: usize) {
    let m = MetricBuilder::new(set).pruning_metrics("parts_pruned_statistics", 0);
    m.add_pruned(total.saturating_sub(kept));
    m.add_matched(kept);
}

/// A file given to the Parquet reader that counts the bytes read from it.
pub(crate) struct CountingFile {
    file: std::fs::File,
    read: Count,
}

impl CountingFile {
    pub fn new(file: std::fs::File, read: Count) -> Self {
        Self { file, read }
    }
}

impl Length for CountingFile {
    fn len(&self) -> u64 {
        Length::len(&self.file)
    }
}

/// The file under a [`CountingFile`]'s readers, counting what the OS
/// gives.
pub(crate) struct CountingRead {
    file: std::fs::File,
    read: Count,
}

impl Read for CountingRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.add(n);
        Ok(n)
    }
}

impl ChunkReader for CountingFile {
    type T = std::io::BufReader<CountingRead>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(start))?;
        Ok(std::io::BufReader::new(CountingRead {
            file,
            read: self.read.clone(),
        }))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        let b = self.file.get_bytes(start, length)?;
        self.read.add(b.len());
        Ok(b)
    }
}
