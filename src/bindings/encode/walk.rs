//! Reading dicts without a reference per entry: [`DictWalk`] over a dict's
//! borrowed entries, and the plain-entry read ([`plain_entry`],
//! [`exact_number`]) that takes the common `str` -> number entry with no
//! call into Python.
//!
//! Invariant: a borrowed pointer is used only while no Python code runs;
//! a caller that may run some (a conversion, a check calling `__eq__` or
//! `__float__`) takes owned references first and tells the walk
//! ([`DictWalk::ran_python`]), whose next step then re-reads the table and
//! checks the size.
//!
//! Rejected: PyO3's dict iterator (a `Bound` per key and value, two reference
//! counts up and down, and a panic where CPython raises `RuntimeError` on a
//! change of size); `PyDict_Size` at every step (no Python code, no change).

#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
use super::super::utf8_raw;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `mapping.items()` as an iterator, with a fast path for dicts.
pub(super) fn items<'py>(
    obj: &Bound<'py, PyAny>,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(d.iter().collect());
    }
    let it = obj.call_method0("items")?;
    let mut out = Vec::new();
    for pair in it.try_iter()? {
        let pair = pair?;
        out.push((pair.get_item(0)?, pair.get_item(1)?));
    }
    Ok(out)
}

/// Walks a dict with `PyDict_Next`, yielding borrowed `(key, value)` pointers:
/// no `Bound`, no reference count change per entry.  A borrowed pointer stays
/// valid only while no Python code runs (that code could change the dict and
/// free the entry): callers take owned references (`Bound::from_borrowed_ptr`)
/// before anything that may call into Python.  A change of size between two
/// steps is CPython's own `RuntimeError` (PyO3's dict iterator panics there):
/// checked after a step where Python code may have run ([`DictWalk::ran_python`]),
/// the only way the dict can change while it is walked with the GIL held.
pub(super) struct DictWalk<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    entries: super::super::layout::DictEntries,
    len: ffi::Py_ssize_t,
    /// Python code may have run since the last size check.
    dirty: bool,
}

pub(super) type Entry = (*mut ffi::PyObject, *mut ffi::PyObject);

impl<'a, 'py> DictWalk<'a, 'py> {
    pub(super) fn new(dict: &'a Bound<'py, PyDict>) -> Self {
        // SAFETY: a dict, and the GIL is held (`Bound`); the entries are
        // read again after any step where Python code may have run.
        let (len, entries) = unsafe {
            (
                ffi::PyDict_Size(dict.as_ptr()),
                super::super::layout::DictEntries::new(dict.as_ptr()),
            )
        };
        DictWalk {
            dict,
            entries,
            len,
            dirty: true,
        }
    }

    /// Python code may have run since the last step (a conversion, a check
    /// calling `__eq__` or `__float__`): the next step checks the size.
    pub(super) fn ran_python(&mut self) {
        self.dirty = true;
    }

    /// The next entry; `whose` names the dict in the error.  The size is
    /// checked only after [`DictWalk::ran_python`]: without Python code
    /// nothing changes it, and a call to `PyDict_Size` a step shows in
    /// `Run(dict)`'s profile.
    #[inline(always)]
    pub(super) fn next(&mut self, whose: impl FnOnce() -> String) -> PyResult<Option<Entry>> {
        if !self.dirty {
            // SAFETY: as in `new`; no Python code ran since the entries were
            // (re)read.
            return Ok(unsafe { self.entries.next() });
        }
        self.dirty = false;
        // SAFETY: as in `new`; the table is read again, as `PyDict_Next`
        // bounds-checks its position against the dict as it is now,
        // whatever happened to it since the last step.
        unsafe { self.entries.reload() };
        let next = unsafe { self.entries.next() };
        if unsafe { ffi::PyDict_Size(self.dict.as_ptr()) } != self.len {
            return Err(PyRuntimeError::new_err(format!(
                "dictionary changed size during iteration ({})",
                whose()
            )));
        }
        Ok(next)
    }
}

/// An exact `float`'s value, or an exact `int` that converts to a double;
/// `None` for anything else (the general path decides).  A `float` is read
/// from the object where its layout is known, else through `PyFloat_AsDouble`
/// under the stable ABI (see `layout`).
///
/// # Safety
/// The GIL is held and `v` is a live object.
pub(crate) unsafe fn exact_number(v: *mut ffi::PyObject) -> Option<f64> {
    if ffi::PyFloat_CheckExact(v) != 0 {
        Some(super::super::layout::float_value(v))
    } else if ffi::PyLong_CheckExact(v) != 0 {
        let x = ffi::PyLong_AsDouble(v);
        if x == -1.0 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(x)
    } else {
        None
    }
}

/// The common entry without calling into Python: an exact `str` key (its
/// UTF-8 bytes, borrowed from the object) and an exact `float` value, or an
/// exact `int` that converts to a double.  `None`: anything else (subclasses,
/// other types, a key with lone surrogates, an `int` too large for a double),
/// left to the general path, which gives every error and message.
///
/// The value is read by [`exact_number`].  The key's UTF-8 is borrowed
/// ([`utf8_raw`]), but in a stable-ABI build for Windows before 3.10, where it
/// comes as a new `bytes` object, copied into `scratch`.
///
/// # Safety
/// The GIL is held (on a free-threaded build: inside the dict's critical
/// section) and `k`, `v` are live objects (a borrowed dict entry); the slice is
/// used before any Python code runs.
pub(super) unsafe fn plain_entry(
    k: *mut ffi::PyObject,
    v: *mut ffi::PyObject,
    scratch: &mut Vec<u8>,
) -> Option<(&[u8], f64)> {
    if ffi::PyUnicode_CheckExact(k) == 0 {
        return None;
    }
    let value = exact_number(v)?;
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        let _ = scratch;
        utf8_raw(k).map(|doc| (doc, value))
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let bytes = ffi::PyUnicode_AsUTF8String(k);
        if bytes.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let (mut data, mut size) = (std::ptr::null_mut(), 0 as ffi::Py_ssize_t);
        let ok = ffi::PyBytes_AsStringAndSize(bytes, &mut data, &mut size) == 0;
        if ok {
            scratch.clear();
            scratch.extend_from_slice(std::slice::from_raw_parts(data.cast::<u8>(), size as usize));
        }
        ffi::Py_DECREF(bytes);
        if !ok {
            ffi::PyErr_Clear();
            return None;
        }
        Some((&scratch[..], value))
    }
}
