"""Reference for the dense path (``src/core/dense/``): score matrices row by row.

A row of ``scores`` and ``labels`` is read as one query of the id path: candidate
``j`` is the document named ``str(j)``, judged with label ``labels[i][j]`` (so every
candidate is judged; ``0`` is judged non-relevant), retrieved with score
``scores[i][j]``.  The row is then scored by :func:`evaluate_reference`, the
reference backend of every metric, with the ties of the dense path:

* ``"first"``: equal scores in column order (the run mapping's order, ``ties="input"``);
* ``"best"`` / ``"worst"``: equal scores by label descending / ascending, then column;
* ``"expected"``: the mean over every ordering of each group of equal scores,
  enumerated (``ties="expected"`` of the reference backend).

A row with no label relevant at ``relevance_level`` is empty: every value is
``empty``'s (``"zero"`` 0, ``"one"`` 1, ``"nan"`` and ``"skip"`` NaN).  ``mask``
(truthy: a candidate) or ``lengths`` (the first ``lengths[i]`` columns) leave cells
out before anything else.  Plain Python lists in, lists out: no numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

from ranklens._names import Metric

from . import evaluate_reference

__all__ = ["evaluate_dense_reference"]

EMPTY_VALUE = {"zero": 0.0, "one": 1.0, "nan": float("nan"), "skip": float("nan")}


def evaluate_dense_reference(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[float]],
    metrics: Sequence[Metric],
    relevance_level: float = 1,
    *,
    ties: str = "first",
    empty: str = "zero",
    mask: Sequence[Sequence[bool]] | None = None,
    lengths: Sequence[int] | None = None,
) -> tuple[list[list[float]], list[bool]]:
    """``(values, empty_rows)``: ``values[i]`` holds row ``i``'s value of each metric,
    ``empty_rows[i]`` whether row ``i`` had no relevant label."""
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    empty_rows = []
    for i, (srow, lrow) in enumerate(zip(scores, labels)):
        cols = [
            j
            for j in range(len(srow))
            if (mask is None or mask[i][j]) and (lengths is None or j < lengths[i])
        ]
        if ties == "best":
            cols.sort(key=lambda j: -float(lrow[j]))  # stable: then column order
        elif ties == "worst":
            cols.sort(key=lambda j: float(lrow[j]))
        qid = str(i)
        qrels[qid] = {str(j): float(lrow[j]) for j in cols}
        run[qid] = {str(j): float(srow[j]) for j in cols}
        rel = [lab for lab in qrels[qid].values() if lab >= 0 and lab >= relevance_level]
        empty_rows.append(not rel)
    per = evaluate_reference(
        {q: j for q, j in qrels.items()},
        run,
        metrics,
        relevance_level,
        ties="expected" if ties == "expected" else "input",
    )
    values = []
    for i, is_empty in enumerate(empty_rows):
        if is_empty:
            values.append([EMPTY_VALUE[empty]] * len(metrics))
        else:
            values.append([per[str(i)][m.name] for m in metrics])
    return values, empty_rows
