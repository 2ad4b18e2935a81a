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
//! the index block and the entry kind (see [`DICT_3_9`], [`DICT_3_11`]; the same
//! table as [`DictEntries`] reads, with no deleted entry); a
//! value is then stored at its entry by position instead of through
//! `PyDict_SetItem`'s key lookup.  Checked at import on dicts built and
//! copied there, and at every use: the entry's key is the expected object.
//! Tried on CPython 3.9, 3.10, 3.11, 3.12 and 3.13 (2026-11-27): `Run(dict)`
//! round-trips ASCII and non-ASCII ids and scores exactly, the dict paths
//! equal the general ones, and `perf` shows no call left to
//! `PyUnicode_AsUTF8AndSize` or `PyFloat_AsDouble`.
//!
//! Dicts ([`DictEntries`]): the walks of `Run(dict)` and of the dict path
//! read a dict's entry table (`ma_keys`, offset 32; only a combined table,
//! `ma_values` at 40 NULL; the keys object as [`DICT_3_9`] and [`DICT_3_11`]
//! say) instead of calling `PyDict_Next`, in the same order and skipping the
//! same deleted entries, so that the key and value objects of the entry
//! [`AHEAD`] on are prefetched.  Why: `PyDict_Next` itself reads each key's
//! hash from the key object (3.11+), the first touch of a key never seen
//! before, a cache miss taken in the loop (~10-14% of the samples of both
//! walks); read ahead, the misses of several entries overlap.  The check at
//! import walks dicts made there both ways (`str` and `int` keys, deleted
//! entries, 1- and 2-byte indices) and turns the reads off unless they agree;
//! `tests/test_layout.py` compares the walk order with Python's own on
//! hypothesis-made dicts and runs both ways (`RANKLENS_LAYOUT=api`).
//! Measured (2026-11-27, the 100,000 x 100 dicts of `benches/bench_compat.py`,
//! CPython 3.11, LTO build, best of 5 alternating in one process, load 3-5
//! from other jobs): `Run(dict)` on one thread 38.2 -> 33.0 ns of CPU an
//! entry; the drop-in's walk (`evaluate` of the 5 measures, one thread)
//! 58.2 -> 52.3.  Prefetch distance: 3 entries 54.1, 6 52.3, 10 52.4.

// A stable-ABI build for Windows before 3.10 borrows no UTF-8: unused there.
#![cfg_attr(not(any(not(Py_LIMITED_API), Py_3_10, unix)), allow(dead_code))]

use crate::core::prefetch;
use pyo3::ffi;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// Offset of a compact ASCII `str`'s text, or 0: use the C-API calls.
static ASCII_DATA: AtomicUsize = AtomicUsize::new(0);

/// The list and hash reads checked at import ([`list_items`], [`cached_hash`]).
static OBJECTS: AtomicBool = AtomicBool::new(false);

