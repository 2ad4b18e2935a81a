//! Reading an exact `str`'s text and cached hash, an exact `float`'s value
//! and an exact `list`'s items from the object, without a call into the
//! interpreter, on the CPython versions whose object layout is known (3.9 to
//! 3.14, 64-bit, little-endian, GIL builds); elsewhere (and for any `str`
//! that is not compact ASCII, or whose hash is not computed yet) the C-API
//! calls.
//!
//! Why: under the stable ABI `PyUnicode_AsUTF8AndSize` and `PyFloat_AsDouble`
//! are calls into `libpython` (the macros that read the fields are not part of
//! the limited API): ~43 instructions an entry of the dict path together
//! (callgrind, `Run(dict)` of 1M entries, CPython 3.11), ~6% of `Run(dict)`'s
//! `perf` samples.  The layout read is a load or two.
//!
//! Why it is safe although the layout is not part of the stable ABI: it is
//! used only on the versions listed in [`known`] (a CPython after 3.14 gets
//! the calls until its layout is checked and added here), only for exact
//! `str` and `float` objects (the caller checks the type pointer), and only
//! after a check at import that the reads give the right answers for objects
//! made there ([`init`]).  The fields read: `PyASCIIObject.length` (offset
//! 16) and its `state` bits `compact` and `ascii` (offset 32, bits 5 and 6 on
//! every version listed), the text right after the struct (offset 48 up to
//! 3.11, which had `wstr`; 40 from 3.12), `PyFloatObject.ob_fval` (offset 16).
//! For `ranklens.Scorer` ([`list_items`], [`cached_hash`]): a list's
//! `ob_size` (offset 16) and `ob_item` (offset 24), and `PyASCIIObject.hash`
//! (offset 24; -1 until computed, then what `str`'s `tp_hash` returns).  Under
//! the stable ABI each is otherwise a call (`PyList_GetItem`, `tp_hash`): ~250
//! instructions of a `Scorer.batch` row of 12 ids (callgrind, CPython 3.11).
//! Tried on CPython 3.9, 3.10, 3.11, 3.12 and 3.13 (2026-11-27): `Run(dict)`
//! round-trips ASCII and non-ASCII ids and scores exactly, the dict paths
//! equal the general ones, and `perf` shows no call left to
//! `PyUnicode_AsUTF8AndSize` or `PyFloat_AsDouble`.

// A stable-ABI build for Windows before 3.10 borrows no UTF-8: unused there.
#![cfg_attr(not(any(not(Py_LIMITED_API), Py_3_10, unix)), allow(dead_code))]

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Offset of a compact ASCII `str`'s text, or 0: use the C-API calls.
static ASCII_DATA: AtomicUsize = AtomicUsize::new(0);

/// The list and hash reads checked at import ([`list_items`], [`cached_hash`]).
static OBJECTS: AtomicBool = AtomicBool::new(false);

/// The text offset on a known version, else `None`.
fn known(py: Python<'_>) -> Option<usize> {
    if !cfg!(all(target_pointer_width = "64", target_endian = "little")) || cfg!(Py_GIL_DISABLED) {
        return None;
    }
    let v = py.version_info();
    let sys = py.import("sys").ok()?;
    // A build with `Py_TRACE_REFS` has two more pointers in every object.
    let trace_refs = sys.hasattr("getobjects").unwrap_or(true);
    let cpython = sys
        .getattr("implementation")
        .and_then(|i| i.getattr("name")?.extract::<String>())
        .is_ok_and(|name| name == "cpython");
    if v.major != 3 || trace_refs || !cpython {
        return None;
    }
    match v.minor {
        9..=11 => Some(48),
        12..=14 => Some(40),
        _ => None,
    }
}

