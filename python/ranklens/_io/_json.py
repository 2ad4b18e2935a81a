"""ranx's JSON layout and JSON Lines <-> the encoded arrays."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._io import _arrow, _common
from ranklens._io._common import PathLike
from ranklens.errors import ParseError, RanklensInputError


def load_json(path_or_dict: Any) -> Mapping[str, Any]:
    if isinstance(path_or_dict, Mapping):
        return path_or_dict
    if not isinstance(path_or_dict, (str, bytes, os.PathLike)):
        raise RanklensInputError(
            f"expected a path or a dict {{query_id: {{doc_id: value}}}}, "
            f"got {type(path_or_dict).__name__}"
        )
    with _common.open_text(os.fsdecode(path_or_dict), "r") as f:
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
    pa = _common.optional_pa()
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
    with _common.open_text(p, "r") as f:
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
                        f"{p}:{lineno}: no {_common.q(n)}"
                        if n not in obj
                        else f"{p}:{lineno}: {_common.q(n)} is null"
                    )
            v = obj[vn]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ParseError(f"{p}:{lineno}: {_common.q(vn)} must be a number, got {v!r}")
            for n in (qn, dn):
                if isinstance(obj[n], bool) or not isinstance(obj[n], (str, int)):
                    raise ParseError(f"{p}:{lineno}: {_common.q(n)} must be a string or an integer")
            qs.append(obj[qn])
            ds.append(obj[dn])
            vs.append(v)
            lines.append(lineno)
    columns = [
        [("str", *_ranklens.pack_ids(qs, qn, query=True))],
        [("str", *_ranklens.pack_ids(ds, dn))],
        [np.asarray(vs, dtype=np.float64)],
    ]
    return _arrow.encode(kind, columns, names, round_f32)


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
            return _arrow.encode(kind, [[], [], []], names, round_f32)
        raise _Fallback from e
    try:
        cols = _arrow.columns_of(table, names)
        pieces = [_arrow.pieces(c) for c in cols]
        what = _common.WHAT[kind]
        # Check types and nulls here, so that a bad row is re-read with its line.
        for row0, (q, d, v) in _arrow.aligned(pieces):
            _arrow.arrow_id_spec(pa, q, names[0], row0)
            _arrow.arrow_id_spec(pa, d, names[1], row0)
            _arrow.arrow_values(pa, v, names[2], what, row0)
    except RanklensInputError as e:
        raise _Fallback from e
    return _arrow.encode(kind, pieces, names, round_f32)


def _py_values(side: Any) -> list[Any]:
    return _common.out_values(side).tolist()


def to_json(side: Any, path: PathLike) -> None:
    _common.check_flat(side)
    values = _py_values(side)
    docs = side.doc_vocabulary
    doc_ids = side.doc_ids.tolist()
    offsets = side.offsets.tolist()
    data = {
        q: {docs[doc_ids[j]]: values[j] for j in range(offsets[i], offsets[i + 1])}
        for i, q in enumerate(side.query_ids)
    }
    with _common.open_text(path, "w") as f:
        json.dump(data, f, ensure_ascii=False)


def to_jsonl(side: Any, path: PathLike, names: tuple[str, str, str]) -> None:
    _common.check_flat(side)
    values = _py_values(side)
    docs = side.doc_vocabulary
    doc_ids = side.doc_ids.tolist()
    offsets = side.offsets.tolist()
    dumps = json.dumps
    qn, dn, vn = names
    with _common.open_text(path, "w") as f:
        for i, q in enumerate(side.query_ids):
            for j in range(offsets[i], offsets[i + 1]):
                row = {qn: q, dn: docs[doc_ids[j]], vn: values[j]}
                f.write(dumps(row, ensure_ascii=False))
                f.write("\n")
