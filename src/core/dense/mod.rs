//! Scoring arrays in place: score matrices, ranked id lists, ANN neighbours.
//!
//! No ids, no hashing, no join: row `i` of a `scores` matrix is query `i`, its
//! columns are the candidates, and `labels[i, j]` is candidate `j`'s label.
//! Each row is ranked (score descending), its label vector is built, and every
//! metric reads it through the same kernels as the id path
//! (`eval::score_ranking`), so every family is available.
//!
//! Semantics of a row (documented for users in `python/ranklens/_dense.py`):
//! * every valid cell is a judged candidate with its label: `0` is judged
//!   non-relevant, a negative label trec_eval's "in the pool, unjudged";
//! * ties ([`DenseTies`]): equal scores in column order (the default), the
//!   expected value over their orderings, or the best / worst ordering;
//! * a row with no label relevant at the evaluation's level is *empty*; its
//!   values follow [`Empty`];
//! * a NaN score, or a NaN or infinite label, among the candidates is an
//!   error naming the cell.
//!
//! Matrices are read through [`Matrix`] (a slice, a shape and element
//! strides), so transposed and sliced numpy arrays are read without a copy;
//! [`Numbers`] holds one of the dtypes read in place.  Per-thread scratch
//! (`Scratch`) holds one row; nothing is allocated per cell.
//!
//! Two paths, the same values bit for bit (tested: `dense/tests.rs`,
//! `tests/test_dense.py`):
//! * the sparse path (`sparse.rs`) takes a row when `ties="first"`, no mask,
//!   every level above 0 and every metric one of ndcg, dcg, map, mrr,
//!   recall, P, hits, hit_rate, r_precision, num_ret, num_rel, and the row
//!   has no NaN score, labels below 2^1000 in magnitude (`sparse::LABEL_BOUND`)
//!   and at most `COUNT_PER_LOG2 * log2(n)`
//!   positive labels: only the cells with a positive label are kept, as
//!   `(rank, label)` pairs, and the metrics read those pairs.  It runs by
//!   blocks of rows, with AVX-512 or AVX2 loops where the CPU has them;
//! * the general path (`general.rs`) takes every other row: a ranked label
//!   vector and the id path's kernels, every family and tie rule.
//!
//! The files, one role each: `matrix.rs` (the view, valid cells), `numbers.rs`
//! (dtypes), `ties.rs` (tie rules, ranking a row), `empty.rs` (empty rows),
//! `general.rs` (the general row), `run.rs` (metrics resolved, the loops over
//! rows and blocks), `rows.rs` ([`evaluate_dense`]), `topk.rs`
//! ([`evaluate_topk`]), `group.rs` ([`group_flat`]), `scatter.rs` (flat cells
//! copied into group order), `flat.rs` ([`evaluate_flat`]), `knn.rs` (ANN
//! recall), `sparse.rs` and `sparse/` (the sparse path).
//!
//! Invariants: a [`Matrix`] never reads outside its slice (checked once, at
//! construction); the sparse path's values equal the general path's bit for
//! bit, for every instruction set (the tests run each set the CPU has); a
//! call of at most [`TASK_ROWS`] rows (or [`SORTED_CHUNK`] flat cells, or
//! [`KNN_TASK_ROWS`] neighbour rows) runs on the calling thread without rayon,
//! so a binding may call it outside the pool (`eval::with_threads_or_inline`).
//!
//! What did not pay (measured figures: `docs/design/performance.md`), one line
//! each; the AVX-512 row's own list is in `sparse/avx512/mod.rs`:
//! * skipping blocks of 8 labels without a positive one: the block test's
//!   branch mispredicts at 5% positive labels;
//! * the positive labels four at a time through a 4-bit mask and a table of
//!   its set positions: slower than the 64-bit masks' walk;
//! * `usize` counts in the rank count: half the lanes of `u32`;
//! * the cells before and after a cell counted in two loops of one compare
//!   each: the loops' tails cost more than one pass with an equality count;
//! * two positive cells a pass over the scores in the portable and AVX2 row:
//!   no gain there (it pays only in the AVX-512 row);
//! * the pairs and the ideal sorted by a sorting network on 8 padded keys, by
//!   insertion sorts, or placed by counting on 8 padded slots: each slower
//!   than placing each by a count;
//! * `discount`'s table looked up once per call rather than per term: no
//!   change;
//! * the metrics' divisions of small integers looked up in tables: the
//!   divisions are off the rows' critical path, the lookups add instructions
//!   and cache lines;
//! * a `threads=` pool made per call: its thread's fresh malloc arena and the
//!   threads' start dominate small calls (pools are kept: `pool::sized_pool`).

mod empty;
mod flat;
mod general;
mod group;
mod knn;
mod matrix;
mod numbers;
mod rows;
mod run;
mod scatter;
mod sparse;
#[cfg(test)]
mod tests;
mod ties;
mod topk;

