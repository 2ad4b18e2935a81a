//! The pytrec_eval drop-in's dict path: `{query: {doc: score}}` scored
//! against judgments known in advance, without encoding a `Run`; the same
//! walk serves `ranklens.evaluate(dict, dict)` ([`evaluate_dict_all`]).
//!
//! Why no `Run`: the drop-in's judgments are known before any run is read
//! (`RelevanceEvaluator.__init__`), so each run entry only has to become
//! numbers: its score (rounded to a 32-bit float, as trec_eval 9.0.8 stores
//! it, or kept as a double for `ranklens.evaluate`, as trec_eval 10.0), the
//! judged entry it matches (or none) and, for tied scores only, its id's
//! bytes.  The kernels then run through `core::eval::score_rows` with the
//! same label vectors as `evaluate`, so the values are bit-identical by
//! construction.
//!
//! The rooms:
//! * [`judge`]: the judged ids of the encoded qrels, a table per query by a
//!   hash of their UTF-8 ([`DictJudgments`], built once, without the GIL);
//! * [`mod@walk`]: the run dict read into numbers under the GIL, chunk by
//!   chunk, pipelined with the scoring (`bindings::pipeline`);
//! * [`chunk`]: a chunk's queries ranked in trec_eval's order and scored;
//! * here: the Python entry points.
//!
//! The path takes only the common input: exact `str` query and document ids
//! with a UTF-8 form, `dict`s (subclasses such as `parse_run`'s
//! `defaultdict` included: read entry by entry, as the general path reads
//! them), exact `float` or `int` scores that are finite as doubles.  On
//! anything else it returns `None` before any Python code runs, and the
//! caller takes the general path (encode a `Run`, then `evaluate`), which
//! gives every check and message.  Not on free-threaded Python (the borrowed
//! keys would need every inner dict locked) nor in a stable-ABI build for
//! Windows before 3.10 (no borrowed UTF-8): the general path there.
//!
//! The result dicts of the drop-in are built by `bindings::evaluate`
//! (values and row dicts stored by position in dict copies, equal values of
//! a column sharing a float).
//!
//! Rejected alternative: a `Run` encoded from the dict, then `evaluate`
//! (the general path): a vocabulary and a copy of every id where the
//! judgments already say which ids matter.

// Where the path is off (see the module note) its scoring half is unused.
#![cfg_attr(
    any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))),
    allow(dead_code, unused_imports)
)]

mod chunk;
mod judge;
mod walk;

pub(super) use self::judge::DictJudgments;
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
use self::walk::walk;
use self::walk::WalkArgs;
use super::evaluate::{eval_setup, side, MetricArg};
use super::{to_py, SideArrays};
use crate::core::cancel::Cancel;
use crate::core::encode::SERIAL_ROWS;
use crate::core::eval;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyList;

/// [`DictJudgments`] of encoded qrels (`arrays`), built without the GIL;
/// `None` when a query has 2^32 - 1 judged rows or more.
#[pyfunction]
pub(super) fn dict_judgments(
    py: Python<'_>,
    arrays: SideArrays<'_>,
) -> PyResult<Option<DictJudgments>> {
    let q = side(&arrays)?.map_err(|e| to_py(py, e))?;
    // On the pool of `RANKLENS_NUM_THREADS` (whose bad value is the error of
    // the qrels' encoding, just before): else in this thread, as are qrels of
    // at most `SERIAL_ROWS` rows (the pool's hand-over would cost more).
    // Qrels of `INTERRUPTIBLE_ROWS` rows or more on a watched thread, so
    // that Ctrl-C stops the tables' filling (`super::interruptible`); fewer
    // end within a fraction of a second, and the hand-over would cost them.
    let rows = q.offsets.last().map_or(0, |&o| o.max(0) as usize);
    let build = |cancel: &Cancel| {
        if rows <= SERIAL_ROWS {
            return DictJudgments::build(&q, false, cancel);
        }
        eval::with_threads(None, || DictJudgments::build(&q, true, cancel))
            .unwrap_or_else(|_| DictJudgments::build(&q, false, cancel))
    };
    if rows < INTERRUPTIBLE_ROWS {
        return Ok(py.detach(|| build(&Cancel::default())));
    }
    super::interruptible(py, build)
}

