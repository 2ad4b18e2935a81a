"""`ranklens.compat.autorag`: AutoRAG's retrieval metrics, bit for bit.

The oracle below restates AutoRAG's definitions (autorag/evaluation/metric/
retrieval.py and retrieval_contents.py) in plain Python, sums with the builtin
``sum`` and means with ``numpy.mean`` as AutoRAG does, and the Rust rows must equal
it exactly on hypothesis-generated inputs.
"""

from __future__ import annotations

import math
import re
import string
import sys
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _child import thread_counts
from ranklens import RanklensInputError
from ranklens.compat import autorag

GT = [[["test-1", "test-2"], ["test-3"]]]
PRED = [["test-1", "pred-1", "test-2", "pred-3"]]


# ---------------------------------------------------------------------------
# The worked example
# ---------------------------------------------------------------------------


def test_worked_example():
    assert autorag.retrieval_recall(GT, PRED) == [0.5]  # group 1 found, group 2 not
    assert autorag.retrieval_precision(GT, PRED) == [0.5]  # test-1, test-2 of 4
    assert autorag.retrieval_f1(GT, PRED) == [0.5]
    assert autorag.retrieval_mrr(GT, PRED) == [0.5]  # (1/1 + 0) / 2 groups
    # MAP: group 1 = {test-1, test-2} has members at ranks 1 and 3:
    #   precisions 1/1 and 2/3, averaged over its 2 retrieved members: 5/6;
    # group 2 = {test-3} is never retrieved: 0.  Mean over 2 groups: 5/12.
    assert autorag.retrieval_map(GT, PRED) == [(1 / 1 + 2 / 3) / 2 / 2]
    assert autorag.retrieval_map(GT, PRED)[0] == pytest.approx(5 / 12, abs=1e-15)
    # nDCG: gains [1, 0, 1, 0] (test-1, test-2 are ground truth) ->
    #   DCG = 1/log2(2) + 1/log2(4) = 1.5;
    # the ideal has min(3 ground-truth ids, 4 retrieved) = 3 ones ->
    #   IDCG = 1/log2(2) + 1/log2(3) + 1/log2(4) = 1.5 + 1/log2(3) = 2.1309;
    # nDCG = 1.5 / 2.1309 = 0.7039.
    dcg = 1 / math.log2(2) + 0.0 + 1 / math.log2(4) + 0.0
    idcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 0.0
    assert autorag.retrieval_ndcg(GT, PRED) == [dcg / idcg]
    assert autorag.retrieval_ndcg(GT, PRED)[0] == pytest.approx(0.70391809, abs=1e-8)


def test_many_metrics_at_once():
    out = autorag.retrieval_metrics(GT * 2, [*PRED, None])
    assert out["recall"][0] == 0.5
    assert np.isnan(out["recall"][1])
    assert list(out) == ["recall", "precision", "f1", "mrr", "map", "ndcg"]
    assert list(autorag.retrieval_metrics(GT, PRED, ["retrieval_ndcg"])) == ["retrieval_ndcg"]


# ---------------------------------------------------------------------------
# Oracle: AutoRAG's definitions restated
# ---------------------------------------------------------------------------


def _ok_id(x) -> bool:
    return (isinstance(x, str) and x.strip() != "") or (
        isinstance(x, int) and not isinstance(x, bool)
    )


def _valid(gt, pred) -> bool:
    if gt is None or pred is None or len(gt) == 0 or len(pred) == 0:
        return False
    if any(len(g) == 0 or not all(_ok_id(x) for x in g) for g in gt):
        return False
    return all(_ok_id(x) for x in pred)


def oracle(gt, pred) -> dict[str, float] | None:
    if not _valid(gt, pred):
        return None
    sets = [frozenset(g) for g in gt]
    in_gt = [any(p in s for s in sets) for p in pred]
    found = sum(1 for s in sets if any(p in s for p in set(pred)))
    recall = found / len(gt)
    precision = sum(1 for p in set(pred) if any(p in s for s in sets)) / len(pred)
    f1 = 0 if recall + precision == 0 else 2 * (recall * precision) / (recall + precision)
    rr = []
    for s in sets:
        ranks = [i for i, p in enumerate(pred) if p in s]
        if ranks:
            rr.append(1.0 / (ranks[0] + 1))
    mrr = sum(rr) / len(sets) if rr else 0.0
    aps = []
    for s in sets:
        hits, precs = 0, []
        for i, p in enumerate(pred):
            if p in s:
                hits += 1
                precs.append(hits / (i + 1))
        aps.append(sum(precs) / len(precs) if precs else 0.0)
    map_ = sum(aps) / len(sets)
    dcg = sum((1 if hit else 0) / math.log2(i + 2) for i, hit in enumerate(in_gt))
    n_ideal = min(sum(len(g) for g in gt), len(pred))
    idcg = sum((1 if i < n_ideal else 0) / math.log2(i + 2) for i in range(len(pred)))
    ndcg = dcg / idcg if idcg > 0 else 0
    return {
        "recall": recall,
        "precision": precision,
        "f1": f1,
        "mrr": mrr,
        "map": map_,
        "ndcg": ndcg,
    }


