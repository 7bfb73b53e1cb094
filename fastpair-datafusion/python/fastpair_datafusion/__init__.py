"""fastpair datasets as Apache DataFusion tables, from Python.

A fastpair dataset (a directory written by ``fastpair compress t.parquet -o
t.fpd``: string columns as compressed ``.fpc`` files, the others in Parquet)
registers in a ``datafusion.SessionContext`` like any table; string
predicates in ``WHERE`` (``=``, ``IN``, ``LIKE``/``NOT LIKE``/``ILIKE``,
``starts_with``, ``strpos``/``contains``) are searched on the compressed codes
and only the selected rows are decoded::

    import datafusion, fastpair_datafusion as fpd
    ctx = datafusion.SessionContext()
    ctx.register_table("lineitem", fpd.Table("lineitem.fpd"))
    ctx.sql("SELECT count(*) FROM lineitem WHERE l_comment LIKE '%special%'")

or, without SQL, in the style of ``pyarrow.dataset``::

    fpd.dataset("lineitem.fpd").to_table(
        columns=["l_orderkey", "l_comment"], filter="l_comment LIKE '%special%'")

A wheel of its own (not part of ``fastpair``): it carries a DataFusion 55
engine and must match the ``datafusion`` package's release (55.x).
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from ._fastpair_datafusion import DatasetError, Table

__all__ = ["Table", "DatasetError", "register", "dataset", "Dataset", "Scanner"]


def register(ctx, name: str, path) -> Table:
    """Opens the dataset in ``path`` and registers it in the
    ``datafusion.SessionContext`` ``ctx`` as table ``name``; returns it."""
    table = Table(path)
    ctx.register_table(name, table)
    return table


class Scanner:
    """The rows of a :class:`Dataset` a projection and filter select (as
    ``pyarrow.dataset.Scanner``): planned by DataFusion, string predicates
    of the filter pushed into the compressed-domain search."""

    def __init__(self, ds: "Dataset", columns: Optional[Sequence[str]], filter):
        self._ds = ds
        df = ds._ctx.table("t")
        if filter is not None:
            if isinstance(filter, str):
                # SQL text, as in a WHERE clause.
                filter = df.parse_sql_expr(filter)
            df = df.filter(filter)
        if columns is not None:
            from datafusion import col

            # `col`: names taken as they are (no SQL case folding).
            df = df.select(*[col(c) for c in columns])
        self._df = df

    @property
    def projected_schema(self):
        return self._df.schema()

    def to_table(self):
        """All selected rows as a ``pyarrow.Table``."""
        return self._df.to_arrow_table()

    def to_batches(self) -> Iterator:
        """The selected rows as ``pyarrow.RecordBatch`` es, streamed."""
        import pyarrow as pa

        reader = pa.RecordBatchReader.from_stream(self._df)
        yield from reader

    def to_reader(self):
        """A ``pyarrow.RecordBatchReader`` over the selected rows."""
        import pyarrow as pa

        return pa.RecordBatchReader.from_stream(self._df)

    def count_rows(self) -> int:
        return self._df.count()


class Dataset:
    """A fastpair dataset opened for scans in the style of
    ``pyarrow.dataset.Dataset``; ``filter`` is a SQL boolean expression
    (``"l_comment LIKE '%special%' AND l_quantity > 10"``) or a
    ``datafusion.Expr``."""

    def __init__(self, path):
        import datafusion

        self._table = Table(path)
        # A session of its own, so the dataset's name cannot clash with the
        # caller's tables.
        self._ctx = datafusion.SessionContext()
        self._ctx.register_table("t", self._table)

    @property
    def schema(self):
        import pyarrow as pa

        return pa.schema(self._table)

    @property
    def num_rows(self) -> int:
        return self._table.num_rows

    def scanner(self, columns: Optional[Sequence[str]] = None, filter=None) -> Scanner:
        return Scanner(self, columns, filter)

    def to_table(self, columns: Optional[Sequence[str]] = None, filter=None):
        return self.scanner(columns, filter).to_table()

    def to_batches(self, columns: Optional[Sequence[str]] = None, filter=None) -> Iterator:
        return self.scanner(columns, filter).to_batches()

    def count_rows(self, filter=None) -> int:
        if filter is None:
            return self.num_rows
        return self.scanner(filter=filter).count_rows()

    def __repr__(self) -> str:
        return f"fastpair_datafusion.Dataset({str(self._table.path)!r}, rows={self.num_rows})"


def dataset(path) -> Dataset:
    """Opens the fastpair dataset in ``path`` for ``pyarrow.dataset``-style
    scans (``.to_table(columns=..., filter=...)``, ``.scanner(...)``)."""
    return Dataset(path)
