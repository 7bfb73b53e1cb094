//! SQL over fastpair datasets against DataFusion over the same tables in
//! Parquet: the 22 TPC-H queries (SF 0.01, several parts per table), every
//! pushed string predicate (same rows, and pushed as the pushdown table says),
//! edge cases (nulls, empty strings, non-ASCII case folding, binary
//! columns), sparse and dense selections across batches, `CREATE EXTERNAL TABLE ... STORED AS FASTPAIR`, limits and
//! projections, the dataset round trip of every TPC-H table, and the
//! `fastpair-sql` binary.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::{
    Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray,
};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use fastpair_datafusion::{session_context, FastpairTable};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

mod support;
use support::{compress, fastpair_cli, tpch_batches, write_parquet, TABLES};

/// `batch` as table `t` twice: written to DIR/t.parquet (ZSTD) and from it to
/// the dataset DIR/t.fpd (parts of `part_rows` rows); the dataset registered in a
/// session with `cfg`, the Parquet file in a default one. Returns (fastpair,
/// Parquet) sessions.
async fn table_both_ways(
    dir: &Path,
    batch: RecordBatch,
    part_rows: u64,
    cfg: SessionConfig,
) -> (SessionContext, SessionContext) {
    let pqp = dir.join("t.parquet");
    write_parquet(&pqp, &[batch]);
    let dsp = dir.join("t.fpd");
    compress(&pqp, &dsp, part_rows);
    let fp = session_context(cfg);
    fp.register_table("t", Arc::new(FastpairTable::open(&dsp).unwrap()))
        .unwrap();
    let pq = SessionContext::new();
    pq.register_parquet("t", pqp.to_str().unwrap(), ParquetReadOptions::default())
        .await
        .unwrap();
    (fp, pq)
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    let f = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// The TPC-H tables at SF 0.01 as Parquet (ZSTD) and as datasets (parts of
/// 16,384 rows: lineitem has 4), generated once per test process.
struct Tpch {
    dir: PathBuf,
}

fn tpch() -> &'static Tpch {
    static T: OnceLock<Tpch> = OnceLock::new();
    T.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("fastpair-sql-tpch-")
            .tempdir()
            .unwrap()
            .keep();
        for t in TABLES {
            let pq = dir.join(format!("{t}.parquet"));
            write_parquet(&pq, &tpch_batches(t));
            compress(&pq, &dir.join(format!("{t}.fpd")), 16_384);
        }
        Tpch { dir }
    })
}

fn config() -> SessionConfig {
    SessionConfig::new().with_target_partitions(3)
}

async fn fastpair_ctx() -> SessionContext {
    let t = tpch();
    let ctx = session_context(config());
    for name in TABLES {
        let table = FastpairTable::open(t.dir.join(format!("{name}.fpd"))).unwrap();
        ctx.register_table(name, Arc::new(table)).unwrap();
    }
    ctx
}

