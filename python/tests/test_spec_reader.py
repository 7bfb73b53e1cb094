"""spec/reader.py, an independent pure-Python reader written from
spec/FORMAT.md alone, against files the fastpair package (and CLI) writes:
every codec, nulls, empty and binary values, value dictionaries, several
chunk sizes, per-chunk dictionaries, the golden and corrupt files of
testdata/, and real corpus columns. Both readers must agree: the same rows
for a valid file, a rejection for a damaged one."""

import importlib.util
import lzma
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import fastpair

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fastpair_spec_reader", REPO / "spec" / "reader.py")
reader = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = reader  # dataclasses look their module up
_spec.loader.exec_module(reader)

CODECS = ["auto", "fsst12", "onpair12", "onpair16"]
CODEC_IDS = {"fsst12": {3}, "onpair12": {1}, "onpair16": {2}, "auto": {1, 2, 3}}

# Corpus columns: `$FASTPAIR_CORPUS` (unpacked *.txt), target/corpus, or the
# shared xz-compressed corpus (../shared/corpus/*.txt.xz, shared/corpus/).
CORPUS_DIRS = [
    Path(p)
    for p in [os.environ.get("FASTPAIR_CORPUS"), REPO / "target" / "corpus", REPO.parent / "shared" / "corpus", REPO / "shared" / "corpus"]
    if p
]
CORPUS_ROWS = 2000  # the pure-Python reader decodes ~5 MB/s; keep each column small
CORPUS_BYTES = 256 * 1024


def as_bytes(values):
    return [v.encode() if isinstance(v, str) else v for v in values]


def write_and_read(tmp_path, values, name="col.fpc", **kw):
    p = tmp_path / name
    fastpair.write(p, values, **kw)
    r = reader.Reader.open(str(p))
    return p, r


# ---------------------------------------------------------------- shapes x codecs

