"""The RAG entry points: `Scorer`, graded labels, empty / duplicate / miss policies,
result spellings, `score_labels`, `score_frame(semantics=...)`.

1. ``relevance_level="positive"`` everywhere a level is taken, both backends, and
   the RanklensWarning when no label reaches the level.
2. The Scorer against ``evaluate(backend="python")`` (the reference backend) on
   random samples: ids, graded dicts, groups, scored dicts with ties.
3. ``empty=``, ``duplicates=``, ``miss=`` and ``mean_rank``.
4. Any spelling finds a metric in ``score``, ``score_batch`` and ``evaluate``.
5. ``score_labels`` and ``score_frame`` by hand.
6. Rows small enough to be matched by scanning and rows matched through a hash
   table: the same values (against ``evaluate``) and the same errors.
7. The fused path of a list of relevant ids is the general path, bit for bit.
8. A batch read and scored in a pipeline (chunks of any size) is the serial
   batch: the same bits, the same errors at the same rows, the same warning.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, RanklensInputError, RanklensWarning, Scorer

log2 = math.log2
TOL = 1e-12


# ---------------------------------------------------------------------------
# 1. Graded labels
# ---------------------------------------------------------------------------


def test_warning_class():
    assert issubclass(RanklensWarning, UserWarning)
    assert ranklens.errors.RanklensWarning is RanklensWarning


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_positive_level_counts_every_label_above_zero(backend):
    # LLM-judge labels: d1 0.37, d2 0 (judged non-relevant), d3 0.8.
    qrels = {"q": {"d1": 0.37, "d2": 0.0, "d3": 0.8}}
    run = {"q": ["d2", "d1", "x", "d3"]}
    ms = ["P@2", "recall@4", "mrr", "map", "hit_rate@1", "P(rel=positive)@4"]
    res = ranklens.evaluate(qrels, run, ms, relevance_level="positive", backend=backend)
    assert res["P@2"] == 0.5  # d1 at rank 2
    assert res["recall@4"] == 1.0  # d1 and d3 of R = 2
    assert res["mrr"] == 0.5
    assert res["map"] == pytest.approx((1 / 2 + 2 / 4) / 2, abs=TOL)  # AP over R = 2
    assert res["hit_rate@1"] == 0.0
    assert res["precision(rel=positive)@4"] == 0.5
    # the per-metric level alone: the evaluation's level stays 1 for the others
    with pytest.warns(RanklensWarning):
        res = ranklens.evaluate(qrels, run, ["P(rel=positive)@4", "P@4"], backend=backend)
    assert res.to_dict() == {"precision(rel=positive)@4": 0.5, "precision@4": 0.0}


def test_positive_level_is_the_smallest_double():
    assert ranklens._checks.POSITIVE_LEVEL == 5e-324
    m = ranklens.parse_metric("P(rel=positive)@5")
    assert m.rel == 5e-324 and m.name == "precision(rel=positive)@5"
    assert ranklens.parse_metric(m.name) == m
    assert ranklens.parse_metric(ranklens.Metric("precision", 5, "positive")) == m
    with pytest.raises(RanklensInputError, match="'positive'"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": ["a"]}, "P@1", relevance_level="high")


def test_warning_when_no_label_reaches_the_level():
    qrels = {"q": {"d1": 0.37, "d2": 0.8}}
    run = {"q": ["d1"]}
    with pytest.warns(RanklensWarning, match=r"relevance_level='positive'.*") as rec:
        ranklens.evaluate(qrels, run, ["P@1", "ndcg"])
    assert "largest is 0.8" in str(rec[0].message)
    assert "precision@1" in str(rec[0].message)
    with pytest.warns(RanklensWarning, match="largest is 0.37"):
        ranklens.score(["d1"], {"d1": 0.37}, "mrr", relevance_level=1)
    with pytest.warns(RanklensWarning):
        ranklens.score_batch([["d1"]], [{"d1": 0.37}], "mrr", relevance_level=1)
    with pytest.warns(RanklensWarning):
        Scorer("recall", relevance_level=0.5)(["a"], {"a": 0.25})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # nothing to warn about: the level is reached, labels are all 0, only
        # graded metrics, a metric with its own level, or the default "positive"
        ranklens.evaluate({"q": {"a": 2, "b": 0.5}}, run, "P@1")
        ranklens.evaluate({"q": {"a": 0}}, run, "P@1")
        ranklens.evaluate(qrels, run, ["ndcg", "dcg@2"])
        ranklens.evaluate(qrels, run, ["P(rel=0.5)@1"])
        assert ranklens.score(["d1"], {"d1": 0.37}, "mrr") == {"mrr": 1.0}


def test_cli_accepts_positive(tmp_path, capsys):
    from ranklens.cli import main

    (tmp_path / "qrels").write_text("q 0 a 0.4\nq 0 b 0\n")
    (tmp_path / "run").write_text("q Q0 b 1 2 t\nq Q0 a 2 1 t\n")
    main([str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "mrr", "-l", "positive"])
    out = capsys.readouterr().out
    assert "0.5000" in out  # a (0.4 > 0) at rank 2


# ---------------------------------------------------------------------------
# 2. The Scorer agrees with the reference backend
# ---------------------------------------------------------------------------

METRICS = [
    "P@1,3,5",
    "recall@3,10",
    "mrr",
    "map",
    "ndcg@3,10",
    "ndcg",
    "hit_rate@3",
    "hits@5",
    "bpref",
    "r_precision",
    "first_rel_rank@5",
    "first_rel_rank",
    "err@5",
    "rbp",
    "num_rel",
    "num_rel_ret",
    "fallout@5",
    "P(rel=2)@5",
]


def _random_samples(seed: int, n: int):
    rng = np.random.default_rng(seed)
    retrieved, relevant = [], []
    for i in range(n):
        docs = [f"d{j}" for j in rng.permutation(15)]
        ret = docs[: rng.integers(0, 12)]
        kind = i % 4
        if kind == 0:  # relevant ids
            rel = [docs[j] for j in rng.permutation(15)[: rng.integers(1, 5)]]
        elif kind == 1:  # graded labels, some 0, some fractional
            rel = {docs[j]: float(rng.choice([0, 0.5, 1, 2, 3])) for j in rng.permutation(15)[:6]}
        elif kind == 2:  # groups of interchangeable documents
            pool = [docs[j] for j in rng.permutation(15)[:6]]
            cut = sorted(rng.choice(np.arange(1, 6), size=2, replace=False))
            rel = [pool[: cut[0]], pool[cut[0] : cut[1]], pool[cut[1]]]
        else:  # a scored retrieved dict, with ties
            rel = [docs[j] for j in rng.permutation(15)[:3]]
            ret = {d: float(rng.integers(0, 3)) for d in ret}
        retrieved.append(ret)
        relevant.append(rel)
    return retrieved, relevant


def _reference(retrieved, relevant, metrics, level, backend="python", **options):
    """evaluate(backend=...) with row i as query i (``options``: evaluate's)."""
    qids = [f"{i:04d}" for i in range(len(retrieved))]
    groups = {}
    for q, rel in zip(qids, relevant):
        if isinstance(rel, dict):
            groups[q] = [[d] for d in rel]
        else:
            groups[q] = [[g] if isinstance(g, str) else g for g in rel]
    labels = {
        q: ([float(v) for v in rel.values()] if isinstance(rel, dict) else None)
        for q, rel in zip(qids, relevant)
    }
    qrels = Qrels.from_groups(groups, labels=labels)
    run = {}
    for q, ret in zip(qids, retrieved):
        if isinstance(ret, dict):
            run[q] = ret
        else:
            run[q] = {d: float(len(ret) - i) for i, d in enumerate(ret)}
    return ranklens.evaluate(qrels, run, metrics, relevance_level=level, backend=backend, **options)


@pytest.mark.parametrize("level", ["positive", 1, 2])
def test_scorer_matches_the_reference_backend(level):
    retrieved, relevant = _random_samples(11, 120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        scorer = Scorer(METRICS, relevance_level=level)
        batch = scorer.batch(retrieved, relevant)
        ref = _reference(retrieved, relevant, METRICS, level)
        one = [scorer(r, g) for r, g in zip(retrieved, relevant)]
    for j, m in enumerate(ref.metrics):
        want = ref.values[:, j]
        if m.family == "err":
            # err's automatic gmax is the largest label of the input: the batch's
            # (as the reference on all rows), not each sample's alone.
            np.testing.assert_allclose(batch[m.name], want, rtol=0, atol=TOL)
            continue
        np.testing.assert_allclose(batch[m.name], want, rtol=0, atol=TOL, err_msg=m.name)
        np.testing.assert_allclose([s[m.name] for s in one], want, rtol=0, atol=TOL)


OPTIONS = [
    {"judged_only": True},
    {"max_docs": 3},
    {"ties": "input"},
    {"judged_only": True, "max_docs": 4, "ties": "input"},
    {"miss": None, "max_docs": 2},
]


@pytest.mark.parametrize("options", OPTIONS, ids=repr)
@pytest.mark.parametrize("backend", ["python", "rust"])
def test_scorer_options_match_evaluate(options, backend):
    # ties, judged_only, max_docs and miss mean in the Scorer what they mean in
    # evaluate, on both of evaluate's backends.
    retrieved, relevant = _random_samples(23, 120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        scorer = Scorer(METRICS, **options)
        batch = scorer.batch(retrieved, relevant)
        one = [scorer(r, g) for r, g in zip(retrieved, relevant)]
        ref = _reference(retrieved, relevant, METRICS, "positive", backend=backend, **options)
    for j, m in enumerate(ref.metrics):
        want = ref.values[:, j]
        np.testing.assert_allclose(batch[m.name], want, rtol=0, atol=TOL, err_msg=m.name)
        if m.family != "err":  # err's automatic gmax: the sample's own largest label
            np.testing.assert_allclose([s[m.name] for s in one], want, rtol=0, atol=TOL)
        if m.family == "first_rel_rank" or m.family == "mrr":
            assert batch.mean()[m.name] == pytest.approx(ref[m.name], abs=TOL), m.name


EXPECTED_METRICS = ["P@1,3", "recall@3", "mrr", "map", "ndcg@3", "ndcg", "bpref", "num_ret"]


@pytest.mark.parametrize(
    "options", [{}, {"judged_only": True}, {"max_docs": 2}, {"judged_only": True, "max_docs": 2}]
)
def test_scorer_expected_ties_match_the_reference(options):
    # ties="expected" on scored rows with ties.  The reference backend has the
    # expected forms for plain qrels (each relevant id its own group), by
    # enumerating orderings; grouped rows are checked against evaluate's Rust path.
    retrieved, relevant = _random_samples(5, 160)
    # at most 6 tied documents a row: the reference enumerates their orderings
    retrieved = [dict(list(r.items())[:6]) if isinstance(r, dict) else r for r in retrieved]
    scorer = Scorer(EXPECTED_METRICS, ties="expected", **options)
    batch = scorer.batch(retrieved, relevant)
    plain = [i for i, g in enumerate(relevant) if isinstance(g, dict) or i % 4 == 3]
    qrels, run = {}, {}
    for i in plain:
        g, r = relevant[i], retrieved[i]
        qrels[f"{i:04d}"] = g if isinstance(g, dict) else dict.fromkeys(g, 1.0)
        run[f"{i:04d}"] = r if isinstance(r, dict) else {d: len(r) - p for p, d in enumerate(r)}
    ref = ranklens.evaluate(
        qrels,
        run,
        EXPECTED_METRICS,
        relevance_level="positive",
        backend="python",
        ties="expected",
        **options,
    )
    assert any(
        len(set(retrieved[i].values())) < len(retrieved[i])
        for i in plain
        if isinstance(retrieved[i], dict)
    )
    for j, m in enumerate(ref.metrics):
        np.testing.assert_allclose(
            batch[m.name][plain], ref.values[:, j], rtol=0, atol=TOL, err_msg=m.name
        )
    rust = _reference(
        retrieved,
        relevant,
        EXPECTED_METRICS,
        "positive",
        backend="rust",
        ties="expected",
        **options,
    )
    for j, m in enumerate(rust.metrics):
        np.testing.assert_allclose(batch[m.name], rust.values[:, j], rtol=0, atol=TOL)
    # one sample, by hand: a and x tie at the top, a relevant: P@1 = 1/2, mrr = 3/4
    got = Scorer(["P@1", "mrr"], ties="expected")({"x": 1.0, "a": 1.0, "y": 0.5}, ["a"])
    assert got == {"precision@1": 0.5, "mrr": 0.75}
    # two members of one group tied before the group is satisfied: no defined order
    with pytest.raises(RanklensInputError, match=r"row 0: ties='expected' is not defined"):
        Scorer("mrr", ties="expected").batch([{"a": 1.0, "b": 1.0}], [[["a", "b"]]])
    with pytest.raises(RanklensInputError, match=r"the sample: ties='expected' is not defined"):
        Scorer("mrr", ties="expected")({"a": 1.0, "b": 1.0}, [["a", "b"]])
    with pytest.raises(ranklens.UnknownMetricError, match="not available for err"):
        Scorer("err@5", ties="expected")


def test_scorer_options_by_hand():
    ret, gt = ["x", "a", "y", "b"], {"a": 1, "b": 2}
    # judged_only: x and y dropped, a at rank 1 and b at rank 2
    got = ranklens.score(ret, gt, ["P@2", "mrr", "num_ret"], judged_only=True)
    assert got == {"precision@2": 1.0, "mrr": 1.0, "num_ret": 2.0}
    # max_docs=1: only x is scored
    got = ranklens.score(ret, gt, ["P@2", "mrr", "num_ret", "mean_rank"], max_docs=1)
    assert got == {"precision@2": 0.0, "mrr": 0.0, "num_ret": 1.0, "first_rel_rank": 2.0}
    # ties: x and a tie; trec puts the larger id first (x), input the dict's first (a)
    ret = {"a": 1.0, "x": 1.0, "y": 0.5}
    assert ranklens.score(ret, ["a"], "mrr") == {"mrr": 0.5}
    assert ranklens.score(ret, ["a"], "mrr", ties="input") == {"mrr": 1.0}
    # a list is ranked as given: ties never apply
    assert ranklens.score(["x", "a"], ["a"], "mrr", ties="input") == {"mrr": 0.5}
    # score_labels: -1 is unjudged, dropped by judged_only
    assert ranklens.score_labels([-1, 0, 1], ["P@1", "mrr"], judged_only=True) == {
        "precision@1": 0.0,
        "mrr": 0.5,
    }
    assert ranklens.score_labels([0, 1, 1], ["recall", "mrr"], max_docs=1) == {
        "recall": 0.0,
        "mrr": 0.0,
    }
    for bad in ({"ties": "random"}, {"max_docs": 0}, {"max_docs": True}, {"max_docs": 1.5}):
        with pytest.raises(RanklensInputError):
            Scorer("P@5", **bad)
    with pytest.raises(RanklensInputError, match="miss=None is not defined with ties='expected'"):
        Scorer("mean_rank@3", ties="expected", miss=None)


def test_scorer_parses_once_and_reports_names():
    scorer = Scorer(["P@5", "ndcg"], k=[3])
    assert scorer.names == ["precision@5", "ndcg@3"]
    assert repr(scorer) == "Scorer(['precision@5', 'ndcg@3'])"
    with pytest.raises(ranklens.UnknownMetricError):
        Scorer(["P@5", "nope"])
    for bad in ({"empty": "drop"}, {"duplicates": "last"}, {"miss": 0}):
        with pytest.raises(RanklensInputError):
            Scorer("P@5", **bad)


def test_score_and_score_batch_use_the_scorer():
    # score_batch of the worked example: groups {t1, t2}, {t3}; t1 at rank 1.
    gt = [["t1", "t2"], ["t3"]]
    ret = ["t1", "p1", "t2", "p3"]
    assert ranklens.score(ret, gt, ["recall@4", "P@4", "mrr"]) == {
        "recall@4": 0.5,
        "precision@4": 0.25,
        "mrr": 1.0,
    }
    out = ranklens.score_batch([ret, ["t3"]], [gt, gt], "recall@4")
    assert out["recall@4"].tolist() == [0.5, 0.5]
    assert out.mean() == {"recall@4": 0.5}


# ---------------------------------------------------------------------------
# 3. Policies
# ---------------------------------------------------------------------------


def test_empty_policies_in_score_batch():
    retrieved = [["a"], None, [], ["b"], ["a"]]
    relevant = [["a"], ["a"], ["a"], None, []]
    # rows 1, 2: nothing retrieved; rows 3, 4: no ground truth
    zero = ranklens.score_batch(retrieved, relevant, ["recall", "num_rel"])
    assert zero["recall"].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert zero["num_rel"].tolist() == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert zero.mean()["recall"] == 0.2
    nan = ranklens.score_batch(retrieved, relevant, "recall", empty="nan")
    assert nan["recall"][0] == 1.0 and np.isnan(nan["recall"][1:]).all()
    assert math.isnan(nan.mean()["recall"]) and nan.skipped.tolist() == []
    skip = ranklens.score_batch(retrieved, relevant, "recall", empty="skip")
    assert skip.skipped.tolist() == [1, 2, 3, 4]
    assert skip.mean() == {"recall": 1.0}  # only row 0 counts
    one = ranklens.score(None, ["a"], "recall", empty="nan")
    assert math.isnan(one["recall"])


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_empty_policies_in_evaluate(backend):
    # q1 found at rank 1; q2 has no group; q3 is missing from the run.
    qrels = Qrels.from_groups({"q1": [["a"]], "q2": [], "q3": [["c"]]})
    run = {"q1": ["a"], "q2": ["b"]}
    zero = ranklens.evaluate(qrels, run, "recall", backend=backend)
    assert zero["recall"] == pytest.approx(1 / 3, abs=TOL)
    nan = ranklens.evaluate(qrels, run, "recall", backend=backend, empty="nan")
    assert math.isnan(nan["recall"])
    skip = ranklens.evaluate(qrels, run, "recall", backend=backend, empty="skip")
    assert skip["recall"] == 1.0 and skip.skipped_queries == ["q2", "q3"]
    assert math.isnan(skip.per_query("recall")["q2"])
    with pytest.raises(RanklensInputError, match="empty must be"):
        ranklens.evaluate(qrels, run, "recall", empty="drop")


def test_missing_cells_in_frames():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"retrieved_ids": [["a", "b"], np.nan, ["a"]], "retrieval_gt": [[["b"]], [["a"]], None]},
        index=["x", "y", "z"],
    )
    out = ranklens.score_frame(df, metrics=["mrr"], semantics="trec", empty="skip")
    assert out["mrr"].iloc[0] == 0.5
    assert out["mrr"].iloc[1:].isna().all()
    assert out.attrs["skipped"] == ["y", "z"]
    with pytest.raises(RanklensInputError, match=r"row 0: .*a missing cell is None or NaN"):
        ranklens.score_batch([1.5], [["a"]], "mrr")


def test_duplicates():
    with pytest.raises(RanklensInputError, match=r'"a" is retrieved twice \(ranks 1 and 3\)'):
        ranklens.score(["a", "b", "a"], ["a"], "P@3")
    # first: the second "a" is dropped, the list closes up to a, b
    got = ranklens.score(["a", "b", "a"], ["a", "c"], ["P@3", "num_ret"], duplicates="first")
    assert got == {"precision@3": 1 / 3, "num_ret": 2.0}
    # an id in two groups: a message about groups, everywhere
    with pytest.raises(RanklensInputError, match="in groups 0 and 1"):
        ranklens.score(["a"], [["a", "b"], ["a"]], "P@1")
    with pytest.raises(RanklensInputError, match=r"row 1: .*in groups 0 and 2"):
        ranklens.score_batch([["a"], ["a"]], [["a"], [["a"], "b", ["c", "a"]]], "P@1")
    with pytest.raises(RanklensInputError, match="'q': document 'a' is in groups 0 and 1"):
        Qrels.from_groups({"q": [["a", "b"], ["a"]]})
    with pytest.raises(RanklensInputError, match="listed twice in group 0"):
        ranklens.score(["a"], [["a", "a"]], "P@1")


def test_miss_and_mean_rank():
    assert ranklens.parse_metric("mean_rank@3") == ranklens.parse_metric("first_rel_rank@3")
    rows = [["x", "a"], ["x", "y", "z"], ["a"]]
    gt = [["a"], ["a"], ["a"]]
    kplus1 = ranklens.score_batch(rows, gt, ["mean_rank@3", "mean_rank"])
    # a miss is k + 1 = 4 with a cutoff, and the list length + 1 = 4 without
    assert kplus1["first_rel_rank@3"].tolist() == [2.0, 4.0, 1.0]
    assert kplus1["first_rel_rank"].tolist() == [2.0, 4.0, 1.0]
    none = ranklens.score_batch(rows, gt, ["mean_rank@3", "mrr"], miss=None)
    assert np.isnan(none["first_rel_rank@3"][1])
    # the mean rank over samples with a hit: (2 + 1) / 2; mrr unaffected
    assert none.mean() == {"first_rel_rank@3": 1.5, "mrr": pytest.approx(0.5, abs=TOL)}
    assert math.isnan(
        ranklens.score(["x"], ["a"], "first_rel_rank@2", miss=None)["first_rel_rank@2"]
    )


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize("grouped", [False, True])
def test_miss_in_evaluate(backend, grouped):
    # the rows of test_miss_and_mean_rank as queries: evaluate agrees with score*
    rows = {"q1": ["x", "a"], "q2": ["x", "y", "z"], "q3": ["a"]}
    run = {q: {d: 3.0 - i for i, d in enumerate(r)} for q, r in rows.items()}
    if grouped:
        qrels = Qrels.from_groups({q: [["a"]] for q in rows})
    else:
        qrels = {q: {"a": 1} for q in rows}
    metrics = ["mean_rank@3", "first_rel_rank", "mrr"]
    kplus1 = ranklens.evaluate(qrels, run, metrics, backend=backend)
    assert list(kplus1.per_query("first_rel_rank@3").values()) == [2.0, 4.0, 1.0]
    assert list(kplus1.per_query("first_rel_rank").values()) == [2.0, 4.0, 1.0]
    assert kplus1["mean_rank@3"] == pytest.approx(7 / 3, abs=TOL)
    none = ranklens.evaluate(qrels, run, metrics, backend=backend, miss=None)
    per = none.per_query("first_rel_rank@3")
    assert per["q1"] == 2.0 and math.isnan(per["q2"]) and per["q3"] == 1.0
    # the mean over the queries with a hit, as BatchScores.mean
    assert none["first_rel_rank@3"] == 1.5 and none["first_rel_rank"] == 1.5
    assert none["mrr"] == pytest.approx(0.5, abs=TOL)
    batch = ranklens.score_batch(list(rows.values()), [["a"]] * 3, metrics, miss=None)
    assert batch.mean() == pytest.approx(none.to_dict(), abs=TOL)
    # with max_docs=1 the hit of q1 at rank 2 is cut: a miss
    cut = ranklens.evaluate(qrels, run, "mean_rank", backend=backend, miss=None, max_docs=1)
    assert math.isnan(cut.per_query("first_rel_rank")["q1"]) and cut["first_rel_rank"] == 1.0
    # no hit anywhere: no mean
    nohit = ranklens.evaluate(qrels, {"q1": ["x"]}, "mean_rank@2", backend=backend, miss=None)
    assert math.isnan(nohit["first_rel_rank@2"])
    with pytest.raises(RanklensInputError, match="miss must be"):
        ranklens.evaluate(qrels, run, metrics, backend=backend, miss="none")
    with pytest.raises(RanklensInputError, match="not defined with ties='expected'"):
        ranklens.evaluate(qrels, run, metrics, backend=backend, miss=None, ties="expected")


# ---------------------------------------------------------------------------
# 4. Spellings
# ---------------------------------------------------------------------------


def test_any_spelling_finds_a_metric():
    one = ranklens.score(["a", "b", "c"], ["b"], ["P@3", "ndcg@3"])
    for name in ("P@3", "precision@3", "P_3", "P.3"):
        assert one[name] == 1 / 3 and name in one
    assert one.get("nDCG@3") == pytest.approx(1 / log2(3), abs=TOL)
    assert one.get("P@5") is None and "P@5" not in one and 3 not in one
    with pytest.raises(KeyError, match="'P@5' was not computed"):
        one["P@5"]
    assert list(one) == ["precision@3", "ndcg@3"]
    batch = ranklens.score_batch([["a"]], [["a"]], "P@3")
    assert batch["P_3"].tolist() == [1 / 3]
    res = ranklens.evaluate({"q": {"a": 1}}, {"q": ["a"]}, "P@3")
    assert res["P_3"] == res.to_dict()["precision@3"] == res.to_dict()["P.3"]


# ---------------------------------------------------------------------------
# 5. score_labels, score_frame
# ---------------------------------------------------------------------------


def test_score_labels_by_hand():
    got = ranklens.score_labels([3, 2, 3, 0, 1], ["P@3", "mrr", "ndcg@5", "recall@2", "map"])
    assert got["precision@3"] == 1.0  # labels 3, 2, 3 are all > 0
    assert got["mrr"] == 1.0
    # DCG: 3/1 + 2/log2(3) + 3/2 + 0 + 1/log2(6); ideal 3, 3, 2, 1, 0:
    # 3 + 3/log2(3) + 2/2 + 1/log2(5).
    dcg = 3 + 2 / log2(3) + 3 / 2 + 1 / log2(6)
    idcg = 3 + 3 / log2(3) + 1 + 1 / log2(5)
    assert got["ndcg@5"] == pytest.approx(dcg / idcg, abs=TOL)
    assert got["recall@2"] == 0.5  # 2 of the 4 positive labels
    # AP: relevant at ranks 1, 2, 3, 5: (1 + 1 + 1 + 4/5) / 4
    assert got["map"] == pytest.approx((3 + 4 / 5) / 4, abs=TOL)
    # a level of 3: only the two 3s
    assert ranklens.score_labels([3, 2, 3], "P@3", relevance_level=3)["P@3"] == 2 / 3


def test_score_frame_semantics():
    pd = pytest.importorskip("pandas")
    from ranklens.compat import autorag

    df = pd.DataFrame(
        {
            "retrieved_ids": [["t1", "p1", "t3"], ["x"]],
            "retrieval_gt": [[["t1", "t2"], ["t3"]], [["x"]]],
        }
    )
    with pytest.warns(RanklensWarning, match="semantics="):
        trec = ranklens.score_frame(df, metrics=["mrr"])
    # trec: 1 / rank of the first satisfied group
    assert trec["mrr"].tolist() == [1.0, 1.0]
    auto = ranklens.score_frame(df, semantics="autorag")
    assert list(auto.columns) == ["recall", "precision", "f1", "mrr", "map", "ndcg"]
    # AutoRAG: mean over groups of 1 / rank of its first member: (1/1 + 1/3) / 2
    assert auto["mrr"].tolist() == [pytest.approx((1 + 1 / 3) / 2, abs=TOL), 1.0]
    want = autorag.retrieval_mrr(df["retrieval_gt"].tolist(), df["retrieved_ids"].tolist())
    assert auto["mrr"].tolist() == want
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ranklens.score_frame(df, metrics=["mrr"], semantics="trec")
    with pytest.raises(RanklensInputError, match="semantics must be"):
        ranklens.score_frame(df, semantics="ragas")
    with pytest.raises(ranklens.UnknownMetricError, match="unknown AutoRAG metric"):
        ranklens.score_frame(df, metrics=["bpref"], semantics="autorag")


def test_score_keeps_one_scorer_per_argument_set():
    from ranklens._score import _scorer

    names = ["P@1", "mrr"]
    first = ranklens.score(["a"], ["a"], names)
    assert ranklens.score(["b", "a"], ["a"], names) == {"precision@1": 0.0, "mrr": 0.5}
    assert ranklens.score(["a"], ["a"], (n for n in names)) == first  # a generator
    key_count = len(_scorer._SCORERS)
    ranklens.score(["a"], ["a"], names)
    assert len(_scorer._SCORERS) == key_count  # reused, not rebuilt
    # values equal to cached ones but invalid are still checked
    ranklens.score(["a"], ["a"], "P", k=1)
    with pytest.raises(RanklensInputError, match="k must be positive"):
        ranklens.score(["a"], ["a"], "P", k=True)
    with pytest.raises(RanklensInputError, match="relevance_level must be"):
        ranklens.score(["a"], ["a"], "P@1", relevance_level=True)


def test_pytrec_eval_drop_in_stays_silent():
    from ranklens.compat import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"a": 1}}, {"P_1"}, relevance_level=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pytrec_eval warns about nothing: nor does its drop-in
        assert evaluator.evaluate({"q": {"a": 1.0}}) == {"q": {"P_1": 0.0}}