async fn parquet_ctx() -> SessionContext {
    let t = tpch();
    let ctx = SessionContext::new_with_config(config());
    for name in TABLES {
        let p = t.dir.join(format!("{name}.parquet"));
        ctx.register_parquet(name, p.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap();
    }
    ctx
}

/// The rows of a query, each row printed, in the query's order.
async fn rows(ctx: &SessionContext, sql: &str) -> Vec<String> {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let text = pretty_format_batches(&batches).unwrap().to_string();
    text.lines().map(str::to_string).collect()
}

async fn plan(ctx: &SessionContext, sql: &str) -> String {
    let b = ctx
        .sql(&format!("EXPLAIN {sql}"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    pretty_format_batches(&b).unwrap().to_string()
}

fn query(n: usize) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tpch/q{n:02}.sql"));
    std::fs::read_to_string(p).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tpch_queries_equal_over_fastpair_and_parquet() {
    let fp = fastpair_ctx().await;
    let pq = parquet_ctx().await;
    let mut nonempty = 0;
    for n in 1..=22 {
        let sql = query(n);
        let a = rows(&fp, &sql).await;
        let b = rows(&pq, &sql).await;
        assert_eq!(a, b, "TPC-H Q{n}");
        // A header (3 lines) and a bottom line around any rows.
        if a.len() > 4 {
            nonempty += 1;
        }
    }
    // At SF 0.01 a few queries select nothing; most must return rows.
    assert!(
        nonempty >= 18,
        "only {nonempty} of 22 queries returned rows"
    );
}

/// Each string predicate: the same rows over fastpair and Parquet, and
/// pushed into the search (exact ones leave no FilterExec behind).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_predicates_select_the_same_rows() {
    let fp = fastpair_ctx().await;
    let pq = parquet_ctx().await;
    // (filter, pushed exactly: no FilterExec left)
    let cases: &[(&str, &str, bool)] = &[
        ("lineitem", "l_shipmode = 'MAIL'", true),
        ("lineitem", "'MAIL' = l_shipmode", true),
        ("lineitem", "l_shipmode <> 'MAIL'", true),
        ("lineitem", "l_shipmode IN ('MAIL', 'SHIP')", true),
        (
            "lineitem",
            "l_shipmode NOT IN ('MAIL', 'SHIP', 'AIR')",
            true,
        ),
        ("lineitem", "l_comment LIKE '%special%'", true),
        ("lineitem", "l_comment LIKE '%final%dep%'", true),
        ("lineitem", "l_comment NOT LIKE '%e%'", true),
        ("lineitem", "l_comment LIKE 'fluffily%'", true),
        ("lineitem", "l_comment LIKE '%ly'", true),
        ("lineitem", "l_comment LIKE '_o%'", true),
        ("lineitem", "l_comment ILIKE '%FURIOU%'", false),
        ("lineitem", "l_comment NOT ILIKE '%Final%'", false),
        ("lineitem", "starts_with(l_comment, 'blithely')", true),
        ("lineitem", "strpos(l_comment, 'pinto') > 0", true),
        ("lineitem", "strpos(l_comment, 'pinto') = 0", true),
        ("lineitem", "contains(l_comment, 'ironic')", true),
        (
            "lineitem",
            "l_shipinstruct = 'NONE' AND l_comment LIKE '%ag%'",
            true,
        ),
        ("orders", "o_comment LIKE '%special%requests%'", true),
        ("orders", "o_comment NOT LIKE '%special%requests%'", true),
        ("orders", "o_orderpriority IN ('1-URGENT', '2-HIGH')", true),
        ("partsupp", "ps_comment LIKE '%regular%'", true),
        ("part", "p_name LIKE '%green%'", true),
        ("part", "p_type LIKE '%BRASS'", true),
        ("part", "p_brand = 'Brand#45'", true),
        ("supplier", "s_comment LIKE '%Customer%Complaints%'", true),
        ("customer", "c_mktsegment = 'BUILDING'", true),
        ("customer", "c_name = 'no such customer'", true),
    ];
    for &(table, filter, exact) in cases {
        let sql = format!("SELECT * FROM {table} WHERE {filter}");
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        let a = sorted(rows(&fp, &sql).await);
        let b = sorted(rows(&pq, &sql).await);
        assert_eq!(a, b, "{filter}");
        let p = plan(&fp, &sql).await;
        assert!(p.contains("search=["), "{filter} not pushed:\n{p}");
        assert_eq!(!p.contains("FilterExec"), exact, "{filter}:\n{p}");
    }
    // A filter the search does not take is left to DataFusion.
    let p = plan(&fp, "SELECT * FROM lineitem WHERE upper(l_comment) = 'X'").await;
    assert!(p.contains("FilterExec") && !p.contains("search=["), "{p}");
}

/// Nulls, empty strings, non-ASCII letters whose Unicode case folds reach
/// ASCII (KELVIN SIGN, LONG S), and a binary column: every predicate gives
/// DataFusion's own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_cases_match_datafusion() {
    let dir = tempfile::tempdir().unwrap();
    let s: StringArray = [
        Some("apple"),
        None,
        Some(""),
        Some("Apple pie"),
        Some("\u{212A}iwi"), // KELVIN SIGN + "iwi"
        Some("kiwi"),
        Some("\u{17F}tar"), // LONG S + "tar"
        Some("star"),
        Some("straße"),
        Some("100%"),
        Some("a_b"),
        Some("ÀPPLE"),
        None,
        Some("ap"),
    ]
    .into_iter()
    .collect();
    let n = s.len();
    let b: BinaryArray = (0..n)
        .map(|i| match i % 4 {
            0 => None,
            1 => Some(vec![0xffu8, 0, b'x']),
            2 => Some(Vec::new()),
            _ => Some(b"abc".to_vec()),
        })
        .collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
        ("b", Arc::new(b) as ArrayRef),
    ])
    .unwrap();
    let (fp, pq) = table_both_ways(dir.path(), batch, 5, config()).await;
    let filters = [
        "s = ''",
        "s <> ''",
        "s = 'apple'",
        "s IN ('apple', NULL)",
        "s NOT IN ('apple', 'kiwi')",
        "s NOT IN ('apple', NULL)",
        "s LIKE '%'",
        "s LIKE ''",
        "s NOT LIKE '%p%'",
        "s LIKE '_tar'",
        "s LIKE 'a_'",
        "s LIKE '100\\%'",
        "s ILIKE 'APPLE%'",
        "s ILIKE '%iwi'",
        "s ILIKE 'star'",
        "s NOT ILIKE 'a%'",
        "s ILIKE 'àpple'",
        "starts_with(s, '')",
        "starts_with(s, 'ap')",
        "strpos(s, 'p') > 0",
        "strpos(s, '') > 0",
        "strpos(s, 'p') = 0",
        "contains(s, 'ß')",
        "b = X'616263'",
        "b <> X''",
        "b IN (X'ff0078', X'')",
    ];
    for f in filters {
        let sql = format!("SELECT id FROM t WHERE {f} ORDER BY id");
        assert_eq!(rows(&fp, &sql).await, rows(&pq, &sql).await, "{f}");
    }
    // Statistics: COUNT(*) and the null count come from the manifest.
    let sql = "SELECT count(*), count(s) FROM t";
    assert_eq!(rows(&fp, sql).await, rows(&pq, sql).await);
}

