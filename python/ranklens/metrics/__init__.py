"""The pure-Python reference backend: every metric, written from its definition.

``evaluate(..., backend="python")`` runs this code, and the tests check the Rust
kernels against it.  It is deliberately plain: no numpy, no native code, one small
module per metric family (each module's docstring states the exact definition and
edge cases), and one shared module, ``_common``, that only ranks documents and looks
up their labels.

Conventions (trec_eval 10.0):

* Every query id of the qrels is scored, in sorted order; a qrels query absent from
  the run is scored on an empty ranking (``trec_eval -c``); run-only queries are
  ignored.
* Ranking: score descending, ties by doc id descending (UTF-8 byte order), or in
  input order with ``ties="input"``, or by label with ``ties="best"`` / ``"worst"``;
  optional trec_eval ``-M`` / ``-J``.
* Relevant at level ``l``: label >= 0 and label >= l, where ``l`` is the metric's
  ``rel=`` if given, else ``relevance_level``.  Negative labels mean "in the pool but
  unjudged": never relevant, never judged non-relevant (bpref), gain 0.
* Aggregation (:func:`aggregate`): the mean over queries, except ``num_ret``,
  ``num_rel`` and ``num_rel_ret``, which are summed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from ranklens._names import Metric, parse_metrics
from ranklens.errors import RanklensInputError

# gains and beyond
from . import gains as _gains
from ._common import Judgments, Ranked, rank
from ._expected import check_families, expected_scores
from ._groups import grouped_reference, relabel
from .accuracy import accuracy
from .auc import auc
from .bpref import bpref
from .compat import compat
from .counts import num_rel, num_rel_ret, num_ret
from .cwl import bpm, insq, inst, nerr8, nerr9, nerr10, nerr11, rbp_cwl, sdcg
from .diversity import (
    alpha_dcg,
    alpha_ndcg,
    ap_ia,
    err_ia,
    nerr_ia,
    nnrbp,
    nrbp,
    p_ia,
    st_recall,
)
from .err import err, resolve_gmax
from .f1 import f1
from .first_rel import fallout, first_rel_rank
from .g import bin_g, g
from .geomean import geometric_mean, gm_bpref, gm_map  # trec_eval part A
from .hits import hit_rate, hits
from .infap import inf_ap  # trec_eval part A
from .iprec import iprec_at_recall, iprec_avg  # trec_eval part A
from .judged import judged
from .map import average_precision
from .mrr import mrr
from .ndcg import ndcg_burges
from .ndcg_rel import ndcg_rel, rndcg
from .precision import precision
from .r_precision import r_precision
from .rbp import rbp, rbp_resid
from .recall import recall
from .rprec_mult import rprec_mult  # trec_eval part A
from .set_measures import (  # trec_eval part A
    num_nonrel_judged_ret,
    num_q,
    relative_precision,
    set_f,
    set_map,
    utility,
)
from .unjudged import unjudged  # trec_eval part A
from .yaap import yaap

__all__ = ["METRIC_FUNCTIONS", "aggregate", "aggregate_reference", "evaluate_reference"]

MetricFunction = Callable[[Ranked, Judgments, Metric, float], float]

#: family -> function(ranking, judgments, metric, relevance_level) -> float
METRIC_FUNCTIONS: dict[str, MetricFunction] = {
    "precision": precision,
    "recall": recall,
    "f1": f1,
    "hits": hits,
    "hit_rate": hit_rate,
    "mrr": mrr,
    "map": average_precision,
    "ndcg": _gains.ndcg,  # gains and beyond: custom gains, else .ndcg.ndcg
    "ndcg_burges": ndcg_burges,
    "dcg": _gains.dcg,  # gains and beyond: custom gains, else .ndcg.dcg
    "r_precision": r_precision,
    "bpref": bpref,
    "num_ret": num_ret,
    "num_rel": num_rel,
    "num_rel_ret": num_rel_ret,
    # trec_eval part A
    "set_f": set_f,
    "set_map": set_map,
    "relative_precision": relative_precision,
    "utility": utility,
    "rprec_mult": rprec_mult,
    "num_nonrel_judged_ret": num_nonrel_judged_ret,
    "num_q": num_q,
    "iprec_at_recall": iprec_at_recall,
    "iprec_avg": iprec_avg,
    "inf_ap": inf_ap,
    "gm_map": gm_map,
    "gm_bpref": gm_bpref,
    "unjudged": unjudged,
    # gains and beyond
    "bin_g": bin_g,
    "g": g,
    "ndcg_rel": ndcg_rel,
    "rndcg": rndcg,
    "rbp": rbp,
    "rbp_resid": rbp_resid,
    "err": err,
    "judged": judged,
    "auc": auc,
    "first_rel_rank": first_rel_rank,
    "fallout": fallout,
    "idcg": _gains.idcg,  # custom gains, else .ndcg.idcg
    "yaap": yaap,
    # diversity (subtopic judgments)
    "alpha_dcg": alpha_dcg,
    "alpha_ndcg": alpha_ndcg,
    "err_ia": err_ia,
    "nerr_ia": nerr_ia,
    "nrbp": nrbp,
    "nnrbp": nnrbp,
    "p_ia": p_ia,
    "ap_ia": ap_ia,
    "st_recall": st_recall,
    # ir_measures
    "accuracy": accuracy,
    "compat": compat,
    "rbp_cwl": rbp_cwl,
    "sdcg": sdcg,
    "bpm": bpm,
    "nerr8": nerr8,
    "nerr9": nerr9,
    "nerr10": nerr10,
    "nerr11": nerr11,
    "inst": inst,
    "insq": insq,
}

#: The families computed on subtopic judgments.
DIVERSITY = frozenset(
    ["alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp", "p_ia", "ap_ia", "st_recall"]
)


def evaluate_reference(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    metrics: Iterable[Metric | str],
    relevance_level: float = 1,
    *,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    groups: Mapping[str, Sequence[tuple[float, Sequence[str]]]] | None = None,
    subtopics: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
    miss_nan: bool = False,
) -> dict[str, dict[str, float]]:
    """Per query, for EVERY query id in qrels (in sorted order): ``{metric.name: value}``.

    A qrels query absent from the run is scored on an empty ranking (trec_eval -c).
    Run-only queries are ignored.  ``metrics`` may hold :class:`Metric` values or
    names (parsed with :func:`ranklens._names.parse_metrics`).

    ``ties``: ``"trec"`` (equal scores by doc id descending, byte order) or
    ``"input"`` (equal scores in the run mapping's order).  ``max_docs``: score only
    the top ``max_docs`` of each ranking (trec_eval ``-M``).  ``judged_only``: then
    drop retrieved documents not in the qrels or with a negative label, ranks
    closing up (trec_eval ``-J``).  ``"expected"``: the mean over every ordering of
    each group of equal scores, by enumeration (see :mod:`._expected`).
    ``"best"`` / ``"worst"``: equal scores by label descending / ascending (not
    judged: 0), then in trec order (see :func:`._common.rank`); not with ``groups``.

    ``groups``: grouped ground truth (RAG), ``{query_id: [(label, [doc ids]), ...]}``
    (see :mod:`._groups`); it replaces ``qrels``, whose keys still list the queries.
    The diversity metrics read a group as a subtopic.

    ``subtopics``: subtopic judgments ``{query_id: {doc_id: {subtopic: label}}}``
    for the diversity metrics (:mod:`.diversity`); ``qrels`` then holds each
    document's largest label, which the other metrics see.

    ``miss_nan``: ``first_rel_rank`` is NaN, not k + 1, when no relevant document
    is in the top k (``evaluate(miss=None)``); an error with ``ties="expected"``.

    A value past the largest float (a gain ``2**label`` from a label of 1024 on,
    a sum past 1.8e308) raises :class:`~ranklens.errors.RanklensInputError`
    naming the query and metric, as the Rust backend does.
    """
    wanted = list(metrics)
    parsed = parse_metrics(wanted) if wanted else []
    first_rel = [m for m in parsed if m.family == "first_rel_rank"] if miss_nan else []
    if first_rel and ties == "expected":
        raise RanklensInputError(
            "miss=None is not defined with ties='expected' (the expected "
            "first_rel_rank mixes hits and misses); use miss='k+1'"
        )
    try:
        out = _diverse_scores(
            qrels, run, parsed, relevance_level, judged_only, max_docs, ties, groups, subtopics
        )
    except OverflowError:  # 2.0 ** 1024 and the like, in grouped or expected scores
        raise RanklensInputError(OVERFLOW) from None
    for qid, values in out.items():
        for name, v in values.items():
            if not math.isfinite(v):
                raise RanklensInputError(f'query "{qid}", metric {name}: {OVERFLOW}')
    if first_rel:
        # A miss is one past the cutoff (k + 1); without a cutoff, one past the
        # ranking, which a hit never reaches: recognised as such with hit_rate
        # (hit at k) of the same level, scored on the same ranking.
        hits = [Metric("hit_rate", m.k, m.rel, ()) for m in first_rel]
        found = _scores(qrels, run, hits, relevance_level, judged_only, max_docs, ties, groups)
        for qid, values in out.items():
            for m, h in zip(first_rel, hits):
                if found[qid][h.name] == 0.0:
                    values[m.name] = math.nan
    return out


#: Why a value is not finite (the same words as the Rust backend's).
OVERFLOW = (
    "the value is past the largest float (1.8e308): a label too large for its gain "
    "(2^label overflows from 1024 on) or a sum of gains past it"
)


def _diverse_scores(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    parsed: list[Metric],
    relevance_level: float,
    judged_only: bool,
    max_docs: int | None,
    ties: str,
    groups: Mapping[str, Sequence[tuple[float, Sequence[str]]]] | None,
    subtopics: Mapping[str, Mapping[str, Mapping[str, float]]] | None,
) -> dict[str, dict[str, float]]:
    """:func:`_scores`, the diversity metrics on the subtopic judgments (from
    ``subtopics``, or from ``groups``: a group is a subtopic) and the others as
    usual, merged in metric order."""
    diverse = [m for m in parsed if m.family in DIVERSITY]
    if not diverse:
        return _scores(qrels, run, parsed, relevance_level, judged_only, max_docs, ties, groups)
    if ties == "expected":
        check_families(diverse)
    if groups is not None:
        subtopics = {
            str(q): {
                str(doc): {str(g): float(label)}
                for g, (label, members) in enumerate(gs)
                for doc in members
            }
            for q, gs in groups.items()
        }
    if subtopics is None and not any(qrels.values()):  # no judged row at all
        subtopics = {}
    if subtopics is None:
        raise RanklensInputError(
            f"{diverse[0].family} needs subtopic judgments: qrels from Qrels.from_subtopics, "
            "Qrels.from_trec(path, subtopics=True) or Qrels.from_groups"
        )
    others = [m for m in parsed if m.family not in DIVERSITY]
    rest = (
        _scores(qrels, run, others, relevance_level, judged_only, max_docs, ties, groups)
        if others
        else {}
    )
    run_s = {str(q): {str(d): v for d, v in docs.items()} for q, docs in run.items()}
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(str(q) for q in qrels):
        subs = {str(d): dict(v) for d, v in subtopics.get(qid, {}).items()}
        labels = {d: max(v.values()) if v else 0.0 for d, v in subs.items()}
        judgments = Judgments(labels, subs)
        if groups is None:
            ranking = rank(
                run_s.get(qid, {}), judgments, ties=ties, max_docs=max_docs, judged_only=judged_only
            )
        else:  # -J after the groups' relabelling, as for the other metrics
            order = rank(run_s.get(qid, {}), Judgments({}), ties=ties, max_docs=max_docs)
            ranking = relabel(order.docs, groups.get(qid, []), judged_only=judged_only)
        values = {
            m.name: METRIC_FUNCTIONS[m.family](ranking, judgments, m, relevance_level)
            for m in diverse
        }
        values.update(rest.get(qid, {}))
        out[qid] = {m.name: values[m.name] for m in parsed}
    return out


def _scores(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    parsed: list[Metric],
    relevance_level: float,
    judged_only: bool,
    max_docs: int | None,
    ties: str,
    groups: Mapping[str, Sequence[tuple[float, Sequence[str]]]] | None,
) -> dict[str, dict[str, float]]:
    """:func:`evaluate_reference`'s values, before their check."""
    if groups is not None:
        return grouped_reference(
            groups,
            run,
            parsed,
            relevance_level,
            judged_only=judged_only,
            max_docs=max_docs,
            ties=ties,
            functions=METRIC_FUNCTIONS,
        )
    if ties == "expected":
        check_families(parsed)
    # Query and document ids are compared as strings (as in a TREC file).
    qrels_s = {str(q): {str(d): v for d, v in docs.items()} for q, docs in qrels.items()}
    run_s = {str(q): {str(d): v for d, v in docs.items()} for q, docs in run.items()}
    resolved = resolve_gmax(parsed, qrels_s)  # gains and beyond: err's automatic gmax
    out: dict[str, dict[str, float]] = {}
    for qid in sorted(qrels_s):  # code point order = UTF-8 byte order
        judgments = Judgments.from_mapping(qrels_s[qid])
        if ties == "expected":
            out[qid] = expected_scores(
                run_s.get(qid, {}),
                judgments,
                parsed,
                METRIC_FUNCTIONS,
                relevance_level,
                max_docs=max_docs,
                judged_only=judged_only,
            )
            continue
        ranking = rank(
            run_s.get(qid, {}), judgments, ties=ties, max_docs=max_docs, judged_only=judged_only
        )
        out[qid] = {}
        for m, r in zip(parsed, resolved):
            try:
                value = METRIC_FUNCTIONS[m.family](ranking, judgments, r, relevance_level)
            except OverflowError:
                raise RanklensInputError(f'query "{qid}", metric {m.name}: {OVERFLOW}') from None
            out[qid][m.name] = value
    return out


def aggregate(metric: Metric, per_query_values: Iterable[float]) -> float:
    """Summary over queries: the mean (0 for no queries), or the sum for the counts.

    Values are added left to right in the order given (trec_eval adds them in query
    order), so pass them in sorted query order to reproduce its rounding.
    """
    values = list(per_query_values)
    if metric.aggregate == "gmean":  # trec_eval part A: gm_map, gm_bpref
        return geometric_mean(values)
    total = 0.0
    for v in values:
        total += v
    if metric.aggregate == "sum":
        return total
    return total / len(values) if values else 0.0


def aggregate_reference(
    per_query: Mapping[str, Mapping[str, float]], metrics: Iterable[Metric | str]
) -> dict[str, float]:
    """Aggregate the output of :func:`evaluate_reference`: ``{metric.name: summary}``."""
    wanted = list(metrics)
    parsed = parse_metrics(wanted) if wanted else []
    return {
        m.name: aggregate(m, (per_query[qid][m.name] for qid in sorted(per_query))) for m in parsed
    }
