"""Frames scored column by column: :func:`score_frame` and AutoRAG's columns."""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_ordered, check_threads
from ranklens._score._scorer import Cutoffs, MetricsArg, cached_scorer
from ranklens.errors import RanklensInputError, RanklensWarning, UnknownMetricError


def _column_values(df: Any, col: str) -> list[Any]:
    if col not in df.columns:
        raise RanklensInputError(
            f"no column {col!r} in the frame (columns: {', '.join(map(str, df.columns))})"
        )
    series = df[col]
    if getattr(series, "ndim", 1) != 1:  # a pandas frame with the name twice
        raise RanklensInputError(
            f"the frame has {series.shape[1]} columns named {col!r}: one column per name"
        )
    if hasattr(series, "to_list"):  # polars
        return series.to_list()
    return series.tolist()


def _column_cells(df: Any, col: str) -> Any:
    """A column's cells for the Scorer: a pandas object column's own 1-D array
    (read in place, as a list is), else a list.

    Why pandas' private ``_get_column_array``: ``df[col]`` builds a Series and
    ``tolist()`` a list of the column, several times the cost of reading the
    column's own array once pandas' code is out of the caches (see
    docs/design/performance.md).  Anything else (polars, an extension array, a
    pandas without the method, a repeated column name) takes the public path.
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
    ``Index`` from a list infers its dtype on every call, which costs more than
    building the whole frame given the index.  Each frame gets a view of it, so
    that setting one frame's ``columns.name`` leaves the others alone."""
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
    check_ordered(retrieved_ids, "retrieved_ids")
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
    other options do not apply, and a ``ties`` other than ``"trec"`` is an
    error: the ids are ranked in list order).  The column defaults are
    AutoRAG's names, and on several groups per row the two definitions give
    different mrr, map and ndcg: with those columns and no ``semantics``, trec
    rules are used and a :class:`~ranklens.errors.RanklensWarning` says so.
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
        if ties != "trec":
            # AutoRAG ranks a list of ids in list order: no scores, so nothing
            # ties and no tie order could be what the caller asked for.
            raise RanklensInputError(
                f"ties={ties!r} applies to semantics='trec' only: AutoRAG's definitions "
                "score the retrieved ids in list order"
            )
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
        scorer = cached_scorer(
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
