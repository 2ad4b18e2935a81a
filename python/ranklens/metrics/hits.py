"""Hits and hit rate: how many relevant documents made it into the top k, and
whether any did.

Definitions:

* ``hits@k`` = number of relevant documents in the top k (at most min(k, num_ret)).
* ``hits`` (no cutoff) = num_rel_ret, the number of relevant retrieved documents.

Aggregation: per-query values are averaged over queries (ranx semantics), unlike
trec_eval's ``num_rel_ret`` which is summed.

Edge cases: no relevant documents or nothing retrieved -> 0; documents not in qrels
and negative labels are never relevant.

Names: ranx ``hits@k``; trec_eval ``num_rel_ret`` per query (summed there, not
averaged); ir_measures ``NumRelRet`` per query.

Hit rate (success):

* ``hit_rate@k`` = 1 if at least one relevant document is in the top k, else 0
  (trec_eval ``success_k``; fewer than k retrieved is fine).
* ``hit_rate`` (no cutoff) = 1 if any relevant document was retrieved at all.

Edge cases: no relevant documents or nothing retrieved -> 0; documents not in qrels
and negative labels are never relevant.

Names: trec_eval ``success_k`` / ``success.k``; ir_measures ``Success@k``; ranx
``hit_rate@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def hits(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    return float(sum(1 for label in ranking.top(metric.k) if is_relevant(label, level)))


def hit_rate(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    return 1.0 if any(is_relevant(label, level) for label in ranking.top(metric.k)) else 0.0
