"""Engine-neutral core of :mod:`ranklens.dask` and :mod:`ranklens.spark`.

A distributed evaluation is three steps, and only the first depends on the engine:

1. the engine groups the run's rows by query (a shuffle on the query id), so that
   every row of one query lands in one partition, next to the qrels of the same
   queries (a join) or next to a broadcast :class:`~ranklens.Qrels`;
2. :func:`score_frames` scores one partition with the Rust kernels and returns one
   row per query: the query id, a status (``scored``; ``missing``: a qrels query
   absent from the run, scored on an empty ranking as :func:`~ranklens.evaluate`
   does; ``ignored``: a run-only query) and one float64 column per metric;
3. :func:`combine` gathers those rows on the driver, checks that no query was
   emitted twice, sorts the qrels queries by UTF-8 bytes (the order ``evaluate``
   uses) and builds the same :class:`~ranklens.Results`.  The aggregates are
   computed by ``Results`` from the identical per-query values in the identical
   order, so means, sums and geometric means are bit-identical to ``evaluate``.

Per-query values do not depend on the other queries of a batch, with one
exception handled here: ``err`` with its automatic ``gmax`` (the largest label of
the *whole* qrels).  :func:`make_plan` resolves it on the driver from the full
qrels, so a partition holding a subset of the qrels scores as the whole would.
That is why the kernels are called through the native ``evaluate`` with resolved
metric specs rather than through :func:`ranklens.evaluate`.

Driver memory for :func:`combine`: the per-query rows (8 bytes x metrics per
query, plus the id and a status string), held twice while the values array is
built; e.g. 10M queries x 10 metrics: 800 MB of values plus the ids.

Neither dask nor pyspark is imported here: pandas, numpy and pyarrow only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    check_level,
    check_max_docs,
    check_score_precision,
    check_threads,
    check_ties,
    positive_int,
)
from ranklens._data import Qrels, Run, as_qrels
from ranklens._names import Metric, needs_subtopics, parse_metrics
from ranklens._results import Results
from ranklens.errors import RanklensInputError, UnknownMetricError

__all__ = [
    "IGNORED",
    "MISSING",
    "SCORED",
    "Columns",
    "Plan",
    "SharedQrels",
    "check_call",
    "combine",
    "make_plan",
    "max_label_of",
    "output_columns",
    "score_frames",
    "take_queries",
]

SCORED, MISSING, IGNORED = "scored", "missing", "ignored"
QUERY, STATUS = "query_id", "status"

MetricsArg = Union[str, Metric, Iterable[Union[str, Metric]]]


@dataclass(frozen=True)
class Columns:
    """Column names of the run and qrels frames (the defaults of ``from_pandas``).

    ``position``: a run column giving each row's input order within its query
    (e.g. the TREC rank); required by ``ties="input"``, since a shuffle does not
    keep row order.
    """

    query: str = "query_id"
    doc: str = "doc_id"
    score: str = "score"
    label: str = "relevance"
    position: str | None = None
    # The user's names, when an engine renamed the columns it shuffles: errors raised
    # in a worker then name the user's columns again.
    shown: Columns | None = None

    def run_columns(self) -> list[str]:
        cols = [self.query, self.doc, self.score]
        return cols if self.position is None else [*cols, self.position]

    def qrels_columns(self) -> list[str]:
        return [self.query, self.doc, self.label]

    def internal(self, query: str, doc: str, value: str, position: str) -> Columns:
        """The columns as an engine renames them (run score and qrels label are
        both ``value``); errors still show this object's names."""
        pos = None if self.position is None else position
        return Columns(query, doc, value, value, pos, self)

    def user_error(self, e: RanklensInputError, side: str) -> RanklensInputError:
        """``e`` raised reading the ``side`` ("run" or "qrels") frame, with the
        user's column names; row numbers, which count rows of one shuffled
        partition, are dropped."""
        user = self.shown
        if user is None:
            return e
        names = [(self.query, user.query), (self.doc, user.doc)]
        names.append((self.score, user.score) if side == "run" else (self.label, user.label))
        if self.position is not None and user.position is not None:
            names.append((self.position, user.position))
        text = str(e)
        for inner, name in names:
            for quoted in (json.dumps(inner), repr(inner)):
                text = re.sub(re.escape(quoted) + r"(, row \d+)?", json.dumps(name), text)
        text = re.sub(r"\(row \d+, column ", "(column ", text)
        return type(e)(text)

    def check(self) -> Columns:
        for what, cols in (("run", self.run_columns()), ("qrels", self.qrels_columns())):
            if not all(isinstance(c, str) for c in cols):
                raise RanklensInputError(f"column names must be strings, got {cols}")
            if len(set(cols)) != len(cols):
                raise RanklensInputError(f"the {what} column names must differ, got {cols}")
        return self


