"""`ranklens gate` / `ranklens.gate`: decisions on constructed cases with known
answers, the reports parsed back, and the real command line in a subprocess."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import GateResult, RanklensWarning
from ranklens.compare import adjust_pvalues, student_t_ppf, student_t_sf
from ranklens.testing import assert_no_regression

try:
    from scipy import stats
except ImportError:  # scipy is optional: the checks against it are skipped
    stats = None

needs_scipy = pytest.mark.skipif(stats is None, reason="scipy is not installed")
ALL_TESTS = ["t", "randomization", "bootstrap"]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


# -- constructed data: P@10 over 10 relevant documents per query -------------------
def p10_case(hits_base: list[int], hits_cand: list[int]):
    """Qrels and two runs where query i has P@10 = hits/10 in each run, so the
    per-query drop is exactly (hits_base[i] - hits_cand[i]) / 10."""
    qrels, base, cand = {}, {}, {}
    for i, (hb, hc) in enumerate(zip(hits_base, hits_cand)):
        q = f"q{i:03d}"
        qrels[q] = {f"r{j}": 1 for j in range(10)}
        base[q] = [f"r{j}" for j in range(hb)] + [f"n{j}" for j in range(10 - hb)]
        cand[q] = [f"r{j}" for j in range(hc)] + [f"n{j}" for j in range(10 - hc)]
    return qrels, base, cand


def uniform_drop_case(n: int, per_query_drop_in_fiftieths: int):
    """P@50 with 50 relevant documents: every query loses the same number of them."""
    qrels, base, cand = {}, {}, {}
    for i in range(n):
        q = f"q{i:03d}"
        qrels[q] = {f"r{j}": 1 for j in range(50)}
        base[q] = [f"r{j}" for j in range(50)]
        keep = 50 - per_query_drop_in_fiftieths
        cand[q] = [f"r{j}" for j in range(keep)] + [f"n{j}" for j in range(50 - keep)]
    return qrels, base, cand


# Within noise on 20 queries: drops of +0.1 on 6 queries, -0.1 on 5, 0 on 9.
NOISE_BASE = [5] * 20
NOISE_CAND = [4] * 6 + [6] * 5 + [5] * 9
NOISE_D = np.array([0.1] * 6 + [-0.1] * 5 + [0.0] * 9)


@pytest.mark.parametrize("test", ALL_TESTS)
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_identical_candidate_passes(mode, test):
    qrels, base, _ = p10_case([3, 7, 5, 10] * 10, [0] * 40)
    res = ranklens.gate(qrels, base, dict(base), {"P@10": 0.01}, mode=mode, test=test)
    assert res.passed and res.failed == []
    v = res.verdict("P_10")
    assert (v.drop, v.ci_low, v.ci_high, v.min_detectable) == (0.0, 0.0, 0.0, 0.0)
    assert (v.wins, v.ties, v.losses) == (0, 40, 0)
    assert res.regressions["precision@10"] == [] and res.warnings == []
    # strict: mean(d) = 0 < 0.01 with no spread; lenient: nothing beyond the budget.
    # (randomization: one sign vector in 10,000 reaches the observed sum, + 1.)
    want = 1.0 if mode == "lenient" else 0.0
    assert v.p_value == (pytest.approx(want, abs=1e-4) if test == "randomization" else want)


@pytest.mark.parametrize("test", ALL_TESTS)
@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_uniform_drop_of_twice_the_budget_fails(mode, test):
    # 500 queries, each loses 1 of 50 relevant documents: P@50 drops by 0.02 = 2 x 0.01.
    qrels, base, cand = uniform_drop_case(500, 1)
    res = ranklens.gate(qrels, base, cand, {"P@50": 0.01}, mode=mode, test=test, n_resamples=2000)
    v = res.verdict("P@50")
    assert not res.passed and res.failed == ["precision@50"]
    assert v.drop == pytest.approx(0.02) and (v.wins, v.ties, v.losses) == (0, 0, 500)
    assert v.ci_low == pytest.approx(0.02) and v.ci_high == pytest.approx(0.02)
    assert v.min_detectable == 0.0 and not v.underpowered
    want = 1.0 if mode == "strict" else 0.0
    assert v.p_value == (pytest.approx(want, abs=1e-3) if test == "randomization" else want)


@pytest.mark.parametrize("test", ALL_TESTS)
def test_noisy_drop_on_20_queries_lenient_passes_strict_fails_with_power_warning(test):
    qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
    n = 20
    mean, sd = NOISE_D.mean(), NOISE_D.std(ddof=1)
    mdd = (student_t_ppf(0.95, n - 1) + student_t_ppf(0.8, n - 1)) * sd / math.sqrt(n)
    assert mdd > 0.04  # the query set cannot see a drop of 0.01
    for mode, passed in (("lenient", True), ("strict", False)):
        with pytest.warns(RanklensWarning, match="too small to enforce"):
            res = ranklens.gate(qrels, base, cand, {"P@10": 0.01}, mode=mode, test=test)
        v = res.verdict("P@10")
        assert res.passed is passed and v.passed is passed
        assert v.drop == pytest.approx(mean) and (v.wins, v.ties, v.losses) == (5, 9, 6)
        assert v.min_detectable == pytest.approx(mdd) and v.underpowered
        assert len(res.warnings) == 1 and "precision@10" in res.warnings[0]
        assert "(underpowered)" in res.to_markdown()


def test_t_decision_matches_the_formulas():
    qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
    n, b = 20, 0.01
    mean, se = NOISE_D.mean(), NOISE_D.std(ddof=1) / math.sqrt(n)
    t = (mean - b) / se
    half = student_t_ppf(0.95, n - 1) * se
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        strict = ranklens.gate(qrels, base, cand, {"P@10": b}).verdict("P@10")
        lenient = ranklens.gate(qrels, base, cand, {"P@10": b}, mode="lenient").verdict("P@10")
    assert strict.p_value == pytest.approx(1.0 - student_t_sf(t, n - 1), abs=1e-12)
    assert lenient.p_value == pytest.approx(student_t_sf(t, n - 1), abs=1e-12)
    for v in (strict, lenient):
        assert v.ci_low == pytest.approx(mean - half) and v.ci_high == pytest.approx(mean + half)
        assert v.level == 0.05 and v.p_adjusted == v.p_value
    assert strict.ci_high > b  # strict fails: the upper bound is beyond the budget
    assert lenient.ci_low < b  # lenient passes: the lower bound is within it


@needs_scipy
def test_t_agrees_with_scipy():
    d = NOISE_D
    qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        for mode, alt in (("strict", "less"), ("lenient", "greater")):
            v = ranklens.gate(qrels, base, cand, {"P@10": 0.01}, mode=mode).verdict("P@10")
            want = stats.ttest_1samp(d, 0.01, alternative=alt).pvalue
            assert v.p_value == pytest.approx(want, rel=1e-9)
    for df in (1, 4, 19, 499):
        for q in (0.8, 0.95, 0.99, 0.025):
            assert student_t_ppf(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-9)
            assert student_t_sf(q, df) == pytest.approx(stats.t.sf(q, df), rel=1e-9)


def test_t_quantiles_known_values():
    assert student_t_ppf(0.95, 1) == pytest.approx(6.313751514675043, rel=1e-10)
    assert student_t_ppf(0.975, 10) == pytest.approx(2.228138851986274, rel=1e-10)
    assert student_t_ppf(0.5, 7) == 0.0
    assert student_t_ppf(0.05, 5) == pytest.approx(-2.015048373333024, rel=1e-10)


def test_randomization_exact_p():
    # 10 queries, every drop 0.1 below a budget of 0.2: sum(d - b) = -1, and only
    # the all-minus sign vector reaches it: exact one-sided p = 2^-10.
    qrels, base, cand = p10_case([5] * 10, [4] * 10)
    res = ranklens.gate(qrels, base, cand, {"P@10": 0.2}, test="randomization")
    assert res.verdict("P@10").p_value == pytest.approx(2.0**-10)
    assert res.passed


def test_holm_across_metrics():
    qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
    budgets = {"P@10": 0.3, "recall@10": 0.05, "ndcg@10": 0.02}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        out = {
            c: ranklens.gate(qrels, base, cand, budgets, correction=c)
            for c in ("none", "bonferroni", "holm")
        }
    p = np.array([v.p_value for v in out["none"].verdicts])
    assert [v.metric for v in out["holm"].verdicts] == ["precision@10", "recall@10", "ndcg@10"]
    assert [v.p_adjusted for v in out["holm"].verdicts] == pytest.approx(
        list(adjust_pvalues(p, "holm"))
    )
    assert [v.p_adjusted for v in out["bonferroni"].verdicts] == pytest.approx(
        list(np.minimum(1, 3 * p))
    )
    order = np.argsort(p, kind="mergesort")
    holm_levels = [v.level for v in out["holm"].verdicts]
    assert [holm_levels[i] for i in order] == pytest.approx([0.05 / 3, 0.05 / 2, 0.05])
    assert all(v.level == pytest.approx(0.05 / 3) for v in out["bonferroni"].verdicts)
    for res in out.values():
        for v in res.verdicts:
            assert v.passed == (v.p_adjusted <= 0.05)


def test_missing_and_ignored_queries_are_scored_and_reported():
    qrels, base, cand = p10_case([5] * 30, [5] * 30)
    del cand["q007"]  # scored on an empty ranking: P@10 0 instead of 0.5
    cand["extra"] = ["r1"]
    res = ranklens.gate(qrels, base, cand, {"P@10": 0.5}, mode="lenient")
    v = res.verdict("P@10")
    assert len(res.query_ids) == 30 and v.losses == 1
    assert v.drop == pytest.approx(0.5 / 30)
    assert res.missing_queries == {"baseline": [], "candidate": ["q007"]}
    assert res.ignored_queries == {"baseline": [], "candidate": ["extra"]}
    assert [(c.query_id, c.baseline, c.candidate) for c in res.regressions["precision@10"]] == [
        ("q007", 0.5, 0.0)
    ]
    text = res.to_text()
    assert "candidate lacks 1 query of the qrels, scored as empty rankings: q007" in text
    assert "candidate has 1 query not in the qrels, ignored: extra" in text


def test_top_regressions_and_flips():
    # q0: loses everything (hit -> miss at 10); q1: 2 fewer; q2: 1 fewer; q3: gains.
    qrels, base, cand = p10_case([3, 5, 5, 0, 4], [0, 3, 4, 2, 4])
    res = ranklens.gate(qrels, base, cand, {"P@10": 0.5, "ndcg@10": 0.5}, top=2, cutoffs=[10, 1])
    changes = res.regressions["precision@10"]
    assert [(c.query_id, c.drop) for c in changes] == [("q000", 0.3), ("q001", 0.2)]
    assert changes[0].drop == pytest.approx(0.3)
    assert res.flips == {1: ["q000"], 10: ["q000"]} and res.gains == {1: ["q003"], 10: ["q003"]}
    default = ranklens.gate(qrels, base, cand, {"P@10": 0.5, "recall@20": 0.5})
    assert sorted(default.flips) == [10, 20]


def test_markdown_parses_back():
    qrels, base, cand = uniform_drop_case(50, 1)
    budgets = {"P@50": 0.01, "recall@1000": 0.5}
    res = ranklens.gate(qrels, base, cand, budgets, names=("main", "pr-42"))
    md = res.to_markdown()
    lines = md.splitlines()
    assert lines[0].startswith("### ") and "FAIL" in lines[0]
    header = [c.strip() for c in lines[2].strip("|").split("|")]
    rows = []
    for line in lines[4:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (c.strip() for c in line.strip("|").split("|")))))
    assert [r["metric"] for r in rows] == ["precision@50", "recall@1000"]
    assert [r["verdict"] for r in rows] == ["FAIL", "PASS"]
    assert float(rows[0]["drop"]) == pytest.approx(0.02) and float(rows[0]["max drop"]) == 0.01
    assert rows[0]["W/T/L"] == "0/0/50"
    assert "main -> pr-42 on 50 qrels queries" in md
    assert "<details><summary>Most regressed queries</summary>" in md


def test_json_parses_back():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RanklensWarning)
        qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
        res = ranklens.gate(qrels, base, cand, {"P@10": 0.01}, test="bootstrap", n_resamples=500)
    doc = json.loads(res.to_json())
    assert doc["passed"] is False and doc["failed"] == ["precision@10"]
    assert doc["num_queries"] == 20 and doc["settings"]["test"] == "bootstrap"
    (v,) = doc["verdicts"]
    assert v["metric"] == "precision@10" and v["underpowered"] is True
    assert v["drop"] == pytest.approx(NOISE_D.mean())
    assert [r["query_id"] for r in doc["regressions"]["precision@10"]] == [
        f"q{i:03d}" for i in range(6)
    ]
    assert doc["flips"] == {"10": []} and len(doc["warnings"]) == 1
    # a single query: infinite bounds are written as strings
    with pytest.warns(RanklensWarning, match="these 1 queries"):
        one = ranklens.gate({"q": {"d": 1}}, {"q": ["d"]}, {"q": ["d"]}, {"P@10": 0.1})
    row = json.loads(one.to_json())["verdicts"][0]
    assert (row["ci_low"], row["ci_high"], row["min_detectable"]) == ("-inf", "inf", "inf")


def test_inputs_in_other_forms(tmp_path):
    qrels, base, cand = p10_case([3, 7, 5, 1] * 5, [3, 6, 5, 1] * 5)
    want = ranklens.gate(qrels, base, cand, {"P@10": 0.1})
    q, b, c = ranklens.Qrels(qrels), ranklens.Run(base), ranklens.Run(cand)
    q.to_trec(tmp_path / "q")
    b.to_trec(tmp_path / "b")
    c.to_trec(tmp_path / "c")
    from_files = ranklens.gate(
        str(tmp_path / "q"), tmp_path / "b", str(tmp_path / "c"), 0.1, metrics="P@10"
    )
    assert from_files.verdicts == want.verdicts
    pd = pytest.importorskip("pandas")
    frames = ranklens.gate(q.to_pandas(), b.to_pandas(), pd.DataFrame(c.to_pandas()), {"P@10": 0.1})
    assert frames.verdicts == want.verdicts


def test_grouped_ground_truth():
    # RAG ground truth: either passage of a group satisfies it.
    gt = ranklens.Qrels.from_groups({f"q{i}": [["a", "b"], ["c"]] for i in range(12)})
    base = {f"q{i}": ["a", "c"] for i in range(12)}
    cand = {f"q{i}": ["b", "c"] for i in range(12)}
    res = ranklens.gate(gt, base, cand, {"recall@2": 0.01})
    assert res.passed and res.verdict("recall@2").drop == 0.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"budgets": {}}, "nothing to gate"),
        ({"budgets": 0.1}, "nothing to gate"),
        ({"budgets": {"P@10": -0.1}}, ">= 0"),
        # one metric under two spellings: both keys named (the rule the command
        # line shares: budgets_by_metric)
        (
            {"budgets": {"P@10": 0.1, "P_10": 0.2}},
            r"two budgets for precision@10: budgets\['P@10'\] and budgets\['P_10'\]",
        ),
        ({"budgets": {"P@10": 0.1}, "metrics": ["map"]}, "no budget"),
        ({"budgets": {"P@10": 0.1}, "mode": "loose"}, "unknown mode"),
        ({"budgets": {"P@10": 0.1}, "test": "wilcoxon"}, "unknown test"),
        ({"budgets": {"P@10": 0.1}, "correction": "bh"}, "unknown correction"),
        ({"budgets": {"P@10": 0.1}, "alpha": 0.7}, "alpha"),
        ({"budgets": {"P@10": 0.1}, "cutoffs": [0]}, "cutoff"),
    ],
)
def test_bad_arguments(kwargs, match):
    qrels, base, _ = p10_case([1, 2], [1, 2])
    with pytest.raises(ranklens.RanklensInputError, match=match):
        ranklens.gate(qrels, base, base, **kwargs)


# -- ranklens.testing ---------------------------------------------------------------
def test_assert_no_regression(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml above tmp_path's own
    qrels, base, cand = uniform_drop_case(100, 1)
    assert isinstance(assert_no_regression(qrels, base, base, {"P@50": 0.01}), GateResult)
    with pytest.raises(AssertionError, match="precision@50"):
        assert_no_regression(qrels, base, cand, {"P@50": 0.01})
    assert_no_regression(qrels, base, cand, {"P@50": 0.03})
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ranklens.gate]\nmode = "lenient"\n[tool.ranklens.gate.max_drop]\n"P@50" = 0.01\n'
    )
    with pytest.raises(AssertionError, match="FAIL"):
        assert_no_regression(qrels, base, cand)  # budgets from pyproject.toml
    assert assert_no_regression(qrels, base, cand, {"P@50": 0.05}).settings["mode"] == "lenient"


def test_config_without_a_toml_reader(tmp_path, monkeypatch):
    # Python 3.9/3.10 without tomli: a file with the table is an error, one without is fine.
    from ranklens._gate import load_config
    from ranklens._gate._config import ConfigError

    monkeypatch.setitem(sys.modules, "tomllib", None)
    monkeypatch.setitem(sys.modules, "tomli", None)
    plain = tmp_path / "plain.toml"
    plain.write_text("[project]\nname = 'ranklens-user'\n")
    assert load_config(plain) == {}
    gated = tmp_path / "gated.toml"
    gated.write_text("[tool.ranklens.gate]\nmax_drop = 0.01\n")
    with pytest.raises(ConfigError, match=r"needs Python 3.11\+ or the tomli package"):
        load_config(gated)


def test_config_found_in_a_parent(tmp_path, monkeypatch):
    from ranklens._gate import find_pyproject, load_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.ranklens.gate]\nmetrics = ["ndcg@10"]\nmax_drop = 0.01\ntest = "fisher"\n'
    )
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert find_pyproject() == tmp_path / "pyproject.toml"
    assert load_config() == {"metrics": ["ndcg@10"], "budgets": 0.01, "test": "fisher"}


# -- the command line, in a subprocess ------------------------------------------------
def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    pkg_parent = str(Path(ranklens.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_parent + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "ranklens.cli", "gate", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )


@pytest.fixture
def files(tmp_path):
    qrels, base, cand = uniform_drop_case(200, 1)
    ranklens.Qrels(qrels).to_trec(tmp_path / "qrels.txt")
    ranklens.Run(base).to_trec(tmp_path / "base.txt")
    ranklens.Run(cand).to_trec(tmp_path / "cand.txt")
    return {name: str(tmp_path / f"{name}.txt") for name in ("qrels", "base", "cand")}


def test_cli_exit_codes(files, tmp_path):
    q, b, c = files["qrels"], files["base"], files["cand"]
    ok = _cli(q, b, b, "-m", "P@50", "--max-drop", "0.01", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("ranklens gate: PASS") and ok.stderr == ""

    bad = _cli(q, b, c, "--max-drop", "P@50=0.01", "--max-drop", "map=0.5", cwd=tmp_path)
    assert bad.returncode == 1, bad.stderr
    assert "FAIL: 1 of 2 metrics over budget (precision@50)" in bad.stdout

    within = _cli(q, b, c, "--max-drop", "P@50=0.03", "--format", "json", cwd=tmp_path)
    assert within.returncode == 0 and json.loads(within.stdout)["passed"] is True

    usage = _cli(q, b, c, "--max-drop", "nonsense@3=0.1", cwd=tmp_path)
    assert usage.returncode == 2 and usage.stdout == "" and "Traceback" not in usage.stderr
    assert "nonsense@3" in usage.stderr

    broken = tmp_path / "broken.txt"
    broken.write_text("q000 Q0 r1 1 1.0 t\nq000 Q0 r2 oops\n")
    out = _cli(q, b, str(broken), "--max-drop", "P@50=0.1", cwd=tmp_path)
    assert out.returncode == 3 and out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert f"{broken}:2:" in line
    missing = _cli(q, b, str(tmp_path / "nope.txt"), "--max-drop", "P@50=0.1", cwd=tmp_path)
    assert missing.returncode == 3 and "nope.txt" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.parametrize(
    "usage, message",
    [
        (["--max-drop", "P@50=abc"], "a number"),
        (["-m", "P@50"], "no budget for precision@50"),
        ([], "nothing to gate"),
        (["--max-drop", "P@50=0.1", "--mode", "loose"], "invalid choice"),
        (["--max-drop", "P@50=0.1", "--test", "wilcoxon"], "unknown test"),
        (["--max-drop", "P@50=0.1", "--alpha", "2"], "alpha"),
        (["--max-drop", "P@50=-1"], ">= 0"),
        (["--max-drop", "P@50=0.1", "--cutoff", "0"], "cutoff"),
        (["--max-drop", "P@50=0.1", "--config", "missing.toml"], "missing.toml"),
        # one metric under two spellings (map is AP): never the last one silently
        (
            ["--max-drop", "map=0.01", "--max-drop", "AP=0.5"],
            "two budgets for map: --max-drop map=0.01 and --max-drop AP=0.5",
        ),
        (["--max-drop", "P@50=0.1", "--max-drop", "P_50=0.1"], "two budgets for precision@50"),
        (["--max-drop", "0.01", "--max-drop", "0.02"], "two budgets for every metric"),
        (["--max-drop", "P@50=0.1", "--threads", "0"], "threads must be a positive int"),
        (["--max-drop", "P@50=0.1", "--alpha", "nan"], "alpha"),
        (["--max-drop", "P@50=0.1", "--n-resamples", "-5"], "n_resamples must be a positive"),
        (["--max-drop", "P@50=0.1", "--config", "/dev/zero"], "/dev/zero: not a regular file"),
        (["--max-drop", "P@50=0.1", "--config", "."], ".: not a regular file"),
    ],
)
def test_cli_usage_errors(files, tmp_path, monkeypatch, capsys, usage, message):
    from ranklens.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["gate", files["qrels"], files["base"], files["cand"], *usage]) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and "Traceback" not in err


@pytest.mark.parametrize(
    "text, message",
    [
        ("tool = 5\n", "tool must be a table, got 5"),
        ("[tool]\nranklens = [1]\n", "tool.ranklens must be a table, got [1]"),
        ("[tool.ranklens]\ngate = 0.1\n", "tool.ranklens.gate must be a table, got 0.1"),
        ("[tool.ranklens.gate.alpha]\nx = 1\n", "alpha has the wrong type"),
        ("[tool.ranklens.gate]\nmax_drop = {map = 0.1, AP = 0.2}\n", "two budgets for map"),
        ("[tool.ranklens.gate]\nmax_drop = 0.1\n# \udcff\n", "pyproject.toml:3: not UTF-8"),
        ("[tool.ranklens.gate\n", "not valid TOML"),
    ],
)
def test_cli_malformed_config(files, tmp_path, monkeypatch, capsys, text, message):
    # a config the gate cannot use is a usage error (exit 2, one line), never a
    # traceback, and never a budget silently dropped
    from ranklens.cli import main

    (tmp_path / "pyproject.toml").write_bytes(text.encode("utf-8", "surrogateescape"))
    monkeypatch.chdir(tmp_path)
    argv = ["gate", files["qrels"], files["base"], files["cand"], "-m", "map"]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err and err.count("\n") == 1, err


def test_cli_markdown_summary_and_warning(files, tmp_path):
    qrels, base, cand = p10_case(NOISE_BASE, NOISE_CAND)
    ranklens.Qrels(qrels).to_trec(tmp_path / "nq.txt")
    ranklens.Run(base).to_trec(tmp_path / "nb.txt")
    ranklens.Run(cand).to_trec(tmp_path / "nc.txt")
    summary = tmp_path / "summary.md"
    args = [str(tmp_path / n) for n in ("nq.txt", "nb.txt", "nc.txt")]
    out = _cli(
        *args,
        "--max-drop",
        "P@10=0.01",
        "--format",
        "markdown",
        "--summary",
        str(summary),
        cwd=tmp_path,
    )
    assert out.returncode == 1
    assert out.stdout.startswith("### ❌ ranklens gate: FAIL")
    assert "nb.txt -> nc.txt" in out.stdout
    assert "warning: precision@10: the max drop 0.01 is below" in out.stderr
    assert summary.read_text() == out.stdout
    lenient = _cli(*args, "--max-drop", "P@10=0.01", "--mode", "lenient", cwd=tmp_path)
    assert lenient.returncode == 0 and "PASS (underpowered)" in lenient.stdout


def test_cli_reads_pyproject(files, tmp_path):
    sub = tmp_path / "repo" / "sub"
    sub.mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.ranklens.gate]\n"
        'metrics = ["P@50"]\nmode = "lenient"\ntest = "bootstrap"\nalpha = 0.01\n'
        "n_resamples = 500\nmax_drop = 0.01\n"
    )
    q, b, c = files["qrels"], files["base"], files["cand"]
    out = _cli(q, b, c, "--format", "json", cwd=sub)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert doc["settings"]["mode"] == "lenient" and doc["settings"]["test"] == "bootstrap"
    assert doc["settings"]["alpha"] == 0.01 and doc["failed"] == ["precision@50"]
    # the command line wins over the file
    out = _cli(q, b, c, "--max-drop", "0.05", "--format", "json", cwd=sub)
    assert out.returncode == 0 and json.loads(out.stdout)["verdicts"][0]["budget"] == 0.05
    assert _cli(q, b, c, "--no-config", cwd=sub).returncode == 2  # nothing to gate
    (tmp_path / "repo" / "pyproject.toml").write_text("[tool.ranklens.gate]\nbudget = 0.1\n")
    out = _cli(q, b, c, cwd=sub)
    assert out.returncode == 2 and "unknown key 'budget'" in out.stderr


README = Path(__file__).resolve().parent.parent / "README.md"


def _readme_block(after: str, lang: str) -> str:
    text = README.read_text(encoding="utf-8")
    rest = text[text.index(after) :]
    start = rest.index(f"```{lang}\n") + len(lang) + 4
    return rest[start : rest.index("\n```\n", start)]


def test_readme_sample_is_the_real_output(tmp_path):
    # The README's sample: the candidate reverses the ranking of topic 303 (its awk line).
    (tmp_path / "examples").mkdir()
    for name in ("qrels.txt", "run.txt"):
        (tmp_path / "examples" / name).write_bytes((EXAMPLES / name).read_bytes())
    lines = []
    for line in (EXAMPLES / "run.txt").read_text().splitlines():
        f = line.split("\t")
        if f[0] == "303":
            f[4] = str(-float(f[4]))
        lines.append("\t".join(f))
    (tmp_path / "candidate.txt").write_text("\n".join(lines) + "\n")
    out = _cli(
        "examples/qrels.txt",
        "examples/run.txt",
        "candidate.txt",
        "--max-drop",
        "ndcg@10=0.02",
        "--max-drop",
        "recall@100=0.02",
        "--format",
        "markdown",
        cwd=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    assert "too small to enforce" in out.stderr
    assert out.stdout.rstrip("\n") == _readme_block(
        "A sample on the bundled example data", "markdown"
    )


def test_readme_setup_table(tmp_path, files):
    (tmp_path / "pyproject.toml").write_text(
        _readme_block("## Retrieval quality in CI", "toml") + "\n"
    )
    out = _cli(files["qrels"], files["base"], files["cand"], "--format", "json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert [(v["metric"], v["budget"]) for v in doc["verdicts"]] == [
        ("ndcg@10", 0.01),
        ("recall@20", 0.02),
    ]
    assert out.returncode == 0 and doc["passed"] is True  # the top 20 are all relevant in both


def test_cli_relevance_level_positive_as_in_the_other_commands(tmp_path):
    # Five queries, each with one document labelled 0.4 (relevant at level
    # "positive", not at the default 1); the candidate ranks it second instead of
    # first.  Default level: P@1 is 0 in both runs, every drop 0: pass.  Level
    # "positive": every query drops from 1 to 0 (a constant drop of 1, sd 0), over
    # the max drop 0.5: fail.
    qs = range(1, 6)
    (tmp_path / "q").write_text("".join(f"{q} 0 a 0.4\n{q} 0 b 0\n" for q in qs))
    (tmp_path / "base").write_text("".join(f"{q} Q0 a 1 2.0 r\n{q} Q0 b 2 1.0 r\n" for q in qs))
    (tmp_path / "cand").write_text("".join(f"{q} Q0 b 1 2.0 r\n{q} Q0 a 2 1.0 r\n" for q in qs))
    args = [str(tmp_path / n) for n in ("q", "base", "cand")]
    args += ["-m", "P@1", "--max-drop", "P@1=0.5"]
    run = [sys.executable, "-m", "ranklens.cli", "gate", *args]
    default = subprocess.run(run, capture_output=True, text=True)
    positive = subprocess.run([*run, "-l", "positive"], capture_output=True, text=True)
    assert default.returncode == 0, default.stdout + default.stderr
    assert positive.returncode == 1, positive.stdout + positive.stderr
    bad = subprocess.run([*run, "-l", "nan"], capture_output=True, text=True)
    assert bad.returncode == 2


# -- tie orders --------------------------------------------------------------------------
def _tied_case() -> tuple[dict, dict, dict]:
    """The candidate ties the relevant d1 with x: trec order (id descending) puts
    x first (a drop of 1/2 in mrr), best puts d1 first (no drop)."""
    qrels = {f"q{i:02d}": {"d1": 1} for i in range(30)}
    base = {q: {"d1": 2.0, "x": 1.0} for q in qrels}
    cand = {q: {"d1": 1.0, "x": 1.0} for q in qrels}
    return qrels, base, cand


def test_verdict_depending_on_tie_order_is_reported(tmp_path):
    qrels, base, cand = _tied_case()
    res = ranklens.gate(qrels, base, cand, {"mrr": 0.01})
    assert not res.passed
    assert res.tie_verdicts == {"trec": False, "best": True, "worst": False}
    assert res.tie_dependent
    line = "verdict depends on tie order: FAIL under trec, PASS under best, FAIL under worst"
    assert line in res.to_text() and f"- {line}" in res.to_markdown()
    doc = json.loads(res.to_json())
    assert doc["tie_dependent"] is True and doc["tie_verdicts"]["best"] is True
    # No tie: the three orders agree, nothing said.
    same = ranklens.gate(qrels, base, base, {"mrr": 0.01})
    assert same.tie_verdicts == {"trec": True, "best": True, "worst": True}
    assert not same.tie_dependent and "tie order" not in same.to_text()
    # Grouped qrels refuse best / worst: not checked.
    grouped = ranklens.Qrels.from_groups({q: [["d1"]] for q in qrels})
    res = ranklens.gate(grouped, base, cand, {"mrr": 0.01})
    assert res.tie_verdicts is None and not res.tie_dependent
    # The command line prints the line.
    ranklens.Qrels(qrels).to_trec(tmp_path / "qrels.txt")
    ranklens.Run(base).to_trec(tmp_path / "base.txt")
    ranklens.Run(cand).to_trec(tmp_path / "cand.txt")
    out = _cli(
        *(str(tmp_path / f"{n}.txt") for n in ("qrels", "base", "cand")),
        "-m",
        "mrr",
        "--max-drop",
        "0.01",
        cwd=tmp_path,
    )
    assert out.returncode == 1, out.stderr
    assert line in out.stdout
