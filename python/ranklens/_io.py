"""Readers and writers for the formats users hold runs and qrels in.

pandas, pyarrow and polars frames, Parquet, ranx-style JSON
(``{query_id: {doc_id: value}}``), JSON Lines (one row per line) and
``ir_datasets``-style iterables of named tuples.  The methods are mixed into
:class:`~ranklens.Qrels` and :class:`~ranklens.Run` (``Qrels.from_pandas``,
``Run.to_parquet``, ...).

Columnar input never goes through Python row by row: id columns reach the
Rust core (``_ranklens.encode_columns``) in Arrow's string layout (data
buffer + offsets, borrowed with no copy from pyarrow arrays; dictionary
columns as dictionary + indices; integer ids as integers, written in decimal
by the core), values as a float64 array, and the rows are encoded with the GIL
released.  A column of Python objects (pandas ``object`` dtype without pyarrow)
is packed into that layout by one Rust call.  Chunked Arrow columns are cut at
the union of their chunk boundaries (zero-copy slices), so no column is
concatenated.

pandas, pyarrow and polars are optional: each is imported by the function that
needs it, and a missing one raises an ``ImportError`` naming the extra to
install (``pip install 'ranklens[pandas]'``, ``[arrow]``, ``[polars]``).

Rows in errors are 0-based positions in the input (for JSON Lines read
without pyarrow: 1-based line numbers).
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Callable, Union

import numpy as np

from ranklens import _ranklens
from ranklens.errors import ParseError, RanklensInputError

if TYPE_CHECKING:  # pragma: no cover
    from ranklens._data import Qrels, Run

__all__ = ["QrelsIO", "RunIO"]

PathLike = Union[str, "os.PathLike[str]"]

_QUERY, _DOC = "query_id", "doc_id"
_VALUE = {"run": "score", "qrels": "relevance"}
_WHAT = {"run": "score", "qrels": "label"}


# -- optional imports --------------------------------------------------------------
def _q(s: Any) -> str:
    """An id or column name quoted as the Rust core quotes them (``"q1"``)."""
    return json.dumps(str(s), ensure_ascii=False)


def _require(module: str, extra: str, what: str) -> Any:
    try:
        return __import__(module)
    except ImportError as e:
        raise ImportError(
            f"{what} needs {module}: pip install 'ranklens[{extra}]' (or pip install {module})"
        ) from e


def _pa(what: str) -> Any:
    _require("pyarrow", "arrow", what)
    import pyarrow as pa

    return pa


def _optional_pa() -> Any:
    try:
        import pyarrow as pa
    except ImportError:
        return None
    return pa


# -- id and value columns -> the core's chunk layout -----------------------------
# A column is a list of pieces; a piece is a pyarrow Array, a numpy array (values,
# or integer ids) or an id spec tuple ("str", bytes, offsets) / ("dict", bytes,
# offsets, indices) / ("int", values) / ("uint", values) as `encode_columns` takes.


def _piece_len(p: Any) -> int:
    if isinstance(p, tuple):
        if p[0] == "str":
            return len(p[2]) - 1
        if p[0] == "dict":
            return len(p[3])
        return len(p[1])
    return len(p)


def _piece_slice(p: Any, start: int, n: int) -> Any:
    if isinstance(p, tuple):
        if p[0] == "str":  # offsets are absolute: the data buffer is shared
            return ("str", p[1], p[2][start : start + n + 1])
        if p[0] == "dict":
            return ("dict", p[1], p[2], p[3][start : start + n])
        return (p[0], p[1][start : start + n])
    return p.slice(start, n) if hasattr(p, "buffers") else p[start : start + n]


def _aligned(columns: list[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
    """(first row, pieces) cut at the union of the columns' piece boundaries."""
    cols = [[p for p in col if _piece_len(p)] for col in columns]
    idx = [0] * len(cols)
    off = [0] * len(cols)
    row = 0
    while all(i < len(c) for i, c in zip(idx, cols)):
        take = min(_piece_len(c[i]) - o for c, i, o in zip(cols, idx, off))
        yield row, [_piece_slice(c[i], o, take) for c, i, o in zip(cols, idx, off)]
        row += take
        for k, c in enumerate(cols):
            off[k] += take
            if off[k] == _piece_len(c[idx[k]]):
                idx[k] += 1
                off[k] = 0


