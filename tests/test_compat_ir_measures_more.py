"""``ranklens.compat.ir_measures`` on the measures of ir_measures' accuracy, compat
and cwl_eval providers: equal per query to those providers on generated cases (ties,
graded and negative labels, unjudged documents, empty rankings, cutoffs past the
ranking), and each deviation the provider's module docstring lists.
"""

from __future__ import annotations

import random

import pytest

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import Accuracy, Compat  # noqa: E402

from ranklens.compat import ir_measures as rl  # noqa: E402

TOL = 1e-9
OURS = rl.RanklensProvider()


def make_case(seed: int) -> tuple[dict, dict]:
    """Labels -1..3, 0..8 judged and 0..12 retrieved documents a query, some
    unjudged; scores with ties on even seeds; qrels query 5 has no run, run query 7
    no qrels, query 6 an empty ranking."""
    rng = random.Random(seed)
    qrels: dict = {}
    run: dict = {}
    for q in range(1, 9):
        qid = str(q)
        docs = [f"d{i}" for i in range(12)]
        if q != 7:
            judged = rng.sample(docs, rng.randint(1, 8))
            qrels[qid] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        if q == 6:
            run[qid] = {}
        elif q != 5:
            ranked = rng.sample([*docs, "x1", "x2"], rng.randint(1, 12))
            if seed % 2 == 0:
                run[qid] = {d: float(rng.randint(0, 3)) for d in ranked}
            else:
                scores = rng.sample(range(1000), len(ranked))
                run[qid] = {d: s / 8 for d, s in zip(ranked, scores)}
    return qrels, run


CASES = [make_case(seed) for seed in range(24)]


def untie_like_trec(run: dict) -> dict:
    """The run re-scored n..1 in ranklens's order (score descending, doc id
    descending): no ties, every score positive."""
    out = {}
    for qid, docs in run.items():
        order = sorted(docs, key=lambda d: (docs[d], d), reverse=True)
        out[qid] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


def ours(measures, qrels, run) -> dict:
    out = {}
    for m in OURS.iter_calc(measures, qrels, run):
        key = (m.query_id, str(m.measure))
        assert key not in out, key
        out[key] = m.value
    return out


def theirs(provider: str, measure, qrels, run) -> dict:
    """One query at a time, so a query the provider divides by zero on (raising
    ZeroDivisionError) is recorded as such (``None``)."""
    p = ir_measures.providers.registry[provider]
    out: dict = {}
    for qid in qrels:
        if qid not in run:
            continue
        try:
            got = [m for m in p.iter_calc([measure], {qid: qrels[qid]}, {qid: run[qid]})]
        except ZeroDivisionError:
            out[(qid, str(measure))] = None
            continue
        for m in got:
            out[(m.query_id, str(m.measure))] = m.value
    return out


# -- Accuracy ---------------------------------------------------------------------

ACCURACY = [Accuracy, Accuracy @ 3, Accuracy @ 20, Accuracy(rel=2), Accuracy(rel=3) @ 5]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_accuracy_equals_the_accuracy_provider(case):
    qrels, run = CASES[case]
    assert all(OURS.supports(m) for m in ACCURACY)
    got = ours(ACCURACY, qrels, run)
    for measure in ACCURACY:
        want = theirs("accuracy", measure, qrels, untie_like_trec(run))
        mine = {k: v for k, v in got.items() if k[1] == str(measure)}
        # the queries ir_measures reports (or divides by zero on), no others
        assert mine.keys() == want.keys(), measure
        for key, value in want.items():
            # no non-relevant retrieved: ir_measures divides by zero, ranklens gives 0
            assert mine[key] == pytest.approx(0.0 if value is None else value, abs=TOL), key


def test_accuracy_aggregate_skips_the_queries_without_a_relevant_retrieved():
    qrels = {"1": {"a": 1, "b": 0}, "2": {"a": 0}, "3": {"a": 1}}
    run = {"1": {"b": 2.0, "a": 1.0, "c": 0.5}, "2": {"a": 1.0, "z": 0.5}}
    want = ir_measures.providers.registry["accuracy"].calc_aggregate([Accuracy], qrels, run)
    got = OURS.calc_aggregate([Accuracy], qrels, run)
    assert got[Accuracy] == pytest.approx(want[Accuracy], abs=TOL) == 0.5
    assert {m.query_id for m in OURS.iter_calc([Accuracy], qrels, run)} == {"1"}


