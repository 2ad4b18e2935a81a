"""Rank-biased precision (Moffat & Zobel, TOIS 2008): trec_eval 10.0 ``rbp``, ``rbp_resid``.

Persistence ``p`` (parameter, default 0.9 as in trec_eval).  The relevance level is
NOT used: trec_eval's rbp is graded.

``rbp@k`` = (1 - p) * sum over ranks i <= k of gain'_i * p**(i - 1), with gains from
:mod:`ranklens.metrics.gains` (``gainL`` parameters allowed) normalised into [0, 1]:

* the gain table is that of the levels trec_eval knows for the query: every listed
  ``gainL`` label (in the qrels or not), every integer 0..M, and every other judged
  label >= 0, M being the query's largest judged label >= 0 (none if there is none);
* if some table gain is < 0 or > 1, every gain becomes (gain - min) / (max - min)
  over the table.  So with default gains and labels up to M > 1, gain' = label / M
  -- a per-query scale; with binary labels, gain' = label.  Gains already inside
  [0, 1] are used as given: ``rbp(gain1=0.5,gain2=1)``; binary RBP at level 2 on
  labels 0..3 is ``rbp(gain1=0,gain2=1,gain3=1)``;
* documents not in the qrels or with a negative label gain 0 (not normalised);
* if all table gains are equal and outside [0, 1] (trec_eval divides 0 by 0 and
  prints nan), ranklens clamps each gain into [0, 1] instead.

``rbp_resid@k`` = p**n + (1 - p) * sum over unjudged ranks i <= k of p**(i - 1),
n = min(k, retrieved), "unjudged" meaning not in the qrels or a negative label: how
much rbp could still grow.  As in trec_eval it is 0 -- not p**n -- when none of the
scored documents is unjudged.

Without k, the whole ranking (trec_eval's measures have no cutoff; ``@k`` scores the
top k, like ``-M k``).  Spellings: trec_eval ``rbp``, ``rbp.p=0.8``, ``rbp_resid``;
ir_measures ``RBP(p=0.8)`` -- note ir_measures' default p is 0.8, and its RBP without
``rel`` is graded differently (cwl_eval); ``RBP`` here means trec_eval's p = 0.9.
"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked
from .gains import gain_of, gain_table

__all__ = ["rbp", "rbp_resid"]


def _normaliser(judgments: Judgments, table: dict[float, float]):
    judged = [label for label in judgments.labels.values() if label >= 0]
    levels = set(table)
    if judged:
        levels |= {float(i) for i in range(math.floor(max(judged)) + 1)}
        levels |= set(judged)
    gains = [gain_of(level, table) for level in levels]
    lo, hi = min(gains, default=0.0), max(gains, default=0.0)
    if lo >= 0 and hi <= 1:
        return lambda x: x
    if hi == lo:
        return lambda x: min(max(x, 0.0), 1.0)
    return lambda x: (x - lo) / (hi - lo)


def rbp(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    p = metric.param("p")
    table = gain_table(metric)
    norm = _normaliser(judgments, table)
    total, weight = 0.0, 1.0
    for label in ranking.top(metric.k):
        gain = norm(gain_of(label, table)) if label is not None and label >= 0 else 0.0
        if gain != 0:
            total += gain * weight
        weight *= p
    return (1 - p) * total


def rbp_resid(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    p = metric.param("p")
    total, weight, unjudged = 0.0, 1.0, 0
    for label in ranking.top(metric.k):
        if label is None or label < 0:
            unjudged += 1
            total += weight
        weight *= p
    return weight + (1 - p) * total if unjudged else 0.0
