//! Scoring arrays in place: score matrices, ranked id lists, ANN neighbours.
//!
//! No ids, no hashing, no join: row `i` of a `scores` matrix is query `i`, its
//! columns are the candidates, and `labels[i, j]` is candidate `j`'s label.
//! Each row is ranked (score descending), its label vector is built, and every
//! metric reads it through the same kernels as the id path
//! (`eval::score_ranking`), so every family is available.
//!
//! Semantics of a row (documented for users in `python/ranklens/_dense.py`):
//! * every valid cell is a judged candidate with its label: `0` is judged
//!   non-relevant, a negative label trec_eval's "in the pool, unjudged";
//! * ties ([`DenseTies`]): equal scores in column order (the default), the
//!   expected value over their orderings, or the best / worst ordering;
//! * a row with no label relevant at the evaluation's level is *empty*; its
//!   values follow [`Empty`].
//!
//! Matrices are read through [`Matrix`]: a slice, a shape and element strides
//! (what numpy's views have), so transposed and sliced arrays are read without
//! a copy.  Per-thread scratch holds one row; nothing is allocated per cell.

use crate::core::error::{Error, Result};
use crate::core::eval::{self, score_ranking, Options, Ties};
use crate::core::metrics::query::{is_rel, PrefixBuf, Query, TieGroups};
use crate::core::metrics::{self, err, Family, MetricSpec};
use rayon::prelude::*;

/// A read-only 2-D view: element `(i, j)` is `data[i * row_stride + j *
/// col_stride]` (strides in elements, not bytes).
#[derive(Clone, Copy, Debug)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
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
    fn get(&self, i: usize, j: usize) -> T {
        self.data[i * self.row_stride + j * self.col_stride]
    }

    /// Row `i`, converted, into `out` (cleared first).
    fn load(&self, i: usize, out: &mut Vec<f64>, conv: impl Fn(T) -> f64) {
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

impl Numbers<'_> {
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
    fn load_cells(&self, cells: impl Iterator<Item = usize>, out: &mut Vec<f64>) {
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
    fn load(&self, i: usize, out: &mut Vec<f64>) {
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

/// Which cells of a row are candidates.
#[derive(Clone, Copy, Debug)]
pub enum Valid<'a> {
    All,
    /// Row `i` holds its first `lengths[i]` columns.
    Lengths(&'a [i64]),
    /// A cell is a candidate where the mask is non-zero.
    Mask(Matrix<'a, u8>),
}

/// How tied scores are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DenseTies {
    /// Column order: the lower column index ranks first.
    First,
    /// The expected value over the orderings of each group of equal scores
    /// (`metrics/expected.rs`).
    Expected,
    /// Higher labels first within a group of equal scores (then column order):
    /// the best value over the orderings for every metric that rewards
    /// ranking higher labels higher.
    Best,
    /// Lower labels first within a group of equal scores (then column order).
    Worst,
}

impl DenseTies {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "first" => DenseTies::First,
            "expected" => DenseTies::Expected,
            "best" => DenseTies::Best,
            "worst" => DenseTies::Worst,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "ties must be 'first', 'expected', 'best' or 'worst', got {name:?}"
                )))
            }
        })
    }
}

/// The value of every metric on a row with no relevant label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    Zero,
    One,
    /// NaN.
    Nan,
    /// NaN here; the caller drops the row (the empty flags say which).
    Skip,
}

impl Empty {
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "zero" => Empty::Zero,
            "one" => Empty::One,
            "nan" => Empty::Nan,
            "skip" => Empty::Skip,
            _ => {
                return Err(Error::InvalidInput(format!(
                    "empty must be 'zero', 'nan', 'skip' or 'one', got {name:?}"
                )))
            }
        })
    }

    fn value(self) -> f64 {
        match self {
            Empty::Zero => 0.0,
            Empty::One => 1.0,
            Empty::Nan | Empty::Skip => f64::NAN,
        }
    }
}

/// What [`evaluate_dense`] and [`evaluate_topk`] return.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseEvaluation {
    /// Row-major `rows x metrics`.
    pub values: Vec<f64>,
    /// Whether each row had no relevant label (its values follow `Empty`).
    pub empty: Vec<bool>,
}

