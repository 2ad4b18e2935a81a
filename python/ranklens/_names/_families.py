"""THE metric registry: every family ranklens computes, and every spelling of it.

A family's row says whether it takes a cutoff, whether it uses the relevance
level (and so accepts ``rel=``), how per-query values aggregate, a one-line
definition, and its named parameters with their defaults.  ``ALIASES`` maps
every accepted spelling (ranklens, ranx, trec_eval, ir_measures; lower case) to a
family.  A new metric starts here (see CONTRIBUTING.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ALIASES", "FAMILIES", "MAX_K", "TREC_CUT_REQUIRED", "Family"]


@dataclass(frozen=True)
class Family:
    name: str
    cutoff: str  # "none" (no @k), "optional", "required"
    binary: bool  # uses the relevance level (so accepts rel=)
    aggregate: str  # "mean", "sum" (trec_eval's counting measures) or "gmean" (gm_*)
    summary: str
    # Named numeric parameters the family takes, with their defaults.
    params: dict[str, float] = field(default_factory=dict)
    # Computed on subtopic judgments (the diversity metrics; ranklens.evaluate only).
    subtopics: bool = False


# The C/W/L families' gain range (max_rel <= min_rel: binary gains) and horizon.
_CWL = {"min_rel": 0.0, "max_rel": 0.0, "depth": 1000.0, "residual": 0.0}

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in [
        Family("precision", "optional", True, "mean", "relevant in top k / k"),
        Family("recall", "optional", True, "mean", "relevant in top k / relevant"),
        Family("f1", "optional", True, "mean", "harmonic mean of precision@k and recall@k"),
        Family("hits", "optional", True, "mean", "number of relevant in top k"),
        Family("hit_rate", "optional", True, "mean", "1 if any relevant in top k"),
        Family("mrr", "optional", True, "mean", "1 / rank of first relevant (within k)"),
        Family("map", "optional", True, "mean", "average precision (trec map / map_cut)"),
        Family("ndcg", "optional", False, "mean", "nDCG, gain = label, log2 discount"),
        Family("ndcg_burges", "optional", False, "mean", "nDCG with gain 2^label - 1"),
        Family("dcg", "optional", False, "mean", "DCG, gain = label, log2 discount"),
        Family("r_precision", "none", True, "mean", "precision at rank R (R = relevant)"),
        Family("bpref", "none", True, "mean", "binary preference (Buckley & Voorhees)"),
        Family("num_ret", "optional", False, "sum", "number of retrieved documents"),
        Family("num_rel", "none", True, "sum", "number of relevant documents"),
        Family("num_rel_ret", "optional", True, "sum", "number of relevant retrieved"),
        # trec_eval part A
        Family("set_f", "none", True, "mean", "trec set_F: (x+1)PR/(xP+R)", {"beta": 1.0}),
        Family("set_map", "none", True, "mean", "set precision x set recall (trec set_map)"),
        Family("relative_precision", "optional", True, "mean", "relevant in top k / min(k, R)"),
        Family(
            "utility",
            "none",
            True,
            "mean",
            "trec utility: a*rel_ret + b*nonrel_ret + c*rel_nonret + d*nonrel_nonret",
            {"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0, "num_docs": 0.0},
        ),
        Family("rprec_mult", "none", True, "mean", "precision at rank mult*R", {"mult": 1.0}),
        Family("num_nonrel_judged_ret", "optional", True, "sum", "judged non-relevant retrieved"),
        Family("num_q", "none", False, "sum", "number of queries (1 per query)"),
        Family(
            "iprec_at_recall",
            "none",
            True,
            "mean",
            "interpolated precision at a recall level",
            {"recall": 0.0, "version": 10.0},
        ),
        Family(
            "iprec_avg",
            "none",
            True,
            "mean",
            "interpolated precision averaged over recall points (trec 11pt_avg)",
            {"lo": 0.0, "hi": 1.0, "step": 0.1, "version": 10.0},
        ),
        Family("inf_ap", "none", True, "mean", "inferred AP (Yilmaz & Aslam)"),
        Family("gm_map", "none", True, "gmean", "AP, geometric mean over queries"),
        Family("gm_bpref", "none", True, "gmean", "bpref, geometric mean over queries"),
        Family("unjudged", "optional", False, "mean", "unjudged in top k / k (trec unj)"),
        # gains and beyond
        Family("bin_g", "none", True, "mean", "trec binG: rel docs / log2(2 + nonrel before)"),
        Family("g", "none", False, "mean", "trec G: normalized gain (custom gains)"),
        Family("ndcg_rel", "none", False, "mean", "trec ndcg_rel: nDCG averaged at rel docs"),
        Family("rndcg", "none", True, "mean", "trec Rndcg: nDCG averaged at R levels"),
        Family("rbp", "optional", False, "mean", "rank-biased precision (trec)", {"p": 0.9}),
        Family("rbp_resid", "optional", False, "mean", "rbp residual (trec)", {"p": 0.9}),
        Family("err", "optional", False, "mean", "expected reciprocal rank", {"gmax": 0.0}),
        Family("judged", "optional", False, "mean", "judged in top k / min(k, retrieved)"),
        Family("auc", "optional", True, "mean", "ROC AUC of rel vs judged non-rel"),
        Family("first_rel_rank", "optional", True, "mean", "rank of the first relevant"),
        Family("fallout", "optional", True, "mean", "judged non-rel in top k / non-rel"),
        Family("idcg", "optional", False, "mean", "ideal DCG, gain = label, log2 discount"),
        Family("yaap", "none", True, "mean", "trec yaap: ln((1 + S) / (1 + R - S)), S = AP sum"),
        # diversity (subtopic judgments; NIST ndeval's definitions).  Without a cutoff, k is
        # the ranking's length (the ideal ranking cut there too; p_ia divides by it)
        Family(
            "alpha_ndcg",
            "optional",
            True,
            "mean",
            "alpha-nDCG: novelty gains (1-alpha)^seen, log2 discount, vs greedy ideal",
            {"alpha": 0.5},
            subtopics=True,
        ),
        Family(
            "alpha_dcg",
            "optional",
            True,
            "mean",
            "alpha-DCG over ndeval's ideal ideal S(1-alpha)^(r-1)",
            {"alpha": 0.5},
            subtopics=True,
        ),
        Family(
            "err_ia",
            "optional",
            True,
            "mean",
            "intent-aware ERR: novelty gains / rank, over S(1-alpha)^(r-1)/r",
            {"alpha": 0.5},
            subtopics=True,
        ),
        Family(
            "nerr_ia",
            "optional",
            True,
            "mean",
            "ERR-IA vs the greedy ideal",
            {"alpha": 0.5},
            subtopics=True,
        ),
        Family(
            "nrbp",
            "none",
            True,
            "mean",
            "novelty- and rank-biased precision",
            {"alpha": 0.5, "beta": 0.5},
            subtopics=True,
        ),
        Family(
            "nnrbp",
            "none",
            True,
            "mean",
            "NRBP vs the greedy ideal",
            {"alpha": 0.5, "beta": 0.5},
            subtopics=True,
        ),
        Family(
            "p_ia",
            "optional",
            True,
            "mean",
            "intent-aware precision: mean of P@k per subtopic",
            subtopics=True,
        ),
        Family(
            "ap_ia",
            "none",
            True,
            "mean",
            "intent-aware AP: mean of AP per subtopic",
            subtopics=True,
        ),
        Family(
            "st_recall",
            "optional",
            True,
            "mean",
            "subtopic recall: subtopics in top k / S",
            subtopics=True,
        ),
        # ir_measures
        Family(
            "accuracy",
            "optional",
            True,
            "mean",
            "P(relevant retrieved above non-relevant retrieved), ir_measures Accuracy",
        ),
        Family(
            "compat",
            "none",
            False,
            "mean",
            "compatibility: RBO with the ideal ranking (Clarke et al.)",
            {"p": 0.95, "normalize": 1.0},
        ),
        # C/W/L (cwl_eval): expected utility per document; gains binary at rel, or
        # graded by min_rel / max_rel when max_rel > min_rel
        Family(
            "rbp_cwl",
            "optional",
            True,
            "mean",
            "C/W/L rank-biased precision: continue with p, over a depth-rank horizon",
            {"p": 0.8, **_CWL},
        ),
        Family(
            "sdcg",
            "required",
            True,
            "mean",
            "C/W/L scaled DCG: DCG@k / the sum of its discounts",
            dict(_CWL),
        ),
        Family(
            "bpm",
            "required",
            True,
            "mean",
            "C/W/L static Bejeweled Player Model: stop at gain T or rank k",
            {"T": 1.0, **_CWL},
        ),
        Family(
            "nerr8",
            "required",
            True,
            "mean",
            "C/W/L NERR eq. 8: continue 1 - g(i), i < k",
            dict(_CWL),
        ),
        Family(
            "nerr9",
            "required",
            True,
            "mean",
            "C/W/L NERR eq. 9: continue i/(i+1) (1 - g(i)), i < k",
            dict(_CWL),
        ),
        Family(
            "nerr10",
            "optional",
            True,
            "mean",
            "C/W/L NERR eq. 10: continue p (1 - g(i))",
            {"p": 0.9, **_CWL},
        ),
        Family(
            "nerr11",
            "optional",
            True,
            "mean",
            "C/W/L NERR eq. 11: continue ((i+2T-1)/(i+2T))^2 (1 - g(i))",
            {"T": 1.0, **_CWL},
        ),
        Family(
            "inst",
            "optional",
            True,
            "mean",
            "C/W/L INST: continue ((i+T+T_i-1)/(i+T+T_i))^2, T_i = T - gain so far",
            {"T": 1.0, **_CWL},
        ),
        Family(
            "insq",
            "optional",
            True,
            "mean",
            "C/W/L INSQ: continue ((i+2T-1)/(i+2T))^2",
            {"T": 1.0, **_CWL},
        ),
    ]
}

# Aliases, matched case-insensitively.  Value: canonical family.
ALIASES: dict[str, str] = {
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
    "mean_rank": "first_rel_rank",  # its mean over queries is the "mean rank"
    "fallout": "fallout",
    "fall_out": "fallout",
    # signals
    "idcg": "idcg",
    "ideal_dcg": "idcg",
    "yaap": "yaap",
    "is_hit": "hit_rate",
    # diversity (canonical, ndeval, ir_measures)
    "alpha_ndcg": "alpha_ndcg",
    "alpha-ndcg": "alpha_ndcg",
    "alpha_dcg": "alpha_dcg",
    "alpha-dcg": "alpha_dcg",
    "err_ia": "err_ia",
    "err-ia": "err_ia",
    "nerr_ia": "nerr_ia",
    "nerr-ia": "nerr_ia",
    "nrbp": "nrbp",
    "nnrbp": "nnrbp",
    "p_ia": "p_ia",
    "p-ia": "p_ia",
    "ap_ia": "ap_ia",
    "map-ia": "ap_ia",
    "map_ia": "ap_ia",
    "st_recall": "st_recall",
    "strecall": "st_recall",
    "strec": "st_recall",
    "s_recall": "st_recall",
    "subtopic_recall": "st_recall",
    # ir_measures
    "accuracy": "accuracy",
    "compat": "compat",
    "compatibility": "compat",
    "rbp_cwl": "rbp_cwl",
    "sdcg": "sdcg",
    "bpm": "bpm",
    "nerr8": "nerr8",
    "nerr9": "nerr9",
    "nerr10": "nerr10",
    "nerr11": "nerr11",
    "inst": "inst",
    "insq": "insq",
}

# The values a named parameter may take: (low, high, low included, high
# included).  Outside them a metric has no meaning (rbp's persistence p is a
# probability below 1: p=2 gave 1.5; a negative recall level or F beta, an R
# multiple of 0 or less) and its name is an UnknownMetricError.
INF = float("inf")
_CWL_FAMILIES = ("rbp_cwl", "sdcg", "bpm", "nerr8", "nerr9", "nerr10", "nerr11", "inst", "insq")
PARAM_RANGES: dict[tuple[str, str], tuple[float, float, bool, bool]] = {
    ("rbp", "p"): (0.0, 1.0, True, False),
    ("rbp_resid", "p"): (0.0, 1.0, True, False),
    ("set_f", "beta"): (0.0, INF, True, False),
    ("rprec_mult", "mult"): (0.0, INF, False, False),
    ("iprec_at_recall", "recall"): (0.0, 1.0, True, True),
    ("iprec_avg", "lo"): (0.0, 1.0, True, True),
    ("iprec_avg", "hi"): (0.0, 1.0, True, True),
    ("iprec_avg", "step"): (0.0, 1.0, False, True),
    ("utility", "num_docs"): (0.0, INF, True, False),
    ("err", "gmax"): (0.0, INF, True, False),
    # diversity: ndeval's ranges
    **{(f, "alpha"): (0.0, 1.0, True, True) for f in ("alpha_ndcg", "alpha_dcg", "err_ia")},
    **{(f, "alpha"): (0.0, 1.0, True, True) for f in ("nerr_ia", "nrbp", "nnrbp")},
    ("nrbp", "beta"): (0.0, 1.0, True, True),
    ("nnrbp", "beta"): (0.0, 1.0, True, True),
    ("compat", "p"): (0.0, 1.0, True, True),
    ("compat", "normalize"): (0.0, 1.0, True, True),
    ("rbp_cwl", "p"): (0.0, 1.0, True, True),
    ("nerr10", "p"): (0.0, 1.0, True, True),
    **{(f, "T"): (0.0, INF, False, False) for f in ("bpm", "nerr11", "inst", "insq")},
    **{(f, "depth"): (1.0, 1e7, True, True) for f in _CWL_FAMILIES},
    **{(f, "residual"): (0.0, 1.0, True, True) for f in _CWL_FAMILIES},
}

# Families whose cutoff has a ceiling (their normaliser sums k terms).
MAX_K: dict[str, int] = {"alpha_dcg": 10_000_000, "err_ia": 10_000_000}


def param_range_text(lo: float, hi: float, lo_in: bool, hi_in: bool) -> str:
    """``[0, 1)``, ``(0, inf)``: the interval in the usual notation."""

    def num(x: float) -> str:
        return "inf" if x == INF else (str(int(x)) if x.is_integer() else repr(x))

    return f"{'[' if lo_in else '('}{num(lo)}, {num(hi)}{']' if hi_in else ')'}"


# trec_eval families whose cutoff is mandatory in trec_eval spelling.
TREC_CUT_REQUIRED = {"ndcg_cut", "map_cut", "success"}
TREC_CUT_REQUIRED |= {"relative_p", "unj"}  # trec_eval part A
