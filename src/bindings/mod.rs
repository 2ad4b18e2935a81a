//! The Python bindings: the one module that touches Python objects, one file
//! per core module it exposes (`encode`, `evaluate`, `dense`, `trec`, `stats`,
//! `autorag`, `scorer` for `rows`); here the `#[pymodule]`, the error mapping
//! and the helpers the files share.
//!
//! Each function converts its arguments (borrowing numpy arrays read-only, as
//! contiguous slices of the right dtype: the Python layer guarantees both),
//! releases the GIL for the work in the core, and moves result `Vec`s into
//! numpy without copying.  Core errors become Python exceptions in `to_py`,
//! and nowhere else.

mod autorag;
mod dense;
mod dictpath;
mod encode;
mod evaluate;
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
use pyo3::types::{PyInt, PyList, PyString};

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

/// Whether `obj` is an id (a `str` or an `int`, not a `bool`), not a group.
fn is_id(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyString>()
        || (obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>())
}

// `PyUnicode_AsUTF8AndSize` for the stable-ABI wheel on 3.9 (see `utf8_raw`):
// the same declaration as CPython's, which PyO3 leaves out of the 3.9 limited API.
#[cfg(all(Py_LIMITED_API, not(Py_3_10), unix))]
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut pyo3::ffi::PyObject,
        size: *mut pyo3::ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}
#[cfg(any(not(Py_LIMITED_API), Py_3_10))]
use pyo3::ffi::PyUnicode_AsUTF8AndSize;

/// A `str` object's UTF-8 bytes, borrowed from the object (CPython keeps them
/// in the object: an ASCII string's own data, else a UTF-8 copy made once and
/// cached); `None` (the exception cleared) for a `str` with no UTF-8 form (a
/// lone surrogate).
///
/// Why also under the stable ABI of 3.9: `PyUnicode_AsUTF8AndSize` joined the
/// limited API only in 3.10, but every CPython since 3.3 exports it with this
/// signature, and on Linux and macOS an extension's symbols are resolved in the
/// running interpreter; so the one `cp39-abi3` wheel borrows on every version
/// instead of copying each id (`Run(dict)` of 1M entries on CPython 3.9: 51
/// ns an entry against 70 with the copy; README, "Wheels and platforms").  Not
/// on Windows: an abi3 module links against `python3.dll`, which
/// on 3.9 does not export it; there the stable-ABI build copies
/// ([`str_utf8`], `plain_entry` in `encode`).
///
/// # Safety
/// The GIL is held (on a free-threaded build: the object is not being
/// mutated) and `s` is a live `str`; the slice is used only while `s` lives.
///
/// A compact ASCII string's text is read from the object where its layout is
/// known (`layout`), without the call.
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
#[inline]
unsafe fn utf8_raw<'a>(s: *mut pyo3::ffi::PyObject) -> Option<&'a [u8]> {
    layout::ascii(s).or_else(|| utf8_raw_api(s))
}

/// [`utf8_raw`] through the C API only.
///
/// # Safety
/// As [`utf8_raw`].
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
unsafe fn utf8_raw_api<'a>(s: *mut pyo3::ffi::PyObject) -> Option<&'a [u8]> {
    let mut size: pyo3::ffi::Py_ssize_t = 0;
    let data = PyUnicode_AsUTF8AndSize(s, &mut size);
    if data.is_null() {
        pyo3::ffi::PyErr_Clear();
        return None;
    }
    Some(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
}

/// A `str`'s UTF-8 text: borrowed from the object (see [`utf8_raw`]; a copy
/// only in a stable-ABI build for Windows before 3.10).  A `str` that has no
/// UTF-8 form (a lone surrogate, e.g. from `os.fsdecode` of bytes that are not
/// UTF-8) is the input error naming `what()` and the value, not Python's bare
/// `UnicodeEncodeError`.  Every id and passage read from Python goes through
/// here.
fn str_utf8<'a>(
    s: &'a Bound<'_, PyString>,
    what: impl FnOnce() -> String,
) -> PyResult<std::borrow::Cow<'a, str>> {
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    let text: Option<&'a str> =
        // SAFETY: the GIL is held (`Bound`), `s` is a `str` that outlives 'a,
        // and CPython's UTF-8 is valid UTF-8.
        unsafe { utf8_raw(s.as_ptr()).map(|b| std::str::from_utf8_unchecked(b)) };
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    let text: Option<std::borrow::Cow<'a, str>> = s.to_cow().ok();
    match text {
        Some(text) => Ok(text.into()),
        None => {
            let shown = s
                .repr()
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            Err(to_py(
                s.py(),
                Error::InvalidInput(format!(
                    "{} {shown} is not valid Unicode text (it holds a lone surrogate)",
                    what()
                )),
            ))
        }
    }
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
