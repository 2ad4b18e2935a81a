"""Tests of the pure-Python reference backend (``ranklens.metrics``).

1. Hand-computed examples for every metric family (worked out in the comments).
2. Per-query agreement with pytrec_eval (trec_eval 9.0.8 compiled in) to 1e-12 on
   hypothesis-generated inputs full of score ties.
3. The Rust backend against the reference (skipped while the native module is absent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ranklens._names import Metric, parse_metrics
from ranklens.metrics import aggregate, aggregate_reference, evaluate_reference
from ranklens.metrics._common import Judgments, rank

try:
    import pytrec_eval
except ImportError:  # pragma: no cover - optional test dependency
    pytrec_eval = None

TOL = 1e-12
log2 = math.log2

# ---------------------------------------------------------------------------
# 1. Hand-computed examples
# ---------------------------------------------------------------------------

HAND_QRELS = {
    # R = 3 at level 1 (d3, d1, d5), R = 2 at level 2 (d1, d5).
    # d4 has a negative label: in the pool but unjudged.
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1, "d5": 3},
    # No relevant document at all.
    "q2": {"a": 0, "b": 0},
    # Missing from the run: scored on an empty ranking.
    "q3": {"x": 1, "y": 2},
    # bpref with N (3 judged non-relevant) > R (2).
    "q5": {"r1": 1, "r2": 1, "n1": 0, "n2": 0, "n3": 0, "u": -1},
    # bpref with N (1) < R (3).
    "q6": {"r1": 1, "r2": 1, "r3": 1, "n1": 0},
    # nDCG ideal ranking longer than the retrieved list.
    "q7": {"a": 3, "b": 2, "c": 1},
    # Ties broken by doc id descending, case-sensitive byte order.
    "q8": {"a": 1},
    # Float labels.
    "q9": {"a": 0.5, "b": 1.5, "c": 2.25},
}
HAND_RUN = {
    # Sorted: 0.9 -> dX, d2 ("dX" > "d2": 'X' = 0x58 > '2' = 0x32); 0.7 -> d4;
    # 0.5 -> d3, d1; 0.1 -> d5.  Ranking with labels:
    #   1 dX (not in qrels), 2 d2 (0), 3 d4 (-1), 4 d3 (1), 5 d1 (2), 6 d5 (3)
    "q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5, "d4": 0.7, "dX": 0.9, "d5": 0.1},
    # Ranking: c (not in qrels), a (0)
    "q2": {"a": 1.0, "c": 2.0},
    # Run-only query: ignored.
    "q4": {"z": 1.0},
    # Ranking: r1 (1), n1 (0), u (-1), zz (not in qrels), r2 (1), n2 (0); n3 not retrieved.
    "q5": {"r1": 6, "n1": 5, "u": 4, "zz": 3, "r2": 2, "n2": 1},
    # Ranking: r1, n1, r2; r3 not retrieved.
    "q6": {"r1": 3.0, "n1": 2.0, "r2": 1.0},
    # Ranking: c (1), a (3); b (2) not retrieved.
    "q7": {"c": 2.0, "a": 1.0},
    # All tied: byte order descending is b (0x62) > a (0x61) > B (0x42), so
    # ranking b, a, B and the relevant "a" is at rank 2.
    "q8": {"a": 1.0, "B": 1.0, "b": 1.0},
    # Ranking: a (0.5), b (1.5), c (2.25)
    "q9": {"a": 3.0, "b": 2.0, "c": 1.0},
}

# q1 at level 1: relevant at ranks 4, 5, 6; R = 3.
Q1_IDCG = 3 + 2 / log2(3) + 1 / log2(4)  # ideal gains 3, 2, 1
Q1_DCG = 1 / log2(5) + 2 / log2(6) + 3 / log2(7)  # gains 1, 2, 3 at ranks 4, 5, 6
Q1_LEVEL1 = {
    "num_ret": 6,
    "num_ret@3": 3,
    "num_ret@10": 6,  # min(k, num_ret)
    "num_rel": 3,
    "num_rel_ret": 3,
    "num_rel_ret@5": 2,
    "precision@1": 0.0,
    "precision@3": 0.0,
    "precision@5": 2 / 5,
    "precision@10": 3 / 10,  # fewer than k retrieved: still divided by k
    "precision": 3 / 6,  # set precision
    "recall@3": 0.0,
    "recall@5": 2 / 3,
    "recall@10": 1.0,
    "recall": 1.0,
    "f1@3": 0.0,
    "f1@5": 2 * 0.4 * (2 / 3) / (0.4 + 2 / 3),  # = 0.5
    "f1@10": 2 * 0.3 * 1.0 / 1.3,
    "f1": 2 * 0.5 * 1.0 / 1.5,
    "hits@1": 0,
    "hits@5": 2,
    "hits": 3,
    "hit_rate@3": 0.0,
    "hit_rate@4": 1.0,
    "hit_rate": 1.0,
    "mrr": 1 / 4,
    "mrr@3": 0.0,
    "mrr@4": 1 / 4,
    "map": (1 / 4 + 2 / 5 + 3 / 6) / 3,
    "map@3": 0.0,
    "map@5": (1 / 4 + 2 / 5) / 3,  # cut at 5, still divided by R = 3
    "ndcg": Q1_DCG / Q1_IDCG,
    "ndcg@3": 0.0,
    "ndcg@4": (1 / log2(5)) / Q1_IDCG,
    "ndcg@5": (1 / log2(5) + 2 / log2(6)) / Q1_IDCG,
    "dcg": Q1_DCG,
    "dcg@4": 1 / log2(5),
    # gains 2^L - 1: 1, 3, 7 at ranks 4, 5, 6; ideal 7, 3, 1
    "ndcg_burges": (1 / log2(5) + 3 / log2(6) + 7 / log2(7)) / (7 + 3 / log2(3) + 1 / 2),
    "r_precision": 0.0,  # top 3 hold no relevant document
    # N = 1 (d2), R = 3: dX skipped, d2 -> nonrel 1, d4 skipped (negative label),
    # d3, d1, d5 each add 1 - min(1, 3) / min(1, 3) = 0.
    "bpref": 0.0,
}
# q1 at level 2: relevant d1 (rank 5) and d5 (rank 6); R = 2; N = 2 (d2 and d3 with 0 <= L < 2).
Q1_LEVEL2 = {
    "num_rel": 2,
    "num_rel_ret": 2,
    "precision@5": 1 / 5,
    "recall@5": 1 / 2,
    "map": (1 / 5 + 2 / 6) / 2,
    "mrr": 1 / 5,
    "r_precision": 0.0,
    # d2 -> nonrel 1, d3 -> nonrel 2, d1 and d5 add 1 - min(2, 2) / min(2, 2) = 0
    "bpref": 0.0,
    # graded metrics ignore the relevance level
    "ndcg": Q1_DCG / Q1_IDCG,
    "dcg": Q1_DCG,
}
# q5 at level 1: R = 2, N = 3.  Ranking r1 (rel), n1, u (skipped), zz (skipped), r2 (rel), n2.
Q5_LEVEL1 = {
    # r1: no non-relevant above -> 1; r2: 1 - min(1, 2) / min(3, 2) = 0.5.  (1 + 0.5) / 2
    "bpref": 0.75,
    "map": (1 / 1 + 2 / 5) / 2,
    "mrr": 1.0,
    "precision@5": 2 / 5,
    "r_precision": 1 / 2,  # top 2: r1, n1
    "ndcg": (1 + 1 / log2(6)) / (1 + 1 / log2(3)),
    # ideal has only 2 positive documents even though k = 3
    "ndcg@3": 1 / (1 + 1 / log2(3)),
    "num_ret": 6,
    "num_rel_ret": 2,
}
# q6: R = 3, N = 1.  r1 -> 1; n1 -> nonrel 1; r2 -> 1 - min(1, 3) / min(1, 3) = 0.  1 / 3
Q6_LEVEL1 = {"bpref": 1 / 3, "recall": 2 / 3, "r_precision": 2 / 3, "map": (1 + 2 / 3) / 3}
# q7: ranking c (1), a (3); b (2) never retrieved but part of the ideal ranking.
Q7 = {
    "ndcg@1": 1 / 3,  # dcg@1 = 1, idcg@1 = 3
    "ndcg@2": (1 + 3 / log2(3)) / (3 + 2 / log2(3)),
    "ndcg": (1 + 3 / log2(3)) / (3 + 2 / log2(3) + 1 / 2),
    "ndcg@10": (1 + 3 / log2(3)) / (3 + 2 / log2(3) + 1 / 2),
    "dcg@1": 1.0,
    "dcg": 1 + 3 / log2(3),
    "precision@10": 2 / 10,
    "num_ret@10": 2,
}
# q8: ranking b, a, B (ties by doc id descending); "a" relevant at rank 2.
Q8 = {"mrr": 1 / 2, "mrr@1": 0.0, "precision@1": 0.0, "hit_rate@1": 0.0, "hit_rate@2": 1.0}
# q9: float labels 0.5, 1.5, 2.25 at ranks 1, 2, 3.  Level 1: R = 2 (b, c).
Q9_LEVEL1 = {
    "num_rel": 2,
    "precision@3": 2 / 3,
    "precision(rel=0.5)@3": 1.0,
    "precision(rel=2)@3": 1 / 3,
    "mrr": 1 / 2,
    "map": (1 / 2 + 2 / 3) / 2,
    "ndcg": (0.5 + 1.5 / log2(3) + 2.25 / 2) / (2.25 + 1.5 / log2(3) + 0.5 / 2),
    "dcg": 0.5 + 1.5 / log2(3) + 2.25 / 2,
    "ndcg_burges": ((2**0.5 - 1) + (2**1.5 - 1) / log2(3) + (2**2.25 - 1) / 2)
    / ((2**2.25 - 1) + (2**1.5 - 1) / log2(3) + (2**0.5 - 1) / 2),
}

ALL_FAMILY_METRICS = [
    "precision",
    "precision@5",
    "recall",
    "recall@5",
    "f1",
    "f1@5",
    "hits",
    "hits@5",
    "hit_rate",
    "hit_rate@5",
    "mrr",
    "mrr@5",
    "map",
    "map@5",
    "ndcg",
    "ndcg@5",
    "ndcg_burges",
    "ndcg_burges@5",
    "dcg",
    "dcg@5",
    "r_precision",
    "bpref",
    "num_ret",
    "num_ret@5",
    "num_rel",
    "num_rel_ret",
    "num_rel_ret@5",
]


def _check(qid: str, expected: Mapping[str, float], level: float = 1) -> None:
    got = evaluate_reference(HAND_QRELS, HAND_RUN, list(expected), relevance_level=level)[qid]
    for name, want in expected.items():
        (metric,) = parse_metrics(name)
        value = got[metric.name]
        assert value == pytest.approx(want, abs=TOL), (qid, name, value, want)


@pytest.mark.parametrize(
    ("qid", "expected", "level"),
    [
        ("q1", Q1_LEVEL1, 1),
        ("q1", Q1_LEVEL2, 2),
        ("q5", Q5_LEVEL1, 1),
        ("q6", Q6_LEVEL1, 1),
        ("q7", Q7, 1),
        ("q8", Q8, 1),
        ("q9", Q9_LEVEL1, 1),
    ],
)
def test_hand_computed(qid: str, expected: Mapping[str, float], level: float) -> None:
    _check(qid, expected, level)


def test_query_without_relevant_documents_scores_zero() -> None:
    # q2: ranking c (not in qrels), a (0).  Nothing relevant, no positive gain.
    res = evaluate_reference(HAND_QRELS, HAND_RUN, parse_metrics(ALL_FAMILY_METRICS))["q2"]
    for name, value in res.items():
        want = 2.0 if name in ("num_ret", "num_ret@5") else 0.0
        assert value == want, name


def test_query_missing_from_run_is_scored_on_empty_ranking() -> None:
    metrics = parse_metrics(ALL_FAMILY_METRICS)
    res = evaluate_reference(HAND_QRELS, HAND_RUN, metrics)
    assert "q3" in res
    for name, value in res["q3"].items():
        assert value == (2.0 if name == "num_rel" else 0.0), name
    # Identical to giving it an explicit empty ranking.
    explicit = evaluate_reference(HAND_QRELS, {**HAND_RUN, "q3": {}}, metrics)
    assert explicit == res
    assert evaluate_reference(HAND_QRELS, HAND_RUN, parse_metrics("num_rel"), 2)["q3"] == {
        "num_rel": 1.0
    }


def test_query_ids_sorted_and_run_only_queries_ignored() -> None:
    res = evaluate_reference(HAND_QRELS, HAND_RUN, parse_metrics(["map", "num_ret"]))
    assert list(res) == sorted(HAND_QRELS)
    assert "q4" not in res
    assert set(res["q1"]) == {"map", "num_ret"}


def test_empty_qrels_query_is_scored() -> None:
    res = evaluate_reference({"q": {}}, {"q": {"a": 1.0}}, parse_metrics(ALL_FAMILY_METRICS))
    for name, value in res["q"].items():
        assert value == (1.0 if name.startswith("num_ret") else 0.0), name


def test_ranking_ties_by_doc_id_descending_in_utf8_byte_order() -> None:
    scores = {
        "A": 1.0,
        "a": 1.0,
        "B": 1.0,
        "ab": 1.0,
        "é": 1.0,  # UTF-8 C3 A9: above every ASCII id
        "\uffff": 1.0,  # EF BF BF
        "😀": 1.0,  # F0 9F 98 80: above U+FFFF (UTF-16 order would say otherwise)
        "z": 2.0,
        "y": 0.5,
        "": 1.0,  # empty id sorts lowest
    }
    ranked = rank(scores, Judgments.from_mapping({"a": 1, "B": -1}))
    assert ranked.docs == ("z", "😀", "\uffff", "é", "ab", "a", "B", "A", "", "y")
    assert ranked.labels == (None, None, None, None, None, 1.0, -1.0, None, None, None)


def test_ranking_uses_full_double_precision() -> None:
    # These two scores are equal in float32 (pytrec_eval would tie them and put "b"
    # first) but not in float64: trec_eval 10.0 and ranklens rank "a" first.
    ranked = rank({"a": 1.00000001, "b": 1.0}, Judgments.from_mapping({}))
    assert ranked.docs == ("a", "b")


def test_negative_labels_are_unjudged() -> None:
    # "n" has a negative label: never relevant, no gain, skipped by bpref.
    # Ranking n (-1), r (1), j (0).
    run = {"q": {"n": 3.0, "r": 2.0, "j": 1.0}}
    names = ["bpref", "num_rel", "ndcg", "mrr"]
    res = evaluate_reference({"q": {"r": 1, "j": 0, "n": -1}}, run, names)["q"]
    # bpref: n skipped, so r has no non-relevant doc above it -> 1.
    assert res == {"bpref": 1.0, "num_rel": 1.0, "ndcg": 1 / log2(3), "mrr": 1 / 2}
    # Were "n" judged non-relevant (label 0), r would get 1 - min(1, 1) / min(2, 1) = 0.
    as_zero = evaluate_reference({"q": {"r": 1, "j": 0, "n": 0}}, run, ["bpref"])["q"]
    assert as_zero == {"bpref": 0.0}


def test_negative_labels_not_counted_among_judged_nonrelevant() -> None:
    # Ranking r1, j, r2, n.  R = 2, N = 1 (j only; n is unjudged).
    # r1 -> 1; j -> nonrel 1; r2 -> 1 - min(1, 2) / min(1, 2) = 0.  bpref = 1 / 2.
    # (Counting n in N would give r2 1 - 1 / 2 and bpref 0.75.)
    qrels = {"q": {"r1": 1, "r2": 1, "j": 0, "n": -1}}
    run = {"q": {"r1": 4.0, "j": 3.0, "r2": 2.0, "n": 1.0}}
    assert evaluate_reference(qrels, run, ["bpref"])["q"] == {"bpref": 0.5}


def test_aggregate_mean_and_sums() -> None:
    metrics = parse_metrics(["map", "num_ret", "num_rel", "num_rel_ret", "hits@5"])
    per_query = evaluate_reference(HAND_QRELS, HAND_RUN, metrics)
    agg = aggregate_reference(per_query, metrics)
    n = len(HAND_QRELS)  # every qrels query counts, including q3 (not in the run)
    assert agg["map"] == pytest.approx(sum(v["map"] for v in per_query.values()) / n, abs=TOL)
    assert agg["hits@5"] == pytest.approx(sum(v["hits@5"] for v in per_query.values()) / n)
    # num_ret: 6 + 2 + 0 + 6 + 3 + 2 + 3 + 3 (q4 ignored)
    assert agg["num_ret"] == 25
    # num_rel: 3 + 0 + 2 + 2 + 3 + 3 + 1 + 2
    assert agg["num_rel"] == 16
    assert agg["num_rel_ret"] == sum(v["num_rel_ret"] for v in per_query.values())
    assert aggregate(Metric("map"), []) == 0.0
    assert aggregate(Metric("num_ret"), [1.0, 2.0]) == 3.0


def test_metric_rel_overrides_relevance_level() -> None:
    metrics = parse_metrics(["precision(rel=2)@5", "precision@5"])
    res = evaluate_reference(HAND_QRELS, HAND_RUN, metrics, relevance_level=1)["q1"]
    assert res == {"precision(rel=2)@5": 1 / 5, "precision@5": 2 / 5}


def test_ties_input_keeps_mapping_order() -> None:
    qrels = {"q": {"a": 1}}
    run = {"q": {"c": 2.0, "a": 1.0, "b": 1.0, "B": 1.0}}
    # trec ties: c, b, a, B -> "a" at rank 3.  Input order: c, a, b, B -> rank 2.
    assert evaluate_reference(qrels, run, ["mrr"])["q"]["mrr"] == 1 / 3
    assert evaluate_reference(qrels, run, ["mrr"], ties="input")["q"]["mrr"] == 1 / 2
    assert rank(run["q"], Judgments.from_mapping({}), ties="input").docs == ("c", "a", "b", "B")


def test_max_docs_and_judged_only() -> None:
    # q1 ranking: dX (none), d2 (0), d4 (-1), d3 (1), d1 (2), d5 (3).
    names = ["num_ret", "num_rel_ret", "mrr", "precision@2", "map", "bpref"]
    cut = evaluate_reference(HAND_QRELS, HAND_RUN, names, max_docs=4)["q1"]
    # Top 4: dX, d2, d4, d3.
    assert cut == {
        "num_ret": 4.0,
        "num_rel_ret": 1.0,
        "mrr": 1 / 4,
        "precision@2": 0.0,
        "map": (1 / 4) / 3,
        "bpref": 0.0,  # d3 after d2 (N = 1): 1 - 1 / 1
    }
    judged = evaluate_reference(HAND_QRELS, HAND_RUN, names, judged_only=True)["q1"]
    # dX and d4 dropped, ranks close up: d2 (0), d3 (1), d1 (2), d5 (3).
    assert judged == pytest.approx(
        {
            "num_ret": 4.0,
            "num_rel_ret": 3.0,
            "mrr": 1 / 2,
            "precision@2": 1 / 2,
            "map": (1 / 2 + 2 / 3 + 3 / 4) / 3,
            "bpref": 0.0,
        },
        abs=TOL,
    )
    # -M is applied before -J: top 4 then drop unjudged -> d2, d3.
    both = evaluate_reference(HAND_QRELS, HAND_RUN, names, max_docs=4, judged_only=True)["q1"]
    assert both["num_ret"] == 2.0
    assert both["mrr"] == 1 / 2


# ---------------------------------------------------------------------------
# Hypothesis strategies shared by the pytrec_eval and Rust comparisons
# ---------------------------------------------------------------------------

# Ids differing only in case, in length, by a prefix, or by non-ASCII bytes.
DOC_IDS = [
    "a",
    "A",
    "b",
    "B",
    "ab",
    "aB",
    "Ab",
    "abc",
    "d1",
    "d10",
    "d2",
    "D1",
    "e",
    "é",
    "z",
    "Z",
    "zz",
    "ß",
    "x y",
    "a-1",
    "a_1",
    "\uffff",
    "😀",
]
QIDS = ["q1", "q2", "q10", "Q1", "q3"]
# Multiples of 0.25 in [-1, 2]: exact in float32 (pytrec_eval's score type).
SCORES = [i / 4 for i in range(-4, 9)]
INT_LABELS = [-1, 0, 1, 2, 3]
FLOAT_LABELS = [-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.25, 3]


@st.composite
def eval_inputs(draw, labels=INT_LABELS, levels=(1, 2)):
    """(qrels, run, relevance_level) with frequent ties and one-sided queries."""
    qids = draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=4))
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(qids):
        # The first query always has qrels: evaluate() rejects qrels with no query.
        sides = ["both", "qrels"] if i == 0 else ["both", "both", "both", "both", "qrels", "run"]
        side = draw(st.sampled_from(sides))
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=14))
        # A few distinct scores per query, so most documents tie with another.
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
    level = draw(st.sampled_from(levels))
    return qrels, run, level


# Deliberate tie and edge cases (random inputs rarely produce ties that matter).
SEEDED_INPUTS = [
    # Case-only differences, all tied: ranking b, a, B, A.
    (
        {"q1": {"a": 1, "A": 0, "B": 2, "b": 0}},
        {"q1": {"a": 1.0, "A": 1.0, "B": 1.0, "b": 1.0}},
        1,
    ),
    # Prefixes of different lengths tied: abc, ab, a.
    ({"q1": {"a": 3, "ab": 0, "abc": 1}}, {"q1": {"a": 0.5, "ab": 0.5, "abc": 0.5}}, 1),
    # Non-ASCII ids tied with ASCII ones; level 2.  UTF-8 byte order puts U+1F600
    # (F0 ..) above U+FFFF (EF BF BF); UTF-16 or "Java" order would not.
    (
        {"q1": {"é": 2, "z": 0, "😀": 1, "\uffff": 3, "ß": 2}},
        {"q1": {"é": 1.0, "z": 1.0, "😀": 1.0, "\uffff": 1.0, "ß": 1.0}},
        2,
    ),
    # Negative labels and unjudged retrieved docs around relevant ones (bpref).
    (
        {"q1": {"a": 1, "b": -1, "c": 0, "d": 1, "e": 0, "f": 0}},
        {"q1": {"b": 2.0, "x": 2.0, "c": 1.5, "a": 1.5, "y": 1.0, "d": 0.25}},
        1,
    ),
    # All labels negative; a query with no relevant docs; one-sided queries.
    (
        {"q1": {"a": -1, "b": -1}, "q2": {"a": 0}, "q3": {"a": 1}},
        {"q1": {"a": 1.0, "b": 1.0}, "q2": {"a": 1.0}, "q10": {"a": 1.0}},
        1,
    ),
    # Fewer retrieved than every cutoff, relevant docs never retrieved.
    ({"q1": {"a": 1, "b": 2, "c": 3, "d": 1}}, {"q1": {"b": -1.0}}, 1),
]

CUTOFFS = (1, 2, 3, 5, 10)


# ---------------------------------------------------------------------------
# 2. Agreement with pytrec_eval
# ---------------------------------------------------------------------------


def _pytrec_measures() -> set[str]:
    cuts = ",".join(str(k) for k in CUTOFFS)
    base = {"map", "ndcg", "recip_rank", "Rprec", "bpref"}
    base |= {"num_ret", "num_rel", "num_rel_ret", "set_P", "set_recall", "set_F"}
    return base | {f"{m}.{cuts}" for m in ("P", "recall", "map_cut", "ndcg_cut", "success")}


# ranklens name -> pytrec_eval output key
PYTREC_NAMES = {
    "map": "map",
    "ndcg": "ndcg",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "precision": "set_P",
    "recall": "set_recall",
    "f1": "set_F",
    "hits": "num_rel_ret",
}
for _k in CUTOFFS:
    PYTREC_NAMES[f"precision@{_k}"] = f"P_{_k}"
    PYTREC_NAMES[f"recall@{_k}"] = f"recall_{_k}"
    PYTREC_NAMES[f"map@{_k}"] = f"map_cut_{_k}"
    PYTREC_NAMES[f"ndcg@{_k}"] = f"ndcg_cut_{_k}"
    PYTREC_NAMES[f"hit_rate@{_k}"] = f"success_{_k}"

# Checked against derived pytrec_eval values rather than a direct counterpart.
DERIVED = [f"{f}@{k}" for f in ("hits", "num_rel_ret", "num_ret", "mrr") for k in CUTOFFS]
DERIVED += ["hit_rate"]


def _pytrec_evaluate(qrels, run, level, judged_only=False):
    """pytrec_eval's per-query values, on the queries where its behaviour is defined.

    trec_eval's ``te_form_res_rels`` fails (returns UNDEF) for a query with no
    retrieved document or no label >= 0 when nothing has been allocated yet, and
    pytrec_eval ignores the failure: the query then gets stale cached state
    (e.g. num_ret = 0 for a non-empty ranking) and bpref dereferences NULL
    (segfault).  pytrec_eval also drops queries with empty qrels.  So it only sees
    queries with a non-empty ranking and at least one label >= 0, and (its labels
    being C longs) only queries with integer labels.  A fresh evaluator per call,
    because measure cutoffs are fixed on first use.
    """
    pt_qrels = {
        q: {d: int(v) for d, v in docs.items()}
        for q, docs in qrels.items()
        if any(v >= 0 for v in docs.values()) and all(float(v).is_integer() for v in docs.values())
    }
    pt_run = {q: dict(docs) for q, docs in run.items() if docs and q in pt_qrels}
    if not pt_run:
        return {}
    evaluator = pytrec_eval.RelevanceEvaluator(
        pt_qrels, _pytrec_measures(), relevance_level=level, judged_docs_only_flag=judged_only
    )
    out = evaluator.evaluate(pt_run)
    assert set(out) == set(pt_run)
    return out


@pytest.mark.skipif(pytrec_eval is None, reason="pytrec_eval not installed")
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(inputs=eval_inputs(), judged_only=st.booleans())
@example(inputs=SEEDED_INPUTS[0], judged_only=False)
@example(inputs=SEEDED_INPUTS[1], judged_only=False)
@example(inputs=SEEDED_INPUTS[2], judged_only=False)
@example(inputs=SEEDED_INPUTS[3], judged_only=False)
@example(inputs=SEEDED_INPUTS[3], judged_only=True)
@example(inputs=SEEDED_INPUTS[4], judged_only=False)
@example(inputs=SEEDED_INPUTS[5], judged_only=False)
@example(inputs=(HAND_QRELS, HAND_RUN, 1), judged_only=False)
@example(inputs=(HAND_QRELS, HAND_RUN, 2), judged_only=True)
def test_matches_pytrec_eval(inputs, judged_only) -> None:
    qrels, run, level = inputs
    metrics = parse_metrics(list(PYTREC_NAMES) + DERIVED)
    ours = evaluate_reference(qrels, run, metrics, level, judged_only=judged_only)
    assert list(ours) == sorted(qrels)
    theirs = _pytrec_evaluate(qrels, run, level, judged_only)
    for qid, values in theirs.items():
        mine = ours[qid]
        for name, pt_name in PYTREC_NAMES.items():
            assert mine[name] == pytest.approx(values[pt_name], abs=TOL), (qid, name, level)
        ret, rr = values["num_ret"], values["recip_rank"]
        first_rel_rank = round(1 / rr) if rr > 0 else math.inf
        for k in CUTOFFS:
            assert mine[f"hits@{k}"] == round(values[f"P_{k}"] * k), (qid, k)
            assert mine[f"num_rel_ret@{k}"] == mine[f"hits@{k}"]
            assert mine[f"num_ret@{k}"] == min(k, ret)
            assert mine[f"mrr@{k}"] == (rr if first_rel_rank <= k else 0.0)
        assert mine["hit_rate"] == (1.0 if values["num_rel_ret"] > 0 else 0.0)


# ---------------------------------------------------------------------------
# 3. The Rust backend against the reference
# ---------------------------------------------------------------------------


def _rust_available() -> bool:
    try:
        import ranklens._ranklens  # noqa: F401
    except ImportError:
        return False
    return True


RUST_CUTOFFS = (1, 3, 5, 10, 20)
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
RUST_METRICS = [
    *_CUTTABLE,
    "r_precision",
    "bpref",
    "num_rel",
    "yaap",
    "yaap(rel=2)",
    *(f"{f}@{k}" for f in _CUTTABLE for k in RUST_CUTOFFS),
    "precision(rel=2)@5",
    "recall(rel=1.5)",
    "map(rel=0.5)",
    "bpref(rel=2)",
    "mrr(rel=3)@10",
    # ir_measures' accuracy and compat, the C/W/L measures
    "accuracy",
    "accuracy@3",
    "accuracy(rel=2)@5",
    "compat",
    "compat(p=0.8,normalize=0)",
    "rbp_cwl",
    "rbp_cwl(p=0.5)@3",
    "rbp_cwl(max_rel=3)",
    "rbp_cwl(min_rel=-1,max_rel=2,depth=20)",
    "sdcg(max_rel=3)@5",
    "sdcg@3",
    "bpm(T=2,max_rel=3)@10",
    "nerr8(max_rel=2)@5",
    "nerr9@10",
    "nerr10(max_rel=3)",
    "nerr11(T=2,max_rel=3)",
    "inst(max_rel=3)",
    "inst(T=2)@4",
    "insq(max_rel=3,depth=50)",
    "rbp_cwl(residual=1,depth=30)@5",
    "inst(max_rel=3,residual=1)",
    "nerr9(residual=1)@4",
    "bpm(T=2,residual=1)@6",
]


OPTIONS = st.fixed_dictionaries(
    {
        "judged_only": st.booleans(),
        "max_docs": st.sampled_from([None, None, 1, 3, 7]),
        "ties": st.sampled_from(["trec", "trec", "input"]),
    }
)
DEFAULT_OPTIONS = {"judged_only": False, "max_docs": None, "ties": "trec"}
needs_rust = pytest.mark.skipif(
    not _rust_available(), reason="native module ranklens._ranklens not built"
)


# Random levels above every label are part of the input space: no warning wanted.
@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@needs_rust
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(inputs=st.one_of(eval_inputs(), eval_inputs(labels=FLOAT_LABELS)), options=OPTIONS)
@example(inputs=SEEDED_INPUTS[0], options=DEFAULT_OPTIONS)
@example(inputs=SEEDED_INPUTS[1], options=DEFAULT_OPTIONS)
@example(inputs=SEEDED_INPUTS[2], options=DEFAULT_OPTIONS)
@example(inputs=SEEDED_INPUTS[3], options=DEFAULT_OPTIONS)
@example(inputs=SEEDED_INPUTS[4], options=DEFAULT_OPTIONS)
@example(inputs=SEEDED_INPUTS[5], options=DEFAULT_OPTIONS)
@example(inputs=(HAND_QRELS, HAND_RUN, 1), options=DEFAULT_OPTIONS)
@example(inputs=(HAND_QRELS, HAND_RUN, 2), options=DEFAULT_OPTIONS)
@example(
    inputs=(HAND_QRELS, HAND_RUN, 1),
    options={"judged_only": True, "max_docs": 4, "ties": "input"},
)
def test_rust_matches_reference(inputs, options) -> None:
    import ranklens

    qrels, run, level = inputs
    metrics = parse_metrics(RUST_METRICS)
    ref = evaluate_reference(qrels, run, metrics, relevance_level=level, **options)
    res = ranklens.evaluate(
        qrels, run, RUST_METRICS, relevance_level=level, backend="rust", **options
    )
    for m in metrics:
        got = res.per_query(m.name)
        assert set(got) == set(ref), m.name
        for qid in ref:
            assert got[qid] == pytest.approx(ref[qid][m.name], abs=TOL), (qid, m.name, options)
        want = aggregate(m, (ref[qid][m.name] for qid in sorted(ref)))
        assert res[m.name] == pytest.approx(want, rel=TOL, abs=TOL), m.name


@needs_rust
def test_python_backend_is_the_reference() -> None:
    import ranklens

    for level in (1, 2):
        res = ranklens.evaluate(
            HAND_QRELS, HAND_RUN, RUST_METRICS, relevance_level=level, backend="python"
        )
        ref = evaluate_reference(HAND_QRELS, HAND_RUN, RUST_METRICS, relevance_level=level)
        for m in parse_metrics(RUST_METRICS):
            assert res.per_query(m.name) == {qid: v[m.name] for qid, v in ref.items()}
