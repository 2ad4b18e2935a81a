"""The entry points of arrays: check the arguments, read the arrays, call the core."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from ranklens import _ranklens
from ranklens._arrays._convert import (
    as_array,
    as_int64,
    float_matrix,
    id_matrix,
    is_torch_bf16,
    matrix,
    ragged,
)
from ranklens._checks import check_level, check_mask, check_threads, check_tolerance, positive_int
from ranklens._evaluate import Results
from ranklens._names import Metric, parse_metrics
from ranklens._names._families import FAMILIES
from ranklens.errors import RanklensInputError

TIES = ("first", "expected", "best", "worst")
EMPTY = ("zero", "nan", "skip", "one")


class RowIds(Sequence[str]):
    """The query ids of array rows, ``"0"``, ``"1"``, ...: a lazy list of strings.

    Why: building a string per row costs more than scoring the row; these are
    made only when read.  Compares equal to the list of the same strings.
    ``rows``: the row numbers as a ``range`` (no array made: ``np.arange`` writes
    fresh pages on every call) or the ids as an integer array.
    """

    def __init__(self, rows: range | np.ndarray) -> None:
        self._rows = rows

    def _ints(self, rows: range | np.ndarray) -> Iterable[int]:
        return rows.tolist() if isinstance(rows, np.ndarray) else rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [str(r) for r in self._ints(self._rows[i])]
        return str(int(self._rows[i]))

    def __iter__(self) -> Iterator[str]:
        return (str(r) for r in self._ints(self._rows))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RowIds, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RowIds({len(self)} rows)"


def metrics_with_k(metrics: Any, k: int | None) -> list[Metric]:
    """The parsed metrics, ``k`` given to each that takes a cutoff and has none."""
    ms = parse_metrics(metrics)
    if k is None:
        return ms
    positive_int(k, "k")
    return [
        dataclasses.replace(m, k=k) if m.k is None and FAMILIES[m.family].cutoff != "none" else m
        for m in ms
    ]


def _setup(
    metrics: Any, k: Any, relevance_level: Any, threads: Any, empty: Any, ties: Any = "first"
) -> tuple[list[Metric], list[tuple[Any, ...]], float, int | None]:
    """The checked arguments every entry point shares: ``(metrics, specs for the
    core, relevance level, threads)``."""
    ms = metrics_with_k(metrics, k)
    level = check_level(relevance_level)
    nthreads = check_threads(threads)
    _choice(ties, TIES, "ties")
    _choice(empty, EMPTY, "empty")
    return ms, [(m.family, m.k, m.rel, list(m.params)) for m in ms], level, nthreads


def _choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise RanklensInputError(
            f"{name} must be one of {', '.join(repr(a) for a in allowed)}, got {value!r}"
        )
    return value


def _results(
    ms: list[Metric],
    values: np.ndarray,
    empty_rows: np.ndarray,
    empty: str,
    level: float,
    keys: np.ndarray | None = None,
) -> Results:
    """Results of rows whose ids are ``keys`` (default: the row numbers)."""
    rows: range | np.ndarray = range(len(values)) if keys is None else keys
    ignored: list[str] = []
    if empty == "skip" and empty_rows.any():
        ids = np.asarray(rows)
        ignored = [str(r) for r in ids[empty_rows].tolist()]
        keep = ~empty_rows
        values, rows = values[keep], ids[keep]
    return Results(ms, RowIds(rows), values, [], ignored, level)  # type: ignore[arg-type]


def evaluate_dense(
    scores: Any,
    labels: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    k: int | None = None,
    relevance_level: float = 1,
    empty: str = "zero",
    ties: str = "first",
    mask: Any = None,
    lengths: Any = None,
    threads: int | None = None,
) -> Results:
    """Score each row of ``scores[n_queries, n_candidates]`` against the same row of
    ``labels`` (scikit-learn's ``ndcg_score`` shape) on ``metrics``, natively.

    ``metrics``: any metric ranklens has, in any accepted spelling; ``k``: the
    cutoff of each metric given without one that takes one (``["ndcg", "recall"],
    k=10`` is ``ndcg@10`` and ``recall@10``).  ``relevance_level``: a label >= it is
    relevant.  ``ties``, ``empty``, ``mask`` / ``lengths`` and the accepted dtypes:
    see the module documentation (:mod:`ranklens._arrays`).  ``threads``: worker
    threads (default: ``RANKLENS_NUM_THREADS``, else one per core); a call of at
    most 64 rows runs on the calling thread (one sample at a time costs no
    thread hand-over, which would take longer than scoring the row).

    Returns :class:`~ranklens.Results` with query ids ``"0"`` .. ``"n-1"`` and
    ``res.values`` the ``rows x metrics`` array in row order.
    """
    ms, specs, level, nthreads = _setup(metrics, k, relevance_level, threads, empty, ties)
    s, half = matrix(scores, "scores", labels=False)
    lab, _ = matrix(labels, "labels", labels=True)
    if s.shape != lab.shape:
        raise RanklensInputError(f"scores has shape {s.shape}, labels {lab.shape}: they must match")
    mask_arr = None
    len_arr = None
    if mask is not None and lengths is not None:
        raise RanklensInputError("pass mask= or lengths=, not both")
    if mask is not None:
        mask_arr = as_array(mask, "mask")
        if mask_arr.shape != s.shape:
            raise RanklensInputError(
                f"mask has shape {mask_arr.shape}, scores {s.shape}: they must match"
            )
        mask_arr = check_mask(mask_arr)
        if any(st < 0 for st in mask_arr.strides):
            mask_arr = np.ascontiguousarray(mask_arr)
    if lengths is not None:
        len_in = as_array(lengths, "lengths")
        if len_in.shape != (s.shape[0],) or len_in.dtype.kind not in "iu":
            raise RanklensInputError(
                f"lengths must be {s.shape[0]} ints (one per row), got dtype "
                f"{len_in.dtype} and shape {len_in.shape}"
            )
        len_arr = np.ascontiguousarray(len_in, dtype=np.int64)
    values, empty_rows = _ranklens.evaluate_dense(
        s, lab, specs, level, ties, empty, half, mask_arr, len_arr, nthreads
    )
    return _results(ms, values, empty_rows, empty, level)


def evaluate_flat(
    preds: Any,
    target: Any,
    indexes: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    k: int | None = None,
    relevance_level: float = 1,
    empty: str = "zero",
    ties: str = "first",
    threads: int | None = None,
) -> Results:
    """Score flat cells grouped by query: torchmetrics' ``(preds, target, indexes)``.

    Cell ``c`` has score ``preds[c]``, label ``target[c]`` and belongs to the query
    ``indexes[c]`` (any integers, sorted or not).  Each query is one row of
    :func:`evaluate_dense` (same semantics; ``ties="first"`` breaks ties by input
    position), grouped natively: no Python loop, no allocation proportional to the
    largest index; a sorted ``indexes`` costs nothing more, a shuffled one a
    linear counting sort of the cells by group (each cell's place, 8 bytes a cell;
    4 more and a hash map of the distinct values when they span a range wider than
    the number of cells) and a copy of ``preds`` and ``target`` in group order
    (as many bytes as they hold), so that each query is then read as a run of
    cells, as when sorted.  Arrays of any shape are
    read flattened (multi-dimensional non-contiguous ones are copied to do so).
    ``threads``: as in :func:`evaluate_dense`; a call of at most 64 groups of at
    most 65,536 cells runs on the calling thread.

    Returns :class:`~ranklens.Results` with one row per distinct index value,
    ascending; the query ids are those values as strings.
    """
    ms, specs, level, nthreads = _setup(metrics, k, relevance_level, threads, empty, ties)
    bf16 = is_torch_bf16(preds), is_torch_bf16(target)
    p, t = (as_array(x, n, bf16_bits=True) for x, n in ((preds, "preds"), (target, "target")))
    ix = as_array(indexes, "indexes")
    if p.shape != t.shape or p.size != ix.size:
        raise RanklensInputError(
            f"preds, target and indexes must have as many cells, got shapes {p.shape}, "
            f"{t.shape} and {ix.shape}"
        )
    idx = np.ascontiguousarray(as_int64(ix.reshape(-1), "indexes"))
    s, half = matrix(p.reshape(1, -1), "preds", labels=False, bf16=bf16[0])
    lab, _ = matrix(t.reshape(1, -1), "target", labels=True, bf16=bf16[1])
    values, empty_rows, keys = _ranklens.evaluate_flat(
        s, lab, idx, specs, level, ties, empty, half, nthreads
    )
    return _results(ms, values, empty_rows, empty, level, keys)


def evaluate_topk(
    ids: Any,
    relevant: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    k: int | None = None,
    relevance_level: float = 1,
    empty: str = "zero",
    relevant_is: str = "auto",
    threads: int | None = None,
) -> Results:
    """Score ranked id lists ``ids[n, k]`` (best first; negative ids are padding,
    left out with ranks closing up) on ``metrics``.

    ``relevant`` takes one of two forms (``relevant_is``; ``"auto"``: a float or
    bool array is labels, an integer one ids):

    * ``"ids"``: each row's relevant ids, any order, padded with negative ids (ANN
      ground truth; a ragged list of lists is padded for you).  A retrieved id
      among them has label 1, any other is not judged (trec_eval: not in the
      qrels), and R is the number of distinct relevant ids.
    * ``"labels"``: a matrix of the shape of ``ids`` holding each retrieved id's
      label.  The judged candidates are the retrieved ones, so R counts the
      relevant ones among them (what was not retrieved is unknown).

    Ids are integers: a float, bool or string id, or (for ``ids``) rows of
    different lengths, is an error naming the row and column.  A non-negative id
    twice in one row is an error.  ``k``, ``relevance_level``,
    ``empty`` and ``threads``: as in :func:`evaluate_dense`.
    """
    return _topk(ids, relevant, metrics, k, relevance_level, empty, threads, relevant_is)


def _topk(
    ids: Any,
    relevant: Any,
    metrics: Any,
    k: int | None,
    relevance_level: Any,
    empty: str,
    threads: Any,
    relevant_is: str,
) -> Results:
    ms, specs, level, nthreads = _setup(metrics, k, relevance_level, threads, empty)
    ids_a = id_matrix(ids, "ids")
    _choice(relevant_is, ("auto", "ids", "labels"), "relevant_is")
    if isinstance(relevant, (list, tuple)) and relevant_is != "labels":
        try:
            rel = ragged(relevant, "relevant")
        except RanklensInputError as e:
            hint = " (labels? pass relevant_is='labels')" if relevant_is == "auto" else ""
            raise RanklensInputError(f"{e}{hint}") from None
    else:
        rel = as_array(relevant, "relevant")
    if rel.ndim != 2:
        raise RanklensInputError(f"relevant must be 2-D, got shape {rel.shape}")
    labels = rel.dtype.kind in "fb" if relevant_is == "auto" else relevant_is == "labels"
    if labels:
        rel_a, _ = matrix(rel, "relevant", labels=True)
        kind = "labels"
    else:
        rel_a = id_matrix(rel, "relevant")
        kind = "ids"
    values, empty_rows = _ranklens.evaluate_topk(ids_a, rel_a, kind, specs, level, empty, nthreads)
    return _results(ms, values, empty_rows, empty, level)


def knn_recall(
    approx: Any,
    exact: Any,
    k: int,
    distances: tuple[Any, Any] | None = None,
    *,
    epsilon: float = 1e-3,
    threads: int | None = None,
) -> np.ndarray:
    """Vector-search recall@k of each query: a float64 array, one value per row.

    ``approx[n, >=k]``: the neighbour ids an index returned, best first;
    ``exact[n, >=k]``: the true nearest neighbours.  Default: the share of the
    first ``k`` exact ids found among the first ``k`` approximate ones,
    ``|set(approx[i, :k]) & set(exact[i, :k])| / k`` (negative ids are padding and
    match nothing; an id returned twice counts once).  ``distances=(approx_dist,
    exact_dist)``: ann-benchmarks' definition instead, robust to equidistant
    neighbours: the share of the first ``k`` approximate neighbours whose distance
    is at most the ``k``-th exact distance + ``epsilon`` (ids are then not read).
    ``epsilon`` must be finite and >= 0.  The mean over queries is
    ``knn_recall(...).mean()``.
    """
    positive_int(k, "k")
    nthreads = check_threads(threads)
    if distances is None:
        a, e = id_matrix(approx, "approx"), id_matrix(exact, "exact")
        return _ranklens.knn_recall(a, e, k, nthreads)
    if not isinstance(distances, tuple) or len(distances) != 2:
        raise RanklensInputError("distances must be a pair (approx_distances, exact_distances)")
    ad, ed = (
        float_matrix(d, n) for d, n in zip(distances, ("approx distances", "exact distances"))
    )
    eps = check_tolerance(epsilon, "epsilon")
    return _ranklens.knn_recall_distances(ad, ed, k, eps, nthreads)
