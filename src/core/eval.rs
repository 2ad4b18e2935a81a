//! Scoring a run against qrels.
//!
//! Queries: every qrels query is scored, in the qrels' (byte) order; one missing
//! from the run is scored on an empty ranking (trec_eval `-c`).  Run-only
//! queries are reported, not scored.
//!
//! Per query the relevance vector (label at each rank) is built once and every
//! requested metric and cutoff reads it.  Documents are joined per query: each
//! ranked document is looked up among the query's judged ones (`join.rs`),
//! always confirmed on the bytes (see `encode.rs` for why there is no global
//! document vocabulary).
//!
//! Why rayon over queries and not over metrics: queries are independent and
//! many; metrics of one query share the relevance vector, which stays in L1.

use crate::core::cancel::Cancel;
use crate::core::encode::Encoded;
use crate::core::error::{show, Error, Result};
use crate::core::join::Judged;
use crate::core::metrics::query::{is_rel, PrefixBuf, Query, Subtopics, TieGroups, UNJUDGED};
use crate::core::metrics::{self, expected, first_rel, Family, MetricSpec};
use crate::core::pool;
use crate::core::vocab::{align, Vocab, NONE};
use rayon::prelude::*;

/// One encoded side (run or qrels), borrowed: see `encode.rs` for the layout.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    pub queries: Vocab<'a>,
    pub docs: Vocab<'a>,
    pub offsets: &'a [i64],
    pub doc_ids: &'a [u32],
    pub values: &'a [f64],
    /// Run: input position of each row; grouped qrels: group index; or empty.
    pub extra: &'a [u32],
    /// Qrels with subtopic judgments (diversity metrics), else `None`.
    pub subtopics: Option<SubtopicRows<'a>>,
}

/// Subtopic judgments of the qrels rows: row `j`'s are `ids[offsets[j]..
/// offsets[j + 1]]` (subtopic indices local to the row's query) with the labels
/// `labels[..]` alike.  The row's own label (what the other metrics see) is
/// the largest of them.
#[derive(Clone, Copy, Debug)]
pub struct SubtopicRows<'a> {
    pub offsets: &'a [i64],
    pub ids: &'a [u32],
    pub labels: &'a [f64],
}

impl<'a> Side<'a> {
    /// Check the layout so that no index can go out of bounds later.
    pub fn new(
        queries: Vocab<'a>,
        docs: Vocab<'a>,
        offsets: &'a [i64],
        doc_ids: &'a [u32],
        values: &'a [f64],
        extra: &'a [u32],
    ) -> Result<Self> {
        let bad = |m: &str| {
            Err(Error::InvalidInput(format!(
                "inconsistent encoded arrays: {m}"
            )))
        };
        if offsets.len() != queries.len() + 1 {
            return bad("offsets must have one entry per query plus one");
        }
        if offsets[0] != 0 || offsets.windows(2).any(|w| w[1] < w[0]) {
            return bad("offsets must start at 0 and not decrease");
        }
        let n = offsets[offsets.len() - 1];
        if n as u64 != doc_ids.len() as u64 || doc_ids.len() != values.len() {
            return bad("offsets must end at the number of rows of doc_ids and values");
        }
        if !extra.is_empty() && extra.len() != values.len() {
            return bad("extra must be empty or have one entry per row");
        }
        if doc_ids.iter().any(|&d| d as usize >= docs.len()) {
            return bad("a doc id is outside the doc vocabulary");
        }
        Ok(Side {
            queries,
            docs,
            offsets,
            doc_ids,
            values,
            extra,
            subtopics: None,
        })
    }

    /// The qrels side with subtopic judgments (checked like the layout).
    pub fn with_subtopics(self, rows: SubtopicRows<'a>) -> Result<Self> {
        let bad = |m: &str| {
            Err(Error::InvalidInput(format!(
                "inconsistent subtopic arrays: {m}"
            )))
        };
        let o = rows.offsets;
        if o.len() != self.values.len() + 1 {
            return bad("offsets must have one entry per qrels row plus one");
        }
        if o.first() != Some(&0) || o.windows(2).any(|w| w[1] < w[0]) {
            return bad("offsets must start at 0 and not decrease");
        }
        let n = o.last().copied().unwrap_or(0);
        if n as u64 != rows.ids.len() as u64 || rows.ids.len() != rows.labels.len() {
            return bad("offsets must end at the number of subtopic judgments");
        }
        if rows.labels.iter().any(|l| !l.is_finite()) {
            return bad("labels must be finite");
        }
        Ok(Side {
            subtopics: Some(rows),
            ..self
        })
    }

