//! The `proto` feature's codecs (`fastpair_datafusion::codec`): a plan with
//! a fastpair scan, every kind of pushed predicate in it, through protobuf
//! bytes and back gives the same plan and the same rows; a table through the
//! logical codec likewise; a different dataset at the planned path is
//! refused. (The cluster that ships these bytes between processes is
//! tested in fastpair-ballista.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use fastpair_datafusion::codec::{FastpairLogicalCodec, FastpairPhysicalCodec};
use fastpair_datafusion::{session_context, FastpairTable};

mod support;
use support::{compress, write_parquet};

/// A dataset of `n` rows: `id`, `tag` (a few values) and `s` (text with
/// nulls), in parts of 100 rows.
fn dataset(dir: &Path, name: &str, n: usize, extra_column: bool) -> PathBuf {
    let tag: StringArray = (0..n)
        .map(|i| Some(["red", "green", "blue", "gray"][i % 4]))
        .collect();
    let s: StringArray = (0..n)
        .map(|i| (i % 9 != 0).then(|| format!("row {i} says {}", ["hi", "Hello", "bye"][i % 3])))
        .collect();
    let mut cols = vec![
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
        ),
        ("tag", Arc::new(tag) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ];
    if extra_column {
        cols.push(("more", Arc::new(Int64Array::from_iter_values(0..n as i64))));
    }
    let batch = RecordBatch::try_from_iter(cols).unwrap();
    let pq = dir.join(format!("{name}.parquet"));
    write_parquet(&pq, &[batch]);
    let ds = dir.join(format!("{name}.fpd"));
    compress(&pq, &ds, 100);
    ds
}

fn ctx(ds: &Path) -> SessionContext {
    let ctx = session_context(SessionConfig::new().with_target_partitions(3));
    ctx.register_table("t", Arc::new(FastpairTable::open(ds).unwrap()))
        .unwrap();
    ctx
}

fn text(batches: &[RecordBatch]) -> String {
    pretty_format_batches(batches).unwrap().to_string()
}

fn plan_text(p: &Arc<dyn ExecutionPlan>) -> String {
    displayable(p.as_ref()).indent(true).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_with_pushed_predicates_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dataset(dir.path(), "t", 1000, false);
    let ctx = ctx(&ds);
    let codec = FastpairPhysicalCodec::default();
    // Each pattern kind the codec carries, negation, case folding and a
    // limit in the scan.
    for sql in [
        "SELECT id, s FROM t WHERE tag = 'red' ORDER BY id",
        "SELECT id FROM t WHERE tag IN ('red', 'blue') AND s LIKE '%says h%' ORDER BY id",
        "SELECT id FROM t WHERE starts_with(s, 'row 1') ORDER BY id",
        "SELECT id FROM t WHERE s LIKE '%bye' ORDER BY id",
        "SELECT id FROM t WHERE strpos(s, '7 says') > 0 ORDER BY id",
        "SELECT id FROM t WHERE s NOT LIKE '%Hello%' ORDER BY id",
        "SELECT id FROM t WHERE s ILIKE '%HELLO' ORDER BY id",
        "SELECT id FROM t WHERE tag <> 'gray' AND s LIKE 'row _2%' ORDER BY id",
        "SELECT count(*) FROM (SELECT id FROM t WHERE tag = 'green' LIMIT 30)",
    ] {
        let plan = ctx
            .sql(sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let before = plan_text(&plan);
        assert!(
            before.contains("search=["),
            "{sql}: nothing pushed:\n{before}"
        );
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), &codec).unwrap();
        let back =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
        assert_eq!(plan_text(&back), before, "{sql}");
        let want = text(&collect(plan, ctx.task_ctx()).await.unwrap());
        let got = text(&collect(back, ctx.task_ctx()).await.unwrap());
        assert_eq!(got, want, "{sql}");
        assert!(want.lines().count() > 4, "{sql} selects no rows");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_round_trip_and_a_changed_dataset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dataset(dir.path(), "t", 300, false);
    let ctx = ctx(&ds);
    let codec = FastpairLogicalCodec::default();
    let sql = "SELECT tag, count(*) FROM t WHERE s LIKE '%hi%' GROUP BY tag ORDER BY tag";
    let plan = ctx.sql(sql).await.unwrap().into_optimized_plan().unwrap();
    let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec).unwrap();
    let back =
        logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap();
    let want = text(
        &ctx.execute_logical_plan(plan)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap(),
    );
    let got = text(
        &ctx.execute_logical_plan(back)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap(),
    );
    assert_eq!(got, want);

    // The same path now holds a dataset with another column: the table
    // and the scan planned against the old one are refused.
    let scan = ctx
        .sql("SELECT id FROM t WHERE tag = 'red'")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let pcodec = FastpairPhysicalCodec::default();
    let pbytes = physical_plan_to_bytes_with_extension_codec(scan, &pcodec).unwrap();
    std::fs::remove_dir_all(&ds).unwrap();
    let other = dataset(dir.path(), "other", 300, true);
    std::fs::rename(&other, &ds).unwrap();
    let e =
        logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec).unwrap_err();
    assert!(e.to_string().contains("planned schema"), "{e}");
    let e = physical_plan_from_bytes_with_extension_codec(&pbytes, &ctx.task_ctx(), &pcodec)
        .unwrap_err();
    assert!(e.to_string().contains("has columns"), "{e}");
}
