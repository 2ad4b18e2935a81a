//! The per-sample scorer (`core::rows`): `ranklens.Scorer`'s fast path.  The
//! metric specs are parsed once, when the Python `Scorer` is built; a call
//! reads the retrieved list and the ground truth straight from the Python
//! objects, matches ids row by row (no vocabulary, no sorting of a side), and
//! returns the values.
//!
//! Why ids are matched as Python objects, while they are read: a row's ids are
//! only ever compared with the same row's ids, so no global vocabulary and no
//! UTF-8 copy is needed.  Each id is its `str` object and Python's hash of it
//! (cached in the object: a `str` hashes once in its life); two ids are the
//! same when they are the same object, or have equal hashes and compare equal
//! (`PyObject_RichCompareBool` on two exact `str`s runs no Python code).  An
//! `int` id is its decimal `str` (`1` and `"1"` are one id, as everywhere in
//! ranklens); a `str` subclass is read as a plain `str`.  The matching happens
//! in the one pass that reads the rows (under the GIL: comparing needs it),
//! which leaves per row only numbers: the labels of its groups, the group of
//! each ground-truth entry and, per rank, the entry retrieved there (for a
//! list of relevant ids, only the ranks of its hits).  The kernels then run
//! on those without the GIL, on a pool thread while the next rows are read
//! for a large batch (see below).
//! Ids are never encoded, so an id holding a lone surrogate is an id like any
//! other here (`evaluate`, which writes ids as UTF-8, rejects it).  The common
//! cell, a list of exact `str`s, is read without taking a reference to each id
//! (`Reader::borrowed_ids`, GIL builds only).
//!
//! Profile of `Scorer.batch` on `benches/bench_rag.py`'s 10,000 rows (six
//! metrics, ten retrieved and two relevant ids a row), one thread, 2026-11-25,
//! 2-core KVM guest under a load of 5-18 (other builds): reading ids as UTF-8
//! copies (bytes copied and hashed, then matched in parallel without the GIL)
//! was ~63% of the batch in `perf` samples (`push_id` 20%, `push_row` 11%, the
//! UTF-8 access and copies ~9%); the batch took 7.56 ms of CPU against the
//! naive loop's 34.5 ms (4.6x; quick build).  Matching the objects while
//! reading: 4.53 ms (7.5x); reading plain-`str` lists by borrowed pointer and
//! a probe without a result enum: 3.94 ms (8.8x); the retrieved list read
//! before the table is sized (no `len()` call): 3.32 ms.  The release build
//! (LTO, stable ABI): 3.5-3.7 ms, 9.2-9.6x.
//!
//! Why a small row (at most `SMALL_ROW` ids, ground truth and retrieved
//! together) is matched by scanning its keys, not through the table: with ~12
//! keys, no table is cleared and filled per row, and a 64-bit filter of the
//! keys' hashes (`Reader::seen`, six hash bits each) skips the scan for most
//! ids, which have no equal in the row: only an id whose bit is set is
//! compared with the keys before it (pointer, then hash, then text, as the
//! table's probe does).  A row above the threshold, or one whose retrieved
//! side is a dict or another sequence, goes through the table.  Callgrind,
//! `RowScorer::batch_with` inclusive, per row of the bench (quick build): the
//! table 4,450 instructions; scanning every key 4,490 (no fewer, but 3.40-3.45
//! ms of CPU against the table's 3.85-4.02 in alternating runs, load 3.5-4.5);
//! scanning behind the filter 3,980.  The release build (LTO, stable ABI),
//! alternating with the table's in one minute (CPU, one thread, best of 7,
//! four runs each, load 2.8-3.6): 2.96-3.11 ms (10.5-11.2x the naive loop)
//! against 3.50-3.54 ms (9.4-10.4x).  Not holding a reference to the ground
//! truth's ids when both cells are plain-`str` lists (see `borrowed_ids`):
//! 3,670 -> 3,590 instructions a row (callgrind, release build, where each
//! reference is a call into Python).
//!
//! The scoring of a list of relevant ids is fused (`core::rows::score_binary`,
//! see the note there): from the ranks of the hits, no label vectors, no
//! `PrefixBuf`.  A small row whose retrieved list is read by borrowed pointer
//! is matched without copying its kept ids into `keys` (`retrieved_read`),
//! and a plain-`str` list's keys are written in place, hashed by `str`'s own
//! `tp_hash` (Python 3.10+; `PyObject_Hash` where the slot cannot be read).
//! Per row, callgrind, `RowScorer::batch_with` inclusive over three batches
//! of the bench (LTO build with the wheel's features), 2026-11-25: commit
//! cbd9445 (kernels through `score_sample`) 3,554 instructions (`Reader::row`
//! 1,804, `score_row` 1,545 of which `PrefixBuf::build` 481); the fused
//! scoring 2,671 (`score_row` 657, `score_binary` 517); the keys written in
//! place, `tp_hash` and no score computed unless kept 2,497; `retrieved_read`
//! 2,289.  In CPU time (`bench_rag.py --timer cpu --threads 1`, best of 7,
//! the two LTO builds alternated, load 1.9-2.4): 2.02-2.20 ms a batch against
//! cbd9445's 2.79-3.00 (14.7-15.9x the naive loop against 10.9-11.6x).
//!
//! What was left in those 2,289 (then `Reader::row` 1,423, `score_row` 657,
//! the outer list walk ~55, the zeroed output ~28), and what was done with
//! it (`benches/bench_rag.py --rows 10000 --repeat 7`; callgrind per row,
//! `RowScorer::batch_with` inclusive over three batches with `threads=1`,
//! LTO builds; 2026-11-27, 2-core AMD EPYC KVM guest shared with two other
//! builds, load 3-5 throughout; base 3ef8cce, 2,272 instructions, CPU
//! 2.06-2.46 ms a batch, 14.0-16.5x):
//!
//! * A list of relevant ids is read as its hits (`RowSpan::binary`,
//!   `core::rows::score_hits`): the kept ranks of the ids found, no label,
//!   group or per-rank vector, no check in `score_row` that the row is
//!   binary.  With the outer lists walked by borrowed pointer (below):
//!   2,043 instructions a row.  The matcher is still the one of the dict
//!   and group paths (`push_kept` chooses where a kept id goes).
//! * The batch's outer lists are walked by borrowed pointer: a row is first
//!   read with `plain_only` (both cells exact lists of exact `str`s, no
//!   Python code run, nothing held); any other row takes a reference to its
//!   cells before the general path reads it (which may run Python code),
//!   and the lists' lengths are read again after it.
//! * The native batch is metric-major (`metrics x rows`): `Scorer.batch`
//!   takes each metric's row (contiguous, no copy) where it took
//!   `values[:, j].copy()` of a rows x metrics array, six strided copies,
//!   0.13 ms of the batch (measured alone, 10,000 x 6); `score_frame` hands
//!   the transpose to pandas, whose block layout it is (no copy either).
//!   CPU (`--timer cpu --threads 1`), one array per metric at 41b6c7f
//!   against the base, alternated, load 3.1-3.3: 1.80-2.05 ms against
//!   2.23-2.28.
//! * The row after the one being matched is read ahead (`Ahead`): its cells
//!   and their items fetched, each id's object prefetched (its header and
//!   its cached hash), and the cells of the row after that prefetched; the
//!   matching of row r then finds row r+1's ids in cache.  More
//!   instructions (2,343 a row: the item calls move, the loops do not), less
//!   time: CPU 1.72-1.76 ms against 41b6c7f's 2.01-2.10 (alternated, load
//!   4.5-4.7).  Callgrind's cache model with a 2 MB last level had put ~10
//!   of the ~16 misses of a row on the ids' `str` objects (in `unicode_hash`)
//!   and ~2 on the cells' item arrays.  Sound because a row read with
//!   `plain_only` runs no Python code: after a row read by the general path,
//!   and at each call of `Source::read` (the GIL is released between a
//!   pipeline's chunks), nothing read ahead is used.
//! * A small binary row's retrieved ids are matched in one loop
//!   (`binary_read`) behind two filters, the ground truth's and the ids
//!   retrieved before: 2,261 instructions a row.
//!
//! At 666a435 (alternated with the base, four runs each, load 2.1-2.8): CPU,
//! one thread, 1.69-1.77 ms a batch, 19.0-19.5x the naive loop (base
//! 2.14-2.27 ms, 14.5-15.5x); wall with the default threads (the other core
//! mostly busy with another build): 1.59-1.81 ms, 18.3-20.8x (base
//! 2.23-2.38 ms, 14.4-14.8x).  2,257 instructions a row.  Where they go:
//! reading ~1,600 (`borrowed_ids` ~380 and its ~24 calls into Python,
//! `PyList_GetItem` ~140 and `unicode_hash` ~135 a row, both calls under the
//! stable ABI; `Ahead` ~320; the row's matching ~580), scoring ~610
//! (`score_hits` ~430, ~50 a metric; `score_row` ~70; the value writes
//! ~110).
//!
//! Why a large batch is pipelined (`RowScorer::pipelined`): reading needs
//! the GIL and is ~70% of a batch; the scoring needs only numbers.  This
//! thread reads chunks of `CHUNK_ROWS` rows while one pool thread scores the
//! chunk before, in buffers that go back and forth; each chunk writes its
//! own slices of the output, so when this thread needs a buffer and the pool
//! thread has not taken the waiting chunk (a busy machine), this thread
//! scores it itself, and when the pool thread holds the only other buffer, a
//! new one is made (no wait on a preempted pool thread but the last chunk's).
//! The calling thread's own CPU time in a pipelined 10,000-row batch (what
//! the wall time comes to when the pool thread has a core of its own):
//! 1.36-1.40 ms against 1.76-1.78 serial (`time.thread_time`, chunks of
//! 1,024, load 3-5); 2,048-row chunks gave 1.34, 512 1.38-1.43, 256 1.47.
//! On this machine, with the other core busy, the wall time stayed at the
//! serial time (10,000 rows: 1.72-1.78 ms against 1.76-1.78) and batches of
//! 1,000-6,000 rows took 5-20% longer pipelined (waking the pool thread and
//! waiting for its job to end): hence `PIPELINE_ROWS`, 4,096.  Only lists
//! and object arrays are pipelined (an iterator may yield more rows than announced), never
//! with an automatic `gmax` (the specs need every row's labels), never with
//! `threads=1` or a default pool of one thread.  The same values and errors
//! as the serial batch: a reading error first, then the count, the warning,
//! then the first row's scoring error (`_batch(chunk_rows=)` tests any chunk
//! size against `threads=1`).
//!
//! Fewer calls into Python per id: under the stable ABI an item of a list
//! is a `PyList_GetItem` call and a `str`'s cached hash a `tp_hash` call.
//! Where `bindings::layout` knows the running CPython's object layout
//! (3.9-3.14, checked at import against the C-API's own answers), a plain
//! `str` list's items are read from `ob_item` and each id's hash from its
//! `hash` field (`tp_hash` while it is -1, not computed yet);
//! `RANKLENS_LAYOUT=api` keeps the calls, and `tests/test_layout.py` holds
//! both ways to the same bits.  bench_rag, CPU, one thread, best of 7, the
//! LTO wheel alternated with the one before (2026-11-27, load 1.2): 1.69-1.73
//! -> 1.56-1.61 ms, 19.3x -> 21.5-21.8x the naive loop: the 20x of issue #14
//! is met in CPU time on one thread.  `score_hits` still spends ~50
//! instructions a metric in its per-metric dispatch (a plan compiled once
//! per `Fused`, not per row, is what could cut it).
//!
//! `score_frame` on pandas: the two columns' `df[col].tolist()` and the
//! result frame cost ~1.2 ms together when the naive loop had just run
//! (0.3 ms warm): pandas' Python code is slow when cold (`df[col]` ~0.15-0.26
//! ms, `tolist()` ~0.2, a frame whose column index is inferred from a list
//! ~0.45).  The Scorer now reads a pandas object column's own 1-D array in
//! place (`Outer::Objects`: the same borrowed walk as a list, the data
//! pointer and stride read at each item, so a resize while Python code runs
//! is seen), and the frame gets a cached column index: bench_rag, CPU, one
//! thread, best of 9, 2026-11-27, load 5-6: `score_frame` 1.67 ms against
//! `Scorer.batch`'s 1.57 (2.55 against 1.61 before), 20.0x the naive loop.
//! Handing the columns' arrays to the iterator path instead had been no
//! faster than `tolist()` (2.11 against 2.02 ms).
//!
//! Negative results (measured, not kept): prefetching the next row's ids
//! with calls of their own (a second `PyList_GetItem` per id) gave ~5%, not
//! the read-ahead's ~15%; in `score_binary`, collecting the hits through
//! `extend` over a `filter_map` (+19 instructions a row) and the cutoff as a
//! `usize` with a sentinel instead of an `Option` (-3) did not pay; building
//! `PrefixBuf`'s running sums in one pass per sum (mapped slices, one
//! allocation check each) took more instructions than the single loop, not
//! fewer; values written in place into a zeroed array cost ~12 instructions
//! a row more than pushed into per-metric vectors (the zeroing), kept for
//! the one metric-major array of every path.  The pool
//! (rayon) for the scoring alone did not pay on this loaded machine (best
//! of 9, wall: 10,000 rows 4.15 ms serial against 5.97 ms pooled; 3,000 rows
//! 1.01 against 0.92; 1,000 rows 0.31 against 0.33): it is kept for batches
//! that are not pipelined (iterators, an automatic `gmax`) from
//! `PARALLEL_ROWS` rows.  CPU time counts every thread: the pool and the
//! pipeline can only show in wall time.

