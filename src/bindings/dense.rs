//! Arrays scored in place (`core::dense`): score matrices, ranked id lists,
//! ANN neighbours.
//!
//! Matrices are borrowed read-only from numpy, strided ones too (a transposed
//! or sliced array is read where it lies); the Python layer (`_dense.py`)
//! hands over only dtypes listed in `Arr` and non-negative strides, copying
//! anything else (and documents which inputs are copied).

use super::evaluate::{eval_setup, MetricArg};
use super::to_py;
use crate::core::cancel::Cancel;
use crate::core::dense::{self, DenseTies, Empty, Matrix, Numbers, Relevant, Valid};
use crate::core::error::Error;
use crate::core::eval;
use numpy::{
    Element, IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
};
use pyo3::prelude::*;

/// A 2-D numpy array of one of the dtypes the core reads.
enum Arr<'py> {
    F64(PyReadonlyArray2<'py, f64>),
    F32(PyReadonlyArray2<'py, f32>),
    F16(PyReadonlyArray2<'py, u16>),
    Bf16(PyReadonlyArray2<'py, u16>),
    I64(PyReadonlyArray2<'py, i64>),
    I32(PyReadonlyArray2<'py, i32>),
    I8(PyReadonlyArray2<'py, i8>),
    U8(PyReadonlyArray2<'py, u8>),
}

fn bad(py: Python<'_>, msg: String) -> PyErr {
    to_py(py, Error::InvalidInput(msg))
}

/// `obj` as an [`Arr`]; `half` says how `uint16` bits are read (`"f16"` or
/// `"bf16"`; `""`: not a `uint16` array).
fn arr<'py>(obj: &Bound<'py, PyAny>, half: &str, what: &str) -> PyResult<Arr<'py>> {
    if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, u16>>() {
        return match half {
            "f16" => Ok(Arr::F16(a)),
            "bf16" => Ok(Arr::Bf16(a)),
            _ => Err(bad(
                obj.py(),
                format!("{what}: uint16 bits need half='f16' or 'bf16'"),
            )),
        };
    }
    macro_rules! try_as {
        ($t:ty, $v:ident) => {
            if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, $t>>() {
                return Ok(Arr::$v(a));
            }
        };
    }
    try_as!(f64, F64);
    try_as!(f32, F32);
    try_as!(i64, I64);
    try_as!(i32, I32);
    try_as!(i8, I8);
    try_as!(u8, U8);
    Err(bad(
        obj.py(),
        format!("internal: {what} must be a 2-D float64/float32/float16/int/uint8 array"),
    ))
}

/// The matrix a 2-D array views, strides in elements.
fn matrix<'a, T: Element + Copy>(a: &'a PyReadonlyArray2<'_, T>) -> PyResult<Matrix<'a, T>> {
    let view = a.as_array();
    let (rows, cols) = view.dim();
    let st = view.strides();
    if st.iter().any(|&s| s < 0) {
        return Err(bad(
            a.py(),
            "internal: negative strides reach the core".into(),
        ));
    }
    let (rs, cs) = (st[0] as usize, st[1] as usize);
    let data: &'a [T] = if rows == 0 || cols == 0 {
        &[]
    } else {
        let span = 1 + (rows - 1) * rs + (cols - 1) * cs;
        // SAFETY: `view` spans elements `ptr + i * rs + j * cs` of one numpy
        // buffer for all i < rows, j < cols (strides non-negative, checked
        // above), the largest of which is `ptr + span - 1`; the read-only
        // borrow `a` keeps the buffer alive and unwritten for `'a`.
        unsafe { std::slice::from_raw_parts(view.as_ptr(), span) }
    };
    Matrix::new(data, rows, cols, rs, cs).map_err(|e| to_py(a.py(), e))
}

impl Arr<'_> {
    fn numbers(&self) -> PyResult<Numbers<'_>> {
        Ok(match self {
            Arr::F64(a) => Numbers::F64(matrix(a)?),
            Arr::F32(a) => Numbers::F32(matrix(a)?),
            Arr::F16(a) => Numbers::F16(matrix(a)?),
            Arr::Bf16(a) => Numbers::Bf16(matrix(a)?),
            Arr::I64(a) => Numbers::I64(matrix(a)?),
            Arr::I32(a) => Numbers::I32(matrix(a)?),
            Arr::I8(a) => Numbers::I8(matrix(a)?),
            Arr::U8(a) => Numbers::U8(matrix(a)?),
        })
    }
}

type DenseOut<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<bool>>);

fn output(
    py: Python<'_>,
    e: dense::DenseEvaluation,
    rows: usize,
    nm: usize,
) -> PyResult<DenseOut<'_>> {
    Ok((
        e.values.into_pyarray(py).reshape([rows, nm])?,
        e.empty.into_pyarray(py),
    ))
}

