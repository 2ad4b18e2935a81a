"""`Qrels` and `Run`: judgments and rankings, encoded once.

Each side is held as flat numpy arrays built by the Rust core:

* ``query_ids`` – the query ids, interned to integers in the order of their
  UTF-8 bytes;
* ``offsets`` (int64, ``len(query_ids) + 1``) – rows of query ``i`` are
  ``offsets[i]:offsets[i + 1]``;
* ``doc_ids`` (uint32) – for each row, the index of its document id string in
  an arena (``doc_vocabulary``: one entry per input row, in input order; in
  row order when the input was not grouped by query, so that scoring reads it
  sequentially).
  Document ids are deliberately not deduplicated across queries: they only ever
  meet within one query, and interning millions of distinct ids cost more than
  the rest of loading (measurements in ``src/core/encode.rs``).  Ties compare
  the ids' bytes, so no hash ever decides an order or a match;
* ``values`` (float64) – the scores (``Run``) or labels (``Qrels``);
* ``extra`` (uint32) – for a run, each row's position in the input order of its
  query (``ties="input"`` needs it); for grouped qrels, each row's group; else
  empty.

A run's rows are stored in ranking order: score descending, then document id
descending (trec_eval's order), so evaluation never sorts.  Scores are kept as
64-bit doubles (trec_eval 10.0); ``score_precision="f32"`` rounds them to 32-bit
floats first, so that scores equal after rounding tie as in pytrec_eval
(trec_eval 9.0.8).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Union

import numpy as np

from ranklens import _ranklens
from ranklens._io import QrelsIO, RunIO
from ranklens.errors import RanklensInputError

__all__ = ["Qrels", "Run"]

_ARRAYS = (
    "q_bytes",
    "q_offsets",
    "offsets",
    "d_bytes",
    "d_offsets",
    "doc_ids",
    "values",
    "extra",
)

QrelsLike = Union["Qrels", Mapping[str, Mapping[str, float]]]
RunLike = Union["Run", Mapping[str, Mapping[str, float]], Mapping[str, Sequence[str]]]


class _Side:
    """Shared storage and read-only views of one encoded side."""

    _kind: str = ""

    def __init__(self, arrays: tuple[np.ndarray, ...]) -> None:
        if len(arrays) != len(_ARRAYS):
            raise TypeError(f"internal: expected {len(_ARRAYS)} encoded arrays")
        for name, arr in zip(_ARRAYS, arrays):
            arr.setflags(write=False)
            setattr(self, "_" + name, arr)
        self._query_ids: list[str] | None = None
        self._query_index: dict[str, int] | None = None

    # -- the encoded arrays -------------------------------------------------
    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The encoded arrays handed to the Rust core, in its argument order."""
        return tuple(getattr(self, "_" + n) for n in _ARRAYS)

    @property
    def offsets(self) -> np.ndarray:
        return self._offsets

    @property
    def doc_ids(self) -> np.ndarray:
        return self._doc_ids

    @property
    def values(self) -> np.ndarray:
        return self._values

    @property
    def query_ids(self) -> list[str]:
        """Query ids in storage order (sorted by UTF-8 bytes)."""
        if self._query_ids is None:
            self._query_ids = _ranklens.decode_vocab(self._q_bytes, self._q_offsets)
        return self._query_ids

    @property
    def doc_vocabulary(self) -> list[str]:
        """The document id arena, one string per input row (``doc_ids`` index it)."""
        return _ranklens.decode_vocab(self._d_bytes, self._d_offsets)

    def _index(self, qid: str) -> int | None:
        if self._query_index is None:
            self._query_index = {q: i for i, q in enumerate(self.query_ids)}
        return self._query_index.get(str(qid))

    # -- mapping-like access ----------------------------------------------------
    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __contains__(self, qid: object) -> bool:
        return isinstance(qid, (str, int)) and self._index(str(qid)) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.query_ids)

    @property
    def num_rows(self) -> int:
        return int(self._offsets[-1])

    def __getitem__(self, qid: str) -> dict[str, float]:
        i = self._index(qid)
        if i is None:
            raise KeyError(qid)
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        docs = self._decode_docs(self._doc_ids[a:b])
        return dict(zip(docs, self._values[a:b].tolist()))

    def _decode_docs(self, ids: np.ndarray) -> list[str]:
        starts = self._d_offsets[ids]
        ends = self._d_offsets[ids + 1]
        raw = self._d_bytes
        return [bytes(raw[s:e]).decode("utf-8", "replace") for s, e in zip(starts, ends)]

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: value}}``; a run's inner dicts are in ranking order."""
        vocab = self.doc_vocabulary
        values = self._values.tolist()
        doc_ids = self._doc_ids.tolist()
        offsets = self._offsets.tolist()
        return {
            q: {vocab[doc_ids[j]]: values[j] for j in range(offsets[i], offsets[i + 1])}
            for i, q in enumerate(self.query_ids)
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} queries, {self.num_rows} rows)"


