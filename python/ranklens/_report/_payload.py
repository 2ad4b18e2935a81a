"""The data a report embeds: one compact JSON document.

Every number is the library's own: the summary rows are :func:`ranklens.compare`'s
``PairResult`` fields, the per-query scores its ``Comparison.scores``, and each
(query, run) ranking with its labels and formulas is :func:`ranklens.explain`'s
for that query at the report's depth.  Numbers are embedded at full precision;
the page rounds them only to display them.

Compactness: document ids are interned once in ``docs`` (a ranking is a list of
indices into it), rankings are cut at the chosen depth, each (query, run) is a
flat array (``[doc, label, score, doc, label, score, ...]``) rather than objects
with repeated keys, and integral labels are written as integers.  JSON has no
NaN or infinity: a score that is not finite is ``null``, a summary field that is
not finite the string ``"NaN"``, ``"inf"`` or ``"-inf"``.

Tie bounds: the rankings shown are trec_eval's order (``explain``'s), so the
comparison is in that order; for a run with tied scores (two documents of one
query with equal scores) ``tieBounds`` also holds each metric's mean with
``ties="best"`` and ``"worst"`` (higher / lower labels first among equal
scores: the best and worst over the orderings for the metrics that reward
ranking higher labels higher), ``null`` for a run without ties and for grouped
qrels, where those orders are not defined.

Rejected: one explanation computed in the page from the labels (a second
implementation of every formula, free to drift from ``explain``); the full
rankings embedded (a 100-deep run over 10,000 queries is megabytes nobody opens);
bounds for every run (two more evaluations of a run whose order has no ties, to
print the mean three times).
"""

from __future__ import annotations

import math
from typing import Any

from ranklens._evaluate import evaluate
from ranklens._explain import explain
from ranklens._ranklens import __version__
from ranklens.compare import COLUMNS

__all__ = ["payload"]


def _summary_value(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _number(x: float | None) -> float | int | None:
    """``x`` for JSON: ``None`` when not finite, an int when integral."""
    if x is None or not math.isfinite(x):
        return None
    if x.is_integer() and abs(x) < 2**53:
        return int(x)
    return x


def _settings(cmp: Any) -> dict[str, Any]:
    return {k: _summary_value(v) for k, v in cmp.settings.items()}


def payload(qrels: Any, runs: dict[str, Any], cmp: Any, depth: int, title: str) -> dict[str, Any]:
    """The report's data: ``qrels`` (a Qrels), ``runs`` (``{name: Run}`` in
    ``cmp.runs`` order), ``cmp`` (their :class:`ranklens.Comparison`)."""
    level = float(cmp.settings["relevance_level"])
    metric_names = [m.name for m in cmp.metrics]
    kind = "grouped" if qrels.grouped else "subtopics" if qrels.has_subtopics else "plain"
    subtopics = qrels.subtopics() if kind != "plain" else {}
    groups_of = qrels.groups() if kind == "grouped" else {}
    # Decoded once each (a lookup per query decodes its document ids again).
    judgments = qrels.to_dict()
    rankings = {name: runs[name].to_dict() for name in cmp.runs}
    doc_index: dict[str, int] = {}

    def doc(d: str) -> int:
        i = doc_index.get(d)
        if i is None:
            i = doc_index[d] = len(doc_index)
        return i

    queries = []
    for qid in cmp.query_ids:
        judged = judgments.get(qid, {})
        relevant = [d for d, label in judged.items() if label >= 0 and label >= level]
        per_run = []
        shown: set[str] = set()
        for name in cmp.runs:
            run = runs[name]
            ranking = list(rankings[name].get(qid, ()))
            ex = explain(qrels, run, qid, k=depth, metrics=metric_names, relevance_level=level)
            flat: list[Any] = []
            for row in ex.ranked:
                shown.add(row["doc"])
                label = row["label"]
                flat += [doc(row["doc"]), None if label is None else _number(label)]
                flat.append(_number(float(row["score"])))
            first = next(
                (
                    i + 1
                    for i, d in enumerate(ranking)
                    if d in judged and judged[d] >= 0 and judged[d] >= level
                ),
                None,
            )
            missed = _missed(relevant, set(ranking), groups_of.get(qid))
            shown.update(missed)
            per_run.append(
                [flat, first, ex.num_ret, [ex.formulas[m] for m in metric_names], missed]
            )
        for entry in per_run:
            entry[4] = [doc(d) for d in entry[4]]
        groups: dict[str, str] = {}
        if kind != "plain":
            for d in sorted(shown):
                subs = subtopics.get(qid, {}).get(d)
                if subs:
                    groups[str(doc(d))] = _group_text(kind, subs)
        queries.append([len(relevant), per_run, groups])

    return {
        "title": title,
        "version": __version__,
        "settings": _settings(cmp),
        "qrels": kind,
        "level": level,
        "depth": depth,
        "runs": list(cmp.runs),
        "metrics": metric_names,
        "summaryFields": list(COLUMNS),
        "summary": [[_summary_value(getattr(r, f)) for f in COLUMNS] for r in cmp.results],
        "queries": list(cmp.query_ids),
        "scores": [
            [
                [_number(float(x)) for x in cmp.scores[name][:, j].tolist()]
                for j in range(len(metric_names))
            ]
            for name in cmp.runs
        ],
        "docs": list(doc_index),
        "q": queries,
        "tieBounds": [
            _tie_bounds(qrels, runs[name], cmp.means[name], cmp.metrics, level) for name in cmp.runs
        ],
    }


def _tie_bounds(
    qrels: Any, run: Any, means: dict[str, float], metrics: list[Any], level: float
) -> list[list[Any]] | None:
    """``[[mean, best, worst] per metric]`` of one run (its mean in the
    comparison, trec order, then its means with ``ties="best"`` / ``"worst"``),
    or ``None`` when the run has no tied scores or the qrels are grouped."""
    if qrels.grouped or not run._has_tied_scores():
        return None
    best, worst = (
        evaluate(qrels, run, metrics, relevance_level=level, ties=t).values.mean(axis=0)
        for t in ("best", "worst")
    )
    return [
        [_summary_value(x) for x in (means[m.name], float(b), float(w))]
        for m, b, w in zip(metrics, best, worst)
    ]


def _missed(
    relevant: list[str], retrieved: set[str], groups: list[tuple[float, list[str]]] | None
) -> list[str]:
    """The relevant documents not retrieved; with grouped ground truth, every
    member of each relevant group none of whose members was retrieved."""
    if groups is None:
        return [d for d in relevant if d not in retrieved]
    wanted = set(relevant)
    out = []
    for _, members in groups:
        if wanted.intersection(members) and not retrieved.intersection(members):
            out += members
    return out


def _group_text(kind: str, subs: dict[str, float]) -> str:
    if kind == "grouped":
        return "group " + ", ".join(subs)
    return ", ".join(s for s, label in subs.items() if label > 0) or "none"
