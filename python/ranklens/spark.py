"""Score a run held in a PySpark DataFrame, with exactly the numbers of one process.

>>> import ranklens.spark
>>> run = spark.read.parquet("run/")                    # query_id, doc_id, score
>>> res = ranklens.spark.evaluate(qrels, run, ["ndcg@10", "map"])  # a ranklens.Results

Rows are grouped by a bucket of the query id, ``pmod(xxhash64(query), n)``, and
each bucket is scored by one Arrow-based grouped-map call (``applyInPandas``)
running the Rust kernels: grouping by bucket rather than by query makes each
Python call score thousands of queries, not one, and since every row of a query
has the same bucket it is still a group-by-query guarantee.  The per-query rows
are collected with Arrow and combined on the driver into the
:class:`~ranklens.Results` that :func:`ranklens.evaluate` returns for the same
data, bit for bit (see :mod:`ranklens._distributed`).

Qrels given as a :class:`~ranklens.Qrels`, a mapping, a pandas frame or a Spark
frame of at most ``broadcast_limit`` rows (collected first) are broadcast: sent
once to every executor (a Spark broadcast variable), each task scoring only the
qrels queries its rows hold.  A larger Spark frame is bucketed the same way and
each bucket of the run is cogrouped with the same bucket of the qrels.

Importing this module imports pyspark; ``import ranklens`` does not.
"""

from __future__ import annotations

import re
from typing import Any

from ranklens import errors
from ranklens._distributed import (
    QUERY,
    STATUS,
    Columns,
    MetricsArg,
    Plan,
    SharedQrels,
    broadcast_plan,
    check_broadcast_limit,
    check_call,
    check_npartitions,
    combine,
    empty_output,
    joined_plan,
    score_frames,
)
from ranklens._evaluate import Results
from ranklens.errors import RanklensInputError

try:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError("ranklens.spark needs pyspark: pip install 'ranklens[spark]'") from e

__all__ = ["DEFAULT_BROADCAST_LIMIT", "evaluate"]

# Qrels rows up to which a Spark qrels frame is collected and broadcast: about 50
# bytes per row once encoded (~100 MB), sent once to each executor.
DEFAULT_BROADCAST_LIMIT = 2_000_000

_Q, _D, _V, _POS, _B = "_rl_query", "_rl_doc", "_rl_value", "_rl_position", "_rl_bucket"


def evaluate(
    qrels: Any,
    run: Any,
    metrics: MetricsArg,
    *,
    query: str = "query_id",
    doc: str = "doc_id",
    score: str = "score",
    label: str = "relevance",
    position: str | None = None,
    npartitions: int | None = None,
    broadcast_limit: float = DEFAULT_BROADCAST_LIMIT,
    relevance_level: float | str = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    threads: int | None = 1,
    score_precision: str = "f64",
) -> Results:
    """Score ``run`` (a ``pyspark.sql.DataFrame``) against ``qrels``.

    Returns the :class:`~ranklens.Results` of ``ranklens.evaluate`` on the same
    rows: same per-query values, aggregates, ``missing_queries`` and
    ``ignored_queries``.

    ``qrels``: a :class:`~ranklens.Qrels` (grouped ones included), a mapping, a
    pandas frame, or a Spark DataFrame.  A Spark frame of at most
    ``broadcast_limit`` rows is collected and broadcast like the others; a larger
    one is cogrouped with the run by bucket (``broadcast_limit=0`` forces that).
    ``query``, ``doc``, ``score``, ``label``: column names (those of
    ``Run.from_pandas`` / ``Qrels.from_pandas`` by default); ids may be strings or
    integers (cast to strings on both sides, as :func:`ranklens.evaluate` writes
    integer ids).
    ``position``: with ``ties="input"`` only, and then required: a column giving
    each row's order within its query (e.g. the TREC rank), since a shuffle does
    not keep row order.  Positions must be distinct within a query.
    ``npartitions``: the number of buckets (default: ``spark.sql.shuffle.partitions``).
    A bucket is one pandas frame in one Python worker, so it must fit there:
    about its rows x (2 x document id length + ~70 bytes) while it is scored.
    ``threads``: Rust threads per call; 1 by default, since Spark already runs one
    task per core.
    The other options are those of :func:`ranklens.evaluate` (``score_precision``
    that of :meth:`ranklens.Run.from_pandas`).

    An error of the data found inside a worker (a NaN score, a document listed
    twice for a query) is raised here as the :mod:`ranklens.errors` class the
    worker raised, chained to Spark's ``PythonException``.
    """
    if not isinstance(run, DataFrame):
        raise RanklensInputError(f"run must be a pyspark DataFrame, got {type(run).__name__}")
    cols, options = check_call(
        metrics,
        Columns(query, doc, score, label, position),
        relevance_level=relevance_level,
        judged_only=judged_only,
        max_docs=max_docs,
        ties=ties,
        threads=threads,
        score_precision=score_precision,
    )
    spark = run.sparkSession
    n = check_npartitions(npartitions) or int(spark.conf.get("spark.sql.shuffle.partitions"))
    limit = check_broadcast_limit(broadcast_limit)
    _check_schema(run, cols.run_columns(), "run", cols)
    with _worker_errors():
        if isinstance(qrels, DataFrame):
            _check_schema(qrels, cols.qrels_columns(), "qrels", cols)
            stats = qrels.agg(
                F.count(F.lit(1)).alias("rows"), F.max(F.col(label).cast("double")).alias("top")
            ).first()
            rows, top = (0, None) if stats is None else (stats["rows"], stats["top"])
            max_label = 0.0 if top is None else float(top)
            plan = joined_plan(rows, max_label, limit, metrics, options)
            if plan is not None:
                return _joined(qrels, run, plan, cols, n)
            qrels = _to_pandas(qrels.select(*cols.qrels_columns()))
        shared, plan = broadcast_plan(qrels, cols, metrics, options)
        return _broadcast(shared, run, plan, cols, n)


