//! Metric kernels: plain functions over one query's relevance vector.
//!
//! Each family lives in its own file with its definition.  A kernel sees a
//! [`Query`]: the label of the document at each rank (NaN when the document is
//! not in the qrels), the labels of every judged document, and the ideal gains.
//! The vector is built once per query and shared by every requested metric and
//! cutoff (see `eval/score.rs`), so 40 metrics cost one pass over the data plus the
//! arithmetic.
//!
//! Relevance (trec_eval): a label `l` is relevant when `l >= 0 && l >= level`.
//! Negative labels are trec_eval's "in the pool but unjudged": never relevant,
//! not judged non-relevant, gain 0.  Documents not in the qrels are
//! non-relevant (NaN here: every comparison with it is false).

pub mod bpref;
pub mod counts;
pub mod expected;
pub mod f1;
pub mod hits;
pub mod map;
pub mod mrr;
pub mod ndcg;
pub mod precision;
pub mod query;
pub mod r_precision;
pub mod recall;
// -- trec_eval part A --
pub mod geomean;
pub mod infap;
pub mod iprec;
pub mod rprec_mult;
pub mod set_measures;
pub mod unjudged;
// -- end trec_eval part A --
// -- gains and beyond --
pub mod auc;
pub mod err;
pub mod first_rel;
pub mod g;
pub mod gains;
pub mod judged;
pub mod ndcg_rel;
pub mod rbp;
// -- end gains and beyond --
pub mod diversity;
// -- ir_measures --
pub mod accuracy;
pub mod compat;
pub mod cwl;

// -- preferences (trec_eval -R prefs) --
pub mod prefs;
pub mod yaap;
// -- end preferences --
mod family;

use crate::core::error::{Error, Result};
pub use family::Family;
use query::Query;