    /// The side as the evaluator reads it, borrowed from an owned encoding.
    pub fn of(e: &'a Encoded) -> Result<Self> {
        Side::new(
            e.queries.view(),
            e.docs.view(),
            &e.offsets,
            &e.doc_ids,
            &e.values,
            &e.extra,
        )
    }

    pub fn num_queries(&self) -> usize {
        self.queries.len()
    }

    fn rows(&self, q: usize) -> (&'a [u32], &'a [f64], &'a [u32]) {
        let (a, b) = (self.offsets[q] as usize, self.offsets[q + 1] as usize);
        let extra = if self.extra.is_empty() {
            &[][..]
        } else {
            &self.extra[a..b]
        };
        (&self.doc_ids[a..b], &self.values[a..b], extra)
    }
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Row-major `num_qrels_queries x num_metrics`.
    pub values: Vec<f64>,
    /// For each qrels query, its index in the run, or -1 when missing there.
    pub run_index: Vec<i64>,
    /// Indices of run queries that are not in the qrels (ignored).
    pub run_only: Vec<i64>,
}

/// How documents with equal scores are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    /// trec_eval: document id descending (byte order).
    Trec,
    /// The order the documents were given in (file or mapping order).
    Input,
    /// The expected value over all orderings of each group of equal scores,
    /// uniformly random and independent (see `metrics/expected.rs`).
    Expected,
}

impl Ties {
    pub fn from_name(name: &str) -> Result<Ties> {
        match name {
            "trec" => Ok(Ties::Trec),
            "input" => Ok(Ties::Input),
            "expected" => Ok(Ties::Expected),
            _ => Err(Error::InvalidInput(format!(
                "ties must be 'trec', 'input' or 'expected', got {name:?}"
            ))),
        }
    }
}

/// How a query's ranking is read (trec_eval's `-l`, `-J`, `-M`).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Default relevance level: a label `>= level` is relevant.
    pub level: f64,
    /// Drop retrieved documents that are not judged (not in the qrels, or with a
    /// negative label) before scoring, ranks closing up (trec_eval `-J`).
    pub judged_only: bool,
    /// Score only the first `max_docs` documents of each ranking (trec_eval `-M`).
    pub max_docs: Option<usize>,
    /// Order of documents with equal scores.
    pub ties: Ties,
    /// `first_rel_rank` with no relevant document in the top k is NaN (a
    /// miss, as Axion's `rank_of_first_relevant = None`), not k + 1.
    pub miss_nan: bool,
    /// Checked before each query: set, the call stops with `Error::Interrupted`.
    pub cancel: Cancel,
}

impl Options {
    pub fn new(level: f64) -> Self {
        Options {
            level,
            judged_only: false,
            max_docs: None,
            ties: Ties::Trec,
            miss_nan: false,
            cancel: Cancel::default(),
        }
    }
}

/// Per-thread scratch buffers, reused across queries.
#[derive(Default)]
struct Scratch {
    /// The query's judged documents, for looking up ranked ones.
    judged: Judged,
    rank: RankScratch,
}

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
    /// Row order of the ranking (only rebuilt for `Ties::Input`).
    order: Vec<usize>,
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

/// Score every qrels query on every metric.
///
/// Grouped qrels (RAG ground truth, `extra` holds each row's group): a group is
/// one unit of needed information with one label.  It is satisfied at the rank
/// of its first retrieved member, which carries the group's label; later members
/// of a satisfied group count as judged non-relevant (label 0).  R counts
/// groups, and the ideal ranking holds one member per group.  The judged pool
/// (bpref's N, fallout's denominator) holds each group's label once and a 0 for
/// each of its other members.
///
/// `Ties::Expected` (see `metrics/expected.rs` for the closed forms): the tie
/// groups are the runs of equal scores of the ranking, after `judged_only`
/// has dropped unjudged documents.  A group straddling the `max_docs` cut is
/// shuffled whole and then cut, so which of its members are scored is random
/// too; with `judged_only`, its unjudged members take slots before being
/// dropped, and the number of scored documents J is hypergeometric: the value
/// is the average over J.  Grouped qrels: relabelling depends on the order
/// when two members of one not-yet-satisfied group tie, which is an error;
/// other ties are fine.
pub fn evaluate(
    qrels: &Side<'_>,
    run: &Side<'_>,
    metrics: &[MetricSpec],
    opts: &Options,
) -> Result<Evaluation> {
    let mut values = vec![0.0; qrels.num_queries() * metrics.len()];
    let (run_index, run_only) = evaluate_into(qrels, run, metrics, opts, &mut values)?;
    Ok(Evaluation {
        values,
        run_index,
        run_only,
    })
}

