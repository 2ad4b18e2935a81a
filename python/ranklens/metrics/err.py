"""Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009).

A cascade user scans down the ranking and stops at rank r with probability R_r:

    err@k = sum over ranks r <= k of (1 / r) * R_r * prod over i < r of (1 - R_i)
    R(g)  = (2**g - 1) / 2**gmax

with g the label clamped into [0, gmax]: negative labels and documents not in the
qrels have g = 0; float labels are used exactly; labels above a given gmax count as
gmax.  ``gmax`` (parameter) defaults to 0, meaning "the largest label of the whole
qrels" (every query and row, not just this query's judgments, so a query's scale does
not depend on how it happened to be judged); if that is not positive, err is 0.  The
relevance level is not used.  Without k, the whole ranking.  ir_measures ``ERR@k``
(gdeval) fixes its own gmax, so it differs unless ``err(gmax=...)`` matches it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ranklens._names import Metric

from ._common import Judgments, Ranked

__all__ = ["err", "resolve_gmax"]


def err(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    gmax = metric.param("gmax")
    if not gmax > 0:
        return 0.0
    total, go_on = 0.0, 1.0
    for rank, label in enumerate(ranking.top(metric.k), start=1):
        if label is None or label <= 0:
            continue
        r = (2.0 ** min(label, gmax) - 1.0) / 2.0**gmax
        total += go_on * r / rank
        go_on *= 1.0 - r
    return total


def resolve_gmax(
    metrics: Iterable[Metric], qrels: Mapping[str, Mapping[str, float]]
) -> list[Metric]:
    """The metrics with err's automatic gmax (<= 0) replaced by the qrels' largest label."""
    top = max((float(v) for docs in qrels.values() for v in docs.values()), default=0.0)
    top = max(top, 0.0)
    out = []
    for m in metrics:
        if m.family == "err" and not m.param("gmax") > 0:
            params = dict(m.params)
            params["gmax"] = top
            m = Metric(m.family, m.k, m.rel, tuple(sorted(params.items())))
        out.append(m)
    return out
