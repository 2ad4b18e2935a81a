"""Drop-ins for scikit-learn's ``ndcg_score`` and ``dcg_score``, computed by ranklens.

Where code did ``from sklearn.metrics import ndcg_score, dcg_score``, write::

    from ranklens.compat.sklearn import dcg_score, ndcg_score

Same arguments (``y_true``, ``y_score``, ``k``, ``sample_weight``, ``ignore_ties``,
and ``log_base`` for ``dcg_score``; the per-row ``_dcg_sample_scores`` and
``_ndcg_sample_scores`` too, which scikit-learn's own tests call), same value (to
about 1e-15: sums are added in another order), same errors (a
:class:`~ranklens.errors.RanklensInputError`, a ``ValueError`` as scikit-learn's,
with its message) for: negative ``y_true`` in ``ndcg_score``, a single document per
row, a 1-D ``y_true``, inputs of different
lengths, ``k < 1``, and NaN.

Semantics, as scikit-learn's (scikit-learn 1.x):

* gain = the label (linear), discount ``1 / log2(rank + 1)`` (``log_base`` in
  ``dcg_score``); the ideal DCG of ``ndcg_score`` sorts ``y_true``; a row whose
  labels are all 0 has nDCG 0 and counts in the mean;
* ``ignore_ties=False`` (default): tied scores share the mean gain of their group,
  the expected DCG over the orderings of each tie group (ranklens'
  ``ties="expected"``); ``ignore_ties=True``: the ranking is scikit-learn's,
  ``np.argsort(y_score)[:, ::-1]`` (the same numpy call, so tied scores come in
  the very order scikit-learn gives them: reversed, and not stable past 16
  columns), the labels gathered in that order and scored natively;
* the mean over rows, weighted by ``sample_weight``.

Where scikit-learn surprises: tie averaging is the default and costs scikit-learn
about 10x ``ignore_ties=True`` (a Python loop per row); here both are native.  The
native call, with every other metric and per-row values, is
``ranklens.evaluate_dense(y_score, y_true, ["ndcg@10"], ties="expected")`` (its
default relevance level of 1 decides which rows are *empty*: pass a small
``relevance_level`` for labels below 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklens._arrays import as_array, evaluate_dense
from ranklens._names import Metric
from ranklens.errors import RanklensInputError

__all__ = ["dcg_score", "ndcg_score"]

# The smallest positive double: any label > 0 is "relevant", so a row is empty
# (scored 0, as scikit-learn does) exactly when all its gains are 0.
_ANY_POSITIVE = float(np.nextafter(0.0, 1.0))

_FORMATS = ("multilabel-indicator", "continuous-multioutput", "multiclass-multioutput")


def _inputs(y_true: Any, y_score: Any, sample_weight: Any) -> tuple[np.ndarray, np.ndarray]:
    yt = as_array(y_true, "y_true")
    ys = as_array(y_score, "y_score")
    for a, name in ((yt, "y_true"), (ys, "y_score")):
        if a.dtype.kind not in "biuf":
            raise RanklensInputError(f"{name} must hold numbers, got dtype {a.dtype}")
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            raise RanklensInputError(f"Input {name} contains NaN or infinity.")
    lengths = [len(yt), len(ys)]
    if sample_weight is not None:
        lengths.append(len(as_array(sample_weight, "sample_weight")))
    if len(set(lengths)) > 1:
        raise RanklensInputError(
            f"Found input variables with inconsistent numbers of samples: {lengths}"
        )
    return yt, ys


def _check_target(yt: np.ndarray) -> None:
    """scikit-learn's ``_check_dcg_target_type``: a 2-D target, more than one column."""
    if yt.ndim == 2 and yt.shape[1] > 1:
        return
    flat = yt.ravel()
    if flat.dtype.kind == "f" and np.any(flat != np.round(flat)):
        kind = "continuous"
    else:
        kind = "binary" if len(np.unique(flat)) <= 2 else "multiclass"
    raise RanklensInputError(f"Only {_FORMATS} formats are supported. Got {kind} instead")


def _check_k(k: Any) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise RanklensInputError(
            f"The 'k' parameter of ndcg_score must be an int in the range [1, inf) or None. "
            f"Got {k!r} instead."
        )
    return int(k)


