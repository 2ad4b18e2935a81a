"""Subtopic (diversity) qrels: rows and the TREC diversity file format.

Why subtopic judgments are kept beside the ordinary qrels rows and not as rows
of their own: the other metrics must see one label per (query, document), and
a document is commonly judged for several subtopics.  So the encoded qrels
hold one row per document (label: the largest of its subtopic labels) and
:class:`~ranklens.Qrels` keeps, per row, its (subtopic, label) judgments
(``Qrels._subtopics``), which only the diversity metrics read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ranklens._checks import twice_text
from ranklens._io._lines import field_lines
from ranklens.errors import ParseError, RanklensInputError

__all__ = ["encode_subtopics", "read_subtopic_trec"]

_FIELDS = ("query_id", "subtopic_id", "doc_id", "relevance")


def _row(row: Any) -> tuple[Any, Any, Any, Any]:
    if all(hasattr(row, f) for f in _FIELDS):
        return row.query_id, row.subtopic_id, row.doc_id, row.relevance
    if isinstance(row, (tuple, list)) and len(row) == 4:
        return row[0], row[1], row[2], row[3]
    raise RanklensInputError(
        "a subtopic qrels row is a (query_id, subtopic, doc_id, label) tuple or has "
        f"the attributes {', '.join(_FIELDS)}; got {row!r}"
    )


def _id(value: Any, what: str) -> str:
    """An id that is not an exact ``str``, by the rule of ``bindings::ids``: a
    ``str`` subclass's text, an integer's (``int``, numpy) decimal value."""
    if isinstance(value, str):
        return str.__str__(value)
    if not isinstance(value, bool) and isinstance(value, (int, np.integer)):
        return str(int(value))
    raise RanklensInputError(f"{what} must be a str or an int, got {value!r}")


def encode_subtopics(rows: Iterable[Any]) -> dict[str, dict[str, dict[str, float]]]:
    """``{query_id: {doc_id: {subtopic: label}}}`` from the rows, checked: a
    query or (query, document) id given both as an int and as a str (``1`` and
    ``"1"``) is an error in ``evaluate``'s words."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    # Whether each query and (query, document) id first came as a string: ``1``
    # and ``"1"`` are one id once written as a string, an error as in ``evaluate``.
    q_text: dict[str, bool] = {}
    d_text: dict[tuple[str, str], bool] = {}
    for row in rows:
        # The common row, a 4-tuple of str ids and a number, takes no call.
        if type(row) is tuple and len(row) == 4:
            q, s, d, label = row
        else:
            q, s, d, label = _row(row)
        q_obj, d_obj = q, d
        if type(q) is not str:
            q = _id(q, "query_id")
        if type(s) is not str:
            s = _id(s, "subtopic")
        if type(d) is not str:
            d = _id(d, "doc_id")
        text = isinstance(q_obj, str)
        if q_text.setdefault(q, text) is not text:
            raise RanklensInputError(twice_text("query", q, q_obj))
        text = isinstance(d_obj, str)
        if d_text.setdefault((q, d), text) is not text:
            raise RanklensInputError(f'query "{q}": ' + twice_text("document", d, d_obj))
        if type(label) is not int and type(label) is not float:
            if isinstance(label, bool) or not isinstance(label, (int, float)):
                raise RanklensInputError(
                    f"query {q!r}, subtopic {s!r}, document {d!r}: the label must be a "
                    f"number, got {label!r}"
                )
        try:
            value = float(label) + 0.0
        except OverflowError:  # an int past the largest float
            value = math.inf
        if value - value != 0.0:  # NaN or infinite
            raise RanklensInputError(
                f"query {q!r}, subtopic {s!r}, document {d!r}: the label must be finite"
            )
        by_doc = out.get(q)
        if by_doc is None:
            by_doc = out[q] = {}
        subs = by_doc.get(d)
        if subs is None:
            subs = by_doc[d] = {}
        if s in subs:
            raise RanklensInputError(
                f"query {q!r}: document {d!r} is judged twice for subtopic {s!r}"
            )
        subs[s] = value
    return out


def read_subtopic_trec(path: str, max_line_bytes: int) -> list[tuple[str, str, str, float]]:
    """The rows of a TREC diversity qrels file: ``qid subtopic docno label`` per
    line (blank lines and ``#`` comments skipped; the file checked as
    :mod:`ranklens._io._lines` says); a malformed line raises
    :class:`~ranklens.errors.ParseError` naming the file and line."""
    rows: list[tuple[str, str, str, float]] = []
    for n, fields in field_lines(path, max_line_bytes):
        if len(fields) != 4:
            raise ParseError(
                f"{path}:{n}: expected 4 fields (qid subtopic docno label), got {len(fields)}"
            )
        try:
            label = float(fields[3])
        except ValueError:
            raise ParseError(f"{path}:{n}: label {fields[3]!r} is not a number") from None
        if not math.isfinite(label):
            raise ParseError(f"{path}:{n}: label {fields[3]!r} is not finite")
        rows.append((fields[0], fields[1], fields[2], label))
    return rows
