//! `ties="expected"`: the expected value of a metric over the orderings of
//! tied documents.
//!
//! Documents with equal scores form a *tie group*; each group is put in a
//! uniformly random order, independently of the other groups, and the metric's
//! value is averaged over all those orderings (McSherry & Najork, ECIR 2008,
//! "Computing information retrieval performance measures efficiently in the
//! presence of tied scores").  Every family below has an exact closed form or
//! an exact polynomial sum; none enumerates orderings.  Notation: a group
//! starts at 0-based position `a`, has `m` members of which `r` are relevant
//! (at the metric's level) and `s` judged non-relevant (`0 <= label < level`);
//! `c` of its positions fall inside the metric's window (`c = m` but for the
//! group the window ends in); `W` = window = min(k, scored positions).
//!
//! * counts (`hits`, `num_rel_ret`), `precision`, `recall`, `r_precision`:
//!   linearity of expectation: E[relevant in the window] = sum of `c r / m`.
//! * `f1`: at a fixed window P and R are both linear in the same count X,
//!   `2PR/(P+R) = 2X/(d + R)` (d = k, or the number of scored documents without
//!   a cutoff), so `E[f1] = 2 E[X] / (d + R)`.
//! * `hit_rate`: 1 if a group wholly inside the window holds a relevant
//!   document; else, for the group the window cuts, 1 - C(m-r, c) / C(m, c)
//!   (hypergeometric: no relevant among the c drawn).
//! * `mrr`: only the first group holding a relevant document matters; the rank
//!   T of its first relevant member inside it has P(T > t) = C(m-r, t) / C(m, t);
//!   E = sum over t <= c of P(T = t) / (a + t).
//! * `dcg`, `ndcg`, `ndcg_burges`: every position of a group holds its mean
//!   gain in expectation: sum over groups of mean gain x the sum of the
//!   discounts of its positions inside the window; the ideal is fixed.
//! * `map`: sum over positions i of E[rel_i * (relevant up to i)] / i, and for
//!   the j-th position (0-based) of a group:
//!   E = (r/m) (relevant before the group + 1 + j (r-1)/(m-1)).
//! * `bpref`: each relevant document adds f(n) = 1 - min(n, R) / min(N, R),
//!   n = judged non-relevant documents above it = those of earlier groups
//!   plus X, the group's own ones above it.  For a whole group X is uniform on
//!   0..=s (the relative order of one relevant document and the s non-relevant
//!   ones is uniform).  For the group the window cuts, the document must land
//!   at a position p <= c (probability 1/m each) and X is then hypergeometric
//!   (p - 1 draws from the other m - 1 members, s of them non-relevant):
//!   O(c s) terms.
//! * `num_ret`, `num_rel`: do not depend on the order.
//!
//! How `eval/score.rs` builds the groups (documented for users in `_evaluate.py`):
//! groups are runs of equal scores of the final ranking; with `judged_only`
//! the unjudged documents are dropped first and groups are formed among the
//! kept ones.  With `max_docs` (trec_eval `-M`: the cut is made after
//! ordering) a group that straddles the cut is shuffled as a whole and then
//! cut, so *which* of its members make it in is random too: `TieGroups.labels`
//! holds all of its members, `Query.ranked` only the scored positions.  With
//! `judged_only` as well, unjudged members of the straddling group take slots
//! and are then dropped, so the number of scored documents is random
//! (hypergeometric); `eval/score.rs` averages over it (the `mixture` of
//! `score_rows`).
//!
//! Families added later have no expected form until one is written here:
//! [`supported`] says which, and `eval::evaluate` rejects the others up front.

use super::family::Family;
use super::ndcg::{gain, ideal_dcg, Gain};
use super::query::{discount, is_rel, Query};

/// Whether `family` has an expected form under `ties="expected"`.
pub fn supported(family: Family) -> bool {
    matches!(
        family,
        Family::Precision
            | Family::Recall
            | Family::F1
            | Family::Hits
            | Family::HitRate
            | Family::Mrr
            | Family::Map
            | Family::Ndcg
            | Family::NdcgBurges
            | Family::Dcg
            | Family::RPrecision
            | Family::Bpref
            | Family::NumRet
            | Family::NumRel
            | Family::NumRelRet
    )
}

