//! The loops every entry point shares: the metrics checked and resolved
//! ([`setup`]), and the parallel loops over rows ([`run_rows`]) and over
//! blocks of rows through the sparse path ([`run_sparse`], [`run_blocks`]).
//!
//! Every value of a non-empty row is finite ([`finite`]): a gain or a sum
//! past the largest float is the error `evaluate` gives, checked once over
//! the values rather than in each kernel (the sparse kernels stay as they are).
//!
//! The loops check the caller's [`Cancel`] flag before each row and each
//! block of rows (never per cell), as `evaluate` checks it per query.
//!
//! One task holds at least [`TASK_ROWS`] rows, run in order on one thread
//! with one per-thread [`Scratch`]; a call of at most that many rows runs on
//! the calling thread without rayon.

use super::{filled, sparse, DenseEvaluation, DenseTies, Empty, Numbers, Scratch};
use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use crate::core::eval::{self, Options, Ties};
use crate::core::metrics::{self, Family, MetricSpec};
use rayon::prelude::*;

/// `rows` rows (or groups) of `nm` metrics: by blocks of rows through the
/// sparse kernels of `fast` where there is a plan, each row they leave by
/// `general`; else every row by `general`.
pub(super) fn run_sparse(
    rows: usize,
    nm: usize,
    fast: Option<&sparse::Plan>,
    (scores, labels, layout, level, empty): (
        &Numbers<'_>,
        &Numbers<'_>,
        &sparse::Layout<'_>,
        f64,
        Empty,
    ),
    general: impl Fn(&mut Scratch, usize, &mut [f64]) -> Result<bool> + Sync,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    match fast {
        Some(fast) if nm > 0 => run_blocks(rows, nm, cancel, |s, i0, out, flags| {
            let done = sparse::rows(
                s, scores, labels, layout, i0, fast, level, empty, out, flags,
            );
            for (r, (o, f)) in out.chunks_mut(nm).zip(flags.iter_mut()).enumerate() {
                if done >> r & 1 == 0 {
                    *f = general(s, i0 + r, o)?;
                }
            }
            Ok(())
        }),
        _ => run_rows(rows, nm, cancel, general),
    }
}

/// The metrics, checked and resolved (err's automatic `gmax`: the largest
/// label of the whole input, as the id path takes the largest of the qrels).
pub(super) fn setup(
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    max_label: impl FnOnce() -> f64,
) -> Result<Vec<MetricSpec>> {
    let mut opts = Options::new(level);
    if ties == DenseTies::Expected {
        opts.ties = Ties::Expected;
    }
    eval::check(metrics, &opts)?;
    // The scan for the largest label only when an err@k takes it.
    let auto = |m: &MetricSpec| m.family == Family::Err && m.param("gmax") <= 0.0;
    let max = if metrics.iter().any(auto) {
        max_label()
    } else {
        0.0
    };
    Ok(metrics::resolve_gmax(metrics, max))
}

/// Rows one task of the loops over rows holds (`run_rows`, `run_blocks`):
/// a call of at most this many rows runs them in order on the calling thread,
/// without rayon (so a binding may call it without the pool:
/// `eval::with_threads_or_inline`).
pub const TASK_ROWS: usize = sparse::BLOCK;

/// The parallel loop over rows: `row(scratch, i, out)` writes row `i`'s
/// values and says whether it was empty.  Tasks of [`TASK_ROWS`] rows at
/// least; one task's rows in order on this thread.
pub(super) fn run_rows(
    rows: usize,
    nm: usize,
    cancel: &Cancel,
    row: impl Fn(&mut Scratch, usize, &mut [f64]) -> Result<bool> + Sync,
) -> Result<DenseEvaluation> {
    let mut values = filled(rows, nm, 0.0)?;
    let mut flags = filled(rows, 1, false)?;
    if rows <= TASK_ROWS {
        let mut s = Scratch::default();
        for (i, (out, flag)) in values.chunks_mut(nm.max(1)).zip(&mut flags).enumerate() {
            cancel.check()?;
            *flag = row(&mut s, i, out)?;
        }
    } else {
        values
            .par_chunks_mut(nm)
            .zip(flags.par_iter_mut())
            .enumerate()
            .with_min_len(TASK_ROWS)
            .try_for_each_init(Scratch::default, |s, (i, (out, flag))| {
                cancel.check()?;
                *flag = row(s, i, out)?;
                Ok::<(), Error>(())
            })?;
    }
    Ok(DenseEvaluation {
        values,
        empty: flags,
    })
}

/// [`run_rows`] by blocks of [`sparse::BLOCK`] rows (`nm > 0`):
/// `block(scratch, i0, out, flags)` writes the values and empty flags of rows
/// `i0..i0 + flags.len()`.
fn run_blocks(
    rows: usize,
    nm: usize,
    cancel: &Cancel,
    block: impl Fn(&mut Scratch, usize, &mut [f64], &mut [bool]) -> Result<()> + Sync,
) -> Result<DenseEvaluation> {
    let mut values = filled(rows, nm, 0.0)?;
    let mut flags = filled(rows, 1, false)?;
    let b = sparse::BLOCK;
    if rows <= TASK_ROWS {
        cancel.check()?;
        block(&mut Scratch::default(), 0, &mut values, &mut flags)?;
    } else {
        values
            .par_chunks_mut((b * nm).max(1))
            .zip(flags.par_chunks_mut(b))
            .enumerate()
            .try_for_each_init(Scratch::default, |s, (c, (out, fl))| {
                cancel.check()?;
                block(s, c * b, out, fl)
            })?;
    }
    Ok(DenseEvaluation {
        values,
        empty: flags,
    })
}

/// Every value of each non-empty row of `ev` is finite (`eval::check_values`):
/// the rows' labels were checked finite, so a value that is not is a gain or
/// a sum past the largest float.  `what` names a row (`"row"`, `"group"`).
pub(super) fn finite(
    ev: DenseEvaluation,
    metrics: &[MetricSpec],
    what: &str,
) -> Result<DenseEvaluation> {
    // One branch-free pass over every value first (the common case: all
    // finite); the rows are named only when it finds one that is not.
    if ev.values.iter().fold(true, |a, v| a & v.is_finite()) {
        return Ok(ev);
    }
    let nm = metrics.len().max(1);
    for (i, (out, &empty)) in ev.values.chunks(nm).zip(&ev.empty).enumerate() {
        if !empty {
            eval::check_values(out, metrics, false, || format!("{what} {i}"))?;
        }
    }
    Ok(ev)
}
