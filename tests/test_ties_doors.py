"""``ties="best"`` / ``"worst"`` on the doors past ``evaluate``: ``compare`` and
``ranklens compare``, ``evaluate_files``, ``ranklens evaluate``, ``score_batch``,
``score_frame``, the report's tie bounds; and where they are refused.

Expected values come from pytrec_eval on the run re-sorted by hand: among equal
scores, higher labels first (best) or lower labels first (worst), a document not
in the qrels as label 0 and a negative label below it, then document id
descending (trec_eval's order); the re-sorted run has distinct scores, so
pytrec_eval has no tie to break.  The data hold ties across graded, zero,
negative and unjudged documents, and a qrels query missing from the run (0 for
every metric here).  Dask and Spark run the same options in ``_dist_cases.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import ranklens
from ranklens import Qrels, Run
from ranklens.errors import RanklensInputError

pytrec_eval = pytest.importorskip("pytrec_eval")

QRELS = {
    "q1": {"a": 2, "b": 1, "c": -1, "d": 0, "e": 1},
    "q2": {"a": 1, "f": 3, "g": 1},
    "q3": {"z": 1},  # not in the runs
}
# q1: a tie of a (2), b (1), u (unjudged), c (-1); a tie of e (1) and d (0).
# q2: a tie of f (3), a (1), y (unjudged); a tie of w (unjudged) and g (1).
RUN = {
    "q1": {"x": 3.0, "a": 1.0, "b": 1.0, "c": 1.0, "u": 1.0, "d": 0.5, "e": 0.5},
    "q2": {"f": 2.0, "a": 2.0, "y": 2.0, "w": 1.0, "g": 1.0},
}
# Another run, also with ties (different ones).
OTHER = {
    "q1": {"e": 2.0, "b": 2.0, "x": 1.0, "a": 1.0},
    "q2": {"g": 1.0, "y": 1.0, "f": 0.5},
    "q9": {"a": 1.0},  # not in the qrels
}
# ranklens name -> pytrec_eval name
MEASURES = {
    "map": "map",
    "mrr": "recip_rank",
    "P@2": "P_2",
    "ndcg@3": "ndcg_cut_3",
    "recall@3": "recall_3",
}
NAMES = list(MEASURES)
QIDS = sorted(QRELS)


def resorted(run: dict, ties: str) -> dict:
    """``run`` with distinct scores giving its best (worst) order among ties."""
    sign = {"best": 1, "worst": -1, "trec": 0}[ties]
    out = {}
    for q, docs in run.items():
        labels = QRELS.get(q, {})
        order = sorted(
            docs, key=lambda d: (docs[d], sign * labels.get(d, 0), d.encode()), reverse=True
        )
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


def reference(run: dict, ties: str) -> np.ndarray:
    """pytrec_eval's per-query values (qrels queries x NAMES) of the re-sorted run."""
    ev = pytrec_eval.RelevanceEvaluator(QRELS, set(MEASURES.values()))
    got = ev.evaluate(resorted(run, ties))
    return np.array(
        [[got[q][MEASURES[m]] if q in got else 0.0 for m in NAMES] for q in QIDS],
    )


def test_the_reference_by_hand() -> None:
    # q1 best: x a b u c | e d; worst: x c u b a | d e; trec: x u c b a | e d.
    rr = {t: reference(RUN, t)[0, NAMES.index("mrr")] for t in ("best", "worst", "trec")}
    assert rr == {"best": 1 / 2, "worst": 1 / 4, "trec": 1 / 4}
    # q2 best: f a y | g w -> AP (1 + 1 + 3/4) / 3; worst: y a f | w g.
    assert reference(RUN, "best")[1, 0] == pytest.approx((1 + 1 + 3 / 4) / 3)
    assert reference(RUN, "worst")[1, 0] == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
    # trec order is what ranklens gives by default: the reference's sort is right.
    want = reference(RUN, "trec")
    got = ranklens.evaluate(QRELS, RUN, NAMES).values
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


TIES = ["best", "worst"]


