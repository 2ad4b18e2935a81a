//! One query's ranking scored on every metric.
//!
//! [`score_rows`] builds the relevance vector (the label at each rank) from a
//! ranking and a lookup of its judged documents, applying `judged_only`,
//! `max_docs`, the tie order and grouped qrels, then hands it to the metrics
//! through [`score_ranking`].  The id path ([`super::evaluate`]), the
//! `ranklens.Scorer` and the dict path all end in `score_rows`, and the dense
//! path in `score_ranking`, so that their values agree by construction.
//!
//! Per-query buffers live in [`RankScratch`], reused across queries: no
//! allocation per query once the buffers have grown.

use crate::core::error::{Error, Result};
use crate::core::metrics::query::{is_rel, PrefixBuf, Query, Subtopics, TieGroups, UNJUDGED};
use crate::core::metrics::{expected, first_rel, Family, MetricSpec};

use super::{Options, Side, Ties};

/// Buffers of [`score_rows`], reused across queries (and across the rows of a
/// `ranklens.Scorer` batch scored with these options).
#[derive(Default, Debug)]
pub struct RankScratch {
    /// Running sums over the ranking, shared by the metrics (plain path).
    prefix: PrefixBuf,
    /// Grouped qrels: the label of each group, and whether it is satisfied.
    group_labels: Vec<f64>,
    /// Grouped qrels: the judged pool the kernels see: each group's label once,
    /// and a judged non-relevant 0 for each of its other members (what they
    /// become when retrieved), so that pool counts (bpref's N, fallout) cover
    /// every judged non-relevant document a ranking can hold.
    pool: Vec<f64>,
    satisfied: Vec<bool>,
    /// `Ties::Expected`, grouped qrels: the tie group each group was satisfied in.
    satisfied_in: Vec<usize>,
    /// `Ties::Expected`: tie group boundaries in `ranked` (see `TieGroups`).
    bounds: Vec<usize>,
    /// Row order of the ranking (only rebuilt for `Ties::Input`, `Best`, `Worst`).
    order: Vec<usize>,
    /// `Ties::Best` / `Worst`: one run of equal scores as (label key, row),
    /// each row's label looked up once before the sort rather than in every
    /// comparison.
    tie_keys: Vec<(u64, usize)>,
    ranked: Vec<f64>,
    ideal: Vec<f64>,
    /// Diversity metrics: the query's subtopic judgments (`Subtopics`).
    sub_ids: Vec<u32>,
    sub_labels: Vec<f64>,
    sub_bounds: Vec<usize>,
    sub_ranked: Vec<u32>,
    /// Each judged row's number in document id order.
    sub_number: Vec<u32>,
    sub_pairs: Vec<(u32, f64)>,
    /// Relevant judged documents of each subtopic at the evaluation's level.
    sub_relevant: Vec<u32>,
}

/// A key whose ascending order is `total_cmp`'s descending order of `x`.
#[inline]
pub fn rank_key(x: f64) -> u64 {
    let b = x.to_bits();
    let ordered = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    !ordered
}

/// The score of a [`rank_key`].
#[inline]
pub fn key_score(k: u64) -> f64 {
    let ordered = !k;
    f64::from_bits(if ordered >> 63 == 1 {
        ordered & !(1 << 63)
    } else {
        !ordered
    })
}

/// One ranking as [`score_rows`] reads it: rows in trec order (score
/// descending, ties by document id descending).
pub struct Ranking<'a, F: Fn(usize) -> Option<usize>> {
    /// The score of each row.
    pub scores: &'a [f64],
    /// The input position of each row (for `Ties::Input`), or empty.
    pub pos: &'a [u32],
    /// The judged entry (index into the labels and groups) of row `i`'s
    /// document, `None` when it is not judged.
    pub find: F,
}

