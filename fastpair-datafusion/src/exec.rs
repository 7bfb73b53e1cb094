//! The scan: one partition per group of parts, each a stream of the
//! parts' batches (`part`: the pushed predicates searched on the codes, then
//! only the selected rows of the projected columns decoded (`.fpc`) or read
//! (Parquet, with a row selection), a batch at a time).

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricsSet, RecordOutput};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream, StatisticsArgs,
};
use fastpair::dataset::Dataset;

use crate::metrics::{record_pruning, ScanMetrics};
use crate::part::{PartJob, PartScan, Piece, SharedParts, SplitPart};
use crate::pushdown::Pushed;
use crate::table::df_err;

/// The physical scan of a [`crate::FastpairTable`].
#[derive(Debug)]
pub struct ScanExec {
    pub(crate) ds: Arc<Dataset>,
    pub(crate) table_schema: SchemaRef,
    pub(crate) fpc: Vec<bool>,
    pub(crate) slot: Vec<usize>,
    pub(crate) projection: Vec<usize>,
    out_schema: SchemaRef,
    pub(crate) pushed: Vec<Pushed>,
    pub(crate) limit: Option<usize>,
    /// Pieces of each partition.
    pub(crate) groups: Vec<Vec<Piece>>,
    /// Per part cut into pieces, what the partitions scanning them share
    /// (the search result and the open `.fpc` readers).
    shared: SharedParts,
    /// Parts scanned (the others pruned by their statistics).
    pub(crate) kept: usize,
    pub(crate) batch_size: usize,
    pub(crate) stats: Statistics,
    props: Arc<PlanProperties>,
    /// What `EXPLAIN ANALYZE` shows ([`crate::metrics`]).
    metrics: ExecutionPlanMetricsSet,
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
        kept: Vec<usize>,
        limit: Option<usize>,
        target_partitions: usize,
        batch_size: usize,
        stats: Statistics,
    ) -> Result<Self> {
        let pieces = pieces(&ds, &kept, target_partitions);
        // Consecutive pieces per partition, as even in rows as the pieces
        // allow.
        let n = target_partitions.min(pieces.len()).max(1);
        let mut groups = vec![Vec::new(); n];
        let total = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            groups[i * n / total].push(piece);
        }
        Self::with_groups(
            ds,
            table_schema,
            fpc,
            slot,
            projection,
            pushed,
            kept.len(),
            groups,
            limit,
            batch_size,
            stats,
        )
    }

    /// The scan with its pieces already assigned to partitions (`groups`),
    /// as planned by [`ScanExec::new`]: also how a scan decoded from another
    /// process (`crate::codec`) is rebuilt, so that every process runs the
    /// partitions the planner made.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_groups(
        ds: Arc<Dataset>,
        table_schema: SchemaRef,
        fpc: Vec<bool>,
        slot: Vec<usize>,
        projection: Vec<usize>,
        pushed: Vec<Pushed>,
        kept: usize,
        groups: Vec<Vec<Piece>>,
        limit: Option<usize>,
        batch_size: usize,
        stats: Statistics,
    ) -> Result<Self> {
        let out_schema = Arc::new(table_schema.project(&projection)?);
        let ds_parts = ds.manifest().parts.len();
        for piece in groups.iter().flatten() {
            let rows = ds.manifest().parts.get(piece.part).map(|p| p.rows);
            if !rows.is_some_and(|r| piece.start <= piece.end && piece.end <= r) {
                return Err(df_err(format!(
                    "FastpairScanExec: rows {}..{} of part {} are not in dataset {}",
                    piece.start,
                    piece.end,
                    piece.part,
                    ds.dir().display()
                )));
            }
        }
        let props = PlanProperties::new(
            EquivalenceProperties::new(out_schema.clone()),
            Partitioning::UnknownPartitioning(groups.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        let shared: SharedParts = Arc::new(
            pieces_per_part(&groups, ds_parts)
                .into_iter()
                .enumerate()
                .map(|(p, n)| (n > 1).then(|| SplitPart::new(n, ds.manifest().parts[p].fpc.len())))
                .collect(),
        );
        let metrics = ExecutionPlanMetricsSet::new();
        record_pruning(&metrics, ds_parts, kept);
        Ok(Self {
            ds,
            table_schema,
            fpc,
            slot,
            projection,
            out_schema,
            pushed,
            limit,
            shared,
            kept,
            groups,
            batch_size,
            stats,
            props: Arc::new(props),
            metrics,
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
            "FastpairScanExec: dataset={}, parts={}/{}, partitions={}, projection=[{}]",
            self.ds.dir().display(),
            self.kept,
            self.ds.manifest().parts.len(),
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

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
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
            shared: self.shared.clone(),
        });
        // Parts one after the other, batch by batch, on the partition's own
        // task (as DataFusion's Parquet scan decodes in its stream; the
        // search and the decoder use all cores inside), stopping once the
        // limit is reached.
        let stream = futures::stream::iter(PartitionScan {
            job,
            parts: parts.into_iter(),
            cur: None,
            limit: self.limit,
            done: 0,
            m: ScanMetrics::new(&self.metrics, partition),
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.out_schema.clone(),
            stream,
        )))
    }
}