@pytest.mark.parametrize("ties", TIES)
def test_compare(ties: str) -> None:
    cmp = ranklens.compare(QRELS, {"run": RUN, "other": OTHER}, NAMES, ties=ties)
    assert cmp.query_ids == QIDS
    assert cmp.settings["ties"] == ties
    for name, run in (("run", RUN), ("other", OTHER)):
        np.testing.assert_allclose(cmp.scores[name], reference(run, ties), rtol=0, atol=1e-6)
    row = cmp.result("map", "run", "other")
    want = reference(RUN, ties)[:, 0].mean() - reference(OTHER, ties)[:, 0].mean()
    assert row.diff == pytest.approx(want, abs=1e-6)
    assert f"ties {ties}" in str(cmp)
    assert "ties" not in str(ranklens.compare(QRELS, {"run": RUN, "other": OTHER}, ["map"]))


def test_compare_refuses_an_unknown_tie_order() -> None:
    with pytest.raises(RanklensInputError, match="'best' or 'worst'"):
        ranklens.compare(QRELS, {"run": RUN, "other": OTHER}, ["map"], ties="random")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ranklens.cli", *args], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[str, str, str]:
    d = tmp_path_factory.mktemp("ties-doors")
    qrels = d / "qrels.txt"
    qrels.write_text(
        "".join(
            f"{q} 0 {doc} {label}\n" for q, docs in QRELS.items() for doc, label in docs.items()
        )
    )
    paths = []
    for name, run in (("run", RUN), ("other", OTHER)):
        p = d / f"{name}.txt"
        # Rows in an order that is neither the ranking nor trec's tie order.
        p.write_text(
            "".join(
                f"{q} Q0 {doc} {i + 1} {score} {name}\n"
                for q, docs in run.items()
                for i, (doc, score) in enumerate(sorted(docs.items()))
            )
        )
        paths.append(str(p))
    return str(qrels), paths[0], paths[1]


@pytest.mark.parametrize("ties", TIES)
def test_cli_compare(files, ties: str) -> None:
    qrels, run, other = files
    p = cli(
        "compare", qrels, run, other, "-m", "map", "-m", "mrr", "--ties", ties, "--format", "json"
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["settings"]["ties"] == ties
    for name, data in (("run", RUN), ("other", OTHER)):
        want = reference(data, ties).mean(axis=0)
        assert out["means"][name]["map"] == pytest.approx(want[0], abs=1e-6)
        assert out["means"][name]["mrr"] == pytest.approx(want[1], abs=1e-6)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("chunk_rows", [1, 3, 100])
def test_evaluate_files(files, ties: str, chunk_rows: int) -> None:
    qrels, run, _ = files
    res = ranklens.evaluate_files(qrels, run, NAMES, ties=ties, chunk_rows=chunk_rows)
    assert res.query_ids == QIDS
    np.testing.assert_allclose(res.values, reference(RUN, ties), rtol=0, atol=1e-6)


@pytest.mark.parametrize("stream", [[], ["--stream"]])
@pytest.mark.parametrize("ties", TIES)
def test_cli_evaluate(files, ties: str, stream: list[str]) -> None:
    qrels, run, _ = files
    p = cli(qrels, run, "-m", "map", "-m", "mrr", "--ties", ties, "--format", "json", *stream)
    assert p.returncode == 0, p.stderr
    means = reference(RUN, ties).mean(axis=0)
    (out,) = json.loads(p.stdout)
    assert out["aggregate"]["map"] == pytest.approx(means[0], abs=1e-6)
    assert out["aggregate"]["mrr"] == pytest.approx(means[1], abs=1e-6)


@pytest.mark.parametrize("ties", TIES)
def test_score_batch_and_score_frame(ties: str) -> None:
    pd = pytest.importorskip("pandas")
    qids = ["q1", "q2"]
    want = reference(RUN, ties)[:2]
    got = ranklens.score_batch([RUN[q] for q in qids], [QRELS[q] for q in qids], NAMES, ties=ties)
    np.testing.assert_allclose(np.column_stack([got[m] for m in got]), want, atol=1e-6)
    df = pd.DataFrame({"ret": [RUN[q] for q in qids], "rel": [QRELS[q] for q in qids]})
    out = ranklens.score_frame(df, "ret", "rel", NAMES, ties=ties, relevance_level=1)
    np.testing.assert_allclose(out.to_numpy(), want, atol=1e-6)


def test_score_frame_autorag_refuses_a_tie_order() -> None:
    # AutoRAG's definitions rank a list of ids as given: no order of ties to choose.
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"retrieved_ids": [["a", "b"]], "retrieval_gt": [[["a"]]]})
    for ties in ("best", "worst", "expected", "input"):
        with pytest.raises(RanklensInputError, match="semantics='trec' only"):
            ranklens.score_frame(df, semantics="autorag", ties=ties)
    ranklens.score_frame(df, semantics="autorag", ties="trec")


