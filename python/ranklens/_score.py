"""Per-sample and batch scoring: `Scorer`, `score`, `score_batch`, `score_frame`,
`score_labels`.

A :class:`Scorer` parses and checks its metric names once; each call reads the
retrieved list and the ground truth straight from the Python objects in the Rust
core (``core::rows``: ids matched row by row, no encoding of a whole side) and
returns the values.  A batch is read in one call and its rows scored in parallel.
The values are those of :func:`ranklens.evaluate` on the same rows (row ``i`` as
query ``i``, the ground truth as :meth:`ranklens.Qrels.from_groups`).

Ground truth, per row: a list of relevant ids (label 1 each), a dict id -> label,
or a list of groups (a list of ids inside the row's list is one group: any member
satisfies it, see :meth:`ranklens.Qrels.from_groups`).  Retrieved, per row: a
ranked list of ids, or a dict id -> score (ranked by score, ties by id
descending, as trec_eval).  ``None``, NaN and pandas' ``NA`` are missing cells:
an empty ground truth or nothing retrieved (see ``empty``).  Ids are ``str`` or
``int`` (an ``int`` is its decimal string: ``1`` and ``"1"`` are one id).
Metrics are trec_eval's (see the README), not AutoRAG's (for those, see
:mod:`ranklens.compat.autorag` or ``score_frame(semantics="autorag")``).  ``err``'s
automatic ``gmax`` is the largest label of the input, as in ``evaluate``: of the
sample for one call, of all rows for a batch.

Options shared by every function here:

* ``relevance_level`` -- default ``"positive"``: any label > 0 is relevant.  For
  integer labels this is trec_eval's default of 1; for graded labels in (0, 1)
  (LLM judges) it counts every positive label, where a level of 1 would make
  every binary metric 0.  A number works as in :func:`ranklens.evaluate`; when
  some label is positive and none reaches it, a
  :class:`~ranklens.errors.RanklensWarning` says so.
* ``empty`` -- a sample with no ground truth or nothing retrieved: ``"zero"``
  (default: scored as trec_eval scores it, 0 for most metrics), ``"nan"`` (NaN
  for every metric, so means are NaN) or ``"skip"`` (NaN, left out of
  :meth:`BatchScores.mean`, its row listed in ``.skipped``).
* ``duplicates`` -- an id retrieved twice (hybrid retrievers merge lists):
  ``"raise"`` (default, the message names it) or ``"first"`` (later occurrences
  are dropped, the ranks below close up).  An id in two groups of the ground
  truth is always an error.
* ``miss`` -- the value of ``first_rel_rank`` (alias ``mean_rank``: its mean over
  samples is the mean rank) when no relevant document is in the top k:
  ``"k+1"`` (default: k + 1, or the list length + 1 without a cutoff, as
  trec_eval-style mean rank tools) or ``None`` (NaN in arrays, as Axion's
  ``rank_of_first_relevant``; :meth:`BatchScores.mean` then averages over hits).
  :func:`ranklens.evaluate` takes the same ``miss``.
* ``ties``, ``judged_only``, ``max_docs`` -- as in :func:`ranklens.evaluate`:
  ``ties`` orders equal scores of a retrieved dict (``"trec"``: id descending,
  ``"input"``: the dict's order, ``"expected"``: the expected value over their
  orderings; a retrieved list has no ties); ``judged_only=True`` drops retrieved
  ids not in the ground truth (or with a negative label) first, ranks closing
  up (trec_eval ``-J``); ``max_docs`` scores only the top ``max_docs`` retrieved
  (trec_eval ``-M``, after ``duplicates="first"`` has dropped repeats).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    check_empty,
    check_level,
    check_max_docs,
    check_miss,
    check_threads,
    check_ties,
)
from ranklens._labels import checked_level, warn_text
from ranklens._names import FAMILIES, Metric, nan_misses, parse_metrics
from ranklens._results import BatchScores, Scores
from ranklens.errors import RanklensInputError, RanklensWarning, UnknownMetricError

__all__ = [
    "Scorer",
    "autorag_columns",
    "expand_cutoffs",
    "score",
    "score_batch",
    "score_frame",
    "score_labels",
]

MetricsArg = Union[str, Metric, Iterable[Union[str, Metric]]]
Cutoffs = Union[int, Sequence[int], None]


def expand_cutoffs(metrics: MetricsArg, k: Cutoffs = None) -> list[Metric]:
    """Parse ``metrics``; with ``k`` (an int or a list), every metric given without a
    cutoff that takes one gets each of them: ``(["ndcg", "P@3", "bpref"], k=[5, 10])``
    -> ndcg@5, ndcg@10, precision@3, bpref."""
    ms = parse_metrics(metrics)
    if k is None:
        return ms
    ks = [k] if isinstance(k, int) else list(k)
    for c in ks:
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
            raise RanklensInputError(f"k must be positive integers, got {c!r}")
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
        return len(obj)
    except TypeError:
        raise RanklensInputError(
            f"{what} must be a list with one entry per row, got {type(obj).__name__}"
        ) from None


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

    Why a subclass of the native class: a call on one sample then runs no Python
    code at all (the native ``__call__`` builds the result).
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


def _cached_scorer(
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
        metrics = tuple(metrics)  # a generator is read once, here
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
    scorer = _cached_scorer(
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
    labels = list(labels)
    scorer = Scorer(
        metrics,
        k=k,
        relevance_level=relevance_level,
        miss=miss,
        judged_only=judged_only,
        max_docs=max_docs,
    )
    return scorer(list(range(len(labels))), dict(enumerate(labels)))


def _column_values(df: Any, col: str) -> list[Any]:
    if col not in df.columns:
        raise RanklensInputError(
            f"no column {col!r} in the frame (columns: {', '.join(map(str, df.columns))})"
        )
    series = df[col]
    if hasattr(series, "to_list"):  # polars
        return series.to_list()
    return series.tolist()


def _column_cells(df: Any, col: str) -> Any:
    """A column's cells for the Scorer: a pandas object column's own 1-D array
    (read in place, as a list is), else a list.

    Why pandas' private ``_get_column_array``: ``df[col]`` builds a Series and
    ``tolist()`` a list of the column; right after other Python work (pandas'
    code out of the caches) the two took ~0.4 ms a column of 10,000 rows
    against ~0.06 ms for the column's own array (``benches/bench_rag.py``'s
    rows, 2026-11-27).  Anything else (polars, an extension array, a pandas
    without the method, a repeated column name) takes the public path.
    """
    get_array = getattr(df, "_get_column_array", None)
    if get_array is not None and col in df.columns:
        loc = df.columns.get_loc(col)
        if isinstance(loc, int):
            cells = get_array(loc)
            if isinstance(cells, np.ndarray) and cells.ndim == 1 and cells.dtype == object:
                return cells
    return _column_values(df, col)


@functools.lru_cache(maxsize=64)
def _frame_columns(names: tuple[str, ...]) -> Any:
    """The result frame's column index, built once per metric list: a pandas
    ``Index`` from a list infers its dtype on every call (~0.3 ms when pandas'
    code is cold, against ~0.1 ms for the whole frame given the index).  Each
    frame gets a view of it, so that setting one frame's ``columns.name``
    leaves the others alone."""
    import pandas as pd

    return pd.Index(list(names))


#: AutoRAG's retrieval metrics (``core::autorag``), in the core's column order.
AUTORAG_METRICS = ("recall", "precision", "f1", "mrr", "map", "ndcg")


def autorag_columns(
    retrieval_gt: Sequence[Any],
    retrieved_ids: Sequence[Any],
    metrics: Iterable[str] = AUTORAG_METRICS,
    *,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """AutoRAG's retrieval metrics of every row, ``{name: float64 array}``, NaN
    where AutoRAG returns ``None`` (see :mod:`ranklens.compat.autorag` for the
    definitions); ``metrics`` may carry the ``retrieval_`` prefix."""
    wanted = [(m, _autorag_column(m)) for m in metrics]
    values = _ranklens.autorag_retrieval(
        retrieval_gt,
        retrieved_ids,
        # Python's sum() of floats is compensated (Neumaier) from 3.12 on.
        sys.version_info >= (3, 12),
        check_threads(threads),
    )
    return {m: values[:, j].copy() for m, j in wanted}


def _autorag_column(name: str) -> int:
    if not isinstance(name, str):
        raise UnknownMetricError(f"metric names must be strings, got {type(name).__name__}")
    short = name.removeprefix("retrieval_")
    if short not in AUTORAG_METRICS:
        raise UnknownMetricError(
            f"unknown AutoRAG metric {name!r}; valid: {', '.join(AUTORAG_METRICS)}"
        )
    return AUTORAG_METRICS.index(short)


def score_frame(
    df: Any,
    retrieved_col: str = "retrieved_ids",
    relevant_col: str = "retrieval_gt",
    metrics: MetricsArg | None = None,
    *,
    semantics: str | None = None,
    k: Cutoffs = None,
    relevance_level: float | str = "positive",
    empty: str = "zero",
    duplicates: str = "raise",
    miss: str | None = "k+1",
    ties: str = "trec",
    judged_only: bool = False,
    max_docs: int | None = None,
    threads: int | None = None,
) -> Any:
    """Per-row scores of a pandas or polars DataFrame with list columns.

    Returns a frame of the same library, one column per metric (canonical names),
    one row per input row (pandas: same index; rows left out by ``empty="skip"``
    are NaN and their index labels are in ``out.attrs["skipped"]``).

    ``semantics``: ``"trec"`` (trec_eval's definitions on grouped ground truth,
    as :func:`score_batch`; default metrics precision, recall, mrr, ndcg) or
    ``"autorag"`` (AutoRAG's own definitions, as
    :mod:`ranklens.compat.autorag`; metrics among recall, precision, f1, mrr,
    map, ndcg, default all six; NaN where AutoRAG gives None; ``k`` and the
    other options do not apply).  The column defaults are AutoRAG's names, and
    on several groups per row the two definitions give different mrr, map and
    ndcg: with those columns and no ``semantics``, trec rules are used and a
    :class:`~ranklens.errors.RanklensWarning` says so.
    """
    if semantics is None:
        if relevant_col == "retrieval_gt":
            warnings.warn(
                "score_frame scores AutoRAG's columns with trec_eval's definitions, "
                "whose mrr, map and ndcg differ from AutoRAG's on rows with several "
                "groups; pass semantics='trec' to keep them, or semantics='autorag' "
                "for AutoRAG's own numbers",
                RanklensWarning,
                stacklevel=2,
            )
        semantics = "trec"
    if semantics == "autorag":
        out: dict[str, np.ndarray] = autorag_columns(
            _missing_as_none(_column_values(df, relevant_col)),
            _missing_as_none(_column_values(df, retrieved_col)),
            AUTORAG_METRICS if metrics is None else _metric_list(metrics),
            threads=threads,
        )
        skipped: Any = ()
    elif semantics == "trec":
        # The Scorer is cached as for `score`: a frame scored per batch of a
        # pipeline parses its metric names once.
        scorer = _cached_scorer(
            ("precision", "recall", "mrr", "ndcg") if metrics is None else metrics,
            k,
            relevance_level,
            empty,
            duplicates,
            miss,
            ties,
            judged_only,
            max_docs,
        )
        values, skipped = scorer._values(
            _column_cells(df, retrieved_col), _column_cells(df, relevant_col), threads
        )
        out = {m.name: values[j] for j, m in enumerate(scorer.metrics)}
    else:
        raise RanklensInputError(f"semantics must be 'trec' or 'autorag', got {semantics!r}")
    module = type(df).__module__.split(".")[0]
    if module == "polars":
        import polars as pl

        return pl.DataFrame(out)
    import pandas as pd

    index = getattr(df, "index", None)
    if semantics == "trec":
        # One 2-D block from the scorer's own array (no copy, no stacking):
        # metrics x rows is the layout of a pandas block, rows x metrics its
        # transpose.
        frame = pd.DataFrame(
            values.T, index=index, columns=_frame_columns(tuple(out)).view(), copy=False
        )
    else:
        frame = pd.DataFrame(out, index=index)
    if len(skipped):
        frame.attrs["skipped"] = list(frame.index[np.asarray(skipped)])
    return frame


def _missing_as_none(cells: list[Any]) -> list[Any]:
    """Frame cells with NaN (pandas' missing value in an object column) as None."""
    return [None if isinstance(c, float) and c != c else c for c in cells]


def _metric_list(metrics: Any) -> list[str]:
    return [metrics] if isinstance(metrics, str) else list(metrics)
