//! Diversity (intent-aware) metrics on subtopic judgments, as NIST's ndeval
//! (TREC Web track, version 4.5; wrapped by `pyndeval`) computes them.
//!
//! A query has subtopics (intents, or pieces of needed information); a judged
//! document is relevant to a subtopic when its label for that subtopic is
//! `>= level` (and `>= 0`): ndeval's judgments are binary.  Only subtopics with
//! at least one relevant judged document count: `S` is their number (ndeval's
//! `actualSubtopics`); with `S = 0` every value is 0.  Documents not in the
//! qrels are relevant to nothing.
//!
//! Novelty gain of the document at rank r: `g(r) = sum over the subtopics s it
//! is relevant to of (1 - alpha)^c_s(r)`, `c_s(r)` the number of documents
//! relevant to `s` ranked above r (each repeat of a subtopic is worth
//! `1 - alpha` of the previous one: the redundancy penalty).
//!
//! * `alpha_dcg@k` = sum_{r<=k} g(r) / log2(r + 1), divided by the "ideal
//!   ideal" sum_{r<=k} S (1 - alpha)^(r-1) / log2(r + 1) (ndeval's
//!   collection-independent normalisation; as in ndeval, k = 1 is not divided).
//! * `alpha_ndcg@k` = the same sum over the run / over the ideal ranking.
//! * `err_ia@k` = sum_{r<=k} g(r) / r, divided by sum_{r<=k} S (1 - alpha)^(r-1)
//!   / r (k = 1 not divided, as in ndeval); with alpha = 0.5 this is ERR-IA with
//!   a stopping probability of 1/2 at each relevant document (Chapelle et al.).
//! * `nerr_ia@k` = the same sum over the run / over the ideal ranking.
//! * `nrbp` = (1 - (1 - alpha) beta) / S * sum_r g(r) beta^(r-1) over the whole
//!   ranking; `nnrbp` = nrbp / nrbp of the ideal ranking.
//! * `p_ia@k` = sum_{r<=k} (subtopics the document at r is relevant to) / (k S).
//! * `ap_ia` = mean over the S subtopics of the average precision of the ranking
//!   for that subtopic alone (relevant documents of the subtopic as R).
//! * `st_recall@k` = subtopics covered by the top k / S.
//!
//! The normalised values are 0 when the run's sum is 0.  The ideal ranking is
//! ndeval's greedy approximation (the exact one is NP-hard): rank by rank, the
//! judged document with the largest novelty gain given the documents already
//! placed; equal gains go to the largest document id (byte order).  Its gains
//! are summed over subtopics in subtopic order, as ndeval does, so that equal
//! gains compare equal.  Where ndeval has no value ranklens extends the
//! definition: any k (ndeval stops at 20; `alpha_dcg` and `err_ia` sum their
//! normaliser up to k, so k is at most [`MAX_NORMALISED_K`]), and a query
//! with `S = 0` gets `nnrbp` 0 (ndeval divides 0 by 0).  Without k (only from
//! Rust) the cutoff is the ranking's length.
//!
//! Why the subtopic judgments are per judged document (`Subtopics`) and not per
//! (document, subtopic) row: the run is joined to the judged documents once, and
//! the ordinary metrics on the same qrels see one label per document (the
//! largest of its subtopic labels: relevant when relevant to any subtopic, as
//! ndeval's non-intent-aware MAP).

use super::query::{Query, Subtopics, UNJUDGED};
use std::borrow::Cow;
use std::collections::HashMap;
use std::f64::consts::LN_2;

/// The largest cutoff of `alpha_dcg` and `err_ia`, whose normaliser is a sum
/// of k terms.
pub const MAX_NORMALISED_K: usize = 10_000_000;

/// ndeval's discount of the document at 0-based position `i`: log(2) / log(i + 2).
fn discount(i: usize) -> f64 {
    LN_2 / ((i + 2) as f64).ln()
}

/// Relevant judged documents of each subtopic, and S (subtopics with one or more).
fn relevant_per_subtopic<'a>(s: &Subtopics<'a>, level: f64) -> (Cow<'a, [u32]>, usize) {
    let n = s.relevant_docs_at(level);
    let actual = n.iter().filter(|&&c| c > 0).count();
    (n, actual)
}

