"""`compare`: are the differences between runs statistically significant?

>>> import ranklens
>>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
>>> a = {"q1": ["d1"], "q2": ["d2"], "q3": ["x", "d3"]}
>>> b = {"q1": ["x", "d1"], "q2": ["x"], "q3": ["x"]}
>>> cmp = ranklens.compare(qrels, {"a": a, "b": b}, ["mrr"], test="student")
>>> row = cmp.result("mrr", "a", "b")
>>> round(row.diff, 4), (row.wins, row.ties, row.losses)
(0.6667, (3, 0, 0))

Scores
    Every run is scored with :func:`ranklens.evaluate` on the same query set:
    **all qrels queries**.  A qrels query missing from a run is scored on an
    empty ranking (0 for every metric here); queries only in a run are ignored
    (``Comparison.missing_queries`` / ``Comparison.ignored_queries`` list them per
    run).  All tests are *paired* on these per-query scores; ``mean`` is the
    per-query mean (also for the counting measures such as ``num_ret``).

Pairs
    Without ``baseline``: every unordered pair once, in input order — ``run`` is
    the earlier run, ``other`` the later one.  With ``baseline``: every other run
    against it (``run`` = the run, ``other`` = the baseline).  ``diff`` is always
    ``mean(run) - mean(other)``, and the per-query differences are
    ``d_i = score_run(q_i) - score_other(q_i)``, ``n`` of them (one per qrels
    query).

Tests (``test=``), all two-sided, null hypothesis "no difference"
    * ``"student"`` — paired t-test: ``t = mean(d) / (sd(d, ddof=1) / sqrt(n))``
      with ``n - 1`` degrees of freedom, ``p = P(|T| >= |t|)`` from the Student t
      distribution (regularized incomplete beta function; scipy is not needed).
      Equals ``scipy.stats.ttest_rel``.  If ``sd(d) = 0``: ``p = 1`` when
      ``mean(d) = 0`` and ``p = 0`` otherwise (``t`` is infinite).
    * ``"wilcoxon"`` — Wilcoxon signed-rank test, reproducing
      ``scipy.stats.wilcoxon``'s defaults (``zero_method="wilcox"``,
      ``correction=False``, ``method="auto"``, scipy >= 1.13): zero differences
      are dropped; the ``m`` non-zero ``|d_i|`` get average ranks (ties share the
      mean rank); ``W+`` is the rank sum of the positive ones.  With ``n`` counting
      *all* differences (zeros included), the p-value is
      ``exact`` (the exact null distribution of ``W+`` over the ``2^m`` sign
      assignments, ``p = 2 min(P(W+ <= w), P(W+ >= w))``) when ``n <= 50`` and
      there are neither zeros nor tied ``|d_i|``; an exhaustive sign-flip
      permutation of ``W+`` (all ``2^n`` flips, ``p = 2 min(P(W <= w), P(W >= w))``)
      when ``n <= 13`` and there are zeros or ties; otherwise the normal
      approximation ``z = (W+ - m(m+1)/4) / sigma`` with the tie correction
      ``sigma^2 = (m(m+1)(2m+1) - sum(t^3 - t)/2) / 24`` (``t``: sizes of groups of
      tied ``|d_i|``), no continuity correction, ``p = 2 P(Z >= |z|)``.  All
      differences zero: ``p = 1`` (scipy gives NaN for n > 13).
    * ``"fisher"`` (default) — paired randomization test: under the null each
      ``d_i`` is as likely to be ``-d_i``.  The statistic is ``|sum(d)|`` (i.e.
      ``|mean(d)|``).  Monte Carlo: ``n_resamples`` random sign vectors ``s``;
      ``p = (#{|sum(s_i d_i)| >= |sum(d_i)| - tol} + 1) / (n_resamples + 1)``,
      ``tol = 1e-10 * sum|d_i|`` (so that sums equal in exact arithmetic tie).
      Exact: all ``2^n`` sign vectors, ``p = #{...} / 2^n`` (the observed one is
      among them).  ``exact=None`` (default) enumerates when
      ``2^n <= n_resamples``; ``exact=True`` always (``n <= 30``); ``exact=False``
      never.
    * ``"bootstrap"`` — paired bootstrap test of the mean: the differences are
      shifted to mean 0 (``d_i - mean(d)``, the null), then ``n`` of them are drawn
      with replacement ``n_resamples`` times;
      ``p = (#{|mean*| >= |mean(d)| - tol} + 1) / (n_resamples + 1)``,
      ``tol = 1e-10 * mean|d_i|``.
    * ``"tukey"`` — Tukey's HSD over **all** runs (also with a baseline: the
      family is all runs) in a randomized block design, queries as blocks:
      residual ``e_ij = x_ij - mean_run_j - mean_query_i + grand mean``,
      ``MSE = sum(e^2) / ((n-1)(k-1))``, ``q = |diff| / sqrt(MSE / n)``,
      ``p = P(Q_{k,(n-1)(k-1)} > q)`` (studentized range, computed by quadrature
      in the Rust core).  The p-values are already adjusted for all the pairs of
      a metric, so ``correction`` is **not** applied (``p_adjusted = p_value``).
      If ``MSE = 0``: ``p = 1`` for equal means, else ``0``.
    * ``"tukey_oneway"`` — the same with the one-way (unpaired) ANOVA error,
      ``MSE = sum_j sum_i (x_ij - mean_j)^2 / (k(n-1))``, ``df = k(n-1)``: what
      ``scipy.stats.tukey_hsd`` computes.  Ignores the pairing; prefer ``"tukey"``.

    With fewer than two queries every test gives ``p = 1``.

Confidence interval
    ``[ci_low, ci_high]``: percentile bootstrap of ``mean(d)``: ``n_resamples``
    resamples of the ``d_i`` with replacement; the ``(1 - confidence) / 2`` and
    ``(1 + confidence) / 2`` quantiles of the resampled means (linear
    interpolation between order statistics, numpy's default).  Seeded like the
    tests; identical runs give ``[0, 0]``.

Effect size
    Cohen's d of the paired differences, ``mean(d) / sd(d, ddof=1)``; ``0`` when
    ``mean(d) = 0``; ``+inf`` / ``-inf`` (the sign of ``mean(d)``) when ``sd(d) = 0``
    (or ``n < 2``) and ``mean(d) != 0``.

Multiple comparisons (``correction=``)
    ``"holm"`` (default, step-down, family-wise), ``"bonferroni"``, ``"bh"``
    (Benjamini–Hochberg, false discovery rate) or ``"none"``.  The family is
    every (pair, metric) test together (``correction_scope="all"``, default) or
    each metric's pairs separately (``correction_scope="metric"``).
    ``significant`` is ``p_adjusted <= alpha``.

Reproducibility
    The resampling runs in the Rust core over seeded xoshiro256** streams: job
    ``j`` (in the order metric, then pair) and block ``b`` of 4096 resamples get
    a seed derived from ``(seed, j, b)`` only, so the same ``seed`` gives the same
    numbers with any ``threads``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_level, check_threads, check_ties, positive_int
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._evaluate import evaluate
from ranklens._names import Metric, parse_metrics
from ranklens.compare._comparison import Comparison, PairResult
from ranklens.compare._stats import adjust_pvalues, cohens_d, ttest_paired_p, tukey_p, wilcoxon_p
from ranklens.errors import RanklensInputError

TESTS = ("student", "wilcoxon", "fisher", "bootstrap", "tukey", "tukey_oneway")


CORRECTIONS = ("holm", "bonferroni", "bh", "none")


_SCOPES = ("all", "metric")


def _named_runs(runs: Any) -> list[tuple[str, Run]]:
    out: list[tuple[str, Run]] = []
    if isinstance(runs, (Run, Qrels)):
        raise RanklensInputError("runs must be several runs: a dict name -> run or a list of Runs")
    if isinstance(runs, Mapping):
        for name, run in runs.items():
            if not isinstance(name, str) or not name:
                raise RanklensInputError(f"run names must be non-empty strings, got {name!r}")
            out.append((name, as_run(run)))
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        for i, run in enumerate(runs):
            if not isinstance(run, Run):
                raise RanklensInputError(
                    f"runs[{i}] is a {type(run).__name__}: in a list, give ranklens.Run "
                    "objects with .name set (or pass a dict name -> run)"
                )
            if not run.name:
                raise RanklensInputError(
                    f"runs[{i}] has no name: set Run(..., name=...) or pass a dict name -> run"
                )
            out.append((str(run.name), run))
    else:
        raise RanklensInputError(
            f"runs must be a dict name -> run or a list of named Runs, got {type(runs).__name__}"
        )
    names = [n for n, _ in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise RanklensInputError(f"run names must be unique; repeated: {', '.join(dupes)}")
    if len(out) < 2:
        raise RanklensInputError(f"compare needs at least 2 runs, got {len(out)}")
    return out


def check_settings(
    test: Any,
    correction: Any,
    alpha: Any,
    n_resamples: Any,
    seed: Any,
    confidence: Any = 0.95,
    correction_scope: Any = "all",
    exact: Any = None,
) -> None:
    """Validate :func:`compare`'s settings (the command line checks them before
    it reads any file)."""
    if test not in TESTS:
        raise RanklensInputError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    if correction not in CORRECTIONS:
        raise RanklensInputError(
            f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}"
        )
    if correction_scope not in _SCOPES:
        raise RanklensInputError(
            f"correction_scope must be 'all' or 'metric', got {correction_scope!r}"
        )
    for what, value in (("alpha", alpha), ("confidence", confidence)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (0.0 < float(value) < 1.0)
        ):
            raise RanklensInputError(f"{what} must be a number in (0, 1), got {value!r}")
    positive_int(n_resamples, "n_resamples")
    if isinstance(seed, bool) or not isinstance(seed, int) or not (0 <= seed < 2**64):
        raise RanklensInputError(f"seed must be an int in [0, 2**64), got {seed!r}")
    if exact not in (None, True, False):
        raise RanklensInputError(f"exact must be None, True or False, got {exact!r}")


def compare(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    runs: Mapping[str, Any] | Sequence[Run],
    metrics: str | Metric | Iterable[str | Metric],
    *,
    baseline: str | None = None,
    test: str = "fisher",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    relevance_level: float | str = 1,
    threads: int | None = None,
    exact: bool | None = None,
    confidence: float = 0.95,
    correction_scope: str = "all",
    ties: str = "trec",
) -> Comparison:
    """Compare runs pairwise on ``metrics`` with a paired significance test.

    ``runs``: a dict name -> :class:`Run` (or run mapping), or a list of
    :class:`Run` objects with ``.name`` set; at least two.  ``baseline``: the name
    of one run to compare every other run against (default: all pairs).
    ``test``: ``"fisher"`` (default), ``"student"``, ``"wilcoxon"``,
    ``"bootstrap"``, ``"tukey"`` or ``"tukey_oneway"``.  ``correction``:
    ``"holm"`` (default), ``"bonferroni"``, ``"bh"`` or ``"none"``, over every
    (pair, metric) test (``correction_scope="all"``) or per metric
    (``"metric"``).  ``alpha``: significance level.  ``n_resamples``, ``seed``,
    ``exact``: the resampling tests and the bootstrap CI (``confidence`` level).
    ``relevance_level``, ``threads``, ``ties``: as in :func:`ranklens.evaluate`;
    every run is scored in that tie order (``"best"`` / ``"worst"``: each run at
    its own best / worst ordering of equal scores, so the comparison of two runs'
    best cases, or of their worst cases).

    The precise definition of every test, of the CI, of the effect size and of
    which queries are scored follows (it is also the documentation of the
    module ``ranklens.compare``).

    Raises :class:`~ranklens.errors.RanklensInputError` on bad input.
    """
    check_settings(test, correction, alpha, n_resamples, seed, confidence, correction_scope, exact)
    nthreads = check_threads(threads)
    check_ties(ties)
    ms = parse_metrics(metrics)
    names_metrics = [m.name for m in ms]
    dup_metrics = sorted({n for n in names_metrics if names_metrics.count(n) > 1})
    if dup_metrics:
        raise RanklensInputError(f"metrics listed twice: {', '.join(dup_metrics)}")
    named = _named_runs(runs)
    names = [n for n, _ in named]
    if baseline is not None and baseline not in names:
        raise RanklensInputError(
            f"unknown baseline {baseline!r}; the runs are: {', '.join(map(repr, names))}"
        )
    q = as_qrels(qrels)

    scores: dict[str, np.ndarray] = {}
    missing: dict[str, list[str]] = {}
    ignored: dict[str, list[str]] = {}
    query_ids: list[str] = []
    for name, run in named:
        res = evaluate(q, run, ms, relevance_level=relevance_level, threads=nthreads, ties=ties)
        scores[name] = np.ascontiguousarray(res.values, dtype=np.float64)
        missing[name] = list(res.missing_queries)
        ignored[name] = list(res.ignored_queries)
        query_ids = res.query_ids
    n = len(query_ids)

    if baseline is None:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    else:
        pairs = [(r, baseline) for r in names if r != baseline]

    # Differences, job-major: job = metric index * len(pairs) + pair index.
    diffs = np.empty((len(ms) * len(pairs), n), dtype=np.float64)
    for j in range(len(ms)):
        for k, (a, b) in enumerate(pairs):
            diffs[j * len(pairs) + k] = scores[a][:, j] - scores[b][:, j]

    rs_test = test if test in ("fisher", "bootstrap") else "none"
    p_rs, ci_lo, ci_hi = _ranklens.stats_resample(
        diffs, rs_test, int(n_resamples), int(seed), exact, float(confidence), nthreads
    )

    if test in ("fisher", "bootstrap"):
        pvalues = [1.0 if n < 2 else float(p) for p in p_rs]
    elif test == "student":
        pvalues = [ttest_paired_p(d) for d in diffs]
    elif test == "wilcoxon":
        pvalues = [wilcoxon_p(d) for d in diffs]
    else:
        pvalues = []
        for j in range(len(ms)):
            table = np.column_stack([scores[r][:, j] for r in names])
            pvalues.extend(
                tukey_p(
                    table,
                    [(names.index(a), names.index(b)) for a, b in pairs],
                    blocked=(test == "tukey"),
                    threads=nthreads,
                )
            )

    p_arr = np.asarray(pvalues, dtype=np.float64)
    if test in ("tukey", "tukey_oneway"):
        p_adj = p_arr.copy()
    elif correction_scope == "all":
        p_adj = adjust_pvalues(p_arr, correction)
    else:
        p_adj = np.empty_like(p_arr)
        for j in range(len(ms)):
            sl = slice(j * len(pairs), (j + 1) * len(pairs))
            p_adj[sl] = adjust_pvalues(p_arr[sl], correction)

    results: list[PairResult] = []
    for j, m in enumerate(ms):
        for k, (a, b) in enumerate(pairs):
            job = j * len(pairs) + k
            d = diffs[job]
            mean_a = float(scores[a][:, j].mean())
            mean_b = float(scores[b][:, j].mean())
            results.append(
                PairResult(
                    metric=m.name,
                    run=a,
                    other=b,
                    mean=mean_a,
                    other_mean=mean_b,
                    diff=mean_a - mean_b,
                    p_value=float(p_arr[job]),
                    p_adjusted=float(p_adj[job]),
                    significant=bool(p_adj[job] <= alpha),
                    effect_size=cohens_d(d),
                    ci_low=float(ci_lo[job]),
                    ci_high=float(ci_hi[job]),
                    wins=int(np.count_nonzero(d > 0)),
                    ties=int(np.count_nonzero(d == 0)),
                    losses=int(np.count_nonzero(d < 0)),
                )
            )
    settings = {
        "test": test,
        "correction": "tukey" if test in ("tukey", "tukey_oneway") else correction,
        "correction_scope": correction_scope,
        "alpha": float(alpha),
        "baseline": baseline,
        "n_resamples": int(n_resamples),
        "seed": int(seed),
        "confidence": float(confidence),
        "exact": exact,
        "relevance_level": check_level(relevance_level),
        "ties": ties,
    }
    out = Comparison(
        runs=names,
        metrics=ms,
        query_ids=list(query_ids),
        scores=scores,
        missing_queries=missing,
        ignored_queries=ignored,
        results=results,
        settings=settings,
    )
    # The inputs as compared (references, no copy), for ``to_report(path)``.
    out._inputs = (q, dict(named))
    return out


compare.__doc__ = (compare.__doc__ or "") + "\n" + (__doc__ or "").split("\n\n", 1)[-1]
