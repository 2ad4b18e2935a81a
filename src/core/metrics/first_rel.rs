//! `first_rel_rank@k` and `fallout@k` (binary: relevance level).
//!
//! `first_rel_rank@k`: the rank (from 1) of the first relevant document in the
//! top k; its mean over queries is the "mean rank".  When none is there the
//! value is finite by convention: k + 1 with a cutoff, and num_ret + 1 without
//! one (the rank right after the ranking; note that an empty ranking then
//! scores 1, so compare systems with a cutoff).  Lower is better.
//!
//! `fallout@k`: judged non-relevant documents (0 <= label < level) in the top
//! k / all judged non-relevant documents of the query; 0 when there are none.
//! Unjudged documents (not in the qrels, negative label) never count.

use super::query::{is_rel, Query};

pub fn first_rel_rank(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    match q.top(k).iter().position(|&l| is_rel(l, level)) {
        Some(i) => (i + 1) as f64,
        None => (k.unwrap_or(q.ranked.len()) + 1) as f64,
    }
}

/// Whether `value`, the `first_rel_rank` of `q` at cutoff `k`, is the
/// convention for "no relevant document in the top k": a found rank is at most
/// the depth scored, the convention is one past `k` (or past the ranking).
pub fn is_miss(q: &Query<'_>, k: Option<usize>, value: f64) -> bool {
    value > q.depth(k) as f64
}

pub fn fallout(q: &Query<'_>, k: Option<usize>, level: f64) -> f64 {
    let nonrel = |l: f64| l >= 0.0 && !is_rel(l, level);
    let n = q.judged.iter().filter(|&&l| nonrel(l)).count();
    if n == 0 {
        return 0.0;
    }
    q.top(k).iter().filter(|&&l| nonrel(l)).count() as f64 / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    #[test]
    fn hand_computed() {
        let q = query(
            &[f64::NAN, 0.0, 2.0, -1.0, 0.0],
            &[2.0, 0.0, 0.0, 0.0, -1.0],
        );
        assert_eq!(first_rel_rank(&q.view(), None, 1.0), 3.0);
        assert_eq!(first_rel_rank(&q.view(), Some(2), 1.0), 3.0);
        assert_eq!(first_rel_rank(&q.view(), Some(10), 3.0), 11.0);
        assert_eq!(first_rel_rank(&q.view(), None, 3.0), 6.0);
        assert!(close(fallout(&q.view(), None, 1.0), 2.0 / 3.0));
        assert!(close(fallout(&q.view(), Some(2), 1.0), 1.0 / 3.0));
        // level 3: the label-2 document is non-relevant too: N = 4
        assert!(close(fallout(&q.view(), Some(3), 3.0), 2.0 / 4.0));
        assert_eq!(fallout(&query(&[1.0], &[1.0]).view(), None, 1.0), 0.0);
    }
}
