//! Encoding from Python objects (`core::encode`, `core::columns`, `core::vocab`):
//! mappings, grouped ground truth, column chunks, RAG rows, packed ids, and
//! decoding a vocabulary.
//!
//! ## The dict path (`encode_mapping`): where the time goes
//!
//! `Run(dict)` of `{query: {doc: score}}` (BEIR, MTEB, pytrec_eval users) on
//! 1M entries (10k queries x 100, ids of ~20 bytes, 10% of rows tied; the
//! stable-ABI build with LTO on CPython 3.11, one thread, perf with DWARF call
//! graphs and the process's CPU clock, a shared 2-core machine under a load
//! average of 5-10, 2026-11-25): ~40 ns of CPU an entry, against ~20 ns for a
//! plain-Python loop that only iterates the same entries (85 ns with PyO3's
//! dict iterator, which made a `Bound` per key and value: two reference counts
//! up and down, and `is_instance_of` through the type objects).  Of the 40 ns,
//! under the GIL (~64%, ~26 ns):
//!
//! * `PyDict_Next` ~28% of the whole: almost all of it one load, the key's
//!   cached hash, the first touch of the `str` object (a cache miss); nothing
//!   can avoid it: the key's bytes are read next to it;
//! * the row itself ~21% (`Builder::row`: the copy of the id into the arena, a
//!   `memcpy` call, three pushes);
//! * the loop, type checks and value reads ~15%: exact `str` / `float` / `int`
//!   are checked by type pointer and read from the object (`PyFloat_AS_DOUBLE`,
//!   a call to `PyFloat_AsDouble` under the stable ABI, ~3%;
//!   `PyUnicode_AsUTF8AndSize`, the UTF-8 cached in ASCII strings, no copy,
//!   ~4%; also in the stable-ABI wheel on 3.9, through our own declaration of
//!   it: see `bindings::utf8_raw`; copying each id there cost ~20 ns an entry);
//! * the first write of the arrays, page faults, ~7% over both phases (with
//!   4 KiB pages they were half the walk on a loaded machine: see
//!   `advise_huge` in `core::encode`).
//!
//! Then `Builder::finish`, GIL released, one task a query on the pool (~32%,
//! ~13 ns): grouping by query (one block copy when the dict's query order is
//! not byte order), the ranking check (rows already in ranking order are not
//! sorted), input positions.  A third of it (~11% of the whole) is comparing
//! the document ids of tied rows (`memcmp`): their bytes, written long before,
//! are cache misses by then.  The duplicate check is skipped when every key
//! was an exact `str` of a dict.
//!
//! Tried and dropped (each measured against the same build without it,
//! alternating runs):
//!
//! * taking 256 entries at a time (`PyDict_Next` only, each value prefetched),
//!   then writing their rows: no faster (42 against 37 ms of CPU for 1M
//!   entries): objects built in order lie in order in memory, and the hardware
//!   prefetcher already follows them;
//! * noting in `Builder::row`, while both ids are in cache, how a row compares
//!   with a tied row before it (a byte a row), so that `rank` swaps or keeps a
//!   tied pair without reading the bytes again: `finish`'s `memcmp` fell from
//!   ~7% to ~2% of the samples, but `row` grew by as much (the compare of the
//!   previous value, the extra push): no net gain (medians of 39.1 against
//!   39.3 ns an entry);
//! * a flag a block, "rows came in ranking order", to skip `rank`'s check:
//!   with tied rows in file order (half of the pairs reversed), most queries
//!   still needed their ties sorted: no measurable gain.
//!
//! Changed, 2026-11-27 (callgrind counts of the walk, 1M entries, CPython
//! 3.11, the LTO build: 515M instructions before, 377M after; CPU times of
//! `benches/bench_compat.py`, one thread, load 2-3, alternating builds):
//!
//! * the tie notes above again, as a bit a row set only on a tie (a word
//!   pushed every 64 rows), so that `finish` keeps a tied run in order or
//!   swaps a tied pair without reading the ids; a first version with a
//!   sorted list of rows spent what it saved in binary searches, cache
//!   misses in `finish` (its `helper` 9.9 -> 15.4% of the samples);
//! * a compact ASCII `str`'s text and a `float`'s value read from the object
//!   on the CPython versions whose layout is known (`bindings::layout`:
//!   3.9-3.14, checked at import; the calls elsewhere): -43 instructions an
//!   entry;
//! * ids of 4-32 bytes appended without a call to `memcpy`, and
//!   `Builder::row` always inlined (LTO had left it a call: ~20 instructions
//!   a row in saving registers).
//!
//! `Run(dict)` of the 10,000 x 100 dicts: 39.6-41.3 -> 34.4-34.8 ns an entry
//! (best of 7, quick alternation); of the 100,000 x 100 ones: 39.3-40.8 ns
//! in three runs against 42.5-68.1 for the build before, in the same runs
//! (41.5 on an idle machine, commit 16a2c1a): at that scale the
//! saved instructions hide behind the cache misses.  Dicts in BEIR's layout (ids shared across
//! queries, see below): 165 -> 142 ms a million entries.
//!
//! Changed, 2026-11-27 (on d9ba476; the 100,000 x 100 dicts, CPython 3.11,
//! LTO build, best of 5 alternating in one process, load 3-5 from other
//! jobs):
//!
//! * the dicts are read from their entry tables, the key and value objects
//!   six entries ahead prefetched (`layout::DictEntries`; `PyDict_Next` took
//!   each key's first cache miss, ~14% of the samples): one thread, 38.2 ->
//!   33.0 ns of CPU an entry;
//! * the first write of the row buffers' fresh pages was ~25% of the samples
//!   under the GIL (`clear_page_erms`: the kernel zeroing each new huge
//!   page); with two threads or more a pool thread now faults them in ahead
//!   of the rows (`core::encode::prefault`, `MADV_POPULATE_WRITE`) while
//!   this one reads the dict.  The walking thread's CPU: 28.5 (neither) ->
//!   23.0 (tables) -> 19.8 ns an entry (both); the zeroing is the same work
//!   on the other core.
//!
//! Against the targets (#15), before the changes of 2026-11-27
//! above: at 100k queries `Run(dict)` at ~39.5 ns was still above 35 (since
//! then `benches/bench_compat.py` at load 2-2.7: 31.1-31.6 ns of wall time
//! an entry, 31.4-34.2 of CPU; one thread, 33.0 of CPU).  What was left
//! then (`perf`, 1M entries): the
//! walk with `Builder::row` inlined ~22% (the row's pushes and the tie
//! check), `PyDict_Next` ~19% (its read of the key's hash: the first touch
//! of each key object, a cache miss for 10M fresh keys), `finish` ~12% plus
//! `memcmp` ~5% (tied runs of three or more rows still compare their ids,
//! by then out of cache), the first write of the arrays a few %.  At 100k
//! queries the misses grow (the arena and the arrays are ~10x larger), which
//! is the 5 ns between the two scales.  The pytrec_eval drop-in's 5
//! measure call on the same data (~91 ms of CPU, one thread, a build for
//! CPython 3.11 without LTO) spends ~46% in
//! `Run(dict)`, ~27% in the evaluation itself (`core::eval::score_query`,
//! which joins each query's rows to its judgments by hashing document ids),
//! ~6% building the `{query: {measure: value}}` dicts (`nested_dict`: a copy
//! of the previous query's dict, then `PyDict_SetItem` per value, whose key
//! lookup is most of it) and ~13% in `__init__` (half of it encoding the
//! qrels); pytrec_eval takes ~265 ms, so 6x would need ~44 ms.  The drop-in
//! scores the common input (exact `str` ids, `float` / `int` scores) without
//! a `Run`: `dictpath.rs` (its own profile there).  For `Run(dict)` itself a
//! cache from `str` object to id, for ids repeated as one object across
//! queries (BEIR's results), was not tried: the bench's run dicts are parsed
//! from a file, so their repeated ids are distinct objects.  On dicts whose
//! ids are drawn from one list of 200,000 corpus-id objects (BEIR's layout;
//! 1M entries, CPU, one thread, load 3.2-3.7, 2026-11-25) `Run(dict)` costs
//! 112-125 ns an entry against 55 ns for the same dicts with one fresh object
//! an entry: the keys lie scattered in memory and each is touched for its
//! type, hash and text.  A cache from object to row would still read the
//! bytes from wherever the id's first row put them, as scattered.
//!
//! Fresh memory on this VM (2026-11-27, idle): writing a page of each fresh
//! 2 MiB page of 400 MB took 36-615 ms (11.7 down to 0.7 GB/s; a C loop,
//! `MADV_HUGEPAGE`, repeated in one process), depending on whether the host
//! still backed the guest's free pages.  So `Run(dict)` of the 100k x 100
//! dicts on one thread (`RANKLENS_NUM_THREADS=1`) took 31.7-35.7 ns an
//! entry in some calls and 47-54 in others, 107-120 in a process's first:
//! split by call, `perf` gives the walk the same samples (~528 a call) and
//! the kernel's zeroing (`clear_page_erms`) 186 against 812, most of it on
//! the pool thread of `finish` (the ranked rows' arrays).  Input positions
//! (`extra`, 4 bytes a row) are kept only for a run with tied scores
//! (`core::encode`): on the same dicts made tie-free, 36.5-43.6 ns an entry
//! against 39.9-61.7 with them (alternated processes; this bench's own
//! dicts tie in almost every query, so they keep them).
//!
//! The same split by the process's own clock (2026-11-27 18:40 UTC, idle,
//! commit `6d0d1b6`, `RANKLENS_NUM_THREADS=1`, six calls in one process,
//! `getrusage` around each): user time 23.4-26.8 ns an entry in every call,
//! system time 56.8, 20.0, 30.5, 20.0, 8.1 and 5.2 (wall 82.8 down to 31.6;
//! 6,187-10,358 minor faults a call).  The kernel's share is the fresh
//! memory's: with `defrag` at `madvise` (this VM's setting) a fault in an
//! `MADV_HUGEPAGE` range compacts memory on the spot when no free huge page
//! is at hand.  The walk and `finish` themselves are below the 35
//! ns; what the first calls of a process add is not in their code.
//!
//! Freed blocks of 4 MiB or more are kept for reuse (the global
//! allocator, `crate::memory`): the calls after a process's first write
//! into pages already faulted in.  Three calls a process, three
//! processes, one thread, 2026-11-27 ~22:25 UTC, idle: 123, 30, 32; 58,
//! 29, 29; 131, 30, 30 ns an entry (system time 94-104 ns in two of the
//! first calls, 31 in the third, 0-2 in the others), against 47-56 ns
//! (system 18-26) for every call after the first with `malloc`'s blocks
//! (`RANKLENS_KEEP_FREED_MIB=0`) in the same minutes.  A process's first
//! call still pays for its fresh pages.

