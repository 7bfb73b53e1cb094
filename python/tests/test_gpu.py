"""GPU hand-off: decode on the GPU, take values/offsets into CuPy and
PyTorch through DLPack without a copy, check every string against the
source, and keep device memory alive while a consumer holds it. Skips
without a GPU unless FASTPAIR_REQUIRE_GPU=1."""

import ctypes
import gc
import os
from pathlib import Path

import pytest

import fastpair

CORPUS = Path(os.environ.get("FASTPAIR_CORPUS", Path(__file__).resolve().parents[2] / "target" / "corpus"))
REQUIRE = os.environ.get("FASTPAIR_REQUIRE_GPU") == "1"
REQUIRE_CORPUS = os.environ.get("FASTPAIR_REQUIRE_CORPUS") == "1"
# FASTPAIR_CORPUS_ONLY=a,b limits the corpus columns (as for the Rust tests).
ONLY = [o for o in os.environ.get("FASTPAIR_CORPUS_ONLY", "").split(",") if o]
# Rows taken from each corpus column: the check below walks every row in Python.
CORPUS_ROWS = 20000


def _as_bytes(v):
    return v.encode() if isinstance(v, str) else v


def _gpu_column(tmp_path, values, **kw):
    p = tmp_path / "g.fpc"
    fastpair.write(p, values, **kw)
    f = fastpair.open(p, text=not any(isinstance(v, bytes) for v in values))
    try:
        return f, f.scan_gpu()
    except fastpair.FastpairError as e:
        if REQUIRE:
            raise
        pytest.skip(f"no usable GPU: {e}")


def _corpus_files():
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.glob("*.txt") if not ONLY or any(o in p.stem for o in ONLY))


def _synthetic():
    """The columns checked without a corpus: ASCII, multi-byte UTF-8,
    nulls, empty values and values past the decoder's 16-byte tokens."""
    ascii_ = [None if i % 11 == 4 else f"row {i} value {i * 7919 % 1000}" for i in range(50000)]
    utf8 = [None if i % 7 == 3 else "äöü € 漢字 " * (i % 5) + str(i) for i in range(20000)]
    long_ = ["" if i % 9 == 0 else "x" * (i % 300) + f"-{i}" for i in range(5000)]
    return [("synthetic_ascii", ascii_), ("synthetic_utf8", utf8), ("synthetic_long", long_)]


def _columns():
    """Every corpus column under FASTPAIR_CORPUS (its first CORPUS_ROWS
    values as bytes, a null every 11th row), else the synthetic set. Never
    raises here: a missing corpus under FASTPAIR_REQUIRE_CORPUS=1 fails in
    test_corpus_is_there_when_required, not at collection."""
    out = []
    for p in _corpus_files():
        rows = p.read_bytes().rstrip(b"\n").split(b"\n")[:CORPUS_ROWS]
        out.append((p.stem, [None if i % 11 == 4 else r for i, r in enumerate(rows)]))
    return out or _synthetic()


def test_corpus_is_there_when_required():
    """Under FASTPAIR_REQUIRE_CORPUS=1 the corpus must be there (else the
    parity test below would check only the synthetic set)."""
    if not _corpus_files():
        if REQUIRE_CORPUS:
            pytest.fail(f"FASTPAIR_REQUIRE_CORPUS=1 but no corpus column under {CORPUS} (only={ONLY})")
        pytest.skip(f"no corpus under {CORPUS}: the synthetic columns are checked instead")


def _expected(vals):
    import numpy as np

    b = [_as_bytes(v) if v is not None else b"" for v in vals]
    offs = np.zeros(len(b) + 1, dtype=np.int64)
    offs[1:] = np.cumsum([len(x) for x in b])
    return b"".join(b), offs


def _check_host(name, col, vals):
    """The column copied back to host memory (no CuPy or PyTorch needed):
    every value and null against the source."""
    pa = pytest.importorskip("pyarrow")
    arr = pa.array(col._to_host())
    assert len(arr) == len(vals), name
    got = arr.to_pylist()
    for i, v in enumerate(vals):
        assert _as_bytes(got[i]) == _as_bytes(v), f"{name} row {i}"


@pytest.mark.parametrize("name_vals", _columns(), ids=lambda nv: nv[0])
def test_gpu_scan_matches_the_source(tmp_path, name_vals):
    """Checked with whatever the machine has: runs (and checks) without
    CuPy and PyTorch too."""
    name, vals = name_vals
    f, col = _gpu_column(tmp_path, vals, chunk_rows=4096)
    assert len(col) == len(vals)
    _check_host(name, col, vals)