/// Novelty gains of the first `depth` ranked documents.
fn run_gains(s: &Subtopics<'_>, depth: usize, level: f64, alpha: f64) -> Vec<f64> {
    let mut weight = vec![1.0; s.num_subtopics()];
    s.ranked
        .iter()
        .take(depth)
        .map(|&p| {
            let mut g = 0.0;
            if p != UNJUDGED {
                for t in s.relevant(p as usize, level) {
                    if let Some(w) = weight.get_mut(t) {
                        g += *w;
                        *w *= 1.0 - alpha;
                    }
                }
            }
            g
        })
        .collect()
}

/// Novelty gains of the first `depth` documents of ndeval's greedy ideal
/// ranking (documents relevant to no subtopic add 0 and are left out).
///
/// Why by subtopic set and not ndeval's rescan of every document at every
/// rank: documents relevant to the same subtopics have the same gain at every
/// rank, so each set has one candidate, its largest document number (id): the
/// rescan's choice, tie for tie (the reference backend rescans; a test holds
/// the two equal), in ranks x sets steps instead of ranks x documents.  A
/// query has few subtopics, so few sets.  Rejected: a lazy heap of gains,
/// each an upper bound of the next: slower than the rescan, since with few
/// subtopics nearly every placement makes nearly every bound stale.
fn ideal_gains(s: &Subtopics<'_>, depth: usize, level: f64, alpha: f64) -> Vec<f64> {
    let mut weight = vec![1.0; s.num_subtopics()];
    // (relevant subtopics, document numbers ascending) per set.
    let mut sets: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
    for p in 0..s.num_docs() {
        let key: Vec<usize> = s.relevant(p, level).collect();
        if key.is_empty() {
            continue;
        }
        let i = *index.entry(key).or_insert_with_key(|key| {
            sets.push((key.clone(), Vec::new()));
            sets.len() - 1
        });
        if let Some(set) = sets.get_mut(i) {
            set.1.push(p);
        }
    }
    let mut out = Vec::new();
    while out.len() < depth {
        // (gain, document, set) of the best candidate.
        let mut best: Option<(f64, usize, usize)> = None;
        for (i, (subtopics, docs)) in sets.iter().enumerate() {
            let Some(&p) = docs.last() else {
                continue;
            };
            let g = subtopics
                .iter()
                .fold(0.0, |a, &t| a + weight.get(t).copied().unwrap_or(0.0));
            if best.map_or(true, |(bg, bp, _)| g > bg || (g == bg && p > bp)) {
                best = Some((g, p, i));
            }
        }
        let Some((g, _, i)) = best else {
            break;
        };
        if let Some((subtopics, docs)) = sets.get_mut(i) {
            docs.pop();
            for &t in subtopics.iter() {
                if let Some(w) = weight.get_mut(t) {
                    *w *= 1.0 - alpha;
                }
            }
        }
        out.push(g);
    }
    out
}

/// The cutoff depth: k, or the ranking's length without one.
fn cut(q: &Query<'_>, k: Option<usize>) -> usize {
    k.unwrap_or(q.ranked.len())
}

/// `sum_{i < depth} gains[i] * weight(i)`, in rank order.
fn weighted(gains: &[f64], weight: impl Fn(usize) -> f64) -> f64 {
    gains
        .iter()
        .enumerate()
        .fold(0.0, |a, (i, &g)| a + g * weight(i))
}

/// sum_{i < depth} S (1 - alpha)^i * weight(i): ndeval's "ideal ideal".
fn ideal_ideal(actual: usize, depth: usize, alpha: f64, weight: impl Fn(usize) -> f64) -> f64 {
    let (mut sum, mut gain) = (0.0, actual as f64);
    for i in 0..depth.min(MAX_NORMALISED_K) {
        sum += gain * weight(i);
        gain *= 1.0 - alpha;
    }
    sum
}

fn reciprocal(i: usize) -> f64 {
    1.0 / (i + 1) as f64
}

/// ndeval's collection-independent normalisation (none at depth 1).
fn over_ideal_ideal(
    q: &Query<'_>,
    k: Option<usize>,
    level: f64,
    alpha: f64,
    weight: fn(usize) -> f64,
) -> f64 {
    let s = &q.subtopics;
    let (_, actual) = relevant_per_subtopic(s, level);
    let depth = cut(q, k);
    if actual == 0 || depth == 0 {
        return 0.0;
    }
    let run = weighted(&run_gains(s, depth, level, alpha), weight);
    if depth == 1 {
        return run;
    }
    run / ideal_ideal(actual, depth, alpha, weight)
}