def test_deviation_accuracy_without_a_non_relevant_retrieved():
    qrels = {"1": {"a": 1, "b": 2}}
    run = {"1": {"a": 2.0, "b": 1.0}}
    with pytest.raises(ZeroDivisionError):
        ir_measures.providers.registry["accuracy"].calc_aggregate([Accuracy], qrels, run)
    assert OURS.calc_aggregate([Accuracy], qrels, run)[Accuracy] == 0.0


def test_accuracy_at_rel_zero_is_left_to_the_next_provider():
    assert not OURS.supports(Accuracy(rel=0))


# -- Compat -----------------------------------------------------------------------

COMPAT = [Compat, Compat(p=0.8), Compat(normalize=False), Compat(p=0.5, normalize=False)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_compat_equals_the_compat_provider(case):
    qrels, run = CASES[case]
    assert all(OURS.supports(m) for m in COMPAT)
    got = ours(COMPAT, qrels, run)
    untied = untie_like_trec(run)
    for measure in COMPAT:
        want = theirs("compat", measure, qrels, untied)
        for key, value in want.items():
            if value is None:  # an empty ranking, nothing labelled > 0: 0 / 0
                assert got[key] == 0.0, key
            else:
                assert got[key] == pytest.approx(value, abs=TOL), key
        # qrels queries missing from the run: DEFAULT
        for qid in set(qrels) - set(run):
            assert got[(qid, str(measure))] == 0.0


def test_deviation_compat_negative_scores():
    # The compat provider scores an unretrieved document 0.0 when it orders the
    # ideal ranking, so "c" (unretrieved) goes above "b" (retrieved, score -1):
    # ideal c, b instead of b, c.
    qrels = {"1": {"a": 2, "b": 1, "c": 1}}
    run = {"1": {"a": 1.0, "b": -1.0}}
    p = 0.5
    want = (1 + p * 2 / 2 + p * p * 2 / 3) / (1 + p + p * p)  # O(1)=1, O(2)=2, O(3)=2
    best = (1 + p * 2 / 2 + p * p * 3 / 3) / (1 + p + p * p)
    got = OURS.calc_aggregate([Compat(p=p)], qrels, run)[Compat(p=p)]
    assert got == pytest.approx(want / best, abs=TOL)
    ref = ir_measures.providers.registry["compat"].calc_aggregate([Compat(p=p)], qrels, run)
    assert ref[Compat(p=p)] < got


# -- the C/W/L measures (cwl_eval) ----------------------------------------------

CWL = [
    ir_measures.RBP(rel=1),
    ir_measures.RBP(rel=2, p=0.5),
    ir_measures.RBP(rel=1, p=0.95),
    ir_measures.SDCG(max_rel=3) @ 5,
    ir_measures.SDCG(max_rel=3) @ 20,
    ir_measures.SDCG(min_rel=1, max_rel=2) @ 3,
    ir_measures.SDCG(min_rel=-1, max_rel=3) @ 5,
    ir_measures.BPM(max_rel=3) @ 5,
    ir_measures.BPM(T=2.0, max_rel=3) @ 20,
    ir_measures.NERR8(max_rel=3) @ 5,
    ir_measures.NERR8(max_rel=2) @ 20,
    ir_measures.NERR9(max_rel=3) @ 10,
    ir_measures.NERR10(max_rel=3),
    ir_measures.NERR10(p=0.5, max_rel=2),
    ir_measures.NERR11(max_rel=3),
    ir_measures.NERR11(T=2.0, max_rel=3),
    ir_measures.INST(max_rel=3),
    ir_measures.INST(T=2.0, max_rel=3),
    ir_measures.INSQ(max_rel=3),
    ir_measures.INSQ(T=3.0, max_rel=3),
]


@pytest.fixture(scope="module")
def cwl_eval():
    pytest.importorskip("cwl")
    import logging

    logging.getLogger("ir_measures.cwl_eval").disabled = True
    return "cwl_eval"


@pytest.mark.parametrize("case", range(len(CASES)))
def test_cwl_equals_the_cwl_eval_provider(cwl_eval, case):
    qrels, run = CASES[case]
    assert all(OURS.supports(m) for m in CWL)
    got = ours(CWL, qrels, run)
    untied = untie_like_trec(run)
    for measure in CWL:
        want = theirs(cwl_eval, measure, qrels, untied)
        assert want, measure
        for key, value in want.items():
            assert got[key] == pytest.approx(value, abs=TOL), key


def _top(run: dict, k: int) -> dict:
    return {q: dict(list(docs.items())[:k]) for q, docs in untie_like_trec(run).items()}


@pytest.mark.parametrize("case", range(0, len(CASES), 3))
@pytest.mark.parametrize("k", [1, 3, 20])
def test_rbp_at_k_is_cwl_eval_on_the_top_k(cwl_eval, case, k):
    qrels, run = CASES[case]
    for measure in (ir_measures.RBP(rel=1), ir_measures.RBP(rel=2, p=0.9)):
        got = ours([measure @ k], qrels, run)
        want = theirs(cwl_eval, measure, qrels, _top(run, k))
        for (qid, _), value in want.items():
            assert got[(qid, str(measure @ k))] == pytest.approx(value, abs=TOL), qid


@pytest.mark.parametrize(
    "measure",
    [
        ir_measures.RBP,  # graded RBP: ir_measures names no gain scale for it
        ir_measures.RBP(rel=0),  # cwl_eval counts negative labels relevant there
        ir_measures.SDCG(max_rel=0) @ 5,  # min_rel < max_rel needed
        ir_measures.INST(T=0.0, max_rel=3),
    ],
)
def test_cwl_left_to_the_next_provider(measure):
    assert not OURS.supports(measure)


# -- intent-aware measures without a cutoff -----------------------------------------


def _diversity_case(seed):
    from ir_measures.util import GenericQrel, ScoredDoc

    rnd = random.Random(seed)
    qrels, run = [], []
    for q in ["1", "2", "3"]:
        docs = [f"d{i}" for i in range(rnd.randint(1, 9))]
        for d in docs:
            for s in rnd.sample("abcd", rnd.randint(1, 3)):
                qrels.append(GenericQrel(q, d, rnd.choice([0, 1, 1, 2]), s))
        ranked = rnd.sample([*docs, "u1", "u2"], rnd.randint(1, len(docs) + 2))
        run += [ScoredDoc(q, d, float(len(ranked) - i)) for i, d in enumerate(ranked)]
    return qrels, run


@pytest.mark.parametrize("seed", range(12))
def test_intent_aware_without_cutoff_is_pyndeval_at_the_ranking_length(seed):
    # pyndeval needs a cutoff; without one, ranklens scores the whole ranking: the
    # measure at k = the ranking's length (the ideal ranking cut there too).
    pytest.importorskip("pyndeval")
    qrels, run = _diversity_case(seed)
    theirs_ = ir_measures.providers.registry["pyndeval"]
    whole = [
        ir_measures.alpha_nDCG,
        ir_measures.alpha_DCG(alpha=0.25),
        ir_measures.ERR_IA,
        ir_measures.nERR_IA(rel=2),
        ir_measures.P_IA,
        ir_measures.StRecall,
    ]
    assert all(OURS.supports(m) for m in whole)
    got = {(r.query_id, str(r.measure)): r.value for r in OURS.iter_calc(whole, qrels, run)}
    for qid in {r.query_id for r in run}:
        q_run = [r for r in run if r.query_id == qid]
        for m in whole:
            want = {r.query_id: r.value for r in theirs_.iter_calc([m @ len(q_run)], qrels, q_run)}
            assert got[(qid, str(m))] == pytest.approx(want[qid], abs=TOL), (qid, m)


# -- judged_only where ir_measures' providers take none ----------------------------


def _judged_run(qrels: dict, run: dict) -> dict:
    """The run without unjudged documents (not in the qrels, or a negative label),
    as trec_eval's -J."""
    return {
        q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0}
        for q, docs in run.items()
    }


