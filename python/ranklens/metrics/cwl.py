"""The C/W/L measures (Moffat et al.'s framework; Azzopardi, Thomas & Moffat, SIGIR
2019) as ``cwl_eval`` computes them and ir_measures reports them: ``rbp_cwl``,
``sdcg``, ``bpm``, ``nerr8``, ``nerr9``, ``nerr10``, ``nerr11``, ``inst``, ``insq``.

A user reads the ranking from the top and, after rank i, goes on with probability
C(i).  Over a horizon of ``depth`` ranks (parameter, 1000: cwl_eval's, the depth of
ir_measures' provider; the ranking is cut there and, shorter, padded with gain 0),
with P(1) = 1 and P(i) = C(1) ... C(i - 1), the expected utility per document
inspected is

    EU = (sum over i <= depth of P(i) * g(i)) / (sum over i <= depth of P(i)),

the value ir_measures reports.  ``@k`` (where the family's model does not take k
itself) scores the ranking cut at k: gains past k are 0.

Gains (cwl_eval's, from ir_measures' provider): a document missing from the qrels
gains 0.  A judged label l is first raised to max(l, 0); with ``max_rel > min_rel``
the gain is graded, (clamp(max(l, 0), min_rel, max_rel) - min_rel) / (max_rel -
min_rel); otherwise (the default, ``max_rel=0``) it is binary, 1 when the label is
relevant at the relevance level (label >= 0 and >= level).

Continuation at rank i (G(i) = g(1) + ... + g(i)):

* ``rbp_cwl(p=0.8)``: p (rank-biased precision, normalised over the horizon: it
  differs from trec_eval's ``rbp`` by the factor 1 / (1 - p**depth) and in its gains);
* ``sdcg@k``: log2(i + 1) / log2(i + 2) for i < k, else 0 (scaled DCG);
* ``bpm(T=1)@k``: 1 while G(i) < T and i < k, else 0 (the static Bejeweled Player
  Model, every document costing 1);
* ``nerr8@k``: 1 - g(i) for i < k, else 0;
* ``nerr9@k``: i / (i + 1) * (1 - g(i)) for i < k, else 0;
* ``nerr10(p=0.9)``: p * (1 - g(i));
* ``nerr11(T=1)``: ((i + 2T - 1) / (i + 2T))**2 * (1 - g(i));
* ``inst(T=1)``: ((i + T + T_i - 1) / (i + T + T_i))**2, T_i = T - G(i);
* ``insq(T=1)``: ((i + 2T - 1) / (i + 2T))**2.

``residual=1`` gives instead cwl_eval's residual (``-r``): how much the value could
still grow, the expected utility with every unjudged document and the padding past
the ranking gaining 1 (the continuation recomputed with those gains) minus the
value.  ir_measures reports no residual.  Spellings: ir_measures
``RBP(rel=1, p=)``, ``SDCG(max_rel=)@k``, ``BPM(T=, max_rel=)@k``, ``NERR8@k``,
``NERR9@k``, ``NERR10(p=)``, ``NERR11(T=)``, ``INST(T=)``, ``INSQ(T=)`` (each with
``min_rel=``, ``max_rel=``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of

__all__ = ["bpm", "insq", "inst", "nerr8", "nerr9", "nerr10", "nerr11", "rbp_cwl", "sdcg"]

# C(i, g(i), G(i)) for 1-based rank i
Continuation = Callable[[int, float, float], float]


def _gain(label: float | None, lo: float, hi: float, level: float, best: bool) -> float:
    if label is None:
        return 1.0 if best else 0.0
    if hi > lo:
        return (min(max(max(label, 0.0), lo), hi) - lo) / (hi - lo)
    return 1.0 if is_relevant(label, level) else 0.0


def _expected_utility(
    ranking: Ranked, metric: Metric, relevance_level: float, c: Continuation
) -> float:
    value = _bound(ranking, metric, relevance_level, c, best=False)
    if metric.param("residual") != 0:
        return _bound(ranking, metric, relevance_level, c, best=True) - value
    return value


def _bound(
    ranking: Ranked, metric: Metric, relevance_level: float, c: Continuation, best: bool
) -> float:
    """Unjudged documents and the padding gain 0 (``best`` False) or 1."""
    level = level_of(metric, relevance_level)
    labels = ranking.top(metric.k)
    depth = int(metric.param("depth"))
    lo, hi = metric.param("min_rel"), metric.param("max_rel")
    utility = mass = total = 0.0
    reach = 1.0
    for i in range(1, depth + 1):
        if i <= len(labels):
            g = _gain(labels[i - 1], lo, hi, level, best)
        else:
            g = 1.0 if best else 0.0
        utility += reach * g
        mass += reach
        total += g
        reach *= c(i, g, total)
        if reach == 0:
            break
    return utility / mass if mass > 0 else 0.0


def _within(metric: Metric, i: int) -> bool:
    return metric.k is None or i < metric.k


def rbp_cwl(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    p = metric.param("p")
    return _expected_utility(ranking, metric, level, lambda i, g, t: p)


def sdcg(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    def c(i: int, g: float, t: float) -> float:
        return math.log(i + 1) / math.log(i + 2) if _within(metric, i) else 0.0

    return _expected_utility(ranking, metric, level, c)


def bpm(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    target = metric.param("T")

    def c(i: int, g: float, t: float) -> float:
        return 1.0 if t < target and _within(metric, i) else 0.0

    return _expected_utility(ranking, metric, level, c)


def nerr8(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    def c(i: int, g: float, t: float) -> float:
        return 1.0 - g if _within(metric, i) else 0.0

    return _expected_utility(ranking, metric, level, c)


def nerr9(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    def c(i: int, g: float, t: float) -> float:
        return i / (i + 1.0) * (1.0 - g) if _within(metric, i) else 0.0

    return _expected_utility(ranking, metric, level, c)


def nerr10(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    p = metric.param("p")
    return _expected_utility(ranking, metric, level, lambda i, g, t: p * (1.0 - g))


def nerr11(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    target = metric.param("T")

    def c(i: int, g: float, t: float) -> float:
        return ((i + 2 * target - 1) / (i + 2 * target)) ** 2 * (1.0 - g)

    return _expected_utility(ranking, metric, level, c)


def inst(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    target = metric.param("T")

    def c(i: int, g: float, t: float) -> float:
        left = target - t
        return ((i + target + left - 1) / (i + target + left)) ** 2

    return _expected_utility(ranking, metric, level, c)


def insq(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    target = metric.param("T")

    def c(i: int, g: float, t: float) -> float:
        return ((i + 2 * target - 1) / (i + 2 * target)) ** 2

    return _expected_utility(ranking, metric, level, c)
