"""Arrow arrays <-> the core's column-chunk layout, and the one call that encodes it.

A column is a list of pieces; a piece is a pyarrow Array, a numpy array (values,
or integer ids) or an id spec tuple ("str", bytes, offsets) / ("dict", bytes,
offsets, indices) / ("int", values) / ("uint", values) as `encode_columns` takes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._io import _common
from ranklens.errors import RanklensInputError


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


def aligned(columns: list[list[Any]]) -> Iterator[tuple[int, list[Any]]]:
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
    offsets = _common.borrowable(
        np.frombuffer(bufs[1], dtype=dtype)[arr.offset : arr.offset + n + 1]
    )
    data = np.empty(0, np.uint8) if bufs[2] is None else np.frombuffer(bufs[2], dtype=np.uint8)
    return ("str", data, offsets)


def _is_view(pa: Any, t: Any, kinds: str = "string binary") -> bool:
    """string_view / binary_view (pyarrow >= 16), which have no offsets buffer."""
    return any(getattr(pa.types, f"is_{k}_view", lambda _: False)(t) for k in kinds.split())


def is_stringish(pa: Any, t: Any) -> bool:
    return _is_view(pa, t) or any(
        f(t)
        for f in (
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_binary,
            pa.types.is_large_binary,
        )
    )


def arrow_id_spec(pa: Any, arr: Any, column: str, row0: int) -> tuple[Any, ...]:
    """An Arrow id array (one piece) -> the core's layout; nulls are errors."""
    if arr.null_count:
        raise RanklensInputError(
            f"column {_common.q(column)}, row {row0 + _first_null(arr)}: the id is null"
        )
    t = arr.type
    if is_stringish(pa, t):
        return _string_spec(pa, arr)
    if pa.types.is_dictionary(t):
        dictionary = arr.dictionary
        if pa.types.is_integer(dictionary.type):
            dictionary = dictionary.cast(pa.string())
        if not is_stringish(pa, dictionary.type) or dictionary.null_count:
            raise RanklensInputError(
                f"column {_common.q(column)}: a dictionary column must hold strings or integers "
                f"without nulls, got {t}"
            )
        _, data, offsets = _string_spec(pa, dictionary)
        indices = arr.indices.to_numpy(zero_copy_only=False)
        if indices.dtype not in (np.int32, np.int64):
            indices = indices.astype(np.int64)
        indices = _common.borrowable(indices)
        return ("dict", data, offsets, indices)
    if pa.types.is_integer(t):
        return _common.int_spec(arr.to_numpy(zero_copy_only=False))
    raise RanklensInputError(
        f"column {_common.q(column)}: ids must be strings or integers, got {t}"
    )


def arrow_values(pa: Any, arr: Any, column: str, what: str, row0: int) -> np.ndarray:
    if arr.null_count:
        raise RanklensInputError(
            f"column {_common.q(column)}, row {row0 + _first_null(arr)}: null {what}"
        )
    t = arr.type
    if not (
        pa.types.is_floating(t)
        or pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_decimal(t)
    ):
        raise RanklensInputError(
            f"column {_common.q(column)}: the {what}s must be numbers, got {t}"
        )
    if pa.types.is_decimal(t) or pa.types.is_float16(t):
        arr = arr.cast(pa.float64())
    return _common.borrowable(arr.to_numpy(zero_copy_only=False), np.float64)


def encode(
    kind: str,
    columns: list[list[Any]],
    names: tuple[str, str, str],
    round_f32: bool,
) -> tuple[np.ndarray, ...]:
    """Columns (lists of pieces) -> the encoded arrays, via one core call."""
    pa = None
    what = _common.WHAT[kind]
    chunks = []
    for row0, (q, d, v) in aligned(columns):
        specs = []
        for p, name in ((q, names[0]), (d, names[1])):
            if isinstance(p, (tuple, np.ndarray)):
                specs.append(p if isinstance(p, tuple) else _common.int_spec(p))
            else:
                pa = pa or _common.pa("reading Arrow data")
                specs.append(arrow_id_spec(pa, p, name, row0))
        if not isinstance(v, np.ndarray):
            pa = pa or _common.pa("reading Arrow data")
            v = arrow_values(pa, v, names[2], what, row0)
        chunks.append((specs[0], specs[1], v))
    return _ranklens.encode_columns(kind, chunks, names, round_f32)


def columns_of(table: Any, names: tuple[str, str, str]) -> list[Any]:
    have = list(table.column_names)
    missing = [n for n in names if n not in have]
    if missing:
        raise RanklensInputError(
            f"no column {_common.q(missing[0])} (columns: {', '.join(map(str, have))})"
        )
    return [table.column(n) for n in names]


def pieces(col: Any) -> list[Any]:
    return list(col.chunks) if hasattr(col, "chunks") else [col]


def from_arrow(
    kind: str, table: Any, names: tuple[str, str, str], round_f32: bool = False
) -> tuple[np.ndarray, ...]:
    pa = _common.pa("from_arrow")
    if not isinstance(table, (pa.Table, pa.RecordBatch)):
        try:
            table = pa.table(table)
        except (TypeError, ValueError, pa.ArrowException) as e:
            raise RanklensInputError(
                f"expected a pyarrow Table or RecordBatch (or an object exporting Arrow data), "
                f"got {type(table).__name__}"
            ) from e
    cols = columns_of(table, names)
    return encode(kind, [pieces(c) for c in cols], names, round_f32)


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
    pa = _common.pa("to_arrow")
    import pyarrow.compute as pc

    _common.check_flat(side)
    arrays = side.arrays
    qv = _vocab_array(pa, arrays[0], arrays[1])
    dv = _vocab_array(pa, arrays[3], arrays[4])
    rows_q = _common.row_queries(side)
    q = pc.take(qv, pa.array(rows_q))
    d = pc.take(dv, pa.array(side.doc_ids))
    # Plain `string` (32-bit offsets) where it fits: what most consumers expect.
    if int(np.diff(arrays[1])[rows_q].sum()) < 2**31 - 1:
        q = q.cast(pa.string())
    if int(np.diff(arrays[4])[side.doc_ids].sum()) < 2**31 - 1:
        d = d.cast(pa.string())
    return pa.table({names[0]: q, names[1]: d, names[2]: pa.array(_common.out_values(side))})
