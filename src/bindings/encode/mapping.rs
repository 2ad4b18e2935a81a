//! `{query: {doc: value}}` and `{query: [doc, ...]}` into a side
//! ([`encode_mapping`]): the walk over queries, the plain entries of each
//! query's dict ([`super::walk`]), the general path for every other entry,
//! and pytrec_eval's own type checks for its drop-in.
//!
//! Invariants: query ids must differ once written as strings (`1` and `"1"`
//! is an error naming the query, as is a `str` subclass with its own
//! `__hash__` or a mapping repeating a key); a query's document ids too
//! (`Builder::finish` checks, unless every key was an exact `str` of a dict).
//! With `pytrec_types`, exactly pytrec_eval's accepted types and its
//! `TypeError`s, in the order it checks them, with no second pass in Python.
//!
//! Ctrl-C: the walk holds the GIL, so it runs the pending signal handlers
//! itself every [`SIGNAL_ROWS`] rows, counted across queries, each time
//! after a row is copied and with no borrowed entry held; a dict walk then
//! re-reads its table, as after any Python code.  The dict loops count down
//! in a local, written back at the end of the query.  Rejected: a look per
//! row (a call on the hottest loop); a look per query (a query of millions
//! of documents would never look); comparing the row count against a mark
//! (more instructions an entry than the countdown, measured).
//!
//! Why the pytrec_eval qrels are checked in the same walk that encodes them
//! (the checks over a whole query only at its first entry that is not
//! `str` -> `int`): a walk of its own for the checks cost a tenth of the
//! encoding.  Rejected: checking the types in Python before the call (a
//! second pass over every entry).

use super::super::ids::{self, At, Place, Role};
use super::super::{to_arrays, to_py, EncodedArrays};
use super::walk::{items, plain_entry, DictWalk};
use crate::core::encode::{Builder, Kind};
use crate::core::error::Error;
use crate::core::eval;
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Rows between two runs of the pending signal handlers: a fraction of a
/// millisecond of work, and a share of a row's cost too small to measure.
const SIGNAL_ROWS: u32 = 1 << 16;

/// Counts one row against `left` (a dict loop's copy of the encoder's
/// `signals_in`, or that field itself); when the count runs out, runs the
/// pending signal handlers (Ctrl-C's `KeyboardInterrupt` is their error) and
/// starts it again.  `true` when they ran: they are Python code, so a dict
/// walk re-reads its table ([`DictWalk::ran_python`]).  Called only where
/// nothing borrowed from the input is held.
#[inline(always)]
fn count_row(py: Python<'_>, left: &mut u32) -> PyResult<bool> {
    *left -= 1;
    if *left != 0 {
        return Ok(false);
    }
    *left = SIGNAL_ROWS;
    run_signal_handlers(py)?;
    Ok(true)
}

/// The rare half of [`count_row`], out of the loops.
#[cold]
#[inline(never)]
fn run_signal_handlers(py: Python<'_>) -> PyResult<()> {
    py.check_signals()
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
    /// Rows left before the pending signal handlers run ([`count_row`]).
    signals_in: u32,
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
        let qid = ids::id_string(qobj, Place::new(Role::Query, At::Top))?;
        let before = self.b.num_queries();
        let q = self.b.query(qid.as_bytes()).map_err(|e| self.err(e))?;
        if (q as usize) < before {
            // `1` and `"1"`, a `str` subclass with its own `__hash__`, or a
            // mapping that repeats a key: two queries would merge into one.
            return Err(self.err(Error::InvalidInput(ids::twice_text(&qid, qobj))));
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
                let place = Place::new(Role::Doc, At::Query(&qid));
                let doc = ids::id_bytes(d, &mut self.dbuf, place)?;
                self.b
                    .row(q, doc, (n - i) as f64)
                    .map_err(|e| to_py(self.py, e))?;
                // The ids are owned references: nothing borrowed is held.
                count_row(self.py, &mut self.signals_in)?;
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
    /// checks before it reads), then the general path from that entry on:
    /// one walk (see the module note).
    fn pytrec_judgments(
        &mut self,
        qobj: &Bound<'py, PyAny>,
        d: &Bound<'py, PyDict>,
    ) -> PyResult<()> {
        // An error of the query id comes after the entries' checks.
        let after_checks = |e: PyErr| check_pytrec_judgments(d).err().unwrap_or(e);
        let qid = ids::id_string(qobj, Place::new(Role::Query, At::Top)).map_err(after_checks)?;
        let before = self.b.num_queries();
        let q = self
            .b
            .query(qid.as_bytes())
            .map_err(|e| after_checks(self.err(e)))?;
        if (q as usize) < before {
            let e = Error::InvalidInput(ids::twice_text(&qid, qobj));
            return Err(after_checks(self.err(e)));
        }
        pyo3::sync::critical_section::with_critical_section(d.as_any(), || {
            let mut walk = DictWalk::new(d);
            let mut scratch = Vec::new();
            let mut checked = false;
            let mut left = self.signals_in;
            while let Some((k, v)) = walk.next(|| format!("the documents of query {qid:?}"))? {
                // SAFETY: the GIL is held, `k` and `v` are the live entry just
                // returned (type pointer checks), and the bytes are copied by
                // `row` at once.
                if !checked && unsafe { ffi::PyLong_CheckExact(v) } != 0 {
                    if let Some((doc, value)) = unsafe { plain_entry(k, v, &mut scratch) } {
                        self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))?;
                        if count_row(self.py, &mut left)? {
                            walk.ran_python();
                        }
                        continue;
                    }
                }
                self.signals_in = left;
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
                left = self.signals_in;
                walk.ran_python();
            }
            self.signals_in = left;
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
        let mut left = self.signals_in;
        while let Some((k, v)) = walk.next(|| format!("the documents of query {qid:?}"))? {
            // SAFETY: the GIL is held, `k` and `v` are the live entry just
            // returned, and the bytes are copied by `row` at once.
            if let Some((doc, value)) = unsafe { plain_entry(k, v, &mut scratch) } {
                self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))?;
                if count_row(self.py, &mut left)? {
                    walk.ran_python();
                }
                continue;
            }
            self.signals_in = left;
            // SAFETY: as above; owned references from here on, as the general
            // path may run Python code (`__float__`, `__str__`).
            let (dobj, vobj) = unsafe {
                (
                    Bound::from_borrowed_ptr(self.py, k),
                    Bound::from_borrowed_ptr(self.py, v),
                )
            };
            self.entry(q, qid, &dobj, &vobj)?;
            left = self.signals_in;
            walk.ran_python();
        }
        self.signals_in = left;
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
        let place = Place::new(Role::Doc, At::Query(qid));
        let doc = ids::id_bytes(dobj, &mut self.dbuf, place)?;
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
        self.b.row(q, doc, value).map_err(|e| to_py(self.py, e))?;
        // `doc` is copied: nothing borrowed is held.
        count_row(self.py, &mut self.signals_in).map(drop)
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
pub(crate) fn encode_mapping<'py>(
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
        signals_in: SIGNAL_ROWS,
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