/// Per-thread scratch: one row.
#[derive(Default)]
struct Scratch {
    scores: Vec<f64>,
    labels: Vec<f64>,
    mask: Vec<f64>,
    /// The column of each kept cell when a mask drops some.
    cols: Vec<u32>,
    order: Vec<u32>,
    ranked: Vec<f64>,
    ideal: Vec<f64>,
    bounds: Vec<usize>,
    prefix: PrefixBuf,
    ids: Vec<i64>,
    rel: Vec<i64>,
}

/// Build the shared running sums from this many metrics on.
const PREFIX_FROM: usize = 12;

/// Rank cells by counting, rather than sorting, when at most this many per
/// `log2(n)` have a non-zero label: each such cell's rank is the number of
/// cells above it, an `n`-long branch-free count.  Why: with the few relevant
/// labels of retrieval data (5 in 100) this is 4x faster than sorting the row,
/// and the zero-label cells need no order among themselves (they are
/// interchangeable for every metric).
const COUNT_PER_LOG2: usize = 4;

/// Score every row of `scores` against the same row of `labels` on every
/// metric (see the module doc for the semantics).
pub fn evaluate_dense(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    valid: &Valid<'_>,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
) -> Result<DenseEvaluation> {
    let (rows, cols) = scores.shape();
    if labels.shape() != (rows, cols) {
        return Err(Error::InvalidInput(format!(
            "labels has shape {:?}, scores {:?}: they must match",
            labels.shape(),
            (rows, cols)
        )));
    }
    check_valid(valid, rows, cols)?;
    let metrics = setup(metrics, level, ties, || max_label(labels, valid, rows))?;
    run_rows(rows, metrics.len(), |s, i, out| {
        scores.load(i, &mut s.scores);
        labels.load(i, &mut s.labels);
        keep_valid(s, valid, i);
        check_row(&s.scores, &s.labels, matrix_cell(i, &s.cols))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    })
}

/// Drop the cells of row `i` that are not candidates from `s.scores` and
/// `s.labels`, keeping their order; `s.cols` gets the columns kept (empty
/// when all are).
fn keep_valid(s: &mut Scratch, valid: &Valid<'_>, i: usize) {
    s.cols.clear();
    match valid {
        Valid::All => {}
        Valid::Lengths(len) => {
            let n = (len[i].max(0) as usize).min(s.scores.len());
            s.scores.truncate(n);
            s.labels.truncate(n);
        }
        Valid::Mask(m) => {
            m.load(i, &mut s.mask, |x| x as f64);
            for j in 0..s.mask.len() {
                if s.mask[j] != 0.0 {
                    s.scores[s.cols.len()] = s.scores[j];
                    s.labels[s.cols.len()] = s.labels[j];
                    s.cols.push(j as u32);
                }
            }
            s.scores.truncate(s.cols.len());
            s.labels.truncate(s.cols.len());
            if s.cols.len() == s.mask.len() {
                s.cols.clear();
            }
        }
    }
}

/// The metrics, checked and resolved (err's automatic `gmax`: the largest
/// label of the whole input, as the id path takes the largest of the qrels).
fn setup(
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    max_label: impl FnOnce() -> f64,
) -> Result<Vec<MetricSpec>> {
    let mut opts = Options::new(level);
    if ties == DenseTies::Expected {
        opts.ties = Ties::Expected;
    }
    eval::check(metrics, &opts)?;
    // The scan for the largest label only when an err@k takes it.
    let auto = |m: &MetricSpec| m.family == Family::Err && m.param("gmax") <= 0.0;
    let max = if metrics.iter().any(auto) {
        max_label()
    } else {
        0.0
    };
    Ok(metrics::resolve_gmax(metrics, max))
}

/// The largest label of the candidates (0 at least).
fn max_label(labels: &Numbers<'_>, valid: &Valid<'_>, rows: usize) -> f64 {
    let mut s = Scratch::default();
    (0..rows).fold(0.0, |acc, i| {
        labels.load(i, &mut s.labels);
        s.scores.clear();
        s.scores.resize(s.labels.len(), 0.0);
        keep_valid(&mut s, valid, i);
        acc.max(err::max_label(&s.labels))
    })
}

