"""``ranklens.compat.pytrec_eval`` against pytrec_eval itself (pytrec-eval-terrier,
trec_eval 9.0.8 inside).

1. Public API: the same names, measures and nicknames.
2. Output structure: the same queries and keys, in the same order, for many measure
   sets (bare, parameterised, combined, nicknames); values to 1e-12.
3. Values to 1e-12 on hypothesis inputs (ties, scores not exact in float32, unjudged
   and negative labels), levels 1 and 2, ``judged_docs_only_flag`` on and off.
4. Errors: the same exception type and message as pytrec_eval, and ``ValueError``
   where pytrec_eval aborts the interpreter.
5. Repeated ``evaluate`` calls; the inputs pytrec_eval gets wrong.
6. ``parse_qrel`` / ``parse_run`` / ``compute_aggregated_measure``.

pytrec_eval misbehaves (stale state, crash) on a query with an empty ranking or with
no label >= 0, and gives NaN / stale values for ``iprec_at_recall``, ``11pt_avg`` and
``utility`` on a ranking emptied by ``judged_docs_only_flag``: the comparisons keep
such inputs away from it (see tests/test_reference.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens.compat import pytrec_eval as rl

try:
    import pytrec_eval as pt
except ImportError:  # pragma: no cover - optional test dependency
    pt = None

needs_pytrec = pytest.mark.skipif(pt is None, reason="pytrec_eval not installed")
TOL = 1e-12
DATA = Path(__file__).parent / "data"

QRELS = {
    "q1": {"a": 1, "b": 0, "c": 2, "d": -1, "e": 1, "f": 0},
    "q2": {"a": 1, "c": 0, "z": 3},
    "q3": {"x": 0, "y": 2},
    "q4": {},  # dropped by both
    "q5": {"a": 1},  # not in the run
}
RUN = {
    "q2": {"b": 1.0, "a": 0.5, "c": 0.5, "z": 0.25},
    "q1": {"a": 0.5, "b": 0.7, "c": 0.1, "x": 0.3, "d": 0.7, "f": 1 / 3, "e": 1 / 3 + 1e-9},
    "q3": {"y": 2.0, "x": 3.0, "w": 3.0},
    "q9": {"a": 1.0},  # not in the qrels
}

# ---------------------------------------------------------------------------
# 1. Public API
# ---------------------------------------------------------------------------


@needs_pytrec
def test_public_names_and_measure_sets() -> None:
    assert set(rl.__all__) == set(pt.__all__)
    for name in [*pt.__all__, "compute_aggregated_measure"]:
        assert hasattr(rl, name), name
    assert rl.supported_measures == pt.supported_measures
    assert rl.supported_nicknames == pt.supported_nicknames


# ---------------------------------------------------------------------------
# 2. Output structure and values on fixed inputs
# ---------------------------------------------------------------------------

MEASURE_SETS: list[set[str]] = [
    {"all_trec"},
    {"official"},
    {"set"},
    {"official", "set", "P.2"},
    *({m} for m in sorted(rl.supported_measures)),
    {"P.1,3"},
    {"P_1", "P_3", "P.10"},
    {"P", "P_3"},  # explicit parameters replace the defaults
    {"P.5,10,15"},
    {"P.5.5"},  # trec_eval reads 5
    {"P_5abc"},  # pytrec_eval's pattern is a prefix match
    {"ndcg_cut.10,5", "map_cut_3", "recall.2,100", "success.2", "relative_P.1,4"},
    {"ndcg_cut_10", "ndcg_cut_100"},  # cvangysel/pytrec_eval#22
    {"map", "ndcg_cut.10,100,2"},  # cvangysel/pytrec_eval#38
    {"iprec_at_recall.0.5,0.1"},
    {"iprec_at_recall.0.123,0.125,0.5"},  # two keys print as 0.12: the last wins
    {"iprec_at_recall.0.25,0.33,1"},
    {"Rprec_mult.0.5,1.5,3"},
    {"set_F.0.5"},
    {"set_F.2,0.5"},  # beta = the first parameter after string sorting
    {"utility.0.5,1,2,3"},
    {"utility.3,2,1,0"},  # sorted as strings: a=0, b=1, c=2, d=3
    {"11pt_avg.0.2,0.5,0.8"},
    {"11pt_avg.0.5"},
    {"11pt_avg.0.25,0.5,0.75", "iprec_at_recall.0.25,0.75"},
    {"map.5", "num_q.3", "gm_map.2", "bpref.1"},  # parameters ignored
    {"runid", "relstring", "num_q"},
    {"gm_map", "gm_bpref", "infAP", "binG", "G", "Rndcg", "ndcg_rel"},
]


def _compare(theirs: dict, ours: dict, skip: set[tuple[str, str]] = frozenset()) -> None:
    assert list(ours) == list(theirs)
    for qid, values in theirs.items():
        assert list(ours[qid]) == list(values), qid
        for key, want in values.items():
            if (qid, key) in skip:
                continue
            got = ours[qid][key]
            assert type(got) is float, (qid, key)
            assert got == pytest.approx(want, abs=TOL, nan_ok=False), (qid, key, got, want)


@needs_pytrec
@pytest.mark.parametrize("measures", MEASURE_SETS, ids=lambda m: ",".join(sorted(m)))
@pytest.mark.parametrize("level", [1, 2])
def test_same_keys_and_values_as_pytrec_eval(measures: set[str], level: int) -> None:
    for judged in (False, True):
        theirs = pt.RelevanceEvaluator(QRELS, measures, level, judged).evaluate(RUN)
        ours = rl.RelevanceEvaluator(QRELS, measures, level, judged).evaluate(RUN)
        _compare(theirs, ours)


@needs_pytrec
def test_measures_given_as_list_tuple_or_generator() -> None:
    for measures in (["map", "P_5"], ("map", "P_5"), (m for m in ["map", "P_5"])):
        ours = rl.RelevanceEvaluator(QRELS, measures).evaluate(RUN)
        _compare(pt.RelevanceEvaluator(QRELS, ["map", "P_5"]).evaluate(RUN), ours)


@needs_pytrec
def test_on_trec_eval_test_collection() -> None:
    with open(DATA / "qrels.test") as f:
        qrels = pt.parse_qrel(f)
    with open(DATA / "results.test") as f:
        run = pt.parse_run(f)
    for level, judged in [(1, False), (2, True)]:
        theirs = pt.RelevanceEvaluator(qrels, {"all_trec"}, level, judged).evaluate(run)
        ours = rl.RelevanceEvaluator(qrels, {"all_trec"}, level, judged).evaluate(run)
        _compare(theirs, ours)


# ---------------------------------------------------------------------------
# 3. Hypothesis
# ---------------------------------------------------------------------------

DOC_IDS = ["a", "A", "b", "B", "ab", "aB", "abc", "d1", "d10", "d2", "é", "z", "zz", "😀"]
QIDS = ["q1", "q2", "q10", "Q1"]
# Exact in float32, and not: 1 and 1 + 1e-9 tie in float32; 1/3 and 0.1 round.
SCORES = [-1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 1 + 1e-9, 1 - 1e-9, 1 / 3, 0.1, 0.1 + 1e-10, 7e5 + 0.01]
LABELS = [-1, 0, 0, 1, 1, 2, 3]

PARAM_SET = {
    "P.1,2,3",
    "recall.1,3",
    "ndcg_cut.1,2,3",
    "map_cut.2,5",
    "success.1,2",
    "relative_P.1,3",
    "iprec_at_recall.0.25,0.33,0.5",
    "Rprec_mult.0.5,1.5",
    "set_F.0.5",
    "utility.0.5,1,2,3",
    "11pt_avg.0.2,0.5,0.8",
}


@st.composite
def pytrec_inputs(draw: Any) -> tuple[dict, dict]:
    """Qrels and run, with the queries pytrec_eval mishandles left out (see the top)."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qid in draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=4)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=10))
        pool = draw(st.lists(st.sampled_from(SCORES), min_size=1, max_size=3))
        labels, scores = {}, {}
        for doc in docs:
            where = draw(st.sampled_from(["judged", "retrieved", "both", "both"]))
            if where != "retrieved":
                labels[doc] = draw(st.sampled_from(LABELS))
            if where != "judged":
                scores[doc] = draw(st.sampled_from(pool))
        if draw(st.booleans()) or not scores:
            qrels[qid] = labels
        if scores and draw(st.integers(0, 5)) > 0:
            run[qid] = scores
    qrels = {q: d for q, d in qrels.items() if any(v >= 0 for v in d.values())}
    return qrels, run


