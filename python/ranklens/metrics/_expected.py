"""``ties="expected"``: a metric's expected value over the orderings of tied documents.

Definition.  Documents with equal scores form a *tie group*.  Each group is put in a
uniformly random order, independently of the other groups, and the metric is
averaged over all those orderings -- every ordering of every group equally likely.

This module computes exactly that, by brute force: it lists every ordering (the
product over groups of all permutations of each group), ranks, scores each ordering
with the family's ordinary function, and takes the mean.  It is the readable
definition the Rust closed forms (``src/core/metrics/expected.rs``) are tested
against; it refuses inputs with more than :data:`MAX_ORDERINGS` orderings.

``max_docs`` and ``judged_only`` apply to each ordering exactly as with the other
tie policies (trec_eval order: cut to the first ``max_docs``, then drop unjudged
documents).  So a tie group straddling the ``max_docs`` cut is shuffled whole and
then cut: which of its members are scored is random too.  Dropping unjudged
documents from a shuffled group leaves the judged ones in uniformly random order,
i.e. tie groups are the runs of equal scores among the kept documents.

Groups that start at or after the ``max_docs`` cut cannot change anything and are
not enumerated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence

from ranklens._names import Metric
from ranklens.errors import RanklensInputError, UnknownMetricError

from ._common import Judgments, Ranked

__all__ = ["EXPECTED_FAMILIES", "MAX_ORDERINGS", "check_families", "expected_scores", "orderings"]

#: Refuse queries with more orderings than this (the product of the factorials of
#: the tie group sizes).
MAX_ORDERINGS = 50_000

#: Families with an expected form in the Rust core (``expected::supported``);
#: the reference backend accepts the same ones, so both backends agree.
EXPECTED_FAMILIES = frozenset(
    {
        "precision",
        "recall",
        "f1",
        "hits",
        "hit_rate",
        "mrr",
        "map",
        "ndcg",
        "ndcg_burges",
        "dcg",
        "r_precision",
        "bpref",
        "num_ret",
        "num_rel",
        "num_rel_ret",
    }
)

MetricFunction = Callable[[Ranked, Judgments, Metric, float], float]


def check_families(metrics: Sequence[Metric]) -> None:
    """Raise for a family without an expected form (before anything is scored)."""
    for m in metrics:
        if m.family not in EXPECTED_FAMILIES:
            raise UnknownMetricError(f"ties='expected' is not available for {m.family}")


def _tie_groups(scores: Mapping[str, float], max_docs: int | None) -> list[list[str]]:
    """Documents grouped by equal score, best score first (groups past the cut dropped)."""
    ordered = sorted(scores.items(), key=lambda item: float(item[1]), reverse=True)
    groups: list[list[str]] = []
    previous: float | None = None
    for position, (doc, score) in enumerate(ordered):
        if previous is None or float(score) != previous:
            if max_docs is not None and position >= max_docs:
                break
            groups.append([])
        groups[-1].append(doc)
        previous = float(score)
    return groups


def orderings(
    scores: Mapping[str, float],
    judgments: Judgments,
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
) -> Iterator[Ranked]:
    """Every ranking the tie groups can produce, each once (all equally likely)."""
    groups = _tie_groups(scores, max_docs)
    count = math.prod(math.factorial(len(g)) for g in groups)
    if count > MAX_ORDERINGS:
        raise RanklensInputError(
            f"ties='expected' reference backend: {count} orderings of the tied documents "
            f"exceed the brute-force limit of {MAX_ORDERINGS}"
        )
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        docs = [doc for group in choice for doc in group]
        if max_docs is not None:
            docs = docs[:max_docs]
        if judged_only:
            docs = [doc for doc in docs if judgments.labels.get(doc, -1.0) >= 0]
        yield Ranked(tuple(docs), tuple(judgments.labels.get(doc) for doc in docs))


def expected_scores(
    scores: Mapping[str, float],
    judgments: Judgments,
    metrics: Sequence[Metric],
    functions: Mapping[str, MetricFunction],
    relevance_level: float,
    *,
    max_docs: int | None = None,
    judged_only: bool = False,
) -> dict[str, float]:
    """``{metric.name: mean of the metric over every ordering}`` for one query."""
    check_families(metrics)
    rankings = list(orderings(scores, judgments, max_docs=max_docs, judged_only=judged_only))
    out: dict[str, float] = {}
    for m in metrics:
        fn = functions[m.family]
        values = [fn(r, judgments, m, relevance_level) for r in rankings]
        out[m.name] = math.fsum(values) / len(values)
    return out
