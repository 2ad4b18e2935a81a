"""Diversity (intent-aware) metrics on subtopic qrels.

1. Hand-derived values (the README's worked example among them).
2. Both backends against pyndeval (NIST ndeval 4.5 compiled in) per query to
   1e-9, on hypothesis-generated subtopic qrels and runs with score ties,
   unjudged documents, queries without a relevant subtopic and queries missing
   from the run.  pyndeval breaks score ties by document id ascending, ranklens
   (trec_eval) by document id descending: pyndeval is handed ranklens' order as
   distinct scores, so both score the same ranking.
3. Rust against the reference backend (grouped qrels, judged_only, max_docs,
   ties="input") and the input paths (rows, TREC diversity file, groups, frames).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ranklens
from ranklens import Qrels, Run
from ranklens.errors import ParseError, RanklensInputError, UnknownMetricError

try:
    import pyndeval
except ImportError:  # pragma: no cover - optional test dependency
    pyndeval = None

TOL = 1e-9
BACKENDS = ["rust", "python"]


def _values(qrels: Qrels, run: dict, metrics: list[str], backend: str, **kw) -> dict:
    res = ranklens.evaluate(qrels, run, metrics, backend=backend, **kw)
    return {m: res.per_query(m) for m in res.names}


# ---------------------------------------------------------------------------
# 1. Hand-derived values
# ---------------------------------------------------------------------------

# A RAG question needing three pieces of information (subtopics A, B, C).
# p1 covers A and B, p2 covers A, p3 covers C, p4 covers nothing.
EXAMPLE = [
    ("q", "A", "p1", 1),
    ("q", "B", "p1", 1),
    ("q", "A", "p2", 1),
    ("q", "C", "p3", 1),
    ("q", "A", "p4", 0),
]
# Both retrievers rank the three relevant passages first; retriever 1 repeats A
# before reaching C, retriever 2 covers everything first.
REDUNDANT = {"q": {"p1": 4.0, "p2": 3.0, "p3": 2.0, "p4": 1.0}}
DIVERSE = {"q": {"p1": 4.0, "p3": 3.0, "p2": 2.0, "p4": 1.0}}
# p1, p2, p4, p3: the relevant p3 after a useless p4.
REPEAT = {"q": {"p1": 4.0, "p2": 3.0, "p4": 2.0, "p3": 1.0}}


def _d(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_worked_example(backend):
    qrels = Qrels.from_subtopics(EXAMPLE)
    metrics = ["alpha_nDCG@3", "StRecall@2", "P_IA@2", "nDCG@3"]
    red = _values(qrels, REDUNDANT, metrics, backend)
    div = _values(qrels, DIVERSE, metrics, backend)
    # Novelty gains (alpha = 0.5): redundant p1 2, p2 0.5 (A seen once), p3 1;
    # diverse p1 2, p3 1, p2 0.5.  Greedy ideal: p1 2, p3 1, p2 0.5.
    ideal = 2 * _d(1) + 1 * _d(2) + 0.5 * _d(3)
    red_dcg = 2 + 0.5 * _d(2) + 1 * _d(3)
    assert red["alpha_ndcg@3"]["q"] == pytest.approx(red_dcg / ideal, abs=1e-12)
    assert div["alpha_ndcg@3"]["q"] == pytest.approx(1.0, abs=1e-12)
    # Coverage of the top 2: {A, B} of 3, then {A, B, C}.
    assert red["st_recall@2"]["q"] == pytest.approx(2 / 3)
    assert div["st_recall@2"]["q"] == pytest.approx(1.0)
    # P-IA@2: (2 + 1) / (2 * 3) for both: it counts subtopic hits, repeats too.
    assert red["p_ia@2"]["q"] == pytest.approx(0.5)
    assert div["p_ia@2"]["q"] == pytest.approx(0.5)
    # Ordinary nDCG@3 (a document is relevant when relevant to any subtopic)
    # cannot tell the two apart: p1, p2, p3 are all relevant.
    assert red["ndcg@3"]["q"] == pytest.approx(1.0)
    assert div["ndcg@3"]["q"] == pytest.approx(1.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hand_derived_family_values(backend):
    # Ranking p1, p2, p4, p3 (REPEAT): gains 2, 0.5, 0, 1; S = 3.
    qrels = Qrels.from_subtopics(EXAMPLE)
    names = ["ERR_IA@4", "nERR_IA@4", "alpha_DCG@1", "NRBP", "nNRBP", "AP_IA"]
    v = {k: x["q"] for k, x in _values(qrels, REPEAT, names, backend).items()}
    err = 2 + 0.5 / 2 + 1 / 4
    ii = 3 + 1.5 / 2 + 0.75 / 3 + 0.375 / 4
    assert v["err_ia@4"] == pytest.approx(err / ii, abs=1e-12)
    assert v["nerr_ia@4"] == pytest.approx(err / (2 + 1 / 2 + 0.5 / 3), abs=1e-12)
    assert v["nerr_ia@4"] == pytest.approx(err / (2 + 1 / 2 + 0.5 / 3), abs=1e-12)
    assert v["alpha_dcg@1"] == 2.0  # ndeval divides nothing at k = 1
    run_rbp = 2 + 0.5 * 0.5 + 1 * 0.125
    assert v["nrbp"] == pytest.approx(run_rbp * 0.75 / 3, abs=1e-12)
    assert v["nnrbp"] == pytest.approx(run_rbp / (2 + 0.5 + 0.5 * 0.25), abs=1e-12)
    # AP per subtopic: A (p1, p2) 1/1 + 2/2 over 2 = 1; B (p1) 1; C (p3) 1/4.
    assert v["ap_ia"] == pytest.approx((1 + 1 + 0.25) / 3, abs=1e-12)


def test_names_and_parameters():
    from ranklens._names import parse_metrics

    got = [m.name for m in parse_metrics(["alpha_nDCG(alpha=0.7)@20", "alpha-nDCG@5", "MAP-IA"])]
    assert got == ["alpha_ndcg(alpha=0.7)@20", "alpha_ndcg@5", "ap_ia"]
    assert [m.name for m in parse_metrics(["NRBP(beta=0.8)", "strec@10", "P-IA@5"])] == [
        "nrbp(beta=0.8)",
        "st_recall@10",
        "p_ia@5",
    ]
    # without a cutoff: the whole ranking (k = its length)
    assert [m.name for m in parse_metrics(["alpha_nDCG", "P_IA"])] == ["alpha_ndcg", "p_ia"]
    for bad in ["alpha_nDCG(alpha=2)@5", "NRBP(beta=-1)", "NRBP@5"]:
        with pytest.raises(UnknownMetricError):
            parse_metrics([bad])


def test_plain_qrels_are_refused():
    with pytest.raises(UnknownMetricError, match="subtopic"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["alpha_nDCG@5"])
    with pytest.raises(RanklensInputError, match="subtopic"):
        ranklens.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["alpha_nDCG@5"], backend="python")
    with pytest.raises(UnknownMetricError, match="expected"):
        ranklens.evaluate(Qrels.from_subtopics(EXAMPLE), DIVERSE, ["NRBP"], ties="expected")


# ---------------------------------------------------------------------------
# 2. pyndeval, per query
# ---------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(8)]
UNJUDGED = ["u0", "u1", "u2"]


@st.composite
def cases(draw):
    nq = draw(st.integers(1, 3))
    rows, run = [], {}
    for qi in range(nq):
        q = f"q{qi}"
        judged = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        for d in judged:
            subs = draw(st.lists(st.sampled_from("1234"), min_size=1, max_size=3, unique=True))
            for s in subs:
                rows.append((q, s, d, draw(st.sampled_from([0, 0, 1, 1, 2]))))
        if draw(st.booleans()) or qi == 0:
            ranked = draw(
                st.lists(st.sampled_from(DOCS + UNJUDGED), min_size=0, max_size=11, unique=True)
            )
            run[q] = {d: float(draw(st.integers(0, 3))) for d in ranked}  # many ties
    return rows, run


def _trec_order(scores: dict) -> list[str]:
    return [d for d, _ in sorted(scores.items(), key=lambda x: (x[1], x[0].encode()), reverse=True)]


KS = [1, 2, 3, 5, 10, 20]


def _pyndeval(rows, run, level, alpha, beta):
    names = [
        f"{m}@{k}"
        for m in ["ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec"]
        for k in KS
    ]
    names += ["NRBP", "nNRBP", "MAP-IA"]
    pruns = [
        (q, d, float(len(scores) - i))
        for q, scores in sorted(run.items())
        for i, d in enumerate(_trec_order(scores))
    ]
    got = pyndeval.ndeval(rows, pruns, measures=names, alpha=alpha, beta=beta) if pruns else {}
    if level != 1:
        ev = pyndeval.RelevanceEvaluator(rows, names, relevance_level=level, alpha=alpha, beta=beta)
        got = ev.evaluate(pruns) if pruns else {}
    return got


def _ours(alpha, beta):
    a, b = f"(alpha={alpha})", f"(alpha={alpha},beta={beta})"
    pairs = []
    for k in KS:
        pairs += [
            (f"ERR-IA@{k}", f"ERR_IA{a}@{k}"),
            (f"nERR-IA@{k}", f"nERR_IA{a}@{k}"),
            (f"alpha-DCG@{k}", f"alpha_DCG{a}@{k}"),
            (f"alpha-nDCG@{k}", f"alpha_nDCG{a}@{k}"),
            (f"P-IA@{k}", f"P_IA@{k}"),
            (f"strec@{k}", f"StRecall@{k}"),
        ]
    pairs += [("NRBP", f"NRBP{b}"), ("nNRBP", f"nNRBP{b}"), ("MAP-IA", "AP_IA")]
    return pairs


@pytest.mark.skipif(pyndeval is None, reason="pyndeval not installed")
@pytest.mark.filterwarnings("ignore::ranklens.errors.RanklensWarning")  # level 2, labels <= 1
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=cases(),
    level=st.sampled_from([1, 2]),
    alpha=st.sampled_from([0.5, 0.25, 0.75, 1.0]),
    beta=st.sampled_from([0.5, 0.75]),
)
def test_equal_to_pyndeval(case, level, alpha, beta):
    rows, run = case
    want = _pyndeval(rows, run, level, alpha, beta)
    qrels = Qrels.from_subtopics(rows)
    pairs = _ours(alpha, beta)
    for backend in BACKENDS:
        res = ranklens.evaluate(
            qrels, run, [ours for _, ours in pairs], relevance_level=level, backend=backend
        )
        for nd, ours in pairs:
            per = res.per_query(ours)
            for q in qrels:
                got = per[q]
                if q not in want:  # missing from the run: ndeval skips it
                    assert got == 0.0, (backend, q, ours)
                    continue
                expected = want[q][nd]
                if math.isnan(expected):  # nNRBP without a relevant subtopic: 0/0
                    expected = 0.0
                assert got == pytest.approx(expected, abs=TOL), (backend, q, ours, rows, run)


# ---------------------------------------------------------------------------
# 3. Backends, options and input paths
# ---------------------------------------------------------------------------

ALL = [
    "alpha_nDCG@5",
    "alpha_DCG(alpha=0.25)@3",
    "ERR_IA@4",
    "nERR_IA(alpha=0.75)@10",
    "NRBP(beta=0.9)",
    "nNRBP",
    "P_IA@3",
    "AP_IA",
    "StRecall@2",
    "ndcg@5",
    "map",
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=cases(),
    judged_only=st.booleans(),
    max_docs=st.sampled_from([None, 1, 4]),
    ties=st.sampled_from(["trec", "input"]),
)
def test_backends_agree(case, judged_only, max_docs, ties):
    rows, run = case
    qrels = Qrels.from_subtopics(rows)
    kw = {"judged_only": judged_only, "max_docs": max_docs, "ties": ties}
    rust = _values(qrels, run, ALL, "rust", **kw)
    ref = _values(qrels, run, ALL, "python", **kw)
    for name, per in rust.items():
        for q, v in per.items():
            assert v == pytest.approx(ref[name][q], abs=1e-12), (name, q)


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(
        st.lists(st.sampled_from(DOCS), min_size=1, max_size=3, unique=True),
        min_size=0,
        max_size=4,
    ),
    ranked=st.lists(st.sampled_from(DOCS + UNJUDGED), max_size=10, unique=True),
)
def test_groups_are_subtopics(groups, ranked):
    # Keep each document in one group (the rule of grouped qrels).
    seen: set[str] = set()
    clean = []
    for g in groups:
        members = [d for d in g if d not in seen]
        seen.update(members)
        if members:
            clean.append(members)
    run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
    grouped = Qrels.from_groups({"q": clean})
    rows = [("q", str(g), d, 1) for g, members in enumerate(clean) for d in members]
    metrics = ["alpha_nDCG@5", "ERR_IA@3", "nNRBP", "AP_IA", "StRecall@3", "P_IA@2"]
    if not rows:
        for backend in BACKENDS:
            got = _values(grouped, run, metrics, backend)
            assert all(v["q"] == 0.0 for v in got.values())
        return
    plain = Qrels.from_subtopics(rows)
    for backend in BACKENDS:
        a = _values(grouped, run, metrics, backend)
        b = _values(plain, run, metrics, backend)
        for m in a:
            assert a[m]["q"] == pytest.approx(b[m]["q"], abs=1e-12), (backend, m)


def test_subtopic_qrels_for_the_other_metrics():
    qrels = Qrels.from_subtopics([*EXAMPLE, ("q", "B", "p5", 2)])
    # One label per document: the largest of its subtopic labels.
    assert qrels.to_dict() == {"q": {"p1": 1.0, "p2": 1.0, "p3": 1.0, "p4": 0.0, "p5": 2.0}}
    assert qrels.has_subtopics and not Qrels({"q": {"a": 1}}).has_subtopics
    back = qrels.subtopics()
    assert back["q"]["p1"] == {"A": 1.0, "B": 1.0}
    assert back["q"]["p4"] == {"A": 0.0}
    assert Qrels.from_groups({"q": [["a", "b"], ["c"]]}).subtopics() == {
        "q": {"a": {"0": 1.0}, "b": {"0": 1.0}, "c": {"1": 1.0}}
    }


def test_from_trec_subtopics(tmp_path):
    path = tmp_path / "div.qrels"
    path.write_text(
        "# TREC Web diversity qrels\n"
        + "".join(f"{q} {s} {d} {label}\n" for q, s, d, label in EXAMPLE)
        + "\n"
    )
    a = Qrels.from_trec(path, subtopics=True)
    assert a.subtopics() == Qrels.from_subtopics(EXAMPLE).subtopics()
    m = ["alpha_nDCG@3", "NRBP"]
    assert _values(a, REDUNDANT, m, "rust") == _values(
        Qrels.from_subtopics(EXAMPLE), REDUNDANT, m, "rust"
    )
    import gzip

    gz = tmp_path / "div.qrels.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert Qrels.from_trec(gz, subtopics=True).subtopics() == a.subtopics()
    bad = tmp_path / "bad.qrels"
    bad.write_text("q A p1 1\nq A p2\n")
    with pytest.raises(ParseError, match=r"bad.qrels:2"):
        Qrels.from_trec(bad, subtopics=True)


def test_from_subtopics_input_errors():
    with pytest.raises(RanklensInputError, match="twice"):
        Qrels.from_subtopics([("q", "A", "d", 1), ("q", "A", "d", 0)])
    with pytest.raises(RanklensInputError, match="label"):
        Qrels.from_subtopics([("q", "A", "d", "x")])
    for bad in [float("nan"), 10**400, True]:
        with pytest.raises(RanklensInputError, match="label"):
            Qrels.from_subtopics([("q", "A", "d", bad)])
    with pytest.raises(RanklensInputError, match="tuple"):
        Qrels.from_subtopics([("q", "A", "d")])
    if pyndeval is not None:
        # pyndeval's named tuples are read by attribute.
        rows = [pyndeval.SubtopicQrel("q", "A", "d", 1)]
        assert Qrels.from_subtopics(rows).subtopics() == {"q": {"d": {"A": 1.0}}}


def test_frame_with_subtopic_column(tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(EXAMPLE, columns=["query_id", "subtopic", "doc_id", "relevance"])
    want = Qrels.from_subtopics(EXAMPLE).subtopics()
    assert Qrels.from_pandas(df, subtopic_col="subtopic").subtopics() == want
    pa = pytest.importorskip("pyarrow")
    table = pa.Table.from_pandas(df)
    assert Qrels.from_arrow(table, subtopic_col="subtopic").subtopics() == want
    df.to_parquet(tmp_path / "q.parquet")
    assert Qrels.from_parquet(tmp_path / "q.parquet", subtopic_col="subtopic").subtopics() == want
    pl = pytest.importorskip("polars")
    assert Qrels.from_polars(pl.from_pandas(df), subtopic_col="subtopic").subtopics() == want


def test_run_object_and_missing_query():
    qrels = Qrels.from_subtopics([*EXAMPLE, ("z", "A", "x", 1)])
    res = ranklens.evaluate(qrels, Run(REDUNDANT), ["alpha_nDCG@3", "nNRBP"])
    assert res.per_query("nnrbp")["z"] == 0.0
    assert res.per_query("alpha_ndcg@3")["z"] == 0.0


def test_readme_example():
    # The README's "Coverage and redundancy" example, its numbers as printed there.
    qrels = Qrels.from_subtopics(
        [("q", "A", "p1", 1), ("q", "B", "p1", 1), ("q", "A", "p2", 1), ("q", "C", "p3", 1)]
    )
    metrics = ["ndcg@3", "StRecall@2", "alpha_nDCG@3"]
    for backend in BACKENDS:
        red = ranklens.evaluate(qrels, {"q": ["p1", "p2", "p3", "p4"]}, metrics, backend=backend)
        div = ranklens.evaluate(qrels, {"q": ["p1", "p3", "p2", "p4"]}, metrics, backend=backend)
        assert [round(red[m], 3) for m in metrics] == [1.0, 0.667, 0.977]
        assert [round(div[m], 3) for m in metrics] == [1.0, 1.0, 1.0]
        # alpha-nDCG@3 by hand: (2 + 0.5 / log2 3 + 1 / 2) / (2 + 1 / log2 3 + 0.5 / 2)
        want = (2 + 0.5 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3) + 0.25)
        assert red["alpha_nDCG@3"] == pytest.approx(want, abs=1e-12)


def test_registry_flag_matches_the_core():
    # FAMILIES[...].subtopics is exactly the set the Rust core refuses on plain
    # qrels and on the paths without subtopic judgments (dense arrays here).
    import numpy as np

    from ranklens._names import FAMILIES

    for name, fam in FAMILIES.items():
        metric = f"{name}@3" if fam.cutoff == "required" else name
        args = ({"q": {"a": 1}}, {"q": {"a": 1.0}}, [metric])
        if fam.subtopics:
            with pytest.raises(UnknownMetricError, match="subtopic"):
                ranklens.evaluate(*args)
            with pytest.raises(UnknownMetricError, match="subtopic"):
                ranklens.evaluate_dense(np.array([[1.0]]), np.array([[1.0]]), [metric])
        else:
            ranklens.evaluate(*args)


@settings(max_examples=40, deadline=None)
@example(
    sizes=[2, 1],
    labels=[-1.0, 1.0, 0.0, 0.0],
    ranked=["d0", "d1", "d2"],
    judged_only=True,
    max_docs=None,
)  # d1, second member of a group whose first was dropped, keeps its rank (label 0)
@given(
    sizes=st.lists(st.integers(1, 3), max_size=4),
    labels=st.lists(st.sampled_from([-1.0, 0.0, 1.0, 2.0]), min_size=4, max_size=4),
    ranked=st.lists(st.sampled_from(DOCS + UNJUDGED), max_size=10, unique=True),
    judged_only=st.booleans(),
    max_docs=st.sampled_from([None, 3]),
)
def test_grouped_backends_agree(sizes, labels, ranked, judged_only, max_docs):
    # Negative group labels with judged_only: the ranking is that of the other
    # metrics on grouped qrels (-J after relabelling) on both backends.
    docs = iter(DOCS)
    groups = [[next(docs) for _ in range(n)] for n in sizes if sum(sizes) <= len(DOCS)]
    qrels = Qrels.from_groups({"q": groups}, labels={"q": labels[: len(groups)]})
    run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
    kw = {"judged_only": judged_only, "max_docs": max_docs}
    metrics = ["alpha_nDCG@4", "ERR_IA@3", "NRBP", "AP_IA", "P_IA@3", "StRecall@4"]
    rust = _values(qrels, run, metrics, "rust", **kw)
    ref = _values(qrels, run, metrics, "python", **kw)
    for m in rust:
        assert rust[m]["q"] == pytest.approx(ref[m]["q"], abs=1e-12), m


# ---------------------------------------------------------------------------
# Writing subtopic qrels, and the CLI reading them
# ---------------------------------------------------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=cases())
def test_to_trec_round_trip(tmp_path, case):
    rows, _ = case
    qrels = Qrels.from_subtopics(rows)
    path = tmp_path / "div.qrels.gz"
    qrels.to_trec(path)
    assert Qrels.from_trec(path, subtopics=True).subtopics() == qrels.subtopics()
    # The one-label view: a document's largest subtopic label.
    flat = tmp_path / "flat.qrels"
    qrels.to_trec(flat, subtopics=False)
    best: dict = {}
    for q, _, d, label in rows:
        best.setdefault(q, {})[d] = max(best.get(q, {}).get(d, label), label)
    assert Qrels.from_trec(flat).to_dict() == best


def test_to_trec_writes_the_diversity_format(tmp_path):
    path = tmp_path / "div.qrels"
    Qrels.from_subtopics(EXAMPLE).to_trec(path)
    # Rows in storage order (documents by id), a document's subtopics in the
    # order they were given.
    assert path.read_text() == "q A p1 1\nq B p1 1\nq A p2 1\nq C p3 1\nq A p4 0\n"
    with pytest.raises(RanklensInputError, match="no subtopic judgments"):
        Qrels({"q": {"d": 1}}).to_trec(path, subtopics=True)
    with pytest.raises(RanklensInputError, match="subtopics must be"):
        Qrels.from_subtopics(EXAMPLE).to_trec(path, subtopics="yes")
    with pytest.raises(RanklensInputError, match="cannot be written"):
        Qrels.from_subtopics([("q", "A B", "d", 1)]).to_trec(path)


def test_cli_reads_subtopic_qrels(tmp_path, capsys):
    from ranklens.cli import main

    qrels = tmp_path / "div.qrels"
    Qrels.from_subtopics(EXAMPLE).to_trec(qrels)
    run = tmp_path / "run.txt"
    Run(REDUNDANT).to_trec(run)
    code = main(
        [
            str(qrels),
            str(run),
            "-m",
            "alpha_nDCG@3",
            "-m",
            "st_recall@2",
            "--subtopics",
            "--format",
            "json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    import json

    got = json.loads(out)[0]["aggregate"]
    # The worked example's values (test_worked_example, derived by hand).
    ideal = 2 * _d(1) + 1 * _d(2) + 0.5 * _d(3)
    assert got["alpha_ndcg@3"] == pytest.approx((2 + 0.5 * _d(2) + 1 * _d(3)) / ideal, abs=1e-12)
    assert got["st_recall@2"] == pytest.approx(2 / 3, abs=1e-12)
    # Without the flag the second field is an iteration number: the diversity
    # metrics refuse qrels without subtopics.
    assert main([str(qrels), str(run), "-m", "alpha_nDCG@3"]) == 1
    assert "pass --subtopics" in capsys.readouterr().err
    # One subtopic a document reads as plain qrels, which the diversity
    # metrics refuse.
    one = tmp_path / "one.qrels"
    one.write_text("q A p1 1\nq C p3 1\n")
    assert main([str(one), str(run), "-m", "alpha_nDCG@3"]) == 1
    assert "from_subtopics" in capsys.readouterr().err
    assert main([str(one), str(run), "-m", "alpha_nDCG@3", "--subtopics"]) == 0


def test_explain_keeps_subtopics():
    qrels = Qrels.from_subtopics([*EXAMPLE, ("other", "A", "x", 1)])
    e = ranklens.explain(qrels, REDUNDANT, "q", metrics=["alpha_nDCG@3", "ndcg@3"])
    # The worked example's value (test_worked_example, derived by hand).
    ideal = 2 * _d(1) + 1 * _d(2) + 0.5 * _d(3)
    want = (2 + 0.5 * _d(2) + 1 * _d(3)) / ideal
    assert e.values["alpha_ndcg@3"] == pytest.approx(want, abs=1e-12)
    assert e.values["ndcg@3"] == 1.0
