//! The sparse row with AVX-512 (x86-64, detected at run time): a contiguous
//! float32 score row with a contiguous row of int64, int32, int8, uint8,
//! float64 or float32 labels; any other row runs the shared code
//! ([`super::row_in`]) compiled for AVX-512.
//!
//! Why written out rather than left to the compiler: AVX-512 compares write
//! mask registers, so the label scan is a compare per 8 (int64, float64) to
//! 64 (int8) labels, the positive ones compacted without a branch
//! (`vpcompress` of their columns and labels into a register, stored whole);
//! the NaN scan is an unordered compare per 16 scores into a mask, or, in
//! rows of up to 16 positive cells, a sum of the scores in the first pass
//! of counts (NaN when a score is: a row with both infinities goes the
//! general way, with the same values); the rank
//! counts take two positive cells a pass over the scores, two 8-lane
//! compares each per 8 scores subtracted into vectors of counts, summed
//! once.  Up to 8 positive cells (most rows at 5% labels) are then placed
//! without a sort and without a branch a cell: the ranks are distinct, so a
//! cell's place among the pairs is the number of smaller ranks (one compare
//! of its key against the row's 8 keys in a register, a popcount), and its
//! place in the ideal the number of larger labels and of equal ones before
//! it.  9 to 16 are placed the same way over two registers ([`mid_row`]).
//! More are placed through a bitmap of the row's ranks: each label goes to
//! slot `rank`, and the set bits, walked in order, give the pairs in rank
//! order.  Rows come by blocks ([`rows`]): the dtypes are matched once a
//! block.
//!
//! Same values bit for bit as the shared code: the same positive cells in
//! column order, the same ranks (cells above, plus equal cells in lower
//! columns: `y > x`, `y == x` are the ordered compares `_CMP_GT_OQ`,
//! `_CMP_EQ_OQ`, on a row without NaN), the same pairs and ideal, and the
//! same metric kernels ([`super::value`]).  Tested against the general path
//! (`dense/tests.rs`, `tests/test_dense.py`).

use super::{place_ideal, value, Layout, Pair, Plan};
use crate::core::dense::{Empty, Matrix, Numbers, Scratch, Valid, COUNT_PER_LOG2};
use std::arch::x86_64::*;

/// A label dtype the AVX-512 row scans in place.
trait Label: Copy {
    /// The bits of the positive labels among the `len <= 64` labels at `p`
    /// (bit `b`: label `b`), and whether they are all finite.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and DQ, and `p..p + len` is readable.
    unsafe fn scan(p: *const Self, len: usize) -> (u64, bool);

    /// The label as the shared code converts it (`Numbers::load`).
    fn to_f64(self) -> f64;

    /// The columns of the positive labels of `lb` and their labels
    /// ([`Label::to_f64`]) into `pos`, in column order: whether all the
    /// labels are finite and at most `limit <= MAX_POSITIVE` are positive
    /// (else `pos` is left part-filled, and the row goes to the shared code).
    ///
    /// # Safety
    /// As [`row`].
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
    unsafe fn positives(lb: &[Self], limit: usize, pos: &mut Positives) -> bool {
        pos.len = 0;
        let n = lb.len();
        let mut finite = true;
        let mut c = 0;
        while c < n {
            let len = (n - c).min(64);
            // SAFETY: `c + len <= n`; the CPU has the features.
            let (mut bits, ok) = unsafe { Self::scan(lb.as_ptr().add(c), len) };
            finite &= ok;
            while bits != 0 {
                let j = c + bits.trailing_zeros() as usize;
                let (Some(col), Some(lab)) = (pos.cols.get_mut(pos.len), pos.labs.get_mut(pos.len))
                else {
                    return false;
                };
                *col = j as u32;
                *lab = lb.get(j).map_or(0.0, |&l| l.to_f64());
                pos.len += 1;
                if pos.len > limit {
                    return false;
                }
                bits &= bits - 1;
            }
            c += 64;
        }
        finite
    }
}

/// The most positive cells a row of the fast path has: `COUNT_PER_LOG2 *
/// log2(n)` for `n < 2^16` cells ([`kernel`]).
const MAX_POSITIVE: usize = COUNT_PER_LOG2 * 16;

