//! Yet Another Average Precision (trec_eval `yaap`; Robertson, "On Smoothing
//! Average Precision", ECIR 2012).
//!
//! `yaap` = ln((1 + S) / (1 + R - S)), where S = sum over the relevant retrieved
//! documents of precision at their rank (the numerator of AP) and R the number
//! of relevant documents.  Monotonic with AP on one query, but finite and
//! unbounded at both ends, so that means over queries are less dominated by the
//! extremes: nothing relevant retrieved gives ln(1 / (1 + R)) (0 when R = 0),
//! every relevant document on top gives ln(1 + R).  Never NaN (S <= R).

use super::query::{is_rel, Query};

pub fn yaap(q: &Query<'_>, level: f64) -> f64 {
    let r = q.num_rel(level) as f64;
    let mut found = 0usize;
    let mut sum = 0.0;
    for (i, &l) in q.top(None).iter().enumerate() {
        if is_rel(l, level) {
            found += 1;
            sum += found as f64 / (i + 1) as f64;
        }
    }
    ((1.0 + sum) / (1.0 + r - sum)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // relevant at ranks 1 and 3, R = 3: S = 1 + 2/3
        let q = query(&[1.0, 0.0, 2.0, f64::NAN], &[1.0, 0.0, 2.0, 1.0]);
        let s: f64 = 1.0 + 2.0 / 3.0;
        assert!(close(yaap(&q.view(), 1.0), ((1.0 + s) / (4.0 - s)).ln()));
        // nothing relevant: ln(1 / 1) = 0
        let z = query(&[0.0], &[0.0]);
        assert_eq!(yaap(&z.view(), 1.0), 0.0);
        // all relevant on top: ln(1 + R)
        let all = query(&[1.0, 1.0], &[1.0, 1.0]);
        assert!(close(yaap(&all.view(), 1.0), 3f64.ln()));
    }
}