/// The expected value of `family` on `q` (whose `ties` is not empty).
/// NaN for a family without an expected form (callers check [`supported`]).
pub fn compute(family: Family, q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let n = q.ranked.len();
    let w = k.map_or(n, |k| k.min(n));
    #[allow(unreachable_patterns)]
    match family {
        Family::Precision => match k {
            Some(k) => rel_in(q, w, level) / k as f64,
            None if n == 0 => 0.0,
            None => rel_in(q, n, level) / n as f64,
        },
        Family::Recall => per_rel(q, level, |r| rel_in(q, w, level) / r),
        Family::F1 => {
            let d = k.unwrap_or(n) as f64;
            per_rel(q, level, |r| 2.0 * rel_in(q, w, level) / (d + r))
        }
        Family::Hits | Family::NumRelRet => rel_in(q, w, level),
        Family::HitRate => hit_rate(q, w, level),
        Family::Mrr => mrr(q, w, level),
        Family::Map => per_rel(q, level, |r| ap_sum(q, w, level) / r),
        Family::Ndcg => ndcg(q, k, w, Gain::Label),
        Family::NdcgBurges => ndcg(q, k, w, Gain::Exponential),
        Family::Dcg => dcg(q, w, Gain::Label),
        Family::RPrecision => per_rel(q, level, |r| rel_in(q, (r as usize).min(n), level) / r),
        Family::Bpref => bpref(q, level),
        Family::NumRet => w as f64,
        Family::NumRel => q.num_rel(level) as f64,
        _ => f64::NAN,
    }
}

/// `f(R)` with R the number of relevant documents, 0 when R = 0.
fn per_rel(q: &Query<'_>, level: f64, f: impl FnOnce(f64) -> f64) -> f64 {
    match q.num_rel(level) {
        0 => 0.0,
        r => f(r as f64),
    }
}

/// One tie group as seen through a window of `w` positions.
struct Group<'a> {
    /// 0-based position of its first member.
    start: usize,
    /// Labels of all its members.
    labels: &'a [f64],
    /// How many of its positions fall inside the window (`<= labels.len()`).
    inside: usize,
}

impl Group<'_> {
    fn len(&self) -> usize {
        self.labels.len()
    }

    fn whole(&self) -> bool {
        self.inside == self.labels.len()
    }

    fn count(&self, pred: impl Fn(f64) -> bool) -> usize {
        self.labels.iter().filter(|&&l| pred(l)).count()
    }
}

/// The groups that reach into the first `w` positions, in rank order.
fn groups<'a>(q: &Query<'a>, w: usize) -> impl Iterator<Item = Group<'a>> + 'a {
    let t = q.ties;
    t.bounds
        .windows(2)
        .take_while(move |b| b[0] < w)
        .map(move |b| Group {
            start: b[0],
            labels: &t.labels[b[0]..b[1]],
            inside: (b[1] - b[0]).min(w - b[0]),
        })
}

/// E[number of relevant documents among the first `w` positions].
fn rel_in(q: &Query<'_>, w: usize, level: f64) -> f64 {
    groups(q, w)
        .map(|g| {
            let r = g.count(|l| is_rel(l, level));
            g.inside as f64 * r as f64 / g.len() as f64
        })
        .sum()
}

/// P(none of `c` documents drawn from `m`, `r` of them relevant, is relevant)
/// = C(m - r, c) / C(m, c).
fn none_drawn(m: usize, r: usize, c: usize) -> f64 {
    (0..c)
        .map(|i| (m - r).saturating_sub(i) as f64 / (m - i) as f64)
        .product()
}

fn hit_rate(q: &Query<'_>, w: usize, level: f64) -> f64 {
    for g in groups(q, w) {
        let r = g.count(|l| is_rel(l, level));
        if r > 0 {
            return 1.0 - none_drawn(g.len(), r, g.inside);
        }
    }
    0.0
}

