//! Precision.
//!
//! `precision@k` = (relevant documents in the top k) / k, dividing by k even
//! when fewer than k documents were retrieved (trec_eval `P_k`).
//! `precision` without a cutoff = relevant retrieved / retrieved (trec_eval
//! `set_P`), 0 when nothing was retrieved.

use super::query::Query;

pub fn precision(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let rel = q.rel_in_top(k, level) as f64;
    let denom = match k {
        Some(k) => k,
        None => q.ranked.len(),
    };
    if denom == 0 {
        0.0
    } else {
        rel / denom as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn divides_by_k() {
        let nan = f64::NAN;
        let q = query(&[1.0, nan, 0.0, 2.0], &[1.0, 0.0, 2.0, 3.0]);
        assert!(close(precision(&q.view(), Some(2), 1.0), 0.5));
        assert!(close(precision(&q.view(), Some(10), 1.0), 0.2));
        assert!(close(precision(&q.view(), None, 1.0), 0.5));
        assert!(close(precision(&q.view(), None, 2.0), 0.25));
        let empty = query(&[], &[1.0]);
        assert_eq!(precision(&empty.view(), None, 1.0), 0.0);
        assert_eq!(precision(&empty.view(), Some(5), 1.0), 0.0);
    }
}
