//! bpref (Buckley & Voorhees, SIGIR 2004), exactly as trec_eval computes it.
//!
//! With R relevant and N judged non-relevant documents (labels `0 <= l < level`),
//! walk the ranking skipping documents not in the qrels and those with a
//! negative label; count judged non-relevant documents seen so far (`n`); each
//! relevant document adds `1 - min(n, R) / min(N, R)` (1 when `n = 0`).
//! bpref = sum / R, 0 when R = 0.  Unretrieved relevant documents add 0.

use super::query::{is_rel, Query};

pub fn bpref(q: &Query<'_>, level: f64) -> f64 {
    let r = q.num_rel(level);
    if r == 0 {
        return 0.0;
    }
    let n_total = q.judged.iter().filter(|&&l| l >= 0.0 && l < level).count();
    let denom = n_total.min(r) as f64;
    let mut nonrel = 0usize;
    let mut sum = 0.0;
    for &l in q.ranked {
        if is_rel(l, level) {
            sum += if nonrel > 0 {
                1.0 - nonrel.min(r) as f64 / denom
            } else {
                1.0
            };
        } else if l >= 0.0 {
            nonrel += 1;
        }
    }
    sum / r as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // ranking: nonrel, unjudged, rel, negative (skipped), rel, nonrel
        // R = 3 (one unretrieved), N = 2 -> denom = 2
        // first rel: n = 1 -> 1 - 1/2 = 0.5; second rel: n = 1 -> 0.5; sum 1.0 / 3
        let nan = f64::NAN;
        let q = query(
            &[0.0, nan, 1.0, -1.0, 2.0, 0.0],
            &[0.0, 1.0, -1.0, 2.0, 0.0, 1.0],
        );
        assert!(close(bpref(&q.view(), 1.0), 1.0 / 3.0));
    }

    #[test]
    fn no_nonrelevant_judged() {
        let q = query(&[1.0, f64::NAN, 1.0], &[1.0, 1.0]);
        assert!(close(bpref(&q.view(), 1.0), 1.0));
    }
}
