//! Average precision.
//!
//! `map` = (sum over ranks i holding a relevant document of precision@i) / R,
//! 0 when R = 0 (trec_eval `map`, ir_measures `AP`).  Relevant documents never
//! retrieved contribute 0.  `map@k` restricts the sum to ranks <= k and still
//! divides by R (trec_eval `map_cut_k`, ir_measures `AP@k`).

use super::query::{is_rel, Query};

pub fn average_precision(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let r = q.num_rel(level);
    if r == 0 {
        return 0.0;
    }
    if let Some(p) = q.prefix_at(level) {
        return p.ap[q.depth(k)] / r as f64;
    }
    let mut found = 0usize;
    let mut sum = 0.0;
    for (i, &l) in q.top(k).iter().enumerate() {
        if is_rel(l, level) {
            found += 1;
            sum += found as f64 / (i + 1) as f64;
        }
    }
    sum / r as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // relevant at ranks 1 and 3, R = 3: (1/1 + 2/3) / 3
        let q = query(&[1.0, 0.0, 2.0, f64::NAN], &[1.0, 0.0, 2.0, 1.0]);
        assert!(close(
            average_precision(&q.view(), None, 1.0),
            (1.0 + 2.0 / 3.0) / 3.0
        ));
        assert!(close(average_precision(&q.view(), Some(2), 1.0), 1.0 / 3.0));
        assert!(close(
            average_precision(&q.view(), None, 2.0),
            (1.0 / 3.0) / 1.0
        ));
        let z = query(&[0.0], &[0.0]);
        assert_eq!(average_precision(&z.view(), None, 1.0), 0.0);
    }
}