/// Score one query on every metric, into `out`: `jlabels` are the labels of
/// its judged entries and `jgroups` their groups (grouped qrels) or empty;
/// `ranking` its ranked rows; `diverse`: `s` holds the query's subtopic
/// judgments (`subtopics_of`), for the diversity metrics.  `name()` names the
/// query in a message.  The
/// id path of `evaluate` and `ranklens.Scorer` with `judged_only`,
/// `max_docs` or `ties` (`bindings/scorer/`) both end here, so that their
/// values agree by construction.
#[allow(clippy::too_many_arguments)]
pub fn score_rows<F: Fn(usize) -> Option<usize>>(
    s: &mut RankScratch,
    jlabels: &[f64],
    jgroups: &[u32],
    ranking: Ranking<'_, F>,
    diverse: bool,
    name: &dyn Fn() -> String,
    metrics: &[MetricSpec],
    opts: &Options,
    out: &mut [f64],
) -> Result<()> {
    let level = opts.level;
    let grouped = !jgroups.is_empty();
    s.sub_ranked.clear();
    if grouped {
        let n = jgroups.iter().map(|&g| g as usize + 1).max().unwrap_or(0);
        s.group_labels.clear();
        s.group_labels.resize(n, f64::NEG_INFINITY);
        for (&g, &l) in jgroups.iter().zip(jlabels) {
            if let Some(slot) = s.group_labels.get_mut(g as usize) {
                *slot = slot.max(l);
            }
        }
        s.satisfied.clear();
        s.satisfied.resize(n, false);
        if matches!(opts.ties, Ties::Best | Ties::Worst) {
            // A group of one member orders as its label; of more, refused.
            for &g in jgroups {
                if let Some(seen) = s.satisfied.get_mut(g as usize) {
                    if *seen {
                        return Err(super::checks::grouped_ties_error());
                    }
                    *seen = true;
                }
            }
            s.satisfied.fill(false);
        }
        s.satisfied_in.clear();
        s.satisfied_in.resize(n, 0);
    }
    if grouped {
        s.pool.clear();
        s.pool.extend_from_slice(&s.group_labels);
        let extra_members = jgroups.len().saturating_sub(s.group_labels.len());
        s.pool.resize(s.pool.len() + extra_members, 0.0);
    }
    let judged_labels: &[f64] = if grouped { &s.group_labels } else { jlabels };
    s.ideal.clear();
    s.ideal
        .extend(judged_labels.iter().copied().filter(|&l| l > 0.0));
    s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));

    s.ranked.clear();
    s.bounds.clear();
    let expected = opts.ties == Ties::Expected;
    // Scored documents, and (Expected, judged_only, a group straddling
    // the cut with unjudged members) the number kept before that group
    // and the distribution of how many of its judged members make it.
    let mut scored = 0usize;
    let mut mixture: Option<(usize, usize, Vec<f64>)> = None;
    let Ranking { scores, pos, find } = ranking;
    if !scores.is_empty() {
        s.order.clear();
        s.order.extend(0..scores.len());
        let reorder = match opts.ties {
            Ties::Input => pos.len() == scores.len(),
            Ties::Best | Ties::Worst => true,
            Ties::Trec | Ties::Expected => false,
        };
        if reorder {
            // Rows are in trec order; reorder each run of equal scores by
            // input position, or by label (unjudged as 0, a negative label
            // below it, as the dense path orders labels; then trec order,
            // the row index).  `+ 0.0`: a label -0 ties with 0.
            let label =
                |i: usize| find(i).and_then(|j| jlabels.get(j).copied()).unwrap_or(0.0) + 0.0;
            let mut a = 0;
            while a < scores.len() {
                let mut b = a + 1;
                while b < scores.len() && scores[b] == scores[a] {
                    b += 1;
                }
                if b - a > 1 {
                    if opts.ties == Ties::Input {
                        s.order[a..b].sort_unstable_by_key(|&i| pos[i]);
                    } else {
                        // `rank_key` ascends as the label descends (best);
                        // its complement ascends with the label (worst).
                        // The row breaks ties: trec order among equal labels.
                        let flip = if opts.ties == Ties::Worst { !0 } else { 0 };
                        s.tie_keys.clear();
                        s.tie_keys
                            .extend((a..b).map(|i| (rank_key(label(i)) ^ flip, i)));
                        s.tie_keys.sort_unstable();
                        for (slot, &(_, i)) in s.order[a..b].iter_mut().zip(&s.tie_keys) {
                            *slot = i;
                        }
                    }
                }
                a = b;
            }
        }
        let take = opts.max_docs.unwrap_or(usize::MAX).min(scores.len());
        // Expected: the group straddling the cut (rows gs..end) is read
        // whole; rows are in trec order, so equal scores are adjacent.
        let (mut gs, mut end) = (take, take);
        if expected && take > 0 {
            while end < scores.len() && scores[end] == scores[take - 1] {
                end += 1;
            }
            while gs > 0 && scores[gs - 1] == scores[take - 1] {
                gs -= 1;
            }
        }
        let (mut tie, mut kept_before_gs) = (0usize, 0usize);
        let mut last_kept: Option<f64> = None;
        for (p, &i) in s.order[..end].iter().enumerate() {
            if p > 0 && scores[i] != scores[s.order[p - 1]] {
                tie += 1;
            }
            let found = find(i);
            let label = match found {
                Some(j) => {
                    let l = jlabels.get(j).copied().unwrap_or(f64::NAN);
                    if grouped {
                        let g = jgroups.get(j).map_or(0, |&g| g as usize);
                        if s.satisfied.get(g).copied().unwrap_or(true) {
                            if expected && s.satisfied_in.get(g) == Some(&tie) {
                                return Err(Error::InvalidInput(format!(
                                    "{}: ties='expected' is not defined when \
                                     documents of one qrels group have equal scores \
                                     ({}): which one satisfies the group depends on \
                                     their order",
                                    name(),
                                    scores[i]
                                )));
                            }
                            0.0
                        } else {
                            s.satisfied[g] = true;
                            s.satisfied_in[g] = tie;
                            s.group_labels[g]
                        }
                    } else {
                        l
                    }
                }
                None => f64::NAN,
            };
            // judged_only: NaN (not in the qrels) fails the test too.
            if !opts.judged_only || label >= 0.0 {
                if expected && last_kept != Some(scores[i]) {
                    s.bounds.push(s.ranked.len());
                    last_kept = Some(scores[i]);
                }
                s.ranked.push(label);
                if diverse {
                    let number = found.and_then(|j| s.sub_number.get(j).copied());
                    s.sub_ranked.push(number.unwrap_or(UNJUDGED));
                }
                scored += usize::from(p < take);
                kept_before_gs += usize::from(p < gs);
            }
        }
        let members = s.ranked.len() - kept_before_gs;
        if expected && opts.judged_only && end > take && members < end - gs {
            // Of the end - gs members, `members` are judged; take - gs
            // slots: J judged ones are scored, J hypergeometric.
            let (lo, probs) = expected::hypergeometric(end - gs, members, take - gs);
            // Terms below 1e-20 (together < 1e-16 of the weight) change
            // nothing at double precision: skip the tails.
            let first = probs.iter().position(|&p| p >= 1e-20).unwrap_or(0);
            let last = probs.iter().rposition(|&p| p >= 1e-20).unwrap_or(0);
            mixture = Some((kept_before_gs, lo + first, probs[first..=last].to_vec()));
        }
    }
    let judged = if grouped { &s.pool[..] } else { jlabels };
    let q = Query {
        ranked: &s.ranked[..scored],
        judged,
        ideal: &s.ideal,
        ties: Default::default(),
        prefix: None,
        subtopics: if diverse {
            Subtopics {
                ids: &s.sub_ids,
                labels: &s.sub_labels,
                bounds: &s.sub_bounds,
                ranked: s.sub_ranked.get(..scored).unwrap_or(&[]),
                relevant_docs: Some((level, &s.sub_relevant)),
            }
        } else {
            Subtopics::default()
        },
    };
    if !expected || (mixture.is_none() && s.bounds.len() == s.ranked.len()) {
        // No ties (or not asked): the fixed order is the only one.
        score_ranking(Some(&mut s.prefix), q, metrics, level, out);
        if opts.miss_nan {
            for (o, m) in out.iter_mut().zip(metrics) {
                if m.family == Family::FirstRelRank && first_rel::is_miss(&q, m.k, *o) {
                    *o = f64::NAN;
                }
            }
        }
        return Ok(());
    }
    s.bounds.push(s.ranked.len());
    let q = Query {
        ties: TieGroups {
            labels: &s.ranked,
            bounds: &s.bounds,
        },
        ..q
    };
    if mixture.is_none() {
        score_ranking(Some(&mut s.prefix), q, metrics, level, out);
        return Ok(());
    }
    for (o, m) in out.iter_mut().zip(metrics) {
        *o = match &mixture {
            None => m.compute(&q, level),
            Some((base, lo, probs)) => probs
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let ranked = &s.ranked[..base + lo + j];
                    p * m.compute(&Query { ranked, ..q }, level)
                })
                .sum(),
        };
    }
    Ok(())
}

