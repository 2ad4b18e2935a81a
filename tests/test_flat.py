"""``ranklens.evaluate_flat``: torchmetrics' flat ``(preds, target, indexes)`` form,
grouped natively; checked against the dense reference on the grouped rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens._names import FAMILIES, parse_metrics
from ranklens.errors import RanklensInputError
from ranklens.metrics.dense import evaluate_dense_reference

ALL = parse_metrics(
    [f for f, fam in FAMILIES.items() if fam.cutoff != "required" and not fam.subtopics]
    + [f"{f}@3" for f, fam in FAMILIES.items() if fam.cutoff != "none" and not fam.subtopics]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cells=st.lists(
        st.tuples(
            st.sampled_from([-(10**12), -3, 0, 7, 10**15]),  # any index values
            st.sampled_from([0.0, 0.5, 1.0, 2.0]),
            st.sampled_from([0, 0, 1, 2, -1]),
        ),
        min_size=1,
        max_size=30,
    ),
    ties=st.sampled_from(["first", "best", "worst"]),
    presort=st.booleans(),
)
def test_equals_the_reference_on_grouped_rows(cells, ties, presort):
    if presort:
        cells = sorted(cells, key=lambda c: c[0])  # stable: input order within a query
    idx = np.array([c[0] for c in cells], dtype=np.int64)
    preds = np.array([c[1] for c in cells], dtype=np.float32)
    target = np.array([c[2] for c in cells])
    res = ranklens.evaluate_flat(preds, target, idx, ALL, ties=ties, empty="nan")
    keys = sorted(set(idx.tolist()))
    rows_s = [[c[1] for c in cells if c[0] == q] for q in keys]
    rows_l = [[c[2] for c in cells if c[0] == q] for q in keys]
    ref, _ = evaluate_dense_reference(rows_s, rows_l, ALL, 1, ties=ties, empty="nan")
    assert list(res.query_ids) == [str(q) for q in keys]
    np.testing.assert_allclose(res.values, np.array(ref, dtype=float), rtol=1e-12, atol=1e-12)


def test_sorted_and_shuffled_indexes_agree_with_the_dense_path():
    rng = np.random.default_rng(5)
    n, m = 200, 30
    s = rng.random((n, m), dtype=np.float32)
    lab = (rng.random((n, m)) < 0.1) * rng.integers(1, 4, (n, m))
    metrics = ["ndcg@10", "map", "mrr", "recall@10", "P@10"]
    want = ranklens.evaluate_dense(s, lab, metrics).values
    idx = np.repeat(np.arange(n) * 1000, m)  # sparse index values
    got = ranklens.evaluate_flat(s.ravel(), lab.ravel(), idx, metrics)
    np.testing.assert_array_equal(got.values, want)
    assert got.query_ids[:2] == ["0", "1000"]
    perm = rng.permutation(n * m)
    shuffled = ranklens.evaluate_flat(s.ravel()[perm], lab.ravel()[perm], idx[perm], metrics)
    # Tie order is input order; these float32 scores have no ties within a row.
    np.testing.assert_array_equal(shuffled.values, want)
    # 2-D tensors are read flattened; skip drops empty queries by index value.
    res = ranklens.evaluate_flat(s, lab, idx.reshape(n, m), "mrr", empty="skip")
    assert len(res.query_ids) + len(res.ignored_queries) == n


def test_by_hand_and_errors():
    # Query 5: cells 0.9 (label 0), 0.2 (label 1) -> mrr 1/2; query 2: 0.4 (1) -> 1.
    res = ranklens.evaluate_flat([0.9, 0.4, 0.2], [0, 1, 1], [5, 2, 5], ["mrr"])
    assert res.per_query("mrr") == {"2": 1.0, "5": 0.5}
    with pytest.raises(RanklensInputError, match="as many cells"):
        ranklens.evaluate_flat([0.1, 0.2], [1, 0], [0], "mrr")
    with pytest.raises(RanklensInputError, match="indexes must hold integers"):
        ranklens.evaluate_flat([0.1], [1], [0.5], "mrr")
    with pytest.raises(RanklensInputError, match=r"scores\[1\] is NaN"):
        ranklens.evaluate_flat([0.1, np.nan], [1, 0], [3, 3], "mrr")