def _emptied_by_j(qrels: dict, run: dict) -> set[str]:
    """Queries whose ranking holds no document with a label >= 0 (what -J keeps)."""
    judged = {q: {d for d, label in docs.items() if label >= 0} for q, docs in qrels.items()}
    return {q for q, docs in run.items() if q in judged and not set(docs) & judged[q]}


@needs_pytrec
@settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    inputs=pytrec_inputs(),
    level=st.sampled_from([1, 2]),
    judged=st.booleans(),
    params=st.booleans(),
)
@example(inputs=(QRELS, RUN), level=1, judged=False, params=False)
@example(inputs=(QRELS, RUN), level=2, judged=True, params=True)
def test_matches_pytrec_eval(inputs, level: int, judged: bool, params: bool) -> None:
    qrels, run = inputs
    measures = PARAM_SET if params else {"all_trec"}
    theirs = pt.RelevanceEvaluator(qrels, measures, level, judged).evaluate(run)
    ours = rl.RelevanceEvaluator(qrels, measures, level, judged).evaluate(run)
    skip = set()
    if judged:  # trec_eval 9.0.8 computes 0 / 0 on a ranking -J emptied
        for qid in _emptied_by_j(qrels, run):
            skip |= {(qid, k) for k in theirs.get(qid, {}) if k.startswith(("iprec", "11pt", "ut"))}
    _compare(theirs, ours, skip)