@pytest.mark.parametrize("case", range(0, len(CASES), 2))
def test_rr_at_k_judged_only_is_msmarco_on_the_judged_run(case):
    qrels, run = CASES[case]
    measures = [ir_measures.RR(judged_only=True) @ 3, ir_measures.RR(rel=2, judged_only=True) @ 5]
    assert all(OURS.supports(m) for m in measures)
    got = ours(measures, qrels, run)
    judged = _judged_run(qrels, untie_like_trec(run))
    for m in measures:
        plain = m(judged_only=False)
        want = theirs("msmarco", plain, qrels, judged)
        for (qid, _), value in want.items():
            assert got[(qid, str(m))] == pytest.approx(value, abs=TOL), (qid, m)


@pytest.mark.skipif(not ir_measures.gdeval.is_available(), reason="gdeval needs perl")
@pytest.mark.parametrize("case", range(0, len(CASES), 4))
def test_exp_log2_ndcg_judged_only_is_gdeval_on_the_judged_run(case):
    qrels, run = CASES[case]
    m = ir_measures.nDCG(dcg="exp-log2", judged_only=True) @ 5
    assert OURS.supports(m)
    got = ours([m], qrels, run)
    judged = _judged_run(qrels, untie_like_trec(run))
    want = theirs("gdeval", m(judged_only=False), qrels, judged)
    for (qid, _), value in want.items():
        assert got[(qid, str(m))] == pytest.approx(value, abs=0.5e-5 + 1e-12), qid