fn check_valid(valid: &Valid<'_>, rows: usize, cols: usize) -> Result<()> {
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

/// NaN scores and NaN or infinite labels are errors naming the cell:
/// `cell(j)` is the index of the row's `j`-th kept cell as users write it.
fn check_row(scores: &[f64], labels: &[f64], cell: impl Fn(usize) -> String) -> Result<()> {
    // Branch-free scans first (they vectorise); positions only on failure.
    let nan = scores.iter().fold(false, |a, x| a | x.is_nan());
    if !nan && !labels.iter().fold(false, |a, l| a | !l.is_finite()) {
        return Ok(());
    }
    if let Some(j) = scores.iter().position(|s| s.is_nan()) {
        return Err(Error::InvalidInput(format!(
            "scores{} is NaN (pass mask= to leave cells out)",
            cell(j)
        )));
    }
    if let Some(j) = labels.iter().position(|l| !l.is_finite()) {
        return Err(Error::InvalidInput(format!(
            "labels{} is {} (labels must be finite; pass mask= to leave cells out)",
            cell(j),
            labels[j]
        )));
    }
    Ok(())
}

/// `[i, j]`: cell `j` of row `i`, `cols` holding the column of each kept
/// cell (empty when all are kept).
fn matrix_cell(i: usize, cols: &[u32]) -> impl Fn(usize) -> String + '_ {
    move |j| format!("[{i}, {}]", cols.get(j).map_or(j, |&c| c as usize))
}

/// The parallel loop over rows: `row(scratch, i, out)` writes row `i`'s
/// values and says whether it was empty.
fn run_rows(
    rows: usize,
    nm: usize,
    row: impl Fn(&mut Scratch, usize, &mut [f64]) -> Result<bool> + Sync,
) -> Result<DenseEvaluation> {
    let mut values = vec![0.0; rows * nm];
    let mut flags = vec![false; rows];
    values
        .par_chunks_mut(nm)
        .zip(flags.par_iter_mut())
        .enumerate()
        .with_min_len(64)
        .try_for_each_init(Scratch::default, |s, (i, (out, flag))| {
            *flag = row(s, i, out)?;
            Ok::<(), Error>(())
        })?;
    Ok(DenseEvaluation {
        values,
        empty: flags,
    })
}

/// Fill `s.ranked` (labels in rank order) and, for `Expected`, `s.bounds`
/// (the tie groups) from `s.scores` and `s.labels`.
fn rank_row(s: &mut Scratch, ties: DenseTies) {
    let n = s.scores.len();
    let nonzero: usize = s.labels.iter().map(|&l| usize::from(l != 0.0)).sum();
    let log2n = usize::BITS as usize - n.leading_zeros() as usize;
    if ties == DenseTies::First && nonzero <= COUNT_PER_LOG2 * log2n {
        rank_by_counting(s);
    } else {
        rank_by_sorting(s, ties);
    }
}

/// `DenseTies::First` by counting: the rank of a cell with a non-zero label
/// is the number of cells with a higher score, or an equal score and a lower
/// column; the other ranks hold label 0.
fn rank_by_counting(s: &mut Scratch) {
    s.ranked.clear();
    s.bounds.clear();
    s.ranked.resize(s.scores.len(), 0.0);
    let sc = &s.scores;
    for (j, &l) in s.labels.iter().enumerate() {
        if l == 0.0 {
            continue;
        }
        let x = sc[j];
        let above = sc[..j].iter().filter(|&&y| y >= x).count()
            + sc[j + 1..].iter().filter(|&&y| y > x).count();
        s.ranked[above] = l;
    }
}

fn rank_by_sorting(s: &mut Scratch, ties: DenseTies) {
    let n = s.scores.len();
    s.ranked.clear();
    s.bounds.clear();
    s.order.clear();
    s.order.extend(0..n as u32);
    let (sc, lb) = (&s.scores, &s.labels);
    let by_score = |a: &u32, b: &u32| sc[*b as usize].total_cmp(&sc[*a as usize]);
    match ties {
        DenseTies::First | DenseTies::Expected => s
            .order
            .sort_unstable_by(|a, b| by_score(a, b).then(a.cmp(b))),
        DenseTies::Best => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*b as usize].total_cmp(&lb[*a as usize]))
                .then(a.cmp(b))
        }),
        DenseTies::Worst => s.order.sort_unstable_by(|a, b| {
            by_score(a, b)
                .then(lb[*a as usize].total_cmp(&lb[*b as usize]))
                .then(a.cmp(b))
        }),
    }
    s.ranked.extend(s.order.iter().map(|&j| lb[j as usize]));
    if ties == DenseTies::Expected {
        for (p, &j) in s.order.iter().enumerate() {
            if p == 0 || sc[j as usize] != sc[s.order[p - 1] as usize] {
                s.bounds.push(p);
            }
        }
        if s.bounds.len() == n {
            // No tie: the fixed order is the only one.
            s.bounds.clear();
        } else {
            s.bounds.push(n);
        }
    }
}