def test_err_gmax_is_the_largest_label_of_the_input():
    # One sample, labels a 1, b 2: gmax = 2, R(1) = (2 - 1) / 4, R(2) = (4 - 1) / 4;
    # err@2 = R(1) / 1 + (1 - R(1)) * R(2) / 2 = 0.25 + 0.75 * 0.75 / 2 = 0.53125.
    assert ranklens.score(["a", "b"], {"a": 1, "b": 2}, "err@2") == {"err@2": 0.53125}
    # In a batch with a label 3 elsewhere, gmax = 3 for every row: R(1) = 1/8,
    # R(2) = 3/8; err@2 = 1/8 + (7/8) * (3/8) / 2 = 0.125 + 0.1640625 = 0.2890625.
    out = ranklens.score_batch([["a", "b"], ["c"]], [{"a": 1, "b": 2}, {"c": 3}], "err@2")
    assert out["err@2"].tolist() == [0.2890625, 7 / 8]


def test_ids_are_matched_by_value_not_identity():
    # the Scorer compares the id objects: same object, else same hash and text
    ret = ["".join(["d", str(i)]) for i in range(5)]
    rel = ["".join(["d", str(i)]) for i in (3, 1)]
    assert not any(a is b for a in ret for b in rel)
    want = {"mrr": 0.5, "num_rel_ret": 2.0}
    assert ranklens.score(ret, rel, ["mrr", "num_rel_ret"]) == want

    # an int is its decimal string; a str subclass is its plain text
    class Id(str):
        def __eq__(self, other):  # never called: the text is compared
            raise AssertionError

        __hash__ = str.__hash__

    assert ranklens.score([7, Id("d1"), "d3"], ["7", "d3"], ["num_rel_ret", "mrr"]) == {
        "num_rel_ret": 2.0,
        "mrr": 1.0,
    }
    # x (label 2) ranked above 3 (label 1): the ideal order
    assert ranklens.score({Id("x"): 2.0, 3: 1.0}, {"3": 1, "x": 2}, "ndcg") == {"ndcg": 1.0}
    with pytest.raises(RanklensInputError, match=r'"7" is retrieved twice \(ranks 1 and 2\)'):
        ranklens.score([7, "7"], ["7"], "mrr")
    with pytest.raises(RanklensInputError, match="an empty document id"):
        ranklens.score(["a", ""], ["a"], "mrr")
    with pytest.raises(RanklensInputError, match="an empty document id"):
        ranklens.score_batch([["a"]], [[["", "a"]]], "mrr")


