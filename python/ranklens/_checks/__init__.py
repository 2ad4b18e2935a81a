"""What every entry point checks of its input, in one place: the arguments
(:mod:`._arguments`), the kinds of input data every door shares (orderings,
masks, integer scores, id matrices, ids that merge as strings: :mod:`._inputs`)
and graded labels that never reach the relevance level (:mod:`._labels`).

One place for the rules and the wording of the messages, so that ``evaluate``,
the scorers, the arrays, the files and the command lines refuse the same input
with the same words.  Below every entry point and the data types, above the
metric names (the label warning names the binary metrics).

Rejected: these checks inside ``_evaluate/``: ``_data`` checks paths and line
limits here, and ``_data`` sits below ``_evaluate`` (an upward import)."""

from __future__ import annotations

from ranklens._checks._arguments import (
    MAX_COUNT,
    MAX_LINE_BYTES,
    POSITIVE_LEVEL,
    check_empty,
    check_level,
    check_max_docs,
    check_max_line,
    check_miss,
    check_path,
    check_score_precision,
    check_threads,
    check_ties,
    level_text,
    positive_int,
)
from ranklens._checks._inputs import (
    check_exact_scores,
    check_int_ids,
    check_mapping,
    check_mask,
    check_ordered,
    check_tolerance,
    int_rows,
    twice_text,
)
from ranklens._checks._labels import checked_level, for_command_line, warn_text, warn_unreached

__all__ = [
    "MAX_COUNT",
    "MAX_LINE_BYTES",
    "POSITIVE_LEVEL",
    "check_empty",
    "check_exact_scores",
    "check_int_ids",
    "check_level",
    "check_mapping",
    "check_mask",
    "check_max_docs",
    "check_max_line",
    "check_miss",
    "check_ordered",
    "check_path",
    "check_score_precision",
    "check_threads",
    "check_ties",
    "check_tolerance",
    "checked_level",
    "for_command_line",
    "int_rows",
    "level_text",
    "positive_int",
    "twice_text",
    "warn_text",
    "warn_unreached",
]
