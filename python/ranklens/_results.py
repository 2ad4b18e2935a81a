"""`Results`: what every evaluation path returns."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from ranklens._names import Metric, parse_metric

__all__ = ["Results"]


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
