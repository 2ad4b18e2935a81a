"""`ranklens.compat.axion`: Axion's retrieval metrics, by hand.

The fixtures are those of Axion's own tests (tests/metrics/heuristic/
test_retrieval.py in ax-foundry/axion); every expected value is derived in a
comment from the definitions in the module docstring.
"""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

import ranklens
from ranklens import RanklensInputError
from ranklens.compat import axion

ACTUAL = [{"id": f"doc{i}"} for i in range(1, 6)]  # doc1 .. doc5, ranks 1 .. 5
EXPECTED = [  # doc2 and doc4 retrieved (ranks 2, 4); doc6 never: 3 relevant
    {"id": "doc2", "relevance": 1.0},
    {"id": "doc4", "relevance": 1.0},
    {"id": "doc6", "relevance": 1.0},
]
GRADED = [
    {"id": "doc1", "relevance": 3.0},
    {"id": "doc2", "relevance": 1.0},
    {"id": "doc3", "relevance": 2.0},
    {"id": "doc4", "relevance": 0.0},
]
log2 = math.log2


def test_hit_rate_several_k_and_main_k():
    r = axion.HitRateAtK(k=[1, 2, 5]).compute(ACTUAL, EXPECTED)
    assert r.score == 1.0 and r.signals.main_k_used == 5  # main_k: the largest K
    assert [r.signals.results_by_k[k].is_hit for k in (1, 2, 5)] == [False, True, True]
    assert axion.HitRateAtK(k=[1, 2, 5], main_k=1).compute(ACTUAL, EXPECTED).score == 0.0
    # nothing relevant (relevance 0): never a hit
    zero = [{"id": "docX", "relevance": 0.0}]
    assert axion.HitRateAtK(k=3).compute(ACTUAL, zero).score == 0.0


def test_precision_divides_by_what_was_retrieved():
    r = axion.PrecisionAtK(k=[1, 3, 5, 10]).compute(ACTUAL, EXPECTED)
    by_k = r.signals.results_by_k
    assert by_k[1].score == 0.0  # doc1
    assert by_k[3].score == 1 / 3  # doc2 of 3
    assert by_k[5].score == 2 / 5  # doc2, doc4 of 5
    # k = 10: 2 hits / 5 retrieved (not / 10, trec_eval's P@10 = 0.2)
    assert by_k[10].score == 2 / 5 and r.score == 2 / 5
    assert (by_k[10].hits_in_top_k, by_k[10].total_retrieved_at_k) == (2, 5)
    assert by_k[10].total_relevant == 3
    native = ranklens.score(
        [d["id"] for d in ACTUAL], {d["id"]: d["relevance"] for d in EXPECTED}, ["P@10"]
    )
    assert native["P@10"] == 0.2


def test_recall_and_its_no_relevant_case():
    r = axion.RecallAtK(k=[2, 5]).compute(ACTUAL, EXPECTED)
    assert r.signals.results_by_k[2].score == 1 / 3  # doc2 of 3 relevant
    assert r.score == 2 / 3  # doc2, doc4 of 3
    none = axion.RecallAtK(k=[1, 3]).compute(ACTUAL, [{"id": "doc1", "relevance": 0}])
    assert none.score == 1.0  # Axion: trivially 1 when nothing is relevant
    assert none.signals.results_by_k[1].score == 1.0


def test_duplicates_count_each_time():
    dup = [{"id": "doc2"}, {"id": "doc2"}]
    one = [{"id": "doc2"}]
    assert axion.PrecisionAtK(k=2).compute(dup, one).score == 1.0  # 2 hits / 2
    assert axion.RecallAtK(k=2).compute(dup, one).score == 2.0  # 2 hits / 1 relevant
    # DCG: 1/log2(2) + 1/log2(3); IDCG (one reference document): 1
    ndcg = axion.NDCGAtK(k=2).compute(dup, one)
    assert ndcg.score == pytest.approx(1 + 1 / log2(3), abs=1e-12)