use super::{is_id, num_rows, row_items, to_py};
use crate::core::error::Error;
use crate::core::eval;
use crate::core::metrics::{self, err, Family, MetricSpec};
use crate::core::pool;
use crate::core::rows::{self, score_sample, Sample, Scratch, NO_GROUP};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyIterator, PyList, PyString};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::CString;
use std::sync::{mpsc, Condvar, Mutex};

use super::evaluate::MetricArg;

/// Rows from which a batch's scoring runs on the pool (see the module note:
/// below, a batch is over in about a millisecond), when it is not pipelined.
const PARALLEL_ROWS: usize = 4096;

/// Rows from which a batch of lists is pipelined, and the rows of a chunk
/// (see the module note).
const PIPELINE_ROWS: usize = 4096;
const CHUNK_ROWS: usize = 1024;

/// Rows of at most this many ids (ground truth and retrieved) are matched by
/// scanning the row's keys, not through a hash table (see the module note).
const SMALL_ROW: usize = 16;

/// No ground-truth entry (a retrieved id that is not in the ground truth).
const NONE: u32 = u32::MAX;
// `score_row` hands `Matched::ranked` of a binary row to `core::rows` as is.
const _: () = assert!(NONE == NO_GROUP);

/// An id: its `str` object (kept alive by `Reader::hold`) and Python's hash.
#[derive(Clone, Copy)]
struct Key {
    obj: *mut ffi::PyObject,
    hash: ffi::Py_hash_t,
}

/// Rows read and matched: only numbers, no Python object.
#[derive(Default)]
struct Matched {
    /// The label of each group, all rows.
    labels: Vec<f64>,
    /// The group (within its row) of each ground-truth entry, all rows.
    groups: Vec<u32>,
    /// Per kept retrieved id, in rank order: its ground-truth entry (within
    /// its row) or `NONE`.
    ranked: Vec<u32>,
    /// With `Setup::general` only, per kept retrieved id: its score (a list
    /// is ranked as given: strictly decreasing scores) and input position.
    scores: Vec<f64>,
    pos: Vec<u32>,
    /// Per binary row (`RowSpan::binary`), the kept ranks (0-based) of its
    /// hits, increasing.
    hits: Vec<u32>,
    /// Some binary row has a relevant id (a label of 1 not in `labels`).
    ones: bool,
    rows: Vec<RowSpan>,
}

#[derive(Clone, Copy, Default)]
struct RowSpan {
    labels: (usize, usize),
    groups: (usize, usize),
    ranked: (usize, usize),
    /// No ground truth or nothing retrieved.
    empty: bool,
    /// A list of relevant ids read for `rows::score_hits` (`Reader::hits`):
    /// no labels or groups, `ranked` spans `Matched::hits`.
    binary: bool,
    /// A binary row: its relevant ids and its kept retrieved ids.
    relevant: u32,
    len: u32,
}

impl Matched {
    fn clear(&mut self) {
        self.labels.clear();
        self.groups.clear();
        self.ranked.clear();
        self.scores.clear();
        self.pos.clear();
        self.hits.clear();
        self.ones = false;
        self.rows.clear();
    }

    /// The largest label read (-inf for none).
    fn largest(&self) -> f64 {
        let largest = largest_label(&self.labels);
        if self.ones {
            largest.max(1.0)
        } else {
            largest
        }
    }
}

/// A key's bit in `Reader::seen`: six bits of its hash.
#[inline]
fn bit(key: Key) -> u64 {
    1 << (key.hash as u64 & 63)
}

/// Where a message points: nothing for a single sample, the row in a batch.
fn at(row: Option<usize>) -> String {
    row.map_or(String::new(), |r| format!("row {r}: "))
}

