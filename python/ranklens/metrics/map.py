"""Average precision (averaged over queries: MAP).

Definitions (R = number of qrels documents relevant at the metric's level):

* ``map`` = (1/R) * sum over every relevant retrieved document at rank i of
  precision@i, i.e. (number of relevant documents in ranks 1..i) / i
  (trec_eval ``map``).  Relevant documents never retrieved contribute 0.
* ``map@k`` = the same sum restricted to ranks i <= k, *still divided by R* (not by
  min(R, k)): trec_eval ``map_cut_k``.

Edge cases: R = 0 -> 0; nothing retrieved -> 0; documents not in qrels and negative
labels are never relevant; fewer than k retrieved just ends the sum early.

Names: trec_eval ``map`` and ``map_cut_k`` / ``map_cut.k``; ir_measures ``AP`` and
``AP@k``; ranx ``map`` / ``map@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def average_precision(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    num_rel = judgments.num_relevant(level)
    if num_rel == 0:
        return 0.0
    total = 0.0
    relevant_so_far = 0
    for rank, label in enumerate(ranking.top(metric.k), start=1):
        if is_relevant(label, level):
            relevant_so_far += 1
            total += relevant_so_far / rank
    return total / num_rel
