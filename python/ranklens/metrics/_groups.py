"""Grouped ground truth (RAG) in the reference backend, written from the definition.

A query's ground truth is a list of groups ``(label, [doc ids])``: each group is one
unit of needed information, satisfied by any one of its documents.  The ranking is
relabelled before any metric sees it:

* walking down the ranking (after the ``max_docs`` cut), the first retrieved member
  of a group carries the group's label; later members of that group count as judged
  non-relevant (label 0); documents in no group are not in the qrels (``None``);
* then, with ``judged_only``, documents with no label or a negative one are dropped,
  ranks closing up (a dropped first member still used up its group);
* the judgments every metric sees are one entry per group with its label, so R is
  the number of relevant groups and the ideal ranking holds one member per group,
  plus a judged non-relevant 0 for every other member of a group (what it becomes
  when retrieved), so that pool counts (bpref's N, fallout's denominator) cover
  every judged non-relevant document a ranking can hold.

With groups of one document this is the ordinary evaluation, metric by metric.
``ties="expected"`` is not available here (the Rust backend has it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ranklens._names import Metric
from ranklens.errors import RanklensInputError

from ._common import Judgments, Ranked, rank
from .err import resolve_gmax

__all__ = ["grouped_reference", "relabel"]


def relabel(
    ranked_docs: Sequence[str],
    groups: Sequence[tuple[float, Sequence[str]]],
    *,
    judged_only: bool = False,
) -> Ranked:
    """The ranking with grouped labels (see the module docstring)."""
    group_of: dict[str, list[int]] = {}
    for g, (_, members) in enumerate(groups):
        for doc in members:
            group_of.setdefault(str(doc), []).append(g)
    satisfied = [False] * len(groups)
    docs: list[str] = []
    labels: list[float | None] = []
    for doc in ranked_docs:
        owners = group_of.get(doc)
        label: float | None
        if owners is None:
            label = None
        else:
            (g,) = owners  # a document belongs to one group (the encoder checks it)
            if satisfied[g]:
                label = 0.0
            else:
                satisfied[g] = True
                label = float(groups[g][0])
        if judged_only and (label is None or label < 0):
            continue
        docs.append(doc)
        labels.append(label)
    return Ranked(tuple(docs), tuple(labels))


def _pool(groups: Sequence[tuple[float, Sequence[str]]]) -> dict[str, float]:
    """The judged pool of one query: each group's label, and 0 for its other members."""
    pool = {}
    for g, (label, members) in enumerate(groups):
        pool[f"group {g}"] = float(label)
        for j in range(1, len(members)):
            pool[f"group {g} member {j}"] = 0.0
    return pool


def grouped_reference(
    groups: Mapping[str, Sequence[tuple[float, Sequence[str]]]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Sequence[Metric],
    relevance_level: float,
    *,
    judged_only: bool,
    max_docs: int | None,
    ties: str,
    functions: Mapping[str, Callable[[Ranked, Judgments, Metric, float], float]],
) -> dict[str, dict[str, float]]:
    """Per query (sorted ids): ``{metric.name: value}`` on grouped ground truth."""
    if ties == "expected":
        raise RanklensInputError(
            "ties='expected' with grouped qrels is only available in the Rust backend"
        )
    if ties in ("best", "worst"):
        raise RanklensInputError(
            "ties='best' / 'worst' are not defined with grouped qrels (which member "
            "takes the group's label depends on the order)"
        )
    run_s = {str(q): {str(d): v for d, v in docs.items()} for q, docs in run.items()}
    per_group = {str(q): _pool(gs) for q, gs in groups.items()}
    groups_s = {str(q): gs for q, gs in groups.items()}
    resolved = resolve_gmax(metrics, per_group)
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(per_group):
        # Rank with no judgments: -J is applied after relabelling.
        order = rank(run_s.get(qid, {}), Judgments({}), ties=ties, max_docs=max_docs)
        ranking = relabel(order.docs, groups_s[qid], judged_only=judged_only)
        judgments = Judgments(per_group[qid])
        out[qid] = {
            m.name: functions[m.family](ranking, judgments, r, relevance_level)
            for m, r in zip(metrics, resolved)
        }
    return out
