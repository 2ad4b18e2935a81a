"""Interpolated precision at recall levels (trec_eval ``iprec_at_recall_x``) and
its average over recall points (trec_eval ``11pt_avg``).

Interpolated precision at rank i = max over retrieved ranks j >= i of P@j.  A recall
level x becomes a number c of relevant documents:

* trec_eval 10.0 (``version=10``, the default): c = lround(x * R), rounding halves
  away from zero;
* trec_eval 9.0.8, i.e. pytrec_eval (``version=9``): c = trunc(x * R + 0.9).

(Any version below 10 selects the 9.0.8 rule.)

``iprec_at_recall(recall=x)`` = interpolated precision at the rank of the c-th
relevant retrieved document; 0 when c exceeds the relevant documents retrieved;
for c <= 0 the interpolated precision at rank 1 (the largest P@j).  An empty
ranking scores 0 (trec_eval would compute 0 / 0 there for c = 0; a query missing
from the run gets 0 from trec_eval 10.0 ``-c``).

``iprec_avg(lo=, hi=, step=)`` = the mean of ``iprec_at_recall`` over the points
lo, lo + step, ..., hi (defaults 0, 1, 0.1: the 11 points of trec_eval
``11pt_avg``); each point is rounded to 10 decimals so that 0.3 is the double
nearest 0.3, as trec_eval reads it.  Values are added from the highest point down,
as in trec_eval.  trec_eval ``11pt_avg..25,.5,.75`` is ``iprec_avg(lo=0.25,
hi=0.75, step=0.25)``.

Names: trec_eval ``iprec_at_recall_0.10`` / ``iprec_at_recall..1,.5``, ``11pt_avg``;
ir_measures ``IPrec@0.1``; ranklens ``iprec_at_recall(recall=0.1)``, ``iprec_avg``.
"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def _lround(v: float) -> int:
    """C ``lround``: nearest integer, halves away from zero (``round()`` goes to even)."""
    a = abs(v)
    f = math.floor(a)
    n = f + 1 if a - f >= 0.5 else f  # a - f is exact
    return int(n) if v >= 0 else -int(n)


def recall_cut(x: float, num_rel: int, version: float) -> int:
    v = x * num_rel
    if version >= 10:
        return _lround(v)
    return math.trunc(v + 0.9)


def _interpolated(labels: tuple[float | None, ...], level: float, rel_ret: int, c: int) -> float:
    n = len(labels)
    if n == 0 or c > rel_ret:
        return 0.0
    # P@j for every rank j, then the running maximum from the bottom up.
    best = rel_ret / n
    so_far = rel_ret
    for i in range(n, 0, -1):
        if so_far == 0:
            break
        best = max(best, so_far / i)
        if is_relevant(labels[i - 1], level):
            if so_far == c:
                return best
            so_far -= 1
    return best


def recall_points(lo: float, hi: float, step: float) -> list[float]:
    n = _lround((hi - lo) / step) + 1 if step > 0 and hi >= lo else 1
    return [float(f"{lo + i * step:.10f}") for i in range(n)]


def iprec_at_recall(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    c = recall_cut(metric.param("recall"), judgments.num_relevant(level), metric.param("version"))
    rel_ret = sum(1 for label in ranking.labels if is_relevant(label, level))
    return _interpolated(ranking.labels, level, rel_ret, c)


def iprec_avg(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    r = judgments.num_relevant(level)
    version = metric.param("version")
    points = recall_points(metric.param("lo"), metric.param("hi"), metric.param("step"))
    rel_ret = sum(1 for label in ranking.labels if is_relevant(label, level))
    total = 0.0
    for x in reversed(points):
        total += _interpolated(ranking.labels, level, rel_ret, recall_cut(x, r, version))
    return total / len(points)
