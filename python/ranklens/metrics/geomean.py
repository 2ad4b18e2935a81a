"""Geometric-mean measures: trec_eval ``gm_map`` and ``gm_bpref``.

Per query, ``gm_map`` is ``map`` and ``gm_bpref`` is ``bpref`` (same definitions,
same numbers).  Only the summary over queries differs (``Metric.aggregate ==
"gmean"``, see :func:`geometric_mean`): trec_eval stores ln(max(x, 0.00001)) for
each query (that log is what pytrec_eval returns per query; trec_eval prints no
per-query line), adds these in query order and reports exp(sum / number of
queries), 0 when there is no query.  The floor (trec_eval's MIN_GEO_MEAN) keeps one
query scoring 0 from zeroing the whole summary; a query missing from the run counts
as ln(0.00001), as with ``trec_eval -c``.

Names: trec_eval ``gm_map`` (formerly ``gm_ap``) and ``gm_bpref``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ranklens._names import Metric

from ._common import Judgments, Ranked
from .bpref import bpref
from .map import average_precision

MIN_GEO_MEAN = 0.00001


def gm_map(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    return average_precision(ranking, judgments, Metric("map", None, metric.rel), relevance_level)


def gm_bpref(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    return bpref(ranking, judgments, Metric("bpref", None, metric.rel), relevance_level)


def geometric_mean(values: Iterable[float]) -> float:
    """exp(mean of ln(max(x, MIN_GEO_MEAN))), logs added left to right; 0 for none."""
    total = 0.0
    n = 0
    for v in values:
        total += math.log(max(v, MIN_GEO_MEAN))
        n += 1
    return math.exp(total / n) if n else 0.0
