"""The Python API: inputs, Results, metric names, errors."""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping

import numpy as np
import pytest

import ranklens
from ranklens import Metric, Qrels, RanklensInputError, Run, UnknownMetricError, parse_metrics

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1}, "q2": {"x": 1}, "q3": {"y": 0}}
RUN = {"q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5, "zz": 0.1}, "q9": {"a": 1.0}, "q3": {"y": 3.0}}


def test_results_basic_and_missing_queries():
    res = ranklens.evaluate(QRELS, RUN, ["P@2", "map", "num_rel", "num_ret", "mrr"])
    # q1 ranking: d2 (0.9), d3 (0.5, "d3" > "d1"), d1 (0.5), zz.
    # relevant: d1, d3 (R = 2); P@2 = 1/2; AP = (1/2 + 2/3) / 2; RR = 1/2.
    assert res.per_query("P@2") == {"q1": 0.5, "q2": 0.0, "q3": 0.0}
    assert res.per_query("map")["q1"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)
    assert res.per_query("mrr") == {"q1": 0.5, "q2": 0.0, "q3": 0.0}
    # Mean over all qrels queries (q2 missing from the run counts as 0).
    assert res["P@2"] == pytest.approx(0.5 / 3)
    # Counting measures are sums, as in trec_eval.
    assert res["num_rel"] == 3.0
    assert res["num_ret"] == 5.0
    assert res.missing_queries == ["q2"]
    assert res.ignored_queries == ["q9"]
    assert res.query_ids == ["q1", "q2", "q3"]
    assert res.values.shape == (3, 5)


def test_any_spelling_reads_the_same_entry():
    res = ranklens.evaluate(QRELS, RUN, ["precision@2", "ndcg_cut_10", "recip_rank"])
    assert res["P_2"] == res["P@2"] == res["precision@2"] == res["P.2"]
    assert res["nDCG@10"] == res["ndcg@10"]
    assert res["RR"] == res["mrr"]
    assert "P_2" in res and "map" not in res
    with pytest.raises(KeyError, match="was not computed"):
        res["map"]
    assert list(res) == ["precision@2", "ndcg@10", "mrr"]
    assert set(res.to_dict()) == {"precision@2", "ndcg@10", "mrr"}


def test_inputs_are_not_modified():
    q, r = copy.deepcopy(QRELS), copy.deepcopy(RUN)
    ranklens.evaluate(q, r, ["map", "ndcg"])
    assert q == QRELS and r == RUN


def test_ranked_lists_keep_the_given_order():
    run = {"q1": ["zz", "d3", "d1"]}
    res = ranklens.evaluate(QRELS, run, ["mrr", "P@1", "map"])
    assert res.per_query("mrr")["q1"] == 0.5
    assert Run(run).ranking("q1") == ["zz", "d3", "d1"]


def test_ties_break_by_doc_id_descending_bytes():
    # "B" (0x42) < "a" (0x61) < "b": descending order is b, a, B.
    run = Run({"q": {"a": 1.0, "B": 1.0, "b": 1.0}})
    assert run.ranking("q") == ["b", "a", "B"]
    # Byte order, not code point order of a different encoding: é (c3 a9) > z.
    run = Run({"q": {"z": 0.0, "é": 0.0}})
    assert run.ranking("q") == ["é", "z"]


def test_f32_scores_tie_like_pytrec_eval():
    data = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert Run(data).ranking("q") == ["a", "b"]
    assert Run(data, score_precision="f32").ranking("q") == ["b", "a"]


def test_float_labels_are_kept():
    qrels = Qrels({"q": {"a": 0.5, "b": 1.5}})
    assert qrels["q"] == {"a": 0.5, "b": 1.5}
    res = ranklens.evaluate(qrels, {"q": ["a"]}, ["ndcg@1", "P@1"])
    assert res["ndcg@1"] == pytest.approx(0.5 / 1.5)
    assert res["P@1"] == 0.0  # 0.5 < relevance level 1


def test_relevance_level_and_per_metric_rel():
    res = ranklens.evaluate(QRELS, RUN, ["P@3", "P(rel=2)@3"], relevance_level=1)
    assert res.per_query("P@3")["q1"] == pytest.approx(2 / 3)
    assert res.per_query("P(rel=2)@3")["q1"] == pytest.approx(1 / 3)
    res2 = ranklens.evaluate(QRELS, RUN, ["P@3"], relevance_level=2)
    assert res2.per_query("P@3")["q1"] == pytest.approx(1 / 3)


def test_int_ids_are_accepted_as_strings():
    res = ranklens.evaluate({1: {2: 1}}, {1: {2: 0.5}}, ["P@1"])
    assert res.per_query("P@1") == {"1": 1.0}


def test_threads_option_gives_identical_numbers():
    rng = np.random.default_rng(0)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(20)} for i in range(200)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in range(30)} for i in range(200)}
    a = ranklens.evaluate(qrels, run, ["ndcg@10", "map"], threads=1)
    b = ranklens.evaluate(qrels, run, ["ndcg@10", "map"], threads=2)
    assert np.array_equal(a.values, b.values)


