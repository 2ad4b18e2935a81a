//! The Python bindings: the one module that touches Python objects.  One
//! file per core module it exposes (`encode`, `evaluate`, `dense`, `trec`,
//! `stats`, `autorag`, `scorer` for `rows`, `dictpath` for the pytrec_eval
//! drop-in's dicts), `ids` for the one rule that makes an id of a Python
//! object, `layout` for reading CPython objects in place (one table per
//! tested CPython version), `pipeline` for the reader/worker hand-over the
//! Scorer's batches and the dict path share; here the `#[pymodule]`, the
//! error mapping and the helpers the files share.
//!
//! Invariants: each function converts its arguments (numpy arrays borrowed
//! read-only, as contiguous slices of the right dtype: the Python layer
//! guarantees both), releases the GIL for the work in the core, and moves
//! result `Vec`s into numpy without copying.  Core errors become Python
//! exceptions in `to_py`, and nowhere else.  The core never sees a Python
//! object: a Ctrl-C reaches it as a flag ([`interruptible`]).
//!
//! Rejected: copying input arrays into `Vec`s (a second copy of every column
//! for nothing the core needs); raising from the core through PyO3 types (the
//! core would depend on Python and could not be tested alone).

mod autorag;
mod dense;
mod dictpath;
mod encode;
mod evaluate;
mod ids;
mod layout;
mod pipeline;
mod scorer;
mod stats;
mod trec;

use crate::core::cancel::Cancel;
use crate::core::encode::Encoded;
use crate::core::error::Error;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString};

// The id rule lives in `ids`; these names are the ones the other files use.
use ids::{is_id, str_utf8};
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
use ids::{utf8_raw, utf8_raw_api};

/// Core error -> the matching class of `ranklens.errors` (all `ValueError`s,
/// but I/O failures, which are `OSError`).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let class = match &e {
        Error::Io { .. } => return PyOSError::new_err(e.to_string()),
        // Only after a signal handler raised (see `interruptible`), which
        // returns that exception instead.
        Error::Interrupted => return PyKeyboardInterrupt::new_err(e.to_string()),
        Error::Parse { .. } => "ParseError",
        Error::InvalidMetric(_) => "UnknownMetricError",
        _ => "RanklensInputError",
    };
    match py
        .import("ranklens.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((e.to_string(),)))
    {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// Rows of Python objects read under the GIL between two runs of the signal
/// handlers (Ctrl-C) by the doors that read them one by one (the Scorer's
/// batches, AutoRAG's rows): a few milliseconds of work (rows of 10,000 ids:
/// under 0.1 s), against a check of a flag.
const SIGNAL_ROWS: usize = 1024;

/// How often a call waiting on [`interruptible`] work runs the signal handlers.
const SIGNAL_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Run `work` (core work, without the GIL) on a thread of its own while the
/// calling thread runs Python's signal handlers every [`SIGNAL_POLL`]: when a
/// handler raises (Ctrl-C: `KeyboardInterrupt`), the flag passed to `work` is
/// set, `work` stops at its next check, and the handler's exception is
/// returned.  The core stays free of Python: it only sees the flag.  Signal
/// handlers run only on the main thread, so a call from another thread is
/// not interrupted (as for any Python code).
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce(&Cancel) -> T + Send) -> PyResult<T> {
    let cancel = Cancel::new();
    let mut raised: Option<PyErr> = None;
    let out = py.detach(|| {
        let caller = std::thread::current();
        std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let out = work(&cancel);
                caller.unpark();
                out
            });
            while !worker.is_finished() {
                std::thread::park_timeout(SIGNAL_POLL);
                if raised.is_none() && !worker.is_finished() {
                    if let Err(e) = Python::attach(|py| py.check_signals()) {
                        raised = Some(e);
                        cancel.cancel();
                    }
                }
            }
            worker.join()
        })
    });
    let out = out.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    match raised {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

type EncodedArrays<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u32>>,
);

fn to_arrays(py: Python<'_>, e: Encoded) -> EncodedArrays<'_> {
    (
        e.queries.bytes.into_pyarray(py),
        e.queries.offsets.into_pyarray(py),
        e.offsets.into_pyarray(py),
        e.docs.bytes.into_pyarray(py),
        e.docs.offsets.into_pyarray(py),
        e.doc_ids.into_pyarray(py),
        e.values.into_pyarray(py),
        e.extra.into_pyarray(py),
    )
}

type SideArrays<'py> = (
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u32>,
);

fn non_contiguous(e: numpy::AsSliceError) -> PyErr {
    PyTypeError::new_err(format!("non-contiguous array: {e}"))
}

// -- RAG rows (ranklens.compat.autorag, score_batch) --

