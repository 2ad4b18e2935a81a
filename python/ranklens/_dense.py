"""Arrays scored in place: score matrices, ranked id lists, ANN neighbours.

No ids, no hashing, no join: row ``i`` is query ``i`` (its id in
:class:`~ranklens.Results` is the string ``str(i)``), the columns are its
candidates.  Semantics (the same for every entry point here):

* **Candidates.**  Every cell is a judged candidate with its label: ``0`` is judged
  non-relevant; a negative label is trec_eval's "in the pool, unjudged" (never
  relevant, gain 0).  ``mask=`` (True: a candidate) or ``lengths=`` (row ``i``
  holds its first ``lengths[i]`` columns) leave cells out; left-out cells are never
  read, so they may hold NaN.
* **Ranking.**  Score descending.  ``ties="first"`` (default): equal scores in
  column order, the lower column first (``np.argsort(-scores, kind="stable")``).
  ``"expected"``: the exact expected value over the orderings of each group of
  equal scores, uniformly random (McSherry & Najork 2008; for ``dcg``/``ndcg`` it
  equals scikit-learn's tie averaging).  ``"best"`` / ``"worst"``: higher / lower
  labels first within a group of equal scores, the best / worst value over the
  orderings for every metric that rewards ranking higher labels higher
  (precision, recall, hits, mrr, map, ndcg, dcg, err, r_precision, ...);
  low-precision scores (float16, bfloat16) make such ties common.
* **Empty rows.**  A row with no label relevant at ``relevance_level`` is empty;
  ``empty=`` sets all its values: ``"zero"`` (default, scikit-learn's and
  torchmetrics' default), ``"one"`` (torchmetrics' ``"pos"``), ``"nan"`` (NaN: the
  aggregate ``res[name]`` is then NaN; ``np.nanmean(res.values, axis=0)`` skips
  them) or ``"skip"`` (left out of the results: ``res.query_ids`` lacks them,
  ``res.ignored_queries`` lists them).
* **Dtypes.**  Read in place, without a copy: float64, float32, float16 and
  bfloat16 (ml_dtypes, as jax and torch tensors convert) scores, float64, float32,
  int64, int32, int8, uint8 and bool labels (and integer scores), C-contiguous or
  strided (transposed, sliced) with non-negative strides.  Copied once: float16 or
  bfloat16 labels and other dtypes (int16, uint16, uint32, uint64, longdouble) to
  float64, negative strides to a contiguous array.  Anything with ``__dlpack__``
  or ``__array__`` on the CPU is accepted (torch, jax, cupy after ``.cpu()`` /
  ``.get()``), through ``np.from_dlpack`` without a copy where possible (a tensor
  that requires grad is read detached, its values only); a torch
  bfloat16 tensor (which numpy refuses) as its int16 view's bits, scores without a
  copy (torch is looked up among the loaded modules, never imported).  NaN
  scores and NaN or infinite labels are errors naming the cell.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_level, check_threads, positive_int
from ranklens._names import Metric, parse_metrics
from ranklens._names._families import FAMILIES
from ranklens._results import Results
from ranklens.errors import RanklensInputError

__all__ = ["evaluate_dense", "evaluate_flat", "evaluate_topk", "knn_recall"]

TIES = ("first", "expected", "best", "worst")
EMPTY = ("zero", "nan", "skip", "one")

# Dtypes the core reads as they are.
_NATIVE = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8)}


class RowIds(Sequence[str]):
    """The query ids of array rows, ``"0"``, ``"1"``, ...: a lazy list of strings.

    Why: building 100k strings cost more than scoring the rows; these are made
    only when read.  Compares equal to the list of the same strings.  ``rows``:
    the row numbers as a ``range`` (no array made: ``np.arange`` of 100k rows
    took 0.1 ms a call, its fresh pages written) or the ids as an integer array.
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


def as_array(x: Any, name: str, *, bf16_bits: bool = False) -> np.ndarray:
    """``x`` as a numpy array, without a copy where the source allows.  A torch
    bfloat16 tensor (which numpy refuses through both protocols) is widened to
    float32, or with ``bf16_bits`` returned as its bits (``uint16``, no copy)."""
    if isinstance(x, np.ndarray):
        return x
    # A tensor that tracks gradients (a training loop's scores): its values,
    # detached (no copy); DLPack and ``__array__`` refuse it as it is.
    if getattr(x, "requires_grad", False) is True and callable(getattr(x, "detach", None)):
        x = x.detach()
    if is_torch_bf16(x):
        bits = _torch_bf16_bits(x, name)
        return bits if bf16_bits else _half_to_f32(bits, "bf16")
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass  # e.g. bfloat16 or a tensor needing grad: __array__ below
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as e:
        raise RanklensInputError(f"{name} must be an array (numpy, torch, jax, ...): {e}") from e


def is_torch_bf16(x: Any) -> bool:
    """Whether ``x`` is a torch bfloat16 tensor (told by its dtype's name: torch is
    not imported)."""
    return str(getattr(x, "dtype", "")) == "torch.bfloat16"


def _torch_bf16_bits(x: Any, name: str) -> np.ndarray:
    """The bits of a torch bfloat16 tensor on the CPU as ``uint16``, without a copy:
    the tensor reinterpreted as int16 (``x.view(torch.int16)``), exported through
    DLPack.  torch is already loaded (``x`` is one of its tensors); it is looked up,
    never imported."""
    torch = sys.modules.get(type(x).__module__.split(".")[0])
    int16 = getattr(torch, "int16", None)
    if int16 is None:
        raise RanklensInputError(f"{name}: a bfloat16 tensor of an unknown library")
    try:
        return np.from_dlpack(x.view(int16)).view(np.uint16)
    except (TypeError, RuntimeError, BufferError, ValueError) as e:
        raise RanklensInputError(
            f"{name}: a bfloat16 tensor must be on the CPU and not need grad (.detach().cpu()): {e}"
        ) from e


