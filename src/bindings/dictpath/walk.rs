//! The walk of a run dict ([`walk`]): every `{query: {doc: score}}` entry
//! read once, under the GIL and without running Python code, into numbers
//! (its score, the judged row it matches or none, and its id's UTF-8
//! borrowed from the key), put in chunks of whole queries
//! (`super::chunk`), each chunk ranked and scored.
//!
//! Reading ([`read_run`]): the run dict and each query's dict are read from
//! their entry tables (`bindings::layout::DictEntries`, the key and value
//! objects a few entries ahead prefetched; `PyDict_Next` where the layout is
//! not known), and a query's judged-id table, probed at random by every
//! entry, is asked for whole when the query is found.  Any entry the path
//! does not take ([`entry`]), a query id with no UTF-8 form, or a query of
//! the run the qrels lack whose entries are not of that kind, returns `None`
//! before any Python code runs, and the caller takes the general path.
//! Run-only queries are read too, so that their errors are the general
//! path's.
//!
//! Ctrl-C: the walk holds the GIL and must run no Python code (a signal
//! handler could free the keys whose bytes a chunk borrows), so it does not
//! run the handlers; before each full chunk is handed on, it asks whether
//! SIGINT came (`PyOS_InterruptOccurred`, a flag read and cleared, no
//! Python code), and if so stops reading, waits for the chunks in hand and
//! raises `KeyboardInterrupt`, as Python's own SIGINT handler would.  Only
//! when that handler is Python's own (`signal.default_int_handler`): a
//! program's handler is left to run when the call ends, as it was set to.
//! A small run (one chunk) is not watched: the look for the handler would
//! cost a RAG pipeline's call more than its work.
//!
//! Scoring: a small run (at most `SERIAL_ROWS` entries: one query at a time,
//! a RAG pipeline's call) is scored in this thread, in order.  With two
//! threads or more, each full chunk goes to one pool thread
//! (`bindings::pipeline`) that ranks and scores it while this thread reads
//! the next; the last chunk is scored here, on the whole pool.  The chunks
//! go in order, so the values are the same floats as a serial walk's.  The
//! walk waits for the pool thread with the GIL held, since the ranking reads
//! the ids' bytes borrowed from the run's keys.  A kernel's error, a bad
//! `RANKLENS_NUM_THREADS` or a pool that cannot start returns `None` too,
//! so that the error comes as the general path gives it (after the run's
//! checks and the caller's warnings; a kernel's names the first query in
//! qrels order).
//!
//! Rejected alternatives (figures in the performance notes): for each query
//! the next query's slot in the query table and its dict's keys prefetched,
//! or each entry's query, table and first entries asked for one entry ahead:
//! within the noise; the key and value objects 12 entries ahead instead of
//! 6: no better; the ranking on this thread as a separate pass after the
//! walk: out of cache by then.

use super::chunk::{Chunk, Chunks, CHUNK_ROWS};
use super::judge::DictJudgments;
use crate::bindings::evaluate::side;
use crate::bindings::pipeline::{lock, Pipe};
use crate::bindings::{to_py, SideArrays};
use crate::core::encode::SERIAL_ROWS;
use crate::core::error::Error;
use crate::core::eval::{self, rank_key};
use crate::core::metrics::MetricSpec;
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::cell::Cell;
use std::hash::BuildHasher;
use std::sync::Mutex;

/// Whether SIGINT's handler is Python's own (`signal.default_int_handler`),
/// which raises `KeyboardInterrupt` and nothing else; `false` if it cannot
/// be told.
fn default_sigint(py: Python<'_>) -> bool {
    let is_default = || -> PyResult<bool> {
        let signal = py.import("signal")?;
        let handler = signal.call_method1("getsignal", (signal.getattr("SIGINT")?,))?;
        Ok(handler.is(&signal.getattr("default_int_handler")?))
    };
    is_default().unwrap_or(false)
}