/// Whether the row has no relevant label: then `out` is filled by `empty`.
fn empty_row(labels: &[f64], level: f64, empty: Empty, out: &mut [f64]) -> bool {
    if labels.iter().fold(false, |a, &l| a | is_rel(l, level)) {
        return false;
    }
    out.fill(empty.value());
    true
}

/// Every metric on the ranked row into `out`.
fn score_row(
    s: &mut Scratch,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    out: &mut [f64],
) {
    s.ideal.clear();
    s.ideal
        .extend(s.labels.iter().copied().filter(|&l| l > 0.0));
    s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let q = Query {
        ranked: &s.ranked,
        judged: &s.labels,
        ideal: &s.ideal,
        ties: if ties == DenseTies::Expected && !s.bounds.is_empty() {
            TieGroups {
                labels: &s.ranked,
                bounds: &s.bounds,
            }
        } else {
            TieGroups::default()
        },
        prefix: None,
        subtopics: Default::default(),
    };
    // The shared running sums pay off from about a dozen metrics: below,
    // each kernel scanning its own top k is faster (same values, bit for bit:
    // `metrics::prefix_tests`).
    let prefix = (metrics.len() >= PREFIX_FROM).then_some(&mut s.prefix);
    score_ranking(prefix, q, metrics, level, out);
}

/// Ranked ids and what is relevant to each row, for [`evaluate_topk`].
#[derive(Clone, Copy, Debug)]
pub enum Relevant<'a> {
    /// The relevant ids of each row (any order), padded with negative ids.
    Ids(Matrix<'a, i64>),
    /// The label of each retrieved id, aligned with `ids`.
    Labels(Numbers<'a>),
}

/// Score ranked id lists: row `i` of `ids` is query `i`'s ranking, best
/// first; negative ids are padding (left out, ranks closing up).  With
/// `Relevant::Ids` a retrieved id in the row's relevant ids has label 1 and
/// any other is not judged (trec_eval: a document missing from the qrels),
/// and R is the number of distinct relevant ids; with `Relevant::Labels` each
/// retrieved id has the aligned label and the judged pool is the retrieved
/// ids (R counts the relevant ones among them).  A non-negative id twice in
/// one row is an error.
pub fn evaluate_topk(
    ids: &Matrix<'_, i64>,
    relevant: &Relevant<'_>,
    metrics: &[MetricSpec],
    level: f64,
    empty: Empty,
) -> Result<DenseEvaluation> {
    let rows = ids.rows;
    match relevant {
        Relevant::Ids(r) if r.rows != rows => {
            return Err(Error::InvalidInput(format!(
                "relevant has {} rows, ids {rows}: they must match",
                r.rows
            )))
        }
        Relevant::Labels(l) if l.shape() != (rows, ids.cols) => {
            return Err(Error::InvalidInput(format!(
                "relevant labels have shape {:?}, ids {:?}: they must match",
                l.shape(),
                (rows, ids.cols)
            )))
        }
        _ => {}
    }
    let max = || match relevant {
        Relevant::Ids(_) => 1.0,
        Relevant::Labels(l) => {
            // The padding's labels are not candidates: left out.
            let mut s = Scratch::default();
            (0..rows).fold(0.0, |acc, i| {
                l.load(i, &mut s.labels);
                let kept = (0..ids.cols).filter(|&j| ids.get(i, j) >= 0);
                kept.fold(acc, |a: f64, j| a.max(s.labels[j]))
            })
        }
    };
    let metrics = setup(metrics, level, DenseTies::First, max)?;
    run_rows(rows, metrics.len(), |s, i, out| {
        s.ids.clear();
        s.ids.extend((0..ids.cols).map(|j| ids.get(i, j)));
        check_distinct(i, &s.ids, &mut s.rel)?;
        s.ranked.clear();
        s.bounds.clear();
        match relevant {
            Relevant::Ids(r) => {
                s.rel.clear();
                s.rel
                    .extend((0..r.cols).map(|j| r.get(i, j)).filter(|&x| x >= 0));
                s.rel.sort_unstable();
                s.rel.dedup();
                s.ranked.extend(s.ids.iter().filter(|&&d| d >= 0).map(|d| {
                    if s.rel.binary_search(d).is_ok() {
                        1.0
                    } else {
                        f64::NAN
                    }
                }));
                s.labels.clear();
                s.labels.resize(s.rel.len(), 1.0);
            }
            Relevant::Labels(l) => {
                l.load(i, &mut s.labels);
                if let Some(j) = s.labels.iter().position(|l| !l.is_finite()) {
                    return Err(Error::InvalidInput(format!(
                        "relevant[{i}, {j}] is {}: labels must be finite",
                        s.labels[j]
                    )));
                }
                let mut w = 0;
                for j in 0..s.ids.len() {
                    if s.ids[j] >= 0 {
                        s.labels[w] = s.labels[j];
                        w += 1;
                    }
                }
                s.labels.truncate(w);
                s.ranked.extend_from_slice(&s.labels);
            }
        }
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        score_row(s, &metrics, level, DenseTies::First, out);
        Ok(false)
    })
}

/// A non-negative id listed twice in row `i` is an error.
fn check_distinct(i: usize, ids: &[i64], buf: &mut Vec<i64>) -> Result<()> {
    buf.clear();
    buf.extend(ids.iter().copied().filter(|&d| d >= 0));
    buf.sort_unstable();
    match buf.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(Error::InvalidInput(format!(
            "ids row {i}: id {} is listed more than once",
            w[0]
        ))),
        None => Ok(()),
    }
}

