//! One row of the AVX-512 path ([`kernel`]): its positive cells found, the
//! NaN scan, the rank counts, each cell placed among the `(rank, label)`
//! pairs and in the ideal, and the metrics.
//!
//! Placing by row size: up to 8 positive cells (most rows at 5% labels) by
//! counts over one register of keys `rank << 32 | q` ([`rank_key`]), 9 to 16
//! over two ([`mid_row`]), more through a bitmap of the row's ranks walked in
//! order.

use super::counts::{count2, nan_in};
use super::labels::{Label, Positives};
use super::low_bits;
use crate::core::dense::sparse::{count_pairs, place_ideal, value, Pair, Plan};
use crate::core::dense::{Empty, Scratch, COUNT_PER_LOG2};
use std::arch::x86_64::*;

/// The row of float32 scores `sc` and labels `lb` (as long, `< 2^32` cells).
///
/// # Safety
/// As [`row`](super::row).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,popcnt,bmi1,bmi2")]
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn kernel<L: Label>(
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
        // permute, min and max; the labels permuted after them): its latency
        // lies on every row's path to its metrics.  The ideal is placed the
        // same way.
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
            count_pairs(&s.pairs, d, lv)
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
/// the ideal placed by scalar loops: far more a row than a row of 8), a few
/// percent of the rows at 5% labels of 100.  Why a function of its own: the
/// small row's registers and code stay as they are (a small row of up to 16
/// cells, its keys in a pair of registers picked at run time, is slower for
/// every row).
///
/// # Safety
/// As [`row`](super::row); `9 <= labs.len() <= 16`.
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