/// `None`, a float NaN or pandas' `NA`: a missing cell.
fn is_missing(obj: &Bound<'_, PyAny>) -> bool {
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

fn bad(py: Python<'_>, msg: String) -> PyErr {
    to_py(py, Error::InvalidInput(msg))
}

/// An id as a message shows it: `"d1"`.
fn shown(obj: *mut ffi::PyObject, py: Python<'_>) -> String {
    // SAFETY: `obj` is a live `str` held by the reader.
    let s = unsafe { Bound::from_borrowed_ptr(py, obj) };
    let text = s.str().map(|t| t.to_string_lossy().into_owned());
    format!("{:?}", text.unwrap_or_default())
}

fn number(obj: &Bound<'_, PyAny>) -> Option<f64> {
    if obj.is_instance_of::<PyString>() {
        return None;
    }
    obj.extract::<f64>().ok()
}

/// A label or score: a finite number (a message naming the document if not).
fn value(v: &Bound<'_, PyAny>, id: Key, row: Option<usize>, what: &str) -> PyResult<f64> {
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
fn each_item<'py>(
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
fn ground_items<'py>(
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

/// `str`'s `tp_hash` (see `Reader::str_hash`).
fn str_hash() -> Option<ffi::hashfunc> {
    // SAFETY: the GIL is held (a `Reader` is built with a `Python` token);
    // `PyType_GetSlot` returns the slot or NULL with an error set (static
    // types before Python 3.10), which is cleared.
    unsafe {
        let slot =
            ffi::PyType_GetSlot(std::ptr::addr_of_mut!(ffi::PyUnicode_Type), ffi::Py_tp_hash);
        if slot.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        Some(std::mem::transmute::<*mut std::ffi::c_void, ffi::hashfunc>(
            slot,
        ))
    }
}

/// Reads rows into a [`Matched`], matching each retrieved id against its
/// row's ground truth as it goes (see the module note).
struct Reader<'py> {
    py: Python<'py>,
    /// The row's id objects, kept alive while their keys are in use.
    hold: Vec<Bound<'py, PyAny>>,
    /// The row's ground-truth entries, then its kept retrieved ids.
    keys: Vec<Key>,
    /// Open addressing over `keys` by hash: index + 1, 0 for empty.
    table: Vec<u32>,
    /// A scored row's retrieved ids before ranking: key, score, position.
    scored: Vec<(Key, f64, u32)>,
    /// The keys read by `borrowed_ids`.
    read: Vec<Key>,
    /// The items of the row's cells (ground truth, retrieved) as read ahead
    /// by `Source::read`, for `borrowed_ids`: used only when `pre_ok` (the
    /// cell is an exact list and no Python code ran since they were read).
    pre: [Vec<*mut ffi::PyObject>; 2],
    pre_ok: [bool; 2],
    /// A small row: one bit (`bit`) per hash of its keys so far.  An id
    /// whose bit is clear has no equal among them (equal ids have equal
    /// hashes), and is not compared with any.
    seen: u64,
    /// Keep the scores and positions of kept ids (`Setup::general`).
    general: bool,
    /// `duplicates="first"`.
    first: bool,
    /// A list of relevant ids is read as its hits (`RowSpan::binary`): the
    /// metrics are fused and the options the defaults.
    hits: bool,
    /// The row being read is binary: its kept retrieved ids so far.
    binary: bool,
    kept: u32,
    /// `str`'s hash function (`tp_hash`), called on an exact `str` without
    /// `PyObject_Hash`'s dispatch; `None` where the slot of a static type
    /// cannot be read (Python 3.9).  Read by `borrowed_ids` (GIL builds).
    #[cfg_attr(Py_GIL_DISABLED, allow(dead_code))]
    str_hash: Option<ffi::hashfunc>,
}

impl<'py> Reader<'py> {
    fn new(py: Python<'py>, general: bool, first: bool, hits: bool) -> Self {
        Reader {
            py,
            hold: Vec::new(),
            keys: Vec::new(),
            table: Vec::new(),
            scored: Vec::new(),
            read: Vec::new(),
            pre: Default::default(),
            pre_ok: [false; 2],
            seen: 0,
            general,
            first,
            hits,
            binary: false,
            kept: 0,
            str_hash: str_hash(),
        }
    }

    /// The key of an id: a `str` (an exact `str` as is, a subclass as its
    /// plain `str`), or an `int` as its decimal `str`; anything else is an
    /// error.
    fn key(&mut self, obj: Bound<'py, PyAny>, row: Option<usize>, what: &str) -> PyResult<Key> {
        let obj = if obj.is_exact_instance_of::<PyString>() {
            obj
        } else if obj.is_instance_of::<PyString>() {
            // SAFETY: a `str` subclass instance; returns a new reference.
            unsafe {
                Bound::from_owned_ptr_or_err(self.py, ffi::PyUnicode_FromObject(obj.as_ptr()))?
            }
        } else if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
            obj.str()?.into_any()
        } else {
            return Err(bad(
                self.py,
                format!(
                    "{}{what} must be a str or an int, got {} ({})",
                    at(row),
                    obj.get_type().name()?,
                    obj.repr()?
                ),
            ));
        };
        // SAFETY: `obj` is a live exact `str`; its hash never fails.
        let hash = unsafe { ffi::PyObject_Hash(obj.as_ptr()) };
        if hash == -1 {
            return Err(PyErr::fetch(self.py));
        }
        // "" is the one `str` whose hash is 0 for sure; others may share it.
        if hash == 0 && obj.len()? == 0 {
            return Err(bad(self.py, format!("{}an empty document id", at(row))));
        }
        let key = Key {
            obj: obj.as_ptr(),
            hash,
        };
        self.hold.push(obj);
        Ok(key)
    }

    /// The common cell, a list of plain `str` ids, read without taking a
    /// reference to each id: their keys into `read`, and `true`.  `false`
    /// (nothing read) for any other cell, which the general path reads.
    ///
    /// Why this is sound: the ids stay alive as long as the list holds them,
    /// and the list cannot change while the GIL is held and no Python code
    /// runs (hashing and comparing exact `str`s runs none).  The ground
    /// truth's ids are held when the retrieved side is another cell (reading
    /// it may run Python code); when it is a plain-`str` list too, it is read
    /// right after the ground truth and its ids are matched right after it,
    /// and none of that runs Python code, so nothing is held (under the
    /// stable ABI, taking and dropping a reference are two calls into Python
    /// per id).  Not on free-threaded Python, where another thread
    /// could change a list at any time.
    ///
    /// `side`: 0 for the ground truth, 1 for the retrieved list: the items
    /// read ahead for it (`pre`), if any, are the list's.
    fn borrowed_ids(
        &mut self,
        cell: &Bound<'py, PyAny>,
        row: Option<usize>,
        side: usize,
    ) -> PyResult<bool> {
        #[cfg(not(Py_GIL_DISABLED))]
        {
            if !cell.is_exact_instance_of::<PyList>() {
                return Ok(false);
            }
            self.read.clear();
            let list = cell.as_ptr();
            let pre = match (self.pre_ok.get(side), self.pre.get(side)) {
                (Some(true), Some(items)) => Some(&items[..]),
                _ => None,
            };
            // SAFETY: an exact list, whose items are read below with no
            // Python code run in between.
            let direct = match pre {
                Some(_) => None,
                None => unsafe { super::layout::list_items(list) },
            };
            let n = match (pre, direct) {
                (Some(items), _) | (None, Some(items)) => items.len(),
                // SAFETY: an exact list.
                (None, None) => unsafe { ffi::PyList_Size(list) }.max(0) as usize,
            };
            self.read.reserve(n);
            let (py, hash_of) = (self.py, self.str_hash);
            // The keys are written in place and counted once at the end (a
            // push per id reloads the vector around each call into Python).
            let slots = &mut self.read.spare_capacity_mut()[..n];
            // SAFETY: `list` is an exact list; indices are in range; the items
            // (its own, or read ahead from it with no Python code run since)
            // are borrowed (see above) and only exact `str`s are used.
            unsafe {
                let str_type = std::ptr::addr_of_mut!(ffi::PyUnicode_Type);
                for (i, slot) in slots.iter_mut().enumerate() {
                    let item = match pre.or(direct) {
                        Some(items) => items.get(i).copied().unwrap_or(std::ptr::null_mut()),
                        None => ffi::PyList_GetItem(list, i as ffi::Py_ssize_t),
                    };
                    if item.is_null() || ffi::Py_TYPE(item) != str_type {
                        return Ok(false);
                    }
                    let hash = match (super::layout::cached_hash(item), hash_of) {
                        (Some(h), _) => h,
                        (None, Some(f)) => f(item),
                        (None, None) => ffi::PyObject_Hash(item),
                    };
                    if hash == -1 {
                        return Err(PyErr::fetch(py));
                    }
                    if hash == 0 && ffi::PyUnicode_GetLength(item) == 0 {
                        return Err(bad(py, format!("{}an empty document id", at(row))));
                    }
                    slot.write(Key { obj: item, hash });
                }
                // SAFETY: the first `n` slots were written just above.
                self.read.set_len(n);
            }
            Ok(true)
        }
        #[cfg(Py_GIL_DISABLED)]
        {
            let _ = (cell, row, side);
            Ok(false)
        }
    }

    #[inline]
    fn same(&self, a: Key, b: Key) -> PyResult<bool> {
        if a.obj == b.obj {
            return Ok(true);
        }
        if a.hash != b.hash {
            return Ok(false);
        }
        self.equal(a, b)
    }

    /// Two distinct `str` objects of one hash: their texts compared.
    #[cold]
    fn equal(&self, a: Key, b: Key) -> PyResult<bool> {
        // SAFETY: both are live exact `str`s held by the reader.
        match unsafe { ffi::PyObject_RichCompareBool(a.obj, b.obj, ffi::Py_EQ) } {
            -1 => Err(PyErr::fetch(self.py)),
            r => Ok(r == 1),
        }
    }

    fn reset_table(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(8);
        self.table.clear();
        self.table.resize(size, 0);
    }

    /// Insert ground-truth entry `keys[i]`; `Some(j)`: the same id is entry `j`.
    fn insert_truth(&mut self, i: usize) -> PyResult<Option<usize>> {
        let key = self.keys[i];
        let mask = self.table.len() - 1;
        let mut slot = (key.hash as usize) & mask;
        loop {
            match self.table[slot] {
                0 => {
                    self.table[slot] = i as u32 + 1;
                    return Ok(None);
                }
                p => {
                    let p = p as usize - 1;
                    if self.same(self.keys[p], key)? {
                        return Ok(Some(p));
                    }
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Read and match one sample into `m`, `true`.  With `plain_only`, a
    /// row whose cells are not both lists of plain `str`s is left to a call
    /// without it: `false`, with nothing pushed into `m` and no Python code
    /// run (see `batch_with`; an error found before that is raised as the
    /// call without `plain_only` would raise it).
    fn row(
        &mut self,
        m: &mut Matched,
        relevant: &Bound<'py, PyAny>,
        retrieved: &Bound<'py, PyAny>,
        row: Option<usize>,
        plain_only: bool,
    ) -> PyResult<bool> {
        let py = self.py;
        self.hold.clear();
        self.keys.clear();
        let mut span = RowSpan {
            labels: (m.labels.len(), 0),
            groups: (m.groups.len(), 0),
            ranked: (m.ranked.len(), 0),
            ..RowSpan::default()
        };
        let mut empty = false;
        let first_label = m.labels.len();
        let truth_borrowed = self.borrowed_ids(relevant, row, 0)?;
        if truth_borrowed {
            // Plain ids: one group each (held below unless the retrieved
            // side is read by borrowed pointer too).
            self.keys.extend_from_slice(&self.read);
        } else if plain_only {
            return Ok(false);
        } else if is_missing(relevant) {
            empty = true;
        } else if let Ok(d) = relevant.cast::<PyDict>() {
            for (k, v) in d.iter() {
                let key = self.key(k, row, "a document id")?;
                let label = value(&v, key, row, "label")?;
                m.groups.push((m.labels.len() - first_label) as u32);
                m.labels.push(label);
                self.keys.push(key);
            }
        } else {
            let what = "the ground truth (a list of ids or groups, a dict id -> label, or None)";
            each_item(relevant, row, what, |item| {
                let g = (m.labels.len() - first_label) as u32;
                if is_id(&item) {
                    let key = self.key(item, row, "a document id")?;
                    self.keys.push(key);
                    m.groups.push(g);
                } else {
                    let before = self.keys.len();
                    each_item(&item, row, "a group (a list of ids)", |member| {
                        let key = self.key(member, row, "a document id")?;
                        self.keys.push(key);
                        m.groups.push(g);
                        Ok(())
                    })?;
                    if self.keys.len() == before {
                        return Err(bad(py, format!("{}group {g} is empty", at(row))));
                    }
                }
                m.labels.push(1.0);
                Ok(())
            })?;
        }
        let ngt = self.keys.len();

        // The common retrieved cell is read here, before the table is sized;
        // from here to its matching, no Python code runs.
        let borrowed = self.borrowed_ids(retrieved, row, 1)?;
        if plain_only && !borrowed {
            return Ok(false);
        }
        // A list of relevant ids: read as its hits, or as groups of one of
        // label 1.
        self.binary = truth_borrowed && self.hits;
        self.kept = 0;
        if self.binary {
            span.binary = true;
            span.relevant = ngt as u32;
            span.ranked.0 = m.hits.len();
            m.ones |= ngt > 0;
            empty |= ngt == 0;
        } else {
            if truth_borrowed {
                m.groups.extend(0..ngt as u32);
                m.labels.resize(first_label + ngt, 1.0);
            }
            empty |= first_label == m.labels.len();
        }
        span.labels.1 = m.labels.len();
        span.groups.1 = m.groups.len();
        if truth_borrowed && !borrowed {
            // Reading the retrieved side may run Python code (a score's
            // `__float__`, an id's `__str__`): hold the ground truth's ids.
            for key in &self.keys[..ngt] {
                // SAFETY: `key.obj` is alive (its list holds it, and no
                // Python code ran since it was read).
                self.hold
                    .push(unsafe { Bound::from_borrowed_ptr(self.py, key.obj) });
            }
        }
        let hint = if borrowed {
            self.read.len()
        } else if is_missing(retrieved) {
            0
        } else {
            retrieved.len().unwrap_or(0)
        };
        if ngt + hint >= u32::MAX as usize {
            return Err(bad(
                py,
                format!("{}more than 4,294,967,294 ids in one row", at(row)),
            ));
        }
        // A small row (the common RAG row) is matched by scanning its few
        // keys, with no table to clear and fill (see the module note).
        let small = ngt + hint <= SMALL_ROW;
        self.seen = 0;
        if !small {
            self.reset_table(ngt + hint);
        }
        // Ground truth: an id in two groups (or twice in one) is an error.
        let groups = &m.groups[span.groups.0..];
        for i in 0..ngt {
            let dup = if small {
                self.scan_truth(i)?
            } else {
                self.insert_truth(i)?
            };
            if let Some(j) = dup {
                let d = shown(self.keys[i].obj, py);
                // A binary row's entry i is group i.
                let group = |i: usize| groups.get(i).copied().unwrap_or(i as u32);
                let (ga, gb) = (group(j), group(i));
                return Err(bad(
                    py,
                    if ga == gb {
                        format!("{}document {d} is listed twice in group {ga}", at(row))
                    } else {
                        format!(
                            "{}document {d} is in groups {ga} and {gb}: a document belongs to \
                             at most one group (a group is one unit of needed information)",
                            at(row)
                        )
                    },
                ));
            }
        }

        if borrowed && small && self.binary {
            self.binary_read(m, ngt, row)?;
        } else if borrowed && small {
            for rank in 0..self.read.len() {
                self.retrieved_read(m, rank, hint, ngt, row)?;
            }
        } else if borrowed {
            for rank in 0..self.read.len() {
                let key = self.read[rank];
                let score = if self.general {
                    (hint - rank) as f64
                } else {
                    0.0
                };
                self.retrieved(m, key, score, rank as u32, rank, ngt, row)?;
            }
        } else if is_missing(retrieved) {
            empty = true;
        } else if let Ok(d) = retrieved.cast::<PyDict>() {
            self.ensure_table(ngt + d.len(), small)?;
            // Ranked by score descending, ties by id descending (code point
            // order, which is UTF-8 byte order: trec_eval's).
            self.scored.clear();
            for (pos, (k, v)) in d.iter().enumerate() {
                let key = self.key(k, row, "a document id")?;
                let score = value(&v, key, row, "score")?;
                self.scored.push((key, score, pos as u32));
            }
            let mut scored = std::mem::take(&mut self.scored);
            scored.sort_by(|a, b| {
                b.1.total_cmp(&a.1).then_with(|| {
                    // SAFETY: live exact `str`s; comparing two never fails.
                    let c = unsafe { ffi::PyUnicode_Compare(b.0.obj, a.0.obj) };
                    c.cmp(&0)
                })
            });
            let out = scored
                .iter()
                .enumerate()
                .try_for_each(|(rank, &(key, score, pos))| {
                    self.retrieved(m, key, score, pos, rank, ngt, row)
                });
            self.scored = scored;
            out?;
        } else {
            let what = "the retrieved list (a list of ids, a dict id -> score, or None)";
            self.ensure_table(ngt + hint, small)?;
            let mut rank = 0usize;
            each_item(retrieved, row, what, |item| {
                let key = self.key(item, row, "a retrieved id")?;
                let score = (hint.max(rank + 1) - rank) as f64;
                self.retrieved(m, key, score, rank as u32, rank, ngt, row)?;
                rank += 1;
                Ok(())
            })?;
        }
        if self.binary {
            span.ranked.1 = m.hits.len();
            span.len = self.kept;
            empty |= self.kept == 0;
        } else {
            span.ranked.1 = m.ranked.len();
            empty |= span.ranked.0 == span.ranked.1;
        }
        span.empty = empty;
        m.rows.push(span);
        Ok(true)
    }

    /// A kept retrieved id, at the next kept rank: `truth` its ground-truth
    /// entry or `NONE`.  A binary row keeps only the ranks of its hits
    /// (each entry is found at most once: the kept ids are distinct).
    #[inline]
    fn push_kept(&mut self, m: &mut Matched, truth: u32) {
        if self.binary {
            if truth != NONE {
                m.hits.push(self.kept);
            }
            self.kept += 1;
        } else {
            m.ranked.push(truth);
        }
    }

    /// The retrieved id at input rank `rank` (0-based, repeats included):
    /// probed among the row's ground truth (entries `< ngt`) and the ids
    /// retrieved before it (entries `>= ngt`, by kept rank); a new id is
    /// appended to `keys` and `m.ranked`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn retrieved(
        &mut self,
        m: &mut Matched,
        key: Key,
        score: f64,
        pos: u32,
        rank: usize,
        ngt: usize,
        row: Option<usize>,
    ) -> PyResult<()> {
        let mask = self.table.len() - 1;
        let mut slot = (key.hash as usize) & mask;
        let mut truth = NONE;
        loop {
            let p = self.table[slot];
            if p == 0 {
                break;
            }
            let p = p as usize - 1;
            if self.same(self.keys[p], key)? {
                match self.matched(p, ngt, key, rank, row)? {
                    Some(t) => truth = t,
                    None => return Ok(()),
                }
            }
            slot = (slot + 1) & mask;
        }
        self.table[slot] = self.keys.len() as u32 + 1;
        self.append(m, key, truth, score, pos);
        Ok(())
    }

    /// A retrieved id equal to entry `p` of the row: `Some(p)` when that is a
    /// ground-truth entry; for an id retrieved before, `None` (drop it:
    /// `duplicates="first"`) or the error.
    #[inline]
    fn matched(
        &self,
        p: usize,
        ngt: usize,
        key: Key,
        rank: usize,
        row: Option<usize>,
    ) -> PyResult<Option<u32>> {
        if p < ngt {
            return Ok(Some(p as u32));
        }
        if self.first {
            return Ok(None);
        }
        Err(self.repeated(key, p - ngt, rank, row))
    }

    /// A new retrieved id at the next kept rank, `truth` its ground-truth entry.
    #[inline]
    fn append(&mut self, m: &mut Matched, key: Key, truth: u32, score: f64, pos: u32) {
        self.keys.push(key);
        self.push_kept(m, truth);
        if self.general {
            m.scores.push(score);
            m.pos.push(pos);
        }
    }

    /// Before matching through the table on a row whose ground truth was
    /// checked by scanning: size the table and insert the ground truth
    /// (known distinct).  Nothing for a row matched through the table.
    fn ensure_table(&mut self, n: usize, small: bool) -> PyResult<()> {
        if small {
            self.reset_table(n);
            for i in 0..self.keys.len() {
                self.insert_truth(i)?;
            }
        }
        Ok(())
    }

    /// Ground-truth entry `keys[i]` against the entries before it (a small
    /// row): `Some(j)`: the same id is entry `j`.
    #[inline]
    fn scan_truth(&mut self, i: usize) -> PyResult<Option<usize>> {
        let key = self.keys[i];
        let bit = bit(key);
        if self.seen & bit == 0 {
            self.seen |= bit;
            return Ok(None);
        }
        for (j, &other) in self.keys[..i].iter().enumerate() {
            if self.same(other, key)? {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// `retrieved` for a small row whose retrieved list `borrowed_ids` read
    /// (all of it in `read`), with no table: the id at input rank `rank` is
    /// compared with the ground truth (`keys[..ngt]`), then with the ids
    /// before it in `read` (a dropped repeat there equals a kept id before
    /// it, and with "raise" nothing was dropped: the input rank is the kept
    /// rank), so no kept id is copied into `keys`.  Only an id whose hash bit
    /// is set in `seen` is compared at all.
    #[inline]
    fn retrieved_read(
        &mut self,
        m: &mut Matched,
        rank: usize,
        hint: usize,
        ngt: usize,
        row: Option<usize>,
    ) -> PyResult<()> {
        let key = self.read[rank];
        let bit = bit(key);
        let mut truth = NONE;
        if self.seen & bit == 0 {
            self.seen |= bit;
        } else {
            match self.probe_read(key, rank, ngt, true, true, row)? {
                Some(t) => truth = t,
                None => return Ok(()),
            }
        }
        self.push_kept(m, truth);
        if self.general {
            m.scores.push((hint - rank) as f64);
            m.pos.push(rank as u32);
        }
        Ok(())
    }

    /// `retrieved_read` of a whole binary row: the kept ranks of its hits
    /// into `m.hits`, its kept ids counted in `kept` (one loop, no per-id
    /// dispatch on the kind of row).  Two hash filters, one of the ground
    /// truth (`seen`, from `scan_truth`) and one of the ids retrieved before:
    /// an id is compared only with the side whose filter has its bit (a hit
    /// is compared with the ground truth alone, most ids with nothing).
    fn binary_read(&mut self, m: &mut Matched, ngt: usize, row: Option<usize>) -> PyResult<()> {
        let (truth_bits, mut before, mut kept) = (self.seen, 0u64, 0u32);
        for rank in 0..self.read.len() {
            let key = self.read[rank];
            let bit = bit(key);
            let (in_truth, repeat) = (truth_bits & bit != 0, before & bit != 0);
            before |= bit;
            if !in_truth && !repeat {
                kept += 1;
                continue;
            }
            if let Some(truth) = self.probe_read(key, rank, ngt, in_truth, repeat, row)? {
                if truth != NONE {
                    m.hits.push(kept);
                }
                kept += 1;
            }
        }
        self.kept = kept;
        Ok(())
    }

    /// The retrieved id `key` at input rank `rank` of `read`, compared with
    /// the ground truth (`in_truth`) and the ids before it (`repeat`): `Some`
    /// of its ground-truth entry (or `NONE`), `None` for a repeat dropped
    /// (`duplicates="first"`), or the repeat's error.
    #[inline(always)]
    fn probe_read(
        &self,
        key: Key,
        rank: usize,
        ngt: usize,
        in_truth: bool,
        repeat: bool,
        row: Option<usize>,
    ) -> PyResult<Option<u32>> {
        let mut truth = NONE;
        if in_truth {
            for (p, &other) in self.keys[..ngt].iter().enumerate() {
                if self.same(other, key)? {
                    truth = p as u32;
                }
            }
        }
        if repeat {
            for (kept, &other) in self.read[..rank].iter().enumerate() {
                if self.same(other, key)? {
                    if self.first {
                        return Ok(None);
                    }
                    return Err(self.repeated(key, kept, rank, row));
                }
            }
        }
        Ok(Some(truth))
    }

    /// The error for an id retrieved twice, first at kept rank `kept`.
    #[cold]
    fn repeated(&self, key: Key, kept: usize, rank: usize, row: Option<usize>) -> PyErr {
        // With "raise" every id so far was kept: the kept rank is the input rank.
        bad(
            self.py,
            format!(
                "{}document {} is retrieved twice (ranks {} and {}); pass \
                 duplicates=\"first\" to keep its first occurrence",
                at(row),
                shown(key.obj, self.py),
                kept + 1,
                rank + 1
            ),
        )
    }
}

/// Per-thread buffers for scoring matched rows.
#[derive(Default)]
struct RowScratch {
    rows: Scratch,
    /// Per rank, the group retrieved there (`core::rows`).
    ranked: Vec<u32>,
    /// `eval::score_rows`: the label of each ground-truth entry.
    jlabels: Vec<f64>,
    rank: eval::RankScratch,
}

thread_local! {
    /// The matched rows of the previous call on this thread, reused: a call
    /// on a ten-document list is otherwise mostly allocation, and a batch
    /// mostly growing vectors.
    static BUFFERS: RefCell<(Matched, RowScratch)> = RefCell::default();
}

/// Options fixed when the scorer is built.
struct Setup {
    specs: Vec<MetricSpec>,
    level: f64,
    miss_nan: bool,
    first: bool,
    empty_nan: bool,
    /// `judged_only`, `max_docs`, `ties` (and the level and `miss_nan` again)
    /// as `evaluate` reads them.
    opts: eval::Options,
    /// Some option above differs from the default: rows go through
    /// `eval::score_rows` (what `evaluate` runs), not `core::rows`.
    general: bool,
    /// Every metric has a fused kernel (`rows::Fused`): a binary row is
    /// scored by `rows::score_binary`.  Never with an automatic `gmax` (err
    /// is not fused): the specs a row is scored with are `specs`.
    fused: Option<rows::Fused>,
}

/// Score matched row `r` of `m` into `out`; `base`: the batch row of `m`'s
/// first row (for messages).
#[allow(clippy::too_many_arguments)]
fn score_row(
    m: &Matched,
    r: usize,
    base: usize,
    single: bool,
    setup: &Setup,
    specs: &[MetricSpec],
    s: &mut RowScratch,
    out: &mut [f64],
) -> Result<(), Error> {
    let Some(&span) = m.rows.get(r) else {
        return Err(Error::InvalidInput(format!("internal: no row {r}")));
    };
    if span.empty && setup.empty_nan {
        out.fill(f64::NAN);
        return Ok(());
    }
    if span.binary {
        // Read only when the metrics are fused (`Reader::hits`).
        let Some(fused) = &setup.fused else {
            return Err(Error::InvalidInput(
                "internal: a binary row, no fused kernel".into(),
            ));
        };
        let hits = &m.hits[span.ranked.0..span.ranked.1];
        let (relevant, len) = (span.relevant as usize, span.len as usize);
        rows::score_hits(&mut s.rows, fused, relevant, len, hits, out);
        return Ok(());
    }
    let labels = &m.labels[span.labels.0..span.labels.1];
    let groups = &m.groups[span.groups.0..span.groups.1];
    let ranked = &m.ranked[span.ranked.0..span.ranked.1];
    let group_of = |j: u32| groups.get(j as usize).copied().unwrap_or(NO_GROUP);
    if setup.general {
        s.jlabels.clear();
        s.jlabels.extend(
            groups
                .iter()
                .map(|&g| labels.get(g as usize).copied().unwrap_or(f64::NAN)),
        );
        let ranking = eval::Ranking {
            scores: &m.scores[span.ranked.0..span.ranked.1],
            pos: &m.pos[span.ranked.0..span.ranked.1],
            find: |i: usize| ranked.get(i).filter(|&&j| j != NONE).map(|&j| j as usize),
        };
        let name = || {
            if single {
                "the sample".to_string()
            } else {
                format!("row {}", base + r)
            }
        };
        return eval::score_rows(
            &mut s.rank,
            &s.jlabels,
            groups,
            ranking,
            false,
            &name,
            specs,
            &setup.opts,
            out,
        );
    }
    // A list of relevant ids: entry j is group j, of label 1, and `ranked`
    // already holds groups (`NONE` is `NO_GROUP`).
    if let Some(fused) = &setup.fused {
        if groups.len() == labels.len()
            && labels.iter().all(|&l| l == 1.0)
            && groups.iter().enumerate().all(|(j, &g)| g as usize == j)
        {
            rows::score_binary(&mut s.rows, fused, labels.len(), ranked, out);
            return Ok(());
        }
    }
    s.ranked.clear();
    s.ranked.extend(ranked.iter().map(|&j| group_of(j)));
    let sample = Sample {
        group_labels: labels,
        extra_members: groups.len() - labels.len(),
        ranked: &s.ranked,
    };
    score_sample(
        &mut s.rows,
        &sample,
        specs,
        setup.level,
        setup.miss_nan,
        out,
    );
    Ok(())
}

/// The values of a batch, metric-major (`metrics x rows`: a metric's values
/// contiguous, in row order), and which rows were empty.
type BatchOut<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<bool>>);

/// A batch's values, metric-major (see the module note: no column copied out
/// of a `rows x metrics` array; `metrics x rows` is also a pandas frame's own
/// block, which `score_frame` takes without a copy).
struct Columns {
    values: Vec<f64>,
    rows: usize,
}

impl Columns {
    fn new(metrics: usize, rows: usize) -> Self {
        Columns {
            values: vec![0.0; metrics * rows],
            rows,
        }
    }

    /// Row `r`'s values, one per metric.
    #[inline]
    fn set(&mut self, r: usize, row: &[f64]) {
        for (j, &v) in row.iter().enumerate() {
            if let Some(x) = self.values.get_mut(j * self.rows + r) {
                *x = v;
            }
        }
    }

    /// Per metric, its values (one slice each).
    fn columns(&mut self) -> impl Iterator<Item = &mut [f64]> {
        self.values.chunks_mut(self.rows.max(1))
    }

    fn into_py<'py>(self, py: Python<'py>, metrics: usize) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.values.into_pyarray(py).reshape([metrics, self.rows])
    }
}

/// The scorer: metrics parsed once, then one sample or a batch per call.
/// `ranklens.Scorer` subclasses it, so that a call on one sample runs no
/// Python code (a Python `__call__` frame and building the result dict there
/// doubled the time of a ten-document call).
#[pyclass(frozen, subclass, module = "ranklens._ranklens")]
pub(super) struct RowScorer {
    setup: Setup,
    /// The metrics' canonical names, the keys of a result.
    names: Vec<Py<PyString>>,
    /// The type of a one-sample result (`ranklens.Scores`, a dict subclass).
    result_type: Py<PyAny>,
    /// Some `err` metric takes its `gmax` from the input's largest label.
    auto_gmax: bool,
    /// Warn when the largest label is positive but below this (binary
    /// metrics would all be 0); -inf for no check.
    warn_level: f64,
    warning: Py<PyAny>,
    /// The warning's text; `{largest}` is replaced by the largest label.
    warn_text: String,
}

impl RowScorer {
    fn score_with(
        &self,
        py: Python<'_>,
        retrieved: &Bound<'_, PyAny>,
        relevant: &Bound<'_, PyAny>,
        buffers: &mut (Matched, RowScratch),
    ) -> PyResult<Vec<f64>> {
        let (m, s) = buffers;
        m.clear();
        self.reader(py).row(m, relevant, retrieved, None, false)?;
        let largest = m.largest();
        // Level 1: the frame that called the scorer (no Python frame of ours).
        self.warn_if_below(py, largest, 1)?;
        let resolved = self.specs_for(largest);
        let specs = resolved.as_deref().unwrap_or(&self.setup.specs);
        let mut out = vec![0.0; specs.len()];
        score_row(m, 0, 0, true, &self.setup, specs, s, &mut out).map_err(|e| to_py(py, e))?;
        Ok(out)
    }

    fn reader<'py>(&self, py: Python<'py>) -> Reader<'py> {
        let setup = &self.setup;
        let hits = setup.fused.is_some() && !setup.general;
        Reader::new(py, setup.general, setup.first, hits)
    }

    fn warn_if_below(&self, py: Python<'_>, largest: f64, stacklevel: i32) -> PyResult<()> {
        if largest > 0.0 && largest < self.warn_level {
            let text = self.warn_text.replace("{largest}", &format!("{largest}"));
            let text = CString::new(text).unwrap_or_default();
            PyErr::warn(py, self.warning.bind(py), &text, stacklevel)?;
        }
        Ok(())
    }

    fn specs_for(&self, largest: f64) -> Option<Vec<MetricSpec>> {
        self.auto_gmax
            .then(|| metrics::resolve_gmax(&self.setup.specs, err::max_label(&[largest])))
    }
}

fn largest_label(labels: &[f64]) -> f64 {
    labels.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

#[pymethods]
impl RowScorer {
    /// `metrics`: as for `evaluate`; `level`: the default relevance level;
    /// `miss_nan`: first_rel_rank of a miss is NaN; `duplicates_first`: a
    /// repeated retrieved id is dropped (else an error); `empty_nan`: a sample
    /// with no ground truth or nothing retrieved scores NaN (else as trec_eval
    /// scores it); `names`, `result_type`, `warn_level`, `warning`,
    /// `warn_text`: see the struct.
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (metrics, names, result_type, level, miss_nan, duplicates_first, empty_nan, warn_level, warning, warn_text, judged_only = false, max_docs = None, ties = "trec"))]
    fn new(
        py: Python<'_>,
        metrics: Vec<MetricArg>,
        names: Vec<Py<PyString>>,
        result_type: Py<PyAny>,
        level: f64,
        miss_nan: bool,
        duplicates_first: bool,
        empty_nan: bool,
        warn_level: f64,
        warning: Py<PyAny>,
        warn_text: String,
        judged_only: bool,
        max_docs: Option<usize>,
        ties: &str,
    ) -> PyResult<Self> {
        let (mut opts, specs) =
            super::evaluate::eval_setup(&metrics, level, judged_only, max_docs, ties)
                .map_err(|e| to_py(py, e))?;
        opts.miss_nan = miss_nan;
        let general = judged_only || max_docs.is_some() || opts.ties != eval::Ties::Trec;
        eval::check(&specs, &opts).map_err(|e| to_py(py, e))?;
        if names.len() != specs.len() {
            return Err(bad(py, "internal: one name per metric".into()));
        }
        let auto_gmax = specs
            .iter()
            .any(|m| m.family == Family::Err && m.param("gmax") <= 0.0);
        let fused = rows::Fused::new(&specs, level, miss_nan);
        Ok(RowScorer {
            setup: Setup {
                specs,
                level,
                miss_nan,
                first: duplicates_first,
                empty_nan,
                opts,
                general,
                fused,
            },
            names,
            result_type,
            auto_gmax,
            warn_level,
            warning,
            warn_text,
        })
    }

    /// One sample: `{name: value}` as a `result_type`, in metric order.
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        retrieved: &Bound<'py, PyAny>,
        relevant: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let values = BUFFERS.with(|cell| {
            let Ok(mut guard) = cell.try_borrow_mut() else {
                // Re-entered (an id's __str__ calling back): fresh buffers.
                return self.score_with(py, retrieved, relevant, &mut Default::default());
            };
            self.score_with(py, retrieved, relevant, &mut guard)
        })?;
        let out = self.result_type.bind(py).call0()?;
        let dict = out.cast::<PyDict>()?;
        for (name, v) in self.names.iter().zip(values) {
            dict.set_item(name.bind(py), v)?;
        }
        Ok(out)
    }

    /// The values of every row, `metrics x rows` (a metric's values
    /// contiguous), and which rows were empty (no ground truth or nothing
    /// retrieved).  `chunk_rows` (for tests):
    /// pipeline a batch of lists of any size in chunks of that many rows
    /// (unless one thread is asked for).
    #[pyo3(name = "_batch", signature = (retrieved_lists, relevant_lists, threads = None, chunk_rows = None))]
    fn batch<'py>(
        &self,
        py: Python<'py>,
        retrieved_lists: &Bound<'py, PyAny>,
        relevant_lists: &Bound<'py, PyAny>,
        threads: Option<usize>,
        chunk_rows: Option<usize>,
    ) -> PyResult<BatchOut<'py>> {
        let n = num_rows(retrieved_lists, "retrieved_lists")?;
        let m = num_rows(relevant_lists, "relevant_lists")?;
        if n != m {
            return Err(bad(
                py,
                format!("{n} retrieved rows but {m} ground-truth rows"),
            ));
        }
        let source = Source::new(retrieved_lists, relevant_lists)?;
        let run = Run {
            n,
            threads,
            chunk_rows,
        };
        BUFFERS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut guard) => {
                let (m, scratch) = &mut *guard;
                let out = self.batch_with(py, source, run, m, scratch);
                // Keep small buffers for the next call, not a big batch's.
                if m.ranked.capacity() > 1 << 20
                    || m.groups.capacity() > 1 << 20
                    || m.hits.capacity() > 1 << 20
                {
                    *m = Matched::default();
                }
                out
            }
            Err(_) => {
                let (mut m, mut scratch) = Default::default();
                self.batch_with(py, source, run, &mut m, &mut scratch)
            }
        })
    }
}