#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
use super::utf8_raw;
use super::{
    is_id, non_contiguous, num_rows, row_items, str_utf8, to_arrays, to_py, EncodedArrays,
};
use crate::core::columns;
use crate::core::encode::{Builder, Kind};
use crate::core::error::Error;
use crate::core::eval;
use crate::core::vocab::Vocab;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::borrow::Cow;

/// An id: `str` (its UTF-8 bytes, borrowed from the object where the API
/// allows, else copied into `buf`: see [`str_utf8`]), or `int` (written in
/// decimal into `buf`); anything else is an error.
pub(super) fn id_bytes<'a>(
    obj: &'a Bound<'_, PyAny>,
    buf: &'a mut String,
    what: &str,
) -> PyResult<&'a [u8]> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(match str_utf8(s, || what.to_string())? {
            Cow::Borrowed(text) => text.as_bytes(),
            Cow::Owned(text) => {
                *buf = text;
                buf.as_bytes()
            }
        });
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>() {
        buf.clear();
        buf.push_str(&obj.str()?.to_cow()?);
        return Ok(buf.as_bytes());
    }
    Err(Error::InvalidInput(format!(
        "{what} must be a str or an int, got {} ({})",
        obj.get_type().name()?,
        obj.repr()?
    )))
    .map_err(|e| to_py(obj.py(), e))
}

