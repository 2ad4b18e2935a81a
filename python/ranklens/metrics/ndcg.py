"""DCG and nDCG (Jarvelin & Kekalainen 2002), as trec_eval ``ndcg`` / ``ndcg_cut``.

Graded metrics: the relevance level (``relevance_level`` / ``rel=``) is IGNORED.

Gain of a document with label L:

* ``ndcg``, ``dcg``: gain = L itself (float labels are used exactly);
* ``ndcg_burges``: gain = 2**L - 1 (Burges et al. 2005);

and in both cases a document contributes only if L > 0: label 0, negative labels
(trec_eval's "in the pool but unjudged") and documents not in the qrels have gain 0.

Discount: the document at rank i (from 1) contributes gain / log2(i + 1).

* ``dcg@k`` = sum of the discounted gains of the top k ranks;
  ``dcg`` = the same over the whole ranking.
* ideal ranking = every qrels document with a positive label, sorted by label
  descending (ties among equal labels do not matter: equal gains).  It is NOT
  limited to the retrieved documents nor to num_ret ranks.
* ``idcg@k`` = DCG of the ideal ranking cut at k; ``idcg`` = DCG of all of it.
* ``ndcg@k`` = dcg@k / idcg@k; ``ndcg`` = dcg / idcg; 0 when the ideal DCG is 0
  (no document with a positive label).  A DCG or ideal DCG past the largest
  float makes the value infinite, which the caller refuses (never 0.0 or 1.0).

Fewer than k retrieved: dcg@k just sums what there is, idcg@k still takes k ideal
ranks (or all positive documents, if fewer).

Names: trec_eval ``ndcg`` and ``ndcg_cut_k`` / ``ndcg_cut.k`` (default gains);
ir_measures ``nDCG`` / ``nDCG@k`` (trec_eval provider); ranx ``ndcg@k`` (gain =
label) and ``ndcg_burges@k``, and ``dcg@k``.  trec_eval's ``dcg`` measure has no
cutoff form; ``dcg@k`` here is the numerator of ``ndcg_cut_k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from ranklens._names import Metric

from ._common import Judgments, Ranked


def _linear_gain(label: float) -> float:
    return label


def _exponential_gain(label: float) -> float:
    return 2.0**label - 1.0


def _discounted_sum(labels: Iterable[float | None], gain: Callable[[float], float]) -> float:
    """Sum of gain(label) / log2(rank + 1) over ranks 1, 2, ... (positive labels only)."""
    total = 0.0
    for rank, label in enumerate(labels, start=1):
        if label is not None and label > 0:
            total += gain(label) / math.log2(rank + 1)
    return total


def _ideal_labels(judgments: Judgments, k: int | None) -> list[float]:
    positives = sorted((label for label in judgments.labels.values() if label > 0), reverse=True)
    return positives if k is None else positives[:k]


def _ndcg_with(
    ranking: Ranked, judgments: Judgments, k: int | None, gain: Callable[[float], float]
) -> float:
    ideal = _discounted_sum(_ideal_labels(judgments, k), gain)
    if ideal <= 0:
        return 0.0
    dcg_k = _discounted_sum(ranking.top(k), gain)
    if math.isinf(ideal) or math.isinf(dcg_k):
        # A sum past the largest float: the quotient would be 0.0 (a finite DCG
        # over an infinite ideal) or NaN, never the value; infinite, it is
        # refused naming the query and metric (``metrics.evaluate_queries``).
        return math.inf
    return dcg_k / ideal


def ndcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    return _ndcg_with(ranking, judgments, metric.k, _linear_gain)


def ndcg_burges(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    return _ndcg_with(ranking, judgments, metric.k, _exponential_gain)


def dcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    return _discounted_sum(ranking.top(metric.k), _linear_gain)


def idcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    """Ideal DCG (gain = label): the DCG of the ideal ranking cut at k."""
    return _discounted_sum(_ideal_labels(judgments, metric.k), _linear_gain)