/// [`evaluate`], writing into `values` (row-major `num_qrels_queries x
/// num_metrics`); returns `(run_index, run_only)` as in [`Evaluation`].
pub fn evaluate_into(
    qrels: &Side<'_>,
    run: &Side<'_>,
    metrics: &[MetricSpec],
    opts: &Options,
    values: &mut [f64],
) -> Result<(Vec<i64>, Vec<i64>)> {
    if values.len() != qrels.num_queries() * metrics.len() {
        return Err(Error::InvalidInput(
            "internal: the output holds one value per qrels query and metric".into(),
        ));
    }
    check_options(metrics, opts)?;
    check_subtopics(metrics, qrels)?;
    let qmap = align(qrels.queries, run.queries);
    let mut in_qrels = vec![false; run.num_queries()];
    for &r in &qmap {
        if r != NONE {
            in_qrels[r as usize] = true;
        }
    }
    let run_only = (0..run.num_queries())
        .filter(|&i| !in_qrels[i])
        .map(|i| i as i64)
        .collect();
    let run_index = qmap
        .iter()
        .map(|&r| if r == NONE { -1 } else { r as i64 })
        .collect();

    let metrics = resolve(metrics, qrels);
    let nm = metrics.len();
    let small = is_small(qrels, run);
    try_for_each_row(values, nm, small, 1, Scratch::default, |s, qi, out| {
        opts.cancel.check()?;
        let rq = (qmap[qi] != NONE).then_some(qmap[qi] as usize);
        score_query(s, qrels, run, qi, rq, &metrics, opts, out)?;
        check_finite(qrels, qi, &metrics, opts, out)
    })?;
    Ok((run_index, run_only))
}

/// Rows (qrels and run together) [`evaluate`] and [`evaluate_pairs`] score
/// in order on the calling thread, without rayon (a binding may call them
/// outside the pool: [`with_threads_or_inline`]): a call of a few queries
/// pays more for the pool's hand-over than for its work.
pub const SERIAL_ROWS: usize = crate::core::encode::SERIAL_ROWS;

/// Whether `qrels` and `run` hold at most [`SERIAL_ROWS`] rows together.
pub fn is_small(qrels: &Side<'_>, run: &Side<'_>) -> bool {
    qrels.values.len().saturating_add(run.values.len()) <= SERIAL_ROWS
}

/// The metrics and options are valid for scoring (checked before any work),
/// on a path without subtopic judgments (dense arrays, the Scorer, a streamed
/// run): the diversity metrics are refused.
pub fn check(metrics: &[MetricSpec], opts: &Options) -> Result<()> {
    if let Some(m) = metrics.iter().find(|m| m.family.needs_subtopics()) {
        return Err(Error::InvalidMetric(format!(
            "{} is computed on subtopic judgments, by ranklens.evaluate only",
            snake_case(&format!("{:?}", m.family))
        )));
    }
    check_options(metrics, opts)
}

/// [`check`] without refusing the diversity metrics ([`evaluate`]'s own:
/// it checks the qrels carry subtopic judgments, [`check_subtopics`]).
fn check_options(metrics: &[MetricSpec], opts: &Options) -> Result<()> {
    let level = opts.level;
    if metrics.is_empty() {
        return Err(Error::InvalidMetric("the metric list is empty".into()));
    }
    if opts.max_docs == Some(0) {
        return Err(Error::InvalidInput("max_docs must be at least 1".into()));
    }
    if !level.is_finite() {
        return Err(Error::InvalidInput("relevance_level must be finite".into()));
    }
    if opts.ties == Ties::Expected {
        if opts.miss_nan && metrics.iter().any(|m| m.family == Family::FirstRelRank) {
            // Over the orderings of a tie, some may find a relevant document
            // in the top k and some not: no single rank or miss to report.
            return Err(Error::InvalidInput(
                "miss=None is not defined with ties='expected' (the expected \
                 first_rel_rank mixes hits and misses); use miss='k+1'"
                    .into(),
            ));
        }
        if let Some(m) = metrics.iter().find(|m| !expected::supported(m.family)) {
            return Err(Error::InvalidMetric(format!(
                "ties='expected' is not available for {}",
                snake_case(&format!("{:?}", m.family))
            )));
        }
    }
    Ok(())
}