fn mrr(q: &Query<'_>, w: usize, level: f64) -> f64 {
    for g in groups(q, w) {
        let (m, r) = (g.len(), g.count(|l| is_rel(l, level)));
        if r == 0 {
            continue;
        }
        // surv = P(T > t): the first t members hold no relevant document.
        let mut surv = 1.0;
        let mut sum = 0.0;
        for t in 1..=g.inside {
            let next = surv * (m - r).saturating_sub(t - 1) as f64 / (m - t + 1) as f64;
            sum += (surv - next) / (g.start + t) as f64;
            surv = next;
        }
        return sum;
    }
    0.0
}

fn dcg(q: &Query<'_>, w: usize, g: Gain) -> f64 {
    groups(q, w)
        .map(|grp| {
            let total: f64 = grp.labels.iter().map(|&l| gain(l, g)).sum();
            if total == 0.0 {
                return 0.0;
            }
            let discounts: f64 = (grp.start..grp.start + grp.inside)
                .map(|i| 1.0 / discount(i))
                .sum();
            total / grp.len() as f64 * discounts
        })
        .sum()
}

fn ndcg(q: &Query<'_>, k: Option<usize>, w: usize, g: Gain) -> f64 {
    let ideal = ideal_dcg(q, k, g);
    if ideal.is_infinite() {
        // As `ndcg::ndcg`: a finite expected DCG over an infinite ideal is 0
        // by the float rules but an overflow, kept for the finiteness check.
        return ideal;
    }
    if ideal > 0.0 {
        dcg(q, w, g) / ideal
    } else {
        0.0
    }
}

/// E[sum over positions i <= w holding a relevant document of
/// (relevant documents up to i) / i].
fn ap_sum(q: &Query<'_>, w: usize, level: f64) -> f64 {
    let mut before = 0usize;
    let mut sum = 0.0;
    for g in groups(q, w) {
        let (m, r) = (g.len(), g.count(|l| is_rel(l, level)));
        if r > 0 {
            let p = r as f64 / m as f64;
            // Given a relevant document at the group's j-th position, each of
            // the j members above it is relevant with probability (r-1)/(m-1).
            let other = if m > 1 {
                (r - 1) as f64 / (m - 1) as f64
            } else {
                0.0
            };
            for j in 0..g.inside {
                let found = before as f64 + 1.0 + j as f64 * other;
                sum += p * found / (g.start + j + 1) as f64;
            }
        }
        before += r;
    }
    sum
}

/// Hypergeometric distribution: `draws` items drawn without replacement from
/// `pop`, `succ` of them successes.  Returns the smallest possible number of
/// successes `lo` and P(X = lo), P(X = lo + 1), ..., P(X = min(draws, succ)).
///
/// Computed from the mode outwards with the ratio of consecutive terms (every
/// weight <= 1, so nothing overflows), then normalised.
pub fn hypergeometric(pop: usize, succ: usize, draws: usize) -> (usize, Vec<f64>) {
    debug_assert!(succ <= pop && draws <= pop);
    let lo = (draws + succ).saturating_sub(pop);
    let hi = draws.min(succ);
    let mode = ((draws + 1) * (succ + 1) / (pop + 2)).clamp(lo, hi);
    let mut w = vec![0.0; hi - lo + 1];
    w[mode - lo] = 1.0;
    // ratio P(x + 1) / P(x)
    let ratio = |x: usize| {
        ((succ - x) * (draws - x)) as f64 / ((x + 1) * (pop - succ + x + 1 - draws)) as f64
    };
    for x in mode..hi {
        w[x + 1 - lo] = w[x - lo] * ratio(x);
    }
    for x in (lo..mode).rev() {
        w[x - lo] = w[x + 1 - lo] / ratio(x);
    }
    let total: f64 = w.iter().sum();
    w.iter_mut().for_each(|p| *p /= total);
    (lo, w)
}