def test_python_code_run_while_reading_cannot_free_a_read_id():
    # A score's __float__ empties the ground-truth list while the row is read:
    # the ids already read stay alive (held), the values are those of the input.
    relevant = ["".join(["a", "b"]), "".join(["c", "d"])]  # only the list holds them

    class Score:
        def __float__(self):
            relevant.clear()
            return 1.0

    retrieved = {"".join(["a", "b"]): Score(), "x": 0.5}
    got = ranklens.score(retrieved, relevant, ["mrr", "num_rel", "num_rel_ret"])
    assert got == {"mrr": 1.0, "num_rel": 2.0, "num_rel_ret": 1.0}
    assert relevant == []


# ---------------------------------------------------------------------------
# 6. Small rows (matched by scanning their keys) and large rows (a hash table)
# ---------------------------------------------------------------------------

SIZE_METRICS = ["P@5,20", "recall@10", "mrr", "map", "ndcg@10", "ndcg", "bpref", "num_ret"]


def _fresh(d):
    """An id as a new object of the same text (or an int for "<digits>")."""
    return int(d) if d.isdigit() else "".join([d[:1], d[1:]])


@st.composite
def sized_rows(draw):
    # Rows of 0-30 ids on each side straddle the scanning threshold (16 ids of
    # ground truth and retrieved); the ids are new objects (matched by text, not
    # identity), some ints, retrieved lists repeat ids, ground truth comes as
    # ids, graded dicts (negative labels too) or groups.
    vocab = [*(f"d{i}" for i in range(30)), *(str(i) for i in range(10))]
    retrieved, relevant, kept = [], [], []
    for _ in range(draw(st.integers(1, 6))):
        docs = draw(st.lists(st.sampled_from(vocab), unique=True, max_size=16))
        ret = draw(st.lists(st.sampled_from(vocab), max_size=30))
        kind = draw(st.integers(0, 2))
        if kind == 0:
            rel = [_fresh(d) for d in docs]
        elif kind == 1:
            rel = {_fresh(d): draw(st.sampled_from([-1, 0, 0.5, 1, 2])) for d in docs}
        else:
            cut = draw(st.integers(0, len(docs)))
            rel = [[_fresh(d) for d in docs[:cut]], *map(_fresh, docs[cut:])]
            rel = [g for g in rel if g != []]
        retrieved.append([_fresh(d) for d in ret])
        relevant.append(rel)
        kept.append(list(dict.fromkeys(ret)))
    return retrieved, relevant, kept