/// The metrics as scored against `qrels`: err's automatic `gmax` (the largest
/// label of the qrels) filled in.  [`evaluate_pairs`] takes them resolved.
pub fn resolve(metrics: &[MetricSpec], qrels: &Side<'_>) -> Vec<MetricSpec> {
    use crate::core::metrics::err;
    metrics::resolve_gmax(metrics, err::max_label(qrels.values))
}

/// Score only the given `(qrels query, run query)` pairs, in parallel: row `i`
/// of the result (`metrics.len()` values) is pair `i`; a run query of `None`
/// is an empty ranking (missing from the run).  For scoring a run chunk by
/// chunk (`stream.rs`) in time proportional to the chunk, not to the qrels.
/// `metrics` must come from [`resolve`] on the same qrels (which scans every
/// label: done once, not per chunk).
pub fn evaluate_pairs(
    qrels: &Side<'_>,
    run: &Side<'_>,
    metrics: &[MetricSpec],
    opts: &Options,
    pairs: &[(usize, Option<usize>)],
) -> Result<Vec<f64>> {
    check_options(metrics, opts)?;
    check_subtopics(metrics, qrels)?;
    let nm = metrics.len();
    let mut values = vec![0.0; pairs.len() * nm];
    if pairs
        .iter()
        .any(|&(q, r)| q >= qrels.num_queries() || r.is_some_and(|r| r >= run.num_queries()))
    {
        return Err(Error::InvalidInput(
            "internal: a query pair is out of range".into(),
        ));
    }
    let small = is_small(qrels, run);
    try_for_each_row(&mut values, nm, small, 1, Scratch::default, |s, r, out| {
        // `values` holds one row per pair.
        let Some(&(qi, rq)) = pairs.get(r) else {
            return Err(Error::InvalidInput(
                "internal: a row without its query pair".into(),
            ));
        };
        opts.cancel.check()?;
        score_query(s, qrels, run, qi, rq, metrics, opts, out)?;
        check_finite(qrels, qi, metrics, opts, out)
    })?;
    Ok(values)
}

/// Every value of qrels query `qi` is finite: a value past the largest float
/// (a gain `2^label` for a label of 1024 or more, a sum past 1.8e308) is an
/// error naming the query and the metric, never a NaN or an infinity in the
/// results (the reference backend raises the same error).
/// A NaN `first_rel_rank` is a miss with `opts.miss_nan`.
pub fn check_finite(
    qrels: &Side<'_>,
    qi: usize,
    metrics: &[MetricSpec],
    opts: &Options,
    out: &[f64],
) -> Result<()> {
    let miss = |m: &MetricSpec| opts.miss_nan && m.family == Family::FirstRelRank;
    match out
        .iter()
        .zip(metrics)
        .position(|(v, m)| !(v.is_finite() || (v.is_nan() && miss(m))))
    {
        None => Ok(()),
        Some(j) => {
            let m = &metrics[j];
            let mut name = snake_case(&format!("{:?}", m.family));
            if let Some(k) = m.k {
                name.push_str(&format!("@{k}"));
            }
            Err(Error::InvalidInput(format!(
                "query {:?}, metric {name}: {OVERFLOW}",
                show(qrels.queries.get(qi))
            )))
        }
    }
}

/// Why a value is not finite (the message of [`check_finite`]).
pub const OVERFLOW: &str = "the value is past the largest float (1.8e308): a label too large for \
                            its gain (2^label overflows from 1024 on) or a sum of gains past it";

