//! Interpolated precision at recall levels (trec_eval `iprec_at_recall_x`)
//! and its average over recall points (trec_eval `11pt_avg`).
//!
//! Interpolated precision at rank `i`: `max over j >= i of P@j`, `j` running
//! over the retrieved ranks.  For a recall level `x`, the cut is a number of
//! relevant documents `c`:
//!
//! * trec_eval 10.0 (`version >= 10`, the default): `c = lround(x * R)`
//!   (round half away from zero);
//! * trec_eval 9.0.8 and pytrec_eval (`version = 9`): `c = trunc(x * R + 0.9)`.
//!
//! `iprec_at_recall(recall = x)` is the interpolated precision at the rank of
//! the `c`-th relevant retrieved document; 0 when `c` exceeds the relevant
//! documents retrieved; when `c <= 0` it is the interpolated precision at
//! rank 1 (the largest `P@j`).  An empty ranking scores 0 (trec_eval would
//! divide 0 by 0 when `c = 0`; a query missing from the run gets 0 there).
//!
//! `iprec_avg(lo, hi, step)` is the mean of `iprec_at_recall` over the recall
//! points `lo, lo + step, ..., hi` (default 0, 0.1, ..., 1: the 11 points of
//! trec_eval `11pt_avg`), each point rounded to 10 decimals, so `0.3` is the
//! double nearest 0.3 as when trec_eval reads it.  The values are added from
//! the highest point down, as trec_eval does.

use super::query::{is_rel, Query};

/// The cut (in relevant documents) for recall level `x` with `r` relevant.
pub fn cut(x: f64, r: usize, version: f64) -> i64 {
    let v = x * r as f64;
    if version >= 10.0 {
        v.round() as i64
    } else {
        (v + 0.9) as i64
    }
}

/// Interpolated precision at the rank of the `c`-th relevant document.
fn interpolated(ranked: &[f64], level: f64, rel_ret: usize, c: i64) -> f64 {
    let n = ranked.len();
    if n == 0 || c > rel_ret as i64 {
        return 0.0;
    }
    let mut best = rel_ret as f64 / n as f64;
    let mut so_far = rel_ret;
    let mut i = n;
    while i > 0 && so_far > 0 {
        let p = so_far as f64 / i as f64;
        if best < p {
            best = p;
        }
        if is_rel(ranked[i - 1], level) {
            if so_far as i64 == c {
                return best;
            }
            so_far -= 1;
        }
        i -= 1;
    }
    best
}

pub fn iprec_at_recall(q: &Query<'_>, level: f64, recall: f64, version: f64) -> f64 {
    let c = cut(recall, q.num_rel(level), version);
    interpolated(q.ranked, level, q.rel_in_top(None, level), c)
}

/// The recall points `lo, lo + step, ..., hi`, rounded to 10 decimals.
pub fn points(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let n = if step > 0.0 && hi >= lo {
        ((hi - lo) / step).round() as usize + 1
    } else {
        1
    };
    (0..n)
        .map(|i| {
            let x = lo + i as f64 * step;
            format!("{x:.10}").parse::<f64>().unwrap_or(x)
        })
        .collect()
}

pub fn iprec_avg(q: &Query<'_>, level: f64, pts: &[f64], version: f64) -> f64 {
    let r = q.num_rel(level);
    let rel_ret = q.rel_in_top(None, level);
    let mut sum = 0.0;
    for &x in pts.iter().rev() {
        sum += interpolated(q.ranked, level, rel_ret, cut(x, r, version));
    }
    sum / pts.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn cuts_by_version() {
        // 0.1 * 3 = 0.3: lround -> 0, trunc(1.2) -> 1
        assert_eq!(cut(0.1, 3, 10.0), 0);
        assert_eq!(cut(0.1, 3, 9.0), 1);
        // 0.5 * 3 = 1.5: lround -> 2 (half away from zero), trunc(2.4) -> 2
        assert_eq!(cut(0.5, 3, 10.0), 2);
        // 0.4 * 3 = 1.2: lround -> 1, trunc(2.1) -> 2
        assert_eq!(cut(0.4, 3, 10.0), 1);
        assert_eq!(cut(0.4, 3, 9.0), 2);
        // 0.7 * 3 is 2.0999999999999996 in doubles: + 0.9 truncates to 2
        // (the platform fragility that made 10.0 switch to lround)
        assert_eq!(cut(0.7, 3, 9.0), 2);
    }

    #[test]
    fn interpolation() {
        // relevant at ranks 2, 3, 6 of 6; R = 4.
        // P@2 = 1/2, P@3 = 2/3, P@6 = 3/6.  Interpolated: rank 2 -> 2/3,
        // rank 3 -> 2/3, rank 6 -> 1/2.
        let q = query(
            &[0.0, 1.0, 1.0, f64::NAN, 0.0, 1.0],
            &[0.0, 1.0, 1.0, 1.0, 1.0],
        );
        let v = q.view();
        assert!(close(iprec_at_recall(&v, 1.0, 0.0, 10.0), 2.0 / 3.0));
        assert!(close(iprec_at_recall(&v, 1.0, 0.25, 10.0), 2.0 / 3.0));
        assert!(close(iprec_at_recall(&v, 1.0, 0.5, 10.0), 2.0 / 3.0));
        assert!(close(iprec_at_recall(&v, 1.0, 0.75, 10.0), 0.5));
        assert_eq!(iprec_at_recall(&v, 1.0, 1.0, 10.0), 0.0);
        // 0.6 * 4 = 2.4: 10.0 -> c = 2 (2/3); 9.0.8 -> trunc(3.3) = 3 (1/2)
        assert!(close(iprec_at_recall(&v, 1.0, 0.6, 10.0), 2.0 / 3.0));
        assert!(close(iprec_at_recall(&v, 1.0, 0.6, 9.0), 0.5));
        // 11 points, R = 4, version 10: cuts 0,0,1,1,2,2,2,3,3,4,4
        // values 2/3 x7, 1/2 x2, 0 x2 -> (14/3 + 1) / 11
        let pts = points(0.0, 1.0, 0.1);
        assert_eq!(pts.len(), 11);
        assert_eq!(pts[3], 0.3);
        assert!(close(
            iprec_avg(&v, 1.0, &pts, 10.0),
            (14.0 / 3.0 + 1.0) / 11.0
        ));
        let empty = query(&[], &[1.0]);
        assert_eq!(iprec_at_recall(&empty.view(), 1.0, 0.0, 10.0), 0.0);
        let norel = query(&[0.0, f64::NAN], &[0.0]);
        assert_eq!(iprec_avg(&norel.view(), 1.0, &pts, 10.0), 0.0);
    }
}
