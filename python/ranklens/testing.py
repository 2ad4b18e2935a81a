"""Helpers for test suites: :func:`assert_no_regression` gates a candidate run
inside ``pytest`` (or any test runner) instead of on the command line.

>>> from ranklens.testing import assert_no_regression
>>> qrels = {f"q{i}": {"d1": 1} for i in range(30)}
>>> run = {f"q{i}": ["d1"] for i in range(30)}
>>> assert_no_regression(qrels, run, run, {"ndcg@10": 0.01}).passed
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ranklens._gate import GateResult, gate, load_config

__all__ = ["assert_no_regression"]


def assert_no_regression(
    qrels: Any,
    baseline: Any,
    candidate: Any,
    budgets: Mapping[str, float] | float | None = None,
    **options: Any,
) -> GateResult:
    """Run :func:`ranklens.gate` and raise ``AssertionError`` (its text report as
    the message) unless every metric passes; return the :class:`GateResult`.

    ``budgets`` and ``options`` are those of :func:`ranklens.gate`.  Settings not
    given here come from the ``[tool.ranklens.gate]`` table of the nearest
    ``pyproject.toml`` (the current directory or a parent), as for
    ``ranklens gate``; with neither, ``budgets`` is required.
    """
    settings = load_config()
    if budgets is not None:
        settings["budgets"] = budgets
        if "metrics" not in options:
            settings.pop("metrics", None)  # the budgets name the metrics
    settings.update(options)
    if "budgets" not in settings:
        raise TypeError(
            "assert_no_regression needs budgets (or a [tool.ranklens.gate] table with "
            "max_drop in pyproject.toml)"
        )
    result = gate(qrels, baseline, candidate, **settings)
    if not result.passed:
        raise AssertionError("retrieval quality regressed\n" + result.to_text())
    return result
