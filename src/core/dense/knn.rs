//! Vector-search recall of ANN neighbours: shared ids ([`knn_recall`]) and
//! ann-benchmarks' distance recall ([`knn_recall_distances`]).
//!
//! Up to [`SMALL_K`] neighbours a row are compared all against all
//! (branch-free, in registers); above, through an open-addressing set reused
//! row after row ([`IdSet`]).  Where only the first `k` of wider rows are
//! read, the rows ahead are prefetched ([`super::ROWS_AHEAD`]): each row is a
//! cache miss the hardware does not fetch ahead.
//!
//! Not kept: prefetching rows of exactly `k` (their prefixes follow each
//! other: the hints only cost); the all-against-all loop compiled for AVX2
//! too, picked at run time (no gain); sorting both rows, the numpy idiom, for
//! large `k` (slower than the set).

use super::{filled, Matrix, ROWS_AHEAD};
use crate::core::cancel::Cancel;
use crate::core::error::{Error, Result};
use crate::core::eval;

/// Vector-search recall of each row: `|approx[i, :k] ∩ exact[i, :k]| / k`,
/// distinct non-negative ids (negative ids are padding and match nothing).
/// Stopped by `cancel` between blocks of `CANCEL_ROWS` rows.
pub fn knn_recall(
    approx: &Matrix<'_, i64>,
    exact: &Matrix<'_, i64>,
    k: usize,
    cancel: &Cancel,
) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    // The rows `ROWS_AHEAD` on asked for, where only the first `k` of wider
    // rows are read (`knn_recall(I, gt, 10)` on 100-wide arrays): a cache
    // miss a row that the hardware does not fetch ahead.  Not on rows of `k`
    // (their prefixes follow each other, and the prefetches only cost), a
    // loop without them there.
    if approx.gapped_prefixes(k) || exact.gapped_prefixes(k) {
        knn_rows::<true>(approx, exact, k, cancel)
    } else {
        knn_rows::<false>(approx, exact, k, cancel)
    }
}

/// Rows between two checks of the cancel flag: a row of ids is too little
/// work to check it per row.
const CANCEL_ROWS: usize = 1024;

/// Rows of [`knn_recall`] and [`knn_recall_distances`] run in order on the
/// calling thread, without rayon, when there are no more (inside one task of
/// either loop: 1024 rows for ids, this many for distances), so that a binding may call them without the pool
/// (`eval::with_threads_or_inline`).
pub const KNN_TASK_ROWS: usize = 256;

