"""``compat``: compatibility (Clarke, Vtyurina & Smucker, TOIS 2021), as ir_measures'
``Compat(p=0.95, normalize=True)``: rank-biased overlap between the ranking and an
ideal ranking of the qrels.

The ideal ranking holds every judged document with a label > 0, by label descending;
within one label the retrieved documents come first, in their rank order (the ideal
ranking most compatible with the run), then the unretrieved ones.  With
D = max(retrieved, ideal) and O(d) the number of documents in both the top d of the
ranking and the top d of the ideal ranking:

    RBO = (sum over d = 1..D of p**(d - 1) * O(d) / d) / (sum over d of p**(d - 1))

0 when D = 0.  ``normalize`` (any value but 0) divides by the RBO of the ideal ranking
with itself over the same depth, when that is above 0 (a finite ideal ranking cannot
reach 1).  The relevance level is not used; the whole ranking is scored (no cutoff).
Parameters: ``p`` (persistence, default 0.95), ``normalize`` (default 1).

ir_measures' compat provider orders the ideal ranking's documents of one label by
their run score, an unretrieved document scoring 0.0 (so it goes above retrieved
documents with a negative score), and divides 0 by 0 for an empty ranking of a query
without a document labelled > 0; ranklens follows the definition above (0 there).
Spellings: ``compat``, ``compatibility``, ir_measures ``Compat(p=, normalize=)``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked

__all__ = ["compat"]


def _ideal(ranking: Ranked, judgments: Judgments) -> list[object]:
    """The ideal ranking, its retrieved documents named by their rank (0-based), the
    others by a placeholder: labels only, so grouped qrels (one judgment a group, its
    first retrieved member carrying the label) read the same way."""
    grades = sorted({label for label in judgments.labels.values() if label > 0}, reverse=True)
    ideal: list[object] = []
    for grade in grades:
        wanted = sum(1 for label in judgments.labels.values() if label == grade)
        retrieved = [i for i, label in enumerate(ranking.labels) if label == grade][:wanted]
        ideal += retrieved
        ideal += [("unretrieved", grade, j) for j in range(wanted - len(retrieved))]
    return ideal


def _rbo(ranking: list[object], ideal: list[object], p: float, depth: int) -> float:
    seen_ranking: set[object] = set()
    seen_ideal: set[object] = set()
    score = normaliser = 0.0
    weight = 1.0
    for i in range(depth):
        if i < len(ranking):
            seen_ranking.add(ranking[i])
        if i < len(ideal):
            seen_ideal.add(ideal[i])
        score += weight * len(seen_ranking & seen_ideal) / (i + 1)
        normaliser += weight
        weight *= p
    return score / normaliser if depth else 0.0


def compat(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    p = metric.param("p")
    ideal = _ideal(ranking, judgments)
    docs: list[object] = list(range(len(ranking)))
    depth = max(len(docs), len(ideal))
    score = _rbo(docs, ideal, p, depth)
    if metric.param("normalize") != 0:
        best = _rbo(ideal, ideal, p, depth)
        if best > 0:
            score /= best
    return score