FUNCS = {
    "recall": autorag.retrieval_recall,
    "precision": autorag.retrieval_precision,
    "f1": autorag.retrieval_f1,
    "mrr": autorag.retrieval_mrr,
    "map": autorag.retrieval_map,
    "ndcg": autorag.retrieval_ndcg,
}

IDS = st.one_of(st.sampled_from(["a", "b", "c", "d", "e", "f", " ", ""]), st.integers(0, 3))
ROW_GT = st.one_of(
    st.none(), st.lists(st.lists(IDS, max_size=4), max_size=4)
)  # groups may repeat ids, overlap, or be empty
ROW_PRED = st.one_of(st.none(), st.lists(IDS, max_size=12))  # duplicates allowed

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(rows=st.lists(st.tuples(ROW_GT, ROW_PRED), max_size=8))
def test_matches_oracle_exactly(rows):
    gts = [g for g, _ in rows]
    preds = [p for _, p in rows]
    want = [oracle(g, p) for g, p in rows]
    for name, f in FUNCS.items():
        got = f(gts, preds)
        assert got == [None if w is None else w[name] for w in want], name


def test_long_rows_match_oracle():
    rng = np.random.default_rng(3)
    gts, preds = [], []
    for _ in range(200):
        ids = [f"doc{i}" for i in range(60)]
        ng = int(rng.integers(1, 6))
        gts.append([list(rng.choice(ids, int(rng.integers(1, 4)))) for _ in range(ng)])
        preds.append(list(rng.choice(ids, int(rng.integers(1, 40)))))
    want = [oracle(g, p) for g, p in zip(gts, preds)]
    for name, f in FUNCS.items():
        assert f(gts, preds) == [w[name] for w in want], name


def test_ints_and_strings_differ():
    assert autorag.retrieval_recall([[[1]]], [["1"]]) == [0.0]
    assert autorag.retrieval_recall([[[1]]], [[1]]) == [1.0]


# ---------------------------------------------------------------------------
# None and bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gt", "pred"),
    [
        (None, ["a"]),
        ([["a"]], None),
        ([], ["a"]),
        ([[]], ["a"]),
        ([["a"], []], ["a"]),
        ([["a"]], []),
        ([["a", ""]], ["a"]),
        ([["a"]], ["a", "  "]),
        ([["a"]], ["a", "\x1c"]),  # Python's str.strip() removes it too
    ],
)
def test_none_rows(gt, pred):
    for f in FUNCS.values():
        assert f([gt, [["a"]]], [pred, ["a"]]) == [None, 1.0]


def test_bare_id_is_a_group_of_one():
    assert autorag.retrieval_recall([["a", ["b"]]], [["b"]]) == [0.5]


def test_numpy_rows():
    gt = np.array([np.array([np.array(["a", "b"], dtype=object)], dtype=object)], dtype=object)
    pred = [np.array(["b", "x"], dtype=object)]
    assert autorag.retrieval_precision(gt, pred) == [0.5]
    assert autorag.retrieval_mrr(list(gt), (("x", "a"),)) == [0.5]


@pytest.mark.parametrize(
    ("gt", "pred", "match"),
    [
        ([[["a"]]], [["a"]] * 2, "1 rows but retrieved_ids has 2"),
        ([[["a"]], [["a", 1.5]]], [["a"], ["a"]], "row 1: an id must be a str or an int"),
        ([[["a"]], [["a"]]], [["a"], ["a", True]], "row 1: an id must be a str or an int"),
        ([[["a"]]], [[b"a"]], "row 0: an id must be a str or an int"),
        ([[["a"]]], ["a"], "row 0: a retrieved_ids row must be a list"),
        (["a"], [["a"]], "row 0: a retrieval_gt row"),
        ("ab", [["a"]], "must be a list of rows"),
        ([[["a"]]], 5, "must be a list of rows"),
    ],
)
def test_bad_input_raises_naming_the_row(gt, pred, match):
    with pytest.raises(RanklensInputError, match=match):
        autorag.retrieval_recall(gt, pred)


# ---------------------------------------------------------------------------
# Token metrics
# ---------------------------------------------------------------------------


