"""Yet Another Average Precision (trec_eval ``yaap``; Robertson, "On Smoothing Average
Precision", ECIR 2012).

Definition (R = number of qrels documents relevant at the metric's level):

    yaap = ln((1 + S) / (1 + R - S))

with S = the sum over every relevant retrieved document at rank i of precision@i
(the numerator of average precision).  Monotonic with AP on one query, finite and
unbounded at both ends, so a mean over queries is less dominated by extreme
queries.

Edge cases: nothing relevant retrieved -> ln(1 / (1 + R)) (0 when R = 0); every
relevant document at the top -> ln(1 + R); never NaN (S <= R).  No cutoff.

Names: trec_eval ``yaap``.
"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def yaap(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    num_rel = judgments.num_relevant(level)
    total = 0.0
    relevant_so_far = 0
    for rank, label in enumerate(ranking.top(None), start=1):
        if is_relevant(label, level):
            relevant_so_far += 1
            total += relevant_so_far / rank
    return math.log((1.0 + total) / (1.0 + num_rel - total))
