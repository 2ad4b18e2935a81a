"""`gate`: may a candidate run replace a baseline?  A retrieval-quality check for CI.

>>> import ranklens
>>> qrels = {f"q{i}": {"d1": 1} for i in range(30)}
>>> base = {f"q{i}": ["d1", "x"] for i in range(30)}
>>> res = ranklens.gate(qrels, base, base, {"ndcg@10": 0.01})
>>> res.passed, res.verdict("ndcg@10").drop
(True, 0.0)

The question, per metric
    For every qrels query ``q_i`` (``n`` of them) the per-query drop
    ``d_i = baseline(q_i) - candidate(q_i)`` (positive: the candidate is worse).
    The budget ``b`` of the metric is the largest mean drop that is acceptable
    (``max drop``; an absolute difference in the metric's units, ``b >= 0``).
    Both runs are scored with :func:`ranklens.evaluate` on **all qrels
    queries**, so a qrels query missing from a run is scored on an empty ranking
    (trec_eval ``-c``) and listed in ``GateResult.missing_queries``; queries only
    in a run are ignored and listed in ``GateResult.ignored_queries``.  The mean is
    the per-query mean also for the counting measures (``num_ret``...) and for
    ``gm_map`` (as in :func:`ranklens.compare`).

Modes (``mode=``)
    * ``"strict"`` (default) — non-inferiority must be shown: a metric passes when
      the test rejects ``H0: mean(d) >= b`` in favour of ``mean(d) < b``, i.e. when
      the upper one-sided ``1 - alpha`` confidence bound of ``mean(d)`` is below
      the budget.  Too few queries, or too much noise, fail.
    * ``"lenient"`` — a metric fails only when a drop beyond the budget is itself
      significant: the test rejects ``H0: mean(d) <= b`` in favour of
      ``mean(d) > b`` (the lower one-sided bound of ``mean(d)`` is above the
      budget).  Noise passes.

Tests (``test=``), one-sided, at the statistic ``mean(d) - b``
    * ``"t"`` (default) — paired t: ``t = (mean(d) - b) / (sd(d) / sqrt(n))``
      (``sd`` with ``ddof=1``), ``n - 1`` degrees of freedom; strict
      ``p = P(T <= t)``, lenient ``p = P(T >= t)``; the bounds are
      ``mean(d) -/+ t_{1-alpha_i, n-1} sd / sqrt(n)``.  With ``sd = 0`` the bounds
      are ``mean(d)`` and ``p`` is 0 or 1 (is ``mean(d)`` on the alternative's side
      of ``b``?).  Also spelled ``"student"``.
    * ``"randomization"`` — sign-flip test of ``H0: mean(d) = b``: the
      differences ``d_i - b`` have random signs under the null; in the Rust core
      (:func:`ranklens.compare`'s ``"fisher"`` test, seeded, exact enumeration when
      ``2^n <= n_resamples``) on ``d_i - b``.  That null distribution is
      symmetric, so the one-sided ``p`` is half the two-sided one when
      ``sum(d_i - b)`` is on the alternative's side, else one minus that half.
      Also spelled ``"fisher"``.
    * ``"bootstrap"`` — percentile bootstrap: ``n_resamples`` means of ``n``
      differences drawn with replacement (numpy, ``seed``); strict
      ``p = #{mean* >= b} / n_resamples``, lenient ``p = #{mean* <= b} /
      n_resamples``, so ``p <= alpha_i`` exactly when the ``alpha_i`` /
      ``1 - alpha_i`` percentile (no interpolation) is on the alternative's side.
    The bounds printed for ``"randomization"`` and ``"bootstrap"`` are these
    bootstrap percentiles (linear interpolation).  With fewer than two queries,
    ``p = 1`` and the bounds are infinite.

Several metrics (``correction=``)
    The metrics' p-values are one family: ``"holm"`` (default, step-down),
    ``"bonferroni"`` or ``"none"``; a metric's test is significant when its
    adjusted p-value is ``<= alpha``.  So in strict mode the chance that any
    metric passes although its true drop is at or beyond the budget is at most
    ``alpha``; in lenient mode, the chance that any metric fails although its true
    drop is within the budget.  ``alpha_i``, the level a metric was tested at, is
    ``alpha`` (none), ``alpha / m`` (bonferroni) or ``alpha / (m - r)`` (holm,
    ``r`` = 0-based rank of its p-value); the printed bounds (``ci_low``,
    ``ci_high``: two one-sided ``1 - alpha_i`` bounds) and the detectable drop
    use it.  (Under Holm a metric whose bound is inside the budget can still fail
    when a metric with a smaller p-value failed first: the verdict follows the
    adjusted p-values.)

Power
    ``min_detectable = (t_{1-alpha_i, n-1} + t_{0.8, n-1}) * sd(d) / sqrt(n)``:
    the smallest true mean drop (distance from the budget) that the paired t-test
    on these queries tells apart with power 0.8 given the observed paired
    variance.  When a budget is below it, the query set is too small to enforce
    that budget: a :class:`~ranklens.errors.RanklensWarning` is issued and the
    warning is kept in ``GateResult.warnings``.

Per-query detail
    ``wins`` / ``ties`` / ``losses`` count the queries where the candidate is
    better / equal / worse; ``GateResult.regressions[metric]`` lists the ``top``
    queries with the largest drop (drop > 0, largest first); for every cutoff
    ``k`` of the gated metrics (``ndcg@10`` -> 10) or given as ``cutoffs``,
    ``GateResult.flips[k]`` lists the queries that had a relevant document in the
    baseline's top ``k`` and have none in the candidate's (hit -> miss), and
    ``GateResult.gains[k]`` the reverse.

Tie orders
    The verdict is computed on trec_eval's tie order (equal scores by document
    id descending), an arbitrary choice among the orderings of tied documents.
    Both runs are also scored with ``ties="best"`` and ``ties="worst"`` (higher /
    lower labels first within equal scores, see :func:`ranklens.evaluate`) and
    gated the same way (runs without tied scores have one order: nothing more
    is computed); ``GateResult.tie_verdicts`` holds the overall verdict
    under each order (``None`` for grouped qrels, which refuse them) and
    ``GateResult.tie_dependent`` is true when they differ: a regression that
    exists only in one tie order.  The reports then say so in one line.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._checks import check_threads, positive_int
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._evaluate import evaluate
from ranklens._gate._result import GateResult, MetricVerdict, QueryChange
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens.compare import adjust_pvalues, student_t_ppf, student_t_sf
from ranklens.errors import RanklensInputError, RanklensWarning

MODES = ("strict", "lenient")
TESTS = ("t", "randomization", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")
_TEST_ALIASES = {"student": "t", "paired-t": "t", "paired_t": "t", "fisher": "randomization"}
POWER = 0.8


def canonical_test(test: Any) -> str:
    """``test`` with its aliases resolved; raises on an unknown test."""
    name = _TEST_ALIASES.get(test, test) if isinstance(test, str) else test
    if name not in TESTS:
        raise RanklensInputError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    return name


def check_settings(
    mode: Any, test: Any, correction: Any, alpha: Any, n_resamples: Any, seed: Any, top: Any
) -> str:
    """Validate the settings (before any file is read); the canonical test name."""
    if mode not in MODES:
        raise RanklensInputError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    name = canonical_test(test)
    if correction not in CORRECTIONS:
        raise RanklensInputError(
            f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}"
        )
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 0.5:
        raise RanklensInputError(f"alpha must be a number in (0, 0.5), got {alpha!r}")
    positive_int(n_resamples, "n_resamples")
    if isinstance(seed, bool) or not isinstance(seed, int) or not (0 <= seed < 2**64):
        raise RanklensInputError(f"seed must be an int in [0, 2**64), got {seed!r}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise RanklensInputError(f"top must be an int >= 0, got {top!r}")
    return name


def check_budgets(
    budgets: Mapping[str, float] | float | None,
    metrics: str | Metric | Iterable[str | Metric] | None,
) -> tuple[list[Metric], list[float]]:
    """The gated metrics (``metrics`` first, then the other keys of ``budgets``)
    and their budgets; raises unless every metric has exactly one budget >= 0."""
    listed = [] if metrics is None else parse_metrics(metrics)
    per: dict[Metric, float] = {}
    default: float | None = None
    if isinstance(budgets, Mapping):
        given = budgets_by_metric((k, v, f"budgets[{k!r}]") for k, v in budgets.items())
        per = {m: _budget(value, m.name) for m, (value, _) in given.items()}
    elif budgets is not None:
        default = _budget(budgets, "every metric")
    ms: list[Metric] = []
    for m in listed + list(per):
        if m not in ms:
            ms.append(m)
    if not ms:
        raise RanklensInputError(
            "nothing to gate: give budgets as {metric: max drop} (or metrics and one max drop)"
        )
    out = []
    for m in ms:
        b = per.get(m, default)
        if b is None:
            raise RanklensInputError(f"no budget (max drop) for {m.name}")
        out.append(b)
    return ms, out


def budgets_by_metric(
    entries: Iterable[tuple[str, Any, str]],
) -> dict[Metric, tuple[Any, str]]:
    """The budget of each metric, and where it was given, from ``(metric name,
    budget, place)`` entries in order; ``place`` names where the entry came from
    (``budgets['map']``, ``--max-drop map=0.01``, a configuration key).

    The one rule of every door that takes budgets (:func:`gate`, ``ranklens
    gate``'s flags and configuration): a metric has at most one budget whatever
    its spelling (``map`` and ``AP`` are one metric); a second is a
    :class:`~ranklens.errors.RanklensInputError` naming both places, never the
    last one silently.  Budgets are returned as given (the caller checks them)."""
    per: dict[Metric, tuple[Any, str]] = {}
    for name, value, place in entries:
        m = parse_metric(name)
        if m in per:
            raise RanklensInputError(f"two budgets for {m.name}: {per[m][1]} and {place}")
        per[m] = (value, place)
    return per


def _budget(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise RanklensInputError(f"the max drop of {what} must be a number >= 0, got {value!r}")
    if math.isinf(value):
        raise RanklensInputError(f"the max drop of {what} must be finite, got {value!r}")
    return float(value)


def as_gate_qrels(obj: Any) -> Qrels:
    """Qrels from a :class:`Qrels`, a mapping, a TREC qrels path or a frame."""
    if isinstance(obj, (str, os.PathLike)):
        return Qrels.from_trec(obj)
    frame = _frame_reader(obj, Qrels)
    return frame(obj) if frame else as_qrels(obj)


def as_gate_run(obj: Any) -> Run:
    """A run from a :class:`Run`, a mapping, a TREC run path or a frame."""
    if isinstance(obj, (str, os.PathLike)):
        return Run.from_trec(obj)
    frame = _frame_reader(obj, Run)
    return frame(obj) if frame else as_run(obj)


def _frame_reader(obj: Any, cls: type) -> Any:
    module = type(obj).__module__.split(".")[0]
    name = type(obj).__name__
    if module == "pandas" and name == "DataFrame":
        return cls.from_pandas
    if module == "polars" and name in ("DataFrame", "LazyFrame"):
        return cls.from_polars
    if module == "pyarrow" and name in ("Table", "RecordBatch"):
        return cls.from_arrow
    return None


def gate(
    qrels: Any,
    baseline: Any,
    candidate: Any,
    budgets: Mapping[str, float] | float,
    *,
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    mode: str = "strict",
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    top: int = 10,
    cutoffs: Iterable[int] | None = None,
    relevance_level: float = 1,
    threads: int | None = None,
    names: tuple[str, str] = ("baseline", "candidate"),
) -> GateResult:
    """May ``candidate`` replace ``baseline``?  A paired non-inferiority test per metric.

    ``qrels``, ``baseline``, ``candidate``: anything ranklens reads —
    :class:`Qrels` / :class:`Run` (any ``from_*``: TREC, frames, JSON, grouped
    RAG ground truth, arrays), mappings, a TREC file path, or a pandas / polars /
    pyarrow frame with the default column names.
    ``budgets``: ``{metric: max drop}`` (any spelling), or one max drop for every
    metric of ``metrics``; ``metrics`` (optional) fixes the order and may add
    metrics that take the single budget.  ``mode``: ``"strict"`` (default) or
    ``"lenient"``; ``test``: ``"t"`` (default), ``"randomization"`` or
    ``"bootstrap"``; ``correction`` across metrics: ``"holm"`` (default),
    ``"bonferroni"`` or ``"none"``; ``alpha``: the family-wise error rate.
    ``n_resamples``, ``seed``: the resampling tests and bounds.  ``top``: how many
    of the most regressed queries to keep per metric.  ``cutoffs``: the ``k`` of
    the hit -> miss lists (default: the cutoffs of the metrics).
    ``relevance_level``, ``threads``: as in :func:`ranklens.evaluate`.
    ``names``: how the report calls the two runs.

    Returns a :class:`GateResult` (``.passed``, ``.to_markdown()``,
    ``.to_json()``...).  Raises :class:`~ranklens.errors.RanklensInputError` on
    bad input.  The definitions follow.
    """
    test = check_settings(mode, test, correction, alpha, n_resamples, seed, top)
    nthreads = check_threads(threads)
    ms, budget_list = check_budgets(budgets, metrics)
    cuts = check_cutoffs(ms, cutoffs)
    if not (
        isinstance(names, tuple) and len(names) == 2 and all(isinstance(x, str) for x in names)
    ):
        raise RanklensInputError(f"names must be a tuple of two strings, got {names!r}")
    q = as_gate_qrels(qrels)
    runs = (as_gate_run(baseline), as_gate_run(candidate))

    hit_metrics = [parse_metric(f"hit_rate@{k}") for k in cuts]
    scored = ms + [h for h in hit_metrics if h not in ms]
    results = [
        evaluate(q, r, scored, relevance_level=relevance_level, threads=nthreads) for r in runs
    ]
    qids = list(results[0].query_ids)
    base = np.ascontiguousarray(results[0].values[:, : len(ms)], dtype=np.float64)
    cand = np.ascontiguousarray(results[1].values[:, : len(ms)], dtype=np.float64)
    diffs = np.ascontiguousarray((base - cand).T)  # metrics x queries
    budget_arr = np.asarray(budget_list, dtype=np.float64)

    pvalues, boot = _pvalues(diffs, budget_arr, mode, test, n_resamples, seed, nthreads)
    p_adj = adjust_pvalues(pvalues, correction)
    levels = _levels(pvalues, correction, alpha)
    significant = p_adj <= alpha
    n = len(qids)

    verdicts = []
    for j, m in enumerate(ms):
        d = diffs[j]
        lo, hi = _bounds(d, levels[j], test, boot[j] if boot is not None else None)
        mdd = _min_detectable(d, levels[j])
        passed = bool(significant[j]) if mode == "strict" else not bool(significant[j])
        verdicts.append(
            MetricVerdict(
                metric=m.name,
                budget=float(budget_arr[j]),
                baseline=float(base[:, j].mean()) if n else 0.0,
                candidate=float(cand[:, j].mean()) if n else 0.0,
                drop=float(d.mean()) if n else 0.0,
                ci_low=lo,
                ci_high=hi,
                p_value=float(pvalues[j]),
                p_adjusted=float(p_adj[j]),
                level=float(levels[j]),
                passed=passed,
                wins=int(np.count_nonzero(d < 0)),
                ties=int(np.count_nonzero(d == 0)),
                losses=int(np.count_nonzero(d > 0)),
                min_detectable=mdd,
            )
        )

    tie_verdicts = _tie_verdicts(
        q,
        runs,
        ms,
        relevance_level,
        nthreads,
        (all(v.passed for v in verdicts), base, cand),
        budget_arr,
        (mode, test, correction, alpha, n_resamples, seed),
    )
    regressions = {
        m.name: _top_regressions(qids, base[:, j], cand[:, j], top) for j, m in enumerate(ms)
    }
    flips: dict[int, list[str]] = {}
    gains: dict[int, list[str]] = {}
    for k, h in zip(cuts, hit_metrics):
        col = scored.index(h)
        hit_b = results[0].values[:, col] > 0
        hit_c = results[1].values[:, col] > 0
        flips[k] = [qids[i] for i in np.flatnonzero(hit_b & ~hit_c)]
        gains[k] = [qids[i] for i in np.flatnonzero(~hit_b & hit_c)]

    msgs = [
        f"{v.metric}: the max drop {v.budget:g} is below the smallest drop these {n} "
        f"queries can detect ({_fmt(v.min_detectable)} at alpha {v.level:.3g}, power "
        f"{POWER:g}): the query set is too small to enforce it"
        for v in verdicts
        if v.underpowered
    ]
    for msg in msgs:
        warnings.warn(msg, RanklensWarning, stacklevel=2)

    settings = {
        "mode": mode,
        "test": test,
        "correction": correction,
        "alpha": float(alpha),
        "n_resamples": int(n_resamples),
        "seed": int(seed),
        "top": int(top),
        "cutoffs": list(cuts),
        "relevance_level": float(relevance_level),
        "power": POWER,
    }
    return GateResult(
        names=names,
        query_ids=qids,
        verdicts=verdicts,
        regressions=regressions,
        flips=flips,
        gains=gains,
        missing_queries={nm: list(r.missing_queries) for nm, r in zip(names, results)},
        ignored_queries={nm: list(r.ignored_queries) for nm, r in zip(names, results)},
        warnings=msgs,
        settings=settings,
        scores={nm: s for nm, s in zip(names, (base, cand))},
        tie_verdicts=tie_verdicts,
    )


def _tie_verdicts(
    q: Qrels,
    runs: tuple[Run, Run],
    ms: list[Metric],
    relevance_level: float,
    threads: int | None,
    trec: tuple[bool, np.ndarray, np.ndarray],
    budgets: np.ndarray,
    settings: tuple[str, str, str, float, int, int],
) -> dict[str, bool] | None:
    """The overall verdict under trec, best and worst tie orders (both runs
    ranked the same way), each as the trec verdict is reached (p-values,
    correction, mode); ``None`` when the qrels refuse best / worst (grouped).

    ``trec``: the trec verdict and the two runs' per-query values it came from.
    Work is skipped where the answer is known: runs without tied scores have
    one order (no evaluation), and an order whose per-query values are those
    of an order already gated has that order's verdict (no second test, the
    resampling tests' cost).  Rejected: best and worst always computed and
    tested (four more evaluations and two more tests, for a known answer).
    """
    mode, test, correction, alpha, n_resamples, seed = settings
    passed, *trec_values = trec
    if q.grouped:
        return None
    if not any(r._has_tied_scores() for r in runs):
        return {"trec": bool(passed), "best": bool(passed), "worst": bool(passed)}
    out = {"trec": bool(passed)}
    gated: list[tuple[list[np.ndarray], bool]] = [(trec_values, bool(passed))]
    for ties in ("best", "worst"):
        try:
            values = [
                evaluate(
                    q, r, ms, relevance_level=relevance_level, threads=threads, ties=ties
                ).values
                for r in runs
            ]
        except RanklensInputError:
            return None
        known = next(
            (v for seen, v in gated if all(np.array_equal(a, b) for a, b in zip(seen, values))),
            None,
        )
        if known is None:
            diffs = np.ascontiguousarray((values[0] - values[1]).T)
            pvalues, _ = _pvalues(diffs, budgets, mode, test, n_resamples, seed, threads)
            significant = adjust_pvalues(pvalues, correction) <= alpha
            known = bool(significant.all() if mode == "strict" else not significant.any())
            gated.append((values, known))
        out[ties] = known
    return out


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


def check_cutoffs(ms: list[Metric], cutoffs: Iterable[int] | None) -> list[int]:
    """The cutoffs of the hit -> miss lists: ``cutoffs``, or the metrics' ``k``."""
    if cutoffs is None:
        return sorted({m.k for m in ms if m.k is not None})
    out = []
    for k in cutoffs:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise RanklensInputError(f"a cutoff must be an int >= 1, got {k!r}")
        if k not in out:
            out.append(k)
    return sorted(out)


def _pvalues(
    diffs: np.ndarray,
    budgets: np.ndarray,
    mode: str,
    test: str,
    n_resamples: int,
    seed: int,
    threads: int | None,
) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """One-sided p-values (and, for the resampling tests, the bootstrap means)."""
    n_metrics, n = diffs.shape
    # strict: H1 is mean(d) < b; lenient: mean(d) > b.  `sign` turns both into
    # "the statistic mean(d) - b is large on the alternative's side".
    sign = -1.0 if mode == "strict" else 1.0
    if n < 2:
        return np.ones(n_metrics), None
    if test == "t":
        p = np.empty(n_metrics)
        for j in range(n_metrics):
            d = diffs[j]
            excess = sign * (float(d.mean()) - budgets[j])
            sd = float(d.std(ddof=1))
            if sd == 0.0:
                p[j] = 0.0 if excess > 0 else 1.0
            else:
                p[j] = student_t_sf(excess / (sd / math.sqrt(n)), n - 1.0)
        return p, None
    boot = [_bootstrap_means(diffs[j], n_resamples, seed + j) for j in range(n_metrics)]
    if test == "bootstrap":
        p = np.array(
            [
                np.count_nonzero(sign * (boot[j] - budgets[j]) <= 0) / n_resamples
                for j in range(n_metrics)
            ]
        )
        return p, boot
    shifted = np.ascontiguousarray(diffs - budgets[:, None])
    p_two, _, _ = _ranklens.stats_resample(
        shifted, "fisher", int(n_resamples), int(seed), None, 0.95, threads
    )
    p = np.empty(n_metrics)
    for j in range(n_metrics):
        half = min(1.0, float(p_two[j])) / 2.0
        p[j] = half if sign * float(shifted[j].sum()) > 0 else 1.0 - half
    return p, boot


def _bootstrap_means(d: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """``n_resamples`` means of ``len(d)`` draws with replacement (numpy PCG64)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    n = d.size
    out = np.empty(n_resamples)
    block = max(1, 2_000_000 // max(n, 1))
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = d[idx].mean(axis=1)
    return out


def _levels(p: np.ndarray, correction: str, alpha: float) -> np.ndarray:
    """The level each metric's test is held to (see the module doc)."""
    m = p.size
    if correction == "none":
        return np.full(m, float(alpha))
    if correction == "bonferroni":
        return np.full(m, alpha / m)
    ranks = np.empty(m, dtype=np.int64)
    ranks[np.argsort(p, kind="mergesort")] = np.arange(m)
    return alpha / (m - ranks)


def _bounds(d: np.ndarray, level: float, test: str, boot: np.ndarray | None) -> tuple[float, float]:
    """Lower and upper one-sided ``1 - level`` bounds of ``mean(d)``."""
    n = d.size
    if n < 2:
        return -math.inf, math.inf
    if boot is not None:
        lo, hi = np.quantile(boot, [level, 1.0 - level])
        return float(lo), float(hi)
    mean = float(d.mean())
    half = student_t_ppf(1.0 - level, n - 1.0) * float(d.std(ddof=1)) / math.sqrt(n)
    return mean - half, mean + half


def _min_detectable(d: np.ndarray, level: float) -> float:
    n = d.size
    if n < 2:
        return math.inf
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0
    quantiles = student_t_ppf(1.0 - level, n - 1.0) + student_t_ppf(POWER, n - 1.0)
    return quantiles * sd / math.sqrt(n)


def _top_regressions(
    qids: list[str], base: np.ndarray, cand: np.ndarray, top: int
) -> list[QueryChange]:
    drop = base - cand
    worse = np.flatnonzero(drop > 0)
    order = sorted(worse.tolist(), key=lambda i: (-drop[i], qids[i]))[:top]
    return [QueryChange(qids[i], float(base[i]), float(cand[i]), float(drop[i])) for i in order]


gate.__doc__ = (gate.__doc__ or "") + "\n" + (__doc__ or "").split("\n\n", 1)[-1]
