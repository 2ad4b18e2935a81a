//! The Python bindings: the one module that touches Python objects, one file
//! per core module it exposes (`encode`, `evaluate`, `dense`, `trec`,
//! `stats`, `autorag`); here the `#[pymodule]`, the error mapping and the helpers the
//! files share.
//!
//! Each function converts its arguments (borrowing numpy arrays read-only, as
//! contiguous slices of the right dtype: the Python layer guarantees both),
//! releases the GIL for the work in the core, and moves result `Vec`s into
//! numpy without copying.  Core errors become Python exceptions in `to_py`,
//! and nowhere else.

mod autorag;
mod dense;
mod encode;
mod evaluate;
mod stats;
mod trec;

use crate::core::encode::Encoded;
use crate::core::error::Error;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};

/// Core error -> the matching class of `ranklens.errors` (all `ValueError`s,
/// but I/O failures, which are `OSError`).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let class = match &e {
        Error::Io { .. } => return PyOSError::new_err(e.to_string()),
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

#[pymodule]
fn _ranklens(m: &Bound<'_, PyModule>) -> PyResult<()> {
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
    m.add_function(wrap_pyfunction!(dense::evaluate_dense, m)?)?;
    m.add_function(wrap_pyfunction!(dense::evaluate_topk, m)?)?;
    m.add_function(wrap_pyfunction!(dense::evaluate_flat, m)?)?;
    m.add_function(wrap_pyfunction!(dense::knn_recall, m)?)?;
    m.add_function(wrap_pyfunction!(dense::knn_recall_distances, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
