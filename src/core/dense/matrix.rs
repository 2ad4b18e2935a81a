//! The read-only 2-D view every array is read through, and which cells of a
//! row are candidates.
//!
//! A [`Matrix`] is a slice, a shape and element strides (what numpy's views
//! have), so transposed and sliced arrays are read where they lie, without a
//! copy.  Every element is checked to lie inside the slice once, in
//! [`Matrix::new`]; the accessors index without further checks of their own.

use crate::core::error::{Error, Result};

/// A read-only 2-D view: element `(i, j)` is `data[i * row_stride + j *
/// col_stride]` (strides in elements, not bytes).
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    pub(super) data: &'a [T],
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) row_stride: usize,
    pub(super) col_stride: usize,
}

impl<'a, T: Copy> Matrix<'a, T> {
    /// Check that every element lies inside `data`.
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self> {
        // A stride along an axis of length <= 1 is never used.
        let row_stride = if rows <= 1 { 0 } else { row_stride };
        let col_stride = if cols <= 1 { 1 } else { col_stride };
        if rows > 0 && cols > 0 {
            let last = (rows - 1)
                .checked_mul(row_stride)
                .zip((cols - 1).checked_mul(col_stride))
                .and_then(|(a, b)| a.checked_add(b));
            if !last.is_some_and(|l| l < data.len()) {
                return Err(Error::InvalidInput(format!(
                    "internal: a {rows} x {cols} view with strides ({row_stride}, \
                     {col_stride}) does not fit its {} elements",
                    data.len()
                )));
            }
        }
        Ok(Matrix {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
        })
    }

    /// A C-contiguous `rows x cols` matrix.
    pub fn contiguous(data: &'a [T], rows: usize, cols: usize) -> Result<Self> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::InvalidInput(format!(
                "internal: {} elements do not make a {rows} x {cols} matrix",
                data.len()
            )));
        }
        Matrix::new(data, rows, cols, cols, 1)
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Element `(i, j)` (in bounds: checked in `new`).
    #[inline]
    pub(super) fn get(&self, i: usize, j: usize) -> T {
        self.data[i * self.row_stride + j * self.col_stride]
    }

    /// Columns `a..b` of a one-row matrix, as a one-row matrix (`None` when
    /// out of range).
    pub(super) fn columns(&self, a: usize, b: usize) -> Option<Self> {
        if self.rows != 1 || a > b || b > self.cols {
            return None;
        }
        let data = if a == b {
            &self.data[..0]
        } else {
            self.data.get(a * self.col_stride..)?
        };
        Matrix::new(data, 1, b - a, 0, self.col_stride).ok()
    }

    /// Cells `a..b` of a one-row matrix when they are contiguous.
    pub(super) fn run(&self, a: usize, b: usize) -> Option<&'a [T]> {
        if self.rows != 1 || a > b || b > self.cols {
            return None;
        }
        if self.col_stride == 1 || b - a <= 1 {
            self.data
                .get(a * self.col_stride..a * self.col_stride + (b - a))
        } else {
            None
        }
    }

    /// The first `k` elements of row `i` when the row is contiguous.
    pub(super) fn contiguous_row(&self, i: usize, k: usize) -> Option<&'a [T]> {
        let start = i * self.row_stride;
        if self.col_stride == 1 || k <= 1 {
            self.data.get(start..start + k)
        } else {
            None
        }
    }

    /// The first `k` elements of row `i` (`k <= cols`): borrowed when the row
    /// is contiguous, else copied into `buf`.
    pub(super) fn row_prefix<'b>(&'b self, i: usize, k: usize, buf: &'b mut Vec<T>) -> &'b [T] {
        let start = i * self.row_stride;
        if self.col_stride == 1 || k <= 1 {
            if let Some(row) = self.data.get(start..start + k) {
                return row;
            }
        }
        buf.clear();
        buf.extend((0..k).map(|j| self.get(i, j)));
        buf
    }

    /// Whether the first `k` elements of the rows lie apart, each row
    /// contiguous (a prefix of wider rows): [`Matrix::prefetch_prefix`]
    /// pays only there (where the prefixes follow each other, the hardware
    /// fetches them ahead itself).
    pub(super) fn gapped_prefixes(&self, k: usize) -> bool {
        self.col_stride == 1 && self.row_stride > k
    }

    /// Ask for the cache lines of the first `k` elements of row `i` (up to
    /// 256 bytes), where the row is contiguous and inside the matrix; a
    /// hint, it changes nothing.
    #[inline]
    pub(super) fn prefetch_prefix(&self, i: usize, k: usize) {
        if i >= self.rows || self.col_stride != 1 {
            return;
        }
        let start = i * self.row_stride;
        let Some(row) = self.data.get(start..start + k.min(self.cols)) else {
            return;
        };
        let bytes = std::mem::size_of_val(row).min(256);
        let p = row.as_ptr().cast::<u8>();
        for off in (0..bytes).step_by(64).chain(bytes.checked_sub(1)) {
            crate::core::prefetch(p.wrapping_add(off));
        }
    }

    /// Row `i`, converted, into `out` (cleared first).
    pub(super) fn load(&self, i: usize, out: &mut Vec<f64>, conv: impl Fn(T) -> f64) {
        out.clear();
        if self.cols == 0 {
            return;
        }
        let start = i * self.row_stride;
        if self.col_stride == 1 {
            out.extend(self.data[start..start + self.cols].iter().map(|&x| conv(x)));
        } else if self.col_stride == 0 {
            out.resize(self.cols, conv(self.data[start]));
        } else {
            out.extend(
                self.data[start..]
                    .iter()
                    .step_by(self.col_stride)
                    .take(self.cols)
                    .map(|&x| conv(x)),
            );
        }
    }
}

/// Which cells of a row are candidates.
#[derive(Clone, Copy, Debug)]
pub enum Valid<'a> {
    All,
    /// Row `i` holds its first `lengths[i]` columns.
    Lengths(&'a [i64]),
    /// A cell is a candidate where the mask is non-zero.
    Mask(Matrix<'a, u8>),
}

impl Valid<'_> {
    /// The columns row `i` of `cols` holds from its start: its length (0 past
    /// the lengths given, at most `cols`), else every column (a mask is read
    /// cell by cell).
    #[inline]
    pub(crate) fn row_len(&self, i: usize, cols: usize) -> usize {
        match self {
            Valid::Lengths(len) => (len.get(i).copied().unwrap_or(0).max(0) as usize).min(cols),
            _ => cols,
        }
    }
}

pub(super) fn check_valid(valid: &Valid<'_>, rows: usize, cols: usize) -> Result<()> {
    match valid {
        Valid::All => Ok(()),
        Valid::Lengths(len) if len.len() != rows => Err(Error::InvalidInput(format!(
            "lengths has {} entries for {rows} rows",
            len.len()
        ))),
        Valid::Lengths(len) => match len.iter().position(|&l| l < 0 || l as usize > cols) {
            Some(i) => Err(Error::InvalidInput(format!(
                "lengths[{i}] = {} is outside 0..={cols}",
                len[i]
            ))),
            None => Ok(()),
        },
        Valid::Mask(m) if (m.rows, m.cols) != (rows, cols) => Err(Error::InvalidInput(format!(
            "mask has shape {:?}, scores {:?}: they must match",
            (m.rows, m.cols),
            (rows, cols)
        ))),
        Valid::Mask(_) => Ok(()),
    }
}
