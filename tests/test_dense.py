"""The dense path: score matrices scored in place (``ranklens.evaluate_dense``).

The Rust path is checked against the pure-Python reference
(``ranklens.metrics.dense``, itself the reference backend of every metric run row
by row) on hypothesis-generated matrices full of ties, masks and empty rows, for
every family and every tie rule; the remaining tests pin the input handling
(dtypes, strides, errors) and the documented semantics by hand-derived values.
"""

from __future__ import annotations

import itertools
import math
import os
import sys
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from _child import thread_counts
from ranklens._names import FAMILIES, parse_metrics
from ranklens.errors import RanklensInputError, UnknownMetricError
from ranklens.metrics._expected import EXPECTED_FAMILIES
from ranklens.metrics.dense import evaluate_dense_reference

# Every family, at its default and (where it takes one) at a cutoff inside the row.
ALL = parse_metrics(
    [f for f, fam in FAMILIES.items() if fam.cutoff != "required" and not fam.subtopics]
    + [f"{f}@3" for f, fam in FAMILIES.items() if fam.cutoff != "none" and not fam.subtopics]
)
EXPECTED = [m for m in ALL if m.family in EXPECTED_FAMILIES]
LABELS = [0, 0, 0, 1, 2, 3, -1, 0.5]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.allclose(a, b, rtol=1e-12, atol=1e-12, equal_nan=True))


@st.composite
def matrices(draw, max_cols: int = 8):
    rows = draw(st.integers(1, 4))
    cols = draw(st.integers(0, max_cols))
    # Few distinct scores: ties everywhere.
    scores = draw(
        st.lists(
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]), min_size=cols, max_size=cols),
            min_size=rows,
            max_size=rows,
        )
    )
    labels = draw(
        st.lists(
            st.lists(st.sampled_from(LABELS), min_size=cols, max_size=cols),
            min_size=rows,
            max_size=rows,
        )
    )
    valid = draw(st.sampled_from(["all", "mask", "lengths"]))
    mask = lengths = None
    if valid == "mask":
        mask = draw(
            st.lists(
                st.lists(st.booleans(), min_size=cols, max_size=cols),
                min_size=rows,
                max_size=rows,
            )
        )
    elif valid == "lengths":
        lengths = draw(st.lists(st.integers(0, cols), min_size=rows, max_size=rows))
    return scores, labels, mask, lengths


def _both(scores, labels, mask, lengths, metrics, level, ties, empty="nan"):
    ref, ref_empty = evaluate_dense_reference(
        scores, labels, metrics, level, ties=ties, empty=empty, mask=mask, lengths=lengths
    )
    res = ranklens.evaluate_dense(
        np.array(scores, dtype=np.float64).reshape(len(scores), -1),
        np.array(labels, dtype=np.float64).reshape(len(labels), -1),
        metrics,
        relevance_level=level,
        ties=ties,
        empty=empty,
        mask=None if mask is None else np.array(mask, dtype=bool).reshape(len(mask), -1),
        lengths=lengths,
    )
    return res, np.array(ref, dtype=np.float64).reshape(len(scores), len(metrics)), ref_empty


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=matrices(),
    level=st.sampled_from([1, 2, 0.5]),
    ties=st.sampled_from(["first", "best", "worst"]),
)
def test_rust_equals_the_reference(m, level, ties):
    scores, labels, mask, lengths = m
    res, ref, _ = _both(scores, labels, mask, lengths, ALL, level, ties)
    assert same(res.values, ref), (res.values, ref)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=matrices(max_cols=7), level=st.sampled_from([1, 2]))
def test_expected_ties_equal_the_enumerated_mean(m, level):
    scores, labels, mask, lengths = m
    res, ref, _ = _both(scores, labels, mask, lengths, EXPECTED, level, "expected")
    assert same(res.values, ref), (res.values, ref)


