//! [`evaluate_flat`]: flat `(scores, labels)` cells grouped by query
//! ([`FlatGroups`]), each group a run of cells read as a row, through the
//! sparse path by the same blocks as the dense rows
//! (`sparse::Layout::Runs`), or through the general path.  Ungrouped cells
//! are first copied into group order ([`Numbers::in_groups`]).

use super::empty::empty_row;
use super::general::{check_row, score_row};
use super::run::{finite, run_sparse, setup};
use super::ties::rank_row;
use super::{sparse, DenseEvaluation, DenseTies, Empty, FlatGroups, Numbers, Scratch, Valid};
use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use crate::core::metrics::{err, MetricSpec};

/// Score flat `(scores, labels)` cells (1 x N matrices) grouped by
/// [`group_flat`](super::group_flat): group `g` is query `g`, its cells in input order (so
/// `DenseTies::First` breaks ties by input position); stopped by `cancel`
/// between groups.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_flat(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    groups: &FlatGroups,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    flat_path(
        scores, labels, groups, metrics, level, ties, empty, false, cancel,
    )
}

/// [`evaluate_flat`]; `general` as in [`dense_path`](super::rows::dense_path).  Ungrouped cells are
/// first copied into group order ([`Numbers::in_groups`]), so that every
/// group is a run of cells, read by the sparse path as a row when it applies.
#[allow(clippy::too_many_arguments)]
pub(super) fn flat_path(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    groups: &FlatGroups,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    general: bool,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    let n = scores.shape().1;
    if scores.shape().0 != 1 || labels.shape() != (1, n) {
        return Err(Error::InvalidInput(format!(
            "scores and labels must be flat with as many cells, got {:?} and {:?}",
            scores.shape(),
            labels.shape()
        )));
    }
    let FlatGroups { offsets, place, .. } = groups;
    // Each place is checked where it is written (`to_places`), not by a scan
    // of its own here.
    let bad = offsets.first() != Some(&0)
        || offsets.last() != Some(&(n as i64))
        || offsets.windows(2).any(|w| w[1] < w[0])
        || (!place.is_empty() && place.len() != n);
    if bad {
        return Err(Error::InvalidInput(
            "internal: flat groups do not fit the cells".into(),
        ));
    }
    let runs = (offsets.as_slice(), metrics, level, ties, empty, general);
    if place.is_empty() {
        return flat_runs(scores, labels, runs, cancel, |q| q);
    }
    let (Some(s), Some(l)) = (scores.in_groups(place), labels.in_groups(place)) else {
        return Err(Error::InvalidInput(
            "internal: flat cells could not be put in group order".into(),
        ));
    };
    // The cell at place `q` (for a message only: a scan of the places).
    let cell = |q: usize| place.iter().position(|&p| p as usize == q).unwrap_or(q);
    flat_runs(&s.view(), &l.view(), runs, cancel, cell)
}

/// The groups of [`flat_path`] as runs of cells in group order:
/// `offsets[g]..offsets[g + 1]`; `cell(q)`: the input cell at place `q`, for
/// messages.
fn flat_runs(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    (offsets, metrics, level, ties, empty, general): (
        &[i64],
        &[MetricSpec],
        f64,
        DenseTies,
        Empty,
        bool,
    ),
    cancel: &Cancel,
    cell: impl Fn(usize) -> usize + Sync,
) -> Result<DenseEvaluation> {
    let n = scores.shape().1;
    let metrics = setup(metrics, level, ties, || {
        let mut row = Vec::new();
        labels.load_cells(0..n, &mut row);
        err::max_label(&row)
    })?;
    let fast = if general {
        None
    } else {
        sparse::plan(&metrics, level, ties, &Valid::All)
    };
    let general = |s: &mut Scratch, g: usize, out: &mut [f64]| {
        let (a, b) = (offsets[g] as usize, offsets[g + 1] as usize);
        scores.load_cells(a..b, &mut s.scores);
        labels.load_cells(a..b, &mut s.labels);
        check_row(&s.scores, &s.labels, |j| format!("[{}]", cell(a + j)))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    };
    // Each group a run of cells, by blocks of rows as the dense path's
    // (`sparse::Layout::Runs`).
    let layout = sparse::Layout::Runs(offsets);
    let sparse = (scores, labels, &layout, level, empty);
    let ev = run_sparse(
        offsets.len() - 1,
        metrics.len(),
        fast.as_ref(),
        sparse,
        general,
        cancel,
    )?;
    finite(ev, &metrics, "group")
}
