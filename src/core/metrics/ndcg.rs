//! DCG and nDCG (Järvelin & Kekäläinen 2002), as trec_eval computes them.
//!
//! `dcg@k` = sum over ranks i <= k of gain(label_i) / log2(i + 1).  The gain is
//! the label itself (float labels used exactly; trec_eval `ndcg`/`ndcg_cut`),
//! or `2^label - 1` for `ndcg_burges` (Burges et al. 2005); labels <= 0 and
//! documents not in the qrels gain 0.  The relevance level is not used.
//! The ideal ranking holds every judged document with a positive label, largest
//! first, cut at k; it does not depend on how many documents were retrieved.
//! `ndcg@k` = dcg@k / ideal dcg@k, 0 when the ideal is 0.  Without k, both sums
//! run over the whole ranking and all judged documents (trec_eval `ndcg`).
//! An ideal past the largest float gives an infinite value, an error for the
//! callers (`eval::check_finite`), never the 0 of a finite DCG over it.

use super::query::{discount, Query};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gain {
    /// gain = label
    Label,
    /// gain = 2^label - 1
    Exponential,
}

#[inline]
pub(crate) fn gain(label: f64, g: Gain) -> f64 {
    if label > 0.0 {
        match g {
            Gain::Label => label,
            Gain::Exponential => label.exp2() - 1.0,
        }
    } else {
        0.0
    }
}

fn dcg_of(labels: &[f64], g: Gain) -> f64 {
    labels
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let x = gain(l, g);
            if x != 0.0 {
                x / discount(i)
            } else {
                0.0
            }
        })
        .sum()
}

pub fn dcg(q: &Query<'_>, k: Option<usize>, g: Gain) -> f64 {
    match (q.prefix, g) {
        (Some(p), Gain::Label) => p.dcg[q.depth(k)],
        _ => dcg_of(q.top(k), g),
    }
}

pub fn ideal_dcg(q: &Query<'_>, k: Option<usize>, g: Gain) -> f64 {
    if let (Some(p), Gain::Label) = (q.prefix, g) {
        return p.idcg[k.map_or(q.ideal.len(), |k| k.min(q.ideal.len()))];
    }
    let ideal = match k {
        Some(k) if k < q.ideal.len() => &q.ideal[..k],
        _ => q.ideal,
    };
    dcg_of(ideal, g)
}

pub fn ndcg(q: &Query<'_>, k: Option<usize>, g: Gain) -> f64 {
    let ideal = ideal_dcg(q, k, g);
    if ideal.is_infinite() {
        // A finite DCG over an infinite ideal is 0 by the float rules but an
        // overflow: the infinity is kept for the callers' finiteness check.
        return ideal;
    }
    if ideal > 0.0 {
        dcg(q, k, g) / ideal
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn an_infinite_ideal_is_kept() {
        // the ideal DCG@2 passes the largest float, the retrieved DCG does not
        let q = query(&[1.0, 1.7e308], &[1.7e308, 1.7e308, 1.0]);
        assert!(ndcg(&q.view(), Some(2), Gain::Label).is_infinite());
        let q = query(&[1.0], &[1024.0]);
        assert!(ndcg(&q.view(), Some(1), Gain::Exponential).is_infinite());
    }

    #[test]
    fn hand_computed() {
        // ranking labels 0, 2, (unjudged), 1; judged {2, 1, 3, 0}
        let q = query(&[0.0, 2.0, f64::NAN, 1.0], &[2.0, 1.0, 3.0, 0.0]);
        let dcg_all = 2.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal_all = 3.0 + 2.0 / 3f64.log2() + 1.0 / 2.0;
        assert!(close(dcg(&q.view(), None, Gain::Label), dcg_all));
        assert!(close(
            ndcg(&q.view(), None, Gain::Label),
            dcg_all / ideal_all
        ));
        let dcg2 = 2.0 / 3f64.log2();
        let ideal2 = 3.0 + 2.0 / 3f64.log2();
        assert!(close(ndcg(&q.view(), Some(2), Gain::Label), dcg2 / ideal2));
        let b_dcg2 = 3.0 / 3f64.log2();
        let b_ideal2 = 7.0 + 3.0 / 3f64.log2();
        assert!(close(
            ndcg(&q.view(), Some(2), Gain::Exponential),
            b_dcg2 / b_ideal2
        ));
    }

    #[test]
    fn float_labels_and_no_ideal() {
        let q = query(&[0.5], &[0.5, 1.5]);
        assert!(close(ndcg(&q.view(), Some(1), Gain::Label), 0.5 / 1.5));
        let z = query(&[0.0, -1.0], &[0.0, -1.0]);
        assert_eq!(ndcg(&z.view(), None, Gain::Label), 0.0);
    }
}
