//! The scan: one partition per group of parts; per part, the pushed
//! predicates are searched on the codes, and only the selected rows of the
//! projected columns are decoded (`.fpc`) or read (Parquet, with a row
//! selection).

use std::fmt;
use std::fs::File;
use std::sync::Arc;

use datafusion::arrow::array::{
    ArrayRef, BooleanArray, LargeBinaryArray, LargeStringArray, RecordBatch, RecordBatchOptions,
};
use datafusion::arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use datafusion::arrow::compute::{cast, concat_batches, filter};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream, StatisticsArgs,
};
use fastpair::dataset::Dataset;
use fastpair::search::{search, Selection};
use fastpair::{Column, Reader};
use futures::StreamExt;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection};
use parquet::arrow::ProjectionMask;

use crate::pushdown::Pushed;
use crate::table::df_err;

/// Above this fraction of selected rows a `.fpc` column is decoded whole and
/// filtered; below it the selected rows are read one by one.
const DENSE_SELECTION: f64 = 0.05;

/// The physical scan of a [`crate::FastpairTable`].
#[derive(Debug)]
pub struct ScanExec {
    ds: Arc<Dataset>,
    table_schema: SchemaRef,
    fpc: Vec<bool>,
    slot: Vec<usize>,
    projection: Vec<usize>,
    out_schema: SchemaRef,
    pushed: Vec<Pushed>,
    limit: Option<usize>,
    /// Parts of each partition.
    groups: Vec<Vec<usize>>,
    batch_size: usize,
    stats: Statistics,
    props: Arc<PlanProperties>,
}

impl ScanExec {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ds: Arc<Dataset>,
        table_schema: SchemaRef,
        fpc: Vec<bool>,
        slot: Vec<usize>,
        projection: Vec<usize>,
        pushed: Vec<Pushed>,
        limit: Option<usize>,
        target_partitions: usize,
        batch_size: usize,
        stats: Statistics,
    ) -> Result<Self> {
        let out_schema = Arc::new(table_schema.project(&projection)?);
        let parts = ds.manifest().parts.len();
        // Consecutive parts per partition, as even in rows as whole parts allow.
        let n = target_partitions.min(parts).max(1);
        let mut groups = vec![Vec::new(); n];
        for p in 0..parts {
            groups[p * n / parts].push(p);
        }
        let props = PlanProperties::new(
            EquivalenceProperties::new(out_schema.clone()),
            Partitioning::UnknownPartitioning(n),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Self {
            ds,
            table_schema,
            fpc,
            slot,
            projection,
            out_schema,
            pushed,
            limit,
            groups,
            batch_size,
            stats,
            props: Arc::new(props),
        })
    }
}

impl DisplayAs for ScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let cols: Vec<&str> = self
            .projection
            .iter()
            .map(|&c| self.table_schema.field(c).name().as_str())
            .collect();
        write!(
            f,
            "FastpairScanExec: dataset={}, partitions={}, projection=[{}]",
            self.ds.dir().display(),
            self.groups.len(),
            cols.join(", ")
        )?;
        if !self.pushed.is_empty() {
            let preds: Vec<String> = self
                .pushed
                .iter()
                .map(|p| {
                    format!(
                        "{} {:?}{}",
                        self.table_schema.field(p.column).name(),
                        p.predicate,
                        if p.exact { "" } else { " (inexact)" }
                    )
                })
                .collect();
            write!(f, ", search=[{}]", preds.join("; "))?;
        }
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ScanExec {
    fn name(&self) -> &'static str {
        "FastpairScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _: Vec<Arc<dyn ExecutionPlan>>,
        _: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        match args.partition() {
            None => Ok(Arc::new(self.stats.clone())),
            Some(_) => Ok(Arc::new(self.stats.clone().to_inexact())),
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let parts = self
            .groups
            .get(partition)
            .cloned()
            .ok_or_else(|| df_err(format!("FastpairScanExec has no partition {partition}")))?;
        let job = Arc::new(PartJob {
            ds: self.ds.clone(),
            table_schema: self.table_schema.clone(),
            fpc: self.fpc.clone(),
            slot: self.slot.clone(),
            projection: self.projection.clone(),
            out_schema: self.out_schema.clone(),
            pushed: self.pushed.clone(),
            batch_size: self.batch_size,
        });
        let limit = self.limit;
        // Parts one after the other (each on a blocking thread; the decoder
        // and the search use all cores inside a part), stopping once the
        // limit is reached.
        let stream = futures::stream::unfold(
            (parts.into_iter(), 0usize, job),
            move |(mut it, done, job)| async move {
                if limit.is_some_and(|l| done >= l) {
                    return None;
                }
                let p = it.next()?;
                let left = limit.map(|l| l - done);
                let j = job.clone();
                let r = tokio::task::spawn_blocking(move || j.read_part(p, left))
                    .await
                    .map_err(df_err)
                    .and_then(|r| r);
                let n = r
                    .as_ref()
                    .map_or(0, |b| b.iter().map(|b| b.num_rows()).sum());
                Some((r, (it, done + n, job)))
            },
        )
        .flat_map(|r| {
            futures::stream::iter(match r {
                Ok(batches) => batches.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            })
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.out_schema.clone(),
            stream,
        )))
    }
}

