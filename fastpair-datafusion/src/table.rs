//! The table provider over one dataset, and its factory for `CREATE
//! EXTERNAL TABLE ... STORED AS FASTPAIR`.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, DataFusionError, Result, ScalarValue, Statistics};
use datafusion::datasource::{TableProvider, TableType};
use datafusion::logical_expr::{CreateExternalTable, Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use fastpair::dataset::{Dataset, StringType};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::exec::ScanExec;
use crate::prune::kept_parts;
use crate::pushdown::{classify, Pushed};

/// A fastpair dataset (spec/DATASET.md) as a DataFusion table: schema and
/// statistics from the manifest and the Parquet footers, projection, limit,
/// one partition per group of parts, and string predicates pushed into the
/// compressed-domain search ([`crate::pushdown`]).
#[derive(Debug)]
pub struct FastpairTable {
    ds: Arc<Dataset>,
    schema: SchemaRef,
    /// `fpc[i]`: column `i` is stored as `.fpc` files.
    fpc: Vec<bool>,
    /// Per column, its position among the `fpc` columns or the Parquet file's.
    slot: Vec<usize>,
    /// Per Parquet column (by slot), its nulls, min and max over all parts
    /// from the Parquet footers (what DataFusion's own Parquet tables give
    /// the planner for filter selectivity and join order).
    pq_stats: Vec<ColumnStatistics>,
    /// At most this many scan partitions (None: the session's
    /// `target_partitions`).
    max_partitions: Option<usize>,
}

pub(crate) fn df_err(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::External(e.to_string().into())
}

fn arrow_type(t: StringType) -> DataType {
    match t {
        StringType::Utf8 => DataType::Utf8,
        StringType::LargeUtf8 => DataType::LargeUtf8,
        StringType::Utf8View => DataType::Utf8View,
        StringType::Binary => DataType::Binary,
        StringType::LargeBinary => DataType::LargeBinary,
        StringType::BinaryView => DataType::BinaryView,
    }
}

impl FastpairTable {
    /// Opens and validates the dataset in directory `dir` (a local path, or
    /// a `file://` URL).
    pub fn open(dir: impl AsRef<Path>) -> Result<Self> {
        let mut dir = dir.as_ref().to_path_buf();
        if let Some(s) = dir.to_str().and_then(|s| s.strip_prefix("file://")) {
            dir = s.into();
        }
        let ds = Dataset::open(&dir).map_err(df_err)?;
        let m = ds.manifest();
        let pq_schema = match &m.parts[0].parquet {
            Some(f) => {
                let file = File::open(ds.file(&f.path))
                    .map_err(|e| df_err(format!("{}: {e}", ds.file(&f.path).display())))?;
                let b = ParquetRecordBatchReaderBuilder::try_new(file)
                    .map_err(|e| df_err(format!("{}: {e}", f.path)))?;
                Some(b.schema().clone())
            }
            None => None,
        };
        let (mut fields, mut fpc, mut slot) = (Vec::new(), Vec::new(), Vec::new());
        let (mut nf, mut np) = (0, 0);
        for c in &m.columns {
            match c.string_type {
                Some(t) => {
                    fields.push(Field::new(&c.name, arrow_type(t), c.nullable));
                    fpc.push(true);
                    slot.push(nf);
                    nf += 1;
                }
                None => {
                    let pq = pq_schema
                        .as_ref()
                        .expect("validated: Parquet columns have a file");
                    let f = pq.fields().get(np).ok_or_else(|| {
                        df_err(format!(
                            "dataset {}: the Parquet files lack column {:?}",
                            dir.display(),
                            c.name
                        ))
                    })?;
                    if f.name() != &c.name {
                        return Err(df_err(format!(
                            "dataset {}: Parquet column {np} is {:?}, the manifest says {:?}",
                            dir.display(),
                            f.name(),
                            c.name
                        )));
                    }
                    fields.push(f.as_ref().clone());
                    fpc.push(false);
                    slot.push(np);
                    np += 1;
                }
            }
        }
        if pq_schema.as_ref().is_some_and(|s| s.fields().len() != np) {
            return Err(df_err(format!(
                "dataset {}: the Parquet files hold columns the manifest does not list",
                dir.display()
            )));
        }
        let pq_stats = match &pq_schema {
            Some(s) => parquet_stats(&ds, s)?,
            None => Vec::new(),
        };
        Ok(Self {
            ds: Arc::new(ds),
            schema: Arc::new(Schema::new(fields)),
            fpc,
            slot,
            pq_stats,
            max_partitions: None,
        })
    }

    /// The table with scans of at most `n` partitions (at least 1). For
    /// engines that cannot hand a task some of a custom scan's partitions:
    /// Ballista 55 restricts only the scans it knows (file groups of a
    /// `FileScanConfig`) to a task's partitions, so each task of a stage
    /// over a scan of several partitions would run all of them.
    pub fn with_max_partitions(mut self, n: usize) -> Self {
        self.max_partitions = Some(n.max(1));
        self
    }

    /// The dataset.
    pub fn dataset(&self) -> &Dataset {
        &self.ds
    }

    /// The pushed predicates among `filters`.
    fn pushed(&self, filters: &[Expr]) -> Vec<Pushed> {
        filters
            .iter()
            .filter_map(|f| classify(f, &self.schema, &self.fpc))
            .collect()
    }

    /// Statistics of the columns `projection`: exact without pushed
    /// predicates; with them (`selectivity`: the fraction of rows they are
    /// assumed to keep) rows and bytes are that fraction of the table's,
    /// inexact, as DataFusion's `FilterExec` estimates a filter it cannot
    /// analyse, so the planner sizes joins on a filtered scan as it would on
    /// Parquet (a small filtered side is collected, not hash-partitioned).
    fn stats(&self, projection: &[usize], selectivity: Option<f64>) -> Statistics {
        let filtered = selectivity.is_some();
        let m = self.ds.manifest();
        let mut cols = Vec::new();
        for &c in projection {
            let mut cs = ColumnStatistics::new_unknown();
            if !self.fpc[c] {
                let s = &self.pq_stats[self.slot[c]];
                cs.null_count = if filtered {
                    s.null_count.to_inexact()
                } else {
                    s.null_count
                };
                cs.min_value = s.min_value.clone();
                cs.max_value = s.max_value.clone();
            } else {
                let k = self.slot[c];
                let nulls: u64 = m.parts.iter().map(|p| p.fpc[k].nulls).sum();
                cs.null_count = if filtered {
                    Precision::Inexact(nulls as usize)
                } else {
                    Precision::Exact(nulls as usize)
                };
                let t = self.schema.field(c).data_type();
                let lo = m
                    .parts
                    .iter()
                    .filter(|p| p.rows > p.fpc[k].nulls)
                    .map(|p| p.fpc[k].min());
                let hi = m
                    .parts
                    .iter()
                    .filter(|p| p.rows > p.fpc[k].nulls)
                    .map(|p| p.fpc[k].max());
                let lo: Option<Vec<Vec<u8>>> = lo.collect();
                let hi: Option<Vec<Vec<u8>>> = hi.collect();
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    if let (Some(a), Some(b)) = (lo.into_iter().min(), hi.into_iter().max()) {
                        // Bounds, exact or not, are still bounds after a filter.
                        let wrap = |v| {
                            if filtered {
                                Precision::Inexact(v)
                            } else {
                                Precision::Exact(v)
                            }
                        };
                        if let (Some(a), Some(b)) = (scalar(t, a), scalar(t, b)) {
                            cs.min_value = wrap(a);
                            cs.max_value = wrap(b);
                        }
                    }
                }
            }
            cols.push(cs);
        }
        let bytes = self.memory_bytes(projection) as f64;
        let (rows, bytes) = match selectivity {
            None => (Precision::Exact(m.rows as usize), bytes),
            Some(f) => (
                Precision::Inexact((m.rows as f64 * f).ceil() as usize),
                bytes * f,
            ),
        };
        Statistics {
            num_rows: rows,
            total_byte_size: Precision::Inexact(bytes.ceil() as usize),
            column_statistics: cols,
        }
    }
}

