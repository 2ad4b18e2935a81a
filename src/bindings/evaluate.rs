//! Scoring (`core::eval`, `core::stream`): `evaluate` on encoded sides, a run
//! file chunk by chunk, and the nested dicts of the results.

use super::interruptible;
use super::{non_contiguous, to_py, SideArrays};
use crate::core::cancel::Cancel;
use crate::core::error::Error;
use crate::core::eval::{self, Side, SubtopicRows};
use crate::core::metrics::MetricSpec;
use crate::core::vocab::Vocab;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyString};

pub(super) fn side<'a>(a: &'a SideArrays<'_>) -> PyResult<Result<Side<'a>, Error>> {
    let sl = |e: numpy::AsSliceError| PyTypeError::new_err(format!("non-contiguous array: {e}"));
    let qv = Vocab::new(a.0.as_slice().map_err(sl)?, a.1.as_slice().map_err(sl)?);
    let dv = Vocab::new(a.3.as_slice().map_err(sl)?, a.4.as_slice().map_err(sl)?);
    let offsets = a.2.as_slice().map_err(sl)?;
    let doc_ids = a.5.as_slice().map_err(sl)?;
    let values = a.6.as_slice().map_err(sl)?;
    let extra = a.7.as_slice().map_err(sl)?;
    Ok(qv.and_then(|qv| dv.and_then(|dv| Side::new(qv, dv, offsets, doc_ids, values, extra))))
}

/// Subtopic judgments of the qrels rows (`eval::SubtopicRows`): offsets per
/// row, subtopic indices, labels.
pub(super) type SubtopicArrays<'py> = (
    numpy::PyReadonlyArray1<'py, i64>,
    numpy::PyReadonlyArray1<'py, u32>,
    numpy::PyReadonlyArray1<'py, f64>,
);

/// A metric as the Python layer passes it: (family, cutoff, own relevance
/// level, named parameters).
pub(super) type MetricArg = (String, Option<usize>, Option<f64>, Vec<(String, f64)>);

/// The evaluation options and metric specs from the Python arguments.
pub(super) fn eval_setup(
    metrics: &[MetricArg],
    level: f64,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
) -> Result<(eval::Options, Vec<MetricSpec>), Error> {
    let opts = eval::Options {
        level,
        judged_only,
        max_docs,
        ties: eval::Ties::from_name(ties)?,
        miss_nan: false,
        cancel: Cancel::default(),
    };
    let specs = metrics
        .iter()
        .map(|(name, k, level, params)| MetricSpec::new(name, *k, *level, params))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((opts, specs))
}

/// Rows (run + qrels) from which `evaluate` watches for Ctrl-C (see
/// `interruptible`; below, a call is over in milliseconds).
const INTERRUPTIBLE_ROWS: usize = 100_000;

pub(super) type EvalArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// Score every qrels query. Returns (values [queries x metrics], run index of
/// each qrels query or -1, indices of run-only queries).
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (qrels, run, metrics, relevance_level, threads = None, judged_only = false, max_docs = None, ties = "trec", subtopics = None, miss_nan = false))]
pub(super) fn evaluate<'py>(
    py: Python<'py>,
    qrels: SideArrays<'py>,
    run: SideArrays<'py>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
    subtopics: Option<SubtopicArrays<'py>>,
    miss_nan: bool,
) -> PyResult<EvalArrays<'py>> {
    let err = |e: Error| to_py(py, e);
    let (mut opts, specs) =
        eval_setup(&metrics, relevance_level, judged_only, max_docs, ties).map_err(err)?;
    opts.miss_nan = miss_nan;
    let q = side(&qrels)?.map_err(err)?;
    let q = match &subtopics {
        None => q,
        Some((o, i, l)) => q
            .with_subtopics(SubtopicRows {
                offsets: o.as_slice().map_err(non_contiguous)?,
                ids: i.as_slice().map_err(non_contiguous)?,
                labels: l.as_slice().map_err(non_contiguous)?,
            })
            .map_err(err)?,
    };
    let r = side(&run)?.map_err(err)?;
    let nq = q.num_queries();
    let nm = specs.len();
    let run_eval = |opts: &eval::Options| {
        eval::with_threads(threads, || eval::evaluate(&q, &r, &specs, opts)).and_then(|x| x)
    };
    // A small call ends within milliseconds: no watching thread for it.
    let out = if r.values.len() + q.values.len() < INTERRUPTIBLE_ROWS {
        py.detach(|| run_eval(&opts))
    } else {
        interruptible(py, |cancel| {
            run_eval(&eval::Options {
                cancel: cancel.clone(),
                ..opts.clone()
            })
        })?
    }
    .map_err(err)?;
    let values = out.values.into_pyarray(py).reshape([nq, nm])?;
    Ok((
        values,
        out.run_index.into_pyarray(py),
        out.run_only.into_pyarray(py),
    ))
}