/// What one partition needs to read a part.
struct PartJob {
    ds: Arc<Dataset>,
    table_schema: SchemaRef,
    fpc: Vec<bool>,
    slot: Vec<usize>,
    projection: Vec<usize>,
    out_schema: SchemaRef,
    pushed: Vec<Pushed>,
    batch_size: usize,
}

impl PartJob {
    /// The part's selected rows (at most `limit`) of the projected columns.
    fn read_part(&self, p: usize, limit: Option<usize>) -> Result<Vec<RecordBatch>> {
        let part = &self.ds.manifest().parts[p];
        let rows = part.rows;
        let mut readers: Vec<Option<Reader>> = (0..part.fpc.len()).map(|_| None).collect();
        let ds = &self.ds;
        let reader = |readers: &mut Vec<Option<Reader>>, k: usize| -> Result<Reader> {
            match readers[k].take() {
                Some(r) => Ok(r),
                None => ds.open_fpc(p, k).map_err(df_err),
            }
        };
        // The selection: the pushed predicates, AND-ed.
        let mut sel: Option<Selection> = None;
        for pushed in &self.pushed {
            let k = self.slot[pushed.column];
            let r = reader(&mut readers, k)?;
            let s = search(&r, &pushed.predicate).map_err(df_err)?;
            readers[k] = Some(r);
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
        }
        // Rows to read: a prefix (no selection) or the selected rows, either
        // cut at the limit.
        let mut prefix = rows;
        if let Some(l) = limit {
            match &mut sel {
                None => prefix = prefix.min(l as u64),
                Some(s) if s.count() > l as u64 => {
                    let mut words = s.words().to_vec();
                    let mut kept = 0u64;
                    for w in words.iter_mut() {
                        let c = w.count_ones() as u64;
                        if kept + c <= l as u64 {
                            kept += c;
                        } else {
                            let mut keep_bits = l as u64 - kept;
                            let mut m = 0u64;
                            let mut x = *w;
                            while keep_bits > 0 {
                                let low = x & x.wrapping_neg();
                                m |= low;
                                x &= x - 1;
                                keep_bits -= 1;
                            }
                            *w = m;
                            kept = l as u64;
                        }
                    }
                    *s = Selection::from_bits(rows, words);
                }
                Some(_) => {}
            }
        }
        let n_out = match &sel {
            Some(s) => s.count(),
            None => prefix,
        } as usize;
        if n_out == 0 {
            return Ok(Vec::new());
        }
        let mask = sel.as_ref().map(|s| {
            let bits = BooleanBuffer::new(Buffer::from_vec(s.words().to_vec()), 0, rows as usize);
            BooleanArray::new(bits, None)
        });
        let dense = sel
            .as_ref()
            .is_some_and(|s| s.count() as f64 > DENSE_SELECTION * rows as f64);
        // Parquet columns: one read of the projected ones, with the selection.
        let pq_cols: Vec<usize> = self
            .projection
            .iter()
            .copied()
            .filter(|&c| !self.fpc[c])
            .collect();
        let mut pq_batch: Option<RecordBatch> = None;
        if !pq_cols.is_empty() {
            let f = part
                .parquet
                .as_ref()
                .expect("validated: Parquet columns have a file");
            let path = self.ds.file(&f.path);
            let file = File::open(&path).map_err(|e| df_err(format!("{}: {e}", path.display())))?;
            let b = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| df_err(format!("{}: {e}", f.path)))?;
            let file_rows = b.metadata().file_metadata().num_rows();
            if file_rows as u64 != rows {
                return Err(df_err(format!(
                    "{}: {file_rows} rows, part {p} has {rows}",
                    f.path
                )));
            }
            let mut leaves: Vec<usize> = pq_cols.iter().map(|&c| self.slot[c]).collect();
            leaves.sort_unstable();
            leaves.dedup();
            let mask_p = ProjectionMask::roots(b.parquet_schema(), leaves.iter().copied());
            let mut b = b.with_projection(mask_p).with_batch_size(64 * 1024);
            match &mask {
                Some(m) => b = b.with_row_selection(RowSelection::from_filters(&[m.clone()])),
                None => b = b.with_limit(prefix as usize),
            }
            let schema = Arc::new(b.schema().project(&leaves)?);
            let reader = b.build().map_err(|e| df_err(format!("{}: {e}", f.path)))?;
            let batches: Vec<RecordBatch> = reader
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| df_err(format!("{}: {e}", f.path)))?;
            let all = concat_batches(&schema, &batches)?;
            if all.num_rows() != n_out {
                return Err(df_err(format!(
                    "{}: read {} rows, expected {n_out}",
                    f.path,
                    all.num_rows()
                )));
            }
            // Columns by their position in the file.
            let by_leaf: Vec<(usize, ArrayRef)> = leaves
                .iter()
                .copied()
                .zip(all.columns().iter().cloned())
                .collect();
            let cols: Vec<ArrayRef> = pq_cols
                .iter()
                .map(|&c| {
                    by_leaf
                        .iter()
                        .find(|(l, _)| *l == self.slot[c])
                        .map(|(_, a)| a.clone())
                        .expect("read every projected leaf")
                })
                .collect();
            pq_batch = Some(RecordBatch::try_new_with_options(
                Arc::new(datafusion::arrow::datatypes::Schema::new(
                    pq_cols
                        .iter()
                        .map(|&c| self.table_schema.field(c).clone())
                        .collect::<Vec<_>>(),
                )),
                cols,
                &RecordBatchOptions::new().with_row_count(Some(n_out)),
            )?);
        }
        let mut out: Vec<ArrayRef> = Vec::with_capacity(self.projection.len());
        let mut pq_i = 0;
        for &c in &self.projection {
            if !self.fpc[c] {
                out.push(pq_batch.as_ref().expect("read above").column(pq_i).clone());
                pq_i += 1;
                continue;
            }
            let k = self.slot[c];
            let r = reader(&mut readers, k)?;
            let t = self.table_schema.field(c).data_type();
            let arr = match (&sel, &mask) {
                (Some(_), Some(m)) if dense => {
                    let col = r.read_range(0..rows).map_err(df_err)?;
                    filter(column_array(col, t)?.as_ref(), m)?
                }
                (Some(s), _) => column_array(s.take(&r).map_err(df_err)?, t)?,
                _ => column_array(r.read_range(0..prefix).map_err(df_err)?, t)?,
            };
            readers[k] = Some(r);
            out.push(arr);
        }
        let batch = RecordBatch::try_new_with_options(
            self.out_schema.clone(),
            out,
            &RecordBatchOptions::new().with_row_count(Some(n_out)),
        )?;
        let mut batches = Vec::new();
        let mut off = 0;
        while off < n_out {
            let len = self.batch_size.min(n_out - off);
            batches.push(batch.slice(off, len));
            off += len;
        }
        Ok(batches)
    }
}

/// A decoded column as an array of type `t` (values and offsets moved, not
/// copied, into a large array; other string types are cast from it; text is
/// checked to be UTF-8).
pub(crate) fn column_array(col: Column, t: &DataType) -> Result<ArrayRef> {
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
    let text = matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View);
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
