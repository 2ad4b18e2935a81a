//! A batch's rows ([`Source`]): two lists, or two 1-D object arrays (a
//! pandas object column's values, as `score_frame` passes them: no
//! `tolist()` copy), walked by index in place, by borrowed pointer; else two
//! iterators.
//!
//! Borrowed walk (GIL builds only: on free-threaded Python another thread
//! could drop a borrowed cell at any time): a row is first read with
//! `plain_only` (both cells exact lists of exact `str`s: no Python code
//! runs, nothing is held); any other row takes a reference to its cells
//! before the general path reads it (which may run Python code), and the
//! outer lists' lengths are read again after it.  An object array's data
//! pointer and stride are read at each item, so a resize while Python code
//! ran is seen.
//!
//! The row after the one being matched is read ahead ([`Ahead`]): its cells
//! and their items fetched, each id's object prefetched (its header and its
//! cached hash), and the cells of the row after that prefetched; matching
//! row r then finds row r+1's ids in cache, where otherwise most of a row's
//! cache misses are on the ids' `str` objects.  Sound because a row read
//! with `plain_only` runs no Python code: after a row read by the general
//! path, and at each call of [`Source::read`] (the GIL may have been
//! released between a pipeline's chunks), nothing read ahead is used.
//!
//! Rejected alternative: prefetching the next row's ids with calls of their
//! own (a second `PyList_GetItem` per id): a third of the read-ahead's gain.

use super::matched::Matched;
use super::read::Reader;
use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyIterator, PyList};

/// One side of a batch walked by index in place: a list, or a 1-D numpy
/// array of objects (a pandas object column's values, as `score_frame`
/// passes them: no `tolist()` copy of the column).
pub(super) enum Outer<'py> {
    List(Bound<'py, PyList>),
    Objects(Bound<'py, PyArray1<Py<PyAny>>>),
}

impl<'py> Outer<'py> {
    pub(super) fn new(obj: &Bound<'py, PyAny>) -> Option<Self> {
        if let Ok(l) = obj.cast::<PyList>() {
            return Some(Outer::List(l.clone()));
        }
        obj.cast::<PyArray1<Py<PyAny>>>()
            .ok()
            .map(|a| Outer::Objects(a.clone()))
    }

    /// Its length now (a list may shrink while Python code runs; an array
    /// may be resized with `refcheck=False`).
    pub(super) fn len(&self) -> usize {
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
    pub(super) unsafe fn item(&self, i: usize) -> *mut ffi::PyObject {
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
pub(super) enum Source<'py> {
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
    pub(super) fn new(
        retrieved: &Bound<'py, PyAny>,
        relevant: &Bound<'py, PyAny>,
    ) -> PyResult<Self> {
        // Lists (the common case: JSON, pandas' tolist()) and object arrays
        // (a pandas column's values) are walked in place, by borrowed
        // pointer (GIL builds only: on free-threaded Python another thread
        // could drop a borrowed cell at any time).
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

    /// Read up to `rows` more rows into `m`, and no row once `m` holds
    /// `entries` entries or more ([`Matched::entries`]): how many were read
    /// (none only at the end of the input).
    pub(super) fn read(
        &mut self,
        reader: &mut Reader<'py>,
        m: &mut Matched,
        rows: usize,
        entries: usize,
    ) -> PyResult<usize> {
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
                while got < rows && *next < *len && m.entries() < entries {
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
                            // run Python code, which could shrink them).
                            // Borrowed references: see below.
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
                while got < rows && m.entries() < entries {
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
pub(super) struct Ahead {
    pub(super) row: Option<usize>,
    pub(super) cells: [*mut ffi::PyObject; 2],
    pub(super) items: [Vec<*mut ffi::PyObject>; 2],
    pub(super) listed: [bool; 2],
    /// The cells of the row after `row`, their headers prefetched.
    pub(super) next: Option<(usize, [*mut ffi::PyObject; 2])>,
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
    pub(super) unsafe fn read(&mut self, rel: &Outer<'_>, ret: &Outer<'_>, r: usize, len: usize) {
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
                if let Some(direct) = crate::bindings::layout::list_items(*cell) {
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
