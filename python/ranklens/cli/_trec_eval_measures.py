"""trec_eval 10.0's measure table (``measures.c`` order), its nicknames, and the
options a measure's slots depend on: which ranklens metric fills each printed row.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable, Union

from ranklens._names import Metric, parse_metric
from ranklens._prefs import PREFS_MEASURES

MAXLONG = sys.maxsize


class UsageError(Exception):
    """Bad command line: exit status 2."""


# ---------------------------------------------------------------------------
# The measure table (measures.c order)

# A slot's source: a ranklens Metric, ("11pt", [Metric per recall point], points),
# ("const", value), or ("relstring", length).
Source = Union[Metric, tuple]


@dataclass
class Slot:
    name: str
    source: Source


@dataclass(frozen=True)
class Meas:
    name: str
    init: str  # "empty", "s", "cut_long", "cut_double", "p_double", "p_pair"
    fmt: str  # "double", "long", "runid", "relstring"
    single: bool  # printed per query
    avg: str  # "mean", "sum", "gm", "num_q", "num_rel", "none"
    defaults: tuple = ()  # default cutoffs / params
    build: Callable[..., list] | None = None  # (measure, params, opts) -> slots
    rel: str = (
        "qrels"  # the -R formats it needs: "qrels", "prefs" (or qrels_prefs), "qrels_jg", "any"
    )


def _m(family: str, k: int | None = None, **params: float) -> Metric:
    return parse_metric(Metric(family, k, None, tuple(sorted(params.items()))))


def _single(family: str) -> Callable[..., list]:
    return lambda me, params, opts: [Slot(me.name, _m(family))]


def _cut_long(family: str) -> Callable[..., list]:
    return lambda me, cuts, opts: [Slot(f"{me.name}_{k}", _m(family, k)) for k in cuts]


def _cut_double(family: str, key: str) -> Callable[..., list]:
    return lambda me, cuts, opts: [
        Slot(f"{me.name}_{x:3.2f}", _m(family, **{key: x})) for x in cuts
    ]


def _p_name(me: Meas, printable: str | None) -> str:
    return me.name if printable is None else f"{me.name}_{printable}"


def _build_utility(me: Meas, p: tuple, opts: Opts) -> list:
    values, printable = p
    if len(values) != 4:
        raise UsageError(f"measure 'utility' needs exactly 4 parameters, got {len(values)}")
    a, b, c, d = values
    extra = {"num_docs": float(opts.num_docs)} if opts.num_docs else {}
    return [Slot(_p_name(me, printable), _m("utility", a=a, b=b, c=c, d=d, **extra))]


def _build_set_f(me: Meas, p: tuple, opts: Opts) -> list:
    values, printable = p
    return [Slot(_p_name(me, printable), _m("set_f", beta=values[0]))]


def _build_11pt(me: Meas, p: tuple, opts: Opts) -> list:
    values, printable = p
    metrics = [_m("iprec_at_recall", recall=x) for x in values]
    extra = [_m("num_rel"), _m("num_rel_ret"), _m("iprec_at_recall", recall=0.0)]
    return [Slot(_p_name(me, printable), ("11pt", metrics, list(values), extra))]


def _build_relstring(me: Meas, p: tuple, opts: Opts) -> list:
    values, printable = p
    return [Slot(_p_name(me, printable), ("relstring", int(values[0])))]


def _gains_builder(family: str) -> Callable[..., list]:
    def build(me: Meas, p: tuple, opts: Opts) -> list:
        pairs, printable = p
        params: dict[str, float] = {}
        for key, value in pairs:
            body = key[1:] if key[:1] in "+-" else key
            if body and body.isdigit() and body.isascii():
                label = int(key)
                if label < 0:
                    raise UsageError(
                        f"measure '{me.name}': gains of negative labels are not supported"
                    )
                params.setdefault(f"gain{label}", value)  # the first listing wins
            elif key == "p" and family in ("rbp", "rbp_resid"):
                params["p"] = value  # the last listing wins
            # trec_eval ignores any other key
        return [Slot(_p_name(me, printable), _m(family, **params))]

    return build


_L5 = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_R11 = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_MULT = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # Rprec_mult's multiples of R


def _prefs_slot(me: Meas, params: tuple, opts: Opts) -> list:
    return [Slot(me.name, ("prefs", me.name))]


MEASURES: list[Meas] = [
    Meas("runid", "empty", "runid", False, "none", rel="any"),
    Meas(
        "num_q",
        "s",
        "long",
        False,
        "num_q",
        build=lambda me, p, o: [Slot("num_q", ("const", 1.0))],
        rel="any",
    ),
    Meas("num_ret", "s", "long", True, "sum", build=_single("num_ret")),
    Meas("num_rel", "s", "long", True, "num_rel", build=_single("num_rel")),
    Meas("num_rel_ret", "s", "long", True, "sum", build=_single("num_rel_ret")),
    Meas("map", "s", "double", True, "mean", build=_single("map")),
    Meas("gm_map", "s", "double", False, "gm", build=_single("gm_map")),
    Meas("Rprec", "s", "double", True, "mean", build=_single("r_precision")),
    Meas("bpref", "s", "double", True, "mean", build=_single("bpref")),
    Meas("recip_rank", "s", "double", True, "mean", build=_single("mrr")),
    Meas(
        "iprec_at_recall",
        "cut_double",
        "double",
        True,
        "mean",
        _R11,
        _cut_double("iprec_at_recall", "recall"),
    ),
    Meas("P", "cut_long", "double", True, "mean", _L5, _cut_long("precision")),
    Meas("relstring", "p_double", "relstring", True, "none", (10.0,), _build_relstring),
    Meas("recall", "cut_long", "double", True, "mean", _L5, _cut_long("recall")),
    Meas("infAP", "s", "double", True, "mean", build=_single("inf_ap")),
    Meas("gm_bpref", "s", "double", False, "gm", build=_single("gm_bpref")),
    Meas(
        "Rprec_mult",
        "cut_double",
        "double",
        True,
        "mean",
        _MULT,
        _cut_double("rprec_mult", "mult"),
    ),
    Meas("utility", "p_double", "double", True, "mean", (1.0, -1.0, 0.0, 0.0), _build_utility),
    Meas("11pt_avg", "p_double", "double", True, "mean", _R11, _build_11pt),
    Meas("binG", "s", "double", True, "mean", build=_single("bin_g")),
    Meas("G", "p_pair", "double", True, "mean", build=_gains_builder("g")),
    Meas("dcg", "p_pair", "double", True, "mean", build=_gains_builder("dcg")),
    Meas("ideal_dcg", "p_pair", "double", True, "mean", build=_gains_builder("idcg")),
    Meas("ndcg", "p_pair", "double", True, "mean", build=_gains_builder("ndcg")),
    Meas("ndcg_rel", "p_pair", "double", True, "mean", build=_gains_builder("ndcg_rel")),
    Meas("Rndcg", "p_pair", "double", True, "mean", build=_gains_builder("rndcg")),
    Meas("ndcg_cut", "cut_long", "double", True, "mean", _L5, _cut_long("ndcg")),
    Meas("map_cut", "cut_long", "double", True, "mean", _L5, _cut_long("map")),
    Meas("relative_P", "cut_long", "double", True, "mean", _L5, _cut_long("relative_precision")),
    Meas("success", "cut_long", "double", True, "mean", (1, 5, 10), _cut_long("hit_rate")),
    Meas("set_P", "s", "double", True, "mean", build=_single("precision")),
    Meas("set_relative_P", "s", "double", True, "mean", build=_single("relative_precision")),
    Meas("set_recall", "s", "double", True, "mean", build=_single("recall")),
    Meas("set_map", "s", "double", True, "mean", build=_single("set_map")),
    Meas("set_F", "p_double", "double", True, "mean", (1.0,), _build_set_f),
    Meas("num_nonrel_judged_ret", "s", "long", True, "sum", build=_single("num_nonrel_judged_ret")),
    *[
        Meas(
            n,
            "s",
            "long" if n.startswith("prefs_num") else "double",
            True,
            "sum" if n.startswith("prefs_num") else "mean",
            build=_prefs_slot,
            rel="prefs",
        )
        for n in PREFS_MEASURES
    ],
    Meas("map_avgjg", "s", "double", True, "mean", build=_single("map"), rel="qrels_jg"),
    Meas(
        "P_avgjg", "cut_long", "double", True, "mean", _L5, _cut_long("precision"), rel="qrels_jg"
    ),
    Meas(
        "Rprec_mult_avgjg",
        "cut_double",
        "double",
        True,
        "mean",
        _MULT,
        _cut_double("rprec_mult", "mult"),
        rel="qrels_jg",
    ),
    Meas("yaap", "s", "double", True, "mean", build=_single("yaap")),
    Meas("rbp", "p_pair", "double", True, "mean", build=_gains_builder("rbp")),
    Meas("rbp_resid", "p_pair", "double", True, "mean", build=_gains_builder("rbp_resid")),
    Meas("unj", "cut_long", "double", True, "mean", (5, 10, 20), _cut_long("unjudged")),
]
BY_NAME = {me.name: me for me in MEASURES}

NICKNAMES: dict[str, list[str]] = {
    "official": [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
        "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P",
    ],
    "set": [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
        "set_recall", "set_relative_P", "set_map", "set_F",
    ],
    "all_trec": [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map",
        "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "relstring",
        "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
        "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
        "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G",
        "set_P", "set_recall", "set_relative_P", "set_map", "set_F",
        "num_nonrel_judged_ret",
    ],
    "all_prefs": [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
        "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    ],
    "prefs": [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    ],
    "qrels_jg": ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"],
}  # fmt: skip


# ---------------------------------------------------------------------------
# Options


@dataclass
class Opts:
    query: bool = False
    complete: bool = False
    summary: bool = True
    judged_only: bool = False
    level: int = 1
    num_docs: int = 0
    max_docs: int = MAXLONG
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    debug_query: str | None = None
    help: bool = False