impl FastpairTable {
    /// The Arrow size of columns `projection` over all rows, estimated: a
    /// fixed-width column its width per row, a string column its value
    /// bytes (manifest) plus its view or offset per row, anything else 16
    /// bytes a row (what the planner compares with
    /// `hash_join_single_partition_threshold`).
    fn memory_bytes(&self, projection: &[usize]) -> u64 {
        let m = self.ds.manifest();
        projection
            .iter()
            .map(|&c| {
                let t = self.schema.field(c).data_type();
                if self.fpc[c] {
                    let per_row = match t {
                        DataType::Utf8View | DataType::BinaryView => 16,
                        DataType::LargeUtf8 | DataType::LargeBinary => 8,
                        _ => 4,
                    };
                    let k = self.slot[c];
                    m.parts
                        .iter()
                        .map(|p| p.fpc[k].value_bytes + per_row * p.rows)
                        .sum::<u64>()
                } else {
                    t.primitive_width().unwrap_or(16) as u64 * m.rows
                }
            })
            .sum()
    }
}

/// Per Parquet column of the dataset, its null count (exact) and min and
/// max (inexact: bounds) over every part's row groups, from the footers;
/// unknown where a row group lacks them.
fn parquet_stats(ds: &Dataset, schema: &Schema) -> Result<Vec<ColumnStatistics>> {
    let mut out: Vec<ColumnStatistics> = schema
        .fields()
        .iter()
        .map(|_| ColumnStatistics {
            null_count: Precision::Exact(0),
            ..ColumnStatistics::new_unknown()
        })
        .collect();
    let mut first = true;
    for part in &ds.manifest().parts {
        let Some(f) = &part.parquet else { continue };
        let file = File::open(ds.file(&f.path))
            .map_err(|e| df_err(format!("{}: {e}", ds.file(&f.path).display())))?;
        let b = ParquetRecordBatchReaderBuilder::try_new(file)
            .map_err(|e| df_err(format!("{}: {e}", f.path)))?;
        let md = b.metadata();
        let rgs = md.row_groups();
        for (i, field) in schema.fields().iter().enumerate() {
            let cs = &mut out[i];
            let conv = StatisticsConverter::try_new(field.name(), schema, b.parquet_schema());
            let Ok(conv) = conv else {
                *cs = ColumnStatistics::new_unknown();
                continue;
            };
            let nulls = conv.row_group_null_counts(rgs.iter()).ok();
            cs.null_count = match (cs.null_count, nulls) {
                (Precision::Exact(n), Some(a))
                    if datafusion::arrow::array::Array::null_count(&a) == 0 =>
                {
                    Precision::Exact(n + a.values().iter().sum::<u64>() as usize)
                }
                _ => Precision::Absent,
            };
            let fold = |acc: Precision<ScalarValue>,
                        arr: Option<datafusion::arrow::array::ArrayRef>,
                        first: bool,
                        keep: std::cmp::Ordering| {
                if !first && acc == Precision::Absent {
                    return Precision::Absent;
                }
                let Some(arr) = arr else {
                    return Precision::Absent;
                };
                let mut acc = acc;
                for r in 0..arr.len() {
                    if arr.is_null(r) {
                        return Precision::Absent;
                    }
                    let Ok(v) = ScalarValue::try_from_array(&arr, r) else {
                        return Precision::Absent;
                    };
                    acc = match acc {
                        Precision::Inexact(a) if a.partial_cmp(&v) != Some(keep) => {
                            Precision::Inexact(v)
                        }
                        Precision::Inexact(a) => Precision::Inexact(a),
                        _ => Precision::Inexact(v),
                    };
                }
                acc
            };
            let mins = conv.row_group_mins(rgs.iter()).ok();
            let maxes = conv.row_group_maxes(rgs.iter()).ok();
            cs.min_value = fold(cs.min_value.clone(), mins, first, std::cmp::Ordering::Less);
            cs.max_value = fold(
                cs.max_value.clone(),
                maxes,
                first,
                std::cmp::Ordering::Greater,
            );
        }
        first = false;
    }
    Ok(out)
}