/// ndeval's collection-dependent normalisation: run / greedy ideal ranking.
fn over_ideal(
    q: &Query<'_>,
    k: Option<usize>,
    level: f64,
    alpha: f64,
    weight: fn(usize) -> f64,
) -> f64 {
    let s = &q.subtopics;
    let depth = cut(q, k);
    let run = weighted(&run_gains(s, depth, level, alpha), weight);
    if run == 0.0 {
        return 0.0;
    }
    run / weighted(&ideal_gains(s, depth, level, alpha), weight)
}

/// alpha-DCG@k, normalised by the ideal ideal (ndeval's `alpha-DCG@k`).
pub fn alpha_dcg(q: &Query<'_>, k: Option<usize>, level: f64, alpha: f64) -> f64 {
    over_ideal_ideal(q, k, level, alpha, discount)
}

/// alpha-nDCG@k (Clarke et al., SIGIR 2008) against the greedy ideal.
pub fn alpha_ndcg(q: &Query<'_>, k: Option<usize>, level: f64, alpha: f64) -> f64 {
    over_ideal(q, k, level, alpha, discount)
}

/// ERR-IA@k, normalised by the ideal ideal (ndeval's `ERR-IA@k`).
pub fn err_ia(q: &Query<'_>, k: Option<usize>, level: f64, alpha: f64) -> f64 {
    over_ideal_ideal(q, k, level, alpha, reciprocal)
}

/// nERR-IA@k against the greedy ideal.
pub fn nerr_ia(q: &Query<'_>, k: Option<usize>, level: f64, alpha: f64) -> f64 {
    over_ideal(q, k, level, alpha, reciprocal)
}

/// sum_r g(r) beta^(r-1) over all of `gains`, in rank order.
fn rank_biased(gains: &[f64], beta: f64) -> f64 {
    let (mut sum, mut decay) = (0.0, 1.0);
    for &g in gains {
        sum += g * decay;
        decay *= beta;
    }
    sum
}

/// NRBP (Clarke et al., ICTIR 2009) over the whole ranking.
pub fn nrbp(q: &Query<'_>, level: f64, alpha: f64, beta: f64) -> f64 {
    let s = &q.subtopics;
    let (_, actual) = relevant_per_subtopic(s, level);
    if actual == 0 {
        return 0.0;
    }
    let run = rank_biased(&run_gains(s, usize::MAX, level, alpha), beta);
    run * (1.0 - (1.0 - alpha) * beta) / actual as f64
}

/// nNRBP: NRBP over NRBP of the greedy ideal ranking (0 when that is 0).
pub fn nnrbp(q: &Query<'_>, level: f64, alpha: f64, beta: f64) -> f64 {
    let s = &q.subtopics;
    let run = rank_biased(&run_gains(s, usize::MAX, level, alpha), beta);
    let ideal = rank_biased(&ideal_gains(s, usize::MAX, level, alpha), beta);
    if run == 0.0 || ideal == 0.0 {
        return 0.0;
    }
    run / ideal
}

/// Intent-aware precision@k.
pub fn p_ia(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let s = &q.subtopics;
    let (_, actual) = relevant_per_subtopic(s, level);
    let depth = cut(q, k);
    if actual == 0 || depth == 0 {
        return 0.0;
    }
    let hits: usize = s
        .ranked
        .iter()
        .take(depth)
        .filter(|&&p| p != UNJUDGED)
        .map(|&p| s.relevant(p as usize, level).count())
        .sum();
    hits as f64 / (depth as f64 * actual as f64)
}

/// Intent-aware average precision (ndeval's MAP-IA, per query).
pub fn ap_ia(q: &Query<'_>, level: f64) -> f64 {
    let s = &q.subtopics;
    let (nrel, actual) = relevant_per_subtopic(s, level);
    if actual == 0 {
        return 0.0;
    }
    let mut count = vec![0u32; nrel.len()];
    let mut total = vec![0.0; nrel.len()];
    for (i, &p) in s.ranked.iter().enumerate() {
        if p == UNJUDGED {
            continue;
        }
        for t in s.relevant(p as usize, level) {
            if let (Some(c), Some(x)) = (count.get_mut(t), total.get_mut(t)) {
                *c += 1;
                *x += *c as f64 / (i + 1) as f64;
            }
        }
    }
    let sum = nrel
        .iter()
        .zip(&total)
        .filter(|(&n, _)| n > 0)
        .fold(0.0, |a, (&n, &x)| a + x / n as f64);
    sum / actual as f64
}

