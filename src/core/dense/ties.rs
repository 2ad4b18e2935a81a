//! How tied scores are ordered ([`DenseTies`]), and a row ranked by them.
//!
//! Two ways to rank a row, the same ranked labels (tested: counting equals
//! sorting): by counting ([`count_ranks`]) when ties go by column and few
//! cells have a non-zero label ([`COUNT_PER_LOG2`]), each such cell's rank the
//! number of cells above it; otherwise by sorting the row's columns.

use super::Scratch;
use crate::core::error::{Error, Result};

/// How tied scores are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseTies {
    /// Column order: the lower column index ranks first.
    First,
    /// The expected value over the orderings of each group of equal scores
    /// (`metrics/expected.rs`).
    Expected,
    /// Higher labels first within a group of equal scores (then column order):
    /// the best value over the orderings for every metric that rewards
    /// ranking higher labels higher.
    Best,
    /// Lower labels first within a group of equal scores (then column order).
    Worst,
}

impl DenseTies {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "first" => DenseTies::First,
            "expected" => DenseTies::Expected,
            "best" => DenseTies::Best,
            "worst" => DenseTies::Worst,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "ties must be 'first', 'expected', 'best' or 'worst', got {name:?}"
                )))
            }
        })
    }
}

/// Rank cells by counting, rather than sorting, when at most this many per
/// `log2(n)` have a non-zero label: each such cell's rank is the number of
/// cells above it, an `n`-long branch-free count.  Why: with the few relevant
/// labels of retrieval data (5 in 100) this is several times faster than
/// sorting the row,
/// and the zero-label cells need no order among themselves (they are
/// interchangeable for every metric).
pub(super) const COUNT_PER_LOG2: usize = 4;

/// Fill `s.ranked` (labels in rank order) and, for `Expected`, `s.bounds`
/// (the tie groups) from `s.scores` and `s.labels`.
pub(super) fn rank_row(s: &mut Scratch, ties: DenseTies) {
    if counts(&s.labels, ties) {
        count_ranks(&s.scores, &s.labels, &mut s.ranked, &mut s.bounds);
    } else {
        rank_by_sorting(s, ties);
    }
}

/// Whether a row with these labels is ranked by counting ([`COUNT_PER_LOG2`]).
pub(super) fn counts(labels: &[f64], ties: DenseTies) -> bool {
    let n = labels.len();
    let nonzero: usize = labels.iter().map(|&l| usize::from(l != 0.0)).sum();
    let log2n = usize::BITS as usize - n.leading_zeros() as usize;
    ties == DenseTies::First && nonzero <= COUNT_PER_LOG2 * log2n
}

/// `DenseTies::First` by counting: the rank of a cell with a non-zero label
/// is the number of cells with a higher score, or an equal score and a lower
/// column; the other ranks hold label 0.
pub(super) fn count_ranks<T: Copy + PartialOrd>(
    sc: &[T],
    labels: &[f64],
    ranked: &mut Vec<f64>,
    bounds: &mut Vec<usize>,
) {
    ranked.clear();
    bounds.clear();
    ranked.resize(sc.len(), 0.0);
    for (j, &l) in labels.iter().enumerate() {
        if l == 0.0 {
            continue;
        }
        let x = sc[j];
        let above = sc[..j].iter().filter(|&&y| y >= x).count()
            + sc[j + 1..].iter().filter(|&&y| y > x).count();
        ranked[above] = l;
    }
}

pub(super) fn rank_by_sorting(s: &mut Scratch, ties: DenseTies) {
    let n = s.scores.len();
    s.ranked.clear();
    s.bounds.clear();
    s.order.clear();
    s.order.extend(0..n as u32);
    let (sc, lb) = (&s.scores, &s.labels);
    let by_score = |a: &u32, b: &u32| sc[*b as usize].total_cmp(&sc[*a as usize]);
    match ties {
        DenseTies::First | DenseTies::Expected => s
            .order
            .sort_unstable_by(|a, b| by_score(a, b).then(a.cmp(b))),
        DenseTies::Best => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*b as usize].total_cmp(&lb[*a as usize]))
                .then(a.cmp(b))
        }),
        DenseTies::Worst => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*a as usize].total_cmp(&lb[*b as usize]))
                .then(a.cmp(b))
        }),
    }
    s.ranked.extend(s.order.iter().map(|&j| lb[j as usize]));
    if ties == DenseTies::Expected {
        for (p, &j) in s.order.iter().enumerate() {
            if p == 0 || sc[j as usize] != sc[s.order[p - 1] as usize] {
                s.bounds.push(p);
            }
        }
        if s.bounds.len() == n {
            // No tie: the fixed order is the only one.
            s.bounds.clear();
        } else {
            s.bounds.push(n);
        }
    }
}
