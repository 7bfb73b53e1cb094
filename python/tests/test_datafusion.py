"""SQL over a fastpair dataset from Python: the dataset (written here from a
pyarrow table by the `fastpair` CLI) registered in the real `datafusion`
package through the `fastpair-datafusion` wheel's FFI table provider, and
every answer compared with pyarrow (or DataFusion) over the same rows.

Skips without the `datafusion` package (the GPU machine has none) unless
FASTPAIR_REQUIRE_DATAFUSION=1 (python/test.sh), where a missing package or
wheel is a failure."""

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

if os.environ.get("FASTPAIR_REQUIRE_DATAFUSION") == "1":
    import datafusion
    import fastpair_datafusion as fpd
else:
    datafusion = pytest.importorskip("datafusion")
    fpd = pytest.importorskip("fastpair_datafusion")

REPO = Path(__file__).resolve().parents[2]
N = 12_000
WORDS = ["alpha", "beta gamma", "special delta", "ünïcödé ✓ special", "Customer x Complaints", ""]


def fastpair_bin() -> Path:
    exe = Path(os.environ.get("FASTPAIR_BIN", REPO / "target" / "release" / "fastpair"))
    if not exe.is_file():
        pytest.fail(f"{exe} is missing: cargo build --release --features cli (or set FASTPAIR_BIN)")
    return exe


