//! Reciprocal rank.
//!
//! `mrr` = 1 / (rank of the first relevant document), 0 if none is retrieved
//! (trec_eval `recip_rank`, ir_measures `RR`).  `mrr@k` counts it only when that
//! rank is at most k (ir_measures `RR@k`, ranx `mrr@k`).  The mean over
//! queries is the MRR.

use super::query::{is_rel, Query};

pub fn mrr(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    match q.top(k).iter().position(|&l| is_rel(l, level)) {
        Some(i) => 1.0 / (i + 1) as f64,
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn first_relevant() {
        let q = query(&[0.0, -1.0, 1.0], &[0.0, -1.0, 1.0]);
        assert!(close(mrr(&q.view(), None, 1.0), 1.0 / 3.0));
        assert_eq!(mrr(&q.view(), Some(2), 1.0), 0.0);
        assert_eq!(mrr(&q.view(), None, 2.0), 0.0);
    }
}