/// An id as an owned string (for query ids, kept for error messages).
pub(super) fn id_string(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let mut buf = String::new();
    let bytes = id_bytes(obj, &mut buf, what)?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

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
struct DictWalk<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    entries: super::layout::DictEntries,
    len: ffi::Py_ssize_t,
    /// Python code may have run since the last size check.
    dirty: bool,
}

type Entry = (*mut ffi::PyObject, *mut ffi::PyObject);

impl<'a, 'py> DictWalk<'a, 'py> {
    fn new(dict: &'a Bound<'py, PyDict>) -> Self {
        // SAFETY: a dict, and the GIL is held (`Bound`); the entries are
        // read again after any step where Python code may have run.
        let (len, entries) = unsafe {
            (
                ffi::PyDict_Size(dict.as_ptr()),
                super::layout::DictEntries::new(dict.as_ptr()),
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
    fn ran_python(&mut self) {
        self.dirty = true;
    }

    /// The next entry; `whose` names the dict in the error.  The size is
    /// checked only after [`DictWalk::ran_python`] (a call to `PyDict_Size` a
    /// step was ~2% of `Run(dict)`): without Python code nothing changes it.
    #[inline(always)]
    fn next(&mut self, whose: impl FnOnce() -> String) -> PyResult<Option<Entry>> {
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
pub(super) unsafe fn exact_number(v: *mut ffi::PyObject) -> Option<f64> {
    if ffi::PyFloat_CheckExact(v) != 0 {
        Some(super::layout::float_value(v))
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
unsafe fn plain_entry(
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

/// The state of one `encode_mapping` call.
struct MappingEncoder<'py> {
    py: Python<'py>,
    kind: Kind,
    pytrec_types: bool,
    b: Builder,
    dbuf: String,
    /// Every row so far came from a dict entry with an exact `str` key: no
    /// document can repeat within a query (for any other key a duplicate is
    /// possible: an `int` and its decimal string, a `str` subclass with its own
    /// `__hash__`, a non-dict mapping repeating a key, a list).
    unique: bool,
}

impl<'py> MappingEncoder<'py> {
    fn err(&self, e: Error) -> PyErr {
        to_py(self.py, e)
    }

    fn what_value(&self) -> &'static str {
        if self.kind == Kind::Run {
            "score"
        } else {
            "label"
        }
    }

    fn bad_run() -> PyErr {
        PyTypeError::new_err("Unable to extract query/object scores.")
    }

    /// One query: its id and its rankings or judgments.
    fn query(&mut self, qobj: &Bound<'py, PyAny>, inner: &Bound<'py, PyAny>) -> PyResult<()> {
        if self.pytrec_types {
            if self.kind == Kind::Qrels {
                let docs = pytrec_qrels_query(qobj, inner)?;
                // The entries checked while they are encoded, in one walk.
                return self.pytrec_judgments(qobj, docs);
            } else if !qobj.is_instance_of::<PyString>() || inner.cast::<PyDict>().is_err() {
                return Err(Self::bad_run());
            }
        }
        let qid = id_string(qobj, "a query id")?;
        let before = self.b.num_queries();
        let q = self.b.query(qid.as_bytes()).map_err(|e| self.err(e))?;
        if (q as usize) < before {
            // `1` and `"1"`, a `str` subclass with its own `__hash__`, or a
            // mapping that repeats a key: two queries would merge into one.
            return Err(self.err(Error::InvalidInput(format!(
                "query {qid:?} is given twice (the second time as {} {}): query ids must \
                 differ once written as strings",
                qobj.get_type().name()?,
                qobj.repr()?
            ))));
        }
        if inner.cast::<PyList>().is_ok() || inner.cast::<PyTuple>().is_ok() {
            if self.kind == Kind::Qrels {
                return Err(self.err(Error::InvalidInput(format!(
                    "query {qid:?}: qrels need a mapping doc id -> label, got a list \
                     (use Qrels.from_groups or a dict of labels)"
                ))));
            }
            self.unique = false;
            let docs: Vec<Bound<'py, PyAny>> = inner.try_iter()?.collect::<PyResult<_>>()?;
            let n = docs.len();
            for (i, d) in docs.iter().enumerate() {
                let doc = id_bytes(d, &mut self.dbuf, "a document id")?;
                self.b
                    .row(q, doc, (n - i) as f64)
                    .map_err(|e| to_py(self.py, e))?;
            }
            return Ok(());
        }
        if let Ok(d) = inner.cast::<PyDict>() {
            self.docs(q, &qid, d)?;
            return Ok(());
        }
        let what_value = self.what_value();
        let pairs =
            items(inner).map_err(|_| {
                self.err(Error::InvalidInput(format!(
                "query {qid:?}: expected a mapping doc id -> {what_value} or a list of doc ids, \
                 got {}",
                inner.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            )))
            })?;
        self.unique = false;
        for (dobj, vobj) in pairs {
            self.entry(q, &qid, &dobj, &vobj)?;
        }
        Ok(())
    }

    /// The judgments of one query of pytrec_eval-style qrels, a dict: exact
    /// `str` -> exact `int` entries encoded as they come; at the first other
    /// entry, pytrec_eval's checks over the whole query first (their
    /// `TypeError` comes before any other error of the query, as pytrec_eval
    /// checks before it reads), then the general path from that entry on.
    /// Why one walk: a walk of its own for the checks cost ~7 ms of the ~70
    /// of 1M judgments (100k queries); in one walk `encode_mapping` of them
    /// takes 47.3-48.9 ms of CPU against 52.1-54.7 (best of 9, three
    /// alternating runs, load ~2.5, 2026-11-27).
    fn pytrec_judgments(
        &mut self,
        qobj: &Bound<'py, PyAny>,
        d: &Bound<'py, PyDict>,
    ) -> PyResult<()> {
        // An error of the query id comes after the entries' checks.
        let after_checks = |e: PyErr| check_pytrec_judgments(d).err().unwrap_or(e);
        let qid = id_string(qobj, "a query id").map_err(after_checks)?;
        let before = self.b.num_queries();
        let q = self
            .b
            .query(qid.as_bytes())
            .map_err(|e| after_checks(self.err(e)))?;
        if (q as usize) < before {
            let e = Error::InvalidInput(format!(
                "query {qid:?} is given twice (the second time as {} {}): query ids must \
                 differ once written as strings",
                qobj.get_type().name()?,
                qobj.repr()?
            ));
            return Err(after_checks(self.err(e)));
        }
        pyo3::sync::critical_section::with_critical_section(d.as_any(), || {
            let mut walk = DictWalk::new(d);
            let mut scratch = Vec::new();
            let mut checked = false;
            while let Some((k, v)) = walk.next(|| format!("the documents of query {qid:?}"))? {
                // SAFETY: the GIL is held, `k` and `v` are the live entry just
                // returned (type pointer checks), and the bytes are copied by
                // `row` at once.
                if !checked && unsafe { ffi::PyLong_CheckExact(v) } != 0 {
                    if let Some((doc, value)) = unsafe { plain_entry(k, v, &mut scratch) } {
                        self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))?;
                        continue;
                    }
                }
                if !checked {
                    check_pytrec_judgments(d)?;
                    checked = true;
                }
                // SAFETY: as above; owned references from here on, as the
                // general path may run Python code.
                let (dobj, vobj) = unsafe {
                    (
                        Bound::from_borrowed_ptr(self.py, k),
                        Bound::from_borrowed_ptr(self.py, v),
                    )
                };
                self.entry(q, &qid, &dobj, &vobj)?;
                walk.ran_python();
            }
            Ok(())
        })
    }

    /// The documents of one query, a dict: borrowed entries, the common ones
    /// (`str` -> `float` / `int`) without a call into Python.
    fn docs(&mut self, q: u32, qid: &str, d: &Bound<'py, PyDict>) -> PyResult<()> {
        // A no-op with the GIL; on a free-threaded build, the dict's lock, so
        // that no other thread changes it under the borrowed entries.
        pyo3::sync::critical_section::with_critical_section(d.as_any(), || {
            self.docs_locked(q, qid, d)
        })
    }

    fn docs_locked(&mut self, q: u32, qid: &str, d: &Bound<'py, PyDict>) -> PyResult<()> {
        let mut walk = DictWalk::new(d);
        let mut scratch = Vec::new();
        while let Some((k, v)) = walk.next(|| format!("the documents of query {qid:?}"))? {
            // SAFETY: the GIL is held, `k` and `v` are the live entry just
            // returned, and the bytes are copied by `row` at once.
            if let Some((doc, value)) = unsafe { plain_entry(k, v, &mut scratch) } {
                self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))?;
                continue;
            }
            // SAFETY: as above; owned references from here on, as the general
            // path may run Python code (`__float__`, `__str__`).
            let (dobj, vobj) = unsafe {
                (
                    Bound::from_borrowed_ptr(self.py, k),
                    Bound::from_borrowed_ptr(self.py, v),
                )
            };
            self.entry(q, qid, &dobj, &vobj)?;
            walk.ran_python();
        }
        Ok(())
    }

    /// One document of a mapping, the general path: any key and value types,
    /// with pytrec_eval's checks when asked.
    fn entry(
        &mut self,
        q: u32,
        qid: &str,
        dobj: &Bound<'py, PyAny>,
        vobj: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        // Python code may run from here (conversions), and the key may be
        // any `str` or `int`: the duplicate check is needed.
        self.unique = false;
        if self.pytrec_types
            && self.kind == Kind::Run
            && !(dobj.is_instance_of::<PyString>()
                && (vobj.is_instance_of::<PyFloat>() || vobj.is_instance_of::<PyInt>()))
        {
            return Err(Self::bad_run());
        }
        // Python floats first, then anything numeric.
        let value: Option<f64> = if let Ok(f) = vobj.cast::<PyFloat>() {
            Some(f.value())
        } else if vobj.is_instance_of::<PyString>() {
            None
        } else {
            vobj.extract().ok()
        };
        let doc = id_bytes(dobj, &mut self.dbuf, "a document id")?;
        let Some(value) = value else {
            return Err(to_py(
                self.py,
                Error::InvalidInput(format!(
                    "query {qid:?}, document {:?}: the {} must be a number, got {}",
                    String::from_utf8_lossy(doc),
                    if self.kind == Kind::Run {
                        "score"
                    } else {
                        "label"
                    },
                    vobj.repr().map(|r| r.to_string()).unwrap_or_default()
                )),
            ));
        };
        self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))
    }
}

