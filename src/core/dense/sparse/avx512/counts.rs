//! The rank counts and the NaN scan of the AVX-512 row: for two positive
//! cells a pass over the float32 scores, the cells above each and equal to
//! each ([`count2`]); whether a row holds a NaN ([`nan_in`]).

use super::low_bits;
use std::arch::x86_64::*;

/// The cells of `sc` above `x0` and equal to it, and the same for `x1`
/// (`sc.len() < 2^16`), in one pass: lane 0 of the result is `above + 2^16 *
/// equal` for `x0`, lane 1 for `x1`; with `NAN`, also whether the sum of the
/// scores is NaN (a score is NaN, or both infinities are there), else
/// `false`.  The counts are of a row without NaN.  Why the sum: one add an
/// 8 scores in the first pass, in place of [`nan_in`]'s own pass of loads,
/// compares and mask moves.  8 lanes, each compare's
/// all-ones lanes subtracted from a vector of counts (the tail read with NaN
/// past the row's end, as a whole chunk), the four vectors summed once, the equal counts in the upper 16
/// bits.  Why 8 lanes: 16-lane compares write masks, and a popcount of each
/// is bound by the mask moves to general registers; masks added into a
/// vector of counts cost more than this (Zen 4 runs a 512-bit operation as
/// two 256-bit halves).  Why two values a pass: the loads, the loop and the
/// sums shared.
///
/// Not kept: one compare a score a cell, the rank counted directly as the cells
/// at or above the cell's score before its column (`_CMP_GE_OQ`) and above
/// it after (`_CMP_GT_OQ`): spans of whole chunks with one predicate each
/// (before both columns, between them, after both), a masked step for the
/// chunks holding a column and the tail, no scalar count of tied cells:
/// the spans' lengths change with every pair of
/// columns, and their loop exits mispredict where this loop's fixed count
/// of chunks does not.
///
/// # Safety
/// As [`row`](super::row).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
pub(super) unsafe fn count2<const NAN: bool>(sc: &[f32], x0: f32, x1: f32) -> (__m128i, bool) {
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
/// and the integer compare leaves the float compare units to the `>` ones.
/// `0.0 == -0.0` as floats but not
/// as bits, hence the float compare there (tested: `-0.0` and `0.0` tied in
/// `dense/tests.rs`).
///
/// # Safety
/// As [`row`](super::row).
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
        // registers is longer than a whole chunk's step.  A NaN
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
/// As [`row`](super::row).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
pub(super) unsafe fn nan_in(sc: &[f32]) -> bool {
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
