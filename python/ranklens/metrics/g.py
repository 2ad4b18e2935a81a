"""trec_eval's experimental gain measures ``binG`` and ``G``.

None takes a cutoff.  Gains (all but ``bin_g``): see :mod:`ranklens.metrics.gains`
(custom ``gainL`` parameters allowed).  Notation: g_i the gain at rank i, n the number
retrieved, I_1 >= ... >= I_P > 0 the positive ideal gains (P of them),
DCG_i = sum over j <= i of g_j / log2(j + 1) (DCG_i = DCG_n for i > n), and
IDCG_i = sum over j <= min(i, P) of I_j / log2(j + 1).

``bin_g`` (binary, uses the relevance level; m_binG.c): a relevant document at rank i
contributes 1 / log2(2 + nonrel_before), nonrel_before = i - 1 - (relevant documents
above it), unjudged documents counting as non-relevant; bin_g = sum / R, 0 when
nothing relevant is retrieved.

``g`` (m_G.c): with S_i = g_1 + ... + g_i and C_i = sum over j <= i of max(I_j, 1)
(I_j = 0 for j > P),  G = sum over i with g_i != 0 of g_i / log2(2 + C_i - S_i),
divided by I_1 + ... + I_P; 0 when P = 0.
"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of
from .gains import gain_of, gain_table, ideal_gains

__all__ = ["bin_g", "g"]


def _log2(x: float) -> float:
    """log2 as C and Rust compute it: -inf at 0 (``2 + C - S`` is 0 when labels
    past 2**53 swallow the 2), NaN below; ``math.log2`` raises there."""
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def bin_g(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    total, rel_above = 0.0, 0
    for rank, label in enumerate(ranking.labels, start=1):
        if is_relevant(label, level):
            nonrel_before = rank - 1 - rel_above
            total += 1 / math.log2(2 + nonrel_before)
            rel_above += 1
    if rel_above == 0:
        return 0.0
    return total / judgments.num_relevant(level)


def g(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    table = gain_table(metric)
    ideal = ideal_gains(judgments, table)
    if not ideal:
        return 0.0
    total, s, c = 0.0, 0.0, 0.0
    for i, label in enumerate(ranking.labels):
        gi = gain_of(label, table)
        s += gi
        c += max(ideal[i] if i < len(ideal) else 0.0, 1.0)
        if math.isinf(s) or math.isinf(c):
            # past the largest float: C_i - S_i is no number; refused by the caller
            return math.inf
        if gi != 0:
            total += gi / _log2(2 + c - s)
    ideal_sum = sum(ideal)
    if math.isinf(ideal_sum):
        return math.inf  # a finite total over it would be 0.0, not the value
    return total / ideal_sum