def _per_row(
    family: str, yt: np.ndarray, ys: np.ndarray, k: int | None, ignore_ties: bool
) -> np.ndarray:
    if ys.shape != yt.shape:
        raise RanklensInputError(
            f"y_true has shape {yt.shape}, y_score {ys.shape}: they must match"
        )
    if ignore_ties:
        yt, ys = _sklearn_order(yt, ys)
    res = evaluate_dense(
        ys,
        yt,
        [Metric(family, k)],
        relevance_level=_ANY_POSITIVE,
        ties="first" if ignore_ties else "expected",
        empty="zero",
    )
    return res.values[:, 0]


def _sklearn_order(yt: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The labels in scikit-learn's ranking for ``ignore_ties=True``, and scores
    that keep that order: its ranking is ``np.argsort(y_score)[:, ::-1]``, the
    same call here (numpy's default sort is not stable, so the order among tied
    scores is whatever that call gives, and only that call reproduces it); the
    labels are gathered in that order and scored by column order (strictly
    decreasing scores, one row broadcast to every row, no copy).

    Rejected: ranklens' own column order among ties (``ties="first"``), which
    differs from argsort's reversed order on every tied row."""
    if yt.ndim != 2:
        return yt, ys
    ranking = np.argsort(ys)[:, ::-1]
    ranked = np.take_along_axis(yt, ranking, axis=1)
    order = np.arange(yt.shape[1], 0, -1, dtype=np.float64)
    return ranked, np.broadcast_to(order, yt.shape)


def _checked_ndcg_inputs(
    y_true: Any, y_score: Any, k: Any, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, int | None]:
    kk = _check_k(k)
    yt, ys = _inputs(y_true, y_score, sample_weight)
    if (yt < 0).any():
        raise RanklensInputError("ndcg_score should not be used on negative y_true values.")
    if yt.ndim > 1 and yt.shape[1] <= 1:
        raise RanklensInputError(
            "Computing NDCG is only meaningful when there is more than 1 document. "
            f"Got {yt.shape[1]} instead."
        )
    _check_target(yt)
    return yt, ys, kk


def _ndcg_sample_scores(
    y_true: Any, y_score: Any, k: int | None = None, ignore_ties: bool = False
) -> np.ndarray:
    """The nDCG@k of each row (scikit-learn's private function of the same name
    and arguments, checked as :func:`ndcg_score` checks them)."""
    yt, ys, kk = _checked_ndcg_inputs(y_true, y_score, k, None)
    return _per_row("ndcg", yt, ys, kk, bool(ignore_ties))


def ndcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """scikit-learn's ``ndcg_score``: the mean nDCG@k over rows (see the module doc)."""
    yt, ys, kk = _checked_ndcg_inputs(y_true, y_score, k, sample_weight)
    gain = _per_row("ndcg", yt, ys, kk, bool(ignore_ties))
    return float(np.average(gain, weights=sample_weight))


def _dcg_sample_scores(
    y_true: Any,
    y_score: Any,
    k: int | None = None,
    log_base: float = 2,
    ignore_ties: bool = False,
) -> np.ndarray:
    """The DCG@k of each row (scikit-learn's private function of the same name
    and arguments).

    Negative labels are gains here, as in scikit-learn (ranklens' own ``dcg`` reads
    them as unjudged, gain 0): DCG is linear in the gains, so it is computed as the
    DCG of the positive parts minus that of the negated negative parts.
    """
    kk = _check_k(k)
    if isinstance(log_base, bool) or not isinstance(log_base, (int, float)) or not log_base > 0:
        raise RanklensInputError(
            "The 'log_base' parameter of dcg_score must be a float in the range (0, inf). "
            f"Got {log_base!r} instead."
        )
    yt, ys = _inputs(y_true, y_score, None)
    _check_target(yt)
    yt = yt.astype(np.float64, copy=False)
    gain = _per_row("dcg", np.maximum(yt, 0.0), ys, kk, bool(ignore_ties))
    if (yt < 0).any():
        gain = gain - _per_row("dcg", np.maximum(-yt, 0.0), ys, kk, bool(ignore_ties))
    # 1 / log_b(r + 1) = log2(b) / log2(r + 1).
    if log_base != 2:
        gain = gain * np.log2(float(log_base))
    return gain


def dcg_score(
    y_true: Any,
    y_score: Any,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: Any = None,
    ignore_ties: bool = False,
) -> float:
    """scikit-learn's ``dcg_score``: the mean DCG@k over rows (see the module doc
    and :func:`_dcg_sample_scores`)."""
    _inputs(y_true, y_score, sample_weight)
    gain = _dcg_sample_scores(y_true, y_score, k, log_base, ignore_ties)
    return float(np.average(gain, weights=sample_weight))