def test_small_calls_on_the_calling_thread_equal_the_pools():
    # At most 4,096 rows (qrels and run together) are encoded and scored on the
    # calling thread: each query of a 10,000-row call (the pool's), alone, from
    # dicts and from Qrels / Run, and the queries of a 4,097-row call, give the
    # same values.
    rng = np.random.default_rng(1)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(-1, 3)) for j in range(20)} for i in range(200)}
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 9)) for j in range(30)} for i in range(200)}
    ms = ["ndcg@10", "map", "bpref", "P@5", "recip_rank", "Rprec"]
    for threads in (None, 1, 2):
        big = ranklens.evaluate(qrels, run, ms, threads=threads)
        big_enc = ranklens.evaluate(Qrels(qrels), Run(run), ms, threads=threads)
        assert np.array_equal(big.values, big_enc.values)
        for q in ("q0", "q7", "q199"):
            one = ranklens.evaluate({q: qrels[q]}, {q: run[q]}, ms, threads=threads)
            assert np.array_equal(one.values[0], big.values[big.query_ids.index(q)])
            enc = ranklens.evaluate(Qrels({q: qrels[q]}), Run({q: run[q]}), ms, threads=threads)
            assert np.array_equal(enc.values, one.values)
    # 80 queries of 20 judged and 30 ranked rows, and a run-only query of 97.
    sub_q = {f"q{i}": qrels[f"q{i}"] for i in range(80)}
    sub_r = {f"q{i}": run[f"q{i}"] for i in range(80)}
    sub_r["extra"] = {f"e{j}": float(j) for j in range(97)}
    assert sum(map(len, sub_q.values())) + sum(map(len, sub_r.values())) == 4097
    over = ranklens.evaluate(Qrels(sub_q), Run(sub_r), ms, threads=2)
    rows = [big.query_ids.index(q) for q in over.query_ids]
    assert np.array_equal(over.values, big.values[rows])


def test_encoded_arrays_layout():
    run = Run({"q2": {"a": 1.0}, "q1": {"b": 2.0, "c": 3.0}})
    assert run.query_ids == ["q1", "q2"]
    assert run.offsets.tolist() == [0, 2, 3]
    assert run.doc_ids.dtype == np.uint32 and run.values.dtype == np.float64
    assert run.doc_vocabulary == ["a", "b", "c"]
    assert run.doc_ids.tolist() == [2, 1, 0]
    assert not run.values.flags.writeable
    assert len(run) == 2 and "q1" in run and "nope" not in run
    assert run.to_dict() == {"q1": {"c": 3.0, "b": 2.0}, "q2": {"a": 1.0}}


def test_to_pandas():
    pd = pytest.importorskip("pandas")
    res = ranklens.evaluate(QRELS, RUN, ["P@2", "map"])
    df = res.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["precision@2", "map"]
    assert df.loc["q1", "precision@2"] == 0.5