/// Decide at import whether the layout reads are used: on a known version,
/// if they read objects made here right.
pub(super) fn init(py: Python<'_>) {
    // `RANKLENS_LAYOUT=api` keeps the C-API calls (the tests compare both).
    if std::env::var_os("RANKLENS_LAYOUT").is_some_and(|v| v == "api") {
        return;
    }
    let Some(offset) = known(py) else {
        return;
    };
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        let text = "ranklens: layout check";
        let s = pyo3::types::PyString::new(py, text);
        let f = pyo3::types::PyFloat::new(py, -1.5e-300);
        // SAFETY: the GIL is held; `s` is an exact `str` and `f` an exact
        // `float`, both alive here.  Only fields inside every version's
        // header are read (`length`, `state`, `ob_fval`); the text's place
        // is compared as a pointer with the one CPython gives, not read.
        let ok = unsafe {
            let base = s.as_ptr().cast::<u8>();
            ffi::PyUnicode_CheckExact(s.as_ptr()) != 0
                && base.add(32).cast::<u32>().read() & 0x60 == 0x60
                && base.add(16).cast::<isize>().read() == text.len() as isize
                && super::utf8_raw_api(s.as_ptr()).map(|b| b.as_ptr()) == Some(base.add(offset))
                && ffi::PyFloat_CheckExact(f.as_ptr()) != 0
                && f.as_ptr().cast::<u8>().add(16).cast::<f64>().read() == -1.5e-300
        };
        if ok {
            ASCII_DATA.store(offset, Ordering::Relaxed);
        }
        let list = pyo3::types::PyList::new(py, [s.as_any(), f.as_any()]);
        let hash = s.hash();
        // SAFETY: the GIL is held; `list` is an exact list of two items and
        // `s` an exact `str` whose hash was just computed, all alive here;
        // only fields inside every listed version's header are read.
        let objects =
            ok && list.is_ok_and(|list| unsafe {
                let base = list.as_ptr().cast::<u8>();
                let items = base.add(24).cast::<*const *mut ffi::PyObject>().read();
                ffi::PyList_CheckExact(list.as_ptr()) != 0
                    && base.add(16).cast::<isize>().read() == 2
                    && !items.is_null()
                    && *items == s.as_ptr()
                    && *items.add(1) == f.as_ptr()
            }) && hash.is_ok_and(|h| unsafe {
                s.as_ptr().cast::<u8>().add(24).cast::<isize>().read() == h
            });
        OBJECTS.store(objects, Ordering::Relaxed);
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    let _ = offset;
}

/// A compact ASCII `str`'s text, read from the object; `None` where the
/// layout is not known or the string is not compact ASCII (a `str`
/// subclass's instance never is).
///
/// # Safety
/// The GIL is held and `s` is a live `str`; the slice is used only while `s`
/// lives.
#[inline]
pub(super) unsafe fn ascii<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let offset = ASCII_DATA.load(Ordering::Relaxed);
    if offset == 0 {
        return None;
    }
    // SAFETY: the layout is the running interpreter's (a known version,
    // checked at import), `s` is a live `str` (its header has `length` and
    // `state`), and a compact ASCII string's `length` bytes follow the header.
    let base = s.cast::<u8>();
    let state = base.add(32).cast::<u32>().read();
    if state & 0x60 != 0x60 {
        return None;
    }
    let len = base.add(16).cast::<isize>().read();
    Some(std::slice::from_raw_parts(
        base.add(offset),
        len.max(0) as usize,
    ))
}

/// An exact `float`'s value: read from the object where the layout is known,
/// else `PyFloat_AsDouble`.
///
/// # Safety
/// The GIL is held and `f` is a live exact `float`.
#[inline]
pub(super) unsafe fn float_value(f: *mut ffi::PyObject) -> f64 {
    if ASCII_DATA.load(Ordering::Relaxed) != 0 {
        // SAFETY: the layout is the running interpreter's (checked at
        // import) and `f` is a live exact `float`: `ob_fval` after the header.
        return f.cast::<u8>().add(16).cast::<f64>().read();
    }
    #[cfg(not(Py_LIMITED_API))]
    let x = ffi::PyFloat_AS_DOUBLE(f);
    #[cfg(Py_LIMITED_API)]
    let x = ffi::PyFloat_AsDouble(f);
    x
}

/// Whether the reads are used (the module's `_object_reads`, for the tests).
pub(super) fn active() -> bool {
    ASCII_DATA.load(Ordering::Relaxed) != 0 && OBJECTS.load(Ordering::Relaxed)
}

/// An exact `list`'s items, read from the object; `None` where the layout is
/// not known.
///
/// # Safety
/// The GIL is held and `list` is a live exact `list`; the slice is used only
/// while no Python code runs (which could resize or free the list).
#[inline]
pub(super) unsafe fn list_items<'a>(list: *mut ffi::PyObject) -> Option<&'a [*mut ffi::PyObject]> {
    if !OBJECTS.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: the layout is the running interpreter's (checked at import)
    // and `list` a live exact list: `ob_size` items at `ob_item`.
    let base = list.cast::<u8>();
    let n = base.add(16).cast::<isize>().read();
    if n <= 0 {
        return Some(&[]);
    }
    let items = base.add(24).cast::<*const *mut ffi::PyObject>().read();
    Some(std::slice::from_raw_parts(items, n as usize))
}

/// An exact `str`'s hash as cached in the object; `None` where the layout is
/// not known or the hash is not computed yet (`tp_hash` computes it).
///
/// # Safety
/// The GIL is held and `s` is a live exact `str`.
#[inline]
pub(super) unsafe fn cached_hash(s: *mut ffi::PyObject) -> Option<ffi::Py_hash_t> {
    if !OBJECTS.load(Ordering::Relaxed) {
        return None;
    }
    // SAFETY: the layout is the running interpreter's (checked at import)
    // and `s` a live `str`: `hash` after `length`.
    let hash = s.cast::<u8>().add(24).cast::<ffi::Py_hash_t>().read();
    (hash != -1).then_some(hash)
}