/// One requested metric: family, optional cutoff, optional own relevance
/// level, and the family's named parameters (defaults filled in).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSpec {
    pub family: Family,
    pub k: Option<usize>,
    pub level: Option<f64>,
    params: Vec<(&'static str, f64)>,
    /// Custom gains `(label, gain)` from `gainL` parameters (gains and beyond).
    gains: Vec<(f64, f64)>,
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
        let mut gains: Vec<(f64, f64)> = Vec::new();
        for (key, value) in params {
            // -- gains and beyond --
            if let Some(label) = gains::parse_key(key).filter(|_| family.takes_gains()) {
                if !value.is_finite() {
                    return Err(Error::InvalidMetric(format!(
                        "{name}: {key} must be finite"
                    )));
                }
                gains.retain(|(l, _)| *l != label);
                gains.push((label, *value));
                continue;
            }
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
        // -- diversity --
        for (key, v) in &values {
            if family.needs_subtopics() && !(0.0..=1.0).contains(v) {
                return Err(Error::InvalidMetric(format!(
                    "{name}: {key} must be in [0, 1]"
                )));
            }
        }
        if matches!(family, Family::AlphaDcg | Family::ErrIa)
            && k.is_some_and(|k| k > diversity::MAX_NORMALISED_K)
        {
            return Err(Error::InvalidMetric(format!(
                "{name}: cutoff must be at most {}",
                diversity::MAX_NORMALISED_K
            )));
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
            gains,
        })
    }

    /// Whether custom gains (`gainL` parameters) replace the labels.
    pub fn has_gains(&self) -> bool {
        !self.gains.is_empty()
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
        if !q.ties.is_empty() {
            return expected::compute(self.family, q, k, level);
        }
        match self.family {
            Family::Precision => precision::precision(q, k, level),
            Family::Recall => recall::recall(q, k, level),
            Family::F1 => f1::f1(q, k, level),
            Family::Hits => hits::hits(q, k, level),
            Family::HitRate => hits::hit_rate(q, k, level),
            Family::Mrr => mrr::mrr(q, k, level),
            Family::Map => map::average_precision(q, k, level),
            Family::Ndcg if !self.gains.is_empty() => gains::ndcg(q, k, &self.gains),
            Family::Ndcg => ndcg::ndcg(q, k, ndcg::Gain::Label),
            Family::NdcgBurges => ndcg::ndcg(q, k, ndcg::Gain::Exponential),
            Family::Dcg if !self.gains.is_empty() => gains::dcg(q, k, &self.gains),
            Family::Dcg => ndcg::dcg(q, k, ndcg::Gain::Label),
            Family::RPrecision => r_precision::r_precision(q, level),
            Family::Bpref => bpref::bpref(q, level),
            Family::NumRet => counts::num_ret(q, k),
            Family::NumRel => counts::num_rel(q, level),
            Family::NumRelRet => counts::num_rel_ret(q, k, level),
            // -- trec_eval part A --
            Family::SetF => set_measures::set_f(q, level, self.param("beta")),
            Family::SetMap => set_measures::set_map(q, level),
            Family::RelativePrecision => set_measures::relative_precision(q, k, level),
            Family::Utility => set_measures::utility(
                q,
                level,
                ["a", "b", "c", "d", "num_docs"].map(|p| self.param(p)),
            ),
            Family::RprecMult => rprec_mult::rprec_mult(q, level, self.param("mult")),
            Family::NumNonrelJudgedRet => set_measures::num_nonrel_judged_ret(q, k, level),
            Family::NumQ => 1.0,
            Family::IprecAtRecall => {
                iprec::iprec_at_recall(q, level, self.param("recall"), self.param("version"))
            }
            Family::IprecAvg => {
                let pts = iprec::points(self.param("lo"), self.param("hi"), self.param("step"));
                iprec::iprec_avg(q, level, &pts, self.param("version"))
            }
            Family::InfAp => infap::inf_ap(q, level),
            Family::GmMap => map::average_precision(q, None, level),
            Family::GmBpref => bpref::bpref(q, level),
            Family::Unjudged => unjudged::unjudged(q, k),
            // -- end trec_eval part A --
            // -- gains and beyond --
            Family::BinG => g::bin_g(q, level),
            Family::G => g::g(q, &self.gains),
            Family::NdcgRel => ndcg_rel::ndcg_rel(q, &self.gains),
            Family::Rndcg => ndcg_rel::rndcg(q, &self.gains, level),
            Family::Rbp => rbp::rbp(q, k, &self.gains, self.param("p")),
            Family::RbpResid => rbp::rbp_resid(q, k, self.param("p")),
            Family::Err => err::err(q, k, self.param("gmax")),
            Family::Judged => judged::judged(q, k),
            Family::Auc => auc::auc(q, k, level),
            Family::FirstRelRank => first_rel::first_rel_rank(q, k, level),
            Family::Fallout => first_rel::fallout(q, k, level),
            // -- end gains and beyond --
            // -- diversity --
            Family::AlphaDcg => diversity::alpha_dcg(q, k, level, self.param("alpha")),
            Family::AlphaNdcg => diversity::alpha_ndcg(q, k, level, self.param("alpha")),
            Family::ErrIa => diversity::err_ia(q, k, level, self.param("alpha")),
            Family::NerrIa => diversity::nerr_ia(q, k, level, self.param("alpha")),
            Family::Nrbp => diversity::nrbp(q, level, self.param("alpha"), self.param("beta")),
            Family::Nnrbp => diversity::nnrbp(q, level, self.param("alpha"), self.param("beta")),
            Family::PIa => diversity::p_ia(q, k, level),
            Family::ApIa => diversity::ap_ia(q, level),
            Family::StRecall => diversity::st_recall(q, k, level),
            // -- end diversity --
            Family::Idcg if !self.gains.is_empty() => gains::ideal_dcg(q, k, &self.gains),
            Family::Idcg => ndcg::ideal_dcg(q, k, ndcg::Gain::Label),
            Family::Yaap => yaap::yaap(q, level),
            // -- ir_measures --
            Family::Accuracy => accuracy::accuracy(q, k, level),
            Family::RbpCwl
            | Family::Sdcg
            | Family::Bpm
            | Family::Nerr8
            | Family::Nerr9
            | Family::Nerr10
            | Family::Nerr11
            | Family::Inst
            | Family::Insq => self.cwl(q, k, level),
            Family::Compat => compat::compat(q, self.param("p"), self.param("normalize") != 0.0),
        }
    }
}

