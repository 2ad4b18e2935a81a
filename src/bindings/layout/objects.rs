//! Reads of `str`, `float` and `list` objects through a version's table:
//! a compact ASCII `str`'s text and cached hash, a `float`'s value, a
//! `list`'s items.  Each reader comes in two forms: one taking the table
//! (what the import-time check runs) and one using the table chosen at
//! import, or the C-API call where none was.

use super::versions::Layout;
use super::{OBJECTS, STRS};
use pyo3::ffi;

/// A compact ASCII `str`'s text per `l`; `None` if `s` is not compact ASCII
/// (a `str` subclass's instance never is).
///
/// # Safety
/// The GIL is held, `l` is the running interpreter's table and `s` a live
/// `str`; the slice is used only while `s` lives.
#[inline(always)]
pub(super) unsafe fn ascii_in<'a>(l: &Layout, s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    // SAFETY: per the caller, `s`'s header holds `length` and `state` where
    // `l` says, and a compact ASCII string's `length` bytes follow it.
    let base = s.cast::<u8>();
    let state = base.add(l.str_state).cast::<u32>().read();
    if state & l.str_compact_ascii != l.str_compact_ascii {
        return None;
    }
    let len = base.add(l.str_length).cast::<isize>().read();
    Some(std::slice::from_raw_parts(
        base.add(l.str_ascii_text),
        len.max(0) as usize,
    ))
}

/// A compact ASCII `str`'s text, read from the object; `None` where no table
/// was chosen or the string is not compact ASCII.
///
/// # Safety
/// The GIL is held and `s` is a live `str`; the slice is used only while `s`
/// lives.
#[inline]
pub(in crate::bindings) unsafe fn ascii<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    // SAFETY: `STRS` holds the running interpreter's table; as the caller.
    STRS.get().and_then(|l| ascii_in(l, s))
}

/// An exact `float`'s value per `l`.
///
/// # Safety
/// The GIL is held, `l` is the running interpreter's table and `f` a live
/// exact `float`.
#[inline(always)]
pub(super) unsafe fn float_in(l: &Layout, f: *mut ffi::PyObject) -> f64 {
    // SAFETY: per the caller, `ob_fval` is where `l` says.
    f.cast::<u8>().add(l.float_value).cast::<f64>().read()
}

/// An exact `float`'s value: read from the object where a table was chosen,
/// else `PyFloat_AsDouble`.
///
/// # Safety
/// The GIL is held and `f` is a live exact `float`.
#[inline]
pub(in crate::bindings) unsafe fn float_value(f: *mut ffi::PyObject) -> f64 {
    if let Some(l) = STRS.get() {
        // SAFETY: `STRS` holds the running interpreter's table; as the caller.
        return float_in(l, f);
    }
    #[cfg(not(Py_LIMITED_API))]
    let x = ffi::PyFloat_AS_DOUBLE(f);
    #[cfg(Py_LIMITED_API)]
    let x = ffi::PyFloat_AsDouble(f);
    x
}

/// An exact `list`'s items per `l`.
///
/// # Safety
/// The GIL is held, `l` is the running interpreter's table and `list` a live
/// exact `list`; the slice is used only while no Python code runs (which
/// could resize or free the list).
#[inline(always)]
pub(super) unsafe fn list_items_in<'a>(
    l: &Layout,
    list: *mut ffi::PyObject,
) -> &'a [*mut ffi::PyObject] {
    // SAFETY: per the caller, `ob_size` items at `ob_item`, both where `l`
    // says.
    let base = list.cast::<u8>();
    let n = base.add(l.list_size).cast::<isize>().read();
    if n <= 0 {
        return &[];
    }
    let items = base
        .add(l.list_items)
        .cast::<*const *mut ffi::PyObject>()
        .read();
    std::slice::from_raw_parts(items, n as usize)
}

/// An exact `list`'s items, read from the object; `None` where no table was
/// chosen.
///
/// # Safety
/// The GIL is held and `list` is a live exact `list`; the slice is used only
/// while no Python code runs (which could resize or free the list).
#[inline]
pub(in crate::bindings) unsafe fn list_items<'a>(
    list: *mut ffi::PyObject,
) -> Option<&'a [*mut ffi::PyObject]> {
    // SAFETY: `OBJECTS` holds the running interpreter's table; as the caller.
    OBJECTS.get().map(|l| list_items_in(l, list))
}

/// An exact `str`'s hash as cached in the object per `l`; `None` if not
/// computed yet.
///
/// # Safety
/// The GIL is held, `l` is the running interpreter's table and `s` a live
/// exact `str`.
#[inline(always)]
pub(super) unsafe fn cached_hash_in(l: &Layout, s: *mut ffi::PyObject) -> Option<ffi::Py_hash_t> {
    // SAFETY: per the caller, `hash` is where `l` says.
    let hash = s
        .cast::<u8>()
        .add(l.str_hash)
        .cast::<ffi::Py_hash_t>()
        .read();
    (hash != -1).then_some(hash)
}

/// An exact `str`'s hash as cached in the object; `None` where no table was
/// chosen or the hash is not computed yet (`tp_hash` computes it).
///
/// # Safety
/// The GIL is held and `s` is a live exact `str`.
#[inline]
pub(in crate::bindings) unsafe fn cached_hash(s: *mut ffi::PyObject) -> Option<ffi::Py_hash_t> {
    // SAFETY: `OBJECTS` holds the running interpreter's table; as the caller.
    OBJECTS.get().and_then(|l| cached_hash_in(l, s))
}