/// Encode a mapping query id -> (mapping doc id -> value | sequence of doc ids).
/// A sequence is a ranked list (its order is the ranking; only for runs).
/// Query ids must differ once written as strings (`1` and `"1"` is an error),
/// and so must a query's document ids (checked unless every key was an exact
/// `str` of a dict, which cannot repeat).
///
/// `pytrec_types`: accept exactly what pytrec_eval's `RelevanceEvaluator`
/// accepts (`str` query and document ids, a `dict` per query; `int` labels,
/// `float` or `int` scores, subclasses included) and raise its `TypeError`s,
/// checked entry by entry in the order pytrec_eval checks them, so the
/// compatibility layer needs no second pass over the data in Python.
#[pyfunction]
#[pyo3(signature = (data, kind, round_f32 = false, pytrec_types = false))]
pub(super) fn encode_mapping<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    kind: &str,
    round_f32: bool,
    pytrec_types: bool,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let mut enc = MappingEncoder {
        py,
        kind,
        pytrec_types,
        b: Builder::new(kind, round_f32),
        dbuf: String::new(),
        unique: true,
    };
    if let Ok(d) = data.cast::<PyDict>() {
        // Room for every row at once (no regrowth: no copy, a lower peak).
        let mut rows = 0usize;
        let mut walk = DictWalk::new(d);
        while let Some((_, v)) = walk.next(|| "the mapping of queries".to_string())? {
            // SAFETY: the GIL is held and `v` is a live entry; no Python runs.
            if unsafe { ffi::PyDict_Check(v) } != 0 {
                rows += unsafe { ffi::PyDict_Size(v) } as usize;
            }
        }
        enc.b.reserve(rows);
        let mut walk = DictWalk::new(d);
        // One query: `false` at the end of the dict.
        let mut step = |enc: &mut MappingEncoder<'py>| -> PyResult<bool> {
            let Some((k, v)) = walk.next(|| "the mapping of queries".to_string())? else {
                return Ok(false);
            };
            // SAFETY: a live entry; owned references, as a query may run
            // Python code (its checks and conversions).
            let (qobj, inner) = unsafe {
                (
                    Bound::from_borrowed_ptr(py, k),
                    Bound::from_borrowed_ptr(py, v),
                )
            };
            enc.query(&qobj, &inner)?;
            walk.ran_python();
            Ok(true)
        };
        // The queries up to the first row, then room for the document id
        // bytes of the other rows, guessed from the first query's.
        let mut more = true;
        while more && enc.b.is_empty() {
            more = step(&mut enc)?;
        }
        let n = enc.b.len();
        if n > 0 {
            let seen: usize = (0..n).map(|r| enc.b.doc(r).len()).sum();
            let per_row = seen / n + 1;
            enc.b
                .reserve_bytes(per_row.saturating_mul(rows.saturating_sub(n)));
        }
        if more {
            prefaulting(&mut enc, |enc| {
                while step(enc)? {}
                Ok(())
            })?;
        }
    } else {
        for (qobj, inner) in items(data)? {
            enc.query(&qobj, &inner)?;
        }
    }
    let mut b = enc.b;
    if enc.unique {
        b.assume_unique_docs();
    }
    // Ranked per query in parallel: on `RANKLENS_NUM_THREADS` threads if set;
    // a few rows here (`encode::SERIAL_ROWS`: the hand-over would cost more).
    let small = b.len() <= crate::core::encode::SERIAL_ROWS;
    let encoded = py
        .detach(move || eval::with_threads_or_inline(None, small, move || b.finish()))
        .and_then(|x| x)
        .map_err(|e| to_py(py, e))?;
    Ok(to_arrays(py, encoded))
}

