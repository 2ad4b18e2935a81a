"""Judgment groups: preference judgments (``Prefs``, :func:`evaluate_prefs`) and
several users' qrels for one query (:func:`read_qrels_jg`, :func:`evaluate_jg`),
trec_eval 10.0's ``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg``.

Why a room of its own: a preference file is not a qrels (a document has a level
per judgment group and sub-group, and the measures count document pairs), so it
does not go through :class:`~ranklens.Qrels` and the metric registry; the 14
``prefs_*`` measures are computed together per query by one kernel
(``src/core/metrics/prefs.rs``, reference ``ranklens.metrics.prefs``).  The
qrels_jg measures (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``) are ordinary
metrics averaged over a query's judgment groups, so :func:`evaluate_jg` runs
:func:`ranklens.evaluate` once per group.
"""

from __future__ import annotations

from ranklens._prefs._jg import evaluate_jg, read_qrels_jg
from ranklens._prefs._prefs import PREFS_MEASURES, JudgmentResults, Prefs, evaluate_prefs

__all__ = [
    "PREFS_MEASURES",
    "JudgmentResults",
    "Prefs",
    "evaluate_jg",
    "evaluate_prefs",
    "read_qrels_jg",
]
