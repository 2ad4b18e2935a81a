//! Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009).
//!
//! A cascade user stops at rank r with probability R_r, the "satisfaction" of
//! the document there:
//!
//!   err@k = sum over ranks r <= k of (1 / r) * R_r * prod over i < r of (1 - R_i),
//!   R(g)  = (2^g - 1) / 2^gmax,
//!
//! g being the label clamped into [0, gmax] (negative labels and documents not
//! in the qrels: g = 0; float labels exactly).  `gmax` (parameter, default 0 =
//! automatic) is the largest label of the WHOLE qrels (every query, every
//! row), so one query's scale does not depend on its own judgments; when that
//! is not positive every R is 0 and err is 0.  Without k, the whole ranking.
//! The relevance level is not used.

use super::query::Query;

/// `R(g)` for one label.
#[inline]
fn satisfaction(label: f64, gmax: f64) -> f64 {
    if label.is_nan() || label <= 0.0 {
        return 0.0;
    }
    let g = label.min(gmax);
    (g.exp2() - 1.0) / gmax.exp2()
}

pub fn err(q: &Query<'_>, k: Option<usize>, gmax: f64) -> f64 {
    if gmax.is_nan() || gmax <= 0.0 {
        return 0.0;
    }
    let mut not_stopped = 1.0;
    let mut sum = 0.0;
    for (i, &l) in q.top(k).iter().enumerate() {
        let r = satisfaction(l, gmax);
        if r != 0.0 {
            sum += not_stopped * r / (i + 1) as f64;
            not_stopped *= 1.0 - r;
        }
    }
    sum
}

/// The largest label of the qrels (all rows), for the automatic `gmax`.
pub fn max_label(labels: &[f64]) -> f64 {
    labels.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // gmax 2: R(2) = 3/4, R(1) = 1/4.  Ranking 1, NaN, 2, -1.
        let q = query(&[1.0, f64::NAN, 2.0, -1.0], &[1.0, 2.0, -1.0]);
        let want = 0.25 + (0.75 * 0.75) / 3.0;
        assert!(close(err(&q.view(), None, 2.0), want));
        assert!(close(err(&q.view(), Some(2), 2.0), 0.25));
        // labels above gmax are clamped: gmax 1 -> R = 1/2 for both
        assert!(close(err(&q.view(), None, 1.0), 0.5 + 0.25 / 3.0));
        // float label 1.5 with gmax 2: (2^1.5 - 1) / 4
        let f = query(&[1.5], &[1.5]);
        assert!(close(
            err(&f.view(), None, 2.0),
            (2f64.powf(1.5) - 1.0) / 4.0
        ));
        assert_eq!(err(&q.view(), None, 0.0), 0.0);
    }

    #[test]
    fn automatic_gmax_is_the_largest_label() {
        assert_eq!(max_label(&[1.0, 3.0, -2.0]), 3.0);
        assert_eq!(max_label(&[-1.0]), 0.0);
    }
}