/// A min/max statistic as a scalar of the column's type.
fn scalar(t: &DataType, v: Vec<u8>) -> Option<ScalarValue> {
    Some(match t {
        DataType::Utf8 => ScalarValue::Utf8(Some(String::from_utf8(v).ok()?)),
        DataType::LargeUtf8 => ScalarValue::LargeUtf8(Some(String::from_utf8(v).ok()?)),
        DataType::Utf8View => ScalarValue::Utf8View(Some(String::from_utf8(v).ok()?)),
        DataType::Binary => ScalarValue::Binary(Some(v)),
        DataType::LargeBinary => ScalarValue::LargeBinary(Some(v)),
        DataType::BinaryView => ScalarValue::BinaryView(Some(v)),
        _ => return None,
    })
}

#[async_trait]
impl TableProvider for FastpairTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match classify(f, &self.schema, &self.fpc) {
                Some(p) => p.answer(),
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let all: Vec<usize> = (0..self.schema.fields().len()).collect();
        Some(self.stats(&all, None))
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let projection: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let pushed = self.pushed(filters);
        let kept = kept_parts(&self.ds.manifest().parts, &pushed, &self.slot);
        let selectivity = (!pushed.is_empty()).then(|| {
            let pct = state
                .config()
                .options()
                .optimizer
                .default_filter_selectivity;
            f64::from(pct.min(100)) / 100.0
        });
        let stats = self.stats(&projection, selectivity);
        let target = state.config().target_partitions().max(1);
        let target = self.max_partitions.map_or(target, |m| target.min(m));
        let batch_size = state.config().batch_size().max(1);
        Ok(Arc::new(ScanExec::new(
            self.ds.clone(),
            self.schema.clone(),
            self.fpc.clone(),
            self.slot.clone(),
            projection,
            pushed,
            kept,
            limit,
            target,
            batch_size,
            stats,
        )?))
    }
}

