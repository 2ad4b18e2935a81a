"""``ties="expected"``: the expected value over every ordering of tied documents.

1. Hand-computed examples (both backends).
2. The Rust closed forms (``src/core/metrics/expected.rs``) against the Python brute
   force (``ranklens.metrics._expected``: enumerate every ordering, average) to 1e-12
   on hypothesis-generated queries full of ties, cutoffs inside tie groups, cuts
   (``max_docs``) inside tie groups, ``judged_only``, every kind of label.
3. Errors: families without an expected form, grouped qrels whose members tie, the
   brute-force guard, a bad ``ties`` name.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels
from ranklens._names import FAMILIES, parse_metrics
from ranklens.errors import RanklensInputError, UnknownMetricError
from ranklens.metrics import evaluate_reference
from ranklens.metrics._expected import EXPECTED_FAMILIES, MAX_ORDERINGS

TOL = 1e-12
BACKENDS = ["rust", "python"]


def per_query(qrels, run, metrics, backend, **options):
    res = ranklens.evaluate(qrels, run, metrics, backend=backend, ties="expected", **options)
    return {m: res.per_query(m) for m in res.names}


# ---------------------------------------------------------------------------
# 1. Hand-computed examples
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_tied_one_relevant(backend) -> None:
    # a (relevant) and b tie at ranks 1-2: RR = (1 + 1/2) / 2, P@1 = 1/2.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    names = ["mrr", "precision@1", "precision@2", "hit_rate@1", "map", "dcg", "bpref"]
    got = per_query(qrels, run, names, backend)
    assert got["mrr"]["q"] == pytest.approx(0.75, abs=TOL)
    assert got["precision@1"]["q"] == pytest.approx(0.5, abs=TOL)
    assert got["precision@2"]["q"] == pytest.approx(0.5, abs=TOL)
    assert got["hit_rate@1"]["q"] == pytest.approx(0.5, abs=TOL)
    assert got["map"]["q"] == pytest.approx(0.75, abs=TOL)
    # mean gain 1/2 over the discounts of ranks 1 and 2
    assert got["dcg"]["q"] == pytest.approx(0.5 * (1 + 1 / math.log2(3)), abs=TOL)
    # bpref: the relevant one is above the non-relevant one half the time
    assert got["bpref"]["q"] == pytest.approx(0.5, abs=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_three_tied_after_a_miss(backend) -> None:
    # x (unjudged) first, then a, b, c tied with a and b relevant (R = 3: z unretrieved).
    qrels = {"q": {"a": 1, "b": 2, "c": 0, "z": 1}}
    run = {"q": {"x": 2.0, "a": 1.0, "b": 1.0, "c": 1.0}}
    got = per_query(qrels, run, ["mrr", "precision@2", "recall@3", "ndcg@2", "map"], backend)
    # First relevant of the group at its 1st position w.p. 2/3, 2nd w.p. 1/3.
    assert got["mrr"]["q"] == pytest.approx(2 / 3 * 1 / 2 + 1 / 3 * 1 / 3, abs=TOL)
    assert got["precision@2"]["q"] == pytest.approx(2 / 3 / 2, abs=TOL)
    assert got["recall@3"]["q"] == pytest.approx(2 / 3 * 2 / 3, abs=TOL)
    # DCG@2: rank 2 holds the group's mean gain (1 + 2 + 0) / 3; ideal 2, 1.
    ideal = 2 + 1 / math.log2(3)
    assert got["ndcg@2"]["q"] == pytest.approx(1 / math.log2(3) / ideal, abs=TOL)
    # AP: sum over group positions j = 0, 1, 2 (ranks 2, 3, 4) of
    # (2/3) (1 + j * 1/2) / rank, over R = 3.
    ap = sum(2 / 3 * (1 + j / 2) / (j + 2) for j in range(3)) / 3
    assert got["map"]["q"] == pytest.approx(ap, abs=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_group_straddling_max_docs(backend) -> None:
    # a, b, c tied, max_docs = 1: each is the one scored document w.p. 1/3.
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    names = ["num_ret", "precision", "recall", "mrr"]
    got = per_query(qrels, run, names, backend, max_docs=1)
    assert got["num_ret"]["q"] == pytest.approx(1.0, abs=TOL)
    for m in ("precision", "recall", "mrr"):
        assert got[m]["q"] == pytest.approx(1 / 3, abs=TOL), m
    # judged_only: c (unjudged) takes a slot and is then dropped.
    got = per_query(qrels, run, names, backend, max_docs=1, judged_only=True)
    assert got["num_ret"]["q"] == pytest.approx(2 / 3, abs=TOL)
    assert got["mrr"]["q"] == pytest.approx(1 / 3, abs=TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_ties_equals_the_fixed_order(backend) -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 2}, "p": {"x": 1}}
    run = {"q": {"a": 0.3, "b": 0.9, "c": 0.5, "d": 0.1}}
    names = ["ndcg@3", "map", "bpref", "mrr", "precision@2", "f1", "r_precision"]
    exp = ranklens.evaluate(qrels, run, names, backend=backend, ties="expected")
    trec = ranklens.evaluate(qrels, run, names, backend=backend)
    assert exp.values.ravel().tolist() == pytest.approx(trec.values.ravel().tolist(), abs=TOL)
    assert exp.missing_queries == ["p"]


def test_large_tie_group_is_fast_and_exact() -> None:
    # 3000 documents all tied, 1000 relevant: P@k = 1/3 at any k; hit_rate@1 = 1/3.
    n = 3000
    qrels = {"q": {f"d{i}": int(i % 3 == 0) for i in range(n)}}
    run = {"q": {f"d{i}": 0.0 for i in range(n)}}
    names = ["precision@10", "hit_rate@1", "mrr", "map", "bpref", "ndcg@100", "num_rel_ret@7"]
    res = ranklens.evaluate(qrels, run, names, ties="expected", max_docs=1500, judged_only=True)
    assert res["precision@10"] == pytest.approx(1 / 3, abs=TOL)
    assert res["hit_rate@1"] == pytest.approx(1 / 3, abs=TOL)
    assert res["num_rel_ret@7"] == pytest.approx(7 / 3, abs=TOL)
    assert all(math.isfinite(v) for v in res.values.ravel())


# ---------------------------------------------------------------------------
# 2. Rust closed forms == Python brute force
# ---------------------------------------------------------------------------

LABELS = [None, None, -1, 0, 0, 1, 1, 2, 0.5, 1.5, 2.25]
SCORES = [3.5, 2.0, 1.0, 0.0, -0.5, -2.25]
# Orderings per query: the brute force enumerates them for every metric.
BUDGET = 2_000


@st.composite
def tied_query(draw):
    """(labels, scores) of one query: a few groups of equal scores, up to 7 each."""
    groups = draw(st.integers(1, 4))
    group_scores = draw(
        st.lists(st.sampled_from(SCORES), min_size=groups, max_size=groups, unique=True)
    )
    orderings = 1
    docs, scores = [], {}
    for score in group_scores:
        largest = max(s for s in range(1, 8) if orderings * math.factorial(s) <= BUDGET)
        size = draw(st.integers(1, largest))
        orderings *= math.factorial(size)
        for _ in range(size):
            doc = f"d{len(docs)}"
            docs.append(doc)
            scores[doc] = score
    labels: dict[str, float] = {}
    for doc in docs:
        label = draw(st.sampled_from(LABELS))
        if label is not None:
            labels[doc] = label
    # Judged documents that were not retrieved.
    for i in range(draw(st.integers(0, 3))):
        labels[f"u{i}"] = draw(st.sampled_from([-1, 0, 1, 2, 0.5]))
    return labels, scores


@st.composite
def tied_inputs(draw):
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, unique=True)):
        labels, scores = draw(tied_query())
        qrels[qid] = labels
        if draw(st.integers(0, 5)) > 0:  # sometimes missing from the run
            run[qid] = scores
    cutoffs = draw(st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
    return qrels, run, cutoffs


_CUTTABLE = [
    "precision",
    "recall",
    "f1",
    "hits",
    "hit_rate",
    "mrr",
    "map",
    "ndcg",
    "ndcg_burges",
    "dcg",
    "num_ret",
    "num_rel_ret",
]


def metric_names(cutoffs: list[int]) -> list[str]:
    return [
        *_CUTTABLE,
        "r_precision",
        "bpref",
        "num_rel",
        *(f"{f}@{k}" for f in _CUTTABLE for k in cutoffs),
        f"precision(rel=2)@{cutoffs[0]}",
        "map(rel=0.5)",
        "bpref(rel=2)",
        "r_precision(rel=2)",
        f"mrr(rel=2)@{cutoffs[0]}",
        f"hit_rate(rel=2)@{cutoffs[0]}",
    ]


OPTIONS = st.fixed_dictionaries(
    {
        "judged_only": st.booleans(),
        "max_docs": st.sampled_from([None, None, 1, 2, 3, 4, 6, 9]),
        "relevance_level": st.sampled_from([1, 1, 2]),
    }
)


# Random levels above every label are part of the input space: no warning wanted.
@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(inputs=tied_inputs(), options=OPTIONS)
@example(
    inputs=({"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}, [1]),
    options={"judged_only": False, "max_docs": None, "relevance_level": 1},
)
@example(
    # One group of 7 cut by max_docs, judged_only dropping members in the cut.
    inputs=(
        {"q": {"a": 1, "b": 0, "c": 2, "d": -1, "e": 0.5, "z": 1}},
        {"q": {x: 1.0 for x in "abcdefg"} | {"h": 2.0}},
        [2, 4],
    ),
    options={"judged_only": True, "max_docs": 5, "relevance_level": 1},
)
def test_rust_closed_forms_match_brute_force(inputs, options) -> None:
    qrels, run, cutoffs = inputs
    names = metric_names(cutoffs)
    level = options["relevance_level"]
    kw = {"judged_only": options["judged_only"], "max_docs": options["max_docs"]}
    ref = evaluate_reference(qrels, run, names, level, ties="expected", **kw)
    res = ranklens.evaluate(qrels, run, names, relevance_level=level, ties="expected", **kw)
    for m in parse_metrics(names):
        got = res.per_query(m.name)
        assert set(got) == set(ref)
        for qid, want in ref.items():
            assert got[qid] == pytest.approx(want[m.name], abs=TOL), (qid, m.name, options)


# ---------------------------------------------------------------------------
# 3. Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_family_without_expected_form_is_rejected_up_front(backend) -> None:
    others = sorted(
        f for f in set(FAMILIES) - EXPECTED_FAMILIES if FAMILIES[f].cutoff != "required"
    )
    if not others:
        pytest.skip("every family has an expected form")
    family = others[0]
    with pytest.raises(UnknownMetricError, match="ties='expected' is not available for"):
        ranklens.evaluate(
            {"q": {"a": 1}}, {"q": {"a": 1.0}}, [family], backend=backend, ties="expected"
        )


def test_expected_families_mirror_the_registry() -> None:
    assert set(FAMILIES) >= EXPECTED_FAMILIES


def test_grouped_qrels_with_tied_members_is_an_error() -> None:
    qrels = Qrels.from_groups({"q": [["a", "b"], ["c"]]})
    with pytest.raises(RanklensInputError, match="qrels group"):
        ranklens.evaluate(qrels, {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, ["mrr"], ties="expected")
    # Ties that cannot change the relabelling are fine: a satisfies group 0 first.
    res = ranklens.evaluate(
        qrels, {"q": {"a": 2.0, "b": 1.0, "c": 1.0}}, ["recall@2", "mrr"], ties="expected"
    )
    assert res["recall@2"] == pytest.approx(0.75, abs=TOL)
    assert res["mrr"] == pytest.approx(1.0, abs=TOL)


def test_brute_force_guard() -> None:
    run = {"q": {f"d{i}": 1.0 for i in range(9)}}  # 9! = 362880 orderings
    assert math.factorial(9) > MAX_ORDERINGS
    with pytest.raises(RanklensInputError, match="brute-force limit"):
        evaluate_reference({"q": {"d0": 1}}, run, ["mrr"], ties="expected")
    # Groups past the max_docs cut are not enumerated.
    run["q"]["top"] = 5.0
    out = evaluate_reference({"q": {"top": 1}}, run, ["mrr"], ties="expected", max_docs=1)
    assert out["q"]["mrr"] == 1.0


def test_bad_ties_name() -> None:
    with pytest.raises(RanklensInputError, match="'trec', 'input', 'expected', 'best' or 'worst'"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["mrr"], ties="random")
