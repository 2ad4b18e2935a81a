"""`GateResult` (what `gate` returns), one `MetricVerdict` per metric, and the
per-query changes it lists; JSON here, the text and Markdown reports in `_report`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ranklens._gate import _report
from ranklens._names import Metric, parse_metric
from ranklens.compare._comparison import json_float


@dataclass(frozen=True)
class MetricVerdict:
    """The decision on one metric; ``drop = baseline - candidate`` (means over the
    qrels queries), ``[ci_low, ci_high]`` its two one-sided ``1 - level`` bounds."""

    metric: str
    budget: float
    baseline: float
    candidate: float
    drop: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float
    level: float
    passed: bool
    wins: int
    ties: int
    losses: int
    min_detectable: float

    @property
    def underpowered(self) -> bool:
        """The budget is below the smallest drop these queries can detect."""
        return self.budget < self.min_detectable

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["underpowered"] = self.underpowered
        return out


@dataclass(frozen=True)
class QueryChange:
    """One query's score in both runs; ``drop = baseline - candidate``."""

    query_id: str
    baseline: float
    candidate: float
    drop: float


class GateResult:
    """The result of :func:`ranklens.gate`.

    * ``passed`` – every metric passed; ``failed`` – the names of those that did not.
    * ``verdicts`` – one :class:`MetricVerdict` per metric, in order;
      ``verdict(metric)`` finds one (any spelling).
    * ``regressions[metric]`` – the most regressed queries (:class:`QueryChange`).
    * ``flips[k]`` / ``gains[k]`` – query ids that went hit -> miss / miss -> hit
      at cutoff ``k``.
    * ``missing_queries[name]`` / ``ignored_queries[name]`` – per run (``names``):
      qrels queries it lacks (scored as empty rankings), queries not in the qrels.
    * ``tie_verdicts`` – the overall verdict under the ``"trec"``, ``"best"`` and
      ``"worst"`` tie orders (``None`` for grouped qrels); ``tie_dependent`` – true
      when they differ (the reports then say so).
    * ``warnings`` – the power warnings issued; ``settings`` – the options used;
      ``query_ids``, ``scores[name]`` (``queries x metrics`` arrays).
    * ``to_text()`` (also ``str()``), ``to_markdown()``, ``to_json()``, ``to_dict()``.
    """

    def __init__(
        self,
        *,
        names: tuple[str, str],
        query_ids: list[str],
        verdicts: list[MetricVerdict],
        regressions: dict[str, list[QueryChange]],
        flips: dict[int, list[str]],
        gains: dict[int, list[str]],
        missing_queries: dict[str, list[str]],
        ignored_queries: dict[str, list[str]],
        warnings: list[str],
        settings: dict[str, Any],
        scores: dict[str, np.ndarray],
        tie_verdicts: dict[str, bool] | None = None,
    ) -> None:
        self.names = names
        self.query_ids = query_ids
        self.verdicts = verdicts
        self.regressions = regressions
        self.flips = flips
        self.gains = gains
        self.missing_queries = missing_queries
        self.ignored_queries = ignored_queries
        self.warnings = warnings
        self.settings = settings
        self.scores = scores
        self.tie_verdicts = tie_verdicts

    @property
    def tie_dependent(self) -> bool:
        return self.tie_verdicts is not None and len(set(self.tie_verdicts.values())) > 1

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts)

    @property
    def failed(self) -> list[str]:
        return [v.metric for v in self.verdicts if not v.passed]

    def verdict(self, metric: str | Metric) -> MetricVerdict:
        name = parse_metric(metric).name
        for v in self.verdicts:
            if v.metric == name:
                return v
        raise KeyError(
            f"{name!r} was not gated; gated: {', '.join(v.metric for v in self.verdicts)}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; infinite numbers are written as ``"inf"`` / ``"-inf"``."""
        return {
            "passed": self.passed,
            "failed": self.failed,
            "names": {"baseline": self.names[0], "candidate": self.names[1]},
            "num_queries": len(self.query_ids),
            "settings": dict(self.settings),
            "verdicts": [_finite(v.to_dict()) for v in self.verdicts],
            "regressions": {
                m: [asdict(c) for c in changes] for m, changes in self.regressions.items()
            },
            "flips": {str(k): ids for k, ids in self.flips.items()},
            "gains": {str(k): ids for k, ids in self.gains.items()},
            "missing_queries": dict(self.missing_queries),
            "ignored_queries": dict(self.ignored_queries),
            "warnings": list(self.warnings),
            "tie_verdicts": None if self.tie_verdicts is None else dict(self.tie_verdicts),
            "tie_dependent": self.tie_dependent,
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def to_text(self, digits: int = 4) -> str:
        return _report.to_text(self, digits)

    def to_markdown(self, digits: int = 4) -> str:
        """GitHub-flavoured Markdown: for a pull-request comment or a CI job summary."""
        return _report.to_markdown(self, digits)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        state = "passed" if self.passed else f"failed: {', '.join(self.failed)}"
        return f"GateResult({len(self.verdicts)} metrics, {len(self.query_ids)} queries, {state})"


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json_float(v) if isinstance(v, float) else v for k, v in row.items()}
