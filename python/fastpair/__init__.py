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

__all__ = ["write", "open", "dataset", "File", "DeviceColumn", "DeviceBuffer", "FastpairError"]


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
    chunk_bytes: Optional[int] = None,
    per_chunk_dict: bool = False,
    memory: Optional[int] = None,
    log_templates: str = "auto",
) -> dict:
    """Compresses ``values`` into the fastpair file ``path``.

    ``values``: a pyarrow string/binary array (plain, large, view or
    dictionary-encoded; nulls kept), a pyarrow ChunkedArray, a pandas or
    polars string series, or a list of ``str``/``bytes``/``None``.
    ``codec``: ``"auto"`` (the library default), ``"fsst12"``, ``"onpair16"``,
    ``"onpair12"``, or ``"logs"`` (log templates on every chunk: lines as
    templates with typed slots, as ``fastpair compress --codec logs``).
    ``chunk_rows`` / ``chunk_bytes``: most rows / value bytes per chunk;
    ``per_chunk_dict``: a dictionary per chunk instead of one shared;
    ``memory``: the writer's memory budget in bytes (default 1 GiB; too
    small for one chunk is a ``ValueError``); ``log_templates``: ``"auto"``
    (a chunk of log lines is stored as templates where that is at least 10%
    smaller), ``"off"`` or ``"always"``. The same settings as the CLI's
    ``compress``. The file replaces ``path`` only when writing succeeds.
    Returns ``{"rows", "input_bytes", "file_bytes"}``.
    """
    rows, inb, outb = _write(
        str(path),
        _parts(values),
        codec,
        chunk_rows,
        chunk_bytes,
        per_chunk_dict,
        memory,
        log_templates,
    )
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

    def filter(
        self,
        *,
        equals=None,
        isin=None,
        prefix=None,
        suffix=None,
        contains=None,
        contains_any=None,
        contains_all=None,
        like=None,
        escape=None,
        ignore_case: bool = False,
        negate: bool = False,
        indices: bool = False,
        gpu: bool = False,
    ):
        """The rows matching one predicate, searched on the compressed codes
        (``fastpair::search``): ``equals=x``, ``isin=[x, ...]``,
        ``prefix=x``, ``suffix=x``, ``contains=x``, ``contains_any=[...]``,
        ``contains_all=[...]`` or ``like=pattern`` (SQL LIKE: ``%`` any
        bytes, ``_`` one character, ``escape`` a one-character escape);
        literals are ``str`` (UTF-8) or ``bytes``. ``ignore_case`` folds ASCII
        letters; ``negate`` selects the non-null rows that do not match (a
        null row never matches). Returns the matching values as a pyarrow
        array, or their row indices (a pyarrow ``uint64`` array, ascending)
        with ``indices=True``. With ``gpu=True`` the coded chunks are searched
        on the GPU by the fused decode-and-match kernel (one literal:
        ``contains``, ``prefix``, ``suffix``, ``equals`` or a LIKE of one of
        those), everything else on the CPU, with the same result; raises
        :class:`FastpairError` without a usable GPU."""
        given = {
            k: v
            for k, v in dict(
                equals=equals,
                isin=isin,
                prefix=prefix,
                suffix=suffix,
                contains=contains,
                contains_any=contains_any,
                contains_all=contains_all,
                like=like,
            ).items()
            if v is not None
        }
        if len(given) != 1:
            raise ValueError(
                f"filter takes exactly one predicate, got {sorted(given) or 'none'}"
            )
        (kind, value), = given.items()
        many = kind in ("isin", "contains_any", "contains_all")
        vals = list(value) if many else [value]
        if many and isinstance(value, (str, bytes)):
            raise TypeError(f"{kind} takes a list of literals, not one {type(value).__name__}")
        vals = [_literal(v) for v in vals]
        esc = None
        if escape is not None:
            e = _literal(escape)
            if len(e) != 1:
                raise ValueError(f"escape must be one byte, got {escape!r}")
            esc = e[0]
        out = self._search(
            "in" if kind == "isin" else kind, vals, esc, ignore_case, negate, indices, gpu
        )
        if indices:
            import pyarrow as pa

            buf = pa.py_buffer(out)
            return pa.Array.from_buffers(pa.uint64(), len(out) // 8, [None, buf])
        return out

    def grep(
        self,
        pattern,
        *,
        like: bool = False,
        prefix: bool = False,
        suffix: bool = False,
        equals: bool = False,
        ignore_case: bool = False,
        invert: bool = False,
        indices: bool = False,
        gpu: bool = False,
    ):
        """``fastpair grep`` from Python: rows containing ``pattern`` (a
        literal), or matching it as a LIKE pattern (``like``, escape ``\\``),
        prefix, suffix or whole row (``equals``); ``invert`` selects the
        non-null rows that do not match; ``gpu`` as for :meth:`filter`
        (``fastpair grep --gpu``). As grep, a newline separates several
        literals (or whole rows with ``equals``), any of which selects a row;
        a ``ValueError`` with ``like``, ``prefix`` or ``suffix``. Same return
        as :meth:`filter`."""
        modes = [m for m, on in (("like", like), ("prefix", prefix), ("suffix", suffix), ("equals", equals)) if on]
        if len(modes) > 1:
            raise ValueError(f"grep takes at most one of like/prefix/suffix/equals, got {modes}")
        kind = modes[0] if modes else "contains"
        lit = _literal(pattern)
        if b"\n" in lit:
            if kind in ("like", "prefix", "suffix"):
                raise ValueError(
                    "a newline separates several patterns, which grep takes as literals "
                    f"or whole rows (equals), not as {kind} patterns"
                )
            kind, pattern = ("isin" if kind == "equals" else "contains_any"), lit.split(b"\n")
        kw = {kind: pattern}
        if kind == "like":
            kw["escape"] = "\\"
        return self.filter(**kw, ignore_case=ignore_case, negate=invert, indices=indices, gpu=gpu)

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


def _literal(v) -> bytes:
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise TypeError(f"a search literal is str or bytes, not {type(v).__name__}")


def open(path: str, text: bool = True) -> File:  # noqa: A001 - mirrors builtins.open
    """Opens the fastpair file ``path`` (footer and dictionaries are checked
    now; each chunk the first time it is read). ``text=False`` reads bytes."""
    return File(path, text)


def dataset(path):
    """A fastpair dataset (a table directory written by ``fastpair compress
    t.parquet -o t.fpd``) for ``pyarrow.dataset``-style scans:
    ``fastpair.dataset(p).to_table(columns=[...], filter="c LIKE '%x%'")``,
    ``.scanner(...)``, ``.count_rows(...)``. Provided by the separate
    ``fastpair-datafusion`` package (it carries the DataFusion engine that
    plans the scan and pushes the string predicates into the search on the
    codes; this package stays free of it)."""
    try:
        import fastpair_datafusion
    except ImportError as e:
        raise ImportError(
            "fastpair.dataset needs the fastpair-datafusion package "
            "(fastpair-datafusion/python in the fastpair repository)"
        ) from e
    return fastpair_datafusion.dataset(path)
