"""``ranklens.compat.torchmetrics`` against torchmetrics' own values.

``tests/data/torchmetrics_cases.json`` holds torchmetrics' outputs on the generated
cases of ``scripts/torchmetrics_cases.py`` (its ``meta`` names the torch and
torchmetrics versions); ``test_live_against_torchmetrics`` recomputes them with
the installed torchmetrics when it is importable (skipped otherwise).
torchmetrics computes in float32: values agree to float32 rounding.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ranklens.compat import torchmetrics as rt
from ranklens.errors import RanklensInputError

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests" / "data" / "torchmetrics_cases.json").read_text())
CASES = FIXTURE["cases"]

FUNCTIONAL = {
    "ndcg": rt.retrieval_normalized_dcg,
    "ap": rt.retrieval_average_precision,
    "rr": rt.retrieval_reciprocal_rank,
    "precision": rt.retrieval_precision,
    "recall": rt.retrieval_recall,
    "hit_rate": rt.retrieval_hit_rate,
    "r_precision": rt.retrieval_r_precision,
    "fall_out": rt.retrieval_fall_out,
}
MODULE = {
    "ndcg": rt.RetrievalNormalizedDCG,
    "ap": rt.RetrievalMAP,
    "rr": rt.RetrievalMRR,
    "precision": rt.RetrievalPrecision,
    "recall": rt.RetrievalRecall,
    "hit_rate": rt.RetrievalHitRate,
    "r_precision": rt.RetrievalRPrecision,
    "fall_out": rt.RetrievalFallOut,
}


def ranklens_value(case: dict[str, Any]) -> Any:
    preds = np.array(case["preds"], dtype=np.float32)
    target = np.array(case["target"], dtype=np.int64)
    if case["api"] == "functional":
        return FUNCTIONAL[case["kind"]](preds, target, **case["args"])
    m = MODULE[case["kind"]](**case["args"])
    m.update(preds, target, np.array(case["indexes"], dtype=np.int64))
    return m.compute()


def test_fixture_covers_the_cases():
    kinds = {(c["api"], c["kind"]) for c in CASES}
    assert kinds == {(a, k) for a in ("functional", "module") for k in FUNCTIONAL}
    module = [c for c in CASES if c["api"] == "module"]
    assert {c["args"]["empty_target_action"] for c in module} == {"neg", "pos", "skip"}
    assert {c["args"]["aggregation"] for c in module} == {"mean", "median", "min", "max"}
    assert any("ignore_index" in c["args"] for c in module)
    assert any(c["args"].get("adaptive_k") for c in CASES)
    # Some queries are empty, some indexes unsorted.
    assert any(sum(c["target"]) == 0 for c in CASES if c["api"] == "functional")
    assert any(c["indexes"] != sorted(c["indexes"]) for c in module)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_against_recorded_torchmetrics(i):
    case = CASES[i]
    got = ranklens_value(case)
    assert isinstance(got, np.float32)
    assert float(got) == pytest.approx(case["expected"], rel=2e-6, abs=2e-7), case


def test_returns_numpy_float32_without_torch():
    v = rt.retrieval_precision(np.array([0.9, 0.1, 0.5]), np.array([1, 0, 0]), top_k=2)
    assert isinstance(v, np.float32) and v == np.float32(0.5)


def test_empty_target_action_error_and_checks():
    m = rt.RetrievalMAP(empty_target_action="error")
    m.update(np.array([0.3, 0.2]), np.array([0, 0]), np.array([1, 1]))
    with pytest.raises(RanklensInputError, match="no positive target"):
        m.compute()
    with pytest.raises(ValueError, match="empty_target_action"):
        rt.RetrievalMRR(empty_target_action="drop")
    with pytest.raises(ValueError, match="binary"):
        rt.retrieval_recall(np.array([0.3, 0.2]), np.array([2, 0]))
    with pytest.raises(ValueError, match="floats"):
        rt.retrieval_recall(np.array([3, 2]), np.array([1, 0]))
    with pytest.raises(ValueError, match="top_k"):
        rt.retrieval_hit_rate(np.array([0.3, 0.2]), np.array([1, 0]), top_k=0)
    with pytest.raises(ValueError, match="same shape"):
        rt.RetrievalRecall().update(np.array([0.3]), np.array([1, 0]), np.array([0, 0]))


def test_reset_and_batches_accumulate():
    m = rt.RetrievalRecall(top_k=1)
    assert m(np.array([0.9, 0.1]), np.array([0, 1]), np.array([0, 0])) == np.float32(0.0)
    m.update(np.array([0.9, 0.1]), np.array([1, 0]), np.array([1, 1]))
    assert m.compute() == np.float32(0.5)
    m.reset()
    assert m.compute() == np.float32(0.0)


@pytest.mark.skipif(
    importlib.util.find_spec("torchmetrics") is None, reason="torchmetrics is not installed"
)
def test_live_against_torchmetrics():
    """The generated cases (another seed) against the installed torchmetrics, with
    torch tensors in and out."""
    import torch

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from torchmetrics_cases import cases, torchmetrics_value
    finally:
        sys.path.pop(0)
    for case in cases(seed=1, n_functional=80, n_module=80):
        want = torchmetrics_value(case)
        preds = torch.tensor(case["preds"], dtype=torch.float32)
        target = torch.tensor(case["target"], dtype=torch.long)
        if case["api"] == "functional":
            got = FUNCTIONAL[case["kind"]](preds, target, **case["args"])
        else:
            m = MODULE[case["kind"]](**case["args"])
            m.update(preds, target, torch.tensor(case["indexes"], dtype=torch.long))
            got = m.compute()
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
        assert float(got) == pytest.approx(want, rel=2e-6, abs=2e-7), case