# -- every measure of ir_measures ----------------------------------------------------

# Each name's instance with its required parameters; every other parameter default.
_REQUIRED = {"max_rel": 3, "recall": 0.5}


def test_the_provider_supports_every_ir_measures_measure():
    unsupported = []
    for name, measure in sorted(ir_measures.measures.registry.items()):
        params = {k: v for k, v in _REQUIRED.items() if k in measure.SUPPORTED_PARAMS}
        if name == "RBP":
            params["rel"] = 1  # graded RBP: no gain scale in ir_measures (see the module)
        m = measure(**params) if params else measure
        if measure.SUPPORTED_PARAMS.get("cutoff") and measure.SUPPORTED_PARAMS["cutoff"].required:
            m = m @ 5
        if not OURS.supports(m):
            unsupported.append(name)
    assert unsupported == []
    assert not OURS.supports(ir_measures.RBP)


# -- trec_eval's measures ir_measures lacks ------------------------------------------

from ranklens.compat import ir_measures_trec as trec  # noqa: E402

TREC = {
    trec.Rndcg: "rndcg",
    trec.Rndcg(rel=2): "rndcg(rel=2)",
    trec.IPrecAvg: "iprec_avg(version=9)",
    trec.RelP @ 5: "relative_precision@5",
    trec.RelP(rel=2): "relative_precision(rel=2)",
    trec.GMAP: "gm_map",
    trec.GMBpref(rel=2): "gm_bpref(rel=2)",
    trec.binG: "bin_g",
    trec.G: "g",
    trec.G(gains={0: 1, 2: 5}): "g(gain0=1,gain2=5)",
    trec.nDCGRel: "ndcg_rel",
    trec.Utility(a=2, b=-1.5): "utility(a=2,b=-1.5)",
    trec.RprecMult(mult=0.5): "rprec_mult(mult=0.5)",
    trec.NumNonRelJudgedRet(rel=2): "num_nonrel_judged_ret(rel=2)",
}


@pytest.mark.parametrize("case", range(0, len(CASES), 3))
def test_trec_measures_are_the_ranklens_families(case):
    import ranklens

    qrels, run = CASES[case]
    measures = list(TREC)
    assert all(OURS.supports(m) for m in measures)
    got = ours(measures, qrels, run)
    res = ranklens.evaluate(qrels, run, list(TREC.values()))
    scored = set(qrels) & set(run)
    for m, name in TREC.items():
        per_query = res.per_query(res.metrics[list(TREC.values()).index(name)].name)
        for qid in qrels:
            want = per_query[qid] if qid in scored else 0.0
            assert got[(qid, str(m))] == pytest.approx(want, abs=TOL), (qid, m)
    agg = OURS.calc_aggregate(measures, qrels, run)
    assert agg[trec.GMAP] == pytest.approx(res["gm_map"], abs=TOL)
    assert agg[trec.NumNonRelJudgedRet(rel=2)] == res["num_nonrel_judged_ret(rel=2)"]