_DATA = re.compile(r'<script type="application/json" id="ranklens-data">(.*?)</script>', re.S)


def report_data(text: str) -> dict:
    m = _DATA.search(text)
    assert m is not None
    return json.loads(m.group(1))


def test_report_shows_the_tie_bounds_of_a_run_with_ties() -> None:
    no_ties = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": ["f", "g"]}
    runs = {"run": RUN, "plain": no_ties, "other": OTHER}
    data = report_data(ranklens.report(QRELS, runs, NAMES))
    bounds = data["tieBounds"]
    assert bounds[1] is None  # a run without tied scores
    cmp = ranklens.compare(QRELS, runs, NAMES)
    for i, (name, run) in enumerate((("run", RUN), ("other", OTHER))):
        got = np.array(bounds[2 * i], dtype=float)  # metrics x (trec, best, worst)
        assert got[:, 0].tolist() == [cmp.means[name][m.name] for m in cmp.metrics]
        np.testing.assert_allclose(got[:, 1], reference(run, "best").mean(axis=0), atol=1e-6)
        np.testing.assert_allclose(got[:, 2], reference(run, "worst").mean(axis=0), atol=1e-6)
    # The bounds hold the trec mean between them (these metrics reward higher labels higher).
    got = np.array(bounds[0], dtype=float)
    assert (got[:, 1] >= got[:, 0] - 1e-12).all() and (got[:, 0] >= got[:, 2] - 1e-12).all()
    assert (got[:, 1] > got[:, 2]).any()


def test_report_of_grouped_qrels_has_no_tie_bounds() -> None:
    qrels = Qrels.from_groups({"q1": [["a", "b"], ["e"]], "q2": [["f"]]})
    data = report_data(ranklens.report(qrels, {"run": RUN, "other": OTHER}, ["mrr"]))
    assert data["tieBounds"] == [None, None]


def test_report_refuses_a_comparison_in_another_tie_order() -> None:
    # The rankings shown are in trec order: numbers of another order would not match them.
    runs = {"run": RUN, "other": OTHER}
    for ties in ("best", "worst", "expected", "input"):
        with pytest.raises(RanklensInputError, match="tie order"):
            ranklens.report(QRELS, runs, ["map"], ties=ties)
        cmp = ranklens.compare(QRELS, runs, ["map"], ties=ties)
        with pytest.raises(RanklensInputError, match="tie order"):
            ranklens.report(QRELS, runs, ["map"], comparison=cmp)


def test_dask_grouped_qrels_refuse_best_and_worst() -> None:
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import dask

    import ranklens.dask as rdask

    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    grouped = Qrels.from_groups({"q1": [["a", "b"]], "q2": [["f"]]})
    with dask.config.set(scheduler="sync"):
        for ties in TIES:
            with pytest.raises(RanklensInputError, match="grouped qrels"):
                rdask.evaluate(grouped, dd.from_pandas(frame, npartitions=2), ["mrr"], ties=ties)


def test_run_knows_whether_it_has_tied_scores() -> None:
    assert Run(RUN)._has_tied_scores()
    assert not Run({"q1": {"a": 1.0}, "q2": {"b": 1.0}})._has_tied_scores()  # across queries
    assert not Run({"q1": ["a", "b", "c"]})._has_tied_scores()
    assert not Run({})._has_tied_scores()
    # Equal after rounding to 32-bit floats: tied as stored.
    close = {"q": {"a": 1.0, "b": 1.00000001}}
    assert not Run(close)._has_tied_scores()
    assert Run(close, score_precision="f32")._has_tied_scores()


