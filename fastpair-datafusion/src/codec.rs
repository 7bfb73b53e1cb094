//! Plans that read fastpair datasets, encoded for other processes (the
//! `proto` feature): a [`LogicalExtensionCodec`] for [`FastpairTable`] and a
//! [`PhysicalExtensionCodec`] for [`ScanExec`], each wrapping the codec of
//! the engine that ships the plans (Ballista's, whose shuffle operators must
//! still encode, or DataFusion's default).
//!
//! What travels: a table is its dataset's directory; a scan is the directory,
//! the table's Arrow schema, the projection, the pushed string predicates,
//! the limit, the statistics, and the pieces (part, rows) of every partition
//! as the planning process cut them, so that every process runs the
//! partitions the planner counted. The receiving process opens the dataset
//! at the same path (shared storage) and checks that its manifest names the
//! columns of the encoded schema, so a different dataset at that path fails
//! instead of scanning the wrong columns.
//!
//! Each buffer of ours starts with a tag (`fastpair-table\0`,
//! `fastpair-scan\0`) and anything else goes to the wrapped codec. The tags
//! begin with `f` (0x66): as the first byte of a protobuf message that is a
//! field key of wire type 6, which does not exist, so a buffer of the
//! protobuf codecs we wrap (DataFusion's, Ballista's) never starts with one.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{Result, Statistics, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    AggregateUDF, Extension, HigherOrderUDF, LogicalPlan, ScalarUDF, WindowUDF,
};
use datafusion::physical_expr_common::physical_expr::proto_decode::PhysicalExprDecodeCtx;
use datafusion::physical_expr_common::physical_expr::proto_encode::PhysicalExprEncodeCtx;
use datafusion::physical_plan::{ExecutionPlan, PhysicalExpr};
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    DefaultPhysicalExtensionCodec, PhysicalExtensionCodec, PhysicalProtoConverterExtension,
};
use fastpair::dataset::Dataset;
use fastpair::search::{Pattern, Predicate};
use prost::Message;

use crate::exec::ScanExec;
use crate::part::Piece;
use crate::pushdown::Pushed;
use crate::table::df_err;
use crate::FastpairTable;

const TABLE_TAG: &[u8] = b"fastpair-table\0";
const SCAN_TAG: &[u8] = b"fastpair-scan\0";

/// A table: its dataset's directory.
#[derive(Clone, PartialEq, prost::Message)]
struct TableNode {
    #[prost(string, tag = "1")]
    dir: String,
}

