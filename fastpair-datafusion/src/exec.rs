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
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream, StatisticsArgs,
};
use fastpair::dataset::Dataset;

use crate::part::{PartJob, PartScan};
use crate::pushdown::Pushed;
use crate::table::df_err;

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
    parts: std::vec::IntoIter<usize>,
    cur: Option<PartScan>,
    limit: Option<usize>,
    done: usize,
}

impl Iterator for PartitionScan {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
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
            match PartScan::open(self.job.clone(), p, left) {
                Ok(s) => self.cur = Some(s),
                Err(e) => {
                    self.parts = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}