@dataclass(frozen=True)
class Plan:
    """What every task computes: validated once on the driver, shipped with the tasks.

    ``specs`` are the metrics as the native kernels take them, with ``err``'s
    automatic ``gmax`` already replaced by the largest label of the whole qrels.
    """

    metrics: tuple[Metric, ...]
    specs: tuple[tuple[str, int | None, float | None, tuple[tuple[str, float], ...]], ...]
    relevance_level: float
    judged_only: bool
    max_docs: int | None
    ties: str
    threads: int | None
    score_precision: str

    @property
    def value_columns(self) -> list[str]:
        """Names of the metric columns of the per-query rows: ``m0``, ``m1``, ...

        Canonical metric names hold ``@``, ``(`` and ``=``, which some engines
        (Spark schemas) do not take as column names; the order maps them back.
        """
        return [f"m{j}" for j in range(len(self.metrics))]


def _needs_max_label(metrics: Sequence[Metric]) -> bool:
    return any(m.family == "err" and m.param("gmax") <= 0 for m in metrics)


def make_plan(
    metrics: MetricsArg,
    *,
    max_label: float | None = None,
    relevance_level: float | str = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    threads: int | None = 1,
    score_precision: str = "f64",
) -> Plan:
    """Validate the options and resolve the metrics, on the driver.

    ``max_label``: the largest label of the whole qrels, required when a metric
    is ``err`` with the automatic ``gmax``.  The options are tried on a one-query
    evaluation here, so that an unsupported combination (``ties="expected"`` with
    a family that has no expected form, say) fails before any task is launched.
    """
    ms = parse_metrics(metrics)
    level = check_level(relevance_level)
    nthreads = check_threads(threads)
    check_max_docs(max_docs)
    check_score_precision(score_precision)
    check_ties(ties)
    if not isinstance(judged_only, bool):
        raise RanklensInputError(f"judged_only must be a bool, got {judged_only!r}")
    gmax = 0.0
    if _needs_max_label(ms):
        if max_label is None:
            raise RuntimeError("ranklens internal error: err needs the qrels' largest label")
        gmax = max(0.0, float(max_label))  # as the kernels' automatic gmax
    specs = []
    for m in ms:
        params = dict(m.params)
        if m.family == "err" and m.param("gmax") <= 0:
            params["gmax"] = gmax
        specs.append((m.family, m.k, m.rel, tuple(sorted(params.items()))))
    plan = Plan(
        tuple(ms),
        tuple(specs),
        level,
        judged_only,
        max_docs,
        ties,
        nthreads,
        score_precision,
    )
    # Fails early on bad options (subtopic qrels: every family accepts them).
    _native(plan, Qrels.from_subtopics([("q", "0", "d", 1)]), _empty_run())
    return plan


