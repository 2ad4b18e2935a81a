"""Exceptions raised by ranklens.

Every error about the caller's data is a :class:`RanklensInputError`, a
``ValueError`` subclass, so ``except ValueError`` keeps working.  Input that is
valid but probably not what was meant (graded labels that never reach the
relevance level, say) gives a :class:`RanklensWarning`, a ``UserWarning``.  Errors raised by
the Rust core arrive already mapped to these classes (one place: ``src/lib.rs``).
"""

from __future__ import annotations

__all__ = ["ParseError", "RanklensInputError", "RanklensWarning", "UnknownMetricError"]


class RanklensInputError(ValueError):
    """Bad input: names the query, document, file or line at fault where known."""


class UnknownMetricError(RanklensInputError):
    """A metric name that no parser accepts, or an empty metric list."""


class ParseError(RanklensInputError):
    """A malformed line in a TREC file (the message names file and line)."""


class RanklensWarning(UserWarning):
    """Numbers that hold but may not be the ones meant: binary metrics asked for on
    labels of which none reaches the relevance level, a gate budget smaller than the
    drop its query set can detect, ..."""
