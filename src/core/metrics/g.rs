//! trec_eval's experimental gain measures `binG` and `G` (m_binG.c, m_G.c).
//!
//! `bin_g` (binary, uses the relevance level): every relevant document
//! retrieved at rank i contributes 1 / log2(2 + nonrel_before), where
//! nonrel_before = (i - 1) - (relevant documents above it): every retrieved
//! non-relevant document counts, judged or not.  bin_g = the sum / R; 0 when
//! nothing relevant is retrieved.
//!
//! `g` (graded, custom gains as in [`super::gains`]): with g_i the gain at rank
//! i, S_i = g_1 + ... + g_i (results gain so far, including rank i) and
//! C_i = sum over j <= i of max(I_j, 1), where I_j is the j-th ideal gain (0
//! past the last positive one; so each step costs at least 1),
//!
//!   G = (1 / sum of all ideal gains) * sum over ranks i with g_i != 0 of
//!       g_i / log2(2 + C_i - S_i),
//!
//! 0 when no judged document has a positive gain.  Neither measure takes a
//! cutoff.

use super::gains::{gain, ideal, Overrides};
use super::query::{is_rel, Query};

pub fn bin_g(q: &Query<'_>, level: f64) -> f64 {
    let mut rel_so_far = 0usize;
    let mut sum = 0.0;
    for (i, &l) in q.ranked.iter().enumerate() {
        if is_rel(l, level) {
            rel_so_far += 1;
            sum += 1.0 / ((3 + i - rel_so_far) as f64).log2();
        }
    }
    if rel_so_far > 0 {
        sum / q.num_rel(level) as f64
    } else {
        0.0
    }
}

pub fn g(q: &Query<'_>, ov: &Overrides) -> f64 {
    let ideal = ideal(q, ov);
    let sum_ideal: f64 = ideal.iter().sum();
    if sum_ideal <= 0.0 {
        return 0.0;
    }
    if sum_ideal.is_infinite() {
        // An overflow, not the 0 of a finite sum over it (as `ndcg::ndcg`).
        return sum_ideal;
    }
    let (mut sum_results, mut sum_cost, mut value) = (0.0, 0.0, 0.0);
    for (i, &l) in q.ranked.iter().enumerate() {
        let gi = gain(l, ov);
        sum_results += gi;
        let ideal_gain = ideal.get(i).copied().unwrap_or(0.0);
        sum_cost += if ideal_gain >= 1.0 { ideal_gain } else { 1.0 };
        if gi != 0.0 {
            value += gi / (2.0 + sum_cost - sum_results).log2();
        }
    }
    value / sum_ideal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn bin_g_hand_computed() {
        // ranking: rel, nonrel, unjudged, rel; R = 3 (one never retrieved)
        let q = query(&[1.0, 0.0, f64::NAN, 2.0], &[1.0, 0.0, 2.0, 1.0]);
        // first: 1 / log2(2 + 0); second: 2 non-relevant above -> 1 / log2(4)
        assert!(close(bin_g(&q.view(), 1.0), (1.0 + 0.5) / 3.0));
        // level 2: only the label-2 document, 3 documents above it
        assert!(close(bin_g(&q.view(), 2.0), 1.0 / 5f64.log2()));
        assert_eq!(bin_g(&query(&[0.0], &[0.0, 1.0]).view(), 1.0), 0.0);
    }

    #[test]
    fn g_hand_computed() {
        // judged labels 2, 1, 0; ranking 1, 2, NaN.  Ideal gains 2, 1.
        let q = query(&[1.0, 2.0, f64::NAN], &[2.0, 1.0, 0.0]);
        // rank 1: S = 1, C = 2 -> 1 / log2(3); rank 2: S = 3, C = 3 -> 2 / log2(2)
        let want = (1.0 / 3f64.log2() + 2.0) / 3.0;
        assert!(close(g(&q.view(), &[]), want));
        // gain 2 -> 0.5: ideal 1, 0.5 (C grows by 1 per rank: max(I, 1))
        // rank 1: S = 1, C = 1 -> 1 / log2(2); rank 2: S = 1.5, C = 2 -> 0.5 / log2(2.5)
        let want = (1.0 + 0.5 / 2.5f64.log2()) / 1.5;
        assert!(close(g(&q.view(), &[(2.0, 0.5)]), want));
        assert_eq!(g(&query(&[0.0], &[0.0]).view(), &[]), 0.0);
    }
}