# ---------------------------------------------------------------------------
# 4. Errors
# ---------------------------------------------------------------------------


def _error(call) -> tuple[type, str] | None:
    try:
        call()
    except Exception as e:
        return type(e), str(e)
    return None


INIT_CASES = [
    ({"q": {"d": 1.0}}, {"map"}, {}),  # float label
    ({"q": {"d": "1"}}, {"map"}, {}),
    ({"q": {"d": np.int64(1)}}, {"map"}, {}),
    ({"q": {"d": True}}, {"map"}, {}),  # bool is an int: accepted
    ({1: {"d": 1}}, {"map"}, {}),  # query id not a str
    ({"q": {1: 1}}, {"map"}, {}),  # doc id not a str
    ({"q": {1: 1.5}}, {"map"}, {}),  # both: the doc id is checked first
    ({"q": [("d", 1)]}, {"map"}, {}),  # inner not a dict
    ({"q": {"d": 1}}, {"map"}, {"relevance_level": 0}),
    ({"q": {"d": 1}}, {"map"}, {"relevance_level": 1.5}),
    ({"q": {"d": 1}}, {"map"}, {"relevance_level": np.int32(2)}),
    ({"q": {"d": 1}}, {"map"}, {"judged_docs_only_flag": 0.5}),
    ({"q": {"d": 1}}, {"Map"}, {}),
    ({"q": {"d": 1}}, {"P@5"}, {}),
    ({"q": {"d": 1}}, {"ndcg_cut"}, {}),  # fine: default cutoffs
    ({"q": {"d": 1}}, {"prefs"}, {}),
    ({"q": {"d": 1}}, {"qrels_jg"}, {}),
    ({"q": {"d": 1}}, "map", {}),  # a string is iterated: "m", "a", "p"
    ({"q": {"d": 1.0}}, {"nope"}, {}),  # measures are checked before the qrels
    ([("q", {"d": 1})], {"map"}, {}),  # qrels without .items()
]


