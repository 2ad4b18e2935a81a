"""Shared, metric-free plumbing of the reference backend: ranking and judging.

This module does only two things, both straight from trec_eval's
``form_res_rels.c`` (the step every trec_eval measure starts from):

1. **Ranking.**  A query's run ``{doc_id: score}`` becomes a ranked list: by score
   descending, ties broken by doc id *descending* in byte order of its UTF-8
   encoding (trec_eval sorts with ``strcmp(docno2, docno1)`` on ties), or, with
   ``ties="input"``, kept in the order given.  Ranks start at 1.  Optionally the
   ranking is cut to its first ``max_docs`` (trec_eval ``-M``) and then stripped of
   unjudged documents (trec_eval ``-J``).  Scores are compared as Python floats
   (IEEE doubles, like trec_eval 10.0; pytrec_eval 9.0.8 stores scores as float32,
   so scores that only differ beyond float32 precision tie there and not here).

2. **Judging.**  Every retrieved document gets its qrels label (a float, kept
   exactly), or ``None`` if the document is not in the qrels of the query.

The metric arithmetic lives in one module per family, next to this one.  The only
"definition" shared here is what *relevant* means, because every binary metric
uses the same rule:

    relevant(label, level)  <=>  label is not None and label >= 0 and label >= level

A negative label is trec_eval's "in the pool but unjudged" (RELVALUE_UNJUDGED): it
is never relevant, never a judged non-relevant document, and gains nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ranklens._names import Metric

__all__ = ["Judgments", "Ranked", "is_relevant", "level_of", "rank"]


@dataclass(frozen=True)
class Judgments:
    """The qrels of one query: ``{doc_id: label}``, labels as floats (negatives kept).

    ``subtopics``: subtopic qrels only, ``{doc_id: {subtopic: label}}`` (the
    diversity metrics read it; ``labels`` then holds each document's largest).
    """

    labels: Mapping[str, float]
    subtopics: Mapping[str, Mapping[str, float]] | None = None

    @classmethod
    def from_mapping(cls, qrels_for_query: Mapping[str, float]) -> Judgments:
        return cls({doc: float(label) for doc, label in qrels_for_query.items()})

    def num_relevant(self, level: float) -> int:
        """R: how many judged documents are relevant at ``level``."""
        return sum(1 for label in self.labels.values() if is_relevant(label, level))


@dataclass(frozen=True)
class Ranked:
    """One query's ranking: ``docs[i]`` is at rank ``i + 1``; ``labels[i]`` its label.

    ``labels[i]`` is ``None`` when the document is not in the query's qrels.
    """

    docs: tuple[str, ...]
    labels: tuple[float | None, ...]

    def __len__(self) -> int:
        return len(self.docs)

    def top(self, k: int | None) -> tuple[float | None, ...]:
        """Labels of the first ``k`` ranks (all of them if ``k`` is None)."""
        return self.labels if k is None else self.labels[:k]


def is_relevant(label: float | None, level: float) -> bool:
    """Binary relevance: judged, non-negative and at least ``level``."""
    return label is not None and label >= 0 and label >= level


def level_of(metric: Metric, relevance_level: float) -> float:
    """The level a metric uses: its own ``rel=`` if given, else the evaluation's."""
    return float(metric.rel) if metric.rel is not None else float(relevance_level)


def _trec_key(item: tuple[str, float]) -> tuple[float, bytes]:
    doc, score = item
    return (score, doc.encode("utf-8"))


def _score_key(item: tuple[str, float]) -> float:
    return item[1]


def rank(
    scores: Mapping[str, float],
    judgments: Judgments,
    *,
    ties: str = "trec",
    max_docs: int | None = None,
    judged_only: bool = False,
) -> Ranked:
    """Rank a query's ``{doc_id: score}`` and attach each document's label.

    ``ties="trec"``: sorting the pair (score, doc id bytes) in *reverse* gives score
    descending and, among equal scores, doc id bytes descending -- trec_eval's order.
    ``ties="input"``: score descending, equal scores kept in the mapping's order
    (Python's sort is stable, also with ``reverse=True``).  ``ties="best"`` /
    ``"worst"``: equal scores by label descending / ascending (not judged: 0),
    then in trec order.

    Then, as trec_eval's ``form_res_rels`` does, in this order: keep only the first
    ``max_docs`` documents (``-M``), and with ``judged_only`` (``-J``) drop those not
    judged -- not in the qrels or with a negative label -- so later ranks close up.
    """
    items = [(doc, float(s)) for doc, s in scores.items()]
    if ties == "trec":
        ordered = sorted(items, key=_trec_key, reverse=True)
    elif ties == "input":
        ordered = sorted(items, key=_score_key, reverse=True)
    elif ties in ("best", "worst"):
        # Trec order, then (stable) score descending and label descending
        # ("best") or ascending ("worst"), an unjudged document as label 0.
        sign = 1.0 if ties == "best" else -1.0
        labels = judgments.labels
        ordered = sorted(
            sorted(items, key=_trec_key, reverse=True),
            key=lambda item: (item[1], sign * labels.get(item[0], 0.0)),
            reverse=True,
        )
    else:
        raise ValueError(f"ties must be 'trec', 'input', 'best' or 'worst', got {ties!r}")
    if max_docs is not None:
        ordered = ordered[:max_docs]
    docs = [doc for doc, _ in ordered]
    if judged_only:
        docs = [doc for doc in docs if judgments.labels.get(doc, -1.0) >= 0]
    return Ranked(tuple(docs), tuple(judgments.labels.get(doc) for doc in docs))
