//! The sparse fast path of `evaluate_dense` (and of `evaluate_flat` on grouped
//! cells, a query's run read as a row, by blocks of runs: [`Layout::Runs`]):
//! a row kept as its cells with a positive label, `(rank, label)` in rank
//! order, and kernels over those pairs.  An ndcg reads the row's ideal only
//! when a positive cell is in its top ([`Plan::needs_ideal`]); otherwise its
//! value is 0 and the ideal is not built.
//!
//! When it applies ([`plan`]): `ties="first"`, no `mask=`, an evaluation
//! level and every metric's level above 0, and every metric one of ndcg, dcg
//! (label gains), map/ap, mrr, recall, P, hits (num_rel_ret), hit_rate,
//! r_precision, num_ret, num_rel.  A row
//! takes it when its scores have no NaN, its labels lie below [`LABEL_BOUND`]
//! in magnitude (finite, and no sum of them past the largest float) and it has at
//! most `COUNT_PER_LOG2 * log2(n)` positive labels; any other row (and every
//! error) goes through the general path, which gives the same values.
//!
//! Why the values are the general kernels', bit for bit: above level 0 a cell
//! with a label <= 0 is never relevant and has gain 0, so its terms in the
//! general kernels are `+0.0` (a sum it enters is unchanged: the sums here start
//! at `+0.0`, and a general sum over a non-empty top is never `-0.0`) or are
//! skipped; the kept terms are added in the same (rank) order, counts are
//! integers, and every division is the general kernel's.  Ranks are the
//! general path's counting ranks (`count_ranks`): cells above plus equal cells
//! in lower columns.  Tested bit for bit against the general path
//! (`dense/tests.rs`, `tests/test_dense.py`).
//!
//! Why it is faster: the general path builds a ranked label vector and an
//! ideal from a scan of the whole row, and its map, recall and r_precision
//! kernels rescan the row; here a row costs one scan of its labels (into bit
//! masks of the positive ones), one NaN scan of its scores, and one
//! branch-free count over the scores per positive label.
//!
//! Instruction sets: the row ([`row_in`]) is compiled twice, for the target's
//! baseline (SSE2 on x86-64, what the wheels target; NEON on aarch64) and,
//! on x86-64, inside an AVX2 `#[target_feature]` function called when the CPU
//! has AVX2.  The same Rust code, so the same operations in the same order:
//! integer counts and the metrics' scalar float arithmetic (Rust never fuses
//! a multiply and an add unasked), the same values bit for bit.  AVX2 doubles
//! the lanes of the label scan and the rank counts.  With AVX-512 (F, BW, DQ,
//! VL) a third variant, its own code (`sparse/avx512`), takes contiguous
//! float32 score rows by blocks of [`BLOCK`] rows.  The best set the CPU has
//! is detected once per call; `RANKLENS_SIMD=avx2` caps it at AVX2,
//! `portable` at the baseline, and the tests run every set the CPU has
//! (`dense/tests.rs`, `tests/test_dense.py`).  Measured figures:
//! `docs/design/performance.md`.

use super::{Empty, Matrix, Numbers, Scratch, Valid, COUNT_PER_LOG2, ROWS_AHEAD};
use crate::core::dense::{bf16_to_f64, f16_to_f64, DenseTies};
use crate::core::metrics::query::{discount, discounts};
use crate::core::metrics::{Family, MetricSpec};

// The AVX-512 intrinsics are stable from Rust 1.89 (`build.rs`), past the
// crate's `rust-version`: older compilers build without this module.
#[cfg(all(target_arch = "x86_64", ranklens_avx512))]
#[allow(clippy::incompatible_msrv)]
mod avx512;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ndcg,
    Dcg,
    Map,
    Mrr,
    Recall,
    Precision,
    Hits,
    HitRate,
    RPrecision,
    NumRet,
    NumRel,
}

/// A positive cell: its rank and label.  `repr(C)`: the rank at offset 0,
/// the label at 8 (the AVX-512 row writes them as pairs of 64-bit lanes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Pair(pub(super) u32, pub(super) f64);