/// The scan's batching: a sparse selection (rows read one by one) and a
/// dense one (rows decoded over the span and filtered), on a string column
/// and a nullable one that the predicate does not touch, across parts and
/// batches of 7 rows, with and without a limit: DataFusion's own rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sparse_and_dense_selections_across_batches() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1000usize;
    let tag: StringArray = (0..n)
        .map(|i| {
            Some(if i % 97 == 3 {
                "hit"
            } else if i % 3 == 0 {
                "often"
            } else {
                "miss"
            })
        })
        .collect();
    let s: StringArray = (0..n)
        .map(|i| (i % 7 != 0).then(|| format!("value {i}")))
        .collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("tag", Arc::new(tag) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ])
    .unwrap();
    let (fp, pq) = table_both_ways(dir.path(), batch, 300, config().with_batch_size(7)).await;
    for sql in [
        "SELECT id, s FROM t WHERE tag = 'hit' ORDER BY id",
        "SELECT s, id FROM t WHERE tag = 'often' ORDER BY id",
        "SELECT s FROM t WHERE tag = 'often' AND s LIKE '%1%' ORDER BY s",
        "SELECT count(*), count(s) FROM t WHERE tag <> 'miss'",
        "SELECT * FROM (SELECT id, s FROM t WHERE tag = 'often' LIMIT 40) ORDER BY id",
        "SELECT count(*) FROM (SELECT s FROM t LIMIT 333)",
        "SELECT min(id), max(id), count(s) FROM t",
    ] {
        let a = rows(&fp, sql).await;
        // A limit without an order picks any rows: compare their count.
        if sql.contains("LIMIT 40") {
            assert_eq!(a.len(), rows(&pq, sql).await.len(), "{sql}");
        } else {
            assert_eq!(a, rows(&pq, sql).await, "{sql}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_external_table_limit_and_projection() {
    let t = tpch();
    let ctx = session_context(config());
    let loc = t.dir.join("lineitem.fpd");
    ctx.sql(&format!(
        "CREATE EXTERNAL TABLE li STORED AS FASTPAIR LOCATION '{}'",
        loc.display()
    ))
    .await
    .unwrap()
    .collect()
    .await
    .unwrap();
    let n = rows(&ctx, "SELECT count(*) AS n FROM li").await;
    let pq = parquet_ctx().await;
    assert_eq!(n, rows(&pq, "SELECT count(*) AS n FROM lineitem").await);
    // LIMIT: the scan is told and returns no more than asked.
    let r = rows(&ctx, "SELECT l_comment FROM li LIMIT 7").await;
    assert_eq!(r.len(), 7 + 4);
    let p = plan(&ctx, "SELECT l_comment FROM li LIMIT 7").await;
    assert!(
        p.contains("limit=7") && p.contains("projection=[l_comment]"),
        "{p}"
    );
    let r = rows(
        &ctx,
        "SELECT l_orderkey FROM li WHERE l_comment LIKE '%the%' LIMIT 3",
    )
    .await;
    assert_eq!(r.len(), 3 + 4);
    // Partitions: lineitem (60,175 rows) has 4 parts of 16,384.
    assert!(p.contains("partitions=3"), "{p}");
    // Damaged: a wrong location names the dataset.
    let e = ctx
        .sql("CREATE EXTERNAL TABLE bad STORED AS FASTPAIR LOCATION '/nonexistent/x.fpd'")
        .await
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("not a fastpair dataset") || e.contains("No such file"),
        "{e}"
    );
}

/// Every TPC-H table: dataset -> Parquet (`fastpair decompress`) gives
/// the generated table back, value for value and type for type.
#[test]
fn tpch_tables_round_trip() {
    let t = tpch();
    for name in TABLES {
        let ds = t.dir.join(format!("{name}.fpd"));
        let out = t.dir.join(format!("{name}.back.parquet"));
        fastpair_cli(&[
            "decompress",
            ds.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "-f",
        ]);
        let want = tpch_batches(name);
        let got = read_parquet(&out);
        let schema = want[0].schema();
        let want = datafusion::arrow::compute::concat_batches(&schema, &want).unwrap();
        let got = datafusion::arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
        assert_eq!(got.schema(), schema, "{name}");
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn fastpair_sql_binary() {
    let t = tpch();
    let exe = env!("CARGO_BIN_EXE_fastpair-sql");
    let run = |args: &[&str]| std::process::Command::new(exe).args(args).output().unwrap();
    let nation = format!("nation={}", t.dir.join("nation.fpd").display());
    let region = format!("region={}", t.dir.join("region.parquet").display());
    let q = "SELECT n_name, r_name FROM nation JOIN region ON n_regionkey = r_regionkey \
             WHERE n_name LIKE 'A%' ORDER BY n_name";
    let o = run(&["--table", &nation, "--table", &region, "--format", "csv", q]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "n_name,r_name\nALGERIA,AFRICA\nARGENTINA,AMERICA\n"
    );
    let o = run(&[
        "--table",
        &nation,
        "--format",
        "json",
        "SELECT n_nationkey FROM nation WHERE n_name = 'PERU'",
    ]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "[{\"n_nationkey\":17}]\n"
    );
    let o = run(&["--table", &nation, "SELECT count(*) AS n FROM nation"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("| 25 |"), "{text}");
    let o = run(&["--table", &nation, "SELECT nope FROM nation"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8(o.stderr).unwrap();
    assert!(
        e.starts_with("fastpair sql: error: ") && e.lines().count() == 1,
        "{e}"
    );
    let o = run(&["--table", "x=/nonexistent.fpd", "SELECT 1"]);
    let e = String::from_utf8(o.stderr).unwrap();
    assert!(
        e.contains("--table x") && e.contains("not a fastpair dataset"),
        "{e}"
    );
}

/// Min/max pruning: a pushed predicate no row of a part can match (by the
/// manifest's bounds) skips the part's files entirely. Proved by wiping the
/// pruned parts' files after the table is opened: the pruned queries still
/// give Parquet's rows, a query that must read those parts fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parts_pruned_by_statistics_are_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1200i64;
    let s: StringArray = (0..n).map(|i| Some(format!("k{i:05}"))).collect();
    let id = Int64Array::from_iter_values(0..n);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ])
    .unwrap();
    // Four parts: k00000..k00299, k00300..k00599, ...
    let (fp, pq) = table_both_ways(dir.path(), batch, 300, config()).await;
    let pruned = [
        "SELECT id, s FROM t WHERE s = 'k00450'",
        "SELECT id FROM t WHERE s LIKE 'k004%' ORDER BY id",
        "SELECT id FROM t WHERE s IN ('k00301', 'k00599') ORDER BY id",
        "SELECT count(*), sum(id) FROM t WHERE starts_with(s, 'k005')",
        "SELECT count(*) FROM t WHERE s = 'k00450' AND s LIKE '%5%'",
        "SELECT count(*) FROM t WHERE s = 'zzz'",
    ];
    for sql in pruned {
        let p = plan(&fp, sql).await;
        assert!(
            p.contains("parts=1/4") || (sql.contains("zzz") && p.contains("parts=0/4")),
            "{sql}: {p}"
        );
    }
    // Wipe parts 0, 2 and 3 (same sizes, so only reading them can tell).
    for p in [0, 2, 3] {
        let part = dir.path().join(format!("t.fpd/part-{p:05}"));
        for f in std::fs::read_dir(&part).unwrap() {
            let f = f.unwrap().path();
            let len = std::fs::metadata(&f).unwrap().len();
            std::fs::write(&f, vec![0u8; len as usize]).unwrap();
        }
    }
    for sql in pruned {
        assert_eq!(rows(&fp, sql).await, rows(&pq, sql).await, "{sql}");
    }
    let all = "SELECT count(*) FROM t WHERE s LIKE '%9%'";
    assert!(plan(&fp, all).await.contains("parts=4/4"));
    let r = fp.sql(all).await.unwrap().collect().await;
    assert!(r.is_err(), "a scan of the wiped parts must fail");
}

/// A one-part table is cut into row ranges, one partition each, and every
/// query gives Parquet's rows (pushed predicates searched once per part and
/// shared by its pieces; limits; projections of both kinds of column).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_part_tables_split_across_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let n = 200_000usize;
    let tag: StringArray = (0..n)
        .map(|i| {
            Some(if i % 997 == 5 {
                "hit"
            } else if i % 3 == 0 {
                "often"
            } else {
                "miss"
            })
        })
        .collect();
    let s: StringArray = (0..n)
        .map(|i| (i % 11 != 0).then(|| format!("v{}", i % 5000)))
        .collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("tag", Arc::new(tag) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ])
    .unwrap();
    let (fp, pq) = table_both_ways(dir.path(), batch, 1 << 20, config()).await;
    let p = plan(&fp, "SELECT count(*) FROM t WHERE tag = 'hit'").await;
    assert!(p.contains("parts=1/1, partitions=3"), "{p}");
    // The three pieces share one search and one reader per `.fpc` file:
    // each file opened (and its chunks checked) once.
    let fpc_bytes: u64 = std::fs::read_dir(dir.path().join("t.fpd/part-00000"))
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|f| f.extension().is_some_and(|e| e == "fpc"))
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    let (m, line) = scan_metrics(&fp, "SELECT id, s FROM t WHERE tag <> 'hit'").await;
    assert_eq!(count(&m, "pieces_opened"), 3, "{line}");
    assert_eq!(count(&m, "parts_searched"), 1, "{line}");
    assert_eq!(count(&m, "fpc_file_bytes") as u64, fpc_bytes, "{line}");
    for sql in [
        "SELECT count(*), sum(id), count(s) FROM t",
        "SELECT id, s FROM t WHERE tag = 'hit' ORDER BY id",
        "SELECT count(*), sum(id), min(s), max(s) FROM t WHERE tag = 'often'",
        "SELECT count(*), sum(id) FROM t WHERE s LIKE '%49%' AND tag <> 'miss'",
        "SELECT count(*) FROM (SELECT id FROM t LIMIT 150000)",
        "SELECT count(*) FROM (SELECT s FROM t WHERE tag = 'often' LIMIT 60000)",
    ] {
        assert_eq!(rows(&fp, sql).await, rows(&pq, sql).await, "{sql}");
    }
}

