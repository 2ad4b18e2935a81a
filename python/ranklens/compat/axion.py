"""Axion's retrieval metrics, with Axion's own numbers, on Axion's input shape.

Drop-in for the heuristic retrieval metrics of the Axion evaluation library
(``HitRateAtK``, ``MeanReciprocalRank``, ``NDCGAtK``, ``PrecisionAtK``,
``RecallAtK``), written from their definitions as read in the repository
ax-foundry/axion, ``axion/metrics/heuristic/retrieval.py`` (the metrics, their
``KDetail`` / ``MultiKResult`` / ``MeanReciprocalRankResult`` signals and
``_RetrievalMetric._parse_item``) and ``tests/metrics/heuristic/test_retrieval.py``::

    from ranklens.compat import axion
    metric = axion.PrecisionAtK(k=[1, 3, 5], main_k=3)
    result = metric.compute(
        actual_ranking=[{"id": "d1"}, {"id": "d2"}],
        expected_reference=[{"id": "d2", "relevance": 1.0}],
    )
    result.score                                 # the main K's score
    result.signals.results_by_k[5].hits_in_top_k  # per-K signals
    await metric.execute(item)                   # Axion's form: item.actual_ranking, ...

``compute`` takes the two lists; ``execute`` (a coroutine, as Axion's) takes an
item with ``actual_ranking`` and ``expected_reference`` attributes (Axion's
``DatasetItem``) or keys.  A result has ``score``, ``explanation`` and ``signals``.

Input, as Axion reads it: ``actual_ranking`` is the ranked list of dicts with an
``"id"``; ``expected_reference`` the ground truth, dicts with an ``"id"`` and an
optional ``"relevance"`` (default 1.0).  Ids are compared as ``str(id)``.  A missing
or empty list, or an item without an ``"id"``, gives a NaN score and an
explanation (Axion's error result), not an exception.

Where Axion differs from trec_eval (and from ``ranklens.score``), with the native
equivalent:

* Relevant means relevance > 0: native ``relevance_level="positive"`` (the default
  of ``ranklens.score``; ``evaluate``'s default is trec_eval's 1).
* ``PrecisionAtK``: hits in the top k / the number of documents in the top k,
  i.e. min(k, retrieved), not k: native ``hits@k`` / ``num_ret@k``; trec_eval's
  ``P@k`` divides by k.
* ``RecallAtK``: 1.0 when no reference document is relevant (native: 0).
* Duplicated retrieved ids count at each occurrence in hits, precision, recall
  (which can then exceed 1) and DCG: native ``duplicates="first"`` keeps the
  first occurrence, the default raises.
* ``NDCGAtK``: gain = the relevance itself (linear), also for a reference
  document of relevance <= 0; the ideal ranking is every reference relevance,
  largest first, cut at k; a score of 0 when that ideal DCG is 0.  Native
  ``ndcg@k`` is the same for relevances >= 0 without duplicates; trec_eval reads
  a negative label as unjudged (gain 0, not in the ideal).
* ``MeanReciprocalRank`` has no cutoff: native ``mrr``;
  ``rank_of_first_relevant`` is ``None`` on a miss: native ``first_rel_rank``
  with ``miss=None`` (default: k + 1, or the list length + 1).
* Empty input: a NaN score: native ``empty="nan"`` (default ``"zero"``).
* A reference id given twice keeps its last relevance (a dict, as Axion).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ranklens.errors import RanklensInputError

__all__ = [
    "HitRateAtK",
    "KDetail",
    "MeanReciprocalRank",
    "MeanReciprocalRankResult",
    "MetricEvaluationResult",
    "MultiKResult",
    "NDCGAtK",
    "PrecisionAtK",
    "RecallAtK",
]


@dataclass
class KDetail:
    """One K of a multi-K metric (Axion's field names)."""

    score: float
    hits_in_top_k: int | None = None
    total_retrieved_at_k: int | None = None
    total_relevant: int | None = None
    dcg: float | None = None
    idcg: float | None = None
    is_hit: bool | None = None


@dataclass
class MultiKResult:
    """Every K's detail; ``overall_score`` is the score at ``main_k_used``."""

    k_values: list[int]
    results_by_k: dict[int, KDetail]
    overall_score: float
    main_k_used: int


@dataclass
class MeanReciprocalRankResult:
    rank_of_first_relevant: int | None
    score: float


@dataclass
class MetricEvaluationResult:
    score: float
    explanation: str = ""
    signals: MultiKResult | MeanReciprocalRankResult | None = field(default=None)


Parsed = tuple[list[str], dict[str, float]]


def _get(item: Any, name: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def _parse(actual_ranking: Any, expected_reference: Any) -> Parsed | MetricEvaluationResult:
    """The retrieved ids and ``{id: relevance}``, or Axion's NaN result."""

    def failed(why: str) -> MetricEvaluationResult:
        return MetricEvaluationResult(float("nan"), f"Metric computation failed: {why}")

    if not actual_ranking:
        return failed("`actual_ranking` field is missing or empty.")
    if not expected_reference:
        return failed("`expected_reference` field is missing or empty.")
    try:
        actual = [str(x["id"]) for x in actual_ranking]
    except (KeyError, TypeError) as e:
        return failed(f"`actual_ranking` items must be dicts with an 'id' key. Error: {e!r}")
    try:
        expected = {str(x["id"]): float(x.get("relevance", 1.0)) for x in expected_reference}
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        return failed(f"`expected_reference` items must be dicts with an 'id' key. Error: {e!r}")
    return actual, expected


class _Retrieval(ABC):
    """Shared entry points: ``compute`` (two lists) and ``execute`` (an item)."""

    def compute(self, actual_ranking: Any, expected_reference: Any) -> MetricEvaluationResult:
        parsed = _parse(actual_ranking, expected_reference)
        if isinstance(parsed, MetricEvaluationResult):
            return parsed
        return self._score(*parsed)

    async def execute(self, item: Any, **kwargs: Any) -> MetricEvaluationResult:
        return self.compute(_get(item, "actual_ranking"), _get(item, "expected_reference"))

    @abstractmethod
    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        """The metric on parsed input: retrieved ids, ``{id: relevance}``."""


class _MultiK(_Retrieval):
    """A metric at several cutoffs; the score is the one at ``main_k`` (default:
    the largest K)."""

    def __init__(self, k: int | Sequence[int] = 10, main_k: int | None = None) -> None:
        ks = [k] if isinstance(k, int) else list(k)
        self.k_list = sorted({c for c in ks if c > 0})
        if not self.k_list:
            raise RanklensInputError("k must contain at least one positive integer.")
        self.max_k = self.k_list[-1]
        self.main_k = self.max_k if main_k is None else main_k
        if self.main_k not in self.k_list:
            raise RanklensInputError(
                f"main_k ({self.main_k}) must be one of the specified k values: {self.k_list}"
            )

    def _result(self, by_k: dict[int, KDetail], fmt: str = ".4f") -> MetricEvaluationResult:
        main = by_k[self.main_k].score
        signals = MultiKResult(list(self.k_list), by_k, main, self.main_k)
        text = (
            f"Scores calculated for K={self.k_list}. "
            f"Main score (K={self.main_k}) is {format(main, fmt)}."
        )
        return MetricEvaluationResult(main, text, signals)


def _relevant(expected: dict[str, float]) -> set[str]:
    return {doc for doc, rel in expected.items() if rel > 0}


class HitRateAtK(_MultiK):
    """1.0 if a relevant document (relevance > 0) is in the top k, else 0.0."""

    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        rel = _relevant(expected)
        by_k = {}
        for k in self.k_list:
            hit = any(d in rel for d in actual[:k])
            by_k[k] = KDetail(score=1.0 if hit else 0.0, is_hit=hit)
        return self._result(by_k, "")


class PrecisionAtK(_MultiK):
    """Relevant occurrences in the top k / documents in the top k (min(k, retrieved))."""

    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        rel = _relevant(expected)
        by_k = {}
        for k in self.k_list:
            top = actual[:k]
            hits = sum(1 for d in top if d in rel)
            by_k[k] = KDetail(
                score=hits / len(top) if top else 0.0,
                hits_in_top_k=hits,
                total_retrieved_at_k=len(top),
                total_relevant=len(rel),
            )
        return self._result(by_k)


class RecallAtK(_MultiK):
    """Relevant occurrences in the top k / relevant reference documents; 1.0 when
    none is relevant."""

    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        rel = _relevant(expected)
        if not rel:
            signals = MultiKResult(
                list(self.k_list), {k: KDetail(score=1.0) for k in self.k_list}, 1.0, self.main_k
            )
            text = "No relevant documents were expected, so recall is trivially 1.0 for all K."
            return MetricEvaluationResult(1.0, text, signals)
        by_k = {}
        for k in self.k_list:
            top = actual[:k]
            hits = sum(1 for d in top if d in rel)
            by_k[k] = KDetail(
                score=hits / len(rel),
                hits_in_top_k=hits,
                total_retrieved_at_k=len(top),
                total_relevant=len(rel),
            )
        return self._result(by_k)


def _dcg(gains: list[float]) -> float:
    # As a numpy sum over the gain / log2(rank + 1) array, so that the bits are
    # Axion's (numpy adds pairwise from 8 terms on, not left to right).
    if not gains:
        return 0.0
    g = np.asarray(gains, dtype=np.float64)
    return float(np.sum(g / np.log2(np.arange(2, len(g) + 2))))


class NDCGAtK(_MultiK):
    """Linear-gain nDCG at k: gain = relevance (0 for an id not in the reference);
    ideal = every reference relevance, largest first; 0 when the ideal DCG is 0."""

    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        gains = [expected.get(d, 0.0) for d in actual]
        ideal = sorted(expected.values(), reverse=True)
        by_k = {}
        for k in self.k_list:
            dcg = _dcg(gains[:k])
            idcg = _dcg(ideal[:k])
            by_k[k] = KDetail(score=0.0 if idcg == 0 else dcg / idcg, dcg=dcg, idcg=idcg)
        return self._result(by_k)


class MeanReciprocalRank(_Retrieval):
    """1 / rank of the first relevant document in the whole list (no cutoff), 0.0
    on a miss; ``signals.rank_of_first_relevant`` is ``None`` then."""

    def _score(self, actual: list[str], expected: dict[str, float]) -> MetricEvaluationResult:
        rel = _relevant(expected)
        for i, d in enumerate(actual):
            if d in rel:
                rank = i + 1
                text = f"First relevant document ({d!r}) found at rank {rank}."
                return MetricEvaluationResult(
                    1.0 / rank, text, MeanReciprocalRankResult(rank, 1.0 / rank)
                )
        text = "No relevant documents found in the retrieved results."
        return MetricEvaluationResult(0.0, text, MeanReciprocalRankResult(None, 0.0))


# Axion's registry keys, for looking a metric up by name.
METRICS: dict[str, type[_Retrieval]] = {
    "hit_rate_at_k": HitRateAtK,
    "mean_reciprocal_rank": MeanReciprocalRank,
    "ndcg_at_k": NDCGAtK,
    "precision_at_k": PrecisionAtK,
    "recall_at_k": RecallAtK,
}
