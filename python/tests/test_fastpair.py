"""The fastpair Python package: writing every accepted input, reading rows,
ranges and takes into pyarrow without copying, and errors."""

import os
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastpair

CORPUS = Path(os.environ.get("FASTPAIR_CORPUS", Path(__file__).resolve().parents[2] / "target" / "corpus"))
REQUIRE_CORPUS = os.environ.get("FASTPAIR_REQUIRE_CORPUS") == "1"

SAMPLE = ["GET /index.html", None, "", "ünïcödé ✓", "GET /about.html HTTP/1.1 200"] + [
    None if i % 7 == 3 else ["a", "bb", "a longer value here", ""][i % 4] for i in range(300)
]


def roundtrip(tmp_path, values, **kw):
    p = tmp_path / "col.fpc"
    fastpair.write(p, values, **kw)
    return fastpair.open(p)


@pytest.mark.parametrize(
    "make",
    [
        lambda: SAMPLE,
        lambda: pa.array(SAMPLE, pa.string()),
        lambda: pa.array(SAMPLE, pa.large_string()),
        lambda: pa.array(SAMPLE, pa.string_view()),
        lambda: pa.array([None if v is None else v.encode() for v in SAMPLE], pa.binary()),
        lambda: pa.array([None if v is None else v.encode() for v in SAMPLE], pa.large_binary()),
        lambda: pa.array(SAMPLE, pa.string()).dictionary_encode(),
        lambda: pa.chunked_array([pa.array(SAMPLE[:100]), pa.array(SAMPLE[100:])]),
        lambda: pa.array(SAMPLE, pa.string()).slice(3, 200),
    ],
)
def test_inputs_roundtrip_with_nulls(tmp_path, make):
    values = make()
    want = values.to_pylist() if hasattr(values, "to_pylist") else list(values)
    want = [v.decode() if isinstance(v, bytes) else v for v in want]
    f = roundtrip(tmp_path, values, chunk_rows=64)
    assert len(f) == len(want)
    assert [f[i] for i in range(len(f))] == want
    arr = f.read()
    assert arr.type == pa.large_string()
    assert arr.to_pylist() == want
    assert arr.null_count == sum(v is None for v in want)
    assert f.read(10, 20).to_pylist() == want[10:20]
    assert f[10:20].to_pylist() == want[10:20]
    assert f[-1] == want[-1]


def test_bytes_mode_and_non_utf8(tmp_path):
    vals = [b"ok", b"\xff\xfe raw", None, b""]
    p = tmp_path / "b.fpc"
    fastpair.write(p, vals)
    f = fastpair.open(p, text=False)
    assert [f[i] for i in range(4)] == vals
    assert f.read().type == pa.large_binary()
    assert f.read().to_pylist() == vals
    t = fastpair.open(p)
    assert t[0] == "ok"
    with pytest.raises(ValueError, match="row 1 is not valid UTF-8"):
        t[1]
    with pytest.raises(ValueError, match="row 1 is not valid UTF-8"):
        t.read()


@pytest.mark.parametrize("codec", ["onpair16", "fsst12", "onpair12"])
def test_text_read_of_tokens_that_split_characters(tmp_path, codec):
    # Random CJK characters: rare ones are coded as single bytes >= 0x80, so
    # tokens cut characters and the text read must check those rows. Alone
    # (most rows unproven) and as every 50th row of an ASCII column (few).
    rng = random.Random(11)
    zh = ["".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(1 + i % 30)) for i in range(3000)]
    mixed = [zh[i % 3000] if i % 50 == 7 else f"row {i} of an ascii column" for i in range(6000)]
    for name, vals in [("zh", zh), ("mixed", mixed)]:
        p = tmp_path / f"{name}.fpc"
        fastpair.write(p, vals, codec=codec, chunk_rows=2048)
        f = fastpair.open(p)
        assert f.read().to_pylist() == vals
        assert f.read(5, 2500).to_pylist() == vals[5:2500]
        # A bytes column whose row k is not UTF-8 (a cut character), read as
        # text: the error names row k (and the rows before it still read).
        k = len(vals) - 101
        raw = [v.encode() for v in vals]
        raw[k] = raw[k] + "中".encode()[:2]
        fastpair.write(p, raw, codec=codec, chunk_rows=2048)
        t = fastpair.open(p)
        with pytest.raises(ValueError, match=f"row {k} is not valid UTF-8"):
            t.read()
        assert t.read(0, k).to_pylist() == vals[:k]
        assert fastpair.open(p, text=False).read().to_pylist() == raw