/// A second scan of the same files, in the session or in another one of
/// the process, takes the readers the first opened (their chunks read and
/// checked once), and gives the same rows; a file written again is opened
/// afresh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_scans_take_the_readers_kept() {
    let dir = tempfile::tempdir().unwrap();
    let n = 50_000usize;
    let s: StringArray = (0..n)
        .map(|i| (i % 13 != 0).then(|| format!("row {} of {}", i % 777, i % 5)))
        .collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("s", Arc::new(s) as ArrayRef),
    ])
    .unwrap();
    let (fp, pq) = table_both_ways(dir.path(), batch, 20_000, config()).await;
    let fpc_files = walk_fpc(&dir.path().join("t.fpd")).len();
    assert!(fpc_files >= 2, "{fpc_files}");
    let sql = "SELECT count(*), sum(id) FROM t WHERE s LIKE '%77 of 3%'";
    let (m1, line1) = scan_metrics(&fp, sql).await;
    assert_eq!(count(&m1, "fpc_readers_kept"), 0, "{line1}");
    assert!(count(&m1, "fpc_file_bytes") > 0, "{line1}");
    let (m2, line2) = scan_metrics(&fp, sql).await;
    assert_eq!(count(&m2, "fpc_readers_kept"), fpc_files, "{line2}");
    assert_eq!(count(&m2, "fpc_file_bytes"), 0, "{line2}");
    assert_eq!(rows(&fp, sql).await, rows(&pq, sql).await);
    // Another session of the process: the same readers.
    let other = SessionContext::new_with_config(config());
    other
        .register_table(
            "t",
            Arc::new(FastpairTable::open(dir.path().join("t.fpd")).unwrap()),
        )
        .unwrap();
    let (m3, line3) = scan_metrics(&other, sql).await;
    assert_eq!(count(&m3, "fpc_readers_kept"), fpc_files, "{line3}");
    // The dataset written again in place, other rows: opened afresh, the
    // new rows read.
    let t2: StringArray = (0..n).map(|i| Some(format!("new {}", i % 3))).collect();
    let id = Int64Array::from_iter_values(0..n as i64);
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("s", Arc::new(t2) as ArrayRef),
    ])
    .unwrap();
    std::fs::remove_dir_all(dir.path().join("t.fpd")).unwrap();
    let (fp2, pq2) = table_both_ways(dir.path(), batch, 20_000, config()).await;
    let sql = "SELECT count(*), sum(id) FROM t WHERE s LIKE '%w 2%'";
    let (m4, line4) = scan_metrics(&fp2, sql).await;
    assert_eq!(count(&m4, "fpc_readers_kept"), 0, "{line4}");
    assert_eq!(rows(&fp2, sql).await, rows(&pq2, sql).await);
}