@pytest.mark.parametrize("case", range(1, len(CASES), 4))
def test_trec_measures_equal_pytrec_eval(case):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = CASES[case]  # odd cases: distinct scores, exact in float32
    qrels = {q: docs for q, docs in qrels.items() if any(v >= 0 for v in docs.values())}
    names = {"Rndcg": trec.Rndcg, "binG": trec.binG, "relative_P_5": trec.RelP @ 5}
    names |= {"11pt_avg": trec.IPrecAvg, "Rprec_mult_0.50": trec.RprecMult(mult=0.5)}
    names |= {"utility": trec.Utility, "G": trec.G, "ndcg_rel": trec.nDCGRel}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels,
        {"Rndcg", "binG", "relative_P.5", "11pt_avg", "Rprec_mult.0.5", "utility", "G", "ndcg_rel"},
    )
    want = evaluator.evaluate({q: d for q, d in run.items() if d})
    got = ours(list(names.values()), qrels, run)
    for qid, values in want.items():
        for name, m in names.items():
            assert got[(qid, str(m))] == pytest.approx(values[name], abs=1e-9), (qid, name)


def test_install_registers_the_trec_measures():
    saved = list(ir_measures.DefaultPipeline.providers)
    try:
        rl.install()
        rl.install()  # twice: no error
        assert ir_measures.parse_measure("RelP(rel=2)@10") == trec.RelP(rel=2) @ 10
        assert ir_measures.parse_measure("GMAP") == trec.GMAP
        qrels, run = CASES[1]
        got = ir_measures.calc_aggregate([trec.GMAP, ir_measures.AP], qrels, run)
        assert got[ir_measures.AP] == pytest.approx(
            OURS.calc_aggregate([ir_measures.AP], qrels, run)[ir_measures.AP]
        )
    finally:
        ir_measures.DefaultPipeline.providers[:] = saved


# -- the C/W/L residuals (cwl_eval -r; ir_measures reports none) ----------------------


@pytest.mark.parametrize("case", range(0, len(CASES), 3))
def test_cwl_residuals_equal_cwl_eval(cwl_eval, case):
    from cwl.cwl_eval import RankingMaker
    from cwl.ruler import cwl_ruler as ruler
    from ir_measures.providers.cwl_eval import IrmQrelHandler

    import ranklens

    qrels, run = CASES[case]
    ours_ = {
        "rbp_cwl(p=0.5,residual=1)": (lambda: ruler.RBPCWLMetric(0.5), (1, None, None)),
        "inst(max_rel=3,residual=1)": (lambda: ruler.INSTCWLMetric(1.0), (None, 0, 3)),
        "nerr9(max_rel=2,residual=1)@5": (lambda: ruler.NERReq9CWLMetric(5), (None, 0, 2)),
        "bpm(T=2,max_rel=3,residual=1)@6": (lambda: ruler.BPMCWLMetric(2.0, 6), (None, 0, 3)),
        "sdcg(max_rel=3,residual=1)@4": (lambda: ruler.NDCGCWLMetric(4), (None, 0, 3)),
    }
    res = ranklens.evaluate(qrels, run, list(ours_))
    untied = untie_like_trec(run)
    for name, (make, handler_args) in ours_.items():
        handler = IrmQrelHandler(*handler_args)
        for qid, docs in qrels.items():
            for doc, label in docs.items():
                handler.put_value(qid, doc, max(label, 0))
        got = res.per_query(res.metrics[list(ours_).index(name)].name)
        for qid in qrels:
            maker = RankingMaker(qid, handler, None, 1.0, 0.0, 1.0, 1.0, 1000)
            for doc in sorted(untied.get(qid, {}), key=lambda d: -untied[qid][d]):
                maker.add(doc, "_")
            metric = make()
            metric.residuals = True
            metric.measure(maker.get_ranking())
            assert got[qid] == pytest.approx(metric.residual_expected_utility, abs=TOL), (qid, name)
