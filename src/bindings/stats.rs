//! Significance tests (`core::stats`): resampling tests (paired
//! differences in, p-values and confidence intervals out) and the
//! studentized range distribution.
//!
//! Arrays in, arrays out: the Python layer (`ranklens.compare`, the gate)
//! shapes the per-query differences; the jobs run in the core without the
//! GIL, interruptible by Ctrl-C.

use super::{interruptible, to_py};
use crate::core::error::Error;
use crate::core::eval;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// (p-values, CI lows, CI highs) of `stats_resample`.
pub(super) type ResampleArrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Resampling tests on paired differences (`jobs x n`, one job per row):
/// returns (p-values, CI lows, CI highs).  `test`: "fisher", "bootstrap" or
/// "none" (CI only); `exact`: None = auto.  See `core::stats`.
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (diffs, test, n_resamples, seed, exact = None, confidence = 0.95, threads = None))]
pub(super) fn stats_resample<'py>(
    py: Python<'py>,
    diffs: numpy::PyReadonlyArray2<'py, f64>,
    test: &str,
    n_resamples: u64,
    seed: u64,
    exact: Option<bool>,
    confidence: f64,
    threads: Option<usize>,
) -> PyResult<ResampleArrays<'py>> {
    use crate::core::stats;
    let err = |e: Error| to_py(py, e);
    let settings = stats::Settings {
        test: stats::Test::from_name(test).map_err(err)?,
        n_resamples,
        seed,
        exact,
        level: confidence,
    };
    let n = diffs.as_array().ncols();
    let data = diffs
        .as_slice()
        .map_err(|e| PyTypeError::new_err(format!("non-contiguous array: {e}")))?;
    let out = interruptible(py, |cancel| {
        eval::with_threads(threads, || {
            stats::resample_batch_until(data, n, &settings, cancel)
        })
        .and_then(|x| x)
    })?
    .map_err(err)?;
    let p: Vec<f64> = out.iter().map(|o| o.p_value).collect();
    let lo: Vec<f64> = out.iter().map(|o| o.ci_low).collect();
    let hi: Vec<f64> = out.iter().map(|o| o.ci_high).collect();
    Ok((p.into_pyarray(py), lo.into_pyarray(py), hi.into_pyarray(py)))
}

/// Survival function of the studentized range, `P(Q > q)` for each `q`, with
/// `k` groups and `df` degrees of freedom (`inf` allowed).
#[pyfunction]
#[pyo3(signature = (q, k, df, threads = None))]
pub(super) fn studentized_range_sf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    k: usize,
    df: f64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    use crate::core::stats;
    let err = |e: Error| to_py(py, e);
    let q = q
        .as_slice()
        .map_err(|e| PyTypeError::new_err(format!("non-contiguous array: {e}")))?;
    let out = py
        .detach(|| eval::with_threads(threads, || stats::studentized_range_sf_many(q, k, df)))
        .and_then(|x| x)
        .map_err(err)?;
    Ok(out.into_pyarray(py))
}
