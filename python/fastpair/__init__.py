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

from typing import Any, Optional

from ._fastpair import (  # noqa: F401
    ArrowHandle,
    DeviceBuffer,
    DeviceColumn,
    FastpairError,
    _File,
    _write,
)

__all__ = ["write", "open", "File", "DeviceColumn", "DeviceBuffer", "FastpairError"]


def _parts(values: Any) -> list:
    """Splits `values` into pieces the native writer takes: objects with
    ``__arrow_c_array__`` (taken without copying) or lists of str/bytes."""
    if isinstance(values, (str, bytes, bytearray, memoryview)):
        # Iterating would write one row per character or byte.
        raise TypeError(
            f"values must be a sequence of rows, not a single {type(values).__name__}: "
            "write([value]) stores one row"
        )
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
    from collections.abc import Mapping, Set

    if isinstance(values, (Mapping, Set)):
        # A dict would write its keys; a set has no row order.
        raise TypeError(
            f"cannot write a {type(values).__name__}: rows need an order and values; "
            "pass a list (e.g. list(d.values()))"
        )
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


class File(_File):
    """An open fastpair file (see :func:`open`).

    ``read``, ``read_handle``, ``take`` and ``get`` are the native class's
    methods (called without a Python frame in between: a small read is a few
    microseconds); this class adds slices, ``repr`` and ``scan_gpu``'s
    defaults. Properties: ``path``, ``text`` (True: rows are ``str`` and
    arrays ``large_string``; False: ``bytes`` and ``large_binary``),
    ``file_bytes``, ``decoded_bytes``.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"fastpair.File({self.path!r}, rows={len(self)}, text={self.text})"

    def __getitem__(self, i):
        """Row ``i`` (negative counts from the end; ``None`` for a null); a
        slice with step 1 returns a pyarrow array like :meth:`read`."""
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return self.take(range(start, stop, step))
            return self.read(start, max(start, stop))
        return self.get(i)

    def scan_gpu(self, start: int = 0, stop: Optional[int] = None) -> DeviceColumn:
        """Decodes rows ``start..stop`` on the GPU. The result exposes
        ``.values`` (uint8) and ``.offsets`` (int64) through DLPack
        (``cupy.from_dlpack``, ``torch.from_dlpack``) and the whole column
        through ``__arrow_c_device_array__``; device memory stays alive while
        any of them is held. Raises :class:`FastpairError` without a GPU."""
        n = len(self)
        stop = n if stop is None else stop
        if start < 0 or stop < 0:
            raise IndexError(
                f"{self.path}: row {min(start, stop)} is out of range (the file has {n} rows)"
            )
        return self._scan_gpu(start, stop)


def open(path: str, text: bool = True) -> File:  # noqa: A001 - mirrors builtins.open
    """Opens the fastpair file ``path`` (footer and dictionaries are checked
    now; each chunk the first time it is read). ``text=False`` reads bytes."""
    return File(path, text)
