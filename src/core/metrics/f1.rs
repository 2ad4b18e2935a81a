//! F1: the harmonic mean of precision and recall at the same cutoff,
//! `2 P R / (P + R)`, 0 when both are 0.  Without a cutoff it is trec_eval's
//! `set_F` with beta = 1 (set precision and set recall).

use super::query::Query;
use super::{precision::precision, recall::recall};

pub fn f1(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let p = precision(q, k, level);
    let r = recall(q, k, level);
    if p + r == 0.0 {
        0.0
    } else {
        2.0 * p * r / (p + r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn harmonic_mean() {
        // top 2: one relevant of 2 relevant -> P = 0.5, R = 0.5, F1 = 0.5
        let q = query(&[1.0, 0.0, 1.0], &[1.0, 1.0, 0.0]);
        assert!(close(f1(&q.view(), Some(2), 1.0), 0.5));
        // whole list: P = 2/3, R = 1 -> 0.8
        assert!(close(f1(&q.view(), None, 1.0), 0.8));
        let z = query(&[0.0], &[1.0]);
        assert_eq!(f1(&z.view(), None, 1.0), 0.0);
    }
}