def _as_text(rel):
    if isinstance(rel, dict):
        return {str(d): v for d, v in rel.items()}
    return [str(g) if not isinstance(g, list) else [str(d) for d in g] for g in rel]


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    rows=sized_rows(),
    level=st.sampled_from(["positive", 1, 2]),
    options=st.sampled_from([{}, *OPTIONS]),
)
def test_small_and_large_rows_match_evaluate(rows, level, options):
    # The same values as evaluate's Rust backend on the same rows, bit for bit.
    retrieved, relevant, kept = rows
    scorer = Scorer(SIZE_METRICS, relevance_level=level, duplicates="first", **options)
    batch = scorer.batch(retrieved, relevant)
    one = [scorer(r, g) for r, g in zip(retrieved, relevant)]
    text = [_as_text(g) for g in relevant]
    ref = _reference(kept, text, SIZE_METRICS, level, backend="rust", **options)
    for j, m in enumerate(ref.metrics):
        want = ref.values[:, j]
        np.testing.assert_array_equal(batch[m.name], want, err_msg=m.name)
        np.testing.assert_array_equal([s[m.name] for s in one], want, err_msg=m.name)
    for r, g, k in zip(retrieved, relevant, kept):
        if len(k) < len(r):  # a repeated id: duplicates="raise" names both ranks
            i = next(i for i, d in enumerate(r) if str(d) in map(str, r[:i]))
            first = [str(d) for d in r].index(str(r[i]))
            msg = rf'"{r[i]}" is retrieved twice \(ranks {first + 1} and {i + 1}\)'
            with pytest.raises(RanklensInputError, match=msg):
                Scorer(SIZE_METRICS, relevance_level=level)(r, g)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 20])
