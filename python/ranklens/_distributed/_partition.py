"""One partition scored: run rows of whole queries in, one row per query out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklens._data import Qrels, Run
from ranklens._distributed._plan import (
    IGNORED,
    MISSING,
    QUERY,
    SCORED,
    STATUS,
    TIES_INPUT,
    Columns,
    Plan,
    empty_run,
    native,
)
from ranklens._distributed._shared import SharedQrels
from ranklens.errors import RanklensInputError


def output_columns(plan: Plan) -> list[str]:
    """The columns of :func:`score_frames`' output, in order."""
    return [QUERY, STATUS, *plan.value_columns]


def empty_output(plan: Plan) -> Any:
    """An empty frame with the columns and dtypes of :func:`score_frames`' output."""
    return _rows([], [], np.empty((0, len(plan.metrics))), plan)


def _rows(ids: list[str], status: list[str], values: np.ndarray, plan: Plan) -> Any:
    import pandas as pd

    data: dict[str, Any] = {
        QUERY: pd.array(ids, dtype=_string_dtype()),
        STATUS: pd.array(status, dtype=_string_dtype()),
    }
    for j, name in enumerate(plan.value_columns):
        data[name] = np.ascontiguousarray(values[:, j], dtype=np.float64)
    return pd.DataFrame(data, columns=output_columns(plan))


def _string_dtype() -> Any:
    import pandas as pd

    return pd.StringDtype("pyarrow")


def _run_from_frame(run_pdf: Any, plan: Plan, columns: Columns) -> Run:
    if plan.ties == "input":
        if columns.position is None:
            raise RanklensInputError(TIES_INPUT)
        run_pdf = _order_by_position(run_pdf, columns)
    return Run.from_pandas(
        run_pdf,
        query_col=columns.query,
        doc_col=columns.doc,
        score_col=columns.score,
        score_precision=plan.score_precision,
    )


def _order_by_position(run_pdf: Any, columns: Columns) -> Any:
    """Rows sorted by (query, position): the input order ``ties="input"`` keeps."""
    pos = run_pdf[columns.position]
    if pos.isna().any():
        raise RanklensInputError(f"column {columns.position!r}: null position")
    out = run_pdf.sort_values([columns.query, columns.position], kind="stable")
    dup = out.duplicated([columns.query, columns.position])
    if dup.any():
        row = out[dup].iloc[0]
        raise RanklensInputError(
            f"query {str(row[columns.query])!r}: two rows have position "
            f"{row[columns.position]!r}; positions must be distinct within a query"
        )
    return out


def score_frames(run_pdf: Any, qrels: Any, plan: Plan, columns: Columns) -> Any:
    """Score the queries of one partition; one output row per query.

    ``run_pdf``: a pandas frame of run rows holding *all* rows of each of its
    queries.  ``qrels``: either a :class:`SharedQrels` (broadcast; only the qrels
    queries present in ``run_pdf`` are scored, the others are scored once by
    :func:`combine`) or a pandas frame holding the qrels rows of the same queries
    (a join; its queries absent from ``run_pdf`` are scored here as ``missing``,
    on an empty ranking).  Returns query id, status and the metric columns of
    :meth:`Plan.value_columns` (NaN for ``ignored`` run-only queries).
    """
    try:
        run = _run_from_frame(run_pdf, plan, columns)
    except RanklensInputError as e:
        raise columns.user_error(e, "run") from None
    if isinstance(qrels, SharedQrels):
        pos = qrels.positions(run.query_ids)
        q = qrels.subset(np.sort(pos[pos >= 0]))
    else:
        try:
            q = Qrels.from_pandas(
                qrels, query_col=columns.query, doc_col=columns.doc, label_col=columns.label
            )
        except RanklensInputError as e:
            raise columns.user_error(e, "qrels") from None
    values, run_index, run_only = native(plan, q, run)
    qids = q.query_ids
    status = np.where(run_index < 0, MISSING, SCORED).tolist()
    run_qids = run.query_ids
    ignored = [run_qids[i] for i in run_only]
    if ignored:
        nan = np.full((len(ignored), len(plan.metrics)), np.nan)
        values = np.concatenate([values, nan])
    return _rows(qids + ignored, status + [IGNORED] * len(ignored), values, plan)


def score_missing(qrels: SharedQrels, seen: Sequence[str], plan: Plan) -> Any:
    """The broadcast qrels' queries not in ``seen``, scored on an empty ranking.

    Exactly what :func:`ranklens.evaluate` does for a qrels query absent from the
    run (trec_eval ``-c``): the native evaluation of those qrels against a run
    with no query, so counts such as ``num_rel`` come out right, not as zeros.
    """
    pos = qrels.positions(list(seen))
    mask = np.ones(len(qrels.qrels), dtype=bool)
    mask[pos[pos >= 0]] = False
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return empty_output(plan)
    q = qrels.subset(idx)
    values, _, _ = native(plan, q, empty_run())
    return _rows(q.query_ids, [MISSING] * len(idx), values, plan)
