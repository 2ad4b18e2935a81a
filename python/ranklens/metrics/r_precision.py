"""R-precision: precision at rank R, where R is the number of relevant documents.

Definition: ``r_precision`` = (number of relevant documents in the top R) / R
(trec_eval ``Rprec``).  If fewer than R documents were retrieved, the missing ranks
count as non-relevant (the denominator stays R).

Edge cases: R = 0 -> 0; documents not in qrels and negative labels are never
relevant; negative labels do not count toward R.

Names: trec_eval ``Rprec``; ir_measures ``Rprec``; ranx ``r_precision``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def r_precision(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    num_rel = judgments.num_relevant(level)
    if num_rel == 0:
        return 0.0
    relevant_in_top = sum(1 for label in ranking.top(num_rel) if is_relevant(label, level))
    return relevant_in_top / num_rel
