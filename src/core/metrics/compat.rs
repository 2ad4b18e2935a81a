//! `compat`: compatibility (Clarke, Vtyurina & Smucker, TOIS 2021), as
//! ir_measures' `Compat(p, normalize)`: rank-biased overlap between the
//! ranking and an ideal ranking of the qrels.
//!
//! The ideal ranking holds every judged document with a label > 0, by label
//! descending; within one label the retrieved documents come first, in their
//! rank order (the ideal ranking most compatible with the run), then the
//! unretrieved ones.  With `D = max(retrieved, ideal)` and `O(d)` the number
//! of documents in both the top `d` of the ranking and the top `d` of the
//! ideal ranking:
//!
//!   RBO = (sum over d = 1..D of p^(d-1) * O(d) / d) / (sum over d of p^(d-1)),
//!
//! 0 when `D = 0`.  `normalize` (any value but 0) divides by the RBO of the
//! ideal ranking with itself over the same depth, when that is above 0 (a
//! finite ideal ranking cannot reach 1).  The relevance level is not used; the
//! whole ranking is scored (no cutoff).
//!
//! Only labels are needed: a retrieved document at rank `i` with label `g` is
//! at ideal position `start(g) + j`, `j` counting the earlier retrieved
//! documents with label `g`; it joins `O(d)` from `d = max(i, position) + 1`.

use super::query::Query;

pub fn compat(q: &Query<'_>, p: f64, normalize: bool) -> f64 {
    let ideal = q.ideal;
    let depth = q.ranked.len().max(ideal.len());
    if depth == 0 {
        return 0.0;
    }
    // joins[m]: documents that enter the overlap at depth m + 1.
    let mut joins = vec![0u32; depth];
    let mut taken = vec![0usize; ideal.len()];
    for (i, &l) in q.ranked.iter().enumerate() {
        if l.is_nan() || l <= 0.0 {
            continue;
        }
        let start = ideal.partition_point(|&g| g > l);
        if ideal.get(start) != Some(&l) {
            continue;
        }
        let Some(seen) = taken.get_mut(start) else {
            continue;
        };
        let pos = start + *seen;
        *seen += 1;
        if pos < ideal.len() {
            if let Some(j) = joins.get_mut(i.max(pos)) {
                *j += 1;
            }
        }
    }
    let (mut score, mut best, mut norm, mut weight) = (0.0, 0.0, 0.0, 1.0);
    let mut overlap = 0u32;
    for (i, &j) in joins.iter().enumerate() {
        overlap += j;
        let d = (i + 1) as f64;
        score += weight * overlap as f64 / d;
        best += weight * (i + 1).min(ideal.len()) as f64 / d;
        norm += weight;
        weight *= p;
    }
    let rbo = score / norm;
    let ideal_rbo = best / norm;
    if normalize && ideal_rbo > 0.0 {
        rbo / ideal_rbo
    } else {
        rbo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn overlap_with_the_ideal() {
        // ideal: 2 (rank 2), 1 (rank 1), 1 (unretrieved); ranking 1, 2, NaN.
        let q = query(&[1.0, 2.0, f64::NAN], &[1.0, 2.0, 1.0, 0.0]);
        let p: f64 = 0.5;
        // O(1) = 0, O(2) = 2, O(3) = 2
        let raw = (0.0 + p * 2.0 / 2.0 + p * p * 2.0 / 3.0) / (1.0 + p + p * p);
        assert!(close(compat(&q.view(), p, false), raw));
        let best = (1.0 + p * 2.0 / 2.0 + p * p * 3.0 / 3.0) / (1.0 + p + p * p);
        assert!(close(compat(&q.view(), p, true), raw / best));
        let none = query(&[], &[0.0]);
        assert_eq!(compat(&none.view(), p, true), 0.0);
    }
}
