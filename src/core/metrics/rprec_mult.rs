//! Precision at a multiple of R (trec_eval `Rprec_mult_x`).
//!
//! `rprec_mult(mult = x)` = precision at rank `c = trunc(x * R + 0.9)`, i.e.
//! `rel in top c / c`, dividing by `c` even when fewer than `c` documents were
//! retrieved; 0 when `c <= 0` (in particular when `R = 0`).  trec_eval 10.0
//! still truncates `x * R + 0.9` here (unlike `iprec_at_recall`), so 9.0.8 and
//! 10.0 agree.  With `x = 1`, `c = R` and the value is `r_precision`.

use super::query::Query;

/// trec_eval's `(long) (x * R + 0.9)`, clamped at 0.
pub fn cutoff(mult: f64, r: usize) -> usize {
    let c = (mult * r as f64 + 0.9).trunc();
    if c >= 1.0 {
        c as usize
    } else {
        0
    }
}

pub fn rprec_mult(q: &Query<'_>, level: f64, mult: f64) -> f64 {
    let c = cutoff(mult, q.num_rel(level));
    if c == 0 {
        return 0.0;
    }
    q.rel_in_top(Some(c), level) as f64 / c as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn multiples() {
        // R = 4; relevant at ranks 1, 3, 4
        let q = query(&[1.0, 0.0, 1.0, 1.0, 0.0], &[1.0, 1.0, 1.0, 1.0, 0.0]);
        // 0.2 * 4 + 0.9 = 1.7 -> 1: P@1 = 1
        assert!(close(rprec_mult(&q.view(), 1.0, 0.2), 1.0));
        // 0.5 * 4 + 0.9 = 2.9 -> 2: P@2 = 1/2
        assert!(close(rprec_mult(&q.view(), 1.0, 0.5), 0.5));
        // 1.0 -> 4: 3/4 (= Rprec)
        assert!(close(rprec_mult(&q.view(), 1.0, 1.0), 0.75));
        // 2.0 -> 8 > 5 retrieved: 3/8
        assert!(close(rprec_mult(&q.view(), 1.0, 2.0), 3.0 / 8.0));
        let none = query(&[0.0], &[0.0]);
        assert_eq!(rprec_mult(&none.view(), 1.0, 2.0), 0.0);
        assert_eq!(cutoff(0.0, 7), 0);
        assert_eq!(cutoff(0.02, 5), 1); // 0.1 + 0.9 = 1.0
        assert_eq!(cutoff(-1.0, 5), 0);
    }
}
