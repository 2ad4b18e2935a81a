"""The door x hazard matrix: every public door of ranklens against every class of
hostile input, each cell asserting the documented outcome.

A door is one way data gets in (a function, a constructor, a reader, a drop-in,
a command line); a hazard is one class of bad input (a NaN, a gain past the
largest float, an unordered container as a ranking, ...).  A cell is the
outcome the README's "Guarantees" promise for that pair: a named exception
whose message names the place (argument, file and line, row and column, query
and document), or a documented value.  Pairs that cannot meet (a file hazard at
an in-memory door) are not cells.  A cell whose fix belongs to the Rust core and
is not done yet is ``xfail(strict=True)`` with what is missing: it flips to a
failure, to be unmarked, the day the core is fixed.

A new door is one entry of ``DOORS``; a new hazard, one key in the doors'
tables (and in ``HAZARDS``).

One hazard has its column elsewhere: Ctrl-C.  Its cell needs a child process
and a call long enough to be interrupted, so the long doors' cells are the
Ctrl-C section of ``tests/test_hardening.py`` (one parametrized case a door:
the arrays, ``evaluate``, ``compare``, ``gate``, the Scorer's batches, the
mapping readers and the dict path, stdin).  README's "Guarantees" names the
doors that look for it and the few phases that do not.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ranklens
import ranklens.compat.autorag
from ranklens import ParseError, Qrels, RanklensInputError, Run, UnknownMetricError

HUGE = "99999999999999999999"  # past 2**64
BOM = b"\xef\xbb\xbf"
QRELS_TXT = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN_TXT = b"q1 Q0 d2 1 0.9 t\nq1 Q0 d1 2 0.5 t\nq2 Q0 d3 1 0.4 t\n"
PREFS_TXT = b"q1 u1 a d1 2\nq1 u1 a d2 0\n"
JG_TXT = b"q1 u1 d1 1\nq1 u2 d2 1\n"
SUBTOPICS_TXT = b"q1 1 d1 1\nq1 2 d2 1\n"
QRELS = {"q1": {"d1": 1, "d2": 0}}
RUN = {"q1": {"d1": 0.5, "d2": 0.9}}
# A gain past the largest float: 2**1024 - 1 for label 1024 (ndcg_burges); the
# ideal DCG overflows while the retrieved DCG (label 1 first) is finite.
BIG_QRELS = {"q1": {"a": 1024, "b": 1}}
BIG_RUN = {"q1": {"b": 2.0, "a": 1.0}}
BIG_LABELS = np.array([[1.0, 1024.0]])
BIG_SCORES = np.array([[2.0, 1.0]])
OVERFLOW = "past the largest float"
# Linear gains (gain = label): nDCG@2 whose ideal DCG (1.7e308 + 1.7e308 / log2 3)
# passes the largest float while the retrieved DCG (label 1 first) does not.
LIN_LABELS = np.array([[1.0, 1.7e308, 1.7e308]])
LIN_SCORES = np.array([[3.0, 2.0, 1.0]])
# A zero-stride view whose cells would not fit in memory: a row of 2**60 float32
# cells (its working memory per thread overflows the address space), and 2**60
# rows (their values overflow it).  Both counts overflow before any allocation,
# so the cells run in process; a shape that fits the address space but not the
# memory is test_hardening's (a child process).
WIDE = (1, 2**60)
TALL = (2**60, 1)
UNORDERED = "has no order"

HAZARDS = [
    "non_finite",
    "past_float_gain",
    "unordered",
    "wrong_dtype",
    "int_past_2_53",
    "ragged",
    "not_a_sequence",
    "duplicate_ids",
    "int_and_str_id",
    "duplicate_columns",
    "bom",
    "not_utf8",
    "special_file",
    "malformed_config",
    "huge_k",
    "none_metric",
    "huge_shape",
]


@dataclass(frozen=True)
class Raises:
    """The call raises ``exc`` (or a subclass; or one of a tuple) with a message
    matching ``match``."""

    exc: type[BaseException] | tuple[type[BaseException], ...]
    match: str


@dataclass(frozen=True)
class Equals:
    """The call returns this value (compared with ``==``, floats to 1e-12)."""

    value: Any


@dataclass(frozen=True)
class Exits:
    """A command line returns ``code``, prints one line on stderr matching ``match``
    (no traceback); ``code`` 0: stdout equal to that of the same call on clean input."""

    code: int
    match: str = ""
    one_line: bool = True


@dataclass(frozen=True)
class Missing:
    """The outcome once the Rust core is fixed (``want``); until then the cell is a
    strict xfail naming what is missing."""

    want: Raises
    why: str


@dataclass(frozen=True)
class Ctx:
    tmp: Path
    capsys: Any

    def file(self, name: str, data: bytes) -> str:
        path = self.tmp / name
        path.write_bytes(data)
        return str(path)


Cell = tuple[Callable[[Ctx], Any], Any]

# --------------------------------------------------------------------------------------------
# Shared cells


def _raises_input(match: str) -> Raises:
    return Raises(RanklensInputError, match)


def _huge_metric(call: Callable[[Any], Any]) -> Cell:
    return (lambda c: call(f"ndcg@{HUGE}"), Raises(UnknownMetricError, rf"ndcg@{HUGE}"))


def _none_metric(call: Callable[[Any], Any]) -> Cell:
    return (lambda c: call(None), Raises(UnknownMetricError, "metric.*NoneType"))


_HUGE = Raises(
    (MemoryError, RanklensInputError),
    r"\d+ rows x \d+ .*not fit in memory|has shape \(\d+.*not fit in memory"
    r"|Unable to allocate .* with shape \(\d+",
)


def _zero_stride(dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(np.ones(1, dtype), shape)


def _files(c: Ctx, qrels: bytes = QRELS_TXT, run: bytes = RUN_TXT) -> tuple[str, str]:
    return c.file("qrels.txt", qrels), c.file("run.txt", run)


def _cli(c: Ctx, argv: list[str]) -> tuple[int, str, str]:
    from ranklens.cli import main

    code = main(argv)
    out, err = c.capsys.readouterr()
    return code, out, err


LATIN1 = b"q1 0 d\xe9 1\n"
LATIN1_RUN = b"q1 Q0 d\xe9 1 0.9 t\n"
NOT_UTF8 = 'qrels.txt:1: the document id "d\\xe9" is not valid UTF-8'

# --------------------------------------------------------------------------------------------
# The doors


def _evaluate() -> dict[str, Cell]:
    ev = ranklens.evaluate
    return {
        "non_finite": (
            lambda c: ev(QRELS, {"q1": {"d1": math.nan}}, "map"),
            _raises_input(r'"q1".*"d1"|d1.*q1'),
        ),
        "past_float_gain": (
            lambda c: ev(BIG_QRELS, BIG_RUN, "ndcg_burges@1"),
            _raises_input(OVERFLOW),
        ),
        "unordered": (lambda c: ev(QRELS, {"q1": {"d1", "d2"}}, "map"), _raises_input("set")),
        "wrong_dtype": (lambda c: ev(QRELS, {"q1": {"d1": "high"}}, "map"), _raises_input("d1")),
        "not_a_sequence": (
            lambda c: ev((q for q in QRELS), RUN, "map"),
            _raises_input("qrels must be"),
        ),
        "duplicate_ids": (
            lambda c: ev(QRELS, {"q1": ["d1", "d1"]}, "map"),
            _raises_input('"d1".*more than once'),
        ),
        "int_and_str_id": (
            lambda c: ev({1: {"d1": 1}, "1": {"d1": 1}}, RUN, "map"),
            _raises_input(r'query "1" is given twice'),
        ),
        "huge_k": _huge_metric(lambda m: ev(QRELS, RUN, m)),
        "none_metric": _none_metric(lambda m: ev(QRELS, RUN, m)),
    }


def _evaluate_reference() -> dict[str, Cell]:
    def ev(q: Any, r: Any, m: Any) -> Any:
        return ranklens.evaluate(q, r, m, backend="python")

    return {
        "non_finite": (
            lambda c: ev(QRELS, {"q1": {"d1": math.nan}}, "map"),
            _raises_input("d1"),
        ),
        "past_float_gain": (
            lambda c: ev(BIG_QRELS, BIG_RUN, "ndcg_burges@1"),
            _raises_input(rf'query "q1", metric ndcg_burges@1: .*{OVERFLOW}'),
        ),
        "int_and_str_id": (
            lambda c: ev({1: {"d1": 1}, "1": {"d1": 1}}, RUN, "map"),
            _raises_input(r'query "1" is given twice'),
        ),
        "huge_k": _huge_metric(lambda m: ev(QRELS, RUN, m)),
        "none_metric": _none_metric(lambda m: ev(QRELS, RUN, m)),
    }


def _reference_linear_overflow() -> dict[str, Cell]:
    # nDCG@2 whose ideal DCG (1.7e308 + 1.7e308 / log2 3) passes the largest float
    # while the retrieved DCG (label 1 first) does not.
    q = {"q1": {"a": 1.7e308, "b": 1.7e308, "c": 1}}
    r = {"q1": {"c": 3.0, "a": 2.0, "b": 1.0}}
    return {
        "past_float_gain": (
            lambda c: ranklens.evaluate(q, r, "ndcg@2", backend="python"),
            _raises_input(rf'query "q1", metric ndcg@2: .*{OVERFLOW}'),
        ),
    }


def _evaluate_rust_linear_overflow() -> dict[str, Cell]:
    q = {"q1": {"a": 1.7e308, "b": 1.7e308, "c": 1}}
    r = {"q1": {"c": 3.0, "a": 2.0, "b": 1.0}}
    return {
        "past_float_gain": (
            lambda c: ranklens.evaluate(q, r, "ndcg@2"),
            _raises_input(OVERFLOW),
        ),
    }


def _evaluate_files() -> dict[str, Cell]:
    ef = ranklens.evaluate_files

    def mean(c: Ctx, qrels: bytes = QRELS_TXT, run: bytes = RUN_TXT) -> float:
        return ef(*_files(c, qrels, run), "map")["map"]

    plain = 0.75  # q1: d1 at rank 2 (AP 0.5), q2: d3 at rank 1 (AP 1)
    return {
        "non_finite": (
            lambda c: mean(c, run=b"q1 Q0 d1 1 nan t\n"),
            Raises(ParseError, r"run.txt:1"),
        ),
        "duplicate_ids": (
            lambda c: mean(c, run=b"q1 Q0 d1 1 0.9 t\nq1 Q0 d1 2 0.5 t\n"),
            Raises(RanklensInputError, r"d1"),
        ),
        "bom": (lambda c: mean(c, qrels=BOM + QRELS_TXT, run=BOM + RUN_TXT), Equals(plain)),
        "not_utf8": (lambda c: mean(c, qrels=LATIN1), Raises(ParseError, r"qrels.txt:1.*UTF-8")),
        "special_file": (
            lambda c: ef("/dev/zero", _files(c)[1], "map"),
            Raises(ParseError, r"/dev/zero:1"),
        ),
        "huge_k": _huge_metric(lambda m: ef("q", "r", m)),
        "none_metric": _none_metric(lambda m: ef("q", "r", m)),
    }


def _trec_reader(kind: str) -> dict[str, Cell]:
    good = QRELS_TXT if kind == "qrels" else RUN_TXT
    cls = Qrels if kind == "qrels" else Run
    bad_value = b"q1 0 d1 nan\n" if kind == "qrels" else b"q1 Q0 d1 1 nan t\n"
    latin = LATIN1 if kind == "qrels" else LATIN1_RUN

    def read(c: Ctx, data: bytes) -> Any:
        return cls.from_trec(c.file("in.txt", data)).to_dict()

    cells: dict[str, Cell] = {
        "non_finite": (lambda c: read(c, bad_value), Raises(ParseError, r"in.txt:1")),
        "bom": (lambda c: read(c, BOM + good) == read(c, good), Equals(True)),
        "not_utf8": (lambda c: read(c, latin), Raises(ParseError, r"in.txt:1.*UTF-8")),
        "special_file": (
            lambda c: cls.from_trec("/dev/zero"),
            Raises(ParseError, r"/dev/zero:1"),
        ),
    }
    if kind == "run":
        cells["duplicate_ids"] = (
            lambda c: read(c, RUN_TXT + b"q1 Q0 d1 3 0.1 t\n"),
            Raises(RanklensInputError, r"d1"),
        )
    else:
        cells["duplicate_ids"] = (
            lambda c: read(c, QRELS_TXT + b"q1 0 d1 0\n"),
            Raises(RanklensInputError, r"d1"),
        )
    return cells


def _mapping_constructor(cls: type) -> dict[str, Cell]:
    value = "label" if cls is Qrels else "score"
    return {
        "non_finite": (lambda c: cls({"q1": {"d1": math.nan}}), _raises_input("d1")),
        "wrong_dtype": (lambda c: cls({"q1": {"d1": "x"}}), _raises_input(f"d1.*{value}|{value}")),
        "not_a_sequence": (lambda c: cls(x for x in "q"), _raises_input("mapping")),
        "duplicate_ids": (
            lambda c: cls({"q1": {1: 1, "1": 1}}),
            _raises_input(r'"1".*more than once'),
        ),
        "int_and_str_id": (
            lambda c: cls({1: {"d1": 1}, "1": {"d1": 1}}),
            _raises_input(r'query "1" is given twice'),
        ),
    }


def _from_records(cls: type) -> dict[str, Cell]:
    return {
        "non_finite": (lambda c: cls.from_records([("q1", "d1", math.nan)]), _raises_input("d1")),
        "wrong_dtype": (lambda c: cls.from_records([("q1", "d1", "x")]), _raises_input("x")),
        "not_a_sequence": (
            lambda c: cls.from_records(r for r in [("q1", "d1", 1)]).to_dict(),
            Equals({"q1": {"d1": 1.0}}),
        ),
        "duplicate_ids": (
            lambda c: cls.from_records([("q1", "d1", 1), ("q1", "d1", 0)]),
            _raises_input("d1"),
        ),
        "int_and_str_id": (
            lambda c: cls.from_records([(1, "d1", 1), ("1", "d2", 1)]),
            _raises_input(r'column "query_id", row 1: query "1" is given twice \(the second '),
        ),
    }


def _from_pandas(cls: type) -> dict[str, Cell]:
    pd = pytest.importorskip("pandas")
    value = "relevance" if cls is Qrels else "score"

    def frame(q: list[Any], v: list[Any], docs: list[str] | None = None) -> Any:
        docs = docs or [f"d{i}" for i in range(len(q))]
        return pd.DataFrame({"query_id": q, "doc_id": docs, value: v})

    return {
        "non_finite": (lambda c: cls.from_pandas(frame(["q1"], [math.nan])), _raises_input(value)),
        "wrong_dtype": (lambda c: cls.from_pandas(frame(["q1"], ["x"])), _raises_input(value)),
        "duplicate_ids": (
            lambda c: cls.from_pandas(frame(["q1", "q1"], [1, 0], ["d1", "d1"])),
            _raises_input("d1"),
        ),
        "int_and_str_id": (
            lambda c: cls.from_pandas(frame([1, "1"], [1, 1])),
            _raises_input(r'column "query_id", row 1: query "1" is given twice \(the second '),
        ),
        "duplicate_columns": (
            lambda c: cls.from_pandas(
                pd.concat([frame(["q1"], [1]), frame(["q1"], [1])[["doc_id"]]], axis=1)
            ),
            _raises_input('2 columns named "doc_id"'),
        ),
    }


def _from_subtopics() -> dict[str, Cell]:
    fs = Qrels.from_subtopics

    def read(c: Ctx, data: bytes) -> Any:
        return Qrels.from_trec(c.file("sub.txt", data), subtopics=True).subtopics()

    return {
        "non_finite": (lambda c: fs([("q1", "s", "d1", math.nan)]), _raises_input("finite")),
        "wrong_dtype": (lambda c: fs([("q1", "s", 1.5, 1)]), _raises_input("doc_id")),
        "duplicate_ids": (
            lambda c: fs([("q1", "s", "d1", 1), ("q1", "s", "d1", 0)]),
            _raises_input("judged twice"),
        ),
        "int_and_str_id": (
            lambda c: fs([(1, "s", "d1", 1), ("1", "s", "d2", 1)]),
            _raises_input(r'query "1" is given twice \(the second time as str'),
        ),
        "bom": (lambda c: read(c, BOM + SUBTOPICS_TXT) == read(c, SUBTOPICS_TXT), Equals(True)),
        "not_utf8": (
            lambda c: read(c, SUBTOPICS_TXT + b"q1 1 d\xe9 1\n"),
            Raises(ParseError, r"sub.txt:3: not UTF-8"),
        ),
        "special_file": (
            lambda c: Qrels.from_trec("/dev/zero", subtopics=True),
            Raises(ParseError, r"/dev/zero:1"),
        ),
    }


def _from_groups() -> dict[str, Cell]:
    fg = Qrels.from_groups
    return {
        "duplicate_ids": (lambda c: fg([[["d1"], ["d1"]]]), _raises_input("d1")),
        "non_finite": (lambda c: fg([["d1"]], labels=[[math.nan]]), _raises_input("finite|NaN")),
    }


def _prefs_reader() -> dict[str, Cell]:
    def read(c: Ctx, data: bytes) -> Any:
        p = ranklens.Prefs.from_trec(c.file("prefs.txt", data))
        return {q: p[q] for q in p.query_ids}

    return {
        "non_finite": (
            lambda c: read(c, PREFS_TXT + b"q1 u1 a d3 nan\n"),
            Raises(ParseError, r"prefs.txt:3"),
        ),
        "bom": (lambda c: read(c, BOM + PREFS_TXT) == read(c, PREFS_TXT), Equals(True)),
        "not_utf8": (
            lambda c: read(c, PREFS_TXT + b"q1 u1 a d\xe9 1\n"),
            Raises(ParseError, r"prefs.txt:3: not UTF-8"),
        ),
        "special_file": (
            lambda c: ranklens.Prefs.from_trec("/dev/zero"),
            Raises(ParseError, r"/dev/zero:1"),
        ),
    }


def _jg_reader() -> dict[str, Cell]:
    def read(c: Ctx, data: bytes) -> Any:
        return {k: q.to_dict() for k, q in ranklens.read_qrels_jg(c.file("jg.txt", data)).items()}

    return {
        "non_finite": (
            lambda c: read(c, JG_TXT + b"q1 u1 d3 inf\n"),
            Raises(ParseError, r"jg.txt:3"),
        ),
        "bom": (lambda c: read(c, BOM + JG_TXT) == read(c, JG_TXT), Equals(True)),
        "not_utf8": (
            lambda c: read(c, JG_TXT + b"q1 u1 d\xe9 1\n"),
            Raises(ParseError, r"jg.txt:3: not UTF-8"),
        ),
        "special_file": (
            lambda c: ranklens.read_qrels_jg("/dev/zero"),
            Raises(ParseError, r"/dev/zero:1"),
        ),
    }


def _dense() -> dict[str, Cell]:
    ed = ranklens.evaluate_dense
    s, lab = np.array([[0.9, 0.5]]), np.array([[0, 1]])

    def values(*a: Any, **kw: Any) -> Any:
        return ed(*a, **kw).values

    return {
        "non_finite": (
            lambda c: ed(np.array([[0.9, math.nan]]), lab, "map"),
            _raises_input(r"scores\[0, 1\] is NaN"),
        ),
        "past_float_gain": (
            lambda c: values(BIG_SCORES, BIG_LABELS, "ndcg_burges@1"),
            _raises_input(OVERFLOW),
        ),
        "wrong_dtype": (
            lambda c: ed(s, lab, "map", mask=np.array([[math.nan, 0.0]])),
            _raises_input("mask must be a bool array.*float64"),
        ),
        "int_past_2_53": (
            lambda c: ed(np.array([[2**53 + 1, 2**53]], dtype=np.int64), lab, "P@1"),
            _raises_input(r"scores: the integer score 9007199254740993 at row 0, column 0"),
        ),
        "ragged": (
            lambda c: ed([[0.9, 0.5], [0.1]], [[0, 1], [1]], "map"),
            _raises_input("scores"),
        ),
        "not_a_sequence": (
            lambda c: ed((r for r in s), lab, "map"),
            _raises_input("scores must be 2-D"),
        ),
        "huge_k": _huge_metric(lambda m: ed(s, lab, m)),
        "none_metric": _none_metric(lambda m: ed(s, lab, m)),
        "huge_shape": (
            lambda c: ed(_zero_stride(np.float32, WIDE), _zero_stride(np.int8, WIDE), "P@1"),
            _HUGE,
        ),
    }


def _flat() -> dict[str, Cell]:
    ef = ranklens.evaluate_flat
    p, t, i = np.array([0.9, 0.5]), np.array([0, 1]), np.array([0, 0])
    return {
        "non_finite": (
            lambda c: ef(np.array([0.9, math.nan]), t, i, "map"),
            _raises_input(r"\[1\] is NaN"),
        ),
        "past_float_gain": (
            lambda c: ef(BIG_SCORES[0], BIG_LABELS[0], i, "ndcg_burges@1").values,
            _raises_input(OVERFLOW),
        ),
        "wrong_dtype": (
            lambda c: ef(p, t, np.array([0.0, 0.5]), "map"),
            _raises_input("indexes must hold integers"),
        ),
        "int_past_2_53": (
            lambda c: ef(np.array([2**53 + 1, 2**53], dtype=np.int64), t, i, "P@1"),
            _raises_input(r"preds: the integer score 9007199254740993 at row 0, column 0"),
        ),
        "ragged": (
            lambda c: ef(p, t, np.array([0, 0, 0]), "map"),
            _raises_input("as many cells"),
        ),
        "huge_k": _huge_metric(lambda m: ef(p, t, i, m)),
        "none_metric": _none_metric(lambda m: ef(p, t, i, m)),
        "huge_shape": (
            lambda c: ef(
                _zero_stride(np.float32, WIDE[1:]),
                _zero_stride(np.int8, WIDE[1:]),
                _zero_stride(np.int8, WIDE[1:]),
                "P@1",
            ),
            _HUGE,
        ),
    }


def _topk() -> dict[str, Cell]:
    et = ranklens.evaluate_topk
    ids, rel = np.array([[3, 1]]), [[1]]
    return {
        "past_float_gain": (
            lambda c: et(np.array([[0, 1]]), BIG_LABELS, "ndcg_burges@1").values,
            _raises_input(OVERFLOW),
        ),
        "wrong_dtype": (
            lambda c: et([[3, True]], rel, "map"),
            _raises_input(r"ids: row 0, column 1: ids are integers"),
        ),
        "ragged": (
            lambda c: et([[3, 1], [2]], [[1], [2]], "map"),
            _raises_input(r"ids: row 1 has 1 ids"),
        ),
        "unordered": (lambda c: et([{3, 1}], rel, "map"), _raises_input(f"row 0.*{UNORDERED}")),
        "duplicate_ids": (lambda c: et(np.array([[1, 1]]), rel, "map"), _raises_input("row 0")),
        "not_a_sequence": (
            lambda c: et((r for r in ids), rel, "map"),
            _raises_input("ids must be 2-D"),
        ),
        "huge_k": _huge_metric(lambda m: et(ids, rel, m)),
        "none_metric": _none_metric(lambda m: et(ids, rel, m)),
        "huge_shape": (
            lambda c: et(_zero_stride(np.int32, TALL), _zero_stride(np.float32, TALL), "P@1"),
            _HUGE,
        ),
    }


def _arrays_linear_overflow() -> dict[str, Callable[[], dict[str, Cell]]]:
    # Linear gains on every array door, through the sparse path (ties="first",
    # few positive labels) and the tie-averaging one (sklearn's default).
    def door(call: Callable[[], Any], match: str = OVERFLOW) -> Callable[[], dict[str, Cell]]:
        return lambda: {"past_float_gain": (lambda c: call(), _raises_input(match))}

    s, lab = LIN_SCORES, LIN_LABELS
    wide_lab = np.pad(lab, ((0, 0), (5, 0)))  # five label-0 cells, tied at score 0
    wide_s = np.pad(s, ((0, 0), (5, 0)))
    return {
        "evaluate_dense[linear gains]": door(
            lambda: ranklens.evaluate_dense(s, lab, "ndcg@2"),
            f"row 0, metric ndcg@2: the value is {OVERFLOW}",
        ),
        "evaluate_dense[linear gains, ties]": door(
            lambda: ranklens.evaluate_dense(wide_s, wide_lab, "ndcg@2", ties="expected")
        ),
        "evaluate_flat[linear gains]": door(
            lambda: ranklens.evaluate_flat(s[0], lab[0], np.zeros(3, np.int64), "ndcg@2"),
            f"group 0, metric ndcg@2: the value is {OVERFLOW}",
        ),
        "evaluate_topk[linear gains]": door(
            lambda: ranklens.evaluate_topk(np.array([[0, 1, 2]]), lab, "ndcg@2"),
            f"row 0, metric ndcg@2: the value is {OVERFLOW}",
        ),
    }


def _topk_relevant() -> dict[str, Cell]:
    # the relevant side of evaluate_topk: ragged id rows are padded, a float id is not an id
    et = ranklens.evaluate_topk
    return {
        "wrong_dtype": (
            lambda c: et(np.array([[3, 1]]), [[1.0, 0.0]], "map"),
            _raises_input(r"relevant: row 0, column 0: .*relevant_is='labels'"),
        ),
        "ragged": (
            lambda c: et(np.array([[3, 1], [2, 5]]), [[1], [2, 5]], "P@2").values.tolist(),
            Equals([[0.5], [1.0]]),
        ),
    }


def _knn() -> dict[str, Cell]:
    kr = ranklens.knn_recall
    a = np.array([[1, 2]])
    d = (np.ones((1, 2)), np.ones((1, 2)))
    return {
        "non_finite": (lambda c: kr(a, a, 2, d, epsilon=math.nan), _raises_input("epsilon")),
        "wrong_dtype": (lambda c: kr(np.array([[1.5, 2.0]]), a, 2), _raises_input("approx")),
        "ragged": (lambda c: kr([[1, 2], [3]], a, 1), _raises_input("approx: row 1")),
        "huge_k": (lambda c: kr(a, a, 10**20), _raises_input("k must be at most")),
    }


def _score() -> dict[str, Cell]:
    sc = ranklens.score
    return {
        "non_finite": (lambda c: sc({"a": math.nan}, ["a"], "mrr"), _raises_input('"a"')),
        "past_float_gain": (
            lambda c: sc(["b", "a"], {"a": 1024, "b": 1}, "ndcg_burges@1"),
            _raises_input(OVERFLOW),
        ),
        "unordered": (lambda c: sc({"a", "b"}, ["a"], "mrr"), _raises_input(f"set.*{UNORDERED}")),
        "wrong_dtype": (lambda c: sc([1.5], ["a"], "mrr"), _raises_input("1.5")),
        "duplicate_ids": (lambda c: sc(["a", "a"], ["a"], "mrr"), _raises_input('"a"')),
        "int_and_str_id": (lambda c: sc([1, "1"], ["1"], "mrr"), _raises_input('"1"')),
        "huge_k": _huge_metric(lambda m: sc(["a"], ["a"], m)),
        "none_metric": _none_metric(lambda m: sc(["a"], ["a"], m)),
    }


def _score_batch() -> dict[str, Cell]:
    sb = ranklens.score_batch
    return {
        "non_finite": (lambda c: sb([{"a": math.nan}], [["a"]], "mrr"), _raises_input("row 0")),
        "past_float_gain": (
            lambda c: sb([["b", "a"]], [{"a": 1024, "b": 1}], "ndcg_burges@1"),
            _raises_input(OVERFLOW),
        ),
        "unordered": (
            lambda c: sb([["a"], frozenset("ab")], [["a"], ["a"]], "mrr"),
            _raises_input(rf"row 1.*frozenset.*{UNORDERED}"),
        ),
        "not_a_sequence": (
            lambda c: sb((r for r in [["a"]]), [["a"]], "mrr"),
            _raises_input("retrieved_lists must be a list"),
        ),
        "duplicate_ids": (lambda c: sb([["a", "a"]], [["a"]], "mrr"), _raises_input("row 0")),
        "huge_k": (lambda c: sb([["a"]], [["a"]], "P", k=10**20), _raises_input("k must be")),
        "none_metric": _none_metric(lambda m: sb([["a"]], [["a"]], m)),
    }


def _scorer() -> dict[str, Cell]:
    S = ranklens.Scorer
    return {
        "past_float_gain": (
            lambda c: S("ndcg_burges@1")(["b", "a"], {"a": 1024, "b": 1}),
            _raises_input(OVERFLOW),
        ),
        "unordered": (
            lambda c: S("mrr")({"a": 1, "b": 2}.keys(), ["a"]),
            _raises_input(f"dict_keys.*{UNORDERED}"),
        ),
        "ragged": (
            lambda c: S("mrr").batch([["a"], ["b"]], [["a"]]),
            _raises_input("row"),
        ),
        "huge_k": (lambda c: S("P", k=[10**20]), _raises_input("k must be at most")),
        "none_metric": _none_metric(lambda m: S(m)),
    }


def _score_labels() -> dict[str, Cell]:
    sl = ranklens.score_labels
    return {
        "non_finite": (lambda c: sl([math.nan, 1], "mrr"), _raises_input("finite|NaN|label")),
        "past_float_gain": (
            lambda c: sl([1, 1024], "ndcg_burges@1"),
            _raises_input(OVERFLOW),
        ),
        "unordered": (
            lambda c: sl({3, 1, 2}, "ndcg"),
            _raises_input(f"labels is a set.*{UNORDERED}"),
        ),
        "not_a_sequence": (lambda c: sl((x for x in [0, 1]), "mrr"), Equals({"mrr": 0.5})),
        "huge_k": _huge_metric(lambda m: sl([1], m)),
        "none_metric": _none_metric(lambda m: sl([1], m)),
    }


def _score_frame() -> dict[str, Cell]:
    pd = pytest.importorskip("pandas")

    def sf(df: Any, **kw: Any) -> Any:
        return ranklens.score_frame(df, metrics="mrr", semantics="trec", **kw)

    def frame(retrieved: Any) -> Any:
        return pd.DataFrame({"retrieved_ids": [retrieved], "retrieval_gt": [["a"]]})

    return {
        "unordered": (
            lambda c: sf(frame({"a", "b"})),
            _raises_input(f"row 0.*{UNORDERED}"),
        ),
        "duplicate_columns": (
            lambda c: sf(pd.concat([frame(["a"]), frame(["a"])[["retrieved_ids"]]], axis=1)),
            _raises_input("2 columns named 'retrieved_ids'"),
        ),
        "duplicate_ids": (lambda c: sf(frame(["a", "a"])), _raises_input('"a"')),
    }


def _sklearn() -> dict[str, Cell]:
    from ranklens.compat import sklearn as sk

    return {
        "non_finite": (
            lambda c: sk.ndcg_score([[1, 0]], [[math.nan, 0.2]]),
            _raises_input("y_score"),
        ),
        "wrong_dtype": (
            lambda c: sk.ndcg_score([["a", "b"]], [[0.5, 0.2]]),
            _raises_input("y_true"),
        ),
        "ragged": (lambda c: sk.ndcg_score([[1, 0], [1]], [[0.5, 0.2], [1]]), _raises_input("y_")),
        "not_a_sequence": (
            lambda c: sk.ndcg_score((r for r in [[1, 0]]), [[0.5, 0.2]]),
            _raises_input("y_true"),
        ),
        "huge_k": (
            lambda c: sk.ndcg_score([[1, 0]], [[0.5, 0.2]], k=10**20),
            Raises(UnknownMetricError, "ndcg@100000000000000000000"),
        ),
        # sklearn's gains are the labels; ties (the label-0 cells) are averaged
        "past_float_gain": (
            lambda c: sk.ndcg_score(
                np.pad(LIN_LABELS, ((0, 0), (5, 0))), np.pad(LIN_SCORES, ((0, 0), (5, 0))), k=2
            ),
            _raises_input(OVERFLOW),
        ),
        "huge_shape": (
            lambda c: sk.ndcg_score(_zero_stride(np.float32, WIDE), _zero_stride(np.float32, WIDE)),
            _HUGE,
        ),
    }


def _torchmetrics() -> dict[str, Cell]:
    from ranklens.compat import torchmetrics as tm

    p, t = np.array([0.3, 0.2]), np.array([1, 0])
    return {
        "non_finite": (
            lambda c: tm.retrieval_normalized_dcg(np.array([math.nan, 0.2]), t),
            _raises_input(r"\[0\] is NaN"),
        ),
        "wrong_dtype": (
            lambda c: tm.retrieval_normalized_dcg(np.array([1, 2]), t),
            _raises_input("`preds` must be a tensor of floats"),
        ),
        "ragged": (
            lambda c: tm.retrieval_normalized_dcg(p, np.array([1, 0, 1])),
            _raises_input("same shape"),
        ),
        "huge_k": (
            lambda c: tm.retrieval_normalized_dcg(p, t, top_k=10**20),
            _raises_input("`top_k` must be at most"),
        ),
        "past_float_gain": (
            lambda c: tm.retrieval_normalized_dcg(LIN_SCORES[0], LIN_LABELS[0], top_k=2),
            _raises_input(f"metric ndcg@2: the value is {OVERFLOW}"),
        ),
    }


def _pytrec_eval() -> dict[str, Cell]:
    from ranklens.compat import pytrec_eval as pe

    return {
        "non_finite": (
            lambda c: pe.RelevanceEvaluator(QRELS, {"map"}).evaluate({"q1": {"d1": math.nan}}),
            _raises_input("d1"),
        ),
        "huge_k": (
            lambda c: pe.RelevanceEvaluator(QRELS, {f"ndcg_cut.{HUGE}"}),
            Raises(UnknownMetricError, HUGE),
        ),
    }


def _ir_measures() -> dict[str, Cell]:
    ir = pytest.importorskip("ir_measures")
    from ranklens.compat import ir_measures as rl

    def run(docs: list[str]) -> Any:
        return (ir.ScoredDoc("q1", d, 1.0 - i / 10) for i, d in enumerate(docs))

    qrels = [ir.Qrel("q1", "d1", 1)]
    return {
        "duplicate_ids": (
            lambda c: rl.RanklensProvider().calc_aggregate([ir.AP], qrels, run(["d1", "d1"])),
            _raises_input("document 'd1' is listed twice"),
        ),
    }


def _autorag() -> dict[str, Cell]:
    from ranklens.compat import autorag

    rm = autorag.retrieval_metrics
    return {
        "unordered": (
            lambda c: rm([[["a"]]], [{"a", "b"}], ["mrr"]),
            _raises_input(f"row 0: a retrieved_ids row is a set, which {UNORDERED}"),
        ),
        # AutoRAG's own definitions count a duplicate (documented in compat.autorag)
        "duplicate_ids": (
            lambda c: rm([[["a"]]], [["a", "a"]], ["mrr", "precision"]),
            Equals({"mrr": [1.0], "precision": [0.5]}),
        ),
        "not_a_sequence": (
            lambda c: rm((g for g in [[["a"]]]), [["a"]], ["mrr"]),
            _raises_input("retrieval_gt"),
        ),
    }


def _cli_evaluate() -> dict[str, Cell]:
    def run(c: Ctx, qrels: bytes = QRELS_TXT, run: bytes = RUN_TXT, *extra: str) -> Any:
        return _cli(c, ["-m", "map", *extra, *_files(c, qrels, run)])

    return {
        "non_finite": (lambda c: run(c, run=b"q1 Q0 d1 1 nan t\n"), Exits(1, "run.txt:1")),
        "duplicate_ids": (
            lambda c: run(c, run=RUN_TXT + b"q1 Q0 d1 3 0.1 t\n"),
            Exits(1, "d1"),
        ),
        "bom": (lambda c: run(c, qrels=BOM + QRELS_TXT), Exits(0)),
        "not_utf8": (lambda c: run(c, qrels=LATIN1), Exits(1, NOT_UTF8)),
        "special_file": (
            lambda c: _cli(c, ["-m", "map", "/dev/zero", _files(c)[1]]),
            Exits(1, "/dev/zero:1"),
        ),
        "huge_k": (
            lambda c: _cli(c, ["-m", f"ndcg@{HUGE}", *_files(c)]),
            Exits(2, f"ndcg@{HUGE}"),
        ),
    }


def _cli_trec_eval() -> dict[str, Cell]:
    def run(c: Ctx, qrels: bytes = QRELS_TXT, run: bytes = RUN_TXT) -> Any:
        return _cli(c, ["trec_eval", "-m", "map", *_files(c, qrels, run)])

    return {
        "non_finite": (lambda c: run(c, run=b"q1 Q0 d1 1 nan t\n"), Exits(1, "run.txt:1")),
        "bom": (lambda c: run(c, qrels=BOM + QRELS_TXT), Exits(0)),
        "not_utf8": (lambda c: run(c, qrels=LATIN1), Exits(1, NOT_UTF8)),
        "special_file": (
            lambda c: _cli(
                c, ["trec_eval", "-R", "prefs", "-m", "prefs_simp", "/dev/zero", _files(c)[1]]
            ),
            Exits(1, "/dev/zero:1"),
        ),
        # trec_eval's usage text follows the message, as trec_eval prints it
        "huge_k": (
            lambda c: _cli(c, ["trec_eval", "-m", f"ndcg_cut.{HUGE}", *_files(c)]),
            Exits(2, HUGE, one_line=False),
        ),
    }


def _cli_gate() -> dict[str, Cell]:
    def gate(c: Ctx, *extra: str, qrels: bytes = QRELS_TXT) -> Any:
        q, r = _files(c, qrels)
        return _cli(c, ["gate", q, r, r, *extra])

    def with_config(c: Ctx, text: bytes) -> Any:
        cfg = c.file("pyproject.toml", text)
        return gate(c, "--config", cfg, "-m", "map")

    return {
        "bom": (lambda c: gate(c, "--max-drop", "map=0.1", qrels=BOM + QRELS_TXT), Exits(0)),
        "not_utf8": (
            lambda c: gate(c, "--max-drop", "map=0.1", qrels=LATIN1),
            Exits(3, NOT_UTF8),
        ),
        "special_file": (
            lambda c: gate(c, "--max-drop", "map=0.1", "--config", "/dev/zero"),
            Exits(2, "/dev/zero: not a regular file"),
        ),
        "malformed_config": (
            lambda c: with_config(c, b"[tool.ranklens.gate]\nmax_drop = [1]\n"),
            Exits(2, "max_drop"),
        ),
        "duplicate_ids": (
            lambda c: gate(c, "--max-drop", "map=0.01", "--max-drop", "AP=0.5"),
            Exits(2, "two budgets for map"),
        ),
        "huge_k": (lambda c: gate(c, "--max-drop", f"ndcg@{HUGE}=0.1"), Exits(2, HUGE)),
    }


def _cli_compare() -> dict[str, Cell]:
    def compare(c: Ctx, *extra: str, qrels: bytes = QRELS_TXT) -> Any:
        q, r = _files(c, qrels)
        r2 = c.file("run2.txt", RUN_TXT.replace(b" t\n", b" u\n"))
        return _cli(c, ["compare", q, r, r2, *extra])

    return {
        "bom": (lambda c: compare(c, "-m", "map", qrels=BOM + QRELS_TXT), Exits(0)),
        "not_utf8": (
            lambda c: compare(c, "-m", "map", qrels=LATIN1),
            Exits(1, NOT_UTF8),
        ),
        "huge_k": (lambda c: compare(c, "-m", f"ndcg@{HUGE}"), Exits(2, HUGE)),
    }


def _cli_report() -> dict[str, Cell]:
    def report(c: Ctx, *extra: str, qrels: bytes = QRELS_TXT) -> Any:
        q, r = _files(c, qrels)
        r2 = c.file("run2.txt", RUN_TXT.replace(b" t\n", b" u\n"))
        return _cli(c, ["report", q, r, r2, "-o", str(c.tmp / "report.html"), *extra])

    # (a clean run writes the file and one line on stderr: its byte order mark
    # cell is the readers' and the other commands')
    return {
        "not_utf8": (
            lambda c: report(c, "-m", "map", qrels=LATIN1),
            Exits(1, NOT_UTF8),
        ),
        "huge_k": (lambda c: report(c, "-m", f"ndcg@{HUGE}"), Exits(2, HUGE)),
    }


def _report_api() -> dict[str, Cell]:
    runs = {"a": RUN, "b": RUN}
    return {
        "huge_k": _huge_metric(lambda m: ranklens.report(QRELS, runs, m)),
        "none_metric": _none_metric(lambda m: ranklens.report(QRELS, runs, m)),
    }


def _gate_api() -> dict[str, Cell]:
    g = ranklens.gate
    return {
        "duplicate_ids": (
            lambda c: g(QRELS, RUN, RUN, {"map": 0.01, "AP": 0.5}),
            _raises_input("two budgets for map"),
        ),
        "huge_k": (
            lambda c: g(QRELS, RUN, RUN, {f"ndcg@{HUGE}": 0.1}),
            Raises(UnknownMetricError, HUGE),
        ),
    }


def _compare_api() -> dict[str, Cell]:
    cmp = ranklens.compare
    runs = {"a": RUN, "b": RUN}
    return {
        "huge_k": _huge_metric(lambda m: cmp(QRELS, runs, m)),
        "none_metric": _none_metric(lambda m: cmp(QRELS, runs, m)),
    }


def _dask() -> dict[str, Cell]:
    pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import dask
    import dask.dataframe as dd

    from ranklens import dask as rdask

    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "relevance": [1]})

    def ev(run: Any, metrics: Any = "map") -> Any:
        with dask.config.set({"scheduler": "synchronous", "dataframe.convert-string": False}):
            frame = dd.from_pandas(pd.DataFrame(run), npartitions=2)
            return rdask.evaluate(qrels, frame, metrics)

    good = {"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}
    return {
        "non_finite": (
            lambda c: ev({**good, "score": [1.0, math.nan]}),
            _raises_input("score"),
        ),
        "int_and_str_id": (
            lambda c: ev({**good, "query_id": [1, "1"]}),
            _raises_input(r'the run: query "1" is given twice'),
        ),
        "duplicate_ids": (lambda c: ev({**good, "doc_id": ["d1", "d1"]}), _raises_input("d1")),
        "huge_k": _huge_metric(lambda m: ev(good, m)),
        "none_metric": _none_metric(lambda m: ev(good, m)),
    }


DOORS: dict[str, Callable[[], dict[str, Cell]]] = {
    "evaluate": _evaluate,
    "evaluate[rust, linear gains]": _evaluate_rust_linear_overflow,
    "evaluate[python]": _evaluate_reference,
    "evaluate[python, linear gains]": _reference_linear_overflow,
    "evaluate_files": _evaluate_files,
    "Qrels.from_trec": lambda: _trec_reader("qrels"),
    "Run.from_trec": lambda: _trec_reader("run"),
    "Qrels(dict)": lambda: _mapping_constructor(Qrels),
    "Run(dict)": lambda: _mapping_constructor(Run),
    "Qrels.from_records": lambda: _from_records(Qrels),
    "Run.from_records": lambda: _from_records(Run),
    "Qrels.from_pandas": lambda: _from_pandas(Qrels),
    "Run.from_pandas": lambda: _from_pandas(Run),
    "Qrels.from_subtopics": _from_subtopics,
    "Qrels.from_groups": _from_groups,
    "Prefs.from_trec": _prefs_reader,
    "read_qrels_jg": _jg_reader,
    "evaluate_dense": _dense,
    "evaluate_flat": _flat,
    "evaluate_topk": _topk,
    "evaluate_topk[relevant]": _topk_relevant,
    **_arrays_linear_overflow(),
    "knn_recall": _knn,
    "score": _score,
    "score_batch": _score_batch,
    "Scorer": _scorer,
    "score_labels": _score_labels,
    "score_frame": _score_frame,
    "compat.sklearn": _sklearn,
    "compat.torchmetrics": _torchmetrics,
    "compat.pytrec_eval": _pytrec_eval,
    "compat.ir_measures": _ir_measures,
    "compat.autorag": _autorag,
    "cli": _cli_evaluate,
    "cli trec_eval": _cli_trec_eval,
    "cli gate": _cli_gate,
    "cli compare": _cli_compare,
    "cli report": _cli_report,
    "gate": _gate_api,
    "compare": _compare_api,
    "report": _report_api,
    "dask": _dask,
}

# Doors whose optional dependency is absent are left out whole, not skipped cell by cell.
_OPTIONAL = {
    "Qrels.from_pandas": "pandas",
    "Run.from_pandas": "pandas",
    "score_frame": "pandas",
    "compat.ir_measures": "ir_measures",
    "dask": "dask.dataframe",
}


def _available(door: str) -> bool:
    import importlib.util

    mod = _OPTIONAL.get(door)
    return mod is None or importlib.util.find_spec(mod.split(".")[0]) is not None


def _cells() -> list[Any]:
    out = []
    for door, table in DOORS.items():
        if not _available(door):
            continue
        for hazard, cell in table().items():
            assert hazard in HAZARDS, hazard
            marks = []
            if isinstance(cell[1], Missing):
                marks.append(pytest.mark.xfail(strict=True, reason=cell[1].why))
            out.append(pytest.param(door, hazard, cell, id=f"{door}-{hazard}", marks=marks))
    return out


CELLS = _cells()


@pytest.mark.parametrize("door, hazard, cell", CELLS)
def test_door_hazard(door: str, hazard: str, cell: Cell, tmp_path: Path, capsys: Any) -> None:
    action, expect = cell
    ctx = Ctx(tmp_path, capsys)
    if isinstance(expect, Missing):
        expect = expect.want
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(expect, Raises):
            with pytest.raises(expect.exc, match=expect.match):
                action(ctx)
        elif isinstance(expect, Equals):
            got = action(ctx)
            if isinstance(got, dict):
                got = {k: np.asarray(v).tolist() for k, v in got.items()}
            if isinstance(expect.value, float):
                assert got == pytest.approx(expect.value, rel=1e-12)
            else:
                assert got == expect.value
        else:
            code, out, err = action(ctx)
            assert "Traceback" not in err
            assert code == expect.code, err
            if expect.code:
                assert out == "" and (err.count("\n") == 1 or not expect.one_line), err
                assert expect.match in err, err
            else:
                assert err == "" and out


def test_matrix_covers_every_hazard() -> None:
    # Every hazard is met by at least one door (pandas holds the frame doors).
    seen = {p.values[1] for p in CELLS}
    assert seen == set(HAZARDS) - (set() if _available("score_frame") else {"duplicate_columns"})


# --------------------------------------------------------------------------------------------
# Every member of a hazard class a cell above stands for, at the door that reads it


@pytest.mark.parametrize(
    "ranking",
    [
        {"a", "b"},
        frozenset({"a", "b"}),
        {"a": 1, "b": 2}.keys(),
        {"x": "a", "y": "b"}.values(),
        {"a": 1, "b": 2}.items(),
        iter({"a", "b"}),
        iter({"a": 1, "b": 2}),
    ],
    ids=["set", "frozenset", "keys", "values", "items", "set-iter", "dict-iter"],
)
def test_every_unordered_container_is_refused(ranking: Any) -> None:
    with pytest.raises(RanklensInputError, match=rf"retrieved is a \w+, which {UNORDERED}"):
        ranklens.score(ranking, ["a"], "mrr")


@pytest.mark.parametrize(
    "call",
    [
        lambda: ranklens.score_batch({("a",)}, [["a"]], "mrr"),
        lambda: ranklens.score_batch([["a"]], {("a",)}, "mrr"),
        lambda: ranklens.Scorer("mrr").batch(frozenset({("a",)}), [["a"]]),
        lambda: ranklens.score_labels({1, 0}, "mrr"),
        lambda: ranklens.compat.autorag.retrieval_metrics([[["a"]]], {("a",)}, ["mrr"]),
    ],
    ids=["score_batch", "score_batch-relevant", "Scorer.batch", "score_labels", "autorag"],
)
def test_an_unordered_batch_is_refused(call: Callable[[], Any]) -> None:
    # the rows of a batch in a set would pair retrieved and relevant lists by hash order
    with pytest.raises(RanklensInputError, match=UNORDERED):
        call()


@pytest.mark.parametrize(
    "mask",
    [
        np.array([["x", ""]]),
        np.array([[object(), None]], dtype=object),
        np.array([[math.nan, 0.0]]),
        np.array([[1.0, 0.0]]),
        np.array([["2020-01-01", "NaT"]], dtype="datetime64[D]"),
        np.array([[1 + 0j, 0j]]),
        np.ma.masked_array([[True, True]], mask=[[False, True]]),
        np.array([[2, 0]]),
    ],
    ids=["str", "object", "nan", "float", "datetime", "complex", "masked", "int-2"],
)
def test_every_non_bool_mask_is_refused(mask: Any) -> None:
    with pytest.raises(RanklensInputError, match=r"mask (must|is a numpy masked array)"):
        ranklens.evaluate_dense(np.array([[0.9, 0.5]]), np.array([[0, 1]]), "P@2", mask=mask)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int64])
def test_bool_and_0_1_integer_masks_agree(dtype: Any) -> None:
    mask = np.array([[True, False]]).astype(dtype)
    res = ranklens.evaluate_dense(np.array([[0.5, 0.9]]), np.array([[1, 1]]), "P@1", mask=mask)
    assert res.values.tolist() == [[1.0]]


@pytest.mark.parametrize(
    "ids, cell",
    [
        ([[3, 1.0]], "row 0, column 1"),
        ([[3, 1], ["7", 1]], "row 1, column 0"),
        ([[3, np.bool_(True)]], "row 0, column 1"),
        (np.array([[3.0, 1.0]]), "dtype float64 .row 0, column 0"),
        (np.array([["3", "1"]]), "dtype <U1 .row 0, column 0"),
    ],
)
def test_every_non_integer_id_is_refused(ids: Any, cell: str) -> None:
    with pytest.raises(RanklensInputError, match=cell):
        ranklens.evaluate_topk(ids, [[1]], "map")


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_integer_scores_up_to_2_53_rank_exactly(dtype: Any) -> None:
    top = 2**53
    scores = np.array([[top - 1, top]], dtype=dtype)
    res = ranklens.evaluate_dense(scores, np.array([[0, 1]]), "P@1")
    assert res.values.tolist() == [[1.0]]
    with pytest.raises(RanklensInputError, match="at row 0, column 1 is past 2\\*\\*53"):
        ranklens.evaluate_dense(scores + np.array([[0, 1]], dtype=dtype), [[0, 1]], "P@1")


@pytest.mark.parametrize("epsilon", [math.nan, -1e-9, math.inf, "0.1", True])
def test_every_bad_distance_tolerance_is_refused(epsilon: Any) -> None:
    a, d = np.array([[1, 2]]), (np.ones((1, 2)), np.ones((1, 2)))
    with pytest.raises(RanklensInputError, match="epsilon must be"):
        ranklens.knn_recall(a, a, 2, d, epsilon=epsilon)


@pytest.mark.parametrize("backend", ["python", "rust"])
def test_g_where_labels_swallow_the_2(backend: str) -> None:
    # 2 + C - S is 0 when labels past 2**53 swallow the 2: log2 is -inf, the term -0.0
    q, r = {"q1": {"a": 1e300, "b": 1e300}}, {"q1": {"a": 2.0, "b": 1.0}}
    assert ranklens.evaluate(q, r, "g", backend=backend)["g"] == 0.0


@pytest.mark.parametrize("backend", ["python", "rust"])
def test_g_with_an_ideal_gain_sum_past_the_largest_float(backend: str) -> None:
    q, r = {"q1": {"a": 1.7e308, "b": 1.7e308, "c": 1}}, {"q1": {"c": 2.0}}
    with pytest.raises(RanklensInputError, match=f'query "q1", metric g: .*{OVERFLOW}'):
        ranklens.evaluate(q, r, "g", backend=backend)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Qrels.from_records([(np.int64(7), "a", 1), ("7", "b", 1)]),
        lambda: Run.from_records([("7", "a", 1.0), ("x", "b", 1.0), (7, "c", 1.0)]),
        lambda: Qrels.from_pandas(
            pytest.importorskip("pandas").DataFrame(
                {
                    "query_id": pytest.importorskip("pandas").Categorical([7, "7"]),
                    "doc_id": ["a", "b"],
                    "relevance": [1, 1],
                }
            )
        ),
    ],
    ids=["numpy-int", "str-first", "categorical"],
)
def test_one_query_in_two_spellings_across_rows_is_refused(make: Callable[[], Any]) -> None:
    with pytest.raises(RanklensInputError, match=r'row \d: query "7" is given twice'):
        make()


def test_one_spelling_per_query_and_doc_ids_across_queries_are_kept() -> None:
    # Integer query ids in every row are one query; a document spelled 1 in one
    # query and "1" in another is one id in two queries, as in a mapping.
    q = Qrels.from_records([(7, 1, 1), (7, "2", 1), ("8", "1", 1), (np.int64(7), 3, 0)])
    assert q.to_dict() == {"7": {"1": 1.0, "2": 1.0, "3": 0.0}, "8": {"1": 1.0}}
