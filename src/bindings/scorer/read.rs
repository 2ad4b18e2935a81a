//! Reading a row's two cells ([`Reader::row`]): the ground truth (a list of
//! ids, a list of groups, a dict id -> label, or missing) and the retrieved
//! side (a list of ids, a dict id -> score, or missing), each id turned into
//! a [`Key`] (its exact `str` object and Python's hash of it) and matched as
//! it is read (`super::probe`), leaving numbers in a
//! [`super::matched::Matched`].
//!
//! The common cell, a list of exact `str`s, is read without taking a
//! reference to each id ([`Reader::borrowed_ids`], GIL builds only): the
//! ids stay alive as long as the list holds them, and the list cannot change
//! while the GIL is held and no Python code runs (hashing and comparing
//! exact `str`s runs none).  Its keys are written in place, each hash read
//! from the `str` object where `bindings::layout` knows the running
//! CPython's layout (else `str`'s own `tp_hash`, read once, where the slot
//! can be read: Python 3.10+; else `PyObject_Hash`), and the list's items
//! from `ob_item` likewise (else `PyList_GetItem`).  A batch reads a row
//! first with `plain_only` (both cells such lists: nothing held, no Python
//! code run); any other row goes through the general path, which holds
//! each id it reads (reading it may run Python code: a score's `__float__`,
//! an id's `__str__`).
//!
//! The retrieved list is read before the row's table is sized, so that its
//! length comes with the read (no `len()` call).
//!
//! Rejected alternatives: a reference taken and dropped per id of a
//! plain-`str` list: two calls into Python per id under the stable ABI;
//! `PyObject_Hash` on an exact `str`: a dispatch where `tp_hash`, or the
//! cached field, answers directly.

use super::cell::{at, bad, check_ordered, each_item, is_missing, shown, value};
use super::matched::{Matched, RowSpan};
use crate::bindings::ids::{self, At, Place, Role};
use crate::bindings::is_id;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
/// Rows of at most this many ids (ground truth and retrieved) are matched by
/// scanning the row's keys, not through a hash table (see [`super::probe`]).
pub(super) const SMALL_ROW: usize = 16;

/// An id: its `str` object (kept alive by `Reader::hold`) and Python's hash.
#[derive(Clone, Copy)]
pub(super) struct Key {
    pub(super) obj: *mut ffi::PyObject,
    pub(super) hash: ffi::Py_hash_t,
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
/// row's ground truth as it goes (see the module notes of [`super`] and
/// [`self`]).
pub(super) struct Reader<'py> {
    pub(super) py: Python<'py>,
    /// The row's id objects, kept alive while their keys are in use.
    pub(super) hold: Vec<Bound<'py, PyAny>>,
    /// The row's ground-truth entries, then its kept retrieved ids.
    pub(super) keys: Vec<Key>,
    /// Open addressing over `keys` by hash: index + 1, 0 for empty.
    pub(super) table: Vec<u32>,
    /// A scored row's retrieved ids before ranking: key, score, position.
    pub(super) scored: Vec<(Key, f64, u32)>,
    /// The keys read by `borrowed_ids`.
    pub(super) read: Vec<Key>,
    /// The items of the row's cells (ground truth, retrieved) as read ahead
    /// by `Source::read`, for `borrowed_ids`: used only when `pre_ok` (the
    /// cell is an exact list and no Python code ran since they were read).
    pub(super) pre: [Vec<*mut ffi::PyObject>; 2],
    pub(super) pre_ok: [bool; 2],
    /// A small row: one bit (`bit`) per hash of its keys so far.  An id
    /// whose bit is clear has no equal among them (equal ids have equal
    /// hashes), and is not compared with any.
    pub(super) seen: u64,
    /// Keep the scores and positions of kept ids (`Setup::general`).
    pub(super) general: bool,
    /// `duplicates="first"`.
    pub(super) first: bool,
    /// A list of relevant ids is read as its hits (`RowSpan::binary`): the
    /// metrics are fused and the options the defaults.
    pub(super) hits: bool,
    /// The row being read is binary: its kept retrieved ids so far.
    pub(super) binary: bool,
    pub(super) kept: u32,
    /// `str`'s hash function (`tp_hash`), called on an exact `str` without
    /// `PyObject_Hash`'s dispatch; `None` where the slot of a static type
    /// cannot be read (Python 3.9).  Read by `borrowed_ids` (GIL builds).
    #[cfg_attr(Py_GIL_DISABLED, allow(dead_code))]
    pub(super) str_hash: Option<ffi::hashfunc>,
}

impl<'py> Reader<'py> {
    pub(super) fn new(py: Python<'py>, general: bool, first: bool, hits: bool) -> Self {
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

    /// The key of an id, converted by the rule of every door
    /// ([`crate::bindings::ids::as_str`]): an exact `str` as is (its identity
    /// and cached hash serve the match), a subclass as its plain `str`, an
    /// integer as its decimal `str`; anything else, a null or a lone
    /// surrogate is the error of `role` at `row`.
    pub(super) fn key(
        &mut self,
        obj: Bound<'py, PyAny>,
        row: Option<usize>,
        role: Role,
    ) -> PyResult<Key> {
        let place = Place::new(role, row.map_or(At::Top, At::Row));
        let obj = ids::as_str(obj, place)?.into_any();
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
    /// The ids are the list's exact `str`s as they are, which is what
    /// [`ids::as_str`] gives for them, except that a lone surrogate is not
    /// looked for here (see `bindings::ids`): such an id is compared as a
    /// Python string, exactly.
    ///
    /// `side`: 0 for the ground truth, 1 for the retrieved list: the items
    /// read ahead for it (`pre`), if any, are the list's.
    pub(super) fn borrowed_ids(
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
                None => unsafe { crate::bindings::layout::list_items(list) },
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
                    let hash = match (crate::bindings::layout::cached_hash(item), hash_of) {
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
}

impl<'py> Reader<'py> {
    /// Read and match one sample into `m`, `true`.  With `plain_only`, a
    /// row whose cells are not both lists of plain `str`s is left to a call
    /// without it: `false`, with nothing pushed into `m` and no Python code
    /// run (see `batch_with`; an error found before that is raised as the
    /// call without `plain_only` would raise it).
    pub(super) fn row(
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
                let key = self.key(k, row, Role::Doc)?;
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
                    let key = self.key(item, row, Role::Doc)?;
                    self.keys.push(key);
                    m.groups.push(g);
                } else {
                    let before = self.keys.len();
                    each_item(&item, row, "a group (a list of ids)", |member| {
                        let key = self.key(member, row, Role::Doc)?;
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
        // keys, with no table to clear and fill (see [`super::probe`]).
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
                let key = self.key(k, row, Role::Doc)?;
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
            check_ordered(retrieved, row)?;
            let what = "the retrieved list (a list of ids, a dict id -> score, or None)";
            self.ensure_table(ngt + hint, small)?;
            let mut rank = 0usize;
            each_item(retrieved, row, what, |item| {
                let key = self.key(item, row, Role::Retrieved)?;
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
}