rng = random.Random(5)
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "http://example.com/", "ünïcödé ✓", "长城"]
SHAPES = {
    "mixed_nulls_empty": ["GET /index.html", None, "", "ünïcödé ✓", "GET /about.html HTTP/1.1 200"]
    + [None if i % 7 == 3 else ["a", "bb", "a longer value here", ""][i % 4] for i in range(300)],
    "binary": [b"ok", b"\xff\xfe raw", None, b"", b"\x00\x00\x00", bytes(range(256)), bytes(range(255, -1, -1)) * 3]
    + [bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(400)],
    "all_null": [None] * 50,
    "all_empty": [""] * 50,
    "empty_column": [],
    "one_row": ["x"],
    # long tokens (W = 16), values over many 128-row cascade blocks
    "text": [" ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 14))) for _ in range(1500)],
    # low cardinality: the value-dictionary layout (§5.6) under auto
    "low_cardinality": [None if i % 11 == 0 else ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN", ""][i * 7 % 5] for i in range(3000)],
    "constant": ["same value"] * 200,
    "long_values": ["x" * 5000 + str(i) for i in range(20)] + ["y" * 70000],
}


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("chunk_rows", [None, 64, 1000])
def test_shapes(tmp_path, shape, codec, chunk_rows):
    values = SHAPES[shape]
    p, r = write_and_read(tmp_path, values, codec=codec, chunk_rows=chunk_rows)
    assert r.rows() == as_bytes(values)
    assert fastpair.open(p, text=False).read().to_pylist() == as_bytes(values)
    assert r.version == 11
    assert {d.codec for d in r.dicts} <= CODEC_IDS[codec]
    if chunk_rows and values:
        assert all(c.rows <= chunk_rows for c in r.footer.chunks)
        assert len(r.footer.chunks) == -(-len(values) // chunk_rows)
    if shape in ("low_cardinality", "constant") and codec == "auto" and chunk_rows != 64:
        assert all(c.values > 0 for c in r.footer.chunks), "value-dictionary chunks expected"


# ---------------------------------------------------------------- testdata/golden (versions 1-4)


def golden_files():
    return sorted((REPO / "testdata" / "golden").glob("*.fpc"))


@pytest.mark.parametrize("path", golden_files(), ids=lambda p: p.name)
def test_golden(path):
    # .values: one value per line, `\N` for a null.
    lines = path.with_suffix(".values").read_bytes().split(b"\n")
    assert lines[-1] == b""
    want = [None if v == b"\\N" else v for v in lines[:-1]]
    r = reader.Reader.open(str(path))
    assert r.rows() == want
    assert fastpair.open(path, text=False).read().to_pylist() == want


# ---------------------------------------------------------------- CLI: per-chunk dictionaries


def cli():
    exe = os.environ.get("FASTPAIR_CLI") or REPO / "target" / "release" / "fastpair"
    if not Path(exe).is_file():
        exe = shutil.which("fastpair")
    return exe


@pytest.mark.parametrize("codec", CODECS)
def test_cli_per_chunk_dictionaries(tmp_path, codec):
    exe = cli()
    if not exe:
        print("skipped: no CLI binary (cargo build --release --bin fastpair, or FASTPAIR_CLI)")
        pytest.skip("no CLI binary at target/release/fastpair (cargo build --release --bin fastpair)")
    src = REPO / "testdata" / "dbtext_movies_20k.txt"
    data = src.read_bytes()
    want = data[:-1].split(b"\n")
    out = tmp_path / "m.fpc"
    for extra, chunks in ((["--per-chunk-dict", "--chunk-rows", "3000"], 7), (["--chunk-bytes", "100000"], None)):
        subprocess.run([str(exe), "compress", "-q", "--codec", codec, *extra, "-o", str(out), str(src)], check=True)
        r = reader.Reader.open(str(out))
        assert r.rows() == want
        if chunks:
            assert len(r.footer.chunks) == chunks and len(r.dicts) == chunks
            assert sorted(c.dict for c in r.footer.chunks) == list(range(chunks))
        else:
            assert len(r.footer.chunks) > 1 and len(r.dicts) == 1
        assert {d.codec for d in r.dicts} <= CODEC_IDS[codec]


# ---------------------------------------------------------------- corpus columns


def corpus_columns():
    for d in CORPUS_DIRS:
        if d.is_dir():
            files = sorted(d.glob("*.txt")) or sorted(d.glob("*.txt.xz"))
            if files:
                return files
    return []


def load_column(path):
    """The first CORPUS_ROWS values (at most CORPUS_BYTES) of a column file."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rb") as f:
        data = f.read(CORPUS_BYTES)
    if b"\n" in data:
        data = data[: data.rindex(b"\n")]
    return data.split(b"\n")[:CORPUS_ROWS]


def test_corpus_columns(tmp_path):
    """Every corpus column's first rows (a null every 13th row), written with
    auto; the first few columns with every codec. Without a corpus a small
    synthetic set (a failure under FASTPAIR_REQUIRE_CORPUS=1)."""
    files = corpus_columns()
    if files:
        columns = ((path.name.split(".")[0], load_column(path)) for path in files)
    else:
        assert os.environ.get("FASTPAIR_REQUIRE_CORPUS") != "1", "FASTPAIR_REQUIRE_CORPUS=1 but no corpus found"
        columns = [
            ("synthetic_ascii", [f"GET /page/{i * 7919 % 500} HTTP/1.1".encode() for i in range(CORPUS_ROWS)]),
            ("synthetic_utf8", [("äöü € 漢字 " * (i % 4) + str(i)).encode() for i in range(CORPUS_ROWS)]),
        ]
    covered = []
    for n, (name, rows) in enumerate(columns):
        vals = [None if i % 13 == 5 else v for i, v in enumerate(rows)]
        for codec in CODECS if n < 4 else ["auto"]:
            p, r = write_and_read(tmp_path, vals, codec=codec)
            assert r.rows() == vals, (name, codec)
        covered.append(f"{name}:{len(rows)}")
    print(f"columns covered ({len(covered)}): {' '.join(covered)}")


# ---------------------------------------------------------------- corrupt input


def fastpair_rejects(path):
    try:
        fastpair.open(path, text=False).read()
    except Exception:  # FastpairError, ValueError, OSError
        return True
    return False


def spec_reader_rejects(data):
    try:
        reader.Reader(data)
    except reader.FormatError:
        return True
    return False


@pytest.mark.parametrize("path", sorted((REPO / "testdata" / "corrupt").glob("*.fpc")), ids=lambda p: p.name)
def test_testdata_corrupt(path):
    assert spec_reader_rejects(path.read_bytes())
    assert fastpair_rejects(path)


def rust_corrupt_expectations():
    """name -> the `Invariant` tests/corrupt.rs expects for each
    testdata/corrupt file (`name: |..| recipe => Error::Corrupt { .. I::Name .. }`)."""
    import re

    src = REPO / "tests" / "corrupt.rs"
    if not src.is_file():
        return {}
    s = src.read_text()
    out = {}
    for m in re.finditer(r"\n    (\w+): \|.*?\n\s*=> (.*?)(?=\n    ///|\n    \w+: \||\n\}|\n    \]\s)", s, re.S):
        inv = re.search(r"I::(\w+)", m.group(2)) or re.search(r"Error::(\w+)", m.group(2))
        if inv:
            out[m.group(1)] = inv.group(1)
    return out


def test_testdata_corrupt_invariants_match_rust():
    """The spec reader names the same first violation (§9's order and
    invariant names) as the Rust reader for every testdata/corrupt file."""
    want = rust_corrupt_expectations()
    files = sorted((REPO / "testdata" / "corrupt").glob("*.fpc"))
    if len(want) < len(files) * 0.9:
        pytest.skip(f"could not parse tests/corrupt.rs ({len(want)} recipes for {len(files)} files)")
    wrong = []
    for path in files:
        try:
            reader.Reader(path.read_bytes())
            got = "accepted"
        except reader.FormatError as e:
            got = e.invariant
        if path.stem in want and want[path.stem] != got:
            wrong.append(f"{path.stem}: rust {want[path.stem]}, spec reader {got}")
    assert not wrong, wrong


def small_file(tmp_path):
    """Two chunks: a value-dictionary chunk with nulls, and a token chunk."""
    vals = [None if i % 9 == 4 else ["red", "green", "blue"][i % 3] for i in range(120)]
    vals += [f"row {i} {'x' * (i % 23)}" for i in range(120)]
    p, r = write_and_read(tmp_path, vals, codec="onpair12", chunk_rows=120)
    assert [c.values > 0 for c in r.footer.chunks] == [True, False]
    return p, vals


def test_every_byte_flip_and_truncation_rejected(tmp_path):
    """One bit flipped at every byte position. A CRC32 covers every byte
    outside the tail (and detects any error burst of up to 32 bits), and
    every tail field is checked (magic, version against the header,
    reserved, the CRC itself, the footer length through the footer's size
    and CRC), so no single-byte flip is undetectable: both readers must
    reject every one. A truncated file loses its tail; an appended byte
    moves it."""
    p, _ = small_file(tmp_path)
    data = p.read_bytes()
    bad = tmp_path / "bad.fpc"
    for pos in range(len(data)):
        d = bytearray(data)
        d[pos] ^= 1 << (pos % 8)
        bad.write_bytes(d)
        assert spec_reader_rejects(bytes(d)), f"flip at {pos} accepted by spec/reader.py"
        assert fastpair_rejects(bad), f"flip at {pos} accepted by fastpair"
    for n in list(range(0, len(data), 7)) + [len(data) - 1]:
        bad.write_bytes(data[:n])
        assert spec_reader_rejects(data[:n]) and fastpair_rejects(bad), f"truncated to {n}"
    bad.write_bytes(data + b"\0")
    assert spec_reader_rejects(data + b"\0") and fastpair_rejects(bad)


def fix_crcs(data, orig):
    """Recomputes every section's CRC32 in the footer entries and the
    footer's CRC32 in the tail (entries read at the original positions), so
    a mutation reaches the structural checks behind the checksums."""
    d = bytearray(data)
    fs = orig.footer_start
    nd = len(orig.footer.dicts)
    entries = [fs + 32 + 24 * i for i in range(nd)] + [fs + 32 + 24 * nd + 48 * i for i in range(len(orig.footer.chunks))]
    for o in entries:
        off, ln = struct.unpack_from("<QQ", d, o)
        if off + ln <= len(d):
            struct.pack_into("<I", d, o + 16, zlib.crc32(d[off : off + ln]))
    struct.pack_into("<I", d, len(d) - 20, zlib.crc32(d[fs : fs + orig.footer_len]))
    return bytes(d)


def test_mutations_behind_checksums_agree(tmp_path):
    """Random byte and field mutations with every checksum recomputed: the
    spec reader and the fastpair reader must both reject the file, or both
    accept it with the same rows (e.g. a changed token byte)."""
    p, _ = small_file(tmp_path)
    data = p.read_bytes()
    orig = reader.Reader(data)
    r = random.Random(17)
    bad = tmp_path / "bad.fpc"
    agreed = {"reject": 0, "accept": 0}
    for _ in range(600):
        d = bytearray(data)
        if r.random() < 0.5:
            pos = r.randrange(len(d) - 24)
            d[pos] ^= 1 << r.randrange(8)
        else:  # a u32 field: off by one, by 16, zero, a power of two
            pos = r.randrange((len(d) - 24) // 4) * 4
            v = struct.unpack_from("<I", d, pos)[0]
            nv = r.choice([v + 1, v - 1, v + 16, v - 16, 0, 1 << r.randrange(32)]) & 0xFFFFFFFF
            struct.pack_into("<I", d, pos, nv)
        m = fix_crcs(bytes(d), orig)
        if m == data:
            continue
        bad.write_bytes(m)
        try:
            a = reader.Reader(m).rows()
        except reader.FormatError as e:
            a = e
        try:
            b = fastpair.open(bad, text=False).read().to_pylist()
        except Exception as e:  # noqa: BLE001
            b = e
        if isinstance(a, Exception) or isinstance(b, Exception):
            assert isinstance(a, Exception) and isinstance(b, Exception), f"at {pos}: spec reader {a!r}, fastpair {b!r}"
            agreed["reject"] += 1
        else:
            assert a == b, f"at {pos}: both accept, different rows"
            agreed["accept"] += 1
    print(f"mutations behind checksums: {agreed}")
    assert agreed["reject"] > 400


def test_cli_of_spec_reader(tmp_path):
    p, vals = small_file(tmp_path)
    run = lambda *a: subprocess.run([sys.executable, str(REPO / "spec" / "reader.py"), *a], capture_output=True)  # noqa: E731
    out = run("--count", str(p))
    assert out.returncode == 0 and out.stdout == b"240\n"
    out = run(str(p))
    assert out.stdout.decode().splitlines() == [repr(None if v is None else v.encode()) for v in vals]
    d = bytearray(p.read_bytes())
    d[40] ^= 1
    (tmp_path / "bad.fpc").write_bytes(d)
    out = run(str(tmp_path / "bad.fpc"))
    assert out.returncode == 1 and b"ChecksumMismatch" in out.stderr and b"offset 16" in out.stderr
