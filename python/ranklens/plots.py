"""Plots for comparing runs (matplotlib, imported only when a plot is drawn).

* :func:`difference_plot` – per-query score differences of two runs, sorted;
* :func:`precision_recall_plot` – 11-point interpolated precision-recall curves;
* :func:`distribution_plot` – box or violin plot of per-query scores.

Each returns the matplotlib ``Figure``; ``path=`` also saves it (the format
follows the extension: ``.png``, ``.svg``, ``.pdf``...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ranklens._checks import check_level
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._names import Metric, parse_metric
from ranklens.errors import RanklensInputError

if TYPE_CHECKING:
    from ranklens.compare import Comparison

__all__ = [
    "RECALL_LEVELS",
    "difference_plot",
    "distribution_plot",
    "interpolated_precision",
    "precision_recall_plot",
]

RECALL_LEVELS = tuple(i / 10 for i in range(11))


def _pyplot() -> Any:
    try:
        import os

        import matplotlib

        # Headless (no display, no backend chosen): draw off-screen.
        if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("ranklens.plots needs matplotlib: pip install matplotlib") from None
    return plt


def _finish(fig: Any, path: Any) -> Any:
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig


def difference_plot(
    comparison: Comparison,
    metric: str | Metric,
    run: str,
    other: str,
    *,
    path: Any = None,
    ax: Any = None,
) -> Any:
    """Bars of ``score_run(q) - score_other(q)`` per query, sorted descending.

    Green: ``run`` better, red: ``other`` better; the title gives the mean
    difference, the p-value and the win/tie/loss counts.
    """
    plt = _pyplot()
    for r in (run, other):
        if r not in comparison.runs:
            raise RanklensInputError(f"unknown run {r!r}; runs: {', '.join(comparison.runs)}")
    name = parse_metric(metric).name
    a = np.array(list(comparison.per_query(run, name).values()))
    b = np.array(list(comparison.per_query(other, name).values()))
    d = np.sort(a - b)[::-1]
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 3.6))
    else:
        fig = ax.figure
    colors = np.where(d > 0, "#2a9d4b", np.where(d < 0, "#d1495b", "#999999"))
    x = np.arange(d.size)
    ax.bar(x, d, width=1.0 if d.size > 50 else 0.8, color=colors, linewidth=0)
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_xlim(-0.5, d.size - 0.5)
    ax.set_xticks([])
    ax.set_xlabel(f"queries (sorted by difference, n = {d.size})")
    ax.set_ylabel(f"{name}: {run} - {other}")
    try:
        r = comparison.result(name, run, other)
        ax.set_title(
            f"{name}: mean diff {r.diff:+.4f}, p = {r.p_value:.3g} "
            f"(adj. {r.p_adjusted:.3g}), W/T/L {r.wins}/{r.ties}/{r.losses}",
            fontsize=10,
        )
    except KeyError:
        ax.set_title(f"{name}: mean diff {float(d.mean()):+.4f}", fontsize=10)
    return _finish(fig, path)


def interpolated_precision(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, Any],
    *,
    relevance_level: float | str = 1,
) -> np.ndarray:
    """Mean 11-point interpolated precision over **all qrels queries**.

    trec_eval's ``iprec_at_recall``: at recall level ``r`` (0.0, 0.1, ..., 1.0),
    the maximum precision at any rank whose recall is ``>= r`` (0 if no rank
    reaches ``r``).  A query with no relevant document, or missing from the run,
    contributes 0 at every level.  Returns an array of 11 values.
    """
    q = as_qrels(qrels)
    r = as_run(run)
    level = check_level(relevance_level)
    levels = np.array(RECALL_LEVELS)
    total = np.zeros(levels.size)
    for qid in q.query_ids:
        judged = q[qid]
        relevant = {doc for doc, label in judged.items() if label >= level}
        if not relevant or qid not in r:
            continue
        ranking = r.ranking(qid)
        hits = np.cumsum([doc in relevant for doc in ranking], dtype=np.float64)
        if hits.size == 0:
            continue
        precision = hits / np.arange(1, hits.size + 1)
        recall = hits / len(relevant)
        # Max precision at ranks >= i, then the first rank reaching each level.
        best_after = np.maximum.accumulate(precision[::-1])[::-1]
        first = np.searchsorted(recall, levels - 1e-12, side="left")
        vals = np.where(first < hits.size, best_after[np.minimum(first, hits.size - 1)], 0.0)
        total += vals
    return total / len(q) if len(q) else total


def _named(runs: Any) -> list[tuple[str, Any]]:
    if isinstance(runs, Mapping):
        return [(str(k), v) for k, v in runs.items()]
    if isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        out = []
        for i, r in enumerate(runs):
            name = getattr(r, "name", None) or f"run {i + 1}"
            out.append((str(name), r))
        return out
    return [(getattr(runs, "name", None) or "run", runs)]


def precision_recall_plot(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    runs: Any,
    *,
    relevance_level: float | str = 1,
    path: Any = None,
    ax: Any = None,
) -> Any:
    """11-point interpolated precision-recall curves of several runs.

    ``runs``: a dict name -> run, a list of named :class:`Run` objects, or one
    run.  See :func:`interpolated_precision` for the definition.
    """
    plt = _pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
    else:
        fig = ax.figure
    markers = "osD^v<>ph*"
    for i, (name, run) in enumerate(_named(runs)):
        curve = interpolated_precision(qrels, run, relevance_level=relevance_level)
        ax.plot(RECALL_LEVELS, curve, marker=markers[i % len(markers)], markersize=4, label=name)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xticks(RECALL_LEVELS)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_title("11-point interpolated precision-recall", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _finish(fig, path)


def distribution_plot(
    comparison: Comparison,
    metric: str | Metric,
    *,
    kind: str = "box",
    path: Any = None,
    ax: Any = None,
) -> Any:
    """Box (``kind="box"``) or violin (``kind="violin"``) plot of the per-query
    scores of every run on ``metric``; the mean is marked with a diamond."""
    if kind not in ("box", "violin"):
        raise RanklensInputError(f"kind must be 'box' or 'violin', got {kind!r}")
    plt = _pyplot()
    name = parse_metric(metric).name
    data = [np.array(list(comparison.per_query(r, name).values())) for r in comparison.runs]
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(data) + 2), 4.0))
    else:
        fig = ax.figure
    pos = np.arange(1, len(data) + 1)
    if kind == "box":
        ax.boxplot(data, positions=pos, widths=0.6)
    else:
        ax.violinplot(data, positions=pos, showmedians=True, showextrema=True)
    ax.scatter(pos, [x.mean() for x in data], marker="D", color="#d1495b", zorder=3, label="mean")
    ax.set_xticks(pos)
    ax.set_xticklabels(comparison.runs, rotation=20 if len(data) > 4 else 0)
    ax.set_ylabel(name)
    ax.set_title(f"{name} per query ({len(comparison.query_ids)} queries)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _finish(fig, path)
