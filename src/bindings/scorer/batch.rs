//! A batch of rows ([`RowScorer::batch_with`]): read in order under the GIL
//! ([`super::source`]), then scored without it, into values metric-major
//! (`metrics x rows`: a metric's values contiguous, in row order), so that
//! `Scorer.batch` takes each metric's row without a copy and `score_frame`
//! hands the transpose to pandas, whose block layout it is.
//!
//! Three ways, one result (the same values, and the same errors in the same
//! order: a reading error first, then the row count, the warning, then the
//! first row's scoring error):
//! * serial, below [`PARALLEL_ROWS`] rows or with `threads=1`;
//! * read whole, then scored on the pool: iterators (which may yield more
//!   rows than announced) and an automatic `gmax` (the specs need every
//!   row's labels first);
//! * pipelined ([`RowScorer::pipelined`], `bindings::pipeline`), for two
//!   lists of [`PIPELINE_ROWS`] rows or more when two threads may run:
//!   reading needs the GIL and is most of a batch, the scoring needs only
//!   numbers, so one pool thread scores chunk k while this thread reads
//!   chunk k + 1.  Each chunk writes its own slices of the output, so this
//!   thread may score a waiting chunk itself when the pool thread has not
//!   taken it (a busy machine), and never waits on a preempted pool thread
//!   but for the last chunk.  `_batch(chunk_rows=)` pipelines any batch (for
//!   tests, against `threads=1`).
//!
//! Ctrl-C: the reading runs the signal handlers between two reads of rows
//! (every [`SIGNAL_ROWS`] rows, or every pipelined chunk), where nothing
//! borrowed from the lists is held; a pipelined chunk ends early once its
//! entries times metrics reach [`CHUNK_WORK`], so that scoring one (which no
//! signal stops) stays short; a batch read whole is scored on a watched
//! thread (`bindings::interruptible`) from [`WATCHED_WORK`], stopped between
//! rows.  A `KeyboardInterrupt` leaves the pipe closed and its pool thread
//! ended, as any error does.
//!
//! The thresholds come from the performance notes: a batch below a few
//! thousand rows is over in about a millisecond, where waking a pool thread
//! and waiting for its job cost more than they save.
//!
//! Rejected alternatives: the scoring alone on the pool for every batch of
//! lists: no gain on a loaded machine where pipelining the reading keeps
//! one; values written in place into a rows x metrics array and copied out
//! per metric: strided copies where metric-major needs none.

use super::cell::bad;
use super::matched::Matched;
use super::read::Reader;
use super::row::{score_row, RowScratch, Setup};
use super::source::Source;
use super::RowScorer;
use crate::bindings::pipeline::{lock, Pipe};
use crate::bindings::{to_py, SIGNAL_ROWS};
use crate::core::cancel::Cancel;
use crate::core::error::Error;
use crate::core::eval;
use crate::core::metrics::MetricSpec;
use crate::core::pool;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::sync::Mutex;

/// Rows from which a batch's scoring runs on the pool (see the module note:
/// below, a batch is over in about a millisecond), when it is not pipelined.
const PARALLEL_ROWS: usize = 4096;

/// Rows from which a batch of lists is pipelined, and the rows of a chunk
/// (see the module note).
const PIPELINE_ROWS: usize = 4096;
const CHUNK_ROWS: usize = 1024;

/// Entries times metrics ([`Matched::entries`], the scoring's work) from
/// which a batch read whole is scored on a thread of its own while this one
/// watches for Ctrl-C (`bindings::interruptible`): a smaller scoring is over
/// within a few tens of milliseconds, less than the watch would be worth.
const WATCHED_WORK: usize = 1 << 24;

/// Entries times metrics from which a pipelined chunk ends before its
/// [`CHUNK_ROWS`] rows: a chunk's scoring, which no signal interrupts (by
/// the pool thread, or by this one when it takes a chunk back), then lasts a
/// few milliseconds whatever the rows and the metrics.
const CHUNK_WORK: usize = 1 << 20;