def _native(plan: Plan, qrels: Qrels, run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    specs = [(f, k, rel, list(params)) for f, k, rel, params in plan.specs]
    values, run_index, run_only = _ranklens.evaluate(
        qrels.arrays,
        run.arrays,
        specs,
        plan.relevance_level,
        plan.threads,
        plan.judged_only,
        plan.max_docs,
        plan.ties,
        qrels._subtopics,
    )
    return values, run_index, run_only


_EMPTY: list[Run] = []


def _empty_run() -> Run:
    if not _EMPTY:
        _EMPTY.append(Run({}))
    return _EMPTY[0]


def max_label_of(qrels: Qrels) -> float:
    """The largest label of ``qrels`` as the kernels' automatic ``gmax`` takes it."""
    values = qrels.values
    return max(0.0, float(values.max())) if len(values) else 0.0


# -- broadcast qrels ----------------------------------------------------------------------
class SharedQrels:
    """Qrels broadcast to every worker: shipped once as the encoded arrays.

    On a worker, :meth:`subset` cuts out the queries of one partition, so that a
    task scores only the qrels queries its run rows hold (else every partition
    would emit every missing query).  The id index it needs is built once per
    worker process and kept (it is not pickled).
    """

    def __init__(self, qrels: Qrels) -> None:
        if len(qrels) == 0:
            raise RanklensInputError("the qrels hold no query: nothing to evaluate")
        self.qrels = qrels
        self._index: Any = None

    def __getstate__(self) -> dict[str, Any]:
        q = self.qrels
        return {"arrays": q.arrays, "subtopics": (q._subtopics, q._subtopic_names)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.qrels = Qrels._from_arrays(tuple(state["arrays"]))
        self.qrels._subtopics, self.qrels._subtopic_names = state.get("subtopics", (None, None))
        self._index = None

    def positions(self, query_ids: Sequence[str]) -> np.ndarray:
        """Index of each id among the qrels queries, -1 where absent."""
        import pandas as pd

        if self._index is None:
            self._index = pd.Index(self.qrels.query_ids, dtype=object)
        if len(query_ids) == 0:
            return np.empty(0, np.int64)
        return np.asarray(self._index.get_indexer(pd.Index(query_ids, dtype=object)), np.int64)

    def subset(self, idx: np.ndarray) -> Qrels:
        """The qrels of the queries at ``idx`` (increasing), doc arena shared."""
        return take_queries(self.qrels, idx)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, e)`` for each pair, vectorised."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, np.int64)
    shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(total, dtype=np.int64) + shift


def take_queries(qrels: Qrels, idx: np.ndarray) -> Qrels:
    """The qrels of the queries at positions ``idx`` (increasing: byte order kept).

    Works on the encoded arrays: the query vocabulary and the rows are cut out;
    the document arena is shared as is (rows index it).  Grouped qrels keep their
    group of each row, subtopic qrels their subtopic judgments.
    """
    q_bytes, q_offsets, offsets, d_bytes, d_offsets, doc_ids, values, extra = qrels.arrays
    idx = np.asarray(idx, dtype=np.int64)
    byte_pos = _ranges(q_offsets[idx], q_offsets[idx + 1])
    new_q_offsets = np.concatenate(([0], np.cumsum(q_offsets[idx + 1] - q_offsets[idx])))
    rows = _ranges(offsets[idx], offsets[idx + 1])
    new_offsets = np.concatenate(([0], np.cumsum(offsets[idx + 1] - offsets[idx])))
    arrays = (
        np.ascontiguousarray(q_bytes[byte_pos], dtype=np.uint8),
        np.ascontiguousarray(new_q_offsets, dtype=np.int64),
        np.ascontiguousarray(new_offsets, dtype=np.int64),
        d_bytes,
        d_offsets,
        np.ascontiguousarray(doc_ids[rows], dtype=np.uint32),
        np.ascontiguousarray(values[rows], dtype=np.float64),
        np.ascontiguousarray(extra[rows], dtype=np.uint32) if len(extra) else extra,
    )
    out = Qrels._from_arrays(arrays)
    if qrels._subtopics is not None and qrels._subtopic_names is not None:
        sub_off, local, labels = qrels._subtopics
        judgments = _ranges(sub_off[rows], sub_off[rows + 1])
        counts = sub_off[rows + 1] - sub_off[rows]
        out._subtopics = (
            np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
            np.ascontiguousarray(local[judgments], dtype=np.uint32),
            np.ascontiguousarray(labels[judgments], dtype=np.float64),
        )
        out._subtopic_names = [qrels._subtopic_names[i] for i in idx.tolist()]
    return out


def as_qrels_object(qrels: Any, columns: Columns) -> Qrels:
    """A :class:`Qrels`, a mapping or a pandas frame -> :class:`Qrels` (on the driver)."""
    if isinstance(qrels, SharedQrels):
        return qrels.qrels
    if isinstance(qrels, (Qrels, Run, Mapping)):
        return as_qrels(qrels)  # a Run is refused there
    if type(qrels).__module__.startswith("pandas") and type(qrels).__name__ == "DataFrame":
        return Qrels.from_pandas(
            qrels, query_col=columns.query, doc_col=columns.doc, label_col=columns.label
        )
    raise RanklensInputError(
        "qrels must be a ranklens.Qrels, a mapping query id -> {doc id: label}, a pandas "
        f"DataFrame or a frame of the engine, got {type(qrels).__name__}"
    )


# -- one partition ----------------------------------------------------------------------------
def output_columns(plan: Plan) -> list[str]:
    """The columns of :func:`score_frames`' output, in order."""
    return [QUERY, STATUS, *plan.value_columns]


def empty_output(plan: Plan) -> Any:
    """An empty frame with the columns and dtypes of :func:`score_frames`' output."""
    return _rows([], [], np.empty((0, len(plan.metrics))), plan)


def _rows(ids: list[str], status: list[str], values: np.ndarray, plan: Plan) -> Any:
    import pandas as pd

    data: dict[str, Any] = {
        QUERY: pd.array(ids, dtype=_string_dtype()),
        STATUS: pd.array(status, dtype=_string_dtype()),
    }
    for j, name in enumerate(plan.value_columns):
        data[name] = np.ascontiguousarray(values[:, j], dtype=np.float64)
    return pd.DataFrame(data, columns=output_columns(plan))


def _string_dtype() -> Any:
    import pandas as pd

    return pd.StringDtype("pyarrow")


def _run_from_frame(run_pdf: Any, plan: Plan, columns: Columns) -> Run:
    if plan.ties == "input":
        if columns.position is None:
            raise RanklensInputError(_TIES_INPUT)
        run_pdf = _order_by_position(run_pdf, columns)
    return Run.from_pandas(
        run_pdf,
        query_col=columns.query,
        doc_col=columns.doc,
        score_col=columns.score,
        score_precision=plan.score_precision,
    )


_TIES_INPUT = (
    "ties='input' keeps the input order of equal scores, and a shuffle does not keep "
    "row order: pass position=<column> holding each row's order within its query "
    "(e.g. the TREC rank), or use ties='trec' or ties='expected'"
)


def _order_by_position(run_pdf: Any, columns: Columns) -> Any:
    """Rows sorted by (query, position): the input order ``ties="input"`` keeps."""
    pos = run_pdf[columns.position]
    if pos.isna().any():
        raise RanklensInputError(f"column {columns.position!r}: null position")
    out = run_pdf.sort_values([columns.query, columns.position], kind="stable")
    dup = out.duplicated([columns.query, columns.position])
    if dup.any():
        row = out[dup].iloc[0]
        raise RanklensInputError(
            f"query {str(row[columns.query])!r}: two rows have position "
            f"{row[columns.position]!r}; positions must be distinct within a query"
        )
    return out


def score_frames(run_pdf: Any, qrels: Any, plan: Plan, columns: Columns) -> Any:
    """Score the queries of one partition; one output row per query.

    ``run_pdf``: a pandas frame of run rows holding *all* rows of each of its
    queries.  ``qrels``: either a :class:`SharedQrels` (broadcast; only the qrels
    queries present in ``run_pdf`` are scored, the others are scored once by
    :func:`combine`) or a pandas frame holding the qrels rows of the same queries
    (a join; its queries absent from ``run_pdf`` are scored here as ``missing``,
    on an empty ranking).  Returns query id, status and the metric columns of
    :meth:`Plan.value_columns` (NaN for ``ignored`` run-only queries).
    """
    try:
        run = _run_from_frame(run_pdf, plan, columns)
    except RanklensInputError as e:
        raise columns.user_error(e, "run") from None
    if isinstance(qrels, SharedQrels):
        pos = qrels.positions(run.query_ids)
        q = qrels.subset(np.sort(pos[pos >= 0]))
    else:
        try:
            q = Qrels.from_pandas(
                qrels, query_col=columns.query, doc_col=columns.doc, label_col=columns.label
            )
        except RanklensInputError as e:
            raise columns.user_error(e, "qrels") from None
    values, run_index, run_only = _native(plan, q, run)
    qids = q.query_ids
    status = np.where(run_index < 0, MISSING, SCORED).tolist()
    run_qids = run.query_ids
    ignored = [run_qids[i] for i in run_only]
    if ignored:
        nan = np.full((len(ignored), len(plan.metrics)), np.nan)
        values = np.concatenate([values, nan])
    return _rows(qids + ignored, status + [IGNORED] * len(ignored), values, plan)


def score_missing(qrels: SharedQrels, seen: Sequence[str], plan: Plan) -> Any:
    """The broadcast qrels' queries not in ``seen``, scored on an empty ranking.

    Exactly what :func:`ranklens.evaluate` does for a qrels query absent from the
    run (trec_eval ``-c``): the native evaluation of those qrels against a run
    with no query, so counts such as ``num_rel`` come out right, not as zeros.
    """
    pos = qrels.positions(list(seen))
    mask = np.ones(len(qrels.qrels), dtype=bool)
    mask[pos[pos >= 0]] = False
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return empty_output(plan)
    q = qrels.subset(idx)
    values, _, _ = _native(plan, q, _empty_run())
    return _rows(q.query_ids, [MISSING] * len(idx), values, plan)


# -- the driver ----------------------------------------------------------------------------
def combine(parts: Iterable[Any], plan: Plan, qrels: SharedQrels | None = None) -> Results:
    """Per-query rows of every partition -> the :class:`Results` of ``evaluate``.

    ``qrels``: the broadcast qrels, whose queries that no partition scored are
    scored here (on an empty ranking) and listed as missing; ``None`` when the
    qrels were joined (partitions then emitted their missing queries).

    Raises ``RuntimeError`` if a query was emitted twice: that would mean rows
    of one query reached two partitions (a partitioning bug, never bad input).
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    frames = [p for p in parts if len(p)]
    frame = pd.concat(frames, ignore_index=True) if frames else empty_output(plan)
    if list(frame.columns) != output_columns(plan):
        raise RuntimeError(f"ranklens internal error: per-query columns {list(frame.columns)}")
    if qrels is not None:
        seen = frame.loc[frame[STATUS] != IGNORED, QUERY].to_numpy(dtype=object)
        frame = pd.concat([frame, score_missing(qrels, seen, plan)], ignore_index=True)
    # In Arrow, vectorised: strings compare as bytes there, evaluate's order.
    ids = _strings(pa, frame[QUERY])
    status = _strings(pa, frame[STATUS])
    order = pc.sort_indices(ids).to_numpy()
    ranked = ids.take(pa.array(order))
    if len(ranked) > 1:
        same = pc.equal(ranked.slice(1), ranked.slice(0, len(ranked) - 1))
        if pc.any(same).as_py():
            qid = ranked[int(np.argmax(same.to_numpy(zero_copy_only=False))) + 1].as_py()
            raise RuntimeError(
                f"ranklens internal error: query {qid!r} was emitted by two partitions; the "
                "rows of one query must all reach one partition"
            )
    ignored_row = pc.equal(status, IGNORED).to_numpy(zero_copy_only=False)
    order_q = order[~ignored_row[order]]
    order_i = order[ignored_row[order]]
    if len(order_q) == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    query_ids = ids.take(pa.array(order_q)).to_pylist()
    missing_row = pc.equal(status, MISSING).to_numpy(zero_copy_only=False)
    missing = ids.take(pa.array(order_q[missing_row[order_q]])).to_pylist()
    ignored = ids.take(pa.array(order_i)).to_pylist()
    raw = frame[plan.value_columns].to_numpy(dtype=np.float64)
    values = np.ascontiguousarray(raw[order_q], dtype=np.float64)
    values = values.reshape(len(query_ids), len(plan.metrics))
    return Results(list(plan.metrics), query_ids, values, missing, ignored, plan.relevance_level)


def _strings(pa: Any, column: Any) -> Any:
    """A pandas column of strings as one Arrow large_string array (no copy for
    Arrow-backed columns)."""
    arr = pa.array(column, type=pa.large_string(), from_pandas=True)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def check_call(
    metrics: MetricsArg,
    columns: Columns,
    *,
    relevance_level: float,
    judged_only: bool,
    max_docs: int | None,
    ties: str,
    threads: int | None,
    score_precision: str,
) -> tuple[Columns, dict[str, Any]]:
    """What both engines check before any work: ``ties="input"`` needs a
    position column (kept only then), the column names, the metrics and the
    options.  Returns the columns to use and the options for :func:`make_plan`."""
    if ties == "input" and columns.position is None:
        raise RanklensInputError(_TIES_INPUT)
    if ties != "input":
        columns = replace(columns, position=None)
    options: dict[str, Any] = dict(
        relevance_level=relevance_level,
        judged_only=judged_only,
        max_docs=max_docs,
        ties=ties,
        threads=threads,
        score_precision=score_precision,
    )
    make_plan(metrics, max_label=0.0, **options)  # bad options fail before any job
    return columns.check(), options


def check_npartitions(npartitions: Any) -> int | None:
    return positive_int(npartitions, "npartitions", none_ok=True)


def check_broadcast_limit(limit: Any) -> float:
    if isinstance(limit, bool) or not isinstance(limit, (int, float)) or math.isnan(limit):
        raise RanklensInputError(f"broadcast_limit must be a number of rows, got {limit!r}")
    return float(limit)


def joined_plan(
    rows: int, max_label: float, limit: float, metrics: MetricsArg, options: dict[str, Any]
) -> Plan | None:
    """Qrels held as an engine frame of ``rows`` rows (``max_label``: its largest
    label, for ``err``'s automatic gmax): the plan of the joined path when there
    are more than ``limit`` rows, else ``None`` (collect them and broadcast)."""
    if rows == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    if rows <= limit:
        return None
    plan = make_plan(metrics, max_label=max_label, **options)
    if needs_subtopics(plan.metrics):
        # Rows of a frame carry one label, no subtopic.
        raise UnknownMetricError(
            "the diversity metrics need subtopic judgments: pass the qrels as a "
            "Qrels.from_subtopics (sent to every worker), not as a frame"
        )
    return plan


def broadcast_plan(
    qrels: Any, columns: Columns, metrics: MetricsArg, options: dict[str, Any]
) -> tuple[SharedQrels, Plan]:
    """Qrels held on the driver (a :class:`Qrels`, a mapping, a pandas frame) as
    broadcast qrels, and the plan (``err``'s gmax from their largest label)."""
    shared = SharedQrels(as_qrels_object(qrels, columns))
    plan = make_plan(metrics, max_label=max_label_of(shared.qrels), **options)
    if needs_subtopics(plan.metrics):
        # Qrels without subtopic judgments fail here, before any job.
        _native(plan, shared.subset(np.zeros(1, np.int64)), _empty_run())
    return shared, plan
