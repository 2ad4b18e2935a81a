"""Qrels broadcast to every worker, and cut per partition to the queries it holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ranklens._data import Qrels, Run, as_qrels
from ranklens._distributed._plan import (
    Columns,
    MetricsArg,
    Plan,
    empty_run,
    make_plan,
    max_label_of,
    native,
)
from ranklens._names import needs_subtopics
from ranklens.errors import RanklensInputError


class SharedQrels:
    """Qrels broadcast to every worker: shipped once as the encoded arrays.

    On a worker, :meth:`subset` cuts out the queries of one partition, so that a
    task scores only the qrels queries its run rows hold (else every partition
    would emit every missing query).  The id index it needs is built once per
    worker process and kept (it is not pickled).
    """

    def __init__(self, qrels: Qrels) -> None:
        if len(qrels) == 0:
            raise RanklensInputError("the qrels hold no query: nothing to evaluate")
        self.qrels = qrels
        self._index: Any = None

    def __getstate__(self) -> dict[str, Any]:
        q = self.qrels
        return {"arrays": q.arrays, "subtopics": (q._subtopics, q._subtopic_names)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.qrels = Qrels._from_arrays(tuple(state["arrays"]))
        self.qrels._subtopics, self.qrels._subtopic_names = state.get("subtopics", (None, None))
        self._index = None

    def positions(self, query_ids: Sequence[str]) -> np.ndarray:
        """Index of each id among the qrels queries, -1 where absent."""
        import pandas as pd

        if self._index is None:
            self._index = pd.Index(self.qrels.query_ids, dtype=object)
        if len(query_ids) == 0:
            return np.empty(0, np.int64)
        return np.asarray(self._index.get_indexer(pd.Index(query_ids, dtype=object)), np.int64)

    def subset(self, idx: np.ndarray) -> Qrels:
        """The qrels of the queries at ``idx`` (increasing), doc arena shared."""
        return take_queries(self.qrels, idx)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, e)`` for each pair, vectorised."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, np.int64)
    shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(total, dtype=np.int64) + shift


def take_queries(qrels: Qrels, idx: np.ndarray) -> Qrels:
    """The qrels of the queries at positions ``idx`` (increasing: byte order kept).

    Works on the encoded arrays: the query vocabulary and the rows are cut out;
    the document arena is shared as is (rows index it).  Grouped qrels keep their
    group of each row, subtopic qrels their subtopic judgments.
    """
    q_bytes, q_offsets, offsets, d_bytes, d_offsets, doc_ids, values, extra = qrels.arrays
    idx = np.asarray(idx, dtype=np.int64)
    byte_pos = _ranges(q_offsets[idx], q_offsets[idx + 1])
    new_q_offsets = np.concatenate(([0], np.cumsum(q_offsets[idx + 1] - q_offsets[idx])))
    rows = _ranges(offsets[idx], offsets[idx + 1])
    new_offsets = np.concatenate(([0], np.cumsum(offsets[idx + 1] - offsets[idx])))
    arrays = (
        np.ascontiguousarray(q_bytes[byte_pos], dtype=np.uint8),
        np.ascontiguousarray(new_q_offsets, dtype=np.int64),
        np.ascontiguousarray(new_offsets, dtype=np.int64),
        d_bytes,
        d_offsets,
        np.ascontiguousarray(doc_ids[rows], dtype=np.uint32),
        np.ascontiguousarray(values[rows], dtype=np.float64),
        np.ascontiguousarray(extra[rows], dtype=np.uint32) if len(extra) else extra,
    )
    out = Qrels._from_arrays(arrays)
    if qrels._subtopics is not None and qrels._subtopic_names is not None:
        sub_off, local, labels = qrels._subtopics
        judgments = _ranges(sub_off[rows], sub_off[rows + 1])
        counts = sub_off[rows + 1] - sub_off[rows]
        out._subtopics = (
            np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            np.ascontiguousarray(local[judgments], dtype=np.uint32),
            np.ascontiguousarray(labels[judgments], dtype=np.float64),
        )
        out._subtopic_names = [qrels._subtopic_names[i] for i in idx.tolist()]
    return out


def as_qrels_object(qrels: Any, columns: Columns) -> Qrels:
    """A :class:`Qrels`, a mapping or a pandas frame -> :class:`Qrels` (on the driver)."""
    if isinstance(qrels, SharedQrels):
        return qrels.qrels
    if isinstance(qrels, (Qrels, Run, Mapping)):
        return as_qrels(qrels)  # a Run is refused there
    if type(qrels).__module__.startswith("pandas") and type(qrels).__name__ == "DataFrame":
        return Qrels.from_pandas(
            qrels, query_col=columns.query, doc_col=columns.doc, label_col=columns.label
        )
    raise RanklensInputError(
        "qrels must be a ranklens.Qrels, a mapping query id -> {doc id: label}, a pandas "
        f"DataFrame or a frame of the engine, got {type(qrels).__name__}"
    )


def broadcast_plan(
    qrels: Any, columns: Columns, metrics: MetricsArg, options: dict[str, Any]
) -> tuple[SharedQrels, Plan]:
    """Qrels held on the driver (a :class:`Qrels`, a mapping, a pandas frame) as
    broadcast qrels, and the plan (``err``'s gmax from their largest label)."""
    shared = SharedQrels(as_qrels_object(qrels, columns))
    plan = make_plan(metrics, max_label=max_label_of(shared.qrels), **options)
    if needs_subtopics(plan.metrics):
        # Qrels without subtopic judgments fail here, before any job.
        native(plan, shared.subset(np.zeros(1, np.int64)), empty_run())
    return shared, plan
