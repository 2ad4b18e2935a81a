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
//! (vocabularies, sorting, joins), which costs far more than the arithmetic
//! on a ten-document list.
//!
//! Why a fused path for the binary sample (`score`, `score_binary`): the
//! common RAG row is a list of relevant ids (each a group of one, label 1)
//! and a short retrieved list.  Its values follow from the ranks of its hits
//! and the number of relevant ids alone, so `score_binary` computes them from
//! those (running sums over the hits, not over every rank; the ideal DCG of
//! R ones from a table kept in the scratch), with no label vectors, pool,
//! sorted ideal or `PrefixBuf`.  It adds the same terms in the same order
//! and divides the same numbers as the kernels do through `PrefixBuf` (a rank
//! without a hit adds nothing there either: `+=` only on a hit), so the values
//! are the same bits (proptest below, against `score_sample`).  Only the
//! families of `fused` (no custom gains) take it; any other metric, a graded
//! or grouped sample, sends the whole sample to `score_sample`.
//!
//! `score_hits` is `score_binary` from the hits alone: a reader that finds
//! them while it matches the ids (`ranklens.Scorer`'s batch) passes them
//! straight, with no per-rank vector (proptest below: the same bits).

use crate::core::metrics::first_rel;
use crate::core::metrics::query::{discount, is_rel, PrefixBuf, Query};
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
    /// `score_binary`: the 0-based ranks of the hits, in rank order.
    hits: Vec<u32>,
    /// `score_binary`: `ap[j]`, `dcg[j]`: the sums over the first `j` hits.
    ap: Vec<f64>,
    dcg: Vec<f64>,
    /// `score_binary`: `idcg[r]`, the DCG of `r` ideal gains of 1, grown on
    /// demand and kept across samples.
    idcg: Vec<f64>,
}

/// Whether `score_binary` computes `metric`.
pub fn fused(metric: &MetricSpec) -> bool {
    !metric.has_gains()
        && matches!(
            metric.family,
            Family::Precision
                | Family::Recall
                | Family::F1
                | Family::Hits
                | Family::HitRate
                | Family::Mrr
                | Family::Map
                | Family::GmMap
                | Family::Ndcg
                | Family::Dcg
                | Family::Idcg
                | Family::NumRet
                | Family::NumRel
                | Family::NumRelRet
                | Family::RPrecision
                | Family::FirstRelRank
                | Family::NumQ
        )
}

/// A metric as `score_binary` computes it.
#[derive(Clone, Copy, Debug)]
struct FusedMetric {
    family: Family,
    k: Option<usize>,
    /// A label of 1 is relevant at the metric's level.
    rel: bool,
}

/// A metric set whose every metric is `fused`, with what `score_binary`
/// needs of it worked out once (the level each metric counts relevance at).
#[derive(Clone, Debug)]
pub struct Fused {
    metrics: Vec<FusedMetric>,
    miss_nan: bool,
}

