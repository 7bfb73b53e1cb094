import os
from typing import Any, Dict, Iterable, Optional, Tuple, Union, overload

import pyarrow as pa

__all__ = ["write", "open", "File", "DeviceColumn", "DeviceBuffer", "FastpairError"]

_Path = Union[str, "os.PathLike[str]"]
_Lit = Union[str, bytes]

class FastpairError(Exception):
    """A fastpair error; the message is the one line the CLI prints."""

class ArrowHandle:
    """An Arrow array exported through ``__arrow_c_array__`` (zero-copy)."""

    values_address: int
    offsets_address: int
    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> Tuple[object, object]: ...
    def __len__(self) -> int: ...

class DeviceBuffer:
    """One buffer of a GPU column, exported through DLPack."""

    ptr: int
    dtype: str
    def __len__(self) -> int: ...
    def __dlpack__(
        self,
        *,
        stream: Optional[int] = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> object: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

class DeviceColumn:
    """A column decoded into GPU memory (Arrow large-binary layout)."""

    values: DeviceBuffer
    offsets: DeviceBuffer
    validity: Optional[DeviceBuffer]
    device_id: int
    def __len__(self) -> int: ...
    def __arrow_c_device_array__(
        self, requested_schema: Optional[object] = None, **kwargs: Any
    ) -> Tuple[object, object]: ...

class File:
    """An open fastpair file (see :func:`open`)."""

    def __init__(self, path: _Path, text: bool = True) -> None: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def text(self) -> bool: ...
    @property
    def file_bytes(self) -> int: ...
    @property
    def decoded_bytes(self) -> int: ...
    @overload
    def __getitem__(self, i: int) -> Union[str, bytes, None]: ...
    @overload
    def __getitem__(self, i: slice) -> pa.Array: ...
    def get(self, i: int) -> Union[str, bytes, None]: ...
    def read(self, start: Optional[int] = None, stop: Optional[int] = None) -> pa.Array: ...
    def read_handle(self, start: Optional[int] = None, stop: Optional[int] = None) -> ArrowHandle: ...
    def take(self, indices: Iterable[int]) -> pa.Array: ...
    def filter(
        self,
        *,
        equals: Optional[_Lit] = None,
        isin: Optional[Iterable[_Lit]] = None,
        prefix: Optional[_Lit] = None,
        suffix: Optional[_Lit] = None,
        contains: Optional[_Lit] = None,
        contains_any: Optional[Iterable[_Lit]] = None,
        contains_all: Optional[Iterable[_Lit]] = None,
        like: Optional[_Lit] = None,
        escape: Optional[_Lit] = None,
        ignore_case: bool = False,
        negate: bool = False,
        indices: bool = False,
        gpu: bool = False,
    ) -> pa.Array:
        """Rows matching one predicate, searched on the codes: their values,
        or (``indices=True``) their row indices as a ``uint64`` array;
        ``gpu=True`` searches the coded chunks on the GPU."""
    def grep(
        self,
        pattern: _Lit,
        *,
        like: bool = False,
        prefix: bool = False,
        suffix: bool = False,
        equals: bool = False,
        ignore_case: bool = False,
        invert: bool = False,
        indices: bool = False,
        gpu: bool = False,
    ) -> pa.Array: ...
    def scan_gpu(self, start: int = 0, stop: Optional[int] = None) -> DeviceColumn: ...

def write(
    path: _Path,
    values: Any,
    codec: str = "auto",
    chunk_rows: Optional[int] = None,
    chunk_bytes: Optional[int] = None,
    per_chunk_dict: bool = False,
    memory: Optional[int] = None,
) -> Dict[str, int]:
    """Returns ``{"rows", "input_bytes", "file_bytes"}``."""

def open(path: _Path, text: bool = True) -> File: ...

def dataset(path: Union[str, "os.PathLike[str]"]) -> Any:
    """A fastpair dataset for pyarrow.dataset-style scans (needs the
    fastpair-datafusion package)."""
    ...
