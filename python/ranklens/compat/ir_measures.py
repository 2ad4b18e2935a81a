"""An ``ir_measures`` provider computed by ranklens (so PyTerrier runs on it too).

``ir_measures`` is the field's common measure interface; PyTerrier's ``pt.Experiment``
computes every measure through its default pipeline.  :func:`install` puts
:class:`RanklensProvider` first in that pipeline, so ``ir_measures.calc_aggregate``,
``ir_measures.iter_calc`` and PyTerrier use ranklens with no other change; measures
ranklens cannot express fall through to the next provider::

    import ir_measures
    from ir_measures import AP, P, nDCG

    from ranklens.compat import ir_measures as rl_ir_measures

    rl_ir_measures.install()
    ir_measures.calc_aggregate([nDCG @ 10, P(rel=2) @ 5, AP], qrels, run)

The provider is also declared under the ``ir_measures.provider`` entry point group (name
``ranklens``) for pipelines that discover providers (ir_measures 0.4 itself reads no
entry point: there, :func:`install` is what changes the default pipeline), and can be
used on its own: ``RanklensProvider().calc_aggregate(measures, qrels, run)``.

Inputs are ir_measures': dicts of dicts, iterables of ``Qrel`` / ``ScoredDoc``, or pandas
frames with ``query_id``, ``doc_id`` and ``relevance`` / ``score`` columns (what PyTerrier
hands over).  A frame is read by its columns (``Qrels.from_pandas`` /
``Run.from_pandas``), not converted row by row into dicts as ir_measures' providers do.
Every input is read once (a generator such as ``ir_measures.read_trec_qrels(path)`` is
empty the second time).  A run that lists a document twice for a query is an error
(:class:`~ranklens.errors.RanklensInputError`), in every form, as in
:func:`ranklens.evaluate`; ir_measures' conversion keeps the last score.  Qrels with no
query give no values, as ir_measures' providers do.  ``calc_aggregate`` feeds each
measure's own aggregator the values ``iter_calc`` yields, in the same order, so the
aggregates are the base class's, bit for bit.  Speed against ir_measures' default
pipeline, on frames and on dicts: ``benches/bench_ir_measures.py`` (figures in
BENCHMARKS.md).

Supported measures, with ir_measures' parameter semantics (``cutoff`` is the ``@k``,
``rel`` the minimum label counted as relevant, ``judged_only`` drops unjudged documents
first, ranks closing up, as trec_eval ``-J``):

* ``P@k``, ``R@k``, ``AP`` / ``AP@k``, ``RR``, ``Rprec``, ``Success@k``, ``SetP``,
  ``SetP(relative=True)``, ``SetAP``, ``SetF(beta=)``, ``IPrec@x``, each with ``rel=``
  and ``judged_only=``; ``SetR``, ``Bpref``, ``infAP``, ``NumRel`` with ``rel=``;
  ``NumRet`` (``rel=`` makes it ``NumRelRet``), ``NumQ``;
* ``RR@k`` (``judged_only=`` too), ``Judged`` / ``Judged@k``;
* ``nDCG`` / ``nDCG@k`` with ``dcg='log2'`` (gain = label; ``gains={label: gain}``
  replaces the gain of the listed labels, labels being non-negative integers) and
  ``judged_only=``; ``nDCG(dcg='exp-log2')`` / ``@k`` (gain ``2**label - 1``, with
  ``judged_only=``);
* ``ERR`` / ``ERR@k`` (gdeval's: grades above 4 count as 4, ``R(g) = (2**g - 1) /
  16``; without a cutoff, the whole ranking: gdeval's value at a cutoff past it);
* the intent-aware and novelty measures of ir_measures' pyndeval provider (NIST
  ndeval's definitions): ``alpha_nDCG@k``, ``alpha_DCG@k`` (``alpha=``), ``ERR_IA@k``,
  ``nERR_IA@k``, ``P_IA@k``, ``AP_IA`` (each with ``judged_only=``), ``NRBP``,
  ``nNRBP`` (``alpha=``, ``beta=``), ``StRecall@k``, all with ``rel=``.  As in that
  provider, a qrels record's ``iteration`` field is its subtopic (``"0"`` when the
  qrels have none: one subtopic a query).  Without a cutoff (pyndeval needs one) the
  whole ranking is scored: the measure at k = the ranking's length, the ideal ranking
  cut there too;
* the C/W/L measures of ir_measures' cwl_eval provider (:mod:`ranklens.metrics.cwl`):
  ``RBP(rel=, p=)`` (binary at ``rel``; ``@k`` scores the top k), ``SDCG@k``,
  ``BPM(T=)@k``, ``NERR8@k``, ``NERR9@k``, ``NERR10(p=)``, ``NERR11(T=)``,
  ``INST(T=)``, ``INSQ(T=)``, each graded by ``min_rel`` / ``max_rel``; the value is
  cwl_eval's expected utility per document (over its 1000-rank horizon), as
  ir_measures reports it;
* ``Compat(p=, normalize=)`` (:mod:`ranklens.metrics.compat`) and ``Accuracy(rel=)@k``
  (:mod:`ranklens.metrics.accuracy`; as ir_measures, no value for a query without a
  relevant retrieved document, and no ``DEFAULT`` for the queries missing from the
  run).

* trec_eval's measures ir_measures lacks, as the ir_measures measures of
  :mod:`ranklens.compat.ir_measures_trec` (``Rndcg``, ``IPrecAvg`` = ``11pt_avg``,
  ``RelP@k``, ``GMAP``, ``GMBpref``, ``binG``, ``G``, ``nDCGRel``, ``Utility``,
  ``RprecMult``, ``NumNonRelJudgedRet``), which :func:`install` registers.

Left to the next provider, each for a reason of its reference:

* ``RBP`` without ``rel``: ir_measures names no gain scale for graded RBP (cwl_eval's
  provider refuses it; no provider computes it).  ranklens's own graded RBP is
  trec_eval's ``rbp``.
* ``RBP(rel=0)``, ``Accuracy(rel=0)`` (any ``rel <= 0``): cwl_eval raises a negative
  label to 0 and then counts it relevant; the accuracy provider counts a document
  missing from the qrels as label 0, so relevant.  ranklens counts neither relevant
  (a negative label or a missing document is never relevant).
* The C/W/L measures with ``min_rel >= max_rel``: cwl_eval's gain scale divides by
  ``max_rel - min_rel`` (ir_measures asserts against it).
* ``nDCG(dcg='exp-log2', gains=...)``: no provider defines it (gdeval and ranx take
  no gains; whether a gain replaces the label before or after ``2**g - 1`` is
  unsaid).
* ``nDCG(gains=...)`` keyed by a negative or non-integer label: pytrec_eval would
  give a negative label a gain; a negative label is an unjudged document (gain 0) in
  every ranklens measure, as in trec_eval.

Queries: a query in both the qrels and the run is scored (an empty ranking too: ``NumQ``
1, ``NumRel`` R, as pytrec_eval); every other qrels query gets the measure's
``DEFAULT`` (0) from ir_measures' ``Evaluator.iter_calc``, as for every provider.
Queries only in the run are ignored.  ``rel`` must be >= 0: ranklens never counts a
negative label as relevant (trec_eval's convention), so a negative ``rel`` is left to
the next provider.

Where the numbers differ from ir_measures' default providers (each a defect or an
inconsistency of those providers; the tests pin every one):

* **Ties.** Documents with equal scores are ordered by document id descending for every
  measure (trec_eval's rule, which pytrec_eval and gdeval follow).  ir_measures' msmarco
  provider (``RR@k``) and judged provider (``Judged``) order them by document id
  *ascending*, so in ir_measures ``RR@1000`` and ``RR`` disagree on one tied run.
* **Scores in float32.** pytrec_eval rounds scores to 32-bit floats before ranking, so
  scores that differ only beyond float32 precision tie there; ranklens ranks the
  float64 scores as given.
* **IPrec recall levels.** ir_measures passes ``IPrec@x`` to pytrec_eval as
  ``iprec_at_recall_%.2f``, so ``IPrec@0.109`` is computed at recall 0.11; ranklens uses
  ``x`` as given.  The level becomes a number of relevant documents by trec_eval 9.0.8's
  rule (pytrec_eval's; see :mod:`ranklens.metrics.iprec`).
* **rel=0.** pytrec_eval refuses a relevance level of 0 (``TypeError``), so
  ir_measures fails on ``P(rel=0)@5``, ``AP(rel=0)``, ...; ranklens counts every label
  >= 0 as relevant, ir_measures' definition (its msmarco provider agrees on
  ``RR(rel=0)@k``).
* **A qrels query whose labels are all negative** is scored (nothing in it is
  relevant); ir_measures' pytrec_eval provider hangs on ``nDCG`` for it (pytrec_eval
  misbehaves on such queries, see :mod:`ranklens.compat.pytrec_eval`).
* **Judged on an empty ranking** is 0; ir_measures' judged provider divides by zero.
* **gdeval (``ERR@k``, ``nDCG(dcg='exp-log2')@k``)** prints 5 decimals, so ir_measures'
  values are rounded there; ranklens's are not.  gdeval also stops on a query id that
  is not an integer or a label above 4; ranklens takes any id and counts grades above 4
  as 4 for ``ERR``.
* **Shared pytrec_eval runs.** ir_measures' pytrec_eval provider adds ``NumRet``,
  ``NumQ`` and ``nDCG`` (without ``gains``) to the first pytrec_eval run it has set up
  for the other measures, in set order: asked together with ``P(judged_only=True)@5``,
  ``NumRet`` may count judged documents only, and next to ``nDCG(gains=...)`` a plain
  ``nDCG`` may take those gains.  ranklens scores each measure on its own terms.
* **pyndeval (the intent-aware measures)** orders equal scores by document id
  ascending (ranklens: descending, as everywhere), refuses cutoffs above 20, gives
  ``nNRBP`` NaN (0/0) for a query with no relevant subtopic (ranklens: 0), and with
  ``judged_only`` keeps documents whose labels are all negative (ranklens drops them,
  as trec_eval's ``-J``).  Otherwise the values are pyndeval's (tested per query).
* **nDCG(dcg='exp-log2') without a cutoff.** ir_measures' only provider for it is ranx's,
  which fails under pandas >= 3 (its qrels frame's query ids are no longer ``object``
  dtype); ranklens computes it (the tests hold it to gdeval at a cutoff beyond every
  ranking and judgment list).
* **Ties in the accuracy, compat and cwl_eval providers.**  The accuracy and
  cwl_eval providers keep equal scores in input order, the compat provider orders
  them by document id ascending; ranklens: descending, as everywhere.
* **Accuracy without a non-relevant retrieved document** (top k all relevant):
  the accuracy provider divides by zero (``ZeroDivisionError``); ranklens gives 0,
  no pair to compare, as ``auc``.
* **Compat.**  The compat provider orders the ideal ranking's documents of one
  label by their run score, scoring an unretrieved document 0.0, so it puts an
  unretrieved document above a retrieved one with a negative score (ranklens:
  retrieved documents first, in rank order, whatever their scores); and it divides
  0 by 0 on an empty ranking of a query with no label above 0 (ranklens: 0).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import ir_measures
import numpy as np
from ir_measures import measures as _m
from ir_measures.providers.base import NOT_PROVIDED, Choices
from ir_measures.providers.base import Any as _AnyValue

from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate as _evaluate
from ranklens._names import Metric, parse_metrics
from ranklens.compat import ir_measures_trec as _trec
from ranklens.errors import RanklensInputError

__all__ = ["RanklensEvaluator", "RanklensProvider", "install"]

# gdeval's ERR: grades are capped at 4 ($MAX_JUDGMENT in gdeval.pl), R(g) = (2^g-1)/2^4.
_GDEVAL_MAX_GRADE = 4.0


def _given(measure: Any, key: str) -> Any:
    value = measure[key]
    return None if value is NOT_PROVIDED else value


def _rel(measure: Any) -> float:
    return float(measure["rel"])


def _cutoff(measure: Any) -> int | None:
    k = _given(measure, "cutoff")
    return None if k is None else int(k)


def _ndcg(measure: Any) -> Metric:
    k = _cutoff(measure)
    if measure["dcg"] == "exp-log2":
        return Metric("ndcg_burges", k)
    gains = _given(measure, "gains") or {}
    params = tuple(sorted((f"gain{int(label)}", float(g)) for label, g in gains.items()))
    return Metric("ndcg", k, None, params)


def _num_ret(measure: Any) -> Metric:
    rel = _given(measure, "rel")
    return Metric("num_ret") if rel is None else Metric("num_rel_ret", None, float(rel))


def _set_p(measure: Any) -> Metric:
    family = "relative_precision" if measure["relative"] else "precision"
    return Metric(family, None, _rel(measure))


# ir_measures measure NAME -> the ranklens metric for one of its instances.
_TO_METRIC = {
    "P": lambda m: Metric("precision", _cutoff(m), _rel(m)),
    "R": lambda m: Metric("recall", _cutoff(m), _rel(m)),
    "AP": lambda m: Metric("map", _cutoff(m), _rel(m)),
    "RR": lambda m: Metric("mrr", _cutoff(m), _rel(m)),
    "Rprec": lambda m: Metric("r_precision", None, _rel(m)),
    "Success": lambda m: Metric("hit_rate", _cutoff(m), _rel(m)),
    "SetP": _set_p,
    "SetR": lambda m: Metric("recall", None, _rel(m)),
    "SetAP": lambda m: Metric("set_map", None, _rel(m)),
    "SetF": lambda m: Metric("set_f", None, _rel(m), (("beta", float(m["beta"])),)),
    # version=9: trec_eval 9.0.8's recall-level rule, as pytrec_eval (ir_measures' IPrec).
    "IPrec": lambda m: Metric(
        "iprec_at_recall", None, _rel(m), (("recall", float(m["recall"])), ("version", 9.0))
    ),
    "Bpref": lambda m: Metric("bpref", None, _rel(m)),
    "infAP": lambda m: Metric("inf_ap", None, _rel(m)),
    "NumRel": lambda m: Metric("num_rel", None, _rel(m)),
    "NumRet": _num_ret,
    "NumQ": lambda m: Metric("num_q"),
    "Judged": lambda m: Metric("judged", _cutoff(m)),
    "nDCG": _ndcg,
    "ERR": lambda m: Metric("err", _cutoff(m), None, (("gmax", _GDEVAL_MAX_GRADE),)),
    # diversity (subtopic qrels: the records' iteration field)
    "alpha_nDCG": lambda m: Metric("alpha_ndcg", _cutoff(m), _rel(m), _alpha(m)),
    "alpha_DCG": lambda m: Metric("alpha_dcg", _cutoff(m), _rel(m), _alpha(m)),
    "ERR_IA": lambda m: Metric("err_ia", _cutoff(m), _rel(m)),
    "nERR_IA": lambda m: Metric("nerr_ia", _cutoff(m), _rel(m)),
    "NRBP": lambda m: Metric("nrbp", None, _rel(m), _alpha(m) + _beta(m)),
    "nNRBP": lambda m: Metric("nnrbp", None, _rel(m), _alpha(m) + _beta(m)),
    "AP_IA": lambda m: Metric("ap_ia", None, _rel(m)),
    "P_IA": lambda m: Metric("p_ia", _cutoff(m), _rel(m)),
    "StRecall": lambda m: Metric("st_recall", _cutoff(m), _rel(m)),
    "Accuracy": lambda m: Metric("accuracy", _cutoff(m), _rel(m)),
    "Compat": lambda m: Metric(
        "compat", None, None, (("p", float(m["p"])), ("normalize", float(bool(m["normalize"]))))
    ),
}


def _cwl(family: str, *names: str):
    """An ir_measures C/W/L measure (graded: ``min_rel``, ``max_rel``) -> ranklens."""

    def to_metric(m: Any) -> Metric:
        params = [(n, float(m[n])) for n in names]
        params += [("min_rel", float(m["min_rel"])), ("max_rel", float(m["max_rel"]))]
        k = _cutoff(m) if "cutoff" in m.SUPPORTED_PARAMS else None
        return Metric(family, k, None, tuple(params))

    return to_metric


_TO_METRIC.update(
    {
        # binary at rel, as ir_measures' cwl_eval provider (RBP without rel: none)
        "RBP": lambda m: Metric("rbp_cwl", _cutoff(m), _rel(m), (("p", float(m["p"])),)),
        "SDCG": _cwl("sdcg"),
        "BPM": _cwl("bpm", "T"),
        "NERR8": _cwl("nerr8"),
        "NERR9": _cwl("nerr9"),
        "NERR10": _cwl("nerr10", "p"),
        "NERR11": _cwl("nerr11", "T"),
        "INST": _cwl("inst", "T"),
        "INSQ": _cwl("insq", "T"),
    }
)


def _gain_params(measure: Any) -> tuple[tuple[str, float], ...]:
    gains = _given(measure, "gains") or {}
    return tuple(sorted((f"gain{int(label)}", float(g)) for label, g in gains.items()))


def _num(measure: Any, *names: str) -> tuple[tuple[str, float], ...]:
    return tuple((n, float(measure[n])) for n in names)


# trec_eval's measures ir_measures lacks (ranklens.compat.ir_measures_trec).
_TO_METRIC.update(
    {
        "Rndcg": lambda m: Metric("rndcg", None, _rel(m)),
        # version=9: trec_eval 9.0.8's recall-level rule, as IPrec (pytrec_eval's)
        "IPrecAvg": lambda m: Metric("iprec_avg", None, _rel(m), (("version", 9.0),)),
        "RelP": lambda m: Metric("relative_precision", _cutoff(m), _rel(m)),
        "GMAP": lambda m: Metric("gm_map", None, _rel(m)),
        "GMBpref": lambda m: Metric("gm_bpref", None, _rel(m)),
        "binG": lambda m: Metric("bin_g", None, _rel(m)),
        "G": lambda m: Metric("g", None, None, _gain_params(m)),
        "nDCGRel": lambda m: Metric("ndcg_rel", None, None, _gain_params(m)),
        "Utility": lambda m: Metric("utility", None, _rel(m), _num(m, "a", "b", "c", "d")),
        "RprecMult": lambda m: Metric("rprec_mult", None, _rel(m), _num(m, "mult")),
        "NumNonRelJudgedRet": lambda m: Metric("num_nonrel_judged_ret", None, _rel(m)),
    }
)

#: Measures ir_measures reports only for some queries (no DEFAULT for the others):
#: Accuracy, for the queries with a relevant retrieved document.
_SOMETIMES = {"Accuracy"}


def _guard(metric: Metric) -> Metric:
    """The companion of an ``accuracy`` metric: its relevant retrieved documents (a
    query without one gets no Accuracy value, as in ir_measures' accuracy provider)."""
    return parse_metrics([Metric("num_rel_ret", metric.k, metric.rel)])[0]


#: The measures scored on subtopic judgments.
_DIVERSE = {"alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP", "AP_IA", "P_IA"}
_DIVERSE |= {"StRecall"}


def _alpha(measure: Any) -> tuple[tuple[str, float], ...]:
    return (("alpha", float(measure["alpha"])),)


def _beta(measure: Any) -> tuple[tuple[str, float], ...]:
    return (("beta", float(measure["beta"])),)


_ANY = _AnyValue()
_REQUIRED = _AnyValue(required=True)


@functools.lru_cache(maxsize=1024)
def _metric_of(measure: Any) -> Metric | None:
    """:meth:`RanklensProvider._metric`, remembered by measure (ir_measures hashes
    and compares a measure by its ``repr``, parameters included)."""
    to_metric = _TO_METRIC.get(measure.NAME)
    if to_metric is None:
        return None
    rel = measure.params.get("rel", NOT_PROVIDED)
    if rel is not NOT_PROVIDED and not rel >= 0:
        return None
    level = _given(measure, "rel") if measure.NAME in ("Accuracy", "RBP") else 1
    if level is None or not float(level) > 0:
        # At rel <= 0, ir_measures' accuracy provider counts a document missing
        # from the qrels as relevant (label 0), its cwl_eval provider a negative
        # label (raised to 0); ranklens counts neither relevant.
        return None
    max_rel = measure.params.get("max_rel", NOT_PROVIDED)
    if max_rel is not NOT_PROVIDED and not float(measure["min_rel"]) < float(max_rel):
        return None  # cwl_eval's gain scale needs min_rel < max_rel
    gains = measure.params.get("gains")
    if isinstance(gains, dict):
        for label, gain in gains.items():
            if isinstance(label, bool) or not isinstance(label, int) or label < 0:
                return None
            if not isinstance(gain, (int, float)) or not math.isfinite(gain):
                return None
    try:
        return parse_metrics([to_metric(measure)])[0]
    except (TypeError, ValueError):
        return None


class RanklensProvider(ir_measures.providers.Provider):
    """ir_measures' provider interface over :func:`ranklens.evaluate` (see the module)."""

    NAME = "ranklens"
    SUPPORTED_MEASURES: ClassVar[list[Any]] = [
        _m._P(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._R(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._AP(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._RR(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._Rprec(rel=_ANY, judged_only=_ANY),
        _m._Success(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._SetP(rel=_ANY, relative=_ANY, judged_only=_ANY),
        _m._SetR(rel=_ANY),
        _m._SetAP(rel=_ANY, judged_only=_ANY),
        _m._SetF(rel=_ANY, beta=_ANY, judged_only=_ANY),
        _m._IPrec(recall=_ANY, rel=_ANY, judged_only=_ANY),
        _m._Bpref(rel=_ANY),
        _m._infAP(rel=_ANY),
        _m._NumRel(rel=_ANY),
        _m._NumRet(rel=_ANY),
        _m._NumQ(),
        _m._Judged(cutoff=_ANY),
        _m._nDCG(cutoff=_ANY, dcg=Choices("log2"), gains=_ANY, judged_only=_ANY),
        _m._nDCG(
            cutoff=_ANY, dcg=Choices("exp-log2"), gains=Choices(NOT_PROVIDED), judged_only=_ANY
        ),
        _m._ERR(cutoff=_ANY),
        _m._alpha_nDCG(cutoff=_ANY, alpha=_ANY, rel=_ANY, judged_only=_ANY),
        _m._alpha_DCG(cutoff=_ANY, alpha=_ANY, rel=_ANY, judged_only=_ANY),
        _m._ERR_IA(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._nERR_IA(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._NRBP(alpha=_ANY, beta=_ANY, rel=_ANY),
        _m._nNRBP(alpha=_ANY, beta=_ANY, rel=_ANY),
        _m._AP_IA(rel=_ANY, judged_only=_ANY),
        _m._P_IA(cutoff=_ANY, rel=_ANY, judged_only=_ANY),
        _m._StRecall(cutoff=_ANY, rel=_ANY),
        _m._Accuracy(cutoff=_ANY, rel=_ANY),
        _m._Compat(p=_ANY, normalize=_ANY),
        _m._RBP(cutoff=_ANY, rel=_REQUIRED, p=_ANY),
        _m._SDCG(cutoff=_REQUIRED, dcg=Choices("log2"), min_rel=_ANY, max_rel=_REQUIRED),
        _m._BPM(cutoff=_REQUIRED, T=_ANY, min_rel=_ANY, max_rel=_REQUIRED),
        _m._NERR8(cutoff=_REQUIRED, min_rel=_ANY, max_rel=_REQUIRED),
        _m._NERR9(cutoff=_REQUIRED, min_rel=_ANY, max_rel=_REQUIRED),
        _m._NERR10(p=_ANY, min_rel=_ANY, max_rel=_REQUIRED),
        _m._NERR11(T=_ANY, min_rel=_ANY, max_rel=_REQUIRED),
        _m._INST(T=_ANY, min_rel=_ANY, max_rel=_REQUIRED),
        _m._INSQ(T=_ANY, min_rel=_ANY, max_rel=_REQUIRED),
        _trec.Rndcg(rel=_ANY),
        _trec.IPrecAvg(rel=_ANY),
        _trec.RelP(cutoff=_ANY, rel=_ANY),
        _trec.GMAP(rel=_ANY),
        _trec.GMBpref(rel=_ANY),
        _trec.binG(rel=_ANY),
        _trec.G(gains=_ANY),
        _trec.nDCGRel(gains=_ANY),
        _trec.Utility(a=_ANY, b=_ANY, c=_ANY, d=_ANY, rel=_ANY),
        _trec.RprecMult(mult=_ANY, rel=_ANY),
        _trec.NumNonRelJudgedRet(rel=_ANY),
    ]

    def supports(self, measure: Any) -> bool:
        if not super().supports(measure):
            return False
        return self._metric(measure) is not None

    @staticmethod
    def _metric(measure: Any) -> Metric | None:
        """The ranklens metric for ``measure``, or None where the parameters are outside
        what ranklens expresses (a cutoff below 1, a gain label that is not a
        non-negative integer, a non-finite number).  Remembered by measure: a call
        for one query parsed each measure three times, most of its time."""
        return _metric_of(measure)

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> RanklensEvaluator:
        measures = list(measures)
        for measure in measures:
            if not self.supports(measure):
                raise ValueError(f"unsupported measure {measure}")
        judgments: Qrels | dict[str, dict[str, int]] | None = _qrels_frame(qrels)
        records: list[Any] | None = None
        if judgments is None and isinstance(qrels, dict):
            judgments = qrels
        elif judgments is None:
            # Read once, whatever the form: a generator (``read_trec_qrels``) is
            # empty the second time.  The last record of a document wins, as in
            # ir_measures' own conversion.
            records = list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter())
            judgments = {}
            for r in records:
                judgments.setdefault(r.query_id, {})[r.doc_id] = r.relevance
        subtopics = None
        if any(m.NAME in _DIVERSE for m in measures):
            # The iteration field is the subtopic, as in ir_measures' pyndeval provider.
            rows = records
            if rows is None:  # a dict or a frame: read again as records
                rows = ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter()
            quads = [
                (r.query_id, getattr(r, "iteration", "0"), r.doc_id, r.relevance) for r in rows
            ]
            # no qrels at all: no values, as ir_measures' providers give
            subtopics = Qrels.from_subtopics(quads) if quads else None
        return RanklensEvaluator(measures, judgments, subtopics)


class RanklensEvaluator(ir_measures.providers.Evaluator):
    """Scores runs against one set of qrels: one ranklens pass per group of measures."""

    def __init__(
        self,
        measures: list[Any],
        qrels: Qrels | dict[str, dict[str, int]],
        subtopics: Qrels | None = None,
    ) -> None:
        """``qrels``: ir_measures' dict of dicts, or ranklens ``Qrels`` (read from a
        pandas frame by :class:`RanklensProvider`)."""
        super().__init__(measures, set(qrels.query_ids if isinstance(qrels, Qrels) else qrels))
        # Groups of one evaluate() call: (judged_only, counts negative labels as judged).
        # Judged counts every qrels entry as judged, negative labels included
        # (ir_measures' definition); ranklens's judged does not count negative labels,
        # so Judged is scored on qrels with negative labels raised to 0 (its value only
        # depends on which documents are in the qrels).  The intent-aware measures are
        # scored on the subtopic qrels (key "subtopics").
        groups: dict[tuple[bool, bool | str], dict[Metric, list[Any]]] = {}
        for measure in measures:
            metric = RanklensProvider._metric(measure)
            if metric is None:  # RanklensProvider._evaluator checked every measure
                raise ValueError(f"unsupported measure {measure}")
            judged_only = bool(measure.params.get("judged_only", False))
            kind: bool | str = measure.NAME == "Judged"
            if measure.NAME in _DIVERSE:
                kind = "subtopics"
            group = groups.setdefault((judged_only, kind), {})
            group.setdefault(metric, []).append(measure)
            if measure.NAME in _SOMETIMES:
                group.setdefault(_guard(metric), [])
        self._groups = groups
        self._qrels: dict[bool | str, Qrels] = {}
        if subtopics is not None:
            self._qrels["subtopics"] = subtopics
        if any(kind is False for _, kind in groups):
            self._qrels[False] = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
        if any(kind is True for _, kind in groups):
            self._qrels[True] = _clamped(qrels)

    def iter_calc(self, run: Any) -> Iterator[ir_measures.Metric]:
        """Per-query values: the scored queries, then ``DEFAULT`` for every other qrels
        query, in the order of ``Evaluator.iter_calc``."""
        # Same output as the base class, which hashes every yielded measure (its repr)
        # to find what is missing: that bookkeeping took longer than ranklens's scoring.
        scored: set[str] = set()
        yield from self._scored(run, scored)
        missing = self.qrel_qids - scored
        if missing:
            defaulted = {m for m in self.measures if m.NAME not in _SOMETIMES}
            pairs = itertools.product(defaulted, missing)
            for measure, qid in sorted(pairs, key=lambda x: (str(x[0]), x[1])):
                yield ir_measures.Metric(query_id=qid, measure=measure, value=measure.DEFAULT)

    def _iter_calc(self, run: Any) -> Iterator[ir_measures.Metric]:
        return self._scored(run, set())

    def calc_aggregate(self, run: Any) -> dict[Any, float | int]:
        """Aggregated values: the base class's (each measure's own aggregator fed
        the same values in the same order, so the same bits), without building a
        ``Metric`` per query and measure."""
        aggregators = {m: m.aggregator() for m in self.measures}
        scored: set[str] = set()
        for measure, _, values in self._columns(run, scored):
            add = aggregators[measure].add
            for value in values:
                add(value)
        missing = self.qrel_qids - scored
        if missing:
            for measure in {m for m in self.measures if m.NAME not in _SOMETIMES}:
                add = aggregators[measure].add
                for _ in missing:
                    add(measure.DEFAULT)
        return {m: agg.result() for m, agg in aggregators.items()}

    def _scored(self, run: Any, scored: set[str]) -> Iterator[ir_measures.Metric]:
        """Values of the queries in both the run and the qrels; their ids go to ``scored``."""
        for measure, qids, values in self._columns(run, scored):
            for qid, value in zip(qids, values):
                yield ir_measures.Metric(query_id=qid, measure=measure, value=value)

    def _columns(self, run: Any, scored: set[str]) -> Iterator[tuple[Any, list[str], list[float]]]:
        """(measure, query ids, values) of the queries in both the run and the
        qrels, in ``iter_calc``'s order; their ids go to ``scored``."""
        # Queries only in the run are ignored; an empty ranking is scored (NumQ 1, NumRel
        # R, as pytrec_eval); qrels queries missing from the run get the measure's DEFAULT.
        if not self.qrel_qids:  # no qrels: no values, as ir_measures' providers give
            return
        ranking: Run | dict[str, dict[str, float]] | None = _run_frame(run)
        if ranking is None:
            run_dict = _run_dict(run)
            ranking = {q: docs for q, docs in run_dict.items() if q in self.qrel_qids}
            if not ranking:
                return
        for (judged_only, kind), by_metric in self._groups.items():
            res = _evaluate(
                self._qrels[kind],
                ranking,
                list(by_metric),
                judged_only=judged_only,
            )
            missing = set(res.missing_queries)
            qids = [q for q in res.query_ids if q not in missing]
            rows = [i for i, q in enumerate(res.query_ids) if q not in missing]
            scored.update(qids)
            columns = {metric: res.values[rows, j].tolist() for j, metric in enumerate(res.metrics)}
            for metric, column in columns.items():
                for measure in by_metric[metric]:
                    if measure.NAME in _SOMETIMES:
                        keep = [v > 0 for v in columns[_guard(metric)]]
                        yield (
                            measure,
                            [q for q, k in zip(qids, keep) if k],
                            [v for v, k in zip(column, keep) if k],
                        )
                    else:
                        yield measure, qids, column


# ir_measures' pandas layouts (ir_measures.util's Qrel and ScoredDoc fields).
_QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
_RUN_COLUMNS = ("query_id", "doc_id", "score")


def _pandas_frame(obj: Any, columns: tuple[str, ...]) -> bool:
    """Whether ``obj`` is a pandas DataFrame (ir_measures' test: ``itertuples``)
    with ``columns``."""
    return hasattr(obj, "itertuples") and all(c in obj.columns for c in columns)


def _qrels_frame(qrels: Any) -> Qrels | None:
    """A pandas qrels frame read by columns (PyTerrier's input), or None: not such
    a frame, or one ranklens refuses (a document listed twice for a query, which
    ir_measures' own conversion resolves by keeping the last row; a null), left to
    ir_measures' row-by-row conversion, as before."""
    if not _pandas_frame(qrels, _QRELS_COLUMNS):
        return None
    try:
        return Qrels.from_pandas(
            qrels, query_col="query_id", doc_col="doc_id", label_col="relevance"
        )
    except RanklensInputError:
        return None


def _run_frame(run: Any) -> Run | None:
    """A pandas run frame read by columns, or None (see :func:`_qrels_frame`)."""
    if not _pandas_frame(run, _RUN_COLUMNS):
        return None
    try:
        return Run.from_pandas(run, query_col="query_id", doc_col="doc_id", score_col="score")
    except RanklensInputError:
        return None


def _run_dict(run: Any) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: score}}`` from ir_measures' run forms, read once.  A
    document listed twice for a query is an error, as in :func:`ranklens.evaluate`
    (ir_measures' conversion keeps the last score silently, so the value would
    depend on the row order)."""
    if isinstance(run, dict):
        return run
    out: dict[str, dict[str, float]] = {}
    for r in ir_measures.util.RunConverter(run).as_namedtuple_iter():
        docs = out.get(r.query_id)
        if docs is None:
            docs = out[r.query_id] = {}
        elif r.doc_id in docs:
            raise RanklensInputError(
                f"query {r.query_id!r}: document {r.doc_id!r} is listed twice in the run"
            )
        docs[r.doc_id] = r.score
    return out


def _clamped(qrels: Qrels | dict[str, dict[str, int]]) -> Qrels:
    """The qrels with each label ``max(int(label), 0)`` (for ``Judged``, which counts
    negative labels as judged)."""
    if isinstance(qrels, Qrels):
        return qrels._with_labels(np.maximum(np.trunc(qrels.values), 0.0) + 0.0)
    return Qrels({q: {d: max(int(v), 0) for d, v in docs.items()} for q, docs in qrels.items()})


def install() -> RanklensProvider:
    """Put the ranklens provider first in ir_measures' default pipeline.

    After this, ``ir_measures.calc_aggregate``, ``ir_measures.iter_calc``,
    ``ir_measures.evaluator`` (and PyTerrier's ``pt.Experiment``) compute every measure
    ranklens supports with ranklens; the others go to the providers that follow.
    trec_eval's measures that ir_measures lacks are registered as ir_measures
    measures (:mod:`ranklens.compat.ir_measures_trec`, so
    ``ir_measures.parse_measure("RelP@10")`` finds them).  The provider is also
    registered as ``ir_measures.providers.registry["ranklens"]``.
    Calling it again changes nothing.  Returns the installed provider.
    """
    _trec.register()
    registry = ir_measures.providers.registry
    provider = registry.get(RanklensProvider.NAME)
    if not isinstance(provider, RanklensProvider):
        provider = RanklensProvider()
        registry[RanklensProvider.NAME] = provider
    pipeline = ir_measures.DefaultPipeline.providers
    pipeline[:] = [p for p in pipeline if not isinstance(p, RanklensProvider)]
    pipeline.insert(0, provider)
    return provider
