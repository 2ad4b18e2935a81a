//! What reading a batch's rows leaves ([`Matched`]): only numbers, no Python
//! object, so that the scoring runs without the GIL, on any thread.
//!
//! Per row a [`RowSpan`] into flat vectors shared by all rows (one
//! allocation each for a whole chunk, reused from call to call): the labels
//! of its groups, the group of each ground-truth entry, and per kept rank the
//! ground-truth entry retrieved there ([`NONE`] for none).  A list of
//! relevant ids (the common RAG row) is kept as its hits only: the kept
//! ranks of the ids found, no label, group or per-rank vector
//! (`core::rows::score_hits` scores them).
//!
//! Rejected alternative: a vector per row: an allocation per row, where a
//! batch is mostly growing vectors.

use crate::core::rows::NO_GROUP;
/// No ground-truth entry (a retrieved id that is not in the ground truth).
pub(super) const NONE: u32 = u32::MAX;
// `score_row` hands `Matched::ranked` of a binary row to `core::rows` as is.
const _: () = assert!(NONE == NO_GROUP);

/// Rows read and matched: only numbers, no Python object.
#[derive(Default)]
pub(super) struct Matched {
    /// The label of each group, all rows.
    pub(super) labels: Vec<f64>,
    /// The group (within its row) of each ground-truth entry, all rows.
    pub(super) groups: Vec<u32>,
    /// Per kept retrieved id, in rank order: its ground-truth entry (within
    /// its row) or `NONE`.
    pub(super) ranked: Vec<u32>,
    /// With `Setup::general` only, per kept retrieved id: its score (a list
    /// is ranked as given: strictly decreasing scores) and input position.
    pub(super) scores: Vec<f64>,
    pub(super) pos: Vec<u32>,
    /// Per binary row (`RowSpan::binary`), the kept ranks (0-based) of its
    /// hits, increasing.
    pub(super) hits: Vec<u32>,
    /// Some binary row has a relevant id (a label of 1 not in `labels`).
    pub(super) ones: bool,
    pub(super) rows: Vec<RowSpan>,
}

#[derive(Clone, Copy, Default)]
pub(super) struct RowSpan {
    pub(super) labels: (usize, usize),
    pub(super) groups: (usize, usize),
    pub(super) ranked: (usize, usize),
    /// No ground truth or nothing retrieved.
    pub(super) empty: bool,
    /// A list of relevant ids read for `rows::score_hits` (`Reader::hits`):
    /// no labels or groups, `ranked` spans `Matched::hits`.
    pub(super) binary: bool,
    /// A binary row: its relevant ids and its kept retrieved ids.
    pub(super) relevant: u32,
    pub(super) len: u32,
}

impl Matched {
    pub(super) fn clear(&mut self) {
        self.labels.clear();
        self.groups.clear();
        self.ranked.clear();
        self.scores.clear();
        self.pos.clear();
        self.hits.clear();
        self.ones = false;
        self.rows.clear();
    }

    /// The rows and the entries they hold (ground-truth entries, kept ranks,
    /// hits): the measure of their scoring's work, per metric.
    #[inline]
    pub(super) fn entries(&self) -> usize {
        self.rows.len() + self.groups.len() + self.ranked.len() + self.hits.len()
    }

    /// The largest label read (-inf for none).
    pub(super) fn largest(&self) -> f64 {
        let largest = largest_label(&self.labels);
        if self.ones {
            largest.max(1.0)
        } else {
            largest
        }
    }
}

fn largest_label(labels: &[f64]) -> f64 {
    labels.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