/// The subtopic judgments of qrels query `qi` into `s.sub_*` (see
/// `Subtopics`): judged documents numbered in id order, each with its
/// (subtopic, label) pairs in subtopic order.  Grouped qrels: a group is a
/// subtopic, each member relevant to its own group with the group's label.
pub(super) fn subtopics_of(s: &mut RankScratch, qrels: &Side<'_>, qi: usize, level: f64) {
    let (jdocs, jlabels, jgroups) = qrels.rows(qi);
    let first = qrels.offsets[qi] as usize;
    let mut order: Vec<usize> = (0..jdocs.len()).collect();
    order.sort_by(|&a, &b| {
        qrels
            .docs
            .get(jdocs[a] as usize)
            .cmp(qrels.docs.get(jdocs[b] as usize))
    });
    s.sub_number.clear();
    s.sub_number.resize(jdocs.len(), 0);
    for (p, &r) in order.iter().enumerate() {
        s.sub_number[r] = p as u32;
    }
    s.sub_ids.clear();
    s.sub_labels.clear();
    s.sub_bounds.clear();
    s.sub_ranked.clear();
    s.sub_bounds.push(0);
    for &r in &order {
        s.sub_pairs.clear();
        if let Some(rows) = &qrels.subtopics {
            let (a, b) = (rows.offsets[first + r], rows.offsets[first + r + 1]);
            let (a, b) = (a as usize, b as usize);
            s.sub_pairs.extend(
                rows.ids[a..b]
                    .iter()
                    .copied()
                    .zip(rows.labels[a..b].iter().copied()),
            );
        } else if let (Some(&g), Some(&l)) = (jgroups.get(r), jlabels.get(r)) {
            s.sub_pairs.push((g, l));
        }
        s.sub_pairs.sort_by_key(|&(t, _)| t);
        s.sub_ids.extend(s.sub_pairs.iter().map(|&(t, _)| t));
        s.sub_labels.extend(s.sub_pairs.iter().map(|&(_, l)| l));
        s.sub_bounds.push(s.sub_ids.len());
    }
    let count = s.sub_ids.iter().map(|&t| t as usize + 1).max().unwrap_or(0);
    s.sub_relevant.clear();
    s.sub_relevant.resize(count, 0);
    for (&t, &l) in s.sub_ids.iter().zip(&s.sub_labels) {
        if is_rel(l, level) {
            if let Some(c) = s.sub_relevant.get_mut(t as usize) {
                *c += 1;
            }
        }
    }
}

/// Every metric on one query into `out`: through the shared running sums
/// (built in `prefix`, when given) when the order is fixed (`q.ties` empty),
/// else the expected forms over `q.ties`.  The id path (`score_query`) and
/// the dense path (`dense/`) both end here.
pub(crate) fn score_ranking(
    prefix: Option<&mut PrefixBuf>,
    q: Query<'_>,
    metrics: &[MetricSpec],
    level: f64,
    out: &mut [f64],
) {
    let q = match prefix {
        Some(buf) if q.ties.is_empty() => Query {
            prefix: Some(buf.build(q.ranked, q.judged, q.ideal, level)),
            ..q
        },
        _ => q,
    };
    for (o, m) in out.iter_mut().zip(metrics) {
        *o = m.compute(&q, level);
    }
}
