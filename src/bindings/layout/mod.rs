//! Reads of CPython object internals, fenced: every read of a field that is
//! not part of the stable ABI lives in this folder, through one table of
//! offsets per CPython version ([`versions`]), chosen once at import.
//!
//! What is read: a compact ASCII `str`'s text and cached hash, an exact
//! `float`'s value, an exact `list`'s items ([`objects`]), and a dict's
//! entry table, walked as `PyDict_Next` walks it ([`DictEntries`]).  Nothing
//! is written.  Where no table is chosen, each reader gives `None` (or calls
//! the C API: `PyFloat_AsDouble`, `PyDict_Next`) and the callers take the
//! C-API calls (`PyUnicode_AsUTF8AndSize`, `PyList_GetItem`, `tp_hash`).
//!
//! Why: the wheel is built for the stable ABI (one wheel for every CPython
//! from 3.9), under which the macros that read these fields are not
//! available and each read is a call into `libpython`; the dict path and
//! `Scorer.batch` make several such calls per entry.  Read from the object,
//! each is a load or two, and the dict walk can prefetch the key and value
//! objects a few entries ahead (`PyDict_Next` touches each key object first
//! inside the loop, a cache miss no prefetch covers).
//!
//! Invariants:
//! - A table is chosen only on a CPython whose version has one (3.9 to
//!   3.13: the versions `make smoke` runs the layout tests on), on a 64-bit,
//!   little-endian, GIL build without `Py_TRACE_REFS` ([`init`]).  Any other
//!   interpreter (a later CPython, PyPy, a free-threaded build) gets the
//!   C-API calls; a new version gets a table once its headers are read and
//!   `make smoke` runs `tests/test_layout.py` on it.
//! - Each group of reads (`str`/`float`, `list`/hash, dict tables) is used
//!   only after an import-time check ([`check`]) reads objects made there
//!   as the C API reads them; a group that disagrees stays off.
//! - Readers are given only objects of the exact type they read (the
//!   callers check the type pointer), while the GIL is held, and their
//!   results are used only while no Python code runs.
//! - `RANKLENS_LAYOUT=api` turns every group off (`tests/test_layout.py`
//!   compares both ways bit for bit).
//!
//! Why it is safe although these fields are not in the stable ABI: within
//! a CPython minor version the object layout does not change (every
//! extension built without the limited API for that version compiles these
//! offsets in, through the same macros); the tables only describe versions
//! whose headers were read and whose tests pass; a build the tables do not
//! describe is either excluded by [`init`] or caught by the check; and the
//! readers only load, never store into an object.
//!
//! Rejected:
//! - `#[repr(C)]` structs chosen by `cfg(Py_3_x)`: an abi3 wheel is compiled
//!   once for every version, so the choice has to be made at run time.
//! - Writing values into a dict's entry table by position (`nested_dict`):
//!   a write into another library's internals (reference counts, version
//!   tags, GC tracking) for a gain too small to carry that risk.
//! - Reading on versions the tests do not run on (3.14): the import-time
//!   check covers the objects it makes, not every shape a table can take.
//! - One bare offset per read, a version match at each: the versions'
//!   differences scattered over the readers instead of side by side.

// A stable-ABI build for Windows before 3.10 chooses no table (see `init`).
#![cfg_attr(not(any(not(Py_LIMITED_API), Py_3_10, unix)), allow(dead_code))]

mod check;
mod dict;
mod objects;
mod versions;

pub(super) use dict::{dict_reads, DictEntries};
pub(super) use objects::{ascii, cached_hash, float_value, list_items};

use pyo3::prelude::*;
use std::sync::atomic::{AtomicPtr, Ordering};
use versions::Layout;

/// The running interpreter's table for one group of reads, or none.
struct Chosen(AtomicPtr<Layout>);

impl Chosen {
    const fn none() -> Chosen {
        Chosen(AtomicPtr::new(std::ptr::null_mut()))
    }

    #[inline(always)]
    fn get(&self) -> Option<&'static Layout> {
        // SAFETY: only `set` stores here, and only null or the address of
        // one of the `static` tables in `versions`.
        unsafe { self.0.load(Ordering::Relaxed).as_ref() }
    }

    fn set(&self, layout: Option<&'static Layout>) {
        let p = layout.map_or(std::ptr::null_mut(), |l| std::ptr::from_ref(l).cast_mut());
        self.0.store(p, Ordering::Relaxed);
    }
}

/// The table for the `str` text and `float` value reads.
static STRS: Chosen = Chosen::none();
/// The table for the `list` item and `str` hash reads.
static OBJECTS: Chosen = Chosen::none();
/// The table for the dict entry table reads.
static DICTS: Chosen = Chosen::none();

/// The running interpreter's table, if it is a build the tables describe.
fn known(py: Python<'_>) -> Option<&'static Layout> {
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
    versions::of_minor(v.minor)
}

/// Choose at import the tables used: the running version's, for each group
/// of reads that reads objects made here right.
pub(super) fn init(py: Python<'_>) {
    // `RANKLENS_LAYOUT=api` keeps the C-API calls (the tests compare both).
    if std::env::var_os("RANKLENS_LAYOUT").is_some_and(|v| v == "api") {
        return;
    }
    let Some(layout) = known(py) else {
        return;
    };
    // A stable-ABI build for Windows before 3.10 has no borrowed UTF-8 to
    // check the text read against: nothing is read there.
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        let strs = check::strs(py, layout);
        let objects = strs && check::objects(py, layout);
        let dicts = objects && check::dicts(py, layout).unwrap_or(false);
        STRS.set(strs.then_some(layout));
        OBJECTS.set(objects.then_some(layout));
        DICTS.set(dicts.then_some(layout));
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    let _ = layout;
}

/// Whether every group of reads is used (the module's `_object_reads`, for
/// the tests).
pub(super) fn active() -> bool {
    STRS.get().is_some() && OBJECTS.get().is_some() && dict_reads()
}
