"""`evaluate` and its `Results`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["Results", "evaluate"]


class Results:
    """Scores of one run: per query and aggregated.

    * ``res[name]`` – the aggregate over **all qrels queries** (mean; sum for the
      counting measures ``num_ret``, ``num_rel``, ``num_rel_ret``, as trec_eval;
      geometric mean with trec_eval's 1e-5 floor for ``gm_map`` and ``gm_bpref``).
      A qrels query missing from the run was scored on an empty ranking (trec_eval
      ``-c``); queries only in the run were ignored.  Any accepted spelling works:
      ``res["P_5"]`` is ``res["precision@5"]``.
    * ``res.per_query(name)`` – ``{query_id: value}`` for every scored query.
    * ``res.missing_queries`` / ``res.ignored_queries`` – filled / dropped queries.
    * ``res.values`` – the ``queries x metrics`` array, rows in ``res.query_ids``
      order, columns in ``res.metrics`` order.
    """

    def __init__(
        self,
        metrics: list[Metric],
        query_ids: list[str],
        values: np.ndarray,
        missing_queries: list[str],
        ignored_queries: list[str],
        relevance_level: float,
    ) -> None:
        values.setflags(write=False)
        self.metrics = metrics
        self.query_ids = query_ids
        self.values = values
        self.missing_queries = missing_queries
        self.ignored_queries = ignored_queries
        self.relevance_level = relevance_level
        self._column = {m: j for j, m in enumerate(metrics)}

    @property
    def names(self) -> list[str]:
        """Canonical metric names, in column order."""
        return [m.name for m in self.metrics]

    def _col(self, name: str | Metric) -> int:
        m = parse_metric(name)
        try:
            return self._column[m]
        except KeyError:
            raise KeyError(
                f"{m.name!r} was not computed; computed: {', '.join(self.names)}"
            ) from None

    def __getitem__(self, name: str | Metric) -> float:
        j = self._col(name)
        col = self.values[:, j]
        if self.metrics[j].aggregate == "sum":
            return float(col.sum())
        if self.metrics[j].aggregate == "gmean":  # trec_eval part A: gm_map, gm_bpref
            total = 0.0
            for v in col.tolist():  # in query order, as trec_eval
                total += math.log(max(v, 1e-5))
            return math.exp(total / len(col)) if len(col) else 0.0
        return float(col.mean())

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, (str, Metric)):
            return False
        try:
            self._col(name)
        except (KeyError, ValueError):
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.metrics)

    def keys(self) -> list[str]:
        return self.names

    def per_query(self, name: str | Metric) -> dict[str, float]:
        col = self.values[:, self._col(name)].tolist()
        return dict(zip(self.query_ids, col))

    def to_dict(self) -> dict[str, float]:
        """``{metric name: aggregate}``."""
        return {m.name: self[m] for m in self.metrics}

    def to_pandas(self) -> Any:
        """Per-query scores as a ``pandas.DataFrame`` (index: query id)."""
        import pandas as pd

        df = pd.DataFrame(self.values, index=pd.Index(self.query_ids, name="query_id"))
        df.columns = self.names
        return df

    def __repr__(self) -> str:
        width = max((len(n) for n in self.names), default=6)
        lines = [f"Results({len(self.query_ids)} queries)"]
        for m in self.metrics:
            lines.append(f"  {m.name:<{width}}  {self[m]:.4f}")
        return "\n".join(lines)


def _check_level(relevance_level: Any) -> float:
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, float)):
        raise RanklensInputError(
            f"relevance_level must be a number, got {type(relevance_level).__name__}"
        )
    level = float(relevance_level)
    if not math.isfinite(level):
        raise RanklensInputError("relevance_level must be finite")
    return level


def _positive_int(value: Any, name: str, *, none_ok: bool = False) -> Any:
    """``value`` if it is a positive ``int`` (a ``bool`` is not), or ``None`` when
    ``none_ok``; else a :class:`RanklensInputError` naming the argument."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        allowed = "a positive int or None" if none_ok else "a positive int"
        raise RanklensInputError(f"{name} must be {allowed}, got {value!r}")
    return value


def _check_threads(threads: Any) -> int | None:
    return _positive_int(threads, "threads", none_ok=True)


def _check_max_docs(max_docs: Any) -> None:
    _positive_int(max_docs, "max_docs", none_ok=True)


def evaluate(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, Any],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    relevance_level: float = 1,
    backend: str = "rust",
    threads: int | None = None,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
) -> Results:
    """Score ``run`` against ``qrels`` on ``metrics``.

    ``metrics``: one name or several, in any accepted spelling (``"ndcg@10"``,
    ``"P_5"``, ``"nDCG@10"``, ``"P(rel=2)@5"``, ``"ndcg@5,10,20"``).
    ``relevance_level``: a label >= it is relevant (nDCG gains ignore it).
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
    Groups are formed after ``judged_only`` drops documents; a group straddling the
    ``max_docs`` cut is shuffled whole, then cut (which members are scored is random
    too).  Grouped qrels: an error if two documents of one group tie before the
    group is satisfied.  Families without an expected form raise
    ``UnknownMetricError`` before anything is scored.
    """
    ms = parse_metrics(metrics)
    level = _check_level(relevance_level)
    nthreads = _check_threads(threads)
    _check_max_docs(max_docs)
    q = as_qrels(qrels)
    r = as_run(run)
    if len(q) == 0:
        raise RanklensInputError("the qrels hold no query: nothing to evaluate")
    if backend == "rust":
        specs = [(m.family, m.k, m.rel, list(m.params)) for m in ms]
        values, run_index, run_only = _ranklens.evaluate(
            q.arrays, r.arrays, specs, level, nthreads, bool(judged_only), max_docs, ties
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
        per = evaluate_reference(
            qd,
            rd,
            ms,
            level,
            judged_only=bool(judged_only),
            max_docs=max_docs,
            ties=ties,
            groups=groups,
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
    return Results(ms, qids, values, missing, ignored, level)


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
