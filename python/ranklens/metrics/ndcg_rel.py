"""trec_eval's experimental gain measures ``ndcg_rel`` and ``Rndcg``.

None takes a cutoff.  Gains (all but ``bin_g``): see :mod:`ranklens.metrics.gains`
(custom ``gainL`` parameters allowed).  Notation: g_i the gain at rank i, n the number
retrieved, I_1 >= ... >= I_P > 0 the positive ideal gains (P of them),
DCG_i = sum over j <= i of g_j / log2(j + 1) (DCG_i = DCG_n for i > n), and
IDCG_i = sum over j <= min(i, P) of I_j / log2(j + 1).

``ndcg_rel`` (m_ndcg_rel.c; relevant = positive gain, the level is not used):
(1 / P) * (sum over ranks i with g_i > 0 of DCG_i / IDCG_i
+ (P - number of such ranks) * DCG_n / IDCG_P); 0 when P = 0 or the bracket <= 0.

``rndcg`` (m_Rndcg.c): the mean of DCG_j / IDCG_j over the "R levels" j: the ends of
the runs of equal ideal gain (j = P, or I_(j+1) != I_j), plus DCG_n / IDCG_P when
n >= P + 2 (trec_eval adds this "implied" final level only when at least two
documents follow the ideal's last positive one).  0 when the query has no relevant
document at the relevance level (trec_eval checks R first) or P = 0 (trec_eval
divides 0 by 0 there).

"""

from __future__ import annotations

import math

from ranklens._names import Metric

from ._common import Judgments, Ranked, level_of
from .gains import gain_of, gain_table, ideal_gains

__all__ = ["ndcg_rel", "rndcg"]


def _prefix(values: list[float], length: int) -> list[float]:
    """out[i] = sum over j < i of values[j] / log2(j + 2), for i in 0..length."""
    out = [0.0]
    for j in range(length):
        v = values[j] if j < len(values) else 0.0
        out.append(out[-1] + v / math.log2(j + 2) if v != 0 else out[-1])
    return out


def _curves(
    ranking: Ranked, judgments: Judgments, metric: Metric
) -> tuple[list[float], list[float], list[float]]:
    """(gains of the ranking, DCG_i, IDCG_i) for i = 0 .. max(n, P)."""
    table = gain_table(metric)
    gains = [gain_of(label, table) for label in ranking.labels]
    ideal = ideal_gains(judgments, table)
    m = max(len(gains), len(ideal))
    return gains, _prefix(gains, m), _prefix(ideal, m)


def ndcg_rel(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    gains, dcg, idcg = _curves(ranking, judgments, metric)
    p = len(ideal_gains(judgments, gain_table(metric)))
    if p == 0:
        return 0.0
    n = len(gains)
    total, rel_ret = 0.0, 0
    for i, gi in enumerate(gains, start=1):
        if gi > 0:
            total += dcg[i] / idcg[min(i, p)]
            rel_ret += 1
    total += (p - rel_ret) * dcg[n] / idcg[p]
    return total / p if total > 0 else 0.0


def rndcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    if judgments.num_relevant(level_of(metric, relevance_level)) == 0:
        return 0.0
    ideal = ideal_gains(judgments, gain_table(metric))
    p = len(ideal)
    if p == 0:
        return 0.0
    gains, dcg, idcg = _curves(ranking, judgments, metric)
    n = len(gains)
    points = [
        dcg[min(j, n)] / idcg[j] for j in range(1, p + 1) if j == p or ideal[j] != ideal[j - 1]
    ]
    if n >= p + 2:
        points.append(dcg[n] / idcg[p])
    total = 0.0
    for x in points:
        total += x
    return total / len(points)
