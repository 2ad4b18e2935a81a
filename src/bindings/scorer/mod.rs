//! `ranklens.Scorer`'s native half ([`RowScorer`]), on `core::rows`: the
//! metric specs are parsed once, when the Python `Scorer` is built; a call
//! reads the retrieved list and the ground truth straight from the Python
//! objects, matches ids row by row (no vocabulary, no sorting of a side), and
//! returns the values.
//!
//! The rooms, in the order a call goes through them:
//! * [`source`]: a batch's rows, two lists or object arrays walked in place
//!   (the next row read ahead), else two iterators;
//! * [`read`]: a row's two cells read into keys ([`read::Reader`]);
//! * [`probe`]: each id matched against its row's ground truth and the ids
//!   retrieved before it;
//! * [`cell`]: what a cell may hold (missing, a number, a list's items) and
//!   the messages that name the row and document;
//! * [`matched`]: what reading leaves, numbers only ([`matched::Matched`]);
//! * [`row`]: one matched row scored;
//! * [`batch`]: a batch serial, on the pool, or pipelined
//!   (`bindings::pipeline`), values metric-major.
//!
//! Why ids are matched as Python objects, while they are read: a row's ids
//! are only ever compared with the same row's ids, so no global vocabulary
//! and no UTF-8 copy is needed.  Each id is its `str` object and Python's
//! hash of it (cached in the object: a `str` hashes once in its life); two
//! ids are the same when they are the same object, or have equal hashes and
//! compare equal (`PyObject_RichCompareBool` on two exact `str`s runs no
//! Python code).  An `int` id is its decimal `str` (`1` and `"1"` are one id,
//! as everywhere in ranklens); a `str` subclass is read as a plain `str`.
//! The matching happens in the one pass that reads the rows (under the GIL:
//! comparing needs it), which leaves per row only numbers: the labels of its
//! groups, the group of each ground-truth entry and, per rank, the entry
//! retrieved there (for a list of relevant ids, only the ranks of its hits).
//! The kernels then run on those without the GIL, on a pool thread while the
//! next rows are read for a large batch.  Ids are never encoded, so an id
//! holding a lone surrogate is an id like any other here (`evaluate`, which
//! writes ids as UTF-8, rejects it).
//!
//! Why `RowScorer` is a Python class that `ranklens.Scorer` subclasses: a
//! call on one sample then runs no Python code (no Python `__call__` frame,
//! the result dict built here).  The buffers of the previous call on a
//! thread are reused ([`BUFFERS`]): a call on a ten-document list is
//! otherwise mostly allocation.
//!
//! Rejected alternatives (measured; the figures are in the performance notes,
//! `docs/design/performance.md`, "Scorer"):
//! * ids read as UTF-8 copies, then matched in parallel without the GIL: the
//!   copies and their hashes were most of a batch;
//! * a Python `__call__` building the result dict: it doubled the time of a
//!   ten-document call;
//! * the rows x metrics array of values, a column copied out per metric:
//!   strided copies where metric-major needs none.

mod batch;
mod cell;
mod matched;
mod probe;
mod read;
mod row;
mod source;

use self::batch::{BatchOut, Run};
use self::cell::bad;
use self::matched::Matched;
use self::read::Reader;
use self::row::{score_row, RowScratch, Setup};
use self::source::Source;
use super::evaluate::MetricArg;
use super::{num_rows, to_py};
use crate::core::eval;
use crate::core::metrics::{self, err, Family, MetricSpec};
use crate::core::rows;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::cell::RefCell;
use std::ffi::CString;

thread_local! {
    /// The matched rows of the previous call on this thread, reused: a call
    /// on a ten-document list is otherwise mostly allocation, and a batch
    /// mostly growing vectors.
    static BUFFERS: RefCell<(Matched, RowScratch)> = RefCell::default();
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
