"""`evaluate`: one run against qrels, on either backend."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    check_empty,
    check_level,
    check_max_docs,
    check_miss,
    check_threads,
    check_ties,
    warn_unreached,
)
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._evaluate._results import Results
from ranklens._names import Metric, nan_misses, native_specs, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["evaluate", "evaluate_levels"]


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: float | str = 1,
    backend: str = "rust",
    threads: int | None = None,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    empty: str = "zero",
    miss: str | None = "k+1",
) -> Results:
    """Score ``run`` against ``qrels`` on ``metrics``.

    ``metrics``: one name or several, in any accepted spelling (``"ndcg@10"``,
    ``"P_5"``, ``"nDCG@10"``, ``"P(rel=2)@5"``, ``"ndcg@5,10,20"``).
    ``relevance_level``: a label >= it is relevant (nDCG gains ignore it);
    ``"positive"``: any label > 0 is.  When some label is positive but none
    reaches the level, binary metrics would count nothing: a
    :class:`~ranklens.errors.RanklensWarning` says so.
    ``backend``: ``"rust"`` (default) or ``"python"``, the readable reference
    implementation in :mod:`ranklens.metrics`, which must give the same numbers.
    ``threads``: worker threads for the Rust backend (default: the
    ``RANKLENS_NUM_THREADS`` environment variable, else one per core).
    ``judged_only``: drop unjudged retrieved documents first, ranks closing up
    (trec_eval ``-J``).  ``max_docs``: score only the top ``max_docs`` of each
    ranking (trec_eval ``-M``).
    ``ties``: order of documents with equal scores: ``"trec"`` (default: document
    id descending, trec_eval), ``"input"`` (the order given: file or mapping
    order; for rerankers that emit equal scores) or ``"expected"``: the exact
    expected value over all orderings of each group of equal scores (uniformly
    random, independent per group; McSherry & Najork 2008), computed in closed form.
    ``"best"`` / ``"worst"``: higher / lower labels first within a group of equal
    scores (a document not in the qrels counts as label 0, a negative label below
    it; then trec order), as ``evaluate_dense(ties=...)``: the best / worst value
    over the orderings for every metric that rewards ranking higher labels higher
    (precision, recall, mrr, map, ndcg, err, ...); with subtopic qrels a document's
    label is its largest subtopic label (for the diversity metrics an ordering,
    not a bound); not with grouped qrels.
    ``empty``: a qrels query with no ground truth (``Qrels.from_groups`` with no
    group) or nothing retrieved (missing from the run, or an empty ranking):
    ``"zero"`` (default: scored as trec_eval scores it, mostly 0), ``"nan"``
    (NaN for every metric, so aggregates are NaN) or ``"skip"`` (NaN, left out
    of the aggregates, listed in ``res.skipped_queries``).
    ``miss``: ``first_rel_rank`` (alias ``mean_rank``) of a query with no
    relevant document in the top k: ``"k+1"`` (default: k + 1, or the ranking's
    length + 1 without a cutoff) or ``None`` (NaN, as Axion's
    ``rank_of_first_relevant``; the aggregate is then the mean over the queries
    with a hit).  ``None`` with ``ties="expected"`` is an error.
    The diversity metrics (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``, ...) need
    subtopic judgments: qrels from ``Qrels.from_subtopics``,
    ``Qrels.from_trec(path, subtopics=True)`` or ``Qrels.from_groups`` (a group is
    a subtopic).
    Groups are formed after ``judged_only`` drops documents; a group straddling the
    ``max_docs`` cut is shuffled whole, then cut (which members are scored is random
    too).  Grouped qrels: an error if two documents of one group tie before the
    group is satisfied.  Families without an expected form raise
    ``UnknownMetricError`` before anything is scored.
    """
    return evaluate_levels(
        qrels,
        run,
        metrics,
        warn_levels=True,
        relevance_level=relevance_level,
        backend=backend,
        threads=threads,
        judged_only=judged_only,
        max_docs=max_docs,
        ties=ties,
        empty=empty,
        miss=miss,
    )


def evaluate_levels(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    warn_levels: bool,
    relevance_level: float | str = 1,
    backend: str = "rust",
    threads: int | None = None,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    empty: str = "zero",
    miss: str | None = "k+1",
) -> Results:
    """:func:`evaluate`; ``warn_levels=False`` leaves out its warning about a
    relevance level no label reaches (the pytrec_eval drop-in: pytrec_eval
    says nothing)."""
    ms = parse_metrics(metrics)
    level = check_level(relevance_level)
    check_empty(empty)
    nthreads = check_threads(threads)
    check_max_docs(max_docs)
    check_ties(ties)
    miss_nan = check_miss(miss)
    q = as_qrels(qrels)
    fast = None
    if backend == "rust" and isinstance(run, dict) and q._subtopics is None:
        if ties == "trec" and max_docs is None and empty == "zero" and len(q):
            fast = _dict_run(q, run, native_specs(ms), level, nthreads, judged_only, miss_nan)
    r = as_run(run) if fast is None else None
    if len(q) == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    if warn_levels and len(q.labels):
        warn_unreached(float(q.labels.max()), ms, level)
    if fast is not None:
        values, missing, ignored = fast
        qids = q.query_ids
    elif backend == "rust":
        assert r is not None
        specs = native_specs(ms)
        values, run_index, run_only = _ranklens.evaluate(
            q.arrays,
            r.arrays,
            specs,
            level,
            nthreads,
            bool(judged_only),
            max_docs,
            ties,
            q._subtopics,
            miss_nan,
        )
        qids = q.query_ids
        missing = [qids[i] for i in np.flatnonzero(run_index < 0)]
        run_qids = r.query_ids
        ignored = [run_qids[i] for i in run_only]
    elif backend == "python":
        from ranklens.metrics import evaluate_reference

        qd = qrels if isinstance(qrels, Mapping) else q.to_dict()
        rd = _run_mapping(run) if isinstance(run, Mapping) else r.to_dict()
        groups = q.groups() if q.grouped else None  # grouped ground truth (RAG)
        subtopics = q.subtopics() if q.has_subtopics else None  # diversity qrels
        per = evaluate_reference(
            qd,
            rd,
            ms,
            level,
            judged_only=bool(judged_only),
            max_docs=max_docs,
            ties=ties,
            groups=groups,
            subtopics=subtopics,
            miss_nan=miss_nan,
        )
        qids = q.query_ids
        values = np.array([[per[qid][m.name] for m in ms] for qid in qids], dtype=np.float64)
        values = values.reshape(len(qids), len(ms))
        in_run = {str(k) for k in rd}
        missing = [qid for qid in qids if qid not in in_run]
        in_qrels = set(qids)
        ignored = sorted((x for x in in_run if x not in in_qrels), key=lambda s: s.encode())
    else:
        raise RanklensInputError(f"backend must be 'rust' or 'python', got {backend!r}")
    rows = np.empty(0, dtype=np.int64)
    if empty != "zero":
        assert r is not None
        rows = _empty_rows(q, r)
    return Results._with_empty(
        ms, qids, values, missing, ignored, level, empty, rows, nan_misses(ms, miss_nan)
    )


def _dict_run(
    q: Qrels,
    run: dict[Any, Any],
    specs: list[Any],
    level: float,
    threads: int | None,
    judged_only: bool,
    miss_nan: bool,
) -> tuple[np.ndarray, list[str], list[str]] | None:
    """A run dict scored without encoding a :class:`Run` (``_ranklens.evaluate_dict_all``:
    the common input, exact ``str`` ids and ``float``/``int`` scores, with the
    default ties, cutoff and empty-query policy): ``(values, missing, ignored)`` as
    the general path gives them, or ``None`` (any other input: the general path,
    which gives every check and message)."""
    judged = _ranklens.dict_judgments(q.arrays)
    if judged is None:
        return None
    got = _ranklens.evaluate_dict_all(
        judged, q.arrays, run, specs, level, threads, bool(judged_only), miss_nan
    )
    if got is None:
        return None
    values, present, run_only = got
    qids = q.query_ids
    missing = [qids[i] for i in np.flatnonzero(~present)]
    # The general path lists them in the encoded run's order: by UTF-8 bytes.
    ignored = sorted(run_only, key=lambda s: s.encode())
    return values, missing, ignored


def _empty_rows(q: Qrels, r: Run) -> np.ndarray:
    """Qrels queries with no ground truth or nothing retrieved, as row indices."""
    no_truth = np.diff(q.offsets) == 0
    run_rows = np.diff(r.offsets)
    pos = {qid: i for i, qid in enumerate(r.query_ids)}
    retrieved = np.array([run_rows[pos[x]] if x in pos else 0 for x in q.query_ids])
    return np.flatnonzero(no_truth | (retrieved == 0))


def _run_mapping(run: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """A run mapping for the reference backend: ranked lists become scores n..1."""
    out: dict[str, dict[str, float]] = {}
    for qid, inner in run.items():
        if isinstance(inner, (list, tuple)):
            n = len(inner)
            out[str(qid)] = {str(d): float(n - i) for i, d in enumerate(inner)}
        else:
            out[str(qid)] = {str(d): float(s) for d, s in inner.items()}
    return out
