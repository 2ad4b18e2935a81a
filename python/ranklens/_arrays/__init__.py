"""Arrays scored in place: score matrices, ranked id lists, ANN neighbours.

No ids, no hashing, no join: row ``i`` is query ``i`` (its id in
:class:`~ranklens.Results` is the string ``str(i)``), the columns are its
candidates.  Semantics (the same for every entry point here):

* **Candidates.**  Every cell is a judged candidate with its label: ``0`` is judged
  non-relevant; a negative label is trec_eval's "in the pool, unjudged" (never
  relevant, gain 0).  ``mask=`` (True: a candidate) or ``lengths=`` (row ``i``
  holds its first ``lengths[i]`` columns) leave cells out; left-out cells are never
  read, so they may hold NaN.  A mask is a bool array, or integers that are all 0
  or 1 (torch and numpy code often builds masks as ``int8``/``int64``); any
  other dtype (floats, whose NaN would read as True, strings, objects,
  datetimes, complex) and numpy masked arrays (whose own mask would be ignored)
  are refused naming the dtype, an integer other than 0/1 naming its cell.
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
  scores and NaN or infinite labels are errors naming the cell.  Scores are
  compared as float64: 64-bit integer scores (int64, uint64) of magnitude above
  2**53, where float64 no longer tells neighbouring integers apart (distinct
  scores would tie silently), are refused naming the first such cell; up to
  2**53 they rank exactly.
* **Ids** (:func:`evaluate_topk`, :func:`knn_recall`).  Integers; a negative id is
  padding.  An array of another dtype is refused naming its dtype; a list of
  lists is checked id by id (a float, bool or string id is an error naming its
  row and column; ``ids`` rows must be of one length, ``relevant`` id rows are
  padded for you).
"""

from __future__ import annotations

from ranklens._arrays._convert import as_array, matrix
from ranklens._arrays._scoring import evaluate_dense, evaluate_flat, evaluate_topk, knn_recall

__all__ = ["as_array", "evaluate_dense", "evaluate_flat", "evaluate_topk", "knn_recall", "matrix"]
