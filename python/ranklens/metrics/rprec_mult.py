"""Precision at a multiple of R: trec_eval ``Rprec_mult_x``.

``rprec_mult(mult=x)`` = precision at rank c = trunc(x * R + 0.9) (C's ``(long)``
of that double), i.e. (relevant in the top c) / c, dividing by c even when fewer
than c documents were retrieved; 0 when c <= 0 (so 0 when R = 0).  trec_eval 10.0
still truncates ``x * R + 0.9`` here (unlike ``iprec_at_recall``), so 9.0.8 and 10.0
agree.  ``mult=1`` gives c = R: ``r_precision``.

Names: trec_eval ``Rprec_mult_0.20`` (output) / ``Rprec_mult.0.2,0.5`` (command
line); ranklens ``rprec_mult(mult=0.2)``.
"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def rprec_cutoff(mult: float, num_rel: int) -> int:
    """trec_eval's ``(long) (mult * R + 0.9)``, clamped at 0."""
    return max(0, math.trunc(mult * num_rel + 0.9))


def rprec_mult(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    c = rprec_cutoff(metric.param("mult"), judgments.num_relevant(level))
    if c == 0:
        return 0.0
    return sum(1 for label in ranking.top(c) if is_relevant(label, level)) / c
