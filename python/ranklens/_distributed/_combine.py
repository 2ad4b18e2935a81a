"""The driver's last step: every partition's per-query rows -> one :class:`~ranklens.Results`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ranklens._distributed._partition import empty_output, output_columns, score_missing
from ranklens._distributed._plan import IGNORED, MISSING, QUERY, STATUS, Plan
from ranklens._distributed._shared import SharedQrels
from ranklens._evaluate import Results
from ranklens.errors import RanklensInputError


def combine(parts: Iterable[Any], plan: Plan, qrels: SharedQrels | None = None) -> Results:
    """Per-query rows of every partition -> the :class:`Results` of ``evaluate``.

    ``qrels``: the broadcast qrels, whose queries that no partition scored are
    scored here (on an empty ranking) and listed as missing; ``None`` when the
    qrels were joined (partitions then emitted their missing queries).

    Raises ``RuntimeError`` if a query was emitted twice: that would mean rows
    of one query reached two partitions (a partitioning bug, never bad input).
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    frames = [p for p in parts if len(p)]
    frame = pd.concat(frames, ignore_index=True) if frames else empty_output(plan)
    if list(frame.columns) != output_columns(plan):
        raise RuntimeError(f"ranklens internal error: per-query columns {list(frame.columns)}")
    if qrels is not None:
        seen = frame.loc[frame[STATUS] != IGNORED, QUERY].to_numpy(dtype=object)
        frame = pd.concat([frame, score_missing(qrels, seen, plan)], ignore_index=True)
    # In Arrow, vectorised: strings compare as bytes there, evaluate's order.
    ids = _strings(pa, frame[QUERY])
    status = _strings(pa, frame[STATUS])
    order = pc.sort_indices(ids).to_numpy()
    ranked = ids.take(pa.array(order))
    if len(ranked) > 1:
        same = pc.equal(ranked.slice(1), ranked.slice(0, len(ranked) - 1))
        if pc.any(same).as_py():
            qid = ranked[int(np.argmax(same.to_numpy(zero_copy_only=False))) + 1].as_py()
            raise RuntimeError(
                f"ranklens internal error: query {qid!r} was emitted by two partitions; the "
                "rows of one query must all reach one partition"
            )
    ignored_row = pc.equal(status, IGNORED).to_numpy(zero_copy_only=False)
    order_q = order[~ignored_row[order]]
    order_i = order[ignored_row[order]]
    if len(order_q) == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    query_ids = ids.take(pa.array(order_q)).to_pylist()
    missing_row = pc.equal(status, MISSING).to_numpy(zero_copy_only=False)
    missing = ids.take(pa.array(order_q[missing_row[order_q]])).to_pylist()
    ignored = ids.take(pa.array(order_i)).to_pylist()
    raw = frame[plan.value_columns].to_numpy(dtype=np.float64)
    values = np.ascontiguousarray(raw[order_q], dtype=np.float64)
    values = values.reshape(len(query_ids), len(plan.metrics))
    return Results(list(plan.metrics), query_ids, values, missing, ignored, plan.relevance_level)


def _strings(pa: Any, column: Any) -> Any:
    """A pandas column of strings as one Arrow large_string array (no copy for
    Arrow-backed columns)."""
    arr = pa.array(column, type=pa.large_string(), from_pandas=True)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
