"""Recall.

Definitions (R = number of qrels documents relevant at the metric's level):

* ``recall@k`` = (number of relevant documents in the top k) / R
  (trec_eval ``recall_k``; fewer than k retrieved simply means fewer can be found).
* ``recall`` (no cutoff) = num_rel_ret / R over the whole ranking
  (trec_eval ``set_recall``).

Edge cases: R = 0 (no relevant document, or a query whose labels are all below the
level or negative) -> 0.  Documents not in qrels and negative labels are never
relevant; only labels >= 0 and >= level count toward R.

Names: trec_eval ``recall_k`` / ``recall.k`` and ``set_recall``; ir_measures ``R@k``
and ``SetR``; ranx ``recall@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def recall(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    num_rel = judgments.num_relevant(level)
    if num_rel == 0:
        return 0.0
    relevant_in_top = sum(1 for label in ranking.top(metric.k) if is_relevant(label, level))
    return relevant_in_top / num_rel
