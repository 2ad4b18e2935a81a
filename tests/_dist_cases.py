"""Data and cases shared by the Dask and Spark tests (``test_dask.py``, ``test_spark.py``).

Every distributed result is compared with ``ranklens.evaluate`` on the same pandas
frames, exactly: per-query values, aggregates, missing and ignored queries.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pandas as pd

import ranklens
from ranklens import Qrels, Run

# Means, sums (num_rel, num_ret, num_rel_ret), geometric means (gm_map), cutoffs, and
# err@10, whose automatic gmax is the largest label of the whole qrels.
METRICS = [
    "map",
    "ndcg@10",
    "ndcg",
    "P@5",
    "recall@100",
    "mrr",
    "bpref",
    "num_rel",
    "num_ret",
    "num_rel_ret",
    "gm_map",
    "err@10",
    "success@1",
    "accuracy@10",
    "compat",
    "rbp_cwl(p=0.5)",
    "nerr8(max_rel=2)@5",
    "inst(max_rel=2)",
]
# Families with a closed form under ties="expected".
EXPECTED_METRICS = ["map", "ndcg@10", "P@5", "recall@100", "mrr", "num_rel_ret"]

# (case id, options of the distributed evaluate, metrics)
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("defaults", {}, METRICS),
    ("relevance_level_2", {"relevance_level": 2}, METRICS),
    ("judged_only", {"judged_only": True}, METRICS),
    ("max_docs_5", {"max_docs": 5}, METRICS),
    ("ties_expected", {"ties": "expected"}, EXPECTED_METRICS),
    ("ties_input", {"ties": "input", "position": "rank"}, METRICS),
    ("ties_best", {"ties": "best"}, METRICS),
    ("ties_worst", {"ties": "worst"}, METRICS),
    ("score_f32", {"score_precision": "f32"}, METRICS),
]

# Ids whose byte order differs from their numeric or insertion order, and non-ASCII ids.
_SPECIAL = ["Z", "a", "é", "ñ1", "10", "9", "q\u4e2d"]


def make_data(seed: int = 0, nq: int = 60, int_ids: bool = False) -> tuple[Any, Any]:
    """(qrels, run) pandas frames: graded and negative labels, tied scores (also
    ties only at 32-bit precision), qrels queries missing from the run (q % 7 == 3)
    and run-only queries (q % 9 == 8).  The run is in rank order per query; its
    ``rank`` column is that order (for ``ties="input"``)."""
    rng = random.Random(seed)
    ids: list[Any] = (
        [1000 + q for q in range(nq)]
        if int_ids
        else [f"q{q:03d}" for q in range(nq - len(_SPECIAL))] + _SPECIAL
    )
    run_rows, qrels_rows = [], []
    for q, qid in enumerate(ids):
        docs = list(dict.fromkeys(f"d{rng.randrange(80)}" for _ in range(rng.randrange(1, 40))))
        if int_ids:
            docs = [int(d[1:]) for d in docs]
        if q % 9 != 8:
            judged = docs[: rng.randrange(1, len(docs) + 1)]
            extra = [f"d{80 + rng.randrange(20)}" if not int_ids else 80 + rng.randrange(20)]
            for d in dict.fromkeys(judged + extra):
                qrels_rows.append((qid, d, rng.choice([-1, 0, 0, 1, 1, 2, 3])))
        if q % 7 == 3:
            continue
        for rank, d in enumerate(docs):
            score = rng.choice([0.5, 1.0, 1.25, 2.0, 1.0000001, 1.00000011, rng.random()])
            run_rows.append((qid, d, score, rank + 1))
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score", "rank"])
    return qrels, run


def shuffled(run: Any, seed: int = 1) -> Any:
    """The run's rows in random order: one query's rows end up in several partitions."""
    return run.sample(frac=1, random_state=seed).reset_index(drop=True)


def reference(qrels: Any, run: Any, metrics: list[str], options: dict[str, Any]) -> Any:
    """``ranklens.evaluate`` in this process on the same rows and options."""
    opts = dict(options)
    opts.pop("position", None)
    precision = opts.pop("score_precision", "f64")
    q = qrels if isinstance(qrels, Qrels) else Qrels.from_pandas(qrels)
    r = Run.from_pandas(run, score_precision=precision)  # rows in rank order: "input" order
    return ranklens.evaluate(q, r, metrics, **opts)


def assert_same(got: Any, want: Any) -> None:
    """Bit-identical Results (per query and aggregated), not merely close."""
    assert got.names == want.names
    assert got.query_ids == want.query_ids
    assert got.missing_queries == want.missing_queries
    assert got.ignored_queries == want.ignored_queries
    assert got.relevance_level == want.relevance_level
    assert got.values.shape == want.values.shape
    np.testing.assert_allclose(got.values, want.values, rtol=0, atol=1e-12)
    assert np.array_equal(got.values, want.values)
    for m in want.names:
        assert got[m] == want[m], m


def grouped_qrels(qrels: Any) -> Qrels:
    """The qrels' relevant documents of each query as groups of two (RAG ground truth)."""
    gt: dict[str, list[list[str]]] = {}
    for qid, part in qrels[qrels["relevance"] > 0].groupby("query_id", sort=False):
        docs = part["doc_id"].tolist()
        gt[str(qid)] = [docs[i : i + 2] for i in range(0, len(docs), 2)]
    return Qrels.from_groups(gt)


def subtopic_qrels(qrels: Any) -> Qrels:
    """The qrels as subtopic judgments: each judged document for one or two of
    three subtopics (picked from its id), with its label."""
    rows = []
    for qid, doc, label in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"]):
        n = sum(map(ord, str(doc)))
        rows.append((str(qid), str(n % 3), str(doc), label))
        if n % 2:
            rows.append((str(qid), str((n + 1) % 3), str(doc), label))
    return Qrels.from_subtopics(rows)


DIVERSITY_METRICS = ["alpha_nDCG@10", "ERR_IA@5", "AP_IA", "ndcg@10"]


def with_first(frame: Any, column: str, value: Any, dtype: Any = None) -> Any:
    """A copy of ``frame`` whose first row holds ``value`` in ``column``."""
    if dtype is None:  # a null needs an object column unless a nullable dtype is given
        dtype = object if value is None else frame[column].dtype
    out = frame.astype({column: dtype})
    out.loc[out.index[0], column] = value
    return out