def test_ndcg_graded_by_hand():
    r = axion.NDCGAtK(k=[3, 5]).compute(ACTUAL, GRADED)
    # gains at ranks 1..5: 3, 1, 2, 0, 0 (doc5 not in the reference)
    dcg3 = 3 / log2(2) + 1 / log2(3) + 2 / log2(4)
    # ideal: 3, 2, 1, 0 (every reference relevance, largest first)
    idcg3 = 3 / log2(2) + 2 / log2(3) + 1 / log2(4)
    d3 = r.signals.results_by_k[3]
    assert d3.dcg == pytest.approx(dcg3, abs=1e-12)
    assert d3.idcg == pytest.approx(idcg3, abs=1e-12)
    assert d3.score == pytest.approx(dcg3 / idcg3, abs=1e-12)
    # k = 5: the 0 gains add nothing on either side
    assert r.score == pytest.approx(dcg3 / idcg3, abs=1e-12)
    native = ranklens.score(
        [d["id"] for d in ACTUAL], {d["id"]: d["relevance"] for d in GRADED}, "ndcg@3"
    )
    assert native["ndcg@3"] == pytest.approx(d3.score, abs=1e-12)
    # a negative relevance is a negative gain in Axion (trec_eval: unjudged, 0)
    neg = axion.NDCGAtK(k=2).compute(
        [{"id": "a"}, {"id": "b"}], [{"id": "a", "relevance": -1}, {"id": "b", "relevance": 1}]
    )
    # DCG = -1 + 1/log2(3); IDCG: ideal 1, -1 -> 1 - 1/log2(3)
    assert neg.score == pytest.approx((-1 + 1 / log2(3)) / (1 - 1 / log2(3)), abs=1e-12)


def test_ndcg_sums_as_numpy():
    # nine gains: numpy's pairwise sum, not left to right (Axion's bits)
    actual = [{"id": str(i)} for i in range(9)]
    expected = [{"id": str(i), "relevance": 0.1 * (i + 1)} for i in range(9)]
    d = axion.NDCGAtK(k=9).compute(actual, expected).signals.results_by_k[9]
    g = np.array([0.1 * (i + 1) for i in range(9)])
    assert d.dcg == float(np.sum(g / np.log2(np.arange(2, 11))))


def test_mrr_and_rank_of_first_relevant():
    r = axion.MeanReciprocalRank().compute(ACTUAL, EXPECTED)
    assert r.score == 0.5 and r.signals.rank_of_first_relevant == 2
    miss = axion.MeanReciprocalRank().compute([{"id": "x"}], EXPECTED)
    assert miss.score == 0.0 and miss.signals.rank_of_first_relevant is None
    native = ranklens.score(["x"], ["doc2"], "first_rel_rank", miss=None)
    assert math.isnan(native["first_rel_rank"])


def test_empty_and_malformed_input_give_nan():
    for actual, expected, why in [
        (None, EXPECTED, "`actual_ranking` field is missing or empty."),
        (ACTUAL, [], "`expected_reference` field is missing or empty."),
        ([{"not_id": "doc1"}], EXPECTED, "must be dicts with an 'id' key"),
        (ACTUAL, [{"not_id": "doc1"}], "must be dicts with an 'id' key"),
    ]:
        r = axion.MeanReciprocalRank().compute(actual, expected)
        assert math.isnan(r.score) and why in r.explanation


def test_execute_takes_an_item():
    class Item:
        actual_ranking = ACTUAL
        expected_reference = EXPECTED

    r = asyncio.run(axion.PrecisionAtK(k=3).execute(Item()))
    assert r.score == 1 / 3
    as_dict = {"actual_ranking": ACTUAL, "expected_reference": EXPECTED}
    assert asyncio.run(axion.MeanReciprocalRank().execute(as_dict)).score == 0.5
    assert set(axion.METRICS) == {
        "hit_rate_at_k",
        "mean_reciprocal_rank",
        "ndcg_at_k",
        "precision_at_k",
        "recall_at_k",
    }


@pytest.mark.parametrize(
    "cls", [axion.HitRateAtK, axion.NDCGAtK, axion.PrecisionAtK, axion.RecallAtK]
)
def test_k_checks(cls):
    cls(k=5)
    cls(k=[1, 3, 5], main_k=3)
    for bad in (0, [-1], [0, -1]):
        with pytest.raises(RanklensInputError, match="at least one positive integer"):
            cls(k=bad)
    with pytest.raises(ValueError, match="main_k"):
        cls(k=[1, 3], main_k=5)
