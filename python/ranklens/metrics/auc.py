"""``auc@k``: per-query ROC AUC of the ranking over the judged documents.

Relevant: label >= 0 and >= the relevance level (R of them in the qrels).  Judged
non-relevant: 0 <= label < level (N of them).  Unjudged documents (not in the qrels,
negative label) take no part.  Order: the retrieved documents (the top k with a
cutoff) by rank, all above every other judged document; those others are tied with
each other.  AUC is the fraction of the R * N (relevant, non-relevant) pairs in which
the relevant document is above, a tie counting 1/2:

    AUC = (#pairs relevant above + #tied pairs / 2) / (R * N)

Tied pairs are exactly (unretrieved relevant, unretrieved non-relevant).  When R = 0
or N = 0 there is no pair and AUC is 0 (the trec_eval convention for undefined
values, as for recall with R = 0).
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of

__all__ = ["auc"]


def auc(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    labels = judgments.labels.values()
    r = sum(1 for label in labels if is_relevant(label, level))
    n = sum(1 for label in labels if label >= 0 and not is_relevant(label, level))
    if r == 0 or n == 0:
        return 0.0
    above = 0
    rel_ret = nonrel_ret = 0
    for label in ranking.top(metric.k):
        if label is None or label < 0:
            continue
        if is_relevant(label, level):
            rel_ret += 1
            above += max(n - nonrel_ret, 0)  # every non-relevant not yet seen is below
        else:
            nonrel_ret += 1
    tied = max(r - rel_ret, 0) * max(n - nonrel_ret, 0)
    return (above + 0.5 * tied) / (r * n)