/// The `.fpc` files under `dir`.
fn walk_fpc(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk_fpc(&p));
        } else if p.extension().is_some_and(|x| x == "fpc") {
            out.push(p);
        }
    }
    out
}

/// The scan node's metrics of `sql` run over `ctx` (summed over its
/// partitions; one fastpair scan in the plan), and the `FastpairScanExec`
/// line of `EXPLAIN ANALYZE` of the same query.
async fn scan_metrics(ctx: &SessionContext, sql: &str) -> (MetricsSet, String) {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    fn find(p: &Arc<dyn ExecutionPlan>) -> Option<MetricsSet> {
        if p.name() == "FastpairScanExec" {
            return p.metrics();
        }
        p.children().into_iter().find_map(find)
    }
    let m = find(&plan).expect("a FastpairScanExec with metrics");
    let text = rows(ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    let line = text
        .into_iter()
        .find(|l| l.contains("FastpairScanExec"))
        .expect("the scan in EXPLAIN ANALYZE");
    (m.aggregate_by_name(), line)
}

fn count(m: &MetricsSet, name: &str) -> usize {
    let v = match name {
        "output_rows" => m.output_rows(),
        "elapsed_compute" => m.elapsed_compute(),
        _ => m.sum_by_name(name).map(|v| v.as_usize()),
    };
    v.unwrap_or_else(|| panic!("no metric {name}"))
}

/// `EXPLAIN ANALYZE` over a fastpair table shows the scan's metrics, with
/// the real counts: rows out equal to Parquet's count, rows selected by the
/// pushed predicate, rows in the files, `.fpc` rows decoded only for
/// projected string columns, bytes read from the Parquet side files, and
/// named times inside `elapsed_compute`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_analyze_shows_scan_metrics() {
    let fp = fastpair_ctx().await;
    let pq = parquet_ctx().await;
    let n_rows = |sql: &str| {
        let pq = &pq;
        let sql = sql.to_string();
        async move {
            let b = pq.sql(&sql).await.unwrap().collect().await.unwrap();
            let c = b[0]
                .column(0)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .value(0);
            c as usize
        }
    };
    let lineitem = n_rows("SELECT count(*) FROM lineitem").await;
    let hits = n_rows("SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'").await;
    assert!(hits > 0 && hits < lineitem / 10, "{hits} of {lineitem}");

    // Strings and a Parquet column out, one pushed predicate.
    let sql = "SELECT l_orderkey, l_comment FROM lineitem WHERE l_comment LIKE '%special%'";
    let (m, line) = scan_metrics(&fp, sql).await;
    for name in [
        "output_rows=",
        "elapsed_compute=",
        "parts_pruned_statistics=4 total → 4 matched",
        "input_rows=",
        "rows_selected=",
        "fpc_rows_decoded=",
        "parquet_bytes_read=",
        "fpc_file_bytes=",
        "search_time=",
        "fpc_decode_time=",
        "fpc_arrow_time=",
        "parquet_open_time=",
        "parquet_decode_time=",
    ] {
        assert!(line.contains(name), "{name} not in {line}");
    }
    assert_eq!(count(&m, "output_rows"), hits);
    assert_eq!(count(&m, "rows_selected"), hits);
    assert_eq!(count(&m, "input_rows"), lineitem);
    assert_eq!(count(&m, "pieces_opened"), 4);
    assert_eq!(count(&m, "parts_searched"), 4);
    // Each selected row read, or the rows a dense batch spans.
    let decoded = count(&m, "fpc_rows_decoded");
    assert!(decoded >= hits && decoded <= lineitem, "{line}");
    let pq_bytes = count(&m, "parquet_bytes_read");
    assert!(pq_bytes > 0, "{line}");
    // Opened by this scan, or kept from another test's scan of the same
    // files in this process.
    assert!(
        count(&m, "fpc_file_bytes") + count(&m, "fpc_readers_kept") > 0,
        "{line}"
    );
    let times: usize = [
        "search_time",
        "search_wait_time",
        "fpc_decode_time",
        "fpc_arrow_time",
        "parquet_open_time",
        "parquet_decode_time",
    ]
    .iter()
    .map(|t| count(&m, t))
    .sum();
    assert!(count(&m, "search_time") > 0, "{line}");
    assert!(count(&m, "elapsed_compute") >= times, "{line}");

    // count(*): the search alone, no string decoded, no Parquet read.
    let sql = "SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'";
    let (m, line) = scan_metrics(&fp, sql).await;
    assert_eq!(count(&m, "rows_selected"), hits, "{line}");
    assert_eq!(count(&m, "output_rows"), hits, "{line}");
    assert_eq!(count(&m, "fpc_rows_decoded"), 0, "{line}");
    assert_eq!(count(&m, "parquet_bytes_read"), 0, "{line}");

    // No predicate: every row selected and out; a dense decode of every row.
    let sql = "SELECT max(l_shipmode), sum(l_quantity) FROM lineitem";
    let (m, line) = scan_metrics(&fp, sql).await;
    assert_eq!(count(&m, "input_rows"), lineitem, "{line}");
    assert_eq!(count(&m, "rows_selected"), lineitem, "{line}");
    assert_eq!(count(&m, "output_rows"), lineitem, "{line}");
    assert_eq!(count(&m, "fpc_rows_decoded"), lineitem, "{line}");
    assert_eq!(count(&m, "parts_searched"), 0, "{line}");
    assert!(count(&m, "parquet_bytes_read") > 0, "{line}");
}
