"""The pytrec_eval drop-in's dict path (``_ranklens.evaluate_dict``: run dicts scored
against tables of the judged ids, without encoding a ``Run``) against its
general path (encode the run, then ``evaluate``), on the same evaluator.

The two must agree exactly: the same queries and keys in the same order, the same
values bit for bit, and the same exception type and message on bad input (the dict
path hands any input it does not take to the general path).  Inputs: ties (also
after the rounding to 32-bit floats), unicode ids, unjudged and negative-label
documents, queries missing on either side, ``int`` scores, and keys and values the
dict path leaves to the general path (``str`` subclasses, ``int``/``bool``/``None``
keys, ``bool``/numpy/``str`` scores, NaN, infinities, huge ``int``s), and judged ids
given as ``str`` subclasses (matched by their text on either path).

``ranklens.evaluate(dict, dict)`` takes the same walk (``evaluate_dict_all``: scores as
doubles, every qrels query); it is compared with its own general path (``Run(dict)``,
then ``evaluate``) the same way: values, query lists, warnings, errors.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import _ranklens
from ranklens._evaluate import _evaluate as _evaluate_module
from ranklens.compat import pytrec_eval as rl
from ranklens.errors import RanklensInputError


class Sub(str):
    """A ``str`` subclass: the general path's business in a run."""


DOCS = ["a", "b", "d1", "d10", "d2", "é", "日本", "z", "Z", "a b"]
QIDS = ["q1", "q2", "q10", "ü"]
# Ties, values equal only after rounding to float32, ints, negatives.
SCORES: list[Any] = [0.5, 1.0, 1.0000000001, 1.00000001, 2, 3, -1.0, 0.1 + 0.2, 0.3, 0, 1e300]
ODD_KEYS: list[Any] = [Sub("a"), 1, True, None]
ODD_SCORES: list[Any] = [
    True,
    np.float64(1.0),
    np.float32(2.0),
    "1.0",
    None,
    float("nan"),
    float("inf"),
    -float("inf"),
    10**400,
]
MEASURE_SETS = [
    {"all_trec"},
    {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"},
    {"P.1,3", "success.1,5", "map_cut.2", "runid"},
]


@st.composite
def inputs(draw: st.DrawFn, odd: bool) -> tuple[dict, dict]:
    qrels: dict = {}
    run: dict = {}
    for qid in draw(st.lists(st.sampled_from(QIDS), unique=True, max_size=4)):
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        labels = {d: draw(st.sampled_from([-1, 0, 1, 2, 3])) for d in docs}
        if odd and labels and draw(st.booleans()):
            # A judged id as a str subclass: matched by its text all the same.
            first = next(iter(labels))
            labels = {Sub(first): labels.pop(first), **labels}
        if labels and draw(st.integers(0, 3)) > 0:
            qrels[qid] = labels
        if draw(st.integers(0, 4)) > 0:
            pool = docs + draw(st.lists(st.sampled_from(DOCS), max_size=4))
            scores = {d: draw(st.sampled_from(SCORES)) for d in pool}
            if odd and scores and draw(st.booleans()):
                key = draw(st.sampled_from([*ODD_KEYS, None]))
                if key is not None:
                    scores[key] = 1.0
                else:
                    scores[next(iter(scores))] = draw(st.sampled_from(ODD_SCORES))
            run[qid] = scores
    if odd and draw(st.integers(0, 5)) == 0:
        run[draw(st.sampled_from([1, Sub("q1"), "run-only"]))] = draw(
            st.sampled_from([{"a": 1.0}, [("a", 1.0)], {"a": float("nan")}, {1: 1.0}])
        )
    if not qrels:
        qrels = {"q1": {"a": 1}}
    return qrels, run


def _outcome(call: Any) -> Any:
    """The result, keys and values in order (values bit for bit), or the error."""
    try:
        out = call()
    except Exception as e:  # the exception type and message are compared
        return type(e), str(e)
    return [(q, [(k, float(v).hex()) for k, v in d.items()]) for q, d in out.items()]


def _both(qrels: dict, run: dict, measures: set[str], level: int, judged: bool) -> tuple:
    ev = rl.RelevanceEvaluator(qrels, measures, level, judged)
    if ev._judged is None:
        raise AssertionError("plain qrels must get the dict path's judgments")
    fast = _outcome(lambda: ev.evaluate(run))
    ev._judged = None  # the general path, same evaluator
    general = _outcome(lambda: ev.evaluate(run))
    return fast, general


def _takes(qrels: dict, run: dict, measures: set[str]) -> bool:
    """The dict path scores ``run`` itself (does not hand it on)."""
    ev = rl.RelevanceEvaluator(qrels, measures)
    got = _ranklens.evaluate_dict(ev._judged, ev._qrels.arrays, run, ev._specs, 1.0, False)
    return got is not None


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    data=inputs(odd=False),
    measures=st.sampled_from(MEASURE_SETS),
    level=st.sampled_from([1, 2]),
    judged=st.booleans(),
)
def test_dict_path_equals_general_path(data, measures, level: int, judged: bool) -> None:
    qrels, run = data
    fast, general = _both(qrels, run, measures, level, judged)
    assert fast == general
    if run and measures != {"runid"}:
        assert _takes(qrels, run, measures)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=inputs(odd=True), judged=st.booleans())
