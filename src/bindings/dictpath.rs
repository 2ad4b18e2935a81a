//! The pytrec_eval drop-in's dict path: `{query: {doc: score}}` scored
//! against judgments known in advance, without encoding a `Run`.
//!
//! Why no `Run`: the drop-in's judgments are known before any run is read
//! (`RelevanceEvaluator.__init__`), so each run entry only has to become
//! numbers: its score (rounded to a 32-bit float, as trec_eval stores it),
//! the judged entry it matches (or none) and, for tied scores only, its id's
//! bytes.  [`DictJudgments`] holds, per judged query, an open-addressing
//! table of the judged document ids by their Python hash (cached in each
//! `str`: a run key's was computed by the dict that holds it) and the ids'
//! UTF-8 side by side in one arena; a run key is matched by hash, then by its
//! UTF-8 (borrowed from the object) against the arena's copy, so its bytes
//! are never copied or hashed by us.  A query's entries are put in
//! trec_eval's order (score descending, then document id descending by
//! bytes; rows already in that order are not sorted) under the GIL, the ids'
//! UTF-8 borrowed from the live keys; the kernels then run without the GIL,
//! in parallel, through `core::eval::score_rows` with the same label
//! vectors as `evaluate`, so the values are bit-identical by construction.
//!
//! The path takes only the common input: exact `str` query and document ids
//! with a UTF-8 form, `dict`s (subclasses such as `parse_run`'s `defaultdict`
//! included: read with `PyDict_Next`, as the general path reads them), exact
//! `float` or `int` scores that are
//! finite as doubles, and judgments whose ids are all exact `str`s.  On
//! anything else it returns `None` before any Python code runs, and the
//! drop-in takes the general path (encode a `Run`, then `evaluate`), which
//! gives every check and message; run-only queries are read too, so that
//! their errors are the general path's.  Not on free-threaded Python (the
//! borrowed keys would need every inner dict locked) nor in a stable-ABI
//! build for Windows before 3.10 (no borrowed UTF-8): the general path.
//!
//! Where the time goes (`perf`, the 10,000 x 100 data of
//! `benches/bench_compat.py`, `evaluate_dict` alone, a build for CPython 3.11
//! without LTO, one thread, load average 2.5-5 from other jobs, 2026-11-25):
//! ~50 ns of CPU a run entry.  Of the samples: `PyDict_Next` ~12% (the first
//! touch of each key); the judged-id probe ~12% and the text compare of a
//! hash match ~8% (`memcmp`); the walk, the value reads and the ranking (an
//! integer sort, bytes compared only in ties) ~15%; the kernels ~11%
//! (`score_rows`, `PrefixBuf::build`); the keys' UTF-8 and hash calls ~5%;
//! the rest is the profiled script's own loading of the data.  On the
//! 100,000 x 100 data (10M entries, CPU, one thread) the drop-in's 5 measure
//! call is `__init__` ~0.19 s (the qrels encoded 0.07-0.11 s, the query
//! index 0.02 s, [`dict_judgments`] ~0.09 s, a third of it first-touch page
//! faults of its tables), `evaluate_dict` 0.49-0.53 s and the result dicts
//! ~0.10 s, against pytrec_eval's ~2.8 s: ~3.5x, where issue #15 asks 6x
//! (~0.47 s in all).
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
//! second time: one walk doing both is what is left there.

// Where the path is off (see above) its scoring half is unused.
#![cfg_attr(
    any(Py_GIL_DISABLED, not(any(not(Py_LIMITED_API), Py_3_10, unix))),
    allow(dead_code, unused_imports)
)]

use super::evaluate::{eval_setup, side, MetricArg};
use super::{to_py, SideArrays};
use crate::core::error::Error;
use crate::core::eval::{self, key_score, rank_key, RankScratch, Ranking};
use crate::core::metrics::MetricSpec;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::exceptions::PyRuntimeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;

/// No judged entry.
const NONE: u32 = u32::MAX;

/// The judged documents of pytrec_eval-style qrels, as `str` objects, for
/// matching run keys without reading their text (see the module note).
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
    /// Each judged row's id: (start, length) of its UTF-8 in `text`.
    ids: Vec<(usize, usize)>,
    /// The judged ids' UTF-8, a query's ids side by side.
    text: Vec<u8>,
}

/// The high half of a hash, as kept in a table slot.
#[inline]
fn tag(hash: ffi::Py_hash_t) -> u64 {
    (hash as u64) & 0xffff_ffff_0000_0000
}

