//! Significance testing: the resampling tests and the special functions that
//! need speed (used by `ranklens.compare`).
//!
//! Everything here works on plain `&[f64]` slices of *paired differences*
//! `d[i] = score_a(query i) - score_b(query i)`.
//!
//! * [`sign_flip_count`] / [`sign_flip_exact`] — the paired randomization
//!   (Fisher) test: under H0 each difference is as likely to be `+d` as `-d`.
//! * [`bootstrap_test_count`] — the paired bootstrap test of the mean.
//! * [`bootstrap_means`] + [`percentile`] — the percentile bootstrap CI.
//! * [`studentized_range_sf`] — the survival function of the studentized range
//!   (Tukey HSD), by Gauss–Legendre quadrature.
//!
//! Reproducibility: random numbers come from our own xoshiro256** generator
//! seeded by splitmix64.  Resamples are cut into fixed blocks of [`BLOCK`];
//! block `b` of job `j` is seeded from `(seed, j, purpose, b)` only, never from
//! a thread id, and block results are combined in block order.  The same seed
//! thus gives the same numbers whatever the number of threads.

use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use rayon::prelude::*;

/// Resamples per independently seeded block.
pub const BLOCK: u64 = 4096;

/// Largest `n` accepted by [`sign_flip_exact`] (2^n sign vectors).
pub const MAX_EXACT_N: usize = 30;

/// Relative tolerance when comparing a resampled statistic with the observed
/// one: `|T*| >= |T_obs| - REL_TOL * scale` counts as "at least as extreme",
/// so that sums equal in exact arithmetic but differing by rounding tie.
pub const REL_TOL: f64 = 1e-10;

// ---------------------------------------------------------------------------
// Random numbers
// ---------------------------------------------------------------------------

/// One step of splitmix64 (Steele, Lea & Flood 2014): a bijective mixer.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed derived from several integers (order matters).
pub fn derive_seed(parts: &[u64]) -> u64 {
    let mut s = 0x5EED_5EED_5EED_5EEDu64;
    let mut out = splitmix64(&mut s);
    for &p in parts {
        s ^= p.wrapping_add(out);
        out = splitmix64(&mut s);
    }
    out
}

/// xoshiro256** (Blackman & Vigna), state filled by splitmix64.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (multiply-shift; bias below 2^-32 for n < 2^32).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Number of blocks and the size of block `b` for `total` resamples.
fn blocks(total: u64) -> u64 {
    total.div_ceil(BLOCK)
}

fn block_len(total: u64, b: u64) -> u64 {
    (total - b * BLOCK).min(BLOCK)
}

// ---------------------------------------------------------------------------
// Randomization (sign-flip) test
// ---------------------------------------------------------------------------

fn abs_sum(d: &[f64]) -> f64 {
    d.iter().map(|x| x.abs()).sum()
}

/// Monte-Carlo sign-flip test: how many of `n_resamples` random sign vectors
/// `s` give `|sum(s_i d_i)| >= |sum(d_i)| - tol` (`tol = REL_TOL * sum|d_i|`).
/// The two-sided p-value is `(count + 1) / (n_resamples + 1)`.
pub fn sign_flip_count(d: &[f64], n_resamples: u64, seed: u64) -> u64 {
    sign_flip_count_in(d, n_resamples, seed, &Cancel::default())
}

/// [`sign_flip_count`], skipping the blocks left once `cancel` is set.
fn sign_flip_count_in(d: &[f64], n_resamples: u64, seed: u64, cancel: &Cancel) -> u64 {
    let observed = d.iter().sum::<f64>().abs();
    let threshold = observed - REL_TOL * abs_sum(d);
    let words = d.len().div_ceil(64);
    (0..blocks(n_resamples))
        .into_par_iter()
        .map(|b| {
            if cancel.is_cancelled() {
                return 0;
            }
            let mut rng = Rng::new(derive_seed(&[seed, b]));
            let mut count = 0u64;
            let mut bits = vec![0u64; words];
            for _ in 0..block_len(n_resamples, b) {
                for w in bits.iter_mut() {
                    *w = rng.next_u64();
                }
                let mut s = 0.0;
                for (i, &x) in d.iter().enumerate() {
                    if (bits[i >> 6] >> (i & 63)) & 1 == 1 {
                        s -= x;
                    } else {
                        s += x;
                    }
                }
                if s.abs() >= threshold {
                    count += 1;
                }
            }
            count
        })
        .sum()
}

