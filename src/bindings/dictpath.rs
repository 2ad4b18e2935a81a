//! The pytrec_eval drop-in's dict path: `{query: {doc: score}}` scored
//! against judgments known in advance, without encoding a `Run`.
//!
//! Why no `Run`: the drop-in's judgments are known before any run is read
//! (`RelevanceEvaluator.__init__`), so each run entry only has to become
//! numbers: its score (rounded to a 32-bit float, as trec_eval stores it),
//! the judged entry it matches (or none) and, for tied scores only, its id's
//! bytes.  [`DictJudgments`] holds, per judged query, an open-addressing
//! table of the judged document ids by a hash of their UTF-8, built from the
//! encoded qrels without the GIL (no second walk of the qrels objects); a run
//! key is matched by that hash of its UTF-8 (borrowed from the object), then
//! by its text against the qrels' own arena.  A query's entries are put in
//! trec_eval's order (score descending, then document id descending by
//! bytes; rows already in that order are not sorted) while the walk holds
//! the GIL (on a pool thread, see below), the ids' UTF-8 borrowed from the
//! live keys; the kernels then run through `core::eval::score_rows` with the
//! same label vectors as `evaluate`, so the values are bit-identical by
//! construction.
//!
//! The path takes only the common input: exact `str` query and document ids
//! with a UTF-8 form, `dict`s (subclasses such as `parse_run`'s `defaultdict`
//! included: read with `PyDict_Next`, as the general path reads them), exact
//! `float` or `int` scores that are finite as doubles.  On anything else it
//! returns `None` before any Python code runs, and the drop-in takes the general path (encode a `Run`, then `evaluate`), which
//! gives every check and message; run-only queries are read too, so that
//! their errors are the general path's.  Not on free-threaded Python (the
//! borrowed keys would need every inner dict locked) nor in a stable-ABI
//! build for Windows before 3.10 (no borrowed UTF-8): the general path.
//!
//! Where the time goes (`perf`, the 10,000 x 100 data of
//! `benches/bench_compat.py`, `evaluate_dict` alone, the LTO build for the
//! stable ABI on CPython 3.11, one thread, load average 2-3 from other jobs,
//! 2026-11-27, commit c6549cd): ~46 ns of CPU a run entry (48-51 before the
//! changes below, alternating builds).  Of the samples: [`walk`] itself
//! ~33% (inlined: the type checks, the judged-id probe, the rank keys, the
//! ranking, the chunk buffers); `PyDict_Next` ~12% (the first touch of each
//! key); the kernels ~12% (`Chunks::one`, `PrefixBuf::build`); `memcmp`
//! ~3% (the text of a hash match, tied ids); the UTF-8 hash ~3%; the query
//! lookup ~3%; the rest is the profiled script's own loading of the data.
//! On the 100,000 x 100 data (10M entries, CPU, one thread, load ~2) the
//! drop-in's 5 measure call is `__init__` ~0.13 s (0.22 s before), the
//! walk and kernels ~0.46 s and the result dicts ~0.1 s: 0.61-0.70 s against
//! pytrec_eval's 2.7-3.0 s, 4.1-4.4x in three runs (3.4-3.6x for the
//! build before, in the same runs); issue #15 asks 6x (~0.47 s in all),
//! which would need the walk at ~25 ns an entry.  MTEB's measure set:
//! 3.8-4.1x (3.3-4.0x before; 5x asked).
//!
//! Changed, 2026-11-27: the judged-id tables are built from the encoded
//! qrels (a foldhash of each id's UTF-8), without the GIL, instead of from
//! the qrels' `str` objects and their Python hashes: `__init__` no longer
//! walks the qrels a second time nor copies their ids (221 -> 128 ms at
//! 100k queries, 1M judgments, CPU, best of 5, load ~3); a run key's UTF-8
//! is hashed instead of reading its cached Python hash, no slower (the key
//! is touched for its type and text anyway).  The run's query ids are
//! matched through a table of the qrels' own query ids, not a `{query id:
//! index}` dict, whose lookup was ~6% of the samples (its index, entry,
//! stored key and that key's text each a cache miss); the dict is no longer
//! built in `__init__` (17 ms at 100k queries).  Keys and scores are read
//! from the objects where the layout is known (`bindings::layout`).  The
//! same walk serves `ranklens.evaluate(dict, dict)`
//! ([`evaluate_dict_all`]: scores as doubles, every qrels query, the missing
//! and ignored lists as the general path gives them): 0.52-0.55 s against
//! 0.67-0.73 s with `Run(dict)` (100k x 100, 5 set, CPU, one thread, three
//! runs each), 4.9-5.2x pytrec_eval (3.7-3.9x before) where #15 asks 8x.  A kernel's error, a bad
//! `RANKLENS_NUM_THREADS` or a pool that cannot start hand the input to the
//! general path too, so that its error comes as it comes there (after the
//! run's checks and the caller's warnings; a kernel's names the first query
//! in qrels order).  Ctrl-C is not seen during the walk
//! (it holds the GIL and runs no Python code), as in the drop-in before.
//!
//! Changed, 2026-11-27 (on d9ba476; the 100,000 x 100 dicts, CPython 3.11,
//! LTO build, best of 5 alternating in one process, load 2.7-5 from other
//! jobs, so CPU times: the wall times of that load say nothing):
//!
//! * the run dict and each query's dict are read from their entry tables
//!   (`layout::DictEntries`), the key and value objects six entries ahead
//!   prefetched, where `PyDict_Next` took each key's first cache miss in
//!   the loop;
//! * a query's judged-id table (its 4+ cache lines, probed at random by
//!   every entry) is prefetched whole when the query is found;
//! * with two threads or more, every full chunk is handed to one pool
//!   thread ([`Pipe`]) that ranks and scores it while this thread reads the
//!   next, the last chunk ranked and scored here (on the whole pool); the
//!   chunks go in order, so the values are the same floats as before, and a
//!   kernel's error still hands the whole input to the general path.  The
//!   ranking reads the ids' bytes borrowed from the run's keys: the walk
//!   holds the GIL and runs no Python code until the pool thread is done
//!   (it waits for it with the GIL held).  The ranking (sorts, `memcmp` of
//!   tied ids) and the kernels (~11% of the CPU) leave the critical path
//!   where a second core is free.
//!
//! The thread doing the walk (the drop-in's `evaluate` with its result
//! dicts, 5 measures): 45.0 -> 38.3 ns of CPU an entry with the kernels
//! on the pool thread, 34.8 with the ranking there too (37.6 -> 34.8 in one
//! alternation; ranking on this thread as a separate pass over the chunk,
//! out of cache by then: 43.6); all threads 53.9 -> ~46-57 (the pool
//! thread's share varies with the load).  The drop-in's whole call
//! (`__init__` included): thread 55.3 -> 41.5, MTEB's 35 measures 73.4
//! (ranking here) -> 66.2, the pool thread's share (~30) under this
//! thread's, so it keeps up; `ranklens.evaluate(dict, dict)`: thread 44.8
//! -> 33.3.  Each part alone: the tables and prefetch ~-10%, the judged
//! tables ~-3% (one thread, 52.3 -> 50.6).  Tried, not kept: for each query
//! the next query's slot in the query table and its dict's keys object
//! prefetched (`peek` at the next entry): -2.3 and -1.3 ns in one
//! alternation, +0.6 and -0.6 in the next, within the noise; again, deeper
//! (2026-11-27, idle, alternated processes, best of 6): each run entry's
//! query looked up, its judged-id table and its dict's first entries asked
//! for one entry ahead, its query slot two ahead: 0.372-0.388 s against
//! 0.367-0.386 for the drop-in's 5 measure call (the probe's samples stay:
//! they wait on the hash of the key's text, not on the table); the key and
//! value objects 12 entries ahead instead of 6: 0.392-0.394 against
//! 0.380-0.398.  What is left
//! (`perf`, the walking thread, before the ranking moved): the walk itself
//! ~45% of its samples, of which the judged-table probe still ~15% (its
//! load, or the hash of the key's text it waits on: without precise events
//! the two cannot be told apart), the query lookup ~5% (a slot of a 2 MB
//! table and the qrels' own text, both misses), the hash
//! (`hash_bytes_long`, ids over 16 bytes) ~2%; the result dicts
//! (`nested_dict`, `PyDict_SetItem`) ~10%; the rest is the interpreter's.
//!
//! With two cores free (load ~2, when the other jobs left them: these runs
//! had both), the drop-in's 5 measure call took 0.437-0.474 s of wall
//! time, `ranklens.evaluate(dict, dict)` 0.33 s, against pytrec_eval's
//! ~2.7 s on the same data (6.0x and 8.1x); with one core left, 0.60 and
//! 0.49 s.  `python benches/bench_compat.py --queries 100000 --repeat 3
//! --sets 5,mteb` at load 2.3-2.7 had one core: 4.5x, MTEB 3.9x, 5.5x.
//!
//! Calls of one process vary on this VM, and not with the load
//! (2026-11-27, idle, the drop-in's 5 measure call on the 100k x 100 dicts,
//! five calls a process, five processes): 0.34-0.48 s in most calls,
//! 0.65-0.86 s in runs of them, sometimes a process's first few, sometimes
//! a whole process, while a plain-Python loop over the same entries, timed
//! before each call, held 0.36-0.39 s.  `perf` split by call: in the slow
//! ones the walking thread's CPU doubles (`read_run` 1,905 samples a call
//! against 1,008, its stores of the chunk's rows and its stack reloads),
//! the key hash triples (229 against 73), the pool thread's share barely
//! moves, and page zeroing is small (67 samples).  Not found in the code:
//! the chunk buffers are reused (2-10 of 304 chunks a call found no spare
//! one); the memory system of the host is the likely cause (a random
//! pointer chase over 1 GB here costs ~350 ns an access).
//!
//! The result dicts (`nested_dict`): through `PyDict_SetItem` on a copy of
//! the previous query's dict, ~50 ns a value (10k queries x 35 MTEB
//! measures, `perf`: its key lookups ~26%); values and row dicts are stored
//! by position in dict copies instead, and equal values of a column share a
//! float: see the notes of `bindings::evaluate`.
//!
//! Measured and changed: one buffer of pending rows for the whole run (24
//! bytes an entry) spent ~17% of the samples in first-touch page faults; the
//! rows are scored every [`CHUNK_ROWS`] instead, from buffers reused while
//! in cache.  Judged ids held as `str` objects and matched as
//! `ranklens.Scorer` matches ids (pointer, then hash, then text, the text
//! read from the held object): `evaluate_dict` 52.0-53.0 ms a million
//! entries against 49.1-50.1 with the arena (alternating builds, best of 7,
//! load 2.5); the arena also holds no reference per id.  The pointer check
//! is gone with the objects (a freed id's address can be reused); it would
//! only decide for a run key that is the qrels' own object, which neither
//! the bench (ids parsed from files) nor BEIR (qrels from a file, results
//! from the corpus ids) gives.  Sizing the judged-id tables once instead of
//! growing them query by query: no change (`dict_judgments` 97-103 ms either
//! way on 1M judgments, quick build, idle machine); its time is the first
//! touch of each judged `str`, which encoding the qrels in `__init__` pays a
//! second time (since 2026-11-27 the tables come from the encoded qrels, and
//! the arena of copied ids is gone with that: the qrels' own is read).  Built
//! from the encoded qrels, the tables sized once (one zeroed allocation) and
//! filled a query per task on the pool: `dict_judgments` of 1M judgments
//! (100k queries) 27.6-28.2 -> 14.9-15.7 ms of CPU, 9.5-9.7 ms wall on two
//! threads, 15.7 with `RANKLENS_NUM_THREADS=1` (best of 9, load ~5,
//! 2026-11-27, alternating builds): the regrowth of one table for all
//! queries was half of it.

