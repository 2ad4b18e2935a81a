"""Preference judgments (``-R prefs``, ``-R qrels_prefs``): :class:`Prefs`,
:func:`evaluate_prefs`, and the file reading both judgment-group formats share."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import MAX_LINE_BYTES
from ranklens._data import Run
from ranklens._io._lines import field_lines
from ranklens.errors import ParseError, RanklensInputError
from ranklens.metrics import prefs as _reference

#: The preference measures, in trec_eval's order.
PREFS_MEASURES: tuple[str, ...] = _reference.NAMES
#: Summed over queries (the others are averaged), as trec_eval.
_SUMMED = {"prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"}

Line = tuple[str, str, str, float]  # (jg, jsg, doc, level)


def byte_key(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def read_lines(path: str | os.PathLike[str], nfields: int) -> Iterable[tuple[int, list[str]]]:
    """Non-comment lines of a whitespace-separated file with ``nfields`` fields
    (UTF-8, a byte order mark dropped, lines of at most ``MAX_LINE_BYTES``:
    :func:`ranklens._io._lines.field_lines`)."""
    name = os.fspath(path)
    for n, fields in field_lines(path, MAX_LINE_BYTES):
        if len(fields) != nfields:
            raise ParseError(f"{name}:{n}: expected {nfields} fields, got {len(fields)}")
        yield n, fields


def level_of(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"{where}: level {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ParseError(f"{where}: level {text!r} is not finite")
    return value


class Prefs:
    """Preference judgments: for each query, lines ``(jg, jsg, doc, level)``.

    Within a judgment sub-group ``jsg`` of judgment group ``jg``, a document of a
    higher level is preferred to every document of a lower one; level 0 means
    non-relevant.  See :mod:`ranklens.metrics.prefs` for the measures.

    >>> p = Prefs([("q1", "user1", "a", "d1", 2), ("q1", "user1", "a", "d2", 0)])
    >>> p.query_ids, p["q1"]
    (['q1'], [('user1', 'a', 'd1', 2.0), ('user1', 'a', 'd2', 0.0)])
    """

    def __init__(self, rows: Iterable[Sequence[Any]] = ()) -> None:
        """``rows``: ``(query, jg, jsg, doc, level)`` tuples."""
        lines: dict[str, list[Line]] = {}
        for k, row in enumerate(rows):
            if len(row) != 5:
                raise RanklensInputError(
                    f"row {k}: expected (query, jg, jsg, doc, level), got {len(row)} fields"
                )
            q, jg, jsg, doc, level = row
            for what, v in (("query", q), ("jg", jg), ("jsg", jsg), ("doc", doc)):
                if not isinstance(v, str):
                    raise RanklensInputError(f"row {k}: {what} must be a str, got {v!r}")
            try:
                lv = float(level)
            except (TypeError, ValueError):
                raise RanklensInputError(f"row {k}: level {level!r} is not a number") from None
            if lv != lv or lv in (float("inf"), float("-inf")):
                raise RanklensInputError(f"row {k}: level is NaN or infinite")
            lines.setdefault(q, []).append((jg, jsg, doc, lv))
        self._lines = {q: lines[q] for q in sorted(lines, key=byte_key)}

    @classmethod
    def from_trec(cls, path: str | os.PathLike[str], format: str = "prefs") -> Prefs:
        """Read a trec_eval preference file.

        ``format="prefs"``: lines ``qid jg jsg docno level``; ``"qrels_prefs"``: a
        qrels file ``qid jg docno level``, its second column the judgment group
        (one sub-group each).  ``#`` comment lines and blank lines are skipped; a
        line with another number of fields raises
        :class:`~ranklens.errors.RanklensInputError` naming file and line.
        """
        if format not in ("prefs", "qrels_prefs"):
            raise RanklensInputError(f"format must be 'prefs' or 'qrels_prefs', got {format!r}")
        name = os.fspath(path)
        rows = []
        if format == "prefs":
            for n, (q, jg, jsg, doc, lv) in read_lines(path, 5):
                rows.append((q, jg, jsg, doc, level_of(lv, f"{name}:{n}")))
        else:
            for n, (q, jg, doc, lv) in read_lines(path, 4):
                rows.append((q, jg, "0", doc, level_of(lv, f"{name}:{n}")))
        return cls(rows)

    @property
    def query_ids(self) -> list[str]:
        """Query ids in byte order of their UTF-8 encoding."""
        return list(self._lines)

    def __getitem__(self, qid: str) -> list[Line]:
        return list(self._lines[qid])

    def __contains__(self, qid: object) -> bool:
        return qid in self._lines

    def __iter__(self) -> Any:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)

    def __repr__(self) -> str:
        n = sum(len(v) for v in self._lines.values())
        return f"Prefs({len(self)} queries, {n} lines)"


class JudgmentResults:
    """Per-query values of :func:`evaluate_prefs` / :func:`evaluate_jg`.

    * ``res[name]``: the aggregate over the queries, as trec_eval prints it
      (mean; sum for ``prefs_num_prefs_*``).
    * ``res.per_query(name)``: ``{query_id: value}``.
    * ``res.values``: ``queries x names`` array, rows in ``res.query_ids`` order.
    """

    def __init__(self, names: list[str], query_ids: list[str], values: np.ndarray) -> None:
        values.setflags(write=False)
        self.names = names
        self.query_ids = query_ids
        self.values = values
        self._col = {n: j for j, n in enumerate(names)}

    def _j(self, name: str) -> int:
        if name not in self._col:
            raise KeyError(f"{name!r} was not computed; computed: {', '.join(self.names)}")
        return self._col[name]

    def __getitem__(self, name: str) -> float:
        col = self.values[:, self._j(name)]
        if name in _SUMMED:
            return float(col.sum())
        return float(col.mean()) if len(col) else 0.0

    def per_query(self, name: str) -> dict[str, float]:
        j = self._j(name)
        return {q: float(v) for q, v in zip(self.query_ids, self.values[:, j])}

    def __contains__(self, name: object) -> bool:
        return name in self._col

    def keys(self) -> list[str]:
        return list(self.names)

    def __repr__(self) -> str:
        return f"JudgmentResults({len(self.query_ids)} queries, {', '.join(self.names)})"


def _ranking(run: Run, qid: str, max_docs: int | None) -> list[str]:
    """trec_eval's order for preferences: score descending, ties by doc id
    ascending (form_prefs_counts.c; qrels measures break ties descending)."""
    if qid not in run:
        return []
    items = sorted(run[qid].items(), key=lambda kv: (-kv[1], byte_key(kv[0])))
    docs = [d for d, _ in items]
    return docs if max_docs is None else docs[: max(max_docs, 0)]


def evaluate_prefs(
    prefs: Prefs,
    run: Run | Mapping[str, Mapping[str, float]],
    measures: Sequence[str] | None = None,
    *,
    max_docs: int | None = None,
    backend: str = "rust",
) -> JudgmentResults:
    """trec_eval 10.0's preference measures (``-R prefs`` / ``-R qrels_prefs``).

    Every query of ``prefs`` is scored (one missing from the run on an empty
    ranking); ``measures`` defaults to all of :data:`PREFS_MEASURES`;
    ``max_docs`` is trec_eval's ``-M``.  ``backend="python"`` runs the reference
    implementation.  A query with more than 16,384 judged documents raises
    :class:`~ranklens.errors.RanklensInputError` (the Rust kernel counts document
    pairs in a square matrix).

    >>> p = Prefs([("q", "u", "s", "a", 1), ("q", "u", "s", "b", 0)])
    >>> evaluate_prefs(p, {"q": {"b": 2.0, "a": 1.0}}, ["prefs_simp"])["prefs_simp"]
    0.0
    """
    if not isinstance(prefs, Prefs):
        raise RanklensInputError(f"prefs must be a Prefs, got {type(prefs).__name__}")
    run = run if isinstance(run, Run) else Run(run)
    names = list(PREFS_MEASURES if measures is None else measures)
    unknown = [n for n in names if n not in PREFS_MEASURES]
    if unknown:
        raise RanklensInputError(
            f"unknown preference measure {unknown[0]!r}; known: {', '.join(PREFS_MEASURES)}"
        )
    if backend not in ("rust", "python"):
        raise RanklensInputError(f"backend must be 'rust' or 'python', got {backend!r}")
    qids = prefs.query_ids
    if backend == "python":
        rows = []
        for q in qids:
            v = _reference.prefs(prefs[q], _ranking(run, q, max_docs))
            rows.append([v[n] for n in PREFS_MEASURES])
        full = np.array(rows, dtype=np.float64).reshape(len(qids), len(PREFS_MEASURES))
    else:
        full = _native(prefs, run, max_docs)
    cols = [PREFS_MEASURES.index(n) for n in names]
    return JudgmentResults(names, qids, np.ascontiguousarray(full[:, cols]))


def _native(prefs: Prefs, run: Run, max_docs: int | None) -> np.ndarray:
    jg: list[int] = []
    jsg: list[int] = []
    doc: list[int] = []
    level: list[float] = []
    jo = [0]
    ranked: list[int] = []
    ro = [0]
    for q in prefs.query_ids:
        lines = prefs[q]
        # ordinals in byte order: the kernel visits groups, and places unretrieved
        # documents, in that order, as trec_eval does
        jgs = {s: k for k, s in enumerate(sorted({x[0] for x in lines}, key=byte_key))}
        jsgs = {s: k for k, s in enumerate(sorted({x[1] for x in lines}, key=byte_key))}
        docs = {s: k for k, s in enumerate(sorted({x[2] for x in lines}, key=byte_key))}
        for a, b, d, lv in lines:
            jg.append(jgs[a])
            jsg.append(jsgs[b])
            doc.append(docs[d])
            level.append(lv)
        jo.append(len(jg))
        ranked += [docs[d] for d in _ranking(run, q, max_docs) if d in docs]
        ro.append(len(ranked))
    return _ranklens.evaluate_prefs(
        np.array(jg, dtype=np.uint32),
        np.array(jsg, dtype=np.uint32),
        np.array(doc, dtype=np.uint32),
        np.array(level, dtype=np.float64),
        np.array(jo, dtype=np.uint64),
        np.array(ranked, dtype=np.uint32),
        np.array(ro, dtype=np.uint64),
    )
