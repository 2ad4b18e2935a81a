"""trec_eval's set measures: the retrieved list taken as an unordered set.

Notation: ``ret`` documents retrieved, ``rr`` of them relevant, ``R`` relevant
documents in the qrels (relevant: label >= 0 and label >= level).

* ``set_f(beta=x)`` = (x + 1) * P * Rc / (x * P + Rc) with P = rr / ret and
  Rc = rr / R; 0 when rr = 0.  trec_eval ``set_F.x`` (default x = 1), ir_measures
  ``SetF(beta=x)``.  trec_eval's x weighs recall like van Rijsbergen's beta
  *squared*; ranklens keeps trec_eval's (and ir_measures') meaning.  ``set_f`` with
  x = 1 equals ``f1`` without a cutoff.
* ``set_map`` = rr^2 / (ret * R), 0 when ret = 0 or R = 0: set precision times set
  recall.  trec_eval ``set_map``, ir_measures ``SetAP``.
* ``relative_precision`` = rr / min(ret, R), 0 when ret = 0 or R = 0: trec_eval
  ``set_relative_P``, ir_measures ``SetP(relative=True)`` / ``SetRelP``.
  ``relative_precision@k`` = (relevant in top k) / min(k, R), 0 when R = 0, still
  dividing by min(k, R) when fewer than k documents were retrieved: trec_eval
  ``relative_P_k``.
* ``utility(a=, b=, c=, d=, num_docs=)`` = a * rr + b * (ret - rr) + c * (R - rr)
  + d * (num_docs + rr - ret - R): trec_eval ``utility.a,b,c,d`` (defaults 1, -1,
  0, 0; ``num_docs`` is trec_eval's ``-N``, default 0).  Averaged over queries, as
  trec_eval does.  An empty ranking scores 0: trec_eval 10.0 ``-c`` zeroes
  ``utility`` for a query missing from the run (the only way its ranking is empty;
  with ``-J`` dropping every retrieved document trec_eval would apply the formula).
* ``num_nonrel_judged_ret`` (``@k``: in the top k) = retrieved documents with
  0 <= label < level: trec_eval ``num_nonrel_judged_ret``; summed over queries.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def _counts(ranking: Ranked, judgments: Judgments, level: float) -> tuple[int, int, int]:
    rr = sum(1 for label in ranking.labels if is_relevant(label, level))
    return len(ranking), rr, judgments.num_relevant(level)


def set_f(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    ret, rr, r = _counts(ranking, judgments, level_of(metric, relevance_level))
    if rr == 0:
        return 0.0
    x = metric.param("beta")
    p = rr / ret
    rec = rr / r
    return (x + 1.0) * p * rec / (x * p + rec)


def set_map(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    ret, rr, r = _counts(ranking, judgments, level_of(metric, relevance_level))
    if ret == 0 or r == 0:
        return 0.0
    return (float(rr) * float(rr)) / (float(ret) * float(r))


def relative_precision(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    r = judgments.num_relevant(level)
    if r == 0:
        return 0.0
    if metric.k is None:
        if len(ranking) == 0:
            return 0.0
        rr = sum(1 for label in ranking.labels if is_relevant(label, level))
        return rr / min(len(ranking), r)
    hits = sum(1 for label in ranking.top(metric.k) if is_relevant(label, level))
    return hits / min(metric.k, r)


def utility(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    if len(ranking) == 0:
        return 0.0
    ret, rr, r = _counts(ranking, judgments, level_of(metric, relevance_level))
    a, b, c, d, n = (metric.param(key) for key in ("a", "b", "c", "d", "num_docs"))
    ret_f, rr_f, r_f = float(ret), float(rr), float(r)
    return a * rr_f + b * (ret_f - rr_f) + c * (r_f - rr_f) + d * (n + rr_f - ret_f - r_f)


def num_nonrel_judged_ret(
    ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float
) -> float:
    level = level_of(metric, relevance_level)
    return float(
        sum(
            1
            for label in ranking.top(metric.k)
            if label is not None and label >= 0 and not is_relevant(label, level)
        )
    )


def num_q(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    """1 per scored query; summed over queries it is trec_eval ``num_q`` (with ``-c``)."""
    return 1.0