/// `read(enc)` while another core faults in the pages `enc`'s rows will be
/// written to (`core::encode::prefault`); stopped when `read` returns.  A
/// buffer that grows past its room meanwhile moves, and its old range is
/// then faulted in for nothing (harmless: see `prefault`).  Only with a pool
/// of two threads or more and room of 64 MiB or more; else `read` alone.
fn prefaulting<'py>(
    enc: &mut MappingEncoder<'py>,
    mut read: impl FnMut(&mut MappingEncoder<'py>) -> PyResult<()>,
) -> PyResult<()> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let spare = enc.b.spare();
    let bytes: usize = spare.iter().map(|r| r.1).sum();
    let threads = eval::thread_count(None).ok().flatten();
    if bytes < 64 << 20 || threads == Some(1) {
        return read(enc);
    }
    let stop = AtomicBool::new(false);
    let out = crate::core::pool::in_place_scope(|scope| {
        let stop = &stop;
        scope.spawn(move |_| {
            crate::core::encode::prefault(&spare, stop);
        });
        let out = read(enc);
        stop.store(true, Ordering::Relaxed);
        out
    });
    match out {
        Ok(out) => out,
        Err(_) => read(enc),
    }
}

/// One query of pytrec_eval-style qrels, its type checks and messages: a
/// `str` key and a `dict` (here), every entry a `str` key and an `int`
/// label ([`check_pytrec_judgments`]).
fn pytrec_qrels_query<'a, 'py>(
    qobj: &Bound<'py, PyAny>,
    inner: &'a Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyDict>> {
    if !qobj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("Expected string as key."));
    }
    inner
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("Expected dictionary as value."))
}

