"""The storage both sides share: encoded arrays, mapping-like access, writers.

Each side is held as flat numpy arrays built by the Rust core:

* ``query_ids`` – the query ids, interned to integers in the order of their
  UTF-8 bytes;
* ``offsets`` (int64, ``len(query_ids) + 1``) – rows of query ``i`` are
  ``offsets[i]:offsets[i + 1]``;
* ``doc_ids`` (uint32) – for each row, the index of its document id string in
  an arena (``doc_vocabulary``: one entry per input row, in input order; in
  row order when the input was not grouped by query, so that scoring reads it
  sequentially).
  Document ids are deliberately not deduplicated across queries: they only ever
  meet within one query, and interning millions of distinct ids cost more than
  the rest of loading (measurements in ``docs/design/performance.md``).  Ties compare
  the ids' bytes, so no hash ever decides an order or a match;
* ``values`` (float64) – the scores (``Run``) or labels (``Qrels``);
* ``extra`` (uint32) – for a run with tied scores in some query, each row's
  position in the input order of its query (``ties="input"`` needs it; without
  ties that order is trec_eval's, and ``extra`` is empty); for grouped qrels,
  each row's group; else empty.

A run's rows are stored in ranking order: score descending, then document id
descending (trec_eval's order), so evaluation never sorts.  Scores are kept as
64-bit doubles (trec_eval 10.0); ``score_precision="f32"`` rounds them to 32-bit
floats first, so that scores equal after rounding tie as in pytrec_eval
(trec_eval 9.0.8).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._io._common import DOC, QUERY, VALUE
from ranklens.errors import RanklensInputError

__all__ = ["ARRAYS", "PathLike", "Side", "column_names"]

PathLike = Union[str, "os.PathLike[str]"]

ARRAYS = (
    "q_bytes",
    "q_offsets",
    "offsets",
    "d_bytes",
    "d_offsets",
    "doc_ids",
    "values",
    "extra",
)


def column_names(q: str, d: str, v: str) -> tuple[str, str, str]:
    """The query, document and value column names, which must differ."""
    names = (q, d, v)
    if len(set(names)) != 3:
        raise RanklensInputError(f"column names must differ, got {names}")
    return names


class Side:
    """Shared storage and read-only views of one encoded side."""

    _kind: str = ""

    def __init__(self, arrays: tuple[np.ndarray, ...]) -> None:
        if len(arrays) != len(ARRAYS):
            raise TypeError(f"internal: expected {len(ARRAYS)} encoded arrays")
        for name, arr in zip(ARRAYS, arrays):
            arr.setflags(write=False)
            setattr(self, "_" + name, arr)
        self._query_ids: list[str] | None = None
        self._query_index: dict[str, int] | None = None

    # -- the encoded arrays -------------------------------------------------
    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The encoded arrays handed to the Rust core, in its argument order."""
        return tuple(getattr(self, "_" + n) for n in ARRAYS)

    @property
    def offsets(self) -> np.ndarray:
        return self._offsets

    @property
    def doc_ids(self) -> np.ndarray:
        return self._doc_ids

    @property
    def values(self) -> np.ndarray:
        return self._values

    @property
    def query_ids(self) -> list[str]:
        """Query ids in storage order (sorted by UTF-8 bytes)."""
        if self._query_ids is None:
            self._query_ids = _ranklens.decode_vocab(self._q_bytes, self._q_offsets)
        return self._query_ids

    @property
    def doc_vocabulary(self) -> list[str]:
        """The document id arena, one string per input row (``doc_ids`` index it)."""
        return _ranklens.decode_vocab(self._d_bytes, self._d_offsets)

    def _index(self, qid: str) -> int | None:
        if self._query_index is None:
            self._query_index = {q: i for i, q in enumerate(self.query_ids)}
        return self._query_index.get(str(qid))

    # -- mapping-like access ----------------------------------------------------
    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __contains__(self, qid: object) -> bool:
        return isinstance(qid, (str, int)) and self._index(str(qid)) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.query_ids)

    @property
    def num_rows(self) -> int:
        return int(self._offsets[-1])

    def __getitem__(self, qid: str) -> dict[str, float]:
        i = self._index(qid)
        if i is None:
            raise KeyError(qid)
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        docs = self._decode_docs(self._doc_ids[a:b])
        return dict(zip(docs, self._values[a:b].tolist()))

    def _decode_docs(self, ids: np.ndarray) -> list[str]:
        starts = self._d_offsets[ids]
        ends = self._d_offsets[ids + 1]
        raw = self._d_bytes
        return [bytes(raw[s:e]).decode("utf-8", "replace") for s, e in zip(starts, ends)]

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: value}}``; a run's inner dicts are in ranking order."""
        vocab = self.doc_vocabulary
        values = self._values.tolist()
        doc_ids = self._doc_ids.tolist()
        offsets = self._offsets.tolist()
        return {
            q: {vocab[doc_ids[j]]: values[j] for j in range(offsets[i], offsets[i + 1])}
            for i, q in enumerate(self.query_ids)
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} queries, {self.num_rows} rows)"

    # -- writers (formats in ranklens._io, imported when called) ---------------------
    def to_pandas(
        self, *, query_col: str = QUERY, doc_col: str = DOC, value_col: str | None = None
    ) -> Any:
        """A pandas DataFrame with columns query_id, doc_id and score (run) or
        relevance (qrels), queries in storage order (sorted by id), a run's rows in
        ranking order.  Integer labels come out as int64, float labels as float64."""
        from ranklens._io import _frames

        return _frames.to_pandas(self, self._names(query_col, doc_col, value_col))

    def to_arrow(
        self, *, query_col: str = QUERY, doc_col: str = DOC, value_col: str | None = None
    ) -> Any:
        """A pyarrow Table with the columns of :meth:`to_pandas`."""
        from ranklens._io import _arrow

        return _arrow.to_arrow(self, self._names(query_col, doc_col, value_col))

    def to_polars(
        self, *, query_col: str = QUERY, doc_col: str = DOC, value_col: str | None = None
    ) -> Any:
        """A polars DataFrame with the columns of :meth:`to_pandas`."""
        from ranklens._io import _frames

        return _frames.to_polars(self, self._names(query_col, doc_col, value_col))

    def to_parquet(
        self,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        value_col: str | None = None,
    ) -> None:
        """Write a Parquet file with the columns of :meth:`to_pandas`."""
        from ranklens._io import _frames

        _frames.to_parquet(self, path, self._names(query_col, doc_col, value_col))

    def to_json(self, path: PathLike) -> None:
        """Write ranx's JSON layout ``{query_id: {doc_id: value}}`` (``.gz`` ok);
        a run's inner objects are in ranking order."""
        from ranklens._io import _json

        _json.to_json(self, path)

    def to_jsonl(
        self,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        value_col: str | None = None,
    ) -> None:
        """Write JSON Lines, one ``{"query_id", "doc_id", "score"|"relevance"}``
        object per row (``.gz`` ok); a run's rows in ranking order."""
        from ranklens._io import _json

        _json.to_jsonl(self, path, self._names(query_col, doc_col, value_col))

    def _names(self, q: str, d: str, v: str | None) -> tuple[str, str, str]:
        return column_names(q, d, VALUE[self._kind] if v is None else v)