/// Flat cells grouped by query (torchmetrics' `(preds, target, indexes)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatGroups {
    /// Group `g` is cells `order[offsets[g]..offsets[g + 1]]` (or that range of
    /// cells itself when `order` is empty: `indexes` was sorted).
    pub offsets: Vec<i64>,
    /// The cells in group order, input order within a group; empty when the
    /// input is already grouped.
    pub order: Vec<i64>,
    /// The index value of each group, ascending.
    pub keys: Vec<i64>,
}

/// Group cells by their `indexes` value: any values, sorted or not; memory
/// proportional to the number of cells when unsorted (one stable sort of
/// cell numbers), to the number of groups otherwise, never to the largest
/// index value.
pub fn group_flat(indexes: &[i64]) -> FlatGroups {
    let sorted = indexes.windows(2).all(|w| w[0] <= w[1]);
    let mut order: Vec<i64> = Vec::new();
    if !sorted {
        // Sort (index, cell) pairs, not cell numbers by an indirect key: the
        // indirect sort read `indexes` at random on every comparison (15x
        // slower on 10M shuffled cells).  Pairs are distinct, so an unstable
        // sort keeps input order within a group.
        let mut pairs: Vec<(i64, i64)> = indexes.iter().copied().zip(0..).collect();
        pairs.par_sort_unstable();
        order.extend(pairs.iter().map(|&(_, c)| c));
    }
    let key = |p: usize| {
        if sorted {
            indexes[p]
        } else {
            indexes[order[p] as usize]
        }
    };
    let mut offsets = Vec::new();
    let mut keys = Vec::new();
    for p in 0..indexes.len() {
        if p == 0 || key(p) != key(p - 1) {
            offsets.push(p as i64);
            keys.push(key(p));
        }
    }
    offsets.push(indexes.len() as i64);
    FlatGroups {
        offsets,
        order,
        keys,
    }
}

/// Score flat `(scores, labels)` cells (1 x N matrices) grouped by
/// [`group_flat`]: group `g` is query `g`, its cells in input order (so
/// `DenseTies::First` breaks ties by input position).
pub fn evaluate_flat(
    scores: &Numbers<'_>,
    labels: &Numbers<'_>,
    groups: &FlatGroups,
    metrics: &[MetricSpec],
    level: f64,
    ties: DenseTies,
    empty: Empty,
) -> Result<DenseEvaluation> {
    let n = scores.shape().1;
    if scores.shape().0 != 1 || labels.shape() != (1, n) {
        return Err(Error::InvalidInput(format!(
            "scores and labels must be flat with as many cells, got {:?} and {:?}",
            scores.shape(),
            labels.shape()
        )));
    }
    let FlatGroups { offsets, order, .. } = groups;
    let bad = offsets.first() != Some(&0)
        || offsets.last() != Some(&(n as i64))
        || offsets.windows(2).any(|w| w[1] < w[0])
        || (!order.is_empty()
            && (order.len() != n || order.iter().any(|&c| c < 0 || c as usize >= n)));
    if bad {
        return Err(Error::InvalidInput(
            "internal: flat groups do not fit the cells".into(),
        ));
    }
    let cells = |g: usize| {
        let (a, b) = (offsets[g] as usize, offsets[g + 1] as usize);
        (a..b).map(move |p| {
            if order.is_empty() {
                p
            } else {
                order[p] as usize
            }
        })
    };
    let metrics = setup(metrics, level, ties, || {
        let mut row = Vec::new();
        labels.load_cells(0..n, &mut row);
        err::max_label(&row)
    })?;
    run_rows(offsets.len() - 1, metrics.len(), |s, g, out| {
        scores.load_cells(cells(g), &mut s.scores);
        labels.load_cells(cells(g), &mut s.labels);
        s.cols.clear();
        s.cols.extend(cells(g).map(|c| c as u32));
        check_row(&s.scores, &s.labels, |j| format!("[{}]", s.cols[j]))?;
        if empty_row(&s.labels, level, empty, out) {
            return Ok(true);
        }
        rank_row(s, ties);
        score_row(s, &metrics, level, ties, out);
        Ok(false)
    })
}

