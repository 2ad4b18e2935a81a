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

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_threads, positive_int
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._evaluate import evaluate
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["CORRECTIONS", "TESTS", "Comparison", "PairResult", "compare"]

TESTS = ("student", "wilcoxon", "fisher", "bootstrap", "tukey", "tukey_oneway")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
_SCOPES = ("all", "metric")


@dataclass(frozen=True)
class PairResult:
    """One (metric, run, other) comparison; ``diff = mean - other_mean``."""

    metric: str
    run: str
    other: str
    mean: float
    other_mean: float
    diff: float
    p_value: float
    p_adjusted: float
    significant: bool
    effect_size: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = tuple(PairResult.__dataclass_fields__)


class Comparison:
    """The result of :func:`compare`.

    * ``results`` – list of :class:`PairResult`, metric-major, pairs in order;
      ``result(metric, run, other)`` finds one (either order of the two runs).
    * ``runs`` (names), ``metrics`` (:class:`Metric`), ``query_ids`` (the qrels
      queries every score is over), ``scores[run]`` (``queries x metrics``
      array), ``means[run][metric name]``.
    * ``missing_queries[run]`` – qrels queries absent from the run (scored on an
      empty ranking); ``ignored_queries[run]`` – run queries not in the qrels.
    * ``test``, ``correction``, ``correction_scope``, ``alpha``, ``baseline``,
      ``n_resamples``, ``seed``, ``confidence`` – the settings used.
    * ``to_pandas()``, ``to_markdown()``, ``to_latex()``, ``to_html()``,
      ``to_json()``, ``to_dict()``; ``str(cmp)`` is a text table.
    """

    def __init__(
        self,
        *,
        runs: list[str],
        metrics: list[Metric],
        query_ids: list[str],
        scores: dict[str, np.ndarray],
        missing_queries: dict[str, list[str]],
        ignored_queries: dict[str, list[str]],
        results: list[PairResult],
        settings: dict[str, Any],
    ) -> None:
        self.runs = runs
        self.metrics = metrics
        self.query_ids = query_ids
        self.scores = scores
        self.missing_queries = missing_queries
        self.ignored_queries = ignored_queries
        self.results = results
        self.settings = settings
        for key, value in settings.items():
            setattr(self, key, value)
        self.means = {
            r: {m.name: float(scores[r][:, j].mean()) for j, m in enumerate(metrics)} for r in runs
        }

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def result(self, metric: str | Metric, run: str, other: str) -> PairResult:
        """The comparison of ``run`` and ``other`` on ``metric``.

        If it was computed the other way round, the mirrored row is returned
        (``diff``, ``effect_size``, the CI and wins/losses negated or swapped).
        """
        name = parse_metric(metric).name
        for r in self.results:
            if r.metric != name:
                continue
            if (r.run, r.other) == (run, other):
                return r
            if (r.run, r.other) == (other, run):
                return PairResult(
                    metric=name,
                    run=run,
                    other=other,
                    mean=r.other_mean,
                    other_mean=r.mean,
                    diff=-r.diff,
                    p_value=r.p_value,
                    p_adjusted=r.p_adjusted,
                    significant=r.significant,
                    effect_size=-r.effect_size,
                    ci_low=-r.ci_high,
                    ci_high=-r.ci_low,
                    wins=r.losses,
                    ties=r.ties,
                    losses=r.wins,
                )
        raise KeyError(f"no comparison of {run!r} and {other!r} on {name!r}")

    def per_query(self, run: str, metric: str | Metric) -> dict[str, float]:
        """``{query id: score}`` of ``run`` on ``metric``."""
        j = self.metric_names.index(parse_metric(metric).name)
        return dict(zip(self.query_ids, self.scores[run][:, j].tolist()))

    def beats(self, metric: str | Metric) -> dict[str, list[str]]:
        """For each run, the runs it is significantly better than on ``metric``."""
        name = parse_metric(metric).name
        out: dict[str, list[str]] = {r: [] for r in self.runs}
        for r in self.results:
            if r.metric == name and r.significant and r.diff != 0:
                winner, loser = (r.run, r.other) if r.diff > 0 else (r.other, r.run)
                out[winner].append(loser)
        order = {r: i for i, r in enumerate(self.runs)}
        return {k: sorted(v, key=order.__getitem__) for k, v in out.items()}

    # -- reports (see _report.py) ---------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        from ranklens._report import to_dict

        return to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        from ranklens._report import to_json

        return to_json(self, indent)

    def to_pandas(self) -> Any:
        """One row per (metric, run, other): the :data:`COLUMNS` of :class:`PairResult`."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.results], columns=list(COLUMNS))

    def to_markdown(self, digits: int = 4) -> str:
        from ranklens._report import to_markdown

        return to_markdown(self, digits)

    def to_latex(
        self, digits: int = 4, caption: str | None = None, label: str | None = None
    ) -> str:
        from ranklens._report import to_latex

        return to_latex(self, digits, caption, label)

    def to_html(self, digits: int = 4) -> str:
        from ranklens._report import to_html

        return to_html(self, digits)

    def __str__(self) -> str:
        from ranklens._report import to_text

        return to_text(self)

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_html_(self) -> str:
        return self.to_html()


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


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


def _check_settings(
    test: Any,
    correction: Any,
    alpha: Any,
    n_resamples: Any,
    seed: Any,
    confidence: Any,
    correction_scope: Any,
    exact: Any,
) -> None:
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
    relevance_level: float = 1,
    threads: int | None = None,
    exact: bool | None = None,
    confidence: float = 0.95,
    correction_scope: str = "all",
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
    ``relevance_level``, ``threads``: as in :func:`ranklens.evaluate`.

    The precise definition of every test, of the CI, of the effect size and of
    which queries are scored follows (it is also the documentation of the
    module ``ranklens.compare``).

    Raises :class:`~ranklens.errors.RanklensInputError` on bad input.
    """
    _check_settings(test, correction, alpha, n_resamples, seed, confidence, correction_scope, exact)
    nthreads = check_threads(threads)
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
        res = evaluate(q, run, ms, relevance_level=relevance_level, threads=nthreads)
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
        "relevance_level": float(relevance_level),
    }
    return Comparison(
        runs=names,
        metrics=ms,
        query_ids=list(query_ids),
        scores=scores,
        missing_queries=missing,
        ignored_queries=ignored,
        results=results,
        settings=settings,
    )


