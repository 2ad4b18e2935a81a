//! Unjudged at cutoff (trec_eval 10.0 `unj_k`).
//!
//! `unj@k` = (documents in the top `k` that are not in the qrels or carry a
//! negative label) / `k`, dividing by `k` even when fewer were retrieved (the
//! missing ranks count as judged).  trec_eval 10.0 `-c` gives a query missing
//! from the run 0, as an empty ranking does here.  With `judged_only` it is 0.
//! Without a cutoff (ranklens only): the unjudged fraction of the whole
//! ranking, 0 when nothing was retrieved.

use super::query::Query;

pub fn unjudged(q: &Query<'_>, k: Option<usize>) -> f64 {
    let top = q.top(k);
    let n = top.iter().filter(|&&l| l.is_nan() || l < 0.0).count();
    let denom = k.unwrap_or(top.len());
    if denom == 0 {
        0.0
    } else {
        n as f64 / denom as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn fractions() {
        let q = query(&[1.0, f64::NAN, -1.0, 0.0], &[1.0, -1.0, 0.0]);
        assert!(close(unjudged(&q.view(), Some(1)), 0.0));
        assert!(close(unjudged(&q.view(), Some(3)), 2.0 / 3.0));
        assert!(close(unjudged(&q.view(), Some(10)), 0.2));
        assert!(close(unjudged(&q.view(), None), 0.5));
        let e = query(&[], &[1.0]);
        assert_eq!(unjudged(&e.view(), None), 0.0);
    }
}