/// `PyDict_GetItemWithError` for an exact `str` key of `index` (a dict
/// `{query id: encoded index}`): the index, or `None` when absent.
///
/// # Safety
/// The GIL is held and `key` is a live exact `str` (no Python code runs).
unsafe fn index_of(index: &Bound<'_, PyDict>, key: *mut ffi::PyObject) -> PyResult<Option<usize>> {
    let v = ffi::PyDict_GetItemWithError(index.as_ptr(), key);
    if v.is_null() {
        if !ffi::PyErr_Occurred().is_null() {
            return Err(PyErr::fetch(index.py()));
        }
        return Ok(None);
    }
    let i = ffi::PyLong_AsSsize_t(v);
    if i < 0 {
        ffi::PyErr_Clear();
        return Ok(None);
    }
    Ok(Some(i as usize))
}

/// The hash of a live exact `str` (cached in the object; never fails).
///
/// # Safety
/// The GIL is held and `k` is a live exact `str`.
unsafe fn str_hash(py: Python<'_>, k: *mut ffi::PyObject) -> PyResult<ffi::Py_hash_t> {
    let h = ffi::PyObject_Hash(k);
    if h == -1 {
        return Err(PyErr::fetch(py));
    }
    Ok(h)
}

impl DictJudgments {
    /// Query `qi`'s table: (first slot, mask).
    fn table_of(&self, qi: usize) -> Option<(usize, usize, usize)> {
        let (start, mask) = self.spans.get(qi).copied()?;
        Some((start, mask, self.offsets.get(qi).copied()?))
    }

    /// The judged row (within its query, whose table is `at` and first row
    /// `base`) of the id of hash `hash` and UTF-8 `text`, or `NONE`.
    #[inline]
    fn find(&self, at: (usize, usize, usize), hash: ffi::Py_hash_t, text: &[u8]) -> u32 {
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
                let judged = self
                    .ids
                    .get(base + row as usize)
                    .and_then(|&(a, n)| self.text.get(a..a + n));
                // Equal texts have equal hashes: the tag only filters.
                if judged == Some(text) {
                    return row;
                }
            }
            slot = (slot + 1) & mask;
        }
    }
}

/// A judged id's UTF-8, borrowed from the object; `None` where the API does
/// not lend it (a stable-ABI build for Windows before 3.10), which leaves the
/// drop-in on the general path.
///
/// # Safety
/// The GIL is held and `doc` is a live exact `str`; the bytes are copied
/// before any Python code runs.
unsafe fn judged_utf8<'a>(doc: *mut ffi::PyObject) -> Option<&'a [u8]> {
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        super::utf8_raw(doc)
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let _ = doc;
        None
    }
}

/// [`DictJudgments`] of `qrels` (`{query: {doc: label}}`, every query
/// non-empty, already encoded with pytrec_eval's checks as `arrays`;
/// `qindex`: `{query id: encoded index}`), or `None` when an id is not an
/// exact `str` (a subclass may hash as it likes): the drop-in then always
/// takes the general path.
#[pyfunction]
pub(super) fn dict_judgments(
    py: Python<'_>,
    qrels: &Bound<'_, PyDict>,
    qindex: &Bound<'_, PyDict>,
    arrays: SideArrays<'_>,
) -> PyResult<Option<DictJudgments>> {
    let offsets: Vec<usize> = arrays
        .2
        .as_slice()
        .map_err(super::non_contiguous)?
        .iter()
        .map(|&o| o.max(0) as usize)
        .collect();
    let nq = offsets.len().saturating_sub(1);
    let nrows = offsets.last().copied().unwrap_or(0);
    let mut ids = vec![(usize::MAX, 0); nrows];
    let mut hashes = vec![0; nrows];
    // The id bytes, guessed at 24 a row (one growth or two past it).
    let mut text = Vec::with_capacity(nrows.saturating_mul(24));
    let mut filled = vec![false; nq];
    let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY (the walks): the GIL is held and no Python code runs in this
    // loop (exact types only, `str` hashes and UTF-8), so the dicts cannot
    // change and borrowed entries stay valid; the bytes are copied at once.
    while unsafe { ffi::PyDict_Next(qrels.as_ptr(), &mut pos, &mut k, &mut v) } != 0 {
        if unsafe { ffi::PyUnicode_CheckExact(k) == 0 || ffi::PyDict_Check(v) == 0 } {
            return Ok(None);
        }
        let Some(qi) = (unsafe { index_of(qindex, k)? }) else {
            return Ok(None);
        };
        let (Some(&a), Some(&b)) = (offsets.get(qi), offsets.get(qi + 1)) else {
            return Ok(None);
        };
        if filled.get(qi) != Some(&false) || (b - a) as isize != unsafe { ffi::PyDict_Size(v) } {
            return Ok(None);
        }
        filled[qi] = true;
        let (mut dpos, mut doc, mut label) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        let mut row = a;
        while unsafe { ffi::PyDict_Next(v, &mut dpos, &mut doc, &mut label) } != 0 {
            if unsafe { ffi::PyUnicode_CheckExact(doc) } == 0 || row >= b {
                return Ok(None);
            }
            let hash = unsafe { str_hash(py, doc)? };
            let Some(bytes) = (unsafe { judged_utf8(doc) }) else {
                return Ok(None);
            };
            ids[row] = (text.len(), bytes.len());
            text.extend_from_slice(bytes);
            hashes[row] = hash;
            row += 1;
        }
    }
    if ids.iter().any(|&(a, _)| a == usize::MAX) {
        return Ok(None);
    }
    let mut spans = Vec::with_capacity(nq);
    let mut table = Vec::new();
    for w in offsets.windows(2) {
        let n = w[1] - w[0];
        if n >= u32::MAX as usize {
            return Ok(None);
        }
        let size = (2 * n).next_power_of_two().max(4);
        let (start, mask) = (table.len(), size - 1);
        table.resize(start + size, 0u64);
        for (j, &hash) in hashes[w[0]..w[1]].iter().enumerate() {
            // Ids within a query are distinct (exact `str` keys of a dict).
            let mut slot = hash as usize & mask;
            while table[start + slot] != 0 {
                slot = (slot + 1) & mask;
            }
            table[start + slot] = tag(hash) | (j as u64 + 1);
        }
        spans.push((start, mask));
    }
    Ok(Some(DictJudgments {
        offsets,
        spans,
        table,
        ids,
        text,
    }))
}

