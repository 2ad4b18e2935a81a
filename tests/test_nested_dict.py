"""The pytrec_eval drop-in's result builder (``_ranklens.nested_dict``) against a
plain-Python reference, ``{row: dict(zip(columns, values))}``.

The builder copies each row's dict from the previous row's and sets the values that
changed; ``like`` (the run dict) is copied as the outer dict when its keys are the
rows in order (checked through ``src/bindings/layout/``'s dict walk).  The
result must be a plain dict of plain dicts equal to the reference in keys, key order
and value bits, independent of ``like`` and of every other row, and must behave as
any dict afterwards (mutation, deletion, growth, ``json``, ``pickle``, ``copy``,
comparisons), with every reference count where it was.
"""

from __future__ import annotations

import collections
import copy
import gc
import json
import pickle
import sys
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklens import _ranklens


def reference(rows: list[Any], columns: list[Any], values: np.ndarray) -> dict[Any, Any]:
    return {r: dict(zip(columns, row)) for r, row in zip(rows, values.tolist())}


def same(got: dict[Any, Any], want: dict[Any, Any]) -> None:
    assert type(got) is dict
    assert list(got) == list(want)
    for (k, row), (k2, row2) in zip(got.items(), want.items()):
        assert k is k2
        assert type(row) is dict
        assert list(row) == list(row2)
        assert all(type(v) is float for v in row.values())
        assert [np.float64(v).tobytes() for v in row.values()] == [
            np.float64(v).tobytes() for v in row2.values()
        ]


FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def tables(draw: Any) -> tuple[list[str], list[str], np.ndarray, Any]:
    rows = draw(st.lists(st.text(max_size=4), max_size=30, unique=True))
    ncols = draw(st.integers(0, 12))
    columns = draw(st.lists(st.text(max_size=3), min_size=ncols, max_size=ncols, unique=True))
    values = draw(
        st.lists(
            st.lists(FLOATS, min_size=ncols, max_size=ncols),
            min_size=len(rows),
            max_size=len(rows),
        )
    )
    arr = np.array(values, dtype=np.float64).reshape(len(rows), ncols)
    kind = draw(st.sampled_from(["none", "same", "defaultdict", "shuffled", "other", "holes"]))
    like: Any = None
    if kind == "same":
        like = {r: {"x": 1.0} for r in rows}
    elif kind == "defaultdict":
        like = collections.defaultdict(dict, {r: {} for r in rows})
    elif kind == "shuffled":
        like = {r: {} for r in draw(st.permutations(rows))}
    elif kind == "other":
        like = {r + "!": {} for r in rows}
    elif kind == "holes":  # deleted entries: the copy is compacted
        like = {r: {} for r in ["gone1", *rows, "gone2"]}
        del like["gone1"], like["gone2"]
    return rows, columns, arr, like


@settings(max_examples=300, deadline=None)
@given(tables())
def test_equals_the_reference(table: tuple[list[str], list[str], np.ndarray, Any]) -> None:
    rows, columns, values, like = table
    before = copy.deepcopy(like)
    got = _ranklens.nested_dict(rows, columns, values, like)
    same(got, reference(rows, columns, values))
    assert like == before  # `like` itself untouched
    if like:
        assert all(got[r] is not like.get(r) for r in rows)


def test_repeated_and_non_str_keys() -> None:
    # Rows or columns that are not exact str, or repeat: insertion, as a dict does.
    class S(str):
        pass

    values = np.arange(12, dtype=np.float64).reshape(3, 4)
    for rows in (["a", "b", "a"], [1, "b", 2.5], [S("a"), "b", "c"]):
        for columns in (["x", "y", "x", "z"], [1, "y", S("z"), None], ["w", "x", "y", "z"]):
            like = {r: 0 for r in rows}
            want: dict[Any, Any] = {}
            for r, row in zip(rows, values.tolist()):
                want[r] = {}
                for c, v in zip(columns, row):
                    want[r][c] = v
            got = _ranklens.nested_dict(rows, columns, values, like)
            assert got == want
            assert list(got) == list(want)
            assert [list(d) for d in got.values()] == [list(d) for d in want.values()]


def test_behaves_as_a_dict_afterwards() -> None:
    rows = [f"q{i}" for i in range(200)]
    columns = [f"m_{i}" for i in range(35)]
    values = np.random.default_rng(3).random((200, 35))
    run = {r: {"d": 1.0} for r in rows}
    got = _ranklens.nested_dict(rows, columns, values, run)
    want = reference(rows, columns, values)
    assert got == want and want == got
    assert json.loads(json.dumps(got)) == want
    assert list(json.loads(json.dumps(got))["q7"]) == columns
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(got, protocol=proto))
        assert back == want and list(back) == rows
    assert copy.deepcopy(got) == want and copy.copy(got) == want
    # Rows are independent of each other and of the run.
    got["q0"]["m_0"] = -1.0
    assert got["q1"]["m_0"] == want["q1"]["m_0"]
    assert run["q0"] == {"d": 1.0}
    del got["q3"]["m_5"]
    assert "m_5" not in got["q3"] and "m_5" in got["q4"]
    assert got["q3"].get("m_6") == want["q3"]["m_6"]
    for k in range(100):  # growth: the table is rebuilt
        got["q3"][f"new{k}"] = float(k)
    assert got["q3"]["m_34"] == want["q3"]["m_34"] and len(got["q3"]) == 134
    got["q4"].clear()
    assert got["q4"] == {} and got["q5"] == want["q5"]
    got["q5"].update({"m_1": 2.0})
    assert got["q5"]["m_1"] == 2.0 and got["q6"]["m_1"] == want["q6"]["m_1"]
    del got["q9"]
    got["q9"] = {}
    assert list(got)[-1] == "q9" and len(got) == 200
    assert got.pop("q10") == want["q10"]
    assert sorted(got["q11"].items()) == sorted(want["q11"].items())
    assert {k: v for k, v in got["q12"].items()} == want["q12"]
    assert got["q12"].keys() == want["q12"].keys() and got.keys() != want.keys()


def test_reference_counts_return() -> None:
    rows = [f"q{i}" for i in range(50)]
    columns = [f"m_{i}" for i in range(9)]
    run = {r: {} for r in rows}
    inner = list(run.values())
    values = np.random.default_rng(1).random((50, 9))
    gc.collect()
    counts = [sys.getrefcount(x) for x in [*rows, *columns, *inner]]

    def held(result: dict[str, dict[str, float]]) -> tuple[list[int], list[int]]:
        # Each float's references beyond the dict slots holding it (equal values
        # of a column may be one float), and each row dict's.
        slots: dict[int, list[float]] = {}
        for d in result.values():
            for v in d.values():
                slots.setdefault(id(v), []).append(v)
        extra = sorted({sys.getrefcount(vs[0]) - 2 * len(vs) for vs in slots.values()})
        return extra, [sys.getrefcount(d) for d in result.values()]

    want = held(reference(rows, columns, values))
    shared = np.repeat(values[:1], 50, axis=0)  # one value per column
    for like in (None, run):
        got = _ranklens.nested_dict(rows, columns, values, like)
        assert held(got) == want  # held by their dicts only, as the reference's
        got = _ranklens.nested_dict(rows, columns, shared, like)
        assert held(got) == want
        assert got == reference(rows, columns, shared)
        del got
        gc.collect()
        assert [sys.getrefcount(x) for x in [*rows, *columns, *inner]] == counts