def test_report_tie_bounds_in_a_browser(tmp_path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from test_report import _browser

    no_ties = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": ["f", "g"]}
    path = tmp_path / "report.html"
    ranklens.report(QRELS, {"run": RUN, "plain": no_ties}, ["map", "mrr"], path)
    drv = _browser()
    try:
        drv.get(path.as_uri())
        WebDriverWait(drv, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.ready")
        )
        assert [e for e in drv.get_log("browser") if e["level"] == "SEVERE"] == []
        assert drv.find_element(By.ID, "ties-section").is_displayed()
        rows = drv.find_elements(By.CSS_SELECTOR, "#tie-bounds tbody tr")
        assert len(rows) == 1  # the run without ties has no row
        cells = [td.text for td in rows[0].find_elements(By.TAG_NAME, "td")]
        trec, best, worst = (reference(RUN, t).mean(axis=0)[:2] for t in ("trec", "best", "worst"))
        want = ["run"] + [f"{x:.4f}" for m in range(2) for x in (trec[m], best[m], worst[m])]
        assert cells == want
        # A report of runs without ties has no such section.
        ranklens.report(QRELS, {"plain": no_ties, "same": no_ties}, ["map"], path)
        drv.get(path.as_uri())
        WebDriverWait(drv, 30).until(
            lambda d: d.execute_script("return document.documentElement.dataset.ready")
        )
        assert not drv.find_element(By.ID, "ties-section").is_displayed()
    finally:
        drv.quit()


def test_gate_computes_no_tie_verdict_it_knows(monkeypatch) -> None:
    # Runs without tied scores have one order; an order whose per-query values are
    # an order's already gated has its verdict: neither is evaluated or tested again.
    from ranklens._gate import _gate

    calls: list[str] = []
    tests = []
    evaluate, pvalues = _gate.evaluate, _gate._pvalues

    def counted(*args, **kwargs):
        calls.append(kwargs.get("ties", "trec"))
        return evaluate(*args, **kwargs)

    def counted_pvalues(*args, **kwargs):
        tests.append(1)
        return pvalues(*args, **kwargs)

    monkeypatch.setattr(_gate, "evaluate", counted)
    monkeypatch.setattr(_gate, "_pvalues", counted_pvalues)
    qrels = {f"q{i:02d}": {"d1": 1, "d2": 2} for i in range(30)}
    base = {q: {"d1": 2.0, "x": 1.0, "d2": 0.5} for q in qrels}
    res = ranklens.gate(qrels, base, base, {"mrr": 0.01, "ndcg": 0.01})
    assert res.tie_verdicts == {"trec": True, "best": True, "worst": True}
    assert calls == ["trec", "trec"] and len(tests) == 1
    # Ties among unjudged documents only: best and worst are the trec values.
    calls.clear(), tests.clear()
    tied = {q: {"d2": 3.0, "d1": 2.0, "x": 1.0, "y": 1.0} for q in qrels}
    res = ranklens.gate(qrels, tied, tied, {"mrr": 0.01, "ndcg": 0.01})
    assert res.tie_verdicts == {"trec": True, "best": True, "worst": True}
    assert calls == ["trec", "trec", "best", "best", "worst", "worst"] and len(tests) == 1
    # Ties that matter: trec x d2 d1 and worst x d1 d2 have the same mrr (1/2),
    # best d2 d1 x another (1): best is tested, worst takes trec's verdict.
    calls.clear(), tests.clear()
    cand = {q: {"d1": 1.0, "x": 1.0, "d2": 1.0} for q in qrels}
    res = ranklens.gate(qrels, base, cand, {"mrr": 0.01})
    assert res.tie_verdicts == {"trec": False, "best": True, "worst": False}
    assert len(tests) == 2
    calls.clear(), tests.clear()
    res = ranklens.gate(qrels, base, cand, {"mrr": 0.01, "ndcg": 0.01})
    assert res.tie_verdicts == {"trec": False, "best": True, "worst": False}
    assert len(tests) == 3  # ndcg tells the three orders apart


def test_evaluate_jg_passes_the_tie_order_on() -> None:
    # Two judgment groups, each judging one of three tied documents relevant.
    groups = {"g1": Qrels({"q": {"a": 1}}), "g2": Qrels({"q": {"b": 1}})}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    got = {t: ranklens.evaluate_jg(groups, run, ["mrr"], ties=t)["mrr"] for t in [*TIES, "trec"]}
    # trec c b a: 1/3 (g1), 1/2 (g2); best: each group's document first; worst: last.
    assert got == pytest.approx({"trec": (1 / 3 + 1 / 2) / 2, "best": 1.0, "worst": 1 / 3})