def test_pandas_series(tmp_path):
    pd = pytest.importorskip("pandas")
    s = pd.Series(["x", None, "yy", "zzz"])
    f = roundtrip(tmp_path, s)
    assert f.read().to_pylist() == ["x", None, "yy", "zzz"]


def test_polars_series(tmp_path):
    pl = pytest.importorskip("polars")
    s = pl.Series("s", ["x", None, "yy"])
    f = roundtrip(tmp_path, s)
    assert f.read().to_pylist() == ["x", None, "yy"]


def test_read_is_zero_copy(tmp_path):
    f = roundtrip(tmp_path, SAMPLE)
    h = f.read_handle()
    arr = pa.array(h)
    validity, offsets, values = arr.buffers()
    assert values.address == h.values_address
    assert offsets.address == h.offsets_address
    # The decoder's buffers outlive the handle: the array holds them.
    del h
    assert arr.to_pylist() == SAMPLE
    t = f._take([5, 1, 5])
    arr = pa.array(t)
    assert arr.buffers()[2].address == t.values_address
    assert arr.to_pylist() == [SAMPLE[5], SAMPLE[1], SAMPLE[5]]


def test_read_array_holds_the_decoders_buffers(tmp_path):
    # `read()` hands the decoder's buffers to pyarrow (imported with a known
    # type, no schema): pyarrow allocates nothing for them, the array keeps
    # them alive after the file is gone, and nulls and both types survive.
    vals = SAMPLE + [None, "", "中文"]
    for text in (True, False):
        p = tmp_path / f"n{text}.fpc"
        fastpair.write(p, vals)
        f = fastpair.open(p, text=text)
        f.read()
        before = pa.total_allocated_bytes()
        arr = f.read()
        assert pa.total_allocated_bytes() == before
        del f
        want = vals if text else [None if v is None else v.encode() for v in vals]
        assert arr.type == (pa.large_string() if text else pa.large_binary())
        assert arr.null_count == vals.count(None)
        assert arr.to_pylist() == want
        arr.validate(full=True)


def test_take(tmp_path):
    f = roundtrip(tmp_path, SAMPLE, chunk_rows=50)
    rng = random.Random(1)
    idx = [rng.randrange(len(SAMPLE)) for _ in range(500)] + [-1]
    assert f.take(idx).to_pylist() == [SAMPLE[i] for i in idx]
    with pytest.raises(IndexError, match="row 10000 is out of range"):
        f.take([0, 10000])


def test_errors_are_python_exceptions_with_one_line_messages(tmp_path):
    with pytest.raises(fastpair.FastpairError) as e:
        fastpair.open(tmp_path / "missing.fpc")
    assert "missing.fpc" in str(e.value) and "\n" not in str(e.value)
    bad = tmp_path / "bad.fpc"
    bad.write_bytes(b"not a fastpair file at all, clearly" * 10)
    with pytest.raises(fastpair.FastpairError) as e:
        fastpair.open(bad)
    assert str(e.value).startswith(str(bad) + ": ") and "\n" not in str(e.value)
    f = roundtrip(tmp_path, ["a"])
    with pytest.raises(IndexError):
        f[1]
    # Indices no machine integer holds, and negative explicit bounds, are
    # IndexErrors too (slices still count from the end).
    for bad_row in (lambda: f[2**70], lambda: f.take([0, -(2**80)]), lambda: f.read(-1)):
        with pytest.raises(IndexError, match="out of range"):
            bad_row()
    assert f[-1:].to_pylist() == ["a"]
    with pytest.raises((ValueError, fastpair.FastpairError), match="is a directory"):
        fastpair.open(tmp_path)
    with pytest.raises(TypeError, match="expected str, bytes or None"):
        fastpair.write(tmp_path / "x.fpc", ["a", 3])
    with pytest.raises(ValueError, match="unknown codec"):
        fastpair.write(tmp_path / "x.fpc", ["a"], codec="zip")
    with pytest.raises(ValueError, match="cannot write an Arrow array of type"):
        fastpair.write(tmp_path / "x.fpc", pa.array([1, 2]))
    assert not (tmp_path / "x.fpc").exists()