/// A row's positive cells, in column order: `cols[..len]` and their labels
/// `labs[..len]`, with 16 spare slots for [`positives64`]'s last stores.
///
/// Why on the stack (one a block of rows, [`block`]) and not in the heap's
/// `Scratch`: [`positives64`] stores 8 lanes at a time at the next free
/// slot, and when that slot's address matched a stack slot the loop reloads
/// in its low 12 bits (4K aliasing: the load waits for the store), every
/// row paid for it.  Where the heap put the buffer decided it: with a
/// one-thread pool, whose thread took the process's first malloc arena, 23
/// ms on 100k x 100 rows against 15.5 with `MALLOC_ARENA_MAX=1` (and 18.5
/// with AVX2), the profile's samples on the store.  A buffer in the same
/// stack region as the reload cannot alias it.
pub(super) struct Positives {
    cols: [u32; MAX_POSITIVE + 16],
    labs: [f64; MAX_POSITIVE + 16],
    len: usize,
}

impl Positives {
    pub(super) fn new() -> Positives {
        Positives {
            cols: [0; MAX_POSITIVE + 16],
            labs: [0.0; MAX_POSITIVE + 16],
            len: 0,
        }
    }

    fn cols(&self) -> &[u32] {
        self.cols.get(..self.len).unwrap_or(&[])
    }

    fn labs(&self) -> &[f64] {
        self.labs.get(..self.len).unwrap_or(&[])
    }
}

/// [`Label::positives`] of 16, then 8, lanes of 64 bits at a time,
/// branch-free: the lanes of the positive labels (`positive`: a mask)
/// compressed in a register (their columns and converted labels, `convert`)
/// and stored whole at the next free place, which moves by their count.
/// Why: the bits' walk branches on every positive label.  Why 16 lanes a
/// step: one compress of the columns for two chunks (13.5 -> 13.25 ms on
/// 100k x 100, one thread, alternated processes).  Stops once more than
/// `limit <= MAX_POSITIVE` are kept: a store starts at a count `<= limit +
/// 8` and `pos` has 16 slots past `MAX_POSITIVE`, so every store fits.
///
/// # Safety
/// As [`row`]; `lb.len() < 2^31`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn positives64<T>(
    lb: &[T],
    positive: impl Fn(__m512i) -> __mmask8,
    convert: impl Fn(__m512i) -> __m512d,
    finite: impl Fn(__m512i) -> bool,
    limit: usize,
    pos: &mut Positives,
) -> bool {
    let n = lb.len();
    let limit = limit.min(MAX_POSITIVE);
    let (cp, lp) = (pos.cols.as_mut_ptr(), pos.labs.as_mut_ptr());
    // Two chunks a step where 16 lanes remain: one compress of their 16
    // columns, the labels stored at `w` and after the first chunk's.
    let (mut c, mut w16) = (0usize, 0usize);
    let mut idx16 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut ok16 = true;
    while c + 16 <= n {
        // SAFETY: `c + 16 <= n` (8-byte elements, `T` being i64 or f64).
        let (v0, v1) = unsafe {
            let p = lb.as_ptr().add(c) as *const __m512i;
            (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1)))
        };
        ok16 &= finite(v0) & finite(v1);
        let (k0, k1) = (positive(v0), positive(v1));
        let j = _mm512_maskz_compress_epi32(_mm512_kunpackb(k1.into(), k0.into()), idx16);
        let (l0, l1) = (
            _mm512_maskz_compress_pd(k0, convert(v0)),
            _mm512_maskz_compress_pd(k1, convert(v1)),
        );
        let c0 = k0.count_ones() as usize;
        // SAFETY: `w16 <= limit <= MAX_POSITIVE` (checked below before the
        // next store): 16 lanes at `w16` and 8 at `w16 + c0 <= w16 + 8` lie
        // inside the arrays' `MAX_POSITIVE + 16`.
        unsafe {
            _mm512_storeu_si512(cp.add(w16) as *mut __m512i, j);
            _mm512_storeu_pd(lp.add(w16), l0);
            _mm512_storeu_pd(lp.add(w16 + c0), l1);
        }
        w16 += c0 + k1.count_ones() as usize;
        if w16 > limit {
            return false;
        }
        idx16 = _mm512_add_epi32(idx16, _mm512_set1_epi32(16));
        c += 16;
    }
    let mut idx = _mm256_add_epi32(
        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
        _mm256_set1_epi32(c as i32),
    );
    let eight = _mm256_set1_epi32(8);
    let (mut w, mut ok) = (w16, ok16);
    // One chunk of 8 lanes, `k` the lanes inside `lb`: `false` once more
    // than `limit` are kept.
    let mut step = |v: __m512i, k: __mmask8| {
        ok &= finite(v);
        let kept = positive(v) & k;
        let j = _mm256_maskz_compress_epi32(kept, idx);
        let l = _mm512_maskz_compress_pd(kept, convert(v));
        // SAFETY: `w <= limit <= MAX_POSITIVE` (checked below before the
        // next store), so the 8 lanes at `w` lie inside the arrays'
        // `MAX_POSITIVE + 16`.
        unsafe {
            _mm256_storeu_si256(cp.add(w) as *mut __m256i, j);
            _mm512_storeu_pd(lp.add(w), l);
        }
        w += kept.count_ones() as usize;
        idx = _mm256_add_epi32(idx, eight);
        w <= limit
    };
    // Whole chunks by plain loads, the tail by a masked one.  Why: a mask
    // computed for every chunk was 8 of the loop's 30 instructions (the
    // loop now 16); with the NaN scan's the same way, 15.3 -> 14.5 ms on
    // 100k x 100 (one thread, best of 15, alternated processes).
    let full = n & !7;
    while c < full {
        // SAFETY: `c + 8 <= n` (8-byte elements, `T` being i64 or f64).
        let v = unsafe { _mm512_loadu_si512(lb.as_ptr().add(c) as *const __m512i) };
        if !step(v, 0xff) {
            return false;
        }
        c += 8;
    }
    if c < n {
        let k = low_bits(n - c) as u8;
        // SAFETY: the lanes loaded are those of `k`, inside `lb`.
        let v = unsafe { _mm512_maskz_loadu_epi64(k, lb.as_ptr().add(c) as *const i64) };
        if !step(v, k) {
            return false;
        }
    }
    pos.len = w;
    ok
}