# -- metric names --------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("P_5", Metric("precision", 5)),
        ("P.5", Metric("precision", 5)),
        ("P@5", Metric("precision", 5)),
        ("precision@5", Metric("precision", 5)),
        ("recall_100", Metric("recall", 100)),
        ("R@100", Metric("recall", 100)),
        ("ndcg_cut_10", Metric("ndcg", 10)),
        ("ndcg_cut.10", Metric("ndcg", 10)),
        ("nDCG@10", Metric("ndcg", 10)),
        ("map_cut_10", Metric("map", 10)),
        ("AP@100", Metric("map", 100)),
        ("AP", Metric("map")),
        ("recip_rank", Metric("mrr")),
        ("RR", Metric("mrr")),
        ("RR@10", Metric("mrr", 10)),
        ("Rprec", Metric("r_precision")),
        ("success_1", Metric("hit_rate", 1)),
        ("Success@10", Metric("hit_rate", 10)),
        ("P(rel=2)@5", Metric("precision", 5, 2.0)),
        ("ndcg_burges@10", Metric("ndcg_burges", 10)),
        ("bpref", Metric("bpref")),
        ("num_rel_ret", Metric("num_rel_ret")),
    ],
)
def test_metric_spellings(name, expected):
    assert parse_metrics(name) == [expected]


def test_cutoff_lists_expand():
    assert [m.name for m in parse_metrics("ndcg@5,10,20")] == ["ndcg@5", "ndcg@10", "ndcg@20"]
    assert [m.name for m in parse_metrics(["P.5,10", "P_5"])] == ["precision@5", "precision@10"]


def test_parsed_names_are_remembered_and_errors_raised_every_time():
    first = parse_metrics(["ndcg@5,10", "map"])
    first.append(Metric("mrr"))  # the caller's own list: nothing shared is changed
    assert parse_metrics(["ndcg@5,10", "map"]) == first[:3]
    assert parse_metrics(["ndcg@5,10", "map"]) is not parse_metrics(["ndcg@5,10", "map"])
    for _ in range(2):
        with pytest.raises(UnknownMetricError, match="cutoff"):
            parse_metrics(["ndcg@0"])


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("ndgc@10", "ndcg"),
        ("precsion@5", "precision"),
        ("mapp", "map"),
    ],
)
def test_unknown_metric_lists_closest(name, hint):
    with pytest.raises(UnknownMetricError, match=hint) as e:
        parse_metrics(name)
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("precision@5-l2", r"is written precision\(rel=2\)@5"),
        ("map-l3", r"is written map\(rel=3\)"),
        ("ndcg@10-l2", "no ranklens spelling for ndcg"),
    ],
)
def test_ranx_level_suffix_says_how_to_write_it(name, hint):
    with pytest.raises(UnknownMetricError, match=hint):
        parse_metrics(name)
    spelled = re.search(r"is written (\S+)", hint.replace("\\", ""))
    if spelled is not None:
        assert parse_metrics(spelled.group(1))[0].rel is not None
    # Not a metric at all: no ranx hint.
    with pytest.raises(UnknownMetricError) as e:
        parse_metrics("nosuch-l2")
    assert "ranx" not in str(e.value)


@pytest.mark.parametrize("name", ["P@0", "ndcg@-1", "bpref@10", "ndcg(rel=2)@10", "ndcg_cut", ""])
def test_invalid_metric_names(name):
    with pytest.raises(UnknownMetricError):
        parse_metrics(name)


def test_empty_metric_list():
    with pytest.raises(UnknownMetricError, match="empty"):
        ranklens.evaluate(QRELS, RUN, [])


# -- bad input -----------------------------------------------------------------


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_name_query_and_doc(bad):
    msg = r'query "q1", document "d7": the score is NaN or infinite'
    with pytest.raises(RanklensInputError, match=msg):
        ranklens.evaluate(QRELS, {"q1": {"d7": bad}}, ["map"])


