"""The engine-neutral core of ranklens.dask and ranklens.spark, without either engine.

Partitions are made by hand (every query alone, or queries dealt round-robin), scored
by ``score_frames`` and combined by ``combine``; the result must be ``evaluate``'s,
bit for bit.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import ranklens
from ranklens import Qrels, RanklensInputError, Run
from ranklens import _distributed as dist

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

from _dist_cases import (  # noqa: E402 (needs pandas)
    METRICS,
    assert_same,
    grouped_qrels,
    make_data,
    reference,
    shuffled,
)


def test_import_ranklens_imports_no_engine() -> None:
    code = (
        "import sys, ranklens, ranklens._distributed; "
        "print(sorted(m for m in ('dask', 'distributed', 'pyspark') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def deal(run: Any, parts: int) -> list[Any]:
    """The run's rows dealt into ``parts`` frames by query (all rows of a query together)."""
    queries = list(dict.fromkeys(run["query_id"]))
    return [run[run["query_id"].isin(queries[i::parts])] for i in range(min(parts, len(queries)))]


@pytest.mark.parametrize("parts", [1, 4, 1000])
def test_broadcast_partitions_combine_to_evaluate(parts: int) -> None:
    qrels, run = make_data(seed=0)
    want = reference(qrels, run, METRICS, {})
    q = Qrels.from_pandas(qrels)
    plan = dist.make_plan(METRICS, max_label=dist.max_label_of(q))
    shared = dist.SharedQrels(q)
    frames = [
        dist.score_frames(p, shared, plan, dist.Columns()) for p in deal(shuffled(run), parts)
    ]
    got = dist.combine(frames, plan, qrels=shared)
    assert_same(got, want)
    num_rel = want.per_query("num_rel")
    assert any(num_rel[m] > 0 for m in want.missing_queries)  # missing queries are not zeros


@pytest.mark.parametrize("parts", [1, 4, 1000])
def test_joined_partitions_combine_to_evaluate(parts: int) -> None:
    qrels, run = make_data(seed=1)
    want = reference(qrels, run, METRICS, {})
    plan = dist.make_plan(METRICS, max_label=float(qrels["relevance"].max()))
    everything = pd.concat([run[["query_id"]], qrels[["query_id"]]])
    queries = list(dict.fromkeys(everything["query_id"]))
    frames = []
    for i in range(min(parts, len(queries))):
        mine = queries[i::parts]
        frames.append(
            dist.score_frames(
                run[run["query_id"].isin(mine)],
                qrels[qrels["query_id"].isin(mine)],
                plan,
                dist.Columns(),
            )
        )
    assert_same(dist.combine(frames, plan), want)


def test_err_gmax_is_the_largest_label_of_the_whole_qrels() -> None:
    qrels, run = make_data(seed=2)
    top = qrels.index[qrels["query_id"] == run["query_id"].iloc[0]][0]
    qrels.loc[top, "relevance"] = 4  # one query holds the only 4: other partitions see 3
    metrics = ["err@10", "err"]
    q = Qrels.from_pandas(qrels)
    plan = dist.make_plan(metrics, max_label=dist.max_label_of(q))
    shared = dist.SharedQrels(q)
    frames = [dist.score_frames(p, shared, plan, dist.Columns()) for p in deal(run, 1000)]
    assert_same(dist.combine(frames, plan, qrels=shared), reference(qrels, run, metrics, {}))


def test_grouped_qrels_broadcast() -> None:
    qrels, run = make_data(seed=3)
    grouped = grouped_qrels(qrels)
    plan = dist.make_plan(METRICS, max_label=dist.max_label_of(grouped))
    shared = dist.SharedQrels(grouped)
    frames = [dist.score_frames(p, shared, plan, dist.Columns()) for p in deal(run, 5)]
    got = dist.combine(frames, plan, qrels=shared)
    assert_same(got, reference(grouped, run, METRICS, {}))


