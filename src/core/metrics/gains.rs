//! Custom gains per label (trec_eval `-m ndcg.1=3,2=9`), and nDCG / DCG with them.
//!
//! A gain table maps a label to its gain.  Listed labels (ranklens parameters
//! `gainL=value`, trec_eval pairs `L=value`; `L` a non-negative integer) get
//! the given gain, which may be 0 or negative; every other label `l >= 0` gains
//! `l` itself (float labels exactly).  Negative labels (in the pool but
//! unjudged) and documents not in the qrels gain 0.
//!
//! The ideal ranking (trec_eval `setup_gains` + the level walk of `m_ndcg.c`):
//! every judged document with label `>= 0` whose gain is positive, largest gain
//! first.  A label whose gain is 0 or negative never enters the ideal, but a
//! label-0 document given a positive gain does.  When gains are not monotonic in
//! the label the ideal is ordered by gain, not by label.  (trec_eval sorts the
//! levels with a comparator returning `(int)(gain1 - gain2)`, so two gains less
//! than 1 apart compare equal and may come out in either order; with such
//! gains trec_eval can even stop its ideal walk early at a 0-gain level.
//! ranklens sorts by the exact gain.)
//!
//! `dcg@k` = sum over ranks i <= k of gain(label_i) / log2(i + 1), negative
//! gains included; `ndcg@k` = dcg@k / ideal dcg@k, 0 when the ideal is not
//! positive.  trec_eval's `ndcg` and `dcg` take gains; its `ndcg_cut` does not:
//! `ndcg(gain2=9)@10` is a ranklens extension (the same formula cut at k).

use super::query::{discount, Query};
use std::borrow::Cow;

/// `(label, gain)` overrides, from the `gainL` parameters.
pub type Overrides = [(f64, f64)];

/// The parameter key `gainL` -> label `L` (a non-negative integer), or None.
pub fn parse_key(key: &str) -> Option<f64> {
    let digits = key.strip_prefix("gain")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u32>().ok().map(f64::from)
}

/// The gain of one label (NaN = not in the qrels).
#[inline]
pub fn gain(label: f64, ov: &Overrides) -> f64 {
    if label.is_nan() || label < 0.0 {
        return 0.0;
    }
    ov.iter()
        .find(|(l, _)| *l == label)
        .map_or(label, |&(_, g)| g)
}

/// Positive gains of the judged documents, largest first.
pub fn ideal<'a>(q: &Query<'a>, ov: &Overrides) -> Cow<'a, [f64]> {
    if ov.is_empty() {
        // Default gains: the positive labels, already sorted.
        return Cow::Borrowed(q.ideal);
    }
    let mut v: Vec<f64> = q
        .judged
        .iter()
        .filter(|&&l| l >= 0.0)
        .map(|&l| gain(l, ov))
        .filter(|&g| g > 0.0)
        .collect();
    v.sort_unstable_by(|a, b| b.total_cmp(a));
    Cow::Owned(v)
}

fn discounted(gains: impl Iterator<Item = f64>) -> f64 {
    let mut s = 0.0;
    for (i, g) in gains.enumerate() {
        if g != 0.0 {
            s += g / discount(i);
        }
    }
    s
}

pub fn dcg(q: &Query<'_>, k: Option<usize>, ov: &Overrides) -> f64 {
    discounted(q.top(k).iter().map(|&l| gain(l, ov)))
}

/// The DCG of the ideal ranking cut at k (trec_eval `ideal_dcg`, which has no k).
pub fn ideal_dcg(q: &Query<'_>, k: Option<usize>, ov: &Overrides) -> f64 {
    let ideal = ideal(q, ov);
    let n = k.map_or(ideal.len(), |k| k.min(ideal.len()));
    discounted(ideal[..n].iter().copied())
}

pub fn ndcg(q: &Query<'_>, k: Option<usize>, ov: &Overrides) -> f64 {
    let idcg = ideal_dcg(q, k, ov);
    if idcg.is_infinite() {
        // An overflow, not the 0 of a finite DCG over it (as `ndcg::ndcg`).
        return idcg;
    }
    if idcg > 0.0 {
        dcg(q, k, ov) / idcg
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn keys() {
        assert_eq!(parse_key("gain2"), Some(2.0));
        assert_eq!(parse_key("gain0"), Some(0.0));
        assert_eq!(parse_key("gain"), None);
        assert_eq!(parse_key("gain-1"), None);
        assert_eq!(parse_key("p"), None);
    }

    #[test]
    fn custom_gains_reorder_the_ideal() {
        // gains 1 -> 3, 2 -> 9, 0 -> 0, 3 -> 3 (default).  Ranking 1, 3, NaN, 2.
        let ov = [(1.0, 3.0), (2.0, 9.0)];
        let q = query(&[1.0, 3.0, f64::NAN, 2.0], &[1.0, 2.0, 3.0, 0.0, -1.0]);
        let dcg_v = 3.0 + 3.0 / 3f64.log2() + 9.0 / 5f64.log2();
        assert!(close(dcg(&q.view(), None, &ov), dcg_v));
        // ideal gains 9, 3, 3
        let idcg = 9.0 + 3.0 / 3f64.log2() + 3.0 / 2.0;
        assert!(close(ndcg(&q.view(), None, &ov), dcg_v / idcg));
        let idcg2 = 9.0 + 3.0 / 3f64.log2();
        assert!(close(
            ndcg(&q.view(), Some(2), &ov),
            (3.0 + 3.0 / 3f64.log2()) / idcg2
        ));
    }

    #[test]
    fn zero_label_gain_and_negative_gain() {
        // label 0 gains 1, label 1 gains -2.  Ranking 1, 0.  Ideal: the 0 only.
        let ov = [(0.0, 1.0), (1.0, -2.0)];
        let q = query(&[1.0, 0.0], &[1.0, 0.0]);
        assert!(close(dcg(&q.view(), None, &ov), -2.0 + 1.0 / 3f64.log2()));
        assert!(close(ndcg(&q.view(), None, &ov), -2.0 + 1.0 / 3f64.log2()));
        let none = [(1.0, 0.0)];
        let z = query(&[1.0], &[1.0]);
        assert_eq!(ndcg(&z.view(), None, &none), 0.0);
    }
}