/// Exact sign-flip test: the share of all `2^n` sign vectors whose
/// `|sum(s_i d_i)|` is at least the observed one (same tolerance as
/// [`sign_flip_count`]).  Needs `n <= MAX_EXACT_N`.
pub fn sign_flip_exact(d: &[f64]) -> Result<f64> {
    sign_flip_exact_in(d, &Cancel::default())
}

/// [`sign_flip_exact`], skipping the chunks left once `cancel` is set.
fn sign_flip_exact_in(d: &[f64], cancel: &Cancel) -> Result<f64> {
    let n = d.len();
    if n > MAX_EXACT_N {
        return Err(Error::InvalidInput(format!(
            "the exact randomization test enumerates 2^n sign flips and needs n <= \
             {MAX_EXACT_N} queries, got {n}"
        )));
    }
    let observed = d.iter().sum::<f64>().abs();
    let threshold = observed - REL_TOL * abs_sum(d);
    let total: u64 = 1u64 << n;
    let chunk: u64 = 1 << 12;
    let count: u64 = (0..total.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            if cancel.is_cancelled() {
                return 0;
            }
            let lo = c * chunk;
            let hi = (lo + chunk).min(total);
            let mut count = 0u64;
            for mask in lo..hi {
                let mut s = 0.0;
                for (i, &x) in d.iter().enumerate() {
                    if (mask >> i) & 1 == 1 {
                        s -= x;
                    } else {
                        s += x;
                    }
                }
                if s.abs() >= threshold {
                    count += 1;
                }
            }
            count
        })
        .sum();
    Ok(count as f64 / total as f64)
}

// ---------------------------------------------------------------------------
// Bootstrap
// ---------------------------------------------------------------------------

fn mean(d: &[f64]) -> f64 {
    if d.is_empty() {
        0.0
    } else {
        d.iter().sum::<f64>() / d.len() as f64
    }
}

/// Paired bootstrap test of the mean difference: the differences are shifted
/// to mean 0 (`d_i - mean(d)`, the null), resampled `n` with replacement
/// `n_resamples` times; counts resamples with `|mean*| >= |mean(d)| - tol`
/// (`tol = REL_TOL * mean|d_i|`).  p = `(count + 1) / (n_resamples + 1)`.
pub fn bootstrap_test_count(d: &[f64], n_resamples: u64, seed: u64) -> u64 {
    bootstrap_test_count_in(d, n_resamples, seed, &Cancel::default())
}

/// [`bootstrap_test_count`], skipping the blocks left once `cancel` is set.
fn bootstrap_test_count_in(d: &[f64], n_resamples: u64, seed: u64, cancel: &Cancel) -> u64 {
    let n = d.len();
    if n == 0 {
        return n_resamples;
    }
    let m = mean(d);
    let shifted: Vec<f64> = d.iter().map(|x| x - m).collect();
    let threshold = m.abs() - REL_TOL * abs_sum(d) / n as f64;
    (0..blocks(n_resamples))
        .into_par_iter()
        .map(|b| {
            if cancel.is_cancelled() {
                return 0;
            }
            let mut rng = Rng::new(derive_seed(&[seed, b]));
            let mut count = 0u64;
            for _ in 0..block_len(n_resamples, b) {
                let mut s = 0.0;
                for _ in 0..n {
                    s += shifted[rng.below(n)];
                }
                if (s / n as f64).abs() >= threshold {
                    count += 1;
                }
            }
            count
        })
        .sum()
}

/// Means of `n_resamples` bootstrap resamples of `d` (in resample order).
pub fn bootstrap_means(d: &[f64], n_resamples: u64, seed: u64) -> Vec<f64> {
    bootstrap_means_in(d, n_resamples, seed, &Cancel::default())
}

