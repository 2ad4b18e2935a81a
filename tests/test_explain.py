"""`ranklens.explain`: the table, the ideal ranking and the formulas agree with
`evaluate`."""

from __future__ import annotations

import math

import pytest

import ranklens
from ranklens import Qrels, RanklensInputError

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d9": 1},
    "q2": {"x": 1},
}
RUN = {
    "q1": {"d1": 0.9, "d2": 0.8, "d5": 0.7, "d3": 0.6, "d4": 0.1},
    "q2": {"y": 1.0},
}
METRICS = ["ndcg@3", "P@3", "recall@3", "map@3", "mrr@3", "dcg@3", "idcg@3", "hit_rate@1"]


def test_values_equal_evaluate():
    e = ranklens.explain(QRELS, RUN, "q1", k=3, metrics=METRICS)
    res = ranklens.evaluate(QRELS, RUN, METRICS)
    for name, value in e.values.items():
        assert value == res.per_query(name)["q1"], name


def test_table_and_running_sums():
    e = ranklens.explain(QRELS, RUN, "q1", k=3, metrics=METRICS)
    assert [r["doc"] for r in e.ranked] == ["d1", "d2", "d5"]
    assert [r["label"] for r in e.ranked] == [2.0, 0.0, None]
    assert e.num_ret == 5
    assert e.ranked[-1]["dcg"] == pytest.approx(e.values["dcg@3"], abs=1e-15)
    # ideal: labels 3, 2, 1 (d4, d1, then d3 or d9)
    assert [r["label"] for r in e.ideal] == [3.0, 2.0, 1.0]
    assert e.ideal[-1]["idcg"] == pytest.approx(e.values["idcg@3"], abs=1e-15)
    assert [r["discount"] for r in e.ranked] == [math.log2(2), math.log2(3), math.log2(4)]


def test_formulas_filled_in():
    e = ranklens.explain(QRELS, RUN, "q1", k=3, metrics=METRICS)
    dcg = 2 / math.log2(2)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    f = e.formulas
    assert f["ndcg@3"] == f"ndcg@3 = {dcg:.4f} / {idcg:.4f} = {dcg / idcg:.4f}"
    assert f["precision@3"] == "precision@3 = 1 / 3 = 0.3333"
    assert f["recall@3"] == "recall@3 = 1 / 4 (relevant) = 0.2500"
    assert f["map@3"] == "map@3 = (1/1) / 4 (relevant) = 0.2500"
    assert f["mrr@3"] == "mrr@3 = 1 / 1 = 1.0000"
    text = str(e)
    assert "unjudged" in text and "ideal ranking" in text and f["ndcg@3"] in text
    html = e._repr_html_()
    assert "<table>" in html and "unjudged" in html
    assert "Explanation(query_id='q1'" in repr(e)


def test_default_metrics_and_missing_query():
    e = ranklens.explain(QRELS, RUN, "q2")
    assert set(e.values) == {"ndcg@10", "precision@10", "recall@10", "map@10", "mrr@10"}
    assert e.formulas["mrr@10"].startswith("mrr@10 = 0 (no relevant document")
    e = ranklens.explain({"q3": {"a": 1}}, RUN, "q3")
    assert e.ranked == [] and e.values["ndcg@10"] == 0.0
    with pytest.raises(RanklensInputError, match="not in the qrels"):
        ranklens.explain(QRELS, RUN, "nope")
    with pytest.raises(RanklensInputError, match="positive int"):
        ranklens.explain(QRELS, RUN, "q1", k=0)


def test_grouped_qrels():
    qrels = Qrels.from_groups({"q1": [["test-1", "test-2"], ["test-3"]]})
    run = {"q1": ["test-1", "pred-1", "test-2", "pred-3"]}
    e = ranklens.explain(qrels, run, "q1", k=4, metrics=["ndcg@4", "recall@4", "P@4"])
    assert [r["label"] for r in e.ranked] == [1.0, None, 0.0, None]
    assert len(e.ideal) == 2  # one member per group
    res = ranklens.evaluate(qrels, run, ["ndcg@4", "recall@4", "P@4"])
    for name, value in e.values.items():
        assert value == res[name]
    assert e.formulas["recall@4"] == "recall@4 = 1 / 2 (relevant) = 0.5000"