class Qrels(QrelsIO, _Side):
    """Relevance judgments: per query, document id -> label (int or float).

    Labels are kept exactly as given (float labels are not truncated).  A
    label >= the relevance level is relevant; a negative label means "in the
    pool but not judged" (trec_eval): never relevant, not judged non-relevant.

    >>> qrels = Qrels({"q1": {"d1": 2, "d7": 0}})
    """

    _kind = "qrels"

    def __init__(self, data: Mapping[str, Mapping[str, float]] | None = None) -> None:
        arrays = _ranklens.encode_mapping({} if data is None else data, "qrels")
        super().__init__(arrays)

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, float]]) -> Qrels:
        """From ``{query_id: {doc_id: label}}``."""
        return cls(data)

    @classmethod
    def _from_arrays(cls, arrays: tuple[np.ndarray, ...]) -> Qrels:
        obj = cls.__new__(cls)
        _Side.__init__(obj, arrays)
        return obj

    @classmethod
    def from_trec(cls, path: str | os.PathLike[str]) -> Qrels:
        """Read a TREC qrels file (``qid iter docno label``; ``.gz`` ok; ``-`` = stdin).

        Exactly four fields per line; blank lines and ``#`` comment lines are
        skipped; float labels are kept.  A malformed line raises
        :class:`~ranklens.errors.ParseError` naming the file and line.
        """
        arrays, _ = _ranklens.read_trec(os.fspath(path), "qrels", False)
        return cls._from_arrays(arrays)

    def to_trec(self, path: str | os.PathLike[str]) -> None:
        """Write a TREC qrels file (``.gz`` compressed; ``-`` = stdout)."""
        _ranklens.write_trec(os.fspath(path), "qrels", self.arrays)

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
        return cls._from_arrays(_ranklens.encode_groups(list(zip(keys, rows, label_rows))))

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


class Run(RunIO, _Side):
    """Rankings: per query, document id -> score, or a ranked list of ids.

    ``Run({"q1": {"d1": 12.5, "d3": 9.1}})`` ranks by score descending, ties
    broken by document id descending (trec_eval).  ``Run({"q1": ["d3", "d1"]})``
    takes the list order as the ranking.

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
        arrays = _ranklens.encode_mapping(
            {} if data is None else data, "run", _round_f32(score_precision)
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
        _Side.__init__(obj, arrays)
        obj.name = name
        return obj

    @classmethod
    def from_trec(cls, path: str | os.PathLike[str], *, score_precision: str = "f64") -> Run:
        """Read a TREC run file (``qid iter docno rank score tag``; ``.gz`` ok; ``-`` = stdin).

        At least six fields per line (more are ignored); the iter and rank fields
        are ignored, as trec_eval does; ``name`` is the tag of the first line.  A
        malformed line or a document listed twice for a query raises
        :class:`~ranklens.errors.ParseError` naming the file and line.
        """
        arrays, tag = _ranklens.read_trec(os.fspath(path), "run", _round_f32(score_precision))
        return cls._from_arrays(arrays, name=tag)

    def to_trec(self, path: str | os.PathLike[str], tag: str | None = None) -> None:
        """Write a TREC run file in ranking order (``.gz`` compressed; ``-`` = stdout)."""
        _ranklens.write_trec(os.fspath(path), "run", self.arrays, tag or self.name or "ranklens")

    @property
    def scores(self) -> np.ndarray:
        return self._values

    def ranking(self, qid: str) -> list[str]:
        """The query's document ids in ranking order."""
        i = self._index(qid)
        if i is None:
            raise KeyError(qid)
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        return self._decode_docs(self._doc_ids[a:b])


def _round_f32(score_precision: str) -> bool:
    if score_precision not in ("f64", "f32"):
        raise RanklensInputError(f"score_precision must be 'f64' or 'f32', got {score_precision!r}")
    return score_precision == "f32"


def as_qrels(obj: Any) -> Qrels:
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Run):
        raise RanklensInputError("got a Run where Qrels were expected")
    if isinstance(obj, Mapping):
        return Qrels(obj)
    raise RanklensInputError(
        f"qrels must be a ranklens.Qrels or a mapping query id -> {{doc id: label}}, "
        f"got {type(obj).__name__}"
    )


def as_run(obj: Any) -> Run:
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Qrels):
        raise RanklensInputError("got Qrels where a Run was expected")
    if isinstance(obj, Mapping):
        return Run(obj)
    raise RanklensInputError(
        f"run must be a ranklens.Run or a mapping query id -> {{doc id: score}} or "
        f"[doc ids], got {type(obj).__name__}"
    )
