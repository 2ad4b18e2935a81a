"""Drop-ins for torchmetrics' retrieval metrics, computed by ranklens, without torch.

Where code did ``from torchmetrics.functional.retrieval import retrieval_recall`` or
``from torchmetrics.retrieval import RetrievalMAP``, write::

    from ranklens.compat.torchmetrics import RetrievalMAP, retrieval_recall

Functional metrics (one query: every cell of the inputs, flattened, as
torchmetrics does with a 2-D input): ``retrieval_normalized_dcg``,
``retrieval_average_precision``, ``retrieval_reciprocal_rank``,
``retrieval_precision`` (``adaptive_k``), ``retrieval_recall``,
``retrieval_hit_rate``, ``retrieval_r_precision``, ``retrieval_fall_out``, each with
``top_k`` where torchmetrics has it.  Module metrics (``update(preds, target,
indexes)`` then ``compute()``; ``reset()``; calling one updates and returns the
batch's value): ``RetrievalNormalizedDCG``, ``RetrievalMAP``, ``RetrievalMRR``,
``RetrievalPrecision``, ``RetrievalRecall``, ``RetrievalHitRate``,
``RetrievalRPrecision``, ``RetrievalFallOut``, with ``empty_target_action``,
``ignore_index``, ``aggregation``, ``top_k`` and ``adaptive_k`` as torchmetrics
has them.  The queries of a module metric are grouped natively (any ``indexes``,
sorted or not; no Python loop over queries).

Inputs: numpy arrays, or anything with ``__dlpack__`` / ``__array__`` on the CPU
(torch tensors, read without a copy where the dtype allows; torch is never
imported for them).  Outputs: what torchmetrics returns, a float32 value: a
0-d ``torch.Tensor`` when an input was a torch tensor (torch is imported then,
and only then), else a ``numpy.float32``.

Semantics, as torchmetrics' (1.x), value for value (tested against torchmetrics
on generated cases, ``tests/data/torchmetrics_cases.json``):

* scores are read as float32 (torchmetrics' ``preds.float()``), so float64
  scores equal in float32 tie;
* average precision, reciprocal rank, precision and recall count a document
  with a score ``<= 0`` as not retrieved (its label is zeroed); hit rate,
  R-precision, fall-out and nDCG do not;
* average precision with ``top_k`` is the mean precision at the relevant ranks
  within the top k (divided by the relevant documents found there, not by R);
  precision divides by ``top_k`` even when a query has fewer documents, unless
  ``adaptive_k=True``; fall-out is the non-relevant documents in the top k over
  the non-relevant documents;
* nDCG takes graded targets, averages tied scores (scikit-learn's rule,
  ranklens' ``ties="expected"``); the other metrics take binary targets and
  break ties by input position (torchmetrics' order among ties is torch's
  ``topk``/``argsort`` order, which torch does not specify);
* empty query (no positive target; for fall-out, no negative one): the
  functional metrics return 0; module metrics follow ``empty_target_action``
  (``"neg"``: 0, ``"pos"``: 1, ``"skip"``: left out, 0 if all are, ``"error"``:
  ``ValueError``), default ``"neg"`` (``"pos"`` for fall-out);
* ``aggregation``: ``"mean"``, ``"median"`` (torch's: the lower middle value),
  ``"min"``, ``"max"`` or a callable ``f(values, dim=None)``.

Where ranklens refuses what torchmetrics accepts: negative targets in nDCG
(ranklens reads a negative label as "unjudged", gain 0), and targets other than
0 and 1 in the binary metrics (torchmetrics accepts fractions in ``[0, 1]``).

Where torchmetrics surprises, and the native call that avoids it: a 2-D input to
a functional metric is one query, not one per row (``ranklens.evaluate_dense``
scores each row); scores ``<= 0`` (cosine similarities, logits) count as not
retrieved; the binary metrics refuse graded labels; a module metric with five
metrics stores and groups the inputs five times (``ranklens.evaluate_flat(preds,
target, indexes, ["ndcg", "map", "mrr", "P@10", "recall@10"])`` does all at once).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ranklens._arrays import as_array, evaluate_flat
from ranklens.errors import RanklensInputError

__all__ = [
    "RetrievalFallOut",
    "RetrievalHitRate",
    "RetrievalMAP",
    "RetrievalMRR",
    "RetrievalNormalizedDCG",
    "RetrievalPrecision",
    "RetrievalRPrecision",
    "RetrievalRecall",
    "retrieval_average_precision",
    "retrieval_fall_out",
    "retrieval_hit_rate",
    "retrieval_normalized_dcg",
    "retrieval_precision",
    "retrieval_r_precision",
    "retrieval_recall",
    "retrieval_reciprocal_rank",
]

# nDCG: any label > 0 is relevant, so a query is empty exactly when its target
# sums to 0 (targets are non-negative), as torchmetrics decides.
_ANY_POSITIVE = float(np.nextafter(0.0, 1.0))

# The kinds whose documents scored <= 0 count as not retrieved.
_FILTERED = ("ap", "rr", "precision", "recall")


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch"


def _array(x: Any, name: str) -> np.ndarray:
    """``x`` as a numpy array; a torch tensor detached, and float16 / bfloat16 ones
    widened to float32 (what torchmetrics computes in; numpy has no bfloat16)."""
    if _is_torch(x):
        x = x.detach().cpu()
        if x.is_floating_point() and x.element_size() < 4:
            x = x.float()
    return as_array(x, name)


def _preds_target(preds: Any, target: Any, graded: bool) -> tuple[np.ndarray, np.ndarray]:
    """torchmetrics' checks: same shape, non-empty, float scores (read as float32),
    bool / int / float targets (binary unless ``graded``)."""
    p, t = _array(preds, "preds"), _array(target, "target")
    if p.shape != t.shape:
        raise RanklensInputError("`preds` and `target` must be of the same shape")
    if p.size == 0 or p.ndim == 0:
        raise RanklensInputError("`preds` and `target` must be non-empty and non-scalar tensors")
    if t.dtype.kind not in "biuf":
        raise RanklensInputError("`target` must be a tensor of booleans, integers or floats")
    if p.dtype.kind != "f":
        raise RanklensInputError("`preds` must be a tensor of floats")
    p = p.reshape(-1).astype(np.float32, copy=False)
    t = t.reshape(-1)
    if t.dtype == np.bool_:
        t = t.view(np.uint8)
    if not graded and (t.max() > 1 or t.min() < 0):
        raise RanklensInputError("`target` must contain `binary` values")
    if not graded and t.dtype.kind == "f" and not np.isin(t, (0.0, 1.0)).all():
        raise RanklensInputError(
            "ranklens: the binary retrieval metrics take targets 0 and 1 (torchmetrics also "
            "accepts fractions in [0, 1])"
        )
    if graded and t.min() < 0:
        raise RanklensInputError(
            "ranklens: nDCG takes non-negative targets (a negative label is read as unjudged)"
        )
    if t.dtype.kind == "f" and not np.isfinite(t).all():
        raise RanklensInputError("`target` must be finite")
    return p, t


def _check_top_k(top_k: Any) -> None:
    if top_k is not None and not (isinstance(top_k, int) and top_k > 0):
        raise RanklensInputError("`top_k` has to be a positive integer or None")
    if top_k is not None and top_k > 2**63 - 1:
        raise RanklensInputError(f"`top_k` must be at most 2**63 - 1, got {top_k}")


def _per_query(
    kind: str,
    p: np.ndarray,
    t: np.ndarray,
    idx: np.ndarray,
    top_k: int | None,
    adaptive_k: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Each query's value (float64, ascending index order) and whether it is empty
    in torchmetrics' sense (no positive target; for fall-out, no negative one)."""
    k = "" if top_k is None else f"@{top_k}"
    level = _ANY_POSITIVE if kind == "ndcg" else 1.0

    def native(labels: np.ndarray, metrics: list[str], ties: str = "first") -> np.ndarray:
        res = evaluate_flat(p, labels, idx, metrics, relevance_level=level, empty="zero", ties=ties)
        return np.asarray(res.values, dtype=np.float64)

    own = {
        "ndcg": [f"ndcg{k}"],
        "hit_rate": [f"hit_rate{k}"],
        "r_precision": ["r_precision"],
        # Fall-out is recall on the inverted labels: the non-relevant documents
        # in the top k over the non-relevant documents.
        "fall_out": [f"recall{k}"],
        # One native call for both label sets: label 2 marks a relevant document
        # scored > 0, so `(rel=2)` reads the labels with scores <= 0 zeroed and
        # the default level (1) the labels as given.
        "ap": [f"map(rel=2){k}", f"hits(rel=2){k}", "num_rel(rel=2)"],
        "rr": [f"mrr(rel=2){k}"],
        "precision": [f"P(rel=2){k}", "P(rel=2)"],
        "recall": [f"hits(rel=2){k}"],
    }[kind]
    if kind == "fall_out":
        labels = (1 - t).astype(np.int8)
    elif kind in _FILTERED:
        labels = t.astype(np.int8) + (p > 0) * t.astype(np.int8)
    else:
        labels = t
    base = native(labels, ["num_ret", "num_rel", *own], "expected" if kind == "ndcg" else "first")
    # An empty query's values (num_ret included) are all 0: n is read only
    # where r > 0.
    n, r = base[:, 0], base[:, 1]
    f = base[:, 2:]
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind in ("ndcg", "hit_rate", "r_precision", "fall_out"):
            v = f[:, 0]
        elif kind == "ap":
            # map@k divides the precisions' sum by R (of the kept labels);
            # torchmetrics by the relevant documents found in the top k.
            v = np.where(f[:, 1] > 0, f[:, 0] * f[:, 2] / f[:, 1], 0.0)
        elif kind == "rr":
            v = f[:, 0]
        elif kind == "precision":
            v = f[:, 0]
            if top_k is not None and adaptive_k:
                v = np.where(n < top_k, f[:, 1], v)
        else:  # recall
            v = np.where(r > 0, f[:, 0] / r, 0.0)
    empty = r == 0
    return np.where(empty, 0.0, v), empty