/// [`bootstrap_means`], skipping the blocks left once `cancel` is set (their
/// means are then missing).
fn bootstrap_means_in(d: &[f64], n_resamples: u64, seed: u64, cancel: &Cancel) -> Vec<f64> {
    let n = d.len();
    if n == 0 {
        return vec![0.0; n_resamples as usize];
    }
    let parts: Vec<Vec<f64>> = (0..blocks(n_resamples))
        .into_par_iter()
        .map(|b| {
            if cancel.is_cancelled() {
                return Vec::new();
            }
            let mut rng = Rng::new(derive_seed(&[seed, b]));
            (0..block_len(n_resamples, b))
                .map(|_| {
                    let mut s = 0.0;
                    for _ in 0..n {
                        s += d[rng.below(n)];
                    }
                    s / n as f64
                })
                .collect()
        })
        .collect();
    parts.concat()
}

/// The `q`-quantile (0 <= q <= 1) of `values` with linear interpolation between
/// order statistics (position `q * (len - 1)`, numpy's default).  Sorts in place.
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (values.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(values.len() - 1);
    let frac = pos - lo as f64;
    let (a, b) = (values[lo], values[hi]);
    if frac == 0.0 || a == b {
        a
    } else {
        a + (b - a) * frac
    }
}

/// Percentile bootstrap confidence interval of the mean of `d` at level `level`
/// (e.g. 0.95: the 2.5% and 97.5% quantiles of the resampled means).
pub fn bootstrap_ci(d: &[f64], n_resamples: u64, seed: u64, level: f64) -> (f64, f64) {
    bootstrap_ci_in(d, n_resamples, seed, level, &Cancel::default())
}

fn bootstrap_ci_in(
    d: &[f64],
    n_resamples: u64,
    seed: u64,
    level: f64,
    cancel: &Cancel,
) -> (f64, f64) {
    let mut means = bootstrap_means_in(d, n_resamples, seed, cancel);
    let tail = (1.0 - level) / 2.0;
    let lo = percentile(&mut means, tail);
    let hi = percentile(&mut means, 1.0 - tail);
    (lo, hi)
}

// ---------------------------------------------------------------------------
// Batches (what the bindings call)
// ---------------------------------------------------------------------------

/// Which resampling test a batch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// Sign-flip randomization test (Fisher).
    Fisher,
    /// Paired bootstrap test.
    Bootstrap,
    /// No test: only the confidence interval.
    None,
}

impl Test {
    pub fn from_name(name: &str) -> Result<Test> {
        match name {
            "fisher" => Ok(Test::Fisher),
            "bootstrap" => Ok(Test::Bootstrap),
            "none" => Ok(Test::None),
            _ => Err(Error::InvalidInput(format!(
                "resampling test must be 'fisher', 'bootstrap' or 'none', got {name:?}"
            ))),
        }
    }
}

/// Settings of [`resample_batch`].
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub test: Test,
    pub n_resamples: u64,
    pub seed: u64,
    /// `Some(true)`: enumerate all sign flips (Fisher; error if n > MAX_EXACT_N);
    /// `Some(false)`: always Monte Carlo; `None`: exact when `2^n <= n_resamples`.
    pub exact: Option<bool>,
    /// Confidence level of the bootstrap CI, in (0, 1).
    pub level: f64,
}

/// One job's result: p-value (1.0 when `test` is `None`) and CI bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub p_value: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Run the test and the CI on each row of `diffs` (`jobs x n`, row-major).
/// Job `j` draws from seeds derived from `(seed, j)`.
pub fn resample_batch(diffs: &[f64], n: usize, s: &Settings) -> Result<Vec<Outcome>> {
    resample_batch_until(diffs, n, s, &Cancel::default())
}

