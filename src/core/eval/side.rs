//! [`Side`]: one encoded side (run or qrels) borrowed, as the evaluator reads
//! it.
//!
//! Invariant: a `Side` is only made through [`Side::new`] (or
//! [`Side::with_subtopics`]), which checks the whole layout once, so that no
//! index can go out of bounds while scoring and the loops need no checks of
//! their own.  The arrays may come from Python (numpy), hence the checks.

use crate::core::encode::Encoded;
use crate::core::error::{Error, Result};
use crate::core::vocab::Vocab;

/// One encoded side (run or qrels), borrowed: see [`crate::core::encode`] for the layout.
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

    pub(super) fn rows(&self, q: usize) -> (&'a [u32], &'a [f64], &'a [u32]) {
        let (a, b) = (self.offsets[q] as usize, self.offsets[q + 1] as usize);
        let extra = if self.extra.is_empty() {
            &[][..]
        } else {
            &self.extra[a..b]
        };
        (&self.doc_ids[a..b], &self.values[a..b], extra)
    }
}
