//! Geometric-mean measures: trec_eval `gm_map` and `gm_bpref`.
//!
//! Per query they are `map` and `bpref` (the kernels are shared).  Only the
//! summary differs: trec_eval stores `ln(max(x, 0.00001))` per query (what
//! pytrec_eval returns for each query), adds these in query order and reports
//! `exp(sum / number of queries)`; 0 when there is no query.  The floor
//! (`MIN_GEO_MEAN`) keeps a query with value 0 from zeroing the summary.
//! ranklens reports the plain per-query value and aggregates with
//! [`geometric_mean`] (Python: `Metric.aggregate == "gmean"`).

/// trec_eval's `MIN_GEO_MEAN`.
pub const MIN_GEO_MEAN: f64 = 0.00001;

/// `exp(mean(ln(max(x, MIN_GEO_MEAN))))`, logs added in order; 0 for none.
pub fn geometric_mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sum = 0.0;
    for &v in values {
        sum += v.max(MIN_GEO_MEAN).ln();
    }
    (sum / values.len() as f64).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_mean() {
        assert!((geometric_mean(&[0.25, 1.0]) - 0.5).abs() < 1e-15);
        // 0 floored at 1e-5: sqrt(1e-5 * 1e-5 ... )
        assert!((geometric_mean(&[0.0, 0.1]) - (1e-5f64 * 0.1).sqrt()).abs() < 1e-15);
        assert_eq!(geometric_mean(&[]), 0.0);
    }
}
