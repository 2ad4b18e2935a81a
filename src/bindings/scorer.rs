//! The per-sample scorer (`core::rows`): `ranklens.Scorer`'s fast path.  The
//! metric specs are parsed once, when the Python `Scorer` is built; a call
//! reads the retrieved list and the ground truth straight from the Python
//! objects, matches ids row by row (no vocabulary, no sorting of a side), and
//! returns the values.

use super::{is_id, num_rows, row_items, to_py};
use crate::core::error::Error;
use crate::core::eval;
use crate::core::metrics::{self, err, Family, MetricSpec};
use crate::core::rows::{score_sample, Sample, Scratch, NO_GROUP};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};
use rayon::prelude::*;
use std::cell::RefCell;
use std::ffi::CString;

use super::evaluate::MetricArg;

/// An id: its bytes in `Flat::bytes` and a hash of them (ids are compared by
/// hash first, bytes only when the hashes are equal).
#[derive(Clone, Copy, Debug)]
struct Id {
    start: usize,
    end: usize,
    hash: u64,
}

/// A fast non-cryptographic hash of an id's bytes (FxHash's mixing, 8 bytes
/// at a time).
fn id_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    // The tail byte by byte: a variable-length copy would be a memcpy call.
    let mut w = 0u64;
    for (i, &b) in chunks.remainder().iter().enumerate() {
        w |= u64::from(b) << (8 * i);
    }
    let h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    // The table indexes by the low bits, which a multiply only feeds from the
    // low bits of its input: fold the high bits down.
    h ^ (h >> 32) ^ (h >> 47)
}

/// Rows read from Python: ids copied into one buffer, per row its groups
/// (labels), its ground-truth entries and its retrieved list.
#[derive(Default)]
struct Flat {
    bytes: Vec<u8>,
    /// Ground-truth entries: (id, group within the row).
    gt: Vec<(Id, u32)>,
    /// Group labels, all rows.
    labels: Vec<f64>,
    /// Retrieved ids in input order.
    ret: Vec<Id>,
    /// Scores of retrieved ids given as a mapping (else empty for the row).
    scores: Vec<f64>,
    rows: Vec<RowSpan>,
}

#[derive(Clone, Copy, Default)]
struct RowSpan {
    gt: (usize, usize),
    labels: (usize, usize),
    ret: (usize, usize),
    /// Whether the retrieved ids came with scores (a mapping): ranked by them.
    scored: bool,
    /// No ground truth or nothing retrieved.
    empty: bool,
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

/// Append an id's bytes (a `str`, or an `int` in decimal, as everywhere in
/// ranklens); returns its range.
fn push_id(
    obj: &Bound<'_, PyAny>,
    row: Option<usize>,
    what: &str,
    bytes: &mut Vec<u8>,
) -> PyResult<Id> {
    let start = bytes.len();
    if let Ok(s) = obj.cast::<PyString>() {
        let text = super::str_utf8(s, || format!("{}{what}", at(row)))?;
        bytes.extend_from_slice(text.as_bytes());
    } else if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        bytes.extend_from_slice(obj.str()?.to_cow()?.as_bytes());
    } else {
        return Err(bad(
            obj.py(),
            format!(
                "{}{what} must be a str or an int, got {} ({})",
                at(row),
                obj.get_type().name()?,
                obj.repr()?
            ),
        ));
    }
    if bytes.len() == start {
        return Err(bad(obj.py(), format!("{}an empty document id", at(row))));
    }
    Ok(Id {
        start,
        end: bytes.len(),
        hash: id_hash(&bytes[start..]),
    })
}

fn number(obj: &Bound<'_, PyAny>) -> Option<f64> {
    if obj.is_instance_of::<PyString>() {
        return None;
    }
    obj.extract::<f64>().ok()
}

impl Flat {
    fn clear(&mut self) {
        self.bytes.clear();
        self.gt.clear();
        self.labels.clear();
        self.ret.clear();
        self.scores.clear();
        self.rows.clear();
    }

