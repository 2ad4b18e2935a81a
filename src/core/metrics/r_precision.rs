//! R-precision: precision at rank R, R the number of relevant documents,
//! dividing by R even when fewer than R were retrieved; 0 when R = 0
//! (trec_eval `Rprec`).

use super::query::Query;

pub fn r_precision(q: &Query<'_>, level: f64) -> f64 {
    let r = q.num_rel(level);
    if r == 0 {
        return 0.0;
    }
    q.rel_in_top(Some(r), level) as f64 / r as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn at_rank_r() {
        // R = 2; top 2 holds one relevant.
        let q = query(&[0.0, 1.0, 1.0], &[0.0, 1.0, 1.0]);
        assert!(close(r_precision(&q.view(), 1.0), 0.5));
        // R = 3 with only 2 retrieved relevant docs in a list of 2.
        let q = query(&[1.0, 1.0], &[1.0, 1.0, 1.0]);
        assert!(close(r_precision(&q.view(), 1.0), 2.0 / 3.0));
    }
}
