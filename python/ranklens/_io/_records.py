"""Iterables of records (``ir_datasets`` named tuples, mappings, plain tuples) ->
the encoded arrays."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Callable

import numpy as np

from ranklens import _ranklens
from ranklens._io import _arrow, _common
from ranklens.errors import RanklensInputError


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
    what = _common.WHAT[kind]
    values = _common.numbers(vs, vn, what)
    columns = [
        [("str", *_ranklens.pack_ids(qs, qn, query=True))],
        [("str", *_ranklens.pack_ids(ds, dn))],
        [values],
    ]
    return _arrow.encode(kind, columns, names, round_f32)


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