@needs_pytrec
@pytest.mark.parametrize(("qrels", "measures", "kwargs"), INIT_CASES)
def test_init_errors_match(qrels, measures, kwargs) -> None:
    theirs = _error(lambda: pt.RelevanceEvaluator(qrels, measures, **kwargs))
    ours = _error(lambda: rl.RelevanceEvaluator(qrels, measures, **kwargs))
    if theirs is not None and theirs[1].startswith("unsupported measure "):
        # Which unsupported measure is named first depends on set iteration order.
        assert ours is not None and ours[0] is theirs[0]
        assert ours[1].startswith("unsupported measure ")
    else:
        assert ours == theirs


RUN_CASES = [
    {"q": {"d": "1.0"}},
    {"q": {"d": np.float32(1.0)}},
    {"q": {"d": None}},
    {"q": {1: 1.0}},
    {1: {"d": 1.0}},
    {"q": [("d", 1.0)]},
    {"zz": {"d": "bad"}},  # checked even for a query without judgments
    [("q", {"d": 1.0})],
    {"q": {"d": 1, "e": True, "f": np.float64(0.5)}},  # accepted
    {},  # -> {}
]


@needs_pytrec
@pytest.mark.parametrize("run", RUN_CASES)
def test_evaluate_errors_match(run) -> None:
    qrels = {"q": {"d": 1, "e": 0}}
    theirs = _error(lambda: pt.RelevanceEvaluator(qrels, {"map"}).evaluate(run))
    ours = _error(lambda: rl.RelevanceEvaluator(qrels, {"map"}).evaluate(run))
    assert ours == theirs
    if theirs is None and run:
        _compare(
            pt.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run),
            rl.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run),
        )


@pytest.mark.parametrize("later", ["1.0", None, [1.0], True, 2, np.float32(1.0), np.int64(1)])
def test_types_after_the_first_entry(later) -> None:
    # Every entry is type-checked (by the Rust encoder) as pytrec_eval checks
    # them: a float or an int (bool included), else pytrec_eval's TypeError.
    ev = rl.RelevanceEvaluator({"q": {"d": 1}}, {"num_ret"})
    run = {"q": {"d": 1.0, "e": later}}
    if isinstance(later, (int, float)):
        assert ev.evaluate(run) == {"q": {"num_ret": 2.0}}
    else:
        with pytest.raises(TypeError, match="Unable to extract query/object scores"):
            ev.evaluate(run)
    with pytest.raises(TypeError, match="Unable to extract query/object scores"):
        ev.evaluate({"q": {"d": 1.0, 5.5: 1.0}})


@pytest.mark.parametrize(
    "measures",
    [{"P.0"}, {"P.5,05"}, {"iprec_at_recall.0.5,0.50"}, {"ndcg.10"}, {"G.2"}, {"utility.1,2"}],
)
def test_parameters_trec_eval_rejects_raise_value_error(measures) -> None:
    # pytrec_eval aborts the interpreter on all but utility (which scores 0.0).
    with pytest.raises(ValueError, match=next(iter(measures)).split(".")[0]):
        rl.RelevanceEvaluator(QRELS, measures)


def test_nan_scores_raise_value_error() -> None:
    ev = rl.RelevanceEvaluator(QRELS, {"map"})
    with pytest.raises(ValueError):
        ev.evaluate({"q1": {"a": float("nan")}})


# ---------------------------------------------------------------------------
# 5. Repeated calls; the inputs pytrec_eval gets wrong
# ---------------------------------------------------------------------------