/// One metric of the fast path: its kernel, cutoff and relevance level.
#[derive(Clone, Copy, Debug)]
pub(super) struct Metric {
    kind: Kind,
    k: Option<usize>,
    level: f64,
}

/// The instructions the row loops are compiled for, chosen once per call.
/// Ordered: each set's CPUs run the ones before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Simd {
    /// The target's baseline (SSE2 on x86-64, NEON on aarch64).
    Portable,
    /// AVX2 (x86-64), detected at run time.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    Avx2,
    /// AVX-512 F, BW, DQ and VL (x86-64), detected at run time.
    #[cfg_attr(not(all(target_arch = "x86_64", ranklens_avx512)), allow(dead_code))]
    Avx512,
}

impl Simd {
    /// The instruction sets this CPU runs, the baseline first.
    pub(super) fn available() -> Vec<Simd> {
        let mut out = vec![Simd::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                out.push(Simd::Avx2);
            }
            #[cfg(ranklens_avx512)]
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
            {
                out.push(Simd::Avx512);
            }
        }
        out
    }

    /// The best set the CPU runs, at most `RANKLENS_SIMD`'s (`portable`,
    /// `avx2`; the tests run every set the CPU has: same values, bit for bit).
    fn detect() -> Simd {
        let cap = match std::env::var_os("RANKLENS_SIMD") {
            Some(v) if v == "portable" => Simd::Portable,
            Some(v) if v == "avx2" => Simd::Avx2,
            _ => Simd::Avx512,
        };
        #[cfg(test)]
        let cap = cap.min(super::tests::SIMD.with(|c| c.get()));
        Simd::available()
            .into_iter()
            .filter(|&s| s <= cap)
            .max()
            .unwrap_or(Simd::Portable)
    }
}

/// The fast path's metrics and instruction set.
#[derive(Clone, Debug)]
pub(super) struct Plan {
    metrics: Vec<Metric>,
    pub(super) simd: Simd,
    /// The largest cutoff of an ndcg metric (`usize::MAX`: one without a
    /// cutoff, 0: none): a row needs its ideal only when its first positive
    /// cell ranks above it ([`Plan::needs_ideal`]).
    ideal_depth: usize,
    /// [`discounts`], looked up once for every row's [`value`].
    discounts: &'static [f64],
}

impl Plan {
    /// Whether a row whose best positive cell has rank `first` needs its
    /// ideal: an ndcg's DCG is 0 without a positive cell in its top, and then
    /// its value is 0 whatever the ideal ([`value`]).
    #[inline(always)]
    pub(super) fn needs_ideal(&self, first: u32) -> bool {
        (first as usize) < self.ideal_depth
    }
}

/// The fast path's plan, or `None` when some setting or metric needs the
/// general path.
pub(super) fn plan(
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    valid: &Valid<'_>,
) -> Option<Plan> {
    if ties != DenseTies::First || matches!(valid, Valid::Mask(_)) || level <= 0.0 || level.is_nan()
    {
        return None;
    }
    metrics
        .iter()
        .map(|m| {
            let kind = match m.family {
                Family::Ndcg if !m.has_gains() => Kind::Ndcg,
                Family::Dcg if !m.has_gains() => Kind::Dcg,
                Family::Map => Kind::Map,
                Family::Mrr => Kind::Mrr,
                Family::Recall => Kind::Recall,
                Family::Precision => Kind::Precision,
                Family::Hits | Family::NumRelRet => Kind::Hits,
                Family::HitRate => Kind::HitRate,
                Family::RPrecision => Kind::RPrecision,
                Family::NumRet => Kind::NumRet,
                Family::NumRel => Kind::NumRel,
                _ => return None,
            };
            let level = m.level.unwrap_or(level);
            // Above 0 only: at level <= 0 a label-0 cell is relevant.
            (level > 0.0).then_some(Metric {
                kind,
                k: m.k,
                level,
            })
        })
        .collect::<Option<Vec<_>>>()
        .map(|metrics| Plan {
            ideal_depth: metrics
                .iter()
                .filter(|m| m.kind == Kind::Ndcg)
                .map(|m| m.k.unwrap_or(usize::MAX))
                .max()
                .unwrap_or(0),
            metrics,
            simd: Simd::detect(),
            discounts: discounts(),
        })
}

