//! Inferred AP (Yilmaz & Aslam, CIKM 2006), exactly as trec_eval `infAP`.
//!
//! Documents are sorted into: not in the pool (not in the qrels: NaN), in the
//! pool but unjudged (negative label), judged non-relevant (`0 <= l < level`)
//! and judged relevant.  Walking the ranking with 0-based index `j` and
//! counting, above `j`, relevant `rel`, judged non-relevant `non` and
//! unjudged-in-pool `unj` documents, each relevant document at `j` adds
//!
//! * 1 if `j = 0`, else
//! * `1/(j+1) + (j/(j+1)) * ((rel + non + unj) / j) * ((rel + e) / (rel + non + 2e))`
//!   with `e = 0.00001` (trec_eval's `INFAP_EPSILON`);
//!
//! infAP = sum / R (the sum itself when `R = 0`, which is then 0).  Documents
//! not in the pool are skipped but still count in `j`.

use super::query::{is_rel, Query};

const EPS: f64 = 0.00001;

pub fn inf_ap(q: &Query<'_>, level: f64) -> f64 {
    let (mut rel, mut non, mut unj) = (0i64, 0i64, 0i64);
    let mut sum = 0.0;
    for (j, &l) in q.ranked.iter().enumerate() {
        if l.is_nan() {
            continue;
        }
        if l < 0.0 {
            unj += 1;
            continue;
        }
        if !is_rel(l, level) {
            non += 1;
            continue;
        }
        rel += 1;
        if j == 0 {
            sum += 1.0;
        } else {
            let fj = j as f64;
            sum += 1.0 / (fj + 1.0)
                + (fj / (fj + 1.0))
                    * ((rel - 1 + non + unj) as f64 / fj)
                    * (((rel - 1) as f64 + EPS) / ((rel - 1 + non) as f64 + 2.0 * EPS));
        }
    }
    let r = q.num_rel(level);
    if r > 0 {
        sum / r as f64
    } else {
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        // ranking: rel (j=0), unjudged(-1), nonpool, nonrel, rel (j=4); R = 3
        let q = query(
            &[1.0, -1.0, f64::NAN, 0.0, 1.0],
            &[1.0, -1.0, 0.0, 1.0, 1.0],
        );
        // j=0: 1.  j=4: rel above 1, non 1, unj 1:
        // 1/5 + (4/5) * (3/4) * ((1 + e) / (2 + 2e)) = 0.2 + 0.6 * 0.5
        let want = (1.0 + 0.2 + 0.6 * ((1.0 + EPS) / (2.0 + 2.0 * EPS))) / 3.0;
        assert!(close(inf_ap(&q.view(), 1.0), want));
        // all judged, no unjudged: infAP = AP
        let q = query(&[0.0, 1.0, 1.0], &[0.0, 1.0, 1.0]);
        let ap = (0.5 + 2.0 / 3.0) / 2.0;
        assert!((inf_ap(&q.view(), 1.0) - ap).abs() < 1e-4);
        let none = query(&[0.0], &[0.0]);
        assert_eq!(inf_ap(&none.view(), 1.0), 0.0);
    }
}
