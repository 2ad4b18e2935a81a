"""Diversity (intent-aware) metrics on subtopic judgments, as NIST's ndeval
(TREC Web track, version 4.5; wrapped by ``pyndeval``) computes them.

A query has subtopics (intents, or pieces of needed information); a judged
document is relevant to a subtopic when its label for that subtopic is ``>=
level`` (and ``>= 0``): ndeval's judgments are binary.  Only subtopics with at
least one relevant judged document count: ``S`` is their number (ndeval's
``actualSubtopics``); with ``S = 0`` every value is 0.  Documents not in the
qrels are relevant to nothing.

Novelty gain of the document at rank r: ``g(r) = sum over the subtopics s it is
relevant to of (1 - alpha)^c_s(r)``, ``c_s(r)`` the number of documents relevant
to ``s`` ranked above r (each repeat of a subtopic is worth ``1 - alpha`` of the
previous one: the redundancy penalty).

* ``alpha_dcg@k`` = sum_{r<=k} g(r) / log2(r + 1), divided by the "ideal ideal"
  sum_{r<=k} S (1 - alpha)^(r-1) / log2(r + 1) (ndeval's collection-independent
  normalisation; as in ndeval, k = 1 is not divided).
* ``alpha_ndcg@k`` = the same sum over the run / over the ideal ranking.
* ``err_ia@k`` = sum_{r<=k} g(r) / r, divided by sum_{r<=k} S (1 - alpha)^(r-1) / r
  (k = 1 not divided, as in ndeval); with alpha = 0.5 this is ERR-IA with a
  stopping probability of 1/2 at each relevant document (Chapelle et al.).
* ``nerr_ia@k`` = the same sum over the run / over the ideal ranking.
* ``nrbp`` = (1 - (1 - alpha) beta) / S * sum_r g(r) beta^(r-1) over the whole
  ranking; ``nnrbp`` = nrbp / nrbp of the ideal ranking.
* ``p_ia@k`` = sum_{r<=k} (subtopics the document at r is relevant to) / (k S).
* ``ap_ia`` = mean over the S subtopics of the average precision of the ranking for
  that subtopic alone (relevant documents of the subtopic as R).
* ``st_recall@k`` = subtopics covered by the top k / S.

The normalised values are 0 when the run's sum is 0.  The ideal ranking is
ndeval's greedy approximation (the exact one is NP-hard): rank by rank, the judged
document with the largest novelty gain given the documents already placed; equal
gains go to the largest document id (byte order).  Where ndeval has no value
ranklens extends the definition: any k (ndeval stops at 20), and a query with
``S = 0`` gets ``nnrbp`` 0 (ndeval divides 0 by 0).

The other metrics see one label per document on subtopic qrels: the largest of
its subtopic labels (relevant when relevant to any subtopic, as ndeval's
non-intent-aware MAP).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ranklens._names import Metric
from ranklens.errors import RanklensInputError

from ._common import Judgments, Ranked, is_relevant, level_of

__all__ = [
    "alpha_dcg",
    "alpha_ndcg",
    "ap_ia",
    "err_ia",
    "nerr_ia",
    "nnrbp",
    "nrbp",
    "p_ia",
    "st_recall",
]

#: The largest cutoff of alpha_dcg and err_ia (their normaliser sums k terms).
MAX_NORMALISED_K = 10_000_000


def _subtopics(judgments: Judgments, family: str) -> Mapping[str, Mapping[str, float]]:
    if judgments.subtopics is None:
        raise RanklensInputError(
            f"{family} needs subtopic judgments (Qrels.from_subtopics, "
            "Qrels.from_trec(path, subtopics=True) or Qrels.from_groups)"
        )
    return judgments.subtopics


def _relevant(subtopics: Mapping[str, Mapping[str, float]], level: float) -> dict[str, list[str]]:
    """doc -> the subtopics it is relevant to, in sorted subtopic order."""
    return {
        doc: [s for s in sorted(labels) if is_relevant(labels[s], level)]
        for doc, labels in subtopics.items()
    }


def _novelty_gains(
    docs: Sequence[str], relevant: Mapping[str, list[str]], alpha: float
) -> list[float]:
    weight: dict[str, float] = {}
    gains = []
    for doc in docs:
        g = 0.0
        for s in relevant.get(doc, []):
            w = weight.get(s, 1.0)
            g += w
            weight[s] = w * (1.0 - alpha)
        gains.append(g)
    return gains


def _ideal_gains(relevant: Mapping[str, list[str]], depth: int, alpha: float) -> list[float]:
    """Gains of ndeval's greedy ideal ranking, to ``depth`` documents."""
    left = sorted((d for d, subs in relevant.items() if subs), key=lambda d: d.encode("utf-8"))
    weight: dict[str, float] = {}
    gains: list[float] = []
    while left and len(gains) < depth:
        best, best_gain = 0, -math.inf
        for i, doc in enumerate(left):
            g = 0.0
            for s in relevant[doc]:
                g += weight.get(s, 1.0)
            if g >= best_gain:  # ascending ids: the largest id wins a tie
                best, best_gain = i, g
        doc = left.pop(best)
        for s in relevant[doc]:
            weight[s] = weight.get(s, 1.0) * (1.0 - alpha)
        gains.append(best_gain)
    return gains


