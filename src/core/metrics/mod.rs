//! Metric kernels: plain functions over one query's relevance vector.
//!
//! Each family lives in its own file with its definition.  A kernel sees a
//! [`Query`]: the label of the document at each rank (NaN when the document is
//! not in the qrels), the labels of every judged document, and the ideal gains.
//! The vector is built once per query and shared by every requested metric and
//! cutoff (see `eval.rs`), so 40 metrics cost one pass over the data plus the
//! arithmetic.
//!
//! Relevance (trec_eval): a label `l` is relevant when `l >= 0 && l >= level`.
//! Negative labels are trec_eval's "in the pool but unjudged": never relevant,
//! not judged non-relevant, gain 0.  Documents not in the qrels are
//! non-relevant (NaN here: every comparison with it is false).

pub mod bpref;
pub mod counts;
pub mod f1;
pub mod hits;
pub mod map;
pub mod mrr;
pub mod ndcg;
pub mod precision;
pub mod r_precision;
pub mod recall;

use crate::core::error::{Error, Result};

/// One query as the kernels see it.
#[derive(Clone, Copy, Debug)]
pub struct Query<'a> {
    /// Label of the document at rank `i + 1`; NaN when it is not in the qrels.
    pub ranked: &'a [f64],
    /// Labels of all judged documents of the query, any order.
    pub judged: &'a [f64],
    /// Positive labels of the judged documents, largest first.
    pub ideal: &'a [f64],
}

#[inline]
pub fn is_rel(label: f64, level: f64) -> bool {
    label >= 0.0 && label >= level
}

impl Query<'_> {
    /// R: relevant documents in the qrels.
    pub fn num_rel(&self, level: f64) -> usize {
        self.judged.iter().filter(|&&l| is_rel(l, level)).count()
    }

    /// The top `k` of the ranking (all of it for `None`).
    pub fn top(&self, k: Option<usize>) -> &[f64] {
        match k {
            Some(k) if k < self.ranked.len() => &self.ranked[..k],
            _ => self.ranked,
        }
    }

    /// Relevant documents among the top `k`.
    pub fn rel_in_top(&self, k: Option<usize>, level: f64) -> usize {
        self.top(k).iter().filter(|&&l| is_rel(l, level)).count()
    }
}

/// The metric families the kernels implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Precision,
    Recall,
    F1,
    Hits,
    HitRate,
    Mrr,
    Map,
    Ndcg,
    NdcgBurges,
    Dcg,
    RPrecision,
    Bpref,
    NumRet,
    NumRel,
    NumRelRet,
}

impl Family {
    /// Canonical names, as in `python/ranklens/_names.py`.
    pub fn from_name(name: &str) -> Option<Family> {
        Some(match name {
            "precision" => Family::Precision,
            "recall" => Family::Recall,
            "f1" => Family::F1,
            "hits" => Family::Hits,
            "hit_rate" => Family::HitRate,
            "mrr" => Family::Mrr,
            "map" => Family::Map,
            "ndcg" => Family::Ndcg,
            "ndcg_burges" => Family::NdcgBurges,
            "dcg" => Family::Dcg,
            "r_precision" => Family::RPrecision,
            "bpref" => Family::Bpref,
            "num_ret" => Family::NumRet,
            "num_rel" => Family::NumRel,
            "num_rel_ret" => Family::NumRelRet,
            _ => return None,
        })
    }

    fn takes_cutoff(self) -> bool {
        !matches!(self, Family::RPrecision | Family::Bpref | Family::NumRel)
    }

    /// The named numeric parameters the family takes, with their defaults
    /// (mirrors `FAMILIES[...].params` in `python/ranklens/_names.py`).
    fn params(self) -> &'static [(&'static str, f64)] {
        &[]
    }
}

/// One requested metric: family, optional cutoff, optional own relevance
/// level, and the family's named parameters (defaults filled in).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSpec {
    pub family: Family,
    pub k: Option<usize>,
    pub level: Option<f64>,
    params: Vec<(&'static str, f64)>,
}

impl MetricSpec {
    /// `params`: named numeric parameters of the family (`(key, value)`);
    /// a key the family does not take is an error.
    pub fn new(
        name: &str,
        k: Option<usize>,
        level: Option<f64>,
        params: &[(String, f64)],
    ) -> Result<Self> {
        let family = Family::from_name(name)
            .ok_or_else(|| Error::InvalidMetric(format!("unknown metric family {name:?}")))?;
        let mut values: Vec<(&'static str, f64)> = family.params().to_vec();
        for (key, value) in params {
            let Some(slot) = values.iter_mut().find(|(k, _)| k == key) else {
                return Err(Error::InvalidMetric(format!(
                    "{name} takes no parameter {key:?}"
                )));
            };
            if !value.is_finite() {
                return Err(Error::InvalidMetric(format!(
                    "{name}: {key} must be finite"
                )));
            }
            slot.1 = *value;
        }
        if k == Some(0) {
            return Err(Error::InvalidMetric(format!(
                "{name}: cutoff must be positive"
            )));
        }
        if k.is_some() && !family.takes_cutoff() {
            return Err(Error::InvalidMetric(format!("{name} takes no cutoff")));
        }
        if let Some(l) = level {
            if !l.is_finite() {
                return Err(Error::InvalidMetric(format!(
                    "{name}: rel level must be finite"
                )));
            }
        }
        Ok(MetricSpec {
            family,
            k,
            level,
            params: values,
        })
    }

    /// The value of a named parameter (its default when not given).
    pub fn param(&self, key: &str) -> f64 {
        self.params
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(f64::NAN, |(_, v)| *v)
    }

    /// The metric's value on one query; `level` is the evaluation's default
    /// relevance level (the spec's own level wins).
    pub fn compute(&self, q: &Query<'_>, level: f64) -> f64 {
        let level = self.level.unwrap_or(level);
        let k = self.k;
        match self.family {
            Family::Precision => precision::precision(q, k, level),
            Family::Recall => recall::recall(q, k, level),
            Family::F1 => f1::f1(q, k, level),
            Family::Hits => hits::hits(q, k, level),
            Family::HitRate => hits::hit_rate(q, k, level),
            Family::Mrr => mrr::mrr(q, k, level),
            Family::Map => map::average_precision(q, k, level),
            Family::Ndcg => ndcg::ndcg(q, k, ndcg::Gain::Label),
            Family::NdcgBurges => ndcg::ndcg(q, k, ndcg::Gain::Exponential),
            Family::Dcg => ndcg::dcg(q, k, ndcg::Gain::Label),
            Family::RPrecision => r_precision::r_precision(q, level),
            Family::Bpref => bpref::bpref(q, level),
            Family::NumRet => counts::num_ret(q, k),
            Family::NumRel => counts::num_rel(q, level),
            Family::NumRelRet => counts::num_rel_ret(q, k, level),
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::Query;

    /// Build a query from ranked labels (NaN = not judged) and the judged labels.
    pub struct Owned {
        pub ranked: Vec<f64>,
        pub judged: Vec<f64>,
        pub ideal: Vec<f64>,
    }

    pub fn query(ranked: &[f64], judged: &[f64]) -> Owned {
        let mut ideal: Vec<f64> = judged.iter().copied().filter(|&l| l > 0.0).collect();
        ideal.sort_by(|a, b| b.total_cmp(a));
        Owned {
            ranked: ranked.to_vec(),
            judged: judged.to_vec(),
            ideal,
        }
    }

    impl Owned {
        pub fn view(&self) -> Query<'_> {
            Query {
                ranked: &self.ranked,
                judged: &self.judged,
                ideal: &self.ideal,
            }
        }
    }

    pub fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }
}