/// `CREATE EXTERNAL TABLE t STORED AS FASTPAIR LOCATION 'dir'` (register it
/// under the name `FASTPAIR`: [`crate::session_state_builder`] does).
#[derive(Debug, Default)]
pub struct FastpairTableFactory;

#[async_trait]
impl TableProviderFactory for FastpairTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> Result<Arc<dyn TableProvider>> {
        let [location] = cmd.locations.as_slice() else {
            return Err(df_err(format!(
                "CREATE EXTERNAL TABLE {}: STORED AS FASTPAIR takes one LOCATION (a dataset directory)",
                cmd.name
            )));
        };
        let t = FastpairTable::open(location)?;
        if !cmd.schema.fields().is_empty() {
            let want: Vec<(&String, &DataType)> = cmd
                .schema
                .fields()
                .iter()
                .map(|f| (f.name(), f.data_type()))
                .collect();
            let have: Vec<(&String, &DataType)> = t
                .schema
                .fields()
                .iter()
                .map(|f| (f.name(), f.data_type()))
                .collect();
            if want != have {
                return Err(df_err(format!(
                    "CREATE EXTERNAL TABLE {}: the declared columns differ from the dataset's ({})",
                    cmd.name,
                    t.schema
                        .fields()
                        .iter()
                        .map(|f| format!("{} {}", f.name(), f.data_type()))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
        Ok(Arc::new(t))
    }
}
