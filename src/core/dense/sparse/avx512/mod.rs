//! The sparse row with AVX-512 (x86-64, detected at run time): a contiguous
//! float32 score row with a contiguous row of int64, int32, int8, uint8,
//! float64 or float32 labels; any other row runs the shared code
//! ([`super::row_in`]) compiled for AVX-512.
//!
//! Why written out rather than left to the compiler: AVX-512 compares write
//! mask registers, so the label scan is a compare per 8 (int64, float64) to
//! 64 (int8) labels, the positive ones compacted without a branch
//! (`vpcompress` of their columns and labels into a register, stored whole:
//! `labels.rs`); the NaN scan is an unordered compare per 16 scores into a
//! mask, or, in rows of up to 16 positive cells, a sum of the scores in the
//! first pass of counts (NaN when a score is: a row with both infinities goes
//! the general way, with the same values); the rank counts take two positive
//! cells a pass over the scores, two 8-lane compares each per 8 scores
//! subtracted into vectors of counts, summed once (`counts.rs`).  Up to 8
//! positive cells (most rows at 5% labels) are then placed without a sort and
//! without a branch a cell: the ranks are distinct, so a cell's place among
//! the pairs is the number of smaller ranks (one compare of its key against
//! the row's 8 keys in a register, a popcount), and its place in the ideal
//! the number of larger labels and of equal ones before it; a small row's
//! metric counts are popcounts over those registers.  9 to 16 are placed the
//! same way over two registers; more through a bitmap of the row's ranks:
//! each label goes to slot `rank`, and the set bits, walked in order, give the
//! pairs in rank order (`kernel.rs`).  Rows come by blocks ([`rows`]): the
//! dtypes are matched once a block.
//!
//! Same values bit for bit as the shared code: the same positive cells in
//! column order, the same ranks (cells above, plus equal cells in lower
//! columns: `y > x`, `y == x` are the ordered compares `_CMP_GT_OQ`,
//! `_CMP_EQ_OQ`, on a row without NaN), the same pairs and ideal, and the
//! same metric kernels ([`super::value`]).  Tested against the general path
//! (`dense/tests.rs`, `tests/test_dense.py`).
//!
//! What is left of a row's time is its dependency chain (the rank counts,
//! the placing and the metrics, each row's work waiting on the last), not
//! mispredictions or the rows' reads.  What did not pay (measured figures:
//! `docs/design/performance.md`), one line each:
//! * rank counts as a popcount of each 16-lane compare mask: the mask moves
//!   to general registers are the bottleneck;
//! * rank counts as masks into 16-lane vectors of counts, or four values a
//!   pass in both halves of a 512-bit register: Zen 4 runs a 512-bit
//!   operation as two 256-bit halves, so the compares are as many;
//! * three or four positive cells a pass, or all of a small row's in one
//!   pass: slower (four: the padding's wasted counts);
//! * the last of an odd number of positive cells counted alone (half its
//!   compares): slower, in two trials;
//! * one compare a score a cell over spans before, between and after the two
//!   columns: the spans' loop exits mispredict;
//! * rank counts over 15-bit or half-precision 16-bit keys, 16 lanes a
//!   compare: making the keys puts latency before a row's first count, more
//!   than the halved compares save;
//! * the equal-score compares replaced by one check a row for ties
//!   (`vpermt2d` tables, or `vpconflictd`): building the tables and their
//!   pass cost more than the passes save;
//! * the ranks of 3 to 7 cells by one pass and a binary search into buckets:
//!   its chain (gather, sort, search, reductions) delays the first rank;
//! * the pairs and the ideal sorted by networks in registers (Batcher's 8
//!   keys, or 32-bit keys in 256 bits), or the ideal by scalar
//!   compare-exchanges: the sort's latency is on every row's path;
//! * the ideal sorted before the rank counts: its values kept live across
//!   the counts;
//! * a small row of up to 16 cells (keys in a pair of registers picked at
//!   run time), or its rank array widened to 16: slower for every row;
//! * a small row's metrics without branches or loops (terms masked, vector
//!   divisions, sums by lanes in rank order): more work than the branches,
//!   or store-forwarding stalls when built through arrays;
//! * a small row's ideal DCGs memoised by its counts of integer labels: the
//!   key's conversions and the memo's loads cost more than the ideal;
//! * a small row's keys stored and reloaded: a wide load waits for the
//!   narrow stores it spans; its pairs zeroed by vector stores first, or its
//!   passes summed once over lanes: slower;
//! * the NaN scan folded into the label scan, or the positive cells' scores
//!   compressed in the label scan: no gain or slower;
//! * the labels gathered after the scan (`vpgatherdq` or scalar loads), or
//!   the kept labels converted after it: slower; a load waits for the stores
//!   it spans;
//! * the positive cells found with AVX-512 VBMI2 (`vpcompressb`): no faster,
//!   reading the labels is the cost;
//! * the label scan's stores as 256-bit halves: within the noise;
//! * software pipelining (the next row's scans before this row's placing and
//!   metrics, or a block's rows in separate passes): the reads no longer
//!   overlap any work, and two rows' cells are kept;
//! * software prefetch of full rows (rows ahead, lines ahead, the next
//!   page): the hardware fetches them already, the hints only cost;
//! * the result written into uninitialised capacity through a per-thread
//!   buffer (no zeroing first): slower than zeroing it.

