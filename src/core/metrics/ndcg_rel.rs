//! trec_eval's experimental nDCG averages `ndcg_rel` and `Rndcg`
//! (m_ndcg_rel.c, m_Rndcg.c).  Gains as in [`super::gains`] (custom gains
//! allowed); I_1 >= ... >= I_P > 0 are the positive ideal gains, n the number
//! retrieved, DCG_i / IDCG_i the (ideal) DCG of the top i (IDCG_i stops
//! growing at P).
//!
//! `ndcg_rel` averages nDCG at every "relevant" document, relevant meaning a
//! positive gain (the relevance level is not used):
//!
//!   ndcg_rel = (1 / P) * ( sum over ranks i with g_i > 0 of DCG_i / IDCG_min(i, P)
//!                          + (P - retrieved with g > 0) * DCG_n / IDCG_P ),
//!
//! i.e. an unretrieved relevant document scores the final nDCG; 0 when P = 0 or
//! the bracket is not positive (negative gains).
//!
//! `rndcg` averages nDCG at the "R levels": the ends j of the runs of equal
//! ideal gain (j in 1..=P with j = P or I_(j+1) != I_j), each scoring
//! DCG_min(j, n) / IDCG_j, plus DCG_n / IDCG_P when n >= P + 2 (trec_eval's
//! "implied R-level change at num_retrieved"; with n = P + 1 it is not added,
//! as in trec_eval).  0 when the query has no relevant document at the
//! relevance level (trec_eval checks R) or P = 0 (trec_eval: 0/0).
//! Neither measure takes a cutoff.

use super::gains::{gain, ideal, Overrides};
use super::query::{discount, Query};

pub fn ndcg_rel(q: &Query<'_>, ov: &Overrides) -> f64 {
    let ideal = ideal(q, ov);
    let p = ideal.len();
    if p == 0 {
        return 0.0;
    }
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut rel_ret = 0usize;
    for (i, &l) in q.ranked.iter().enumerate() {
        let g = gain(l, ov);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        if i < p {
            idcg += ideal[i] / discount(i);
        }
        if g > 0.0 {
            sum += dcg / idcg;
            rel_ret += 1;
        }
    }
    for (i, &ig) in ideal.iter().enumerate().skip(q.ranked.len()) {
        idcg += ig / discount(i);
    }
    sum += (p - rel_ret) as f64 * dcg / idcg;
    if sum > 0.0 {
        sum / p as f64
    } else {
        0.0
    }
}

pub fn rndcg(q: &Query<'_>, ov: &Overrides, level: f64) -> f64 {
    if q.num_rel(level) == 0 {
        return 0.0;
    }
    let ideal = ideal(q, ov);
    let (p, n) = (ideal.len(), q.ranked.len());
    if p == 0 {
        return 0.0;
    }
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut count = 0usize;
    for j in 0..n.max(p) {
        if j < n {
            let g = gain(q.ranked[j], ov);
            if g != 0.0 {
                dcg += g / discount(j);
            }
        }
        if j < p {
            idcg += ideal[j] / discount(j);
            if j + 1 == p || ideal[j + 1] != ideal[j] {
                sum += dcg / idcg;
                count += 1;
            }
        }
    }
    if n >= p + 2 {
        sum += dcg / idcg;
        count += 1;
    }
    sum / count as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    fn d(rank: usize) -> f64 {
        ((rank + 1) as f64).log2()
    }

    #[test]
    fn ndcg_rel_hand_computed() {
        // judged 2, 1, 1, 0; ranking 1, NaN, 2.  Ideal 2, 1, 1 (P = 3).
        let q = query(&[1.0, f64::NAN, 2.0], &[2.0, 1.0, 1.0, 0.0]);
        let dcg1 = 1.0;
        let dcg3 = 1.0 + 2.0 / d(3);
        let (i1, i3) = (2.0, 2.0 + 1.0 / d(2) + 1.0 / d(3));
        // ranks 1 and 3 hold positive gains; one relevant never retrieved.
        let want = (dcg1 / i1 + dcg3 / i3 + dcg3 / i3) / 3.0;
        assert!(close(ndcg_rel(&q.view(), &[]), want));
        assert_eq!(ndcg_rel(&query(&[0.0], &[0.0]).view(), &[]), 0.0);
    }

    #[test]
    fn rndcg_hand_computed() {
        // judged 2, 1, 1; ideal 2 | 1, 1: R levels end at j = 1 and j = 3.
        let judged = [2.0, 1.0, 1.0, 0.0];
        let i1 = 2.0;
        let i3 = 2.0 + 1.0 / d(2) + 1.0 / d(3);
        // n = 2 (< P): ranking 1, 2
        let q = query(&[1.0, 2.0], &judged);
        let want = (1.0 / i1 + (1.0 + 2.0 / d(2)) / i3) / 2.0;
        assert!(close(rndcg(&q.view(), &[], 1.0), want));
        // n = 5 >= P + 2: ranking 0, 2, NaN, 1, 1 -> extra point at n
        let q = query(&[0.0, 2.0, f64::NAN, 1.0, 1.0], &judged);
        let dcg3 = 2.0 / d(2);
        let dcg5 = dcg3 + 1.0 / d(4) + 1.0 / d(5);
        let want = (0.0 / i1 + dcg3 / i3 + dcg5 / i3) / 3.0;
        assert!(close(rndcg(&q.view(), &[], 1.0), want));
        // n = 4 = P + 1: no extra point
        let q = query(&[0.0, 2.0, f64::NAN, 1.0], &judged);
        assert!(close(rndcg(&q.view(), &[], 1.0), dcg3 / i3 / 2.0));
        // no relevant document at level 3
        assert_eq!(rndcg(&q.view(), &[], 3.0), 0.0);
    }
}
