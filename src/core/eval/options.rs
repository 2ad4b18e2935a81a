//! [`Options`]: how a query's ranking is read (trec_eval's `-l`, `-J`, `-M`),
//! and [`Ties`], how documents with equal scores are ordered.

use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};

/// How documents with equal scores are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    /// trec_eval: document id descending (byte order).
    Trec,
    /// The order the documents were given in (file or mapping order).
    Input,
    /// The expected value over all orderings of each group of equal scores,
    /// uniformly random and independent (see [`crate::core::metrics::expected`]).
    Expected,
    /// Higher labels first within a group of equal scores (unjudged as 0;
    /// then trec order): the best value over the orderings for every metric
    /// that rewards ranking higher labels higher.
    Best,
    /// Lower labels first within a group of equal scores (unjudged as 0;
    /// then trec order): the worst value over those orderings.
    Worst,
}

impl Ties {
    pub fn from_name(name: &str) -> Result<Ties> {
        match name {
            "trec" => Ok(Ties::Trec),
            "input" => Ok(Ties::Input),
            "expected" => Ok(Ties::Expected),
            "best" => Ok(Ties::Best),
            "worst" => Ok(Ties::Worst),
            _ => Err(Error::InvalidInput(format!(
                "ties must be 'trec', 'input', 'expected', 'best' or 'worst', got {name:?}"
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