/// The batches of one partition's parts.
struct PartitionScan {
    job: Arc<PartJob>,
    parts: std::vec::IntoIter<Piece>,
    cur: Option<PartScan>,
    limit: Option<usize>,
    done: usize,
    m: ScanMetrics,
}

impl Iterator for PartitionScan {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        let start = std::time::Instant::now();
        let out = self.next_inner();
        self.m.baseline.elapsed_compute().add_elapsed(start);
        match &out {
            Some(Ok(b)) => {
                b.record_output(&self.m.baseline);
            }
            _ => self.m.baseline.done(),
        }
        out
    }
}

impl PartitionScan {
    fn next_inner(&mut self) -> Option<Result<RecordBatch>> {
        loop {
            if self.limit.is_some_and(|l| self.done >= l) {
                return None;
            }
            if let Some(scan) = &mut self.cur {
                match scan.next_batch() {
                    Ok(Some(b)) => {
                        self.done += b.num_rows();
                        return Some(Ok(b));
                    }
                    Ok(None) => self.cur = None,
                    Err(e) => {
                        self.parts = Vec::new().into_iter();
                        self.cur = None;
                        return Some(Err(e));
                    }
                }
            }
            let p = self.parts.next()?;
            let left = self.limit.map(|l| l - self.done);
            match PartScan::open(self.job.clone(), &p, left, self.m.clone()) {
                Ok(s) => self.cur = Some(s),
                Err(e) => {
                    self.parts = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Fewest rows worth a piece of their own: below it a part is not cut (a
/// piece reopens the part's files and re-reads its Parquet footer).
const MIN_PIECE_ROWS: u64 = 1 << 16;

/// The scan units of the `kept` parts: whole parts when there are at least
/// `target_partitions` of them, else each part cut into up to
/// `ceil(target_partitions / parts)` pieces of at least [`MIN_PIECE_ROWS`]
/// rows, cut at multiples of 64 rows (so one-part tables scan on every core,
/// as DataFusion cuts a Parquet file into byte ranges).
fn pieces(ds: &Dataset, kept: &[usize], target_partitions: usize) -> Vec<Piece> {
    let parts = &ds.manifest().parts;
    let per_part = target_partitions.div_ceil(kept.len().max(1)).max(1) as u64;
    let mut out = Vec::new();
    for &p in kept {
        let part = &parts[p];
        let k = per_part.min(part.rows / MIN_PIECE_ROWS).max(1);
        let step = part.rows.div_ceil(k).div_ceil(64) * 64;
        let mut start = 0;
        loop {
            let end = (start + step).min(part.rows);
            out.push(Piece {
                part: p,
                start,
                end,
            });
            start = end;
            if start >= part.rows {
                break;
            }
        }
    }
    out
}

/// Per part, the number of pieces `groups` cut it into.
fn pieces_per_part(groups: &[Vec<Piece>], parts: usize) -> Vec<usize> {
    let mut n = vec![0usize; parts];
    for piece in groups.iter().flatten() {
        n[piece.part] += 1;
    }
    n
}
