"""`Run`: rankings, from every format ranklens reads, stored in ranking order."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import (
    MAX_LINE_BYTES,
    check_mapping,
    check_max_line,
    check_path,
    check_score_precision,
)
from ranklens._data._side import PathLike, Side, column_names
from ranklens._io._common import DOC, QUERY

__all__ = ["Run"]


class Run(Side):
    """Rankings: per query, document id -> score, or a ranked list of ids.

    ``Run({"q1": {"d1": 12.5, "d3": 9.1}})`` ranks by score descending, ties
    broken by document id descending (trec_eval).  ``Run({"q1": ["d3", "d1"]})``
    takes the list order as the ranking.

    Ids are ``str``, ``int`` or numpy integers; an integer is its decimal text,
    so ``1`` and ``"1"`` are one id (a mapping holding both gives it twice: an
    error).  ``bool``, ``float``, ``None`` and a ``str`` with a lone surrogate
    raise :class:`~ranklens.errors.RanklensInputError` naming the place.

    ``score_precision``: ``"f64"`` (default, trec_eval 10.0) or ``"f32"``, which
    rounds scores to 32-bit floats first, as pytrec_eval does.
    """

    _kind = "run"

    def __init__(
        self,
        data: Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]] | None = None,
        *,
        name: str | None = None,
        score_precision: str = "f64",
    ) -> None:
        if data is not None:
            check_mapping(data, "run", "{doc id: score} or [doc ids]")
        arrays = _ranklens.encode_mapping(
            {} if data is None else data, "run", check_score_precision(score_precision)
        )
        super().__init__(arrays)
        self.name = name

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[str]],
        *,
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From ``{query_id: {doc_id: score}}`` or ``{query_id: [doc_id, ...]}``."""
        return cls(data, name=name, score_precision=score_precision)

    @classmethod
    def _from_arrays(cls, arrays: tuple[np.ndarray, ...], name: str | None = None) -> Run:
        obj = cls.__new__(cls)
        Side.__init__(obj, arrays)
        obj.name = name
        return obj

    @classmethod
    def from_trec(
        cls,
        path: str | os.PathLike[str],
        *,
        score_precision: str = "f64",
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> Run:
        """Read a TREC run file (``qid iter docno rank score tag``; ``.gz`` ok; ``-`` = stdin).

        At least six fields per line (more are ignored); the iter and rank fields
        are ignored, as trec_eval does; ``name`` is the tag of the first line.  A
        malformed line, a document listed twice for a query, an id that is not
        UTF-8 or a line longer than ``max_line_bytes`` (1 MiB by default) raises
        :class:`~ranklens.errors.ParseError` naming the file and line.
        """
        arrays, tag = _ranklens.read_trec(
            check_path(path),
            "run",
            check_score_precision(score_precision),
            check_max_line(max_line_bytes),
        )
        return cls._from_arrays(arrays, name=tag)

    def to_trec(self, path: str | os.PathLike[str], tag: str | None = None) -> None:
        """Write a TREC run file in ranking order (``.gz`` compressed; ``-`` = stdout)."""
        _ranklens.write_trec(check_path(path), "run", self.arrays, tag or self.name or "ranklens")

    @property
    def scores(self) -> np.ndarray:
        return self._values

    def _has_tied_scores(self) -> bool:
        """Whether two documents of one query have equal scores (as stored:
        after ``score_precision``), i.e. whether the tie order can change a
        value.  Rows are stored in ranking order, so a tie is two neighbours of
        one query with equal scores: one vectorised pass, no sort."""
        v = self._values
        if len(v) < 2:
            return False
        same = v[1:] == v[:-1]  # pair (i, i + 1)
        starts = self._offsets[1:-1]
        starts = starts[(starts > 0) & (starts < len(v))]
        same[starts - 1] = False  # a pair across two queries
        return bool(same.any())

    def ranking(self, qid: str) -> list[str]:
        """The query's document ids in ranking order."""
        i = self._index(qid)
        if i is None:
            raise KeyError(qid)
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._decode_docs(self._doc_ids[a:b])

    # -- other formats (ranklens._io, imported when called) -----------------------
    @classmethod
    def from_pandas(
        cls,
        df: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a pandas DataFrame with query id, doc id and score columns, in any
        row order (ranking: score descending, then doc id descending; the frame's
        order within a query is the input order ``ties="input"`` keeps).

        Ids may be str, integer (written in decimal) or categorical columns.  A
        null, a NaN score or a document listed twice for a query raises
        :class:`~ranklens.errors.RanklensInputError` naming the row or the query and
        document.
        """
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _frames

        arrays = _frames.from_pandas("run", df, names, check_score_precision(score_precision))
        return cls._from_arrays(arrays, name=name)

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a pyarrow Table or RecordBatch (string, large_string, dictionary or
        integer id columns; chunked and sliced columns are read without copies)."""
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _arrow

        arrays = _arrow.from_arrow("run", table, names, check_score_precision(score_precision))
        return cls._from_arrays(arrays, name=name)

    @classmethod
    def from_polars(
        cls,
        df: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a polars DataFrame (or LazyFrame, collected); needs pyarrow."""
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _frames

        arrays = _frames.from_polars("run", df, names, check_score_precision(score_precision))
        return cls._from_arrays(arrays, name=name)

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From a Parquet file (only the three columns are read); needs pyarrow."""
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _frames

        arrays = _frames.from_parquet("run", path, names, check_score_precision(score_precision))
        return cls._from_arrays(arrays, name=name)

    @classmethod
    def from_json(
        cls, path_or_dict: Any, *, name: str | None = None, score_precision: str = "f64"
    ) -> Run:
        """From ranx's JSON layout ``{query_id: {doc_id: score}}`` (or ranked lists
        ``{query_id: [doc_id, ...]}``): a file path (``.gz`` ok) or the loaded dict."""
        from ranklens._io import _json

        return cls.from_dict(
            _json.load_json(path_or_dict), name=name, score_precision=score_precision
        )

    @classmethod
    def from_jsonl(
        cls,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From JSON Lines, one ``{"query_id", "doc_id", "score"}`` object per line
        (other keys ignored; blank lines skipped; ``.gz`` ok)."""
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _json

        arrays = _json.from_jsonl("run", path, names, check_score_precision(score_precision))
        return cls._from_arrays(arrays, name=name)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Any],
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        score_col: str = "score",
        name: str | None = None,
        score_precision: str = "f64",
    ) -> Run:
        """From an iterable of records, e.g. ``ir_datasets``'
        ``dataset.scoreddocs_iter()``: objects with attributes ``query_id``,
        ``doc_id``, ``score`` (named tuples; other fields ignored), mappings with
        those keys, or plain ``(query_id, doc_id, score)`` tuples."""
        names = column_names(query_col, doc_col, score_col)
        from ranklens._io import _records

        arrays = _records.from_records(
            "run", records, names, check_score_precision(score_precision)
        )
        return cls._from_arrays(arrays, name=name)
