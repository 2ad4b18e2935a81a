//! `auc@k`: per-query ROC AUC of the ranking over the judged documents.
//!
//! Relevant: label >= 0 and >= the relevance level (R of them in the qrels);
//! judged non-relevant: 0 <= label < level (N of them).  Unjudged documents
//! (not in the qrels, negative label) are ignored.  Every retrieved document
//! (within the top k) is above every unretrieved one; unretrieved documents are
//! tied with each other.  AUC = the probability that a random relevant document
//! is above a random judged non-relevant one, ties counting 1/2:
//!
//!   AUC = ( sum over retrieved relevant d of (N - non-relevant above d)
//!           + (R - R_ret) * (N - N_ret) / 2 ) / (R * N),
//!
//! 0 when R = 0 or N = 0 (no pair to compare).  Without k: the whole ranking.

use super::query::{is_rel, Query};

pub fn auc(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let r = q.num_rel(level);
    let n = q
        .judged
        .iter()
        .filter(|&&l| l >= 0.0 && !is_rel(l, level))
        .count();
    if r == 0 || n == 0 {
        return 0.0;
    }
    let (mut rel_ret, mut nonrel_ret) = (0usize, 0usize);
    let mut wins = 0.0;
    for &l in q.top(k) {
        if is_rel(l, level) {
            rel_ret += 1;
            wins += n.saturating_sub(nonrel_ret) as f64;
        } else if l >= 0.0 {
            nonrel_ret += 1;
        }
    }
    let unret = r.saturating_sub(rel_ret) as f64 * n.saturating_sub(nonrel_ret) as f64;
    (wins + 0.5 * unret) / (r as f64 * n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // judged: rel a, b, c; non-rel x, y.  Ranking a, x, NaN, b; c, y unretrieved.
        let q = query(&[1.0, 0.0, f64::NAN, 2.0], &[1.0, 2.0, 1.0, 0.0, 0.0, -1.0]);
        // a beats x, y (2); b beats y (1); c ties with y (1/2).  3.5 / 6
        assert!(close(auc(&q.view(), None, 1.0), 3.5 / 6.0));
        // top 1: a beats both; b, c tie with both (4 halves).  (2 + 2) / 6
        assert!(close(auc(&q.view(), Some(1), 1.0), 4.0 / 6.0));
        // level 2: R = 1 (b); N = 4 (labels 1, 1, 0, 0); a and x are above b,
        // the unretrieved c and y below it: 2 / 4
        assert!(close(auc(&q.view(), None, 2.0), 2.0 / 4.0));
        assert_eq!(auc(&query(&[1.0], &[1.0]).view(), None, 1.0), 0.0);
    }
}
