"""Counting measures: num_ret, num_rel, num_rel_ret.

Definitions (per query):

* ``num_ret`` = number of retrieved documents; ``num_ret@k`` = min(k, num_ret).
* ``num_rel`` = R, the number of qrels documents relevant at the metric's level
  (label >= 0 and label >= level); retrieval plays no part.
* ``num_rel_ret`` = number of relevant retrieved documents; ``num_rel_ret@k`` =
  number of relevant documents in the top k.

Aggregation: these are SUMMED over queries, not averaged (trec_eval's "summary
figure is sum of individual topics").  With ``trec_eval -c`` the summed num_rel
covers every qrels query, as here.  (trec_eval -c recounts that total itself as
the number of labels > 0, whatever the relevance level; ranklens sums the per-query
values, which differs only when the level is not 1.)

Edge cases: a qrels query absent from the run has num_ret = num_rel_ret = 0 and its
usual num_rel.  Negative labels never count as relevant.

Names: trec_eval ``num_ret``, ``num_rel``, ``num_rel_ret``; ir_measures ``NumRet``,
``NumRel``, ``NumRelRet``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def num_ret(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    return float(len(ranking.top(metric.k)))


def num_rel(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    return float(judgments.num_relevant(level_of(metric, relevance_level)))


def num_rel_ret(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    return float(sum(1 for label in ranking.top(metric.k) if is_relevant(label, level)))
