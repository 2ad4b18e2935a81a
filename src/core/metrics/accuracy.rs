//! `accuracy@k`: ir_measures' `Accuracy`, the probability that a relevant
//! retrieved document is ranked above a non-relevant retrieved one.
//!
//! Over the top k (the whole ranking without k): relevant means a label of at
//! least 0 and at least the relevance level; every other retrieved document is
//! non-relevant, unjudged ones included (ir_measures' accuracy provider reads
//! a document missing from the qrels as label 0).  With `R` relevant and `N`
//! non-relevant retrieved documents and `n_j` the non-relevant documents above
//! the `j`-th relevant one:
//!
//!   accuracy = 1 - (sum over j of n_j) / (R * N),
//!
//! 0 when `R = 0` or `N = 0` (no pair to compare, as `auc`).  Only retrieved
//! documents count: a diagnostic of the ranking itself, unlike `auc`, which
//! also places the unretrieved judged documents.

use super::query::{is_rel, Query};

pub fn accuracy(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let (mut rel, mut nonrel) = (0usize, 0usize);
    let mut above = 0.0;
    for &l in q.top(k) {
        if is_rel(l, level) {
            rel += 1;
            above += nonrel as f64;
        } else {
            nonrel += 1;
        }
    }
    if rel == 0 || nonrel == 0 {
        return 0.0;
    }
    1.0 - above / (nonrel as f64 * rel as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn pairs_in_order() {
        // rel, non, rel, unjudged: non above the 2nd rel: 1 of 2*2 pairs wrong
        let q = query(&[1.0, 0.0, 2.0, f64::NAN], &[1.0, 0.0, 2.0]);
        assert!(close(accuracy(&q.view(), None, 1.0), 0.75));
        assert!(close(accuracy(&q.view(), Some(2), 1.0), 1.0));
        assert!(close(accuracy(&q.view(), None, 2.0), 1.0 / 3.0));
        assert_eq!(accuracy(&q.view(), Some(1), 1.0), 0.0);
        assert_eq!(accuracy(&q.view(), None, 3.0), 0.0);
    }
}
