"""`Results` (what `evaluate` returns), `Scores` (one sample or the means of a
batch) and `BatchScores` (per-row arrays): every one looks metrics up by any
accepted spelling."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ranklens._names import Metric, parse_metric

__all__ = ["BatchScores", "Results", "Scores"]


class Scores(dict):  # type: ignore[type-arg]
    """``{canonical metric name: value}``, a ``dict`` that also finds a metric by
    any accepted spelling: ``s["P@3"]``, ``s["P_3"]`` and ``s["precision@3"]`` are
    one entry (keys, iteration and equality are the canonical names').

    Why a dict subclass: built at C speed from the values, and every dict use
    (``json.dumps``, ``**s``, ``==``) keeps working; only a missed key parses.
    """

    __slots__ = ()

    def __missing__(self, key: object) -> Any:
        name = _canonical(key)
        if name is None or name == key or not dict.__contains__(self, name):
            raise KeyError(f"{key!r} was not computed; computed: {', '.join(self)}")
        return dict.__getitem__(self, name)

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key):
            return True
        name = _canonical(key)
        return name is not None and dict.__contains__(self, name)

    def get(self, key: object, default: Any = None) -> Any:
        return self[key] if key in self else default


def _canonical(key: object) -> str | None:
    if not isinstance(key, (str, Metric)):
        return None
    try:
        return parse_metric(key).name
    except ValueError:
        return None


class BatchScores(Scores):
    """``{canonical metric name: float64 array, one value per row}`` (any spelling
    finds a metric, as :class:`Scores`).

    * ``skipped`` – indices of the rows left out (``empty="skip"``: no ground truth
      or nothing retrieved; their values are NaN);
    * ``mean()`` – :class:`Scores` of the means over the rows not skipped.  A
      ``first_rel_rank`` scored with ``miss=None`` is averaged over the rows with
      a hit (its NaNs are the misses); any other NaN (``empty="nan"``) makes its
      mean NaN.
    """

    __slots__ = ("_nan_is_miss", "skipped")

    def __init__(
        self, values: Any = (), skipped: Any = (), nan_is_miss: frozenset[str] = frozenset()
    ) -> None:
        super().__init__(values)
        self.skipped = np.asarray(skipped, dtype=np.int64)
        self._nan_is_miss = nan_is_miss

    def mean(self) -> Scores:
        keep = None
        if len(self.skipped):
            n = len(next(iter(self.values()))) if self else 0
            keep = np.ones(n, dtype=bool)
            keep[self.skipped] = False
        out = Scores()
        for name, col in self.items():
            col = col if keep is None else col[keep]
            if name in self._nan_is_miss:
                col = col[~np.isnan(col)]
            out[name] = float(col.mean()) if len(col) else float("nan")
        return out


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
    * ``res.skipped_queries`` – queries left out of the aggregates
      (``evaluate(empty="skip")``: no ground truth or nothing retrieved; their
      per-query values are NaN).
    * ``res.values`` – the ``queries x metrics`` array, rows in ``res.query_ids``
      order, columns in ``res.metrics`` order.
    * ``first_rel_rank`` scored with ``evaluate(miss=None)``: NaN on a miss, and
      its aggregate is the mean over the queries with a hit (NaN if none).
    """

    def __init__(
        self,
        metrics: list[Metric],
        query_ids: list[str],
        values: np.ndarray,
        missing_queries: list[str],
        ignored_queries: list[str],
        relevance_level: float,
        skipped_queries: list[str] | None = None,
        skipped_rows: np.ndarray | None = None,
        nan_is_miss: frozenset[str] = frozenset(),
    ) -> None:
        values.setflags(write=False)
        #: Metrics whose NaNs are misses (``miss=None``), left out of the mean.
        self._nan_is_miss = nan_is_miss
        self.skipped_queries = list(skipped_queries or [])
        #: Rows of ``values`` the aggregates leave out (``empty="skip"``).
        self._kept: np.ndarray | None = None
        if skipped_rows is not None and len(skipped_rows):
            kept = np.ones(len(query_ids), dtype=bool)
            kept[skipped_rows] = False
            self._kept = kept
        self.metrics = metrics
        self.query_ids = query_ids
        self.values = values
        self.missing_queries = missing_queries
        self.ignored_queries = ignored_queries
        self.relevance_level = relevance_level
        self._column = {m: j for j, m in enumerate(metrics)}

    @classmethod
    def _with_empty(
        cls,
        metrics: list[Metric],
        query_ids: list[str],
        values: np.ndarray,
        missing_queries: list[str],
        ignored_queries: list[str],
        relevance_level: float,
        empty: str,
        empty_rows: np.ndarray,
        nan_is_miss: frozenset[str] = frozenset(),
    ) -> Results:
        """The results under the ``empty=`` policy: the queries at ``empty_rows``
        (nothing relevant or nothing retrieved) NaN for ``"nan"`` and ``"skip"``,
        and left out of the aggregates for ``"skip"``; ``"zero"`` keeps them."""
        if empty == "zero":
            empty_rows = np.empty(0, dtype=np.int64)
        if len(empty_rows):
            values = values.copy()
            values[empty_rows] = np.nan
        skip = empty == "skip"
        return cls(
            metrics,
            query_ids,
            values,
            missing_queries,
            ignored_queries,
            relevance_level,
            [query_ids[i] for i in empty_rows] if skip else [],
            empty_rows if skip else None,
            nan_is_miss=nan_is_miss,
        )

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
        if self._kept is not None:
            col = col[self._kept]
            if not len(col):
                return float("nan")  # every query skipped: no mean to take
        if self.metrics[j].name in self._nan_is_miss:
            col = col[~np.isnan(col)]
            if not len(col):
                return float("nan")  # no hit: no rank to average
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

    def to_dict(self) -> Scores:
        """``{metric name: aggregate}`` (a :class:`Scores`: any spelling works)."""
        return Scores((m.name, self[m]) for m in self.metrics)

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
