"""Argument checks every entry point shares.

One place for the rules and the wording of the messages: a relevance level is a
finite number or ``"positive"``, counts (threads, max_docs, chunk_rows, n_resamples, k, ...) are
positive ints (a ``bool`` is not), a score precision is ``"f64"`` or ``"f32"``.
Each failure is a :class:`~ranklens.errors.RanklensInputError` naming the
argument.
"""

from __future__ import annotations

import math
import os
from typing import Any

from ranklens.errors import RanklensInputError

__all__ = [
    "MAX_LINE_BYTES",
    "POSITIVE_LEVEL",
    "check_empty",
    "check_level",
    "check_max_docs",
    "check_max_line",
    "check_miss",
    "check_path",
    "check_score_precision",
    "check_threads",
    "check_ties",
    "level_text",
    "positive_int",
]


#: ``relevance_level="positive"``: the smallest positive double.  Relevance is
#: ``label >= level`` (and ``label >= 0``), so at this level exactly the labels
#: > 0 are relevant, whatever their scale (0.37 from an LLM judge, 2 from a
#: TREC assessor), and no kernel needs a second rule.
POSITIVE_LEVEL = math.ulp(0.0)


def check_level(relevance_level: Any) -> float:
    """The level as a float: a finite number, or ``"positive"`` (any label > 0 is
    relevant: :data:`POSITIVE_LEVEL`)."""
    if isinstance(relevance_level, str) and relevance_level.strip().lower() == "positive":
        return POSITIVE_LEVEL
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, float)):
        raise RanklensInputError(
            f"relevance_level must be a number or 'positive', got {type(relevance_level).__name__}"
        )
    try:
        level = float(relevance_level)
    except OverflowError:  # an int beyond float's range
        level = math.inf
    if not math.isfinite(level):
        raise RanklensInputError("relevance_level must be finite")
    return level


def level_text(text: str) -> float:
    """A level as typed on a command line: a number or ``positive``."""
    if text.strip().lower() == "positive":
        return POSITIVE_LEVEL
    try:
        return check_level(float(text))
    except ValueError:
        raise RanklensInputError(
            f"relevance level must be a number or 'positive', got {text!r}"
        ) from None


#: The largest count any argument may hold: what the core's 64-bit sizes can
#: take (Python ints are unbounded; past it the conversion failed with a bare
#: OverflowError).
MAX_COUNT = 2**63 - 1

#: The most threads a call may ask for.
MAX_THREADS = 4096


def positive_int(value: Any, name: str, *, none_ok: bool = False, maximum: int = MAX_COUNT) -> Any:
    """``value`` if it is an ``int`` (a ``bool`` is not) in ``1..=maximum``, or
    ``None`` when ``none_ok``; else a :class:`RanklensInputError` naming the
    argument."""
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        allowed = "a positive int or None" if none_ok else "a positive int"
        raise RanklensInputError(f"{name} must be {allowed}, got {value!r}")
    if value > maximum:
        raise RanklensInputError(f"{name} must be at most {maximum}, got {value}")
    return value


def check_threads(threads: Any) -> int | None:
    return positive_int(threads, "threads", none_ok=True, maximum=MAX_THREADS)


def check_empty(empty: Any) -> None:
    """The policy for a query with nothing relevant or nothing retrieved."""
    if empty not in ("zero", "nan", "skip"):
        raise RanklensInputError(f"empty must be 'zero', 'nan' or 'skip', got {empty!r}")


def check_miss(miss: Any) -> bool:
    """``first_rel_rank`` with no relevant document in the top k: ``"k+1"`` or
    ``None`` (NaN, a miss).  True for ``None``."""
    if miss is not None and miss != "k+1":
        raise RanklensInputError(f"miss must be 'k+1' or None, got {miss!r}")
    return miss is None


def check_ties(ties: Any) -> str:
    if ties not in ("trec", "input", "expected", "best", "worst"):
        raise RanklensInputError(
            f"ties must be 'trec', 'input', 'expected', 'best' or 'worst', got {ties!r}"
        )
    return ties


def check_max_docs(max_docs: Any) -> None:
    positive_int(max_docs, "max_docs", none_ok=True)


#: The longest line a TREC file may hold by default, in bytes (1 MiB): TREC
#: lines are a few dozen bytes, and the limit bounds the memory a file in
#: another format, or a hostile one (a gzip bomb without a newline), can take.
MAX_LINE_BYTES = 1 << 20


def check_max_line(max_line_bytes: Any) -> int:
    return positive_int(max_line_bytes, "max_line_bytes")


def check_path(path: Any, name: str = "path") -> str:
    """``path`` (a ``str``, ``bytes`` or ``os.PathLike``) as the UTF-8 ``str``
    the Rust core opens; else a :class:`RanklensInputError` naming the argument."""
    try:
        p = os.fspath(path)
    except TypeError:
        raise RanklensInputError(
            f"{name} must be a str, bytes or os.PathLike, got {type(path).__name__}"
        ) from None
    try:
        text = p.decode("utf-8") if isinstance(p, bytes) else p
        text.encode("utf-8")
    except UnicodeError:
        raise RanklensInputError(f"{name} {p!r} is not valid UTF-8") from None
    return text


def check_score_precision(score_precision: str) -> bool:
    if score_precision not in ("f64", "f32"):
        raise RanklensInputError(f"score_precision must be 'f64' or 'f32', got {score_precision!r}")
    return score_precision == "f32"
