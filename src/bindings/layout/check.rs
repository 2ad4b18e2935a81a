//! The import-time check: a version's table must read objects made here
//! as the C API reads them, else the group of reads is not used.

use super::dict::DictEntries;
use super::objects::{ascii_in, cached_hash_in, float_in, list_items_in};
use super::versions::Layout;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyDictMethods, PyFloat, PyList, PyString};

/// Whether `l` reads a compact ASCII `str`'s text and an exact `float`'s
/// value right.  The text's place is compared, as a pointer, with the one
/// CPython gives, not read.
pub(super) fn strs(py: Python<'_>, l: &Layout) -> bool {
    let text = "ranklens: layout check";
    let s = PyString::new(py, text);
    let f = PyFloat::new(py, -1.5e-300);
    // SAFETY: the GIL is held; `s` is an exact `str` and `f` an exact
    // `float`, both alive here; only fields inside every listed version's
    // header are read.
    unsafe {
        ffi::PyUnicode_CheckExact(s.as_ptr()) != 0
            && ffi::PyFloat_CheckExact(f.as_ptr()) != 0
            && ascii_in(l, s.as_ptr()).map(|t| (t.as_ptr(), t.len()))
                == super::super::utf8_raw_api(s.as_ptr()).map(|b| (b.as_ptr(), b.len()))
            && float_in(l, f.as_ptr()) == -1.5e-300
    }
}

/// Whether `l` reads an exact `list`'s items and a `str`'s cached hash
/// right.
pub(super) fn objects(py: Python<'_>, l: &Layout) -> bool {
    let s = PyString::new(py, "ranklens: layout check");
    let f = PyFloat::new(py, 0.5);
    let (Ok(list), Ok(hash)) = (PyList::new(py, [s.as_any(), f.as_any()]), s.hash()) else {
        return false;
    };
    // SAFETY: the GIL is held; `list` is an exact list of two items and `s`
    // an exact `str` whose hash was just computed, all alive here; only
    // fields inside every listed version's header are read.
    unsafe {
        ffi::PyList_CheckExact(list.as_ptr()) != 0
            && list_items_in(l, list.as_ptr()) == [s.as_ptr(), f.as_ptr()]
            && cached_hash_in(l, s.as_ptr()) == Some(hash)
    }
}

/// Whether `l` walks the entry tables of dicts made here as `PyDict_Next`
/// does: `str` keys (the `str`-keys kind), `int` keys (the general kind),
/// with deleted entries, indices of 1 and 2 bytes, and copies
/// (`PyDict_Copy`).
pub(super) fn dicts(py: Python<'_>, l: &'static Layout) -> PyResult<bool> {
    let mut dicts = Vec::new();
    for n in [3usize, 9, 300] {
        let strs = PyDict::new(py);
        let ints = PyDict::new(py);
        for i in 0..n {
            strs.set_item(format!("k{i}"), i as f64 + 0.5)?;
            ints.set_item(i, format!("v{i}"))?;
        }
        dicts.push(strs.copy()?);
        dicts.push(ints.copy()?);
        for d in [&strs, &ints] {
            d.del_item(d.keys().get_item(n / 2)?)?;
        }
        dicts.push(strs);
        dicts.push(ints);
    }
    dicts.push(PyDict::new(py));
    Ok(dicts.iter().all(|d| {
        // SAFETY: the GIL is held and `d` is a live dict that nothing changes
        // while both walks run (no Python code runs).
        unsafe {
            let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            let mut entries = DictEntries::with(Some(l), d.as_ptr());
            let mut read = 0;
            while ffi::PyDict_Next(d.as_ptr(), &mut pos, &mut k, &mut v) != 0 {
                if entries.next() != Some((k, v)) {
                    return false;
                }
                read += 1;
            }
            entries.next().is_none() && read == d.len() && (d.is_empty() || entries.direct())
        }
    }))
}
