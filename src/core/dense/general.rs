//! The general path: one row (or group) loaded as `f64`, its candidates
//! kept, checked, ranked into a label vector and scored by the id path's
//! kernels (`eval::score_ranking`).  It has every metric family and tie rule,
//! and takes every row the sparse path leaves.

use super::empty::empty_row;
use super::ties::{count_ranks, counts, rank_by_sorting};
use super::{DenseTies, Empty, Matrix, Numbers, Scratch, Valid};
use crate::core::error::{Error, Result};
use crate::core::eval::score_ranking;
use crate::core::metrics::query::{Query, TieGroups};
use crate::core::metrics::MetricSpec;

/// Build the shared running sums from this many metrics on.
const PREFIX_FROM: usize = 12;

/// Row `i` of float32 scores, `DenseTies::First`, no mask: the scores are
/// compared as float32, where they lie when the row is contiguous, and
/// widened only when the row is sorted.  Why: counting on float32 compares
/// twice as many cells an instruction, and most rows skip the widening.  Same
/// ranks, so the same values, bit for bit: float32 to float64 is exact and
/// keeps every comparison.
#[allow(clippy::too_many_arguments)]
pub(super) fn f32_row(
    s: &mut Scratch,
    m: &Matrix<'_, f32>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    i: usize,
    metrics: &[MetricSpec],
    level: f64,
    empty: Empty,
    out: &mut [f64],
) -> Result<bool> {
    let mut buf = std::mem::take(&mut s.scores32);
    let full = m.row_prefix(i, m.cols, &mut buf);
    let n = valid.row_len(i, full.len());
    let row = full.get(..n).unwrap_or(full);
    labels.load(i, &mut s.labels);
    s.labels.truncate(row.len());
    s.cols.clear();
    let result = (|| {
        check_row(row, &s.labels, matrix_cell(i, &[]))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        if counts(&s.labels, DenseTies::First) {
            count_ranks(row, &s.labels, &mut s.ranked, &mut s.bounds);
        } else {
            s.scores.clear();
            s.scores.extend(row.iter().map(|&x| x as f64 + 0.0));
            rank_by_sorting(s, DenseTies::First);
        }
        score_row(s, metrics, level, DenseTies::First, out);
        Ok(false)
    })();
    s.scores32 = buf;
    result
}

/// Drop the cells of row `i` that are not candidates from `s.scores` and
/// `s.labels`, keeping their order; `s.cols` gets the columns kept (empty
/// when all are).
pub(super) fn keep_valid(s: &mut Scratch, valid: &Valid<'_>, i: usize) {
    s.cols.clear();
    match valid {
        Valid::All => {}
        Valid::Lengths(len) => {
            let n = (len[i].max(0) as usize).min(s.scores.len());
            s.scores.truncate(n);
            s.labels.truncate(n);
        }
        Valid::Mask(m) => {
            m.load(i, &mut s.mask, |x| x as f64);
            for j in 0..s.mask.len() {
                if s.mask[j] != 0.0 {
                    s.scores[s.cols.len()] = s.scores[j];
                    s.labels[s.cols.len()] = s.labels[j];
                    s.cols.push(j as u32);
                }
            }
            s.scores.truncate(s.cols.len());
            s.labels.truncate(s.cols.len());
            if s.cols.len() == s.mask.len() {
                s.cols.clear();
            }
        }
    }
}

/// NaN scores and NaN or infinite labels are errors naming the cell:
/// `cell(j)` is the index of the row's `j`-th kept cell as users write it.
pub(super) fn check_row<T: Copy + PartialEq>(
    scores: &[T],
    labels: &[f64],
    cell: impl Fn(usize) -> String,
) -> Result<()> {
    // Branch-free scans first (they vectorise); positions only on failure.
    // `x != x`: NaN, in any float type.
    #[allow(clippy::eq_op)]
    let nan = scores.iter().fold(false, |a, &x| a | (x != x));
    if !nan && !labels.iter().fold(false, |a, l| a | !l.is_finite()) {
        return Ok(());
    }
    #[allow(clippy::eq_op)]
    if let Some(j) = scores.iter().position(|&x| x != x) {
        return Err(Error::InvalidInput(format!(
            "scores{} is NaN (pass mask= to leave cells out)",
            cell(j)
        )));
    }
    if let Some(j) = labels.iter().position(|l| !l.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "labels{} is {} (labels must be finite; pass mask= to leave cells out)",
            cell(j),
            labels[j]
        )));
    }
    Ok(())
}

/// `[i, j]`: cell `j` of row `i`, `cols` holding the column of each kept
/// cell (empty when all are kept).
pub(super) fn matrix_cell(i: usize, cols: &[u32]) -> impl Fn(usize) -> String + '_ {
    move |j| format!("[{i}, {}]", cols.get(j).map_or(j, |&c| c as usize))
}

/// Every metric on the ranked row into `out`.
pub(super) fn score_row(
    s: &mut Scratch,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    out: &mut [f64],
) {
    s.ideal.clear();
    s.ideal
        .extend(s.labels.iter().copied().filter(|&l| l > 0.0));
    s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let q = Query {
        ranked: &s.ranked,
        judged: &s.labels,
        ideal: &s.ideal,
        ties: if ties == DenseTies::Expected && !s.bounds.is_empty() {
            TieGroups {
                labels: &s.ranked,
                bounds: &s.bounds,
            }
        } else {
            TieGroups::default()
        },
        prefix: None,
        subtopics: Default::default(),
    };
    // The shared running sums pay off from about a dozen metrics: below,
    // each kernel scanning its own top k is faster (same values, bit for bit:
    // `metrics::prefix_tests`).
    let prefix = (metrics.len() >= PREFIX_FROM).then_some(&mut s.prefix);
    score_ranking(prefix, q, metrics, level, out);
}