/// The low `len` bits set (`len <= 64`).
#[inline(always)]
fn low_bits(len: usize) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

impl Label for i64 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const i64, len: usize) -> (u64, bool) {
        let zero = _mm512_setzero_si512();
        let mut bits = 0u64;
        let mut c = 0;
        while c < len {
            let k = low_bits(len - c).min(0xff) as u8;
            // SAFETY: the lanes loaded are those of `k`, inside `p..p + len`.
            let v = unsafe { _mm512_maskz_loadu_epi64(k, p.add(c)) };
            bits |= u64::from(_mm512_cmpgt_epi64_mask(v, zero)) << c;
            c += 8;
        }
        (bits, true)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
    unsafe fn positives(lb: &[i64], limit: usize, pos: &mut Positives) -> bool {
        let zero = _mm512_setzero_si512();
        // SAFETY: as this function (`lb.len() < 2^16`: `kernel`).
        unsafe {
            positives64(
                lb,
                |v| _mm512_cmpgt_epi64_mask(v, zero),
                // `x as f64`: round to nearest, as `vcvtqq2pd`.
                |v| _mm512_cvtepi64_pd(v),
                |_| true,
                limit,
                pos,
            )
        }
    }
}

impl Label for i32 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const i32, len: usize) -> (u64, bool) {
        let zero = _mm512_setzero_si512();
        let mut bits = 0u64;
        let mut c = 0;
        while c < len {
            let k = low_bits(len - c).min(0xffff) as u16;
            // SAFETY: the lanes loaded are those of `k`, inside `p..p + len`.
            let v = unsafe { _mm512_maskz_loadu_epi32(k, p.add(c)) };
            bits |= u64::from(_mm512_cmpgt_epi32_mask(v, zero)) << c;
            c += 16;
        }
        (bits, true)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Label for i8 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const i8, len: usize) -> (u64, bool) {
        // SAFETY: the lanes loaded are those of the mask, inside `p..p + len`.
        let v = unsafe { _mm512_maskz_loadu_epi8(low_bits(len), p) };
        (_mm512_cmpgt_epi8_mask(v, _mm512_setzero_si512()), true)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

impl Label for u8 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const u8, len: usize) -> (u64, bool) {
        // SAFETY: the lanes loaded are those of the mask, inside `p..p + len`.
        let v = unsafe { _mm512_maskz_loadu_epi8(low_bits(len), p as *const i8) };
        (_mm512_test_epi8_mask(v, v), true)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// `_mm512_fpclass_*_mask` classes: QNaN, +inf, -inf, SNaN.
const NOT_FINITE: i32 = 0x01 | 0x08 | 0x10 | 0x80;

impl Label for f64 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const f64, len: usize) -> (u64, bool) {
        let zero = _mm512_setzero_pd();
        let (mut bits, mut bad) = (0u64, 0u8);
        let mut c = 0;
        while c < len {
            let k = low_bits(len - c).min(0xff) as u8;
            // SAFETY: the lanes loaded are those of `k`, inside `p..p + len`.
            let v = unsafe { _mm512_maskz_loadu_pd(k, p.add(c)) };
            bits |= u64::from(_mm512_cmp_pd_mask::<_CMP_GT_OQ>(v, zero)) << c;
            bad |= _mm512_fpclass_pd_mask::<NOT_FINITE>(v);
            c += 8;
        }
        (bits, bad == 0)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self + 0.0
    }

    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
    unsafe fn positives(lb: &[f64], limit: usize, pos: &mut Positives) -> bool {
        let zero = _mm512_setzero_pd();
        // SAFETY: as this function (`lb.len() < 2^16`: `kernel`).
        unsafe {
            positives64(
                lb,
                |v| _mm512_cmp_pd_mask::<_CMP_GT_OQ>(_mm512_castsi512_pd(v), zero),
                |v| _mm512_add_pd(_mm512_castsi512_pd(v), zero),
                |v| _mm512_fpclass_pd_mask::<NOT_FINITE>(_mm512_castsi512_pd(v)) == 0,
                limit,
                pos,
            )
        }
    }
}