// Where the path is off (see above) its scoring half is unused.
#![cfg_attr(
    any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))),
    allow(dead_code, unused_imports)
)]

use super::evaluate::{eval_setup, side, MetricArg};
use super::{to_py, SideArrays};
use crate::core::encode::SERIAL_ROWS;
use crate::core::error::Error;
use crate::core::eval::{self, key_score, rank_key, RankScratch, Ranking};
use crate::core::metrics::MetricSpec;
use hashbrown::DefaultHashBuilder;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use std::hash::BuildHasher;

/// No judged entry.
const NONE: u32 = u32::MAX;

/// The judged documents of encoded qrels, for matching run keys by the hash
/// of their UTF-8 (see the module note).
#[pyclass(frozen, module = "ranklens._ranklens")]
pub(super) struct DictJudgments {
    /// Qrels row offsets per encoded query.
    offsets: Vec<usize>,
    /// Per query: first slot in `table` and mask of its power-of-two size.
    spans: Vec<(usize, usize)>,
    /// Open addressing by hash, one table per query: the high 32 bits of
    /// the id's hash and its row + 1 (0: an empty slot).  Eight bytes a
    /// slot, so that a probe for an unjudged id (most of them) touches one
    /// or two cache lines of the query's table and nothing else.
    table: Vec<u64>,
    /// The query ids, open addressing as `table` (tag and query + 1), one
    /// table for all; `queries.len() - 1` is its mask.  Why not a `dict`
    /// `{query id: index}`: its lookup touches its index, its entry, the
    /// stored key object and that key's text, each a cache miss for a key
    /// that is not the run's own object (~6% of `evaluate_dict`'s samples).
    queries: Vec<u64>,
    /// Hashes an id's UTF-8, for the tables and for the run keys alike.
    hasher: DefaultHashBuilder,
}