fn bpref(q: &Query<'_>, level: f64) -> f64 {
    let r_total = q.num_rel(level);
    if r_total == 0 {
        return 0.0;
    }
    let n_total = q.judged.iter().filter(|&&l| l >= 0.0 && l < level).count();
    let denom = n_total.min(r_total) as f64;
    // What a relevant document with n judged non-relevant ones above it adds.
    let f = |n: usize| {
        if n == 0 {
            1.0
        } else {
            1.0 - n.min(r_total) as f64 / denom
        }
    };
    let mut above = 0usize;
    let mut sum = 0.0;
    for g in groups(q, q.ranked.len()) {
        let r = g.count(|l| is_rel(l, level));
        let s = g.count(|l| l >= 0.0 && !is_rel(l, level));
        if r > 0 {
            let per_doc = if g.whole() {
                (0..=s).map(|x| f(above + x)).sum::<f64>() / (s + 1) as f64
            } else {
                let m = g.len();
                let mut e = 0.0;
                for p in 1..=g.inside {
                    let (lo, probs) = hypergeometric(m - 1, s, p - 1);
                    for (i, pr) in probs.iter().enumerate() {
                        e += pr * f(above + lo + i);
                    }
                }
                e / m as f64
            };
            sum += r as f64 * per_doc;
        }
        above += s;
    }
    sum / r_total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::query::TieGroups;
    use crate::core::metrics::testutil::*;
    use crate::core::metrics::MetricSpec;
    use proptest::prelude::*;

    #[test]
    fn an_infinite_ideal_is_kept() {
        // the ideal DCG@2 passes the largest float, the expected DCG does not
        let q = query(&[1.0, 1.7e308], &[1.7e308, 1.7e308, 1.0]);
        assert!(ndcg(&q.view(), Some(2), 2, Gain::Label).is_infinite());
    }

    /// All orderings of `items` (Heap's algorithm is not needed at this size).
    fn permutations(items: &[f64]) -> Vec<Vec<f64>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut out = Vec::new();
        for i in 0..items.len() {
            let mut rest = items.to_vec();
            let x = rest.remove(i);
            for mut p in permutations(&rest) {
                p.insert(0, x);
                out.push(p);
            }
        }
        out
    }

    /// Every ordering of the groups' members (one group after another), each
    /// cut to the first `n` positions: the definition, by enumeration.
    fn orderings(labels: &[f64], bounds: &[usize], n: usize) -> Vec<Vec<f64>> {
        let mut all = vec![Vec::new()];
        for b in bounds.windows(2) {
            let perms = permutations(&labels[b[0]..b[1]]);
            all = all
                .iter()
                .flat_map(|prefix| {
                    perms.iter().map(move |p| {
                        let mut v = prefix.clone();
                        v.extend_from_slice(p);
                        v
                    })
                })
                .collect();
        }
        all.into_iter()
            .map(|mut v| {
                v.truncate(n);
                v
            })
            .collect()
    }

    const NAMES: [&str; 15] = [
        "precision",
        "recall",
        "f1",
        "hits",
        "hit_rate",
        "mrr",
        "map",
        "ndcg",
        "ndcg_burges",
        "dcg",
        "r_precision",
        "bpref",
        "num_ret",
        "num_rel",
        "num_rel_ret",
    ];

    /// The closed form and the brute-force average of every family (with
    /// and without cutoffs) agree on one case.
    fn check(labels: &[f64], bounds: &[usize], n: usize, judged: &[f64], level: f64) {
        let owned = query(&labels[..n], judged);
        let mut q = owned.view();
        q.ties = TieGroups { labels, bounds };
        let all = orderings(labels, bounds, n);
        for name in NAMES {
            let family = Family::from_name(name).unwrap();
            assert!(supported(family));
            let mut cutoffs = vec![None];
            if family.takes_cutoff() {
                cutoffs.extend((1..=labels.len() + 1).map(Some));
            }
            for k in cutoffs {
                let spec = MetricSpec::new(name, k, None, &[]).unwrap();
                let got = spec.compute(&q, level);
                let sum: f64 = all
                    .iter()
                    .map(|ranked| {
                        let o = query(ranked, judged);
                        spec.compute(&o.view(), level)
                    })
                    .sum();
                let want = sum / all.len() as f64;
                // Relative above 1: the brute force sums up to thousands of
                // orderings, so its rounding grows with the value (DCG of 3.84
                // came out 1.04e-12 away in one proptest case).
                assert!(
                    (got - want).abs() < 1e-12 * want.abs().max(1.0),
                    "{name}@{k:?}: closed form {got} != brute force {want} \
                     (labels {labels:?}, bounds {bounds:?}, n {n}, judged {judged:?})"
                );
            }
        }
    }

    #[test]
    fn two_tied_one_relevant() {
        // Ranks 1-2 tied, one relevant: RR = (1 + 1/2) / 2, P@1 = 1/2.
        let labels = [1.0, 0.0];
        let owned = query(&labels, &labels);
        let mut q = owned.view();
        q.ties = TieGroups {
            labels: &labels,
            bounds: &[0, 2],
        };
        let get = |name: &str, k| {
            MetricSpec::new(name, k, None, &[])
                .unwrap()
                .compute(&q, 1.0)
        };
        assert!(close(get("mrr", None), 0.75));
        assert!(close(get("precision", Some(1)), 0.5));
        assert!(close(get("hit_rate", Some(1)), 0.5));
        assert!(close(get("map", None), 0.75));
        // DCG: mean gain 1/2 over discounts 1 and 1/log2(3).
        assert!(close(get("dcg", None), 0.5 * (1.0 + 1.0 / 3f64.log2())));
        assert!(close(get("bpref", None), 0.5));
        check(&labels, &[0, 2], 2, &labels, 1.0);
    }

    #[test]
    fn straddling_group() {
        // A nonrel doc, then a group of 3 (one relevant, one unjudged) cut after
        // its first member (max_docs = 2).
        let nan = f64::NAN;
        let labels = [0.0, 1.0, nan, 0.0];
        let judged = [0.0, 1.0, 0.0, 2.0];
        check(&labels, &[0, 1, 4], 2, &judged, 1.0);
        check(&labels, &[0, 1, 4], 3, &judged, 1.0);
        check(&labels, &[0, 1, 4], 4, &judged, 2.0);
    }

    #[test]
    fn hypergeometric_sums_to_one_and_matches_binomials() {
        let (lo, p) = hypergeometric(10, 4, 5);
        assert_eq!(lo, 0);
        // P(X = 2) = C(4,2) C(6,3) / C(10,5) = 6 * 20 / 252
        assert!(close(p[2], 120.0 / 252.0));
        assert!(close(p.iter().sum::<f64>(), 1.0));
        let (lo, p) = hypergeometric(5, 4, 3);
        assert_eq!((lo, p.len()), (2, 2));
        assert!(close(p[0], 6.0 / 10.0));
        let (lo, p) = hypergeometric(3000, 1500, 1000);
        assert!(lo == 0 && close(p.iter().sum::<f64>(), 1.0));
        assert!(p.iter().all(|x| x.is_finite()));
        assert_eq!(hypergeometric(0, 0, 0), (0, vec![1.0]));
    }

    #[test]
    fn empty_ranking() {
        let q = query(&[], &[1.0]);
        for name in NAMES {
            let f = Family::from_name(name).unwrap();
            let want = if name == "num_rel" { 1.0 } else { 0.0 };
            assert_eq!(compute(f, &q.view(), None, 1.0), want, "{name}");
        }
    }

    fn label() -> impl Strategy<Value = f64> {
        prop_oneof![
            3 => Just(0.0),
            3 => Just(1.0),
            2 => Just(2.0),
            1 => Just(f64::NAN),
            1 => Just(-1.0),
            1 => Just(0.5),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(150))]
        #[test]
        fn closed_forms_match_enumeration(
            sizes in prop::collection::vec(1usize..=4, 1..=3),
            pool in prop::collection::vec(label(), 12),
            extra in prop::collection::vec(label(), 0..4),
            cut in 0usize..12,
            level in prop_oneof![Just(1.0), Just(2.0), Just(0.5)],
        ) {
            let total: usize = sizes.iter().sum();
            let labels = &pool[..total];
            let mut bounds = vec![0];
            for s in &sizes {
                bounds.push(bounds.last().unwrap() + s);
            }
            // Scored positions: the last group may be cut (max_docs).
            let last_start = bounds[bounds.len() - 2];
            let n = last_start + 1 + cut % (total - last_start);
            // Judged labels: the ranked ones that are in the qrels, plus some
            // unretrieved ones.
            let mut judged: Vec<f64> = labels.iter().copied().filter(|l| !l.is_nan()).collect();
            judged.extend(extra.iter().copied().filter(|l| !l.is_nan()));
            check(labels, &bounds, n, &judged, level);
        }
    }
}