/// Read every row of `source` into `m`, the signal handlers run every
/// [`SIGNAL_ROWS`] rows: Ctrl-C stops a long read with its
/// `KeyboardInterrupt`.  Between two reads (`Source::read` reads nothing it
/// read ahead before a call), so the handlers' Python code cannot change a
/// list under a borrowed cell.
fn read_watched<'py>(
    py: Python<'py>,
    source: &mut Source<'py>,
    reader: &mut Reader<'py>,
    m: &mut Matched,
) -> PyResult<()> {
    while source.read(reader, m, SIGNAL_ROWS, usize::MAX)? > 0 {
        py.check_signals()?;
    }
    Ok(())
}

/// The values of a batch, metric-major (`metrics x rows`: a metric's values
/// contiguous, in row order), and which rows were empty.
pub(super) type BatchOut<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<bool>>);

/// A batch's values, metric-major (see the module note: no column copied out
/// of a `rows x metrics` array; `metrics x rows` is also a pandas frame's own
/// block, which `score_frame` takes without a copy).
pub(super) struct Columns {
    pub(super) values: Vec<f64>,
    pub(super) rows: usize,
}

impl Columns {
    pub(super) fn new(metrics: usize, rows: usize) -> Self {
        Columns {
            values: vec![0.0; metrics * rows],
            rows,
        }
    }

    /// Row `r`'s values, one per metric.
    #[inline]
    pub(super) fn set(&mut self, r: usize, row: &[f64]) {
        for (j, &v) in row.iter().enumerate() {
            if let Some(x) = self.values.get_mut(j * self.rows + r) {
                *x = v;
            }
        }
    }

    /// Per metric, its values (one slice each).
    pub(super) fn columns(&mut self) -> impl Iterator<Item = &mut [f64]> {
        self.values.chunks_mut(self.rows.max(1))
    }

    pub(super) fn into_py<'py>(
        self,
        py: Python<'py>,
        metrics: usize,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        self.values.into_pyarray(py).reshape([metrics, self.rows])
    }
}

/// A pipelined chunk to score: its first row in the batch, its rows, and per
/// metric the slice of the batch's values for them.
pub(super) struct Job<'a> {
    pub(super) base: usize,
    pub(super) m: Matched,
    pub(super) out: Vec<&'a mut [f64]>,
}

impl Job<'_> {
    /// Score the chunk; the first error with its batch row.
    pub(super) fn score(
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

/// What a batch call asks for: its rows, `threads`, `chunk_rows`.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) n: usize,
    pub(super) threads: Option<usize>,
    pub(super) chunk_rows: Option<usize>,
}