def _out(value: float, torch_input: bool) -> Any:
    """torchmetrics' float32 result: a torch tensor when an input was one."""
    if torch_input:
        import torch

        return torch.tensor(value, dtype=torch.float32)
    return np.float32(value)


def _functional(kind: str, preds: Any, target: Any, top_k: Any, adaptive_k: bool = False) -> Any:
    _check_top_k(top_k)
    p, t = _preds_target(preds, target, graded=kind == "ndcg")
    idx = np.zeros(len(p), dtype=np.int64)
    v, _ = _per_query(kind, p, t, idx, top_k, adaptive_k)
    return _out(float(v[0]), _is_torch(preds) or _is_torch(target))


def retrieval_normalized_dcg(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """nDCG of one query (all cells), ties averaged; graded targets."""
    return _functional("ndcg", preds, target, top_k)


def retrieval_average_precision(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Average precision of one query (all cells); scores <= 0 not retrieved."""
    return _functional("ap", preds, target, top_k)


def retrieval_reciprocal_rank(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Reciprocal rank of the first relevant document; scores <= 0 not retrieved."""
    return _functional("rr", preds, target, top_k)


def retrieval_precision(
    preds: Any, target: Any, top_k: int | None = None, adaptive_k: bool = False
) -> Any:
    """Relevant documents in the top k over k; scores <= 0 not retrieved."""
    if not isinstance(adaptive_k, bool):
        raise RanklensInputError("`adaptive_k` has to be a boolean")
    return _functional("precision", preds, target, top_k, adaptive_k)


def retrieval_recall(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Relevant documents in the top k over the relevant; scores <= 0 not retrieved."""
    return _functional("recall", preds, target, top_k)


def retrieval_hit_rate(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """1 if a relevant document is in the top k, else 0."""
    return _functional("hit_rate", preds, target, top_k)


def retrieval_r_precision(preds: Any, target: Any) -> Any:
    """Relevant documents in the top R over R (R: the relevant documents)."""
    return _functional("r_precision", preds, target, None)


def retrieval_fall_out(preds: Any, target: Any, top_k: int | None = None) -> Any:
    """Non-relevant documents in the top k over the non-relevant documents."""
    return _functional("fall_out", preds, target, top_k)


_ACTIONS = ("error", "skip", "neg", "pos")


class _RetrievalMetric:
    """torchmetrics' ``RetrievalMetric``: accumulate ``(preds, target, indexes)``,
    group by ``indexes`` and aggregate the per-query values in ``compute()``."""

    _kind = ""
    _default_action = "neg"

    def __init__(
        self,
        empty_target_action: str | None = None,
        ignore_index: int | None = None,
        top_k: int | None = None,
        adaptive_k: bool = False,
        aggregation: str | Callable[..., Any] = "mean",
    ) -> None:
        action = self._default_action if empty_target_action is None else empty_target_action
        if action not in _ACTIONS:
            raise RanklensInputError(
                f"Argument `empty_target_action` received a wrong value `{action}`."
            )
        if ignore_index is not None and not isinstance(ignore_index, int):
            raise RanklensInputError("Argument `ignore_index` must be an integer or None.")
        if not (aggregation in ("mean", "median", "min", "max") or callable(aggregation)):
            raise RanklensInputError(
                "Argument `aggregation` must be one of `mean`, `median`, `min`, `max` or a "
                f"custom callable function which takes tensor of values, but got {aggregation}."
            )
        _check_top_k(top_k)
        if not isinstance(adaptive_k, bool):
            raise RanklensInputError("`adaptive_k` has to be a boolean")
        self.empty_target_action = action
        self.ignore_index = ignore_index
        self.top_k = top_k
        self.adaptive_k = adaptive_k
        self.aggregation = aggregation
        self.reset()

    def reset(self) -> None:
        """Forget every update."""
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._torch = False

    def _batch(self, preds: Any, target: Any, indexes: Any) -> tuple[np.ndarray, ...]:
        if indexes is None:
            raise RanklensInputError("Argument `indexes` cannot be None")
        ix = _array(indexes, "indexes")
        t_raw = _array(target, "target")
        p_raw = _array(preds, "preds")
        if ix.shape != p_raw.shape or p_raw.shape != t_raw.shape:
            raise RanklensInputError("`indexes`, `preds` and `target` must be of the same shape")
        if ix.dtype.kind not in "iu":
            raise RanklensInputError("`indexes` must be a tensor of long integers")
        ix, p_raw, t_raw = ix.reshape(-1), p_raw.reshape(-1), t_raw.reshape(-1)
        if self.ignore_index is not None:
            keep = t_raw != self.ignore_index
            ix, p_raw, t_raw = ix[keep], p_raw[keep], t_raw[keep]
        if ix.size == 0:
            raise RanklensInputError(
                "`indexes`, `preds` and `target` must be non-empty and non-scalar tensors"
            )
        p, t = _preds_target(p_raw, t_raw, graded=self._kind == "ndcg")
        return p, t, ix.astype(np.int64, copy=False)

    def update(self, preds: Any, target: Any, indexes: Any) -> None:
        """Add a batch of cells: ``preds[c]`` scores cell ``c`` of query ``indexes[c]``."""
        self._parts.append(self._batch(preds, target, indexes))
        self._torch |= any(_is_torch(x) for x in (preds, target, indexes))

    def _value(self, parts: list[tuple[np.ndarray, ...]]) -> float | Any:
        if not parts:
            return 0.0
        p, t, ix = (np.concatenate(c) if len(parts) > 1 else c[0] for c in zip(*parts))
        v, empty = _per_query(self._kind, p, t, ix, self.top_k, self.adaptive_k)
        if empty.any():
            action = self.empty_target_action
            if action == "error":
                which = "negative" if self._kind == "fall_out" else "positive"
                raise RanklensInputError(
                    f"`compute` method was provided with a query with no {which} target."
                )
            if action == "skip":
                v = v[~empty]
            else:
                v = np.where(empty, 1.0 if action == "pos" else 0.0, v)
        if len(v) == 0:
            return 0.0
        v = v.astype(np.float32)
        agg = self.aggregation
        if agg == "mean":
            return float(v.mean(dtype=np.float64))
        if agg == "median":
            return float(np.sort(v)[(len(v) - 1) // 2])
        if agg == "min":
            return float(v.min())
        if agg == "max":
            return float(v.max())
        if self._torch:
            import torch

            return agg(torch.from_numpy(v), dim=None)
        return agg(v, dim=None)

    def compute(self) -> Any:
        """The aggregate over every query seen since the last ``reset()``."""
        return self._result(self._value(self._parts))

    def _result(self, value: Any) -> Any:
        if not isinstance(value, float):
            return value  # a custom aggregation's own result
        return _out(value, self._torch)

    def __call__(self, preds: Any, target: Any, indexes: Any) -> Any:
        """Update, and return the value of this batch alone (torchmetrics' ``forward``)."""
        part = self._batch(preds, target, indexes)
        self._parts.append(part)
        self._torch |= any(_is_torch(x) for x in (preds, target, indexes))
        return self._result(self._value([part]))

    forward = __call__


class _TopKMetric(_RetrievalMetric):
    """The constructor of the metrics that take ``top_k`` and no ``adaptive_k``."""

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, False, aggregation)


class RetrievalNormalizedDCG(_TopKMetric):
    """Mean nDCG over queries (``top_k``; ties averaged; graded targets)."""

    _kind = "ndcg"


class RetrievalMAP(_TopKMetric):
    """Mean average precision over queries (``top_k``)."""

    _kind = "ap"


class RetrievalMRR(_TopKMetric):
    """Mean reciprocal rank over queries (``top_k``)."""

    _kind = "rr"


class RetrievalPrecision(_RetrievalMetric):
    """Mean precision@k over queries (``top_k``, ``adaptive_k``)."""

    _kind = "precision"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        top_k: int | None = None,
        adaptive_k: bool = False,
        aggregation: str | Callable[..., Any] = "mean",
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, adaptive_k, aggregation)


class RetrievalRecall(_TopKMetric):
    """Mean recall@k over queries (``top_k``)."""

    _kind = "recall"


class RetrievalHitRate(_TopKMetric):
    """Mean hit rate@k over queries (``top_k``)."""

    _kind = "hit_rate"


class RetrievalRPrecision(_RetrievalMetric):
    """Mean R-precision over queries."""

    _kind = "r_precision"

    def __init__(
        self,
        empty_target_action: str = "neg",
        ignore_index: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
    ) -> None:
        super().__init__(empty_target_action, ignore_index, None, False, aggregation)


class RetrievalFallOut(_RetrievalMetric):
    """Mean fall-out@k over queries (``top_k``); empty: no negative target."""

    _kind = "fall_out"
    _default_action = "pos"

    def __init__(
        self,
        empty_target_action: str = "pos",
        ignore_index: int | None = None,
        top_k: int | None = None,
        aggregation: str | Callable[..., Any] = "mean",
    ) -> None:
        super().__init__(empty_target_action, ignore_index, top_k, False, aggregation)