mod counts;
mod kernel;
mod labels;

use super::{Layout, Plan};
use crate::core::dense::{Empty, Matrix, Numbers, Scratch, Valid};
use kernel::kernel;
use labels::{Label, Positives};

/// The low `len` bits set (`len <= 64`).
#[inline(always)]
pub(super) fn low_bits(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// Row `i` with AVX-512 (see the module doc); [`super::row`]'s contract.
///
/// # Safety
/// The CPU has AVX-512 F, BW, DQ and VL, POPCNT, BMI1 and BMI2
/// (`Simd::Avx512` is chosen only then).
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn row(
    s: &mut Scratch,
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    i: usize,
    plan: &Plan,
    level: f64,
    empty: Empty,
    out: &mut [f64],
) -> Option<bool> {
    let (_, cols) = scores.shape();
    let n = valid.row_len(i, cols);
    let sc = match scores {
        Numbers::F32(m) if u32::try_from(n).is_ok() => m.contiguous_row(i, n),
        _ => None,
    };
    if let Some(sc) = sc {
        let mut pos = Positives::new();
        // SAFETY (each arm): the CPU has the features `kernel` needs (this
        // function's own).
        let done = match labels {
            Numbers::I64(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            Numbers::I32(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            Numbers::I8(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            Numbers::U8(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            Numbers::F64(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            Numbers::F32(m) => m
                .contiguous_row(i, n)
                .map(|lb| unsafe { kernel(s, &mut pos, sc, lb, plan, level, empty, out) }),
            _ => None,
        };
        if let Some(done) = done {
            return done;
        }
    }
    super::row_in(s, scores, labels, valid, i, plan, level, empty, out)
}

/// The rows `i0..i0 + flags.len()` with AVX-512, `out` their values (`nm`
/// a row): a bit set in the result for each row done (its flag written),
/// the others left to the general path.  Why a block: the dtypes matched
/// once, and one call into this function rather than one a row (a dispatch
/// a row is a measurable share of the call).
///
/// # Safety
/// As [`row`]; `flags.len() <= 64`.
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn rows(
    s: &mut Scratch,
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    layout: &Layout<'_>,
    i0: usize,
    plan: &Plan,
    level: f64,
    empty: Empty,
    out: &mut [f64],
    flags: &mut [bool],
) -> u64 {
    let args = Args {
        scores,
        labels,
        layout,
        i0,
        plan,
        level,
        empty,
    };
    // SAFETY (each arm): the CPU has the features (this function's own).
    match (scores, labels) {
        (Numbers::F32(sm), Numbers::I64(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        (Numbers::F32(sm), Numbers::I32(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        (Numbers::F32(sm), Numbers::I8(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        (Numbers::F32(sm), Numbers::U8(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        (Numbers::F32(sm), Numbers::F64(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        (Numbers::F32(sm), Numbers::F32(lm)) => unsafe { block(s, sm, lm, &args, out, flags) },
        _ => {
            let mut done = 0u64;
            let nm = plan.metrics.len().max(1);
            for (r, (o, f)) in out.chunks_mut(nm).zip(flags.iter_mut()).enumerate() {
                let got = layout.with_row(scores, labels, i0 + r, |sc, lb, valid, i| {
                    super::row_in(s, sc, lb, valid, i, plan, level, empty, o)
                });
                if let Some(e) = got {
                    *f = e;
                    done |= 1 << r;
                }
            }
            done
        }
    }
}

/// What [`block`] passes on to the shared code.
struct Args<'a, 'b> {
    scores: &'a Numbers<'b>,
    labels: &'a Numbers<'b>,
    layout: &'a Layout<'b>,
    i0: usize,
    plan: &'a Plan,
    level: f64,
    empty: Empty,
}

/// [`rows`] of float32 scores and labels of one dtype.
///
/// # Safety
/// As [`rows`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn block<L: Label>(
    s: &mut Scratch,
    sm: &Matrix<'_, f32>,
    lm: &Matrix<'_, L>,
    a: &Args<'_, '_>,
    out: &mut [f64],
    flags: &mut [bool],
) -> u64 {
    let nm = a.plan.metrics.len().max(1);
    let mut done = 0u64;
    let mut pos = Positives::new();
    let ahead = a.layout.gapped(a.scores, a.labels);
    for (r, (o, f)) in out.chunks_mut(nm).zip(flags.iter_mut()).enumerate() {
        let i = a.i0 + r;
        if ahead {
            a.layout.prefetch(a.scores, a.labels, i + super::ROWS_AHEAD);
        }
        let got = match (a.layout.slice(sm, i), a.layout.slice(lm, i)) {
            // SAFETY: the CPU has the features.
            (Some(sc), Some(lb)) => unsafe {
                kernel(s, &mut pos, sc, lb, a.plan, a.level, a.empty, o)
            },
            _ => a
                .layout
                .with_row(a.scores, a.labels, i, |sc, lb, valid, i| {
                    super::row_in(s, sc, lb, valid, i, a.plan, a.level, a.empty, o)
                }),
        };
        if let Some(e) = got {
            *f = e;
            done |= 1 << r;
        }
    }
    done
}