def _num_subtopics(relevant: Mapping[str, list[str]]) -> int:
    return len({s for subs in relevant.values() for s in subs})


def _discount(i: int) -> float:
    return math.log(2.0) / math.log(i + 2.0)


def _reciprocal(i: int) -> float:
    return 1.0 / (i + 1)


def _weighted(gains: Sequence[float], weight: Callable[[int], float]) -> float:
    total = 0.0
    for i, g in enumerate(gains):
        total += g * weight(i)
    return total


def _prepare(
    ranking: Ranked, judgments: Judgments, metric: Metric, level: float
) -> tuple[dict[str, list[str]], int]:
    relevant = _relevant(_subtopics(judgments, metric.family), level_of(metric, level))
    depth = len(ranking) if metric.k is None else metric.k
    return relevant, depth


def _over_ideal_ideal(
    ranking: Ranked,
    judgments: Judgments,
    metric: Metric,
    level: float,
    weight: Callable[[int], float],
) -> float:
    relevant, depth = _prepare(ranking, judgments, metric, level)
    actual = _num_subtopics(relevant)
    if actual == 0 or depth == 0:
        return 0.0
    alpha = metric.param("alpha")
    run = _weighted(_novelty_gains(ranking.docs[:depth], relevant, alpha), weight)
    if depth == 1:
        return run
    total, gain = 0.0, float(actual)
    for i in range(min(depth, MAX_NORMALISED_K)):
        total += gain * weight(i)
        gain *= 1.0 - alpha
    return run / total


def _over_ideal(
    ranking: Ranked,
    judgments: Judgments,
    metric: Metric,
    level: float,
    weight: Callable[[int], float],
) -> float:
    relevant, depth = _prepare(ranking, judgments, metric, level)
    alpha = metric.param("alpha")
    run = _weighted(_novelty_gains(ranking.docs[:depth], relevant, alpha), weight)
    if run == 0.0:
        return 0.0
    return run / _weighted(_ideal_gains(relevant, depth, alpha), weight)


def alpha_dcg(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    return _over_ideal_ideal(ranking, judgments, metric, level, _discount)


def alpha_ndcg(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    return _over_ideal(ranking, judgments, metric, level, _discount)


def err_ia(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    return _over_ideal_ideal(ranking, judgments, metric, level, _reciprocal)


def nerr_ia(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    return _over_ideal(ranking, judgments, metric, level, _reciprocal)


def _rank_biased(gains: Sequence[float], beta: float) -> float:
    total, decay = 0.0, 1.0
    for g in gains:
        total += g * decay
        decay *= beta
    return total


def nrbp(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    relevant, _ = _prepare(ranking, judgments, metric, level)
    actual = _num_subtopics(relevant)
    if actual == 0:
        return 0.0
    alpha, beta = metric.param("alpha"), metric.param("beta")
    run = _rank_biased(_novelty_gains(ranking.docs, relevant, alpha), beta)
    return run * (1.0 - (1.0 - alpha) * beta) / actual


def nnrbp(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    relevant, _ = _prepare(ranking, judgments, metric, level)
    alpha, beta = metric.param("alpha"), metric.param("beta")
    run = _rank_biased(_novelty_gains(ranking.docs, relevant, alpha), beta)
    ideal = _rank_biased(_ideal_gains(relevant, len(relevant), alpha), beta)
    if run == 0.0 or ideal == 0.0:
        return 0.0
    return run / ideal


def p_ia(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    relevant, depth = _prepare(ranking, judgments, metric, level)
    actual = _num_subtopics(relevant)
    if actual == 0 or depth == 0:
        return 0.0
    hits = sum(len(relevant.get(doc, [])) for doc in ranking.docs[:depth])
    return hits / (float(depth) * actual)


def ap_ia(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    relevant, _ = _prepare(ranking, judgments, metric, level)
    per_subtopic: dict[str, int] = {}
    for subs in relevant.values():
        for s in subs:
            per_subtopic[s] = per_subtopic.get(s, 0) + 1
    if not per_subtopic:
        return 0.0
    count: dict[str, int] = {}
    total: dict[str, float] = {}
    for i, doc in enumerate(ranking.docs):
        for s in relevant.get(doc, []):
            count[s] = count.get(s, 0) + 1
            total[s] = total.get(s, 0.0) + count[s] / (i + 1)
    mean = 0.0
    for s in sorted(per_subtopic):
        mean += total.get(s, 0.0) / per_subtopic[s]
    return mean / len(per_subtopic)


def st_recall(ranking: Ranked, judgments: Judgments, metric: Metric, level: float) -> float:
    relevant, depth = _prepare(ranking, judgments, metric, level)
    actual = _num_subtopics(relevant)
    if actual == 0:
        return 0.0
    covered = {s for doc in ranking.docs[:depth] for s in relevant.get(doc, [])}
    return len(covered) / actual
