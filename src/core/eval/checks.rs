//! What is refused before any work, and the one check on the results.
//!
//! Before: an empty metric list, a bad option, a metric without a form for the
//! chosen ties, a diversity metric without subtopic judgments.  Checking up
//! front means a call fails before spending any time, and never with some
//! queries scored.  After: a value past the largest float is an error naming
//! the query and the metric, never an infinity or a NaN in the results.

use crate::core::error::{show, Error, Result};
use crate::core::metrics::{expected, Family, MetricSpec};

#[cfg(doc)]
use super::{evaluate, evaluate_pairs};
use super::{Options, Side, Ties};

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
pub(super) fn check_options(metrics: &[MetricSpec], opts: &Options) -> Result<()> {
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

/// `ties='best'` / `'worst'` order a tie by label, which grouped qrels (a
/// group's label goes to its first member ranked) leave undefined: refused.
pub(super) fn check_grouped_ties(qrels: &Side<'_>, opts: &Options) -> Result<()> {
    if !qrels.extra.is_empty() && matches!(opts.ties, Ties::Best | Ties::Worst) {
        return Err(grouped_ties_error());
    }
    Ok(())
}

/// The error of [`check_grouped_ties`].
pub(super) fn grouped_ties_error() -> Error {
    Error::InvalidInput(
        "ties='best' / 'worst' are not defined with grouped qrels (which member \
         takes the group's label depends on the order)"
            .into(),
    )
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
    check_values(out, metrics, opts.miss_nan, || {
        format!("query {:?}", show(qrels.queries.get(qi)))
    })
}

/// Every value of one row is finite, as [`check_finite`] asks, for the paths
/// without query ids (arrays, the Scorer): `row` names the row in the error.
/// A NaN `first_rel_rank` is a miss with `miss_nan`.
pub fn check_values(
    out: &[f64],
    metrics: &[MetricSpec],
    miss_nan: bool,
    row: impl FnOnce() -> String,
) -> Result<()> {
    let miss = |m: &MetricSpec| miss_nan && m.family == Family::FirstRelRank;
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
                "{}, metric {name}: {OVERFLOW}",
                row()
            )))
        }
    }
}

/// Why a value is not finite (the message of [`check_finite`]).
pub const OVERFLOW: &str = "the value is past the largest float (1.8e308): a label too large for \
                            its gain (2^label overflows from 1024 on) or a sum of gains past it";

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

/// `NdcgBurges` -> `ndcg_burges`: a family's canonical name from its variant.
pub(super) fn snake_case(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