def test_read_bounds_and_the_native_entry_points(tmp_path):
    # `read`, `take` and `get` are the native class's own methods: a call
    # enters Rust without a Python frame in between (the fixed cost of a
    # small read; bench/PARQUET.md).
    for name in ("read", "read_handle", "take", "get"):
        assert name not in fastpair.File.__dict__, name
    p = tmp_path / "b.fpc"
    fastpair.write(p, SAMPLE)
    f = fastpair.File(p)  # a pathlib.Path works as well as a str
    assert isinstance(f, fastpair.File) and len(f) == len(SAMPLE)
    assert repr(f) == f"fastpair.File({str(p)!r}, rows={len(SAMPLE)}, text=True)"
    assert f.read(stop=3).to_pylist() == SAMPLE[:3]
    assert f.read(start=len(SAMPLE) - 2).to_pylist() == SAMPLE[-2:]
    assert f.read(None, None).to_pylist() == SAMPLE
    assert f.read(4, 4).to_pylist() == []
    assert f.read_handle(stop=2).__len__() == 2
    for bad in ((2**70,), (0, 2**64), (-(2**80),), (0, -1)):
        with pytest.raises(IndexError, match="out of range"):
            f.read(*bad)
    with pytest.raises(IndexError, match="out of range"):
        f.read(0, len(SAMPLE) + 1)
    with pytest.raises(TypeError, match="must be integers, not str"):
        f.read("0")
    with pytest.raises(TypeError, match="must be integers, not float"):
        f.take([0, 1.5])
    assert f.take(range(3)).to_pylist() == SAMPLE[:3]
    assert f.take((i for i in [-1, 0])).to_pylist() == [SAMPLE[-1], SAMPLE[0]]
    with pytest.raises(IndexError, match=f"row {2**64} is out of range"):
        f.take([2**64])


def test_scan_gpu_without_gpu_raises(tmp_path):
    f = roundtrip(tmp_path, SAMPLE)
    try:
        f.scan_gpu()
    except fastpair.FastpairError as e:
        assert "\n" not in str(e)
    # With a GPU this succeeds; test_gpu.py checks the result.


def test_grep_on_the_gpu_is_the_cpu_answer_or_a_clear_error(tmp_path):
    f = roundtrip(tmp_path, SAMPLE)
    needle = next(v for v in SAMPLE if v)[:2]
    cpu = f.grep(needle, indices=True).to_pylist()
    try:
        gpu = f.grep(needle, indices=True, gpu=True).to_pylist()
    except fastpair.FastpairError as e:
        # No usable GPU here: one line saying so (test_gpu.py checks the
        # GPU's answers where there is one).
        assert "\n" not in str(e) and str(e)
        return
    assert gpu == cpu


def corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("*.txt"))


def corpus_columns():
    """(name, bytes of the column file) for every corpus column under
    FASTPAIR_CORPUS (else target/corpus); without one a small synthetic set
    (ASCII, multi-byte UTF-8, not UTF-8), and a failure under
    FASTPAIR_REQUIRE_CORPUS=1."""
    files = corpus_files()
    if files:
        return [(p.name, p.read_bytes()) for p in files]
    assert not REQUIRE_CORPUS, f"FASTPAIR_REQUIRE_CORPUS=1 but no corpus column under {CORPUS}"
    return [
        ("synthetic_ascii", "".join(f"GET /page/{i * 7919 % 5000} HTTP/1.1 {200 + i % 3}\n" for i in range(30000)).encode()),
        ("synthetic_utf8", "".join(f"{'äöü € 漢字 ' * (i % 4)}{i}\n" for i in range(20000)).encode()),
        ("synthetic_binary", b"".join(bytes([0xFF, i % 251, 0xC3]) * (i % 6) + b"\n" for i in range(20000))),
    ]


