"""``first_rel_rank@k`` and ``fallout@k`` (binary: they use the relevance level).

``first_rel_rank@k``: the rank (from 1) of the first relevant document in the top k;
its mean over queries is the "mean rank" (lower is better).  If there is none the
value is finite by convention: ``k + 1`` with a cutoff (one past the cutoff), and
``num_ret + 1`` without one (one past the ranking; an empty ranking then scores 1, so
compare systems with a cutoff).

``fallout@k``: judged non-relevant documents (0 <= label < level) in the top k,
divided by all judged non-relevant documents of the query; 0 when there are none.
Unjudged documents (not in the qrels, negative label) never count.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of

__all__ = ["fallout", "first_rel_rank"]


def first_rel_rank(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    for rank, label in enumerate(ranking.top(metric.k), start=1):
        if is_relevant(label, level):
            return float(rank)
    return float((metric.k if metric.k is not None else len(ranking)) + 1)


def _nonrelevant(label: float | None, level: float) -> bool:
    return label is not None and label >= 0 and not is_relevant(label, level)


def fallout(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    n = sum(1 for label in judgments.labels.values() if _nonrelevant(label, level))
    if n == 0:
        return 0.0
    return sum(1 for label in ranking.top(metric.k) if _nonrelevant(label, level)) / n
