//! [`evaluate_topk`]: ranked id lists, each row a query's ranking best
//! first, scored against its relevant ids or the retrieved ids' labels.

use super::empty::empty_row;
use super::general::score_row;
use super::run::{finite, run_rows, setup};
use super::{row_room, DenseEvaluation, DenseTies, Empty, Matrix, Numbers, Scratch};
use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use crate::core::metrics::MetricSpec;

/// Ranked ids and what is relevant to each row, for [`evaluate_topk`].
#[derive(Clone, Copy, Debug)]
pub enum Relevant<'a> {
    /// The relevant ids of each row (any order), padded with negative ids.
    Ids(Matrix<'a, i64>),
    /// The label of each retrieved id, aligned with `ids`.
    Labels(Numbers<'a>),
}

/// Score ranked id lists: row `i` of `ids` is query `i`'s ranking, best
/// first; negative ids are padding (left out, ranks closing up).  With
/// `Relevant::Ids` a retrieved id in the row's relevant ids has label 1 and
/// any other is not judged (trec_eval: a document missing from the qrels),
/// and R is the number of distinct relevant ids; with `Relevant::Labels` each
/// retrieved id has the aligned label and the judged pool is the retrieved
/// ids (R counts the relevant ones among them).  A non-negative id twice in
/// one row is an error.  Stopped by `cancel` between rows.
pub fn evaluate_topk(
    ids: &Matrix<'_, i64>,
    relevant: &Relevant<'_>,
    metrics: &[MetricSpec],
    level: f64,
    empty: Empty,
    cancel: &Cancel,
) -> Result<DenseEvaluation> {
    let rows = ids.rows;
    match relevant {
        Relevant::Ids(r) if r.rows != rows => {
            return Err(Error::InvalidInput(format!(
                "relevant has {} rows, ids {rows}: they must match",
                r.rows
            )))
        }
        Relevant::Labels(l) if l.shape() != (rows, ids.cols) => {
            return Err(Error::InvalidInput(format!(
                "relevant labels have shape {:?}, ids {:?}: they must match",
                l.shape(),
                (rows, ids.cols)
            )))
        }
        _ => {}
    }
    row_room(rows, ids.cols)?;
    let max = || match relevant {
        Relevant::Ids(_) => 1.0,
        Relevant::Labels(l) => {
            // The padding's labels are not candidates: left out.
            let mut s = Scratch::default();
            (0..rows).fold(0.0, |acc, i| {
                l.load(i, &mut s.labels);
                let kept = (0..ids.cols).filter(|&j| ids.get(i, j) >= 0);
                kept.fold(acc, |a: f64, j| a.max(s.labels[j]))
            })
        }
    };
    let metrics = setup(metrics, level, DenseTies::First, max)?;
    let ev = run_rows(rows, metrics.len(), cancel, |s, i, out| {
        s.ids.clear();
        s.ids.extend((0..ids.cols).map(|j| ids.get(i, j)));
        check_distinct(i, &s.ids, &mut s.rel)?;
        s.ranked.clear();
        s.bounds.clear();
        match relevant {
            Relevant::Ids(r) => {
                s.rel.clear();
                s.rel
                    .extend((0..r.cols).map(|j| r.get(i, j)).filter(|&x| x >= 0));
                s.rel.sort_unstable();
                s.rel.dedup();
                s.ranked.extend(s.ids.iter().filter(|&&d| d >= 0).map(|d| {
                    if s.rel.binary_search(d).is_ok() {
                        1.0
                    } else {
                        f64::NAN
                    }
                }));
                s.labels.clear();
                s.labels.resize(s.rel.len(), 1.0);
            }
            Relevant::Labels(l) => {
                l.load(i, &mut s.labels);
                if let Some(j) = s.labels.iter().position(|l| !l.is_finite()) {
                    return Err(Error::InvalidInput(format!(
                        "relevant[{i}, {j}] is {}: labels must be finite",
                        s.labels[j]
                    )));
                }
                let mut w = 0;
                for j in 0..s.ids.len() {
                    if s.ids[j] >= 0 {
                        s.labels[w] = s.labels[j];
                        w += 1;
                    }
                }
                s.labels.truncate(w);
                s.ranked.extend_from_slice(&s.labels);
            }
        }
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        score_row(s, &metrics, level, DenseTies::First, out);
        Ok(false)
    })?;
    finite(ev, &metrics, "row")
}

/// A non-negative id listed twice in row `i` is an error.
fn check_distinct(i: usize, ids: &[i64], buf: &mut Vec<i64>) -> Result<()> {
    buf.clear();
    buf.extend(ids.iter().copied().filter(|&d| d >= 0));
    buf.sort_unstable();
    match buf.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::InvalidInput(format!(
            "ids row {i}: id {} is listed more than once",
            w[0]
        ))),
        None => Ok(()),
    }
}
