//! AutoRAG's retrieval metrics, row by row, with AutoRAG's own definitions
//! (`autorag/evaluation/metric/retrieval.py`), quirks included.  They are not
//! the trec_eval-style grouped metrics of `eval/`; `ranklens.compat.autorag`
//! exposes them.
//!
//! A row is a ground truth (a list of groups of ids; a group is satisfied by any
//! of its members) and a retrieved list `pred` (length P, duplicates allowed).
//! With G groups and F ground-truth ids in all (duplicates counted):
//!
//! * recall = groups with a member anywhere in `pred` / G;
//! * precision = distinct ids of `pred` that belong to some group / P;
//! * f1 = 2 (recall precision) / (recall + precision), 0 when both are 0;
//! * mrr = (sum over groups of 1 / rank of the group's first member in
//!   `pred`, missed groups adding nothing) / G;
//! * map = mean over groups of AP_g, AP_g = mean over the ranks i where
//!   `pred[i]` is a member of g of (members of g in the top i) / i, 0 for a
//!   missed group;
//! * ndcg = DCG / IDCG, DCG = sum over ranks i of `[pred[i] in some group]` /
//!   log2(i + 1) (duplicates count each time), IDCG = sum of 1 / log2(i + 1)
//!   over i <= min(F, P); 0 when IDCG is 0.
//!
//! Sums run in AutoRAG's order with Python's `sum` (`PySum`): left to right,
//! or, from Python 3.12 on, with Neumaier's compensation, so that the values
//! are bit-identical to AutoRAG's under the running interpreter.
//!
//! The token-overlap metrics (`retrieval_token_*`) are in [`tokens`].

pub mod tokens;

use crate::core::eval;

/// Column order of [`retrieval_scores`].
pub const NAMES: [&str; 6] = ["recall", "precision", "f1", "mrr", "map", "ndcg"];

/// Python's builtin `sum(xs)` of floats (start 0): plain left-to-right
/// addition, or Neumaier-compensated (Python >= 3.12).
pub fn py_sum(xs: impl IntoIterator<Item = f64>, compensated: bool) -> f64 {
    let mut it = xs.into_iter();
    let Some(first) = it.next() else {
        return 0.0;
    };
    let mut s = 0.0 + first;
    let mut c = 0.0;
    for x in it {
        if compensated {
            let t = s + x;
            if s.abs() >= x.abs() {
                c += (s - t) + x;
            } else {
                c += (x - t) + s;
            }
            s = t;
        } else {
            s += x;
        }
    }
    if compensated && c != 0.0 && c.is_finite() {
        s += c;
    }
    s
}

/// Rows, flattened.  Row `r`'s groups are `row_groups[r]..row_groups[r + 1]`;
/// group `g`'s ids are `gt_ids[group_ids[g]..group_ids[g + 1]]`; row `r`'s
/// retrieved ids are `pred_ids[row_pred[r]..row_pred[r + 1]]`.  Ids are
/// integers (equal integers = equal ids).
#[derive(Clone, Copy, Debug)]
pub struct Rows<'a> {
    pub row_groups: &'a [usize],
    pub group_ids: &'a [usize],
    pub gt_ids: &'a [u32],
    pub row_pred: &'a [usize],
    pub pred_ids: &'a [u32],
    /// `false`: AutoRAG returns None for the row (NaN here).
    pub valid: &'a [bool],
}

#[derive(Default)]
struct Scratch {
    /// (id, group within the row), sorted, duplicates dropped.
    pairs: Vec<(u32, u32)>,
    /// Per group: positions of its members in `pred` (CSR: `starts`).
    starts: Vec<usize>,
    fill: Vec<usize>,
    positions: Vec<usize>,
    distinct: Vec<u32>,
    buf: Vec<f64>,
    ap: Vec<f64>,
}

