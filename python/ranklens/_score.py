"""Per-item and batch scoring: `score`, `score_batch`, `score_frame`.

One row = one ranked list and its ground truth.  A batch is encoded in one call to
the Rust encoder (row ``i`` becomes query ``i``, zero-padded so that the byte order
of the ids is the row order), scored in one :func:`~ranklens.evaluate` call, and
the per-query values come back as one numpy array per metric, in row order: no
Python work per row.

Ground truth, per row: a list of relevant ids (label 1 each), a dict id -> label,
or a list of groups (a list of ids inside the row's list is one group: any member
satisfies it, see :meth:`ranklens.Qrels.from_groups`); ``None`` or ``[]`` is an
empty ground truth.  Retrieved, per row: a ranked list of ids, a dict id -> score,
or ``None`` (nothing retrieved).  Metrics are trec_eval's (see the README), not
AutoRAG's (for those, see :mod:`ranklens.compat.autorag`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate
from ranklens._names import FAMILIES, Metric, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["expand_cutoffs", "score", "score_batch", "score_frame"]

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


_QUERY_RE = re.compile(r'query "0*(\d+)"')


def _rows_error(e: RanklensInputError) -> RanklensInputError:
    """Errors of the encoders name the padded row id as a query: say "row"."""
    return RanklensInputError(_QUERY_RE.sub(r"row \1", str(e)))


def _num_rows(obj: Any, what: str) -> int:
    if isinstance(obj, (str, bytes)) or isinstance(obj, Mapping):
        raise RanklensInputError(f"{what} must be a list with one entry per row")
    try:
        return len(obj)
    except TypeError:
        raise RanklensInputError(
            f"{what} must be a list with one entry per row, got {type(obj).__name__}"
        ) from None


def score_batch(
    retrieved_lists: Sequence[Any],
    relevant_lists: Sequence[Any],
    metrics: MetricsArg,
    *,
    k: Cutoffs = None,
    relevance_level: float = 1,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Score many rows at once: ``{metric name: float64 array, one value per row}``.

    ``retrieved_lists[i]`` is ranked against ``relevant_lists[i]`` (see the module
    docstring for the accepted forms).  ``metrics``: names as for
    :func:`ranklens.evaluate` (``"ndcg@5,10"`` works); ``k``: cutoffs applied to the
    names given without one (``k=[5, 10, 20]``).  Keys are canonical names
    (``"P@10"`` -> ``"precision@10"``).  Bad rows raise
    :class:`~ranklens.errors.RanklensInputError` naming the row.
    """
    ms = expand_cutoffs(metrics, k)
    n = _num_rows(retrieved_lists, "retrieved_lists")
    m = _num_rows(relevant_lists, "relevant_lists")
    if n != m:
        raise RanklensInputError(f"{n} retrieved rows but {m} ground-truth rows")
    if n == 0:
        return {x.name: np.zeros(0) for x in ms}
    try:
        qrels = Qrels._from_arrays(_ranklens.encode_rows(relevant_lists, "qrels"))
        run = Run._from_arrays(_ranklens.encode_rows(retrieved_lists, "run"))
    except RanklensInputError as e:
        raise _rows_error(e) from None
    res = evaluate(qrels, run, ms, relevance_level=relevance_level, threads=threads)
    return {x.name: res.values[:, j].copy() for j, x in enumerate(ms)}


def score(
    retrieved: Any,
    relevant: Any,
    metrics: MetricsArg,
    *,
    k: Cutoffs = None,
    relevance_level: float = 1,
) -> dict[str, float]:
    """Score one ranked list: ``{metric name: value}``.

    >>> score(["d3", "d1", "d7"], ["d1", "d2"], ["P@2", "recall@3", "mrr"])
    {'precision@2': 0.5, 'recall@3': 0.5, 'mrr': 0.5}

    ``relevant``: a list of relevant ids, a dict id -> label, or a list of groups.
    """
    out = score_batch([retrieved], [relevant], metrics, k=k, relevance_level=relevance_level)
    return {name: float(v[0]) for name, v in out.items()}


def _column_values(df: Any, col: str) -> list[Any]:
    if col not in df.columns:
        raise RanklensInputError(
            f"no column {col!r} in the frame (columns: {', '.join(map(str, df.columns))})"
        )
    series = df[col]
    if hasattr(series, "to_list"):  # polars
        return series.to_list()
    return series.tolist()


def score_frame(
    df: Any,
    retrieved_col: str = "retrieved_ids",
    relevant_col: str = "retrieval_gt",
    metrics: MetricsArg = ("precision", "recall", "mrr", "ndcg"),
    *,
    k: Cutoffs = None,
    relevance_level: float = 1,
    threads: int | None = None,
) -> Any:
    """Per-row scores of a pandas or polars DataFrame with list columns.

    Returns a frame of the same library, one column per metric (canonical names),
    one row per input row (pandas: same index).
    """
    out = score_batch(
        _column_values(df, retrieved_col),
        _column_values(df, relevant_col),
        metrics,
        k=k,
        relevance_level=relevance_level,
        threads=threads,
    )
    module = type(df).__module__.split(".")[0]
    if module == "polars":
        import polars as pl

        return pl.DataFrame(out)
    import pandas as pd

    return pd.DataFrame(out, index=getattr(df, "index", None))