def test_second_evaluate_keeps_every_cutoff() -> None:
    # The original pytrec_eval returned only one cutoff from the second call on
    # (cvangysel/pytrec_eval#22, #38); pytrec-eval-terrier fixed it.
    ev = rl.RelevanceEvaluator(QRELS, {"map", "ndcg_cut.10,100,2", "P", "iprec_at_recall.0.5,1"})
    other = rl.RelevanceEvaluator(QRELS, {"P.1,3", "ndcg_cut"})
    first = ev.evaluate(RUN)
    assert len(first["q1"]) == 1 + 3 + 9 + 2
    for _ in range(3):
        other.evaluate(RUN)
        assert ev.evaluate(RUN) == first
    assert rl.RelevanceEvaluator(QRELS, {"P.1,3", "ndcg_cut"}).evaluate(RUN) == other.evaluate(RUN)


@needs_pytrec
def test_installed_pytrec_eval_repeats_too() -> None:
    ev = pt.RelevanceEvaluator(QRELS, {"map", "ndcg_cut.10,100,2"})
    assert ev.evaluate(RUN) == ev.evaluate(RUN)


def test_inputs_pytrec_eval_mishandles_are_scored_by_ranklens() -> None:
    # An empty ranking first, a query whose labels are all negative, a ranking -J empties.
    qrels = {"e": {"a": 1, "b": 0}, "n": {"a": -1, "b": -1}, "j": {"a": 1}, "ok": {"a": 1}}
    run = {"e": {}, "n": {"a": 1.0, "x": 2.0}, "j": {"x": 1.0, "y": 1.0}, "ok": {"a": 0.5}}
    measures = ["map", "P_5", "ndcg", "bpref", "num_ret", "iprec_at_recall_0.00", "11pt_avg"]
    names = ["map", "P@5", "ndcg", "bpref", "num_ret", "iprec_at_recall(recall=0,version=9)"]
    for judged in (False, True):
        ours = rl.RelevanceEvaluator(qrels, set(measures), 1, judged).evaluate(run)
        assert list(ours) == ["e", "n", "j", "ok"]
        res = ranklens.evaluate(
            qrels, ranklens.Run(run, score_precision="f32"), names, judged_only=judged
        )
        for key, name in zip(measures, names):
            for qid, want in res.per_query(name).items():
                assert ours[qid][key] == want, (qid, key)
        for qid in ("e", "n"):
            assert ours[qid]["11pt_avg"] == 0.0
            assert ours[qid]["map"] == 0.0
        assert ours["j"]["num_ret"] == (0.0 if judged else 2.0)
        assert ours["ok"]["map"] == 1.0


def test_float32_ties_as_pytrec_eval() -> None:
    # 1 + 1e-9 == 1 in float32: a tie, broken by doc id descending ("b" first).
    ev = rl.RelevanceEvaluator({"q": {"a": 1}}, {"recip_rank"})
    assert ev.evaluate({"q": {"a": 1 + 1e-9, "b": 1.0}})["q"]["recip_rank"] == 0.5
    assert ev.evaluate({"q": {"a": 1 + 1e-6, "b": 1.0}})["q"]["recip_rank"] == 1.0


def test_query_order_follows_the_run() -> None:
    ev = rl.RelevanceEvaluator({"b": {"x": 1}, "a": {"x": 1}, "c": {"x": 1}}, ["num_q"])
    assert list(ev.evaluate({"c": {"x": 1.0}, "zz": {"x": 1.0}, "a": {"x": 1.0}})) == ["c", "a"]
    assert rl.RelevanceEvaluator({"q": {}}, ["map"]).evaluate({"q": {"x": 1.0}}) == {}


# ---------------------------------------------------------------------------
# 6. Helpers
# ---------------------------------------------------------------------------


def _parsed(parse, path: Path) -> Any:
    with open(path) as f:
        try:
            return parse(f)
        except Exception as e:
            return type(e), str(e)


