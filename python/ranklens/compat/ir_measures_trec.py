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

:func:`register` also puts :func:`parse_trec_measure` in the place of
``ir_measures.parse_trec_measure`` (and of ``ir_measures.util``'s, which its
nicknames such as ``all_trec`` call back): it reads the trec_eval spellings of
the table above as trec_eval does, with trec_eval's default parameters
(``relative_P``: P's cutoffs 5 ... 1000; ``Rprec_mult``: 0.2 ... 2.0;
``utility``: 1,-1,0,0), ``name_p`` / ``name.p1,p2`` for parameters and
``name.label=gain,...`` for ``G`` and ``ndcg_rel``, and hands every other name
to ir_measures' own.  PyTerrier reads a string metric of ``pt.Experiment`` with
``ir_measures.parse_trec_measure``, looked up at the call, so ``"Rndcg"`` or
``"relative_P_10"`` work there.

Rejected: editing ir_measures' table of trec_eval names (a local of
``parse_trec_measure``, rebuilt on every call: there is nothing to edit).
"""

from __future__ import annotations

import re
from typing import Any

import ir_measures
import ir_measures.util
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
    "parse_trec_measure",
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


# trec_eval's default parameters (m_relative_P.c, m_Rprec_mult.c).
_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# trec_eval name -> (measure, its parameter, trec_eval's default values of it);
# "gains" reads label=gain pairs, "abcd" utility's four coefficients.
_TREC_NAMES: dict[str, tuple[Any, str | None, tuple[Any, ...]]] = {
    "Rndcg": (Rndcg, None, ()),
    "11pt_avg": (IPrecAvg, None, ()),
    "relative_P": (RelP, "cutoff", _CUTOFFS),
    "gm_map": (GMAP, None, ()),
    "gm_bpref": (GMBpref, None, ()),
    "binG": (binG, None, ()),
    "G": (G, "gains", ()),
    "ndcg_rel": (nDCGRel, "gains", ()),
    "utility": (Utility, "abcd", ()),
    "Rprec_mult": (RprecMult, "mult", _MULTS),
    "num_nonrel_judged_ret": (NumNonRelJudgedRet, None, ()),
}
_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_PAIR = rf"{_NUMBER}={_NUMBER}"
_WITH_PARAMS = re.compile(
    rf"({'|'.join(map(re.escape, _TREC_NAMES))})[._]"
    rf"((?:{_PAIR}|{_NUMBER})(?:,(?:{_PAIR}|{_NUMBER}))*)"
)


def _ours(measure: str) -> list[Any] | None:
    """The measures a trec_eval name of this module's table stands for, or
    ``None`` when it is not one of them; ``ValueError`` for bad parameters."""
    if measure in _TREC_NAMES:
        m, param, defaults = _TREC_NAMES[measure]
        return [m(**{param: v}) for v in defaults] if defaults else [m]
    found = _WITH_PARAMS.fullmatch(measure)
    if found is None:
        return None
    name, text = found.groups()
    m, param, _ = _TREC_NAMES[name]
    values = text.split(",")
    if param == "gains":
        if not all("=" in v for v in values):
            raise ValueError(f"{measure}: {name} takes label=gain pairs")
        pairs = [v.split("=") for v in values]
        return [m(gains={int(float(label)): float(gain) for label, gain in pairs})]
    if param is None or any("=" in v for v in values):
        raise ValueError(f"unknown argument for {measure}: {text}")
    if param == "abcd":
        if len(values) != 4:
            raise ValueError(f"{measure}: utility takes 4 coefficients, got {len(values)}")
        return [m(**{k: float(v) for k, v in zip("abcd", values)})]
    if param == "cutoff":
        return [m(cutoff=int(float(v))) for v in values]
    return [m(**{param: float(v)}) for v in values]


def _wrap(original: Any) -> Any:
    def parse_trec_measure(measure: str) -> list[Any]:
        """ir_measures' ``parse_trec_measure``, also reading trec_eval's
        measures that ir_measures lacks (:mod:`ranklens.compat.ir_measures_trec`)."""
        found = _ours(measure) if isinstance(measure, str) else None
        return original(measure) if found is None else found

    parse_trec_measure._ranklens_wraps = original  # type: ignore[attr-defined]
    return parse_trec_measure


def parse_trec_measure(measure: str) -> list[Any]:
    """A trec_eval measure name as ir_measures measures: this module's table
    first (``"Rndcg"``, ``"relative_P_5,10"``, ``"utility.2,-1,0,0"``,
    ``"G.1=1,2=3"``), else ir_measures' own ``parse_trec_measure``."""
    found = _ours(measure)
    if found is not None:
        return found
    current = ir_measures.util.parse_trec_measure
    return getattr(current, "_ranklens_wraps", current)(measure)


def register() -> None:
    """Add :data:`MEASURES` to ``ir_measures.measures.registry`` (once; a name
    already there, registered by ir_measures itself, is left alone), and
    ``ir_measures.parse_trec_measure`` reads their trec_eval names (once)."""
    for measure in MEASURES:
        if measure.NAME not in _measures.registry:
            _measures.register(measure)
    original = ir_measures.util.parse_trec_measure
    if not hasattr(original, "_ranklens_wraps"):
        wrapper = _wrap(original)
        ir_measures.util.parse_trec_measure = wrapper
        ir_measures.parse_trec_measure = wrapper
