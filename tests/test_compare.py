"""`ranklens.compare`: significance tests, corrections, reports, plots, CLI."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import ranklens
from ranklens import RanklensInputError, Run, _ranklens
from ranklens.compare import (
    adjust_pvalues,
    cohens_d,
    studentized_range_sf,
    ttest_paired_p,
    wilcoxon_p,
)

try:
    import scipy.stats as ss
except ImportError:  # scipy is a test-only dependency
    ss = None

needs_scipy = pytest.mark.skipif(ss is None, reason="scipy not installed")


# -- helpers ------------------------------------------------------------------
# Every query has 10 relevant documents r0..r9; a run with target score s
# retrieves round(10 s) of them, then non-relevant ones, so P@10 = s exactly.


def _qrels(n: int) -> dict[str, dict[str, int]]:
    return {f"q{i:03d}": {f"r{j}": 1 for j in range(10)} for i in range(n)}


def _run(scores: list[float] | np.ndarray) -> dict[str, list[str]]:
    out = {}
    for i, s in enumerate(scores):
        k = round(float(s) * 10)
        out[f"q{i:03d}"] = [f"r{j}" for j in range(k)] + [f"n{j}" for j in range(10 - k)]
    return out


def _scores(rng: np.random.Generator, n: int, shift: float = 0.0) -> np.ndarray:
    return np.clip(np.round(rng.uniform(0.1, 0.8, n) + shift, 1), 0.0, 1.0)


def _exact_sign_flip_p(d: np.ndarray) -> float:
    """Brute force: share of all 2^n sign vectors with |sum| >= |observed|."""
    n = d.size
    signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1)
    sums = np.abs(signs @ d)
    tol = 1e-10 * np.abs(d).sum()
    return float(np.count_nonzero(sums >= abs(d.sum()) - tol) / 2**n)


def _all_finite(cmp: ranklens.Comparison) -> bool:
    for r in cmp.results:
        for v in (r.mean, r.other_mean, r.diff, r.p_value, r.p_adjusted, r.ci_low, r.ci_high):
            if not math.isfinite(v):
                return False
        if math.isnan(r.effect_size):
            return False
    return True


# -- hand-checked ---------------------------------------------------------------


def test_hand_checked_small_comparison():
    qrels = _qrels(4)
    a = _run([0.5, 0.4, 0.3, 0.2])
    b = _run([0.3, 0.4, 0.1, 0.3])
    cmp = ranklens.compare(qrels, {"a": a, "b": b}, ["P@10"], test="student", correction="none")
    (r,) = cmp.results
    # d = [0.2, 0, 0.2, -0.1]: mean 0.075, sd = sqrt(0.0425 / 3)
    d = np.array([0.2, 0.0, 0.2, -0.1])
    assert (r.metric, r.run, r.other) == ("precision@10", "a", "b")
    assert r.mean == pytest.approx(0.35) and r.other_mean == pytest.approx(0.275)
    assert r.diff == pytest.approx(0.075)
    assert (r.wins, r.ties, r.losses) == (2, 1, 1)
    sd = math.sqrt(((d - d.mean()) ** 2).sum() / 3)
    assert r.effect_size == pytest.approx(0.075 / sd)
    t = 0.075 / (sd / 2)
    # two-sided t with 3 df: p = I_{3/(3+t^2)}(3/2, 1/2); for 3 df there is a
    # closed form: p = 1 - 2/pi (atan(u) + u / (1 + u^2)), u = t / sqrt(3).
    u = t / math.sqrt(3)
    p3 = 1 - 2 / math.pi * (math.atan(u) + u / (1 + u * u))
    assert r.p_value == pytest.approx(p3, abs=1e-12)
    assert r.p_adjusted == r.p_value
    assert r.ci_low <= r.diff <= r.ci_high
    # mirrored lookup
    m = cmp.result("P_10", "b", "a")
    assert m.diff == pytest.approx(-0.075) and (m.wins, m.losses) == (1, 2)
    assert m.ci_low == -r.ci_high


def test_exact_fisher_small_case_by_hand():
    # d = [0.1, 0.2, 0.3]: |sum| over the 8 sign vectors: 0.6 twice, 0.4, 0.2, 0.0...
    qrels = _qrels(3)
    cmp = ranklens.compare(
        qrels, {"a": _run([0.5, 0.5, 0.5]), "b": _run([0.4, 0.3, 0.2])}, "P@10", test="fisher"
    )
    assert cmp.results[0].p_value == pytest.approx(0.25, abs=1e-15)


def test_corrections_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> cummax
    np.testing.assert_allclose(adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4/1, 4/2, 4/3, 4/4 -> 0.02, 0.02, 0.04, 0.04 -> cummin from the top
    np.testing.assert_allclose(adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_array_equal(adjust_pvalues(p, "none"), p)
    assert adjust_pvalues(np.array([0.6, 0.9]), "bonferroni").max() == 1.0


def test_cohens_d_conventions():
    assert cohens_d(np.zeros(5)) == 0.0
    assert cohens_d(np.full(4, 0.25)) == math.inf
    assert cohens_d(np.full(4, -0.25)) == -math.inf
    assert cohens_d(np.array([0.3])) == math.inf
    assert cohens_d(np.array([1.0, 3.0])) == pytest.approx(2 / math.sqrt(2))


# -- agreement with scipy -------------------------------------------------------


@needs_scipy
def test_student_matches_scipy_ttest_rel():
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 10, 40, 300, 2000):
        for _ in range(10):
            a, b = rng.random(n), rng.random(n) * 0.9
            assert ttest_paired_p(a - b) == pytest.approx(
                ss.ttest_rel(a, b).pvalue, rel=1e-9, abs=1e-12
            )


def _wilcoxon_cases(rng):
    for n in (2, 3, 5, 8, 12, 13, 14, 20, 30, 50, 51, 75):
        for kind in range(4):
            if kind == 0:
                d = rng.normal(size=n)  # no ties, no zeros
            elif kind == 1:
                d = np.round(rng.normal(size=n), 1)  # ties
            elif kind == 2:
                d = rng.integers(-2, 3, size=n).astype(float)  # ties and zeros
            else:
                d = rng.normal(size=n)
                d[: max(1, n // 5)] = 0.0  # zeros, no ties
            if np.all(d == 0):
                continue
            yield d


@needs_scipy
def test_wilcoxon_matches_scipy_defaults():
    rng = np.random.default_rng(1)
    for d in _wilcoxon_cases(rng):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = ss.wilcoxon(d).pvalue
        assert wilcoxon_p(d) == pytest.approx(want, abs=1e-10), d


@needs_scipy
def test_compare_student_and_wilcoxon_use_the_per_query_scores():
    rng = np.random.default_rng(2)
    n = 25
    qrels = _qrels(n)
    sa, sb = _scores(rng, n, 0.1), _scores(rng, n)
    runs = {"a": _run(sa), "b": _run(sb)}
    t = ranklens.compare(qrels, runs, "P@10", test="student").results[0]
    assert t.p_value == pytest.approx(ss.ttest_rel(sa, sb).pvalue, rel=1e-9)
    w = ranklens.compare(qrels, runs, "P@10", test="wilcoxon").results[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert w.p_value == pytest.approx(ss.wilcoxon(sa, sb).pvalue, abs=1e-10)


@needs_scipy
def test_studentized_range_matches_scipy():
    for q, k, df in [(3.0, 3, 10), (1.0, 2, 5), (4.5, 5, 100), (2.0, 10, 1), (10.0, 3, 2),
                     (0.5, 4, 1000), (6.0, 3, 5000), (3.5, 20, 30)]:  # fmt: skip
        got = studentized_range_sf([q], k, df)[0]
        assert got == pytest.approx(ss.studentized_range.sf(q, k, df), rel=1e-7, abs=1e-11)


@needs_scipy
def test_tukey_oneway_matches_scipy_tukey_hsd():
    rng = np.random.default_rng(3)
    n = 30
    qrels = _qrels(n)
    cols = [_scores(rng, n, s) for s in (0.0, 0.05, 0.15)]
    runs = {name: _run(c) for name, c in zip("xyz", cols)}
    cmp = ranklens.compare(qrels, runs, "P@10", test="tukey_oneway")
    want = ss.tukey_hsd(*cols).pvalue
    idx = {"x": 0, "y": 1, "z": 2}
    for r in cmp.results:
        assert r.p_value == pytest.approx(want[idx[r.run], idx[r.other]], abs=1e-8)
        assert r.p_adjusted == r.p_value  # Tukey adjusts already
    assert cmp.settings["correction"] == "tukey"


@needs_scipy
def test_tukey_block_design_by_hand():
    rng = np.random.default_rng(4)
    n, k = 20, 3
    cols = [_scores(rng, n, s) for s in (0.0, 0.1, 0.2)]
    x = np.column_stack(cols)
    resid = x - x.mean(0) - x.mean(1)[:, None] + x.mean()
    df = (n - 1) * (k - 1)
    mse = (resid**2).sum() / df
    runs = {name: _run(c) for name, c in zip("abc", cols)}
    cmp = ranklens.compare(_qrels(n), runs, "P@10", test="tukey", baseline="a")
    assert [(r.run, r.other) for r in cmp.results] == [("b", "a"), ("c", "a")]
    for r in cmp.results:
        q = abs(r.diff) / math.sqrt(mse / n)
        assert r.p_value == pytest.approx(ss.studentized_range.sf(q, k, df), abs=1e-8)


# -- reproducibility and the permutation test -----------------------------------


def test_same_seed_same_result_and_threads_do_not_matter():
    rng = np.random.default_rng(5)
    n = 40
    qrels = _qrels(n)
    runs = {
        "a": _run(_scores(rng, n, 0.03)),
        "b": _run(_scores(rng, n)),
        "c": _run(_scores(rng, n)),
    }
    for test in ("fisher", "bootstrap"):
        kw = dict(test=test, n_resamples=3000, seed=11)
        one = ranklens.compare(qrels, runs, ["P@10", "P@5"], threads=1, **kw).to_pandas()
        two = ranklens.compare(qrels, runs, ["P@10", "P@5"], threads=2, **kw).to_pandas()
        again = ranklens.compare(qrels, runs, ["P@10", "P@5"], threads=2, **kw).to_pandas()
        assert one.equals(two) and two.equals(again)
        other = ranklens.compare(qrels, runs, ["P@10", "P@5"], **{**kw, "seed": 12}).to_pandas()
        assert not other[["p_value", "ci_low"]].equals(one[["p_value", "ci_low"]])


def test_monte_carlo_permutation_converges_to_exact():
    rng = np.random.default_rng(6)
    for n in (8, 12, 16):
        d = np.round(rng.normal(0.05, 0.2, n), 2)
        exact = _exact_sign_flip_p(d)
        p_exact, _, _ = _ranklens.stats_resample(d[None, :], "fisher", 10, 0, True, 0.95, None)
        assert p_exact[0] == pytest.approx(exact, abs=1e-15)
        r = 200_000
        p_mc, _, _ = _ranklens.stats_resample(d[None, :], "fisher", r, 1, False, 0.95, None)
        se = math.sqrt(max(exact * (1 - exact), 1e-6) / r)
        assert abs(p_mc[0] - exact) < 4 * se + 1 / r, (n, p_mc[0], exact)


def test_auto_exact_when_all_flips_fit_in_the_budget():
    rng = np.random.default_rng(7)
    n = 9  # 2^9 = 512 <= n_resamples: enumerated exactly
    sa, sb = _scores(rng, n, 0.1), _scores(rng, n)
    cmp = ranklens.compare(_qrels(n), {"a": _run(sa), "b": _run(sb)}, "P@10", n_resamples=1000)
    assert cmp.results[0].p_value == pytest.approx(_exact_sign_flip_p(sa - sb), abs=1e-12)
    mc = ranklens.compare(
        _qrels(n), {"a": _run(sa), "b": _run(sb)}, "P@10", n_resamples=1000, exact=False
    )
    assert mc.results[0].p_value * 1001 == pytest.approx(round(mc.results[0].p_value * 1001))


def test_bootstrap_ci_is_a_percentile_of_resampled_means():
    d = np.array([0.1, 0.3, -0.2, 0.4, 0.0, 0.2])
    p, lo, hi = _ranklens.stats_resample(d[None, :], "bootstrap", 20_000, 3, None, 0.9, None)
    assert lo[0] < d.mean() < hi[0]
    # normal approximation of the bootstrap distribution of the mean
    se = d.std(ddof=0) / math.sqrt(d.size)
    assert lo[0] == pytest.approx(d.mean() - 1.645 * se, abs=0.03)
    assert hi[0] == pytest.approx(d.mean() + 1.645 * se, abs=0.03)
    assert 0 < p[0] < 1


# -- failure modes -------------------------------------------------------------


def test_runs_over_different_query_sets_are_aligned_on_the_qrels():
    qrels = _qrels(4)
    a = _run([0.5, 0.4, 0.3, 0.2])
    b = _run([0.3, 0.4, 0.1, 0.3])
    del a["q002"]  # missing: scored on an empty ranking
    b["zzz"] = ["x"]  # run-only: ignored
    cmp = ranklens.compare(qrels, {"a": a, "b": b}, "P@10", test="student")
    assert cmp.query_ids == ["q000", "q001", "q002", "q003"]
    assert cmp.missing_queries == {"a": ["q002"], "b": []}
    assert cmp.ignored_queries == {"a": [], "b": ["zzz"]}
    assert cmp.per_query("a", "P@10")["q002"] == 0.0
    r = cmp.results[0]
    assert r.mean == pytest.approx((0.5 + 0.4 + 0.0 + 0.2) / 4)
    assert (r.wins, r.ties, r.losses) == (1, 1, 2)
    assert "missing" in str(cmp)


@pytest.mark.parametrize("test", ["student", "wilcoxon", "fisher", "bootstrap", "tukey"])
def test_single_query(test):
    cmp = ranklens.compare(
        _qrels(1), {"a": _run([0.5]), "b": _run([0.2]), "c": _run([0.2])}, "P@10", test=test
    )
    assert _all_finite(cmp)
    assert all(r.p_value == 1.0 and not r.significant for r in cmp.results)
    assert cmp.results[0].effect_size == math.inf


@pytest.mark.parametrize(
    "test", ["student", "wilcoxon", "fisher", "bootstrap", "tukey", "tukey_oneway"]
)
def test_identical_runs(test):
    scores = [0.1, 0.5, 0.7, 0.3, 0.3, 0.9, 0.0, 0.2, 0.4, 0.6, 0.5, 0.5, 0.1, 0.8, 0.2]
    run = _run(scores)
    cmp = ranklens.compare(
        _qrels(len(scores)), {"a": run, "b": dict(run)}, ["P@10", "P@5"], test=test
    )
    assert _all_finite(cmp)
    for r in cmp.results:
        assert r.p_value == 1.0 and r.p_adjusted == 1.0 and not r.significant
        assert r.diff == 0.0 and r.effect_size == 0.0
        assert (r.ci_low, r.ci_high) == (0.0, 0.0)
        assert r.ties == len(scores) and r.wins == r.losses == 0


def test_nan_free_reports_with_degenerate_columns():
    # b is a + 0.1 everywhere: sd(d) = 0, effect size inf; everything else finite.
    a = [0.1, 0.2, 0.3, 0.4, 0.5]
    b = [0.2, 0.3, 0.4, 0.5, 0.6]
    for test in ("student", "wilcoxon", "fisher", "bootstrap", "tukey"):
        cmp = ranklens.compare(_qrels(5), {"a": _run(a), "b": _run(b)}, "P@10", test=test)
        assert _all_finite(cmp)
        doc = json.loads(cmp.to_json())
        assert "NaN" not in cmp.to_json()
        assert doc["results"][0]["effect_size"] in ("-inf", -math.inf) or math.isfinite(
            doc["results"][0]["effect_size"]
        )
        assert not cmp.to_pandas().isna().any().any()


def test_list_of_named_runs_and_baseline():
    n = 6
    qrels = _qrels(n)
    r1 = Run(_run([0.5] * n), name="one")
    r2 = Run(_run([0.3] * n), name="two")
    r3 = Run(_run([0.4] * n), name="three")
    cmp = ranklens.compare(qrels, [r1, r2, r3], "P@10", baseline="two", test="wilcoxon")
    assert [(r.run, r.other) for r in cmp.results] == [("one", "two"), ("three", "two")]
    allp = ranklens.compare(qrels, [r1, r2, r3], "P@10")
    assert [(r.run, r.other) for r in allp.results] == [
        ("one", "two"),
        ("one", "three"),
        ("two", "three"),
    ]


def test_correction_scope():
    rng = np.random.default_rng(8)
    n = 15
    runs = {k: _run(_scores(rng, n, s)) for k, s in (("a", 0.0), ("b", 0.1), ("c", 0.05))}
    ms = ["P@10", "P@5"]
    allc = ranklens.compare(_qrels(n), runs, ms, test="student", correction="bonferroni")
    perm = ranklens.compare(
        _qrels(n), runs, ms, test="student", correction="bonferroni", correction_scope="metric"
    )
    for x, y in zip(allc.results, perm.results):
        assert x.p_adjusted == pytest.approx(min(1.0, 6 * x.p_value))
        assert y.p_adjusted == pytest.approx(min(1.0, 3 * y.p_value))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"test": "ttest"}, "unknown test"),
        ({"correction": "sidak"}, "unknown correction"),
        ({"baseline": "nope"}, "unknown baseline"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"seed": -1}, "seed"),
        ({"correction_scope": "pair"}, "correction_scope"),
        ({"confidence": 1.0}, "confidence"),
        ({"threads": 0}, "threads"),
    ],
)
def test_bad_arguments(kwargs, match):
    runs = {"a": _run([0.1, 0.2]), "b": _run([0.2, 0.2])}
    with pytest.raises(RanklensInputError, match=match):
        ranklens.compare(_qrels(2), runs, "P@10", **kwargs)


def test_bad_runs():
    with pytest.raises(RanklensInputError, match="at least 2 runs"):
        ranklens.compare(_qrels(2), {"a": _run([0.1, 0.2])}, "P@10")
    with pytest.raises(RanklensInputError, match="no name"):
        ranklens.compare(_qrels(2), [Run(_run([0.1, 0.2])), Run(_run([0.1, 0.2]))], "P@10")
    with pytest.raises(RanklensInputError, match="unique"):
        ranklens.compare(
            _qrels(2), [Run(_run([0.1, 0.2]), name="x"), Run(_run([0.1, 0.2]), name="x")], "P@10"
        )
    with pytest.raises(RanklensInputError, match="exact=True"):
        ranklens.compare(
            _qrels(31), {"a": _run([0.1] * 31), "b": _run([0.2] * 31)}, "P@10", exact=True
        )


# -- reports -------------------------------------------------------------------


def _three_runs() -> ranklens.Comparison:
    rng = np.random.default_rng(9)
    n = 30
    base = _scores(rng, n, -0.1)
    noise = rng.choice([-0.1, 0.0, 0.1], n)
    runs = {
        "bm25_x": _run(base),
        "dense": _run(np.clip(np.round(base + 0.3 + noise, 1), 0, 1)),
        "mix": _run(np.clip(np.round(base + noise, 1), 0, 1)),
    }
    return ranklens.compare(_qrels(n), runs, ["P@10", "P@5"], n_resamples=2000)


def test_reports():
    cmp = _three_runs()
    df = cmp.to_pandas()
    assert list(df.columns) == [
        "metric", "run", "other", "mean", "other_mean", "diff", "p_value", "p_adjusted",
        "significant", "effect_size", "ci_low", "ci_high", "wins", "ties", "losses",
    ]  # fmt: skip
    assert len(df) == 6
    tex = cmp.to_latex()
    assert "\\toprule" in tex and "\\bottomrule" in tex and "bm25\\_x" in tex
    # dense has the best P@10 and beats bm25_x (letter a) significantly
    best = max(cmp.runs, key=lambda r: cmp.means[r]["precision@10"])
    assert best == "dense"
    assert "\\textbf{" in tex
    dense_line = next(line for line in tex.splitlines() if line.startswith("b & dense"))
    assert "^{a" in dense_line
    md = cmp.to_markdown()
    assert md.splitlines()[0].startswith("| metric | run | other |")
    assert md.count("\n| precision@") == 6
    assert "<table" in cmp.to_html() and "bm25_x" in cmp.to_html()
    doc = json.loads(cmp.to_json())
    assert doc["settings"]["test"] == "fisher" and len(doc["results"]) == 6
    assert "precision@10" in str(cmp) and repr(cmp) == str(cmp)


# -- plots -------------------------------------------------------------------------


def test_interpolated_precision_by_hand():
    from ranklens.plots import interpolated_precision

    qrels = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"x": 0}}
    run = {"q1": ["c", "a", "z", "b"]}
    # q1: ranks 1..4 precision 0, 1/2, 1/3, 2/4; recall 0, 1/2, 1/2, 1.
    # levels <= 0.5: max(1/2, 1/3, 1/2) = 0.5; levels > 0.5: 0.5. q2: no relevant -> 0.
    got = interpolated_precision(qrels, run)
    np.testing.assert_allclose(got, [0.25] * 11)
    run2 = {"q1": ["a", "c", "b"]}
    # precision 1, 1/2, 2/3; recall 1/2, 1/2, 1 -> levels <= .5: 1; > .5: 2/3
    got = interpolated_precision(qrels, run2)
    np.testing.assert_allclose(got, [0.5] * 6 + [1 / 3] * 5)


def test_plots_write_files(tmp_path):
    pytest.importorskip("matplotlib")
    from ranklens import plots

    cmp = _three_runs()
    f1 = plots.difference_plot(cmp, "P@10", "dense", "bm25_x", path=tmp_path / "diff.png")
    f2 = plots.distribution_plot(cmp, "P@10", kind="violin", path=tmp_path / "dist.svg")
    f3 = plots.distribution_plot(cmp, "P@10", path=tmp_path / "box.png")
    rng = np.random.default_rng(10)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 2)) for j in range(30)} for i in range(10)}
    runs = {
        name: {
            q: {d: float(lab * w + rng.random()) for d, lab in docs.items()}
            for q, docs in qrels.items()
        }
        for name, w in (("strong", 1.0), ("weak", 0.2))
    }
    f4 = plots.precision_recall_plot(qrels, runs, path=tmp_path / "pr.png")
    for f in (f1, f2, f3, f4):
        assert hasattr(f, "savefig")
    for name in ("diff.png", "dist.svg", "box.png", "pr.png"):
        assert (tmp_path / name).stat().st_size > 1000
    with pytest.raises(RanklensInputError):
        plots.distribution_plot(cmp, "P@10", kind="pie")
    import matplotlib.pyplot as plt

    plt.close("all")


# -- command line ----------------------------------------------------------------


def _write_trec(tmp_path, n=12):
    rng = np.random.default_rng(11)
    with open(tmp_path / "qrels.txt", "w") as f:
        for i in range(n):
            for j in range(10):
                f.write(f"q{i} 0 d{j} {int(j < 4)}\n")
    paths = []
    for tag, w in (("good", 1.0), ("poor", 0.1), ("mid", 0.5)):
        p = tmp_path / f"{tag}.run"
        with open(p, "w") as f:
            for i in range(n):
                scores = [(w * (j < 4) + rng.random(), f"d{j}") for j in range(10)]
                for rank, (s, d) in enumerate(sorted(scores, reverse=True), 1):
                    f.write(f"q{i} Q0 {d} {rank} {s:.6f} {tag}\n")
        paths.append(str(p))
    return str(tmp_path / "qrels.txt"), paths


def test_cli(tmp_path, capsys):
    if not hasattr(ranklens.Qrels, "from_trec") or not hasattr(Run, "from_trec"):
        pytest.skip("TREC readers not available")
    from ranklens.cli._compare import main

    qrels, runs = _write_trec(tmp_path)
    assert main([qrels, *runs, "-m", "map", "-m", "P@5", "--n-resamples", "500"]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "precision@5" in out
    assert main([qrels, *runs, "--baseline", "poor", "--format", "json", "--test", "student"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {(r["run"], r["other"]) for r in doc["results"]} == {("good", "poor"), ("mid", "poor")}
    assert main([qrels, *runs, "--format", "latex"]) == 0
    assert "\\toprule" in capsys.readouterr().out
    # usage errors: 2, one line on stderr, before any file is read
    assert main([qrels, runs[0]]) == 2
    assert main([qrels, *runs, "--test", "nope"]) == 2
    capsys.readouterr()
    missing = str(tmp_path / "missing.txt")
    for usage, message in [
        (["--baseline", "nobody"], "unknown --baseline 'nobody'"),
        (["--threads", "0"], "threads must be a positive int"),
        (["--alpha", "nan"], "alpha must be a number in (0, 1)"),
        (["--n-resamples", "-5"], "n_resamples must be a positive int"),
        ([runs[0]], "a run file is given twice"),
    ]:
        qrels_arg = qrels if usage[0] == "--baseline" else missing
        assert main([qrels_arg, *runs, *usage]) == 2, usage
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    # bad data: 1, one line on stderr
    assert main([str(tmp_path / "missing.txt"), *runs]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_cli_plot(tmp_path, capsys):
    if not hasattr(ranklens.Qrels, "from_trec"):
        pytest.skip("TREC readers not available")
    pytest.importorskip("matplotlib")
    from ranklens.cli._compare import main

    qrels, runs = _write_trec(tmp_path)
    out = tmp_path / "plot.png"
    assert main([qrels, *runs[:2], "--plot", str(out), "--n-resamples", "200"]) == 0
    assert out.stat().st_size > 1000
    capsys.readouterr()


def test_sign_flip_enumeration_helper_is_right():
    # sanity of the brute-force helper used above
    assert _exact_sign_flip_p(np.array([1.0, 2.0, 3.0])) == 0.25