def _borrowable(a: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``a`` C-contiguous and aligned, as the core borrows it (copied only if not).

    Arrow buffers read from IPC streams or shared memory may start at any byte
    (a Dask P2P shuffle hands such columns over): a misaligned int64 view cannot
    be borrowed as a slice.
    """
    return np.require(a, dtype=dtype, requirements=("C", "A"))


def _first_null(arr: Any) -> int:
    mask = arr.is_null().to_numpy(zero_copy_only=False)
    return int(np.flatnonzero(mask)[0])


def _string_spec(pa: Any, arr: Any) -> tuple[Any, ...]:
    """A string/binary Arrow array without nulls -> ("str", data, offsets)."""
    t = arr.type
    if _is_view(pa, t):
        arr = arr.cast(pa.large_binary() if _is_view(pa, t, "binary") else pa.large_string())
        t = arr.type
    wide = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    bufs = arr.buffers()
    dtype = np.int64 if wide else np.int32
    n = len(arr)
    if bufs[1] is None:  # a zero-length array may have no buffers
        return ("str", np.empty(0, np.uint8), np.zeros(n + 1, dtype))
    offsets = _borrowable(np.frombuffer(bufs[1], dtype=dtype)[arr.offset : arr.offset + n + 1])
    data = np.empty(0, np.uint8) if bufs[2] is None else np.frombuffer(bufs[2], dtype=np.uint8)
    return ("str", data, offsets)


def _is_view(pa: Any, t: Any, kinds: str = "string binary") -> bool:
    """string_view / binary_view (pyarrow >= 16), which have no offsets buffer."""
    return any(getattr(pa.types, f"is_{k}_view", lambda _: False)(t) for k in kinds.split())


def _is_stringish(pa: Any, t: Any) -> bool:
    return _is_view(pa, t) or any(
        f(t)
        for f in (
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_binary,
            pa.types.is_large_binary,
        )
    )


def _int_spec(values: np.ndarray) -> tuple[str, np.ndarray]:
    if values.dtype == np.uint64:
        return ("uint", _borrowable(values))
    return ("int", _borrowable(values, np.int64))


def _arrow_id_spec(pa: Any, arr: Any, column: str, row0: int) -> tuple[Any, ...]:
    """An Arrow id array (one piece) -> the core's layout; nulls are errors."""
    if arr.null_count:
        raise RanklensInputError(
            f"column {_q(column)}, row {row0 + _first_null(arr)}: the id is null"
        )
    t = arr.type
    if _is_stringish(pa, t):
        return _string_spec(pa, arr)
    if pa.types.is_dictionary(t):
        dictionary = arr.dictionary
        if pa.types.is_integer(dictionary.type):
            dictionary = dictionary.cast(pa.string())
        if not _is_stringish(pa, dictionary.type) or dictionary.null_count:
            raise RanklensInputError(
                f"column {_q(column)}: a dictionary column must hold strings or integers "
                f"without nulls, got {t}"
            )
        _, data, offsets = _string_spec(pa, dictionary)
        indices = arr.indices.to_numpy(zero_copy_only=False)
        if indices.dtype not in (np.int32, np.int64):
            indices = indices.astype(np.int64)
        indices = _borrowable(indices)
        return ("dict", data, offsets, indices)
    if pa.types.is_integer(t):
        return _int_spec(arr.to_numpy(zero_copy_only=False))
    raise RanklensInputError(f"column {_q(column)}: ids must be strings or integers, got {t}")


def _arrow_values(pa: Any, arr: Any, column: str, what: str, row0: int) -> np.ndarray:
    if arr.null_count:
        raise RanklensInputError(f"column {_q(column)}, row {row0 + _first_null(arr)}: null {what}")
    t = arr.type
    if not (
        pa.types.is_floating(t)
        or pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
    ):
        raise RanklensInputError(f"column {_q(column)}: the {what}s must be numbers, got {t}")
    if pa.types.is_decimal(t) or pa.types.is_float16(t):
        arr = arr.cast(pa.float64())
    return _borrowable(arr.to_numpy(zero_copy_only=False), np.float64)


def _encode(
    kind: str,
    columns: list[list[Any]],
    names: tuple[str, str, str],
    round_f32: bool,
) -> tuple[np.ndarray, ...]:
    """Columns (lists of pieces) -> the encoded arrays, via one core call."""
    pa = None
    what = _WHAT[kind]
    chunks = []
    for row0, (q, d, v) in _aligned(columns):
        specs = []
        for p, name in ((q, names[0]), (d, names[1])):
            if isinstance(p, (tuple, np.ndarray)):
                specs.append(p if isinstance(p, tuple) else _int_spec(p))
            else:
                pa = pa or _pa("reading Arrow data")
                specs.append(_arrow_id_spec(pa, p, name, row0))
        if not isinstance(v, np.ndarray):
            pa = pa or _pa("reading Arrow data")
            v = _arrow_values(pa, v, names[2], what, row0)
        chunks.append((specs[0], specs[1], v))
    return _ranklens.encode_columns(kind, chunks, names, round_f32)


# -- Arrow -------------------------------------------------------------------------
def _columns_of(table: Any, names: tuple[str, str, str]) -> list[Any]:
    have = list(table.column_names)
    missing = [n for n in names if n not in have]
    if missing:
        raise RanklensInputError(
            f"no column {_q(missing[0])} (columns: {', '.join(map(str, have))})"
        )
    return [table.column(n) for n in names]


def _pieces(col: Any) -> list[Any]:
    return list(col.chunks) if hasattr(col, "chunks") else [col]


def from_arrow(
    kind: str, table: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pa = _pa("from_arrow")
    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        try:
            table = pa.table(table)
        except (TypeError, ValueError, pa.ArrowException) as e:
            raise RanklensInputError(
                f"expected a pyarrow Table or RecordBatch (or an object exporting Arrow data), "
                f"got {type(table).__name__}"
            ) from e
    cols = _columns_of(table, names)
    return _encode(kind, [_pieces(c) for c in cols], names, round_f32)


# -- pandas ------------------------------------------------------------------------
def _pandas_ids(series: Any, column: str) -> list[Any]:
    import pandas as pd

    dtype = series.dtype
    if len(series) == 0:
        return []
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return [series.to_numpy()]
    if isinstance(dtype, np.dtype) and dtype.kind in "fcmMb":
        raise RanklensInputError(
            f"column {_q(column)}: ids must be strings or integers, got {dtype}"
        )
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        cat_bytes, cat_offsets = _ranklens.pack_ids(cats.tolist(), column)
        codes = series.cat.codes.to_numpy()
        codes = codes.astype(np.int32 if codes.dtype.itemsize <= 4 else np.int64)
        return [("dict", cat_bytes, cat_offsets, codes)]
    # Python objects: packed by one Rust call (faster than pyarrow's conversion).
    pa = None if dtype == np.dtype(object) else _optional_pa()
    if pa is not None:
        try:
            arr = pa.array(series, from_pandas=True)
        except (pa.ArrowException, TypeError, ValueError):
            arr = None  # mixed types: the generic path names the bad row
        if arr is not None and (
            _is_stringish(pa, arr.type)
            or pa.types.is_integer(arr.type)
            or pa.types.is_dictionary(arr.type)
        ):
            return _pieces(arr)
    return [("str", *_ranklens.pack_ids(series.tolist(), column))]


def _numbers(values: Any, column: str, what: str) -> np.ndarray:
    """A sequence of numbers -> float64; a null or a non-number names its row."""
    try:
        out = np.asarray(values, dtype=np.float64)
        if out.ndim == 1:
            return out
    except (TypeError, ValueError):
        pass
    for row, x in enumerate(values):
        if x is None or type(x).__name__ == "NAType":
            raise RanklensInputError(f"column {_q(column)}, row {row}: null {what}")
        if isinstance(x, (str, bytes)) or not isinstance(x, (int, float, np.number)):
            raise RanklensInputError(
                f"column {_q(column)}, row {row}: the {what} must be a number, got {x!r}"
            )
    raise RanklensInputError(f"column {_q(column)}: the {what}s must be numbers")


def _pandas_values(series: Any, column: str, what: str) -> np.ndarray:
    if len(series) == 0:
        return np.empty(0, np.float64)
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "fiub":
        return _borrowable(series.to_numpy(), np.float64)
    isna = series.isna().to_numpy()
    if isna.any():
        raise RanklensInputError(f"column {_q(column)}, row {int(np.argmax(isna))}: null {what}")
    return _numbers(series.to_numpy(dtype=object).tolist(), column, what)


def from_pandas(
    kind: str, df: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pd = _require("pandas", "pandas", "from_pandas")
    if not isinstance(df, pd.DataFrame):
        raise RanklensInputError(f"expected a pandas DataFrame, got {type(df).__name__}")
    have = list(df.columns)
    for n in names:
        if n not in have:
            raise RanklensInputError(f"no column {_q(n)} (columns: {', '.join(map(str, have))})")
    q, d, v = (df[n] for n in names)
    if isinstance(q, pd.DataFrame) or isinstance(d, pd.DataFrame) or isinstance(v, pd.DataFrame):
        raise RanklensInputError("the frame has several columns of one of the names")
    columns = [
        _pandas_ids(q, names[0]),
        _pandas_ids(d, names[1]),
        [_pandas_values(v, names[2], _WHAT[kind])],
    ]
    return _encode(kind, columns, names, round_f32)


# -- polars ------------------------------------------------------------------------
def from_polars(
    kind: str, df: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pl = _require("polars", "polars", "from_polars")
    _pa("from_polars")
    if isinstance(df, pl.LazyFrame):
        df = df.collect()
    if not isinstance(df, pl.DataFrame):
        raise RanklensInputError(f"expected a polars DataFrame, got {type(df).__name__}")
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise RanklensInputError(f"no column {_q(missing[0])} (columns: {', '.join(df.columns)})")
    sub = df.select(list(dict.fromkeys(names)))
    try:  # large_string rather than string_view: borrowed without a copy
        table = sub.to_arrow(compat_level=pl.CompatLevel.oldest())
    except (AttributeError, TypeError):
        table = sub.to_arrow()
    return from_arrow(kind, table, names, round_f32)


# -- Parquet -----------------------------------------------------------------------
def from_parquet(
    kind: str, path: PathLike, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    _pa("from_parquet")
    import pyarrow.parquet as pq

    cols = list(dict.fromkeys(names))
    schema_names = pq.read_schema(os.fspath(path)).names
    missing = [n for n in cols if n not in schema_names]
    if missing:
        raise RanklensInputError(
            f"{os.fspath(path)}: no column {_q(missing[0])} (columns: {', '.join(schema_names)})"
        )
    table = pq.read_table(os.fspath(path), columns=cols)
    return from_arrow(kind, table, names, round_f32)


# -- records (ir_datasets) ---------------------------------------------------------
def from_records(
    kind: str, records: Iterable[Any], names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    """Named tuples / objects with attributes ``names``, mappings with those
    keys, or plain ``(query_id, doc_id, value)`` tuples (more fields ignored)."""
    qs: list[Any] = []
    ds: list[Any] = []
    vs: list[Any] = []
    qn, dn, vn = names
    getter: Callable[[Any], tuple[Any, Any, Any]] | None = None
    for i, rec in enumerate(records):
        if getter is None:
            getter = _record_getter(rec, names, i)
        try:
            q, d, v = getter(rec)
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as e:
            raise RanklensInputError(
                f"record {i}: expected fields {qn}, {dn}, {vn} (or a tuple of three), got {rec!r}"
            ) from e
        qs.append(q)
        ds.append(d)
        vs.append(v)
    what = _WHAT[kind]
    values = _numbers(vs, vn, what)
    columns = [
        [("str", *_ranklens.pack_ids(qs, qn))],
        [("str", *_ranklens.pack_ids(ds, dn))],
        [values],
    ]
    return _encode(kind, columns, names, round_f32)


def _record_getter(
    rec: Any, names: tuple[str, str, str], i: int
) -> Callable[[Any], tuple[Any, Any, Any]]:
    qn, dn, vn = names
    if all(hasattr(rec, n) for n in names):
        return lambda r: (getattr(r, qn), getattr(r, dn), getattr(r, vn))
    if isinstance(rec, Mapping):
        return lambda r: (r[qn], r[dn], r[vn])
    if isinstance(rec, (tuple, list)) and len(rec) >= 3:
        return lambda r: (r[0], r[1], r[2])
    raise RanklensInputError(
        f"record {i}: expected fields {qn}, {dn}, {vn} (or a tuple of three), got {rec!r}"
    )


# -- JSON and JSON Lines -------------------------------------------------------------
def _open_text(path: PathLike, mode: str) -> IO[str]:
    p = os.fspath(path)
    if p.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(p, mode + "b"), encoding="utf-8")  # type: ignore[arg-type]
    return open(p, mode, encoding="utf-8")


def load_json(path_or_dict: Any) -> Mapping[str, Any]:
    if isinstance(path_or_dict, Mapping):
        return path_or_dict
    if not isinstance(path_or_dict, (str, bytes, os.PathLike)):
        raise RanklensInputError(
            f"expected a path or a dict {{query_id: {{doc_id: value}}}}, "
            f"got {type(path_or_dict).__name__}"
        )
    with _open_text(os.fsdecode(path_or_dict), "r") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ParseError(f"{os.fsdecode(path_or_dict)}:{e.lineno}: {e.msg}") from e
    if not isinstance(data, Mapping):
        raise RanklensInputError(
            f"{os.fsdecode(path_or_dict)}: expected a JSON object {{query_id: {{doc_id: value}}}}"
        )
    return data


def from_jsonl(
    kind: str, path: PathLike, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    p = os.fspath(path)
    pa = _optional_pa()
    if pa is not None and not p.endswith(".gz"):
        try:
            return _jsonl_arrow(pa, kind, p, names, round_f32)
        except _Fallback:
            pass  # re-read line by line for a message naming the line
    qn, dn, vn = names
    qs: list[Any] = []
    ds: list[Any] = []
    vs: list[Any] = []
    lines: list[int] = []
    with _open_text(p, "r") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise ParseError(f"{p}:{lineno}: {e.msg}") from e
            if not isinstance(obj, dict):
                raise ParseError(f"{p}:{lineno}: expected a JSON object")
            for n in names:
                if obj.get(n) is None:
                    raise ParseError(
                        f"{p}:{lineno}: no {_q(n)}"
                        if n not in obj
                        else f"{p}:{lineno}: {_q(n)} is null"
                    )
            v = obj[vn]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ParseError(f"{p}:{lineno}: {_q(vn)} must be a number, got {v!r}")
            for n in (qn, dn):
                if isinstance(obj[n], bool) or not isinstance(obj[n], (str, int)):
                    raise ParseError(f"{p}:{lineno}: {_q(n)} must be a string or an integer")
            qs.append(obj[qn])
            ds.append(obj[dn])
            vs.append(v)
            lines.append(lineno)
    columns = [
        [("str", *_ranklens.pack_ids(qs, qn))],
        [("str", *_ranklens.pack_ids(ds, dn))],
        [np.asarray(vs, dtype=np.float64)],
    ]
    return _encode(kind, columns, names, round_f32)


class _Fallback(Exception):
    pass


def _jsonl_arrow(
    pa: Any, kind: str, path: str, names: tuple[str, str, str], round_f32: bool
) -> tuple[np.ndarray, ...]:
    import pyarrow.json as pj

    try:
        table = pj.read_json(path)
    except pa.ArrowInvalid as e:
        if "Empty" in str(e) or os.path.getsize(path) == 0:
            return _encode(kind, [[], [], []], names, round_f32)
        raise _Fallback from e
    try:
        cols = _columns_of(table, names)
        pieces = [_pieces(c) for c in cols]
        what = _WHAT[kind]
        # Check types and nulls here, so that a bad row is re-read with its line.
        for row0, (q, d, v) in _aligned(pieces):
            _arrow_id_spec(pa, q, names[0], row0)
            _arrow_id_spec(pa, d, names[1], row0)
            _arrow_values(pa, v, names[2], what, row0)
    except RanklensInputError as e:
        raise _Fallback from e
    return _encode(kind, pieces, names, round_f32)


# -- writers -------------------------------------------------------------------------
def _labels_as_ints(values: np.ndarray) -> bool:
    return (
        bool(len(values))
        and bool(np.all(values == np.round(values)))
        and bool(np.all(np.abs(values) < 2**53))
    )


def _check_flat(side: Any) -> None:
    if getattr(side, "grouped", False):
        raise RanklensInputError(
            "grouped qrels (Qrels.from_groups) have no flat row form: their groups would be lost"
        )


def _out_values(side: Any) -> np.ndarray:
    values = side.values
    if side._kind == "qrels" and _labels_as_ints(values):
        return values.astype(np.int64)
    return values


def _row_queries(side: Any) -> np.ndarray:
    """Index of each row's query (rows are grouped by query)."""
    counts = np.diff(side.offsets)
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def to_pandas(side: Any, names: tuple[str, str, str]) -> Any:
    pd = _require("pandas", "pandas", "to_pandas")
    _check_flat(side)
    if _optional_pa() is not None:  # strings built by Arrow: several times faster
        return to_arrow(side, names).to_pandas()
    qv = np.array(side.query_ids, dtype=object)
    dv = np.array(side.doc_vocabulary, dtype=object)
    data = {
        names[0]: qv[_row_queries(side)] if len(qv) else np.empty(0, dtype=object),
        names[1]: dv[side.doc_ids] if len(dv) else np.empty(0, dtype=object),
        names[2]: _out_values(side),
    }
    return pd.DataFrame(data, columns=list(names))


def _vocab_array(pa: Any, data: np.ndarray, offsets: np.ndarray) -> Any:
    arr = pa.LargeStringArray.from_buffers(
        len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(data)
    )
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:  # ids that are not UTF-8 (read from a TREC file)
        strings = _ranklens.decode_vocab(data, offsets)
        arr = pa.array(strings, type=pa.large_string())
    return arr


def to_arrow(side: Any, names: tuple[str, str, str]) -> Any:
    pa = _pa("to_arrow")
    import pyarrow.compute as pc

    _check_flat(side)
    arrays = side.arrays
    qv = _vocab_array(pa, arrays[0], arrays[1])
    dv = _vocab_array(pa, arrays[3], arrays[4])
    rows_q = _row_queries(side)
    q = pc.take(qv, pa.array(rows_q))
    d = pc.take(dv, pa.array(side.doc_ids))
    # Plain `string` (32-bit offsets) where it fits: what most consumers expect.
    if int(np.diff(arrays[1])[rows_q].sum()) < 2**31 - 1:
        q = q.cast(pa.string())
    if int(np.diff(arrays[4])[side.doc_ids].sum()) < 2**31 - 1:
        d = d.cast(pa.string())
    return pa.table({names[0]: q, names[1]: d, names[2]: pa.array(_out_values(side))})


def to_polars(side: Any, names: tuple[str, str, str]) -> Any:
    pl = _require("polars", "polars", "to_polars")
    return pl.from_arrow(to_arrow(side, names))


def to_parquet(side: Any, path: PathLike, names: tuple[str, str, str]) -> None:
    _pa("to_parquet")
    import pyarrow.parquet as pq

    pq.write_table(to_arrow(side, names), os.fspath(path))


def _py_values(side: Any) -> list[Any]:
    return _out_values(side).tolist()


def to_json(side: Any, path: PathLike) -> None:
    _check_flat(side)
    values = _py_values(side)
    docs = side.doc_vocabulary
    doc_ids = side.doc_ids.tolist()
    offsets = side.offsets.tolist()
    data = {
        q: {docs[doc_ids[j]]: values[j] for j in range(offsets[i], offsets[i + 1])}
        for i, q in enumerate(side.query_ids)
    }
    with _open_text(path, "w") as f:
        json.dump(data, f, ensure_ascii=False)


def to_jsonl(side: Any, path: PathLike, names: tuple[str, str, str]) -> None:
    _check_flat(side)
    values = _py_values(side)
    docs = side.doc_vocabulary
    doc_ids = side.doc_ids.tolist()
    offsets = side.offsets.tolist()
    dumps = json.dumps
    qn, dn, vn = names
    with _open_text(path, "w") as f:
        for i, q in enumerate(side.query_ids):
            for j in range(offsets[i], offsets[i + 1]):
                row = {qn: q, dn: docs[doc_ids[j]], vn: values[j]}
                f.write(dumps(row, ensure_ascii=False))
                f.write("\n")


# -- the mixins ----------------------------------------------------------------------
class _SideIO:
    """Writers shared by `Qrels` and `Run` (`value_col`: score or relevance)."""

    _kind: str

    def to_pandas(
        self, *, query_col: str = _QUERY, doc_col: str = _DOC, value_col: str | None = None
    ) -> Any:
        """A pandas DataFrame with columns query_id, doc_id and score (run) or
        relevance (qrels), queries in storage order (sorted by id), a run's rows in
        ranking order.  Integer labels come out as int64, float labels as float64."""
        return to_pandas(self, self._names(query_col, doc_col, value_col))

    def to_arrow(
        self, *, query_col: str = _QUERY, doc_col: str = _DOC, value_col: str | None = None
    ) -> Any:
        """A pyarrow Table with the columns of :meth:`to_pandas`."""
        return to_arrow(self, self._names(query_col, doc_col, value_col))

    def to_polars(
        self, *, query_col: str = _QUERY, doc_col: str = _DOC, value_col: str | None = None
    ) -> Any:
        """A polars DataFrame with the columns of :meth:`to_pandas`."""
        return to_polars(self, self._names(query_col, doc_col, value_col))

    def to_parquet(
        self,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        value_col: str | None = None,
    ) -> None:
        """Write a Parquet file with the columns of :meth:`to_pandas`."""
        to_parquet(self, path, self._names(query_col, doc_col, value_col))

    def to_json(self, path: PathLike) -> None:
        """Write ranx's JSON layout ``{query_id: {doc_id: value}}`` (``.gz`` ok);
        a run's inner objects are in ranking order."""
        to_json(self, path)

    def to_jsonl(
        self,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        value_col: str | None = None,
    ) -> None:
        """Write JSON Lines, one ``{"query_id", "doc_id", "score"|"relevance"}``
        object per row (``.gz`` ok); a run's rows in ranking order."""
        to_jsonl(self, path, self._names(query_col, doc_col, value_col))

    def _names(self, q: str, d: str, v: str | None) -> tuple[str, str, str]:
        names = (q, d, _VALUE[self._kind] if v is None else v)
        if len(set(names)) != 3:
            raise RanklensInputError(f"column names must differ, got {names}")
        return names


def _names(q: str, d: str, v: str) -> tuple[str, str, str]:
    names = (q, d, v)
    if len(set(names)) != 3:
        raise RanklensInputError(f"column names must differ, got {names}")
    return names


class QrelsIO(_SideIO):
    """Readers of :class:`~ranklens.Qrels` (``label_col``: the relevance column)."""

    @classmethod
    def from_pandas(
        cls,
        df: Any,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From a pandas DataFrame with query id, doc id and label columns.

        Ids may be str, integer (written in decimal) or categorical columns;
        labels any numeric column (float labels kept).  A null, a non-numeric
        label or a document listed twice for a query raises
        :class:`~ranklens.errors.RanklensInputError` naming the row or the query and
        document.
        """
        return cls._from_arrays(from_pandas("qrels", df, _names(query_col, doc_col, label_col)))  # type: ignore[return-value]

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From a pyarrow Table or RecordBatch (string, large_string, dictionary or
        integer id columns; chunked and sliced columns are read without copies)."""
        return cls._from_arrays(from_arrow("qrels", table, _names(query_col, doc_col, label_col)))  # type: ignore[return-value]

    @classmethod
    def from_polars(
        cls, df: Any, *, query_col: str = _QUERY, doc_col: str = _DOC, label_col: str = "relevance"
    ) -> Qrels:
        """From a polars DataFrame (or LazyFrame, collected); needs pyarrow."""
        return cls._from_arrays(from_polars("qrels", df, _names(query_col, doc_col, label_col)))  # type: ignore[return-value]

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From a Parquet file (only the three columns are read); needs pyarrow."""
        return cls._from_arrays(from_parquet("qrels", path, _names(query_col, doc_col, label_col)))  # type: ignore[return-value]

    @classmethod
    def from_json(cls, path_or_dict: Any) -> Qrels:
        """From ranx's JSON layout ``{query_id: {doc_id: label}}``: a file path
        (``.gz`` ok) or the already loaded dict."""
        return cls.from_dict(load_json(path_or_dict))  # type: ignore[attr-defined,no-any-return]

    @classmethod
    def from_jsonl(
        cls,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From JSON Lines, one ``{"query_id", "doc_id", "relevance"}`` object per
        line (other keys ignored; blank lines skipped; ``.gz`` ok)."""
        return cls._from_arrays(from_jsonl("qrels", path, _names(query_col, doc_col, label_col)))  # type: ignore[return-value]

    @classmethod
    def from_records(
        cls,
        records: Iterable[Any],
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From an iterable of records, e.g. ``ir_datasets``' ``dataset.qrels_iter()``:
        objects with attributes ``query_id``, ``doc_id``, ``relevance`` (named
        tuples; other fields ignored), mappings with those keys, or plain
        ``(query_id, doc_id, relevance)`` tuples.  ir_datasets is not imported."""
        return cls._from_arrays(
            from_records("qrels", records, _names(query_col, doc_col, label_col))
        )  # type: ignore[return-value]


class RunIO(_SideIO):
    """Readers of :class:`~ranklens.Run` (``score_col``: the score column).

    ``name`` and ``score_precision`` as in :class:`~ranklens.Run`.
    """

    @classmethod
    def from_pandas(
        cls,
        df: Any,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a pandas DataFrame with query id, doc id and score columns, in any
        row order (ranking: score descending, then doc id descending; the frame's
        order within a query is the input order ``ties="input"`` keeps).

        Ids may be str, integer (written in decimal) or categorical columns.  A
        null, a NaN score or a document listed twice for a query raises
        :class:`~ranklens.errors.RanklensInputError` naming the row or the query and
        document.
        """
        names = _names(query_col, doc_col, score_col)
        arrays = from_pandas("run", df, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a pyarrow Table or RecordBatch (string, large_string, dictionary or
        integer id columns; chunked and sliced columns are read without copies)."""
        names = _names(query_col, doc_col, score_col)
        arrays = from_arrow("run", table, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]

    @classmethod
    def from_polars(
        cls,
        df: Any,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a polars DataFrame (or LazyFrame, collected); needs pyarrow."""
        names = _names(query_col, doc_col, score_col)
        arrays = from_polars("run", df, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a Parquet file (only the three columns are read); needs pyarrow."""
        names = _names(query_col, doc_col, score_col)
        arrays = from_parquet("run", path, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]

    @classmethod
    def from_json(
        cls, path_or_dict: Any, *, name: str | None = None, score_precision: str = "f64"
    ) -> Run:
        """From ranx's JSON layout ``{query_id: {doc_id: score}}`` (or ranked lists
        ``{query_id: [doc_id, ...]}``): a file path (``.gz`` ok) or the loaded dict."""
        return cls.from_dict(  # type: ignore[attr-defined,no-any-return]
            load_json(path_or_dict), name=name, score_precision=score_precision
        )

    @classmethod
    def from_jsonl(
        cls,
        path: PathLike,
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From JSON Lines, one ``{"query_id", "doc_id", "score"}`` object per line
        (other keys ignored; blank lines skipped; ``.gz`` ok)."""
        names = _names(query_col, doc_col, score_col)
        arrays = from_jsonl("run", path, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]

    @classmethod
    def from_records(
        cls,
        records: Iterable[Any],
        *,
        query_col: str = _QUERY,
        doc_col: str = _DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From an iterable of records, e.g. ``ir_datasets``'
        ``dataset.scoreddocs_iter()``: objects with attributes ``query_id``,
        ``doc_id``, ``score`` (named tuples; other fields ignored), mappings with
        those keys, or plain ``(query_id, doc_id, score)`` tuples."""
        names = _names(query_col, doc_col, score_col)
        arrays = from_records("run", records, names, _round(score_precision))
        return cls._from_arrays(arrays, name=name)  # type: ignore[return-value]


def _round(score_precision: str) -> bool:
    if score_precision not in ("f64", "f32"):
        raise RanklensInputError(f"score_precision must be 'f64' or 'f32', got {score_precision!r}")
    return score_precision == "f32"
