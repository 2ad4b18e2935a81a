//! `judged@k`: the share of the top k retrieved documents that are judged.
//!
//! Judged = in the qrels with a label >= 0; a negative label (trec_eval's "in
//! the pool but unjudged") does NOT count as judged, as in `judged_only` / -J.
//! (ir_measures' `Judged@k` counts any qrels entry, negative labels included.)
//! The denominator is the number of documents in the top k, min(k, retrieved),
//! as ir_measures divides; 0 for an empty ranking.  Without k: the whole
//! ranking.  The relevance level is not used.

use super::query::Query;

pub fn judged(q: &Query<'_>, k: Option<usize>) -> f64 {
    let top = q.top(k);
    if top.is_empty() {
        return 0.0;
    }
    top.iter().filter(|&&l| l >= 0.0).count() as f64 / top.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        let q = query(&[1.0, f64::NAN, 0.0, -1.0], &[1.0, 0.0, -1.0]);
        assert!(close(judged(&q.view(), None), 0.5));
        assert!(close(judged(&q.view(), Some(3)), 2.0 / 3.0));
        assert!(close(judged(&q.view(), Some(10)), 0.5));
        assert_eq!(judged(&query(&[], &[1.0]).view(), Some(5)), 0.0);
    }
}