/// The six metrics of one row into `out` (in [`NAMES`] order).
fn row(groups: &[&[u32]], pred: &[u32], compensated: bool, s: &mut Scratch, out: &mut [f64]) {
    let ng = groups.len();
    let flat: usize = groups.iter().map(|g| g.len()).sum();
    s.pairs.clear();
    for (g, ids) in groups.iter().enumerate() {
        s.pairs.extend(ids.iter().map(|&d| (d, g as u32)));
    }
    s.pairs.sort_unstable();
    s.pairs.dedup();
    let members = |pairs: &[(u32, u32)], d: u32| {
        let a = pairs.partition_point(|p| p.0 < d);
        let b = a + pairs[a..].partition_point(|p| p.0 == d);
        a..b
    };
    // Positions of each group's members in pred, in rank order.
    s.starts.clear();
    s.starts.resize(ng + 1, 0);
    for &d in pred {
        for k in members(&s.pairs, d) {
            s.starts[s.pairs[k].1 as usize + 1] += 1;
        }
    }
    for g in 0..ng {
        s.starts[g + 1] += s.starts[g];
    }
    s.fill.clear();
    s.fill.extend_from_slice(&s.starts[..ng]);
    s.positions.clear();
    s.positions.resize(s.starts[ng], 0);
    for (i, &d) in pred.iter().enumerate() {
        for k in members(&s.pairs, d) {
            let g = s.pairs[k].1 as usize;
            s.positions[s.fill[g]] = i;
            s.fill[g] += 1;
        }
    }
    let pos = |g: usize| &s.positions[s.starts[g]..s.starts[g + 1]];

    let hits = (0..ng).filter(|&g| !pos(g).is_empty()).count();
    let recall = hits as f64 / ng as f64;

    s.distinct.clear();
    s.distinct.extend_from_slice(pred);
    s.distinct.sort_unstable();
    s.distinct.dedup();
    let rel_distinct = s
        .distinct
        .iter()
        .filter(|&&d| !members(&s.pairs, d).is_empty())
        .count();
    let precision = if pred.is_empty() {
        0.0
    } else {
        rel_distinct as f64 / pred.len() as f64
    };

    let f1 = if recall + precision == 0.0 {
        0.0
    } else {
        2.0 * (recall * precision) / (recall + precision)
    };

    s.buf.clear();
    s.buf.extend(
        (0..ng)
            .filter_map(|g| pos(g).first())
            .map(|&i| 1.0 / (i + 1) as f64),
    );
    let mrr = if s.buf.is_empty() {
        0.0
    } else {
        py_sum(s.buf.iter().copied(), compensated) / ng as f64
    };

    s.ap.clear();
    for g in 0..ng {
        let p = pos(g);
        let ap = if p.is_empty() {
            0.0
        } else {
            let precs = p
                .iter()
                .enumerate()
                .map(|(j, &i)| (j + 1) as f64 / (i + 1) as f64);
            py_sum(precs, compensated) / p.len() as f64
        };
        s.ap.push(ap);
    }
    let map = if ng == 0 {
        0.0
    } else {
        py_sum(s.ap.iter().copied(), compensated) / ng as f64
    };

    let disc = |i: usize| ((i + 2) as f64).log2();
    let dcg = py_sum(
        pred.iter().enumerate().map(|(i, &d)| {
            if members(&s.pairs, d).is_empty() {
                0.0
            } else {
                1.0 / disc(i)
            }
        }),
        compensated,
    );
    let n_ideal = flat.min(pred.len());
    let idcg = py_sum(
        (0..pred.len()).map(|i| if i < n_ideal { 1.0 / disc(i) } else { 0.0 }),
        compensated,
    );
    let ndcg = if idcg > 0.0 { dcg / idcg } else { 0.0 };

    out.copy_from_slice(&[recall, precision, f1, mrr, map, ndcg]);
}

/// Id strings, flattened: id `i` is `bytes[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct Keys<'a> {
    pub bytes: &'a [u8],
    pub offsets: &'a [usize],
}

/// Rows one task of [`retrieval_scores`] holds: a call of at most this many
/// rows runs them in order on the calling thread (one sample at a time: the
/// pool's hand-over would cost more than the rows, about a microsecond each).
pub const TASK_ROWS: usize = 64;