    fn id(&self, r: Id) -> &[u8] {
        &self.bytes[r.start..r.end]
    }

    fn same(&self, a: Id, b: Id) -> bool {
        a.hash == b.hash && self.id(a) == self.id(b)
    }

    /// A label or score: a finite number (a message naming the document if not).
    fn value(&self, v: &Bound<'_, PyAny>, id: Id, row: Option<usize>, what: &str) -> PyResult<f64> {
        let doc = || String::from_utf8_lossy(self.id(id)).into_owned();
        match number(v) {
            Some(x) if x.is_finite() => Ok(x),
            Some(_) => Err(bad(
                v.py(),
                format!(
                    "{}document {:?}: the {what} is NaN or infinite",
                    at(row),
                    doc()
                ),
            )),
            None => Err(bad(
                v.py(),
                format!(
                    "{}document {:?}: the {what} must be a number, got {}",
                    at(row),
                    doc(),
                    v.repr().map(|x| x.to_string()).unwrap_or_default()
                ),
            )),
        }
    }

    /// Read one sample's ground truth and retrieved list.
    fn push_row(
        &mut self,
        relevant: &Bound<'_, PyAny>,
        retrieved: &Bound<'_, PyAny>,
        row: Option<usize>,
    ) -> PyResult<()> {
        let py = relevant.py();
        let mut span = RowSpan {
            gt: (self.gt.len(), 0),
            labels: (self.labels.len(), 0),
            ret: (self.ret.len(), 0),
            ..Default::default()
        };
        let mut empty = false;
        if is_missing(relevant) {
            empty = true;
        } else if let Ok(d) = relevant.cast::<PyDict>() {
            for (k, v) in d.iter() {
                let id = push_id(&k, row, "a document id", &mut self.bytes)?;
                let label = self.value(&v, id, row, "label")?;
                let g = (self.labels.len() - span.labels.0) as u32;
                self.gt.push((id, g));
                self.labels.push(label);
            }
        } else {
            let what = "the ground truth (a list of ids or groups, a dict id -> label, or None)";
            let first = span.labels.0;
            each_item(relevant, row, what, |item| {
                let g = (self.labels.len() - first) as u32;
                if is_id(item) {
                    let id = push_id(item, row, "a document id", &mut self.bytes)?;
                    self.gt.push((id, g));
                } else {
                    let before = self.gt.len();
                    each_item(item, row, "a group (a list of ids)", |m| {
                        let id = push_id(m, row, "a document id", &mut self.bytes)?;
                        self.gt.push((id, g));
                        Ok(())
                    })?;
                    if self.gt.len() == before {
                        return Err(bad(py, format!("{}group {g} is empty", at(row))));
                    }
                }
                self.labels.push(1.0);
                Ok(())
            })?;
        }
        span.gt.1 = self.gt.len();
        span.labels.1 = self.labels.len();
        empty |= span.labels.0 == span.labels.1;

        if is_missing(retrieved) {
            empty = true;
        } else if let Ok(d) = retrieved.cast::<PyDict>() {
            span.scored = true;
            for (k, v) in d.iter() {
                let id = push_id(&k, row, "a document id", &mut self.bytes)?;
                let score = self.value(&v, id, row, "score")?;
                self.ret.push(id);
                self.scores.push(score);
            }
        } else {
            let what = "the retrieved list (a list of ids, a dict id -> score, or None)";
            each_item(retrieved, row, what, |item| {
                let id = push_id(item, row, "a retrieved id", &mut self.bytes)?;
                self.ret.push(id);
                self.scores.push(0.0);
                Ok(())
            })?;
        }
        span.ret.1 = self.ret.len();
        empty |= span.ret.0 == span.ret.1;
        span.empty = empty;
        self.rows.push(span);
        Ok(())
    }
}