/// Judged rows from which [`dict_judgments`] watches for Ctrl-C.
const INTERRUPTIBLE_ROWS: usize = 1 << 23;

/// The scored query ids (the run's objects, in its order) and their values.
type DictScores<'py> = (Bound<'py, PyList>, Bound<'py, PyArray2<f64>>);

/// The arguments of [`walk()`] from the Python ones.
#[allow(clippy::too_many_arguments)]
fn walk_args(
    py: Python<'_>,
    metrics: &[MetricArg],
    relevance_level: f64,
    judged_only: bool,
    miss_nan: bool,
    threads: Option<usize>,
    round_f32: bool,
    all: bool,
) -> PyResult<WalkArgs> {
    let (mut opts, specs) = eval_setup(metrics, relevance_level, judged_only, None, "trec")
        .map_err(|e| to_py(py, e))?;
    opts.miss_nan = miss_nan;
    Ok(WalkArgs {
        opts,
        specs,
        threads,
        round_f32,
        all,
    })
}

/// Score the queries of `scores` (pytrec_eval's run dict) that the qrels
/// hold against `judged` (from [`dict_judgments`] on the same qrels, encoded
/// as `qrels`), scores rounded to 32-bit floats: `(query id objects in run
/// order, values [queries x metrics])`, as the drop-in's general path
/// computes them; `None` when the input needs the general path (see the
/// module note).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_dict<'py>(
    py: Python<'py>,
    judged: PyRef<'py, DictJudgments>,
    qrels: SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    judged_only: bool,
) -> PyResult<Option<DictScores<'py>>> {
    #[cfg(any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))))]
    {
        let _ = (
            py,
            judged,
            qrels,
            scores,
            metrics,
            relevance_level,
            judged_only,
        );
        Ok(None)
    }
    #[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let args = walk_args(
            py,
            &metrics,
            relevance_level,
            judged_only,
            false,
            None,
            true,
            false,
        )?;
        let Some(w) = walk(py, &judged, &qrels, scores, args)? else {
            return Ok(None);
        };
        let nq = w.qids.len();
        let nm = metrics.len();
        let values = w.values.into_pyarray(py).reshape([nq, nm])?;
        Ok(Some((w.qids, values)))
    }
}

/// `ranklens.evaluate` of a run dict against encoded qrels (`judged` from
/// [`dict_judgments`] on them), scores kept as doubles (trec_eval 10.0):
/// `(values [qrels queries x metrics], whether each qrels query is in the
/// run, the run-only query id objects in run order)`, the values those of
/// `Run(scores)` then `evaluate`; `None` when the input needs that general
/// path (see the module note).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_dict_all<'py>(
    py: Python<'py>,
    judged: PyRef<'py, DictJudgments>,
    qrels: SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    miss_nan: bool,
) -> PyResult<Option<DictAll<'py>>> {
    #[cfg(any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))))]
    {
        let _ = (
            py,
            judged,
            qrels,
            scores,
            metrics,
            relevance_level,
            threads,
            judged_only,
            miss_nan,
        );
        Ok(None)
    }
    #[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let args = walk_args(
            py,
            &metrics,
            relevance_level,
            judged_only,
            miss_nan,
            threads,
            false,
            true,
        )?;
        let nq = judged.offsets.len().saturating_sub(1);
        let Some(w) = walk(py, &judged, &qrels, scores, args)? else {
            return Ok(None);
        };
        let nm = metrics.len();
        let mut values = vec![0.0; nq * nm];
        let mut present = vec![false; nq];
        for (i, &qi) in w.rows.iter().enumerate() {
            if let (Some(to), Some(from)) = (
                values.get_mut(qi * nm..(qi + 1) * nm),
                w.values.get(i * nm..(i + 1) * nm),
            ) {
                to.copy_from_slice(from);
            }
        }
        for &qi in w.rows.iter().take(w.qids.len()) {
            if let Some(p) = present.get_mut(qi) {
                *p = true;
            }
        }
        let values = values.into_pyarray(py).reshape([nq, nm])?;
        Ok(Some((values, present.into_pyarray(py), w.run_only)))
    }
}

/// Values `[qrels queries x metrics]`, each qrels query in the run or not,
/// the run-only query ids.
type DictAll<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, numpy::PyArray1<bool>>,
    Bound<'py, PyList>,
);