@needs_pytrec
@pytest.mark.parametrize(
    "name", ["qrels.test", "qrels.rel_level", "qrels-302.test", "qrels.test.with-comments"]
)
def test_parse_qrel_same_as_pytrec_eval(name: str) -> None:
    theirs, ours = _parsed(pt.parse_qrel, DATA / name), _parsed(rl.parse_qrel, DATA / name)
    assert type(ours) is type(theirs)
    assert ours == theirs


@needs_pytrec
@pytest.mark.parametrize("name", ["results.test", "results-302.test", "results.trunc"])
def test_parse_run_same_as_pytrec_eval(name: str) -> None:
    theirs, ours = _parsed(pt.parse_run, DATA / name), _parsed(rl.parse_run, DATA / name)
    assert type(ours) is type(theirs)
    assert ours == theirs


@needs_pytrec
def test_parse_duplicates_raise_assertion_error() -> None:
    lines = ["q 0 d 1", "q 0 d 0"]
    assert _error(lambda: rl.parse_qrel(lines)) == _error(lambda: pt.parse_qrel(lines))
    assert _error(lambda: rl.parse_qrel(lines))[0] is AssertionError
    runs = ["q Q0 d 1 1.5 t", "q Q0 d 2 1.0 t"]
    assert _error(lambda: rl.parse_run(runs)) == _error(lambda: pt.parse_run(runs))


@needs_pytrec
@pytest.mark.parametrize("measure", ["map", "num_ret", "num_rel_ret", "gm_map", "P_5"])
def test_compute_aggregated_measure(measure: str) -> None:
    values = [0.5, -2.0, 0.125, 3.0]
    want = pt.compute_aggregated_measure(measure, values)
    got = rl.compute_aggregated_measure(measure, values)
    assert type(got) is float
    assert got == want


@needs_pytrec
def test_aggregates_of_per_query_values_match() -> None:
    measures = {"map", "gm_map", "num_ret", "P_5", "ndcg_cut_10"}
    theirs = pt.RelevanceEvaluator(QRELS, measures).evaluate(RUN)
    ours = rl.RelevanceEvaluator(QRELS, measures).evaluate(RUN)
    for key in ["map", "gm_map", "num_ret", "P_5", "ndcg_cut_10"]:
        want = pt.compute_aggregated_measure(key, [v[key] for v in theirs.values()])
        got = rl.compute_aggregated_measure(key, [v[key] for v in ours.values()])
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=TOL), key


def test_nested_dict_builder() -> None:
    # The native builder of the drop-in's {query: {measure: value}} results.
    from ranklens import _ranklens

    values = np.array([[0.5, 1.0, 2.0], [3.0, -1.0, 0.0]])
    got = _ranklens.nested_dict(["q2", "q1"], ["b", "a", "c"], values)
    assert got == {"q2": {"b": 0.5, "a": 1.0, "c": 2.0}, "q1": {"b": 3.0, "a": -1.0, "c": 0.0}}
    assert [list(d) for d in got.values()] == [["b", "a", "c"], ["b", "a", "c"]]
    assert list(got) == ["q2", "q1"]
    got["q2"]["b"] = 9.0  # rows are independent dicts, not one shared object
    assert got["q1"]["b"] == 3.0
    assert all(type(v) is float for d in got.values() for v in d.values())
    assert _ranklens.nested_dict(["q"], [], np.zeros((1, 0))) == {"q": {}}
    assert _ranklens.nested_dict([], ["a"], np.zeros((0, 1))) == {}
    with pytest.raises(ValueError, match="shape"):
        _ranklens.nested_dict(["q"], ["a", "b"], np.zeros((1, 3)))
    with pytest.raises(TypeError, match="non-contiguous"):
        _ranklens.nested_dict(["q", "r"], ["a"], np.zeros((2, 2))[:, :1])