compare.__doc__ = (compare.__doc__ or "") + "\n" + (__doc__ or "").split("\n\n", 1)[-1]


# ---------------------------------------------------------------------------
# Statistics (pure Python + numpy; no scipy)
# ---------------------------------------------------------------------------


def cohens_d(d: np.ndarray) -> float:
    """``mean(d) / sd(d, ddof=1)``; 0 if the mean is 0; ±inf if sd = 0 (or n < 2)."""
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0:
        return 0.0
    mean = float(d.mean())
    if mean == 0.0:
        return 0.0
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if sd == 0.0:
        return math.copysign(math.inf, mean)
    return mean / sd


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``; ``y = 1 - x`` given exactly."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, y, x)
    log_front = (
        a * math.log(x) + b * math.log(y) - math.lgamma(a) - math.lgamma(b) + math.lgamma(a + b)
    )
    # Continued fraction I = front / a * 1 / (1 + c1 / (1 + c2 / (1 + ...))),
    # c_{2m+1} = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)),
    # c_{2m}   = m (b-m) x / ((a+2m-1)(a+2m)); modified Lentz.
    tiny = 1e-300
    f = 1.0
    c = 1.0
    dd = 0.0
    for i in range(1, 100_000):
        m = i // 2
        if i % 2:
            coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        else:
            coef = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        dd = 1.0 + coef * dd
        dd = tiny if abs(dd) < tiny else dd
        c = 1.0 + coef / c
        c = tiny if abs(c) < tiny else c
        dd = 1.0 / dd
        delta = c * dd
        f *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return math.exp(log_front) / a / f