/// Cells times metrics (a call's work: each metric reads the cells of its
/// rows) from which a call watches for Ctrl-C (`super::interruptible`): a
/// smaller call ends within a fraction of a second, and the watching thread
/// (the work moved off the caller's thread and its malloc arena) would cost
/// it a measurable share of its time.  Cells alone would leave a call of a
/// thousand metrics on a few million cells, minutes long, unwatched.
const INTERRUPTIBLE_CELLS: usize = 1 << 26;

/// `work` without the GIL, stopped on Ctrl-C when it reads at least
/// [`INTERRUPTIBLE_CELLS`] cells times metrics: the core's loops check the
/// flag between rows or blocks of rows.
fn detached<T: Send>(
    py: Python<'_>,
    cells: usize,
    work: impl FnOnce(&Cancel) -> T + Send,
) -> PyResult<T> {
    if cells < INTERRUPTIBLE_CELLS {
        Ok(py.detach(|| work(&Cancel::default())))
    } else {
        super::interruptible(py, work)
    }
}

/// Score each row of `scores` against the same row of `labels`.  Returns
/// (values [rows x metrics], whether each row was empty).
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (scores, labels, metrics, relevance_level, ties, empty, scores_half = "", mask = None, lengths = None, threads = None))]
pub(super) fn evaluate_dense<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    labels: &Bound<'py, PyAny>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    ties: &str,
    empty: &str,
    scores_half: &str,
    mask: Option<PyReadonlyArray2<'py, u8>>,
    lengths: Option<PyReadonlyArray1<'py, i64>>,
    threads: Option<usize>,
) -> PyResult<DenseOut<'py>> {
    let err = |e: Error| to_py(py, e);
    let (_, specs) = eval_setup(&metrics, relevance_level, false, None, "trec").map_err(err)?;
    let ties = DenseTies::from_name(ties).map_err(err)?;
    let empty = Empty::from_name(empty).map_err(err)?;
    let (s, l) = (
        arr(scores, scores_half, "scores")?,
        arr(labels, "", "labels")?,
    );
    let (s, l) = (s.numbers()?, l.numbers()?);
    let mask_m = mask.as_ref().map(matrix).transpose()?;
    let valid = match (&mask_m, &lengths) {
        (Some(m), _) => Valid::Mask(*m),
        (None, Some(len)) => Valid::Lengths(len.as_slice().map_err(super::non_contiguous)?),
        (None, None) => Valid::All,
    };
    let rows = s.shape().0;
    // A call of one task's rows runs here: the pool's hand-over would cost
    // more than its work (`eval::with_threads_or_inline`).
    let cells = rows.saturating_mul(s.shape().1);
    let out = detached(py, cells.saturating_mul(specs.len()), |cancel| {
        eval::with_threads_or_inline(threads, rows <= dense::TASK_ROWS, || {
            let (level, specs) = (relevance_level, &specs);
            dense::evaluate_dense(&s, &l, &valid, specs, level, ties, empty, cancel)
        })
    })?
    .and_then(|x| x)
    .map_err(err)?;
    output(py, out, rows, specs.len())
}

/// Score ranked id lists against relevant ids (`relevant_kind = "ids"`) or
/// labels aligned with them (`"labels"`).  Returns as `evaluate_dense`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ids, relevant, relevant_kind, metrics, relevance_level, empty, threads = None))]
pub(super) fn evaluate_topk<'py>(
    py: Python<'py>,
    ids: PyReadonlyArray2<'py, i64>,
    relevant: &Bound<'py, PyAny>,
    relevant_kind: &str,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    empty: &str,
    threads: Option<usize>,
) -> PyResult<DenseOut<'py>> {
    let err = |e: Error| to_py(py, e);
    let (_, specs) = eval_setup(&metrics, relevance_level, false, None, "trec").map_err(err)?;
    let empty = Empty::from_name(empty).map_err(err)?;
    let ids_m = matrix(&ids)?;
    let rel_ids;
    let rel_arr;
    let rel = match relevant_kind {
        "ids" => {
            rel_ids = relevant.extract::<PyReadonlyArray2<'py, i64>>()?;
            Relevant::Ids(matrix(&rel_ids)?)
        }
        _ => {
            rel_arr = arr(relevant, "", "relevant")?;
            Relevant::Labels(rel_arr.numbers()?)
        }
    };
    let rows = ids_m.rows();
    let cells = rows.saturating_mul(ids_m.cols());
    let out = detached(py, cells.saturating_mul(specs.len()), |cancel| {
        eval::with_threads_or_inline(threads, rows <= dense::TASK_ROWS, || {
            dense::evaluate_topk(&ids_m, &rel, &specs, relevance_level, empty, cancel)
        })
    })?
    .and_then(|x| x)
    .map_err(err)?;
    output(py, out, rows, specs.len())
}

