"""Hit rate (success): did any relevant document make it into the top k?

Definitions:

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


def hit_rate(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    return 1.0 if any(is_relevant(label, level) for label in ranking.top(metric.k)) else 0.0
