"""Custom gains per label, and nDCG / DCG with them (trec_eval ``ndcg.1=3,2=9``).

Gain table of a metric: each ``gainL=v`` parameter gives label ``L`` (a non-negative
integer) the gain ``v`` (0 and negative allowed); any other label ``l >= 0`` gains
``l`` itself (float labels exactly); negative labels and documents not in the qrels
gain 0.

Ideal ranking: the gains of every judged document with label >= 0, keeping only the
positive ones, largest first.  A label with gain <= 0 never enters it; a label-0
document given a positive gain does.  With gains that are not monotonic in the label
the ideal is ordered by gain.  (trec_eval's ``setup_gains`` sorts with a comparator
returning ``(int)(gain1 - gain2)``: gains less than 1 apart compare equal and can be
misordered, and its ideal walk may then stop early at a 0-gain level.  ranklens sorts
by the exact gain, so such gains can differ from trec_eval.)

* ``dcg@k`` = sum over ranks i <= k of gain_i / log2(i + 1), negative gains included.
* ``idcg@k`` = the DCG of the ideal ranking cut at k (trec_eval ``ideal_dcg``, no k).
* ``ndcg@k`` = dcg@k / idcg@k; 0 when that is <= 0.

trec_eval's ``ndcg``, ``dcg`` and ``ideal_dcg`` take gains, its ``ndcg_cut`` does not; ranklens
allows ``ndcg(gain2=9)@10`` (the same formula cut at k).  Without ``gainL``
parameters these are exactly :mod:`ranklens.metrics.ndcg`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ranklens._names import Metric

from . import ndcg as _plain
from ._common import Judgments, Ranked

__all__ = ["dcg", "discounted", "gain_of", "gain_table", "ideal_gains", "ndcg"]


def gain_table(metric: Metric) -> dict[float, float]:
    """``{label: gain}`` from the metric's ``gainL`` parameters."""
    return {float(key[4:]): float(v) for key, v in metric.params if key.startswith("gain")}


def gain_of(label: float | None, table: dict[float, float]) -> float:
    """The gain of one label (None = not in the qrels)."""
    if label is None or label < 0:
        return 0.0
    return table.get(label, label)


def ideal_gains(judgments: Judgments, table: dict[float, float]) -> list[float]:
    """Positive gains of the judged documents (label >= 0), largest first."""
    gains = (gain_of(label, table) for label in judgments.labels.values() if label >= 0)
    return sorted((g for g in gains if g > 0), reverse=True)


def discounted(gains: Iterable[float]) -> float:
    """Sum of gain / log2(rank + 1) over ranks 1, 2, ... (zero gains skipped)."""
    total = 0.0
    for rank, g in enumerate(gains, start=1):
        if g != 0:
            total += g / math.log2(rank + 1)
    return total


def dcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    table = gain_table(metric)
    if not table:
        return _plain.dcg(ranking, judgments, metric, relevance_level)
    return discounted(gain_of(label, table) for label in ranking.top(metric.k))


def idcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    table = gain_table(metric)
    if not table:
        return _plain.idcg(ranking, judgments, metric, relevance_level)
    ideal = ideal_gains(judgments, table)
    return discounted(ideal if metric.k is None else ideal[: metric.k])


def ndcg(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    table = gain_table(metric)
    if not table:
        return _plain.ndcg(ranking, judgments, metric, relevance_level)
    ideal = ideal_gains(judgments, table)
    idcg = discounted(ideal if metric.k is None else ideal[: metric.k])
    if idcg <= 0:
        return 0.0
    return discounted(gain_of(label, table) for label in ranking.top(metric.k)) / idcg
