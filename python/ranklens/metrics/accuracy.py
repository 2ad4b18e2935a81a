"""``accuracy@k``: ir_measures' ``Accuracy``, the probability that a relevant retrieved
document is ranked above a non-relevant retrieved one.

Over the top k (the whole ranking without k): relevant means label >= 0 and >= the
relevance level; every other retrieved document is non-relevant, unjudged ones
included (ir_measures' accuracy provider reads a document missing from the qrels as
label 0).  With R relevant and N non-relevant retrieved documents, and n_j the
non-relevant documents above the j-th relevant one:

    accuracy = 1 - (sum over j of n_j) / (R * N)

0 when R = 0 or N = 0 (no pair to compare, as ``auc``).  Only retrieved documents
count: a diagnostic of the ranking itself, unlike ``auc``, which also places the
unretrieved judged documents.  ir_measures reports no value for a query without a
relevant retrieved document (its mean skips the query) and divides by zero when
N = 0; its ``ranklens`` provider skips such queries too (see
:mod:`ranklens.compat.ir_measures`).  Spellings: ``accuracy``, ir_measures
``Accuracy(rel=1)@k``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of

__all__ = ["accuracy"]


def accuracy(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    relevant = nonrelevant = 0
    wrong = 0
    for label in ranking.top(metric.k):
        if is_relevant(label, level):
            relevant += 1
            wrong += nonrelevant
        else:
            nonrelevant += 1
    if relevant == 0 or nonrelevant == 0:
        return 0.0
    return 1.0 - wrong / (nonrelevant * relevant)