impl Label for f32 {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512dq")]
    unsafe fn scan(p: *const f32, len: usize) -> (u64, bool) {
        let zero = _mm512_setzero_ps();
        let (mut bits, mut bad) = (0u64, 0u16);
        let mut c = 0;
        while c < len {
            let k = low_bits(len - c).min(0xffff) as u16;
            // SAFETY: the lanes loaded are those of `k`, inside `p..p + len`.
            let v = unsafe { _mm512_maskz_loadu_ps(k, p.add(c)) };
            bits |= u64::from(_mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, zero)) << c;
            bad |= _mm512_fpclass_ps_mask::<NOT_FINITE>(v);
            c += 16;
        }
        (bits, bad == 0)
    }

    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64 + 0.0
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
/// once, and one call into this function rather than one a row (the
/// dispatch cost 1.5 ms of 16 on 100k rows).
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

/// The row of float32 scores `sc` and labels `lb` (as long, `< 2^32` cells).
///
/// # Safety
/// As [`row`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
#[allow(clippy::too_many_arguments)]
unsafe fn kernel<L: Label>(
    s: &mut Scratch,
    pos: &mut Positives,
    sc: &[f32],
    lb: &[L],
    plan: &Plan,
    level: f64,
    empty: Empty,
    out: &mut [f64],
) -> Option<bool> {
    let n = sc.len().min(lb.len());
    // `n < 2^16`: `count`'s two 16-bit halves.
    if n > 0xffff {
        return None;
    }
    // The positive labels, in column order; at most `COUNT_PER_LOG2 *
    // log2(n) <= MAX_POSITIVE` of them.
    let log2n = usize::BITS as usize - n.leading_zeros() as usize;
    // SAFETY: the CPU has the features; `n < 2^16`.
    if !unsafe { L::positives(lb.get(..n)?, COUNT_PER_LOG2 * log2n, pos) } {
        return None;
    }
    let (cols, labs) = (pos.cols(), pos.labs());
    let p = cols.len();
    // NaN scores: the general path names the cell.  A row of up to 16
    // positive cells with a relevant one learns it from its first pass of
    // counts ([`count2`]'s sum of the scores), before anything is written
    // but its own locals; the others (no relevant label, or more than 16
    // positive cells, whose places go to the scratch) scan the scores first.
    let relevant = labs.iter().any(|&l| l >= level);
    let fused = relevant && p <= 16;
    // SAFETY: the CPU has the features.
    if !fused && unsafe { nan_in(sc) } {
        return None;
    }
    if !relevant {
        out.fill(empty.value());
        return Some(true);
    }
    // Each positive cell's rank into its slot and the bitmap of ranks.
    let words = n.div_ceil(64);
    if s.bitmap.len() < words {
        s.bitmap.resize(words, 0);
    }
    if s.slots.len() < n {
        s.slots.resize(n, 0.0);
    }
    // Up to 8 positive cells (most rows at 5% labels): placed by counts
    // over a register (`small`); 9 to 16: by counts over two ([`mid`]);
    // more: through the bitmap of ranks.
    let small = p <= 8;
    let mid = !small && p <= 16;
    // The keys `rank << 32 | q` of a small row's cells, `u64::MAX` past `p`,
    // in a register.  Why not an array: the register load of 8 separate
    // stores waits for them (no store forwarding across stores).
    let mut keys = _mm512_set1_epi64(-1);
    // The same ranks, for the scalar stores of the pairs.
    let mut ranks = [0u32; 8];
    // A mid row's ranks.
    let mut mid_ranks = [0u32; 16];
    // Each positive cell's rank: its slot (its key when `small`).
    let mut place = |keys: &mut __m512i,
                     ranks: &mut [u32; 8],
                     q: usize,
                     j: usize,
                     x: f32,
                     above: u32,
                     equal: u32| {
        let tied_before = if equal > 1 {
            sc.get(..j)
                .map_or(0, |b| b.iter().filter(|&&y| y == x).count() as u32)
        } else {
            0
        };
        let r = above + tied_before;
        let l = labs.get(q).copied().unwrap_or(0.0);
        if small {
            // Lane `q` (a masked broadcast; `q < 8`).
            *keys = _mm512_mask_set1_epi64(*keys, 1u8 << (q & 7), rank_key(r, q) as i64);
            ranks[q & 7] = r;
        } else if mid {
            mid_ranks[q & 15] = r;
        } else if let (Some(w), Some(slot)) = (
            s.bitmap.get_mut(r as usize / 64),
            s.slots.get_mut(r as usize),
        ) {
            *w |= 1 << (r % 64);
            *slot = l;
        }
    };
    let cell = |q: usize| {
        let j = cols.get(q).copied().unwrap_or(0) as usize;
        (j, sc.get(j).copied().unwrap_or(0.0))
    };
    // Two positive cells a pass over the scores (the last one twice when
    // their number is odd: placed twice, the same way).
    let mut q = 0;
    // Whether the first pass summed a NaN (`fused` rows).
    let mut nan = false;
    while q < p {
        let q1 = if q + 1 < p { q + 1 } else { q };
        let ((j0, x0), (j1, x1)) = (cell(q), cell(q1));
        // SAFETY: the CPU has the features.
        let t = if q == 0 && fused {
            let (t, bad) = unsafe { count2::<true>(sc, x0, x1) };
            nan = bad;
            t
        } else {
            unsafe { count2::<false>(sc, x0, x1) }.0
        };
        let (t0, t1) = (
            _mm_cvtsi128_si32(t) as u32,
            _mm_extract_epi32::<1>(t) as u32,
        );
        if small && t0 >> 16 <= 1 && t1 >> 16 <= 1 {
            // No other cell equals either: the keys of lanes `q` and `q1`
            // at once (the counts widened, shifted, their lanes or-ed in),
            // lane `q1` only when it is another cell.
            let r = _mm_cvtepu32_epi64(_mm_and_si128(t, _mm_set1_epi32(0xffff)));
            let kv = _mm_or_si128(
                _mm_slli_epi64::<32>(r),
                _mm_set_epi64x(q as i64 + 1, q as i64),
            );
            let lanes = if q1 > q { 0b11u8 } else { 0b01 };
            keys = _mm512_mask_broadcast_i64x2(keys, lanes << (q & 6), kv);
            ranks[q & 7] = t0 & 0xffff;
            ranks[(q + 1) & 7] = t1 & 0xffff;
        } else {
            place(&mut keys, &mut ranks, q, j0, x0, t0 & 0xffff, t0 >> 16);
            place(&mut keys, &mut ranks, q1, j1, x1, t1 & 0xffff, t1 >> 16);
        }
        q += 2;
    }
    if nan {
        return None;
    }
    if mid {
        // SAFETY: the CPU has the features; `9 <= p <= 16`.
        unsafe { mid_row(&mid_ranks, labs, n, plan, out) };
        return Some(false);
    }
    if small {
        // Each pair at the count of the smaller keys: every place written
        // once, the places independent of each other.  Why not a sorting
        // network of the keys in the register (Batcher's 8, 6 layers of
        // permute, min and max; the labels permuted after them): its ~50
        // cycles of latency were on every row's path to its metrics.  100k
        // x 100 float32, 5% int64 labels, 5 metrics, one thread, best of 15,
        // alternated processes: 14.5 -> 13.6-13.8 ms, the ideal placed the
        // same way in place of its own network.
        let mut pairs = [Pair(0, 0.0); 8];
        for (q, (&r, &l)) in ranks.iter().zip(labs).enumerate() {
            let at = _mm512_cmplt_epu64_mask(keys, _mm512_set1_epi64(rank_key(r, q) as i64))
                .count_ones();
            if let Some(x) = pairs.get_mut(at as usize) {
                *x = Pair(r, l);
            }
        }
        let pairs = pairs.get(..p)?;
        // The labels in a register (0 past `p`), for the ideal and the
        // metrics' counts.
        let k = low_bits(p) as u8;
        // SAFETY: the lanes loaded are those of `k`, inside `labs` (`p` long).
        let lab = unsafe { _mm512_maskz_loadu_pd(k, labs.as_ptr()) };
        // The ideal only when an ndcg reads it (`Plan::needs_ideal`).
        let mut ideal = [0.0f64; 8];
        if pairs.first().is_some_and(|x| plan.needs_ideal(x.0)) {
            // The labels descending, each placed by the count of the
            // larger ones and of the equal ones before it (the shared
            // code's `place_ideal`, one compare pair over a register a
            // label; the padding lanes, 0, are below every positive label).
            for (q, &l) in labs.iter().enumerate() {
                let b = _mm512_set1_pd(l);
                let above = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(lab, b).count_ones();
                let tied =
                    (_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(lab, b) & low_bits(q) as u8).count_ones();
                if let Some(x) = ideal.get_mut((above + tied) as usize) {
                    *x = l;
                }
            }
        }
        let ideal = ideal.get(..p)?;
        // The metrics' counts over the registers (no loop over the pairs):
        // the lanes of the labels at least `lv`, of those the keys below
        // `depth << 32` (ranked above `depth`; the padding keys are not).
        let count = |depth: Option<usize>, lv: f64| {
            let rel = _mm512_mask_cmp_pd_mask::<_CMP_GE_OQ>(k, lab, _mm512_set1_pd(lv));
            let above = match depth {
                Some(d) => {
                    _mm512_cmplt_epu64_mask(keys, _mm512_set1_epi64(((d as u64) << 32) as i64))
                }
                None => 0xff,
            };
            (rel & above).count_ones() as usize
        };
        for (o, m) in out.iter_mut().zip(&plan.metrics) {
            *o = value(m, pairs, ideal, n, plan.discounts, count);
        }
        return Some(false);
    }
    // The pairs in rank order: the set bits, walked (and cleared).
    s.pairs.clear();
    for (w, word) in s.bitmap.iter_mut().take(words).enumerate() {
        let mut bits = std::mem::take(word);
        while bits != 0 {
            let r = w * 64 + bits.trailing_zeros() as usize;
            s.pairs
                .push(Pair(r as u32, s.slots.get(r).copied().unwrap_or(0.0)));
            bits &= bits - 1;
        }
    }
    // The ideal: the shared code's placing, when an ndcg reads it.
    if s.ideal.len() < p {
        s.ideal.resize(p, 0.0);
    }
    let ideal = s.ideal.get_mut(..p)?;
    if s.pairs.first().is_some_and(|x| plan.needs_ideal(x.0)) {
        place_ideal(labs, ideal);
    }
    for (o, m) in out.iter_mut().zip(&plan.metrics) {
        *o = value(m, &s.pairs, ideal, n, plan.discounts, |d, lv| {
            super::count_pairs(&s.pairs, d, lv)
        });
    }
    Some(false)
}

