//! The metric families the kernels implement: names, cutoff rules and the
//! named parameters with their defaults (mirrors `python/ranklens/_names/_families.py`).
//! Below the kernels: `expected.rs` asks a family's name here without importing
//! the dispatch in `mod.rs`.

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
    // -- trec_eval part A --
    SetF,
    SetMap,
    RelativePrecision,
    Utility,
    RprecMult,
    NumNonrelJudgedRet,
    NumQ,
    IprecAtRecall,
    IprecAvg,
    InfAp,
    GmMap,
    GmBpref,
    Unjudged,
    // -- end trec_eval part A --
    // -- gains and beyond --
    BinG,
    G,
    NdcgRel,
    Rndcg,
    Rbp,
    RbpResid,
    Err,
    Judged,
    Auc,
    FirstRelRank,
    Fallout,
    // -- end gains and beyond --
    // -- diversity --
    AlphaDcg,
    AlphaNdcg,
    ErrIa,
    NerrIa,
    Nrbp,
    Nnrbp,
    PIa,
    ApIa,
    StRecall,
    // -- end diversity --
    /// Ideal DCG (gain = label), the denominator of nDCG.
    Idcg,
    /// trec_eval `yaap`.
    Yaap,
    // -- ir_measures --
    Accuracy,
    Compat,
    RbpCwl,
    Sdcg,
    Bpm,
    Nerr8,
    Nerr9,
    Nerr10,
    Nerr11,
    Inst,
    Insq,
}

