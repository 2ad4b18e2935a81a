"""F1: the harmonic mean of precision and recall.

Definitions:

* ``f1@k`` = 2 * P * R / (P + R) with P = ``precision@k`` (denominator k, even if
  fewer than k retrieved) and R = ``recall@k``; 0 when P + R = 0.
* ``f1`` (no cutoff) = the same formula with P = set precision (num_rel_ret /
  num_ret) and R = set recall (num_rel_ret / R): trec_eval ``set_F`` with beta = 1,
  whose formula (beta + 1) * P * R / (beta * P + R) is identical when beta = 1.

Edge cases: no relevant document (R = 0), nothing retrieved or no relevant document
retrieved -> 0.

Names: trec_eval ``set_F`` (``set_F.1``) for the uncut form (trec_eval has no cutoff
form); ir_measures ``SetF``; ranx ``f1@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked
from .precision import precision
from .recall import recall


def f1(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    p = precision(ranking, judgments, metric, relevance_level)
    r = recall(ranking, judgments, metric, relevance_level)
    if p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)