/// [`knn_recall`]'s loop, prefetching the rows ahead when `AHEAD`.
fn knn_rows<const AHEAD: bool>(
    approx: &Matrix<'_, i64>,
    exact: &Matrix<'_, i64>,
    k: usize,
    cancel: &Cancel,
) -> Result<Vec<f64>> {
    let mut out = filled(approx.rows, 1, 0.0)?;
    let serial = approx.rows <= KNN_TASK_ROWS;
    let init = || KnnScratch::new(k);
    eval::try_for_each_row(&mut out, 1, serial, 1024, init, |s, i, o| {
        if i % CANCEL_ROWS == 0 {
            cancel.check()?;
        }
        if AHEAD {
            approx.prefetch_prefix(i + ROWS_AHEAD, k);
            exact.prefetch_prefix(i + ROWS_AHEAD, k);
        }
        let a = approx.row_prefix(i, k, &mut s.a);
        let e = exact.row_prefix(i, k, &mut s.e);
        let n = if k <= SMALL_K {
            shared_small(a, e)
        } else {
            s.set.shared(a, e)
        };
        o.fill(n as f64 / k as f64);
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// ann-benchmarks' recall: the approximate neighbours (of the first `k`)
/// whose distance is at most the `k`-th exact distance + `epsilon`, over `k`.
pub fn knn_recall_distances(
    approx: &Matrix<'_, f64>,
    exact: &Matrix<'_, f64>,
    k: usize,
    epsilon: f64,
    cancel: &Cancel,
) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    let mut out = filled(approx.rows, 1, 0.0)?;
    let serial = approx.rows <= KNN_TASK_ROWS;
    eval::try_for_each_row(
        &mut out,
        1,
        serial,
        KNN_TASK_ROWS,
        || (),
        |_, i, o| {
            if i % CANCEL_ROWS == 0 {
                cancel.check()?;
            }
            let t = exact.get(i, k - 1);
            if t.is_nan() {
                return Err(Error::InvalidInput(format!(
                    "exact distances[{i}, {}] is NaN",
                    k - 1
                )));
            }
            let t = t + epsilon;
            let hits = (0..k).filter(|&j| approx.get(i, j) <= t).count();
            o.fill(hits as f64 / k as f64);
            Ok(())
        },
    )?;
    Ok(out)
}

fn check_knn(ar: usize, er: usize, ac: usize, ec: usize, k: usize) -> Result<()> {
    if ar != er {
        return Err(Error::InvalidInput(format!(
            "approx has {ar} rows, exact {er}: they must match"
        )));
    }
    if k == 0 || k > ac || k > ec {
        return Err(Error::InvalidInput(format!(
            "k must be in 1..={} (approx has {ac} columns, exact {ec}), got {k}",
            ac.min(ec)
        )));
    }
    Ok(())
}

/// Up to this many neighbours a row is compared all against all; above, through
/// a hash set.  Why: for the usual k = 10 the k x k comparisons are
/// branch-free and in registers, faster than any set; at k = 100 the set is
/// several times faster than sorting both rows (the numpy idiom).
const SMALL_K: usize = 32;

/// Distinct non-negative ids of `a` found in `e`, all against all.  Not kept:
/// this loop compiled for AVX2 too, picked at run time (no gain).
fn shared_small(a: &[i64], e: &[i64]) -> usize {
    let mut n = 0;
    for (j, &x) in a.iter().enumerate() {
        let found = e.iter().fold(false, |f, &y| f | (y == x));
        // An id returned twice counts once (rare: checked only on a hit).
        if found && x >= 0 && !a[..j].contains(&x) {
            n += 1;
        }
    }
    n
}

/// Per-thread scratch of [`knn_recall`]: the rows when they are strided, and
/// the set for large k.
struct KnnScratch {
    a: Vec<i64>,
    e: Vec<i64>,
    set: IdSet,
}

impl KnnScratch {
    fn new(k: usize) -> Self {
        KnnScratch {
            a: Vec::new(),
            e: Vec::new(),
            set: IdSet::new(if k > SMALL_K { k } else { 0 }),
        }
    }
}

/// An open-addressing set of ids, reused row after row without clearing: a
/// slot belongs to the current row when its stamp is `2 * row` (an id of
/// `e`) or `2 * row + 1` (that id, already matched).
struct IdSet {
    keys: Vec<i64>,
    stamps: Vec<u32>,
    row: u32,
    shift: u32,
}

impl IdSet {
    /// A set for up to `k` ids, at most a quarter full.
    fn new(k: usize) -> Self {
        let size = (4 * k).next_power_of_two().max(2);
        IdSet {
            keys: vec![0; size],
            stamps: vec![0; size],
            row: 0,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// The slot holding `x` in this row, or the empty slot where it goes.
    #[inline]
    fn slot(&self, x: i64) -> usize {
        let mask = self.keys.len() - 1;
        let mut p = ((x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        loop {
            let p_ = p & mask;
            match (self.stamps.get(p_), self.keys.get(p_)) {
                (Some(&st), Some(&key)) if st >> 1 == self.row && key != x => p = p_ + 1,
                _ => return p_,
            }
        }
    }

    /// Distinct non-negative ids of `a` found in `e` (`e.len() <= k`).
    fn shared(&mut self, a: &[i64], e: &[i64]) -> usize {
        if self.row >= u32::MAX >> 1 {
            self.stamps.fill(0);
            self.row = 0;
        }
        self.row += 1;
        let (present, matched) = (self.row << 1, (self.row << 1) | 1);
        for &x in e.iter().filter(|&&x| x >= 0) {
            let p = self.slot(x);
            if let (Some(st), Some(key)) = (self.stamps.get_mut(p), self.keys.get_mut(p)) {
                if *st >> 1 != self.row {
                    *st = present;
                    *key = x;
                }
            }
        }
        let mut n = 0;
        for &x in a.iter().filter(|&&x| x >= 0) {
            let p = self.slot(x);
            if let Some(st) = self.stamps.get_mut(p) {
                if *st == present {
                    *st = matched;
                    n += 1;
                }
            }
        }
        n
    }
}
