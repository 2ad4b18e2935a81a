"""Metric names: one parser for every accepted spelling.

A metric is identified by a :class:`Metric` value (family, cutoff ``k``, optional
per-metric relevance level).  Users may write it in ranklens's canonical form
(``ndcg@10``, ``precision(rel=2)@5``), in ranx's (``precision@5``, ``mrr@10``),
in trec_eval's (``P_5``, ``P.5``, ``ndcg_cut_10``, ``recip_rank``, ``Rprec``) or
in ir_measures' (``nDCG@10``, ``P(rel=2)@5``, ``R@100``, ``RR@10``, ``AP``).
Several cutoffs may be given at once: ``ndcg@5,10,20`` or ``P.5,10``.

Why a frozen dataclass and not strings: the two backends and the Results object
all key on the same normalised value, so ``res["P_5"]`` and ``res["precision@5"]``
are the same entry, and a typo fails here, before any work, with the closest
valid names in the message.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ranklens._trec_spellings_gains import gain_key  # gains and beyond
from ranklens.errors import UnknownMetricError

__all__ = ["FAMILIES", "Metric", "parse_metric", "parse_metrics"]


@dataclass(frozen=True)
class _Family:
    name: str
    cutoff: str  # "none" (no @k), "optional", "required"
    binary: bool  # uses the relevance level (so accepts rel=)
    aggregate: str  # "mean", "sum" (trec_eval's counting measures) or "gmean" (gm_*)
    summary: str
    # Named numeric parameters the family takes, with their defaults.
    params: dict[str, float] = field(default_factory=dict)


FAMILIES: dict[str, _Family] = {
    f.name: f
    for f in [
        _Family("precision", "optional", True, "mean", "relevant in top k / k"),
        _Family("recall", "optional", True, "mean", "relevant in top k / relevant"),
        _Family("f1", "optional", True, "mean", "harmonic mean of precision@k and recall@k"),
        _Family("hits", "optional", True, "mean", "number of relevant in top k"),
        _Family("hit_rate", "optional", True, "mean", "1 if any relevant in top k"),
        _Family("mrr", "optional", True, "mean", "1 / rank of first relevant (within k)"),
        _Family("map", "optional", True, "mean", "average precision (trec map / map_cut)"),
        _Family("ndcg", "optional", False, "mean", "nDCG, gain = label, log2 discount"),
        _Family("ndcg_burges", "optional", False, "mean", "nDCG with gain 2^label - 1"),
        _Family("dcg", "optional", False, "mean", "DCG, gain = label, log2 discount"),
        _Family("r_precision", "none", True, "mean", "precision at rank R (R = relevant)"),
        _Family("bpref", "none", True, "mean", "binary preference (Buckley & Voorhees)"),
        _Family("num_ret", "optional", False, "sum", "number of retrieved documents"),
        _Family("num_rel", "none", True, "sum", "number of relevant documents"),
        _Family("num_rel_ret", "optional", True, "sum", "number of relevant retrieved"),
        # trec_eval part A
        _Family("set_f", "none", True, "mean", "trec set_F: (x+1)PR/(xP+R)", {"beta": 1.0}),
        _Family("set_map", "none", True, "mean", "set precision x set recall (trec set_map)"),
        _Family("relative_precision", "optional", True, "mean", "relevant in top k / min(k, R)"),
        _Family(
            "utility",
            "none",
            True,
            "mean",
            "trec utility: a*rel_ret + b*nonrel_ret + c*rel_nonret + d*nonrel_nonret",
            {"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0, "num_docs": 0.0},
        ),
        _Family("rprec_mult", "none", True, "mean", "precision at rank mult*R", {"mult": 1.0}),
        _Family("num_nonrel_judged_ret", "optional", True, "sum", "judged non-relevant retrieved"),
        _Family("num_q", "none", False, "sum", "number of queries (1 per query)"),
        _Family(
            "iprec_at_recall",
            "none",
            True,
            "mean",
            "interpolated precision at a recall level",
            {"recall": 0.0, "version": 10.0},
        ),
        _Family(
            "iprec_avg",
            "none",
            True,
            "mean",
            "interpolated precision averaged over recall points (trec 11pt_avg)",
            {"lo": 0.0, "hi": 1.0, "step": 0.1, "version": 10.0},
        ),
        _Family("inf_ap", "none", True, "mean", "inferred AP (Yilmaz & Aslam)"),
        _Family("gm_map", "none", True, "gmean", "AP, geometric mean over queries"),
        _Family("gm_bpref", "none", True, "gmean", "bpref, geometric mean over queries"),
        _Family("unjudged", "optional", False, "mean", "unjudged in top k / k (trec unj)"),
        # gains and beyond
        _Family("bin_g", "none", True, "mean", "trec binG: rel docs / log2(2 + nonrel before)"),
        _Family("g", "none", False, "mean", "trec G: normalized gain (custom gains)"),
        _Family("ndcg_rel", "none", False, "mean", "trec ndcg_rel: nDCG averaged at rel docs"),
        _Family("rndcg", "none", True, "mean", "trec Rndcg: nDCG averaged at R levels"),
        _Family("rbp", "optional", False, "mean", "rank-biased precision (trec)", {"p": 0.9}),
        _Family("rbp_resid", "optional", False, "mean", "rbp residual (trec)", {"p": 0.9}),
        _Family("err", "optional", False, "mean", "expected reciprocal rank", {"gmax": 0.0}),
        _Family("judged", "optional", False, "mean", "judged in top k / min(k, retrieved)"),
        _Family("auc", "optional", True, "mean", "ROC AUC of rel vs judged non-rel"),
        _Family("first_rel_rank", "optional", True, "mean", "rank of the first relevant"),
        _Family("fallout", "optional", True, "mean", "judged non-rel in top k / non-rel"),
        _Family("idcg", "optional", False, "mean", "ideal DCG, gain = label, log2 discount"),
    ]
}

# Aliases, matched case-insensitively.  Value: canonical family.
_ALIASES: dict[str, str] = {
    # canonical and ranx
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
    "hits": "hits",
    "hit_rate": "hit_rate",
    "hitrate": "hit_rate",
    "mrr": "mrr",
    "map": "map",
    "ndcg": "ndcg",
    "ndcg_burges": "ndcg_burges",
    "dcg": "dcg",
    "r_precision": "r_precision",
    "r-precision": "r_precision",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    # trec_eval
    "p": "precision",
    "success": "hit_rate",
    "recip_rank": "mrr",
    "rprec": "r_precision",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    # ir_measures
    "r": "recall",
    "rr": "mrr",
    "ap": "map",
    "numret": "num_ret",
    "numrel": "num_rel",
    "numrelret": "num_rel_ret",
    # trec_eval part A (trec_eval, then ir_measures spellings)
    "set_f": "set_f",
    "set_map": "set_map",
    "relative_precision": "relative_precision",
    "relative_p": "relative_precision",
    "set_relative_p": "relative_precision",
    "utility": "utility",
    "rprec_mult": "rprec_mult",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "num_q": "num_q",
    "iprec_at_recall": "iprec_at_recall",
    "iprec_avg": "iprec_avg",
    "inf_ap": "inf_ap",
    "infap": "inf_ap",
    "gm_map": "gm_map",
    "gm_ap": "gm_map",
    "gm_bpref": "gm_bpref",
    "unjudged": "unjudged",
    "unj": "unjudged",
    "setf": "set_f",
    "setap": "set_map",
    "setrelp": "relative_precision",
    "iprec": "iprec_at_recall",
    "numq": "num_q",
    # gains and beyond (canonical, trec_eval, ir_measures)
    "bin_g": "bin_g",
    "bing": "bin_g",
    "g": "g",
    "ndcg_rel": "ndcg_rel",
    "rndcg": "rndcg",
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "err": "err",
    "judged": "judged",
    "auc": "auc",
    "first_rel_rank": "first_rel_rank",
    "fallout": "fallout",
    "fall_out": "fallout",
    # signals
    "idcg": "idcg",
    "is_hit": "hit_rate",
}

# trec_eval families whose cutoff is mandatory in trec_eval spelling.
_TREC_CUT_REQUIRED = {"ndcg_cut", "map_cut", "success"}
_TREC_CUT_REQUIRED |= {"relative_p", "unj"}  # trec_eval part A

_NAME_RE = re.compile(
    r"""^\s*
    (?P<base>[A-Za-z][A-Za-z0-9_\-]*?)      # family or alias
    (?:\((?P<params>[^()]*)\))?             # (rel=2)
    (?:(?P<sep>@|_|\.)(?P<ks>[0-9][0-9,\s]*))?  # @10 | _10 | .10 | @5,10,20
    \s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Metric:
    """One metric: a family, an optional cutoff, relevance level and parameters.

    ``rel`` overrides ``evaluate(relevance_level=...)`` for this metric only
    (ir_measures' ``P(rel=2)@5``).  ``params`` holds the family's other named
    parameters as sorted ``(key, value)`` pairs (only those that differ from the
    family's defaults).  ``name`` is the canonical spelling, the key used in
    every result.
    """

    family: str
    k: int | None = None
    rel: float | None = None
    params: tuple[tuple[str, float], ...] = ()

    @property
    def name(self) -> str:
        s = self.family
        inner = [f"rel={_fmt_num(self.rel)}"] if self.rel is not None else []
        inner += [f"{key}={_fmt_num(v)}" for key, v in self.params]
        if inner:
            s += f"({','.join(inner)})"
        if self.k is not None:
            s += f"@{self.k}"
        return s

    def param(self, key: str) -> float:
        """The value of a named parameter (the family's default when not given)."""
        for k, v in self.params:
            if k == key:
                return v
        return FAMILIES[self.family].params[key]

    @property
    def aggregate(self) -> str:
        """``"mean"``, ``"sum"`` (num_ret, num_rel, num_rel_ret, ..., as trec_eval) or
        ``"gmean"`` (gm_map, gm_bpref: exp(mean(ln(max(x, 1e-5)))), as trec_eval)."""
        return FAMILIES[self.family].aggregate

    def __str__(self) -> str:
        return self.name


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _all_spellings() -> list[str]:
    out = sorted(FAMILIES)
    out += ["P@k", "P_k", "P.k", "ndcg_cut_k", "map_cut_k", "recip_rank", "Rprec", "success_k"]
    out += ["nDCG@k", "R@k", "RR", "RR@k", "AP", "AP@k", "Success@k", "P(rel=2)@k"]
    return out


