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
//! For the drop-in's result dicts ([`dict_entries`], `nested_dict`): a
//! dict's `ma_used` (offset 16), `ma_keys` (32) and `ma_values` (40, NULL for
//! a combined table), and in the keys object the entry count, the size of
//! the index block and the entry kind (see [`KEYS_310`], [`KEYS_311`]); a
//! value is then stored at its entry by position instead of through
//! `PyDict_SetItem`'s key lookup.  Checked at import on dicts built and
//! copied there, and at every use: the entry's key is the expected object.
//! Tried on CPython 3.9, 3.10, 3.11, 3.12 and 3.13 (2026-11-27): `Run(dict)`
//! round-trips ASCII and non-ASCII ids and scores exactly, the dict paths
//! equal the general ones, and `perf` shows no call left to
//! `PyUnicode_AsUTF8AndSize` or `PyFloat_AsDouble`.

// A stable-ABI build for Windows before 3.10 borrows no UTF-8: unused there.
#![cfg_attr(not(any(not(Py_LIMITED_API), Py_3_10, unix)), allow(dead_code))]

use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// Offset of a compact ASCII `str`'s text, or 0: use the C-API calls.
static ASCII_DATA: AtomicUsize = AtomicUsize::new(0);

/// The list and hash reads checked at import ([`list_items`], [`cached_hash`]).
static OBJECTS: AtomicBool = AtomicBool::new(false);

/// The dict entry table reads checked at import ([`dict_entries`]): 0 off,
/// [`KEYS_310`] or [`KEYS_311`].
static DICTS: AtomicU8 = AtomicU8::new(0);
/// `PyDictKeysObject` of 3.9 and 3.10: `dk_size` at 8, `dk_nentries` at 32,
/// the indices at 40 (1, 2, 4 or 8 bytes each by `dk_size`), then entries
/// of (hash, key, value).
const KEYS_310: u8 = 1;
/// `PyDictKeysObject` of 3.11 to 3.14: `dk_log2_index_bytes` at 9, `dk_kind`
/// at 10 (0 general entries of (hash, key, value), 1 `str` keys only,
/// entries of (key, value), 2 split), `dk_nentries` at 24, the indices at 32
/// (`1 << dk_log2_index_bytes` bytes), then the entries.
const KEYS_311: u8 = 2;

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
        let keys = if py.version_info().minor <= 10 {
            KEYS_310
        } else {
            KEYS_311
        };
        DICTS.store(keys, Ordering::Relaxed);
        if !(objects && dicts_read_right(py)) {
            DICTS.store(0, Ordering::Relaxed);
        }
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
    ASCII_DATA.load(Ordering::Relaxed) != 0
        && OBJECTS.load(Ordering::Relaxed)
        && DICTS.load(Ordering::Relaxed) != 0
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

/// Whether [`dict_entries`] reads dicts made here right: `str` keys only and
/// mixed keys, small and large tables (one- and two-byte indices), each
/// dict as built and as copied (`PyDict_Copy`, as `nested_dict` makes them).
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
fn dicts_read_right(py: Python<'_>) -> bool {
    use pyo3::types::{PyDict, PyDictMethods, PyInt, PyString};
    let check = |n: usize, mixed: bool| -> PyResult<bool> {
        let d = PyDict::new(py);
        let mut items = Vec::with_capacity(n);
        for i in 0..n {
            let key = if mixed && i % 2 == 1 {
                PyInt::new(py, i).into_any()
            } else {
                PyString::new(py, &format!("k{i}")).into_any()
            };
            let value = pyo3::types::PyFloat::new(py, i as f64).into_any();
            d.set_item(&key, &value)?;
            items.push((key, value));
        }
        for d in [d.clone(), d.copy()?] {
            // SAFETY: the GIL is held and `d` is a live exact dict; what is
            // read is compared with the objects it holds, not followed.
            let got = unsafe { dict_entries(d.as_ptr()) };
            let Some((first, stride, len)) = got else {
                return Ok(false);
            };
            if len != n {
                return Ok(false);
            }
            for (i, (key, value)) in items.iter().enumerate() {
                // SAFETY: `dict_entries` gave `len` entries of `stride`
                // pointers from `first`, and `i < len`.
                let (k, v) = unsafe {
                    let at = first.add(i * stride);
                    (*at, *at.add(1))
                };
                if k != key.as_ptr() || v != value.as_ptr() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    };
    [
        (3, false),
        (3, true),
        (40, false),
        (40, true),
        (300, false),
        (300, true),
    ]
    .iter()
    .all(|&(n, mixed)| check(n, mixed).unwrap_or(false))
}

/// Whether [`dict_entries`] reads dicts here (else it always gives `None`).
pub(super) fn dict_reads() -> bool {
    DICTS.load(Ordering::Relaxed) != 0
}

/// A dict's entry table: the place of the first entry's key, the entry size
/// in pointers (the value follows the key) and the number of entries; `None`
/// where the layout is not known (checked at import), the dict's table is
/// split, or has deleted entries (then entry `i` is not the `i`-th key in
/// order).  Entry `i`'s key is at `first + i * stride`, its value right after.
///
/// # Safety
/// The GIL is held and `d` is a live exact `dict`; the pointers are used only
/// while no Python code runs and `d` is not changed through the API (which
/// could resize its table).
#[inline]
pub(super) unsafe fn dict_entries(
    d: *mut ffi::PyObject,
) -> Option<(*mut *mut ffi::PyObject, usize, usize)> {
    let layout = DICTS.load(Ordering::Relaxed);
    if layout == 0 {
        return None;
    }
    // SAFETY: the layout is the running interpreter's (a known version,
    // checked at import) and `d` a live exact dict: `ma_used` at 16,
    // `ma_keys` at 32 and `ma_values` at 40 on every listed version, and the
    // keys object's header, indices and entries as described at `KEYS_310`
    // and `KEYS_311`.
    let base = d.cast::<u8>();
    let used = base.add(16).cast::<isize>().read();
    let keys = base.add(32).cast::<*mut u8>().read();
    let values = base.add(40).cast::<*mut u8>().read();
    if !values.is_null() || keys.is_null() || used < 0 {
        return None;
    }
    let (entries, stride, nentries) = if layout == KEYS_310 {
        let size = keys.add(8).cast::<isize>().read();
        let ix = match size {
            ..=0 => return None,
            1..=0xff => 1,
            0x100..=0xffff => 2,
            0x1_0000..=0xffff_ffff => 4,
            _ => 8,
        };
        let nentries = keys.add(32).cast::<isize>().read();
        // (hash, key, value): the key one pointer in.
        let first = keys
            .add(40 + size as usize * ix)
            .cast::<*mut ffi::PyObject>();
        (first.add(1), 3, nentries)
    } else {
        let log2_index_bytes = keys.add(9).read();
        let kind = keys.add(10).read();
        let nentries = keys.add(24).cast::<isize>().read();
        if log2_index_bytes >= 48 {
            return None;
        }
        let first = keys
            .add(32 + (1usize << log2_index_bytes))
            .cast::<*mut ffi::PyObject>();
        match kind {
            0 => (first.add(1), 3, nentries),
            1 => (first, 2, nentries),
            _ => return None,
        }
    };
    (nentries == used).then_some((entries, stride, used as usize))
}