/// One run entry as the dict path reads it: an exact `str` key with a UTF-8
/// form (its bytes, borrowed) and an exact `float` or `int` value, finite as
/// a double, `-0.0` as `0.0`, rounded to a 32-bit float if asked (as
/// `Builder` does both); `None` otherwise (the general path decides).
///
/// # Safety
/// The GIL is held, `k` and `v` are a live dict entry, and the bytes are used
/// before any Python code runs.
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
pub(super) unsafe fn entry<'a>(
    k: *mut ffi::PyObject,
    v: *mut ffi::PyObject,
    round_f32: bool,
) -> Option<(&'a [u8], f64)> {
    if ffi::PyUnicode_CheckExact(k) == 0 {
        return None;
    }
    let value = crate::bindings::encode::exact_number(v)?;
    if !value.is_finite() {
        return None;
    }
    let doc = crate::bindings::utf8_raw(k)?;
    let value = value + 0.0;
    Some((
        doc,
        if round_f32 {
            (value as f32) as f64
        } else {
            value
        },
    ))
}

/// Whether the run dict `scores` holds at most `limit` rows (its inner
/// dicts' lengths summed, stopping once past `limit`; a value that is not a
/// dict counts as past it).
pub(super) fn at_most_rows(scores: &Bound<'_, PyDict>, limit: usize) -> bool {
    let mut total = 0usize;
    for (_, v) in scores.iter() {
        match v.cast::<PyDict>() {
            Ok(d) => total += d.len(),
            Err(_) => return false,
        }
        if total > limit {
            return false;
        }
    }
    true
}

/// What [`walk`] scores, besides the metrics.
pub(super) struct WalkArgs {
    pub(super) opts: eval::Options,
    pub(super) specs: Vec<MetricSpec>,
    /// `RANKLENS_NUM_THREADS` or this.
    pub(super) threads: Option<usize>,
    /// Scores rounded to 32-bit floats (trec_eval 9.0.8, the drop-in), or
    /// kept as doubles (trec_eval 10.0, `ranklens.evaluate`).
    pub(super) round_f32: bool,
    /// Score every qrels query (those the run lacks on an empty ranking), in
    /// qrels order, and list the run-only query ids; else only the queries
    /// of both, in run order.
    pub(super) all: bool,
}

/// What [`walk`] found: the run's scored query ids (run order), each one's
/// qrels index, their values (a row each), and (`all`) the run-only ids.
pub(super) struct Walked<'py> {
    pub(super) qids: Bound<'py, PyList>,
    pub(super) rows: Vec<usize>,
    pub(super) values: Vec<f64>,
    pub(super) run_only: Bound<'py, PyList>,
}