/// One side of a batch walked by index in place: a list, or a 1-D numpy
/// array of objects (a pandas object column's values, as `score_frame`
/// passes them: no `tolist()` copy of the column).
enum Outer<'py> {
    List(Bound<'py, PyList>),
    Objects(Bound<'py, PyArray1<Py<PyAny>>>),
}

impl<'py> Outer<'py> {
    fn new(obj: &Bound<'py, PyAny>) -> Option<Self> {
        if let Ok(l) = obj.cast::<PyList>() {
            return Some(Outer::List(l.clone()));
        }
        obj.cast::<PyArray1<Py<PyAny>>>()
            .ok()
            .map(|a| Outer::Objects(a.clone()))
    }

    /// Its length now (a list may shrink while Python code runs; an array
    /// may be resized with `refcheck=False`).
    fn len(&self) -> usize {
        match self {
            Outer::List(l) => l.len(),
            Outer::Objects(a) => a.shape()[0],
        }
    }

    /// Item `i`, borrowed; null with a Python error set when a list's
    /// `PyList_GetItem` fails.
    ///
    /// # Safety
    /// The GIL is held and `i < self.len()`, read since Python code last ran
    /// (an array's data pointer and stride are read here, at each call, so
    /// a resize in between is seen).
    unsafe fn item(&self, i: usize) -> *mut ffi::PyObject {
        match self {
            Outer::List(l) => ffi::PyList_GetItem(l.as_ptr(), i as ffi::Py_ssize_t),
            Outer::Objects(a) => {
                let stride = a.strides()[0];
                let at = (a.data() as *const u8).offset(i as isize * stride);
                let item = at.cast::<*mut ffi::PyObject>().read_unaligned();
                // numpy reads a null slot of an object array as None.
                if item.is_null() {
                    ffi::Py_None()
                } else {
                    item
                }
            }
        }
    }
}

/// A batch's rows: two lists (or object arrays) walked by index, or two
/// iterators.
enum Source<'py> {
    Lists {
        ret: Outer<'py>,
        rel: Outer<'py>,
        /// Rows left to read end here: at most both lists' lengths.
        len: usize,
        next: usize,
        ahead: Box<Ahead>,
    },
    Iters {
        ret: Bound<'py, PyIterator>,
        rel: Bound<'py, PyIterator>,
        next: usize,
    },
}

