"""``ties="best"`` / ``"worst"`` on the id doors: equal scores ordered by label.

* hand-derived values on a small query, on both backends;
* the two backends agree (hypothesis), and for metrics that reward ranking
  higher labels higher, best >= trec >= worst (trec order is one ordering);
* the same data laid out as a matrix gives ``evaluate_dense``'s best / worst;
* the Scorer and ``score`` accept them; grouped qrels refuse them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, Scorer
from ranklens.errors import RanklensInputError

TOL = 1e-9

# Labels: a 2, b 1, c -1 (judged, below an unjudged 0); u not judged.
QRELS = {"q": {"a": 2.0, "b": 1.0, "c": -1.0}}
RUN = {"q": {"x": 3.0, "a": 1.0, "b": 1.0, "c": 1.0, "u": 1.0}}
HAND = ["mrr", "P@2", "hits@2", "map"]


@pytest.mark.parametrize("backend", ["python", "rust"])
def test_hand_values(backend) -> None:
    def run(ties: str) -> list[float]:
        res = ranklens.evaluate(QRELS, RUN, HAND, ties=ties, backend=backend)
        return [res[m.name] for m in res.metrics]

    # trec: x u c b a -> relevant at 4, 5; worst: x c u b a, the same ranks.
    trec = [1 / 4, 0.0, 0.0, (1 / 4 + 2 / 5) / 2]
    assert run("trec") == pytest.approx(trec)
    assert run("worst") == pytest.approx(trec)
    # best: x a b u c -> relevant at 2, 3.
    assert run("best") == pytest.approx([1 / 2, 1 / 2, 1.0, (1 / 2 + 2 / 3) / 2])
    # The cut comes after the order: best keeps a in the top 2.
    res = ranklens.evaluate(QRELS, RUN, ["mrr"], ties="best", max_docs=2, backend=backend)
    assert res["mrr"] == pytest.approx(1 / 2)
    # judged_only drops x, u (not judged) and c (negative) after the order: b a.
    res = ranklens.evaluate(QRELS, RUN, ["mrr"], ties="worst", judged_only=True, backend=backend)
    assert res["mrr"] == pytest.approx(1.0)
    # graded, a and b tied: best is the ideal order, worst b then a.
    run = {"q": {"a": 1.0, "b": 1.0}}
    res = ranklens.evaluate(QRELS, run, ["ndcg@2"], ties="best", backend=backend)
    assert res["ndcg@2"] == pytest.approx(1.0)
    ideal = 2 + 1 / np.log2(3)  # gain: the label; a then b
    res = ranklens.evaluate(QRELS, run, ["ndcg@2"], ties="worst", backend=backend)
    assert res["ndcg@2"] == pytest.approx((1 + 2 / np.log2(3)) / ideal)


@pytest.mark.parametrize("backend", ["python", "rust"])
def test_grouped_qrels_refuse_best_and_worst(backend) -> None:
    qrels = Qrels.from_groups({"q": [["a", "b"], ["c"]]})
    run = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}
    for ties in ("best", "worst"):
        with pytest.raises(RanklensInputError, match="grouped qrels"):
            ranklens.evaluate(qrels, run, ["mrr"], ties=ties, backend=backend)


# Metrics for which higher labels ranked higher never lower the value.
MONOTONE = [
    "precision@3",
    "precision",
    "recall@3",
    "recall",
    "hits@5",
    "mrr",
    "mrr@3",
    "map",
    "map@5",
    "ndcg",
    "ndcg@3",
    "ndcg_burges@5",
    "dcg@5",
    "r_precision",
    "num_rel_ret@3",
]
DOCS = list("abcdefghij")


@st.composite
def tied_inputs(draw, negative=True):
    """(qrels, run) with few distinct scores, so most documents tie."""
    labels = [-1.0, 0.0, 1.0, 2.0, 3.0] if negative else [0.0, 1.0, 2.0, 3.0]
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for qid in ("q1", "q2", "q3"):
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=9))
        pool = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=1, max_size=2))
        qrels[qid] = {}
        run[qid] = {}
        for d in docs:
            where = draw(st.sampled_from(["judged", "retrieved", "both", "both"]))
            if where != "retrieved":
                qrels[qid][d] = draw(st.sampled_from(labels))
            if where != "judged":
                run[qid][d] = draw(st.sampled_from(pool))
    return qrels, run


OPTIONS = st.fixed_dictionaries(
    {"judged_only": st.booleans(), "max_docs": st.sampled_from([None, None, 2, 4])}
)


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=150, deadline=None, derandomize=True)
@given(inputs=tied_inputs(), options=OPTIONS, level=st.sampled_from([1, 2]))
def test_backends_agree_and_bound_trec(inputs, options, level) -> None:
    qrels, run = inputs
    got = {}
    for ties in ("best", "trec", "worst"):
        rust = ranklens.evaluate(qrels, run, MONOTONE, relevance_level=level, ties=ties, **options)
        ref = ranklens.evaluate(
            qrels, run, MONOTONE, relevance_level=level, ties=ties, backend="python", **options
        )
        np.testing.assert_allclose(rust.values, ref.values, rtol=0, atol=TOL, err_msg=ties)
        got[ties] = rust.values
    assert (got["best"] >= got["trec"] - TOL).all(), (got["best"], got["trec"])
    assert (got["trec"] >= got["worst"] - TOL).all(), (got["trec"], got["worst"])


DENSE = ["precision@3", "recall@3", "mrr", "map", "ndcg", "ndcg@3", "dcg@5", "hits@2"]


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much],
)
@given(inputs=tied_inputs(negative=False))
def test_matches_the_arrays_door(inputs) -> None:
    # Every judged document retrieved (the matrix holds every label); columns
    # in trec order (doc id descending), so "first" breaks ties as trec does.
    qrels, run = inputs
    for qid in run:
        for d in qrels[qid]:
            run[qid].setdefault(d, 0.0)
    cols = sorted(DOCS, reverse=True)
    qids = sorted(qrels)
    scores = np.full((len(qids), len(cols)), -1.0)
    labels = np.zeros((len(qids), len(cols)))
    mask = np.zeros((len(qids), len(cols)), dtype=bool)
    for i, qid in enumerate(qids):
        for j, d in enumerate(cols):
            if d in run[qid]:
                scores[i, j] = run[qid][d]
                labels[i, j] = qrels[qid].get(d, 0.0)
                mask[i, j] = True
    for ties, dense_ties in (("best", "best"), ("worst", "worst"), ("trec", "first")):
        ids = ranklens.evaluate(qrels, run, DENSE, ties=ties)
        arrays = ranklens.evaluate_dense(scores, labels, DENSE, ties=dense_ties, mask=mask)
        np.testing.assert_allclose(ids.values, arrays.values, rtol=0, atol=TOL, err_msg=ties)


def test_scorer_and_score_accept_best_and_worst() -> None:
    retrieved = {"x": 3.0, "a": 1.0, "b": 1.0, "c": 1.0, "u": 1.0}
    relevant = {"a": 2.0, "b": 1.0, "c": -1.0}
    for ties, want in (("best", 0.5), ("worst", 0.25), ("trec", 0.25)):
        assert Scorer(["mrr"], ties=ties)(retrieved, relevant)["mrr"] == pytest.approx(want)
        assert ranklens.score(retrieved, relevant, "mrr", ties=ties)["mrr"] == pytest.approx(want)
        batch = Scorer(["mrr"], ties=ties).batch([retrieved, retrieved], [relevant, relevant])
        np.testing.assert_allclose(batch["mrr"], [want, want])
    with pytest.raises(RanklensInputError, match="grouped qrels"):
        Scorer("mrr", ties="best").batch([{"a": 1.0, "b": 1.0}], [[["a", "b"]]])


def test_bad_ties_name_lists_best_and_worst() -> None:
    with pytest.raises(RanklensInputError, match="'best' or 'worst'"):
        ranklens.evaluate(QRELS, RUN, ["mrr"], ties="random")


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=60, deadline=None, derandomize=True)
@given(inputs=tied_inputs(), options=OPTIONS, ties=st.sampled_from(["best", "worst"]))
def test_scorer_matches_evaluate(inputs, options, ties) -> None:
    qrels, run = inputs
    qids = sorted(qrels)
    want = ranklens.evaluate(qrels, run, MONOTONE, relevance_level=1, ties=ties, **options)
    scorer = Scorer(MONOTONE, relevance_level=1, ties=ties, **options)
    batch = scorer.batch([run[q] for q in qids], [qrels[q] for q in qids])
    for j, m in enumerate(want.metrics):
        np.testing.assert_allclose(batch[m.name], want.values[:, j], atol=TOL, err_msg=m.name)


def test_diversity_metrics_order_by_the_largest_subtopic_label() -> None:
    # A document's label is its largest subtopic label (what the other metrics
    # see); both backends agree.  For diversity metrics this is an ordering,
    # not a bound.
    rows = [("q", "1", "a", 1), ("q", "2", "a", 0), ("q", "1", "b", 0), ("q", "2", "b", 2)]
    rows += [("q", "1", "c", 1), ("q", "2", "c", 1), ("q", "1", "d", -1)]
    qrels = Qrels.from_subtopics(rows)
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "u": 1.0, "z": 2.0}}
    metrics = ["alpha_nDCG@3", "ERR_IA@3", "NRBP", "ndcg@3"]
    for ties in ("best", "worst"):
        for judged_only in (False, True):
            kw = {"ties": ties, "judged_only": judged_only}
            rust = ranklens.evaluate(qrels, run, metrics, **kw)
            ref = ranklens.evaluate(qrels, run, metrics, backend="python", **kw)
            np.testing.assert_allclose(rust.values, ref.values, rtol=0, atol=TOL)
    # best: z (above the tie), then b (2), c and a (1, trec order), u (0), d (-1).
    res = ranklens.evaluate(qrels, run, ["ndcg@3"], ties="best")
    ideal = 2 + 1 / np.log2(3) + 1 / 2
    assert res["ndcg@3"] == pytest.approx((2 / np.log2(3) + 1 / 2) / ideal)
