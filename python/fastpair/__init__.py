"""fastpair: compressed string columns.

Write a column of strings or bytes once; read single rows in microseconds,
whole columns into zero-copy pyarrow arrays, or decode on the GPU and hand
the buffers to CuPy / PyTorch through DLPack.

    >>> import fastpair
    >>> fastpair.write("urls.fpc", ["GET /a", None, "GET /b"])
    >>> f = fastpair.open("urls.fpc")
    >>> len(f), f[0], f[1]
    (3, 'GET /a', None)
    >>> f.read()            # pyarrow.LargeStringArray, no copy
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence, Union

from ._fastpair import (  # noqa: F401
    ArrowHandle,
    DeviceBuffer,
    DeviceColumn,
    FastpairError,
    File as _File,
    _write,
)

__all__ = ["write", "open", "File", "DeviceColumn", "DeviceBuffer", "FastpairError"]


_to_pyarrow_fn = None


def _to_pyarrow(handle: ArrowHandle):
    """A pyarrow array of ``handle``'s buffers (no copy). The importer is
    looked up once: ``read`` of a small column is a few microseconds, so the
    per-call ``import`` and ``pyarrow.array``'s protocol probing would show."""
    global _to_pyarrow_fn
    if _to_pyarrow_fn is None:
        import pyarrow as pa

        imp = getattr(pa.Array, "_import_from_c_capsule", None)
        if imp is None:
            _to_pyarrow_fn = pa.array
        else:
            _to_pyarrow_fn = lambda h: imp(*h.__arrow_c_array__())  # noqa: E731
    return _to_pyarrow_fn(handle)


def _parts(values: Any) -> list:
    """Splits `values` into pieces the native writer takes: objects with
    ``__arrow_c_array__`` (taken without copying) or lists of str/bytes."""
    if hasattr(values, "__arrow_c_array__"):
        return [values]
    if isinstance(values, list):
        return [values]
    mod = type(values).__module__.split(".")[0]
    if mod == "pyarrow" and hasattr(values, "chunks"):  # ChunkedArray
        return list(values.chunks)
    if mod == "pandas":
        import pyarrow as pa

        return _parts(pa.array(values, from_pandas=True))
    if mod == "polars":
        return _parts(values.to_arrow())
    if hasattr(values, "__arrow_c_stream__"):
        import pyarrow as pa

        return _parts(pa.chunked_array(values))
    if isinstance(values, (tuple, range)) or hasattr(values, "__iter__"):
        return [list(values)]
    raise TypeError(
        f"cannot write a {type(values).__name__}: expected a pyarrow array or "
        "chunked array, a pandas/polars string series, or a list of str/bytes"
    )


def write(
    path: str,
    values: Any,
    codec: str = "auto",
    chunk_rows: Optional[int] = None,
) -> dict:
    """Compresses ``values`` into the fastpair file ``path``.

    ``values``: a pyarrow string/binary array (plain, large, view or
    dictionary-encoded; nulls kept), a pyarrow ChunkedArray, a pandas or
    polars string series, or a list of ``str``/``bytes``/``None``.
    ``codec``: ``"auto"`` (the library default), ``"fsst12"``, ``"onpair16"`` or
    ``"onpair12"``. The file replaces ``path`` only when writing succeeds.
    Returns ``{"rows", "input_bytes", "file_bytes"}``.
    """
    rows, inb, outb = _write(str(path), _parts(values), codec, chunk_rows)
    return {"rows": rows, "input_bytes": inb, "file_bytes": outb}


class File:
    """An open fastpair file (see :func:`open`)."""

    __slots__ = ("_f", "_get")

    def __init__(self, path: str, text: bool = True) -> None:
        self._f = _File(str(path), text)
        self._get = self._f.get

    def __len__(self) -> int:
        return len(self._f)

    def __repr__(self) -> str:
        return f"fastpair.File({self._f.path!r}, rows={len(self._f)}, text={self._f.text})"

    @property
    def path(self) -> str:
        return self._f.path

    @property
    def text(self) -> bool:
        """True: rows are ``str`` and arrays ``large_string``; False: ``bytes``
        and ``large_binary``."""
        return self._f.text

    @property
    def file_bytes(self) -> int:
        return self._f.file_bytes

    @property
    def decoded_bytes(self) -> int:
        return self._f.decoded_bytes

    def __getitem__(self, i):
        """Row ``i`` (negative counts from the end; ``None`` for a null); a
        slice with step 1 returns a pyarrow array like :meth:`read`."""
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self._f))
            if step != 1:
                return self.take(range(start, stop, step))
            return self.read(start, max(start, stop))
        try:
            return self._get(i)
        except OverflowError:
            raise self._out_of_range(i) from None

    def _out_of_range(self, i) -> IndexError:
        return IndexError(
            f"{self._f.path}: row {i} is out of range (the file has {len(self._f)} rows)"
        )

    def read(self, start: int = 0, stop: Optional[int] = None):
        """Rows ``start..stop`` as a ``pyarrow.LargeStringArray`` (or
        ``LargeBinaryArray`` when ``text=False``), built on the decoder's own
        buffers through the Arrow C Data Interface: no copy."""
        f = self._f
        stop = len(f) if stop is None else stop
        if start < 0 or stop < 0:
            # Explicit bounds, not slice syntax: f[-10:] counts from the end.
            raise self._out_of_range(min(start, stop))
        return f._read_array(start, stop)

    def read_handle(self, start: int = 0, stop: Optional[int] = None) -> ArrowHandle:
        """Like :meth:`read` but returns the exporting object (it implements
        ``__arrow_c_array__`` and tells where the decoder wrote:
        ``values_address``, ``offsets_address``)."""
        n = len(self._f)
        stop = n if stop is None else stop
        if start < 0 or stop < 0:
            raise self._out_of_range(min(start, stop))
        return self._f._read(start, stop)

    def take(self, indices: Iterable[int]):
        """The rows at ``indices`` (any order, repeats allowed) as one array."""
        indices = list(indices)
        try:
            return _to_pyarrow(self._f._take(indices))
        except OverflowError:
            raise self._out_of_range(next(i for i in indices if abs(i) >= 1 << 63)) from None

    def scan_gpu(self, start: int = 0, stop: Optional[int] = None) -> DeviceColumn:
        """Decodes rows ``start..stop`` on the GPU. The result exposes
        ``.values`` (uint8) and ``.offsets`` (int64) through DLPack
        (``cupy.from_dlpack``, ``torch.from_dlpack``) and the whole column
        through ``__arrow_c_device_array__``; device memory stays alive while
        any of them is held. Raises :class:`FastpairError` without a GPU."""
        n = len(self._f)
        stop = n if stop is None else stop
        if start < 0 or stop < 0:
            raise self._out_of_range(min(start, stop))
        return self._f._scan_gpu(start, stop)


def open(path: str, text: bool = True) -> File:  # noqa: A001 - mirrors builtins.open
    """Opens the fastpair file ``path`` (footer and dictionaries are checked
    now; each chunk the first time it is read). ``text=False`` reads bytes."""
    return File(path, text)