def _normalize(s: str) -> str:
    # SQuAD v1.1: lowercase, drop punctuation, drop articles, collapse whitespace.
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def _pair(gt: str, pred: str) -> tuple[float, float, float]:
    p_toks, g_toks = _normalize(pred).split(), _normalize(gt).split()
    same = sum((Counter(p_toks) & Counter(g_toks)).values())
    if same == 0:
        return 0, 0, 0
    p, r = same / len(p_toks), same / len(g_toks)
    return p, r, (2 * p * r) / (p + r)


def token_oracle(gt_groups, preds) -> tuple[float, float, float] | None:
    if gt_groups is None or preds is None or not preds or not gt_groups:
        return None
    if any(not isinstance(g, list) or not g for g in gt_groups):
        return None
    flat = [x for g in gt_groups for x in g]
    if any(not x.strip() for x in flat) or any(not x.strip() for x in preds):
        return None
    m = np.array([[_pair(g, p) for g in flat] for p in preds], dtype=float)
    best = m.max(axis=1)  # (preds, 3)
    return tuple(float(best[:, j].mean()) for j in range(3))


def test_token_worked_example():
    gt = [[["The cat sat on the mat."], ["A dog barked."]]]
    pred = [["the cat sat", "dogs barked loudly"]]
    # "cat sat" vs "cat sat on mat": p = 2/2, r = 2/4; vs "dog barked": 0.
    # "dogs barked loudly" vs "dog barked": same = 1: p = 1/3, r = 1/2.
    p = (1.0 + 1 / 3) / 2
    r = (0.5 + 0.5) / 2
    f_1 = 2 * 1.0 * 0.5 / 1.5
    f_2 = 2 * (1 / 3) * 0.5 / (1 / 3 + 0.5)
    assert autorag.retrieval_token_precision(gt, pred) == [p]
    assert autorag.retrieval_token_recall(gt, pred) == [r]
    assert autorag.retrieval_token_f1(gt, pred) == [(f_1 + f_2) / 2]


WORDS = st.sampled_from(
    ["The", "a", "an", "cat", "Cat!", "dog's", "the’s", "é", "École", "x-y", "  ", "\t", "an."]
)
TEXT = st.lists(WORDS, max_size=6).map(" ".join)


@SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.none(), st.lists(st.lists(TEXT, max_size=3), max_size=3)),
            st.one_of(st.none(), st.lists(TEXT, max_size=12)),
        ),
        max_size=6,
    )
)
def test_token_metrics_match_oracle_exactly(rows):
    gts = [g for g, _ in rows]
    preds = [p for _, p in rows]
    want = [token_oracle(g, p) for g, p in rows]
    got = autorag.retrieval_token_metrics(gts, preds)
    for j, name in enumerate(["precision", "recall", "f1"]):
        got_j = [None if v != v else v for v in got[name].tolist()]
        assert got_j == [None if w is None else w[j] for w in want], name


def test_token_means_use_numpy_pairwise_sums():
    # 20 retrieved passages: numpy's mean adds in 8 interleaved partial sums.
    gt = [[["alpha beta gamma delta"]]]
    preds = [[" ".join(["alpha"] * (i + 1) + ["zeta"] * (i % 3)) for i in range(20)]]
    want = token_oracle(gt[0], preds[0])
    assert autorag.retrieval_token_precision(gt, preds) == [want[0]]


def test_token_bad_input():
    with pytest.raises(RanklensInputError, match="row 0: passages must be str"):
        autorag.retrieval_token_f1([[["a"]]], [[1]])
    with pytest.raises(RanklensInputError, match="has 2 rows but"):
        autorag.retrieval_token_f1([[["a"]]], [["a"], ["b"]])
    assert autorag.retrieval_token_f1([[["x b"]], [[" "]]], [["b"], ["b"]]) == [
        pytest.approx(2 / 3),
        None,
    ]


# ---------------------------------------------------------------------------
# AutoRAG's current call form: metric_inputs=[MetricInput, ...]
# ---------------------------------------------------------------------------


def test_metric_inputs_form_equals_the_column_form():
    from dataclasses import dataclass

    @dataclass
    class MetricInput:  # the fields of AutoRAG's schema that these metrics read
        retrieval_gt: object = None
        retrieved_ids: object = None
        retrieval_gt_contents: object = None
        retrieved_contents: object = None

    gt = [*GT, [["a"]], None]
    pred = [*PRED, ["b", "a"], ["a"]]
    objects = [MetricInput(retrieval_gt=g, retrieved_ids=p) for g, p in zip(gt, pred)]
    dicts = [{"retrieval_gt": g, "retrieved_ids": p} for g, p in zip(gt, pred)]
    for name in ("recall", "precision", "f1", "mrr", "map", "ndcg"):
        func = getattr(autorag, f"retrieval_{name}")
        columns = func(gt, pred)
        assert columns[2] is None  # no ground truth: None, as AutoRAG
        assert func(metric_inputs=objects) == columns
        assert func(objects) == columns  # positionally, as AutoRAG allows
        assert func(metric_inputs=dicts) == columns
    contents = [MetricInput(retrieval_gt_contents=[["the cat"]], retrieved_contents=["a cat"])]
    # "the cat" -> [cat], "a cat" -> [cat]: every token score is 1
    assert autorag.retrieval_token_f1(metric_inputs=contents) == [1.0]
    assert autorag.retrieval_token_f1([[["the cat"]]], [["a cat"]]) == [1.0]