def test_non_finite_label():
    with pytest.raises(RanklensInputError, match="label is NaN"):
        Qrels({"q": {"d": math.nan}})


def test_duplicate_in_ranked_list():
    with pytest.raises(RanklensInputError, match=r"query \"q1\": document \"d1\" is listed more"):
        Run({"q1": ["d1", "d2", "d1"]})


@pytest.mark.parametrize(
    ("qrels", "match"),
    [
        ({"q": {"d": "2"}}, "label must be a number"),
        ({"q": {"d": None}}, "label must be a number"),
        ({"q": ["d"]}, "qrels need a mapping"),
        ({"q": {3.5: 1}}, "document id must be a str or an int"),
        ({None: {"d": 1}}, "the query id is null"),
        ({b"q": {"d": 1}}, "query id must be a str or an int"),
    ],
)
def test_bad_qrels(qrels, match):
    with pytest.raises(RanklensInputError, match=match):
        Qrels(qrels)


def test_bad_scores():
    with pytest.raises(RanklensInputError, match=r"query \"q\", document \"d\": the score"):
        Run({"q": {"d": "high"}})
    with pytest.raises(RanklensInputError, match="expected a mapping"):
        Run({"q": 3})


@pytest.mark.parametrize("threads", [0, -1, 1.5, True])
def test_bad_threads(threads):
    with pytest.raises(RanklensInputError, match="threads"):
        ranklens.evaluate(QRELS, RUN, ["map"], threads=threads)


def test_bad_relevance_level_and_backend():
    with pytest.raises(RanklensInputError, match="finite"):
        ranklens.evaluate(QRELS, RUN, ["map"], relevance_level=math.nan)
    with pytest.raises(RanklensInputError, match="backend"):
        ranklens.evaluate(QRELS, RUN, ["map"], backend="numba")


def test_wrong_object_types():
    with pytest.raises(RanklensInputError, match="qrels must be"):
        ranklens.evaluate([1, 2], RUN, ["map"])
    with pytest.raises(RanklensInputError, match="got a Run where Qrels"):
        ranklens.evaluate(Run(RUN), RUN, ["map"])
    with pytest.raises(RanklensInputError, match="no query"):
        ranklens.evaluate({}, RUN, ["map"])


def test_env_var_threads(monkeypatch):
    monkeypatch.setenv("RANKLENS_NUM_THREADS", "1")
    assert ranklens.evaluate(QRELS, RUN, ["map"])["map"] >= 0
    monkeypatch.setenv("RANKLENS_NUM_THREADS", "many")
    with pytest.raises(RanklensInputError, match="RANKLENS_NUM_THREADS"):
        ranklens.evaluate(QRELS, RUN, ["map"])


def test_relstring_per_query():
    # q1 ranking: d2 (label 0), d3 (1), d1 (2), zz (not judged); d4 (-1) not retrieved.
    assert ranklens.relstring(QRELS, RUN, 10) == {"q1": "012-", "q2": "", "q3": "0"}
    assert ranklens.relstring(QRELS, RUN, 2)["q1"] == "01"
    run = {"q1": {"d4": 2.0, "zz": 1.0, "d1": 0.5}}
    assert ranklens.relstring(QRELS, run, 5, judged_only=True)["q1"] == "2"
    assert ranklens.relstring(QRELS, run, 5)["q1"] == ".-2"
    assert ranklens.relstring({"q": {"a": 12}}, {"q": ["a"]})["q"] == ">"


def test_int_and_str_ids_that_collide_are_duplicates():
    # A str-keyed dict cannot repeat a document; int keys can collide with strings.
    with pytest.raises(RanklensInputError, match=r'query "q": document "1" is listed more'):
        Run({"q": {1: 1.0, "1": 2.0}})
    with pytest.raises(RanklensInputError, match="listed more"):
        Qrels({"q": {7: 1, "7": 0}})


