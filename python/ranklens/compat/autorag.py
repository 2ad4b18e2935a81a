"""AutoRAG's retrieval metrics, with AutoRAG's own numbers, at Rust speed.

Drop-in for ``autorag.evaluation.metric`` (retrieval.py, retrieval_contents.py): each
function returns one value per question, ``None`` where AutoRAG returns ``None``.
Both of AutoRAG's call forms work::

    from ranklens.compat import autorag
    # AutoRAG's current form: a list of MetricInput (any object or dict with the
    # fields retrieval_gt and retrieved_ids), by keyword or positionally
    autorag.retrieval_recall(metric_inputs=[MetricInput(retrieval_gt=..., retrieved_ids=...)])
    # the older column form: whole columns, ground truth first
    autorag.retrieval_recall(retrieval_gt, retrieved_ids)   # [0.5, None, ...]

The current form is read from AutoRAG's ``autorag/evaluation/metric/retrieval.py``
and ``autorag/evaluation/metric/util.py`` (``autorag_metric``: one call per
``MetricInput``, ``None`` when a field fails ``MetricInput.is_fields_notnone``), in
the repository Marker-Inc-Korea/AutoRAG (under ``legacy/`` in its newest tree).  The
token metrics take ``retrieved_contents`` and ``retrieval_gt_contents`` from each
input the same way.  Beyond AutoRAG, a ``dict`` per input works too.

``retrieval_gt``: per row a list of groups, each a list of ids (any member satisfies
the group).  ``retrieved_ids``: per row the ranked list of ids.  Ids are ``str``,
``int`` or numpy integers; ``1`` and ``"1"`` differ, as in Python (``np.int64(1)``
and ``1`` are one id).  Lists, tuples and numpy arrays are
accepted as rows and groups.  A retrieved row must have an order: a ``set``, a
``frozenset`` or a dict view (their order changes with ``PYTHONHASHSEED``) raises
:class:`~ranklens.errors.RanklensInputError` naming the row and its type, as
:func:`ranklens.score` does; a group, which has no order, may be a set.

Definitions (AutoRAG's, quirks included; G groups, P retrieved, F ground-truth ids):

* recall: groups with a member anywhere in the list / G;
* precision: *distinct* retrieved ids that belong to some group / P (a duplicate
  retrieved id counts once on top and twice below);
* f1: 2 r p / (r + p), 0 when both are 0;
* mrr: the sum over groups of 1 / rank of the group's first retrieved member (0 for a
  missed group), divided by G: a mean over groups, not the reciprocal rank of the
  first hit;
* map: the mean over groups of AP_g, where AP_g averages, over the ranks holding a
  member of g, the number of members of g up to that rank / the rank (0 for a missed
  group; the average is over the group's retrieved members, not its size);
* ndcg: DCG with gain 1 for every retrieved id in some group (duplicates count each
  time) and log2(rank + 1) discounts, over an ideal of min(F, P) ones (F counts ids,
  not groups); 0 when that ideal is 0.  It can exceed 1 with duplicates.

Token overlap (``retrieval_token_precision`` / ``_recall`` / ``_f1``) take
``retrieval_gt_contents`` (per row a list of groups of passages) and
``retrieved_contents`` (per row a list of passages), in that order (ground truth
first, as for the id metrics).  Passages are normalised as SQuAD v1.1 does
(lowercase, ASCII punctuation removed, articles a/an/the removed, whitespace
collapsed) and split on whitespace; for each retrieved passage, the token precision /
recall / F1 against every ground-truth passage (groups flattened) is computed from the
multiset overlap, the best over the ground truth is kept, and the mean over retrieved
passages is the row's value.

``None`` (as AutoRAG): the row's ground truth or retrieved list is missing (``None``)
or empty, a group is empty, or an id / passage is an empty or blank string.

Divergences, all on input AutoRAG mishandles: a bare id where a group is expected is
a group of one (AutoRAG would treat a string as a group of its characters); ids or
passages of other types (float, bool, bytes, numpy floats...) raise
:class:`~ranklens.errors.RanklensInputError` naming the row instead of giving
``None``; columns of different lengths raise instead of being truncated.

Sums are added as Python's ``sum`` adds them under the running interpreter (plain on
3.11, compensated from 3.12) and token means as ``numpy.mean`` does, so every value is
bit-identical to AutoRAG's.

Threads: rows are scored in parallel (``threads=`` where a function takes it, default
``RANKLENS_NUM_THREADS``, else one per core), but a call of at most 64 rows (8 for the
token metrics, whose rows tokenise every passage) runs on the calling thread, so a
pipeline that scores one sample at a time pays no thread hand-over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_threads
from ranklens._score import autorag_columns

__all__ = [
    "retrieval_f1",
    "retrieval_map",
    "retrieval_metrics",
    "retrieval_mrr",
    "retrieval_ndcg",
    "retrieval_precision",
    "retrieval_recall",
    "retrieval_token_f1",
    "retrieval_token_metrics",
    "retrieval_token_precision",
    "retrieval_token_recall",
]

_ID_COLUMNS = ("recall", "precision", "f1", "mrr", "map", "ndcg")
_TOKEN_COLUMNS = ("precision", "recall", "f1")


def _to_list(column: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in column.tolist()]


def retrieval_metrics(
    retrieval_gt: Sequence[Any],
    retrieved_ids: Sequence[Any],
    metrics: Sequence[str] = _ID_COLUMNS,
    *,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Several id metrics in one pass: ``{name: float64 array}``, NaN for ``None``.

    ``metrics``: any of ``recall``, ``precision``, ``f1``, ``mrr``, ``map``, ``ndcg``
    (the ``retrieval_`` prefix is optional).
    """
    return autorag_columns(retrieval_gt, retrieved_ids, metrics, threads=threads)