/// A [`ScanExec`].
#[derive(Clone, PartialEq, prost::Message)]
struct ScanNode {
    #[prost(string, tag = "1")]
    dir: String,
    /// The table's schema (every column; the Parquet columns' types come
    /// from the files, so the manifest alone does not give it).
    #[prost(message, optional, tag = "2")]
    table_schema: Option<datafusion_proto_common::Schema>,
    #[prost(uint64, repeated, tag = "3")]
    projection: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pushed: Vec<PushedNode>,
    #[prost(uint64, optional, tag = "5")]
    limit: Option<u64>,
    /// Per partition, its pieces.
    #[prost(message, repeated, tag = "6")]
    groups: Vec<GroupNode>,
    /// Parts kept by the planner's pruning (for the plan's display).
    #[prost(uint64, tag = "7")]
    kept: u64,
    #[prost(uint64, tag = "8")]
    batch_size: u64,
    #[prost(message, optional, tag = "9")]
    stats: Option<datafusion_proto_common::Statistics>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct GroupNode {
    #[prost(message, repeated, tag = "1")]
    pieces: Vec<PieceNode>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct PieceNode {
    #[prost(uint64, tag = "1")]
    part: u64,
    #[prost(uint64, tag = "2")]
    start: u64,
    #[prost(uint64, tag = "3")]
    end: u64,
}

/// `Pattern` kinds on the wire.
const EQUALS: u32 = 0;
const IN: u32 = 1;
const PREFIX: u32 = 2;
const SUFFIX: u32 = 3;
const CONTAINS: u32 = 4;
const LIKE: u32 = 5;

/// A [`Pushed`] predicate.
#[derive(Clone, PartialEq, prost::Message)]
struct PushedNode {
    #[prost(uint64, tag = "1")]
    column: u64,
    #[prost(uint32, tag = "2")]
    kind: u32,
    /// The literal(s): one for equals, prefix, suffix and like; the list for
    /// in and contains.
    #[prost(bytes = "vec", repeated, tag = "3")]
    values: Vec<Vec<u8>>,
    /// Contains: every needle must occur.
    #[prost(bool, tag = "4")]
    all: bool,
    /// Like: the escape byte.
    #[prost(uint32, optional, tag = "5")]
    escape: Option<u32>,
    #[prost(bool, tag = "6")]
    ignore_case: bool,
    #[prost(bool, tag = "7")]
    negated: bool,
    #[prost(bool, tag = "8")]
    exact: bool,
}

fn pushed_to_node(p: &Pushed) -> PushedNode {
    let (kind, values, all, escape) = match &p.predicate.pattern {
        Pattern::Equals(v) => (EQUALS, vec![v.clone()], false, None),
        Pattern::In(vs) => (IN, vs.clone(), false, None),
        Pattern::Prefix(v) => (PREFIX, vec![v.clone()], false, None),
        Pattern::Suffix(v) => (SUFFIX, vec![v.clone()], false, None),
        Pattern::Contains { needles, all } => (CONTAINS, needles.clone(), *all, None),
        Pattern::Like { pattern, escape } => {
            (LIKE, vec![pattern.clone()], false, escape.map(u32::from))
        }
    };
    PushedNode {
        column: p.column as u64,
        kind,
        values,
        all,
        escape,
        ignore_case: p.predicate.ignore_case,
        negated: p.predicate.negated,
        exact: p.exact,
    }
}

fn pushed_from_node(n: PushedNode) -> Result<Pushed> {
    let one = |mut vs: Vec<Vec<u8>>| -> Result<Vec<u8>> {
        if vs.len() != 1 {
            return Err(df_err(format!(
                "fastpair scan: predicate kind {} takes one literal, got {}",
                n.kind,
                vs.len()
            )));
        }
        Ok(vs.pop().expect("one"))
    };
    let pattern = match n.kind {
        EQUALS => Pattern::Equals(one(n.values)?),
        IN => Pattern::In(n.values),
        PREFIX => Pattern::Prefix(one(n.values)?),
        SUFFIX => Pattern::Suffix(one(n.values)?),
        CONTAINS => Pattern::Contains {
            needles: n.values,
            all: n.all,
        },
        LIKE => Pattern::Like {
            pattern: one(n.values)?,
            escape: match n.escape {
                None => None,
                Some(e) => Some(u8::try_from(e).map_err(|_| {
                    df_err(format!("fastpair scan: LIKE escape {e} is not a byte"))
                })?),
            },
        },
        k => return Err(df_err(format!("fastpair scan: unknown predicate kind {k}"))),
    };
    let mut predicate = Predicate::new(pattern);
    predicate.ignore_case = n.ignore_case;
    predicate.negated = n.negated;
    Ok(Pushed {
        column: usize::try_from(n.column).map_err(df_err)?,
        predicate,
        exact: n.exact,
    })
}

fn dir_string(ds: &Dataset) -> Result<String> {
    ds.dir()
        .to_str()
        .map(str::to_string)
        .ok_or_else(|| df_err(format!("dataset path {} is not UTF-8", ds.dir().display())))
}

/// Per column of `ds`'s manifest: stored as `.fpc` files, and its position
/// among those or among the Parquet file's columns (what
/// `FastpairTable::open` derives).
fn layout(ds: &Dataset) -> (Vec<bool>, Vec<usize>) {
    let (mut fpc, mut slot) = (Vec::new(), Vec::new());
    let (mut nf, mut np) = (0, 0);
    for c in &ds.manifest().columns {
        let is_fpc = c.string_type.is_some();
        fpc.push(is_fpc);
        let n = if is_fpc { &mut nf } else { &mut np };
        slot.push(*n);
        *n += 1;
    }
    (fpc, slot)
}

fn encode_scan(s: &ScanExec, buf: &mut Vec<u8>) -> Result<()> {
    let node = ScanNode {
        dir: dir_string(&s.ds)?,
        table_schema: Some(
            datafusion_proto_common::Schema::try_from(s.table_schema.as_ref()).map_err(df_err)?,
        ),
        projection: s.projection.iter().map(|&c| c as u64).collect(),
        pushed: s.pushed.iter().map(pushed_to_node).collect(),
        limit: s.limit.map(|l| l as u64),
        groups: s
            .groups
            .iter()
            .map(|g| GroupNode {
                pieces: g
                    .iter()
                    .map(|p| PieceNode {
                        part: p.part as u64,
                        start: p.start,
                        end: p.end,
                    })
                    .collect(),
            })
            .collect(),
        kept: s.kept as u64,
        batch_size: s.batch_size as u64,
        stats: Some((&s.stats).into()),
    };
    buf.extend_from_slice(SCAN_TAG);
    node.encode(buf).map_err(df_err)
}

fn usize_of(v: u64, what: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| df_err(format!("fastpair scan: {what} {v} is too large")))
}

fn decode_scan(buf: &[u8]) -> Result<ScanExec> {
    let n = ScanNode::decode(buf).map_err(df_err)?;
    let ds = Dataset::open(&n.dir).map_err(df_err)?;
    let schema: SchemaRef = Arc::new(
        Schema::try_from(
            n.table_schema
                .as_ref()
                .ok_or_else(|| df_err("fastpair scan: no table schema"))?,
        )
        .map_err(df_err)?,
    );
    // The dataset found at the path must be the one planned: its columns
    // are the schema's, in order (their kinds then follow from the
    // manifest).
    let names: Vec<&str> = ds
        .manifest()
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let want: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    if names != want {
        return Err(df_err(format!(
            "fastpair scan: dataset {} has columns {names:?}, the plan's table {want:?}",
            n.dir
        )));
    }
    let (fpc, slot) = layout(&ds);
    let cols = want.len();
    let projection = n
        .projection
        .iter()
        .map(|&c| usize_of(c, "column"))
        .collect::<Result<Vec<_>>>()?;
    let pushed = n
        .pushed
        .into_iter()
        .map(pushed_from_node)
        .collect::<Result<Vec<_>>>()?;
    if let Some(c) = projection
        .iter()
        .copied()
        .chain(pushed.iter().map(|p| p.column))
        .find(|&c| c >= cols)
    {
        return Err(df_err(format!(
            "fastpair scan: column {c} of a table of {cols}"
        )));
    }
    if let Some(p) = pushed.iter().find(|p| !fpc[p.column]) {
        return Err(df_err(format!(
            "fastpair scan: a predicate on column {:?}, which is not a .fpc column",
            want[p.column]
        )));
    }
    let groups = n
        .groups
        .iter()
        .map(|g| {
            g.pieces
                .iter()
                .map(|p| {
                    Ok(Piece {
                        part: usize_of(p.part, "part")?,
                        start: p.start,
                        end: p.end,
                    })
                })
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<Vec<_>>>()?;
    let stats = match &n.stats {
        Some(s) => Statistics::try_from(s).map_err(df_err)?,
        None => Statistics::new_unknown(&schema.project(&projection)?),
    };
    ScanExec::with_groups(
        Arc::new(ds),
        schema,
        fpc,
        slot,
        projection,
        pushed,
        usize_of(n.kept, "kept parts")?,
        groups,
        n.limit.map(|l| usize_of(l, "limit")).transpose()?,
        usize_of(n.batch_size, "batch size")?.max(1),
        stats,
    )
}

/// The logical codec: [`FastpairTable`]s as their directories, everything
/// else to the wrapped codec.
pub struct FastpairLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
    /// Decoded tables scan with at most this many partitions.
    max_scan_partitions: Option<usize>,
}

impl FastpairLogicalCodec {
    /// Fastpair tables, and `inner` for the rest (e.g. Ballista's
    /// `BallistaLogicalExtensionCodec`).
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> Self {
        Self {
            inner,
            max_scan_partitions: None,
        }
    }

    /// Tables decoded by this codec scan with at most `n` partitions
    /// ([`FastpairTable::with_max_partitions`]): for an engine that plans
    /// the decoded plan and cannot give a task only some of a custom scan's
    /// partitions (Ballista 55).
    pub fn with_max_scan_partitions(mut self, n: usize) -> Self {
        self.max_scan_partitions = Some(n);
        self
    }
}

impl Default for FastpairLogicalCodec {
    /// Over DataFusion's default codec.
    fn default() -> Self {
        Self::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl fmt::Debug for FastpairLogicalCodec {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("FastpairLogicalCodec")
            .field("inner", &self.inner)
            .field("max_scan_partitions", &self.max_scan_partitions)
            .finish()
    }
}

impl LogicalExtensionCodec for FastpairLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let Some(rest) = buf.strip_prefix(TABLE_TAG) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let n = TableNode::decode(rest).map_err(df_err)?;
        let mut t = FastpairTable::open(&n.dir)?;
        if let Some(m) = self.max_scan_partitions {
            t = t.with_max_partitions(m);
        }
        // The plan was made against `schema`: the dataset at this path must
        // still have it (same names and types, in order).
        let same = t.schema().fields().len() == schema.fields().len()
            && t.schema()
                .fields()
                .iter()
                .zip(schema.fields())
                .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
        if !same {
            return Err(df_err(format!(
                "table {table_ref}: dataset {} does not have the planned schema",
                n.dir
            )));
        }
        Ok(Arc::new(t))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(t) = node.downcast_ref::<FastpairTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        buf.extend_from_slice(TABLE_TAG);
        TableNode {
            dir: dir_string(t.dataset())?,
        }
        .encode(buf)
        .map_err(df_err)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}

/// The physical codec: [`ScanExec`]s (with their pushed predicates and
/// partitions), everything else to the wrapped codec.
pub struct FastpairPhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl FastpairPhysicalCodec {
    /// Fastpair scans, and `inner` for the rest (e.g. Ballista's
    /// `BallistaPhysicalExtensionCodec`, which encodes its shuffles).
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        Self { inner }
    }
}

impl Default for FastpairPhysicalCodec {
    /// Over DataFusion's default codec.
    fn default() -> Self {
        Self::new(Arc::new(DefaultPhysicalExtensionCodec {}))
    }
}

impl fmt::Debug for FastpairPhysicalCodec {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("FastpairPhysicalCodec")
            .field("inner", &self.inner)
            .finish()
    }
}

impl PhysicalExtensionCodec for FastpairPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.strip_prefix(SCAN_TAG) {
            Some(rest) => {
                if !inputs.is_empty() {
                    return Err(df_err("fastpair scan: a scan has no inputs"));
                }
                Ok(Arc::new(decode_scan(rest)?))
            }
            None => self.inner.try_decode(buf, inputs, ctx, proto_converter),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<ScanExec>() {
            Some(s) => encode_scan(s, buf),
            None => self.inner.try_encode(node, buf, proto_converter),
        }
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_expr(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn PhysicalExpr>],
        ctx: &PhysicalExprDecodeCtx<'_>,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        self.inner.try_decode_expr(buf, inputs, ctx)
    }

    fn try_encode_expr(
        &self,
        node: &Arc<dyn PhysicalExpr>,
        buf: &mut Vec<u8>,
        ctx: &PhysicalExprEncodeCtx<'_>,
    ) -> Result<()> {
        self.inner.try_encode_expr(node, buf, ctx)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