/// The high half of a hash, as kept in a table slot.
#[inline]
fn tag(hash: u64) -> u64 {
    hash & 0xffff_ffff_0000_0000
}

impl DictJudgments {
    /// The tables of encoded qrels `q`; `None` for a query of 2^32 - 1
    /// judged rows or more (the general path then).  The queries' tables
    /// are filled in parallel (`parallel`: on the current rayon pool).
    fn build(q: &eval::Side<'_>, parallel: bool) -> Option<DictJudgments> {
        let offsets: Vec<usize> = q.offsets.iter().map(|&o| o.max(0) as usize).collect();
        let hasher = DefaultHashBuilder::default();
        let mut spans = Vec::with_capacity(offsets.len().saturating_sub(1));
        let mut total = 0usize;
        for w in offsets.windows(2) {
            let n = w[1].saturating_sub(w[0]);
            if n >= u32::MAX as usize {
                return None;
            }
            let size = (2 * n).next_power_of_two().max(4);
            spans.push((total, size - 1));
            total += size;
        }
        let mut table = vec![0u64; total];
        let mut parts: Vec<&mut [u64]> = Vec::with_capacity(spans.len());
        let mut rest = table.as_mut_slice();
        for &(_, mask) in &spans {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut_checked(mask + 1)?;
            parts.push(part);
            rest = tail;
        }
        // One query's table: its ids by hash, open addressing.
        let fill = |(qi, part): (usize, &mut [u64])| -> bool {
            let (Some(&a), Some(&b)) = (offsets.get(qi), offsets.get(qi + 1)) else {
                return false;
            };
            let Some(ids) = q.doc_ids.get(a..b) else {
                return false;
            };
            let mask = part.len() - 1;
            for (j, &d) in ids.iter().enumerate() {
                let hash = hasher.hash_one(q.docs.get(d as usize));
                // Ids within a query are distinct (checked by the encoder).
                let mut slot = hash as usize & mask;
                while part.get(slot).is_some_and(|&t| t != 0) {
                    slot = (slot + 1) & mask;
                }
                let Some(t) = part.get_mut(slot) else {
                    return false;
                };
                *t = tag(hash) | (j as u64 + 1);
            }
            true
        };
        let filled = if parallel {
            parts
                .into_par_iter()
                .enumerate()
                .with_min_len(1024)
                .all(fill)
        } else {
            parts.into_iter().enumerate().all(fill)
        };
        if !filled {
            return None;
        }
        let nq = q.num_queries();
        let size = (2 * nq).next_power_of_two().max(4);
        let mut queries = vec![0u64; size];
        for i in 0..nq {
            let hash = hasher.hash_one(q.queries.get(i));
            let mut slot = hash as usize & (size - 1);
            while queries[slot] != 0 {
                slot = (slot + 1) & (size - 1);
            }
            queries[slot] = tag(hash) | (i as u64 + 1);
        }
        Some(DictJudgments {
            offsets,
            spans,
            table,
            queries,
            hasher,
        })
    }

