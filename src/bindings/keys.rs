//! Matching ids as Python `str` objects, without reading their text: the
//! matcher of `ranklens.Scorer` (`scorer.rs`) and of the dict path of the
//! pytrec_eval drop-in (`dictpath.rs`).  Two ids are the same when they are
//! the same object, or have equal hashes (cached in each `str`) and compare
//! equal (`PyObject_RichCompareBool` on two exact `str`s runs no Python code).

use pyo3::ffi;
use pyo3::prelude::*;

/// An id: its `str` object (kept alive by its owner) and Python's hash.
#[derive(Clone, Copy)]
pub(super) struct Key {
    pub(super) obj: *mut ffi::PyObject,
    pub(super) hash: ffi::Py_hash_t,
}

/// `a` and `b` are the same id: the same object, or equal hashes and texts.
#[inline]
pub(super) fn same(py: Python<'_>, a: Key, b: Key) -> PyResult<bool> {
    if a.obj == b.obj {
        return Ok(true);
    }
    if a.hash != b.hash {
        return Ok(false);
    }
    equal(py, a, b)
}

/// Two distinct `str` objects of one hash: their texts compared.
#[cold]
fn equal(_py: Python<'_>, a: Key, b: Key) -> PyResult<bool> {
    // SAFETY: the GIL is held (`_py`) and both are live exact `str`s held by
    // the caller.
    match unsafe { ffi::PyObject_RichCompareBool(a.obj, b.obj, ffi::Py_EQ) } {
        -1 => Err(PyErr::fetch(_py)),
        r => Ok(r == 1),
    }
}

/// [`same`] for two ids whose UTF-8 texts the caller already holds
/// (`a_text` of `a`, `b_text` of `b`): the texts are compared as bytes, with
/// no call into Python (equal UTF-8 is equal `str`).
#[inline]
pub(super) fn same_utf8(a: Key, a_text: &[u8], b: Key, b_text: &[u8]) -> bool {
    a.obj == b.obj || (a.hash == b.hash && a_text == b_text)
}
