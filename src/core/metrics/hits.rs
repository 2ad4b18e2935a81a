//! Hits and hit rate.
//!
//! `hits@k` = number of relevant documents in the top k (ranx `hits`; averaged
//! over queries).  `hit_rate@k` = 1 if the top k holds a relevant document,
//! else 0 (trec_eval `success_k`, ir_measures `Success@k`).  Without a cutoff
//! both look at the whole ranking.

use super::query::{is_rel, Query};

pub fn hits(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    q.rel_in_top(k, level) as f64
}

pub fn hit_rate(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    if q.top(k).iter().any(|&l| is_rel(l, level)) {
        1.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn counts() {
        let q = query(&[0.0, f64::NAN, 2.0, 1.0], &[0.0, 2.0, 1.0]);
        assert_eq!(hits(&q.view(), Some(3), 1.0), 1.0);
        assert_eq!(hits(&q.view(), None, 1.0), 2.0);
        assert_eq!(hit_rate(&q.view(), Some(2), 1.0), 0.0);
        assert_eq!(hit_rate(&q.view(), Some(3), 1.0), 1.0);
        assert_eq!(hit_rate(&q.view(), Some(3), 3.0), 0.0);
    }
}