/// The entry checks of pytrec_eval-style qrels, every entry of `docs`.
fn check_pytrec_judgments(docs: &Bound<'_, PyDict>) -> PyResult<()> {
    let mut walk = DictWalk::new(docs);
    while let Some((doc, label)) = walk.next(|| "the judgments of a query".to_string())? {
        // SAFETY: the GIL is held and the entry is live; type checks run no
        // Python code.
        if unsafe { ffi::PyUnicode_Check(doc) } == 0 {
            return Err(PyTypeError::new_err(
                "Expected mapping of document id to query relevance or matching score.",
            ));
        }
        if unsafe { ffi::PyLong_Check(label) } == 0 {
            return Err(PyTypeError::new_err("Expected relevance to be integer."));
        }
    }
    Ok(())
}

/// Encode grouped ground truth: `items` is a sequence of
/// `(query id, groups, labels or None)`; each group is a sequence of doc ids (a
/// bare id is a group of one); `labels` gives one label per group (default 1).
#[pyfunction]
pub(super) fn encode_groups<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyAny>,
) -> PyResult<EncodedArrays<'py>> {
    let mut b = Builder::new(Kind::Qrels, false);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    for item in items.try_iter()? {
        let item = item?;
        let (qobj, groups, labels): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            item.extract()?;
        let qid = id_string(&qobj, "a query id")?;
        let q = b.query(qid.as_bytes()).map_err(err)?;
        if groups.is_instance_of::<PyString>() || groups.try_iter().is_err() {
            return Err(bad(format!(
                "query {qid:?}: the ground truth must be a list of groups (lists of ids)"
            )));
        }
        let groups: Vec<Bound<'py, PyAny>> = groups.try_iter()?.collect::<PyResult<_>>()?;
        let labels: Option<Vec<f64>> = if labels.is_none() {
            None
        } else {
            let l: Vec<f64> = labels.extract().map_err(|_| {
                bad(format!(
                    "query {qid:?}: labels must be a list of numbers, one per group"
                ))
            })?;
            if l.len() != groups.len() {
                return Err(bad(format!(
                    "query {qid:?}: {} labels for {} groups",
                    l.len(),
                    groups.len()
                )));
            }
            Some(l)
        };
        for (g, group) in groups.iter().enumerate() {
            let label = labels.as_ref().map_or(1.0, |l| l[g]);
            let members: Vec<Bound<'py, PyAny>> =
                if group.cast::<PyList>().is_ok() || group.cast::<PyTuple>().is_ok() {
                    group.try_iter()?.collect::<PyResult<_>>()?
                } else {
                    vec![group.clone()]
                };
            if members.is_empty() {
                return Err(bad(format!("query {qid:?}: group {g} is empty")));
            }
            for m in &members {
                let doc = id_bytes(m, &mut dbuf, "a document id")?;
                if doc.is_empty() {
                    return Err(bad(format!(
                        "query {qid:?}: group {g} holds an empty document id"
                    )));
                }
                b.grouped_row(q, doc, label, g as u32).map_err(err)?;
            }
        }
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}

