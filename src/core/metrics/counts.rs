//! Counting measures (trec_eval `num_ret`, `num_rel`, `num_rel_ret`); their
//! aggregate over queries is the sum, as in trec_eval.
//!
//! `num_ret@k` = min(k, retrieved); `num_rel` = R; `num_rel_ret@k` = relevant in
//! the top k.

use super::query::Query;

pub fn num_ret(q: &Query<'_>, k: Option<usize>) -> f64 {
    q.top(k).len() as f64
}

pub fn num_rel(q: &Query<'_>, level: f64) -> f64 {
    q.num_rel(level) as f64
}

pub fn num_rel_ret(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    q.rel_in_top(k, level) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn counts() {
        let q = query(&[1.0, f64::NAN, 0.0, 3.0], &[1.0, 0.0, 3.0, 2.0, -2.0]);
        assert_eq!(num_ret(&q.view(), None), 4.0);
        assert_eq!(num_ret(&q.view(), Some(2)), 2.0);
        assert_eq!(num_rel(&q.view(), 1.0), 3.0);
        assert_eq!(num_rel_ret(&q.view(), None, 1.0), 2.0);
        assert_eq!(num_rel_ret(&q.view(), Some(3), 1.0), 1.0);
    }
}