def test_metric_inputs_bad_calls():
    with pytest.raises(RanklensInputError, match="metric_inputs or the columns, not both"):
        autorag.retrieval_recall(GT, metric_inputs=[{"retrieval_gt": GT[0]}])
    with pytest.raises(RanklensInputError, match="pass metric_inputs"):
        autorag.retrieval_recall(GT)
    with pytest.raises(RanklensInputError, match="must be a list of MetricInput"):
        autorag.retrieval_recall(metric_inputs={"retrieval_gt": GT[0]})


# ---------------------------------------------------------------------------
# Small calls on the calling thread
# ---------------------------------------------------------------------------


def _token_rows(n: int, seed: int) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    words = ["The", "cat", "sat", "on", "a", "mat", "dog", "barked", "École", "x-y", "an."]

    def text() -> str:
        return " ".join(rng.choice(words, int(rng.integers(1, 8))))

    gts = [[[text() for _ in range(int(rng.integers(1, 3)))] for _ in range(2)] for _ in range(n)]
    preds = [[text() for _ in range(int(rng.integers(1, 5)))] for _ in range(n)]
    return gts, preds


def test_calls_of_one_task_give_the_pool_calls_values():
    # Up to 64 id rows (8 token rows) run on the calling thread: the same values
    # as those rows inside a larger call on the pool, which equals the oracle.
    rng = np.random.default_rng(5)
    ids = [f"d{i}" for i in range(30)]
    gts = [[list(rng.choice(ids, 2)), list(rng.choice(ids, 1))] for _ in range(100)]
    preds = [list(rng.choice(ids, 10)) for _ in range(100)]
    big = autorag.retrieval_metrics(gts, preds, threads=2)
    want = [oracle(g, p) for g, p in zip(gts, preds)]
    assert big["map"].tolist() == [w["map"] for w in want]
    for rows in (1, 64):
        for threads in (None, 1, 2):
            small = autorag.retrieval_metrics(gts[:rows], preds[:rows], threads=threads)
            for name, column in small.items():
                np.testing.assert_array_equal(column, big[name][:rows])
    tgts, tpreds = _token_rows(40, 6)
    tbig = autorag.retrieval_token_metrics(tgts, tpreds, threads=2)
    twant = [token_oracle(g, p) for g, p in zip(tgts, tpreds)]
    assert tbig["f1"].tolist() == [w[2] for w in twant]
    for rows in (1, 8):
        for threads in (None, 1, 2):
            small = autorag.retrieval_token_metrics(tgts[:rows], tpreds[:rows], threads=threads)
            for name, column in small.items():
                np.testing.assert_array_equal(column, tbig[name][:rows])
    with pytest.raises(RanklensInputError, match="threads must be a positive int"):
        autorag.retrieval_metrics(gts[:1], preds[:1], threads=0)
    with pytest.raises(RanklensInputError, match="threads must be a positive int"):
        autorag.retrieval_token_metrics(tgts[:1], tpreds[:1], threads=0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_call_of_one_task_starts_no_thread():
    # In a fresh process: calls of up to 64 id rows and 8 token rows leave the
    # number of the process's threads as it was (no pool made, none woken); 65
    # rows on two threads start the pool's (the probe sees threads).
    setup = """
from ranklens.compat import autorag
gt, pred = [[["a", "b"], ["c"]]], [["c", "x", "a"]]
gtc, predc = [[["the cat sat"], ["a dog"]]], [["cat sat", "dog"]]
"""
    small_calls = """
for t in (None, 1, 2):
    autorag.retrieval_metrics(gt * 64, pred * 64, threads=t)
    autorag.retrieval_recall(gt, pred)
    autorag.retrieval_token_metrics(gtc * 8, predc * 8, threads=t)
    autorag.retrieval_token_f1(gtc, predc)
"""
    before, small, large = thread_counts(
        setup, small_calls, "autorag.retrieval_metrics(gt * 65, pred * 65, threads=2)"
    )
    assert small == before
    assert large > before
