//! The table provider through DataFusion's FFI (`datafusion-ffi`), the way
//! the `datafusion` Python package loads it from the `fastpair-datafusion`
//! wheel (fastpair-datafusion/python): the provider is wrapped in an
//! `FFI_TableProvider`, marked as coming from another library (so the
//! foreign path runs: schema, filter pushdown and scan through the C
//! interface, filters serialized with the session's codec), registered in a
//! session and queried. Results equal DataFusion over the same Parquet
//! table, and exact string predicates leave no `FilterExec` (they were
//! pushed across the boundary and searched on the codes).

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::catalog::TableProvider;
use datafusion::execution::TaskContextProvider;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use datafusion_ffi::execution::FFI_TaskContextProvider;
use datafusion_ffi::table_provider::{FFI_TableProvider, ForeignTableProvider};
use fastpair_datafusion::FastpairTable;

/// A library marker other than this library's: `datafusion-ffi` hands a
/// provider of its own library back unwrapped, so this forces the foreign
/// path a separately built extension (the Python wheel) takes.
extern "C" fn other_library() -> usize {
    usize::MAX
}

mod support;
use support::{compress, write_parquet};

async fn rows(ctx: &SessionContext, sql: &str) -> String {
    let b = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&b).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_through_ffi_pushes_filters_and_matches_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000i64;
    let words = ["alpha", "beta", "gamma", "special delta", "epsilon special"];
    let s: StringArray = (0..n)
        .map(|i| (i % 11 != 3).then(|| format!("{} {}", words[(i % 5) as usize], i % 97)))
        .collect();
    let k = Int64Array::from_iter_values(0..n);
    let batch = RecordBatch::try_from_iter([
        ("k", Arc::new(k) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ])
    .unwrap();
    let pq = dir.path().join("t.parquet");
    write_parquet(&pq, &[batch]);
    let ds = dir.path().join("t.fpd");
    compress(&pq, &ds, 6000);

    let ctx = Arc::new(SessionContext::new());
    let tcp = Arc::clone(&ctx) as Arc<dyn TaskContextProvider>;
    let provider: Arc<dyn TableProvider> = Arc::new(FastpairTable::open(&ds).unwrap());
    let mut ffi = FFI_TableProvider::new(
        provider,
        true,
        None,
        FFI_TaskContextProvider::from(&tcp),
        None,
    );
    ffi.library_marker_id = other_library;
    let foreign: Arc<dyn TableProvider> = (&ffi).into();
    // Schema, filter pushdown and scan go through the C interface.
    assert!(foreign.is::<ForeignTableProvider>(), "not the FFI wrapper");
    ctx.register_table("t", foreign).unwrap();
    let reference = SessionContext::new();
    reference
        .register_parquet("t", pq.to_str().unwrap(), ParquetReadOptions::default())
        .await
        .unwrap();

    for filter in [
        "s LIKE '%special%'",
        "s NOT LIKE 'beta%'",
        "s IN ('alpha 1', 'gamma 2', 'beta 68')",
        "s = 'alpha 0'",
        "starts_with(s, 'gamma 1')",
        "s ILIKE '%GAMMA 4%'",
        "s LIKE '%delta 5%' AND k > 100",
    ] {
        let sql = format!("SELECT k, s FROM t WHERE {filter} ORDER BY k");
        let got = rows(&ctx, &sql).await;
        assert_eq!(got, rows(&reference, &sql).await, "{filter}");
        assert!(got.lines().count() > 4, "{filter}: no rows");
        // The plan the scan returns over FFI comes from this same library,
        // so the FFI layer unwraps it back to our scan (a Python process,
        // with two libraries, shows the foreign plan instead): the scan is
        // ours, with the predicates that crossed the interface.
        let plan = rows(&ctx, &format!("EXPLAIN {sql}")).await;
        assert!(
            plan.contains("FastpairScanExec"),
            "{filter}: not scanned by fastpair:\n{plan}"
        );
        // Exact string predicates are pushed and dropped from the plan; the
        // only filters left are inexact (ILIKE) or not on a string (k > 100).
        let filtered = plan.contains("FilterExec");
        let expected = filter.contains("ILIKE") || filter.contains("k >");
        assert_eq!(
            filtered, expected,
            "{filter}: pushdown through FFI:\n{plan}"
        );
    }
    let sql = "SELECT count(*), count(s), min(s), max(k) FROM t";
    assert_eq!(rows(&ctx, sql).await, rows(&reference, sql).await);
}