/// The dict entry table reads checked at import ([`DictEntries`]): 0 none,
/// [`DICT_3_9`] or [`DICT_3_11`].
static DICT: AtomicU8 = AtomicU8::new(0);
/// `PyDictKeysObject` of 3.9 and 3.10: `dk_size` (offset 8), `dk_nentries`
/// (32), the indices at 40 (`dk_size` of 1, 2, 4 or 8 bytes each), then
/// entries of 24 bytes (hash, key, value).
const DICT_3_9: u8 = 1;
/// From 3.11: `dk_log2_index_bytes` (offset 9), `dk_kind` (10),
/// `dk_nentries` (24), the indices at 32 (`1 << dk_log2_index_bytes` bytes),
/// then entries of 24 bytes (hash, key, value) for the general kind (0) or
/// 16 (key, value) for the `str`-keys kinds.
const DICT_3_11: u8 = 2;

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
        let dict = if py.version_info() >= (3, 11) {
            DICT_3_11
        } else {
            DICT_3_9
        };
        DICT.store(dict, Ordering::Relaxed);
        if !(objects && dict_check(py).unwrap_or(false) && dicts_read_right(py)) {
            DICT.store(0, Ordering::Relaxed);
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
        && DICT.load(Ordering::Relaxed) != 0
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

/// Whether [`DictEntries`] reads the entry tables of dicts made here as
/// `PyDict_Next` walks them: `str` keys (the `str`-keys kind), `int` keys
/// (the general kind), with deleted entries, and indices of 1 and 2 bytes.
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
fn dict_check(py: Python<'_>) -> PyResult<bool> {
    use pyo3::types::{PyDict, PyDictMethods};
    let mut dicts = Vec::new();
    for n in [3usize, 9, 300] {
        let strs = PyDict::new(py);
        let ints = PyDict::new(py);
        for i in 0..n {
            strs.set_item(format!("k{i}"), i as f64 + 0.5)?;
            ints.set_item(i, format!("v{i}"))?;
        }
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
            let mut entries = DictEntries::new(d.as_ptr());
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

/// Entries read ahead of the one returned: their key and value objects are
/// prefetched that far ahead (see the module note).
const AHEAD: usize = 6;

/// A dict's entries, as `PyDict_Next` gives them (borrowed key and value,
/// in its order): read from the dict's entry table where the layout is known
/// and the table is combined (`ma_values` NULL), the key and value objects
/// of the entries [`AHEAD`] prefetched; else through `PyDict_Next`.
pub(super) struct DictEntries {
    dict: *mut ffi::PyObject,
    /// `PyDict_Next`'s position: the next entry's index in the table.
    pos: ffi::Py_ssize_t,
    /// The table read directly: its first entry's key field, the number of
    /// entries and the stride in bytes; `None`: `PyDict_Next`.
    table: Option<(*const u8, usize, usize)>,
}

impl DictEntries {
    /// The entries of `dict`.
    ///
    /// # Safety
    /// The GIL is held and `dict` is a live dict (or subclass); no Python
    /// code runs between the calls to [`DictEntries::next`] unless
    /// [`DictEntries::reload`] is called after it.
    #[inline]
    pub(super) unsafe fn new(dict: *mut ffi::PyObject) -> DictEntries {
        let mut e = DictEntries {
            dict,
            pos: 0,
            table: None,
        };
        e.reload();
        if let Some((keys, n, stride)) = e.table {
            for i in 0..n.min(AHEAD) {
                Self::fetch(keys.add(i * stride));
            }
        }
        e
    }

    /// Read the table again (after Python code ran: the dict may have
    /// changed); the position is kept, as `PyDict_Next` keeps it.
    ///
    /// # Safety
    /// As [`DictEntries::new`].
    #[inline]
    pub(super) unsafe fn reload(&mut self) {
        self.table = table(self.dict);
    }

    /// Whether the table is read directly (for the tests' check).
    pub(super) fn direct(&self) -> bool {
        self.table.is_some()
    }

    /// Prefetch the key and value objects of the entry whose key field is
    /// at `at`.
    #[inline(always)]
    unsafe fn fetch(at: *const u8) {
        let k = at.cast::<*const u8>().read();
        let v = at.add(8).cast::<*const u8>().read();
        prefetch(k);
        // A `str`'s text starts at 40 or 48: its second line.
        prefetch(k.wrapping_add(64));
        prefetch(v);
    }

    /// The next entry, borrowed, or `None` at the end.
    ///
    /// # Safety
    /// As [`DictEntries::new`].
    #[inline(always)]
    pub(super) unsafe fn next(&mut self) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let Some((keys, n, stride)) = self.table else {
            let (mut k, mut v) = (std::ptr::null_mut(), std::ptr::null_mut());
            return (ffi::PyDict_Next(self.dict, &mut self.pos, &mut k, &mut v) != 0)
                .then_some((k, v));
        };
        loop {
            let i = self.pos.max(0) as usize;
            if i >= n {
                return None;
            }
            self.pos += 1;
            if i + AHEAD < n {
                Self::fetch(keys.add((i + AHEAD) * stride));
            }
            let at = keys.add(i * stride);
            let v = at.add(8).cast::<*mut ffi::PyObject>().read();
            if !v.is_null() {
                return Some((at.cast::<*mut ffi::PyObject>().read(), v));
            }
        }
    }
}

/// The combined entry table of `dict`: its first entry's key field, its
/// entries (`dk_nentries`, deleted ones included) and their stride; `None`
/// where the layout is not known or the table is split.
///
/// # Safety
/// The GIL is held and `dict` is a live dict (or subclass).
#[inline]
unsafe fn table(dict: *mut ffi::PyObject) -> Option<(*const u8, usize, usize)> {
    let which = DICT.load(Ordering::Relaxed);
    if which == 0 {
        return None;
    }
    // SAFETY: the layout is the running interpreter's (checked at import)
    // and `dict` a live dict: `ma_keys` at 32, `ma_values` at 40; the keys
    // object's fields as listed at [`DICT_3_9`] and [`DICT_3_11`].
    let base = dict.cast::<u8>();
    if !base.add(40).cast::<*const u8>().read().is_null() {
        return None;
    }
    let keys = base.add(32).cast::<*const u8>().read();
    if which == DICT_3_9 {
        let size = keys.add(8).cast::<isize>().read().max(0) as usize;
        let n = keys.add(32).cast::<isize>().read().max(0) as usize;
        let width = match size {
            0..=0xff => 1,
            0x100..=0xffff => 2,
            0x1_0000..=0xffff_ffff => 4,
            _ => 8,
        };
        Some((keys.add(40 + size * width + 8), n, 24))
    } else {
        let index_bytes = 1usize << keys.add(9).read();
        let general = keys.add(10).read() == 0;
        let n = keys.add(24).cast::<isize>().read().max(0) as usize;
        let entries = keys.add(32 + index_bytes);
        Some(if general {
            (entries.add(8), n, 24)
        } else {
            (entries, n, 16)
        })
    }
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
    DICT.load(Ordering::Relaxed) != 0
}

/// A dict's entry table for writing by position (`nested_dict`): the place
/// of the first entry's key, the entry size in pointers (the value follows
/// the key) and the number of entries; `None` where [`table`] gives none or
/// the table has deleted entries (then entry `i` is not the `i`-th key in
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
    let (first, n, stride) = table(d)?;
    // SAFETY: as `table`: `ma_used` at 16 on every listed version.
    let used = d.cast::<u8>().add(16).cast::<isize>().read();
    (used >= 0 && used as usize == n).then_some((
        first.cast::<*mut ffi::PyObject>().cast_mut(),
        stride / std::mem::size_of::<*mut ffi::PyObject>(),
        n,
    ))
}