impl Fused {
    /// `None` unless every metric is `fused` and counts relevance at a level
    /// above 0 (at 0 or below, the 0 of a group retrieved again is relevant:
    /// `score_sample` handles that); `level` and `miss_nan` as for
    /// `score_sample`.
    pub fn new(metrics: &[MetricSpec], level: f64, miss_nan: bool) -> Option<Self> {
        let metrics = metrics
            .iter()
            .map(|m| {
                let own = m.level.unwrap_or(level);
                (fused(m) && !is_rel(0.0, own)).then(|| FusedMetric {
                    family: m.family,
                    k: m.k,
                    rel: is_rel(1.0, own),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Fused { metrics, miss_nan })
    }
}

/// A binary sample: every group is one id of label 1 (a list of relevant ids).
pub fn is_binary(sample: &Sample<'_>) -> bool {
    sample.extra_members == 0 && sample.group_labels.iter().all(|&l| l == 1.0)
}

/// `score_sample`'s values, through `score_binary` when the metrics are
/// `fused` (`fused` is `Fused::new` of `metrics`, `level` and `miss_nan`) and
/// the sample `is_binary`.
#[allow(clippy::too_many_arguments)]
pub fn score(
    s: &mut Scratch,
    sample: &Sample<'_>,
    metrics: &[MetricSpec],
    fused: Option<&Fused>,
    level: f64,
    miss_nan: bool,
    out: &mut [f64],
) {
    match fused {
        Some(f) if is_binary(sample) => {
            score_binary(s, f, sample.group_labels.len(), sample.ranked, out)
        }
        _ => score_sample(s, sample, metrics, level, miss_nan, out),
    }
}

/// The values of the metrics of `f` on a binary sample (`relevant` groups of
/// one id of label 1; `ranked` as `Sample::ranked`) into `out`, as
/// `score_sample` gives them (see the module note).
pub fn score_binary(s: &mut Scratch, f: &Fused, relevant: usize, ranked: &[u32], out: &mut [f64]) {
    // A group's first retrieval is a hit (label 1); a later one is a 0.
    s.hits.clear();
    if relevant <= 64 {
        let mut seen = 0u64;
        for (i, &g) in ranked.iter().enumerate() {
            if (g as usize) < relevant && seen & (1 << g) == 0 {
                seen |= 1 << g;
                s.hits.push(i as u32);
            }
        }
    } else {
        s.satisfied.clear();
        s.satisfied.resize(relevant, false);
        for (i, &g) in ranked.iter().enumerate() {
            if let Some(done) = s.satisfied.get_mut(g as usize) {
                if !*done {
                    *done = true;
                    s.hits.push(i as u32);
                }
            }
        }
    }
    let hits = std::mem::take(&mut s.hits);
    score_hits(s, f, relevant, ranked.len(), &hits, out);
    s.hits = hits;
}

/// `score_binary` from the hits: `hits` the 0-based ranks, increasing, of the
/// first retrieval of each relevant id found (at most `relevant` of them, all
/// below `len`), `len` the length of the ranked list.  A reader that knows
/// the hits when it matches the ids calls this directly.
pub fn score_hits(
    s: &mut Scratch,
    f: &Fused,
    relevant: usize,
    len: usize,
    hits: &[u32],
    out: &mut [f64],
) {
    // PrefixBuf's sums, taken at the hits only: `ap += rel / rank` and
    // `dcg += 1 / discount`, in rank order.
    s.ap.clear();
    s.dcg.clear();
    s.ap.push(0.0);
    s.dcg.push(0.0);
    let (mut ap, mut dcg) = (0.0, 0.0);
    for (j, &i) in hits.iter().enumerate() {
        ap += (j + 1) as f64 / (i as usize + 1) as f64;
        dcg += 1.0 / discount(i as usize);
        s.ap.push(ap);
        s.dcg.push(dcg);
    }
    // PrefixBuf's ideal sum: `idcg += 1 / discount`.
    if s.idcg.is_empty() {
        s.idcg.push(0.0);
    }
    while s.idcg.len() <= relevant {
        let i = s.idcg.len() - 1;
        let next = s.idcg[i] + 1.0 / discount(i);
        s.idcg.push(next);
    }
    let (ap, dcg, idcg) = (&s.ap[..], &s.dcg[..], &s.idcg[..]);
    // Hits among the top `d` (few: counted by a scan).
    let count = |d: usize| {
        if hits.len() <= 16 {
            hits.iter().take_while(|&&i| (i as usize) < d).count()
        } else {
            hits.partition_point(|&i| (i as usize) < d)
        }
    };
    for (o, m) in out.iter_mut().zip(&f.metrics) {
        let depth = m.k.map_or(len, |k| k.min(len));
        let r = if m.rel { relevant } else { 0 };
        // Relevant documents among the top `depth`.
        let found = || if m.rel { count(depth) } else { 0 };
        let precision = |found: usize| match m.k.unwrap_or(len) {
            0 => 0.0,
            n => found as f64 / n as f64,
        };
        let recall = |found: usize| match r {
            0 => 0.0,
            r => found as f64 / r as f64,
        };
        let first = || hits.first().filter(|&&i| m.rel && (i as usize) < depth);
        *o = match m.family {
            Family::Precision => precision(found()),
            Family::Recall => recall(found()),
            Family::F1 => {
                let n = found();
                let (p, r) = (precision(n), recall(n));
                if p + r == 0.0 {
                    0.0
                } else {
                    2.0 * p * r / (p + r)
                }
            }
            Family::Hits | Family::NumRelRet => found() as f64,
            Family::HitRate => {
                if first().is_some() {
                    1.0
                } else {
                    0.0
                }
            }
            Family::Mrr => first().map_or(0.0, |&i| 1.0 / (i as usize + 1) as f64),
            Family::Map => match r {
                0 => 0.0,
                r => ap[found()] / r as f64,
            },
            // The whole list, whatever the cutoff.
            Family::GmMap => match r {
                0 => 0.0,
                r => ap[hits.len()] / r as f64,
            },
            Family::Ndcg => {
                let ideal = idcg[m.k.map_or(relevant, |k| k.min(relevant))];
                if ideal > 0.0 {
                    dcg[count(depth)] / ideal
                } else {
                    0.0
                }
            }
            Family::Dcg => dcg[count(depth)],
            Family::Idcg => idcg[m.k.map_or(relevant, |k| k.min(relevant))],
            Family::NumRet => depth as f64,
            Family::NumRel => r as f64,
            Family::RPrecision => match r {
                0 => 0.0,
                r => count(r.min(len)) as f64 / r as f64,
            },
            Family::FirstRelRank => {
                let v = first().map_or((m.k.unwrap_or(len) + 1) as f64, |&i| {
                    (i as usize + 1) as f64
                });
                if f.miss_nan && v > depth as f64 {
                    f64::NAN
                } else {
                    v
                }
            }
            // `Fused::new` takes no other family; num_q is 1.
            _ => 1.0,
        };
    }
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
        // groups {a, b} and {c}; retrieved a, x, b, y (as in eval/tests.rs's
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

    #[test]
    fn binary_by_hand() {
        // relevant ids a, b; retrieved x, a, y, b (a = group 0, b = group 1).
        let sample = Sample {
            group_labels: &[1.0, 1.0],
            extra_members: 0,
            ranked: &[NO_GROUP, 0, NO_GROUP, 1],
        };
        let metrics = [
            spec("precision", Some(2)),
            spec("recall", Some(2)),
            spec("mrr", None),
            spec("map", None),
            spec("ndcg", Some(10)),
            spec("first_rel_rank", None),
        ];
        let fused = Fused::new(&metrics, 1.0, false).unwrap();
        let mut out = [0.0; 6];
        score_binary(&mut Scratch::default(), &fused, 2, sample.ranked, &mut out);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2();
        let want = [0.5, 0.5, 0.5, (0.5 + 0.5) / 2.0, dcg / idcg, 2.0];
        for (g, w) in out.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{out:?} vs {want:?}");
        }
        // bpref is not fused: no plan.
        assert!(Fused::new(&[spec("bpref", None)], 1.0, false).is_none());
    }

    mod fused_equals_general {
        use super::super::*;
        use crate::core::metrics::testutil::FAMILIES;
        use proptest::prelude::*;

        /// Every metric of the catalogue at a few cutoffs and own levels.
        fn catalogue(level: f64) -> Vec<MetricSpec> {
            let mut out = Vec::new();
            for name in FAMILIES {
                for k in [None, Some(1), Some(2), Some(3), Some(10), Some(100)] {
                    for own in [None, Some(level), Some(0.5), Some(2.0)] {
                        if let Ok(m) = MetricSpec::new(name, k, own, &[]) {
                            out.push(m);
                        }
                    }
                }
            }
            out
        }

        fn same(a: &[f64], b: &[f64]) -> bool {
            a.iter()
                .zip(b)
                .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
        }

        fn level() -> impl Strategy<Value = f64> {
            prop_oneof![
                Just(1.0),
                Just(0.5),
                Just(2.0),
                Just(0.0),
                Just(-1.0),
                Just(f64::from_bits(1)),
            ]
        }

        fn label() -> impl Strategy<Value = f64> {
            prop_oneof![
                4 => Just(1.0),
                1 => Just(0.0),
                1 => Just(-1.0),
                1 => Just(0.5),
                1 => Just(2.0),
                1 => Just(0.37),
            ]
        }

        proptest! {
            /// A binary sample (ids of label 1, groups of one), any ranking
            /// (repeated groups, groups past the ground truth, misses), any
            /// level: `score_binary` gives `score_sample`'s bits for every
            /// fused metric of the catalogue.
            #[test]
            fn binary_samples(
                n in prop_oneof![4 => 0usize..6, 1 => 60usize..70],
                picks in proptest::collection::vec(0u32..80, 0..40),
                level in level(),
                miss_nan in any::<bool>(),
            ) {
                let ranked: Vec<u32> = picks
                    .iter()
                    .map(|&p| if p as usize >= n + 2 && p % 3 != 0 { NO_GROUP } else { p % (n as u32 + 2) })
                    .collect();
                let labels = vec![1.0; n];
                let sample = Sample { group_labels: &labels, extra_members: 0, ranked: &ranked };
                let metrics: Vec<MetricSpec> =
                    catalogue(level).into_iter().filter(fused).collect();
                // At level 0 or below, nothing is fused (see `Fused::new`);
                // the metrics at their own levels above 0 are.
                let metrics: Vec<MetricSpec> = metrics
                    .into_iter()
                    .filter(|m| !is_rel(0.0, m.level.unwrap_or(level)))
                    .collect();
                let plan = Fused::new(&metrics, level, miss_nan).unwrap();
                let mut s = Scratch::default();
                let mut want = vec![0.0; metrics.len()];
                score_sample(&mut s, &sample, &metrics, level, miss_nan, &mut want);
                let mut got = vec![0.0; metrics.len()];
                score_binary(&mut s, &plan, n, &ranked, &mut got);
                for ((m, g), w) in metrics.iter().zip(&got).zip(&want) {
                    prop_assert!(same(&[*g], &[*w]), "{m:?}: {g} vs {w}");
                }
                // Through the dispatcher too, with the scratch reused.
                score(&mut s, &sample, &metrics, Some(&plan), level, miss_nan, &mut got);
                prop_assert!(same(&got, &want));
                // From the hits alone (what a reader that finds them passes).
                let mut seen = vec![false; n];
                let hits: Vec<u32> = (0..ranked.len() as u32)
                    .filter(|&i| match seen.get_mut(ranked[i as usize] as usize) {
                        Some(done) if !*done => { *done = true; true }
                        _ => false,
                    })
                    .collect();
                score_hits(&mut s, &plan, n, ranked.len(), &hits, &mut got);
                prop_assert!(same(&got, &want));
            }

            /// Any sample (graded, negative, float labels, groups, empty
            /// sides), any metric set: `score` gives `score_sample`'s bits.
            #[test]
            fn any_samples(
                labels in proptest::collection::vec(label(), 0..6),
                extra in 0usize..3,
                picks in proptest::collection::vec(0u32..9, 0..14),
                level in level(),
                miss_nan in any::<bool>(),
                only_fused in any::<bool>(),
            ) {
                let n = labels.len() as u32;
                let ranked: Vec<u32> =
                    picks.iter().map(|&p| if p >= n { NO_GROUP } else { p }).collect();
                let sample = Sample { group_labels: &labels, extra_members: extra, ranked: &ranked };
                let metrics: Vec<MetricSpec> = catalogue(level)
                    .into_iter()
                    .filter(|m| !only_fused || fused(m))
                    .collect();
                let plan = Fused::new(&metrics, level, miss_nan);
                prop_assert_eq!(plan.is_some(), only_fused && level > 0.0);
                let mut s = Scratch::default();
                let mut want = vec![0.0; metrics.len()];
                score_sample(&mut s, &sample, &metrics, level, miss_nan, &mut want);
                let mut got = vec![0.0; metrics.len()];
                score(&mut s, &sample, &metrics, plan.as_ref(), level, miss_nan, &mut got);
                for ((m, g), w) in metrics.iter().zip(&got).zip(&want) {
                    prop_assert!(same(&[*g], &[*w]), "{m:?}: {g} vs {w}");
                }
            }
        }
    }
}
