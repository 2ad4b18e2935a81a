"""``ranklens.compat.sklearn`` against scikit-learn itself, value for value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ranklens.compat import sklearn as rl
from ranklens.errors import RanklensInputError

skm = pytest.importorskip("sklearn.metrics")


@st.composite
def problems(draw, negative=False, untied=False):
    rows = draw(st.integers(1, 5))
    # past 16 columns numpy's default argsort is not stable: the tie order of
    # ignore_ties=True must still be scikit-learn's
    cols = draw(st.sampled_from([2, 3, 5, 9, 17, 40]))
    pool = [0, 0, 1, 2, 3, 0.5] + ([-1, -2.5] if negative else [])
    y_true = np.array(
        draw(st.lists(st.sampled_from(pool), min_size=rows * cols, max_size=rows * cols)),
        dtype=np.float64,
    ).reshape(rows, cols)
    if untied:
        y_score = (
            np.array(
                [draw(st.permutations(list(range(cols)))) for _ in range(rows)], dtype=np.float64
            )
            / 7
        )
    else:
        y_score = np.array(
            draw(
                st.lists(
                    st.sampled_from([0.1, 0.2, 0.5, 0.9]),
                    min_size=rows * cols,
                    max_size=rows * cols,
                )
            )
        ).reshape(rows, cols)
    k = draw(st.sampled_from([None, 1, 2, 3, 20]))
    weights = draw(
        st.one_of(
            st.none(), st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=rows, max_size=rows)
        )
    )
    return y_true, y_score, k, weights


SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(p=problems())
def test_ndcg_with_ties_averaged(p):
    y_true, y_score, k, w = p
    want = skm.ndcg_score(y_true, y_score, k=k, sample_weight=w)
    assert rl.ndcg_score(y_true, y_score, k=k, sample_weight=w) == pytest.approx(want, abs=1e-14)


@SETTINGS
@given(p=problems(), untied=st.booleans())
def test_ndcg_ignoring_ties(p, untied):
    # tied scores included: the order among ties is scikit-learn's argsort order
    y_true, y_score, k, w = p
    if untied:
        y_score = y_score + np.arange(y_score.shape[1]) * 1e-3
    want = skm.ndcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=True)
    got = rl.ndcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=True)
    assert got == pytest.approx(want, abs=1e-14)


def test_ignore_ties_all_tied_row():
    # every score tied: scikit-learn ranks [0 1 2 3 4] reversed (argsort of
    # equal keys, reversed), the ideal order: nDCG 1.0 and DCG of the reversed row
    y_true = np.array([[0, 1, 2, 3, 4]])
    y_score = np.zeros((1, 5))
    assert rl.ndcg_score(y_true, y_score, ignore_ties=True) == pytest.approx(1.0, abs=1e-15)
    want = float((np.array([4, 3, 2, 1, 0]) / np.log2(np.arange(2, 7))).sum())
    assert rl.dcg_score(y_true, y_score, ignore_ties=True) == pytest.approx(want, rel=1e-14)


def test_ignore_ties_on_many_random_tied_rows():
    # 200 rows with ties, wide enough that argsort is not stable: row by row equal
    rng = np.random.default_rng(7)
    y_true = rng.integers(0, 4, (200, 30))
    y_score = rng.integers(0, 3, (200, 30)).astype(np.float64)
    want = skm._ranking._ndcg_sample_scores(y_true, y_score, ignore_ties=True)
    got = rl._ndcg_sample_scores(y_true, y_score, ignore_ties=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    want = skm._ranking._dcg_sample_scores(y_true - 1, y_score, k=5, ignore_ties=True)
    got = rl._dcg_sample_scores(y_true - 1, y_score, k=5, ignore_ties=True)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@SETTINGS
@given(p=problems(negative=True), log_base=st.sampled_from([2, 10, 1.5]))
def test_dcg_with_negative_gains_and_log_bases(p, log_base):
    y_true, y_score, k, w = p
    want = skm.dcg_score(y_true, y_score, k=k, sample_weight=w, log_base=log_base)
    got = rl.dcg_score(y_true, y_score, k=k, sample_weight=w, log_base=log_base)
    assert got == pytest.approx(want, rel=1e-13, abs=1e-13)


@SETTINGS
@given(p=problems(negative=True))
def test_dcg_ignoring_ties(p):
    y_true, y_score, k, w = p
    want = skm.dcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=True)
    got = rl.dcg_score(y_true, y_score, k=k, sample_weight=w, ignore_ties=True)
    assert got == pytest.approx(want, rel=1e-13, abs=1e-13)


def test_scikit_learn_docstring_examples():
    # scikit-learn's own examples (ndcg_score docstring): 0.69..., 0.49..., ties.
    true_relevance = np.asarray([[10, 0, 0, 1, 5]])
    scores = np.asarray([[0.1, 0.2, 0.3, 4, 70]])
    assert rl.ndcg_score(true_relevance, scores) == pytest.approx(
        skm.ndcg_score(true_relevance, scores)
    )
    scores = np.asarray([[0.05, 1.1, 1.0, 0.5, 0.0]])
    assert rl.ndcg_score(true_relevance, scores, k=4) == pytest.approx(
        skm.ndcg_score(true_relevance, scores, k=4)
    )
    scores = np.asarray([[1, 0, 0, 0, 1]])
    for k in (1, 2):
        assert rl.ndcg_score(true_relevance, scores, k=k) == pytest.approx(
            skm.ndcg_score(true_relevance, scores, k=k)
        )
    # All-zero rows count as 0 in the mean: (1 + 0) / 2.
    assert rl.ndcg_score([[1, 0], [0, 0]], [[0.9, 0.1], [0.5, 0.4]]) == 0.5


BAD = [
    ("ndcg_score", ([[1, -1]], [[0.1, 0.2]]), {}),  # negative y_true
    ("ndcg_score", ([[1], [0]], [[0.1], [0.2]]), {}),  # one document
    ("ndcg_score", ([1, 0, 1], [0.1, 0.2, 0.3]), {}),  # 1-D
    ("dcg_score", ([1, 0, 1], [0.1, 0.2, 0.3]), {}),
    ("dcg_score", ([[1], [0]], [[0.1], [0.2]]), {}),  # one column
    ("ndcg_score", ([[1, 0], [0, 1]], [[0.1, 0.2]]), {}),  # lengths differ
    ("ndcg_score", ([[1, 0]], [[0.1, 0.2]]), {"sample_weight": [1, 2]}),
    ("ndcg_score", ([[1, 0]], [[0.1, 0.2]]), {"k": 0}),
    ("dcg_score", ([[1, 0]], [[0.1, 0.2]]), {"log_base": 0}),
    ("ndcg_score", ([[1, np.nan]], [[0.1, 0.2]]), {}),
    ("ndcg_score", ([[1, 0]], [[np.nan, 0.2]]), {}),
]


@pytest.mark.parametrize(("func", "args", "kwargs"), BAD)
def test_errors_where_scikit_learn_raises(func, args, kwargs):
    with pytest.raises(ValueError) as theirs:
        getattr(skm, func)(*args, **kwargs)
    with pytest.raises(RanklensInputError) as ours:
        getattr(rl, func)(*args, **kwargs)
    # The same first words (scikit-learn's messages, where it has its own).
    first = str(theirs.value).split()[:2]
    if first[0] in ("ndcg_score", "Computing", "Only", "Found"):
        assert str(ours.value).split()[:2] == first, (ours.value, theirs.value)
