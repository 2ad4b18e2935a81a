//! What a row's cell may hold, read the same way for both sides: missing
//! (`None`, a float NaN, pandas' `NA`), a number (a label or a score), a
//! list-like of items; and the messages, which name the row (in a batch) and
//! the document, as `evaluate`'s do.
//!
//! A list is walked without copying it; any other list-like goes through
//! `bindings::row_items`, so a cell is accepted here exactly where the other
//! paths accept it.

use super::read::Key;
use crate::bindings::{row_items, to_py};
use crate::core::error::Error;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};

/// Where a message points: nothing for a single sample, the row in a batch.
pub(super) fn at(row: Option<usize>) -> String {
    row.map_or(String::new(), |r| format!("row {r}: "))
}

/// `None`, a float NaN or pandas' `NA`: a missing cell.
pub(super) fn is_missing(obj: &Bound<'_, PyAny>) -> bool {
    if obj.is_none() {
        return true;
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyDict>() {
        return false;
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return f.value().is_nan();
    }
    obj.get_type()
        .name()
        .is_ok_and(|n| n.to_cow().is_ok_and(|n| n == "NAType"))
}

pub(super) fn bad(py: Python<'_>, msg: String) -> PyErr {
    to_py(py, Error::InvalidInput(msg))
}

/// An id as a message shows it: `"d1"`.
pub(super) fn shown(obj: *mut ffi::PyObject, py: Python<'_>) -> String {
    // SAFETY: `obj` is a live `str` held by the reader.
    let s = unsafe { Bound::from_borrowed_ptr(py, obj) };
    let text = s.str().map(|t| t.to_string_lossy().into_owned());
    format!("{:?}", text.unwrap_or_default())
}

pub(super) fn number(obj: &Bound<'_, PyAny>) -> Option<f64> {
    if obj.is_instance_of::<PyString>() {
        return None;
    }
    obj.extract::<f64>().ok()
}

/// A label or score: a finite number (a message naming the document if not).
pub(super) fn value(
    v: &Bound<'_, PyAny>,
    id: Key,
    row: Option<usize>,
    what: &str,
) -> PyResult<f64> {
    let py = v.py();
    match number(v) {
        Some(x) if x.is_finite() => Ok(x),
        Some(_) => Err(bad(
            py,
            format!(
                "{}document {}: the {what} is NaN or infinite",
                at(row),
                shown(id.obj, py)
            ),
        )),
        None => Err(bad(
            py,
            format!(
                "{}document {}: the {what} must be a number, got {}",
                at(row),
                shown(id.obj, py),
                v.repr().map(|x| x.to_string()).unwrap_or_default()
            ),
        )),
    }
}

/// Call `f` on each item of a list-like cell (a list without copying it).
pub(super) fn each_item<'py>(
    obj: &Bound<'py, PyAny>,
    row: Option<usize>,
    what: &str,
    mut f: impl FnMut(Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if let Ok(l) = obj.cast::<PyList>() {
        for item in l.iter() {
            f(item)?;
        }
        return Ok(());
    }
    for item in ground_items(obj, row, what)? {
        f(item)?;
    }
    Ok(())
}

/// The items of a list-like cell, with a message naming what was expected.
pub(super) fn ground_items<'py>(
    obj: &Bound<'py, PyAny>,
    row: Option<usize>,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let r = row.unwrap_or(0);
    match row_items(obj, r, what) {
        Ok(items) => Ok(items.unwrap_or_default()),
        Err(_) => Err(bad(
            obj.py(),
            format!(
                "{}{what} must be a list, got {}{}",
                at(row),
                obj.get_type().name()?,
                if obj.is_instance_of::<PyFloat>() {
                    " (a missing cell is None or NaN)"
                } else {
                    ""
                }
            ),
        )),
    }
}

/// A retrieved cell that is neither a list nor a dict (nor missing): refused
/// when its iteration order is no ranking, by the rule and message every door
/// shares (`bindings::check_ordered`: `row 3: retrieved is a set, ...`).
/// Called only for these uncommon cells: a list or a dict, the common ones,
/// take no call.
///
/// Rejected: the check in Python before each native call: a call of its own
/// on every sample, where the native reader sees the cell's type anyway.
pub(super) fn check_ordered(obj: &Bound<'_, PyAny>, row: Option<usize>) -> PyResult<()> {
    let what = match row {
        Some(r) => format!("row {r}: retrieved"),
        None => "retrieved".to_owned(),
    };
    crate::bindings::check_ordered(obj, &what)
}
