"""Precision.

Definitions (``rel`` = relevant at the metric's level, see ``_common.is_relevant``):

* ``precision@k`` = (number of relevant documents in the top k) / k.
  The denominator is always k, even when fewer than k documents were retrieved:
  missing ranks count as non-relevant (trec_eval ``P_k``).
* ``precision`` (no cutoff) = num_rel_ret / num_ret over the whole ranking, and 0 when
  nothing was retrieved (trec_eval ``set_P``).

Edge cases: no relevant documents -> 0; unjudged documents (not in qrels) and
negative labels are non-relevant; ties are resolved by the ranking (doc id
descending) before the top k is taken.

Names: trec_eval ``P_k`` / ``P.k`` and ``set_P``; ir_measures ``P@k`` and ``SetP``;
ranx ``precision@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def precision(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    top = ranking.top(metric.k)
    relevant_in_top = sum(1 for label in top if is_relevant(label, level))
    if metric.k is not None:
        return relevant_in_top / metric.k
    if len(ranking) == 0:
        return 0.0
    return relevant_in_top / len(ranking)