@pytest.mark.parametrize("side", [Run, Qrels])
def test_query_ids_that_collide_are_an_error(side):
    # 1 and "1" would merge into one query "1" (its documents pooled).
    msg = r'query "1" is given twice \(the second time as str \'1\'\)'
    with pytest.raises(RanklensInputError, match=msg):
        side({1: {"a": 1}, "1": {"b": 1}})
    with pytest.raises(RanklensInputError, match='query "1" is given twice'):
        side({1: {"a": 1}, "1": {"a": 1}})


class _OwnHash(str):
    """Equal to the same str, but hashed by identity: a dict keeps two of them."""

    def __hash__(self):
        return id(self)


class _Repeating(Mapping):
    """A mapping whose iteration lists a key twice (a buggy or a multi-map)."""

    def __init__(self, keys, value):
        self._keys, self._value = keys, value

    def __getitem__(self, key):
        return self._value

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)


def test_duplicates_found_whatever_the_mapping_type():
    docs = {_OwnHash("d1"): 1.0, _OwnHash("d1"): 2.0, "d2": 0.5}
    assert len(docs) == 3  # the dict holds "d1" twice
    with pytest.raises(RanklensInputError, match=r'query "q1": document "d1" is listed more'):
        Run({"q1": docs})
    with pytest.raises(RanklensInputError, match=r'document "d1" is listed more'):
        Qrels({"q1": {_OwnHash("d1"): 1, _OwnHash("d1"): 0}})
    with pytest.raises(RanklensInputError, match=r'query "q1": document "d" is listed more'):
        Run({"q1": _Repeating(["d", "e", "d"], 1.0)})
    # Repeated query keys: a mapping repeating one, or str subclasses hashed apart.
    with pytest.raises(RanklensInputError, match='query "q1" is given twice'):
        Run(_Repeating(["q1", "q1"], {"d": 1.0}))
    with pytest.raises(RanklensInputError, match='query "q1" is given twice'):
        Qrels({_OwnHash("q1"): {"d": 1}, _OwnHash("q1"): {"e": 1}})
    with pytest.raises(RanklensInputError, match='query "q1" is given twice'):
        ranklens.evaluate({"q1": {"d": 1}}, {_OwnHash("q1"): {"d": 1.0}, "q1": {"e": 2.0}}, ["map"])


class _Shrinking:
    """A score whose conversion removes an entry of the dict being encoded."""

    def __init__(self, victim):
        self.victim = victim

    def __float__(self):
        self.victim.popitem()
        return 1.0


class _Growing:
    """A score whose conversion adds an entry to the dict being encoded."""

    def __float__(self):
        _GROW_TARGET["added"] = 1.0
        return 7.0


_GROW_TARGET: dict = {}


def test_a_dict_changing_size_while_encoded_is_a_runtime_error():
    # Before: PyO3's dict iterator panicked (PanicException, a BaseException).
    docs: dict = {"a": 1.0, "b": 2.0, "c": 3.0}
    docs["a"] = _Shrinking(docs)
    with pytest.raises(RuntimeError, match="dictionary changed size during iteration"):
        Run({"q": docs})
    _GROW_TARGET.clear()
    _GROW_TARGET.update({"a": _Growing(), "b": 2.0})
    with pytest.raises(RuntimeError, match="changed size"):
        Run({"q": _GROW_TARGET})
    # The mapping of queries itself, changed by a conversion within a query.
    queries: dict = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    queries["q1"]["a"] = _Shrinking(queries)
    with pytest.raises(RuntimeError, match="changed size"):
        Qrels(queries)


def test_runs_in_ranking_order_and_not_are_ranked_alike():
    # The encoder skips sorting input that is already in trec order; both must agree.
    ordered = {"q": {"d": 3.0, "c": 2.0, "b": 2.0, "a": 1.0}}
    shuffled = {"q": {"a": 1.0, "b": 2.0, "d": 3.0, "c": 2.0}}
    assert Run(ordered).ranking("q") == Run(shuffled).ranking("q") == ["d", "c", "b", "a"]
