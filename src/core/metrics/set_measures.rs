//! trec_eval's set measures: the retrieved list taken as an unordered set.
//!
//! With `ret` documents retrieved, `rr` of them relevant, and `R` relevant
//! documents in the qrels (relevant: label >= 0 and >= level):
//!
//! * `set_f(beta = x)` = `(x + 1) P R / (x P + R)` with `P = rr / ret` and
//!   `R = rr / R`; 0 when `rr = 0` (trec_eval `set_F.x`, ir_measures
//!   `SetF(beta=x)`).  Note that trec_eval's `x` weighs recall like van
//!   Rijsbergen's `beta^2`, not `beta`; ranklens follows trec_eval and
//!   ir_measures.  `set_f` with `x = 1` equals `f1` without a cutoff.
//! * `set_map` = `rr^2 / (ret * R)`, 0 when `ret = 0` or `R = 0` (trec_eval
//!   `set_map`, ir_measures `SetAP`): set precision times set recall.
//! * `relative_precision` = `rr / min(ret, R)`, 0 when `ret = 0` or `R = 0`
//!   (trec_eval `set_relative_P`); `relative_precision@k` =
//!   `rel in top k / min(k, R)`, 0 when `R = 0`, still dividing by `min(k, R)`
//!   when fewer than `k` documents were retrieved (trec_eval `relative_P_k`).
//! * `utility(a, b, c, d, num_docs)` =
//!   `a * rr + b * (ret - rr) + c * (R - rr) + d * (num_docs + rr - ret - R)`
//!   (trec_eval `utility.a,b,c,d`, defaults
//!   1, -1, 0, 0; `num_docs` is trec_eval's `-N`, default 0).  An empty
//!   ranking scores 0: trec_eval 10.0 `-c` zeroes `utility` for a query
//!   missing from the run (it is the only way a trec_eval ranking is empty).

use super::query::{is_rel, Query};

fn counts(q: &Query<'_>, level: f64) -> (usize, usize, usize) {
    (q.ranked.len(), q.rel_in_top(None, level), q.num_rel(level))
}

pub fn set_f(q: &Query<'_>, level: f64, beta: f64) -> f64 {
    let (ret, rr, r) = counts(q, level);
    if rr == 0 {
        return 0.0;
    }
    let p = rr as f64 / ret as f64;
    let rec = rr as f64 / r as f64;
    (beta + 1.0) * p * rec / (beta * p + rec)
}

pub fn set_map(q: &Query<'_>, level: f64) -> f64 {
    let (ret, rr, r) = counts(q, level);
    if ret == 0 || r == 0 {
        return 0.0;
    }
    (rr as f64 * rr as f64) / (ret as f64 * r as f64)
}

pub fn relative_precision(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let r = q.num_rel(level);
    match k {
        None => {
            let ret = q.ranked.len();
            if ret == 0 || r == 0 {
                return 0.0;
            }
            q.rel_in_top(None, level) as f64 / ret.min(r) as f64
        }
        Some(k) => {
            if r == 0 {
                return 0.0;
            }
            q.rel_in_top(Some(k), level) as f64 / k.min(r) as f64
        }
    }
}

/// Coefficients of [`utility`]: `(a, b, c, d, num_docs)`.
pub fn utility(q: &Query<'_>, level: f64, coef: [f64; 5]) -> f64 {
    if q.ranked.is_empty() {
        return 0.0;
    }
    let [a, b, c, d, n] = coef;
    let (ret, rr, r) = counts(q, level);
    let (ret, rr, r) = (ret as f64, rr as f64, r as f64);
    a * rr + b * (ret - rr) + c * (r - rr) + d * (n + rr - ret - r)
}

/// Judged non-relevant documents retrieved (in the top `k`): labels
/// `0 <= l < level` (trec_eval `num_nonrel_judged_ret`).
pub fn num_nonrel_judged_ret(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    q.top(k)
        .iter()
        .filter(|&&l| l >= 0.0 && !is_rel(l, level))
        .count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    // ranking: rel, nonpool, nonrel, rel, unjudged(-1); R = 3 (one unretrieved)
    fn q() -> Owned {
        query(
            &[1.0, f64::NAN, 0.0, 2.0, -1.0],
            &[1.0, 0.0, 2.0, 1.0, -1.0],
        )
    }

    #[test]
    fn set_f_beta() {
        let q = q();
        // P = 2/5, R = 2/3
        let (p, r) = (0.4, 2.0 / 3.0);
        assert!(close(set_f(&q.view(), 1.0, 1.0), 2.0 * p * r / (p + r)));
        assert!(close(
            set_f(&q.view(), 1.0, 0.5),
            1.5 * p * r / (0.5 * p + r)
        ));
        assert!(close(set_f(&q.view(), 1.0, 0.0), p));
        // level 3: nothing relevant
        assert_eq!(set_f(&q.view(), 3.0, 1.0), 0.0);
    }

    #[test]
    fn set_map_and_relative() {
        let q = q();
        assert!(close(set_map(&q.view(), 1.0), 4.0 / 15.0));
        // rr / min(5, 3)
        assert!(close(relative_precision(&q.view(), None, 1.0), 2.0 / 3.0));
        // top 1: 1 / min(1, 3); top 3: 1 / 3; top 10: 2 / 3
        assert!(close(relative_precision(&q.view(), Some(1), 1.0), 1.0));
        assert!(close(
            relative_precision(&q.view(), Some(3), 1.0),
            1.0 / 3.0
        ));
        assert!(close(
            relative_precision(&q.view(), Some(10), 1.0),
            2.0 / 3.0
        ));
        // level 2: R = 1
        assert!(close(relative_precision(&q.view(), Some(4), 2.0), 1.0));
        assert_eq!(relative_precision(&q.view(), Some(4), 5.0), 0.0);
        let empty = query(&[], &[1.0]);
        assert_eq!(relative_precision(&empty.view(), None, 1.0), 0.0);
        assert_eq!(set_map(&empty.view(), 1.0), 0.0);
    }

    #[test]
    fn utility_and_counts() {
        let q = q();
        // rr = 2, ret = 5, R = 3: 2 - 3 = -1
        assert!(close(
            utility(&q.view(), 1.0, [1.0, -1.0, 0.0, 0.0, 0.0]),
            -1.0
        ));
        // 2*2 - 1*3 + 0.5*1 + 1*(100 + 2 - 5 - 3)
        assert!(close(
            utility(&q.view(), 1.0, [2.0, -1.0, 0.5, 1.0, 100.0]),
            4.0 - 3.0 + 0.5 + 94.0
        ));
        let empty = query(&[], &[1.0]);
        assert_eq!(utility(&empty.view(), 1.0, [1.0, -1.0, 5.0, 1.0, 9.0]), 0.0);
        assert_eq!(num_nonrel_judged_ret(&q.view(), None, 1.0), 1.0);
        assert_eq!(num_nonrel_judged_ret(&q.view(), None, 2.0), 2.0);
        assert_eq!(num_nonrel_judged_ret(&q.view(), Some(2), 2.0), 1.0);
    }
}
