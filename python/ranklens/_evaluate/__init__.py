"""`evaluate`: qrels and a run in, :class:`~ranklens.Results` out, and the result
types every entry point returns (``Results``, ``Scores``, ``BatchScores``).

Private package: the public faces are ``ranklens.evaluate``, ``ranklens.Results``,
``ranklens.Scores`` and ``ranklens.BatchScores``."""

from __future__ import annotations

from ranklens._evaluate._evaluate import evaluate, evaluate_levels
from ranklens._evaluate._results import BatchScores, Results, Scores

__all__ = ["BatchScores", "Results", "Scores", "evaluate", "evaluate_levels"]