/// The strings of a vocabulary, as a list of `str` (invalid UTF-8 replaced).
#[pyfunction]
pub(super) fn decode_vocab<'py>(
    py: Python<'py>,
    bytes: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    let sl = |e: numpy::AsSliceError| PyTypeError::new_err(format!("non-contiguous array: {e}"));
    let v = Vocab::new(
        bytes.as_slice().map_err(sl)?,
        offsets.as_slice().map_err(sl)?,
    )
    .map_err(|e| to_py(py, e))?;
    Ok((0..v.len())
        .map(|i| PyString::new(py, &String::from_utf8_lossy(v.get(i))))
        .collect())
}

/// An id column chunk as the Python side passes it (see `core::columns::Ids`):
/// `("str", bytes, offsets)`, `("dict", bytes, offsets, indices)`,
/// `("int", values)` or `("uint", values)`; offsets and indices int32 or int64.
pub(super) enum HeldInts<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

pub(super) enum HeldIds<'py> {
    Strings(PyReadonlyArray1<'py, u8>, HeldInts<'py>),
    Dict(PyReadonlyArray1<'py, u8>, HeldInts<'py>, HeldInts<'py>),
    Int(PyReadonlyArray1<'py, i64>),
    UInt(PyReadonlyArray1<'py, u64>),
}

impl<'py> HeldInts<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(HeldInts::I32(a));
        }
        obj.extract::<PyReadonlyArray1<'py, i64>>()
            .map(HeldInts::I64)
            .map_err(|_| PyTypeError::new_err("offsets/indices must be int32 or int64 arrays"))
    }

    fn view(&self) -> PyResult<columns::Ints<'_>> {
        Ok(match self {
            HeldInts::I32(a) => columns::Ints::I32(a.as_slice().map_err(non_contiguous)?),
            HeldInts::I64(a) => columns::Ints::I64(a.as_slice().map_err(non_contiguous)?),
        })
    }
}

impl<'py> HeldIds<'py> {
    fn extract(spec: &Bound<'py, PyTuple>) -> PyResult<Self> {
        let tag: String = spec.get_item(0)?.extract()?;
        let arg = |i: usize| spec.get_item(i);
        Ok(match (tag.as_str(), spec.len()) {
            ("str", 3) => HeldIds::Strings(arg(1)?.extract()?, HeldInts::extract(&arg(2)?)?),
            ("dict", 4) => HeldIds::Dict(
                arg(1)?.extract()?,
                HeldInts::extract(&arg(2)?)?,
                HeldInts::extract(&arg(3)?)?,
            ),
            ("int", 2) => HeldIds::Int(arg(1)?.extract()?),
            ("uint", 2) => HeldIds::UInt(arg(1)?.extract()?),
            _ => {
                return Err(PyTypeError::new_err(
                    "an id column is ('str', bytes, offsets), ('dict', bytes, offsets, \
                     indices), ('int', values) or ('uint', values)",
                ))
            }
        })
    }

    fn view(&self) -> PyResult<columns::Ids<'_>> {
        Ok(match self {
            HeldIds::Strings(b, o) => columns::Ids::Strings {
                bytes: b.as_slice().map_err(non_contiguous)?,
                offsets: o.view()?,
            },
            HeldIds::Dict(b, o, i) => columns::Ids::Dict {
                bytes: b.as_slice().map_err(non_contiguous)?,
                offsets: o.view()?,
                indices: i.view()?,
            },
            HeldIds::Int(v) => columns::Ids::Int(v.as_slice().map_err(non_contiguous)?),
            HeldIds::UInt(v) => columns::Ids::UInt(v.as_slice().map_err(non_contiguous)?),
        })
    }
}

/// One chunk of rows as passed from Python: (query ids, doc ids, values).
pub(super) type ColumnChunk<'py> = (
    Bound<'py, PyTuple>,
    Bound<'py, PyTuple>,
    PyReadonlyArray1<'py, f64>,
);