def student_t_two_sided(t: float, df: float) -> float:
    """``P(|T| >= |t|)`` for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    t2 = t * t
    return min(1.0, max(0.0, _betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))))


def ttest_paired_p(d: np.ndarray) -> float:
    """Two-sided paired t-test p-value of the differences ``d`` (see module doc)."""
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n < 2:
        return 1.0
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = mean / (sd / math.sqrt(n))
    return student_t_two_sided(t, n - 1.0)


def _average_ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based) of ``x`` and the sizes of its groups of ties."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    sizes = np.diff(np.r_[starts, xs.size])
    avg = starts + (sizes + 1) / 2.0  # mean of ranks start+1 .. start+size
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = np.repeat(avg, sizes)
    return ranks, sizes


def _norm_sf(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _signed_rank_exact_counts(m: int) -> np.ndarray:
    """Number of subsets of {1..m} with each sum 0..m(m+1)/2 (exact W+ null)."""
    total = m * (m + 1) // 2
    counts = np.zeros(total + 1, dtype=np.float64)
    counts[0] = 1.0
    for r in range(1, m + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def wilcoxon_p(d: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value, as scipy.stats.wilcoxon's defaults."""
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    if n < 2:
        return 1.0
    nz = d[d != 0]
    m = nz.size
    if m == 0:
        return 1.0
    ranks, sizes = _average_ranks(np.abs(nz))
    w_plus = float(ranks[nz > 0].sum())
    has_ties = bool(np.any(sizes > 1))
    n_zero = n - m
    if n <= 50 and not has_ties and n_zero == 0:
        counts = _signed_rank_exact_counts(m)
        total = float(2**m)
        k_hi = math.floor(w_plus)
        k_lo = math.ceil(w_plus)
        sf = counts[k_hi:].sum() / total
        cdf = counts[: k_lo + 1].sum() / total
        return float(min(1.0, 2.0 * min(sf, cdf)))
    if n <= 13:
        # Every sign flip of the n differences; zeros stay zero and are not ranked.
        signs = ((np.arange(2**m)[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
        positive = np.where(signs, nz < 0, nz > 0)  # flipping a value swaps its sign
        null = positive.astype(np.float64) @ ranks
        gamma = abs(100 * np.finfo(np.float64).eps * w_plus)
        p_less = np.count_nonzero(null <= w_plus + gamma) / null.size
        p_greater = np.count_nonzero(null >= w_plus - gamma) / null.size
        return float(min(1.0, 2.0 * min(p_less, p_greater)))
    mean = m * (m + 1) / 4.0
    var = (m * (m + 1) * (2 * m + 1) - float(np.sum(sizes**3 - sizes)) / 2.0) / 24.0
    if var <= 0.0:
        return 1.0
    z = (w_plus - mean) / math.sqrt(var)
    return float(min(1.0, 2.0 * _norm_sf(abs(z))))


def studentized_range_sf(q: Any, k: int, df: float, threads: int | None = None) -> np.ndarray:
    """``P(Q > q)`` for the studentized range with ``k`` groups and ``df`` d.o.f."""
    arr = np.ascontiguousarray(np.atleast_1d(np.asarray(q, dtype=np.float64)))
    return _ranklens.studentized_range_sf(arr, int(k), float(df), threads)


def tukey_p(
    table: np.ndarray,
    pairs: list[tuple[int, int]],
    *,
    blocked: bool = True,
    threads: int | None = None,
) -> list[float]:
    """Tukey HSD p-values of ``pairs`` of columns of ``table`` (queries x runs)."""
    n, k = table.shape
    if n < 2:
        return [1.0] * len(pairs)
    col_means = table.mean(axis=0)
    if blocked:
        resid = table - col_means[None, :] - table.mean(axis=1)[:, None] + table.mean()
        df = float((n - 1) * (k - 1))
    else:
        resid = table - col_means[None, :]
        df = float(k * (n - 1))
    mse = float(np.sum(resid**2)) / df
    diffs = np.array([abs(col_means[a] - col_means[b]) for a, b in pairs], dtype=np.float64)
    if mse <= 0.0:
        return [1.0 if d == 0 else 0.0 for d in diffs]
    qs = diffs / math.sqrt(mse / n)
    return [float(p) for p in studentized_range_sf(qs, k, df, threads)]


def adjust_pvalues(p: np.ndarray, method: str) -> np.ndarray:
    """Multiple-comparison adjusted p-values (holm, bonferroni, bh, none)."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="mergesort")
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ps))
    elif method == "bh":
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1)) * ps[::-1])[::-1]
        adj = np.minimum(1.0, adj)
    else:
        raise RanklensInputError(f"unknown correction {method!r}")
    out = np.empty(m, dtype=np.float64)
    out[order] = adj
    return out
