"""trec_eval's measures that ir_measures lacks, as ir_measures measures.

ir_measures 0.4 parses ``Rndcg``, ``11pt_avg``, ``relative_P``, ``gm_map``, ``binG``,
``utility``, ``Rprec_mult``, ``G``, ``gm_bpref``, ``ndcg_rel`` and
``num_nonrel_judged_ret`` in trec_eval's spelling but has no measure for them (its
``parse_trec_measure`` names them "not yet supported"); ``set_map``, ``set_F`` and
``set_relative_P`` it has (``SetAP``, ``SetF``, ``SetRelP``).  This module defines
the missing ones as :class:`ir_measures.measures.Measure` subclasses, so they
compose as any ir_measures measure does (parameters, ``@k``, ``parse_measure``,
``calc_aggregate``, PyTerrier's ``pt.Experiment``); the ranklens provider
(:mod:`ranklens.compat.ir_measures`) computes them, with trec_eval's definitions
(each its ranklens family's):

==========================  ========================  =================================
measure                     trec_eval                 ranklens
==========================  ========================  =================================
``Rndcg(rel=1)``            ``Rndcg``                 ``rndcg``
``IPrecAvg(rel=1)``         ``11pt_avg``              ``iprec_avg``
``RelP(rel=1)@k``           ``relative_P_k``          ``relative_precision@k``
``GMAP(rel=1)``             ``gm_map``                ``gm_map`` (geometric mean)
``GMBpref(rel=1)``          ``gm_bpref``              ``gm_bpref`` (geometric mean)
``binG(rel=1)``             ``binG``                  ``bin_g``
``G(gains=)``               ``G``                     ``g``
``nDCGRel(gains=)``         ``ndcg_rel``              ``ndcg_rel``
``Utility(a,b,c,d,rel=1)``  ``utility.a,b,c,d``       ``utility``
``RprecMult(mult=1,rel=1)`` ``Rprec_mult_x``          ``rprec_mult``
``NumNonRelJudgedRet``      ``num_nonrel_judged_ret`` ``num_nonrel_judged_ret`` (sum)
==========================  ========================  =================================

:func:`register` adds them to ``ir_measures.measures.registry`` (so
``ir_measures.parse_measure("RelP@10")`` finds them) under these names only, none
of which ir_measures uses; :func:`ranklens.compat.ir_measures.install` calls it.
The objects are importable without registering:
``from ranklens.compat.ir_measures_trec import GMAP``.

Rejected: patching ir_measures' ``parse_trec_measure`` table (its private mapping,
rebuilt on every call) -- the trec_eval spellings stay ranklens's
(``ranklens.evaluate(..., ["gm_map"])``).
"""

from __future__ import annotations

from typing import Any

from ir_measures import measures as _measures
from ir_measures.measures.base import Agg, SumAgg

from ranklens.metrics.geomean import geometric_mean

__all__ = [
    "GMAP",
    "MEASURES",
    "G",
    "GMBpref",
    "IPrecAvg",
    "NumNonRelJudgedRet",
    "RelP",
    "Rndcg",
    "RprecMult",
    "Utility",
    "binG",
    "nDCGRel",
    "register",
]

_P = _measures.ParamInfo
_REL = _P(dtype=int, default=1, desc="minimum relevance score to be relevant (inclusive)")
_CUTOFF = _P(dtype=int, required=False, desc="ranking cutoff threshold")
_GAINS = _P(dtype=dict, desc="custom gain mapping (int-to-float)")


class _GeoMeanAgg(Agg):
    """trec_eval's geometric mean: values floored at 1e-5 (ranklens's gm_*)."""

    def __init__(self) -> None:
        self.values: list[float] = []

    def add(self, value: float) -> None:
        self.values.append(value)

    def result(self) -> float:
        return geometric_mean(self.values)


def _measure(name: str, desc: str, params: dict[str, Any], agg: type[Agg] | None = None):
    attrs: dict[str, Any] = {
        "__name__": name,
        "NAME": name,
        "PRETTY_NAME": name,
        "SHORT_DESC": desc,
        "SUPPORTED_PARAMS": params,
        "__doc__": f"trec_eval's measure: {desc} (computed by the ranklens provider).",
    }
    if agg is not None:
        attrs["aggregator"] = lambda self: agg()
    return type(f"_{name}", (_measures.Measure,), attrs)()


Rndcg = _measure("Rndcg", "nDCG averaged at R levels (trec_eval Rndcg)", {"rel": _REL})
IPrecAvg = _measure(
    "IPrecAvg", "interpolated precision averaged at 11 recall points", {"rel": _REL}
)
RelP = _measure("RelP", "relevant in top k / min(k, R)", {"cutoff": _CUTOFF, "rel": _REL})
GMAP = _measure("GMAP", "AP, geometric mean over queries", {"rel": _REL}, _GeoMeanAgg)
GMBpref = _measure("GMBpref", "bpref, geometric mean over queries", {"rel": _REL}, _GeoMeanAgg)
binG = _measure("binG", "relevant / log2(2 + non-relevant above)", {"rel": _REL})
G = _measure("G", "normalised gain with custom gains", {"gains": _GAINS})
nDCGRel = _measure("nDCGRel", "nDCG averaged at the relevant documents", {"gains": _GAINS})
Utility = _measure(
    "Utility",
    "a rel_ret + b nonrel_ret + c rel_nonret + d nonrel_nonret",
    {
        "a": _P(dtype=(int, float), default=1.0, desc="gain of a relevant retrieved"),
        "b": _P(dtype=(int, float), default=-1.0, desc="gain of a non-relevant retrieved"),
        "c": _P(dtype=(int, float), default=0.0, desc="gain of a relevant not retrieved"),
        "d": _P(dtype=(int, float), default=0.0, desc="gain of a non-relevant not retrieved"),
        "rel": _REL,
    },
)
RprecMult = _measure(
    "RprecMult",
    "precision at rank mult * R",
    {"mult": _P(dtype=(int, float), default=1.0, desc="multiple of R"), "rel": _REL},
)
NumNonRelJudgedRet = _measure(
    "NumNonRelJudgedRet",
    "judged non-relevant retrieved (summed)",
    {"rel": _REL},
    SumAgg,
)

#: Every measure of this module.
MEASURES = [
    Rndcg,
    IPrecAvg,
    RelP,
    GMAP,
    GMBpref,
    binG,
    G,
    nDCGRel,
    Utility,
    RprecMult,
    NumNonRelJudgedRet,
]


def register() -> None:
    """Add :data:`MEASURES` to ``ir_measures.measures.registry`` (once; a name
    already there, registered by ir_measures itself, is left alone)."""
    for measure in MEASURES:
        if measure.NAME not in _measures.registry:
            _measures.register(measure)