impl RowScorer {
    pub(super) fn batch_with<'py>(
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
        read_watched(py, &mut source, &mut reader, m)?;
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
        let mut cols = Columns::new(nm, n);
        let mut work = |cancel: &Cancel| {
            if serial {
                let mut row = vec![0.0; nm];
                for r in 0..n {
                    // A load of a flag: nothing beside a row's scoring.
                    cancel.check()?;
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
                            cancel.check()?;
                            score_row(m, r, 0, false, setup, specs, s, out)
                        })
                })??;
                for (r, row) in values.chunks(nm.max(1)).enumerate() {
                    cols.set(r, row);
                }
            }
            Ok::<_, Error>(())
        };
        let out = if m.entries().saturating_mul(nm) < WATCHED_WORK {
            py.detach(|| work(&Cancel::default()))
        } else {
            crate::bindings::interruptible(py, work)?
        };
        out.map_err(|e| to_py(py, e))?;
        let empty: Vec<bool> = m.rows.iter().map(|s| s.empty).collect();
        Ok((cols.into_py(py, nm)?, empty.into_pyarray(py)))
    }

    /// The rows a pipelined chunk holds, `None` for a serial batch: only two
    /// lists are pipelined, when the metrics do not depend on the whole
    /// batch (an automatic `gmax`), from `PIPELINE_ROWS` rows (any number
    /// with `chunk_rows`), and when two threads may run (see the module
    /// note).
    pub(super) fn pipeline_chunk(
        &self,
        source: &Source<'_>,
        run: Run,
    ) -> Result<Option<usize>, Error> {
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

    /// `batch_with` pipelined (`bindings::pipeline`): this thread reads a
    /// chunk of rows (under the GIL) while one pool thread scores the chunk
    /// read before it (numbers only: no Python object), in buffers that go
    /// back and forth.  When this thread needs a buffer and the pool thread
    /// has not taken the chunk waiting for it (a busy machine), this thread
    /// scores that chunk itself: the batch is then about as fast as the
    /// serial one; when the pool thread holds the only other buffer, a new
    /// one is made.  The same values and the same errors as the serial batch:
    /// a reading error first (the rows are read in order), then the count,
    /// the warning, and the scoring error of the first row.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn pipelined<'py>(
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
        let score = |job: &mut Job<'_>, s: &mut RowScratch, row: &mut [f64]| {
            if let Err(e) = job.score(setup, specs, s, row) {
                let mut slot = lock(&failed);
                if !slot.as_ref().is_some_and(|(r, _)| *r < e.0) {
                    *slot = Some(e);
                }
            }
        };
        // Per metric, its values not handed to a chunk yet.
        let mut outs: Vec<&mut [f64]> = cols.columns().collect();
        // A chunk's entries: its scoring a few milliseconds at most, however
        // many metrics and however long its rows.
        let entries = (CHUNK_WORK / nm.max(1)).max(1);
        let pipe: Pipe<Job<'_>, Matched> = Pipe::default();
        let reading = pool::in_place_scope(|scope| {
            let (pipe, score) = (&pipe, &score);
            scope.spawn(move |_| {
                let mut s = RowScratch::default();
                let mut row = vec![0.0; nm];
                pipe.work(|mut job| {
                    score(&mut job, &mut s, &mut row);
                    job.m
                });
            });
            let mut row = vec![0.0; nm];
            let mut read_all = || -> PyResult<()> {
                let mut cur = std::mem::take(first);
                let mut spare = Some(Matched::default());
                loop {
                    cur.clear();
                    let got = source.read(&mut reader, &mut cur, chunk, entries)?;
                    if got == 0 {
                        *first = cur;
                        return Ok(());
                    }
                    largest = largest.max(cur.largest());
                    empty.extend(cur.rows.iter().map(|s| s.empty));
                    // More rows than announced (lists grown by Python code
                    // run while reading): the batch fails, nothing to score.
                    if read + got > n {
                        read += got;
                        return Ok(());
                    }
                    let out = outs.iter_mut().map(|c| {
                        let (head, tail) = std::mem::take(c).split_at_mut(got);
                        *c = tail;
                        head
                    });
                    pipe.put(Job {
                        base: read,
                        m: cur,
                        out: out.collect(),
                    });
                    read += got;
                    // Ctrl-C: the handlers run here, between two reads (the
                    // pool thread holds numbers only; `Source::read` reads
                    // nothing it read ahead before them).
                    py.check_signals()?;
                    cur = match spare.take().or_else(|| pipe.spare()) {
                        Some(b) => b,
                        None => match pipe.take() {
                            Some(mut job) => {
                                score(&mut job, scratch, &mut row);
                                job.m
                            }
                            // The pool thread holds the other buffer: a new
                            // one, not a wait (a preempted pool thread would
                            // stall the reading).
                            None => Matched::default(),
                        },
                    };
                }
            };
            let out = read_all();
            // Close the pipe, score what the pool thread has not taken, and
            // wait for its last chunk (without the GIL).  A buffer is kept
            // for the next call.
            pipe.close();
            let mut kept = None;
            while let Some(mut job) = pipe.take() {
                if out.is_ok() {
                    score(&mut job, scratch, &mut row);
                }
                kept = Some(job.m);
            }
            py.detach(|| pipe.wait());
            if let Some(b) = pipe.spare().or(kept) {
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