/// The key of positive cell `q` of rank `r`, `r << 32 | q`: keys order as
/// the ranks, which are distinct (a small row's and [`mid_row`]'s places).
#[inline(always)]
fn rank_key(r: u32, q: usize) -> u64 {
    (u64::from(r) << 32) | q as u64
}

/// A row of 9 to 16 positive cells (`labs`, their `ranks`): [`kernel`]'s
/// small row over two registers of keys and two of labels, each pair and each
/// ideal label placed by the counts over both.  Why not the bitmap's way for
/// them (its read-modify-writes of the bitmap's words in memory, its walk,
/// the ideal placed by scalar loops: some 130 cycles more a row than a row of
/// 8): 6% of the rows at 5% labels of 100.  Why a function of its own: the
/// small row's registers and code stay as they are (a small row of up to 16
/// cells, its keys in a pair of registers picked at run time, was slower for
/// every row: the `dense.rs` notes).
///
/// # Safety
/// As [`row`]; `9 <= labs.len() <= 16`.
#[inline(never)]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn mid_row(ranks: &[u32; 16], labs: &[f64], n: usize, plan: &Plan, out: &mut [f64]) {
    let p = labs.len().min(16);
    let kh = low_bits(p.saturating_sub(8)) as u8;
    // The keys `rank << 32 | q`, `u64::MAX` past `p`.
    // SAFETY: `ranks` has 16 lanes.
    let (rl, rh) = unsafe {
        (
            _mm256_loadu_si256(ranks.as_ptr() as *const __m256i),
            _mm256_loadu_si256(ranks.as_ptr().add(8) as *const __m256i),
        )
    };
    let keys_of = |r: __m256i, q0: i64| {
        _mm512_or_si512(
            _mm512_slli_epi64::<32>(_mm512_cvtepu32_epi64(r)),
            _mm512_add_epi64(
                _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                _mm512_set1_epi64(q0),
            ),
        )
    };
    let kl = keys_of(rl, 0);
    let kh_keys = _mm512_mask_mov_epi64(_mm512_set1_epi64(-1), kh, keys_of(rh, 8));
    let below = |x: __m512i| {
        _mm512_cmplt_epu64_mask(kl, x).count_ones()
            + _mm512_cmplt_epu64_mask(kh_keys, x).count_ones()
    };
    let mut pairs = [Pair(0, 0.0); 16];
    for (q, (&r, &l)) in ranks.iter().zip(labs).enumerate() {
        let at = below(_mm512_set1_epi64(rank_key(r, q) as i64));
        if let Some(x) = pairs.get_mut(at as usize) {
            *x = Pair(r, l);
        }
    }
    let Some(pairs) = pairs.get(..p) else {
        return;
    };
    // The labels in two registers (0 past `p`).
    // SAFETY: the lanes loaded lie inside `labs` (`8 < p <= 16`).
    let (ll, lh) = unsafe {
        (
            _mm512_loadu_pd(labs.as_ptr()),
            _mm512_maskz_loadu_pd(kh, labs.as_ptr().add(8)),
        )
    };
    let mut ideal = [0.0f64; 16];
    if pairs.first().is_some_and(|x| plan.needs_ideal(x.0)) {
        // [`place_ideal`]'s places: the larger labels and the equal ones
        // before, counted over both registers (the padding, 0, below every
        // positive label).
        for (q, &l) in labs.iter().enumerate() {
            let b = _mm512_set1_pd(l);
            let above = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(ll, b).count_ones()
                + _mm512_cmp_pd_mask::<_CMP_GT_OQ>(lh, b).count_ones();
            let before = low_bits(q) as u16;
            let tied = (_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(ll, b) & before as u8).count_ones()
                + (_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(lh, b) & (before >> 8) as u8).count_ones();
            if let Some(x) = ideal.get_mut((above + tied) as usize) {
                *x = l;
            }
        }
    }
    let Some(ideal) = ideal.get(..p) else {
        return;
    };
    // The metrics' counts over the registers, as the small row's.
    let count = |depth: Option<usize>, lv: f64| {
        let v = _mm512_set1_pd(lv);
        let (rl, rh) = (
            _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ll, v),
            _mm512_mask_cmp_pd_mask::<_CMP_GE_OQ>(kh, lh, v),
        );
        let (al, ah) = match depth {
            Some(d) => {
                let x = _mm512_set1_epi64(((d as u64) << 32) as i64);
                (
                    _mm512_cmplt_epu64_mask(kl, x),
                    _mm512_cmplt_epu64_mask(kh_keys, x),
                )
            }
            None => (0xff, 0xff),
        };
        ((rl & al).count_ones() + (rh & ah).count_ones()) as usize
    };
    for (o, m) in out.iter_mut().zip(&plan.metrics) {
        *o = value(m, pairs, ideal, n, plan.discounts, count);
    }
}

