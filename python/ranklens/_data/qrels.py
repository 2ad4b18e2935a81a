"""`Qrels`: relevance judgments, plain or grouped, from every format ranklens reads."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import MAX_LINE_BYTES, check_mapping, check_max_line, check_path
from ranklens._data._side import ARRAYS, PathLike, Side, column_names
from ranklens._io._common import DOC, QUERY
from ranklens.errors import RanklensInputError

__all__ = ["Qrels"]


class Qrels(Side):
    """Relevance judgments: per query, document id -> label (int or float).

    Labels are kept exactly as given (float labels are not truncated).  A
    label >= the relevance level is relevant; a negative label means "in the
    pool but not judged" (trec_eval): never relevant, not judged non-relevant.

    Ids are ``str``, ``int`` or numpy integers; an integer is its decimal text,
    so ``1`` and ``"1"`` are one id (a mapping holding both gives it twice: an
    error).  ``bool``, ``float``, ``None`` and a ``str`` with a lone surrogate
    raise :class:`~ranklens.errors.RanklensInputError` naming the place.

    >>> qrels = Qrels({"q1": {"d1": 2, "d7": 0}})
    """

    _kind = "qrels"
    # Subtopic qrels only (see from_subtopics): per row, offsets into the
    # subtopic indices (local to the row's query) and their labels; and each
    # query's subtopic names by index.
    _subtopics: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    _subtopic_names: list[list[str]] | None = None

    def __init__(self, data: Mapping[str, Mapping[str, float]] | None = None) -> None:
        if data is not None:
            check_mapping(data, "qrels", "{doc id: label}")
        arrays = _ranklens.encode_mapping({} if data is None else data, "qrels")
        super().__init__(arrays)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float]]) -> Qrels:
        """From ``{query_id: {doc_id: label}}``."""
        return cls(data)

    @classmethod
    def _from_arrays(cls, arrays: tuple[np.ndarray, ...]) -> Qrels:
        obj = cls.__new__(cls)
        Side.__init__(obj, arrays)
        return obj

    def _with_labels(self, labels: np.ndarray) -> Qrels:
        """The same judgments with ``labels`` (float64, one per judgment, in storage
        order) in place of the labels; subtopic judgments are not carried over."""
        arrays = list(self.arrays)
        arrays[ARRAYS.index("values")] = labels
        return Qrels._from_arrays(tuple(arrays))

    @classmethod
    def from_trec(
        cls,
        path: str | os.PathLike[str],
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        subtopics: bool = False,
    ) -> Qrels:
        """Read a TREC qrels file (``qid iter docno label``; ``.gz`` ok; ``-`` = stdin).

        Exactly four fields per line; blank lines and ``#`` comment lines are
        skipped; float labels are kept.  A malformed line, an id that is not
        UTF-8 or a line longer than ``max_line_bytes`` (1 MiB by default) raises
        :class:`~ranklens.errors.ParseError` naming the file and line.

        ``subtopics=True``: the TREC diversity format (``qid subtopic docno
        label``, as NIST's ndeval reads it): the second field is the subtopic,
        and the qrels are those of :meth:`from_subtopics`.
        """
        if subtopics:
            from ranklens._data._subtopics import read_subtopic_trec

            return cls.from_subtopics(read_subtopic_trec(check_path(path), max_line_bytes))
        arrays, _ = _ranklens.read_trec(
            check_path(path), "qrels", False, check_max_line(max_line_bytes)
        )
        return cls._from_arrays(arrays)

    def to_trec(self, path: str | os.PathLike[str], *, subtopics: bool | None = None) -> None:
        """Write a TREC qrels file (``.gz`` compressed; ``-`` = stdout).

        Qrels with subtopic judgments (:meth:`from_subtopics`) are written in the
        diversity format (``qid subtopic docno label``, one line per judgment),
        which ``from_trec(path, subtopics=True)`` reads back; ``subtopics=False``
        writes the one-label view instead (``qid 0 docno label``, a document's
        largest subtopic label), ``subtopics=True`` requires subtopic judgments.
        """
        path = check_path(path)
        if subtopics is None:
            subtopics = self._subtopics is not None
        elif not isinstance(subtopics, bool):
            raise RanklensInputError(f"subtopics must be True, False or None, got {subtopics!r}")
        if not subtopics:
            _ranklens.write_trec(path, "qrels", self.arrays)
            return
        if self._subtopics is None or self._subtopic_names is None:
            raise RanklensInputError(
                "these qrels have no subtopic judgments (see Qrels.from_subtopics)"
            )
        rows, ids = _subtopic_lines(self.arrays, self._subtopics, self._subtopic_names)
        _ranklens.write_trec(path, "qrels", rows, subtopics=ids)

    @classmethod
    def from_groups(
        cls,
        gt: Mapping[str, Sequence[Any]] | Sequence[Sequence[Any]],
        query_ids: Sequence[str] | None = None,
        labels: Mapping[str, Sequence[float]] | Sequence[Sequence[float]] | None = None,
    ) -> Qrels:
        """Grouped ground truth (RAG): per query, a list of groups of doc ids.

        ``gt`` is a mapping query id -> groups, or a sequence with one entry per
        query (ids from ``query_ids``, default ``"0"``, ``"1"``, ...).  A group is
        a list of interchangeable documents: one unit of needed information.  A
        bare id instead of a list is a group of one, so a plain list of ids means
        one group per id.  ``labels``: one label per group (default 1), same shape.

        Semantics: a group is satisfied at the rank of its first retrieved member,
        which carries the group's label; later members of a satisfied group count
        as non-relevant.  recall@k = satisfied groups / groups; precision@k =
        groups satisfied in the top k / k; mrr = 1 / rank of the first satisfied
        group; AP and nDCG are computed on the ranking relabelled that way, with
        R = number of groups and the ideal ranking holding one member per group.
        The judged pool (bpref's N, fallout) holds each group's label once and a
        judged non-relevant 0 for each of its other members.  With singleton
        groups every metric equals the ordinary one.  :meth:`groups` gives the
        groups back.

        >>> qrels = Qrels.from_groups({"q1": [["test-1", "test-2"], ["test-3"]]})
        """
        if isinstance(gt, Mapping):
            if query_ids is not None:
                raise RanklensInputError("query_ids is only for a sequence ground truth")
            keys = list(gt.keys())
            rows = [gt[k] for k in keys]
        else:
            rows = list(gt)
            keys = list(range(len(rows))) if query_ids is None else list(query_ids)
            if len(keys) != len(rows):
                raise RanklensInputError(f"{len(keys)} query ids for {len(rows)} ground-truth rows")
            if len(set(map(str, keys))) != len(keys):
                raise RanklensInputError("query_ids holds duplicates")
        if labels is None:
            label_rows: list[Any] = [None] * len(rows)
        elif isinstance(labels, Mapping):
            label_rows = [labels.get(k) for k in keys]
        else:
            label_rows = list(labels)
            if len(label_rows) != len(rows):
                raise RanklensInputError(
                    f"{len(label_rows)} label rows for {len(rows)} ground-truth rows"
                )
        try:
            return cls._from_arrays(_ranklens.encode_groups(list(zip(keys, rows, label_rows))))
        except RanklensInputError as e:
            # A document listed twice: say which groups, when they differ (looked
            # up only on this error path, so valid input pays nothing).
            raise _group_error(keys, rows) or e from None

    @classmethod
    def from_subtopics(cls, rows: Iterable[Any]) -> Qrels:
        """Subtopic (diversity) qrels from ``(query_id, subtopic, doc_id, label)`` rows.

        A row may also be an object with attributes ``query_id``, ``subtopic_id``,
        ``doc_id`` and ``relevance`` (ir_datasets' diversity qrels).  A subtopic is
        one intent of the query, or one piece of information an answer needs; a
        document may be judged for several.  The diversity metrics
        (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``, ``P_IA@20``, ``AP_IA``,
        ``StRecall@20``, ...) read these judgments; every other metric sees one
        label per document, the largest of its subtopic labels (so a document is
        relevant when it is relevant to any subtopic, as in ndeval).  A
        (query, subtopic, document) listed twice raises
        :class:`~ranklens.errors.RanklensInputError`.

        >>> qrels = Qrels.from_subtopics([("q1", "1", "d1", 1), ("q1", "2", "d1", 1)])
        """
        from ranklens._data._subtopics import encode_subtopics

        nested = encode_subtopics(rows)
        obj = cls(
            {q: {d: max(subs.values()) for d, subs in docs.items()} for q, docs in nested.items()}
        )
        obj._subtopics, obj._subtopic_names = _subtopic_arrays(obj, nested)
        return obj

    @property
    def has_subtopics(self) -> bool:
        """Whether these qrels hold subtopic judgments (see ``from_subtopics``)."""
        return self._subtopics is not None

    def subtopics(self) -> dict[str, dict[str, dict[str, float]]]:
        """Subtopic judgments back: ``{query_id: {doc_id: {subtopic: label}}}``.

        Grouped qrels give each member its group (``"0"``, ``"1"``, ... in group
        order) with the group's label; plain qrels have no subtopics (empty dict).
        """
        if self._subtopics is None:
            if not self.grouped:
                return {}
            return {
                q: {d: {str(g): label} for g, (label, docs) in enumerate(gs) for d in docs}
                for q, gs in self.groups().items()
            }
        return {q: self._query_subtopics(i) for i, q in enumerate(self.query_ids)}

    def _query_subtopics(self, i: int) -> dict[str, dict[str, float]]:
        """Query ``i``'s subtopic judgments: ``{doc_id: {subtopic: label}}``."""
        if self._subtopics is None:
            return {}
        sub_off, sub_ids, sub_labels = self._subtopics
        names = (self._subtopic_names or [])[i]
        vocab = self.doc_vocabulary
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        # The query's slices as lists once (not a numpy slice a document).
        bounds = sub_off[a : b + 1].tolist()
        first = bounds[0]
        ids = sub_ids[first : bounds[-1]].tolist()
        labels = sub_labels[first : bounds[-1]].tolist()
        out: dict[str, dict[str, float]] = {}
        for n, d in enumerate(self._doc_ids[a:b].tolist()):
            judged = range(bounds[n] - first, bounds[n + 1] - first)
            out[vocab[d]] = {names[ids[t]]: labels[t] for t in judged}
        return out

    @property
    def labels(self) -> np.ndarray:
        return self._values

    @property
    def grouped(self) -> bool:
        """Whether these qrels hold grouped ground truth (see ``from_groups``)."""
        return len(self._extra) > 0

    def groups(self) -> dict[str, list[tuple[float, list[str]]]]:
        """Grouped ground truth back: ``{query_id: [(label, [doc ids]), ...]}``.

        Groups in their given order, members in storage order.  Plain qrels give
        one group per document (``[(label, [doc])]``), which evaluates the same.
        """
        vocab = self.doc_vocabulary
        offsets = self._offsets.tolist()
        docs = self._doc_ids.tolist()
        labels = self._values.tolist()
        extra = self._extra.tolist() if self.grouped else None
        out: dict[str, list[tuple[float, list[str]]]] = {}
        for i, q in enumerate(self.query_ids):
            a, b = offsets[i], offsets[i + 1]
            if extra is None:
                out[q] = [(labels[j], [vocab[docs[j]]]) for j in range(a, b)]
                continue
            by_group: dict[int, tuple[float, list[str]]] = {}
            for j in range(a, b):
                by_group.setdefault(extra[j], (labels[j], []))[1].append(vocab[docs[j]])
            out[q] = [by_group[g] for g in sorted(by_group)]
        return out

    # -- other formats (ranklens._io, imported when called) -----------------------
    @classmethod
    def from_pandas(
        cls,
        df: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
        subtopic_col: str | None = None,
    ) -> Qrels:
        """From a pandas DataFrame with query id, doc id and label columns.

        Ids may be str, integer (written in decimal) or categorical columns;
        labels any numeric column (float labels kept).  A null, a non-numeric
        label or a document listed twice for a query raises
        :class:`~ranklens.errors.RanklensInputError` naming the row or the query and
        document.  ``subtopic_col``: subtopic qrels (see :meth:`from_subtopics`),
        one row per (query, subtopic, document).
        """
        if subtopic_col is not None:
            cols = [query_col, subtopic_col, doc_col, label_col]
            return cls.from_subtopics(
                zip(*(df[c].tolist() for c in cols))  # python scalars, not numpy's
            )
        from ranklens._io import _frames

        return cls._from_arrays(
            _frames.from_pandas("qrels", df, column_names(query_col, doc_col, label_col))
        )

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
        subtopic_col: str | None = None,
    ) -> Qrels:
        """From a pyarrow Table or RecordBatch (string, large_string, dictionary or
        integer id columns; chunked and sliced columns are read without copies).
        ``subtopic_col``: subtopic qrels, as for :meth:`from_pandas`."""
        if subtopic_col is not None:
            cols = [query_col, subtopic_col, doc_col, label_col]
            return cls.from_subtopics(zip(*(table.column(c).to_pylist() for c in cols)))
        from ranklens._io import _arrow

        return cls._from_arrays(
            _arrow.from_arrow("qrels", table, column_names(query_col, doc_col, label_col))
        )

    @classmethod
    def from_polars(
        cls,
        df: Any,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
        subtopic_col: str | None = None,
    ) -> Qrels:
        """From a polars DataFrame (or LazyFrame, collected); needs pyarrow.
        ``subtopic_col``: subtopic qrels, as for :meth:`from_pandas`."""
        if subtopic_col is not None:
            if hasattr(df, "collect"):
                df = df.collect()
            cols = [query_col, subtopic_col, doc_col, label_col]
            return cls.from_subtopics(zip(*(df[c].to_list() for c in cols)))
        from ranklens._io import _frames

        return cls._from_arrays(
            _frames.from_polars("qrels", df, column_names(query_col, doc_col, label_col))
        )

    @classmethod
    def from_parquet(
        cls,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
        subtopic_col: str | None = None,
    ) -> Qrels:
        """From a Parquet file (only the three columns are read); needs pyarrow.
        ``subtopic_col``: subtopic qrels (four columns read), as for :meth:`from_pandas`."""
        if subtopic_col is not None:
            import pyarrow.parquet as pq

            cols = [query_col, subtopic_col, doc_col, label_col]
            return cls.from_arrow(
                pq.read_table(path, columns=cols),
                query_col=query_col,
                doc_col=doc_col,
                label_col=label_col,
                subtopic_col=subtopic_col,
            )
        from ranklens._io import _frames

        return cls._from_arrays(
            _frames.from_parquet("qrels", path, column_names(query_col, doc_col, label_col))
        )

    @classmethod
    def from_json(cls, path_or_dict: Any) -> Qrels:
        """From ranx's JSON layout ``{query_id: {doc_id: label}}``: a file path
        (``.gz`` ok) or the already loaded dict."""
        from ranklens._io import _json

        return cls.from_dict(_json.load_json(path_or_dict))

    @classmethod
    def from_jsonl(
        cls,
        path: PathLike,
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From JSON Lines, one ``{"query_id", "doc_id", "relevance"}`` object per
        line (other keys ignored; blank lines skipped; ``.gz`` ok)."""
        from ranklens._io import _json

        return cls._from_arrays(
            _json.from_jsonl("qrels", path, column_names(query_col, doc_col, label_col))
        )

    @classmethod
    def from_records(
        cls,
        records: Iterable[Any],
        *,
        query_col: str = QUERY,
        doc_col: str = DOC,
        label_col: str = "relevance",
    ) -> Qrels:
        """From an iterable of records, e.g. ``ir_datasets``' ``dataset.qrels_iter()``:
        objects with attributes ``query_id``, ``doc_id``, ``relevance`` (named
        tuples; other fields ignored), mappings with those keys, or plain
        ``(query_id, doc_id, relevance)`` tuples.  ir_datasets is not imported."""
        from ranklens._io import _records

        return cls._from_arrays(
            _records.from_records("qrels", records, column_names(query_col, doc_col, label_col))
        )


def _subtopic_arrays(
    qrels: Qrels, nested: dict[str, dict[str, dict[str, float]]]
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], list[list[str]]]:
    """The subtopic judgments aligned with the encoded rows of ``qrels`` (built
    from ``nested``): offsets per row, subtopic indices, labels; and the names."""
    vocab = qrels.doc_vocabulary
    offsets = qrels.offsets.tolist()
    docs = qrels.doc_ids.tolist()
    sub_off = [0]
    ids: list[int] = []
    labels: list[float] = []
    names: list[list[str]] = []
    for i, q in enumerate(qrels.query_ids):
        judged = nested[q]
        index: dict[str, int] = {}
        for j in range(offsets[i], offsets[i + 1]):
            for subtopic, label in judged[vocab[docs[j]]].items():
                ids.append(index.setdefault(subtopic, len(index)))
                labels.append(label)
            sub_off.append(len(ids))
        names.append(list(index))
    arrays = (
        np.array(sub_off, dtype=np.int64),
        np.array(ids, dtype=np.uint32),
        np.array(labels, dtype=np.float64),
    )
    for a in arrays:
        a.setflags(write=False)
    return arrays, names


def _subtopic_lines(
    arrays: tuple[np.ndarray, ...],
    subtopics: tuple[np.ndarray, np.ndarray, np.ndarray],
    names: list[list[str]],
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The lines of a diversity qrels file: the encoded arrays with one row per
    (document, subtopic) judgment, and the subtopic names as a vocabulary
    (bytes, offsets) with one index per row."""
    sub_off, local, sub_labels = subtopics
    q_bytes, q_off, offsets, d_bytes, d_off, doc_ids, _, extra = arrays
    line_off = sub_off[offsets]  # each query's first line
    rows = (
        q_bytes,
        q_off,
        line_off,
        d_bytes,
        d_off,
        np.repeat(doc_ids, np.diff(sub_off)),
        sub_labels,
        extra,
    )
    index: dict[str, int] = {}
    ids = np.empty(len(local), dtype=np.uint32)
    starts = line_off.tolist()
    for i, query_names in enumerate(names):
        table = np.array([index.setdefault(n, len(index)) for n in query_names], np.uint32)
        a, b = starts[i], starts[i + 1]
        if b > a:
            ids[a:b] = table[local[a:b]]
    try:
        encoded = [n.encode("utf-8") for n in index]
    except UnicodeEncodeError as e:
        raise RanklensInputError(f"a subtopic id cannot be written as UTF-8: {e}") from None
    text = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    vocab_off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=vocab_off[1:])
    return rows, (text, vocab_off, ids)


def _group_error(keys: list[Any], rows: list[Any]) -> RanklensInputError | None:
    """The first document that is in two groups of one query, as an error."""
    for key, groups in zip(keys, rows):
        if groups is None or isinstance(groups, (str, bytes)):
            continue
        seen: dict[str, int] = {}
        for g, group in enumerate(groups):
            members = [group] if isinstance(group, (str, int)) else group
            for doc in members:
                d = str(doc)
                if d in seen and seen[d] != g:
                    return RanklensInputError(
                        f"query {str(key)!r}: document {d!r} is in groups {seen[d]} and {g}: "
                        "a document belongs to at most one group (a group is one unit of "
                        "needed information)"
                    )
                seen.setdefault(d, g)
    return None
