//! The label scan of the AVX-512 row: the positive labels of a row, their
//! columns and labels converted to `f64`, in column order ([`Label`],
//! [`Positives`]).
//!
//! Int64 and float64 labels are compacted branch-free, 16 then 8 lanes a step
//! (`vpcompress` into a register, stored whole at the next free place:
//! [`positives64`]); the other dtypes are compared into a 64-bit mask per
//! chunk whose set bits are walked.  Both stop once the row has more positive
//! cells than the sparse path takes.

use super::low_bits;
use crate::core::dense::sparse::LABEL_BOUND;
use crate::core::dense::COUNT_PER_LOG2;
use std::arch::x86_64::*;

/// A label dtype the AVX-512 row scans in place.
pub(super) trait Label: Copy {
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
    /// As [`row`](super::row).
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
/// log2(n)` for `n < 2^16` cells ([`kernel`](super::kernel::kernel)).
const MAX_POSITIVE: usize = COUNT_PER_LOG2 * 16;

/// A row's positive cells, in column order: `cols[..len]` and their labels
/// `labs[..len]`, with 16 spare slots for [`positives64`]'s last stores.
///
/// Why on the stack (one a block of rows, [`block`](super::block)) and not in the heap's
/// `Scratch`: [`positives64`] stores 8 lanes at a time at the next free
/// slot, and when that slot's address matched a stack slot the loop reloads
/// in its low 12 bits (4K aliasing: the load waits for the store), every
/// row paid for it.  Where the heap put the buffer decided it (a one-thread
/// pool's thread takes the process's first malloc arena), the profile's
/// samples on the store.  A buffer in the same stack region as the reload
/// cannot alias it.
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

    pub(super) fn cols(&self) -> &[u32] {
        self.cols.get(..self.len).unwrap_or(&[])
    }

    pub(super) fn labs(&self) -> &[f64] {
        self.labs.get(..self.len).unwrap_or(&[])
    }
}

/// [`Label::positives`] of 16, then 8, lanes of 64 bits at a time,
/// branch-free: the lanes of the positive labels (`positive`: a mask)
/// compressed in a register (their columns and converted labels, `convert`)
/// and stored whole at the next free place, which moves by their count.
/// Why: the bits' walk branches on every positive label.  Why 16 lanes a
/// step: one compress of the columns for two chunks.  Stops once more than
/// `limit <= MAX_POSITIVE` are kept: a store starts at a count `<= limit +
/// 8` and `pos` has 16 slots past `MAX_POSITIVE`, so every store fits.
///
/// # Safety
/// As [`row`](super::row); `lb.len() < 2^31`.
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
    // computed for every chunk nearly doubles the loop's instructions (the
    // NaN scan's loop is shaped the same way).
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

/// The lanes of `v` not below the fast path's label bound in magnitude
/// (`sparse::LABEL_BOUND`: NaN, the infinities and labels whose sums could
/// pass the largest float), as the shared code's `bounded` tests them.
#[inline]
#[target_feature(enable = "avx512f")]
fn past_bound(v: __m512d) -> u8 {
    let bound = _mm512_set1_pd(LABEL_BOUND);
    _mm512_cmp_pd_mask::<_CMP_NLT_UQ>(_mm512_abs_pd(v), bound)
}

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
            bad |= past_bound(v);
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
                |v| past_bound(_mm512_castsi512_pd(v)) == 0,
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
