"""Unjudged at cutoff: trec_eval 10.0 ``unj_k``.

``unjudged@k`` = (documents in the top k that are not in the qrels or carry a
negative label) / k, dividing by k even when fewer than k were retrieved (the
missing ranks count as judged).  trec_eval 10.0 ``-c`` gives a query missing from
the run 0, as an empty ranking does here; with ``judged_only`` it is always 0.
Without a cutoff (ranklens only): the unjudged fraction of the whole ranking, 0 when
nothing was retrieved.  A "red flag" measure: high values mean the qrels cover the
run poorly.

Names: trec_eval ``unj_5`` / ``unj.5,10``; ranklens ``unjudged@5``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked


def unjudged(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    top = ranking.top(metric.k)
    n = sum(1 for label in top if label is None or label < 0)
    denom = metric.k if metric.k is not None else len(top)
    return n / denom if denom else 0.0
