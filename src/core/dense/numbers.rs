//! The dtypes the dense path reads in place ([`Numbers`]), and their
//! conversion to `f64`.
//!
//! Every dtype is widened to `f64` exactly (half precision and bfloat16 from
//! their bits), and `-0.0` becomes `0.0` so that the two tie as they compare
//! equal.

use super::Matrix;

/// IEEE half precision (bits) to f64, exactly.
pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = (h >> 10) & 0x1f;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        0x1f if frac == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e as i32 - 15),
    }
}

/// bfloat16 (bits: the upper half of an f32) to f64, exactly.
pub fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// A matrix of numbers in one of the dtypes the dense path reads in place.
#[derive(Clone, Copy, Debug)]
pub enum Numbers<'a> {
    F64(Matrix<'a, f64>),
    F32(Matrix<'a, f32>),
    /// IEEE half precision, as its bits.
    F16(Matrix<'a, u16>),
    /// bfloat16, as its bits.
    Bf16(Matrix<'a, u16>),
    I64(Matrix<'a, i64>),
    I32(Matrix<'a, i32>),
    I8(Matrix<'a, i8>),
    /// `uint8` and `bool`.
    U8(Matrix<'a, u8>),
}

impl<'a> Numbers<'a> {
    /// [`Matrix::prefetch_prefix`] of the matrix.
    #[inline]
    pub(super) fn prefetch_prefix(&self, i: usize, k: usize) {
        match self {
            Numbers::F64(m) => m.prefetch_prefix(i, k),
            Numbers::F32(m) => m.prefetch_prefix(i, k),
            Numbers::F16(m) | Numbers::Bf16(m) => m.prefetch_prefix(i, k),
            Numbers::I64(m) => m.prefetch_prefix(i, k),
            Numbers::I32(m) => m.prefetch_prefix(i, k),
            Numbers::I8(m) => m.prefetch_prefix(i, k),
            Numbers::U8(m) => m.prefetch_prefix(i, k),
        }
    }

    /// [`Matrix::gapped_prefixes`] of the matrix.
    pub(super) fn gapped_prefixes(&self, k: usize) -> bool {
        match self {
            Numbers::F64(m) => m.gapped_prefixes(k),
            Numbers::F32(m) => m.gapped_prefixes(k),
            Numbers::F16(m) | Numbers::Bf16(m) => m.gapped_prefixes(k),
            Numbers::I64(m) => m.gapped_prefixes(k),
            Numbers::I32(m) => m.gapped_prefixes(k),
            Numbers::I8(m) => m.gapped_prefixes(k),
            Numbers::U8(m) => m.gapped_prefixes(k),
        }
    }

    /// Columns `a..b` of a one-row matrix ([`Matrix::columns`]).
    pub(super) fn columns(&self, a: usize, b: usize) -> Option<Numbers<'a>> {
        Some(match self {
            Numbers::F64(m) => Numbers::F64(m.columns(a, b)?),
            Numbers::F32(m) => Numbers::F32(m.columns(a, b)?),
            Numbers::F16(m) => Numbers::F16(m.columns(a, b)?),
            Numbers::Bf16(m) => Numbers::Bf16(m.columns(a, b)?),
            Numbers::I64(m) => Numbers::I64(m.columns(a, b)?),
            Numbers::I32(m) => Numbers::I32(m.columns(a, b)?),
            Numbers::I8(m) => Numbers::I8(m.columns(a, b)?),
            Numbers::U8(m) => Numbers::U8(m.columns(a, b)?),
        })
    }

    pub fn shape(&self) -> (usize, usize) {
        match self {
            Numbers::F64(m) => (m.rows, m.cols),
            Numbers::F32(m) => (m.rows, m.cols),
            Numbers::F16(m) | Numbers::Bf16(m) => (m.rows, m.cols),
            Numbers::I64(m) => (m.rows, m.cols),
            Numbers::I32(m) => (m.rows, m.cols),
            Numbers::I8(m) => (m.rows, m.cols),
            Numbers::U8(m) => (m.rows, m.cols),
        }
    }

    /// Cells `(0, j)` for `j` in `cells`, as f64, into `out` (as `load`).
    pub(super) fn load_cells(&self, cells: impl Iterator<Item = usize>, out: &mut Vec<f64>) {
        out.clear();
        match self {
            Numbers::F64(m) => out.extend(cells.map(|j| m.get(0, j) + 0.0)),
            Numbers::F32(m) => out.extend(cells.map(|j| m.get(0, j) as f64 + 0.0)),
            Numbers::F16(m) => out.extend(cells.map(|j| f16_to_f64(m.get(0, j)) + 0.0)),
            Numbers::Bf16(m) => out.extend(cells.map(|j| bf16_to_f64(m.get(0, j)) + 0.0)),
            Numbers::I64(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::I32(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::I8(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
            Numbers::U8(m) => out.extend(cells.map(|j| m.get(0, j) as f64)),
        }
    }

    /// Row `i` as f64 into `out`.  `-0.0` becomes `0.0` (`x + 0.0`), so that
    /// the two tie, as they compare equal.
    pub(super) fn load(&self, i: usize, out: &mut Vec<f64>) {
        match self {
            Numbers::F64(m) => m.load(i, out, |x| x + 0.0),
            Numbers::F32(m) => m.load(i, out, |x| x as f64 + 0.0),
            Numbers::F16(m) => m.load(i, out, |x| f16_to_f64(x) + 0.0),
            Numbers::Bf16(m) => m.load(i, out, |x| bf16_to_f64(x) + 0.0),
            Numbers::I64(m) => m.load(i, out, |x| x as f64),
            Numbers::I32(m) => m.load(i, out, |x| x as f64),
            Numbers::I8(m) => m.load(i, out, |x| x as f64),
            Numbers::U8(m) => m.load(i, out, |x| x as f64),
        }
    }
}