/// [`resample_batch`], stopping with [`Error::Interrupted`] once `cancel` is
/// set: each block of [`BLOCK`] resamples checks it first, so the call ends
/// within about one block per thread of the flag being set.
pub fn resample_batch_until(
    diffs: &[f64],
    n: usize,
    s: &Settings,
    cancel: &Cancel,
) -> Result<Vec<Outcome>> {
    if s.n_resamples == 0 {
        return Err(Error::InvalidInput("n_resamples must be at least 1".into()));
    }
    if !(s.level > 0.0 && s.level < 1.0) {
        return Err(Error::InvalidInput(format!(
            "the confidence level must be in (0, 1), got {}",
            s.level
        )));
    }
    if n == 0 {
        if !diffs.is_empty() {
            return Err(Error::InvalidInput("differences of width 0".into()));
        }
        return Ok(Vec::new());
    }
    if diffs.len() % n != 0 {
        return Err(Error::InvalidInput(format!(
            "{} differences do not split into rows of {n}",
            diffs.len()
        )));
    }
    if diffs.iter().any(|x| !x.is_finite()) {
        return Err(Error::InvalidInput(
            "a score difference is NaN or infinite".into(),
        ));
    }
    if s.exact == Some(true) && s.test == Test::Fisher && n > MAX_EXACT_N {
        return Err(Error::InvalidInput(format!(
            "exact=True enumerates 2^n sign flips and needs at most {MAX_EXACT_N} queries, \
             got {n}"
        )));
    }
    diffs
        .par_chunks(n)
        .enumerate()
        .map(|(j, d)| {
            cancel.check()?;
            let j = j as u64;
            let test_seed = derive_seed(&[s.seed, j, 1]);
            let ci_seed = derive_seed(&[s.seed, j, 2]);
            let p_value = match s.test {
                Test::None => 1.0,
                Test::Fisher => {
                    let exact = match s.exact {
                        Some(e) => e,
                        None => n < 64 && (1u64 << n) <= s.n_resamples,
                    };
                    if exact {
                        sign_flip_exact_in(d, cancel)?
                    } else {
                        let c = sign_flip_count_in(d, s.n_resamples, test_seed, cancel);
                        (c + 1) as f64 / (s.n_resamples + 1) as f64
                    }
                }
                Test::Bootstrap => {
                    let c = bootstrap_test_count_in(d, s.n_resamples, test_seed, cancel);
                    (c + 1) as f64 / (s.n_resamples + 1) as f64
                }
            };
            let (ci_low, ci_high) = bootstrap_ci_in(d, s.n_resamples, ci_seed, s.level, cancel);
            cancel.check()?;
            Ok(Outcome {
                p_value: p_value.min(1.0),
                ci_low,
                ci_high,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Normal distribution and the studentized range
// ---------------------------------------------------------------------------

const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// The complementary error function, to about 1e-15 relative (series for
/// small |x|, continued fraction for the tail).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        // erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_k 2^k x^(2k+1) / (1*3*...*(2k+1)):
        // all terms positive, no cancellation.
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut k = 0.0;
        loop {
            k += 1.0;
            term *= 2.0 * x2 / (2.0 * k + 1.0);
            sum += term;
            if term <= sum * 1e-17 {
                break;
            }
        }
        return 1.0 - 2.0 * FRAC_1_SQRT_PI * (-x2).exp() * sum;
    }
    if x > 27.3 {
        return 0.0;
    }
    // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
    // evaluated by the modified Lentz method.
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut dd = 0.0;
    for i in 1..500 {
        let a = i as f64 / 2.0;
        dd = x + a * dd;
        if dd.abs() < tiny {
            dd = tiny;
        }
        c = x + a / c;
        if c.abs() < tiny {
            c = tiny;
        }
        dd = 1.0 / dd;
        let delta = c * dd;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() * FRAC_1_SQRT_PI / f
}

/// Standard normal CDF.
pub fn norm_cdf(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// Gauss–Legendre nodes and weights on [-1, 1] (Newton on P_n).
fn gauss_legendre(n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let mut x = (std::f64::consts::PI * (i as f64 - 0.25) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let kf = k as f64;
                let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        out.push((x, 2.0 / ((1.0 - x * x) * dp * dp)));
    }
    out
}

/// Composite Gauss–Legendre nodes on [a, b] with `panels` equal panels.
fn nodes(a: f64, b: f64, panels: usize, gl: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let h = (b - a) / panels as f64;
    let mut out = Vec::with_capacity(panels * gl.len());
    for p in 0..panels {
        let mid = a + (p as f64 + 0.5) * h;
        for &(x, w) in gl {
            out.push((mid + 0.5 * h * x, 0.5 * h * w));
        }
    }
    out
}

/// Survival function of the studentized range `Q = range / s` of `k`
/// independent standard normals, `s^2 ~ chi2(df)/df` independent of them:
/// `P(Q > q)`.  `df = inf` gives the range of `k` normals itself.
///
/// `P(R > w) = k ∫ φ(z) [Φ(z)^(k-1) - (Φ(z) - Φ(z-w))^(k-1)] dz`, the bracket
/// expanded as `b Σ_j a^j (a-b)^(k-2-j)` (`a = Φ(z)`, `b = Φ(z-w)`) so that tiny
/// tails keep their relative accuracy; then `P(Q > q) = E_s[P(R > q s)]`, the
/// density of `s` normalised numerically on the quadrature grid.
pub fn studentized_range_sf(q: f64, k: usize, df: f64) -> f64 {
    if q.is_nan() || k < 2 || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        return 1.0;
    }
    let gl = gauss_legendre(20);
    let z_nodes: Vec<(f64, f64, f64, f64)> = nodes(-10.0, 10.0, 20, &gl)
        .into_iter()
        .map(|(z, w)| {
            let phi = (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt();
            (z, w * phi, norm_cdf(z), 0.0)
        })
        .collect();
    let m = k - 1;
    let range_sf = |wr: f64| -> f64 {
        let mut total = 0.0;
        for &(z, wphi, a, _) in &z_nodes {
            let b = norm_cdf(z - wr);
            if b == 0.0 {
                continue;
            }
            let c = (a - b).max(0.0);
            // S_m = sum_{j=0}^{m-1} a^j c^(m-1-j) by S_1 = 1, S_{t+1} = c S_t + a^t.
            let mut s = 1.0;
            let mut apow = 1.0;
            for _ in 1..m {
                apow *= a;
                s = c * s + apow;
            }
            total += wphi * b * s;
        }
        (k as f64 * total).clamp(0.0, 1.0)
    };
    if df.is_infinite() {
        return range_sf(q);
    }
    // s = sqrt(x / df), x ~ chi2(df): integrate over the bulk of x.
    let spread = (2.0 * df).sqrt();
    let x_lo = (df - 14.0 * spread).max(0.0);
    let x_hi = df + 14.0 * spread + 100.0;
    let (s_lo, s_hi) = ((x_lo / df).sqrt(), (x_hi / df).sqrt());
    let mode = ((df - 1.0).max(0.0) / df).sqrt();
    let log_density = |s: f64| (df - 1.0) * s.ln() - 0.5 * df * s * s;
    let log_max = if mode > 0.0 { log_density(mode) } else { 0.0 };
    let mut num = 0.0;
    let mut den = 0.0;
    // Panels also refined where q*s is small (the range tail is steep in s).
    let mut cuts = vec![s_lo, s_hi];
    let panels = 40;
    for i in 1..panels {
        cuts.push(s_lo + (s_hi - s_lo) * i as f64 / panels as f64);
    }
    for c in [0.5, 1.0, 2.0, 4.0, 8.0] {
        let s = c / q;
        if s > s_lo && s < s_hi {
            cuts.push(s);
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    for win in cuts.windows(2) {
        for (s, w) in nodes(win[0], win[1], 1, &gl) {
            let f = (log_density(s) - log_max).exp();
            if f == 0.0 {
                continue;
            }
            den += w * f;
            num += w * f * range_sf(q * s);
        }
    }
    if den > 0.0 {
        (num / den).clamp(0.0, 1.0)
    } else {
        f64::NAN
    }
}

/// [`studentized_range_sf`] for many `q`, in parallel.
pub fn studentized_range_sf_many(q: &[f64], k: usize, df: f64) -> Result<Vec<f64>> {
    if k < 2 {
        return Err(Error::InvalidInput(format!(
            "the studentized range needs k >= 2 groups, got {k}"
        )));
    }
    if df.is_nan() || df <= 0.0 {
        return Err(Error::InvalidInput(format!(
            "the studentized range needs df > 0, got {df}"
        )));
    }
    Ok(q.par_iter()
        .map(|&x| studentized_range_sf(x, k, df))
        .collect())
}

#[cfg(test)]
mod tests;
