"""``ranklens.compat.ir_measures`` against ir_measures' own default providers.

1. Every supported measure, on generated cases (ties, negative labels, unjudged
   documents, qrels queries missing from the run, run queries missing from the qrels):
   ``iter_calc`` and ``calc_aggregate`` through the provider, and through ir_measures'
   default pipeline after :func:`install`, equal the default providers to 1e-9
   (gdeval's measures to 5e-6: gdeval prints 5 decimals).
2. Each deviation listed in the module docstring, on a case that shows it.
3. The pipeline: install() puts the provider first (once), unsupported measures fall
   through to the next provider, the entry point is declared, DataFrame inputs work.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import (  # noqa: E402
    AP,
    ERR,
    RR,
    Bpref,
    IPrec,
    Judged,
    NumQ,
    NumRel,
    NumRelRet,
    NumRet,
    P,
    R,
    Rprec,
    SetAP,
    SetF,
    SetP,
    SetR,
    Success,
    infAP,
    nDCG,
)

from ranklens.compat import ir_measures as rl  # noqa: E402
from ranklens.errors import RanklensInputError  # noqa: E402

# The default pipeline as ir_measures ships it (ranklens removed if a test installed it).
REFERENCE = ir_measures.providers.FallbackProvider(
    [p for p in ir_measures.DefaultPipeline.providers if p.NAME != "ranklens"]
)
HAS_PERL = ir_measures.gdeval.is_available()

# Computed by pytrec_eval in ir_measures' default pipeline.
PYTREC = [
    P @ 1,
    P @ 3,
    P(rel=2) @ 5,
    P(judged_only=True) @ 3,
    R @ 3,
    R(rel=2) @ 10,
    R(judged_only=True) @ 5,
    AP,
    AP @ 3,
    AP(rel=2),
    AP(judged_only=True),
    RR,
    RR(rel=2),
    RR(judged_only=True),
    Rprec,
    Rprec(rel=2),
    Rprec(judged_only=True),
    Success @ 1,
    Success(rel=2) @ 3,
    Success(judged_only=True) @ 2,
    SetP,
    SetP(rel=2),
    SetP(relative=True),
    SetP(judged_only=True),
    SetR,
    SetR(rel=2),
    SetAP,
    SetAP(rel=2, judged_only=True),
    SetF,
    SetF(beta=0.5),
    SetF(rel=2, beta=2.0),
    SetF(judged_only=True),
    IPrec @ 0.0,
    IPrec @ 0.1,
    IPrec @ 0.5,
    IPrec @ 1.0,
    IPrec(rel=2) @ 0.3,
    IPrec(judged_only=True) @ 0.2,
    Bpref,
    Bpref(rel=2),
    infAP,
    infAP(rel=2),
    NumRel,
    NumRet,
    NumRelRet,
    NumRet(rel=2),
    NumQ,
    nDCG,
    nDCG @ 3,
    nDCG(judged_only=True) @ 5,
    nDCG(judged_only=True),
    nDCG(gains={0: 1, 2: 5}) @ 5,
    nDCG(gains={1: 3, 3: 0}),
]
# msmarco (RR@k) and judged (Judged) providers: ties broken by doc id ascending.
TIES_ASCENDING = [RR @ 3, RR(rel=2) @ 5, RR(rel=0) @ 4, Judged, Judged @ 3]
# gdeval: 5 printed decimals (tolerance below).
GDEVAL = [ERR @ 3, ERR @ 10, nDCG(dcg="exp-log2") @ 3, nDCG(dcg="exp-log2") @ 10]
TOL = 1e-9
GDEVAL_TOL = 0.5e-5 + 1e-12  # gdeval prints %.5f: half a unit of the 5th decimal


def make_case(seed: int, ties: bool) -> tuple[dict, dict]:
    """Integer query ids (gdeval reads no others), labels -1..3, 1..8 judged and 1..10
    retrieved documents per query, some unjudged; qrels query 5 has no run, run
    query 7 has no qrels.  Every qrels query has a label >= 0: pytrec_eval hangs on
    nDCG for a query without one (see test_all_negative_query).  Scores: small integers
    (many ties) or distinct multiples of 1/8 (exact in float32, so pytrec_eval's
    rounding changes nothing)."""
    rng = random.Random(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(1, 9):
        qid = str(q)
        docs = [f"d{i}" for i in range(12)]
        if q != 7:
            judged = rng.sample(docs, rng.randint(1, 8))
            qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
            if max(qrels[qid].values()) < 0:
                qrels[qid][judged[0]] = 0
        if q != 5:
            ranked = rng.sample([*docs, "x1", "x2"], rng.randint(1, 10))
            if ties:
                run[qid] = {d: float(rng.randint(0, 3)) for d in ranked}
            else:
                scores = rng.sample(range(1000), len(ranked))
                run[qid] = {d: s / 8 for d, s in zip(ranked, scores)}
    return qrels, run


CASES = [make_case(seed, ties=seed % 2 == 0) for seed in range(16)]
UNTIED = [c for i, c in enumerate(CASES) if i % 2 == 1]


def per_query(provider, measures, qrels, run) -> dict:
    out = {}
    for m in provider.iter_calc(measures, qrels, run):
        key = (m.query_id, str(m.measure))
        assert key not in out, f"{key} reported twice"
        out[key] = m.value
    return out


def reference(measures, qrels, run) -> tuple[dict, dict]:
    """ir_measures' values, per query and aggregated, one measure at a time: asked
    together, its pytrec_eval provider puts NumRet, NumQ and nDCG into whichever
    pytrec_eval run comes first (the "shared pytrec_eval runs" deviation), in an
    order that follows set hashing."""
    per: dict = {}
    agg: dict = {}
    for measure in measures:
        per.update(per_query(REFERENCE, [measure], qrels, run))
        agg[str(measure)] = REFERENCE.calc_aggregate([measure], qrels, run)[measure]
    return per, agg


def assert_close(got: dict, want: dict, tol: float) -> None:
    assert got.keys() == want.keys()
    bad = {k: (got[k], want[k]) for k in want if abs(got[k] - want[k]) > tol}
    assert not bad, bad


def untie_like_trec(run: dict) -> dict:
    """The run re-scored n..1 in trec_eval's order (score descending, doc id descending),
    so no two scores tie and every provider ranks it the way ranklens does."""
    out = {}
    for qid, docs in run.items():
        order = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        out[qid] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


@pytest.fixture
def installed():
    saved = list(ir_measures.DefaultPipeline.providers)
    provider = rl.install()
    yield provider
    ir_measures.DefaultPipeline.providers[:] = saved


# ---------------------------------------------------------------------------
# 1. Against the default providers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("case", range(len(CASES)))
def test_pytrec_eval_measures_iter_calc_and_aggregate(case):
    qrels, run = CASES[case]
    provider = rl.RanklensProvider()
    want, want_agg = reference(PYTREC, qrels, run)
    assert_close(per_query(provider, PYTREC, qrels, run), want, TOL)
    got_agg = provider.calc_aggregate(PYTREC, qrels, run)
    assert_close({str(k): v for k, v in got_agg.items()}, want_agg, TOL)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_ties_ascending_providers(case):
    # RR@k and Judged: the same numbers once ties are out of the way (deviation 1).
    qrels, run = CASES[case]
    want, _ = reference(TIES_ASCENDING, qrels, untie_like_trec(run))
    got = per_query(rl.RanklensProvider(), TIES_ASCENDING, qrels, run)
    assert_close(got, want, TOL)
    if case % 2 == 1:  # no ties: the run as it is
        assert_close(got, reference(TIES_ASCENDING, qrels, run)[0], TOL)


@pytest.mark.skipif(not HAS_PERL, reason="gdeval needs perl")
@pytest.mark.parametrize("case", range(0, len(CASES), 3))
def test_gdeval_measures(case):
    qrels, run = CASES[case]
    want, want_agg = reference(GDEVAL, qrels, run)
    provider = rl.RanklensProvider()
    assert_close(per_query(provider, GDEVAL, qrels, run), want, GDEVAL_TOL)
    got_agg = {str(k): v for k, v in provider.calc_aggregate(GDEVAL, qrels, run).items()}
    assert_close(got_agg, want_agg, GDEVAL_TOL)


@pytest.mark.skipif(not HAS_PERL, reason="gdeval needs perl")
def test_exp_log2_ndcg_without_cutoff_is_gdeval_at_a_cutoff_past_everything():
    # No case has more than 14 retrieved or judged documents per query: at @1000 gdeval's
    # ranking and ideal ranking are whole, i.e. nDCG(dcg='exp-log2') without a cutoff.
    whole = nDCG(dcg="exp-log2")
    for qrels, run in CASES[:6]:
        want = per_query(REFERENCE, [whole @ 1000], qrels, run)
        got = per_query(rl.RanklensProvider(), [whole], qrels, run)
        assert_close(got, {(q, str(whole)): v for (q, _), v in want.items()}, GDEVAL_TOL)


@pytest.mark.skipif(not HAS_PERL, reason="gdeval needs perl")
def test_err_without_cutoff_is_gdeval_at_a_cutoff_past_everything():
    # ir_measures' only ERR provider (gdeval) needs a cutoff; without one, ranklens
    # scores the whole ranking, gdeval's value at a cutoff past every ranking.
    for qrels, run in CASES[:6]:
        want = per_query(REFERENCE, [ERR @ 1000], qrels, run)
        got = per_query(rl.RanklensProvider(), [ERR], qrels, run)
        assert_close(got, {(q, str(ERR)): v for (q, _), v in want.items()}, GDEVAL_TOL)


@pytest.mark.parametrize("case", [0, 1, 5])
def test_default_pipeline_after_install(installed, case):
    qrels, run = CASES[case]
    measures = PYTREC
    want, want_agg = reference(measures, qrels, run)
    assert_close(per_query(ir_measures, measures, qrels, run), want, TOL)
    got_agg = {str(k): v for k, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    assert_close(got_agg, want_agg, TOL)
    evaluator = ir_measures.evaluator(measures, qrels)
    assert isinstance(evaluator, rl.RanklensEvaluator)  # nothing fell through
    assert_close(
        {(m.query_id, str(m.measure)): m.value for m in evaluator.iter_calc(run)}, want, TOL
    )


@pytest.mark.parametrize("case", [0, 1])
def test_iter_calc_is_the_base_classes(case):
    # RanklensEvaluator.iter_calc skips the base class's bookkeeping: same items, same order.
    qrels, run = CASES[case]
    evaluator = rl.RanklensProvider().evaluator(PYTREC + TIES_ASCENDING, qrels)
    base = list(ir_measures.providers.Evaluator.iter_calc(evaluator, run))
    assert list(evaluator.iter_calc(run)) == base
    assert any(m.query_id == "5" for m in base)  # a qrels query missing from the run


def test_missing_queries_get_the_default():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 2}, "3": {"c": 1}}
    run = {"1": {"a": 1.0, "b": 2.0}, "4": {"a": 1.0}}  # 2 and 3 missing; 4 not judged
    got = per_query(rl.RanklensProvider(), [P @ 2, NumQ, NumRel], qrels, run)
    # Query 1: P@2 = 1/2 (a relevant, b not); NumQ 1; NumRel 1.  Queries 2, 3: DEFAULT 0.
    assert got == {
        ("1", "P@2"): 0.5,
        ("1", "NumQ"): 1.0,
        ("1", "NumRel"): 1.0,
        ("2", "P@2"): 0.0,
        ("2", "NumQ"): 0.0,
        ("2", "NumRel"): 0.0,
        ("3", "P@2"): 0.0,
        ("3", "NumQ"): 0.0,
        ("3", "NumRel"): 0.0,
    }
    assert got == reference([P @ 2, NumQ, NumRel], qrels, run)[0]


def test_empty_ranking_is_scored_as_pytrec_eval_does():
    qrels = {"1": {"a": 1, "b": 2}, "2": {"a": 1}}
    run = {"1": {}, "2": {"a": 1.0}}
    measures = [P @ 2, AP, NumQ, NumRel, NumRet, nDCG]
    want, _ = reference(measures, qrels, run)
    assert_close(per_query(rl.RanklensProvider(), measures, qrels, run), want, TOL)
    assert want[("1", "NumRel")] == 2.0 and want[("1", "NumQ")] == 1.0


def test_all_negative_query():
    # Not compared with ir_measures: its pytrec_eval provider hangs on nDCG for query 1.
    qrels = {"1": {"a": -1, "b": -2}, "2": {"a": 1}}
    run = {"1": {"a": 1.0, "c": 0.5}, "2": {"a": 1.0}}
    measures = [P @ 2, AP, RR, nDCG, NumQ, NumRel, NumRet, Judged, SetP(rel=0)]
    got = per_query(rl.RanklensProvider(), measures, qrels, run)
    # Query 1: nothing relevant (negative labels never are) -> 0 for P@2, AP, RR, nDCG,
    # SetP(rel=0); NumQ 1, NumRel 0, NumRet 2; Judged 1/2 (a is in the qrels, c not).
    assert {m: got[("1", m)] for m in map(str, measures)} == {
        "P@2": 0.0,
        "AP": 0.0,
        "RR": 0.0,
        "nDCG": 0.0,
        "NumQ": 1.0,
        "NumRel": 0.0,
        "NumRet": 2.0,
        "Judged": 0.5,
        "SetP(rel=0)": 0.0,
    }
    # Query 2 is unaffected by query 1 (pytrec_eval may carry state across queries).
    assert got[("2", "P@2")] == 0.5 and got[("2", "nDCG")] == 1.0


def _frames(qrels: dict, run: dict):
    pd = pytest.importorskip("pandas")
    qrels_df = pd.DataFrame(
        [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    run_df = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query_id", "doc_id", "score"],
    )
    return qrels_df, run_df


@pytest.mark.parametrize("case", [0, 1])
def test_dataframe_inputs(monkeypatch, case):
    # PyTerrier hands ir_measures pandas frames: they are read by columns (never
    # converted row by row to dicts), with the same values, bit for bit, as the dicts.
    qrels, run = CASES[case]
    measures = PYTREC + TIES_ASCENDING
    provider = rl.RanklensProvider()
    want = per_query(provider, measures, qrels, run)
    want_agg = provider.calc_aggregate(measures, qrels, run)
    qrels_df, run_df = _frames(qrels, run)

    def refused(self):
        raise AssertionError("a frame converted row by row")

    monkeypatch.setattr(ir_measures.util.QrelsConverter, "as_dict_of_dict", refused)
    monkeypatch.setattr(ir_measures.util.RunConverter, "as_dict_of_dict", refused)
    assert per_query(provider, measures, qrels_df, run_df) == want
    assert provider.calc_aggregate(measures, qrels_df, run_df) == want_agg


def _duplicate_run_forms():
    """One run listing document a twice for query 1, in each form ir_measures reads
    (a dict cannot hold a duplicate)."""
    rows = [("1", "a", 1.0), ("1", "b", 2.0), ("1", "a", 3.0)]
    forms = {
        "list": lambda: [ir_measures.ScoredDoc(*r) for r in rows],
        "generator": lambda: (ir_measures.ScoredDoc(*r) for r in rows),
    }
    try:
        import pandas as pd

        forms["frame"] = lambda: pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    except ImportError:
        pass
    return forms


@pytest.mark.parametrize("form", sorted(_duplicate_run_forms()))
@pytest.mark.parametrize("measure", [AP, P @ 1, NumRet])
def test_a_document_listed_twice_in_the_run_is_an_error(form, measure):
    # ranklens refuses a document listed twice for a query in every form, as
    # evaluate does; ir_measures' conversion keeps the last score, so its value
    # depends on the row order (P@1 is 1 with the rows as given, 0 reversed)
    qrels = {"1": {"a": 1, "b": 0}}
    run = _duplicate_run_forms()[form]()
    with pytest.raises(RanklensInputError, match="document 'a' is listed twice"):
        rl.RanklensProvider().calc_aggregate([measure], qrels, run)


@pytest.mark.parametrize("case", [0, 1, 2])
def test_calc_aggregate_is_the_base_classes(case):
    # RanklensEvaluator.calc_aggregate feeds each measure's aggregator the values
    # iter_calc yields, in its order, without a Metric each: the same bits.
    # Measures asked twice (NumQ, NumRel, which are also summed, not averaged) and
    # a qrels query missing from the run (its DEFAULT) included.
    qrels, run = CASES[case]
    measures = [*PYTREC, *TIES_ASCENDING, P @ 5, NumQ, NumRel]
    evaluator = rl.RanklensProvider().evaluator(measures, qrels)
    base = ir_measures.providers.Evaluator.calc_aggregate(evaluator, run)
    got = evaluator.calc_aggregate(run)
    assert got == base and list(got) == list(base)
    assert "5" in qrels and "5" not in run


# ---------------------------------------------------------------------------
# 2. The deviations listed in the module docstring
# ---------------------------------------------------------------------------


def test_deviation_ties_rr_at_k():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0, "b": 1.0}}
    # Tied: trec_eval ranks b (id descending) first, a second -> RR = 1/2, RR@5 = 1/2.
    # ir_measures' msmarco provider ranks a first for RR@5 -> 1; pytrec_eval RR -> 1/2.
    ref = REFERENCE.calc_aggregate([RR, RR @ 5, Judged @ 1], qrels, run)
    assert ref[RR] == 0.5 and ref[RR @ 5] == 1.0
    got = rl.RanklensProvider().calc_aggregate([RR, RR @ 5, Judged @ 1], qrels, run)
    assert got[RR] == 0.5 and got[RR @ 5] == 0.5
    # Judged@1 is 1 either way here (a and b are both judged).
    assert got[Judged @ 1] == ref[Judged @ 1] == 1.0


def test_deviation_ties_judged():
    qrels = {"1": {"a": 1}}
    run = {"1": {"a": 1.0, "b": 1.0}}
    # Id descending: b (unjudged) first -> Judged@1 = 0; the judged provider puts a first.
    assert REFERENCE.calc_aggregate([Judged @ 1], qrels, run)[Judged @ 1] == 1.0
    assert rl.RanklensProvider().calc_aggregate([Judged @ 1], qrels, run)[Judged @ 1] == 0.0


def test_deviation_float32_scores():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 1.0 + 1e-12, "b": 1.0}}
    # float64: a above b -> RR 1.  pytrec_eval: both round to 1.0f, tie, b first -> 1/2.
    assert REFERENCE.calc_aggregate([RR], qrels, run)[RR] == 0.5
    assert rl.RanklensProvider().calc_aggregate([RR], qrels, run)[RR] == 1.0


def test_deviation_iprec_recall_formatted_with_two_decimals():
    qrels = {"1": {d: 1 for d in "abcdefghij"}}  # R = 10
    run = {"1": {"a": 1.0, "x": 0.9, "b": 0.8, "c": 0.7}}
    # trec_eval 9.0.8: c = trunc(x * R + 0.9) relevant documents.  x = 0.109: c = 1 ->
    # interpolated precision at a (rank 1) = max(P@1..4) = 1.  ir_measures asks for
    # 0.11: c = 2 -> at b (rank 3): max(P@3, P@4) = max(2/3, 3/4) = 0.75.
    assert REFERENCE.calc_aggregate([IPrec @ 0.109], qrels, run)[IPrec @ 0.109] == 0.75
    provider = rl.RanklensProvider()
    assert provider.calc_aggregate([IPrec @ 0.109], qrels, run)[IPrec @ 0.109] == 1.0
    assert provider.calc_aggregate([IPrec @ 0.11], qrels, run)[IPrec @ 0.11] == 0.75


def test_deviation_rel_zero():
    qrels = {"1": {"a": 1, "b": -1, "c": 0}}
    run = {"1": {"b": 3.0, "c": 2.0, "a": 1.0}}
    with pytest.raises(TypeError):  # pytrec_eval: "relevance_level should be positive"
        REFERENCE.calc_aggregate([P(rel=0) @ 2], qrels, run)
    got = rl.RanklensProvider().calc_aggregate([P(rel=0) @ 2, AP(rel=0)], qrels, run)
    # Labels >= 0 relevant: c, a (R = 2); b (-1) not.  Ranking b, c, a.
    # P@2 = 1/2 (c).  AP = (1/2 + 2/3) / 2 = 7/12.
    assert got[P(rel=0) @ 2] == 0.5
    assert abs(got[AP(rel=0)] - 7 / 12) < TOL
    # A negative rel is left to the next provider.
    assert not rl.RanklensProvider().supports(P(rel=-1) @ 2)


def test_deviation_judged_on_an_empty_ranking():
    qrels = {"1": {"a": 1}}
    run = {"1": {}}
    with pytest.raises(ZeroDivisionError):
        REFERENCE.calc_aggregate([Judged @ 2], qrels, run)
    assert rl.RanklensProvider().calc_aggregate([Judged @ 2], qrels, run)[Judged @ 2] == 0.0


@pytest.mark.skipif(not HAS_PERL, reason="gdeval needs perl")
def test_deviation_err_grades_above_four():
    run = {"1": {"a": 2.0, "b": 1.0}}
    provider = rl.RanklensProvider()
    with pytest.raises(Exception):  # noqa: B017 - gdeval.pl dies: "format error"
        REFERENCE.calc_aggregate([ERR @ 2], {"1": {"a": 5, "b": 1}}, run)
    # Grade 5 counts as 4: R(4) = 15/16 at rank 1, R(1) = 1/16 at rank 2:
    # ERR@2 = 15/16 + (1 - 15/16) * (1/16) / 2 = 15/16 + 1/512.
    got = provider.calc_aggregate([ERR @ 2], {"1": {"a": 5, "b": 1}}, run)[ERR @ 2]
    assert abs(got - (15 / 16 + 1 / 512)) < TOL
    want = REFERENCE.calc_aggregate([ERR @ 2], {"1": {"a": 4, "b": 1}}, run)[ERR @ 2]
    assert abs(got - want) < GDEVAL_TOL


def test_deviation_pytrec_eval_invocation_sharing():
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 3.0, "x": 2.0, "b": 1.0}}  # x unjudged
    # NumRet = 3 retrieved.  ir_measures' pytrec_eval provider adds NumRet to the first
    # pytrec_eval run it has set up; after P(judged_only=True)@5 that run drops x -> 2.
    shared = ir_measures.pytrec_eval.evaluator([P(judged_only=True) @ 5, NumRet], qrels)
    assert shared.calc_aggregate(run)[NumRet] == 2.0
    alone = ir_measures.pytrec_eval.evaluator([NumRet], qrels)
    assert alone.calc_aggregate(run)[NumRet] == 3.0
    got = rl.RanklensProvider().calc_aggregate([P(judged_only=True) @ 5, NumRet], qrels, run)
    assert got[NumRet] == 3.0
    # nDCG after nDCG(gains={0: 5}): gains a=1, b=5 for both.  Ranking a, x, b:
    # DCG = 1/log2(2) + 5/log2(4) = 3.5; ideal b, a: 5 + 1/log2(3); without the gains
    # nDCG = 1 (a, the only gain, is first).
    ndcg_gains = nDCG(gains={0: 5})
    shared = ir_measures.pytrec_eval.evaluator([ndcg_gains, nDCG], qrels).calc_aggregate(run)
    assert abs(shared[nDCG] - 3.5 / (5 + 1 / math.log2(3))) < TOL
    got = rl.RanklensProvider().calc_aggregate([ndcg_gains, nDCG], qrels, run)
    assert got[nDCG] == 1.0
    assert abs(got[ndcg_gains] - 3.5 / (5 + 1 / math.log2(3))) < TOL


# ---------------------------------------------------------------------------
# 3. Pipeline, support, entry point
# ---------------------------------------------------------------------------


def test_install_puts_the_provider_first_once(installed):
    again = rl.install()
    assert again is installed
    providers = ir_measures.DefaultPipeline.providers
    assert providers[0] is installed
    assert sum(p.NAME == "ranklens" for p in providers) == 1
    assert ir_measures.providers.registry["ranklens"] is installed


def test_unsupported_measures_fall_through(installed):
    qrels, run = CASES[1]
    measures = [nDCG @ 5, P(rel=-1) @ 2]
    got = ir_measures.calc_aggregate(measures, qrels, run)
    want = REFERENCE.calc_aggregate(measures, qrels, run)
    assert {str(k): v for k, v in got.items()} == pytest.approx(
        {str(k): v for k, v in want.items()}, abs=TOL
    )
    evaluator = ir_measures.evaluator(measures, qrels)
    assert isinstance(evaluator.evaluators[0], rl.RanklensEvaluator)
    assert list(evaluator.evaluators[0].measures) == [nDCG @ 5]


@pytest.mark.parametrize(
    "measure",
    [
        nDCG(dcg="exp-log2", gains={1: 2}),
        nDCG(gains={-1: 2}),
        P(rel=-1) @ 5,
        ir_measures.RBP,
    ],
)
def test_unsupported(measure):
    provider = rl.RanklensProvider()
    assert not provider.supports(measure)
    with pytest.raises(ValueError, match="unsupported measure"):
        provider.evaluator([measure], {"1": {"a": 1}})


def test_entry_point_declared():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    with pyproject.open("rb") as f:
        entry_points = tomllib.load(f)["project"]["entry-points"]["ir_measures.provider"]
    module, _, attr = entry_points["ranklens"].partition(":")
    assert module == rl.__name__ and getattr(rl, attr) is rl.RanklensProvider


# -- intent-aware measures: the same values as ir_measures' pyndeval provider ------


def _diversity_case(seed):
    import random

    from ir_measures.util import GenericQrel, ScoredDoc

    rnd = random.Random(seed)
    qrels, run = [], []
    for q in ["1", "2", "3"]:
        docs = [f"d{i}" for i in range(rnd.randint(1, 9))]
        for d in docs:
            for s in rnd.sample("abcd", rnd.randint(1, 3)):
                qrels.append(GenericQrel(q, d, rnd.choice([0, 1, 1, 2]), s))
        if q != "3" or rnd.random() < 0.5:
            ranked = rnd.sample([*docs, "u1", "u2"], rnd.randint(0, len(docs) + 2))
            run += [ScoredDoc(q, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
    return qrels, run


@pytest.mark.parametrize("seed", range(25))
def test_diversity_equals_the_pyndeval_provider(seed):
    pytest.importorskip("pyndeval")
    qrels, run = _diversity_case(seed)
    measures = [
        ir_measures.alpha_nDCG @ 10,
        ir_measures.alpha_nDCG(alpha=0.25) @ 5,
        ir_measures.alpha_DCG @ 3,
        ir_measures.ERR_IA @ 20,
        ir_measures.nERR_IA @ 5,
        ir_measures.NRBP(beta=0.75),
        ir_measures.nNRBP,
        ir_measures.AP_IA(rel=2),
        ir_measures.P_IA @ 5,
        ir_measures.StRecall @ 2,
    ]
    ours = rl.RanklensProvider()
    theirs = ir_measures.providers.registry["pyndeval"]
    assert all(ours.supports(m) for m in measures)
    got = {(r.query_id, str(r.measure)): r.value for r in ours.iter_calc(measures, qrels, run)}
    # One measure a call: ir_measures' pyndeval provider hands the run iterator to the
    # first of its pyndeval invocations (one per rel, alpha, beta, judged_only) only,
    # so the others come out as DEFAULT (0).
    want = {
        (r.query_id, str(r.measure)): r.value
        for m in measures
        for r in theirs.iter_calc([m], qrels, run)
    }
    for key, value in want.items():
        if math.isnan(value):  # nNRBP with no relevant subtopic: pyndeval's 0/0
            value = 0.0
        assert got[key] == pytest.approx(value, abs=1e-9), key
    # Queries pyndeval skips (missing from the run) get DEFAULT from ranklens.
    assert all(got[k] == 0.0 for k in set(got) - set(want))
    # judged_only: ir_measures' pyndeval provider fails on it (it indexes its run
    # iterator as a dict); pyndeval on the run without unjudged documents instead.
    judged = {(q.query_id, q.doc_id) for q in qrels}
    kept = [r for r in run if (r.query_id, r.doc_id) in judged]
    m = ir_measures.nERR_IA @ 5
    mine = {r.query_id: r.value for r in ours.iter_calc([m(judged_only=True)], qrels, run)}
    for r in theirs.iter_calc([m], qrels, kept):
        assert mine[r.query_id] == pytest.approx(r.value, abs=1e-9), r.query_id


def test_measures_remembered_by_their_parameters():
    # The provider remembers each measure's ranklens metric: measures that differ
    # only in a parameter (gains, rel, cutoff) keep their own values, asked in turn.
    from ir_measures import P, nDCG

    from ranklens.compat.ir_measures import RanklensProvider

    qrels = [ir_measures.Qrel("q", "a", 2), ir_measures.Qrel("q", "b", 1)]
    run = [ir_measures.ScoredDoc("q", "b", 2.0), ir_measures.ScoredDoc("q", "a", 1.0)]
    p = RanklensProvider()
    low = nDCG(gains={0: 0, 1: 1, 2: 1})
    high = nDCG(gains={0: 0, 1: 1, 2: 9})
    for _ in range(2):
        got = p.calc_aggregate([low, high, P(rel=2) @ 1, P @ 1], qrels, run)
        assert got[low] == 1.0  # b (gain 1) then a (gain 1): ideal
        assert got[high] < 1.0  # b (1) before a (9)
        assert got[P(rel=2) @ 1] == 0.0 and got[P @ 1] == 1.0


# -- every input form is read once ----------------------------------------------


def _forms(records: list, fields: tuple[str, ...]) -> dict:
    """The same records in each form ir_measures reads: a list of named tuples, a
    generator, an iterator, a dict of dicts (records without subtopics) and a
    pandas frame.  Each value is a factory (a generator is used up once read)."""
    forms = {
        "list": lambda: list(records),
        "generator": lambda: (r for r in records),
        "iterator": lambda: iter(list(records)),
    }
    if "iteration" not in fields:
        key = fields[2]
        forms["dict"] = lambda: {
            q: {r.doc_id: getattr(r, key) for r in records if r.query_id == q}
            for q in dict.fromkeys(r.query_id for r in records)
        }
    try:
        import pandas as pd

        forms["frame"] = lambda: pd.DataFrame([r._asdict() for r in records])
    except ImportError:
        pass
    return forms


def _read_once_case():
    from ir_measures.util import Qrel, ScoredDoc

    qrels = [
        Qrel("1", "a", 2, "s1"),
        Qrel("1", "b", 1, "s2"),
        Qrel("1", "c", 0, "s1"),
        Qrel("2", "d", 1, "s1"),
        Qrel("2", "e", -1, "s2"),
    ]
    run = [
        ScoredDoc("1", "b", 3.0),
        ScoredDoc("1", "a", 2.0),
        ScoredDoc("1", "x", 1.0),
        ScoredDoc("2", "e", 2.0),
        ScoredDoc("2", "d", 1.0),
    ]
    return qrels, run


READ_ONCE_MEASURES = [
    AP,
    nDCG @ 10,
    P(rel=2) @ 5,
    Judged @ 10,
    SetF,
    IPrec @ 0.5,
    ir_measures.alpha_nDCG @ 20,
    ir_measures.NRBP,
]


@pytest.mark.parametrize("qrels_form", ["list", "generator", "iterator", "frame"])
@pytest.mark.parametrize("run_form", ["list", "generator", "iterator", "dict", "frame"])
def test_every_input_form_is_read_once(installed, qrels_form, run_form):
    # ir_measures' own idiom, calc_aggregate(measures, read_trec_qrels(path), run),
    # hands over generators: the provider reads each input once, and every form
    # gives the values of the list form (each family, the intent-aware included)
    qrels, run = _read_once_case()
    qforms = _forms(qrels, qrels[0]._fields)
    rforms = _forms(run, run[0]._fields)
    if qrels_form not in qforms or run_form not in rforms:
        pytest.skip("pandas is not installed")
    want = rl.RanklensProvider().calc_aggregate(READ_ONCE_MEASURES, list(qrels), list(run))
    got = ir_measures.calc_aggregate(READ_ONCE_MEASURES, qforms[qrels_form](), rforms[run_form]())
    assert got == want
    per = per_query(
        rl.RanklensProvider(), READ_ONCE_MEASURES, qforms[qrels_form](), rforms[run_form]()
    )
    assert per == per_query(rl.RanklensProvider(), READ_ONCE_MEASURES, list(qrels), list(run))


def test_read_trec_qrels_idiom(installed, tmp_path):
    # the idiom of the bug report: a qrels file read by ir_measures as a generator
    pytest.importorskip("pyndeval")
    path = tmp_path / "qrels"
    path.write_text("1 0 a 1\n1 0 b 0\n")
    run = {"1": {"a": 2.0, "b": 1.0}}
    measure = ir_measures.alpha_nDCG @ 20
    got = ir_measures.calc_aggregate([measure], ir_measures.read_trec_qrels(str(path)), run)
    want = REFERENCE.calc_aggregate([measure], ir_measures.read_trec_qrels(str(path)), run)
    assert got == want == {measure: 1.0}


@pytest.mark.parametrize("form", ["list", "generator", "dict"])
def test_empty_qrels_give_no_values(installed, form):
    # as ir_measures' providers: no per-query value, NaN aggregates (their
    # aggregators' mean of nothing), never an error
    measures = [AP, nDCG @ 10, ir_measures.alpha_nDCG @ 20]
    empty = {"list": [], "generator": (q for q in []), "dict": {}}[form]
    run = {"1": {"a": 1.0}}
    assert list(ir_measures.iter_calc(measures, empty, run)) == []
    empty = {"list": [], "generator": (q for q in []), "dict": {}}[form]
    got = ir_measures.calc_aggregate(measures, empty, run)
    assert set(got) == set(measures) and all(math.isnan(v) for v in got.values())
