"""``ranklens.spark.evaluate`` on a ``local[2]`` session gives ``evaluate``'s numbers, bit for bit.

One session for the module.  The run is a Spark frame of shuffled rows in 5
partitions; the qrels are broadcast (a pandas frame, a small Spark frame, a Qrels
object, grouped ones included, or a dict) or cogrouped with the run by bucket
(``broadcast_limit=0``).  Every result is compared with ``ranklens.evaluate`` on
the same pandas frames (``_dist_cases.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("pyspark needs a Java runtime", allow_module_level=True)

import pandas as pd
from pyspark.sql import SparkSession

import ranklens
import ranklens.spark as rspark
from _dist_cases import (
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
from ranklens import Qrels, RanklensInputError, UnknownMetricError

# pyspark warns that it does not fully support pandas 3 yet; what it is used for here
# (Arrow grouped maps, createDataFrame, toArrow) is checked by these very tests.
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support:FutureWarning")


@pytest.fixture(scope="module")
def spark() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("ranklens-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def data() -> tuple[Any, Any]:
    return make_data(seed=0)


def spark_frame(spark: Any, pdf: Any, partitions: int = 5) -> Any:
    return spark.createDataFrame(shuffled(pdf)).repartition(partitions)


@pytest.mark.parametrize("path", ["spark-broadcast", "spark-cogroup"])
@pytest.mark.parametrize(("case", "options", "metrics"), CASES, ids=[c[0] for c in CASES])
def test_same_as_evaluate(
    spark: Any, data: Any, path: str, case: str, options: dict[str, Any], metrics: list[str]
) -> None:
    qrels, run = data
    kw = {"broadcast_limit": 0} if path == "spark-cogroup" else {}
    got = rspark.evaluate(
        spark_frame(spark, qrels, 3), spark_frame(spark, run), metrics, **options, **kw
    )
    want = reference(qrels, run, metrics, options)
    assert want.missing_queries and want.ignored_queries  # both kinds are exercised
    assert_same(got, want)


def test_rows_of_one_query_are_spread_over_partitions(spark: Any, data: Any) -> None:
    _, run = data
    counts = spark_frame(spark, run).rdd.mapPartitions(lambda rows: [{r.query_id for r in rows}])
    seen = counts.collect()
    split = {q for i, a in enumerate(seen) for b in seen[i + 1 :] for q in a & b}
    assert len(split) > 10  # the premise of every test here


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_integer_ids_and_custom_column_names(spark: Any, broadcast_limit: int) -> None:
    qrels, run = make_data(seed=4, int_ids=True)
    names = {"query_id": "qid", "doc_id": "docno", "score": "sim", "relevance": "rel"}
    got = rspark.evaluate(
        spark_frame(spark, qrels.rename(columns=names), 2),
        spark_frame(spark, run.rename(columns=names)),
        METRICS,
        query="qid",
        doc="docno",
        score="sim",
        label="rel",
        broadcast_limit=broadcast_limit,
    )
    assert_same(got, reference(qrels, run, METRICS, {}))


def test_pandas_qrels_object_dict_and_grouped(spark: Any, data: Any) -> None:
    qrels, run = data
    srun = spark_frame(spark, run)
    q = Qrels.from_pandas(qrels)
    want = reference(q, run, METRICS, {})
    assert_same(rspark.evaluate(qrels, srun, METRICS), want)
    assert_same(rspark.evaluate(q, srun, METRICS), want)
    assert_same(rspark.evaluate(q.to_dict(), srun, METRICS, npartitions=7), want)
    grouped = grouped_qrels(qrels)
    assert grouped.grouped
    assert_same(rspark.evaluate(grouped, srun, METRICS), reference(grouped, run, METRICS, {}))


def test_subtopic_qrels(spark: Any, data: Any) -> None:
    qrels, run = data
    q = subtopic_qrels(qrels)
    got = rspark.evaluate(q, spark_frame(spark, run), DIVERSITY_METRICS, npartitions=3)
    assert_same(got, reference(q, run, DIVERSITY_METRICS, {}))


# -- errors -------------------------------------------------------------------------------------
def test_errors_before_any_job(spark: Any, data: Any) -> None:
    qrels, run = data
    srun = spark_frame(spark, run)
    with pytest.raises(RanklensInputError, match="no column 'score'"):
        rspark.evaluate(qrels, srun.drop("score"), METRICS)
    with pytest.raises(RanklensInputError, match="qrels frame has no column 'relevance'"):
        rspark.evaluate(spark_frame(spark, qrels).drop("relevance"), srun, "map")
    with pytest.raises(RanklensInputError, match="scores must be numbers"):
        rspark.evaluate(qrels, srun.withColumn("score", srun["score"].cast("string")), "map")
    with pytest.raises(RanklensInputError, match="ids must be strings or integers"):
        rspark.evaluate(qrels, srun.withColumn("doc_id", srun["score"]), "map")
    with pytest.raises(RanklensInputError, match="must be a pyspark DataFrame"):
        rspark.evaluate(qrels, run, "map")
    with pytest.raises(RanklensInputError, match="qrels must be"):
        rspark.evaluate([1, 2], srun, "map")
    with pytest.raises(RanklensInputError, match="position="):
        rspark.evaluate(qrels, srun, "map", ties="input")
    with pytest.raises(UnknownMetricError, match="needs subtopic judgments"):
        rspark.evaluate(qrels, srun, "alpha_nDCG@10")
    with pytest.raises(UnknownMetricError, match="not as a frame"):
        rspark.evaluate(spark_frame(spark, qrels), srun, "alpha_nDCG@10", broadcast_limit=0)
    with pytest.raises(RanklensInputError, match="positions must be integers"):
        text_rank = srun.withColumn("rank", srun["rank"].cast("string"))
        rspark.evaluate(qrels, text_rank, "map", ties="input", position="rank")
    with pytest.raises(UnknownMetricError):
        rspark.evaluate(qrels, srun, "no_such_metric")
    with pytest.raises(RanklensInputError, match="no query"):
        rspark.evaluate(spark_frame(spark, qrels).limit(0), srun, "map")


@pytest.mark.parametrize("broadcast_limit", [2_000_000, 0])
def test_errors_found_in_the_workers(spark: Any, data: Any, broadcast_limit: int) -> None:
    qrels, run = data
    sq = spark_frame(spark, qrels, 2)
    twice = spark_frame(spark, pd.concat([run, run.iloc[:1]]))
    with pytest.raises(RanklensInputError, match="listed more than once"):
        rspark.evaluate(sq, twice, "map", broadcast_limit=broadcast_limit)
    inf = spark_frame(spark, with_first(run, "score", float("inf")))
    with pytest.raises(RanklensInputError, match=r'NaN or infinite \(column "score"\)'):
        rspark.evaluate(sq, inf, "map", broadcast_limit=broadcast_limit)


def test_results_are_the_usual_class(spark: Any, data: Any) -> None:
    qrels, run = data
    res = rspark.evaluate(qrels, spark_frame(spark, run), ["ndcg@10", "P_5"])
    assert isinstance(res, ranklens.Results)
    assert res["P@5"] == res["precision@5"]
    assert list(res.to_pandas().columns) == ["ndcg@10", "precision@5"]