def source_table() -> pa.Table:
    """Strings with nulls and non-ASCII text, a binary column, numbers and
    dates: every kind of column a dataset keeps (strings as .fpc files, the
    rest in Parquet)."""
    comment = [None if i % 13 == 5 else f"{WORDS[i % len(WORDS)]} {i % 89}" for i in range(N)]
    kind = [["MAIL", "SHIP", "AIR", "RAIL"][i % 4] for i in range(N)]
    blob = [None if i % 7 == 0 else bytes([i % 256, 0, 255]) for i in range(N)]
    return pa.table(
        {
            "id": pa.array(range(N), pa.int64()),
            "comment": pa.array(comment, pa.string()),
            "kind": pa.array(kind, pa.string()),
            "price": pa.array([i * 0.25 for i in range(N)], pa.float64()),
            "blob": pa.array(blob, pa.binary()),
            "day": pa.array([i % 365 for i in range(N)], pa.int32()).cast(pa.date32()),
        }
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("ds")
    t = source_table()
    pq.write_table(t, d / "t.parquet")
    # Several parts, so a scan spans parts, partitions and part pruning.
    subprocess.run(
        [fastpair_bin(), "compress", d / "t.parquet", "-o", d / "t.fpd", "--part-rows", "5000", "-q"],
        check=True,
    )
    return t, d


@pytest.fixture
def ctx(data):
    _, d = data
    c = datafusion.SessionContext()
    c.register_table("t", fpd.Table(d / "t.fpd"))
    c.register_parquet("p", str(d / "t.parquet"))
    return c


def run(ctx, sql) -> pa.Table:
    return ctx.sql(sql).to_arrow_table()


def sorted_rows(t: pa.Table, key="id"):
    return t.sort_by(key).to_pylist()


# (SQL filter, the same filter in pyarrow compute, pushed exactly: no
# FilterExec left above the scan)
FILTERS = [
    ("comment LIKE '%special%'", lambda t: pc.match_like(t["comment"], "%special%"), True),
    ("comment NOT LIKE 'beta%'", lambda t: pc.invert(pc.match_like(t["comment"], "beta%")), True),
    ("comment LIKE '%Customer%Complaints%'", lambda t: pc.match_like(t["comment"], "%Customer%Complaints%"), True),
    ("kind = 'AIR'", lambda t: pc.equal(t["kind"], "AIR"), True),
    ("kind <> 'AIR'", lambda t: pc.not_equal(t["kind"], "AIR"), True),
    ("kind IN ('MAIL', 'RAIL')", lambda t: pc.is_in(t["kind"], pa.array(["MAIL", "RAIL"])), True),
    ("starts_with(comment, 'alpha 1')", lambda t: pc.starts_with(t["comment"], "alpha 1"), True),
    ("strpos(comment, 'ödé') > 0", lambda t: pc.match_substring(t["comment"], "ödé"), True),
    ("comment ILIKE '%GAMMA 4%'", lambda t: pc.match_like(t["comment"], "%GAMMA 4%", ignore_case=True), False),
    (
        "comment LIKE '%delta%' AND price > 1000",
        lambda t: pc.and_(pc.match_like(t["comment"], "%delta%"), pc.greater(t["price"], 1000)),
        False,
    ),
]


@pytest.mark.parametrize("sql_filter,arrow_filter,exact", FILTERS, ids=[f[0] for f in FILTERS])
def test_filters_match_pyarrow_and_are_pushed(data, ctx, sql_filter, arrow_filter, exact):
    t, _ = data
    got = run(ctx, f"SELECT * FROM t WHERE {sql_filter}")
    mask = pc.fill_null(arrow_filter(t), False)
    want = t.filter(mask)
    assert got.num_rows == want.num_rows > 0
    assert got.schema == t.schema
    assert sorted_rows(got) == sorted_rows(want)
    plan = "\n".join(str(v) for v in run(ctx, f"EXPLAIN SELECT * FROM t WHERE {sql_filter}").column("plan").to_pylist())
    # The scan runs inside the extension, behind the FFI boundary.
    assert "FFI_ExecutionPlan" in plan, plan
    # Exact string predicates were pushed into the scan (searched on the
    # codes) and DataFusion dropped them; the others are re-checked.
    assert ("FilterExec" not in plan) == exact, plan


def test_whole_table_schema_and_counts(data, ctx):
    t, d = data
    table = fpd.Table(d / "t.fpd")
    assert table.num_rows == N
    assert pa.schema(table) == t.schema
    got = run(ctx, "SELECT * FROM t")
    assert sorted_rows(got) == t.to_pylist()
    got = run(ctx, "SELECT count(*) AS n, count(comment) AS c, count(blob) AS b FROM t").to_pylist()
    assert got == [{"n": N, "c": N - t["comment"].null_count, "b": N - t["blob"].null_count}]


def test_sql_equals_datafusion_over_the_parquet_file(ctx):
    """Aggregates, projections, limits and joins: the same answer as the
    Parquet file the dataset was written from."""
    queries = [
        "SELECT kind, count(*) AS n, sum(price) AS s, min(comment) AS lo, max(comment) AS hi FROM {t} "
        "WHERE comment LIKE '%a%' GROUP BY kind ORDER BY kind",
        "SELECT day, count(DISTINCT comment) AS n FROM {t} WHERE kind IN ('SHIP', 'AIR') GROUP BY day ORDER BY day",
        "SELECT id, upper(comment) AS u FROM {t} WHERE comment NOT LIKE '%special%' ORDER BY id LIMIT 25",
        "SELECT a.id, b.kind FROM {t} a JOIN {t} b ON a.id = b.id + 1 "
        "WHERE a.comment LIKE 'special%' AND b.kind = 'SHIP' ORDER BY a.id",
        "SELECT count(*) AS n FROM {t} WHERE blob = X'0500ff'",
    ]
    for q in queries:
        a = run(ctx, q.format(t="t"))
        b = run(ctx, q.format(t="p"))
        assert a.num_rows > 0, q
        assert a.to_pylist() == b.to_pylist(), q


def test_register_helper_and_errors(data, tmp_path):
    _, d = data
    c = datafusion.SessionContext()
    table = fpd.register(c, "x", d / "t.fpd")
    assert "rows=12000" in repr(table)
    assert c.sql("SELECT count(*) AS n FROM x WHERE kind = 'SHIP'").to_pylist() == [{"n": N // 4}]
    with pytest.raises(fpd.DatasetError, match="fastpair-dataset.json"):
        fpd.Table(tmp_path / "missing.fpd")
    # A damaged dataset (a file shorter than the manifest says) is refused
    # when opened, before any query.
    broken = tmp_path / "broken.fpd"
    subprocess.run(["cp", "-r", d / "t.fpd", broken], check=True)
    victim = next(broken.glob("part-00001/*.fpc"))
    victim.write_bytes(victim.read_bytes()[:-1])
    with pytest.raises(fpd.DatasetError):
        fpd.Table(broken)


def test_pyarrow_dataset_style_scans(data):
    """fastpair_datafusion.dataset(path): to_table with a projection and a
    SQL filter, batches, counts; the same rows as pyarrow's own filter over
    the source table."""
    t, d = data
    ds = fpd.dataset(d / "t.fpd")
    assert ds.num_rows == N
    assert ds.schema == t.schema
    assert sorted_rows(ds.to_table()) == t.to_pylist()
    want = t.filter(pc.fill_null(pc.match_like(t["comment"], "%special%"), False)).select(["id", "comment"])
    got = ds.to_table(columns=["id", "comment"], filter="comment LIKE '%special%'")
    assert got.column_names == ["id", "comment"]
    assert sorted_rows(got) == want.to_pylist()
    sc = ds.scanner(columns=["id", "kind"], filter="kind = 'RAIL' AND id < 1000")
    assert sc.projected_schema == pa.schema([t.schema.field("id"), t.schema.field("kind")])
    batches = list(sc.to_batches())
    got = pa.Table.from_batches(batches, schema=sc.projected_schema)
    assert sorted_rows(got) == [{"id": i, "kind": "RAIL"} for i in range(3, 1000, 4)]
    assert ds.count_rows(filter="comment NOT LIKE '%a%'") == pc.sum(
        pc.fill_null(pc.invert(pc.match_like(t["comment"], "%a%")), False)
    ).as_py()
    assert sc.to_reader().read_all().num_rows == 250


def test_fastpair_dataset_is_the_sql_wheels(data):
    """`fastpair.dataset` (the column package) hands out the SQL wheel's
    dataset: the same rows."""
    import fastpair

    t, d = data
    ds = fastpair.dataset(d / "t.fpd")
    assert isinstance(ds, fpd.Dataset)
    assert ds.count_rows(filter="kind = 'MAIL'") == N // 4