impl<'py> Source<'py> {
    fn new(retrieved: &Bound<'py, PyAny>, relevant: &Bound<'py, PyAny>) -> PyResult<Self> {
        // Lists (the common case: JSON, pandas' tolist()) and object arrays
        // (a pandas column's values) are walked in place, by borrowed pointer (GIL builds only: on free-threaded Python
        // another thread could drop a borrowed cell at any time).
        Ok(match (Outer::new(retrieved), Outer::new(relevant)) {
            (Some(ret), Some(rel)) if cfg!(not(Py_GIL_DISABLED)) => Source::Lists {
                len: ret.len().min(rel.len()),
                ret,
                rel,
                next: 0,
                ahead: Box::default(),
            },
            _ => Source::Iters {
                ret: retrieved.try_iter()?,
                rel: relevant.try_iter()?,
                next: 0,
            },
        })
    }

    /// Read up to `rows` more rows into `m`: how many were read (fewer only
    /// at the end of the input).
    fn read(&mut self, reader: &mut Reader<'py>, m: &mut Matched, rows: usize) -> PyResult<usize> {
        let py = reader.py;
        let mut got = 0;
        match self {
            Source::Lists {
                ret,
                rel,
                len,
                next,
                ahead,
            } => {
                // Python code may have run since the last call (the GIL is
                // released between a pipeline's chunks): nothing read ahead
                // is used, and the lists may have shrunk.
                ahead.row = None;
                ahead.next = None;
                *len = (*len).min(ret.len()).min(rel.len());
                let (ret, rel) = (&*ret, &*rel);
                while got < rows && *next < *len {
                    let r = *next;
                    // This row's cells (ground truth, retrieved), and the
                    // items of those that are exact lists, when read ahead.
                    let cells = match ahead.row {
                        Some(a) if a == r => {
                            std::mem::swap(&mut reader.pre, &mut ahead.items);
                            reader.pre_ok = ahead.listed;
                            ahead.cells
                        }
                        _ => {
                            reader.pre_ok = [false; 2];
                            // SAFETY: `r < len`, which is at most both
                            // lengths (read again after any row that may have
                            // run Python code, which could shrink them).  Borrowed references: see below.
                            let cells = unsafe { [rel.item(r), ret.item(r)] };
                            if cells.iter().any(|c| c.is_null()) {
                                return Err(PyErr::fetch(py));
                            }
                            cells
                        }
                    };
                    ahead.row = None;
                    if r + 1 < *len {
                        // SAFETY: as above, for row r + 1 < len.
                        unsafe { ahead.read(rel, ret, r + 1, *len) };
                    }
                    // SAFETY: the cells (and the items read ahead) are read
                    // without a reference of their own: `row` with
                    // `plain_only` runs no Python code (see
                    // `Reader::borrowed_ids`), so the lists cannot drop them
                    // meanwhile.
                    let plain = unsafe {
                        let rel_cell = Borrowed::from_ptr(py, cells[0]);
                        let ret_cell = Borrowed::from_ptr(py, cells[1]);
                        reader.row(m, &rel_cell, &ret_cell, Some(r), true)?
                    };
                    if !plain {
                        // Reading these cells may run Python code: hold them,
                        // and read nothing ahead of them.
                        reader.pre_ok = [false; 2];
                        ahead.row = None;
                        ahead.next = None;
                        // SAFETY: nothing ran since they were read above.
                        let (rel_cell, ret_cell) = unsafe {
                            (
                                Bound::from_borrowed_ptr(py, cells[0]),
                                Bound::from_borrowed_ptr(py, cells[1]),
                            )
                        };
                        reader.row(m, &rel_cell, &ret_cell, Some(r), false)?;
                        // Dropping a cell may run Python code too (`__del__`).
                        drop((rel_cell, ret_cell));
                        *len = (*len).min(ret.len()).min(rel.len());
                    }
                    *next += 1;
                    got += 1;
                }
            }
            Source::Iters { ret, rel, next } => {
                while got < rows {
                    let Some(ret_cell) = ret.next() else { break };
                    let Some(rel_cell) = rel.next() else { break };
                    reader.row(m, &rel_cell?, &ret_cell?, Some(*next), false)?;
                    *next += 1;
                    got += 1;
                }
            }
        }
        Ok(got)
    }
}