# Families whose value never drops when a higher label moves up past a lower one:
# for them ties="best"/"worst" are the max/min over the orderings of tied scores
# (err with a fixed gmax: its automatic one is the largest label of all rows).
MONOTONE = parse_metrics(
    ["precision@2", "recall@2", "hits@2", "hit_rate@2", "mrr", "map", "map@2", "ndcg",
     "ndcg@2", "ndcg_burges", "dcg@2", "r_precision", "err(gmax=3)", "err(gmax=3)@2", "f1@2"]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(m=matrices(max_cols=6), level=st.sampled_from([1, 2]))
def test_best_and_worst_bound_every_ordering(m, level):
    scores, labels, _, _ = m
    best, worst = (
        ranklens.evaluate_dense(
            np.array(scores).reshape(len(scores), -1),
            np.array(labels, dtype=float).reshape(len(labels), -1),
            MONOTONE,
            relevance_level=level,
            ties=ties,
            empty="nan",
        ).values
        for ties in ("best", "worst")
    )
    for i, (srow, lrow) in enumerate(zip(scores, labels)):
        # Every ordering of the tied cells: permute columns, rank with "first".
        vals = []
        for perm in itertools.permutations(range(len(srow))):
            ref, _ = evaluate_dense_reference(
                [[srow[j] for j in perm]], [[lrow[j] for j in perm]], MONOTONE, level, empty="nan"
            )
            vals.append(ref[0])
        arr = np.array(vals, dtype=float).reshape(len(vals), len(MONOTONE))
        if np.isnan(arr).all():
            continue
        assert same(best[i], arr.max(axis=0)), (srow, lrow)
        assert same(worst[i], arr.min(axis=0)), (srow, lrow)


def test_column_order_breaks_ties_by_hand():
    # scores 0.2, 0.9, 0.9, 0.1; labels 1, 0, 2, 0.  Ranking: col 1, col 2 (tie:
    # lower column first), col 0, col 3 -> labels 0, 2, 1, 0.
    # mrr = 1/2; P@2 = 1/2; ndcg@2 = (2/log2(3)) / (2 + 1/log2(3)).
    res = ranklens.evaluate_dense(
        np.array([[0.2, 0.9, 0.9, 0.1]], dtype=np.float32),
        np.array([[1, 0, 2, 0]]),
        ["mrr", "P@2", "ndcg@2"],
    )
    want = [0.5, 0.5, (2 / math.log2(3)) / (2 + 1 / math.log2(3))]
    assert res.values.tolist()[0] == pytest.approx(want, abs=1e-15)
    assert list(res.query_ids) == ["0"]
    # expected: the tied pair {label 0, label 2} in either order: mrr (1 + 1/2) / 2.
    exp = ranklens.evaluate_dense([[0.2, 0.9, 0.9, 0.1]], [[1, 0, 2, 0]], "mrr", ties="expected")
    assert exp["mrr"] == pytest.approx(0.75, abs=1e-15)


def test_empty_rows_follow_the_policy():
    scores = np.array([[0.1, 0.2], [0.3, 0.4], [0.9, 0.1]])
    labels = np.array([[0, 0], [1, 0], [0, 0]])
    # Row 1: the relevant cell (0.3) ranks second: mrr 1/2.
    for empty, fill in [("zero", 0.0), ("one", 1.0)]:
        res = ranklens.evaluate_dense(scores, labels, ["mrr", "num_ret"], empty=empty)
        assert res.values.tolist() == [[fill, fill], [0.5, 2.0], [fill, fill]]
        assert res["mrr"] == pytest.approx((2 * fill + 0.5) / 3)
    res = ranklens.evaluate_dense(scores, labels, "mrr", empty="nan")
    assert np.isnan(res.values[[0, 2], 0]).all() and math.isnan(res["mrr"])
    res = ranklens.evaluate_dense(scores, labels, "mrr", empty="skip")
    assert list(res.query_ids) == ["1"] and res.ignored_queries == ["0", "2"]
    assert res["mrr"] == 0.5 and res.per_query("mrr") == {"1": 0.5}
    with pytest.raises(RanklensInputError, match="empty must be one of"):
        ranklens.evaluate_dense(scores, labels, "mrr", empty="drop")


def test_row_query_ids_are_lazy_strings_of_the_row_numbers():
    scores = np.array([[0.1, 0.2], [0.3, 0.4], [0.9, 0.1]])
    labels = np.array([[1, 0], [1, 0], [0, 0]])
    ids = ranklens.evaluate_dense(scores, labels, "mrr").query_ids
    assert len(ids) == 3 and list(ids) == ["0", "1", "2"] and ids == ["0", "1", "2"]
    assert ids[0] == "0" and ids[-1] == "2" and ids[1:] == ["1", "2"] and ids[::-2] == ["2", "0"]
    with pytest.raises(IndexError):
        ids[3]
    # empty="skip": the kept rows' numbers, still strings.
    kept = ranklens.evaluate_dense(scores, labels, "mrr", empty="skip").query_ids
    assert list(kept) == ["0", "1"] and kept[-1] == "1" and kept[:1] == ["0"]


def test_k_applies_to_metrics_without_a_cutoff():
    s = np.array([[3.0, 2.0, 1.0]])
    lab = np.array([[0, 0, 1]])
    res = ranklens.evaluate_dense(s, lab, ["recall", "P@1", "r_precision"], k=2)
    assert res.names == ["recall@2", "precision@1", "r_precision"]
    assert res.values.tolist() == [[0.0, 0.0, 0.0]]


def test_dtypes_and_strides_are_read_in_place_with_the_same_values():
    rng = np.random.default_rng(7)
    s = rng.integers(0, 6, (40, 25)).astype(np.float64) / 4  # exact in f16/bf16
    lab = (rng.random((40, 25)) < 0.2) * rng.integers(1, 4, (40, 25))
    metrics = ["ndcg@5", "map", "mrr", "recall@10", "P@3", "bpref"]
    want = ranklens.evaluate_dense(s, lab.astype(np.float64), metrics).values
    bf16_bits = (s.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    cases = [
        (s.astype(np.float32), lab.astype(np.int64)),
        (s.astype(np.float16), lab.astype(np.int32)),
        (s, lab.astype(np.int8)),
        (s, lab.astype(np.uint8)),
        (s, lab.astype(np.int16)),  # copied to float64
        (s, lab.astype(np.float16)),
        (np.asfortranarray(s), np.asfortranarray(lab)),  # strided
        (s.T.copy().T, lab.T.copy().T),
        (s[::-1][::-1], lab),  # negative strides: copied
    ]
    for sc, lb in cases:
        got = ranklens.evaluate_dense(sc, lb, metrics).values
        np.testing.assert_array_equal(got, want)
    # Column slices: every other column of a wider matrix.
    wide_s = np.repeat(s, 2, axis=1)
    wide_l = np.repeat(lab, 2, axis=1)
    got = ranklens.evaluate_dense(wide_s[:, ::2], wide_l[:, ::2], metrics).values
    np.testing.assert_array_equal(got, want)
    # bool labels: relevant = True (1).
    b = ranklens.evaluate_dense(s, lab > 0, metrics).values
    np.testing.assert_array_equal(b, ranklens.evaluate_dense(s, (lab > 0) * 1.0, metrics).values)
    # bfloat16 as its bits (test_bfloat16_through_ml_dtypes: as ml_dtypes' dtype).
    from ranklens import _ranklens

    specs = [(m.family, m.k, m.rel, list(m.params)) for m in parse_metrics(metrics)]
    vals, _ = _ranklens.evaluate_dense(bf16_bits, lab, specs, 1.0, "first", "zero", "bf16")
    np.testing.assert_array_equal(vals, want)


def test_bfloat16_through_ml_dtypes():
    """bfloat16 scores (ml_dtypes' dtype, what jax and torch convert to) are read in
    place, with the values of the same scores in float64; bfloat16 labels are
    widened.  Scores with 8 significant bits, exact in bfloat16, with ties."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(11)
    s = rng.integers(0, 6, (40, 25)).astype(np.float64) / 4
    lab = (rng.random((40, 25)) < 0.2) * rng.integers(1, 4, (40, 25))
    metrics = ["ndcg@5", "map", "mrr", "recall@10", "P@3", "bpref"]
    for ties in ("first", "expected", "best", "worst"):
        want = ranklens.evaluate_dense(s, lab.astype(np.float64), metrics, ties=ties).values
        bf = s.astype(ml_dtypes.bfloat16)
        got = ranklens.evaluate_dense(bf, lab, metrics, ties=ties).values
        np.testing.assert_array_equal(got, want)
        got = ranklens.evaluate_dense(
            bf.T.copy().T, lab.astype(ml_dtypes.bfloat16), metrics, ties=ties
        )
        np.testing.assert_array_equal(got.values, want)


def test_dlpack_and_array_protocol_objects():
    class Tensor:  # an object with only __array__ (what a CPU tensor offers too)
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    s = np.array([[0.5, 0.2]], dtype=np.float32)
    lab = np.array([[0, 1]])
    assert ranklens.evaluate_dense(Tensor(s), Tensor(lab), "mrr")["mrr"] == 0.5
    assert ranklens.evaluate_dense(s, lab, "mrr")["mrr"] == 0.5


def test_a_tensor_that_requires_grad_is_read_detached():
    """A tensor tracking gradients refuses DLPack and ``__array__`` (torch's
    errors); it is read through ``detach()``, on every array entry point."""

    class Tensor:
        def __init__(self, a, requires_grad):
            self.a, self.requires_grad = a, requires_grad

        def detach(self):
            return Tensor(self.a, False)

        def __dlpack__(self, **kw):
            if self.requires_grad:
                raise RuntimeError("Can't export tensors that require gradient")
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

        def __array__(self, dtype=None, copy=None):
            if self.requires_grad:
                raise RuntimeError("Can't call numpy() on Tensor that requires grad")
            return self.a

    rng = np.random.default_rng(4)
    s = rng.random((20, 12), dtype=np.float32)
    lab = (rng.random((20, 12)) < 0.3) * rng.integers(1, 4, (20, 12))
    metrics = ["ndcg@5", "map", "mrr"]
    want = ranklens.evaluate_dense(s, lab, metrics).values
    got = ranklens.evaluate_dense(Tensor(s, True), Tensor(lab, True), metrics).values
    np.testing.assert_array_equal(got, want)
    idx = np.repeat(np.arange(20), 12)
    flat = ranklens.evaluate_flat(Tensor(s.ravel(), True), lab.ravel(), idx, metrics).values
    np.testing.assert_array_equal(flat, want)
    ids = np.argsort(-s, axis=1, kind="stable")[:, :5]
    top = ranklens.knn_recall(Tensor(ids, True), ids, 5)
    np.testing.assert_array_equal(np.asarray(top), np.ones(20))


def _bf16(x: np.ndarray) -> np.ndarray:
    """float32 values exact in bfloat16 -> their bfloat16 bits."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any()
    return (bits >> 16).astype(np.uint16)


def test_bfloat16_tensor_protocol_without_torch(monkeypatch):
    """A torch-like bfloat16 tensor (numpy refuses its ``__dlpack__`` and
    ``__array__``) is read as its int16 view's bits (``x.view(<lib>.int16)``,
    exported through DLPack), the library found loaded, never imported."""
    rng = np.random.default_rng(2)
    s = rng.integers(0, 8, (30, 20)).astype(np.float32) / 4 - 0.5  # exact, ties
    lab = (rng.random((30, 20)) < 0.2) * rng.integers(1, 4, (30, 20))
    bits = _bf16(s)
    lib = types.ModuleType("fake_tensor_lib")
    lib.int16 = "int16-dtype"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_tensor_lib", lib)

    class Tensor:
        dtype = "torch.bfloat16"  # what str(torch.bfloat16) gives

        def __init__(self, bits, device_ok=True):
            self.bits, self.device_ok = bits, device_ok

        def __dlpack__(self, **kw):
            raise RuntimeError("Unsupported dtype in DLTensor.")

        def __array__(self, dtype=None, copy=None):
            raise TypeError("Got unsupported ScalarType BFloat16")

        def view(self, dtype):
            assert dtype == "int16-dtype"
            if not self.device_ok:
                raise RuntimeError("not on the CPU")
            return self.bits.view(np.int16)

    Tensor.__module__ = "fake_tensor_lib"
    metrics = ["ndcg@5", "map", "mrr", "recall@10", "bpref"]
    for ties in ("first", "expected"):
        want = ranklens.evaluate_dense(s.astype(np.float64), lab, metrics, ties=ties).values
        got = ranklens.evaluate_dense(Tensor(bits), lab, metrics, ties=ties).values
        np.testing.assert_array_equal(got, want)
    # bfloat16 labels are widened; flat cells read as one run each.
    got = ranklens.evaluate_dense(s, Tensor(_bf16(lab.astype(np.float32))), metrics).values
    np.testing.assert_array_equal(got, ranklens.evaluate_dense(s, lab, metrics).values)
    idx = np.repeat(np.arange(30), 20)
    flat = ranklens.evaluate_flat(Tensor(bits.ravel()), lab.ravel(), idx, metrics).values
    np.testing.assert_array_equal(flat, ranklens.evaluate_dense(s, lab, metrics).values)
    with pytest.raises(RanklensInputError, match="scores: a bfloat16 tensor must be on the CPU"):
        ranklens.evaluate_dense(Tensor(bits, device_ok=False), lab, metrics)


def test_torch_half_tensors_are_read_in_place():
    """Live torch (skipped without it): bfloat16 and float16 CPU tensors, strided
    too, give the values of the same scores in float64; bfloat16 scores are read
    where they lie (the core's array shares the tensor's memory)."""
    torch = pytest.importorskip("torch")
    from ranklens._arrays import matrix

    gen = torch.Generator().manual_seed(0)
    s = torch.randint(0, 8, (40, 25), generator=gen).float() / 4
    lab = (torch.rand(40, 25, generator=gen) < 0.2).long() * 2
    metrics = ["ndcg@5", "map", "mrr", "recall@10", "P@3", "bpref"]
    want = ranklens.evaluate_dense(s.double().numpy(), lab.numpy(), metrics).values
    for dt in (torch.bfloat16, torch.float16):
        h = s.to(dt)
        for x in (h, h.T.contiguous().T):
            np.testing.assert_array_equal(ranklens.evaluate_dense(x, lab, metrics).values, want)
        got = ranklens.evaluate_dense(s, lab.to(dt), metrics).values
        np.testing.assert_array_equal(got, want)
        idx = torch.arange(40).repeat_interleave(25)
        flat = ranklens.evaluate_flat(h.reshape(-1), lab.reshape(-1), idx, metrics).values
        np.testing.assert_array_equal(flat, want)
    bf = s.to(torch.bfloat16)
    a, half = matrix(bf, "scores", labels=False)
    assert half == "bf16" and np.shares_memory(a, bf.view(torch.int16).numpy())


def test_mask_and_lengths_leave_cells_out_unread():
    s = np.array([[1.0, np.nan, 3.0], [3.0, 2.0, 1.0]])
    lab = np.array([[1.0, np.nan, 0.0], [0.0, 0.0, 1.0]])
    mask = np.array([[True, False, True], [True, True, True]])
    res = ranklens.evaluate_dense(s, lab, "mrr", mask=mask)
    # Row 0: cells 0 (1.0, relevant) and 2 (3.0): rank 2.  Row 1: rank 3.
    assert res.values[:, 0].tolist() == [0.5, 1 / 3]
    # Columns reordered to (0, 2, 1): row 0 keeps 1.0 (relevant) and 3.0: rank 2;
    # row 1 is 3.0, 1.0 (relevant), 2.0: rank 3.
    res = ranklens.evaluate_dense(s[:, [0, 2, 1]], lab[:, [0, 2, 1]], "mrr", lengths=[2, 3])
    assert res.values[:, 0].tolist() == [0.5, 1 / 3]


def test_bad_input_names_the_cell_or_argument():
    s = np.array([[1.0, np.nan]])
    lab = np.array([[1, 0]])
    with pytest.raises(RanklensInputError, match=r"scores\[0, 1\] is NaN"):
        ranklens.evaluate_dense(s, lab, "mrr")
    with pytest.raises(RanklensInputError, match=r"labels\[0, 0\] is inf"):
        ranklens.evaluate_dense([[1.0]], [[np.inf]], "mrr")
    with pytest.raises(RanklensInputError, match="must match"):
        ranklens.evaluate_dense(np.ones((2, 3)), np.ones((3, 2)), "mrr")
    with pytest.raises(RanklensInputError, match=r"must be 2-D .*scores\[None, :\]"):
        ranklens.evaluate_dense(np.ones(3), np.ones(3), "mrr")
    with pytest.raises(RanklensInputError, match=r"got shape \(1, 2, 3\)$"):
        ranklens.evaluate_dense(np.ones((1, 2, 3)), np.ones((1, 2, 3)), "mrr")
    with pytest.raises(RanklensInputError, match="must hold numbers"):
        ranklens.evaluate_dense(np.array([["a"]]), [[1]], "mrr")
    with pytest.raises(RanklensInputError, match="ties must be one of"):
        ranklens.evaluate_dense([[1.0]], [[1]], "mrr", ties="trec")
    with pytest.raises(RanklensInputError, match="lengths"):
        ranklens.evaluate_dense([[1.0]], [[1]], "mrr", lengths=[2])
    with pytest.raises(RanklensInputError, match="mask has shape"):
        ranklens.evaluate_dense([[1.0]], [[1]], "mrr", mask=[[True, False]])
    with pytest.raises(RanklensInputError, match="k must be"):
        ranklens.evaluate_dense([[1.0]], [[1]], "mrr", k=0)
    with pytest.raises(UnknownMetricError, match="not available for inf_ap"):
        ranklens.evaluate_dense([[1.0]], [[1]], "inf_ap", ties="expected")


def test_threads_give_the_same_values():
    rng = np.random.default_rng(3)
    s = rng.random((3000, 30), dtype=np.float32)
    lab = (rng.random((3000, 30)) < 0.1) * 1
    one = ranklens.evaluate_dense(s, lab, ["ndcg@10", "map"], threads=1).values
    two = ranklens.evaluate_dense(s, lab, ["ndcg@10", "map"], threads=2).values
    np.testing.assert_array_equal(one, two)


def test_calls_of_one_task_run_on_the_calling_thread_with_the_same_values():
    # Up to 64 rows (one task of the row loops) run on the calling thread: the
    # same values and errors as those rows inside a larger call on the pool.
    rng = np.random.default_rng(4)
    s = rng.random((130, 20), dtype=np.float32)
    lab = (rng.random((130, 20)) < 0.2) * rng.integers(1, 4, (130, 20))
    ms = ["ndcg@10", "map", "mrr", "bpref"]  # bpref: the general path
    big = ranklens.evaluate_dense(s, lab, ms, threads=2).values
    for rows in (1, 63, 64):
        for threads in (None, 1, 2):
            small = ranklens.evaluate_dense(s[:rows], lab[:rows], ms, threads=threads)
            np.testing.assert_array_equal(small.values, big[:rows])
    ids = np.argsort(-s, axis=1)[:, :10]
    rel = np.take_along_axis(lab, ids, axis=1)
    big_topk = ranklens.evaluate_topk(ids, rel, ["ndcg@10", "map"], threads=2).values
    np.testing.assert_array_equal(
        ranklens.evaluate_topk(ids[:5], rel[:5], ["ndcg@10", "map"]).values, big_topk[:5]
    )
    bad = s[:3].copy()
    bad[2, 7] = np.nan
    with pytest.raises(RanklensInputError, match=r"\[2, 7\]"):
        ranklens.evaluate_dense(bad, lab[:3], "map")
    with pytest.raises(RanklensInputError, match="threads must be a positive int"):
        ranklens.evaluate_dense(s[:1], lab[:1], "map", threads=0)
    # evaluate_flat: up to 64 groups of up to 65,536 cells on the calling thread
    # (grouped and scored there), sorted or shuffled, the same values as those
    # rows of the dense call.
    for rows in (1, 64):
        preds, target = s[:rows].reshape(-1), lab[:rows].reshape(-1)
        idx = np.repeat(np.arange(rows) * 7 - 3, 20)
        perm = rng.permutation(len(idx))
        for threads in (None, 1, 2):
            flat = ranklens.evaluate_flat(preds, target, idx, ms, threads=threads)
            np.testing.assert_array_equal(flat.values, big[:rows])
            shuffled = ranklens.evaluate_flat(
                preds[perm], target[perm], idx[perm], ms, threads=threads
            )
            np.testing.assert_array_equal(shuffled.values, big[:rows])
    with pytest.raises(RanklensInputError, match=r"\[47\]"):
        ranklens.evaluate_flat(
            bad.reshape(-1), lab[:3].reshape(-1), np.repeat([0, 1, 2], 20), "map"
        )
    with pytest.raises(RanklensInputError, match="threads must be a positive int"):
        ranklens.evaluate_flat(s[0], lab[0], np.zeros(20, np.int64), "map", threads=0)
    # knn_recall: up to 256 rows on the calling thread, the same values.
    approx = rng.integers(0, 50, (300, 10))
    exact = np.argsort(rng.random((300, 50)), axis=1)[:, :10]
    da, de = rng.random((300, 10)), np.sort(rng.random((300, 10)), axis=1)
    big_ids = ranklens.knn_recall(approx, exact, 10, threads=2)
    big_d = ranklens.knn_recall(approx, exact, 10, distances=(da, de), threads=2)
    for rows in (1, 256):
        np.testing.assert_array_equal(
            ranklens.knn_recall(approx[:rows], exact[:rows], 10), big_ids[:rows]
        )
        np.testing.assert_array_equal(
            ranklens.knn_recall(approx[:rows], exact[:rows], 10, distances=(da[:rows], de[:rows])),
            big_d[:rows],
        )
    de_nan = de[:2].copy()
    de_nan[1, 9] = np.nan
    with pytest.raises(RanklensInputError, match=r"\[1, 9\]"):
        ranklens.knn_recall(approx[:2], exact[:2], 10, distances=(da[:2], de_nan))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_call_of_one_task_starts_no_thread():
    # In a fresh process: calls of up to 64 rows (256 for knn_recall, 64 groups
    # for evaluate_flat) leave the number of the process's threads as it was (no
    # pool made, none woken); 65 rows on two threads start the pool's (the probe
    # sees threads).
    setup = """
import numpy as np, ranklens
s = np.random.default_rng(0).random((65, 30), dtype=np.float32)
lab = (s > 0.8) * 2
"""
    small_calls = """
for t in (None, 1, 2):
    ranklens.evaluate_dense(s[:64], lab[:64], ["ndcg@10", "map"], threads=t)
    ranklens.evaluate_dense(s[:1], lab[:1], "bpref", threads=t)
    ranklens.evaluate_topk(np.arange(10)[None, :], lab[:1, :10], "map", threads=t)
    ids = np.arange(10)[None, :]
    ranklens.knn_recall(ids, ids, 10, threads=t)
    ranklens.knn_recall(ids, ids, 10, distances=(s[:1, :10], s[:1, :10]), threads=t)
    idx = np.repeat(np.arange(64), 30)
    ranklens.evaluate_flat(s[:64].ravel(), lab[:64].ravel(), idx, "map", threads=t)
    ranklens.evaluate_flat(s[:64].ravel(), lab[:64].ravel(), idx[::-1].copy(), "mrr", threads=t)
"""
    before, small, large = thread_counts(
        setup, small_calls, 'ranklens.evaluate_dense(s, lab, "map", threads=2)'
    )
    assert small == before
    assert large > before


# The families of the sparse fast path (src/core/dense/sparse.rs); a metric outside
# it (bpref) sends every row through the general path.
SPARSE = [
    "ndcg", "ndcg@3", "dcg@3", "map", "map@3", "mrr", "recip_rank@2", "recall@3",
    "P@3", "P", "hits@3", "hit_rate@3", "r_precision",
]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=matrices(max_cols=12),
    level=st.sampled_from([1, 2, 0.5]),
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
    fortran=st.booleans(),
    empty=st.sampled_from(["zero", "one", "nan", "skip"]),
    few=st.booleans(),
)
def test_sparse_path_equals_the_general_path_bit_for_bit(m, level, dtype, fortran, empty, few):
    scores, labels, _mask, lengths = m  # a mask takes the general path
    rows = len(scores)
    s = np.array(scores, dtype=dtype).reshape(rows, -1)
    lab = np.array(labels, dtype=np.float64).reshape(rows, -1)
    if fortran:  # strided rows
        s, lab = np.asfortranarray(s), np.asfortranarray(lab)
    metrics = SPARSE[:5] if few else SPARSE
    kw = dict(relevance_level=level, empty=empty, lengths=lengths)
    fast = ranklens.evaluate_dense(s, lab, metrics, **kw)
    general = ranklens.evaluate_dense(s, lab, [*metrics, "bpref"], **kw)
    got, want = fast.values, general.values[:, : len(metrics)]
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (got, want)


@pytest.mark.parametrize("simd", ["detected", "avx2", "portable"])
def test_long_rows_take_the_sparse_path_with_the_general_values(simd, monkeypatch):
    """Rows across the label scan's 64-cell chunks, few labels (the sparse path),
    ties, every label dtype: the general path's values bit for bit, with the loops
    the CPU has (AVX-512 or AVX2 where present), and at most AVX2 and the portable
    ones (RANKLENS_SIMD)."""
    if simd != "detected":
        monkeypatch.setenv("RANKLENS_SIMD", simd)
    rng = np.random.default_rng(5)
    for cols in (63, 64, 65, 100, 129, 200):
        s = rng.integers(0, 8, (300, cols)).astype(np.float32) / 4
        lab = (rng.random((300, cols)) < 0.06) * rng.integers(1, 4, (300, cols))
        for sc in (s, s.astype(np.float64), s.astype(np.float16)):
            labs = (np.float64, np.float32, np.int32, np.int8)
            for lb in (lab, *(lab.astype(d) for d in labs), lab > 0):
                fast = ranklens.evaluate_dense(sc, lb, SPARSE).values
                general = ranklens.evaluate_dense(sc, lb, [*SPARSE, "bpref"]).values
                want = general[:, : len(SPARSE)]
                assert np.array_equal(fast.view(np.uint64), want.view(np.uint64)), cols


@pytest.mark.parametrize("wide", [False, True])
def test_flat_shuffled_large_on_every_thread_count_equals_the_dense_rows(wide):
    """Shuffled cells past one task (101,000 cells: grouped and copied into group
    order by parts on the pool), index values in a narrow range (counters) or a
    wide one (hash map): each group's values are those of its row scored by
    evaluate_dense, on 1, 2 and 3 threads; a NaN names its input cell."""
    rng = np.random.default_rng(11)
    rows, cols = 5050, 20
    s = rng.integers(0, 16, (rows, cols)).astype(np.float32) / 4  # many ties
    lab = np.where(rng.random((rows, cols)) < 0.2, rng.integers(1, 4, (rows, cols)), 0)
    ms = ["ndcg@10", "map", "mrr", "recall@10", "P@10", "bpref"]
    want = ranklens.evaluate_dense(s, lab, ms, threads=1).values
    keys = np.arange(rows, dtype=np.int64) * (1_000_003 if wide else 1) - 7
    idx = np.repeat(keys, cols)
    # Queries interleaved at random, each query's cells in column order (so
    # that ties break as in the dense rows): the k-th place holding query q
    # gets its column k.
    q = rng.permutation(rows * cols) // cols
    perm = np.empty(rows * cols, dtype=np.int64)
    perm[np.argsort(q, kind="stable")] = np.arange(rows * cols)
    assert not np.array_equal(perm, np.sort(perm))
    preds, target = s.reshape(-1)[perm], lab.reshape(-1)[perm]
    for threads in (1, 2, 3):
        got = ranklens.evaluate_flat(preds, target, idx[perm], ms, threads=threads)
        np.testing.assert_array_equal(np.asarray(got.query_ids, dtype=np.int64), keys)
        np.testing.assert_array_equal(got.values, want)
    bad = preds.copy()
    at = int(np.flatnonzero(perm == 4321 * cols + 5)[0])
    bad[at] = np.nan
    for threads in (1, 2, 3):
        with pytest.raises(RanklensInputError, match=rf"\[{at}\] is NaN"):
            ranklens.evaluate_flat(bad, target, idx[perm], ms, threads=threads)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cells=st.lists(
        st.tuples(
            st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0]),
            st.sampled_from(LABELS),
            st.integers(0, 4),
        ),
        min_size=1,
        max_size=40,
    ),
    level=st.sampled_from([1, 0.5]),
    dtype=st.sampled_from([np.float16, np.float32, np.float64]),
    strided=st.booleans(),
)
def test_flat_sparse_path_equals_the_general_path_bit_for_bit(cells, level, dtype, strided):
    cells = sorted(cells, key=lambda c: c[2])  # grouped: the sparse path reads runs
    preds = np.array([c[0] for c in cells], dtype=dtype)
    target = np.array([c[1] for c in cells], dtype=np.float64)
    idx = np.array([c[2] for c in cells], dtype=np.int64)
    if strided:  # every other cell of a longer array
        preds = np.repeat(preds, 2)[::2]
        target = np.repeat(target, 2)[::2]
    fast = ranklens.evaluate_flat(preds, target, idx, SPARSE, relevance_level=level)
    general = ranklens.evaluate_flat(preds, target, idx, [*SPARSE, "bpref"], relevance_level=level)
    got, want = fast.values, general.values[:, : len(SPARSE)]
    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (got, want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lens=st.lists(st.integers(1, 90), min_size=60, max_size=160),
    seed=st.integers(0, 2**32 - 1),
    ldtype=st.sampled_from([np.int64, np.int32, np.int8, np.uint8, np.float64, np.float32, bool]),
    simd=st.sampled_from(["detected", "avx2", "portable"]),
    level=st.sampled_from([1, 0.5]),
)
def test_flat_groups_take_the_block_path_with_the_dense_values(lens, seed, ldtype, simd, level):
    """Sorted ``indexes``, many groups of any length (the sparse path's blocks of
    groups), some with many labels (left to the general path): the values of the
    flat general path and of ``evaluate_dense`` on the groups as rows with
    ``lengths=``, bit for bit, with every instruction set the CPU runs."""
    rng = np.random.default_rng(seed)
    n = sum(lens)
    preds = (rng.integers(0, 16, n) / 4 - 1).astype(np.float32)
    dense_group = np.repeat(np.arange(len(lens)) % 7 == 0, lens)
    pos = rng.random(n) < np.where(dense_group, 0.6, 0.06)
    target = np.where(pos, rng.integers(1, 4, n), 0)
    if ldtype is bool:
        target = target > 0
    elif np.dtype(ldtype).kind in "if" and np.dtype(ldtype) != np.uint8:
        target = np.where(rng.random(n) < 0.05, -1, target)
    target = target.astype(ldtype)
    idx = np.repeat(2 * np.arange(len(lens), dtype=np.int64) - 50, lens)
    width = max(lens)
    s = np.zeros((len(lens), width), dtype=np.float32)
    lab = np.zeros((len(lens), width), dtype=target.dtype)
    mask = np.arange(width) < np.array(lens)[:, None]
    s[mask], lab[mask] = preds, target
    kw = dict(relevance_level=level, empty="nan")
    old = os.environ.get("RANKLENS_SIMD")
    if simd != "detected":
        os.environ["RANKLENS_SIMD"] = simd
    try:
        fast = ranklens.evaluate_flat(preds, target, idx, SPARSE, **kw)
        general = ranklens.evaluate_flat(preds, target, idx, [*SPARSE, "bpref"], **kw)
        dense = ranklens.evaluate_dense(s, lab, SPARSE, lengths=lens, **kw)
    finally:
        if old is None:
            os.environ.pop("RANKLENS_SIMD", None)
        else:
            os.environ["RANKLENS_SIMD"] = old
    assert list(fast.query_ids) == [str(x) for x in np.unique(idx)]
    want = general.values[:, : len(SPARSE)]
    assert np.array_equal(fast.values.view(np.uint64), want.view(np.uint64))
    assert np.array_equal(fast.values.view(np.uint64), dense.values.view(np.uint64))