/// Score the run dict `scores` against `judged` (from [`super::dict_judgments`] on
/// the same qrels, encoded as `qrels`); `None` when the input needs the
/// general path (see the module note).
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
pub(super) fn walk<'py>(
    py: Python<'py>,
    judged: &DictJudgments,
    qrels: &SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    args: WalkArgs,
) -> PyResult<Option<Walked<'py>>> {
    let err = |e| to_py(py, e);
    let WalkArgs {
        opts,
        specs,
        threads,
        round_f32,
        all,
    } = args;
    let Ok(scores) = scores.cast::<PyDict>() else {
        return Ok(None);
    };
    let q = side(qrels)?.map_err(err)?;
    if eval::check(&specs, &opts).is_err()
        || !q.extra.is_empty()
        || q.num_queries() + 1 != judged.offsets.len()
    {
        return Ok(None);
    }
    let specs = eval::resolve(&specs, &q);
    let nm = specs.len();
    // A bad `RANKLENS_NUM_THREADS` or a pool that cannot start: the general
    // path's error, in its order (after the run's own checks).
    let Ok(threads) = eval::thread_count(threads) else {
        return Ok(None);
    };
    // A small run (one query scored at a time: a RAG pipeline's call, a
    // per-query loop) is scored here, in order: the pool's hand-over would
    // cost more than its work.
    let small = at_most_rows(scores, SERIAL_ROWS);
    // A set number of threads: that pool, kept from call to call.
    let pool = match threads {
        Some(n) if n > 1 && !small => match crate::core::pool::sized_pool(n) {
            Ok(pool) => Some(pool),
            Err(_) => return Ok(None),
        },
        _ => None,
    };
    let ctx = Chunks {
        q: &q,
        specs: &specs,
        opts: &opts,
        parallel: threads != Some(1) && !small,
    };
    // Ctrl-C, looked at before each full chunk goes on (see the module note).
    let watch = !small && default_sigint(py);
    let interrupted = Cell::new(false);
    let ctrl_c = || {
        // SAFETY: the GIL is held; the call reads and clears a flag and runs
        // no Python code.
        let hit = watch && unsafe { ffi::PyOS_InterruptOccurred() } != 0;
        if hit {
            interrupted.set(true);
        }
        hit
    };
    let stopped = || -> PyResult<()> {
        match interrupted.get() {
            true => Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
            false => Ok(()),
        }
    };
    let mut values: Vec<f64> = Vec::new();
    // Score a chunk on the pool, the GIL released, into `values`; `false`
    // for a kernel's error.
    let score_here = |chunk: &mut Chunk, values: &mut Vec<f64>| -> bool {
        chunk.rank(false);
        let base = values.len();
        values.resize(base + chunk.spans.len() * nm, 0.0);
        let out = &mut values[base..];
        let c = &*chunk;
        let done = py.detach(|| match &pool {
            Some(pool) => pool.install(|| ctx.score(c, out)),
            None if ctx.parallel => {
                crate::core::pool::install(|| ctx.score(c, out)).map_err(Error::InvalidInput)?
            }
            None => ctx.score(c, out),
        });
        chunk.clear();
        done.is_ok()
    };
    // With two threads or more, each full chunk is scored on a pool thread
    // while this one reads the next (see the module note); the last one
    // here, on the whole pool.
    let read = |flush: &mut dyn FnMut(&mut Chunk) -> bool| {
        read_run(py, judged, &q, scores, all, round_f32, flush)
    };
    let got = if ctx.parallel {
        let serial = Chunks {
            parallel: false,
            ..ctx
        };
        let pipe: Pipe<Chunk, Chunk> = Pipe::default();
        let scored = Mutex::new(Scored::default());
        let (pipe, serial, shared) = (&pipe, &serial, &scored);
        // The pool thread: each chunk ranked and scored in turn, its values
        // appended in chunk order.
        let work = || {
            let mut out = Vec::new();
            pipe.work(|mut chunk| {
                out.clear();
                out.resize(chunk.spans.len() * nm, 0.0);
                chunk.rank(true);
                let ok = serial.score(&chunk, &mut out).is_ok();
                chunk.clear();
                let mut s = lock(shared);
                if ok {
                    s.values.extend_from_slice(&out);
                } else {
                    s.failed = true;
                }
                chunk
            })
        };
        // A full chunk handed over (`chunk` becomes an empty one); `false`
        // once a kernel has failed.
        let mut put = |chunk: &mut Chunk| {
            if ctrl_c() || lock(shared).failed {
                return false;
            }
            let spare = pipe.spare().unwrap_or_default();
            pipe.put(std::mem::replace(chunk, spare));
            true
        };
        macro_rules! run {
            () => {
                |scope| {
                    scope.spawn(move |_| work());
                    let got = read(&mut put);
                    pipe.close();
                    // The chunks still queued, waited for with the GIL held:
                    // their ranking reads the run's keys (see `Chunk`).
                    pipe.wait();
                    got
                }
            };
        }
        let got = match &pool {
            Some(pool) => Ok(pool.in_place_scope(run!())),
            None => crate::core::pool::in_place_scope(run!()),
        };
        let Ok(got) = got else {
            return Ok(None);
        };
        stopped()?;
        let Some(mut got) = got? else {
            return Ok(None);
        };
        let done = scored.into_inner().unwrap_or_else(|e| e.into_inner());
        if done.failed {
            return Ok(None);
        }
        values = done.values;
        if !score_here(&mut got.chunk, &mut values) {
            return Ok(None);
        }
        got
    } else {
        let got = read(&mut |chunk| !ctrl_c() && score_here(chunk, &mut values));
        stopped()?;
        let Some(mut got) = got? else {
            return Ok(None);
        };
        if !score_here(&mut got.chunk, &mut values) {
            return Ok(None);
        }
        got
    };
    Ok(Some(Walked {
        qids: got.qids,
        rows: got.rows,
        values,
        run_only: got.run_only,
    }))
}

/// What [`read_run`] read: the query ids, their qrels indices, the run-only
/// ids, and the last chunk, not scored yet.
pub(super) struct Read<'py> {
    pub(super) qids: Bound<'py, PyList>,
    pub(super) rows: Vec<usize>,
    pub(super) run_only: Bound<'py, PyList>,
    pub(super) chunk: Chunk,
}