def test_corpus_parquet_to_fastpair_to_arrow(tmp_path):
    """Every corpus column (a null every 13th row): Parquet (pyarrow) ->
    fastpair -> pyarrow, identical values and nulls."""
    for name, data in corpus_columns():
        rows = data[:-1].split(b"\n") if data.endswith(b"\n") else data.split(b"\n")
        try:
            data.decode("utf-8")
            text = True
        except UnicodeDecodeError:
            text = False
        vals = [None if i % 13 == 5 else (v.decode() if text else v) for i, v in enumerate(rows)]
        src = pa.array(vals, pa.string() if text else pa.binary())
        pq.write_table(pa.table({"c": src}), tmp_path / "c.parquet")
        col = pq.read_table(tmp_path / "c.parquet")["c"]
        fastpair.write(tmp_path / "c.fpc", col)
        f = fastpair.open(tmp_path / "c.fpc", text=text)
        got = f.read()
        assert got.to_pylist() == vals, name
        assert got.null_count == src.null_count


def test_a_single_value_or_a_mapping_is_not_a_column(tmp_path):
    # Iterating "hello" would write five one-character rows, a dict its keys.
    p = tmp_path / "x.fpc"
    for bad in ("hello", b"hello", bytearray(b"hi"), {"a": "1", "b": "2"}, {"a", "b"}):
        with pytest.raises(TypeError):
            fastpair.write(p, bad)
    assert not p.exists()
    fastpair.write(p, ["hello"])
    assert fastpair.open(p)[0] == "hello"
    fastpair.write(p, list({"a": "1", "b": "2"}.values()))
    assert fastpair.open(p).read().to_pylist() == ["1", "2"]


def test_utf8_errors_name_the_file_row(tmp_path):
    # The error names the row's number in the file, not its position in the
    # array being built (a range's or a take's).
    p = tmp_path / "bad.fpc"
    vals = [f"row {i}".encode() for i in range(5000)]
    vals[3] = b"\xff bad"
    vals[4321] = b"cut \xe4\xb8"
    fastpair.write(p, vals, chunk_rows=1000)
    t = fastpair.open(p)
    with pytest.raises(ValueError, match="row 3 is not valid UTF-8"):
        t.take([3])
    with pytest.raises(ValueError, match="row 3 is not valid UTF-8"):
        t.take([10, 3, 0])
    with pytest.raises(ValueError, match="row 4321 is not valid UTF-8"):
        t.read(4000, 4500)
    with pytest.raises(ValueError, match="row 4321 is not valid UTF-8"):
        t.take([4321])
    assert t.take([0, 10]).to_pylist() == ["row 0", "row 10"]


def test_filter_and_grep(tmp_path):
    rows = ["GET /api/users", "POST /login", None, "GET /api/items", "timeout", "50%", "ÉTÉ"]
    p = tmp_path / "s.fpc"
    fastpair.write(p, pa.array(rows, pa.large_string()))
    f = fastpair.open(p)
    assert f.grep("GET").to_pylist() == ["GET /api/users", "GET /api/items"]
    assert f.grep("get", ignore_case=True, indices=True).to_pylist() == [0, 3]
    assert f.grep("GET /api/%", like=True, indices=True).to_pylist() == [0, 3]
    assert f.grep("%\\%", like=True).to_pylist() == ["50%"]
    # A null row never matches, inverted or not.
    assert f.grep("GET", invert=True, indices=True).to_pylist() == [1, 4, 5, 6]
    assert f.filter(isin=["timeout", "50%", "nope"], indices=True).to_pylist() == [4, 5]
    assert f.filter(prefix="POST").to_pylist() == ["POST /login"]
    assert f.filter(suffix=b"out").to_pylist() == ["timeout"]
    assert f.filter(contains_all=["api", "items"]).to_pylist() == ["GET /api/items"]
    assert f.filter(contains_any=["login", "ÉT"], indices=True).to_pylist() == [1, 6]
    assert f.filter(like="_T_").to_pylist() == ["ÉTÉ"]
    assert f.filter(equals="nothing").to_pylist() == []
    idx = f.filter(contains="/", indices=True)
    assert idx.type == pa.uint64()
    assert f.take(idx.to_pylist()).to_pylist() == f.filter(contains="/").to_pylist()
    with pytest.raises(ValueError):
        f.filter(prefix="a", suffix="b")
    with pytest.raises(ValueError):
        f.filter(like="ab\\", escape="\\")
    with pytest.raises(TypeError):
        f.filter(isin="abc")
    # As grep: a newline separates patterns, any of which selects a row.
    assert f.grep("login\ntime", indices=True).to_pylist() == [1, 4]
    assert f.grep("50%\ntimeout", equals=True).to_pylist() == ["timeout", "50%"]
    assert f.grep("LOGIN\nÉT", ignore_case=True, indices=True).to_pylist() == [1, 6]
    with pytest.raises(ValueError):
        f.grep("GET\nPOST", prefix=True)


