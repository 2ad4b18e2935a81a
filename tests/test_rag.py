"""Grouped ground truth (RAG), per-row scoring and the signal metrics.

1. The worked example of ``Qrels.from_groups`` by hand, both backends.
2. Groups of one == ordinary qrels, every metric family (hypothesis).
3. Rust == the reference backend's own group relabelling (hypothesis).
4. The input forms of ``from_groups`` and ``Qrels.groups()``.
5. ``score`` / ``score_batch`` / ``score_frame``, cutoff lists, bad input.
6. ``idcg`` and ``is_hit``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, RanklensInputError
from ranklens._names import FAMILIES

log2 = math.log2
TOL = 1e-12


def _all_metric_names() -> list[str]:
    names = []
    for fam in FAMILIES.values():
        if fam.subtopics:  # diversity metrics: tests/test_diversity.py
            continue
        if fam.cutoff in ("optional", "required"):
            names.append(f"{fam.name}@3")
        if fam.cutoff in ("optional", "none"):
            names.append(fam.name)
    return names


ALL_METRICS = _all_metric_names()

GT = {"q1": [["test-1", "test-2"], ["test-3"]]}
RUN = {"q1": ["test-1", "pred-1", "test-2", "pred-3"]}


# ---------------------------------------------------------------------------
# 1. The worked example
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_worked_example_by_hand(backend):
    # Relabelled ranking: test-1 satisfies group 0 (label 1); pred-1 is not in the
    # qrels; test-2 is a later member of the satisfied group 0 (label 0); pred-3 is
    # not in the qrels.  R = 2 groups; group 1 (test-3) is never retrieved.
    res = ranklens.evaluate(
        Qrels.from_groups(GT),
        RUN,
        ["recall@4", "precision@4", "mrr", "map", "ndcg", "ndcg@4", "hits@4", "num_rel"],
        backend=backend,
    )
    assert res["recall@4"] == 0.5  # 1 of 2 groups
    assert res["precision@4"] == 0.25  # 1 satisfied group in 4 ranks
    assert res["mrr"] == 1.0  # first satisfied group at rank 1
    # AP: precision 1/1 at the one relevant rank, over R = 2 groups.
    assert res["map"] == pytest.approx(1 / 2, abs=TOL)
    # DCG = 1/log2(2) = 1; ideal: one member per group, [1, 1]: 1 + 1/log2(3).
    want = 1 / (1 + 1 / log2(3))
    assert res["ndcg"] == pytest.approx(want, abs=TOL)
    assert res["ndcg@4"] == pytest.approx(want, abs=TOL)
    assert res["hits@4"] == 1.0
    assert res["num_rel"] == 2.0


def test_worked_example_reference_relabel():
    from ranklens.metrics._groups import relabel

    ranked = relabel(RUN["q1"], [(1.0, ["test-1", "test-2"]), (1.0, ["test-3"])])
    assert ranked.labels == (1.0, None, 0.0, None)


# ---------------------------------------------------------------------------
# 2. Groups of one == ordinary qrels
# ---------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(8)]


@st.composite
def plain_inputs(draw):
    nq = draw(st.integers(1, 4))
    qrels, run = {}, {}
    for q in range(nq):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=6))
        qrels[f"q{q}"] = {d: draw(st.integers(-1, 3)) for d in judged}
        ranked = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        if draw(st.booleans()):
            run[f"q{q}"] = {d: float(draw(st.integers(0, 3))) for d in ranked}
        else:
            run[f"q{q}"] = ranked
    return qrels, run


SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(inputs=plain_inputs(), judged_only=st.booleans(), max_docs=st.sampled_from([None, 3]))
def test_singleton_groups_equal_plain_qrels(inputs, judged_only, max_docs):
    qrels, run = inputs
    grouped = Qrels.from_groups(
        {q: [[d] for d in docs] for q, docs in qrels.items()},
        labels={q: list(docs.values()) for q, docs in qrels.items()},
    )
    opts = {"judged_only": judged_only, "max_docs": max_docs}
    a = ranklens.evaluate(Qrels(qrels), run, ALL_METRICS, **opts)
    b = ranklens.evaluate(grouped, run, ALL_METRICS, **opts)
    assert a.query_ids == b.query_ids
    np.testing.assert_array_equal(a.values, b.values)


# ---------------------------------------------------------------------------
# 3. Rust == reference on grouped ground truth
# ---------------------------------------------------------------------------


@st.composite
def grouped_inputs(draw):
    nq = draw(st.integers(1, 4))
    gt, labels, run = {}, {}, {}
    for q in range(nq):
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=7))
        cuts = sorted(draw(st.lists(st.integers(1, max(1, len(docs))), max_size=3)))
        groups, start = [], 0
        for c in [*cuts, len(docs)]:
            if min(c, len(docs)) > start:
                groups.append(docs[start:c])
                start = c
        gt[f"q{q}"] = groups
        labels[f"q{q}"] = [draw(st.sampled_from([-1, 0, 1, 2, 1.5])) for _ in groups]
        ranked = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        # distinct scores: which member satisfies a group must not hang on a tie
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return gt, labels, run


# Random levels above every label are part of the input space: no warning wanted.
@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@SETTINGS
@given(
    inputs=grouped_inputs(),
    judged_only=st.booleans(),
    max_docs=st.sampled_from([None, 2, 5]),
    level=st.sampled_from([1, 2]),
)
def test_rust_matches_reference_on_groups(inputs, judged_only, max_docs, level):
    gt, labels, run = inputs
    qrels = Qrels.from_groups(gt, labels=labels)
    opts = {"judged_only": judged_only, "max_docs": max_docs, "relevance_level": level}
    rust = ranklens.evaluate(qrels, run, ALL_METRICS, **opts)
    ref = ranklens.evaluate(qrels, run, ALL_METRICS, backend="python", **opts)
    assert rust.query_ids == ref.query_ids
    for j, m in enumerate(rust.metrics):
        for i, qid in enumerate(rust.query_ids):
            assert rust.values[i, j] == pytest.approx(ref.values[i, j], abs=TOL), (qid, m.name)


def test_reference_backend_does_not_flatten_groups():
    # Flattened, test-2 would be relevant too: recall 2/3, precision 2/4.
    res = ranklens.evaluate(Qrels.from_groups(GT), RUN, ["recall", "P@4"], backend="python")
    assert res["recall"] == 0.5
    assert res["P@4"] == 0.25


def test_expected_ties_with_groups_is_rust_only():
    with pytest.raises(RanklensInputError, match="Rust backend"):
        ranklens.evaluate(Qrels.from_groups(GT), RUN, ["P@2"], backend="python", ties="expected")


# ---------------------------------------------------------------------------
# 4. Input forms and groups()
# ---------------------------------------------------------------------------


def test_dict_and_list_forms_agree():
    a = Qrels.from_groups({"q1": GT["q1"], "q2": [["x"], "y"]})
    b = Qrels.from_groups([GT["q1"], [["x"], "y"]], query_ids=["q1", "q2"])
    assert a.groups() == b.groups()
    assert a.groups()["q2"] == [(1.0, ["x"]), (1.0, ["y"])]
    run = {**RUN, "q2": ["y", "x"]}
    ra = ranklens.evaluate(a, run, ["ndcg", "recall@1"])
    rb = ranklens.evaluate(b, run, ["ndcg", "recall@1"])
    np.testing.assert_array_equal(ra.values, rb.values)
    # default query ids are the row numbers
    c = Qrels.from_groups([GT["q1"]])
    assert c.query_ids == ["0"]


def test_labels_per_group():
    qrels = Qrels.from_groups(GT, labels={"q1": [2, 3]})
    assert qrels.groups()["q1"] == [(2.0, ["test-1", "test-2"]), (3.0, ["test-3"])]
    # ranking labels: [2, None, 0, None]; ideal [3, 2]
    res = ranklens.evaluate(qrels, RUN, ["dcg", "idcg", "ndcg"])
    assert res["dcg"] == 2.0
    assert res["idcg"] == pytest.approx(3 + 2 / log2(3), abs=TOL)
    assert res["ndcg"] == pytest.approx(2 / (3 + 2 / log2(3)), abs=TOL)
    ref = ranklens.evaluate(qrels, RUN, ["dcg", "idcg", "ndcg"], backend="python")
    np.testing.assert_allclose(ref.values, res.values, rtol=0, atol=TOL)
    with pytest.raises(RanklensInputError, match="labels for 2 groups"):
        Qrels.from_groups(GT, labels={"q1": [1]})


def test_plain_qrels_groups_are_singletons():
    assert Qrels({"q": {"a": 2, "b": 0}}).groups() == {"q": [(2.0, ["a"]), (0.0, ["b"])]}


@pytest.mark.parametrize(
    ("gt", "match"),
    [
        ({"q": [[]]}, "group 0 is empty"),
        ({"q": [["a", ""]]}, "empty document id"),
        ({"q": [["a", 1.5]]}, "str or an int"),
        ({"q": [["a"], ["a"]]}, "in groups 0 and 1"),
        ({"q": "abc"}, "list of groups"),
    ],
)
def test_bad_groups(gt, match):
    with pytest.raises(RanklensInputError, match=match):
        Qrels.from_groups(gt)


# ---------------------------------------------------------------------------
# 5. score, score_batch, score_frame
# ---------------------------------------------------------------------------


def test_score_one_item_all_forms():
    got = ranklens.score(["d3", "d1", "d7"], ["d1", "d2"], ["P@2", "recall@3", "mrr"])
    assert got == {"precision@2": 0.5, "recall@3": 0.5, "mrr": 0.5}
    graded = ranklens.score(["d3", "d1"], {"d1": 2, "d3": 0, "d9": 1}, ["ndcg", "dcg@2"])
    assert graded["dcg@2"] == pytest.approx(2 / log2(3), abs=TOL)
    assert graded["ndcg"] == pytest.approx((2 / log2(3)) / (2 + 1 / log2(3)), abs=TOL)
    grouped = ranklens.score(RUN["q1"], GT["q1"], ["recall@4", "P@4", "mrr"])
    assert grouped == {"recall@4": 0.5, "precision@4": 0.25, "mrr": 1.0}
    scored = ranklens.score({"a": 0.1, "b": 0.9}, ["a"], "mrr")
    assert scored == {"mrr": 0.5}


def test_score_batch_equals_evaluate():
    rng = np.random.default_rng(7)
    retrieved, relevant = [], []
    for _ in range(300):
        retrieved.append([f"d{i}" for i in rng.permutation(20)[: rng.integers(0, 10)]])
        relevant.append({f"d{i}": int(rng.integers(0, 3)) for i in rng.permutation(20)[:5]})
    metrics = ["ndcg@5,10", "map", "P@5", "recall@10", "mrr", "bpref"]
    out = ranklens.score_batch(retrieved, relevant, metrics)
    res = ranklens.evaluate(
        {str(i): r for i, r in enumerate(relevant)},
        {str(i): r for i, r in enumerate(retrieved)},
        metrics,
    )
    for m in res.metrics:
        per = res.per_query(m)
        want = np.array([per[str(i)] for i in range(len(retrieved))])
        np.testing.assert_array_equal(out[m.name], want)
        assert out[m.name].shape == (300,)


def test_cutoff_list_and_k():
    out = ranklens.score_batch(
        [["a", "b", "c"]], [["c"]], ["ndcg", "P@1", "bpref", "mrr@2,3"], k=[1, 3]
    )
    assert list(out) == [
        "ndcg@1",
        "ndcg@3",
        "precision@1",
        "bpref",
        "mrr@2",
        "mrr@3",
    ]
    assert out["ndcg@1"][0] == 0.0
    assert out["ndcg@3"][0] == pytest.approx(1 / log2(4), abs=TOL)
    assert ranklens.score_batch([["a"]], [["a"]], "P", k=2) == {"precision@2": [0.5]}
    with pytest.raises(RanklensInputError, match="positive"):
        ranklens.score_batch([["a"]], [["a"]], "P", k=[0])


def test_empty_rows_and_none():
    out = ranklens.score_batch([None, [], ["a"]], [["a"], ["a"], None], ["recall", "num_rel"])
    np.testing.assert_array_equal(out["recall"], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(out["num_rel"], [1.0, 1.0, 0.0])
    assert ranklens.score_batch([], [], "P@5") == {"precision@5": pytest.approx([])}


@pytest.mark.parametrize(
    ("retrieved", "relevant", "match"),
    [
        ([["a"], ["b"]], [["a"]], "2 retrieved rows but 1 ground-truth rows"),
        ([["a"], ["b", 1.5]], [["a"], ["b"]], "row 1"),
        ([["a"], ["b", ""]], [["a"], ["b"]], "row 1: an empty document id"),
        ([["a"], ["b"]], [["a"], [[]]], "row 1: group 0 is empty"),
        ([["a", "a"]], [["a"]], 'row 0: document "a" is retrieved twice'),
        ([["a"]], [{"a": "x"}], "must be a number"),
        (["ab"], [["a"]], "row 0: the retrieved list .* must be a list, got str"),
        ("ab", [["a"]], "one entry per row"),
    ],
)
def test_score_batch_bad_input_names_the_row(retrieved, relevant, match):
    with pytest.raises(RanklensInputError, match=match):
        ranklens.score_batch(retrieved, relevant, ["P@1"])


def test_score_frame_pandas_and_polars():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "retrieved_ids": [RUN["q1"], ["x", "y"], ["z"]],
            "retrieval_gt": [GT["q1"], [["y"]], [["q"]]],
        },
        index=[10, 11, 12],
    )
    out = ranklens.score_frame(df, metrics=["recall@4", "mrr"], semantics="trec")
    assert list(out.index) == [10, 11, 12]
    assert out["recall@4"].tolist() == [0.5, 1.0, 0.0]
    assert out["mrr"].tolist() == [1.0, 0.5, 0.0]
    pl = pytest.importorskip("polars")
    out_pl = ranklens.score_frame(pl.from_pandas(df), metrics=["recall@4", "mrr"], semantics="trec")
    assert isinstance(out_pl, pl.DataFrame)
    assert out_pl["mrr"].to_list() == [1.0, 0.5, 0.0]
    with pytest.raises(RanklensInputError, match="no column 'nope'"):
        ranklens.score_frame(df, retrieved_col="nope", semantics="trec")


def test_numpy_rows_as_from_parquet():
    retrieved = np.array([np.array(["a", "b"], dtype=object)], dtype=object)
    relevant = [np.array([np.array(["b"], dtype=object)], dtype=object)]
    assert ranklens.score_batch(retrieved, relevant, "mrr")["mrr"].tolist() == [0.5]


# ---------------------------------------------------------------------------
# 6. Signals
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_signal_metrics(backend):
    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 3}}
    run = {"q": ["c", "a", "x"]}
    names = [
        "dcg@2",
        "idcg@2",
        "idcg",
        "hits@3",
        "num_ret@2",
        "num_rel",
        "first_rel_rank",
        "is_hit@1",
        "is_hit@2",
    ]
    res = ranklens.evaluate(qrels, run, names, backend=backend)
    assert res["dcg@2"] == pytest.approx(2 / log2(3), abs=TOL)
    assert res["idcg@2"] == pytest.approx(3 + 2 / log2(3), abs=TOL)
    assert res["idcg"] == pytest.approx(3 + 2 / log2(3) + 1 / 2, abs=TOL)
    assert res["hits@3"] == 1.0
    assert res["num_ret@2"] == 2.0
    assert res["num_rel"] == 3.0
    assert res["first_rel_rank"] == 2.0
    assert res["is_hit@1"] == 0.0
    assert res["hit_rate@2"] == 1.0  # is_hit is an alias of hit_rate
    assert ranklens.parse_metric("is_hit@5").name == "hit_rate@5"