impl MetricSpec {
    /// A C/W/L measure (`cwl.rs`): its user model, gains and horizon.
    fn cwl(&self, q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
        use cwl::Model;
        let at = k.unwrap_or(usize::MAX);
        let model = match self.family {
            Family::RbpCwl => Model::Rbp { p: self.param("p") },
            Family::Sdcg => Model::Sdcg { k: at },
            Family::Bpm => Model::Bpm {
                t: self.param("T"),
                k: at,
            },
            Family::Nerr8 => Model::Nerr8 { k: at },
            Family::Nerr9 => Model::Nerr9 { k: at },
            Family::Nerr10 => Model::Nerr10 { p: self.param("p") },
            Family::Nerr11 => Model::Nerr11 { t: self.param("T") },
            Family::Inst => Model::Inst { t: self.param("T") },
            _ => Model::Insq { t: self.param("T") },
        };
        let gains = cwl::Gains {
            min_rel: self.param("min_rel"),
            max_rel: self.param("max_rel"),
            level,
        };
        // depth is validated to [1, 10^7] by the registry; a float saturates.
        let depth = self.param("depth").max(0.0) as usize;
        let residual = self.param("residual") != 0.0;
        cwl::expected_utility(q, k, model, gains, depth, residual)
    }
}

/// The specs with every automatic `gmax` of `err` (<= 0) replaced by
/// `max_label` (`err::max_label` of the qrels' labels).
pub fn resolve_gmax(specs: &[MetricSpec], max_label: f64) -> Vec<MetricSpec> {
    specs
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if m.family == Family::Err && m.param("gmax") <= 0.0 {
                for (key, v) in m.params.iter_mut() {
                    if *key == "gmax" {
                        *v = max_label;
                    }
                }
            }
            m
        })
        .collect()
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
                ties: Default::default(),
                prefix: None,
                subtopics: Default::default(),
            }
        }
    }

    /// Every family's canonical name.
    pub const FAMILIES: &[&str] = &[
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
        "set_f",
        "set_map",
        "relative_precision",
        "utility",
        "rprec_mult",
        "num_nonrel_judged_ret",
        "num_q",
        "iprec_at_recall",
        "iprec_avg",
        "inf_ap",
        "gm_map",
        "gm_bpref",
        "unjudged",
        "bin_g",
        "g",
        "ndcg_rel",
        "rndcg",
        "rbp",
        "rbp_resid",
        "err",
        "judged",
        "auc",
        "first_rel_rank",
        "fallout",
        "idcg",
        "yaap",
        "accuracy",
        "compat",
        "rbp_cwl",
        "sdcg",
        "bpm",
        "nerr8",
        "nerr9",
        "nerr10",
        "nerr11",
        "inst",
        "insq",
    ];

    pub fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::query::PrefixBuf;
    use super::testutil::{query, FAMILIES};
    use super::*;
    use proptest::prelude::*;

    fn label() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(f64::NAN),
            Just(-1.0),
            Just(0.0),
            Just(1.0),
            Just(2.0),
            Just(3.0),
            Just(0.5),
            Just(1.5),
        ]
    }

    proptest! {
        /// Every kernel gives the same bits with and without the shared sums.
        #[test]
        fn prefix_sums_change_no_value(
            ranked in proptest::collection::vec(label(), 0..40),
            extra in proptest::collection::vec(label(), 0..10),
            level in prop_oneof![Just(1.0), Just(2.0), Just(0.5)],
        ) {
            let mut judged: Vec<f64> = ranked.iter().copied().filter(|l| !l.is_nan()).collect();
            judged.extend(extra.iter().copied().filter(|l| !l.is_nan()));
            let q = query(&ranked, &judged);
            let plain = q.view();
            let mut buf = PrefixBuf::default();
            let shared = Query {
                prefix: Some(buf.build(plain.ranked, plain.judged, plain.ideal, level)),
                ..plain
            };
            for name in FAMILIES {
                for k in [None, Some(1), Some(3), Some(10), Some(100)] {
                    let Ok(spec) = MetricSpec::new(name, k, None, &[]) else { continue };
                    for own in [None, Some(level), Some(level + 1.0)] {
                        let spec = MetricSpec { level: own, ..spec.clone() };
                        let (a, b) = (spec.compute(&plain, level), spec.compute(&shared, level));
                        prop_assert!(
                            a == b || (a.is_nan() && b.is_nan()),
                            "{name}@{k:?} rel={own:?}: {a} vs {b}"
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod gmax_tests {
    use super::*;

    #[test]
    fn automatic_gmax() {
        let specs = [MetricSpec::new("err", Some(5), None, &[]).unwrap()];
        assert_eq!(resolve_gmax(&specs, 3.0)[0].param("gmax"), 3.0);
        let given = [MetricSpec::new("err", None, None, &[("gmax".into(), 4.0)]).unwrap()];
        assert_eq!(resolve_gmax(&given, 3.0)[0].param("gmax"), 4.0);
    }
}
