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
an empty ground truth or nothing retrieved (see ``empty``).  Ids follow the rule
of every door: a ``str``, an ``int`` or a numpy integer (an integer is its decimal
string: ``1`` and ``"1"`` are one id); ``bool``, ``float`` and other types, a
null and a ``str`` with a lone surrogate are input errors naming the row.
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
  orderings, ``"best"`` / ``"worst"``: higher / lower labels first; a retrieved
  list has no ties); ``judged_only=True`` drops retrieved
  ids not in the ground truth (or with a negative label) first, ranks closing
  up (trec_eval ``-J``); ``max_docs`` scores only the top ``max_docs`` retrieved
  (trec_eval ``-M``, after ``duplicates="first"`` has dropped repeats).
"""

from __future__ import annotations

from ranklens._score._frame import autorag_columns, score_frame
from ranklens._score._scorer import Scorer, expand_cutoffs, score, score_batch, score_labels

__all__ = [
    "Scorer",
    "autorag_columns",
    "expand_cutoffs",
    "score",
    "score_batch",
    "score_frame",
    "score_labels",
]
