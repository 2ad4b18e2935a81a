"""One id rule at every door (``bindings::ids``).

An id is a ``str`` (its text), an ``int`` or a numpy integer (its decimal
value); ``bool``, ``float``, ``bytes`` and other types are refused, ``None``
and NaN as a null id, a lone surrogate as text without UTF-8.  ``1`` and
``"1"`` are one id, but for the AutoRAG drop-in, which compares as Python does.
Each door below is asked the same question and must give the same outcome
and the same class of message.
"""

from __future__ import annotations

import enum
import math

import numpy as np
import pytest

import ranklens
from ranklens import Qrels, Run, _ranklens
from ranklens.compat import autorag
from ranklens.errors import RanklensInputError


class _Color(enum.IntEnum):
    RED = 7


class _Loud(int):
    """An int whose own ``__str__`` is not its value."""

    def __str__(self):
        return "not the value"


class _Text(str):
    def __str__(self):
        return "not the text"


def _decoded(data, offsets):
    return [bytes(data[a:b]).decode() for a, b in zip(offsets[:-1], offsets[1:])]


# Each door: the id as its text (a list of one), read from the id `x`.
def _run_doc(x):
    return Run({"q": {x: 1.0}}).doc_vocabulary


def _run_list(x):
    return Run({"q": [x]}).doc_vocabulary


def _run_query(x):
    return Run({x: {"d": 1.0}}).query_ids


def _qrels_doc(x):
    return Qrels({"q": {x: 1}}).doc_vocabulary


def _groups(x):
    return Qrels.from_groups({"q": [[x]]}).doc_vocabulary


def _records(x):
    return Run.from_records([("q", x, 1.0)]).doc_vocabulary


def _pack(x):
    return _decoded(*_ranklens.pack_ids([x], "doc_id"))


def _rows(x):
    arrays = _ranklens.encode_rows([[x]], "run")
    return _decoded(arrays[3], arrays[4])


DOORS = [_run_doc, _run_list, _run_query, _qrels_doc, _groups, _records, _pack, _rows]

ACCEPTED = [
    ("d1", "d1"),
    (7, "7"),
    (-3, "-3"),
    (2**70, str(2**70)),
    (np.int64(7), "7"),
    (np.uint64(2**64 - 1), str(2**64 - 1)),
    (np.int8(-5), "-5"),
    (_Color.RED, "7"),
    (_Loud(8), "8"),
    (_Loud(2**80), str(2**80)),
    (_Text("d1"), "d1"),
    ("\ufeffd1", "\ufeffd1"),
    ("é1", "é1"),
]

REFUSED = [
    (True, "must be a str or an int, got bool"),
    (np.bool_(True), "must be a str or an int, got bool"),
    (1.5, "must be a str or an int, got float"),
    (1.0, "must be a str or an int, got float"),
    (np.float64(2.0), "must be a str or an int, got float64"),
    (b"d1", "must be a str or an int, got bytes"),
    (object(), "must be a str or an int, got object"),
    (None, "is null"),
    (math.nan, "is null"),
    ("a\ud800", "lone surrogate"),
]


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("x", "text"), ACCEPTED)
def test_an_id_is_its_text(door, x, text):
    assert door(x) == [text]


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize(("x", "match"), REFUSED)
def test_every_door_refuses_alike(door, x, match):
    with pytest.raises(RanklensInputError, match=match):
        door(x)


def test_messages_name_the_place():
    with pytest.raises(RanklensInputError, match=r'^query "q": a document id must be a str'):
        Run({"q": {1.5: 1.0}})
    with pytest.raises(RanklensInputError, match=r"^a query id must be a str or an int, got"):
        Run({1.5: {"d": 1.0}})
    with pytest.raises(RanklensInputError, match=r'^column "doc_id", row 1: an id must be a str'):
        Run.from_records([("q", "d", 1.0), ("q", True, 2.0)])
    with pytest.raises(RanklensInputError, match=r'^column "doc_id", row 1: the id is null'):
        Run.from_records([("q", "d", 1.0), ("q", None, 2.0)])
    with pytest.raises(RanklensInputError, match=r"^row 1: a document id 'a\\ud800' is not"):
        _ranklens.encode_rows([["a"], ["a\ud800"]], "run")
    with pytest.raises(RanklensInputError, match=r"^row 0: an id must be a str or an int, got"):
        autorag.retrieval_recall([[["a"]]], [["a", 1.5]])


# -- AutoRAG: the same rule, Python's equality --