# -- the two plans --------------------------------------------------------------------------
def _internal(cols: Columns) -> Columns:
    return cols.internal(_Q, _D, _V, _POS)


def _prepared(frame: Any, src: list[str | None], n: int) -> Any:
    """The internal columns: ids cast to strings (both sides, and the hash, see the
    same values), values to doubles, and the bucket of the query id."""
    exprs = [
        F.col(src[0]).cast("string").alias(_Q),
        F.col(src[1]).cast("string").alias(_D),
        F.col(src[2]).cast("double").alias(_V),
    ]
    if len(src) > 3 and src[3] is not None:
        exprs.append(F.col(src[3]).cast("long").alias(_POS))
    out = frame.select(*exprs)
    return out.withColumn(_B, F.pmod(F.xxhash64(F.col(_Q)), F.lit(n)))


def _schema(plan: Plan) -> Any:
    fields = [T.StructField(QUERY, T.StringType()), T.StructField(STATUS, T.StringType())]
    fields += [T.StructField(c, T.DoubleType()) for c in plan.value_columns]
    return T.StructType(fields)


def _broadcast(shared: SharedQrels, run: Any, plan: Plan, cols: Columns, n: int) -> Results:
    spark = run.sparkSession
    try:
        handle: Any = spark.sparkContext.broadcast(shared)
    except (AttributeError, NotImplementedError):
        handle = None  # Spark Connect has no SparkContext: the qrels travel with the function
    bound, inner = (shared if handle is None else handle), _internal(cols)

    # No type hints on the functions given to Spark: pyspark reads them to pick an
    # evaluation type; a plain function of the frame is the pandas grouped map.
    def fn(pdf):
        return _score_broadcast(bound, plan, inner, pdf)

    try:
        out = _prepared(run, cols.run_columns(), n).groupBy(_B).applyInPandas(fn, _schema(plan))
        frame = _to_pandas(out)
    finally:
        if handle is not None:
            handle.destroy()
    return combine([frame], plan, qrels=shared)


def _joined(qrels: Any, run: Any, plan: Plan, cols: Columns, n: int) -> Results:
    r = _prepared(run, cols.run_columns(), n)
    q = _prepared(qrels, cols.qrels_columns(), n)
    inner = _internal(cols)

    def fn(run_pdf, qrels_pdf):  # no type hints: see _broadcast
        return _score_joined(plan, inner, run_pdf, qrels_pdf)

    out = r.groupBy(_B).cogroup(q.groupBy(_B)).applyInPandas(fn, _schema(plan))
    return combine([_to_pandas(out)], plan)


def _to_pandas(frame: Any) -> Any:
    """Collect through Arrow (``toArrow``, Spark >= 4; else Arrow-enabled ``toPandas``)."""
    if hasattr(frame, "toArrow"):
        return frame.toArrow().to_pandas()
    conf = frame.sparkSession.conf
    key = "spark.sql.execution.arrow.pyspark.enabled"
    before = conf.get(key, "false")
    conf.set(key, "true")
    try:
        return frame.toPandas()
    finally:
        conf.set(key, before)


# -- inside the Python workers --------------------------------------------------------------
def _score_broadcast(handle: Any, plan: Plan, cols: Columns, pdf: Any) -> Any:
    shared = handle if isinstance(handle, SharedQrels) else handle.value
    if len(pdf) == 0:
        return empty_output(plan)
    return score_frames(pdf, shared, plan, cols)


def _score_joined(plan: Plan, cols: Columns, run_pdf: Any, qrels_pdf: Any) -> Any:
    return score_frames(run_pdf, qrels_pdf, plan, cols)


# -- checks and errors on the driver ------------------------------------------------------------
def _check_schema(frame: Any, names: list[str], what: str, cols: Columns) -> None:
    """Columns present and of usable types, from the frame's schema (no job)."""
    fields = {f.name: f.dataType for f in frame.schema.fields}
    for name in names:
        if name not in fields:
            raise RanklensInputError(
                f"the {what} frame has no column {name!r} (columns: {', '.join(fields)})"
            )
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    for name in names:
        dt = fields[name]
        if name in (cols.query, cols.doc):
            if not isinstance(dt, (T.StringType, *integral)):
                raise RanklensInputError(
                    f"column {name!r} of the {what}: ids must be strings or integers, "
                    f"got {dt.simpleString()}"
                )
        elif name == cols.position:
            if not isinstance(dt, integral):
                raise RanklensInputError(
                    f"column {name!r} of the run: positions must be integers, "
                    f"got {dt.simpleString()}"
                )
        elif not isinstance(dt, T.NumericType):
            kind = "scores" if what == "run" else "labels"
            raise RanklensInputError(
                f"column {name!r} of the {what}: the {kind} must be numbers, "
                f"got {dt.simpleString()}"
            )


_WORKER_ERROR = re.compile(
    r"^ranklens\.errors\.(RanklensInputError|UnknownMetricError|ParseError): (.*)$", re.M
)


class _worker_errors:
    """Re-raise a ranklens error raised in a Python worker as its own class.

    Spark wraps it in a ``PythonException`` whose text ends with the worker's
    traceback; the last ``ranklens.errors.X: message`` line names class and message.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool:
        if exc is None:
            return False
        try:
            from pyspark.errors import PythonException
        except ImportError:  # pragma: no cover - pyspark < 3.4
            return False
        if isinstance(exc, PythonException):
            found = _WORKER_ERROR.findall(str(exc))
            if found:
                name, message = found[-1]
                raise getattr(errors, name)(message) from exc
        return False