/// `None` for `None`; the items of a list / tuple / other non-string iterable;
/// an error naming the row otherwise.
fn row_items<'py>(
    obj: &Bound<'py, PyAny>,
    row: usize,
    what: &str,
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(Some(l.iter().collect()));
    }
    let bad = || {
        to_py(
            obj.py(),
            Error::InvalidInput(format!(
                "row {row}: {what} must be a list, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )),
        )
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(bad());
    }
    match obj.try_iter() {
        Ok(it) => Ok(Some(it.collect::<PyResult<_>>()?)),
        Err(_) => Err(bad()),
    }
}

/// The items of a row that is a ranking (its order is the ranks): as
/// [`row_items`], and a row whose iteration order is no ranking (a set, a
/// frozenset, a dict view, an iterator over one) refused naming its type, by
/// the rule every door applies ([`check_ordered`]).  A sequence (a list, a
/// tuple, a numpy array: what Python indexes by position) is ordered and takes
/// no call; the rule is asked only about the other iterables, the rare rows.
fn ranking_items<'py>(
    obj: &Bound<'py, PyAny>,
    row: usize,
    what: &str,
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    // SAFETY: the GIL is held and `obj` is a live object; the slot check
    // runs no Python code.
    let sequence = unsafe { pyo3::ffi::PySequence_Check(obj.as_ptr()) } != 0;
    if !sequence && !obj.is_none() {
        check_ordered(obj, &format!("row {row}: {what}"))?;
    }
    row_items(obj, row, what)
}

/// The package's one rule for orderings (`ranklens._checks.check_ordered`).
static CHECK_ORDERED: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Refuse `obj` as a ranking when its iteration order is no ranking (a set,
/// a frozenset, a dict view, an iterator over one), with the message every
/// door gives (`row 3: retrieved is a set, which has no order: ...`); `what`
/// names it.  Called only for the uncommon cells (neither a list nor a
/// tuple nor a dict), so the common ones take no Python call.
///
/// Rejected: the rule written again in Rust: one list of unordered types,
/// kept in Python, serves every door.
pub(crate) fn check_ordered(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<()> {
    let check = CHECK_ORDERED.import(obj.py(), "ranklens._checks", "check_ordered")?;
    check.call1((obj, what))?;
    Ok(())
}

/// The number of rows of a column (an error naming the column otherwise).
fn num_rows(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    if obj.is_instance_of::<PyString>() {
        return Err(to_py(
            obj.py(),
            Error::InvalidInput(format!("{what} must be a list of rows, got a str")),
        ));
    }
    obj.len().map_err(|_| {
        to_py(
            obj.py(),
            Error::InvalidInput(format!(
                "{what} must be a list of rows, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )),
        )
    })
}

// `gil_used = false`: free-threaded CPython may run these functions in parallel.
// No state is shared between calls without a lock: the one class, `RowScorer`, is
// `frozen` (set at construction; its scratch buffers are thread-local); the
// statics are the thread pool (`core::pool`, behind a `Mutex`) and a `OnceLock`
// table (`core::metrics::query`); dicts are walked inside their critical section.
// Inputs are read through PyO3 or borrowed read-only numpy arrays; results are new
// objects.
#[pymodule(gil_used = false)]
fn _ranklens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Load numpy's C API now, where a failure (Ctrl-C while numpy's version is
    // parsed) is an exception of this import: loaded lazily by the first call
    // that builds an array, the same failure was a panic of that call.  Once
    // the modules are imported, the load below runs no Python code.
    numpy::get_array_module(m.py())?.getattr("_ARRAY_API")?;
    // SAFETY: a plain C function of numpy's API, no arguments.
    unsafe { numpy::PY_ARRAY_API.PyArray_GetNDArrayCVersion(m.py()) };
    layout::init(m.py());
    m.add_function(wrap_pyfunction!(encode::encode_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode_groups, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(encode::decode_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::nested_dict, m)?)?;
    m.add_function(wrap_pyfunction!(trec::read_trec, m)?)?;
    m.add_function(wrap_pyfunction!(trec::write_trec, m)?)?;
    m.add_function(wrap_pyfunction!(stats::stats_resample, m)?)?;
    m.add_function(wrap_pyfunction!(stats::studentized_range_sf, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode_columns, m)?)?;
    m.add_function(wrap_pyfunction!(encode::pack_ids, m)?)?;
    m.add_function(wrap_pyfunction!(encode::encode_rows, m)?)?;
    m.add_function(wrap_pyfunction!(autorag::autorag_retrieval, m)?)?;
    m.add_function(wrap_pyfunction!(autorag::autorag_token, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate_trec_stream, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate::evaluate_prefs, m)?)?;
    m.add_class::<scorer::RowScorer>()?;
    m.add_class::<dictpath::DictJudgments>()?;
    m.add_function(wrap_pyfunction!(dictpath::dict_judgments, m)?)?;
    m.add_function(wrap_pyfunction!(dictpath::evaluate_dict, m)?)?;
    m.add_function(wrap_pyfunction!(dictpath::evaluate_dict_all, m)?)?;
    m.add_function(wrap_pyfunction!(dense::evaluate_dense, m)?)?;
    m.add_function(wrap_pyfunction!(dense::evaluate_topk, m)?)?;
    m.add_function(wrap_pyfunction!(dense::evaluate_flat, m)?)?;
    m.add_function(wrap_pyfunction!(dense::knn_recall, m)?)?;
    m.add_function(wrap_pyfunction!(dense::knn_recall_distances, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Whether `layout` reads objects directly in this interpreter (the tests).
    m.add("_object_reads", layout::active())?;
    Ok(())
}
