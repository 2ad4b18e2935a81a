"""`evaluate_files`: score a TREC run file larger than memory, chunk by chunk."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Union

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    MAX_LINE_BYTES,
    check_empty,
    check_level,
    check_max_docs,
    check_max_line,
    check_miss,
    check_path,
    check_score_precision,
    check_threads,
    check_ties,
    positive_int,
    warn_unreached,
)
from ranklens._data import Qrels
from ranklens._evaluate import Results
from ranklens._names import Metric, nan_misses, native_specs, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["evaluate_files"]

PathLike = Union[str, "os.PathLike[str]"]


def evaluate_files(
    qrels_path: PathLike | Qrels,
    run_path: PathLike,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: float | str = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    chunk_rows: int = 100_000,
    threads: int | None = None,
    score_precision: str = "f64",
    max_line_bytes: int = MAX_LINE_BYTES,
    miss: str | None = "k+1",
    empty: str = "zero",
) -> Results:
    """Score a TREC run file against TREC qrels in bounded memory.

    The same :class:`Results` as ``evaluate(Qrels.from_trec(qrels_path),
    Run.from_trec(run_path), metrics, ...)``, bit for bit (per query and
    aggregated, same ``missing_queries`` and ``ignored_queries``), but the run
    file is read query block by query block: rows are collected until at least
    ``chunk_rows`` are held and a new query starts; that chunk is encoded, its
    queries are scored (in parallel, with the GIL released) and its rows freed.
    The qrels are read whole (``qrels_path`` may also be a :class:`Qrels`).
    ``run_path`` may be gzip-compressed (recognised by its content) or ``"-"``
    for standard input.  Qrels queries never seen in the run are scored on an
    empty ranking at the end, as :func:`evaluate` does.

    Memory: the qrels, plus one chunk, about ``chunk_rows`` x (document id
    length + ~40 bytes) (the rows of the query that completes it come on top),
    plus the result matrix (qrels queries x metrics x 8 bytes) and the ids of the
    run's queries.  With the default ``chunk_rows`` (100,000) and 25-byte
    document ids that is about 7 MB for the run, whatever its size; the file is
    parsed in parallel blocks, and a chunk is scored while the next is parsed.

    Each query's lines must be consecutive in the file (trec_eval's output and
    every usual run writer are grouped by query).  A query that appears again
    after another one raises :class:`~ranklens.errors.ParseError` (a
    ``RanklensInputError``) naming the query and the line: such a file cannot be
    scored chunk by chunk exactly; read it whole with
    ``evaluate(qrels, Run.from_trec(path), ...)``.

    The other arguments (``miss`` and ``empty`` among them) are those of
    :func:`evaluate` (``empty``: a qrels query with no judgment, or missing from
    the run file); ``score_precision`` and ``max_line_bytes`` (for both files)
    are those of :meth:`Run.from_trec`.
    """
    return _evaluate_files(
        qrels_path,
        run_path,
        metrics,
        relevance_level=relevance_level,
        judged_only=judged_only,
        max_docs=max_docs,
        ties=ties,
        chunk_rows=chunk_rows,
        threads=threads,
        score_precision=score_precision,
        max_line_bytes=max_line_bytes,
        miss=miss,
        empty=empty,
    )[0]


def _evaluate_files(
    qrels_path: PathLike | Qrels,
    run_path: PathLike,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: float | str = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    chunk_rows: int = 100_000,
    threads: int | None = None,
    score_precision: str = "f64",
    max_line_bytes: int = MAX_LINE_BYTES,
    miss: str | None = "k+1",
    empty: str = "zero",
) -> tuple[Results, str | None]:
    """`evaluate_files`, also returning the run's tag (first line; for the CLI)."""
    ms = parse_metrics(metrics)
    level = check_level(relevance_level)
    nthreads = check_threads(threads)
    check_max_docs(max_docs)
    positive_int(chunk_rows, "chunk_rows")
    check_ties(ties)
    round_f32 = check_score_precision(score_precision)
    max_line = check_max_line(max_line_bytes)
    miss_nan = check_miss(miss)
    check_empty(empty)
    q = (
        qrels_path
        if isinstance(qrels_path, Qrels)
        else Qrels.from_trec(qrels_path, max_line_bytes=max_line)
    )
    if len(q) == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    if len(q.labels):
        warn_unreached(float(q.labels.max()), ms, level, stacklevel=4)
    specs = native_specs(ms)
    values, missing, ignored, tag, _chunks = _ranklens.evaluate_trec_stream(
        q.arrays,
        check_path(run_path, "run_path"),
        specs,
        level,
        nthreads,
        bool(judged_only),
        max_docs,
        ties,
        chunk_rows,
        round_f32,
        max_line,
        miss_nan,
    )
    qids = q.query_ids
    missing = np.asarray(missing, dtype=np.int64)
    # A query missing from the file is one with nothing retrieved (a run file
    # has no empty ranking).
    rows = (
        np.union1d(np.flatnonzero(np.diff(q.offsets) == 0), missing).astype(np.int64)
        if empty != "zero"
        else np.empty(0, dtype=np.int64)
    )
    res = Results._with_empty(
        ms,
        qids,
        values,
        [qids[i] for i in missing],
        ignored,
        level,
        empty,
        rows,
        nan_misses(ms, miss_nan),
    )
    return res, tag