/// Per-row recall@k of approximate neighbour ids against exact ones.
#[pyfunction]
#[pyo3(signature = (approx, exact, k, threads = None))]
pub(super) fn knn_recall<'py>(
    py: Python<'py>,
    approx: PyReadonlyArray2<'py, i64>,
    exact: PyReadonlyArray2<'py, i64>,
    k: usize,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (a, e) = (matrix(&approx)?, matrix(&exact)?);
    let one_task = a.rows() <= dense::KNN_TASK_ROWS;
    let cells = a.rows().saturating_mul(k);
    let out = detached(py, cells, |cancel| {
        eval::with_threads_or_inline(threads, one_task, || dense::knn_recall(&a, &e, k, cancel))
    })?
    .and_then(|x| x)
    .map_err(|e| to_py(py, e))?;
    Ok(out.into_pyarray(py))
}

/// Per-row recall@k by ann-benchmarks' distance threshold.
#[pyfunction]
#[pyo3(signature = (approx, exact, k, epsilon, threads = None))]
pub(super) fn knn_recall_distances<'py>(
    py: Python<'py>,
    approx: PyReadonlyArray2<'py, f64>,
    exact: PyReadonlyArray2<'py, f64>,
    k: usize,
    epsilon: f64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (a, e) = (matrix(&approx)?, matrix(&exact)?);
    let one_task = a.rows() <= dense::KNN_TASK_ROWS;
    let cells = a.rows().saturating_mul(k);
    let out = detached(py, cells, |cancel| {
        eval::with_threads_or_inline(threads, one_task, || {
            dense::knn_recall_distances(&a, &e, k, epsilon, cancel)
        })
    })?
    .and_then(|x| x)
    .map_err(|e| to_py(py, e))?;
    Ok(out.into_pyarray(py))
}

type FlatOut<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<bool>>,
    Bound<'py, PyArray1<i64>>,
);

/// Score flat cells grouped by `indexes` (1-D int64); `scores` and `labels`
/// are 1 x N views.  Returns as `evaluate_dense`, plus the index value of
/// each row (ascending).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (scores, labels, indexes, metrics, relevance_level, ties, empty, scores_half = "", threads = None))]
pub(super) fn evaluate_flat<'py>(
    py: Python<'py>,
    scores: &Bound<'py, PyAny>,
    labels: &Bound<'py, PyAny>,
    indexes: PyReadonlyArray1<'py, i64>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    ties: &str,
    empty: &str,
    scores_half: &str,
    threads: Option<usize>,
) -> PyResult<FlatOut<'py>> {
    let err = |e: Error| to_py(py, e);
    let (_, specs) = eval_setup(&metrics, relevance_level, false, None, "trec").map_err(err)?;
    let ties = DenseTies::from_name(ties).map_err(err)?;
    let empty = Empty::from_name(empty).map_err(err)?;
    let (s, l) = (
        arr(scores, scores_half, "preds")?,
        arr(labels, "", "target")?,
    );
    let (s, l) = (s.numbers()?, l.numbers()?);
    let idx = indexes.as_slice().map_err(super::non_contiguous)?;
    if idx.len() != s.shape().1 {
        return Err(err(Error::InvalidInput(format!(
            "indexes has {} entries for {} cells",
            idx.len(),
            s.shape().1
        ))));
    }
    let work = idx.len().saturating_mul(specs.len());
    let (out, keys) = detached(py, work, |cancel| {
        let score = |groups: dense::FlatGroups| {
            let (level, specs) = (relevance_level, &specs);
            let out = dense::evaluate_flat(&s, &l, &groups, specs, level, ties, empty, cancel)?;
            Ok::<_, Error>((out, groups.keys))
        };
        {
            if idx.len() > dense::SORTED_CHUNK {
                return eval::with_threads(threads, || score(dense::group_flat(idx)));
            }
            // A call of one task's cells is grouped here, and of one task's
            // groups scored here: the pool's hand-over would cost more than
            // their work (`eval::with_threads_or_inline`).
            eval::thread_count(threads)?;
            let groups = dense::group_flat(idx);
            let one_task = groups.keys.len() <= dense::TASK_ROWS;
            eval::with_threads_or_inline(threads, one_task, || score(groups))
        }
    })?
    .and_then(|x| x)
    .map_err(err)?;
    let rows = keys.len();
    let (values, empty_rows) = output(py, out, rows, specs.len())?;
    Ok((values, empty_rows, keys.into_pyarray(py)))
}
