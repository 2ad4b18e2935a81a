//! Scoring (`core::eval`, `core::stream`): `evaluate` on encoded sides, a run
//! file chunk by chunk, and the nested dicts of the results.
//!
//! ## The drop-in's result dicts (`nested_dict`)
//!
//! `{query: {measure: value}}` is a plain dict of plain dicts, built through
//! the C API only (`PyDict_Copy`, `PyDict_SetItem`), so: each row's dict is
//! a copy of the previous row's (`PyDict_Copy` of a compact dict copies its
//! table in one block on 3.11+, and needs no growth on the way to ~35 keys),
//! in which only the values that differ from the previous row's are set;
//! the outer dict is a copy of the run dict when its keys are the rows in
//! order (every run query scored: checked key by key on the copy), its
//! values then set in place.  A value with the bits of the previous row's in
//! its column keeps the previous row's `float` (the copy holds it); others
//! come from [`Floats`], a few floats a column by value (floats are
//! immutable, so equal values of a column may be one object): many measures
//! take few values (P@1, success@k, recall@k), and every float not made is
//! one not freed with the previous result either.
//!
//! Rejected: storing values by position in the copies' entry tables (read
//! through the dict layout): a write into CPython's internals (reference
//! counts, version tags, GC tracking) for a gain too small to carry that
//! risk; `dict(zip(keys, row))` over `tolist()` rows in Python: twice as
//! slow (intermediate lists and tuples).  Figures:
//! `docs/design/performance.md`.

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
/// `interruptible`; below, a call is over in milliseconds), and rows times
/// metrics from which a call of fewer rows does (a thousand metrics on a few
/// thousand rows: each metric reads its queries' rows).
const INTERRUPTIBLE_ROWS: usize = 100_000;
const INTERRUPTIBLE_WORK: usize = 1 << 23;

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
    // A small call runs here (`eval::SERIAL_ROWS`): no hand-over to the pool.
    let small = eval::is_small(&q, &r);
    let run_eval = |opts: &eval::Options| {
        eval::with_threads_or_inline(threads, small, || eval::evaluate(&q, &r, &specs, opts))
            .and_then(|x| x)
    };
    // A small call ends within milliseconds: no watching thread for it.
    let rows = r.values.len() + q.values.len();
    let out = if rows < INTERRUPTIBLE_ROWS && rows.saturating_mul(nm) < INTERRUPTIBLE_WORK {
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
/// replaced, else the rows are inserted one by one.
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
    // SAFETY: live objects; a type pointer check.
    let plain = rows
        .iter()
        .all(|k| unsafe { ffi::PyUnicode_CheckExact(k.as_ptr()) != 0 });
    let out = match like {
        // The copy's keys are the rows in order: each row's value replaced
        // in place (no growth, keys already hashed and placed).
        Some(like) if plain && like.len() == rows.len() => {
            let out = like.copy()?;
            if same_keys(&out, &rows) {
                out
            } else {
                PyDict::new(py)
            }
        }
        _ => PyDict::new(py),
    };
    if columns.is_empty() {
        for row in &rows {
            out.set_item(row, PyDict::new(py))?;
        }
        return Ok(out);
    }
    // Each row's dict starts as a copy of the previous one (same keys, same
    // order), whose changed values are then replaced: no table growth and
    // rehashing on the way to ~100 keys.
    let ncols = columns.len();
    let mut prev: Option<Bound<'py, PyDict>> = None;
    let mut prev_vals: &[f64] = &[];
    let mut floats = Floats::new(ncols);
    for (row, vals) in rows.iter().zip(flat.chunks_exact(ncols)) {
        let inner = match &prev {
            None => {
                let inner = PyDict::new(py);
                for (j, (key, &v)) in columns.iter().zip(vals).enumerate() {
                    inner.set_item(key, floats.get(py, j, v))?;
                }
                inner
            }
            Some(p) => {
                let inner = p.copy()?;
                for (j, ((key, &v), &was)) in columns.iter().zip(vals).zip(prev_vals).enumerate() {
                    // The copy holds the previous row's float where the bits
                    // are the same.
                    if v.to_bits() != was.to_bits() {
                        inner.set_item(key, floats.get(py, j, v))?;
                    }
                }
                inner
            }
        };
        out.set_item(row, &inner)?;
        prev = Some(inner);
        prev_vals = vals;
    }
    Ok(out)
}

/// Whether `d`'s keys are `rows`, in order (compared as pointers).
fn same_keys(d: &Bound<'_, PyDict>, rows: &[Bound<'_, PyAny>]) -> bool {
    // SAFETY: the GIL is held and `d` is a live dict; no Python code runs
    // during the walk (only pointers are compared).
    let mut entries = unsafe { super::layout::DictEntries::new(d.as_ptr()) };
    d.len() == rows.len()
        && rows
            .iter()
            // SAFETY: as above.
            .all(|r| unsafe { entries.next() }.is_some_and(|(k, _)| k == r.as_ptr()))
}

/// The `float` objects of [`nested_dict`]: a value seen lately in the same
/// column is the same object (floats are immutable), a few per column.
struct Floats<'py> {
    /// `WAYS` slots a column: a value's bits and its float.
    slots: Vec<Option<(u64, Bound<'py, PyFloat>)>>,
}

/// Slots a column in [`Floats`] (a power of two).
const WAYS: usize = 16;

impl<'py> Floats<'py> {
    fn new(columns: usize) -> Self {
        Floats {
            slots: vec![None; columns * WAYS],
        }
    }

    /// A float of value `v` for column `j`: the one made last for a value
    /// of the same bits in that slot, else a new one (then kept there).
    #[inline]
    fn get(&mut self, py: Python<'py>, j: usize, v: f64) -> Bound<'py, PyFloat> {
        let bits = v.to_bits();
        let way = (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize & (WAYS - 1);
        match self.slots.get_mut(j * WAYS + way) {
            Some(Some((b, f))) if *b == bits => f.clone(),
            Some(slot) => {
                let f = PyFloat::new(py, v);
                *slot = Some((bits, f.clone()));
                f
            }
            None => PyFloat::new(py, v),
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