def test_ground_truth_repeats_are_found_in_rows_of_any_size(n):
    ids = [f"g{i}" for i in range(n)]
    with pytest.raises(RanklensInputError, match=r'"g0" is in groups 0 and 1'):
        ranklens.score(["x"], [["g0"], ["".join(["g", "0"]), *ids[1:]]], "P@1")
    with pytest.raises(RanklensInputError, match=r'"g0" is listed twice in group 0'):
        ranklens.score(["x"], [[*ids, "".join(["g", "0"])]], "P@1")


# ---------------------------------------------------------------------------
# 7. The fused path of a list of relevant ids is the general path, bit for bit
# ---------------------------------------------------------------------------

# Every metric with a fused kernel (core::rows::fused), at cutoffs within and
# beyond the lists and at own levels; bpref (not fused) sends a Scorer to the
# general kernels.
FUSED_METRICS = [
    "P@1,3,50",
    "recall@2,100",
    "f1@3",
    "f1",
    "hits@5",
    "hit_rate@1,20",
    "mrr",
    "mrr@2",
    "map",
    "map@3",
    "gm_map",
    "ndcg",
    "ndcg@2,30",
    "dcg@3",
    "idcg@2",
    "idcg",
    "num_ret@4",
    "num_ret",
    "num_rel",
    "num_rel_ret@3",
    "r_precision",
    "first_rel_rank",
    "first_rel_rank@2",
    "num_q",
    "P(rel=2)@5",
    "map(rel=0.5)",
    "recall(rel=2)@3",
]