/// One run entry as the drop-in reads it: an exact `str` key with a UTF-8
/// form (its bytes, borrowed) and an exact `float` or `int` value, finite as
/// a double, rounded to a 32-bit float (as `Builder` rounds it); `None`
/// otherwise (the general path decides).
///
/// # Safety
/// The GIL is held, `k` and `v` are a live dict entry, and the bytes are used
/// before any Python code runs.
#[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
unsafe fn entry<'a>(k: *mut ffi::PyObject, v: *mut ffi::PyObject) -> Option<(&'a [u8], f64)> {
    if ffi::PyUnicode_CheckExact(k) == 0 {
        return None;
    }
    let value = super::encode::exact_number(v)?;
    if !value.is_finite() {
        return None;
    }
    let doc = super::utf8_raw(k)?;
    Some((doc, ((value + 0.0) as f32) as f64))
}

/// A run entry waiting for its query's ranking: score, judged row, id bytes.
/// The score is kept as [`rank_key`] (ascending = trec_eval's descending
/// score): a ranking sorts integers, and compares bytes only within ties.
type Pending = (u64, u32, *const u8, usize);

/// Run rows read between two scorings (see [`Chunk`]).
const CHUNK_ROWS: usize = 1 << 16;

/// Queries read and ranked, waiting to be scored without the GIL: only
/// numbers.  Scored every [`CHUNK_ROWS`] rows, so that the buffers are
/// reused while in cache (one buffer for the whole run was ~17% of the time
/// in first-touch page faults).
#[derive(Default)]
struct Chunk {
    /// Per query: its qrels index and its rows `a..b`.
    spans: Vec<(usize, usize, usize)>,
    /// Each row's score, rows in trec order.
    ranked: Vec<f64>,
    /// Each row's judged row within its query, or `NONE`.
    found: Vec<u32>,
}

