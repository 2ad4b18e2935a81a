"""What every format shares: optional imports, id quoting, text files, the
number and writer helpers."""

from __future__ import annotations

import gzip
import io
import json
import os
from typing import IO, Any, Union

import numpy as np

from ranklens.errors import RanklensInputError

PathLike = Union[str, "os.PathLike[str]"]

QUERY, DOC = "query_id", "doc_id"

VALUE = {"run": "score", "qrels": "relevance"}

WHAT = {"run": "score", "qrels": "label"}


def q(s: Any) -> str:
    """An id or column name quoted as the Rust core quotes them (``"q1"``)."""
    return json.dumps(str(s), ensure_ascii=False)


def require(module: str, extra: str, what: str) -> Any:
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError(
            f"{what} needs {module}: pip install 'ranklens[{extra}]' (or pip install {module})"
        ) from e


def pa(what: str) -> Any:
    require("pyarrow", "arrow", what)
    import pyarrow as pa

    return pa


def optional_pa() -> Any:
    try:
        import pyarrow as pa
    except ImportError:
        return None
    return pa


def open_text(path: PathLike, mode: str) -> IO[str]:
    p = os.fspath(path)
    if p.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(p, mode + "b"), encoding="utf-8")  # type: ignore[arg-type]
    return open(p, mode, encoding="utf-8")


def borrowable(a: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``a`` C-contiguous and aligned, as the core borrows it (copied only if not).

    Arrow buffers read from IPC streams or shared memory may start at any byte
    (a Dask P2P shuffle hands such columns over): a misaligned int64 view cannot
    be borrowed as a slice.
    """
    return np.require(a, dtype=dtype, requirements=("C", "A"))


def int_spec(values: np.ndarray) -> tuple[str, np.ndarray]:
    if values.dtype == np.uint64:
        return ("uint", borrowable(values))
    return ("int", borrowable(values, np.int64))


def numbers(values: Any, column: str, what: str) -> np.ndarray:
    """A sequence of numbers -> float64; a null or a non-number names its row."""
    try:
        out = np.asarray(values, dtype=np.float64)
        if out.ndim == 1:
            return out
    except (TypeError, ValueError):
        pass
    for row, x in enumerate(values):
        if x is None or type(x).__name__ == "NAType":
            raise RanklensInputError(f"column {q(column)}, row {row}: null {what}")
        if isinstance(x, (str, bytes)) or not isinstance(x, (int, float, np.number)):
            raise RanklensInputError(
                f"column {q(column)}, row {row}: the {what} must be a number, got {x!r}"
            )
    raise RanklensInputError(f"column {q(column)}: the {what}s must be numbers")


def _labels_as_ints(values: np.ndarray) -> bool:
    return (
        bool(len(values))
        and bool(np.all(values == np.round(values)))
        and bool(np.all(np.abs(values) < 2**53))
    )


def check_flat(side: Any) -> None:
    if getattr(side, "grouped", False):
        raise RanklensInputError(
            "grouped qrels (Qrels.from_groups) have no flat row form: their groups would be lost"
        )


def out_values(side: Any) -> np.ndarray:
    values = side.values
    if side._kind == "qrels" and _labels_as_ints(values):
        return values.astype(np.int64)
    return values


def row_queries(side: Any) -> np.ndarray:
    """Index of each row's query (rows are grouped by query)."""
    counts = np.diff(side.offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)