/// The labels the fast path takes lie below this bound in magnitude (2^1000);
/// a row with a label at or past it (or one not finite) goes to the general
/// path.  Why: no sum of a fast-path row's positive labels (at most
/// `COUNT_PER_LOG2 * 64` of them, each below 2^1000) reaches the largest
/// float, so the fast path's DCG and ideal DCG are finite and exact, and its
/// skip of the ideal for a row without a positive cell in its top
/// (`Plan::needs_ideal`) can never hide an ideal past the largest float; the
/// general path keeps such an infinity for the finiteness check
/// (`run::finite`), the error `evaluate` gives.  Float32 and narrower labels
/// cannot reach it.  Rejected: testing the ideal for an infinity in
/// [`value`]: the ideal is not built for most rows.
pub(super) const LABEL_BOUND: f64 = 1.0715086071862673e301;

/// [`LABEL_BOUND`]'s test: `x` is below it in magnitude (false for NaN).
#[inline(always)]
fn bounded(x: f64) -> bool {
    x.abs() < LABEL_BOUND
}

/// The columns of the cells of a contiguous `row` with a positive label into
/// `cols`; `false` when a label is not finite.  Why by bit masks: a chunk of
/// 64 labels is tested into a `u64` (branch-free and vectorised: a compare and
/// a shift per lane), then only its set bits are visited.  A branch on each
/// label mispredicts about once per positive at 5% positive labels, and a
/// branch-free compaction (every cell written, the write position advanced by
/// the test: [`positives_strided`]) runs at one cell per update of the
/// position.
#[inline(always)]
fn positives<T: Copy>(
    row: &[T],
    positive: impl Fn(T) -> bool,
    finite: impl Fn(T) -> bool,
    cols: &mut Vec<u32>,
) -> bool {
    cols.clear();
    let mut all_finite = true;
    for (c, chunk) in row.chunks(64).enumerate() {
        let mut bits = 0u64;
        for (b, &x) in chunk.iter().enumerate() {
            bits |= u64::from(positive(x)) << b;
            all_finite &= finite(x);
        }
        while bits != 0 {
            cols.push((c * 64) as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
    all_finite
}

/// [`positives`] of a strided row (`n` cells): branch-free compaction.
fn positives_strided<T: Copy>(
    row: impl Iterator<Item = T>,
    n: usize,
    positive: impl Fn(T) -> bool,
    finite: impl Fn(T) -> bool,
    cols: &mut Vec<u32>,
) -> bool {
    cols.clear();
    cols.resize(n, 0);
    let mut all_finite = true;
    let mut w = 0;
    // A slice taken once: through the `Vec` each write reloads its fields.
    let cs = &mut cols[..];
    for (j, x) in row.enumerate() {
        all_finite &= finite(x);
        if let Some(c) = cs.get_mut(w) {
            *c = j as u32;
        }
        w += usize::from(positive(x));
    }
    cols.truncate(w);
    all_finite
}

/// The positive cells of the first `n` cells of row `i` of `m` into `cols`
/// (see [`positives`]), and their labels (`conv`) into `labs`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn label_cells<T: Copy>(
    m: &Matrix<'_, T>,
    i: usize,
    n: usize,
    positive: impl Fn(T) -> bool,
    finite: impl Fn(T) -> bool,
    conv: impl Fn(T) -> f64,
    cols: &mut Vec<u32>,
    labs: &mut Vec<f64>,
) -> bool {
    let ok = match m.contiguous_row(i, n) {
        Some(r) => positives(r, positive, finite, cols),
        None => positives_strided((0..n).map(|j| m.get(i, j)), n, positive, finite, cols),
    };
    labs.clear();
    labs.extend(cols.iter().map(|&j| conv(m.get(i, j as usize))));
    ok
}

/// Positive labels of the first `n` cells of row `i` (see [`label_cells`]),
/// converted as `Numbers::load` does.
#[inline(always)]
fn label_row(labels: &Numbers<'_>, i: usize, n: usize, s: &mut Scratch) -> bool {
    let (c, l) = (&mut s.cols, &mut s.labels);
    match labels {
        Numbers::F64(m) => label_cells(m, i, n, |x| x > 0.0, bounded, |x| x + 0.0, c, l),
        Numbers::F32(m) => {
            let f = |x: f32| x as f64 + 0.0;
            label_cells(m, i, n, |x| x > 0.0, f32::is_finite, f, c, l)
        }
        Numbers::F16(m) => {
            let f = |x| f16_to_f64(x) + 0.0;
            label_cells(m, i, n, |x| f(x) > 0.0, |x| f(x).is_finite(), f, c, l)
        }
        Numbers::Bf16(m) => {
            let f = |x| bf16_to_f64(x) + 0.0;
            label_cells(m, i, n, |x| f(x) > 0.0, |x| f(x).is_finite(), f, c, l)
        }
        Numbers::I64(m) => label_cells(m, i, n, |x| x > 0, |_| true, |x| x as f64, c, l),
        Numbers::I32(m) => label_cells(m, i, n, |x| x > 0, |_| true, |x| x as f64, c, l),
        Numbers::I8(m) => label_cells(m, i, n, |x| x > 0, |_| true, |x| x as f64, c, l),
        Numbers::U8(m) => label_cells(m, i, n, |x| x > 0, |_| true, |x| x as f64, c, l),
    }
}

/// Row `i` through the fast path: `Some(empty)` with `out` written, or `None`
/// when the row needs the general path (NaN scores, labels not finite, too
/// many positive labels).
#[allow(clippy::too_many_arguments)]
pub(super) fn row(
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
    match plan.simd {
        #[cfg(all(target_arch = "x86_64", ranklens_avx512))]
        Simd::Avx512 => {
            // SAFETY: `Simd::Avx512` is chosen only when the CPU has the
            // features `avx512::row` needs (`Simd::available`).
            unsafe { avx512::row(s, scores, labels, valid, i, plan, level, empty, out) }
        }
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => {
            // SAFETY: `Simd::Avx2` is chosen only when the CPU has AVX2
            // (`Simd::detect`), the one requirement of `row_avx2`.
            unsafe { row_avx2(s, scores, labels, valid, i, plan, level, empty, out) }
        }
        _ => row_in(s, scores, labels, valid, i, plan, level, empty, out),
    }
}

/// Rows a block of [`rows`] holds (a bit each in its result).
pub(super) const BLOCK: usize = 64;

/// Where the rows of [`rows`] lie.
#[derive(Clone, Copy, Debug)]
pub(super) enum Layout<'a> {
    /// Row `i` of the matrices, its first `valid.row_len(i)` cells.
    Matrix(&'a Valid<'a>),
    /// Row `i` is cells `offsets[i]..offsets[i + 1]` of one-row matrices
    /// (`evaluate_flat`'s groups of sorted `indexes`).
    Runs(&'a [i64]),
}

impl Layout<'_> {
    /// Whether the cells read of each row lie apart from the next row's
    /// (`lengths=`, or a view of the first columns of wider rows): then the
    /// rows [`ROWS_AHEAD`] on are asked for ([`Layout::prefetch`]).  Why:
    /// there each row is a cache miss the hardware does not fetch ahead.
    /// Full rows take no prefetch (the hardware fetches them ahead itself).
    pub(super) fn gapped(&self, scores: &Numbers<'_>, labels: &Numbers<'_>) -> bool {
        match self {
            Layout::Matrix(Valid::Lengths(_)) => true,
            Layout::Matrix(_) => {
                let (_, cols) = scores.shape();
                scores.gapped_prefixes(cols) || labels.gapped_prefixes(cols)
            }
            Layout::Runs(_) => false,
        }
    }

    /// Ask for the cells of row `i` (a hint; nothing past the last row).
    #[inline(always)]
    pub(super) fn prefetch(&self, scores: &Numbers<'_>, labels: &Numbers<'_>, i: usize) {
        if let Layout::Matrix(valid) = self {
            let (rows, cols) = scores.shape();
            if i < rows {
                let n = valid.row_len(i, cols);
                scores.prefetch_prefix(i, n);
                labels.prefetch_prefix(i, n);
            }
        }
    }

    /// The cells of row `i` of `m` when they lie contiguous.
    #[inline(always)]
    pub(super) fn slice<'m, T: Copy>(&self, m: &Matrix<'m, T>, i: usize) -> Option<&'m [T]> {
        match self {
            Layout::Matrix(valid) => m.contiguous_row(i, valid.row_len(i, m.cols())),
            Layout::Runs(offsets) => {
                let (a, b) = run(offsets, i)?;
                m.run(a, b)
            }
        }
    }

    /// Row `i` through `f`, given as a row of matrices and its validity:
    /// row `i` itself, or a run's cells as a one-row matrix (row 0).
    #[inline(always)]
    pub(super) fn with_row<R>(
        &self,
        scores: &Numbers<'_>,
        labels: &Numbers<'_>,
        i: usize,
        f: impl FnOnce(&Numbers<'_>, &Numbers<'_>, &Valid<'_>, usize) -> Option<R>,
    ) -> Option<R> {
        match self {
            Layout::Matrix(valid) => f(scores, labels, valid, i),
            Layout::Runs(offsets) => {
                let (a, b) = run(offsets, i)?;
                f(
                    &scores.columns(a, b)?,
                    &labels.columns(a, b)?,
                    &Valid::All,
                    0,
                )
            }
        }
    }
}

