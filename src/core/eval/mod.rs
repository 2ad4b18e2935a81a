//! Scoring a run against qrels.
//!
//! Queries: every qrels query is scored, in the qrels' (byte) order; one missing
//! from the run is scored on an empty ranking (trec_eval `-c`).  Run-only
//! queries are reported, not scored.
//!
//! Per query the relevance vector (label at each rank) is built once and every
//! requested metric and cutoff reads it.  Documents are joined per query: each
//! ranked document is looked up among the query's judged ones
//! ([`crate::core::join`]), always confirmed on the bytes (see
//! [`crate::core::encode`] for why there is no global document vocabulary).
//!
//! The rooms:
//! * this file: [`evaluate`] and [`evaluate_pairs`], the loops over queries;
//! * `side`: [`Side`], one encoded side borrowed, its layout checked;
//! * `options`: [`Options`] and [`Ties`], how a ranking is read;
//! * `checks`: what is refused before any work (metrics, options, subtopic
//!   judgments) and after it (a value past the largest float);
//! * `score`: one query's ranking scored on every metric ([`score_rows`]),
//!   the meeting point of the id path, the `Scorer` and the dense path;
//! * `threads`: which pool, or the calling thread, runs the loops.
//!
//! Rejected alternative: rayon over metrics instead of over queries: queries
//! are independent and many, while the metrics of one query share the
//! relevance vector, which stays in L1.

mod checks;
mod options;
mod score;
mod side;
#[cfg(test)]
mod tests;
mod threads;

pub use checks::{check, check_finite, check_subtopics, check_values, OVERFLOW};
pub use options::{Options, Ties};
pub(crate) use score::score_ranking;
pub use score::{key_score, rank_key, score_rows, RankScratch, Ranking};
pub use side::{Side, SubtopicRows};
pub use threads::{
    for_each_row, thread_count, try_for_each_row, with_threads, with_threads_or_inline,
};

use crate::core::error::{show, Error, Result};
use crate::core::join::Judged;
use crate::core::metrics::{self, MetricSpec};
use crate::core::vocab::{align, NONE};
use checks::{check_grouped_ties, check_options};
use score::subtopics_of;

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

/// Per-thread scratch buffers, reused across queries.
#[derive(Default)]
struct Scratch {
    /// The query's judged documents, for looking up ranked ones.
    judged: Judged,
    rank: RankScratch,
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
    check_grouped_ties(qrels, opts)?;
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
    check_grouped_ties(qrels, opts)?;
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
