"""pandas, polars and Parquet frames <-> the encoded arrays."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._io import _arrow, _common
from ranklens._io._common import PathLike
from ranklens.errors import RanklensInputError


def _pandas_ids(series: Any, column: str, query: bool = False) -> list[Any]:
    """An id column as chunks for ``encode_columns``.  ``query``: a column of
    query ids, where ``1`` and ``"1"`` in two rows are one query given twice
    (``pack_ids``)."""
    import pandas as pd

    dtype = series.dtype
    if len(series) == 0:
        return []
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return [series.to_numpy()]
    if isinstance(dtype, np.dtype) and dtype.kind in "fcmMb":
        raise RanklensInputError(
            f"column {_common.q(column)}: ids must be strings or integers, got {dtype}"
        )
    mixed = isinstance(dtype, pd.CategoricalDtype) and dtype.categories.inferred_type in (
        "mixed",
        "mixed-integer",
    )
    if isinstance(dtype, pd.CategoricalDtype) and not (query and mixed):
        # (categories of ints and strs, as query ids: packed row by row below,
        # so that the rows that give one query twice are named)
        cats = dtype.categories
        cat_bytes, cat_offsets = _ranklens.pack_ids(cats.tolist(), column)
        codes = series.cat.codes.to_numpy()
        codes = codes.astype(np.int32 if codes.dtype.itemsize <= 4 else np.int64)
        return [("dict", cat_bytes, cat_offsets, codes)]
    # Python objects: packed by one Rust call (faster than pyarrow's conversion).
    pa = None if dtype == np.dtype(object) else _common.optional_pa()
    if pa is not None:
        try:
            arr = pa.array(series, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):
            arr = None  # mixed types: the generic path names the bad row
        if arr is not None and (
            _arrow.is_stringish(pa, arr.type)
            or pa.types.is_integer(arr.type)
            or pa.types.is_dictionary(arr.type)
        ):
            return _arrow.pieces(arr)
    return [("str", *_ranklens.pack_ids(series.tolist(), column, query=query))]


def _pandas_values(series: Any, column: str, what: str) -> np.ndarray:
    if len(series) == 0:
        return np.empty(0, np.float64)
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "fiub":
        return _common.borrowable(series.to_numpy(), np.float64)
    isna = series.isna().to_numpy()
    if isna.any():
        raise RanklensInputError(
            f"column {_common.q(column)}, row {int(np.argmax(isna))}: null {what}"
        )
    return _common.numbers(series.to_numpy(dtype=object).tolist(), column, what)


def from_pandas(
    kind: str, df: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pd = _common.require("pandas", "pandas", "from_pandas")
    if not isinstance(df, pd.DataFrame):
        raise RanklensInputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    have = list(df.columns)
    for n in names:
        if n not in have:
            raise RanklensInputError(
                f"no column {_common.q(n)} (columns: {', '.join(map(str, have))})"
            )
    q, d, v = (df[n] for n in names)
    for n, col in zip(names, (q, d, v)):
        if isinstance(col, pd.DataFrame):
            raise RanklensInputError(
                f"the frame has {col.shape[1]} columns named {_common.q(n)}: one column per name"
            )
    columns = [
        _pandas_ids(q, names[0], query=True),
        _pandas_ids(d, names[1]),
        [_pandas_values(v, names[2], _common.WHAT[kind])],
    ]
    return _arrow.encode(kind, columns, names, round_f32)


def to_pandas(side: Any, names: tuple[str, str, str]) -> Any:
    pd = _common.require("pandas", "pandas", "to_pandas")
    _common.check_flat(side)
    if _common.optional_pa() is not None:  # strings built by Arrow: several times faster
        return _arrow.to_arrow(side, names).to_pandas()
    qv = np.array(side.query_ids, dtype=object)
    dv = np.array(side.doc_vocabulary, dtype=object)
    data = {
        names[0]: qv[_common.row_queries(side)] if len(qv) else np.empty(0, dtype=object),
        names[1]: dv[side.doc_ids] if len(dv) else np.empty(0, dtype=object),
        names[2]: _common.out_values(side),
    }
    return pd.DataFrame(data, columns=list(names))


def from_polars(
    kind: str, df: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pl = _common.require("polars", "polars", "from_polars")
    _common.pa("from_polars")
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if not isinstance(df, pl.DataFrame):
        raise RanklensInputError(f"expected a polars DataFrame, got {type(df).__name__}")
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise RanklensInputError(
            f"no column {_common.q(missing[0])} (columns: {', '.join(df.columns)})"
        )
    sub = df.select(list(dict.fromkeys(names)))
    try:  # large_string rather than string_view: borrowed without a copy
        table = sub.to_arrow(compat_level=pl.CompatLevel.oldest())
    except (AttributeError, TypeError):
        table = sub.to_arrow()
    return _arrow.from_arrow(kind, table, names, round_f32)


def to_polars(side: Any, names: tuple[str, str, str]) -> Any:
    pl = _common.require("polars", "polars", "to_polars")
    return pl.from_arrow(_arrow.to_arrow(side, names))


def from_parquet(
    kind: str, path: PathLike, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    _common.pa("from_parquet")
    import pyarrow.parquet as pq

    cols = list(dict.fromkeys(names))
    schema_names = pq.read_schema(os.fspath(path)).names
    missing = [n for n in cols if n not in schema_names]
    if missing:
        raise RanklensInputError(
            f"{os.fspath(path)}: no column {_common.q(missing[0])} "
            f"(columns: {', '.join(schema_names)})"
        )
    table = pq.read_table(os.fspath(path), columns=cols)
    return _arrow.from_arrow(kind, table, names, round_f32)


def to_parquet(side: Any, path: PathLike, names: tuple[str, str, str]) -> None:
    _common.pa("to_parquet")
    import pyarrow.parquet as pq

    pq.write_table(_arrow.to_arrow(side, names), os.fspath(path))