def test_grep_matches_a_naive_scan_on_corpus_columns(tmp_path):
    """The corpus's first four Loghub columns (else its first four columns);
    without a corpus synthetic log lines (a failure under
    FASTPAIR_REQUIRE_CORPUS=1)."""
    files = ([p for p in corpus_files() if "loghub" in p.name] or corpus_files())[:4]
    columns = [(p.name, p.read_bytes()) for p in files]
    if not columns:
        assert not REQUIRE_CORPUS, f"FASTPAIR_REQUIRE_CORPUS=1 but no corpus column under {CORPUS}"
        lines = (
            f"2024-01-{i % 28 + 1:02} {['INFO', 'ERROR', 'WARN'][i % 3]} srv-{i % 7} req={i * 7919 % 1000} a\n"
            for i in range(20000)
        )
        columns = [("synthetic_logs", "".join(lines).encode())]
    for name, data in columns:
        rows = data[:-1].split(b"\n")
        fastpair.write(tmp_path / "g.fpc", pa.array(rows, pa.large_binary()))
        f = fastpair.open(tmp_path / "g.fpc", text=False)
        for needle in [b"ERROR", b"INFO", b"a", b"zzqq"]:
            want = [i for i, r in enumerate(rows) if needle in r]
            assert f.grep(needle, indices=True).to_pylist() == want, (name, needle)


def test_write_logs_codec_and_cli_settings(tmp_path):
    """codec="logs" writes log-template chunks (much smaller on log lines
    than the token codecs) that read back exactly, as the default
    log_templates="auto" does where they are smaller; the CLI's other compress
    settings (chunk_bytes, per_chunk_dict, memory) are accepted, and a
    memory budget below one chunk is a ValueError."""
    lines = [
        f"2024-01-{i % 28 + 1:02} 12:{i % 60:02}:{i * 7 % 60:02} INFO srv-{i % 16} "
        f"req={i * 7919 % 1000000} GET /api/v1/items status={[200, 404, 500][i % 3]}"
        for i in range(20000)
    ] + [None, ""]
    logs = tmp_path / "logs.fpc"
    plain = tmp_path / "plain.fpc"
    info = fastpair.write(logs, lines, codec="logs")
    assert info["rows"] == len(lines)
    plain_info = fastpair.write(plain, lines, codec="onpair16", log_templates="off")
    assert info["file_bytes"] < plain_info["file_bytes"]
    # The default (log_templates="auto") finds the templates too, with any
    # codec; "off" keeps every chunk coded.
    auto_info = fastpair.write(tmp_path / "auto.fpc", lines, codec="onpair16")
    assert auto_info["file_bytes"] < plain_info["file_bytes"]
    assert fastpair.open(tmp_path / "auto.fpc").read().to_pylist() == lines
    with pytest.raises(ValueError, match="log_templates"):
        fastpair.write(tmp_path / "z.fpc", ["a"], log_templates="sometimes")
    f = fastpair.open(logs)
    assert f.read().to_pylist() == lines
    assert f[12345] == lines[12345]
    small = tmp_path / "small.fpc"
    fastpair.write(
        small,
        lines,
        codec="logs",
        chunk_rows=4096,
        chunk_bytes=1 << 16,
        per_chunk_dict=True,
        memory=64 << 20,
    )
    assert fastpair.open(small).read().to_pylist() == lines
    with pytest.raises(ValueError, match="memory budget"):
        fastpair.write(tmp_path / "x.fpc", lines, memory=1 << 20)
    with pytest.raises(ValueError, match="'logs'"):
        fastpair.write(tmp_path / "y.fpc", ["a"], codec="zip")
