//! One ranked list against its own ground truth: the per-sample path of
//! `ranklens.Scorer` (RAG rows), with no encoding of a whole side.
//!
//! A sample's ground truth is a list of groups (a plain relevant id or an
//! `{id: label}` entry is a group of one), each with one label; the retrieved
//! list is, per rank, the group its document belongs to or [`NO_GROUP`].  The
//! values are exactly those of `eval::evaluate` on grouped qrels (see there):
//! a group is satisfied at the rank of its first retrieved member, which carries
//! the group's label; later members count as judged non-relevant (0); the pool
//! holds each group's label once and a 0 for each other member; the ideal
//! ranking holds the positive group labels, largest first.
//!
//! Why a path of its own: `evaluate` on one sample first encodes both sides
//! (vocabularies, sorting, joins), which costs ~100x the arithmetic on a
//! ten-document list.

use crate::core::metrics::first_rel;
use crate::core::metrics::query::{PrefixBuf, Query};
use crate::core::metrics::{Family, MetricSpec};

/// A retrieved document in no group of the ground truth.
pub const NO_GROUP: u32 = u32::MAX;

/// One sample, its ids already matched against its ground truth.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    /// The label of each group.
    pub group_labels: &'a [f64],
    /// Members beyond the first, over all groups (judged non-relevant 0s of
    /// the pool).
    pub extra_members: usize,
    /// Per rank (from 1), the group of the retrieved document or `NO_GROUP`.
    pub ranked: &'a [u32],
}

/// Per-thread buffers, reused across samples.
#[derive(Default, Debug)]
pub struct Scratch {
    prefix: PrefixBuf,
    satisfied: Vec<bool>,
    ranked: Vec<f64>,
    pool: Vec<f64>,
    ideal: Vec<f64>,
}

/// The values of `metrics` on one sample into `out` (one per metric).
/// `level`: the default relevance level.  `miss_nan`: `first_rel_rank` is NaN,
/// not k + 1 (or the list length + 1), when no relevant document is in the top k.
pub fn score_sample(
    s: &mut Scratch,
    sample: &Sample<'_>,
    metrics: &[MetricSpec],
    level: f64,
    miss_nan: bool,
    out: &mut [f64],
) {
    let labels = sample.group_labels;
    s.satisfied.clear();
    s.satisfied.resize(labels.len(), false);
    s.ranked.clear();
    for &g in sample.ranked {
        let label = match s.satisfied.get_mut(g as usize) {
            Some(done) if !*done => {
                *done = true;
                labels[g as usize]
            }
            Some(_) => 0.0,
            None => f64::NAN,
        };
        s.ranked.push(label);
    }
    s.pool.clear();
    s.pool.extend_from_slice(labels);
    s.pool.resize(labels.len() + sample.extra_members, 0.0);
    s.ideal.clear();
    s.ideal.extend(labels.iter().copied().filter(|&l| l > 0.0));
    s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let prefix = s.prefix.build(&s.ranked, &s.pool, &s.ideal, level);
    let q = Query {
        ranked: &s.ranked,
        judged: &s.pool,
        ideal: &s.ideal,
        ties: Default::default(),
        prefix: Some(prefix),
        subtopics: Default::default(),
    };
    for (o, m) in out.iter_mut().zip(metrics) {
        *o = m.compute(&q, level);
        if miss_nan && m.family == Family::FirstRelRank && first_rel::is_miss(&q, m.k, *o) {
            *o = f64::NAN;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, k: Option<usize>) -> MetricSpec {
        MetricSpec::new(name, k, None, &[]).unwrap()
    }

    #[test]
    fn groups_and_misses() {
        // groups {a, b} and {c}; retrieved a, x, b, y (as in eval.rs's
        // groups_are_satisfied_once): one group of two found, b adds nothing.
        let sample = Sample {
            group_labels: &[1.0, 1.0],
            extra_members: 1,
            ranked: &[0, NO_GROUP, 0, NO_GROUP],
        };
        let metrics = [
            spec("recall", Some(4)),
            spec("precision", Some(4)),
            spec("num_rel", None),
            spec("mrr", None),
            spec("first_rel_rank", Some(3)),
        ];
        let mut out = [0.0; 5];
        score_sample(
            &mut Scratch::default(),
            &sample,
            &metrics,
            1.0,
            true,
            &mut out,
        );
        assert_eq!(out, [0.5, 0.25, 2.0, 1.0, 1.0]);
        // nothing relevant retrieved: first_rel_rank@3 is k + 1 = 4, or NaN.
        let miss = Sample {
            ranked: &[NO_GROUP],
            ..sample
        };
        let metrics = [
            spec("first_rel_rank", Some(3)),
            spec("first_rel_rank", None),
        ];
        let mut out = [0.0; 2];
        let mut s = Scratch::default();
        score_sample(&mut s, &miss, &metrics, 1.0, false, &mut out);
        // without a cutoff: one past the list, 1 + 1
        assert_eq!(out, [4.0, 2.0]);
        score_sample(&mut s, &miss, &metrics, 1.0, true, &mut out);
        assert!(out.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn smallest_positive_level_is_label_above_zero() {
        // labels 0.37 and 0: at level 1 nothing is relevant; at the smallest
        // positive double, 0.37 is (0 is not).
        let sample = Sample {
            group_labels: &[0.37, 0.0],
            extra_members: 0,
            ranked: &[1, 0],
        };
        let metrics = [spec("mrr", None)];
        let mut out = [0.0];
        let mut s = Scratch::default();
        score_sample(&mut s, &sample, &metrics, 1.0, false, &mut out);
        assert_eq!(out, [0.0]);
        score_sample(
            &mut s,
            &sample,
            &metrics,
            f64::from_bits(1),
            false,
            &mut out,
        );
        assert_eq!(out, [0.5]);
    }
}
