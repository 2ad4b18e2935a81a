"""Gain-based trec_eval measures (binG, G, ndcg_rel, Rndcg, custom nDCG gains, rbp,
rbp_resid) and measures beyond trec_eval (err, judged, auc, first_rel_rank, fallout).

1. Name parsing (canonical, trec_eval and ir_measures spellings).
2. Hand-computed values (reference backend and Rust).
3. trec_eval 10.0's own published per-query output (its test suite, 4 decimals).
4. Rust == reference to 1e-12 on hypothesis inputs (ties, unjudged, negative and
   float labels, empty rankings, -J / -M / input ties).
5. Reference == pytrec_eval (trec_eval 9.0.8) per query to 1e-12 for binG, G,
   ndcg_rel, Rndcg and ndcg at relevance levels 1 and 2.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens._names import parse_metric, parse_metrics
from ranklens.errors import UnknownMetricError
from ranklens.metrics import aggregate, evaluate_reference

try:
    import pytrec_eval
except ImportError:  # pragma: no cover - optional test dependency
    pytrec_eval = None

TOL = 1e-12
DATA = Path(__file__).parent / "data"
log2 = math.log2


def _rust_available() -> bool:
    try:
        import ranklens._ranklens  # noqa: F401
    except ImportError:
        return False
    return True


needs_rust = pytest.mark.skipif(not _rust_available(), reason="native module not built")

# ---------------------------------------------------------------------------
# 1. Names
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg.1=3,2=9,4=4.5", "ndcg(gain1=3,gain2=9,gain4=4.5)"),
        ("ndcg_1=3,2=9,4=4.5", "ndcg(gain1=3,gain2=9,gain4=4.5)"),  # as trec_eval prints it
        ("nDCG(gain1=3)@10", "ndcg(gain1=3)@10"),
        ("ndcg(gain01=3)", "ndcg(gain1=3)"),
        ("dcg.0=1", "dcg(gain0=1)"),
        ("binG", "bin_g"),
        ("bin_g(rel=2)", "bin_g(rel=2)"),
        ("G", "g"),
        ("G.1=3.5,2=9", "g(gain1=3.5,gain2=9)"),
        ("ndcg_rel.2=5", "ndcg_rel(gain2=5)"),
        ("Rndcg", "rndcg"),
        ("Rndcg.1=2", "rndcg(gain1=2)"),
        ("rbp", "rbp"),
        ("rbp.p=0.8", "rbp(p=0.8)"),
        ("rbp.p=0.8,2=0.5", "rbp(gain2=0.5,p=0.8)"),
        ("RBP(p=0.8)@10", "rbp(p=0.8)@10"),
        ("rbp(p=0.9)", "rbp"),
        ("rbp_resid", "rbp_resid"),
        ("rbp_resid.p=0.5", "rbp_resid(p=0.5)"),
        ("rbp_resid_p=0.5", "rbp_resid(p=0.5)"),
        ("ERR@20", "err@20"),
        ("err(gmax=4)@5", "err(gmax=4)@5"),
        ("Judged@10", "judged@10"),
        ("auc", "auc"),
        ("auc(rel=2)@100", "auc(rel=2)@100"),
        ("first_rel_rank@10", "first_rel_rank@10"),
        ("fallout@10", "fallout@10"),
        ("fall_out", "fallout"),
    ],
)
def test_spellings(text: str, canonical: str) -> None:
    assert parse_metric(text).name == canonical
    assert parse_metric(canonical).name == canonical


@pytest.mark.parametrize(
    "text",
    [
        "ndcg.-1=3",  # gain labels are non-negative integers
        "ndcg.1=x",
        "ndcg_cut.1=3",  # trec_eval's ndcg_cut takes no gains
        "binG.1=3",  # binary
        "ndcg_burges(gain1=3)",
        "precision(gain1=2)@5",
        "bin_g@10",  # no cutoff for the trec_eval-only measures
        "G@10",
        "Rndcg@5",
        "ndcg_rel@5",
        "err(rel=2)",  # graded: no rel=
        "rbp(q=0.5)",
    ],
)
def test_bad_spellings(text: str) -> None:
    with pytest.raises(UnknownMetricError):
        parse_metrics(text)


# ---------------------------------------------------------------------------
# 2. Hand-computed values
# ---------------------------------------------------------------------------

# Ranking: x (not in qrels), b (1), c (0), a (2), e (-1: in the pool, unjudged);
# d (1) is never retrieved.  Level 1: relevant b, a, d (R = 3); judged non-relevant c.
HAND_QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 1, "e": -1}}
HAND_RUN = {"q": {"x": 5.0, "b": 4.0, "c": 3.0, "a": 2.0, "e": 1.0}}
_IDCG1, _IDCG2, _IDCG3 = 2.0, 2 + 1 / log2(3), 2 + 1 / log2(3) + 1 / 2  # ideal 2, 1, 1
_DCG = 1 / log2(3) + 2 / log2(5)  # DCG_4 = DCG_5
HAND = {
    # b: 1 non-relevant above (x); a: 2 (x, c).  Divided by R = 3.
    "bin_g": (1 / log2(3) + 1 / log2(4)) / 3,
    "bin_g(rel=2)": (1 / log2(5)) / 1,  # a: x, b, c above
    # S/C per rank: (0, 2), (1, 3) -> 1/log2(4), (1, 4), (3, 5) -> 2/log2(4), (3, 6)
    "g": (1 / log2(4) + 2 / log2(4)) / 4,
    "ndcg": _DCG / _IDCG3,
    "ndcg(gain1=3,gain2=1)": (3 / log2(3) + 1 / log2(5)) / (3 + 3 / log2(3) + 1 / 2),
    "dcg(gain0=2)": 1 / log2(3) + 2 / log2(4) + 2 / log2(5),
    # positive gains of the judged: b, d -> 3, a -> 1 (c gains 0): 3, 3, 1
    "idcg(gain1=3,gain2=1)": 3 + 3 / log2(3) + 1 / 2,
    "idcg(gain1=3,gain2=1)@2": 3 + 3 / log2(3),
    # relevant (gain > 0) at ranks 2 and 4, d never retrieved (scores the final nDCG)
    "ndcg_rel": ((1 / log2(3)) / _IDCG2 + _DCG / _IDCG3 + _DCG / _IDCG3) / 3,
    # R levels at j = 1 (gain 2 ends) and j = 3; n = 5 >= P + 2: extra point at n
    "rndcg": (0 / _IDCG1 + (1 / log2(3)) / _IDCG3 + _DCG / _IDCG3) / 3,
    "rndcg(rel=3)": 0.0,  # no relevant document at level 3
    # labels up to 2 -> gain' = label / 2; p = 0.9
    "rbp": 0.1 * (0.5 * 0.9 + 1.0 * 0.9**3),
    "rbp(p=0.5)@3": 0.5 * (0.5 * 0.5),
    "rbp(gain1=1,gain2=1)": 0.1 * (0.9 + 0.9**3),  # binary RBP
    # unjudged at ranks 1 and 5
    "rbp_resid": 0.9**5 + 0.1 * (1 + 0.9**4),
    "rbp_resid@3": 0.9**3 + 0.1 * 1,
    # gmax = 2 (largest label of the qrels): R(1) = 1/4, R(2) = 3/4
    "err": 0.25 / 2 + 0.75 * 0.75 / 4,
    "err@3": 0.25 / 2,
    "err(gmax=1)": 0.5 / 2 + 0.5 * 0.5 / 4,  # label 2 clamped to 1
    "judged": 3 / 5,
    "judged@2": 1 / 2,
    "judged@10": 3 / 5,  # min(k, retrieved) = 5
    # b beats c; a is below c; d and c: c retrieved, so no tie.  1 / (3 * 1)
    "auc": 1 / 3,
    # top 1: b, a, d all unretrieved, c too: three ties -> 1.5 / 3
    "auc@1": 1.5 / 3,
    "first_rel_rank": 2.0,
    "first_rel_rank@1": 2.0,  # none in the top 1: k + 1
    "first_rel_rank(rel=2)": 4.0,
    "first_rel_rank(rel=3)": 6.0,  # none at all: num_ret + 1
    "fallout@2": 0.0,
    "fallout@3": 1.0,
    "fallout(rel=2)@3": 2 / 3,  # non-relevant at level 2: b, c, d
}


def test_hand_computed_reference() -> None:
    got = evaluate_reference(HAND_QRELS, HAND_RUN, list(HAND))["q"]
    for name, want in HAND.items():
        assert got[parse_metric(name).name] == pytest.approx(want, abs=TOL), name


@needs_rust
def test_hand_computed_rust() -> None:
    import ranklens

    res = ranklens.evaluate(HAND_QRELS, HAND_RUN, list(HAND))
    for name, want in HAND.items():
        assert res.per_query(name)["q"] == pytest.approx(want, abs=TOL), name


def test_err_gmax_is_the_whole_qrels_maximum() -> None:
    # q2 holds a label 4: gmax = 4 for q too.  R(2) = 3/16, R(1) = 1/16.
    qrels = {**HAND_QRELS, "q2": {"z": 4}}
    got = evaluate_reference(qrels, HAND_RUN, ["err"])["q"]["err"]
    assert got == pytest.approx((1 / 16) / 2 + (15 / 16) * (3 / 16) / 4, abs=TOL)
    assert evaluate_reference({"q": {"a": 0, "b": -1}}, HAND_RUN, ["err"])["q"]["err"] == 0.0


def test_empty_ranking() -> None:
    names = list(HAND)
    got = evaluate_reference(HAND_QRELS, {}, names)["q"]
    for name in names:
        m = parse_metric(name)
        want = 0.0
        if m.family == "first_rel_rank":
            want = float(m.k + 1) if m.k else 1.0
        if m.family == "auc":
            want = 0.5  # everything unretrieved: all pairs tied
        if m.family == "idcg":
            want = HAND[name]  # the ideal does not depend on the ranking
        assert got[m.name] == pytest.approx(want, abs=TOL), name


# ---------------------------------------------------------------------------
# 3. trec_eval 10.0's published output (its test suite)
# ---------------------------------------------------------------------------

TREC_NAMES = {
    "binG": "bin_g",
    "G": "g",
    "ndcg": "ndcg",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "rndcg",
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "ndcg_1=3,2=9,4=4.5": "ndcg(gain1=3,gain2=9,gain4=4.5)",
}


def _read_qrels(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        q, _, d, rel = line.split()
        out.setdefault(q, {})[d] = float(rel)
    return out


def _read_run(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        q, _, d, _, score, _ = line.split()
        out.setdefault(q, {})[d] = float(score)
    return out


def _expected(tag: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for line in (DATA / "trec_eval_10_gain_measures.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        t, name, qid, value = (x.strip() for x in line.split("\t"))
        if t == tag and qid != "all":
            out.setdefault(TREC_NAMES[name], {})[qid] = float(value)
    return out


TREC_CASES = [
    ("aq", "qrels.test", 1),
    ("aql", "qrels.rel_level", 2),  # graded labels 0..4 and -1, trec_eval -l2
    ("mp", "qrels.test", 1),
]


@pytest.mark.parametrize(("tag", "qrels_file", "level"), TREC_CASES)
@pytest.mark.parametrize("backend", ["python", "rust"])
def test_matches_trec_eval_10_output(tag: str, qrels_file: str, level: int, backend) -> None:
    if backend == "rust" and not _rust_available():
        pytest.skip("native module not built")
    import ranklens

    qrels = _read_qrels(DATA / qrels_file)
    run = _read_run(DATA / "results.test")
    expected = _expected(tag)
    assert expected
    res = ranklens.evaluate(qrels, run, list(expected), relevance_level=level, backend=backend)
    for name, per_query in expected.items():
        got = res.per_query(name)
        for qid, want in per_query.items():
            # trec_eval prints 4 decimals
            assert abs(got[qid] - want) <= 5e-5 + 1e-9, (name, qid, got[qid], want)


# ---------------------------------------------------------------------------
# 4. Rust == reference
# ---------------------------------------------------------------------------

DOC_IDS = ["a", "A", "b", "B", "ab", "d1", "d10", "d2", "e", "é", "z", "zz", "😀", "x y"]
QIDS = ["q1", "q2", "q10", "Q1"]
SCORES = [i / 4 for i in range(-4, 9)]  # exact in float32 (pytrec_eval)
INT_LABELS = [-1, 0, 1, 2, 3]
FLOAT_LABELS = [-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.25, 3]


@st.composite
def eval_inputs(draw, labels=INT_LABELS, levels=(1, 2)):
    """(qrels, run, relevance_level) with frequent ties and one-sided queries."""
    qids = draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=3))
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(qids):
        sides = ["both", "qrels"] if i == 0 else ["both", "both", "both", "qrels", "run"]
        side = draw(st.sampled_from(sides))
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=12))
        pool = draw(st.lists(st.sampled_from(SCORES), min_size=1, max_size=3))
        q_labels: dict[str, float] = {}
        q_scores: dict[str, float] = {}
        for doc in docs:
            where = draw(st.sampled_from(["judged", "retrieved", "both", "both"]))
            if where != "retrieved":
                q_labels[doc] = draw(st.sampled_from(labels))
            if where != "judged":
                q_scores[doc] = draw(st.sampled_from(pool))
        if side in ("both", "qrels"):
            qrels[qid] = q_labels
        if side in ("both", "run"):
            run[qid] = q_scores
    return qrels, run, draw(st.sampled_from(levels))


RUST_METRICS = [
    "bin_g",
    "bin_g(rel=2)",
    "g",
    "g(gain1=3,gain2=0.5)",
    "g(gain0=1,gain3=-1)",
    "ndcg_rel",
    "ndcg_rel(gain0=1,gain2=-1)",
    "rndcg",
    "rndcg(rel=2)",
    "rndcg(gain1=2,gain2=2)",
    "rndcg(gain0=0.5,gain3=1)",
    "ndcg",
    "ndcg(gain1=3,gain2=9)",
    "ndcg(gain1=3,gain2=9)@5",
    "ndcg(gain0=0.5,gain3=-2)@3",
    "dcg(gain2=10)",
    "dcg(gain2=10)@2",
    "idcg(gain2=10)",
    "idcg(gain0=0.5,gain3=-2)@3",
    "rbp",
    "rbp(p=0.5)@5",
    "rbp(gain1=0.5,gain3=1)",
    "rbp(gain1=-1)",
    "rbp(gain7=8)",
    "rbp(gain0=5)",
    "rbp_resid",
    "rbp_resid(p=0.8)@3",
    "err",
    "err@5",
    "err(gmax=2)@3",
    "judged",
    "judged@1",
    "judged@5",
    "auc",
    "auc@3",
    "auc(rel=2)",
    "first_rel_rank",
    "first_rel_rank@3",
    "first_rel_rank(rel=2)@5",
    "fallout",
    "fallout@5",
    "fallout(rel=2)@3",
]

OPTIONS = st.fixed_dictionaries(
    {
        "judged_only": st.booleans(),
        "max_docs": st.sampled_from([None, None, 1, 3, 7]),
        "ties": st.sampled_from(["trec", "trec", "input"]),
    }
)


# Random levels above every label are part of the input space: no warning wanted.
@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@needs_rust
@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(inputs=st.one_of(eval_inputs(), eval_inputs(labels=FLOAT_LABELS)), options=OPTIONS)
def test_rust_matches_reference(inputs, options) -> None:
    import ranklens

    qrels, run, level = inputs
    metrics = parse_metrics(RUST_METRICS)
    ref = evaluate_reference(qrels, run, metrics, relevance_level=level, **options)
    res = ranklens.evaluate(qrels, run, metrics, relevance_level=level, **options)
    for m in metrics:
        got = res.per_query(m.name)
        assert set(got) == set(ref), m.name
        for qid in ref:
            want = ref[qid][m.name]
            assert math.isfinite(want), (qid, m.name)
            assert got[qid] == pytest.approx(want, abs=TOL), (qid, m.name, options)
        agg = aggregate(m, (ref[qid][m.name] for qid in sorted(ref)))
        assert res[m.name] == pytest.approx(agg, rel=TOL, abs=TOL), m.name


# ---------------------------------------------------------------------------
# 5. Reference == pytrec_eval
# ---------------------------------------------------------------------------

PYTREC_NAMES = {"bin_g": "binG", "g": "G", "ndcg_rel": "ndcg_rel", "rndcg": "Rndcg", "ndcg": "ndcg"}


def _pytrec_evaluate(qrels, run, level, judged_only):
    """pytrec_eval per query, on the queries where it is well defined (see
    tests/test_reference.py: a non-empty ranking, a label >= 0, integer labels)."""
    pt_qrels = {
        q: {d: int(v) for d, v in docs.items()}
        for q, docs in qrels.items()
        if any(v >= 0 for v in docs.values()) and all(float(v).is_integer() for v in docs.values())
    }
    pt_run = {q: dict(docs) for q, docs in run.items() if docs and q in pt_qrels}
    if not pt_run:
        return {}
    evaluator = pytrec_eval.RelevanceEvaluator(
        pt_qrels, set(PYTREC_NAMES.values()), relevance_level=level,
        judged_docs_only_flag=judged_only,
    )  # fmt: skip
    return evaluator.evaluate(pt_run)


@pytest.mark.skipif(pytrec_eval is None, reason="pytrec_eval not installed")
@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(inputs=eval_inputs(), judged_only=st.booleans())
def test_matches_pytrec_eval(inputs, judged_only) -> None:
    qrels, run, level = inputs
    ours = evaluate_reference(qrels, run, list(PYTREC_NAMES), level, judged_only=judged_only)
    for qid, values in _pytrec_evaluate(qrels, run, level, judged_only).items():
        for name, pt_name in PYTREC_NAMES.items():
            assert ours[qid][name] == pytest.approx(values[pt_name], abs=TOL), (qid, name, level)


@pytest.mark.skipif(pytrec_eval is None, reason="pytrec_eval not installed")
@pytest.mark.parametrize("level", [1, 2])
def test_hand_case_matches_pytrec_eval(level) -> None:
    ours = evaluate_reference(HAND_QRELS, HAND_RUN, list(PYTREC_NAMES), level)["q"]
    theirs = _pytrec_evaluate(HAND_QRELS, HAND_RUN, level, False)["q"]
    for name, pt_name in PYTREC_NAMES.items():
        assert ours[name] == pytest.approx(theirs[pt_name], abs=TOL), name