/// Call `f` on each item of a list-like cell (a list without copying it).
fn each_item<'py>(
    obj: &Bound<'py, PyAny>,
    row: Option<usize>,
    what: &str,
    mut f: impl FnMut(&Bound<'py, PyAny>) -> PyResult<()>,
) -> PyResult<()> {
    if let Ok(l) = obj.cast::<PyList>() {
        for item in l.iter() {
            f(&item)?;
        }
        return Ok(());
    }
    for item in &ground_items(obj, row, what)? {
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

/// Per-thread buffers for matching ids.
#[derive(Default)]
struct MatchScratch {
    rows: Scratch,
    order: Vec<usize>,
    ranked: Vec<u32>,
    /// The ground-truth ids of the row, and the retrieved ids seen so far.
    truth: IdTable,
    seen: IdTable,
    /// Rank (in the kept list) of each retrieved id, by input position.
    rank_of: Vec<usize>,
    /// With `judged_only`, `max_docs` or `ties` (`eval::score_rows`): the
    /// ground truth as judged entries (label, group), and the kept retrieved
    /// rows in trec order: score, input position, judged entry.
    jlabels: Vec<f64>,
    jgroups: Vec<u32>,
    kscores: Vec<f64>,
    kpos: Vec<u32>,
    found: Vec<Option<usize>>,
    rank: eval::RankScratch,
}

/// A small open-addressing set of a row's ids (positions into a slice of
/// `Id`s), probed by the ids' hashes: a lookup is about one comparison, where
/// comparing a ten-document list pairwise took 45.
#[derive(Default)]
struct IdTable {
    /// Position + 1 of the id in each slot, 0 for an empty slot.
    slots: Vec<u32>,
}

impl IdTable {
    fn reset(&mut self, n: usize) {
        let size = (2 * n).next_power_of_two().max(8);
        self.slots.clear();
        self.slots.resize(size, 0);
    }

    /// The position of an id equal to `id`, or `None` after inserting `pos`
    /// (with `insert`); `key(p)` is the id at position `p`.
    fn probe(
        &mut self,
        f: &Flat,
        id: Id,
        pos: usize,
        insert: bool,
        key: impl Fn(usize) -> Id,
    ) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = (id.hash as usize) & mask;
        loop {
            match self.slots[i] {
                0 => {
                    if insert {
                        self.slots[i] = pos as u32 + 1;
                    }
                    return None;
                }
                p => {
                    let p = p as usize - 1;
                    if f.same(key(p), id) {
                        return Some(p);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }
}

thread_local! {
    /// The buffers of the previous call on this thread, reused: a call on a
    /// ten-document list is otherwise mostly allocation, and a batch mostly
    /// growing vectors.
    static BUFFERS: RefCell<(Flat, MatchScratch)> = RefCell::default();
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
}

/// Score row `r` of `f` into `out`.
fn score_row(
    f: &Flat,
    r: usize,
    single: bool,
    setup: &Setup,
    specs: &[MetricSpec],
    s: &mut MatchScratch,
    out: &mut [f64],
) -> Result<(), Error> {
    let span = f.rows[r];
    let row = (!single).then_some(r);
    if span.empty && setup.empty_nan {
        out.fill(f64::NAN);
        return Ok(());
    }
    let gt = &f.gt[span.gt.0..span.gt.1];
    let ret = &f.ret[span.ret.0..span.ret.1];
    let labels = &f.labels[span.labels.0..span.labels.1];
    // Ground truth: an id in two groups (or twice in one) is an error.
    let dup_gt = |a: usize, b: usize| {
        let d = String::from_utf8_lossy(f.id(gt[a].0));
        let (ga, gb) = (gt[a].1, gt[b].1);
        Error::InvalidInput(if ga == gb {
            format!("{}document {d:?} is listed twice in group {ga}", at(row))
        } else {
            format!(
                "{}document {d:?} is in groups {ga} and {gb}: a document belongs to at most \
                 one group (a group is one unit of needed information)",
                at(row)
            )
        })
    };
    if gt.len() >= u32::MAX as usize || ret.len() >= u32::MAX as usize {
        return Err(Error::InvalidInput(format!(
            "{}more than 4,294,967,294 ids in one row",
            at(row)
        )));
    }
    s.truth.reset(gt.len());
    for (i, e) in gt.iter().enumerate() {
        if let Some(j) = s.truth.probe(f, e.0, i, true, |p| gt[p].0) {
            return Err(dup_gt(j, i));
        }
    }
    // Rank order: as given, or by score descending, ties by id descending
    // (byte order), as trec_eval orders a run.
    s.order.clear();
    s.order.extend(0..ret.len());
    if span.scored {
        let scores = &f.scores[span.ret.0..span.ret.1];
        s.order.sort_by(|&a, &b| {
            scores[b]
                .total_cmp(&scores[a])
                .then_with(|| f.id(ret[b]).cmp(f.id(ret[a])))
        });
    }
    if setup.general {
        s.kscores.clear();
        s.kpos.clear();
        s.found.clear();
    }
    s.ranked.clear();
    s.seen.reset(ret.len());
    s.rank_of.clear();
    s.rank_of.resize(ret.len(), 0);
    for (rank, &i) in s.order.iter().enumerate() {
        let id = ret[i];
        if let Some(j) = s.seen.probe(f, id, i, true, |p| ret[p]) {
            if setup.first {
                continue;
            }
            return Err(Error::InvalidInput(format!(
                "{}document {:?} is retrieved twice (ranks {} and {}); pass \
                 duplicates=\"first\" to keep its first occurrence",
                at(row),
                String::from_utf8_lossy(f.id(id)),
                s.rank_of[j] + 1,
                rank + 1
            )));
        }
        s.rank_of[i] = rank;
        let j = s.truth.probe(f, id, 0, false, |p| gt[p].0);
        if setup.general {
            // A list is ranked as given: strictly decreasing scores.
            let score = if span.scored {
                f.scores[span.ret.0 + i]
            } else {
                (ret.len() - rank) as f64
            };
            s.kscores.push(score);
            s.kpos.push(i as u32);
            s.found.push(j);
            continue;
        }
        s.ranked.push(j.map_or(NO_GROUP, |j| gt[j].1));
    }
    if setup.general {
        s.jlabels.clear();
        s.jgroups.clear();
        for &(_, g) in gt {
            s.jlabels
                .push(labels.get(g as usize).copied().unwrap_or(f64::NAN));
            s.jgroups.push(g);
        }
        let found = &s.found;
        let ranking = eval::Ranking {
            scores: &s.kscores,
            pos: &s.kpos,
            find: |i: usize| found.get(i).copied().flatten(),
        };
        let name = || row.map_or("the sample".to_string(), |r| format!("row {r}"));
        return eval::score_rows(
            &mut s.rank,
            &s.jlabels,
            &s.jgroups,
            ranking,
            &name,
            specs,
            &setup.opts,
            out,
        );
    }
    let sample = Sample {
        group_labels: labels,
        extra_members: gt.len() - labels.len(),
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

/// The values of a batch (`rows x metrics`) and which rows were empty.
type BatchOut<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<bool>>);

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
        buffers: &mut (Flat, MatchScratch),
    ) -> PyResult<Vec<f64>> {
        let (f, s) = buffers;
        f.clear();
        f.push_row(relevant, retrieved, None)?;
        let largest = largest_label(&f.labels);
        // Level 1: the frame that called the scorer (no Python frame of ours).
        self.warn_if_below(py, largest, 1)?;
        let resolved = self.specs_for(largest);
        let specs = resolved.as_deref().unwrap_or(&self.setup.specs);
        let mut out = vec![0.0; specs.len()];
        score_row(f, 0, true, &self.setup, specs, s, &mut out).map_err(|e| to_py(py, e))?;
        Ok(out)
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
        Ok(RowScorer {
            setup: Setup {
                specs,
                level,
                miss_nan,
                first: duplicates_first,
                empty_nan,
                opts,
                general,
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

    /// The values of every row (`rows x metrics`), and which rows were empty
    /// (no ground truth or nothing retrieved).
    #[pyo3(name = "_batch", signature = (retrieved_lists, relevant_lists, threads = None))]
    fn batch<'py>(
        &self,
        py: Python<'py>,
        retrieved_lists: &Bound<'py, PyAny>,
        relevant_lists: &Bound<'py, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<BatchOut<'py>> {
        let n = num_rows(retrieved_lists, "retrieved_lists")?;
        let m = num_rows(relevant_lists, "relevant_lists")?;
        if n != m {
            return Err(bad(
                py,
                format!("{n} retrieved rows but {m} ground-truth rows"),
            ));
        }
        BUFFERS.with(|cell| match cell.try_borrow_mut() {
            Ok(mut guard) => {
                let out = self.batch_with(
                    py,
                    retrieved_lists,
                    relevant_lists,
                    n,
                    threads,
                    &mut guard.0,
                );
                // Keep small buffers for the next call, not a big batch's.
                if guard.0.bytes.capacity() > 1 << 24 || guard.0.ret.capacity() > 1 << 20 {
                    guard.0 = Flat::default();
                }
                out
            }
            Err(_) => {
                let mut f = Flat::default();
                self.batch_with(py, retrieved_lists, relevant_lists, n, threads, &mut f)
            }
        })
    }
}

impl RowScorer {
    fn batch_with<'py>(
        &self,
        py: Python<'py>,
        retrieved_lists: &Bound<'py, PyAny>,
        relevant_lists: &Bound<'py, PyAny>,
        n: usize,
        threads: Option<usize>,
        f: &mut Flat,
    ) -> PyResult<BatchOut<'py>> {
        f.clear();
        // Why a batch is a few times the pure-Python loop and not 20x: this
        // serial walk of the rows' Python objects (list iteration, each id's
        // UTF-8 bytes copied and hashed, under the GIL) is about a third of
        // the batch's samples in `perf` (one thread); the id matching and the
        // kernels after it run in parallel.  20x the loop's ~3.4 us a row
        // would leave ~0.17 us a row for twelve Python objects and six
        // metrics, about what this walk alone costs.
        for (r, (ret, rel)) in retrieved_lists
            .try_iter()?
            .zip(relevant_lists.try_iter()?)
            .enumerate()
        {
            f.push_row(&rel?, &ret?, Some(r))?;
        }
        if f.rows.len() != n {
            return Err(bad(
                py,
                format!("{n} rows announced, {} iterated", f.rows.len()),
            ));
        }
        let largest = largest_label(&f.labels);
        // Level 2: the caller of `Scorer.batch`.
        self.warn_if_below(py, largest, 2)?;
        let resolved = self.specs_for(largest);
        let specs = resolved.as_deref().unwrap_or(&self.setup.specs);
        let nm = specs.len();
        let setup = &self.setup;
        let f = &*f;
        let values = py
            .detach(|| {
                eval::with_threads(threads, || {
                    let mut values = vec![0.0; n * nm];
                    values
                        .par_chunks_mut(nm)
                        .enumerate()
                        .try_for_each_init(MatchScratch::default, |s, (r, out)| {
                            score_row(f, r, false, setup, specs, s, out)
                        })
                        .map(|()| values)
                })
            })
            .and_then(|x| x)
            .map_err(|e| to_py(py, e))?;
        let empty: Vec<bool> = f.rows.iter().map(|s| s.empty).collect();
        Ok((
            values.into_pyarray(py).reshape([n, nm])?,
            empty.into_pyarray(py),
        ))
    }
}
