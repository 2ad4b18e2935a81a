"""The plan of a distributed evaluation, decided on the driver: columns, metrics, options.

:func:`make_plan` validates every option once and resolves ``err``'s automatic
``gmax`` from the whole qrels; the frozen :class:`Plan` and :class:`Columns` are
then pickled with every task, so workers need no check of their own.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
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
from ranklens._data import Qrels, Run
from ranklens._names import Metric, needs_subtopics, parse_metrics
from ranklens.errors import RanklensInputError, UnknownMetricError

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
    native(plan, Qrels.from_subtopics([("q", "0", "d", 1)]), empty_run())
    return plan


def native(plan: Plan, qrels: Qrels, run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def empty_run() -> Run:
    if not _EMPTY:
        _EMPTY.append(Run({}))
    return _EMPTY[0]


def max_label_of(qrels: Qrels) -> float:
    """The largest label of ``qrels`` as the kernels' automatic ``gmax`` takes it."""
    values = qrels.values
    return max(0.0, float(values.max())) if len(values) else 0.0


TIES_INPUT = (
    "ties='input' keeps the input order of equal scores, and a shuffle does not keep "
    "row order: pass position=<column> holding each row's order within its query "
    "(e.g. the TREC rank), or use ties='trec' or ties='expected'"
)


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
        raise RanklensInputError(TIES_INPUT)
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
