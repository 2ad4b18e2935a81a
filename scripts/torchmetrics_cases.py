"""Record torchmetrics' retrieval metrics on generated cases: the fixture
``tests/data/torchmetrics_cases.json`` that ``tests/test_compat_torchmetrics.py``
compares ``ranklens.compat.torchmetrics`` against (CI has no torch).

Run where torch and torchmetrics are installed (ranklens is not needed)::

    python scripts/torchmetrics_cases.py [--out tests/data/torchmetrics_cases.json]

The cases (``cases()``, also used by the live test): functional metrics on one
query and module metrics on several queries with shuffled ``indexes``; scores with
ties (rounded to a tenth) and scores <= 0; empty queries (no positive, and for
fall-out no negative, target); every ``empty_target_action`` but ``"error"``;
``top_k`` below and above the query sizes; ``adaptive_k``; ``ignore_index``; every
``aggregation`` string.  Binary metrics get ties only among equal targets
(torchmetrics' order among tied scores is torch's ``topk``/``argsort`` order,
which torch does not specify); nDCG gets ties across targets (it averages them).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

FUNCTIONAL = {
    "ndcg": "retrieval_normalized_dcg",
    "ap": "retrieval_average_precision",
    "rr": "retrieval_reciprocal_rank",
    "precision": "retrieval_precision",
    "recall": "retrieval_recall",
    "hit_rate": "retrieval_hit_rate",
    "r_precision": "retrieval_r_precision",
    "fall_out": "retrieval_fall_out",
}
MODULE = {
    "ndcg": "RetrievalNormalizedDCG",
    "ap": "RetrievalMAP",
    "rr": "RetrievalMRR",
    "precision": "RetrievalPrecision",
    "recall": "RetrievalRecall",
    "hit_rate": "RetrievalHitRate",
    "r_precision": "RetrievalRPrecision",
    "fall_out": "RetrievalFallOut",
}


def _scores(rng: np.random.Generator, target: np.ndarray, kind: str, ties: bool) -> np.ndarray:
    """Scores in [-0.5, 1): with ``ties``, rounded to a tenth; for the binary
    metrics ties are then broken between different targets by a target-dependent
    offset, so only documents of equal target tie."""
    s = rng.random(len(target)) * 1.5 - 0.5
    if not ties:
        return s
    s = np.round(s, 1)
    if kind != "ndcg":
        s = s + 0.01 * target  # ties only within a target value
    return s


def _target(rng: np.random.Generator, n: int, kind: str, empty: str) -> np.ndarray:
    if empty == "pos":
        return np.zeros(n, dtype=np.int64)
    if empty == "neg":
        return np.ones(n, dtype=np.int64)
    if kind == "ndcg":
        return rng.integers(0, 4, n) * (rng.random(n) < 0.5)
    return (rng.random(n) < 0.3).astype(np.int64)


def cases(seed: int = 0, n_functional: int = 160, n_module: int = 120) -> list[dict[str, Any]]:
    """The generated inputs and arguments (no expected values)."""
    rng = np.random.default_rng(seed)
    kinds = list(FUNCTIONAL)
    out: list[dict[str, Any]] = []
    for c in range(n_functional):
        kind = kinds[c % len(kinds)]
        n = int(rng.integers(1, 25))
        empty = ["", "", "", "pos", "neg"][int(rng.integers(0, 5))]
        target = _target(rng, n, kind, empty)
        preds = _scores(rng, target, kind, ties=bool(rng.random() < 0.5))
        args: dict[str, Any] = {}
        if kind != "r_precision":
            args["top_k"] = [None, 1, 3, 5, 40][int(rng.integers(0, 5))]
        if kind == "precision":
            args["adaptive_k"] = bool(rng.random() < 0.5)
        out.append(
            {
                "api": "functional",
                "kind": kind,
                "preds": preds.tolist(),
                "target": target.tolist(),
                "args": args,
            }
        )
    for c in range(n_module):
        kind = kinds[c % len(kinds)]
        q = int(rng.integers(1, 8))
        keys = rng.choice(np.arange(-5, 200), size=q, replace=False)
        p_all, t_all, i_all = [], [], []
        for key in keys:
            n = int(rng.integers(1, 12))
            empty = ["", "", "", "pos", "neg"][int(rng.integers(0, 5))]
            t = _target(rng, n, kind, empty)
            p_all.append(_scores(rng, t, kind, ties=bool(rng.random() < 0.5)))
            t_all.append(t)
            i_all.append(np.full(n, key))
        preds, target, indexes = (np.concatenate(x) for x in (p_all, t_all, i_all))
        # Shuffled: the order within a query does not matter (binary targets
        # tie only among equal targets, nDCG averages ties).
        perm = rng.permutation(len(preds))
        preds, target, indexes = preds[perm], target[perm], indexes[perm]
        args = {
            "empty_target_action": ["neg", "pos", "skip"][int(rng.integers(0, 3))],
            "aggregation": ["mean", "mean", "median", "min", "max"][int(rng.integers(0, 5))],
        }
        if kind != "r_precision":
            args["top_k"] = [None, 1, 3, 5, 40][int(rng.integers(0, 5))]
        if kind == "precision":
            args["adaptive_k"] = bool(rng.random() < 0.5)
        if rng.random() < 0.25:
            args["ignore_index"] = -100
            drop = rng.random(len(target)) < 0.2
            drop[0] = False  # never all of them
            target = np.where(drop, -100, target)
        out.append(
            {
                "api": "module",
                "kind": kind,
                "preds": preds.tolist(),
                "target": target.tolist(),
                "indexes": indexes.tolist(),
                "args": args,
            }
        )
    return out


def torchmetrics_value(case: dict[str, Any]) -> float:
    """torchmetrics' value on one case."""
    import torch
    import torchmetrics.functional.retrieval as F
    import torchmetrics.retrieval as M

    preds = torch.tensor(case["preds"], dtype=torch.float32)
    target = torch.tensor(case["target"], dtype=torch.long)
    if case["api"] == "functional":
        f = getattr(F, FUNCTIONAL[case["kind"]])
        return float(f(preds, target, **case["args"]))
    m = getattr(M, MODULE[case["kind"]])(**case["args"])
    m.update(preds, target, torch.tensor(case["indexes"], dtype=torch.long))
    return float(m.compute())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tests/data/torchmetrics_cases.json")
    a = ap.parse_args()
    import torch
    import torchmetrics

    recorded = []
    for case in cases():
        recorded.append({**case, "expected": torchmetrics_value(case)})
    meta = {
        "torch": torch.__version__,
        "torchmetrics": torchmetrics.__version__,
        "script": "scripts/torchmetrics_cases.py",
    }
    with open(a.out, "w") as f:
        json.dump({"meta": meta, "cases": recorded}, f, separators=(",", ":"))
        f.write("\n")
    print(f"{len(recorded)} cases -> {a.out} ({meta})")


if __name__ == "__main__":
    main()
