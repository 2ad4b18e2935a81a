//! [`evaluate_dense`]: row `i` of a score matrix is query `i`, scored
//! against row `i` of the label matrix; by blocks of rows through the sparse
//! path where it applies, each row it leaves through the general path.

use super::empty::empty_row;
use super::general::{check_row, f32_row, keep_valid, matrix_cell, score_row};
use super::matrix::check_valid;
use super::run::{finite, run_sparse, setup};
use super::ties::rank_row;
use super::{row_room, sparse, DenseEvaluation, DenseTies, Empty, Numbers, Scratch, Valid};
use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use crate::core::metrics::{err, MetricSpec};

/// Score every row of `scores` against the same row of `labels` on every
/// metric (semantics: the [`dense`](super) module doc); stopped by `cancel`
/// between rows.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_dense(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    dense_path(
        scores, labels, valid, metrics, level, ties, empty, false, cancel,
    )
}

/// [`evaluate_dense`]; `general`: every row through the general path, never
/// the sparse one (the tests compare the two).
#[allow(clippy::too_many_arguments)]
pub(super) fn dense_path(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
    general: bool,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    let (rows, cols) = scores.shape();
    if labels.shape() != (rows, cols) {
        return Err(Error::InvalidInput(format!(
            "labels has shape {:?}, scores {:?}: they must match",
            labels.shape(),
            (rows, cols)
        )));
    }
    check_valid(valid, rows, cols)?;
    row_room(rows, cols)?;
    let metrics = setup(metrics, level, ties, || max_label(labels, valid, rows))?;
    let fast = if general {
        None
    } else {
        sparse::plan(&metrics, level, ties, valid)
    };
    let general = |s: &mut Scratch, i: usize, out: &mut [f64]| {
        if let (Numbers::F32(m), DenseTies::First, false) =
            (scores, ties, matches!(valid, Valid::Mask(_)))
        {
            return f32_row(s, m, labels, valid, i, &metrics, level, empty, out);
        }
        scores.load(i, &mut s.scores);
        labels.load(i, &mut s.labels);
        keep_valid(s, valid, i);
        check_row(&s.scores, &s.labels, matrix_cell(i, &s.cols))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    };
    let layout = sparse::Layout::Matrix(valid);
    let sparse = (scores, labels, &layout, level, empty);
    let ev = run_sparse(rows, metrics.len(), fast.as_ref(), sparse, general, cancel)?;
    finite(ev, &metrics, "row")
}

/// The largest label of the candidates (0 at least).
fn max_label(labels: &Numbers<'_>, valid: &Valid<'_>, rows: usize) -> f64 {
    let mut s = Scratch::default();
    (0..rows).fold(0.0, |acc, i| {
        labels.load(i, &mut s.labels);
        s.scores.clear();
        s.scores.resize(s.labels.len(), 0.0);
        keep_valid(&mut s, valid, i);
        acc.max(err::max_label(&s.labels))
    })
}
