"""The statistics behind `compare` (and `gate`), in pure Python + numpy (no scipy):
effect size, paired t (p-values and quantiles), Wilcoxon signed-rank, Tukey's
studentized range, p-value corrections."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens.errors import RanklensInputError


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


def student_t_sf(t: float, df: float) -> float:
    """``P(T >= t)`` (upper tail) for Student's t with ``df`` degrees of freedom."""
    half = 0.5 * student_t_two_sided(t, df)
    return half if t >= 0 else 1.0 - half


def student_t_ppf(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom: the ``t``
    with ``P(T <= t) = q``, by bisection on :func:`student_t_sf` (to ~1e-12)."""
    if not 0.0 < q < 1.0:
        if q == 0.0 or q == 1.0:
            return math.copysign(math.inf, q - 0.5)
        raise RanklensInputError(f"a quantile level must be in [0, 1], got {q!r}")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -student_t_ppf(1.0 - q, df)
    tail = 1.0 - q
    lo, hi = 0.0, 1.0
    while student_t_sf(hi, df) > tail:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if student_t_sf(mid, df) > tail:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


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
