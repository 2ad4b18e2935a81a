"""`gate`: a retrieval-quality check for CI (see :func:`gate`).

Private package: the public face is ``ranklens.gate`` / ``ranklens.GateResult``
(``ranklens.gate`` is the function, so this unit is not named ``gate``)."""

from __future__ import annotations

from ranklens._gate._config import find_pyproject, load_config
from ranklens._gate._gate import CORRECTIONS, MODES, TESTS, gate
from ranklens._gate._result import GateResult, MetricVerdict, QueryChange

__all__ = [
    "CORRECTIONS",
    "MODES",
    "TESTS",
    "GateResult",
    "MetricVerdict",
    "QueryChange",
    "find_pyproject",
    "gate",
    "load_config",
]