/// Encode rows given as column chunks: `chunks` is a list of
/// `(query ids, doc ids, values)`, the ids in one of the layouts of `HeldIds`,
/// values float64, all three of one length; rows are numbered across chunks.
/// `names`: (query, doc, value) column names, for messages.  The arrays are
/// borrowed, and the GIL released while the rows are encoded.
#[pyfunction]
#[pyo3(signature = (kind, chunks, names, round_f32 = false))]
pub(super) fn encode_columns<'py>(
    py: Python<'py>,
    kind: &str,
    chunks: Vec<ColumnChunk<'py>>,
    names: (String, String, String),
    round_f32: bool,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let held = chunks
        .iter()
        .map(|(q, d, v)| Ok((HeldIds::extract(q)?, HeldIds::extract(d)?, v)))
        .collect::<PyResult<Vec<_>>>()?;
    let views = held
        .iter()
        .map(|(q, d, v)| {
            Ok(columns::Chunk {
                queries: q.view()?,
                docs: d.view()?,
                values: v.as_slice().map_err(non_contiguous)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let names = columns::Names {
        query: &names.0,
        doc: &names.1,
        value: &names.2,
    };
    let encoded = py
        .detach(|| columns::encode_columns(kind, &views, names, round_f32))
        .map_err(|e| to_py(py, e))?;
    Ok(to_arrays(py, encoded))
}

/// A string column in Arrow's layout: (UTF-8 bytes, int64 offsets).
pub(super) type PackedIds<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<i64>>);

/// Pack a sequence of ids (`str`, or integers written in decimal) into Arrow's
/// string layout: (UTF-8 bytes, int64 offsets).  A null (`None`, NaN, pandas'
/// NA) or any other type is an error naming `column` and the row.
#[pyfunction]
pub(super) fn pack_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    column: &str,
) -> PyResult<PackedIds<'py>> {
    use std::fmt::Write;
    let mut bytes: Vec<u8> = Vec::new();
    let mut offsets: Vec<i64> = Vec::with_capacity(ids.len().unwrap_or(0) + 1);
    offsets.push(0);
    let mut num = String::new();
    let mut push = |row: usize, obj: &Bound<'py, PyAny>| -> PyResult<()> {
        if let Ok(s) = obj.cast::<PyString>() {
            let text = str_utf8(s, || format!("column {column:?}, row {row}: an id"))?;
            bytes.extend_from_slice(text.as_bytes());
        } else if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(to_py(
                py,
                Error::InvalidInput(format!(
                    "column {column:?}, row {row}: an id must be a str or an int, got a bool"
                )),
            ));
        } else if let Ok(v) = obj.extract::<i64>() {
            num.clear();
            let _ = write!(num, "{v}");
            bytes.extend_from_slice(num.as_bytes());
        } else if obj.is_instance_of::<PyInt>() {
            bytes.extend_from_slice(obj.str()?.to_cow()?.as_bytes());
        } else {
            let null = obj.is_none()
                || obj.extract::<f64>().is_ok_and(f64::is_nan)
                || obj.get_type().name()?.to_cow()? == "NAType";
            let msg = if null {
                format!("column {column:?}, row {row}: the id is null")
            } else {
                format!(
                    "column {column:?}, row {row}: an id must be a str or an int, got {} ({})",
                    obj.get_type().name()?,
                    obj.repr()?
                )
            };
            return Err(to_py(py, Error::InvalidInput(msg)));
        }
        offsets.push(bytes.len() as i64);
        Ok(())
    };
    if let Ok(list) = ids.cast::<PyList>() {
        for (row, obj) in list.iter().enumerate() {
            push(row, &obj)?;
        }
    } else {
        for (row, obj) in ids.try_iter()?.enumerate() {
            push(row, &obj?)?;
        }
    }
    Ok((bytes.into_pyarray(py), offsets.into_pyarray(py)))
}

/// Encode one side from rows, the row index (zero-padded, so that byte order is
/// row order) as the query id.  `kind="run"`: each row is a ranked list of ids
/// or a mapping id -> score.  `kind="qrels"`: each row is a list whose items
/// are ids (a group of one, label 1) or lists of ids (a group, label 1), or a
/// mapping id -> label (each id its own group).  Qrels are always grouped; with
/// groups of one that is ordinary qrels.  `None` is an empty row.
#[pyfunction]
pub(super) fn encode_rows<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    kind: &str,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let n = num_rows(rows, "the rows")?;
    let width = n.saturating_sub(1).to_string().len();
    let mut b = Builder::new(kind, false);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    let mut count = 0usize;
    for (r, row) in rows.try_iter()?.enumerate() {
        let row = row?;
        count += 1;
        let q = b.query(format!("{r:0width$}").as_bytes()).map_err(err)?;
        let doc_of = |obj: &Bound<'py, PyAny>, buf: &mut String| -> PyResult<Vec<u8>> {
            let d = id_bytes(obj, buf, "a document id")
                .map_err(|e| bad(format!("row {r}: {}", e.value(py))))?;
            if d.is_empty() {
                return Err(bad(format!("row {r}: an empty document id")));
            }
            Ok(d.to_vec())
        };
        if let Ok(d) = row.cast::<PyDict>() {
            for (g, (k, v)) in d.iter().enumerate() {
                let doc = doc_of(&k, &mut dbuf)?;
                let value: f64 = if v.is_instance_of::<PyString>() {
                    None
                } else {
                    v.extract().ok()
                }
                .ok_or_else(|| {
                    bad(format!(
                        "row {r}, document {:?}: the value must be a number, got {}",
                        String::from_utf8_lossy(&doc),
                        v.repr().map(|x| x.to_string()).unwrap_or_default()
                    ))
                })?;
                match kind {
                    Kind::Run => b.row(q, &doc, value),
                    Kind::Qrels => b.grouped_row(q, &doc, value, g as u32),
                }
                .map_err(err)?;
            }
            continue;
        }
        let Some(items) = row_items(&row, r, "a row")? else {
            continue;
        };
        let len = items.len();
        for (g, item) in items.iter().enumerate() {
            if kind == Kind::Run || is_id(item) {
                let doc = doc_of(item, &mut dbuf)?;
                match kind {
                    Kind::Run => b.row(q, &doc, (len - g) as f64),
                    Kind::Qrels => b.grouped_row(q, &doc, 1.0, g as u32),
                }
                .map_err(err)?;
                continue;
            }
            let members = row_items(item, r, "a group")?.unwrap_or_default();
            if members.is_empty() {
                return Err(bad(format!("row {r}: group {g} is empty")));
            }
            for m in &members {
                let doc = doc_of(m, &mut dbuf)?;
                b.grouped_row(q, &doc, 1.0, g as u32).map_err(err)?;
            }
        }
    }
    if count != n {
        return Err(bad(format!("{n} rows announced, {count} iterated")));
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}