/// A row read ahead of the one being matched (see the module note): its
/// cells (ground truth, retrieved) and the items of each that is an exact
/// list, borrowed, each id's object prefetched.  Valid only while no Python
/// code runs: `Source::read` drops it after any row read by the general path
/// and at each call.
struct Ahead {
    row: Option<usize>,
    cells: [*mut ffi::PyObject; 2],
    items: [Vec<*mut ffi::PyObject>; 2],
    listed: [bool; 2],
    /// The cells of the row after `row`, their headers prefetched.
    next: Option<(usize, [*mut ffi::PyObject; 2])>,
}

impl Default for Ahead {
    fn default() -> Self {
        Ahead {
            row: None,
            cells: [std::ptr::null_mut(); 2],
            items: Default::default(),
            listed: [false; 2],
            next: None,
        }
    }
}

impl Ahead {
    /// Read row `r` of `rel` and `ret` ahead (the cells of row `r + 1`
    /// too, when `r + 1 < len`).
    ///
    /// # Safety
    /// The GIL is held; `rel` and `ret` hold at least `len > r` items, and
    /// no Python code ran since `next` was read.
    unsafe fn read(&mut self, rel: &Outer<'_>, ret: &Outer<'_>, r: usize, len: usize) {
        let cells_of = |r: usize| {
            let cells = [rel.item(r), ret.item(r)];
            if cells.iter().any(|c| c.is_null()) {
                ffi::PyErr_Clear();
                return None;
            }
            Some(cells)
        };
        let cells = match self.next.take() {
            Some((n, cells)) if n == r => Some(cells),
            _ => cells_of(r),
        };
        if r + 1 < len {
            self.next = cells_of(r + 1).map(|cells| {
                cells.iter().for_each(|&c| prefetch(c));
                (r + 1, cells)
            });
        }
        let Some(cells) = cells else { return };
        let list_type = std::ptr::addr_of_mut!(ffi::PyList_Type);
        for ((cell, items), listed) in cells.iter().zip(&mut self.items).zip(&mut self.listed) {
            items.clear();
            *listed = ffi::Py_TYPE(*cell) == list_type;
            if *listed {
                if let Some(direct) = super::layout::list_items(*cell) {
                    items.extend(direct.iter().map(|&item| {
                        prefetch(item);
                        item
                    }));
                } else {
                    let n = ffi::PyList_Size(*cell).max(0);
                    items.extend((0..n).map(|j| {
                        let item = ffi::PyList_GetItem(*cell, j);
                        prefetch(item);
                        item
                    }));
                }
            }
        }
        self.cells = cells;
        self.row = Some(r);
    }
}