def matrix(x: Any, name: str, *, labels: bool, bf16: bool = False) -> tuple[np.ndarray, str]:
    """A 2-D array the core reads in place, and how to read ``uint16`` bits
    (``"f16"``, ``"bf16"`` or ``""``).  ``bf16``: ``x`` holds bfloat16 bits
    (``as_array(..., bf16_bits=True)`` of a torch bfloat16 tensor).  Copies only
    what the docstring above says."""
    bf16 = bf16 or is_torch_bf16(x)
    a = as_array(x, name, bf16_bits=True)
    if a.ndim != 2:
        hint = (
            f" (one query's candidates: {name}[None, :]; a flat tensor grouped by an"
            " index: evaluate_flat)"
            if a.ndim == 1
            else ""
        )
        raise RanklensInputError(
            f"{name} must be 2-D (rows x candidates), got shape {a.shape}{hint}"
        )
    half = ""
    dt = a.dtype
    if bf16 and dt == np.uint16:
        half = "bf16"
    elif dt == np.bool_:
        a = a.view(np.uint8)
    elif dt == np.float16:
        a, half = a.view(np.uint16), "f16"
    elif dt.name == "bfloat16":  # ml_dtypes (jax, torch via numpy)
        a, half = a.view(np.uint16), "bf16"
    elif dt not in _NATIVE:
        if dt.kind not in "biuf":
            raise RanklensInputError(f"{name} must hold numbers, got dtype {dt}")
        a = a.astype(np.float64)
    if labels and half:
        a, half = _half_to_f64(a, half), ""
    if any(s < 0 for s in a.strides) or any(s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)
    return a, half


def _half_to_f64(bits: np.ndarray, half: str) -> np.ndarray:
    return _half_to_f32(bits, half).astype(np.float64)


def _half_to_f32(bits: np.ndarray, half: str) -> np.ndarray:
    """float16 or bfloat16 bits widened to float32 (exact)."""
    if half == "f16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


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
    see the module documentation (:mod:`ranklens._dense`).  ``threads``: worker
    threads (default: ``RANKLENS_NUM_THREADS``, else one per core); a call of at
    most 64 rows runs on the calling thread (one sample at a time costs no
    thread hand-over: about 20 us a call of one row of 100).

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
        mask_arr = (mask_arr if mask_arr.dtype == np.bool_ else mask_arr != 0).view(np.uint8)
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
    idx = np.ascontiguousarray(_int64(ix.reshape(-1), "indexes"))
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

    A non-negative id twice in one row is an error.  ``k``, ``relevance_level``,
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
    ids_a = _ids(ids, "ids")
    rel = (
        _ragged(relevant) if isinstance(relevant, (list, tuple)) else as_array(relevant, "relevant")
    )
    if rel.ndim != 2:
        raise RanklensInputError(f"relevant must be 2-D, got shape {rel.shape}")
    _choice(relevant_is, ("auto", "ids", "labels"), "relevant_is")
    labels = rel.dtype.kind in "fb" if relevant_is == "auto" else relevant_is == "labels"
    if labels:
        rel_a, _ = matrix(rel, "relevant", labels=True)
        kind = "labels"
    else:
        rel_a = _ids(rel, "relevant")
        kind = "ids"
    values, empty_rows = _ranklens.evaluate_topk(ids_a, rel_a, kind, specs, level, empty, nthreads)
    return _results(ms, values, empty_rows, empty, level)


def _ragged(rows: Sequence[Sequence[int]]) -> np.ndarray:
    """A list of id lists as a matrix padded with -1."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def _ids(x: Any, name: str) -> np.ndarray:
    """An id matrix as int64 (other integer dtypes are copied)."""
    a = as_array(x, name)
    if a.ndim != 2:
        raise RanklensInputError(f"{name} must be 2-D (rows x ids), got shape {a.shape}")
    a = _int64(a, name)
    if any(s < 0 or s % 8 for s in a.strides):
        a = np.ascontiguousarray(a)
    return a


def _int64(a: np.ndarray, name: str) -> np.ndarray:
    """An integer array as int64 (other integer dtypes are copied)."""
    if a.dtype.kind not in "iu":
        raise RanklensInputError(f"{name} must hold integers, got dtype {a.dtype}")
    if a.dtype == np.int64:
        return a
    if a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise RanklensInputError(f"{name}: values above 2**63 - 1 are not supported")
    return a.astype(np.int64)


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
    The mean over queries is ``knn_recall(...).mean()``.
    """
    positive_int(k, "k")
    nthreads = check_threads(threads)
    if distances is None:
        a, e = _ids(approx, "approx"), _ids(exact, "exact")
        return _ranklens.knn_recall(a, e, k, nthreads)
    if not isinstance(distances, tuple) or len(distances) != 2:
        raise RanklensInputError("distances must be a pair (approx_distances, exact_distances)")
    ad, ed = (_floats(d, n) for d, n in zip(distances, ("approx distances", "exact distances")))
    return _ranklens.knn_recall_distances(ad, ed, k, float(epsilon), nthreads)


def _floats(x: Any, name: str) -> np.ndarray:
    a = as_array(x, name)
    if a.ndim != 2 or a.dtype.kind not in "iuf":
        raise RanklensInputError(f"{name} must be a 2-D array of numbers, got {a.dtype} {a.shape}")
    if a.dtype != np.float64:
        a = a.astype(np.float64)
    if any(s < 0 or s % 8 for s in a.strides):
        a = np.ascontiguousarray(a)
    return a
