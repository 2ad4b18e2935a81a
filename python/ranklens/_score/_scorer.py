"""Samples scored row by row: :class:`Scorer` and the functions built on it.

A :class:`Scorer` holds the parsed, checked metrics; the functions keep one per
argument set (a bounded cache), so a per-sample loop parses nothing again.  The
options are those of :mod:`ranklens._score`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    MAX_COUNT,
    check_empty,
    check_level,
    check_max_docs,
    check_miss,
    check_ordered,
    check_threads,
    check_ties,
    checked_level,
    warn_text,
)
from ranklens._evaluate import BatchScores, Scores
from ranklens._names import FAMILIES, Metric, nan_misses, parse_metrics
from ranklens.errors import RanklensInputError, RanklensWarning

MetricsArg = Union[str, Metric, Iterable[Union[str, Metric]]]
Cutoffs = Union[int, Sequence[int], None]


def expand_cutoffs(metrics: MetricsArg, k: Cutoffs = None) -> list[Metric]:
    """Parse ``metrics``; with ``k`` (an int or a list), every metric given without a
    cutoff that takes one gets each of them: ``(["ndcg", "P@3", "bpref"], k=[5, 10])``
    -> ndcg@5, ndcg@10, precision@3, bpref."""
    ms = parse_metrics(metrics)
    if k is None:
        return ms
    if isinstance(k, (int, np.integer)):
        ks = [k]
    elif isinstance(k, (str, bytes)) or not isinstance(k, Iterable):
        raise RanklensInputError(f"k must be a positive integer or a list of them, got {k!r}")
    else:
        ks = list(k)
    for c in ks:
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
            raise RanklensInputError(f"k must be positive integers, got {c!r}")
        if c > MAX_COUNT:
            raise RanklensInputError(f"k must be at most {MAX_COUNT}, got {c}")
    if not ks:
        raise RanklensInputError("k is an empty list")
    out: list[Metric] = []
    for m in ms:
        if m.k is None and FAMILIES[m.family].cutoff != "none":
            out.extend(Metric(m.family, int(c), m.rel, m.params) for c in ks)
        else:
            out.append(m)
    return list(dict.fromkeys(out))


def _num_rows(obj: Any, what: str) -> int:
    if isinstance(obj, (str, bytes)) or isinstance(obj, Mapping):
        raise RanklensInputError(f"{what} must be a list with one entry per row")
    try:
        n = len(obj)
    except TypeError:
        raise RanklensInputError(
            f"{what} must be a list with one entry per row, got {type(obj).__name__}"
        ) from None
    check_ordered(obj, what)
    return n


class Scorer(_ranklens.RowScorer):
    """Score samples on a fixed list of metrics: names parsed and checked once.

    >>> scorer = Scorer(["P@2", "recall@3", "mrr"])
    >>> scorer(["d3", "d1", "d7"], ["d1", "d2"])
    {'precision@2': 0.5, 'recall@3': 0.5, 'mrr': 0.5}

    ``metrics``: names as for :func:`ranklens.evaluate` (``"ndcg@5,10"`` works);
    ``k``: cutoffs given to the names without one (``k=[5, 10]``).  The other
    options are described in :mod:`ranklens._score` (module docstring):
    ``relevance_level`` (default ``"positive"``), ``empty``, ``duplicates``,
    ``miss``, ``ties``, ``judged_only``, ``max_docs``.

    ``scorer(retrieved, relevant)`` -> :class:`~ranklens.Scores` (a dict of
    canonical names; any spelling finds a metric).  ``scorer.batch(retrieved_lists,
    relevant_lists)`` -> :class:`~ranklens.BatchScores` (one array per metric, and
    ``.mean()``).  Bad input raises :class:`~ranklens.errors.RanklensInputError`
    naming the row (in a batch) and the document.

    A retrieved list must have an order: a ``set``, a ``frozenset`` or a dict
    view is refused naming its type (their order changes with
    ``PYTHONHASHSEED``); a dict id -> score is ranked by its scores.  In a batch
    the list of rows is checked so; its rows are the core row reader's to check.

    Why a subclass of the native class: a call on one sample runs one type test
    in Python, then the native ``__call__`` reads the sample and builds the
    result.  Rejected: the order test inside the native reader (the core is
    shared with other doors and changes separately).
    """

    metrics: list[Metric]
    relevance_level: float
    empty: str
    miss: str | None
    ties: str
    judged_only: bool
    max_docs: int | None

    def __new__(
        cls,
        metrics: MetricsArg,
        *,
        k: Cutoffs = None,
        relevance_level: float | str = "positive",
        empty: str = "zero",
        duplicates: str = "raise",
        miss: str | None = "k+1",
        ties: str = "trec",
        judged_only: bool = False,
        max_docs: int | None = None,
    ) -> Scorer:
        ms = expand_cutoffs(metrics, k)
        level = check_level(relevance_level)
        check_empty(empty)
        if duplicates not in ("raise", "first"):
            raise RanklensInputError(f"duplicates must be 'raise' or 'first', got {duplicates!r}")
        check_miss(miss)
        check_ties(ties)
        check_max_docs(max_docs)
        self = super().__new__(
            cls,
            [(m.family, m.k, m.rel, list(m.params)) for m in ms],
            [m.name for m in ms],
            Scores,
            level,
            miss is None,
            duplicates == "first",
            empty != "zero",
            checked_level(ms, level),
            RanklensWarning,
            warn_text(ms, level),
            bool(judged_only),
            max_docs,
            ties,
        )
        self.metrics = ms
        self.relevance_level = level
        self.empty = empty
        self.miss = miss
        self.ties = ties
        self.judged_only = bool(judged_only)
        self.max_docs = max_docs
        return self

    @property
    def names(self) -> list[str]:
        """Canonical metric names, in result order."""
        return [m.name for m in self.metrics]

    def batch(
        self,
        retrieved_lists: Sequence[Any],
        relevant_lists: Sequence[Any],
        *,
        threads: int | None = None,
    ) -> BatchScores:
        """Score many rows: ``retrieved_lists[i]`` against ``relevant_lists[i]``.

        Lists and 1-D object arrays (a pandas column's ``to_numpy()``) are read
        in place; any other iterable is iterated once."""
        values, skipped = self._values(retrieved_lists, relevant_lists, threads)
        return BatchScores(
            ((m.name, values[j]) for j, m in enumerate(self.metrics)),
            skipped,
            nan_misses(self.metrics, self.miss is None),
        )

    def _values(
        self, retrieved_lists: Sequence[Any], relevant_lists: Sequence[Any], threads: Any
    ) -> tuple[np.ndarray, Any]:
        """The batch as a metrics x rows float64 array (a metric's values
        contiguous), and the rows ``empty="skip"`` left out (NaN in the array)."""
        _num_rows(retrieved_lists, "retrieved_lists")
        _num_rows(relevant_lists, "relevant_lists")
        values, empty = self._batch(retrieved_lists, relevant_lists, check_threads(threads))
        skipped = np.flatnonzero(empty) if self.empty == "skip" else ()
        return values, skipped

    def __repr__(self) -> str:
        return f"Scorer([{', '.join(repr(m.name) for m in self.metrics)}])"


def score_batch(
    retrieved_lists: Sequence[Any],
    relevant_lists: Sequence[Any],
    metrics: MetricsArg,
    *,
    k: Cutoffs = None,
    relevance_level: float | str = "positive",
    empty: str = "zero",
    duplicates: str = "raise",
    miss: str | None = "k+1",
    ties: str = "trec",
    judged_only: bool = False,
    max_docs: int | None = None,
    threads: int | None = None,
) -> BatchScores:
    """Score many rows at once: ``{metric name: float64 array, one value per row}``
    (a :class:`~ranklens.BatchScores`: any spelling finds a metric; ``.mean()``).

    ``retrieved_lists[i]`` is ranked against ``relevant_lists[i]`` (see the module
    docstring for the accepted forms and the options).  ``metrics``: names as for
    :func:`ranklens.evaluate` (``"ndcg@5,10"`` works); ``k``: cutoffs applied to the
    names given without one (``k=[5, 10, 20]``).  Keys are canonical names
    (``"P@10"`` -> ``"precision@10"``).  Bad rows raise
    :class:`~ranklens.errors.RanklensInputError` naming the row.
    """
    scorer = Scorer(
        metrics,
        k=k,
        relevance_level=relevance_level,
        empty=empty,
        duplicates=duplicates,
        miss=miss,
        ties=ties,
        judged_only=judged_only,
        max_docs=max_docs,
    )
    return scorer.batch(retrieved_lists, relevant_lists, threads=threads)


def cached_scorer(
    metrics: Any,
    k: Any,
    level: Any,
    empty: Any,
    duplicates: Any,
    miss: Any,
    ties: Any = "trec",
    judged_only: Any = False,
    max_docs: Any = None,
) -> Scorer:
    """A :class:`Scorer` for these arguments, built once: ``score`` in a loop then
    costs one call, not a parse of the names per sample."""
    if not isinstance(metrics, (str, Metric)):
        try:
            metrics = tuple(metrics)  # a generator is read once, here
        except TypeError:
            pass  # not a list of names: Scorer raises, naming it
    ks = tuple(k) if isinstance(k, list) else k
    # The types too: True == 1 == 1.0, but a bool is not a valid k or level.
    key = (metrics, ks, type(k), type(level), level, empty, duplicates, miss, ties)
    key += (type(judged_only), judged_only, type(max_docs), max_docs)
    if isinstance(ks, tuple):
        key += tuple(map(type, ks))
    try:
        scorer = _SCORERS.get(key)
    except TypeError:  # an unhashable argument: no caching
        key, scorer = None, None
    if scorer is None:
        scorer = Scorer(
            metrics,
            k=k,
            relevance_level=level,
            empty=empty,
            duplicates=duplicates,
            miss=miss,
            ties=ties,
            judged_only=judged_only,
            max_docs=max_docs,
        )
        if key is not None:
            if len(_SCORERS) >= 64:
                # The oldest: a bounded cache.  Other threads may evict at the same
                # time (score() from a thread pool): losing that race is harmless.
                try:
                    _SCORERS.pop(next(iter(_SCORERS)), None)
                except (StopIteration, RuntimeError):
                    pass
            _SCORERS[key] = scorer
    return scorer


_SCORERS: dict[tuple[Any, ...], Scorer] = {}


def score(
    retrieved: Any,
    relevant: Any,
    metrics: MetricsArg,
    *,
    k: Cutoffs = None,
    relevance_level: float | str = "positive",
    empty: str = "zero",
    duplicates: str = "raise",
    miss: str | None = "k+1",
    ties: str = "trec",
    judged_only: bool = False,
    max_docs: int | None = None,
) -> Scores:
    """Score one ranked list: ``{metric name: value}`` (any spelling finds a metric).

    >>> score(["d3", "d1", "d7"], ["d1", "d2"], ["P@2", "recall@3", "mrr"])
    {'precision@2': 0.5, 'recall@3': 0.5, 'mrr': 0.5}

    ``relevant``: a list of relevant ids, a dict id -> label, or a list of groups.
    The :class:`Scorer` of each metric list is kept (the last 64), so calling
    ``score`` per sample parses the names once.
    """
    scorer = cached_scorer(
        metrics, k, relevance_level, empty, duplicates, miss, ties, judged_only, max_docs
    )
    return scorer(retrieved, relevant)


def score_labels(
    labels: Sequence[float],
    metrics: MetricsArg,
    *,
    k: Cutoffs = None,
    relevance_level: float | str = "positive",
    miss: str | None = "k+1",
    judged_only: bool = False,
    max_docs: int | None = None,
) -> Scores:
    """Score a ranked list given as its relevance labels, top first: the
    tutorials' form, no ids to invent.

    >>> score_labels([3, 2, 3, 0, 1], ["P@3", "mrr"])
    {'precision@3': 1.0, 'mrr': 1.0}

    The labels are the whole ground truth: the ideal ranking (nDCG) sorts them,
    and R (recall, MAP) counts the relevant ones among them.  A label of 0 is a
    judged non-relevant document; a negative label, an unjudged one
    (``judged_only=True`` drops those first).  ``max_docs``: score only the top
    ``max_docs`` labels (the ground truth keeps them all).
    """
    check_ordered(labels, "labels")
    if isinstance(labels, (str, bytes, Mapping)):
        raise RanklensInputError(
            f"labels must be a sequence of labels, top first, got {type(labels).__name__}"
        )
    try:
        labels = list(labels)
    except TypeError:
        raise RanklensInputError(
            f"labels must be a sequence of labels, top first, got {type(labels).__name__}"
        ) from None
    scorer = Scorer(
        metrics,
        k=k,
        relevance_level=relevance_level,
        miss=miss,
        judged_only=judged_only,
        max_docs=max_docs,
    )
    return scorer(list(range(len(labels))), dict(enumerate(labels)))