/// The cells of `sc` above `x0` and equal to it, and the same for `x1`
/// (`sc.len() < 2^16`), in one pass: lane 0 of the result is `above + 2^16 *
/// equal` for `x0`, lane 1 for `x1`; with `NAN`, also whether the sum of the
/// scores is NaN (a score is NaN, or both infinities are there), else
/// `false`.  The counts are of a row without NaN.  Why the sum: one add an
/// 8 scores in the first pass, in place of [`nan_in`]'s own pass of loads,
/// compares and mask moves (10.84-10.92 -> 10.76-10.91 ms in cache,
/// 11.99-12.07 -> 11.89-12.03 ms on 100k rows; the wheel 12.21 -> 12.14 ms,
/// mins of 40 alternated calls, 2026-11-28).  8 lanes, each compare's
/// all-ones lanes subtracted from a vector of counts (the tail read with NaN
/// past the row's end, as a whole chunk), the four vectors summed once, the equal counts in the upper 16
/// bits.  Why 8 lanes: 16-lane compares write masks, and a popcount of each
/// took 8 cycles per 16 cells (the mask moves to general registers), masks
/// added into a vector of counts 4% more than this (Zen 4 runs a 512-bit
/// operation as two 256-bit halves).  Why two values a pass: the loads, the
/// loop and the sums shared (16.1 -> 15.3 ms on 100k rows).
///
/// Tried, not kept (2026-11-27, `dense_timing`, thread CPU time, best of
/// 7): one compare a score a cell, the rank counted directly as the cells
/// at or above the cell's score before its column (`_CMP_GE_OQ`) and above
/// it after (`_CMP_GT_OQ`): spans of whole chunks with one predicate each
/// (before both columns, between them, after both), a masked step for the
/// chunks holding a column and the tail, no scalar count of tied cells.
/// 13.0-13.3 -> 17.1-17.2 ms: the spans' lengths change with every pair of
/// columns, and their loop exits mispredict where this loop's fixed count
/// of chunks does not.
///
/// # Safety
/// As [`row`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn count2<const NAN: bool>(sc: &[f32], x0: f32, x1: f32) -> (__m128i, bool) {
    // SAFETY (both): as this function.
    if x0 != 0.0 && x1 != 0.0 {
        unsafe { count2_in::<true, NAN>(sc, x0, x1) }
    } else {
        unsafe { count2_in::<false, NAN>(sc, x0, x1) }
    }
}

