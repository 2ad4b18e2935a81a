//! Scoring one matched row ([`score_row`]), numbers only (no GIL), by the
//! cheapest kernel that gives the same values:
//! * a binary row (a list of relevant ids read as its hits) by
//!   `core::rows::score_hits`, when every metric has a fused kernel;
//! * a row of groups of one of label 1 by `core::rows::score_binary`;
//! * any other row with the default options by `core::rows::score_sample`;
//! * with `judged_only`, `max_docs` or other ties, by `core::eval::score_rows`
//!   (what `evaluate` runs), on the scores and input positions kept for it.
//!
//! The options fixed when the scorer is built are a [`Setup`]; the buffers
//! of a thread's scoring a [`RowScratch`].

use super::matched::{Matched, NONE};
use crate::core::error::Error;
use crate::core::eval;
use crate::core::metrics::MetricSpec;
use crate::core::rows::{self, score_sample, Sample, Scratch, NO_GROUP};

/// Per-thread buffers for scoring matched rows.
#[derive(Default)]
pub(super) struct RowScratch {
    pub(super) rows: Scratch,
    /// Per rank, the group retrieved there (`core::rows`).
    pub(super) ranked: Vec<u32>,
    /// `eval::score_rows`: the label of each ground-truth entry.
    pub(super) jlabels: Vec<f64>,
    pub(super) rank: eval::RankScratch,
}

/// Options fixed when the scorer is built.
pub(super) struct Setup {
    pub(super) specs: Vec<MetricSpec>,
    pub(super) level: f64,
    pub(super) miss_nan: bool,
    pub(super) first: bool,
    pub(super) empty_nan: bool,
    /// `judged_only`, `max_docs`, `ties` (and the level and `miss_nan` again)
    /// as `evaluate` reads them.
    pub(super) opts: eval::Options,
    /// Some option above differs from the default: rows go through
    /// `eval::score_rows` (what `evaluate` runs), not `core::rows`.
    pub(super) general: bool,
    /// Every metric has a fused kernel (`rows::Fused`): a binary row is
    /// scored by `rows::score_binary`.  Never with an automatic `gmax` (err
    /// is not fused): the specs a row is scored with are `specs`.
    pub(super) fused: Option<rows::Fused>,
}

/// Score matched row `r` of `m` into `out`; `base`: the batch row of `m`'s
/// first row (for messages).  A value that is not finite (a gain or a sum
/// past the largest float: the labels were checked finite) is the error
/// `evaluate` gives (`eval::check_values`), checked once over the row's values
/// rather than in each kernel.
#[allow(clippy::too_many_arguments)]
pub(super) fn score_row(
    m: &Matched,
    r: usize,
    base: usize,
    single: bool,
    setup: &Setup,
    specs: &[MetricSpec],
    s: &mut RowScratch,
    out: &mut [f64],
) -> Result<(), Error> {
    let empty = score_kernel(m, r, base, single, setup, specs, s, out)?;
    if empty {
        return Ok(());
    }
    eval::check_values(out, specs, setup.miss_nan, || {
        if single {
            "the sample".to_string()
        } else {
            format!("row {}", base + r)
        }
    })
}

/// [`score_row`] without the check of its values; whether the row was empty
/// and filled with NaN (`empty_nan`).
#[allow(clippy::too_many_arguments)]
fn score_kernel(
    m: &Matched,
    r: usize,
    base: usize,
    single: bool,
    setup: &Setup,
    specs: &[MetricSpec],
    s: &mut RowScratch,
    out: &mut [f64],
) -> Result<bool, Error> {
    let Some(&span) = m.rows.get(r) else {
        return Err(Error::InvalidInput(format!("internal: no row {r}")));
    };
    if span.empty && setup.empty_nan {
        out.fill(f64::NAN);
        return Ok(true);
    }
    if span.binary {
        // Read only when the metrics are fused (`Reader::hits`).
        let Some(fused) = &setup.fused else {
            return Err(Error::InvalidInput(
                "internal: a binary row, no fused kernel".into(),
            ));
        };
        let hits = &m.hits[span.ranked.0..span.ranked.1];
        let (relevant, len) = (span.relevant as usize, span.len as usize);
        rows::score_hits(&mut s.rows, fused, relevant, len, hits, out);
        return Ok(false);
    }
    let labels = &m.labels[span.labels.0..span.labels.1];
    let groups = &m.groups[span.groups.0..span.groups.1];
    let ranked = &m.ranked[span.ranked.0..span.ranked.1];
    let group_of = |j: u32| groups.get(j as usize).copied().unwrap_or(NO_GROUP);
    if setup.general {
        s.jlabels.clear();
        s.jlabels.extend(
            groups
                .iter()
                .map(|&g| labels.get(g as usize).copied().unwrap_or(f64::NAN)),
        );
        let ranking = eval::Ranking {
            scores: &m.scores[span.ranked.0..span.ranked.1],
            pos: &m.pos[span.ranked.0..span.ranked.1],
            find: |i: usize| ranked.get(i).filter(|&&j| j != NONE).map(|&j| j as usize),
        };
        let name = || {
            if single {
                "the sample".to_string()
            } else {
                format!("row {}", base + r)
            }
        };
        eval::score_rows(
            &mut s.rank,
            &s.jlabels,
            groups,
            ranking,
            false,
            &name,
            specs,
            &setup.opts,
            out,
        )?;
        return Ok(false);
    }
    // A list of relevant ids: entry j is group j, of label 1, and `ranked`
    // already holds groups (`NONE` is `NO_GROUP`).
    if let Some(fused) = &setup.fused {
        if groups.len() == labels.len()
            && labels.iter().all(|&l| l == 1.0)
            && groups.iter().enumerate().all(|(j, &g)| g as usize == j)
        {
            rows::score_binary(&mut s.rows, fused, labels.len(), ranked, out);
            return Ok(false);
        }
    }
    s.ranked.clear();
    s.ranked.extend(ranked.iter().map(|&j| group_of(j)));
    let sample = Sample {
        group_labels: labels,
        extra_members: groups.len() - labels.len(),
        ranked: &s.ranked,
    };
    score_sample(
        &mut s.rows,
        &sample,
        specs,
        setup.level,
        setup.miss_nan,
        out,
    );
    Ok(false)
}
