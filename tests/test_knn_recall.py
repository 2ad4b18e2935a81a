"""``ranklens.knn_recall``: vector-search recall@k, checked against Python sets and
against ann-benchmarks' ``get_recall_values`` (its code, restated below)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.errors import RanklensInputError


def by_sets(approx, exact, k):
    """The definition: distinct non-negative ids shared by the first k of each, / k."""
    out = []
    for a, e in zip(approx, exact):
        shared = {x for x in a[:k] if x >= 0} & {x for x in e[:k] if x >= 0}
        out.append(len(shared) / k)
    return out


def ann_benchmarks(dataset_distances, run_distances, count, epsilon=1e-3):
    """ann-benchmarks' get_recall_values with knn_threshold (per-row recall / count):
    t = dataset_distances[i][count - 1] + epsilon; count run distances d <= t."""
    out = []
    for true_d, run_d in zip(dataset_distances, run_distances):
        t = true_d[count - 1] + epsilon
        out.append(sum(1 for d in run_d[:count] if d <= t) / count)
    return out


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    rows=st.integers(1, 5),
    cols=st.integers(1, 45),
)
def test_equals_the_set_definition(data, rows, cols):
    ids = st.lists(st.integers(-1, 60), min_size=cols, max_size=cols)
    approx = data.draw(st.lists(ids, min_size=rows, max_size=rows))
    exact = data.draw(st.lists(ids, min_size=rows, max_size=rows))
    k = data.draw(st.integers(1, cols))
    got = ranklens.knn_recall(np.array(approx), np.array(exact), k)
    assert got.dtype == np.float64 and got.shape == (rows,)
    assert got.tolist() == pytest.approx(by_sets(approx, exact, k), abs=0)


def test_by_hand_and_input_forms():
    # Row 0: {1, 2, 3} and {3, 2, 9} share 2 of 3; row 1: 4 returned twice counts
    # once, -1 is padding: 1 of 3.
    approx = np.array([[1, 2, 3], [4, 4, -1]])
    exact = np.array([[3, 2, 9], [4, -1, 8]])
    assert ranklens.knn_recall(approx, exact, 3).tolist() == [2 / 3, 1 / 3]
    assert ranklens.knn_recall(approx, exact, 1).tolist() == [0.0, 1.0]
    # int32, uint32, strided (every other column of a wider array): same values.
    assert (
        ranklens.knn_recall(approx.astype(np.int32), exact.astype(np.uint32) * 1, 1).tolist()[1]
        == 1.0
    )
    wide = np.repeat(approx, 2, axis=1)
    assert ranklens.knn_recall(wide[:, ::2], exact, 3).tolist() == [2 / 3, 1 / 3]
    assert ranklens.knn_recall(approx.tolist(), exact.tolist(), 3).tolist() == [2 / 3, 1 / 3]


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    rows=st.integers(1, 4),
    cols=st.integers(1, 12),
)
def test_distances_follow_ann_benchmarks(data, rows, cols):
    dist = st.lists(
        st.sampled_from([0.0, 0.5, 1.0, 1.0005, 1.002, 2.0, 3.5]), min_size=cols, max_size=cols
    )
    approx_d = data.draw(st.lists(dist, min_size=rows, max_size=rows))
    exact_d = [sorted(r) for r in data.draw(st.lists(dist, min_size=rows, max_size=rows))]
    k = data.draw(st.integers(1, cols))
    got = ranklens.knn_recall(None, None, k, distances=(np.array(approx_d), np.array(exact_d)))
    assert got.tolist() == ann_benchmarks(exact_d, approx_d, k)
    # epsilon= changes the threshold: 1.0 + 1e-3 admits 1.0005, not 1.002.
    got = ranklens.knn_recall(None, None, 2, distances=([[1.0005, 1.002]], [[0.0, 1.0]]))
    assert got.tolist() == [0.5]
    got = ranklens.knn_recall(
        None, None, 2, distances=([[1.0005, 1.002]], [[0.0, 1.0]]), epsilon=0.01
    )
    assert got.tolist() == [1.0]


def test_bad_input():
    a = np.zeros((2, 3), dtype=np.int64)
    with pytest.raises(RanklensInputError, match=r"k must be in 1\.\.=3"):
        ranklens.knn_recall(a, a, 4)
    with pytest.raises(RanklensInputError, match="k must be a positive int"):
        ranklens.knn_recall(a, a, 0)
    with pytest.raises(RanklensInputError, match="approx has 2 rows, exact 1"):
        ranklens.knn_recall(a, a[:1], 2)
    with pytest.raises(RanklensInputError, match="must hold integers"):
        ranklens.knn_recall(a * 1.0, a, 2)
    with pytest.raises(RanklensInputError, match="distances must be a pair"):
        ranklens.knn_recall(a, a, 2, distances=a)
    with pytest.raises(RanklensInputError, match="exact distances\\[0, 1\\] is NaN"):
        ranklens.knn_recall(None, None, 2, distances=([[0.0, 0.0]], [[0.0, np.nan]]))


@pytest.mark.parametrize("k", [1, 5, 10, 64, 100])
def test_prefixes_of_wider_rows(k):
    """The first k of 100-wide rows (faiss' ``I`` searched at 100, scored at k),
    over several thousand rows (the rows read ahead, the pool's chunks), and
    the same rows copied to k-wide arrays: the definition's values."""
    rng = np.random.default_rng(k)
    exact = np.argsort(rng.random((3000, 300)), axis=1)[:, :100].astype(np.int64)
    approx = np.where(rng.random((3000, 100)) < 0.8, exact, rng.integers(-1, 400, (3000, 100)))
    want = by_sets(approx, exact, k)
    assert ranklens.knn_recall(approx, exact, k).tolist() == want
    narrow = (np.ascontiguousarray(approx[:, :k]), np.ascontiguousarray(exact[:, :k]))
    assert ranklens.knn_recall(*narrow, k).tolist() == want
    assert ranklens.knn_recall(approx, narrow[1], k, threads=1).tolist() == want