/// `{row key: {column key: value}}` from a `rows x columns` array: the nested
/// dicts of the pytrec_eval drop-in.  The column keys are the caller's `str`
/// objects, shared by every row (their hashes are computed once); built here
/// rather than by `dict(zip(keys, row))` over `tolist()` rows, which took twice
/// as long for ~100 measures a query (no intermediate lists, no tuples).
/// `like`: a dict whose keys may be `rows` in order (the run dict, when every
/// run query is scored); the outer dict is then a copy of it whose values are
/// replaced (see [`Slots`]), else the rows are inserted one by one.
#[pyfunction]
#[pyo3(signature = (rows, columns, values, like = None))]
pub(super) fn nested_dict<'py>(
    py: Python<'py>,
    rows: Vec<Bound<'py, PyAny>>,
    columns: Vec<Bound<'py, PyAny>>,
    values: numpy::PyReadonlyArray2<'py, f64>,
    like: Option<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let shape = values.as_array().shape().to_vec();
    if shape != [rows.len(), columns.len()] {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "values has shape {shape:?}, expected ({}, {})",
            rows.len(),
            columns.len()
        )));
    }
    let flat = values.as_slice().map_err(non_contiguous)?;
    let plain = |keys: &[Bound<'py, PyAny>]| {
        // SAFETY: live objects; a type pointer check.
        keys.iter()
            .all(|k| unsafe { ffi::PyUnicode_CheckExact(k.as_ptr()) != 0 })
    };
    let (out, slots) = match like {
        Some(like) if like.len() == rows.len() && plain(&rows) => {
            let out = like.copy()?;
            match Slots::of(&out, &rows) {
                Some(slots) => (out, Some(slots)),
                None => (PyDict::new(py), None),
            }
        }
        _ => (PyDict::new(py), None),
    };
    // The outer dict's entry `i` gets row `i`'s dict: by position in the
    // copy of `like`, else by insertion.
    let put = |i: usize, row: &Bound<'py, PyAny>, inner: Bound<'py, PyDict>| match slots
        .as_ref()
        .and_then(|s| s.value(&out, i, row))
    {
        // SAFETY: the value of the entry whose key is `row` (checked just
        // now; nothing ran since): the copy's reference to the old value is
        // dropped, the new dict's handed to `out`.
        Some(at) => {
            unsafe { ffi::Py_DecRef(std::mem::replace(&mut *at, inner.into_ptr())) };
            Ok(())
        }
        None => out.set_item(row, inner),
    };
    if columns.is_empty() {
        for (i, row) in rows.iter().enumerate() {
            put(i, row, PyDict::new(py))?;
        }
        return Ok(out);
    }
    // Each row's dict starts as a copy of the previous one (same keys, same
    // order), whose values are then replaced: no table growth and rehashing
    // on the way to ~100 keys (~30% faster than inserting into a new dict).
    // Where the dict layout is known (`layout::dict_entries`) a value is
    // stored at its entry, found by position, not by a key lookup.
    let ncols = columns.len();
    let exact = plain(&columns);
    let mut prev: Option<Bound<'py, PyDict>> = None;
    for (i, (row, vals)) in rows.iter().zip(flat.chunks_exact(ncols)).enumerate() {
        let Some(p) = &prev else {
            let inner = PyDict::new(py);
            for (key, &v) in columns.iter().zip(vals) {
                inner.set_item(key, PyFloat::new(py, v))?;
            }
            put(i, row, inner.clone())?;
            prev = Some(inner);
            continue;
        };
        let inner = p.copy()?;
        // SAFETY: the GIL is held and `inner` is a live exact dict that no
        // other code has seen; no Python code runs until the loop below is
        // done (new floats, reference counts of floats), unless a key's
        // `__eq__` does (a column key that is not an exact `str`: then the
        // entries are not read).
        let mut entries = unsafe { super::layout::dict_entries(inner.as_ptr()) }
            .filter(|&(_, _, n)| n == ncols && exact);
        for (j, (key, &v)) in columns.iter().zip(vals).enumerate() {
            let value = PyFloat::new(py, v);
            // SAFETY: as above; `j < n`, the entry count.
            let slot = entries.and_then(|(first, stride, _)| unsafe {
                let at = first.add(j * stride);
                (*at == key.as_ptr()).then(|| at.add(1))
            });
            match slot {
                // SAFETY: the entry of this column's key (checked above);
                // the copy's reference to the old value is dropped, the new
                // float's handed to the dict.
                Some(at) => unsafe {
                    ffi::Py_DecRef(std::mem::replace(&mut *at, value.into_ptr()))
                },
                None => {
                    entries = None;
                    inner.set_item(key, value)?;
                }
            }
        }
        put(i, row, inner.clone())?;
        prev = Some(inner);
    }
    Ok(out)
}

/// The outer dict of [`nested_dict`] as a copy of `like`: its entry `i`
/// holds row `i`'s key, found by position (`layout::dict_entries`).
struct Slots;