@pytest.mark.parametrize(("x", "text"), ACCEPTED)
def test_autorag_accepts_the_same_ids(x, text):
    assert autorag.retrieval_recall([[[x]]], [[x]]) == [1.0]


@pytest.mark.parametrize(("x", "match"), REFUSED)
def test_autorag_refuses_the_same_ids(x, match):
    with pytest.raises(RanklensInputError, match="row 0: .*" + match):
        autorag.retrieval_recall([[[x]]], [["a"]])
    with pytest.raises(RanklensInputError, match="row 0: .*" + match):
        autorag.retrieval_recall([[["a"]]], [[x]])


def test_autorag_tells_1_from_str_1_as_python_does():
    assert autorag.retrieval_recall([[["1"]]], [[1]]) == [0.0]
    assert autorag.retrieval_recall([[[np.int64(1)]]], [[1]]) == [1.0]
    assert autorag.retrieval_recall([[[_Color.RED]]], [[7]]) == [1.0]


# -- 1 and "1": one id --


def test_1_and_str_1_are_one_id():
    assert ranklens.evaluate({"q": {"1": 1}}, {"q": {1: 1.0}}, ["map"])["map"] == 1.0
    assert ranklens.evaluate({"q": {np.int64(1): 1}}, {"q": ["1"]}, ["map"])["map"] == 1.0
    assert Run({"q": [1]}).doc_vocabulary == Run({"q": ["1"]}).doc_vocabulary


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Run({"q": {1: 1.0, "1": 2.0}}), 'query "q": document "1" is listed more'),
        (lambda: Run({"q": [1, "1"]}), 'document "1" is listed more'),
        (lambda: Qrels({"q": {np.int64(1): 1, "1": 0}}), 'document "1" is listed more'),
        (lambda: Run({1: {"a": 1.0}, "1": {"b": 1.0}}), 'query "1" is given twice'),
        (lambda: Qrels.from_groups({"q": [[1], ["1"]]}), "document '1' is in groups 0 and 1"),
        (lambda: Run.from_records([("q", 1, 1.0), ("q", "1", 2.0)]), 'document "1" is listed'),
        (lambda: _ranklens.encode_rows([[1, "1"]], "run"), 'document "1" is listed'),
    ],
)
def test_1_and_str_1_in_one_mapping_are_one_id_given_twice(make, match):
    with pytest.raises(RanklensInputError, match=match):
        make()


# -- The Scorer: matches ids as str objects, read by the same rule (`ids::as_str`). --


@pytest.mark.parametrize(("x", "text"), ACCEPTED)
def test_scorer_accepts_the_same_ids(x, text):
    scorer = ranklens.Scorer(["num_rel_ret"])
    assert scorer([x], {text: 1}) == {"num_rel_ret": 1.0}


@pytest.mark.parametrize(
    ("x", "match", "as_list"),
    # a list and a tuple (the plain-list fast path and the general path); the
    # one exception, a lone surrogate in a list of exact strs, is the next test
    [(x, m, True) for x, m in REFUSED if not isinstance(x, str)]
    + [(x, m, False) for x, m in REFUSED],
)
def test_scorer_refuses_the_same_ids(x, match, as_list):
    scorer = ranklens.Scorer(["num_rel_ret"])
    with pytest.raises(RanklensInputError, match=match):
        scorer([x] if as_list else (x,), {"z": 1})


def test_scorer_fast_path_compares_a_lone_surrogate_exactly():
    # documented exception (bindings::ids): in a list of exact strs the Scorer
    # does not look for lone surrogates; such an id is compared as a Python
    # string, exactly, so it never merges with another id (no wrong number)
    scorer = ranklens.Scorer(["map", "num_rel_ret"])
    assert scorer(["a\ud800", "b"], ["b", "a\ud800"]) == {"map": 1.0, "num_rel_ret": 2.0}
    assert scorer(["a\ud800"], ["a\udc00"]) == {"map": 0.0, "num_rel_ret": 0.0}
    # any other cell goes through the rule: an error naming the row
    with pytest.raises(RanklensInputError, match=r"^row 1: .*lone surrogate"):
        scorer.batch([["a"], ("b\ud800", "b")], [["a"], ["b"]])


def test_scorer_1_and_str_1_are_one_id():
    scorer = ranklens.Scorer(["num_rel_ret"])
    assert scorer([1], {"1": 1}) == {"num_rel_ret": 1.0}
    assert scorer([1], ["1"]) == {"num_rel_ret": 1.0}