def _unknown(text: str, why: str) -> UnknownMetricError:
    candidates = sorted(set(_ALIASES) | set(FAMILIES))
    base = re.split(r"[@(._]", text.strip(), maxsplit=1)[0].lower()
    close = difflib.get_close_matches(base, candidates, n=5, cutoff=0.5)
    close += difflib.get_close_matches(text.strip().lower(), candidates, n=5, cutoff=0.5)
    close = list(dict.fromkeys(close))
    hint = f"; closest valid names: {', '.join(close)}" if close else ""
    return UnknownMetricError(
        f"unknown metric {text!r}: {why}{hint} (valid forms: {', '.join(_all_spellings())})"
    )


def _parse_params(text: str, params: str) -> tuple[float | None, tuple[tuple[str, float], ...]]:
    """``rel=2,p=0.8`` -> (2.0, (("p", 0.8),))."""
    rel: float | None = None
    named: dict[str, float] = {}
    for part in params.split(","):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise _unknown(text, f"parameters are key=value, got {part!r}")
        try:
            number = float(value)
        except ValueError:
            raise _unknown(text, f"{key} must be a number, got {value.strip()!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _unknown(text, f"{key} must be finite")
        if key.lower() == "rel":
            rel = number
        else:
            named[key] = number
    return rel, tuple(sorted(named.items()))


def parse_metrics(names: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """Parse one name or many into :class:`Metric` values, expanding cutoff lists.

    Order is kept and duplicates are dropped (first occurrence wins).
    """
    if isinstance(names, (str, Metric)):
        names = [names]
    out: list[Metric] = []
    for n in names:
        if isinstance(n, Metric):
            out.append(_validate(n, n.name))
        elif isinstance(n, str):
            out.extend(_parse_one(n))
        else:
            raise UnknownMetricError(f"metric names must be strings, got {type(n).__name__}")
    if not out:
        raise UnknownMetricError("the metric list is empty")
    return list(dict.fromkeys(out))


def parse_metric(name: str | Metric) -> Metric:
    """Parse exactly one metric (a cutoff list is an error here)."""
    ms = parse_metrics([name])
    if len(ms) != 1:
        raise UnknownMetricError(f"{name!r} names {len(ms)} metrics; expected one")
    return ms[0]


def _parse_one(text: str) -> list[Metric]:
    real_valued = _parse_real_valued(text)  # trec_eval part A
    if real_valued is not None:
        return real_valued
    pairs = _parse_pairs(text)  # gains and beyond
    if pairs is not None:
        return pairs
    m = _NAME_RE.match(text)
    if not m:
        raise _unknown(text, "not a metric name")
    base = m.group("base")
    ks_text = m.group("ks")
    key = base.lower()
    if key not in _ALIASES:
        raise _unknown(text, "unknown family")
    family = _ALIASES[key]
    rel: float | None = None
    params: tuple[tuple[str, float], ...] = ()
    if m.group("params") is not None:
        rel, params = _parse_params(text, m.group("params"))
    ks: list[int | None]
    if ks_text is None:
        if key in _TREC_CUT_REQUIRED:
            raise _unknown(text, f"{base} needs a cutoff, e.g. {base}_10")
        ks = [None]
    else:
        ks = []
        for piece in ks_text.split(","):
            piece = piece.strip()
            if not piece:
                continue
            k = int(piece)
            if k <= 0:
                raise _unknown(text, f"cutoff must be a positive integer, got {k}")
            ks.append(k)
        if not ks:
            raise _unknown(text, "empty cutoff list")
    return [_validate(Metric(family, k, rel, params), text) for k in ks]


# trec_eval part A
def _parse_real_valued(text: str) -> list[Metric] | None:
    """``iprec_at_recall_0.10``, ``Rprec_mult.0.2,0.5``, ``IPrec@0.1``, ``set_F.0.5``,
    ``utility.2,-1,0,0``, ``11pt_avg..25,.5,.75``: see :mod:`ranklens._trec_spellings_a`."""
    from ranklens._trec_spellings_a import SpellingError, match_param_spelling

    try:
        hit = match_param_spelling(text)
    except SpellingError as e:
        raise _unknown(text, str(e)) from None
    if hit is None:
        return None
    family, inner, param_sets = hit
    rel, params = _parse_params(text, inner) if inner is not None else (None, ())
    return [
        _validate(Metric(family, None, rel, tuple(sorted({**dict(params), **ps}.items()))), text)
        for ps in param_sets
    ]


# gains and beyond
def _parse_pairs(text: str) -> list[Metric] | None:
    """trec_eval ``ndcg.1=3,2=9`` / ``ndcg_1=3,2=9`` / ``rbp.p=0.8``: see
    :mod:`ranklens._trec_spellings_gains`."""
    from ranklens._trec_spellings_gains import PairsError, match_pairs_spelling

    try:
        hit = match_pairs_spelling(text, _ALIASES)
    except PairsError as e:
        raise _unknown(text, str(e)) from None
    if hit is None:
        return None
    family, params = hit
    return [_validate(Metric(family, None, None, tuple(sorted(params.items()))), text)]


def _validate(metric: Metric, text: str) -> Metric:
    fam = FAMILIES.get(metric.family)
    if fam is None:
        raise _unknown(text, "unknown family")
    if metric.k is not None:
        if fam.cutoff == "none":
            raise _unknown(text, f"{fam.name} takes no cutoff")
        if isinstance(metric.k, bool) or not isinstance(metric.k, int) or metric.k <= 0:
            raise _unknown(text, f"cutoff must be a positive integer, got {metric.k!r}")
    elif fam.cutoff == "required":
        raise _unknown(text, f"{fam.name} needs a cutoff, e.g. {fam.name}@10")
    if metric.rel is not None:
        if not fam.binary:
            raise _unknown(text, f"{fam.name} uses graded gains and takes no rel= level")
        rel = float(metric.rel)
        if rel != rel or rel in (float("inf"), float("-inf")):
            raise _unknown(text, "rel must be finite")
        metric = Metric(metric.family, metric.k, rel, metric.params)
    params = {}
    for key, value in metric.params:
        gkey = gain_key(fam.name, key)  # gains and beyond
        if gkey is not None:
            params[gkey] = float(value)
            continue
        if key not in fam.params:
            takes = ", ".join(sorted(fam.params)) or "none"
            raise _unknown(text, f"{fam.name} takes no parameter {key!r} (it takes: {takes})")
        if float(value) != fam.params[key]:
            params[key] = float(value)
    return Metric(metric.family, metric.k, metric.rel, tuple(sorted(params.items())))