@st.composite
def fused_rows(draw):
    # Mostly lists of relevant ids (the fused path), with every other kind of
    # ground truth among them: dicts of label 1 (fused too), graded, negative
    # and float labels, groups, empty and missing cells; retrieved lists with
    # repeats (duplicates="first"), empty or missing.
    vocab = [f"d{i}" for i in range(12)]
    retrieved, relevant = [], []
    for _ in range(draw(st.integers(1, 8))):
        docs = draw(st.lists(st.sampled_from(vocab), unique=True, max_size=6))
        kind = draw(st.sampled_from(["ids"] * 4 + ["ones", "graded", "groups", "empty"]))
        if kind == "ids":
            rel = docs
        elif kind == "ones":
            rel = dict.fromkeys(docs, 1)
        elif kind == "graded":
            rel = {d: draw(st.sampled_from([-1, 0, 0.37, 1, 2])) for d in docs}
        elif kind == "groups":
            cut = draw(st.integers(0, len(docs)))
            rel = [g for g in [docs[:cut], *docs[cut:]] if g != []]
        else:
            rel = draw(st.sampled_from([[], None]))
        ret = draw(st.one_of(st.lists(st.sampled_from(vocab), max_size=14), st.just(None)))
        retrieved.append(ret)
        relevant.append(rel)
    return retrieved, relevant


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=fused_rows(),
    metrics=st.lists(st.sampled_from(FUSED_METRICS), min_size=1, max_size=8, unique=True),
    level=st.sampled_from(["positive", 1, 2, 0.5, 0]),
    options=st.sampled_from([{}, {"miss": None}, {"empty": "nan"}, {"miss": None, "empty": "nan"}]),
)
def test_fused_path_is_the_general_path(rows, metrics, level, options):
    # max_docs beyond every list changes no value and sends rows through
    # eval::score_rows (what evaluate runs); bpref keeps a Scorer off the
    # fused kernels; both must give the fused path's bits.
    retrieved, relevant = rows
    kw = {"relevance_level": level, "duplicates": "first", **options}
    fused = Scorer(metrics, **kw)
    general = Scorer(metrics, max_docs=1000, **kw)
    plain = Scorer([*metrics, "bpref"], **kw)
    got = fused.batch(retrieved, relevant)
    want = general.batch(retrieved, relevant)
    also = plain.batch(retrieved, relevant)
    assert list(got) == fused.names
    for name in got:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        np.testing.assert_array_equal(got[name], also[name], err_msg=name)
    for r, g in zip(retrieved, relevant):
        one, ref = fused(r, g), general(r, g)
        for name, v in one.items():
            np.testing.assert_array_equal(v, ref[name], err_msg=name)


