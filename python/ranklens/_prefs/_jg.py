"""Several users' qrels for one query (``-R qrels_jg``): :func:`read_qrels_jg`,
:func:`evaluate_jg`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate
from ranklens._prefs._prefs import JudgmentResults, byte_key, level_of, read_lines
from ranklens.errors import RanklensInputError


def read_qrels_jg(path: str | os.PathLike[str]) -> dict[str, Qrels]:
    """Read a trec_eval ``qrels_jg`` file (``qid jg docno label``): one
    :class:`~ranklens.Qrels` per judgment group (user), keyed by the group id in
    byte order.  Labels are read as integers (trec_eval's ``atol``: ``1.7`` -> 1).
    A document judged twice in one group and query raises
    :class:`~ranklens.errors.RanklensInputError`."""
    name = os.fspath(path)
    groups: dict[str, dict[str, dict[str, float]]] = {}
    for n, (q, jg, doc, lv) in read_lines(path, 4):
        value = level_of(lv, f"{name}:{n}")
        per_q = groups.setdefault(jg, {}).setdefault(q, {})
        if doc in per_q:
            raise RanklensInputError(
                f"{name}:{n}: document {doc!r} judged twice for query {q!r} "
                f"in judgment group {jg!r}"
            )
        per_q[doc] = float(int(value))
    return {jg: Qrels(groups[jg]) for jg in sorted(groups, key=byte_key)}


def evaluate_jg(
    groups: Mapping[str, Qrels],
    run: Run | Mapping[str, Mapping[str, float]],
    metrics: Sequence[str],
    **kwargs: Any,
) -> JudgmentResults:
    """Metrics averaged over each query's judgment groups (trec_eval 10.0's
    ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg`` are ``map``, ``P@k`` and
    ``Rprec_mult`` here): each group is evaluated with :func:`ranklens.evaluate`
    (``kwargs`` passed on), and a query's value is the sum over the groups that
    judge it, in group order, divided by their number.  Queries: every query of
    any group, in byte order."""
    run = run if isinstance(run, Run) else Run(run)
    names = list(metrics)
    sums: dict[str, np.ndarray] = {}
    count: dict[str, int] = {}
    for g in groups.values():
        res = evaluate(g, run, names, **kwargs)
        for q, row in zip(res.query_ids, res.values):
            if q in sums:
                sums[q] = sums[q] + row
            else:
                sums[q] = np.array(row, dtype=np.float64)
            count[q] = count.get(q, 0) + 1
    qids = sorted(sums, key=byte_key)
    values = np.array([sums[q] / count[q] for q in qids], dtype=np.float64).reshape(
        len(qids), len(names)
    )
    return JudgmentResults(names, qids, values)