def test_ties_input_follows_the_position_column() -> None:
    qrels, run = make_data(seed=4)
    options = {"ties": "input", "position": "rank"}
    plan = dist.make_plan(METRICS, max_label=float(qrels["relevance"].max()), ties="input")
    cols = dist.Columns(position="rank")
    shared = dist.SharedQrels(Qrels.from_pandas(qrels))
    frames = [dist.score_frames(p, shared, plan, cols) for p in deal(shuffled(run), 3)]
    want = reference(qrels, run, METRICS, options)
    assert_same(dist.combine(frames, plan, qrels=shared), want)
    trec = reference(qrels, run, METRICS, {})
    assert not np.array_equal(want.values, trec.values)  # the data have ties to order
    with pytest.raises(RanklensInputError, match="position="):
        dist.score_frames(run, shared, plan, dist.Columns())
    with pytest.raises(RanklensInputError, match="positions must be distinct"):
        dist.score_frames(run.assign(rank=1), shared, plan, cols)


def test_take_queries_is_the_qrels_of_those_queries() -> None:
    qrels, _ = make_data(seed=5)
    q = Qrels.from_pandas(qrels)
    idx = np.array([0, 3, 4, 10, len(q) - 1])
    sub = dist.take_queries(q, idx)
    ids = [q.query_ids[i] for i in idx]
    assert sub.query_ids == ids
    assert sub.to_dict() == {i: q[i] for i in ids}
    assert len(dist.take_queries(q, np.array([], dtype=np.int64))) == 0


def test_a_query_emitted_twice_is_an_internal_error() -> None:
    qrels, run = make_data(seed=6)
    plan = dist.make_plan(["map"])
    shared = dist.SharedQrels(Qrels.from_pandas(qrels))
    frame = dist.score_frames(run, shared, plan, dist.Columns())
    one = frame.iloc[[0]]
    with pytest.raises(RuntimeError, match=f"query {one['query_id'].iloc[0]!r}"):
        dist.combine([frame, one], plan, qrels=shared)


def test_broadcast_qrels_inputs() -> None:
    qrels, _ = make_data(seed=9)
    cols = dist.Columns()
    q = Qrels.from_pandas(qrels)
    for given in (q, q.to_dict(), qrels, dist.SharedQrels(q)):
        shared, _ = dist.broadcast_plan(given, cols, METRICS, {})
        assert shared.qrels.to_dict() == q.to_dict()
    with pytest.raises(RanklensInputError, match="got a Run where Qrels"):
        dist.broadcast_plan(Run({"q": {"d": 1.0}}), cols, METRICS, {})
    with pytest.raises(RanklensInputError, match="a pandas DataFrame or a frame of the engine"):
        dist.broadcast_plan([("q", "d", 1)], cols, METRICS, {})


def test_bad_options_fail_in_make_plan() -> None:
    with pytest.raises(RanklensInputError, match="ties"):
        dist.make_plan("map", ties="random")
    with pytest.raises(ranklens.UnknownMetricError, match="expected"):
        dist.make_plan("inf_ap", ties="expected")
    with pytest.raises(RanklensInputError, match="score_precision"):
        dist.make_plan("map", score_precision="f16")
    with pytest.raises(RanklensInputError, match="judged_only"):
        dist.make_plan("map", judged_only="yes")
    with pytest.raises(RanklensInputError, match="no query"):
        dist.SharedQrels(Qrels({}))
    with pytest.raises(RanklensInputError, match="must differ"):
        dist.Columns(doc="query_id").check()


def test_misaligned_arrow_offsets_are_read() -> None:
    """Arrow buffers from IPC (a Dask P2P shuffle) may start at any byte: the int64
    offsets are copied to an aligned array rather than rejected."""
    ids = ["q1", "q1", "q2"]
    offsets = np.array([0, 2, 4, 6], dtype=np.int64).tobytes()
    raw = bytearray(b"\0\0\0" + offsets)  # offsets 3 bytes into the buffer
    buf = pa.py_buffer(bytes(raw))[3:]
    col = pa.LargeStringArray.from_buffers(3, buf, pa.py_buffer(b"q1q1q2"))
    assert col.buffers()[1].address % 8 != 0
    assert col.to_pylist() == ids
    table = pa.table({"query_id": col, "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]})
    assert Run.from_arrow(table).to_dict() == Run.from_pandas(table.to_pandas()).to_dict()