/// Score qrels query `qi` against run query `rq` (`None`: missing from the
/// run, an empty ranking) on every metric, into `out`.
#[allow(clippy::too_many_arguments)]
fn score_query(
    s: &mut Scratch,
    qrels: &Side<'_>,
    run: &Side<'_>,
    qi: usize,
    rq: Option<usize>,
    metrics: &[MetricSpec],
    opts: &Options,
    out: &mut [f64],
) -> Result<()> {
    let (jdocs, jlabels, jgroups) = qrels.rows(qi);
    s.judged.build(qrels.docs, jdocs);
    let (rdocs, scores, pos) = match rq {
        Some(rq) => run.rows(rq),
        None => (&[][..], &[][..], &[][..]),
    };
    let judged = &s.judged;
    let ranking = Ranking {
        scores,
        pos,
        find: |i: usize| judged.find(run.docs.get(rdocs[i] as usize), qrels.docs, jdocs),
    };
    let name = || format!("query {:?}", show(qrels.queries.get(qi)));
    let diverse = metrics.iter().any(|m| m.family.needs_subtopics());
    if diverse {
        subtopics_of(&mut s.rank, qrels, qi, opts.level);
    }
    score_rows(
        &mut s.rank,
        jlabels,
        jgroups,
        ranking,
        diverse,
        &name,
        metrics,
        opts,
        out,
    )
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
/// `max_docs` or `ties` (`bindings/scorer.rs`) both end here, so that their
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
        if opts.ties == Ties::Input && pos.len() == scores.len() {
            // Rows are in trec order; reorder each run of equal scores
            // by input position.
            let mut a = 0;
            while a < scores.len() {
                let mut b = a + 1;
                while b < scores.len() && scores[b] == scores[a] {
                    b += 1;
                }
                if b - a > 1 {
                    s.order[a..b].sort_unstable_by_key(|&i| pos[i]);
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
fn subtopics_of(s: &mut RankScratch, qrels: &Side<'_>, qi: usize, level: f64) {
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

/// Diversity metrics need subtopic judgments: qrels with subtopics, or grouped
/// qrels (a group is a subtopic), or no judged row at all.
pub fn check_subtopics(metrics: &[MetricSpec], qrels: &Side<'_>) -> Result<()> {
    // No judged row at all (`Qrels.from_groups` with no group): nothing is
    // relevant to any subtopic, every value is 0.
    if qrels.subtopics.is_some() || !qrels.extra.is_empty() || qrels.values.is_empty() {
        return Ok(());
    }
    match metrics.iter().find(|m| m.family.needs_subtopics()) {
        None => Ok(()),
        Some(m) => Err(Error::InvalidMetric(format!(
            "{} needs subtopic judgments: qrels from Qrels.from_subtopics, \
             Qrels.from_trec(path, subtopics=True) or Qrels.from_groups (a group \
             is a subtopic)",
            snake_case(&format!("{:?}", m.family))
        ))),
    }
}

/// Every metric on one query into `out`: through the shared running sums
/// (built in `prefix`, when given) when the order is fixed (`q.ties` empty),
/// else the expected forms over `q.ties`.  The id path (`score_query`) and
/// the dense path (`dense.rs`) both end here.
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

/// `NdcgBurges` -> `ndcg_burges`: a family's canonical name from its variant.
fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Run `f` on `threads` threads (`None`: the `RANKLENS_NUM_THREADS`
/// environment variable if set, else the default pool of [`pool`], one thread
/// per core, which a forked child makes again), on a pool kept from call to
/// call ([`pool::sized_pool`]).
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> Result<R> {
    match thread_count(threads)? {
        Some(n) => Ok(pool::sized_pool(n).map_err(Error::InvalidInput)?.install(f)),
        None => pool::install(f).map_err(Error::InvalidInput),
    }
}

/// [`with_threads`], or `f` on the calling thread when `one_task`: work that
/// is one task of the pool's loops, which the pool would run on one of its
/// threads after waking it, while the caller waits.  `threads` is checked
/// either way.  Why: the hand-over cost more than the work of a small call
/// (one row of 100 cells through `evaluate_dense`: median 17 us native, of
/// which the work is 1-2; the pool's thread asleep between calls).  `f` must
/// then not use rayon: its loops run in order when they hold one task
/// ([`try_for_each_row`], `dense::TASK_ROWS`, [`SERIAL_ROWS`]...), else they
/// would start rayon's global pool, which a forked child inherits without
/// its threads ([`pool`]).
pub fn with_threads_or_inline<R: Send>(
    threads: Option<usize>,
    one_task: bool,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    if one_task {
        thread_count(threads)?;
        return Ok(f());
    }
    with_threads(threads, f)
}

/// `f(state, r, out_row)` for each row of `out` (`width` values a row,
/// `state` made by `init` once a task), stopping at an error: in order on
/// the calling thread when `serial` (no rayon, so that a binding may call it
/// through [`with_threads_or_inline`]), else on the pool by tasks of
/// `min_rows` rows at least.  The loops over queries and rows whose small
/// calls run where they are called share it.
pub fn try_for_each_row<S, E, F>(
    out: &mut [f64],
    width: usize,
    serial: bool,
    min_rows: usize,
    init: impl Fn() -> S + Sync + Send,
    f: F,
) -> std::result::Result<(), E>
where
    E: Send,
    F: Fn(&mut S, usize, &mut [f64]) -> std::result::Result<(), E> + Sync + Send,
{
    let width = width.max(1);
    if serial {
        let mut s = init();
        out.chunks_mut(width)
            .enumerate()
            .try_for_each(|(r, o)| f(&mut s, r, o))
    } else {
        out.par_chunks_mut(width)
            .enumerate()
            .with_min_len(min_rows.max(1))
            .try_for_each_init(init, |s, (r, o)| f(s, r, o))
    }
}

/// [`try_for_each_row`] of a loop that cannot fail, in order on the calling
/// thread when `out` holds at most `task_rows` rows (one task).
pub fn for_each_row<S, F>(
    out: &mut [f64],
    width: usize,
    task_rows: usize,
    init: impl Fn() -> S + Sync + Send,
    f: F,
) where
    F: Fn(&mut S, usize, &mut [f64]) + Sync + Send,
{
    let serial = out.len() <= task_rows.saturating_mul(width.max(1));
    let done = try_for_each_row(out, width, serial, 1, init, |s, r, o| {
        f(s, r, o);
        Ok::<(), std::convert::Infallible>(())
    });
    match done {
        Ok(()) => {}
        Err(never) => match never {},
    }
}

/// The number of threads [`with_threads`] runs on: `threads`, else the
/// `RANKLENS_NUM_THREADS` environment variable, else `None` (the default
/// pool); an error for 0 or an unreadable variable.
pub fn thread_count(threads: Option<usize>) -> Result<Option<usize>> {
    let n = match threads {
        Some(n) => Some(n),
        None => match std::env::var("RANKLENS_NUM_THREADS") {
            Ok(v) if !v.trim().is_empty() => Some(v.trim().parse::<usize>().map_err(|_| {
                Error::InvalidInput(format!(
                    "RANKLENS_NUM_THREADS must be a positive integer, got {v:?}"
                ))
            })?),
            _ => None,
        },
    };
    match n {
        Some(0) => Err(Error::InvalidInput("threads must be at least 1".into())),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::encode::{Builder, Encoded, Kind};

    fn side(e: &Encoded) -> Side<'_> {
        Side::of(e).unwrap()
    }

    fn spec(name: &str, k: Option<usize>) -> MetricSpec {
        MetricSpec::new(name, k, None, &[]).unwrap()
    }

    #[test]
    fn rank_key_orders_as_descending_total_cmp_and_round_trips() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            0.25,
            1.0,
            3.0e38,
            f64::INFINITY,
        ];
        for a in xs {
            assert_eq!(key_score(rank_key(a)).to_bits(), a.to_bits());
            for b in xs {
                assert_eq!(rank_key(a).cmp(&rank_key(b)), b.total_cmp(&a), "{a} {b}");
            }
        }
    }

    #[test]
    fn missing_and_run_only_queries() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q1", b"a", 1.0).unwrap();
        qb.push(b"q1", b"b", 0.0).unwrap();
        qb.push(b"q2", b"c", 2.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        rb.push(b"q1", b"b", 2.0).unwrap();
        rb.push(b"q1", b"a", 1.0).unwrap();
        rb.push(b"q1", b"z", 1.0).unwrap();
        rb.push(b"q3", b"a", 1.0).unwrap();
        let r = rb.finish().unwrap();
        let metrics = [
            spec("precision", Some(2)),
            spec("mrr", None),
            spec("num_rel", None),
            spec("num_ret", None),
        ];
        let e = evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).unwrap();
        // q1 ranking: b (2.0), z (1.0, "z" > "a"), a -> relevant at rank 3
        assert_eq!(e.values[..4], [0.0, 1.0 / 3.0, 1.0, 3.0]);
        // q2 missing from run: empty ranking, but num_rel still counts.
        assert_eq!(e.values[4..], [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(e.run_index, vec![0, -1]);
        assert_eq!(e.run_only, vec![1]);
    }

    #[test]
    fn judged_only_and_max_docs() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q", b"a", 1.0).unwrap();
        qb.push(b"q", b"n", -1.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("x", 4.0), ("n", 3.0), ("a", 2.0), ("y", 1.0)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [spec("mrr", None), spec("num_ret", None)];
        let mut opts = Options::new(1.0);
        let plain = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(plain.values, vec![1.0 / 3.0, 4.0]);
        opts.judged_only = true;
        let judged = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(judged.values, vec![1.0, 1.0]);
        opts.judged_only = false;
        opts.max_docs = Some(2);
        let cut = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(cut.values, vec![0.0, 2.0]);
        // miss_nan: a at rank 3 is past first_rel_rank@2's cutoff: NaN, not 3;
        // without a cutoff it is found.  The NaN is not an overflow error.
        let metrics = [
            spec("first_rel_rank", Some(2)),
            spec("first_rel_rank", None),
        ];
        opts.max_docs = None;
        assert_eq!(
            evaluate(&side(&q), &side(&r), &metrics, &opts)
                .unwrap()
                .values,
            vec![3.0, 3.0]
        );
        opts.miss_nan = true;
        let v = evaluate(&side(&q), &side(&r), &metrics, &opts)
            .unwrap()
            .values;
        assert!(v[0].is_nan() && v[1] == 3.0);
        opts.ties = Ties::Expected;
        assert!(check(&metrics, &opts).is_err());
    }

    #[test]
    fn input_ties_keep_the_given_order() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q", b"a", 1.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("x", 2.0), ("a", 1.0), ("z", 1.0)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [spec("mrr", None)];
        let mut opts = Options::new(1.0);
        // trec: z before a (descending id) -> rank 3
        let trec = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(trec.values, vec![1.0 / 3.0]);
        opts.ties = Ties::Input;
        let input = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(input.values, vec![0.5]);
    }

    #[test]
    fn groups_are_satisfied_once() {
        let mut qb = Builder::new(Kind::Qrels, false);
        let qi = qb.query(b"q").unwrap();
        // group 0: {a, b}; group 1: {c}
        qb.grouped_row(qi, b"a", 1.0, 0).unwrap();
        qb.grouped_row(qi, b"b", 1.0, 0).unwrap();
        qb.grouped_row(qi, b"c", 1.0, 1).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("a", 4.0), ("x", 3.0), ("b", 2.0), ("y", 1.0)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [
            spec("recall", Some(4)),
            spec("precision", Some(4)),
            spec("num_rel", None),
            spec("mrr", None),
        ];
        let e = evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).unwrap();
        // one of two groups satisfied; b adds nothing.
        assert_eq!(e.values, vec![0.5, 0.25, 2.0, 1.0]);
    }

    #[test]
    fn empty_metric_list_is_an_error() {
        let q = Builder::new(Kind::Qrels, false).finish().unwrap();
        let r = Builder::new(Kind::Run, false).finish().unwrap();
        assert!(evaluate(&side(&q), &side(&r), &[], &Options::new(1.0)).is_err());
    }

    #[test]
    fn side_rejects_bad_layout() {
        let e = Encoded::default();
        let v = crate::core::vocab::OwnedVocab {
            bytes: vec![],
            offsets: vec![0],
        };
        assert!(Side::new(v.view(), v.view(), &[0, 1], &e.doc_ids, &e.values, &[]).is_err());
        assert!(Side::new(v.view(), v.view(), &[0], &[3], &[1.0], &[]).is_err());
        assert!(Side::new(v.view(), v.view(), &[0], &[], &[], &[1]).is_err());
    }

    #[test]
    fn expected_ties() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q", b"a", 1.0).unwrap();
        qb.push(b"q", b"u", -1.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("a", 1.0), ("b", 1.0), ("u", 1.0), ("x", 0.5)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [
            spec("mrr", None),
            spec("precision", Some(1)),
            spec("num_ret", None),
        ];
        let mut opts = Options::new(1.0);
        opts.ties = Ties::Expected;
        // a, b, u tied: first relevant at 1, 2 or 3 -> (1 + 1/2 + 1/3) / 3.
        let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert!((e.values[0] - (1.0 + 0.5 + 1.0 / 3.0) / 3.0).abs() < 1e-12);
        assert!((e.values[1] - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(e.values[2], 4.0);
        // judged_only: b and u dropped; max_docs = 2 cuts the group {a, b, u}:
        // two random slots of three, "a" makes it with probability 2/3, ranked 1.
        opts.judged_only = true;
        opts.max_docs = Some(2);
        let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert!((e.values[0] - 2.0 / 3.0).abs() < 1e-12);
        assert!((e.values[1] - 2.0 / 3.0).abs() < 1e-12);
        assert!((e.values[2] - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn expected_ties_and_grouped_qrels() {
        let mut qb = Builder::new(Kind::Qrels, false);
        let qi = qb.query(b"q").unwrap();
        qb.grouped_row(qi, b"a", 1.0, 0).unwrap();
        qb.grouped_row(qi, b"b", 1.0, 0).unwrap();
        qb.grouped_row(qi, b"c", 1.0, 1).unwrap();
        let q = qb.finish().unwrap();
        let mut opts = Options::new(1.0);
        opts.ties = Ties::Expected;
        let metrics = [spec("mrr", None)];
        // a and b (one group) tie: an error.
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("a", 1.0), ("b", 1.0), ("c", 0.5)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let err = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap_err();
        assert!(err.to_string().contains("qrels group"), "{err}");
        // x and a tie, then b and c: fine, group 0 is satisfied (by a) before
        // b ties with c.  mrr: a at rank 1 or 2 -> 3/4; recall@3: group 0
        // always, group 1 when c is third -> (1 + 1/2) / 2.
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("x", 2.0), ("a", 2.0), ("b", 1.0), ("c", 1.0)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [spec("mrr", None), spec("recall", Some(3))];
        let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert!((e.values[0] - 0.75).abs() < 1e-12);
        assert!((e.values[1] - 0.75).abs() < 1e-12);
    }

    #[test]
    fn expected_ties_reject_families_without_a_form() {
        assert_eq!(snake_case("NdcgBurges"), "ndcg_burges");
        assert_eq!(snake_case("RPrecision"), "r_precision");
        assert!(Ties::from_name("expected").is_ok());
        assert!(Ties::from_name("random").is_err());
    }

    #[test]
    fn thread_counts() {
        assert_eq!(
            with_threads(Some(2), rayon::current_num_threads).unwrap(),
            2
        );
        assert!(with_threads(Some(0), || 0).is_err());
    }

    #[test]
    fn a_set_flag_stops_the_evaluation() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q1", b"a", 1.0).unwrap();
        let q = qb.finish().unwrap();
        let mut opts = Options::new(1.0);
        opts.cancel = Cancel::new();
        let metrics = [spec("map", None)];
        assert!(evaluate(&side(&q), &side(&q), &metrics, &opts).is_ok());
        opts.cancel.cancel();
        assert_eq!(
            evaluate(&side(&q), &side(&q), &metrics, &opts).err(),
            Some(Error::Interrupted)
        );
    }

    #[test]
    fn rows_of_one_task_run_in_order_on_the_calling_thread() {
        // Each row's value: its index, the thread's pool index (none outside
        // a pool) and how many rows its state saw before it.
        let run = |rows: usize| {
            let mut out = vec![0.0; rows * 3];
            for_each_row(
                &mut out,
                3,
                4,
                || 0usize,
                |seen, r, o| {
                    o[0] = r as f64;
                    o[1] = rayon::current_thread_index().map_or(-1.0, |i| i as f64);
                    o[2] = *seen as f64;
                    *seen += 1;
                },
            );
            out
        };
        let small = run(4);
        let rows: Vec<&[f64]> = small.chunks(3).collect();
        assert_eq!(
            rows,
            [
                [0.0, -1.0, 0.0],
                [1.0, -1.0, 1.0],
                [2.0, -1.0, 2.0],
                [3.0, -1.0, 3.0]
            ]
        );
        let big = with_threads(Some(2), || run(1000)).unwrap();
        assert!(big.chunks(3).enumerate().all(|(r, o)| o[0] == r as f64));
        assert!(big.chunks(3).all(|o| o[1] >= 0.0));
    }

    #[test]
    fn a_value_past_the_largest_float_is_an_error() {
        // ndcg_burges of one document labelled `label`, ranked first.
        let score = |label: f64| {
            let mut qb = Builder::new(Kind::Qrels, false);
            qb.push(b"q1", b"a", label).unwrap();
            let q = qb.finish().unwrap();
            let mut rb = Builder::new(Kind::Run, false);
            rb.push(b"q1", b"a", 1.0).unwrap();
            let r = rb.finish().unwrap();
            let metrics = [spec("ndcg_burges", None)];
            evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).map(|e| e.values)
        };
        // 2^1024 overflows: the gain of a label of 1024.
        let e = score(1024.0);
        assert!(
            matches!(&e, Err(Error::InvalidInput(m)) if m.starts_with("query \"q1\", metric ndcg_burges: the value is past")),
            "{e:?}"
        );
        // 1023 is fine: 2^1023 - 1 is finite, and the ranking is ideal.
        assert_eq!(score(1023.0), Ok(vec![1.0]));
    }
}