/// Ask for the cache lines of an object's header and of a `str`'s hash (the
/// next row's ids: see the module note).  A hint: any address is fine.
#[inline(always)]
fn prefetch(obj: *mut ffi::PyObject) {
    let p = obj.cast::<u8>().cast_const();
    crate::core::prefetch(p);
    crate::core::prefetch(p.wrapping_add(24));
}

/// A pipelined chunk to score: its first row in the batch, its rows, and per
/// metric the slice of the batch's values for them.
struct Job<'a> {
    base: usize,
    m: Matched,
    out: Vec<&'a mut [f64]>,
}

impl Job<'_> {
    /// Score the chunk; the first error with its batch row.
    fn score(
        &mut self,
        setup: &Setup,
        specs: &[MetricSpec],
        s: &mut RowScratch,
        row: &mut [f64],
    ) -> Result<(), (usize, Error)> {
        for r in 0..self.m.rows.len() {
            score_row(&self.m, r, self.base, false, setup, specs, s, row)
                .map_err(|e| (self.base + r, e))?;
            for (col, &v) in self.out.iter_mut().zip(row.iter()) {
                if let Some(x) = col.get_mut(r) {
                    *x = v;
                }
            }
        }
        Ok(())
    }
}

/// The chunks read and not yet taken by a scoring thread.
struct Queue<'a> {
    jobs: VecDeque<Job<'a>>,
    /// No chunk will come: the scoring thread ends.
    closed: bool,
}

