//! Matching a row's ids ([`Reader`]'s probes): each ground-truth entry
//! against the entries before it (an id in two groups, or twice in one, is
//! an error), each retrieved id against the ground truth and the ids
//! retrieved before it (a repeat is dropped with `duplicates="first"`, else
//! an error).  Two ids are the same when they are one object, or have equal
//! hashes and equal texts.
//!
//! Two ways, one answer:
//! * a row of more than [`SMALL_ROW`](super::read::SMALL_ROW) ids, or one whose retrieved side is a
//!   dict or another sequence, is matched through an open-addressing table
//!   over its keys by hash ([`Reader::retrieved`]);
//! * a small row (the common RAG row: ~12 keys) is matched by scanning its
//!   keys, with no table to clear and fill per row, behind a 64-bit filter of
//!   the keys' hashes (`Reader::seen`, six hash bits each): an id whose bit
//!   is clear has no equal among them and is compared with none, so most ids
//!   are compared with nothing.  A small row read by borrowed pointer is
//!   matched in place in `Reader::read` ([`Reader::retrieved_read`]): a
//!   dropped repeat equals a kept id before it, and with "raise" nothing was
//!   dropped, so no kept id is copied into `keys`.  A binary row (a list of
//!   relevant ids read as its hits) is matched in one loop
//!   ([`Reader::binary_read`]) behind two filters, the ground truth's and the
//!   ids retrieved before, so a hit is compared with the ground truth alone.
//!
//! Rejected alternatives (figures in the performance notes): the table for
//! every row: slower than scanning ~12 keys behind a hash filter; scanning
//! every key without the filter: no fewer instructions than the table; a
//! probe returning a result enum: slower than the `Option` of the entry.

use super::cell::{at, bad, shown};
use super::matched::{Matched, NONE};
use super::read::{Key, Reader};
use pyo3::ffi;
use pyo3::prelude::*;

/// A key's bit in `Reader::seen`: six bits of its hash.
#[inline]
fn bit(key: Key) -> u64 {
    1 << (key.hash as u64 & 63)
}

impl Reader<'_> {
    #[inline]
    pub(super) fn same(&self, a: Key, b: Key) -> PyResult<bool> {
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
    pub(super) fn equal(&self, a: Key, b: Key) -> PyResult<bool> {
        // SAFETY: both are live exact `str`s held by the reader.
        match unsafe { ffi::PyObject_RichCompareBool(a.obj, b.obj, ffi::Py_EQ) } {
            -1 => Err(PyErr::fetch(self.py)),
            r => Ok(r == 1),
        }
    }

    pub(super) fn reset_table(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(8);
        self.table.clear();
        self.table.resize(size, 0);
    }

    /// Insert ground-truth entry `keys[i]`; `Some(j)`: the same id is entry `j`.
    pub(super) fn insert_truth(&mut self, i: usize) -> PyResult<Option<usize>> {
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

    /// A kept retrieved id, at the next kept rank: `truth` its ground-truth
    /// entry or `NONE`.  A binary row keeps only the ranks of its hits
    /// (each entry is found at most once: the kept ids are distinct).
    #[inline]
    pub(super) fn push_kept(&mut self, m: &mut Matched, truth: u32) {
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
    pub(super) fn retrieved(
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
    pub(super) fn matched(
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
    pub(super) fn append(&mut self, m: &mut Matched, key: Key, truth: u32, score: f64, pos: u32) {
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
    pub(super) fn ensure_table(&mut self, n: usize, small: bool) -> PyResult<()> {
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
    pub(super) fn scan_truth(&mut self, i: usize) -> PyResult<Option<usize>> {
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
    pub(super) fn retrieved_read(
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
    pub(super) fn binary_read(
        &mut self,
        m: &mut Matched,
        ngt: usize,
        row: Option<usize>,
    ) -> PyResult<()> {
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
    pub(super) fn probe_read(
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
    pub(super) fn repeated(&self, key: Key, kept: usize, rank: usize, row: Option<usize>) -> PyErr {
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