impl Slots {
    /// `Some` if `out`'s entries hold `rows` in order (checked key by key).
    fn of(out: &Bound<'_, PyDict>, rows: &[Bound<'_, PyAny>]) -> Option<Slots> {
        // SAFETY: the GIL is held and `out` a live exact dict; its keys are
        // compared as pointers while no Python code runs.
        unsafe {
            let (first, stride, n) = super::layout::dict_entries(out.as_ptr())?;
            (n == rows.len()
                && rows
                    .iter()
                    .enumerate()
                    .all(|(i, r)| *first.add(i * stride) == r.as_ptr()))
            .then_some(Slots)
        }
    }

    /// The value field of `out`'s entry `i` if its key is `row`, read anew
    /// (Python code run by a garbage collection since the last call may
    /// have changed `out`); to be written before any Python code runs.
    fn value(
        &self,
        out: &Bound<'_, PyDict>,
        i: usize,
        row: &Bound<'_, PyAny>,
    ) -> Option<*mut *mut ffi::PyObject> {
        // SAFETY: the GIL is held and `out` a live exact dict; `i < n`.
        unsafe {
            let (first, stride, n) = super::layout::dict_entries(out.as_ptr())?;
            if i >= n {
                return None;
            }
            let at = first.add(i * stride);
            (*at == row.as_ptr()).then(|| at.add(1))
        }
    }
}

/// (values [queries x metrics], indices of missing qrels queries, ignored run
/// query ids, first tag, number of chunks) of `evaluate_trec_stream`.
pub(super) type StreamOut<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Vec<Bound<'py, PyString>>,
    Option<String>,
    usize,
);

/// Score the run file at `run_path` (`"-"` = stdin, gzip recognised) against
/// the encoded qrels chunk by chunk, in the memory of about `chunk_rows` rows
/// (see `core::stream`); the same values as `read_trec` + `evaluate`.
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (qrels, run_path, metrics, relevance_level, threads = None, judged_only = false, max_docs = None, ties = "trec", chunk_rows = 1_000_000, round_f32 = false, max_line = crate::core::trec::MAX_LINE, miss_nan = false))]
pub(super) fn evaluate_trec_stream<'py>(
    py: Python<'py>,
    qrels: SideArrays<'py>,
    run_path: &str,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
    chunk_rows: usize,
    round_f32: bool,
    max_line: usize,
    miss_nan: bool,
) -> PyResult<StreamOut<'py>> {
    let err = |e: Error| to_py(py, e);
    let (mut opts, specs) =
        eval_setup(&metrics, relevance_level, judged_only, max_docs, ties).map_err(err)?;
    opts.miss_nan = miss_nan;
    let q = side(&qrels)?.map_err(err)?;
    let nq = q.num_queries();
    let nm = specs.len();
    let out = interruptible(py, |cancel| {
        let opts = eval::Options {
            cancel: cancel.clone(),
            ..opts.clone()
        };
        let read = crate::core::trec::ReadOptions {
            round_f32,
            max_line,
            cancel: cancel.clone(),
        };
        eval::with_threads(threads, || {
            crate::core::stream::evaluate_run_file(&q, run_path, &read, &specs, &opts, chunk_rows)
        })
        .and_then(|x| x)
    })?
    .map_err(err)?;
    let values = out.values.into_pyarray(py).reshape([nq, nm])?;
    let ignored = out
        .run_only
        .iter()
        .map(|b| PyString::new(py, &String::from_utf8_lossy(b)))
        .collect();
    Ok((
        values,
        out.missing.into_pyarray(py),
        ignored,
        out.tag,
        out.chunks,
    ))
}

/// The preference measures (`core::metrics::prefs`) of every query: judgment
/// lines `(jg, jsg, doc, level)` of query `i` at `jud_offsets[i]..[i+1]`, its
/// ranking (doc ids, best first) at `ranked_offsets[i]..[i+1]`.  Returns a
/// `queries x 14` array, columns in `prefs::NAMES` order.
// The arguments are the columns of two flat tables.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_prefs<'py>(
    py: Python<'py>,
    jg: numpy::PyReadonlyArray1<'py, u32>,
    jsg: numpy::PyReadonlyArray1<'py, u32>,
    doc: numpy::PyReadonlyArray1<'py, u32>,
    level: numpy::PyReadonlyArray1<'py, f64>,
    jud_offsets: numpy::PyReadonlyArray1<'py, u64>,
    ranked: numpy::PyReadonlyArray1<'py, u32>,
    ranked_offsets: numpy::PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    use crate::core::metrics::prefs;
    let jg = jg.as_slice().map_err(non_contiguous)?;
    let jsg = jsg.as_slice().map_err(non_contiguous)?;
    let doc = doc.as_slice().map_err(non_contiguous)?;
    let level = level.as_slice().map_err(non_contiguous)?;
    let jo = jud_offsets.as_slice().map_err(non_contiguous)?;
    let ranked = ranked.as_slice().map_err(non_contiguous)?;
    let ro = ranked_offsets.as_slice().map_err(non_contiguous)?;
    let out = py
        .detach(|| prefs::prefs_batch(jg, jsg, doc, level, jo, ranked, ro))
        .map_err(|e| to_py(py, e))?;
    let rows = out.len() / prefs::NAMES.len();
    out.into_pyarray(py).reshape([rows, prefs::NAMES.len()])
}