/// The six metrics of every row: `rows * 6` values, row-major, columns in
/// [`NAMES`] order; NaN for an invalid row.  Rows run in parallel, but for
/// at most [`TASK_ROWS`].
///
/// With `keys`, the ids in `rows` index `keys` and are compared by their bytes
/// (each row interns its own ids: no global table, rows stay independent);
/// without, equal integers are equal ids.
pub fn retrieval_scores(rows: &Rows<'_>, keys: Option<Keys<'_>>, compensated: bool) -> Vec<f64> {
    let n = rows.valid.len();
    assert!(rows.row_groups.len() == n + 1 && rows.row_pred.len() == n + 1);
    let mut out = vec![f64::NAN; n * 6];
    eval::for_each_row(
        &mut out,
        6,
        TASK_ROWS,
        || {
            (
                Scratch::default(),
                hashbrown::HashMap::<&[u8], u32>::new(),
                Vec::<u32>::new(),
            )
        },
        |(s, local, ids), r, o| {
            if !rows.valid[r] {
                return;
            }
            let (g0, g1) = (rows.row_groups[r], rows.row_groups[r + 1]);
            let (i0, i1) = (rows.group_ids[g0], rows.group_ids[g1]);
            let (p0, p1) = (rows.row_pred[r], rows.row_pred[r + 1]);
            let gt = &rows.gt_ids[i0..i1];
            let pred = &rows.pred_ids[p0..p1];
            ids.clear();
            match keys {
                Some(k) => {
                    local.clear();
                    for &i in gt.iter().chain(pred) {
                        let i = i as usize;
                        let key = &k.bytes[k.offsets[i]..k.offsets[i + 1]];
                        let next = local.len() as u32;
                        ids.push(*local.entry(key).or_insert(next));
                    }
                }
                None => ids.extend(gt.iter().chain(pred)),
            }
            let (gt, pred) = ids.split_at(gt.len());
            let groups: Vec<&[u32]> = (g0..g1)
                .map(|g| &gt[rows.group_ids[g] - i0..rows.group_ids[g + 1] - i0])
                .collect();
            row(&groups, pred, compensated, s, o);
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(groups: &[&[u32]], pred: &[u32]) -> [f64; 6] {
        let mut out = [0.0; 6];
        row(groups, pred, false, &mut Scratch::default(), &mut out);
        out
    }

    #[test]
    fn worked_example() {
        // gt [["test-1", "test-2"], ["test-3"]] = [[1, 2], [3]];
        // retrieved ["test-1", "pred-1", "test-2", "pred-3"] = [1, 10, 2, 11]
        let v = one(&[&[1, 2], &[3]], &[1, 10, 2, 11]);
        assert_eq!(v[0], 0.5); // recall: group 1 found, group 2 not
        assert_eq!(v[1], 0.5); // precision: test-1, test-2 of 4
        assert_eq!(v[2], 0.5);
        assert_eq!(v[3], 0.5); // mrr: (1/1 + 0) / 2
                               // map: group 1 hits at ranks 1, 3: (1/1 + 2/3) / 2; group 2: 0
        assert_eq!(v[4], (1.0 + 2.0 / 3.0) / 2.0 / 2.0);
        // ndcg: dcg 1/log2(2) + 1/log2(4); 3 gt ids -> idcg over ranks 1..3
        let dcg = 1.0 + 1.0 / 4f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 1.0 / 4f64.log2() + 0.0;
        assert_eq!(v[5], dcg / idcg);
    }

    #[test]
    fn quirks() {
        // duplicates in pred: precision counts distinct relevant ids over P
        let v = one(&[&[1]], &[1, 1, 2]);
        assert_eq!(v[1], 1.0 / 3.0);
        // ... while AP and DCG see every occurrence
        assert_eq!(v[4], (1.0 + 1.0) / 2.0);
        assert_eq!(v[5], (1.0 + 1.0 / 3f64.log2()) / 1.0);
        // an id in two groups satisfies both
        let v = one(&[&[1], &[1, 2]], &[1]);
        assert_eq!(v[0], 1.0);
        assert_eq!(v[3], 1.0);
        // nothing found
        assert_eq!(one(&[&[1]], &[2, 3]), [0.0; 6]);
    }

    #[test]
    fn python_sum() {
        let xs = [1.0, 1e100, 1.0, -1e100];
        assert_eq!(py_sum(xs, false), 0.0);
        assert_eq!(py_sum(xs, true), 2.0);
        assert_eq!(py_sum([], true), 0.0);
        assert_eq!(py_sum([0.1, 0.2, 0.3], false), 0.1 + 0.2 + 0.3);
    }

    #[test]
    fn rows_and_invalid() {
        let rows = Rows {
            row_groups: &[0, 2, 2],
            group_ids: &[0, 2, 3],
            gt_ids: &[1, 2, 3],
            row_pred: &[0, 4, 4],
            pred_ids: &[1, 10, 2, 11],
            valid: &[true, false],
        };
        let out = retrieval_scores(&rows, None, false);
        // the same ids as strings: t1 t2 t3 | t1 p1 t2 p3
        let keys = Keys {
            bytes: b"t1t2t3t1p1t2p3",
            offsets: &[0, 2, 4, 6, 8, 10, 12, 14],
        };
        let rows = Rows {
            gt_ids: &[0, 1, 2],
            pred_ids: &[3, 4, 5, 6],
            ..rows
        };
        assert_eq!(retrieval_scores(&rows, Some(keys), false)[..6], out[..6]);
        assert_eq!(out[0], 0.5);
        assert!(out[6..].iter().all(|x| x.is_nan()));
    }
}