impl Family {
    /// Canonical names, as in `python/ranklens/_names/_families.py`.
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
            // -- trec_eval part A --
            "set_f" => Family::SetF,
            "set_map" => Family::SetMap,
            "relative_precision" => Family::RelativePrecision,
            "utility" => Family::Utility,
            "rprec_mult" => Family::RprecMult,
            "num_nonrel_judged_ret" => Family::NumNonrelJudgedRet,
            "num_q" => Family::NumQ,
            "iprec_at_recall" => Family::IprecAtRecall,
            "iprec_avg" => Family::IprecAvg,
            "inf_ap" => Family::InfAp,
            "gm_map" => Family::GmMap,
            "gm_bpref" => Family::GmBpref,
            "unjudged" => Family::Unjudged,
            // -- end trec_eval part A --
            // -- gains and beyond --
            "bin_g" => Family::BinG,
            "g" => Family::G,
            "ndcg_rel" => Family::NdcgRel,
            "rndcg" => Family::Rndcg,
            "rbp" => Family::Rbp,
            "rbp_resid" => Family::RbpResid,
            "err" => Family::Err,
            "judged" => Family::Judged,
            "auc" => Family::Auc,
            "first_rel_rank" => Family::FirstRelRank,
            "fallout" => Family::Fallout,
            // -- end gains and beyond --
            // -- diversity --
            "alpha_dcg" => Family::AlphaDcg,
            "alpha_ndcg" => Family::AlphaNdcg,
            "err_ia" => Family::ErrIa,
            "nerr_ia" => Family::NerrIa,
            "nrbp" => Family::Nrbp,
            "nnrbp" => Family::Nnrbp,
            "p_ia" => Family::PIa,
            "ap_ia" => Family::ApIa,
            "st_recall" => Family::StRecall,
            // -- end diversity --
            "idcg" => Family::Idcg,
            "yaap" => Family::Yaap,
            // -- ir_measures --
            "accuracy" => Family::Accuracy,
            "compat" => Family::Compat,
            "rbp_cwl" => Family::RbpCwl,
            "sdcg" => Family::Sdcg,
            "bpm" => Family::Bpm,
            "nerr8" => Family::Nerr8,
            "nerr9" => Family::Nerr9,
            "nerr10" => Family::Nerr10,
            "nerr11" => Family::Nerr11,
            "inst" => Family::Inst,
            "insq" => Family::Insq,
            _ => return None,
        })
    }

    pub(super) fn takes_cutoff(self) -> bool {
        !matches!(
            self,
            Family::RPrecision | Family::Bpref | Family::NumRel | Family::Yaap
        )
            // -- trec_eval part A --
            && !matches!(
                self,
                Family::SetF
                    | Family::SetMap
                    | Family::Utility
                    | Family::RprecMult
                    | Family::NumQ
                    | Family::IprecAtRecall
                    | Family::IprecAvg
                    | Family::InfAp
                    | Family::GmMap
                    | Family::GmBpref
            )
            // -- gains and beyond --
            && !matches!(
                self,
                Family::BinG | Family::G | Family::NdcgRel | Family::Rndcg
            )
            // -- diversity --
            && !matches!(self, Family::Nrbp | Family::Nnrbp | Family::ApIa)
            // -- ir_measures --
            && !matches!(self, Family::Compat)
    }

    // -- diversity --
    /// Families computed on subtopic judgments (`diversity.rs`).
    pub fn needs_subtopics(self) -> bool {
        matches!(
            self,
            Family::AlphaDcg
                | Family::AlphaNdcg
                | Family::ErrIa
                | Family::NerrIa
                | Family::Nrbp
                | Family::Nnrbp
                | Family::PIa
                | Family::ApIa
                | Family::StRecall
        )
    }

    // -- gains and beyond --
    /// Families taking custom gains per label (`gainL` parameters).
    pub(super) fn takes_gains(self) -> bool {
        matches!(
            self,
            Family::Ndcg
                | Family::Dcg
                | Family::G
                | Family::NdcgRel
                | Family::Rndcg
                | Family::Rbp
                | Family::Idcg
        )
    }

    /// The named numeric parameters the family takes, with their defaults
    /// (mirrors `FAMILIES[...].params` in `python/ranklens/_names/_families.py`).
    pub(super) fn params(self) -> &'static [(&'static str, f64)] {
        match self {
            // -- trec_eval part A --
            Family::SetF => &[("beta", 1.0)],
            Family::Utility => &[
                ("a", 1.0),
                ("b", -1.0),
                ("c", 0.0),
                ("d", 0.0),
                ("num_docs", 0.0),
            ],
            Family::RprecMult => &[("mult", 1.0)],
            Family::IprecAtRecall => &[("recall", 0.0), ("version", 10.0)],
            Family::IprecAvg => &[("lo", 0.0), ("hi", 1.0), ("step", 0.1), ("version", 10.0)],
            // -- end trec_eval part A --
            // -- gains and beyond --
            Family::Rbp | Family::RbpResid => &[("p", 0.9)],
            Family::Err => &[("gmax", 0.0)],
            // -- diversity --
            Family::AlphaDcg | Family::AlphaNdcg | Family::ErrIa | Family::NerrIa => {
                &[("alpha", 0.5)]
            }
            Family::Nrbp | Family::Nnrbp => &[("alpha", 0.5), ("beta", 0.5)],
            // -- ir_measures --
            Family::Compat => &[("p", 0.95), ("normalize", 1.0)],
            Family::RbpCwl => &[
                ("p", 0.8),
                ("min_rel", 0.0),
                ("max_rel", 0.0),
                ("depth", 1000.0),
                ("residual", 0.0),
            ],
            Family::Nerr10 => &[
                ("p", 0.9),
                ("min_rel", 0.0),
                ("max_rel", 0.0),
                ("depth", 1000.0),
                ("residual", 0.0),
            ],
            Family::Bpm | Family::Nerr11 | Family::Inst | Family::Insq => &[
                ("T", 1.0),
                ("min_rel", 0.0),
                ("max_rel", 0.0),
                ("depth", 1000.0),
                ("residual", 0.0),
            ],
            Family::Sdcg | Family::Nerr8 | Family::Nerr9 => &[
                ("min_rel", 0.0),
                ("max_rel", 0.0),
                ("depth", 1000.0),
                ("residual", 0.0),
            ],
            _ => &[],
        }
    }
}