# ---------------------------------------------------------------------------
# 8. The pipelined batch is the serial batch
# ---------------------------------------------------------------------------


def _run(scorer, retrieved, relevant, *args):
    """``_batch(..., *args)``: (values, empty) or the error, and any warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = scorer._batch(retrieved, relevant, *args)
        except Exception as e:  # compared by the caller
            out = (type(e), str(e))
    return out, [(w.category, str(w.message)) for w in caught]


def _both(scorer, retrieved, relevant, chunk):
    """``_run`` serial (one thread), then pipelined in chunks of ``chunk`` rows."""
    return _run(scorer, retrieved, relevant, 1), _run(scorer, retrieved, relevant, 2, chunk)


def _same_batch(serial, pipelined):
    (want, want_warned), (got, got_warned) = serial, pipelined
    assert got_warned == want_warned
    if isinstance(want[0], type):
        assert got == want
        return
    assert [v.tobytes() for v in got[0]] == [v.tobytes() for v in want[0]]
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    rows=fused_rows(),
    metrics=st.lists(st.sampled_from(FUSED_METRICS), min_size=1, max_size=8, unique=True),
    level=st.sampled_from(["positive", 1, 2]),
    options=st.sampled_from([{}, {"miss": None}, {"empty": "nan"}, {"max_docs": 1000}]),
    chunk=st.integers(1, 9),
    duplicates=st.sampled_from(["first", "raise"]),
)
def test_pipelined_batch_is_the_serial_batch(rows, metrics, level, options, chunk, duplicates):
    # Any chunk size, fused or general kernels, repeats raising at some row.
    retrieved, relevant = rows
    scorer = Scorer(metrics, relevance_level=level, duplicates=duplicates, **options)
    _same_batch(*_both(scorer, retrieved, relevant, chunk))


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=200, deadline=None, derandomize=True)
@given(rows=sized_rows(), chunk=st.integers(1, 7), options=st.sampled_from([{}, *OPTIONS]))
def test_pipelined_batch_of_any_rows(rows, chunk, options):
    # Rows small and large, ints, graded dicts and groups.
    retrieved, relevant, _ = rows
    scorer = Scorer(SIZE_METRICS, duplicates="first", **options)
    _same_batch(*_both(scorer, retrieved, relevant, chunk))


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_pipelined_batch_of_long_rows_on_many_metrics(chunk):
    # A chunk ends before its rows once its entries times metrics reach a
    # bound (its scoring stays short): here after a row or a few, of varied
    # lengths (0 to 900 hits, graded rows among them).
    ids = [f"d{i}" for i in range(2000)]
    retrieved = [ids[: 100 + 37 * r] for r in range(50)]
    relevant = [
        {d: 1 + r % 3 for d in ids[: 9 * r : 2]} if r % 5 == 0 else ids[: 18 * r : 2]
        for r in range(50)
    ]
    metrics = [f"rbp(p={(j + 1) / 1002})" for j in range(1000)] + ["ndcg", "map"]
    scorer = Scorer(metrics)
    _same_batch(*_both(scorer, retrieved, relevant, chunk))


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 100])
@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ("", "row 4: an empty document id"),
        (["x", "x"], r'row 4: document "x" is retrieved twice'),
        ([1.5], r"row 4: a retrieved id must be a str or an int, got float"),
    ],
)
def test_pipelined_batch_raises_at_the_serial_row(chunk, bad, match):
    retrieved = [["a", "b"], ["c"]] * 4
    relevant = [["a"], ["c"]] * 4
    retrieved[4] = [bad] if isinstance(bad, str) else bad
    scorer = Scorer(["P@2", "mrr"])
    serial, pipelined = _both(scorer, retrieved, relevant, chunk)
    _same_batch(serial, pipelined)
    assert serial[0][0] is RanklensInputError
    assert re.search(match, serial[0][1])


@pytest.mark.parametrize("chunk", [1, 2, 4])
def test_pipelined_batch_with_lists_shrunk_while_read(chunk):
    # A score's __float__ (run while row 2 is read; an id runs no Python code:
    # an int is formatted from its value) empties the outer lists past row 2:
    # both paths stop there and count the rows alike.
    class Shrink:
        def __float__(self):
            del retrieved[3:], relevant[3:]
            return 1.0

    scorer = Scorer(["P@1", "mrr"])
    out = []
    for args in [(1,), (2, chunk)]:
        retrieved = [["a"], ["b"], {"1": Shrink()}, ["c"], ["d"]]
        relevant = [["a"], ["b"], ["1"], ["c"], ["d"]]
        out.append(_run(scorer, retrieved, relevant, *args))
    _same_batch(*out)
    assert out[0][0] == (RanklensInputError, "5 rows announced, 3 iterated")


@pytest.mark.parametrize("chunk", [1, 3])
def test_pipelined_batch_warns_once(chunk):
    # No label reaches level 2: the serial batch's one warning, then values.
    scorer = Scorer(["P@1", "mrr"], relevance_level=2)
    retrieved = [["a", "b"]] * 5
    relevant = [{"a": 1}] * 5
    serial, pipelined = _both(scorer, retrieved, relevant, chunk)
    _same_batch(serial, pipelined)
    assert [c for c, _ in serial[1]] == [RanklensWarning]


@pytest.mark.parametrize("chunk", [None, 1, 2, 3])
def test_python_code_run_while_reading_changes_the_next_rows(chunk):
    # A score's __float__ (row 1, read by the general path) replaces rows 2
    # and 3 and empties their old lists (their ids freed): the batch reads what
    # the lists hold when it gets there, as the serial batch and one call per row.
    class Swap:
        def __float__(self):
            old = retrieved[2], relevant[3]
            retrieved[2] = ["x", "".join(["n", "2"])]
            relevant[3] = ["".join(["n", "3"])]
            for lst in old:
                lst.clear()
            return 2.0

    def rows():
        ret = [
            ["a"],
            {"5": Swap(), "b": 1.0},
            ["".join(["o", "2"])],
            ["p", "".join(["n", "3"])],
            ["q"],
        ]
        rel = [["a"], ["b"], ["n2", "o2"], ["".join(["o", "3"])], ["q"]]
        return ret, rel

    scorer = Scorer(["P@1", "mrr", "recall@2"])
    retrieved, relevant = rows()
    args = (1,) if chunk is None else (2, chunk)
    values, _ = scorer._batch(retrieved, relevant, *args)
    retrieved, relevant = rows()
    retrieved[1] = {"5": 2.0, "b": 1.0}
    retrieved[2], relevant[3] = ["x", "n2"], ["n3"]
    want = [scorer(r, g) for r, g in zip(retrieved, relevant)]
    for j, name in enumerate(scorer.names):
        assert list(values[j]) == [w[name] for w in want], name


@pytest.mark.parametrize("chunk", [1, 2, 3, 4, 100])
def test_pipelined_batch_raises_the_first_scoring_error(chunk):
    # ties="expected" cannot score equal scores within one group (an error of
    # the scoring, not of the reading): rows 3 and 5 both fail, row 3 is named.
    retrieved = [{"a": 2.0, "b": 1.0}] * 7
    relevant = [[["a", "b"]]] * 7
    for r in (3, 5):
        retrieved[r] = {"a": 1.0, "b": 1.0}
    scorer = Scorer(["P@1", "ndcg"], ties="expected")
    serial, pipelined = _both(scorer, retrieved, relevant, chunk)
    _same_batch(serial, pipelined)
    assert serial[0][0] is RanklensInputError
    assert serial[0][1].startswith("row 3: ties='expected'")


# ---------------------------------------------------------------------------
# 9. Object arrays (a pandas column's own values) are read as lists are
# ---------------------------------------------------------------------------


def _objects(cells, step=1):
    """``cells`` as a 1-D object array; with ``step`` != 1 a strided view of a
    larger array (negative: reversed), holding the same items in order."""
    n = len(cells)
    base = np.empty(n * abs(step), dtype=object)
    view = base if step == 1 else base[:: abs(step)] if step > 0 else base[::step][:n]
    for i, c in enumerate(cells):
        view[i] = c
    return view


@pytest.mark.filterwarnings("ignore::ranklens.RanklensWarning")
@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    rows=fused_rows(),
    metrics=st.lists(st.sampled_from(FUSED_METRICS), min_size=1, max_size=6, unique=True),
    step=st.sampled_from([1, 2, -1, -3]),
    chunk=st.integers(1, 5),
)
def test_object_arrays_are_read_as_lists(rows, metrics, step, chunk):
    retrieved, relevant = rows
    scorer = Scorer(metrics, duplicates="first")
    arrays = _objects(retrieved, step), _objects(relevant, -step)
    for args in [(1,), (2, chunk)]:
        _same_batch(_run(scorer, retrieved, relevant, *args), _run(scorer, *arrays, *args))


def test_object_array_read_details():
    scorer = Scorer(["P@2", "mrr"])
    # np.empty fills an object array with None: a missing cell (empty="zero").
    ret = np.empty(2, dtype=object)
    ret[0] = ["a", "b"]
    got = scorer.batch(ret, _objects([["b"], ["a"]]))
    assert got["mrr"].tolist() == [0.5, 0.0]
    # Other arrays (2-D, not objects) take the general path: rows iterated.
    grid = scorer.batch(np.array([["a", "b"], ["c", "d"]]), [["b"], ["a"]])
    assert grid["mrr"].tolist() == [0.5, 0.0]


@pytest.mark.parametrize("chunk", [None, 1, 2])
def test_object_array_shrunk_while_read(chunk):
    # A score's __float__ (run while row 2 is read) shrinks both arrays in
    # place to 3 rows: the batch stops there, as with lists.
    class Shrink:
        def __float__(self):
            for a in arrays:
                a.resize(3, refcheck=False)
            return 1.0

    scorer = Scorer(["P@1", "mrr"])
    arrays = (
        _objects([["a"], ["b"], {"1": Shrink()}, ["c"], ["d"]]),
        _objects([["a"], ["b"], ["1"], ["c"], ["d"]]),
    )
    args = (1,) if chunk is None else (2, chunk)
    out, _ = _run(scorer, *arrays, *args)
    assert out == (RanklensInputError, "5 rows announced, 3 iterated")


def test_score_frame_reads_pandas_columns_in_place():
    pd = pytest.importorskip("pandas")
    retrieved = [["a", "b", "c"], np.nan, ["c", "d"], ["b"], []]
    relevant = [["b"], [["a"]], {"c": 2, "d": 1}, None, ["x"]]
    df = pd.DataFrame(
        {"q": list("vwxyz"), "retrieved_ids": retrieved, "retrieval_gt": relevant},
        index=[10, 11, 12, 13, 14],
    )
    metrics = ["P@2", "mrr", "ndcg@3", "recall"]
    want = ranklens.score_batch(retrieved, relevant, metrics, empty="nan")
    got = ranklens.score_frame(df, metrics=metrics, semantics="trec", empty="nan")
    assert list(got.index) == [10, 11, 12, 13, 14]
    assert list(got.columns) == list(want)
    for name in want:
        np.testing.assert_array_equal(got[name].to_numpy(), want[name], err_msg=name)
    # Each frame has its own view of the cached column index.
    got.columns.name = "metric"
    assert ranklens.score_frame(df, metrics=metrics, semantics="trec").columns.name is None
    # A repeated column name is refused by name (df[col] is then a frame).
    twice = pd.concat([df, df[["retrieved_ids"]]], axis=1)
    with pytest.raises(RanklensInputError, match="2 columns named 'retrieved_ids'"):
        ranklens.score_frame(twice, metrics=metrics, semantics="trec")
    # Cells held as numpy arrays (what pandas.read_parquet gives for lists).
    arrays = df.assign(retrieved_ids=[np.array(r) if isinstance(r, list) else r for r in retrieved])
    again = ranklens.score_frame(arrays, metrics=metrics, semantics="trec", empty="nan")
    for name in want:
        np.testing.assert_array_equal(again[name].to_numpy(), want[name], err_msg=name)
