//! Rank-biased precision (Moffat & Zobel, TOIS 2008) as trec_eval 10.0's `rbp`
//! and `rbp_resid` (m_rbp.c, m_rbp_resid.c).  Persistence `p` (default 0.9, as
//! in trec_eval); the relevance level is not used.
//!
//! `rbp@k` = (1 - p) * sum over ranks i <= k of gain'_i * p^(i-1).  The gains
//! are graded (trec_eval's rbp is not binary): the gain table of
//! [`super::gains`] over the levels trec_eval knows for the query -- the listed
//! `gainL` labels (present in the qrels or not), every integer 0..=M and every
//! other judged label >= 0, M being the largest judged label >= 0 -- is
//! normalised into [0, 1] when some gain lies outside it:
//! gain' = (gain - min) / (max - min) over that table (so by default, with
//! labels 0..M and M > 1, gain' = label / M: a per-query scale).  Documents not
//! in the qrels or with a negative label gain 0, never normalised.  When the
//! table's gains are all equal and outside [0, 1] (trec_eval: 0/0) ranklens
//! clamps them into [0, 1] instead.  Binary RBP: list the gains, e.g.
//! `rbp(gain1=1,gain2=1,gain3=1)` (gains inside [0, 1] are used as given).
//!
//! `rbp_resid@k` = p^n + (1 - p) * sum over unjudged retrieved ranks i <= k of
//! p^(i-1), n = min(k, retrieved) -- the most rbp could still grow if every
//! unjudged document (not in the qrels or negative label) had gain 1 and the
//! ranking went on with gain-1 documents.  As in trec_eval it is 0 (not p^n)
//! when no retrieved document is unjudged.  Without k, the whole ranking.

use super::gains::{gain, Overrides};
use super::query::Query;

/// The normalised gain function: (table, min, scale) for `(g - min) / scale`.
fn table(q: &Query<'_>, ov: &Overrides) -> Option<(f64, f64)> {
    let max_label = q
        .judged
        .iter()
        .copied()
        .filter(|&l| l >= 0.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut see = |g: f64| {
        lo = lo.min(g);
        hi = hi.max(g);
    };
    for &(_, g) in ov {
        see(g);
    }
    if max_label >= 0.0 {
        let mut i = 0.0;
        while i <= max_label {
            see(gain(i, ov));
            i += 1.0;
        }
        for &l in q.judged {
            if l >= 0.0 {
                see(gain(l, ov));
            }
        }
    }
    if lo < 0.0 || hi > 1.0 {
        Some((lo, hi - lo))
    } else {
        None
    }
}

pub fn rbp(q: &Query<'_>, k: Option<usize>, ov: &Overrides, p: f64) -> f64 {
    let norm = table(q, ov);
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &l in q.top(k) {
        let mut g = gain(l, ov);
        if l >= 0.0 {
            if let Some((lo, scale)) = norm {
                g = if scale > 0.0 {
                    (g - lo) / scale
                } else {
                    g.clamp(0.0, 1.0)
                };
            }
        }
        if g != 0.0 {
            sum += g * cur_p;
        }
        cur_p *= p;
    }
    (1.0 - p) * sum
}

pub fn rbp_resid(q: &Query<'_>, k: Option<usize>, p: f64) -> f64 {
    let mut unjudged = 0usize;
    let mut sum = 0.0;
    let mut cur_p = 1.0;
    for &l in q.top(k) {
        if l.is_nan() || l < 0.0 {
            unjudged += 1;
            sum += cur_p;
        }
        cur_p *= p;
    }
    if unjudged > 0 {
        cur_p + (1.0 - p) * sum
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn binary_labels_are_used_as_is() {
        // ranking 1, 0, NaN, 1 with p = 0.5: 0.5 * (1 + 0.125)
        let q = query(&[1.0, 0.0, f64::NAN, 1.0], &[1.0, 0.0, 1.0]);
        assert!(close(rbp(&q.view(), None, &[], 0.5), 0.5 * 1.125));
        assert!(close(rbp(&q.view(), Some(2), &[], 0.5), 0.5));
        // resid: unjudged at rank 3: p^4 + (1 - p) * p^2
        assert!(close(rbp_resid(&q.view(), None, 0.5), 0.0625 + 0.5 * 0.25));
        assert_eq!(rbp_resid(&q.view(), Some(2), 0.5), 0.0);
    }

    #[test]
    fn graded_labels_are_scaled_per_query() {
        // labels up to 4: gain' = label / 4.  ranking 2, 4, -1 (unjudged)
        let q = query(&[2.0, 4.0, -1.0], &[2.0, 4.0, -1.0]);
        let want = 0.1 * (0.5 + 1.0 * 0.9);
        assert!(close(rbp(&q.view(), None, &[], 0.9), want));
        // custom gains inside [0, 1] are not rescaled
        let ov = [(2.0, 0.25), (4.0, 1.0), (3.0, 0.5), (1.0, 0.1)];
        assert!(close(rbp(&q.view(), None, &ov, 0.9), 0.1 * (0.25 + 0.9)));
        // a listed absent level widens the range: max 8 -> gain' = label / 8
        let ov = [(7.0, 8.0)];
        assert!(close(
            rbp(&q.view(), None, &ov, 0.9),
            0.1 * (0.25 + 0.5 * 0.9)
        ));
        // a negative gain: min -1, max 4 -> (g + 1) / 5, label 0 gains 0.2
        let z = query(&[0.0, 1.0], &[0.0, 1.0, 4.0]);
        assert!(close(rbp(&z.view(), None, &[(1.0, -1.0)], 0.5), 0.5 * 0.2));
        assert!(close(rbp_resid(&q.view(), None, 0.9), 0.729 + 0.1 * 0.81));
    }
}