/// Vector-search recall of each row: `|approx[i, :k] ∩ exact[i, :k]| / k`,
/// distinct non-negative ids (negative ids are padding and match nothing).
pub fn knn_recall(approx: &Matrix<'_, i64>, exact: &Matrix<'_, i64>, k: usize) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    let mut out = vec![0.0; approx.rows];
    out.par_iter_mut()
        .enumerate()
        .with_min_len(256)
        .for_each_init(
            || (Vec::new(), Vec::new()),
            |(a, e): &mut (Vec<i64>, Vec<i64>), (i, o)| {
                a.clear();
                a.extend((0..k).map(|j| approx.get(i, j)));
                e.clear();
                e.extend((0..k).map(|j| exact.get(i, j)));
                *o = shared(a, e) as f64 / k as f64;
            },
        );
    Ok(out)
}

/// ann-benchmarks' recall: the approximate neighbours (of the first `k`)
/// whose distance is at most the `k`-th exact distance + `epsilon`, over `k`.
pub fn knn_recall_distances(
    approx: &Matrix<'_, f64>,
    exact: &Matrix<'_, f64>,
    k: usize,
    epsilon: f64,
) -> Result<Vec<f64>> {
    check_knn(approx.rows, exact.rows, approx.cols, exact.cols, k)?;
    let mut out = vec![0.0; approx.rows];
    out.par_iter_mut()
        .enumerate()
        .with_min_len(256)
        .try_for_each(|(i, o)| {
            let t = exact.get(i, k - 1);
            if t.is_nan() {
                return Err(Error::InvalidInput(format!(
                    "exact distances[{i}, {}] is NaN",
                    k - 1
                )));
            }
            let t = t + epsilon;
            let hits = (0..k).filter(|&j| approx.get(i, j) <= t).count();
            *o = hits as f64 / k as f64;
            Ok(())
        })?;
    Ok(out)
}

fn check_knn(ar: usize, er: usize, ac: usize, ec: usize, k: usize) -> Result<()> {
    if ar != er {
        return Err(Error::InvalidInput(format!(
            "approx has {ar} rows, exact {er}: they must match"
        )));
    }
    if k == 0 || k > ac || k > ec {
        return Err(Error::InvalidInput(format!(
            "k must be in 1..={} (approx has {ac} columns, exact {ec}), got {k}",
            ac.min(ec)
        )));
    }
    Ok(())
}

/// Distinct non-negative ids of `a` found in `e` (both reordered).
fn shared(a: &mut [i64], e: &mut [i64]) -> usize {
    let k = a.len();
    if k <= 32 {
        // Quadratic but branch-free and in registers: faster than sorting
        // for the usual k = 10.
        let mut n = 0;
        for (j, &x) in a.iter().enumerate() {
            let fresh = x >= 0 && !a[..j].contains(&x);
            n += usize::from(fresh && e.contains(&x));
        }
        return n;
    }
    a.sort_unstable();
    e.sort_unstable();
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < e.len() {
        match a[i].cmp(&e[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let x = a[i];
                n += usize::from(x >= 0);
                while i < a.len() && a[i] == x {
                    i += 1;
                }
                while j < e.len() && e[j] == x {
                    j += 1;
                }
            }
        }
    }
    n
}

#[cfg(test)]
mod tests;