@pytest.mark.parametrize("name_vals", _columns(), ids=lambda nv: nv[0])
def test_cupy_and_torch_get_the_decoded_buffers(tmp_path, name_vals):
    name, vals = name_vals
    f, col = _gpu_column(tmp_path, vals, chunk_rows=4096)
    assert len(col) == len(vals)
    values_bytes, offsets = _expected(vals)
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    cv = cp.from_dlpack(col.values)
    co = cp.from_dlpack(col.offsets)
    assert cv.dtype == cp.uint8 and co.dtype == cp.int64
    # Zero-copy: the consumer's pointer is the decoder's.
    assert cv.data.ptr == col.values.ptr
    assert co.data.ptr == col.offsets.ptr
    tv = torch.from_dlpack(col.values)
    to = torch.from_dlpack(col.offsets)
    assert tv.data_ptr() == col.values.ptr and to.data_ptr() == col.offsets.ptr
    assert tv.is_cuda and to.dtype == torch.int64
    # Every string against the source.
    hv = cp.asnumpy(cv).tobytes()
    ho = cp.asnumpy(co)
    assert (ho == offsets).all(), name
    assert hv == values_bytes, name
    assert bytes(tv.cpu().numpy().tobytes()) == values_bytes
    for i, v in enumerate(vals):
        if v is not None:
            assert hv[ho[i] : ho[i + 1]] == _as_bytes(v)
    # Validity through DLPack too.
    if col.validity is not None:
        bits = cp.asnumpy(cp.from_dlpack(col.validity))
        for i, v in enumerate(vals):
            assert bool(bits[i // 8] >> (i % 8) & 1) == (v is not None)


def test_device_memory_outlives_the_column_object(tmp_path):
    vals = [f"value number {i}" for i in range(20000)]
    f, col = _gpu_column(tmp_path, vals)
    cp = pytest.importorskip("cupy")
    torch = pytest.importorskip("torch")
    cv = cp.from_dlpack(col.values)
    to = torch.from_dlpack(col.offsets)
    values_bytes, offsets = _expected(vals)
    del col
    gc.collect()
    # Allocate and free other device memory to make reuse likely.
    junk = [cp.zeros(1 << 20, dtype=cp.uint8) for _ in range(8)]
    del junk
    assert cp.asnumpy(cv).tobytes() == values_bytes
    assert (to.cpu().numpy() == offsets).all()


def test_arrow_c_device_array(tmp_path):
    vals = ["a", None, "bcd", "efghijklmnop"] * 1000
    f, col = _gpu_column(tmp_path, vals)
    schema_cap, array_cap = col.__arrow_c_device_array__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    p = get(array_cap, b"arrow_device_array")

    class ArrowArray(ctypes.Structure):
        _fields_ = [
            ("length", ctypes.c_int64),
            ("null_count", ctypes.c_int64),
            ("offset", ctypes.c_int64),
            ("n_buffers", ctypes.c_int64),
            ("n_children", ctypes.c_int64),
            ("buffers", ctypes.POINTER(ctypes.c_void_p)),
            ("children", ctypes.c_void_p),
            ("dictionary", ctypes.c_void_p),
            ("release", ctypes.c_void_p),
            ("private_data", ctypes.c_void_p),
        ]

    class ArrowDeviceArray(ctypes.Structure):
        _fields_ = [
            ("array", ArrowArray),
            ("device_id", ctypes.c_int64),
            ("device_type", ctypes.c_int32),
            ("sync_event", ctypes.c_void_p),
            ("reserved", ctypes.c_int64 * 3),
        ]

    d = ArrowDeviceArray.from_address(p)
    assert d.device_type == 2  # ARROW_DEVICE_CUDA
    assert d.device_id == col.device_id
    assert d.array.length == len(vals) and d.array.n_buffers == 3
    assert d.array.buffers[1] == col.offsets.ptr
    assert d.array.buffers[2] == col.values.ptr
    assert d.array.release
    # pyarrow can import it when built with CUDA; then it must match.
    pa = pytest.importorskip("pyarrow")
    try:
        # pyarrow registers its CUDA device type when pyarrow.cuda loads
        # (present only in builds with CUDA).
        import pyarrow.cuda  # noqa: F401
    except Exception:  # no CUDA build (ImportError) or no usable CUDA
        pass
    try:
        arr = pa.Array._import_from_c_device_capsule(schema_cap, array_cap)
    except Exception as e:  # pyarrow without CUDA support
        pytest.skip(f"pyarrow cannot import CUDA arrays here: {e}")
    assert arr.buffers()[2].address == col.values.ptr


# Search on the GPU (issue 21): `filter`/`grep` with gpu=True give the CPU
# search's rows, for each literal mode the kernel takes and for a predicate it
# does not (run on the CPU, same answer), on every column of _columns().
@pytest.mark.parametrize("name_vals", _columns(), ids=lambda nv: nv[0])
def test_gpu_search_matches_the_cpu_search(tmp_path, name_vals):
    name, vals = name_vals
    f, _ = _gpu_column(tmp_path, vals)
    present = [v for v in vals if v]
    probe = _as_bytes(present[len(present) // 2])
    needles = {
        "contains": probe[1:5] or probe,
        "prefix": probe[:3],
        "suffix": probe[-3:],
        "equals": probe,
    }
    checked = 0
    for kind, lit in needles.items():
        for negate in (False, True):
            kw = {kind: lit, "negate": negate, "indices": True}
            cpu = f.filter(**kw).to_pylist()
            assert f.filter(**kw, gpu=True).to_pylist() == cpu, (name, kind, negate)
            checked += len(cpu)
    cpu = f.grep(probe[:2], ignore_case=True, indices=True).to_pylist()
    assert f.grep(probe[:2], ignore_case=True, indices=True, gpu=True).to_pylist() == cpu
    both = [probe[:1], probe[-1:]]
    assert f.filter(contains_all=both, indices=True, gpu=True).to_pylist() == f.filter(
        contains_all=both, indices=True
    ).to_pylist()
    values = f.grep(probe, gpu=True).to_pylist()
    assert values and all(probe in _as_bytes(v) for v in values), name
    assert checked > 0, f"{name}: the probes matched nothing"
