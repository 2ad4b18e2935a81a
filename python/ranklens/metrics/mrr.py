"""Reciprocal rank (averaged over queries: MRR).

Definitions:

* ``mrr`` = 1 / (rank of the first relevant retrieved document), 0 if no relevant
  document was retrieved (trec_eval ``recip_rank``).  Ranks start at 1.
* ``mrr@k`` = the same, but 0 unless that first relevant document is within the top k.

Edge cases: no relevant documents -> 0; documents not in qrels and negative labels
are never relevant (so they push the first relevant one down); tied scores are
ordered by doc id descending before ranks are assigned.

Names: trec_eval ``recip_rank``; ir_measures ``RR`` and ``RR@k``; ranx ``mrr@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def mrr(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    for rank, label in enumerate(ranking.top(metric.k), start=1):
        if is_relevant(label, level):
            return 1.0 / rank
    return 0.0