def test_odd_input_same_result_or_error(data, judged: bool) -> None:
    qrels, run = data
    fast, general = _both(qrels, run, {"all_trec"}, 1, judged)
    assert fast == general


def test_odd_input_is_handed_on() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    m = {"map", "P.1"}
    assert _takes(qrels, {"q": {"a": 1.0, "b": 2}}, m)
    assert _takes(qrels, {"other": {"a": 1.0}}, m)  # run-only: read, not scored
    for run in (
        {"q": {Sub("a"): 1.0}},
        {"q": {"a": True}},
        {"q": {"a": np.float64(1.0)}},
        {"q": {"a": float("nan")}},
        {"q": {"a": 10**400}},
        {"q": {"a": "\ud800"}},
        {"q": {"\ud800": 1.0}},
        {"other": {"a": float("inf")}},  # run-only queries are checked too
        {Sub("q"): {"a": 1.0}},
        {"q": [("a", 1.0)]},
    ):
        assert not _takes(qrels, run, m), run


def test_ties_and_unicode_order() -> None:
    """trec_eval's order: score, then id descending by UTF-8 bytes; scores equal
    once rounded to float32 tie."""
    qrels = {"q": {"é": 1, "z": 0, "日本": 2, "a": 1}}
    run = {"q": {"a": 1.0, "z": 1.0000000001, "é": 1.0, "日本": 1.0, "b": 0.5}}
    fast, general = _both(qrels, run, {"P.1,2,3", "map", "ndcg_cut.3"}, 1, False)
    assert fast == general
    res = dict(fast)["q"]
    # 日本 (e6 97 a5) > é (c3 a9) > z > a: the first is relevant at level 1 and 2.
    assert dict(res)["P_1"] == (1.0).hex()


def test_dict_subclasses_take_the_dict_path() -> None:
    """``parse_run``'s ``defaultdict`` and other dict subclasses: read as dicts."""
    qrels = {"q": {"a": 1, "b": 0}, "r": {"c": 2}}
    lines = ["q Q0 a 1 1.5 x", "q Q0 b 2 2.5 x", "r Q0 c 1 0.5 x", "s Q0 c 1 0.5 x"]
    run = rl.parse_run(lines)
    assert type(run) is not dict
    m = {"map", "P.1", "ndcg_cut.2"}
    assert _takes(qrels, run, m)
    fast, general = _both(qrels, run, m, 1, False)
    assert fast == general
    assert [q for q, _ in fast] == ["q", "r"]


def test_subclass_qrels_take_the_dict_path() -> None:
    """The judged ids are matched by their UTF-8 text, as the general path matches
    them: ``str`` subclasses in the qrels change nothing."""
    qrels = {"q": {Sub("a"): 1, "b": 0}, Sub("r"): {Sub("c"): 2}}
    run = {"q": {"a": 1.0, "b": 2.0}, "r": {"c": 0.5, "a": 0.7}}
    m = {"map", "P.1", "ndcg_cut.2"}
    assert _takes(qrels, run, m)
    fast, general = _both(qrels, run, m, 1, False)
    assert fast == general
    assert [q for q, _ in fast] == ["q", "r"]