/// The cells of run `i`: `offsets[i]..offsets[i + 1]`.
#[inline(always)]
fn run(offsets: &[i64], i: usize) -> Option<(usize, usize)> {
    let a = usize::try_from(*offsets.get(i)?).ok()?;
    let b = usize::try_from(*offsets.get(i + 1)?).ok()?;
    (a <= b).then_some((a, b))
}

/// Rows `i0..i0 + flags.len()` (at most [`BLOCK`]) through the fast path,
/// `out` their values (a row's metrics after another): a bit set in the
/// result for each row done (`flags` written, as [`row`]'s `Some`), the others
/// left to the general path.
#[allow(clippy::too_many_arguments)]
pub(super) fn rows(
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
    let flags = match flags.get_mut(..BLOCK) {
        Some(f) => f,
        None => flags,
    };
    match plan.simd {
        #[cfg(all(target_arch = "x86_64", ranklens_avx512))]
        Simd::Avx512 => {
            // SAFETY: `Simd::Avx512` is chosen only when the CPU has the
            // features `avx512::rows` needs (`Simd::available`); at most 64
            // rows.
            unsafe {
                avx512::rows(
                    s, scores, labels, layout, i0, plan, level, empty, out, flags,
                )
            }
        }
        _ => {
            let nm = plan.metrics.len().max(1);
            let mut done = 0u64;
            let ahead = layout.gapped(scores, labels);
            for (r, (o, f)) in out.chunks_mut(nm).zip(flags.iter_mut()).enumerate() {
                if ahead {
                    layout.prefetch(scores, labels, i0 + r + ROWS_AHEAD);
                }
                let got = layout.with_row(scores, labels, i0 + r, |sc, lb, valid, i| {
                    row(s, sc, lb, valid, i, plan, level, empty, o)
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

/// [`row_in`] compiled for AVX2: the same code, its loops 8 float32 lanes
/// wide.  Callers must check that the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn row_avx2(
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
    row_in(s, scores, labels, valid, i, plan, level, empty, out)
}

/// [`row`], inlined into each instruction set's copy.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn row_in(
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
    if u32::try_from(n).is_err() || !label_row(labels, i, n, s) {
        return None;
    }
    // Ranks of the positive cells, on the scores as they lie.
    let ok = match scores {
        Numbers::F32(m) => {
            let mut buf = std::mem::take(&mut s.scores32);
            let ok = rank_cells(m.row_prefix(i, n, &mut buf), &s.cols, &mut s.order);
            s.scores32 = buf;
            ok
        }
        Numbers::F64(m) => {
            let mut buf = std::mem::take(&mut s.scores);
            let ok = rank_cells(m.row_prefix(i, n, &mut buf), &s.cols, &mut s.order);
            s.scores = buf;
            ok
        }
        other => {
            other.load(i, &mut s.scores);
            s.scores.truncate(n);
            rank_cells(&s.scores, &s.cols, &mut s.order)
        }
    };
    if !ok {
        return None;
    }
    if !s.labels.iter().any(|&l| l >= level) {
        out.fill(empty.value());
        return Some(true);
    }
    let log2n = usize::BITS as usize - n.leading_zeros() as usize;
    if s.labels.len() > COUNT_PER_LOG2 * log2n {
        return None;
    }
    // (rank, label) in rank order.  The ranks are distinct: each pair goes
    // to the place given by the number of smaller ranks.
    // Each element goes to the place given by the count of those before
    // it, so every slot is written once: the buffers only grow, never
    // filled.
    let p = s.labels.len();
    if s.pairs.len() < p {
        s.pairs.resize(p, Pair(0, 0.0));
    }
    if s.ideal.len() < p {
        s.ideal.resize(p, 0.0);
    }
    let (Some(pairs), Some(ideal)) = (s.pairs.get_mut(..p), s.ideal.get_mut(..p)) else {
        return None;
    };
    for (&r, &l) in s.order.iter().zip(&s.labels) {
        let at = s.order.iter().map(|&q| usize::from(q < r)).sum::<usize>();
        if let Some(x) = pairs.get_mut(at) {
            *x = Pair(r, l);
        }
    }
    if pairs.first().is_some_and(|p| plan.needs_ideal(p.0)) {
        place_ideal(&s.labels, ideal);
    }
    for (o, m) in out.iter_mut().zip(&plan.metrics) {
        *o = value(m, pairs, ideal, n, plan.discounts, |d, lv| {
            count_pairs(pairs, d, lv)
        });
    }
    Some(false)
}

/// The ideal: the positive `labels`, descending (the general path's
/// `total_cmp` order: they are finite and positive, and equal ones have equal
/// bits), into `ideal` (as long), each placed by the count of the larger
/// labels and of the equal ones before it.  Why placed rather than sorted: a
/// few elements, where the library sort's call outweighs the sort and an
/// insertion sort's compares mispredict.
#[inline(always)]
pub(super) fn place_ideal(labels: &[f64], ideal: &mut [f64]) {
    for (q, &l) in labels.iter().enumerate() {
        let above = labels.iter().map(|&m| usize::from(m > l)).sum::<usize>();
        let tied = labels[..q]
            .iter()
            .map(|&m| usize::from(m == l))
            .sum::<usize>();
        if let Some(x) = ideal.get_mut(above + tied) {
            *x = l;
        }
    }
}

/// The rank of each cell in `cols`: cells with a higher score, plus cells with
/// an equal score in a lower column (`count_ranks`).  `false` when a score is
/// NaN.
#[inline(always)]
fn rank_cells<T: Copy + PartialOrd>(row: &[T], cols: &[u32], ranks: &mut Vec<u32>) -> bool {
    #[allow(clippy::eq_op)]
    let nan = row.iter().fold(false, |a, &x| a | (x != x));
    if nan {
        return false;
    }
    ranks.clear();
    for &c in cols {
        let j = c as usize;
        let (Some(&x), Some(before)) = (row.get(j), row.get(..j)) else {
            return false;
        };
        // One pass over the whole row (few leftover cells): cells above, and
        // cells equal (the cell itself included); the equal ones in lower
        // columns, rare, counted only when there are some.
        let (above, equal) = row.iter().fold((0u32, 0u32), |(a, e), &y| {
            (a + u32::from(y > x), e + u32::from(y == x))
        });
        let tied_before = if equal > 1 {
            before.iter().fold(0u32, |a, &y| a + u32::from(y == x))
        } else {
            0
        };
        ranks.push(above + tied_before);
    }
    true
}

/// The pairs with a label at least `lv` ([`value`]'s counts): ranked above
/// `depth`, or all of them (`None`), by a loop over the pairs.
#[inline(always)]
fn count_pairs(pairs: &[Pair], depth: Option<usize>, lv: f64) -> usize {
    let depth = depth.unwrap_or(usize::MAX);
    pairs
        .iter()
        .take_while(|p| (p.0 as usize) < depth)
        .filter(|p| p.1 >= lv)
        .count()
}

/// [`discount`] past its table (ranks from 4096: rare, out of line).
#[cold]
#[inline(never)]
fn discount_past(i: usize) -> f64 {
    discount(i)
}

/// One metric on the row's `(rank, label)` pairs (rank order), `ideal` its
/// positive labels descending, `n` its length: the general kernel's terms in
/// its order (see the module doc).  `count(depth, lv)`: the pairs with a
/// label at least `lv` ranked above `depth` (all of them: `None`), as
/// [`count_pairs`] counts them (the AVX-512 row counts over registers).
#[inline(always)]
fn value(
    m: &Metric,
    pairs: &[Pair],
    ideal: &[f64],
    n: usize,
    discounts: &[f64],
    count: impl Fn(Option<usize>, f64) -> usize,
) -> f64 {
    let depth = m.k.map_or(n, |k| k.min(n));
    let lv = m.level;
    // `discount`, its table read once.
    let disc = |i: usize| match discounts.get(i) {
        Some(&d) => d,
        None => discount_past(i),
    };
    let top = || {
        pairs
            .iter()
            .take_while(move |p| (p.0 as usize) < depth)
            .copied()
    };
    let rel_in_top = || count(Some(depth), lv);
    let num_rel = || count(None, lv);
    match m.kind {
        Kind::Ndcg | Kind::Dcg => {
            let dcg = top().fold(0.0, |a, Pair(r, l)| a + l / disc(r as usize));
            if m.kind == Kind::Dcg {
                return dcg;
            }
            // No positive cell in the top: `0 / idcg` is `+0.0` (the sums
            // start at `+0.0` and add positive terms), as is the value when
            // `idcg` is 0; the ideal is not read (the caller may leave it
            // unwritten: `Plan::needs_ideal`).
            if dcg == 0.0 {
                return 0.0;
            }
            let ideal = match m.k {
                Some(k) if k < ideal.len() => &ideal[..k],
                _ => ideal,
            };
            // A loop, not a fold: a fold is compiled out of line, called
            // from the AVX-512 row with its vector registers saved around it.
            let mut idcg = 0.0;
            for (i, &g) in ideal.iter().enumerate() {
                idcg += g / disc(i);
            }
            if idcg > 0.0 {
                dcg / idcg
            } else {
                0.0
            }
        }
        Kind::Map => {
            let r = num_rel();
            if r == 0 {
                return 0.0;
            }
            let mut found = 0usize;
            let mut sum = 0.0;
            for Pair(rank, _) in top().filter(|p| p.1 >= lv) {
                found += 1;
                sum += found as f64 / (rank as usize + 1) as f64;
            }
            sum / r as f64
        }
        Kind::Mrr => match top().find(|p| p.1 >= lv) {
            Some(Pair(rank, _)) => 1.0 / (rank as usize + 1) as f64,
            None => 0.0,
        },
        Kind::Recall => {
            let r = num_rel();
            if r == 0 {
                return 0.0;
            }
            rel_in_top() as f64 / r as f64
        }
        Kind::Precision => {
            let denom = m.k.unwrap_or(n);
            if denom == 0 {
                0.0
            } else {
                rel_in_top() as f64 / denom as f64
            }
        }
        Kind::Hits => rel_in_top() as f64,
        Kind::HitRate => {
            if rel_in_top() > 0 {
                1.0
            } else {
                0.0
            }
        }
        Kind::RPrecision => {
            let r = num_rel();
            if r == 0 {
                return 0.0;
            }
            let hits = count(Some(r.min(n)), lv);
            hits as f64 / r as f64
        }
        Kind::NumRet => depth as f64,
        Kind::NumRel => num_rel() as f64,
    }
}
