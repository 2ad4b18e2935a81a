"""``ranklens.dask.evaluate`` on a 2-worker LocalCluster gives ``evaluate``'s numbers, bit for bit.

The run is a Dask frame of shuffled rows in 5 partitions, so rows of one query sit
in several partitions; the qrels are broadcast (a pandas frame, a small Dask
frame, a Qrels object, grouped ones included, or a dict) or shuffled with the run
(``broadcast_limit=0``).  Every result is compared with ``ranklens.evaluate`` on
the same pandas frames (``_dist_cases.py``).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

import dask  # noqa: E402
import pandas as pd  # noqa: E402

import ranklens  # noqa: E402
import ranklens.dask as rdask  # noqa: E402
from _dist_cases import (  # noqa: E402
    CASES,
    DIVERSITY_METRICS,
    METRICS,
    assert_same,
    grouped_qrels,
    make_data,
    reference,
    shuffled,
    subtopic_qrels,
    with_first,
)
from ranklens import Qrels, RanklensInputError, UnknownMetricError  # noqa: E402


@pytest.fixture(scope="module")
def client() -> Any:
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data() -> tuple[Any, Any]:
    return make_data(seed=0)


def dask_run(run: Any, npartitions: int = 5) -> Any:
    return dd.from_pandas(shuffled(run), npartitions=npartitions, sort=False)


def test_rows_of_one_query_are_spread_over_partitions(data: Any) -> None:
    _, run = data
    parts = dask_run(run).to_delayed()
    seen = [set(p.compute()["query_id"]) for p in parts]
    split = {q for i, a in enumerate(seen) for b in seen[i + 1 :] for q in a & b}
    assert len(split) > 10  # the premise of every test below


@pytest.mark.parametrize("path", ["pandas", "dask-broadcast", "dask-join"])
@pytest.mark.parametrize(("case", "options", "metrics"), CASES, ids=[c[0] for c in CASES])
def test_same_as_evaluate(
    client: Any, data: Any, path: str, case: str, options: dict[str, Any], metrics: list[str]
) -> None:
    qrels, run = data
    kw: dict[str, Any] = {}
    qarg: Any = qrels
    if path != "pandas":
        qarg = dd.from_pandas(qrels.sample(frac=1, random_state=3), npartitions=3, sort=False)
    if path == "dask-join":
        kw["broadcast_limit"] = 0
    got = rdask.evaluate(qarg, dask_run(run), metrics, **options, **kw)
    want = reference(qrels, run, metrics, options)
    assert want.missing_queries and want.ignored_queries  # both kinds are exercised
    assert_same(got, want)


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_integer_ids_and_custom_column_names(client: Any, broadcast_limit: int) -> None:
    qrels, run = make_data(seed=4, int_ids=True)
    names = {"query_id": "qid", "doc_id": "docno", "score": "sim", "relevance": "rel"}
    got = rdask.evaluate(
        dd.from_pandas(qrels.rename(columns=names), npartitions=2),
        dask_run(run.rename(columns=names)),
        METRICS,
        query="qid",
        doc="docno",
        score="sim",
        label="rel",
        broadcast_limit=broadcast_limit,
    )
    assert_same(got, reference(qrels, run, METRICS, {}))


def test_qrels_object_dict_and_grouped(client: Any, data: Any) -> None:
    qrels, run = data
    q = Qrels.from_pandas(qrels)
    want = reference(q, run, METRICS, {})
    assert_same(rdask.evaluate(q, dask_run(run), METRICS), want)
    assert_same(rdask.evaluate(q.to_dict(), dask_run(run), METRICS), want)
    grouped = grouped_qrels(qrels)
    assert grouped.grouped
    got = rdask.evaluate(grouped, dask_run(run), METRICS, npartitions=3)
    assert_same(got, reference(grouped, run, METRICS, {}))


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_subtopic_qrels(client: Any, data: Any, broadcast_limit: int) -> None:
    qrels, run = data
    q = subtopic_qrels(qrels)
    got = rdask.evaluate(
        q, dask_run(run), DIVERSITY_METRICS, npartitions=3, broadcast_limit=broadcast_limit
    )
    assert_same(got, reference(q, run, DIVERSITY_METRICS, {}))


def test_local_scheduler_without_the_cluster(data: Any) -> None:
    qrels, run = data
    with dask.config.set(scheduler="sync"):
        got = rdask.evaluate(qrels, dask_run(run), METRICS)
    assert_same(got, reference(qrels, run, METRICS, {}))


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_more_partitions_than_queries(client: Any, broadcast_limit: int) -> None:
    qrels, run = make_data(seed=5, nq=8)
    dq = dd.from_pandas(qrels, npartitions=2)
    got = rdask.evaluate(
        dq, dask_run(run, 3), METRICS, npartitions=20, broadcast_limit=broadcast_limit
    )
    assert_same(got, reference(qrels, run, METRICS, {}))


# -- errors -------------------------------------------------------------------------------------
def test_errors_before_any_computation(client: Any, data: Any) -> None:
    qrels, run = data
    drun = dask_run(run)
    with pytest.raises(RanklensInputError, match="no column 'score'"):
        rdask.evaluate(qrels, dask_run(run.drop(columns="score")), METRICS)
    with pytest.raises(RanklensInputError, match="qrels frame has no column 'relevance'"):
        rdask.evaluate(dd.from_pandas(qrels.drop(columns="relevance"), npartitions=1), drun, "map")
    with pytest.raises(RanklensInputError, match="scores must be numbers"):
        rdask.evaluate(qrels, dask_run(run.assign(score=run["score"].astype(str))), "map")
    with pytest.raises(RanklensInputError, match="ids must be strings or integers"):
        rdask.evaluate(qrels, dask_run(run.assign(doc_id=1.5)), "map")
    with pytest.raises(RanklensInputError, match="labels must be numbers"):
        q = qrels.assign(relevance="1")
        rdask.evaluate(dd.from_pandas(q, npartitions=1), drun, "map")
    with pytest.raises(RanklensInputError, match="must be a dask DataFrame"):
        rdask.evaluate(qrels, run, "map")
    with pytest.raises(RanklensInputError, match="qrels must be"):
        rdask.evaluate([1, 2], drun, "map")
    with pytest.raises(RanklensInputError, match="position="):
        rdask.evaluate(qrels, drun, "map", ties="input")
    with pytest.raises(UnknownMetricError, match="needs subtopic judgments"):
        rdask.evaluate(qrels, drun, "alpha_nDCG@10")
    with pytest.raises(UnknownMetricError, match="not as a frame"):
        dq = dd.from_pandas(qrels, npartitions=1)
        rdask.evaluate(dq, drun, "alpha_nDCG@10", broadcast_limit=0)
    with pytest.raises(RanklensInputError, match="npartitions"):
        rdask.evaluate(qrels, drun, "map", npartitions=0)
    with pytest.raises(RanklensInputError, match="max_docs"):
        rdask.evaluate(qrels, drun, "map", max_docs=0)
    with pytest.raises(UnknownMetricError):
        rdask.evaluate(qrels, drun, "no_such_metric")
    with pytest.raises(UnknownMetricError, match="expected"):
        rdask.evaluate(qrels, drun, "inf_ap", ties="expected")
    with pytest.raises(RanklensInputError, match="no query"):
        rdask.evaluate(dd.from_pandas(qrels.iloc[:0], npartitions=1), drun, "map")


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_errors_found_in_the_workers(client: Any, data: Any, broadcast_limit: int) -> None:
    qrels, run = data
    dq = dd.from_pandas(qrels, npartitions=2)
    limit = {"broadcast_limit": broadcast_limit}
    twice = pd.concat([run, run.iloc[:1]])
    with pytest.raises(RanklensInputError, match="listed more than once"):
        rdask.evaluate(dq, dask_run(twice), "map", broadcast_limit=broadcast_limit)
    same_rank = run.assign(rank=1)
    with pytest.raises(RanklensInputError, match="positions must be distinct"):
        rdask.evaluate(
            dq,
            dask_run(same_rank),
            "map",
            ties="input",
            position="rank",
            broadcast_limit=broadcast_limit,
        )
    # Errors name the user's columns, not the internal ones the shuffle carries.
    no_rank = with_first(run, "rank", None, "Int64")
    with pytest.raises(RanklensInputError, match='column "rank": null position'):
        rdask.evaluate(dq, dask_run(no_rank), "map", ties="input", position="rank", **limit)
    no_id = with_first(run, "query_id", None)
    with pytest.raises(RanklensInputError, match=r'column "query_id": the id is null$'):
        rdask.evaluate(dq, dask_run(no_id), "map", **limit)
    inf = with_first(run, "score", float("inf"))
    with pytest.raises(RanklensInputError, match=r'NaN or infinite \(column "score"\)'):
        rdask.evaluate(dq, dask_run(inf), "map", **limit)


def test_results_are_the_usual_class(client: Any, data: Any) -> None:
    qrels, run = data
    res = rdask.evaluate(qrels, dask_run(run), ["ndcg@10", "P_5"])
    assert isinstance(res, ranklens.Results)
    assert res["P@5"] == res["precision@5"]
    assert list(res.to_pandas().columns) == ["ndcg@10", "precision@5"]