/// Subtopic recall@k: subtopics covered by the top k / S.
pub fn st_recall(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let s = &q.subtopics;
    let (nrel, actual) = relevant_per_subtopic(s, level);
    if actual == 0 {
        return 0.0;
    }
    let mut seen = vec![false; nrel.len()];
    for &p in s.ranked.iter().take(cut(q, k)) {
        if p != UNJUDGED {
            for t in s.relevant(p as usize, level) {
                if let Some(x) = seen.get_mut(t) {
                    *x = true;
                }
            }
        }
    }
    seen.iter().filter(|&&x| x).count() as f64 / actual as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Judged documents a..e (ids in order), subtopics 0..3:
    /// a: {0}, b: {0, 1}, c: {2}, d: {} (judged non-relevant), e: {1}.
    fn judged() -> (Vec<u32>, Vec<f64>, Vec<usize>) {
        let ids = vec![0, 0, 1, 2, 0, 1];
        let labels = vec![1.0, 1.0, 1.0, 1.0, 0.0, 2.0];
        let bounds = vec![0, 1, 3, 4, 5, 6];
        (ids, labels, bounds)
    }

    fn value(ranked: &[u32], f: impl Fn(&Query<'_>) -> f64) -> f64 {
        let (ids, labels, bounds) = judged();
        let nan = vec![f64::NAN; ranked.len()];
        let q = Query {
            ranked: &nan,
            judged: &[],
            ideal: &[],
            ties: Default::default(),
            prefix: None,
            subtopics: Subtopics {
                ids: &ids,
                labels: &labels,
                bounds: &bounds,
                ranked,
                relevant_docs: None,
            },
        };
        f(&q)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Hand-derived: ranking b, a, x (unjudged), c with alpha = 0.5:
    /// gains 2 (b: 0 and 1 new), 0.5 (a: 0 seen once), 0, 1 (c: 2 new).
    #[test]
    fn hand_derived_values() {
        let x = UNJUDGED;
        let r = [1, 0, x, 2];
        let d = |i: usize| 1.0 / ((i + 2) as f64).log2();
        // Ideal (greedy): b (2), then c (1); a and e tie at 0.5: e (larger
        // id) first, then a (still 0.5: e repeats subtopic 1, not 0).
        let idcg3 = 2.0 * d(0) + 1.0 * d(1) + 0.5 * d(2);
        let dcg3 = 2.0 * d(0) + 0.5 * d(1);
        assert!(close(
            value(&r, |q| alpha_ndcg(q, Some(3), 1.0, 0.5)),
            dcg3 / idcg3
        ));
        let ii3 = 3.0 * d(0) + 1.5 * d(1) + 0.75 * d(2);
        assert!(close(
            value(&r, |q| alpha_dcg(q, Some(3), 1.0, 0.5)),
            dcg3 / ii3
        ));
        // k = 1: not divided (ndeval).
        assert!(close(value(&r, |q| alpha_dcg(q, Some(1), 1.0, 0.5)), 2.0));
        assert!(close(value(&r, |q| err_ia(q, Some(1), 1.0, 0.5)), 2.0));
        let err4 = 2.0 + 0.5 / 2.0 + 1.0 / 4.0;
        let ii4 = 3.0 + 1.5 / 2.0 + 0.75 / 3.0 + 0.375 / 4.0;
        assert!(close(
            value(&r, |q| err_ia(q, Some(4), 1.0, 0.5)),
            err4 / ii4
        ));
        let ierr4 = 2.0 + 1.0 / 2.0 + 0.5 / 3.0 + 0.5 / 4.0;
        assert!(close(
            value(&r, |q| nerr_ia(q, Some(4), 1.0, 0.5)),
            err4 / ierr4
        ));
        // P-IA@4: b 2 + a 1 + c 1 = 4 over 4 * 3.
        assert!(close(value(&r, |q| p_ia(q, Some(4), 1.0)), 4.0 / 12.0));
        assert!(close(value(&r, |q| st_recall(q, Some(2), 1.0)), 2.0 / 3.0));
        assert!(close(value(&r, |q| st_recall(q, Some(4), 1.0)), 1.0));
        // AP-IA: s0 (a, b relevant): b@1 1/1, a@2 2/2 -> 2/2 = 1;
        // s1 (b, e): b@1 1 -> 1/2; s2 (c): c@4 1/4 -> 1/4.
        assert!(close(
            value(&r, |q| ap_ia(q, 1.0)),
            (1.0 + 0.5 + 0.25) / 3.0
        ));
        // NRBP, beta 0.5: (2 + 0.5 * 0.5 + 1 * 0.125) * (1 - 0.25) / 3.
        let nrbp_run = 2.0 + 0.25 + 0.125;
        assert!(close(
            value(&r, |q| nrbp(q, 1.0, 0.5, 0.5)),
            nrbp_run * 0.75 / 3.0
        ));
        let nrbp_ideal = 2.0 + 0.5 + 0.5 * 0.25 + 0.5 * 0.125;
        assert!(close(
            value(&r, |q| nnrbp(q, 1.0, 0.5, 0.5)),
            nrbp_run / nrbp_ideal
        ));
        // Level 2: only e is relevant (to subtopic 1); S = 1.
        assert!(close(value(&r, |q| st_recall(q, Some(4), 2.0)), 0.0));
        assert!(close(
            value(&[4], |q| alpha_ndcg(q, Some(5), 2.0, 0.5)),
            1.0
        ));
    }

    /// ndeval's greedy as written: every remaining document rescanned at every
    /// rank, the largest gain taken, ties to the later (larger id) document.
    fn rescan(s: &Subtopics<'_>, level: f64, alpha: f64) -> Vec<f64> {
        let mut weight = vec![1.0; s.num_subtopics()];
        let mut left: Vec<usize> = (0..s.num_docs())
            .filter(|&p| s.relevant(p, level).next().is_some())
            .collect();
        let mut out = Vec::new();
        while !left.is_empty() {
            let mut best = (0, f64::NEG_INFINITY);
            for (i, &p) in left.iter().enumerate() {
                let g = s.relevant(p, level).fold(0.0, |a, t| a + weight[t]);
                if g >= best.1 {
                    best = (i, g);
                }
            }
            let p = left.remove(best.0);
            for t in s.relevant(p, level) {
                weight[t] *= 1.0 - alpha;
            }
            out.push(best.1);
        }
        out
    }

    proptest::proptest! {
        /// The ideal ranking by subtopic set is the rescan's, tie for tie.
        #[test]
        fn set_greedy_is_the_rescan(
            docs in proptest::collection::vec(
                proptest::collection::btree_map(0u32..5, 0u8..3, 0..4), 0..12),
            alpha in proptest::sample::select(vec![0.0, 0.25, 0.5, 0.75, 1.0, 0.3]),
        ) {
            let (mut ids, mut labels, mut bounds) = (vec![], vec![], vec![0]);
            for d in &docs {
                for (&t, &l) in d {
                    ids.push(t);
                    labels.push(l as f64);
                }
                bounds.push(ids.len());
            }
            let s = Subtopics {
                ids: &ids,
                labels: &labels,
                bounds: &bounds,
                ranked: &[],
                relevant_docs: None,
            };
            for level in [1.0, 2.0] {
                proptest::prop_assert_eq!(
                    ideal_gains(&s, usize::MAX, level, alpha),
                    rescan(&s, level, alpha)
                );
            }
        }
    }

    #[test]
    fn no_relevant_subtopic_is_zero() {
        let x = UNJUDGED;
        for v in [
            value(&[x, 3], |q| alpha_ndcg(q, Some(2), 5.0, 0.5)),
            value(&[x, 3], |q| nnrbp(q, 5.0, 0.5, 0.5)),
            value(&[x, 3], |q| nrbp(q, 5.0, 0.5, 0.5)),
            value(&[x, 3], |q| err_ia(q, Some(2), 5.0, 0.5)),
            value(&[], |q| ap_ia(q, 1.0)),
            value(&[], |q| p_ia(q, Some(3), 1.0)),
        ] {
            assert_eq!(v, 0.0);
        }
    }
}
