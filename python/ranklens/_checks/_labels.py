"""The warning for graded labels that never reach the relevance level.

An LLM judge's labels (0.37, 0.8) with a TREC default level of 1 make every
binary metric (precision, recall, MRR, MAP, hit rate) 0 while nDCG is not: a
silent wrong number.  Every entry point checks the largest label of its input
against the level and warns (:class:`~ranklens.errors.RanklensWarning`) when some
label is positive and none reaches it.  Metrics with their own ``rel=`` level are
a deliberate choice and are not checked.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from ranklens._names import FAMILIES, Metric
from ranklens.errors import RanklensWarning

__all__ = ["checked_level", "for_command_line", "warn_text", "warn_unreached"]

# The hint's Python spelling, and the command line's (`-l`, both CLIs).
_PY_HINT = "pass relevance_level='positive'"
_CLI_HINT = "pass -l positive"


def checked_level(metrics: Sequence[Metric], level: float) -> float:
    """The level to check labels against: ``level`` when some binary metric uses
    it (no own ``rel=``), else ``-inf`` (nothing to check)."""
    if any(FAMILIES[m.family].binary and m.rel is None for m in metrics):
        return level
    return float("-inf")


def warn_text(metrics: Sequence[Metric], level: float) -> str:
    """The warning's text; ``{largest}`` stands for the largest label."""
    binary = [m.name for m in metrics if FAMILIES[m.family].binary and m.rel is None]
    names = ", ".join(binary[:3]) + (f" and {len(binary) - 3} more" if len(binary) > 3 else "")
    return (
        f"no ground-truth label reaches relevance_level={level:g} (the largest is "
        f"{{largest}}), so the binary metrics ({names}) count nothing as relevant; "
        f"{_PY_HINT} to count every label > 0 as relevant, or a level the labels reach"
    )


def for_command_line(text: str) -> str:
    """A warning's text with the Python argument it suggests spelled as the
    command line's option (``-l positive``)."""
    return text.replace(_PY_HINT, _CLI_HINT).replace("relevance_level=", "relevance level ")


def warn_unreached(
    largest: float, metrics: Sequence[Metric], level: float, stacklevel: int = 3
) -> None:
    """Warn when ``largest`` (the input's largest label) is positive but below the
    level the binary metrics use."""
    if 0 < largest < checked_level(metrics, level):
        text = warn_text(metrics, level).replace("{largest}", f"{largest:g}")
        warnings.warn(text, RanklensWarning, stacklevel=stacklevel)