def retrieval_token_metrics(
    retrieval_gt_contents: Sequence[Any],
    retrieved_contents: Sequence[Any],
    metrics: Sequence[str] = _TOKEN_COLUMNS,
    *,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Several token metrics in one pass: ``{name: float64 array}``, NaN for ``None``.

    ``metrics``: any of ``precision``, ``recall``, ``f1`` (``retrieval_token_``
    prefix optional).
    """
    threads = check_threads(threads)
    values = _ranklens.autorag_token(retrieved_contents, retrieval_gt_contents, threads)
    return {m: values[:, _column(m, _TOKEN_COLUMNS)].copy() for m in metrics}


def _column(name: str, columns: Sequence[str]) -> int:
    from ranklens.errors import UnknownMetricError

    short = name.removeprefix("retrieval_").removeprefix("token_")
    if short not in columns:
        raise UnknownMetricError(f"unknown metric {name!r}; valid: {', '.join(columns)}")
    return columns.index(short)


_FIELDS = ("retrieval_gt", "retrieved_ids")
_TOKEN_FIELDS = ("retrieval_gt_contents", "retrieved_contents")


def _is_metric_input(obj: Any) -> bool:
    if isinstance(obj, Mapping):
        return any(f in obj for f in _FIELDS + _TOKEN_FIELDS)
    return any(hasattr(obj, f) for f in _FIELDS + _TOKEN_FIELDS)


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _columns(
    first: Any, second: Any, metric_inputs: Any, fields: tuple[str, str], func: str
) -> tuple[Any, Any]:
    """(ground truth column, retrieved column) from either call form."""
    from ranklens.errors import RanklensInputError

    if metric_inputs is None and second is None and first is not None:
        items = first if isinstance(first, (list, tuple)) else None
        if items and all(_is_metric_input(x) for x in items):
            metric_inputs = items
    if metric_inputs is not None:
        if first is not None and first is not metric_inputs:
            raise RanklensInputError(f"{func}: pass metric_inputs or the columns, not both")
        if isinstance(metric_inputs, (str, Mapping)) or not isinstance(metric_inputs, Sequence):
            raise RanklensInputError(
                f"{func}: metric_inputs must be a list of MetricInput (or dicts), "
                f"got {type(metric_inputs).__name__}"
            )
        return (
            [_field(x, fields[0]) for x in metric_inputs],
            [_field(x, fields[1]) for x in metric_inputs],
        )
    if first is None or second is None:
        raise RanklensInputError(
            f"{func}: pass metric_inputs=[...] or both columns ({fields[0]}, {fields[1]})"
        )
    return first, second


def _ids(name: str, retrieval_gt: Any, retrieved_ids: Any, metric_inputs: Any) -> list:
    gt, pred = _columns(retrieval_gt, retrieved_ids, metric_inputs, _FIELDS, f"retrieval_{name}")
    return _to_list(autorag_columns(gt, pred, [name])[name])


def _tokens(name: str, gt_contents: Any, retrieved_contents: Any, metric_inputs: Any) -> list:
    gt, pred = _columns(
        gt_contents, retrieved_contents, metric_inputs, _TOKEN_FIELDS, f"retrieval_token_{name}"
    )
    values = _ranklens.autorag_token(pred, gt, None)
    return _to_list(values[:, _TOKEN_COLUMNS.index(name)])


def retrieval_recall(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: groups found anywhere in the retrieved list / groups."""
    return _ids("recall", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_precision(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: distinct retrieved ids in some group / length of the retrieved list."""
    return _ids("precision", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_f1(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: harmonic mean of :func:`retrieval_recall` and :func:`retrieval_precision`."""
    return _ids("f1", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_mrr(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: mean over groups of 1 / rank of the group's first member (0 if missed)."""
    return _ids("mrr", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_map(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: mean over groups of the group's average precision (see module doc)."""
    return _ids("map", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_ndcg(
    retrieval_gt: Any = None, retrieved_ids: Any = None, *, metric_inputs: Any = None
) -> list[float | None]:
    """Per row: binary-gain nDCG, ideal of min(ground-truth ids, retrieved) ones."""
    return _ids("ndcg", retrieval_gt, retrieved_ids, metric_inputs)


def retrieval_token_precision(
    retrieval_gt_contents: Any = None,
    retrieved_contents: Any = None,
    *,
    metric_inputs: Any = None,
) -> list[float | None]:
    """Per row: mean over retrieved passages of the best token precision."""
    return _tokens("precision", retrieval_gt_contents, retrieved_contents, metric_inputs)


def retrieval_token_recall(
    retrieval_gt_contents: Any = None,
    retrieved_contents: Any = None,
    *,
    metric_inputs: Any = None,
) -> list[float | None]:
    """Per row: mean over retrieved passages of the best token recall."""
    return _tokens("recall", retrieval_gt_contents, retrieved_contents, metric_inputs)


def retrieval_token_f1(
    retrieval_gt_contents: Any = None,
    retrieved_contents: Any = None,
    *,
    metric_inputs: Any = None,
) -> list[float | None]:
    """Per row: mean over retrieved passages of the best token F1."""
    return _tokens("f1", retrieval_gt_contents, retrieved_contents, metric_inputs)
