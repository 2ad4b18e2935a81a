"""``ranklens.evaluate_topk``: ranked id lists against relevant ids or aligned labels,
checked against the id path (``ranklens.evaluate``) on the same rankings as
qrels and run, for every family."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens._names import FAMILIES, parse_metrics
from ranklens.errors import RanklensInputError

ALL = parse_metrics(
    [f for f, fam in FAMILIES.items() if fam.cutoff != "required" and not fam.subtopics]
    + [f"{f}@3" for f, fam in FAMILIES.items() if fam.cutoff != "none" and not fam.subtopics]
)


@st.composite
def rankings(draw):
    rows = draw(st.integers(1, 4))
    k = draw(st.integers(0, 8))
    ids = []
    for _ in range(rows):
        row = draw(st.lists(st.integers(0, 12), min_size=k, max_size=k, unique=True))
        pad = draw(st.integers(0, k))  # padding at the end, as ANN libraries return it
        ids.append(row[: k - pad] + [-1] * pad)
    return ids


def id_path(qrels, run, level=1):
    res = ranklens.evaluate(qrels, run, ALL, relevance_level=level)
    return {q: res.values[i] for i, q in enumerate(res.query_ids)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=rankings(), data=st.data())
def test_relevant_ids_equal_the_id_path(ids, data):
    relevant = [data.draw(st.lists(st.integers(0, 12), max_size=5)) for _ in ids]
    res = ranklens.evaluate_topk(
        np.array(ids, dtype=np.int64).reshape(len(ids), -1), relevant, ALL, empty="nan"
    )
    qrels = {str(i): {str(d): 1 for d in rel} for i, rel in enumerate(relevant) if rel}
    run = {str(i): [str(d) for d in row if d >= 0] for i, row in enumerate(ids)}
    if not qrels:
        assert np.isnan(res.values).all()
        return
    want = id_path(qrels, run)
    for i in range(len(ids)):
        if str(i) in want:
            np.testing.assert_allclose(res.values[i], want[str(i)], rtol=1e-12, atol=1e-12)
        else:
            assert np.isnan(res.values[i]).all()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=rankings(), data=st.data(), level=st.sampled_from([1, 2]))
def test_aligned_labels_equal_the_id_path(ids, data, level):
    k = len(ids[0])
    labels = [
        data.draw(st.lists(st.sampled_from([0, 1, 2, 3, -1]), min_size=k, max_size=k)) for _ in ids
    ]
    res = ranklens.evaluate_topk(
        np.array(ids, dtype=np.int64).reshape(len(ids), -1),
        np.array(labels, dtype=np.float64).reshape(len(ids), -1),
        ALL,
        relevance_level=level,
        empty="nan",
    )
    qrels = {
        str(i): {str(d): lab for d, lab in zip(row, lrow) if d >= 0}
        for i, (row, lrow) in enumerate(zip(ids, labels))
    }
    run = {str(i): [str(d) for d in row if d >= 0] for i, row in enumerate(ids)}
    nonempty = {q: j for q, j in qrels.items() if any(v >= level for v in j.values())}
    if not nonempty:
        assert np.isnan(res.values).all()
        return
    want = id_path(nonempty, run, level)
    for i in range(len(ids)):
        if str(i) in want:
            np.testing.assert_allclose(res.values[i], want[str(i)], rtol=1e-12, atol=1e-12)
        else:
            assert np.isnan(res.values[i]).all()


def test_by_hand():
    # Row 0 retrieves 7, 3, 9 (then padding); relevant {3, 5}: 3 at rank 2: mrr 1/2,
    # recall@3 = 1/2.  Row 1 retrieves 5 first: mrr 1, recall@3 = 1 (R = 1).
    ids = np.array([[7, 3, 9, -1], [5, 1, 2, 4]])
    res = ranklens.evaluate_topk(ids, [[5, 3], [5]], ["mrr", "recall@3"])
    assert res.values.tolist() == [[0.5, 0.5], [1.0, 1.0]]
    assert list(res.query_ids) == ["0", "1"]
    # Aligned labels (float: read as labels): R counts the relevant retrieved ones.
    lab = np.array([[0.0, 1.0, 1.0, 5.0], [0.0, 0.0, 0.0, 0.0]])
    res = ranklens.evaluate_topk(ids, lab, ["mrr", "recall@3"], empty="skip")
    assert res.values.tolist() == [[0.5, 1.0]] and res.ignored_queries == ["1"]
    # An integer label matrix needs relevant_is="labels".
    res = ranklens.evaluate_topk(ids, lab.astype(int), "mrr", relevant_is="labels", empty="one")
    assert res.values[:, 0].tolist() == [0.5, 1.0]


def test_bad_input():
    ids = np.array([[1, 1, 2]])
    with pytest.raises(RanklensInputError, match="ids row 0: id 1 is listed more than once"):
        ranklens.evaluate_topk(ids, [[1]], "mrr")
    with pytest.raises(RanklensInputError, match="relevant has 2 rows, ids 1"):
        ranklens.evaluate_topk(np.array([[1, 2]]), [[1], [2]], "mrr")
    with pytest.raises(RanklensInputError, match="relevant labels have shape"):
        ranklens.evaluate_topk(np.array([[1, 2]]), np.ones((1, 3)), "mrr")
    with pytest.raises(RanklensInputError, match="relevant_is must be one of"):
        ranklens.evaluate_topk(np.array([[1, 2]]), [[1]], "mrr", relevant_is="both")
    with pytest.raises(RanklensInputError, match="must hold integers"):
        ranklens.evaluate_topk(np.array([[1.0, 2.0]]), [[1]], "mrr")
