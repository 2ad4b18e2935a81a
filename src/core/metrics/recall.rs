//! Recall.
//!
//! `recall@k` = (relevant in the top k) / R, R the number of relevant
//! documents in the qrels; 0 when R = 0 (trec_eval `recall_k`).  Without a
//! cutoff: relevant retrieved / R (trec_eval `set_recall`).

use super::query::Query;

pub fn recall(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let r = q.num_rel(level);
    if r == 0 {
        return 0.0;
    }
    q.rel_in_top(k, level) as f64 / r as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn counts_unretrieved_relevant() {
        let q = query(&[1.0, 0.0], &[1.0, 0.0, 2.0, -1.0]);
        assert!(close(recall(&q.view(), Some(1), 1.0), 0.5));
        assert!(close(recall(&q.view(), None, 2.0), 0.0));
        let none = query(&[0.0], &[0.0]);
        assert_eq!(recall(&none.view(), Some(1), 1.0), 0.0);
    }
}