impl Chunk {
    fn clear(&mut self) {
        self.spans.clear();
        self.ranked.clear();
        self.found.clear();
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

/// Score the queries of `scores` (pytrec_eval's run dict) that `qindex`
/// holds against `judged` (from [`dict_judgments`] on the same qrels, encoded
/// as `qrels`): `(query id objects in run order, values [queries x
/// metrics])`, as the general path computes them; `None` when the input
/// needs the general path (see the module note).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
pub(super) fn evaluate_dict<'py>(
    py: Python<'py>,
    judged: PyRef<'py, DictJudgments>,
    qrels: SideArrays<'py>,
    scores: &Bound<'py, PyAny>,
    qindex: &Bound<'py, PyDict>,
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
            qindex,
            metrics,
            relevance_level,
            judged_only,
        );
        Ok(None)
    }
    #[cfg(all(not(Py_GIL_DISABLED), any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let err = |e| to_py(py, e);
        let Ok(scores) = scores.cast::<PyDict>() else {
            return Ok(None);
        };
        let (opts, specs) =
            eval_setup(&metrics, relevance_level, judged_only, None, "trec").map_err(err)?;
        let q = side(&qrels)?.map_err(err)?;
        if eval::check(&specs, &opts).is_err()
            || !q.extra.is_empty()
            || q.num_queries() + 1 != judged.offsets.len()
        {
            return Ok(None);
        }
        let specs = eval::resolve(&specs, &q);
        let nm = specs.len();
        let threads = eval::thread_count(None).map_err(err)?;
        let pool = match threads {
            Some(n) if n > 1 => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| {
                        PyRuntimeError::new_err(format!("cannot start {n} threads: {e}"))
                    })?,
            ),
            _ => None,
        };
        let ctx = Chunks {
            q: &q,
            specs: &specs,
            opts: &opts,
            parallel: threads != Some(1),
        };
        let qids = PyList::empty(py);
        let mut values: Vec<f64> = Vec::with_capacity(scores.len().min(q.num_queries()) * nm);
        // The current chunk: per query its qrels index and rows, the rows'
        // scores in trec order and judged rows.
        let mut chunk = Chunk::default();
        let mut tmp: Vec<Pending> = Vec::new();
        let flush = |chunk: &mut Chunk, values: &mut Vec<f64>| -> PyResult<()> {
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
            done.map_err(err)
        };
        // SAFETY: the ids' bytes, borrowed from keys of live dicts that no
        // Python code changes until the query is ranked.
        let bytes = |p: &Pending| unsafe { std::slice::from_raw_parts(p.2, p.3) };
        let by_doc = |a: &Pending, b: &Pending| bytes(b).cmp(bytes(a));
        let (mut pos, mut k, mut v) = (0, std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY (the walks): the GIL is held and no Python code runs in
        // this loop (exact types only, `str` hashes and compares), so the
        // dicts cannot change and borrowed entries stay valid.
        while unsafe { ffi::PyDict_Next(scores.as_ptr(), &mut pos, &mut k, &mut v) } != 0 {
            if unsafe { ffi::PyUnicode_CheckExact(k) == 0 || ffi::PyDict_Check(v) == 0 } {
                return Ok(None);
            }
            let qi = match unsafe { index_of(qindex, k)? } {
                Some(qi) if qi >= q.num_queries() => return Ok(None),
                qi => qi,
            };
            let at = match qi {
                Some(qi) => Some(judged.table_of(qi).ok_or_else(|| {
                    PyRuntimeError::new_err("internal: the judgments do not match the qrels")
                })?),
                None => None,
            };
            tmp.clear();
            let (mut dpos, mut dk, mut dv) = (0, std::ptr::null_mut(), std::ptr::null_mut());
            while unsafe { ffi::PyDict_Next(v, &mut dpos, &mut dk, &mut dv) } != 0 {
                let Some((doc, score)) = (unsafe { entry(dk, dv) }) else {
                    return Ok(None);
                };
                let Some(at) = at else {
                    continue; // run-only: checked, not scored
                };
                let hash = unsafe { str_hash(py, dk)? };
                let j = judged.find(at, hash, doc);
                tmp.push((rank_key(score), j, doc.as_ptr(), doc.len()));
            }
            let Some(qi) = qi else {
                continue;
            };
            // trec_eval's order: scores, then each run of equal scores by id.
            if tmp.windows(2).any(|w| w[0].0 > w[1].0) {
                tmp.sort_unstable_by_key(|p| p.0);
            }
            let mut i = 0;
            while i < tmp.len() {
                let e = i + tmp[i..].iter().take_while(|p| p.0 == tmp[i].0).count();
                let tie = &mut tmp[i..e];
                if tie.len() > 1 && tie.windows(2).any(|w| by_doc(&w[0], &w[1]).is_gt()) {
                    tie.sort_unstable_by(by_doc);
                }
                i = e;
            }
            let a = chunk.ranked.len();
            chunk.ranked.extend(tmp.iter().map(|p| key_score(p.0)));
            chunk.found.extend(tmp.iter().map(|p| p.1));
            chunk.spans.push((qi, a, chunk.ranked.len()));
            // SAFETY: `k` is a live entry of `scores`.
            qids.append(unsafe { Bound::from_borrowed_ptr(py, k) })?;
            if chunk.ranked.len() >= CHUNK_ROWS {
                flush(&mut chunk, &mut values)?;
            }
        }
        flush(&mut chunk, &mut values)?;
        let nq = qids.len();
        let values = values.into_pyarray(py).reshape([nq, nm])?;
        Ok(Some((qids, values)))
    }
}
