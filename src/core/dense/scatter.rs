//! Flat cells copied into group order ([`Numbers::in_groups`]): each cell
//! written at its place, reading the input in order.
//!
//! Why writes to places rather than reads through the group order: reading
//! each cell from a random place costs about twice the writes.  Large calls
//! write from the pool's threads, each slot an atomic stored with a relaxed
//! store (a plain store on x86-64 and aarch64), so the writes stay defined
//! whatever the places; the atomics are then reinterpreted as their values
//! in the same allocation.
//!
//! Not kept: each place's line asked for ahead of its write (the stores'
//! misses already overlap).

use super::group::SORTED_CHUNK;
use super::{Matrix, Numbers};
use rayon::prelude::*;

/// Owned cells of one of [`Numbers`]' dtypes (flat cells copied into
/// group order: [`Numbers::in_groups`]).
pub(super) enum Cells {
    F64(Vec<f64>),
    F32(Vec<f32>),
    F16(Vec<u16>),
    Bf16(Vec<u16>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I8(Vec<i8>),
    U8(Vec<u8>),
}

/// Cell `c` of a one-row matrix at `place[c]` of the result (`None` unless
/// one row of `place.len()` cells, each place below it): written in input
/// order, by parts of the cells on the pool's threads when it has several
/// and the call is large.
fn to_places<T: Placed>(m: &Matrix<'_, T>, place: &[i64]) -> Option<Vec<T>> {
    let n = place.len();
    if m.rows != 1 || m.cols != n {
        return None;
    }
    if n <= SORTED_CHUNK || rayon::current_num_threads() == 1 {
        let mut out = vec![T::default(); n];
        for (c, &p) in place.iter().enumerate() {
            *out.get_mut(usize::try_from(p).ok()?)? = m.get(0, c);
        }
        return Some(out);
    }
    // From several threads, each slot an atomic written by a relaxed store
    // (a plain store on x86-64 and aarch64): the places are distinct, and the
    // atomics keep the writes defined even if they were not.
    let out: Vec<T::Slot> = (0..n).into_par_iter().map(|_| T::slot()).collect();
    let ok = place.par_chunks(SORTED_CHUNK).enumerate().all(|(k, part)| {
        part.iter().enumerate().all(|(j, &p)| {
            let slot = usize::try_from(p).ok().and_then(|p| out.get(p));
            slot.map(|s| T::put(s, m.get(0, k * SORTED_CHUNK + j)))
                .is_some()
        })
    });
    ok.then(|| T::take_all(out))
}

/// A cell type [`to_places`] writes from several threads.
trait Placed: Copy + Default + Send + Sync {
    /// The atomic of the same size.
    type Slot: Send + Sync;
    fn slot() -> Self::Slot;
    fn put(slot: &Self::Slot, value: Self);
    /// The values of the slots, in their allocation.
    fn take_all(slots: Vec<Self::Slot>) -> Vec<Self>;
}

macro_rules! placed {
    ($($t:ty => $atomic:ty, $to:expr, $from:expr;)*) => {$(
        impl Placed for $t {
            type Slot = $atomic;
            fn slot() -> $atomic {
                <$atomic>::new(0)
            }
            fn put(slot: &$atomic, value: $t) {
                slot.store($to(value), std::sync::atomic::Ordering::Relaxed)
            }
            fn take_all(slots: Vec<$atomic>) -> Vec<$t> {
                if size_of::<$atomic>() != size_of::<$t>() || align_of::<$atomic>() != align_of::<$t>() {
                    return slots.into_iter().map(|s| $from(s.into_inner())).collect();
                }
                let mut slots = std::mem::ManuallyDrop::new(slots);
                let (ptr, len, cap) = (slots.as_mut_ptr(), slots.len(), slots.capacity());
                // SAFETY: the atomic has the size and bit validity of its
                // integer (documented), and here the size and alignment of
                // `$t` (checked above), whose every bit pattern is a value:
                // the allocation holds `len` initialised values of `$t` and
                // is freed with the same layout.  No thread holds a slot
                // (they were joined), and `slots` is not dropped.
                unsafe { Vec::from_raw_parts(ptr.cast::<$t>(), len, cap) }
            }
        }
    )*};
}

placed! {
    f64 => std::sync::atomic::AtomicU64, f64::to_bits, f64::from_bits;
    f32 => std::sync::atomic::AtomicU32, f32::to_bits, f32::from_bits;
    u16 => std::sync::atomic::AtomicU16, u16::from, u16::from;
    i64 => std::sync::atomic::AtomicI64, i64::from, i64::from;
    i32 => std::sync::atomic::AtomicI32, i32::from, i32::from;
    i8 => std::sync::atomic::AtomicI8, i8::from, i8::from;
    u8 => std::sync::atomic::AtomicU8, u8::from, u8::from;
}

impl Cells {
    /// The cells as a contiguous one-row matrix.
    pub(super) fn view(&self) -> Numbers<'_> {
        fn one<T: Copy>(v: &[T]) -> Matrix<'_, T> {
            Matrix {
                data: v,
                rows: 1,
                cols: v.len(),
                row_stride: 0,
                col_stride: 1,
            }
        }
        match self {
            Cells::F64(v) => Numbers::F64(one(v)),
            Cells::F32(v) => Numbers::F32(one(v)),
            Cells::F16(v) => Numbers::F16(one(v)),
            Cells::Bf16(v) => Numbers::Bf16(one(v)),
            Cells::I64(v) => Numbers::I64(one(v)),
            Cells::I32(v) => Numbers::I32(one(v)),
            Cells::I8(v) => Numbers::I8(one(v)),
            Cells::U8(v) => Numbers::U8(one(v)),
        }
    }
}

impl<'a> Numbers<'a> {
    /// The cells of a one-row matrix in group order: cell `c` at
    /// `place[c]` (`None` unless one row of `place.len()` cells, each place
    /// below it).  A copy: as many bytes as the cells.
    pub(super) fn in_groups(&self, place: &[i64]) -> Option<Cells> {
        Some(match self {
            Numbers::F64(m) => Cells::F64(to_places(m, place)?),
            Numbers::F32(m) => Cells::F32(to_places(m, place)?),
            Numbers::F16(m) => Cells::F16(to_places(m, place)?),
            Numbers::Bf16(m) => Cells::Bf16(to_places(m, place)?),
            Numbers::I64(m) => Cells::I64(to_places(m, place)?),
            Numbers::I32(m) => Cells::I32(to_places(m, place)?),
            Numbers::I8(m) => Cells::I8(to_places(m, place)?),
            Numbers::U8(m) => Cells::U8(to_places(m, place)?),
        })
    }
}