    /// The index of the qrels query of UTF-8 `text` (`q`: the qrels the tables
    /// were built from), or `None`.
    #[inline]
    fn query(&self, text: &[u8], q: &eval::Side<'_>) -> Option<usize> {
        let hash = self.hasher.hash_one(text);
        let mask = self.queries.len().checked_sub(1)?;
        let mut slot = hash as usize & mask;
        loop {
            let t = *self.queries.get(slot)?;
            if t == 0 {
                return None;
            }
            if t & 0xffff_ffff_0000_0000 == tag(hash) {
                let i = (t as u32).wrapping_sub(1) as usize;
                if q.queries.get(i) == text {
                    return Some(i);
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Query `qi`'s table: (first slot, mask, first qrels row).
    fn table_of(&self, qi: usize) -> Option<(usize, usize, usize)> {
        let (start, mask) = self.spans.get(qi).copied()?;
        Some((start, mask, self.offsets.get(qi).copied()?))
    }

    /// The judged row (within its query, whose table is `at`) of the id of
    /// UTF-8 `text` and hash `hash` (of `self.hasher`), or `NONE`; the text
    /// is compared with the qrels' own (`q`, the qrels the tables were built
    /// from).
    #[inline]
    fn find(&self, at: (usize, usize, usize), hash: u64, text: &[u8], q: &eval::Side<'_>) -> u32 {
        let (start, mask, base) = at;
        let mut slot = hash as usize & mask;
        loop {
            let Some(&t) = self.table.get(start + slot) else {
                return NONE;
            };
            if t == 0 {
                return NONE;
            }
            if t & 0xffff_ffff_0000_0000 == tag(hash) {
                let row = (t as u32).wrapping_sub(1);
                let judged = q
                    .doc_ids
                    .get(base + row as usize)
                    .map(|&d| q.docs.get(d as usize));
                // Equal texts have equal hashes: the tag only filters.
                if judged == Some(text) {
                    return row;
                }
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// [`DictJudgments`] of encoded qrels (`arrays`), built without the GIL;
/// `None` when a query has 2^32 - 1 judged rows or more.
#[pyfunction]
pub(super) fn dict_judgments(
    py: Python<'_>,
    arrays: SideArrays<'_>,
) -> PyResult<Option<DictJudgments>> {
    let q = side(&arrays)?.map_err(|e| to_py(py, e))?;
    // On the pool of `RANKLENS_NUM_THREADS` (whose bad value is the error of
    // the qrels' encoding, just before): else in this thread, as are qrels of
    // at most `SERIAL_ROWS` rows (the pool's hand-over would cost more).
    let rows = q.offsets.last().map_or(0, |&o| o.max(0) as usize);
    Ok(py.detach(|| {
        if rows <= SERIAL_ROWS {
            return DictJudgments::build(&q, false);
        }
        eval::with_threads(None, || DictJudgments::build(&q, true))
            .unwrap_or_else(|_| DictJudgments::build(&q, false))
    }))
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
unsafe fn entry<'a>(
    k: *mut ffi::PyObject,
    v: *mut ffi::PyObject,
    round_f32: bool,
) -> Option<(&'a [u8], f64)> {
    if ffi::PyUnicode_CheckExact(k) == 0 {
        return None;
    }
    let value = super::encode::exact_number(v)?;
    if !value.is_finite() {
        return None;
    }
    let doc = super::utf8_raw(k)?;
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

/// A run entry waiting for its query's ranking: score, judged row, id bytes.
/// The score is kept as [`rank_key`] (ascending = trec_eval's descending
/// score): a ranking sorts integers, and compares bytes only within ties.
type Pending = (u64, u32, *const u8, usize);

/// Queries ahead whose tied ids [`Chunk::rank`] prefetches.
const TIES_AHEAD: usize = 2;

/// Run rows read between two scorings (see [`Chunk`]).
const CHUNK_ROWS: usize = 1 << 15;

/// Whether the run dict `scores` holds at most `limit` rows (its inner
/// dicts' lengths summed, stopping once past `limit`; a value that is not a
/// dict counts as past it).
fn at_most_rows(scores: &Bound<'_, PyDict>, limit: usize) -> bool {
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

/// Queries read, to be ranked ([`Chunk::rank`]) while the walk holds the
/// GIL, then scored: only numbers.  Scored every [`CHUNK_ROWS`] rows, so
/// that the buffers are reused while in cache (one buffer for the whole run
/// was ~17% of the time in first-touch page faults).  2^15 rows: the rows
/// as read (32 bytes each, [`Pending`]) are still in the second-level cache when ranked
/// on the pool thread; all threads' CPU of the drop-in's call 66.1 ns an
/// entry at 2^16 rows, 58.3 at 2^15, 60.0 at 2^14, 58.2 at 2^13, the
/// walking thread's 40.8-42.6 for all (one alternation, load ~2).
#[derive(Default)]
struct Chunk {
    /// Per query: its qrels index and its rows `a..b`.
    spans: Vec<(usize, usize, usize)>,
    /// The rows as read, each query's in dict order (see [`Chunk::rank`]).
    pending: Vec<Pending>,
    /// Each row's score, rows in trec order.
    ranked: Vec<f64>,
    /// Each row's judged row within its query, or `NONE`.
    found: Vec<u32>,
}

// SAFETY: the only pointers, in `pending`, borrow the UTF-8 of the keys of
// the run's query dicts; they are read ([`Chunk::rank`]) only while the walk
// that read them holds the GIL and runs no Python code (the walk waits for
// the pool thread, GIL held, before it returns: [`Pipe::wait`]), and are
// dropped with the rows once ranked.  Shared (`Sync`) only to be scored,
// after ranking, when `pending` is empty.
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`.
unsafe impl Sync for Chunk {}

impl Chunk {
    fn clear(&mut self) {
        self.spans.clear();
        self.pending.clear();
        self.ranked.clear();
        self.found.clear();
    }

    /// Each query's rows in trec_eval's order (scores, then each run of
    /// equal scores by id), into `ranked` and `found`.  Only while the dicts
    /// read are alive and unchanged: see the `Send` above.
    fn rank(&mut self, on_pool: bool) {
        // SAFETY: the ids' bytes, borrowed from keys of live dicts (above).
        let bytes = |p: &Pending| unsafe { std::slice::from_raw_parts(p.2, p.3) };
        let by_doc = |a: &Pending, b: &Pending| bytes(b).cmp(bytes(a));
        // `on_pool` (on the pool thread, [`Pipe`]): every query's rows by
        // score first; then each run of tied rows in id order, the tied ids
        // of the query `TIES_AHEAD` on prefetched.  Why: there the ids'
        // bytes are cache misses (read by the walk up to a chunk before, on
        // another core), and one `memcmp` after another waited for each
        // (~45% of the pool thread's samples on the bench's dicts, ~9 tied
        // pairs in every query of 100): the drop-in's 5 measure call on two
        // threads, all threads' CPU 0.616-0.657 -> 0.554-0.570 s (100k x
        // 100, alternated processes, best of 6, 2026-11-27, idle).  On the
        // walking thread, right after the walk, the ids are still in cache:
        // there the prefetching pass measured no gain (0.497-0.524 against
        // 0.511-0.535 s, one thread), so each query is ranked in one go.
        let sorted = |rows: &mut [Pending]| {
            if rows.windows(2).any(|w| w[0].0 > w[1].0) {
                rows.sort_unstable_by_key(|p| p.0);
            }
        };
        if on_pool {
            for &(_, a, b) in &self.spans {
                if let Some(rows) = self.pending.get_mut(a..b) {
                    sorted(rows);
                }
            }
        }
        let fetch = |rows: &[Pending]| {
            for w in rows.windows(2) {
                if w[0].0 == w[1].0 {
                    for p in w {
                        crate::core::prefetch(p.2);
                        crate::core::prefetch(p.2.wrapping_add(p.3.saturating_sub(1)));
                    }
                }
            }
        };
        let ahead = if on_pool { TIES_AHEAD } else { 0 };
        for &(_, a, b) in self.spans.iter().take(ahead) {
            fetch(self.pending.get(a..b).unwrap_or(&[]));
        }
        for (k, &(_, a, b)) in self.spans.iter().enumerate() {
            if ahead > 0 {
                if let Some(&(_, a2, b2)) = self.spans.get(k + ahead) {
                    fetch(self.pending.get(a2..b2).unwrap_or(&[]));
                }
            }
            let Some(rows) = self.pending.get_mut(a..b) else {
                continue;
            };
            if !on_pool {
                sorted(rows);
            }
            let mut i = 0;
            while i < rows.len() {
                let e = i + rows[i..].iter().take_while(|p| p.0 == rows[i].0).count();
                let tie = &mut rows[i..e];
                if tie.len() > 1 && tie.windows(2).any(|w| by_doc(&w[0], &w[1]).is_gt()) {
                    tie.sort_unstable_by(by_doc);
                }
                i = e;
            }
        }
        self.ranked
            .extend(self.pending.iter().map(|p| key_score(p.0)));
        self.found.extend(self.pending.iter().map(|p| p.1));
        self.pending.clear();
    }
}

/// What scoring a chunk needs.
struct Chunks<'a> {
    q: &'a eval::Side<'a>,
    specs: &'a [MetricSpec],
    opts: &'a eval::Options,
    /// On a pool (else in the calling thread).
    parallel: bool,
}

impl Chunks<'_> {
    /// One query of `c` into `out`, as `core::eval` scores it.
    fn one(
        &self,
        s: &mut RankScratch,
        c: &Chunk,
        span: (usize, usize, usize),
        out: &mut [f64],
    ) -> Result<(), Error> {
        let (qi, a, b) = span;
        let q = self.q;
        let (Some(&ja), Some(&jb)) = (q.offsets.get(qi), q.offsets.get(qi + 1)) else {
            return Err(Error::InvalidInput(
                "internal: a query is out of range".into(),
            ));
        };
        let found = &c.found[a..b];
        let ranking = Ranking {
            scores: &c.ranked[a..b],
            pos: &[],
            find: |i: usize| found.get(i).filter(|&&j| j != NONE).map(|&j| j as usize),
        };
        let name = || format!("query {:?}", String::from_utf8_lossy(q.queries.get(qi)));
        let jlabels = &q.values[ja as usize..jb as usize];
        eval::score_rows(
            s,
            jlabels,
            &[],
            ranking,
            false,
            &name,
            self.specs,
            self.opts,
            out,
        )?;
        eval::check_finite(q, qi, self.specs, self.opts, out)
    }

    /// Every query of `c`, into `out` (one row of values each).
    fn score(&self, c: &Chunk, out: &mut [f64]) -> Result<(), Error> {
        let nm = self.specs.len().max(1);
        if self.parallel {
            out.par_chunks_mut(nm)
                .zip(c.spans.par_iter())
                .try_for_each_init(RankScratch::default, |s, (o, &span)| {
                    self.one(s, c, span, o)
                })
        } else {
            let mut s = RankScratch::default();
            out.chunks_mut(nm)
                .zip(&c.spans)
                .try_for_each(|(o, &span)| self.one(&mut s, c, span, o))
        }
    }
}

/// The scored query ids (the run's objects, in its order) and their values.
type DictScores<'py> = (Bound<'py, PyList>, Bound<'py, PyArray2<f64>>);

/// What [`walk`] scores, besides the metrics.
struct WalkArgs {
    opts: eval::Options,
    specs: Vec<MetricSpec>,
    /// `RANKLENS_NUM_THREADS` or this.
    threads: Option<usize>,
    /// Scores rounded to 32-bit floats (trec_eval 9.0.8, the drop-in), or
    /// kept as doubles (trec_eval 10.0, `ranklens.evaluate`).
    round_f32: bool,
    /// Score every qrels query (those the run lacks on an empty ranking), in
    /// qrels order, and list the run-only query ids; else only the queries
    /// of both, in run order.
    all: bool,
}

/// What [`walk`] found: the run's scored query ids (run order), each one's
/// qrels index, their values (a row each), and (`all`) the run-only ids.
struct Walked<'py> {
    qids: Bound<'py, PyList>,
    rows: Vec<usize>,
    values: Vec<f64>,
    run_only: Bound<'py, PyList>,
}

/// Score the run dict `scores` against `judged` (from [`dict_judgments`] on
/// the same qrels, encoded as `qrels`); `None` when the input needs the
/// general path (see the module note).
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
fn walk<'py>(
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
        let pipe = Pipe::default();
        let (pipe, serial) = (&pipe, &serial);
        macro_rules! run {
            () => {
                |scope| {
                    scope.spawn(move |_| pipe.work(serial, nm));
                    let got = read(&mut |chunk| pipe.put(chunk));
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
        let Some(mut got) = got? else {
            return Ok(None);
        };
        let Some(done) = pipe.values() else {
            return Ok(None);
        };
        values = done;
        if !score_here(&mut got.chunk, &mut values) {
            return Ok(None);
        }
        got
    } else {
        let Some(mut got) = read(&mut |chunk| score_here(chunk, &mut values))? else {
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
struct Read<'py> {
    qids: Bound<'py, PyList>,
    rows: Vec<usize>,
    run_only: Bound<'py, PyList>,
    chunk: Chunk,
}

/// Chunks scored on a pool thread while the walk reads on (see [`walk`]):
/// the queue, the values of the chunks scored so far, in order, and whether
/// a kernel failed.
#[derive(Default)]
struct Pipe {
    queue: std::sync::Mutex<PipeQueue>,
    /// A chunk queued, or the queue closed.
    ready: std::sync::Condvar,
    /// The worker has ended.
    ended: std::sync::Condvar,
}

#[derive(Default)]
struct PipeQueue {
    jobs: std::collections::VecDeque<Chunk>,
    /// Emptied chunks, for reuse.
    spare: Vec<Chunk>,
    closed: bool,
    /// The worker has ended (closed and emptied).
    done: bool,
    failed: bool,
    values: Vec<f64>,
}

impl Pipe {
    fn lock(&self) -> std::sync::MutexGuard<'_, PipeQueue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hand `chunk` over to be scored (`chunk` becomes an empty one);
    /// `false` once a kernel has failed.
    fn put(&self, chunk: &mut Chunk) -> bool {
        let mut q = self.lock();
        if q.failed {
            return false;
        }
        let spare = q.spare.pop().unwrap_or_default();
        q.jobs.push_back(std::mem::replace(chunk, spare));
        drop(q);
        self.ready.notify_one();
        true
    }

    /// No more chunks: the worker ends when the queue is empty.
    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_one();
    }

    /// Wait for the worker to end (after [`Pipe::close`]).
    fn wait(&self) {
        let mut q = self.lock();
        while !q.done {
            q = self.ended.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// The scored values, in chunk order; `None` if a kernel failed.
    fn values(&self) -> Option<Vec<f64>> {
        let mut q = self.lock();
        (!q.failed).then(|| std::mem::take(&mut q.values))
    }

    /// The worker: score each chunk in turn, until closed and empty.
    fn work(&self, ctx: &Chunks<'_>, nm: usize) {
        let mut out = Vec::new();
        loop {
            let chunk = {
                let mut q = self.lock();
                loop {
                    if let Some(c) = q.jobs.pop_front() {
                        break Some(c);
                    }
                    if q.closed {
                        break None;
                    }
                    q = self.ready.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            let Some(mut chunk) = chunk else {
                self.lock().done = true;
                self.ended.notify_all();
                return;
            };
            out.clear();
            out.resize(chunk.spans.len() * nm, 0.0);
            chunk.rank(true);
            let ok = ctx.score(&chunk, &mut out).is_ok();
            chunk.clear();
            let mut q = self.lock();
            if ok {
                q.values.extend_from_slice(&out);
            } else {
                q.failed = true;
            }
            q.spare.push(chunk);
        }
    }
}

/// The walk of [`walk`]: each query read, ranked and put in a chunk,
/// `flush` called on every full chunk (`false`: a kernel failed, the
/// general path decides); `None` when the input needs the general path.
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
#[allow(clippy::too_many_arguments)]
fn read_run<'py>(
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
    let mut run = unsafe { super::layout::DictEntries::new(scores.as_ptr()) };
    while let Some((k, v)) = unsafe { run.next() } {
        if unsafe { ffi::PyUnicode_CheckExact(k) == 0 || ffi::PyDict_Check(v) == 0 } {
            return Ok(None);
        }
        // A query id with no UTF-8 form (a lone surrogate) is the general
        // path's error, also for a query the qrels lack.
        let Some(qtext) = (unsafe { super::utf8_raw(k) }) else {
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
        let mut docs = unsafe { super::layout::DictEntries::new(v) };
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

/// The arguments of [`walk`] from the Python ones.
#[allow(clippy::too_many_arguments)]
fn walk_args(
    py: Python<'_>,
    metrics: &[MetricArg],
    relevance_level: f64,
    judged_only: bool,
    miss_nan: bool,
    threads: Option<usize>,
    round_f32: bool,
    all: bool,
) -> PyResult<WalkArgs> {
    let (mut opts, specs) = eval_setup(metrics, relevance_level, judged_only, None, "trec")
        .map_err(|e| to_py(py, e))?;
    opts.miss_nan = miss_nan;
    Ok(WalkArgs {
        opts,
        specs,
        threads,
        round_f32,
        all,
    })
}

/// Score the queries of `scores` (pytrec_eval's run dict) that the qrels
/// hold against `judged` (from [`dict_judgments`] on the same qrels, encoded
/// as `qrels`), scores rounded to 32-bit floats: `(query id objects in run
/// order, values [queries x metrics])`, as the drop-in's general path
/// computes them; `None` when the input needs the general path (see the
/// module note).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_dict<'py>(
    py: Python<'py>,
    judged: PyRef<'py, DictJudgments>,
    qrels: SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    judged_only: bool,
) -> PyResult<Option<DictScores<'py>>> {
    #[cfg(any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))))]
    {
        let _ = (
            py,
            judged,
            qrels,
            scores,
            metrics,
            relevance_level,
            judged_only,
        );
        Ok(None)
    }
    #[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let args = walk_args(
            py,
            &metrics,
            relevance_level,
            judged_only,
            false,
            None,
            true,
            false,
        )?;
        let Some(w) = walk(py, &judged, &qrels, scores, args)? else {
            return Ok(None);
        };
        let nq = w.qids.len();
        let nm = metrics.len();
        let values = w.values.into_pyarray(py).reshape([nq, nm])?;
        Ok(Some((w.qids, values)))
    }
}

/// `ranklens.evaluate` of a run dict against encoded qrels (`judged` from
/// [`dict_judgments`] on them), scores kept as doubles (trec_eval 10.0):
/// `(values [qrels queries x metrics], whether each qrels query is in the
/// run, the run-only query id objects in run order)`, the values those of
/// `Run(scores)` then `evaluate`; `None` when the input needs that general
/// path (see the module note).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_dict_all<'py>(
    py: Python<'py>,
    judged: PyRef<'py, DictJudgments>,
    qrels: SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    miss_nan: bool,
) -> PyResult<Option<DictAll<'py>>> {
    #[cfg(any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))))]
    {
        let _ = (
            py,
            judged,
            qrels,
            scores,
            metrics,
            relevance_level,
            threads,
            judged_only,
            miss_nan,
        );
        Ok(None)
    }
    #[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let args = walk_args(
            py,
            &metrics,
            relevance_level,
            judged_only,
            miss_nan,
            threads,
            false,
            true,
        )?;
        let nq = judged.offsets.len().saturating_sub(1);
        let Some(w) = walk(py, &judged, &qrels, scores, args)? else {
            return Ok(None);
        };
        let nm = metrics.len();
        let mut values = vec![0.0; nq * nm];
        let mut present = vec![false; nq];
        for (i, &qi) in w.rows.iter().enumerate() {
            if let (Some(to), Some(from)) = (
                values.get_mut(qi * nm..(qi + 1) * nm),
                w.values.get(i * nm..(i + 1) * nm),
            ) {
                to.copy_from_slice(from);
            }
        }
        for &qi in w.rows.iter().take(w.qids.len()) {
            if let Some(p) = present.get_mut(qi) {
                *p = true;
            }
        }
        let values = values.into_pyarray(py).reshape([nq, nm])?;
        Ok(Some((values, present.into_pyarray(py), w.run_only)))
    }
}

/// Values `[qrels queries x metrics]`, each qrels query in the run or not,
/// the run-only query ids.
type DictAll<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, numpy::PyArray1<bool>>,
    Bound<'py, PyList>,
);