/// A lock, whatever a panicking holder left (the data stays consistent:
/// each holder only pushes or pops).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a batch call asks for: its rows, `threads`, `chunk_rows`.
#[derive(Clone, Copy)]
struct Run {
    n: usize,
    threads: Option<usize>,
    chunk_rows: Option<usize>,
}

impl RowScorer {
    fn batch_with<'py>(
        &self,
        py: Python<'py>,
        mut source: Source<'py>,
        run: Run,
        m: &mut Matched,
        scratch: &mut RowScratch,
    ) -> PyResult<BatchOut<'py>> {
        let n = run.n;
        m.clear();
        let mut reader = self.reader(py);
        if let Some(chunk) = self
            .pipeline_chunk(&source, run)
            .map_err(|e| to_py(py, e))?
        {
            return self.pipelined(py, source, reader, n, chunk, m, scratch);
        }
        source.read(&mut reader, m, usize::MAX)?;
        drop(reader);
        if m.rows.len() != n {
            return Err(bad(
                py,
                format!("{n} rows announced, {} iterated", m.rows.len()),
            ));
        }
        let largest = m.largest();
        // Level 2: the caller of `Scorer.batch`.
        self.warn_if_below(py, largest, 2)?;
        let resolved = self.specs_for(largest);
        let specs = resolved.as_deref().unwrap_or(&self.setup.specs);
        let nm = specs.len();
        let setup = &self.setup;
        let m = &*m;
        let threads = run.threads;
        let serial = n < PARALLEL_ROWS || threads == Some(1);
        let out = py.detach(|| {
            let mut cols = Columns::new(nm, n);
            if serial {
                let mut row = vec![0.0; nm];
                for r in 0..n {
                    score_row(m, r, 0, false, setup, specs, scratch, &mut row)?;
                    cols.set(r, &row);
                }
            } else {
                let mut values = vec![0.0; n * nm];
                eval::with_threads(threads, || {
                    values
                        .par_chunks_mut(nm.max(1))
                        .enumerate()
                        .try_for_each_init(RowScratch::default, |s, (r, out)| {
                            score_row(m, r, 0, false, setup, specs, s, out)
                        })
                })??;
                for (r, row) in values.chunks(nm.max(1)).enumerate() {
                    cols.set(r, row);
                }
            }
            Ok::<_, Error>(cols)
        });
        let cols = out.map_err(|e| to_py(py, e))?;
        let empty: Vec<bool> = m.rows.iter().map(|s| s.empty).collect();
        Ok((cols.into_py(py, nm)?, empty.into_pyarray(py)))
    }

    /// The rows a pipelined chunk holds, `None` for a serial batch: only two
    /// lists are pipelined, when the metrics do not depend on the whole
    /// batch (an automatic `gmax`), from `PIPELINE_ROWS` rows (any number
    /// with `chunk_rows`), and when two threads may run (see the module
    /// note).
    fn pipeline_chunk(&self, source: &Source<'_>, run: Run) -> Result<Option<usize>, Error> {
        if !matches!(source, Source::Lists { .. })
            || self.auto_gmax
            || self.setup.specs.is_empty()
            || rayon::current_thread_index().is_some()
        {
            return Ok(None);
        }
        let chunk = match run.chunk_rows {
            Some(c) => c.max(1),
            None if run.n >= PIPELINE_ROWS => CHUNK_ROWS,
            None => return Ok(None),
        };
        let threads = match eval::thread_count(run.threads)? {
            Some(t) => t,
            None => pool::threads().map_err(Error::InvalidInput)?,
        };
        Ok((threads >= 2).then_some(chunk))
    }

    /// `batch_with` pipelined: this thread reads a chunk of rows (under the
    /// GIL) while one pool thread scores the chunk read before it (numbers
    /// only: no Python object), in buffers that go back and forth.  When this
    /// thread needs a buffer and the pool thread has not taken the chunk
    /// waiting for it (a busy machine), this thread scores that chunk
    /// itself: the batch is then about as fast as the serial one; when the
    /// pool thread holds the only other buffer, a new one is made.  The same
    /// values and the same errors as the serial batch: a reading error first
    /// (the rows are read in order), then the count, the warning, and the
    /// scoring error of the first row.
    #[allow(clippy::too_many_arguments)]
    fn pipelined<'py>(
        &self,
        py: Python<'py>,
        mut source: Source<'py>,
        mut reader: Reader<'py>,
        n: usize,
        chunk: usize,
        first: &mut Matched,
        scratch: &mut RowScratch,
    ) -> PyResult<BatchOut<'py>> {
        let setup = &self.setup;
        let specs = &setup.specs[..];
        let nm = specs.len();
        let mut cols = Columns::new(nm, n);
        let mut empty: Vec<bool> = Vec::with_capacity(n);
        let mut largest = f64::NEG_INFINITY;
        let mut read = 0usize;
        // The scoring error of the first row, from either thread.
        let failed: Mutex<Option<(usize, Error)>> = Mutex::new(None);
        let queue = Mutex::new(Queue {
            jobs: VecDeque::new(),
            closed: false,
        });
        let ready = Condvar::new();
        let (to_reader, free) = mpsc::channel::<Matched>();
        // Waited on without the GIL, from a closure that must be `Sync`.
        let free = Mutex::new(free);
        let recv = || lock(&free).recv();
        let score = |job: &mut Job<'_>, s: &mut RowScratch, row: &mut [f64]| {
            if let Err(e) = job.score(setup, specs, s, row) {
                let mut slot = lock(&failed);
                if !slot.as_ref().is_some_and(|(r, _)| *r < e.0) {
                    *slot = Some(e);
                }
            }
        };
        // Per metric, its values chunk by chunk.
        let mut outs: Vec<_> = cols.columns().map(|c| c.chunks_mut(chunk)).collect();
        let reading = pool::in_place_scope(|scope| {
            let (queue, ready, score) = (&queue, &ready, &score);
            scope.spawn(move |_| {
                let mut s = RowScratch::default();
                let mut row = vec![0.0; nm];
                loop {
                    let job = {
                        let mut q = lock(queue);
                        loop {
                            if let Some(job) = q.jobs.pop_front() {
                                break Some(job);
                            }
                            if q.closed {
                                break None;
                            }
                            q = ready.wait(q).unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    let Some(mut job) = job else { break };
                    score(&mut job, &mut s, &mut row);
                    // The reader may have stopped at an error: nobody waits.
                    let _ = to_reader.send(job.m);
                }
            });
            let mut row = vec![0.0; nm];
            let mut read_all = || -> PyResult<()> {
                let mut cur = std::mem::take(first);
                let mut spare = Some(Matched::default());
                loop {
                    cur.clear();
                    let got = source.read(&mut reader, &mut cur, chunk)?;
                    if got == 0 {
                        *first = cur;
                        return Ok(());
                    }
                    largest = largest.max(cur.largest());
                    empty.extend(cur.rows.iter().map(|s| s.empty));
                    let last = got < chunk || read + got > n;
                    // More rows than announced (lists grown by Python code
                    // run while reading): the batch fails, nothing to score.
                    if read + got <= n {
                        let out = outs.iter_mut().map(|c| c.next().unwrap_or_default());
                        let job = Job {
                            base: read,
                            m: cur,
                            out: out.collect(),
                        };
                        lock(queue).jobs.push_back(job);
                        ready.notify_one();
                    }
                    read += got;
                    if last {
                        return Ok(());
                    }
                    cur = match spare.take() {
                        Some(b) => b,
                        None => match free.try_lock().ok().and_then(|f| f.try_recv().ok()) {
                            Some(b) => b,
                            None => {
                                let waiting = lock(queue).jobs.pop_front();
                                match waiting {
                                    Some(mut job) => {
                                        score(&mut job, scratch, &mut row);
                                        job.m
                                    }
                                    // The pool thread holds the other buffer:
                                    // a new one, not a wait (a preempted pool
                                    // thread would stall the reading).
                                    None => Matched::default(),
                                }
                            }
                        },
                    };
                }
            };
            let out = read_all();
            // Close the queue, score what the pool thread has not taken, and
            // wait for its last chunk (without the GIL): `free` closes when
            // the scoring job ends.  A buffer is kept for the next call.
            lock(queue).closed = true;
            ready.notify_all();
            let mut kept = None;
            loop {
                let waiting = lock(queue).jobs.pop_front();
                let Some(mut job) = waiting else { break };
                if out.is_ok() {
                    score(&mut job, scratch, &mut row);
                }
                kept = Some(job.m);
            }
            let last = py.detach(|| {
                let mut kept = None;
                while let Ok(b) = recv() {
                    kept = Some(b);
                }
                kept
            });
            if let Some(b) = last.or(kept) {
                if first.rows.capacity() == 0 {
                    *first = b;
                }
            }
            out
        })
        .map_err(|e| to_py(py, Error::InvalidInput(e)))?;
        reading?;
        if read != n {
            return Err(bad(py, format!("{n} rows announced, {read} iterated")));
        }
        // Level 2: the caller of `Scorer.batch`.
        self.warn_if_below(py, largest, 2)?;
        drop(outs);
        let failed = failed.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some((_, e)) = failed {
            return Err(to_py(py, e));
        }
        Ok((cols.into_py(py, nm)?, empty.into_pyarray(py)))
    }
}