pub use empty::Empty;
pub use flat::evaluate_flat;
pub use group::{group_flat, FlatGroups, SORTED_CHUNK};
pub use knn::{knn_recall, knn_recall_distances, KNN_TASK_ROWS};
pub use matrix::{Matrix, Valid};
pub use numbers::{bf16_to_f64, f16_to_f64, Numbers};
pub use rows::evaluate_dense;
pub use run::TASK_ROWS;
pub use ties::DenseTies;
pub use topk::{evaluate_topk, Relevant};

use crate::core::error::{Error, Result};
use crate::core::metrics::query::PrefixBuf;
use ties::COUNT_PER_LOG2;

/// What [`evaluate_dense`] and [`evaluate_topk`] return.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseEvaluation {
    /// Row-major `rows x metrics`.
    pub values: Vec<f64>,
    /// Whether each row had no relevant label (its values follow `Empty`).
    pub empty: Vec<bool>,
}

/// Per-thread scratch: one row.
#[derive(Default)]
struct Scratch {
    scores: Vec<f64>,
    /// A strided row of float32 scores (`f32_row`).
    scores32: Vec<f32>,
    labels: Vec<f64>,
    mask: Vec<f64>,
    /// The column of each kept cell when a mask drops some.
    cols: Vec<u32>,
    order: Vec<u32>,
    ranked: Vec<f64>,
    ideal: Vec<f64>,
    bounds: Vec<usize>,
    prefix: PrefixBuf,
    ids: Vec<i64>,
    rel: Vec<i64>,
    /// `(rank, label)` of the positive cells (`sparse`).
    pairs: Vec<sparse::Pair>,
    /// The ranks of the positive cells, a bit each, all clear between rows
    /// (`sparse`, AVX-512).
    bitmap: Vec<u64>,
    /// The label at each rank of `bitmap`'s set bits (`sparse`, AVX-512).
    slots: Vec<f64>,
}

/// `rows * per_row` copies of `fill`, or the error naming the shape when the
/// count overflows or the memory is not there: the sizes come from the
/// caller's arrays (a zero-stride numpy view may claim any shape), so an
/// allocation that fails is an error, never an abort.
fn filled<T: Clone>(rows: usize, per_row: usize, fill: T) -> Result<Vec<T>> {
    let too_big = || {
        Error::InvalidInput(format!(
            "{rows} rows x {per_row} values per row do not fit in memory"
        ))
    };
    let n = rows.checked_mul(per_row).ok_or_else(too_big)?;
    // The room asked for first and given back, then `vec!`: a zero fill
    // stays a zeroed allocation (its pages mapped as they are written), where
    // a fill of reserved room would write every value once more.
    Vec::<T>::new()
        .try_reserve_exact(n)
        .map_err(|_| too_big())?;
    Ok(vec![fill; n])
}

/// Bytes of per-thread scratch one cell of a row may take (`Scratch`: the
/// row's scores, labels and mask as f64, its order and columns as u32, the
/// ranked labels, the ideal and the prefix sums as f64), rounded up.
const SCRATCH_BYTES_PER_CELL: usize = 64;

/// The room for one row of `cols` cells on every thread that takes rows,
/// asked for once before any row is read: each thread's scratch grows to a
/// row, so a row
/// longer than the memory (a zero-stride numpy view of any width) is the
/// error naming the shape here, never an allocation that fails (an abort)
/// or that the kernel grants and then cannot back (the process killed)
/// mid-call.  The room is asked for as one block and given back untouched
/// (no page is written).  Where the kernel grants any size (Linux's
/// `vm.overcommit_memory = 1`) only the first case is caught.
fn row_room(rows: usize, cols: usize) -> Result<()> {
    // The threads that take rows: tasks hold `TASK_ROWS` rows at least, and
    // a call of one task runs on the calling thread (the pool is not asked
    // for its size, which would start it).
    let threads = if rows <= TASK_ROWS {
        1
    } else {
        rayon::current_num_threads().min(rows.div_ceil(TASK_ROWS))
    };
    let too_big = || {
        let plural = if threads == 1 { "" } else { "s" };
        Error::InvalidInput(format!(
            "{rows} rows x {cols} cells: a row's working memory on {threads} thread{plural} \
             does not fit in memory"
        ))
    };
    let bytes = cols
        .checked_mul(SCRATCH_BYTES_PER_CELL)
        .and_then(|b| b.checked_mul(threads))
        .ok_or_else(too_big)?;
    Vec::<u8>::new()
        .try_reserve_exact(bytes)
        .map_err(|_| too_big())
}

/// Rows ahead of the one read whose first cells are asked for, where rows
/// are read as prefixes lying apart (`Matrix::gapped_prefixes`): by
/// [`knn_recall`] and by the sparse path (`sparse::Layout::prefetch`).
const ROWS_AHEAD: usize = 8;