/// [`count2`], the equal cells found by comparing bits (`BITS`: neither
/// value is `0.0` or `-0.0`) or as floats.  Why bits: on a row without NaN a
/// score equals a value other than `±0.0` exactly when their bits are equal,
/// and the integer compare leaves the float compare units to the `>` ones:
/// 1-1.5% less time on 100k x 100 rows (both wheels in one process, calls
/// alternated, 3 x 30 rounds, 2026-11-28).  `0.0 == -0.0` as floats but not
/// as bits, hence the float compare there (tested: `-0.0` and `0.0` tied in
/// `dense/tests.rs`).
///
/// # Safety
/// As [`row`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn count2_in<const BITS: bool, const NAN: bool>(
    sc: &[f32],
    x0: f32,
    x1: f32,
) -> (__m128i, bool) {
    let n = sc.len();
    let (xa, xb) = (_mm256_set1_ps(x0), _mm256_set1_ps(x1));
    let z = _mm256_setzero_si256();
    let (mut ga, mut ea, mut gb, mut eb) = (z, z, z, z);
    let mut sum = _mm256_setzero_ps();
    let eq = |v: __m256, x: __m256| {
        if BITS {
            _mm256_cmpeq_epi32(_mm256_castps_si256(v), _mm256_castps_si256(x))
        } else {
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(v, x))
        }
    };
    let mut step = |v: __m256| {
        ga = _mm256_sub_epi32(ga, _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(v, xa)));
        ea = _mm256_sub_epi32(ea, eq(v, xa));
        gb = _mm256_sub_epi32(gb, _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GT_OQ>(v, xb)));
        eb = _mm256_sub_epi32(eb, eq(v, xb));
    };
    let mut c = 0;
    while c + 8 <= n {
        // SAFETY: `c + 8 <= n`.
        let v = unsafe { _mm256_loadu_ps(sc.as_ptr().add(c)) };
        if NAN {
            sum = _mm256_add_ps(sum, v);
        }
        step(v);
        c += 8;
    }
    if c < n {
        // The lanes past `n` read as NaN, which is above, equal to and (as
        // bits) the same as no score: the tail is a whole chunk's step.  Why
        // not compares into masks and masked adds there: their chain of mask
        // registers took some 10 cycles more than a whole chunk's step (a pass
        // over 100 scores 52 cycles, over 104 44, here 2026-11-28).  A NaN
        // `x0` or `x1` matches those lanes as bits, but then the row has a
        // NaN, found by the first pass's sum (`NAN`) or the scan before it,
        // and the counts are not used.
        let k = low_bits(n - c) as u8;
        // SAFETY: the lanes loaded are those of `k`, inside `sc`.
        let v = unsafe { _mm256_mask_loadu_ps(_mm256_set1_ps(f32::NAN), k, sc.as_ptr().add(c)) };
        if NAN {
            sum = _mm256_add_ps(sum, _mm256_maskz_mov_ps(k, v));
        }
        step(v);
    }
    let a = _mm256_add_epi32(ga, _mm256_slli_epi32::<16>(ea));
    let b = _mm256_add_epi32(gb, _mm256_slli_epi32::<16>(eb));
    // [a01 a23 b01 b23 | a45 a67 b45 b67] -> [a b a b]
    let h = _mm256_hadd_epi32(a, b);
    let s = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
    let nan = NAN && _mm256_cmp_ps_mask::<_CMP_UNORD_Q>(sum, sum) != 0;
    (_mm_hadd_epi32(s, s), nan)
}

/// Whether the scores `sc` hold a NaN: an unordered compare per 16.
///
/// # Safety
/// As [`row`].
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
unsafe fn nan_in(sc: &[f32]) -> bool {
    let n = sc.len();
    let mut nan = 0u16;
    let (full, mut c) = (n & !15, 0usize);
    while c < full {
        // SAFETY: `c + 16 <= n`.
        let v = unsafe { _mm512_loadu_ps(sc.as_ptr().add(c)) };
        nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        c += 16;
    }
    if c < n {
        let k = low_bits(n - c) as u16;
        // SAFETY: the lanes loaded are those of `k`, inside `sc`.
        let v = unsafe { _mm512_maskz_loadu_ps(k, sc.as_ptr().add(c)) };
        nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
    }
    nan != 0
}