def test_query_id_without_utf8_is_handed_on() -> None:
    """A run query id with a lone surrogate is the general path's business (an
    error for ``ranklens.evaluate``), also for a query the qrels lack."""
    qrels = {"q": {"a": 1}}
    run = {"\ud800": {"a": 1.0}}
    assert not _takes(qrels, run, {"map"})
    fast, general = _both(qrels, run, {"map"}, 1, False)
    assert fast == general == []
    fast, general = _evaluate_both(qrels, run, ["map"])
    assert fast == general
    assert fast[0][0] is RanklensInputError


# -- ranklens.evaluate(dict, dict): the same dict path, scores kept as doubles --

NATIVE = [
    ["ndcg@10", "map", "recall@100", "P@10", "mrr"],
    ["P@1,3", "success@1,5", "map@2", "bpref", "num_ret", "num_rel_ret", "ndcg"],
    ["first_rel_rank", "Rprec", "infAP", "set_F", "num_nonrel_judged_ret"],
]


def _evaluate_outcome(call: Any) -> Any:
    """Everything a ``Results`` holds (values bit for bit), or the error; and the
    warnings issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = call()
        except Exception as e:  # the exception type and message are compared
            out: Any = (type(e), str(e))
        else:
            out = (
                res.query_ids,
                [m.name for m in res.metrics],
                [[float(v).hex() for v in row] for row in res.values.tolist()],
                res.missing_queries,
                res.ignored_queries,
                res.skipped_queries,
                {k: float(v).hex() for k, v in res.to_dict().items()},
            )
    return out, [(w.category, str(w.message)) for w in caught]


def _evaluate_both(qrels: Any, run: Any, metrics: list[str], **kw: Any) -> tuple:
    fast = _evaluate_outcome(lambda: ranklens.evaluate(qrels, run, metrics, **kw))
    with mock.patch.object(_evaluate_module, "_dict_run", return_value=None):
        general = _evaluate_outcome(lambda: ranklens.evaluate(qrels, run, metrics, **kw))
    return fast, general


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    data=inputs(odd=False),
    metrics=st.sampled_from(NATIVE),
    level=st.sampled_from([1, 2, "positive"]),
    judged=st.booleans(),
    miss=st.sampled_from(["k+1", None]),
    threads=st.sampled_from([None, 1, 2]),
)
def test_evaluate_dict_path_equals_general_path(
    data, metrics: list[str], level: Any, judged: bool, miss: Any, threads: Any
) -> None:
    qrels, run = data
    kw = {"relevance_level": level, "judged_only": judged, "miss": miss, "threads": threads}
    fast, general = _evaluate_both(qrels, run, metrics, **kw)
    assert fast == general


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(data=inputs(odd=True), judged=st.booleans())
def test_evaluate_odd_input_same_result_or_error(data, judged: bool) -> None:
    qrels, run = data
    fast, general = _evaluate_both(qrels, run, NATIVE[0] + NATIVE[2], judged_only=judged)
    assert fast == general


def test_evaluate_takes_the_dict_path() -> None:
    qrels = {"q": {"a": 1, "b": 0}, "r": {"c": 2}, "s": {}}
    m = ["map", "P@1", "ndcg@2"]
    for run, takes in (
        ({"q": {"a": 1.0, "b": 2}, "x": {"a": 0.5}, "r": {}}, True),
        ({}, True),
        ({"q": {"a": float("nan")}}, False),
        ({"q": [("a", 1.0)]}, False),
        ({1: {"a": 1.0}}, False),
        ({"q": {Sub("a"): 1.0}}, False),
    ):
        real = _evaluate_module._dict_run
        got: list[Any] = []

        def spy(*a: Any, _real: Any = real, _got: list[Any] = got) -> Any:
            _got.append(_real(*a))
            return _got[-1]

        with mock.patch.object(_evaluate_module, "_dict_run", spy):
            with contextlib.suppress(Exception):
                ranklens.evaluate(qrels, run, m)
        assert (got[0] is not None) == takes, run
        fast, general = _evaluate_both(qrels, run, m)
        assert fast == general, run


def test_evaluate_dict_path_keeps_doubles_and_lists_queries() -> None:
    """trec_eval 10.0: scores equal only once rounded to float32 do not tie (the
    drop-in's do); missing and ignored queries as the general path lists them."""
    qrels = {"q": {"a": 1, "b": 0}, "m": {"a": 1}, "10": {"z": 1}}
    run = {"q": {"b": 1.0000000001, "a": 1.0}, "zz": {"a": 1.0}, "9": {}, "é": {"a": 2}}
    fast, general = _evaluate_both(qrels, run, ["P@1", "map"])
    assert fast == general
    out = fast[0]
    assert out[3] == ["10", "m"]  # missing, in qrels order
    assert out[4] == ["9", "zz", "é"]  # ignored, by UTF-8 bytes
    assert out[2][out[0].index("q")][0] == (0.0).hex()  # b (not relevant) first


def test_evaluate_dict_path_other_options_take_the_general_path() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    for kw in ({"ties": "input"}, {"max_docs": 1}, {"empty": "nan"}, {"backend": "python"}):
        fast, general = _evaluate_both(qrels, run, ["P@1", "map"], **kw)
        assert fast == general, kw


def test_bad_thread_setting_is_the_general_paths_error(monkeypatch: Any) -> None:
    """A bad ``RANKLENS_NUM_THREADS`` is raised where the general path raises it:
    after the run's own checks."""
    qrels = {"q": {"a": 1}}
    evaluators = [rl.RelevanceEvaluator(qrels, {"map"}) for _ in range(4)]
    monkeypatch.setenv("RANKLENS_NUM_THREADS", "many")
    for run in ({"q": {"a": 1.0}}, {"q": {"a": float("nan")}}):
        fast, general = _evaluate_both(qrels, run, ["map"])
        assert fast == general
        assert fast[0][0] is RanklensInputError
        ev, other = evaluators.pop(), evaluators.pop()
        other._judged = None  # the general path
        assert _outcome(functools.partial(ev.evaluate, run)) == _outcome(
            functools.partial(other.evaluate, run)
        )


def test_many_chunks_equal_the_general_path() -> None:
    """More rows than one chunk of the walk (65,536): with two threads or more each
    full chunk is scored on a pool thread while the walk reads on.  The same values
    as the general path, on one thread and on several; a kernel's error in a later
    chunk (a gain past the largest float) is the general path's error."""
    import random

    rng = random.Random(3)
    qrels = {
        f"q{i}": {f"d{j}": rng.randint(0, 2) for j in rng.sample(range(150), 10)}
        for i in range(1500)
    }
    run = {f"q{i}": {f"d{j}": float(rng.randint(0, 50)) for j in range(100)} for i in range(1500)}
    m5 = {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"}
    assert _takes(qrels, run, m5)
    fast, general = _both(qrels, run, m5, 1, False)
    assert fast == general
    assert len(fast) == 1500
    for threads in (None, 1, 2):
        fast, general = _evaluate_both(qrels, run, NATIVE[0], threads=threads)
        assert fast == general
    qrels["q1400"] = {"d1": 10**308, "d2": 10**308, "d3": 10**308}
    run["q1400"].update({"d1": 99.0, "d2": 98.0, "d3": 97.0})
    fast, general = _both(qrels, run, {"ndcg_cut.10"}, 1, False)
    assert fast == general
    assert fast[0] is RanklensInputError
    fast, general = _evaluate_both(qrels, run, ["ndcg@10"], threads=2)
    assert fast == general
    assert fast[0][0] is RanklensInputError


def test_runs_either_side_of_the_serial_size_equal_the_general_path() -> None:
    """Runs of at most 4,096 rows are scored on the calling thread, larger ones on
    the pool: at 4,096 and 4,097 rows (one query of 1, one of 4,095 or 4,096, ties
    included), the same values as the general path on every thread setting."""
    import random

    rng = random.Random(7)
    qrels = {"a": {"d1": 1}, "b": {f"d{j}": rng.randint(0, 3) for j in range(0, 6000, 7)}}
    m5 = {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"}
    for rows in (4096, 4097):
        run = {
            "a": {"d1": 1.0},
            "b": {f"d{j}": float(rng.randint(0, 900)) for j in range(rows - 1)},
        }
        assert sum(len(v) for v in run.values()) == rows
        assert _takes(qrels, run, m5)
        fast, general = _both(qrels, run, m5, 1, False)
        assert fast == general
        for threads in (None, 1, 2):
            fast, general = _evaluate_both(qrels, run, NATIVE[0], threads=threads)
            assert fast == general