/// What the pipeline's pool thread scored: the values of the chunks in
/// order, and whether a kernel failed.
#[derive(Default)]
struct Scored {
    values: Vec<f64>,
    failed: bool,
}

/// The walk of [`walk`]: each query read, ranked and put in a chunk,
/// `flush` called on every full chunk (`false`: a kernel failed, the
/// general path decides); `None` when the input needs the general path.
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
#[allow(clippy::too_many_arguments)]
pub(super) fn read_run<'py>(
    py: Python<'py>,
    judged: &DictJudgments,
    q: &eval::Side<'_>,
    scores: &Bound<'py, PyDict>,
    all: bool,
    round_f32: bool,
    flush: &mut dyn FnMut(&mut Chunk) -> bool,
) -> PyResult<Option<Read<'py>>> {
    let qids = PyList::empty(py);
    let run_only = PyList::empty(py);
    let mut rows: Vec<usize> = Vec::with_capacity(scores.len().min(q.num_queries()));
    // The current chunk: per query its qrels index and rows, the rows'
    // scores in trec order and judged rows.
    let mut chunk = Chunk::default();
    // SAFETY (the walks): the GIL is held and no Python code runs in
    // this loop (exact types only, `str` hashes and compares), so the
    // dicts cannot change and borrowed entries stay valid.
    let mut run = unsafe { crate::bindings::layout::DictEntries::new(scores.as_ptr()) };
    while let Some((k, v)) = unsafe { run.next() } {
        if unsafe { ffi::PyUnicode_CheckExact(k) == 0 || ffi::PyDict_Check(v) == 0 } {
            return Ok(None);
        }
        // A query id with no UTF-8 form (a lone surrogate) is the general
        // path's error, also for a query the qrels lack.
        let Some(qtext) = (unsafe { crate::bindings::utf8_raw(k) }) else {
            return Ok(None);
        };
        let qi = judged.query(qtext, q);
        let at = match qi {
            Some(qi) => Some(judged.table_of(qi).ok_or_else(|| {
                PyRuntimeError::new_err("internal: the judgments do not match the qrels")
            })?),
            None => None,
        };
        if let Some((start, mask, _)) = at {
            // The query's judged-id table, probed at random below: its
            // lines asked for at once (see the module note).
            if let Some(t) = judged.table.get(start..=start + mask) {
                let t = t.as_ptr().cast::<u8>();
                for line in (0..(mask + 1) * 8).step_by(64) {
                    crate::core::prefetch(t.wrapping_add(line));
                }
            }
        }
        let a = chunk.pending.len();
        // SAFETY: `v` is a live dict; no Python code runs (see above).
        let mut docs = unsafe { crate::bindings::layout::DictEntries::new(v) };
        while let Some((dk, dv)) = unsafe { docs.next() } {
            let Some((doc, score)) = (unsafe { entry(dk, dv, round_f32) }) else {
                return Ok(None);
            };
            let Some(at) = at else {
                continue; // run-only: checked, not scored
            };
            let j = judged.find(at, judged.hasher.hash_one(doc), doc, q);
            chunk
                .pending
                .push((rank_key(score), j, doc.as_ptr(), doc.len()));
        }
        let Some(qi) = qi else {
            if all {
                // SAFETY: `k` is a live entry of `scores`.
                run_only.append(unsafe { Bound::from_borrowed_ptr(py, k) })?;
            }
            continue;
        };
        chunk.spans.push((qi, a, chunk.pending.len()));
        rows.push(qi);
        // SAFETY: `k` is a live entry of `scores`.
        qids.append(unsafe { Bound::from_borrowed_ptr(py, k) })?;
        if chunk.pending.len() >= CHUNK_ROWS && !flush(&mut chunk) {
            return Ok(None);
        }
    }
    if all {
        // The qrels queries the run lacks: an empty ranking each.
        let mut seen = vec![false; q.num_queries()];
        for &qi in &rows {
            seen[qi] = true;
        }
        for (qi, _) in seen.iter().enumerate().filter(|(_, &s)| !s) {
            let a = chunk.pending.len();
            chunk.spans.push((qi, a, a));
            rows.push(qi);
            if chunk.spans.len() >= CHUNK_ROWS && !flush(&mut chunk) {
                return Ok(None);
            }
        }
    }
    Ok(Some(Read {
        qids,
        rows,
        run_only,
        chunk,
    }))
}
