"""``judged@k``: the share of the top k retrieved documents that are judged.

Judged = in the query's qrels with a label >= 0.  A negative label ("in the pool but
unjudged", trec_eval) does NOT count as judged -- the same rule as ``judged_only`` /
trec_eval ``-J``; ir_measures' ``Judged@k`` counts every qrels entry, negative labels
included, so the two differ only on negative labels.  Denominator: the number of
documents in the top k, min(k, retrieved), as ir_measures; 0 for an empty ranking.
Without k: the whole ranking.  The relevance level is not used.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked

__all__ = ["judged"]


def judged(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    top = ranking.top(metric.k)
    if not top:
        return 0.0
    return sum(1 for label in top if label is not None and label >= 0) / len(top)
