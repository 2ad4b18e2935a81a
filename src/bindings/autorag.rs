//! AutoRAG's metrics of every row (`core::autorag`, `core::autorag::tokens`):
//! retrieval metrics from ids, token-overlap metrics from contents.
//!
//! The rows are read under the GIL into flat arrays (each id's key once, a
//! passage's text once), then scored in parallel without it.  Ids follow
//! `ids`'s rule but for equality: a key keeps the id's type (`1` and `"1"`
//! differ), as AutoRAG compares ids in Python.  A row AutoRAG answers with
//! None for (missing, empty, blank) is marked invalid, not an error.
//! A retrieved row is a ranking: one whose iteration order is none (a set, a
//! dict view) is refused naming its type (`ranking_items`, the rule every
//! door shares); a ground-truth row or group has no order and may be a set.
//!
//! Rejected: one table of every id across rows (a row's ids are only
//! compared with the same row's; the keys' bytes are enough).

use super::ids::{self, At, Place, Role};
use super::{is_id, num_rows, ranking_items, row_items, to_py, SIGNAL_ROWS};
use crate::core::autorag::tokens::is_py_space;
use crate::core::error::Error;
use crate::core::eval;
use numpy::{IntoPyArray, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyString;

pub(super) fn same_rows(py: Python<'_>, a: usize, b: usize, what: (&str, &str)) -> PyResult<()> {
    if a != b {
        return Err(to_py(
            py,
            Error::InvalidInput(format!(
                "{} has {a} rows but {} has {b}: one row each per question",
                what.0, what.1
            )),
        ));
    }
    Ok(())
}

/// An AutoRAG id's key into `buf`, `Ok(false)` for a blank string (AutoRAG
/// then returns None for the row).  The key is a type tag then the id's text
/// (`ids::read`), so that `1` and `"1"` differ, as in Python, while
/// `np.int64(1)` and `1` are one.  `text`: scratch for an integer's digits.
pub(super) fn autorag_key(
    obj: &Bound<'_, PyAny>,
    row: usize,
    buf: &mut Vec<u8>,
    text: &mut String,
) -> PyResult<bool> {
    let id = ids::read(obj, text, Place::new(Role::Any, At::Row(row)))?;
    buf.clear();
    if !id.int && blank(id.bytes) {
        return Ok(false);
    }
    buf.push(if id.int { b'i' } else { b's' });
    buf.extend_from_slice(id.bytes);
    Ok(true)
}

/// Whether UTF-8 `text` is empty or only whitespace as Python's `str.strip`
/// sees it; a first byte that is printable ASCII answers without decoding.
fn blank(text: &[u8]) -> bool {
    match text.first() {
        None => true,
        Some(&b) if b.is_ascii() && !is_py_space(b as char) => false,
        _ => std::str::from_utf8(text).is_ok_and(|s| s.trim_matches(is_py_space).is_empty()),
    }
}

/// AutoRAG's retrieval metrics of every row: a `rows x 6` array, columns
/// recall, precision, f1, mrr, map, ndcg (`core::autorag`); NaN where
/// AutoRAG returns None (a missing, empty or blank ground truth or retrieved
/// list).  `compensated`: sum as Python >= 3.12 does.
#[pyfunction]
#[pyo3(signature = (retrieval_gt, retrieved_ids, compensated, threads = None))]
pub(super) fn autorag_retrieval<'py>(
    py: Python<'py>,
    retrieval_gt: &Bound<'py, PyAny>,
    retrieved_ids: &Bound<'py, PyAny>,
    compensated: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    use crate::core::autorag;
    let n = num_rows(retrieval_gt, "retrieval_gt")?;
    let m = num_rows(retrieved_ids, "retrieved_ids")?;
    same_rows(py, n, m, ("retrieval_gt", "retrieved_ids"))?;
    let err = |e: Error| to_py(py, e);
    // Every id's key, copied once; rows compare them in parallel (no global table).
    let (mut key_bytes, mut key_offsets) = (Vec::<u8>::new(), vec![0usize]);
    let (mut key, mut text) = (Vec::new(), String::new());
    let mut push_key = |key: &[u8]| -> PyResult<u32> {
        let id = key_offsets.len() - 1;
        if id >= u32::MAX as usize {
            return Err(to_py(
                py,
                Error::InvalidInput("more than 4,294,967,294 ids in all".into()),
            ));
        }
        key_bytes.extend_from_slice(key);
        key_offsets.push(key_bytes.len());
        Ok(id as u32)
    };
    let (mut row_groups, mut group_ids, mut gt_ids) = (vec![0usize], vec![0usize], Vec::new());
    let (mut row_pred, mut pred_ids, mut valid) = (vec![0usize], Vec::new(), Vec::new());
    for (r, (gt, pred)) in retrieval_gt
        .try_iter()?
        .zip(retrieved_ids.try_iter()?)
        .enumerate()
    {
        let (gt, pred) = (gt?, pred?);
        let mut ok = true;
        match row_items(&gt, r, "a retrieval_gt row (a list of groups)")? {
            None => ok = false,
            Some(groups) => {
                ok &= !groups.is_empty();
                for group in &groups {
                    if is_id(group) {
                        ok &= autorag_key(group, r, &mut key, &mut text)?;
                        gt_ids.push(push_key(&key)?);
                    } else {
                        let members = row_items(group, r, "a group")?.unwrap_or_default();
                        ok &= !members.is_empty();
                        for mbr in &members {
                            ok &= autorag_key(mbr, r, &mut key, &mut text)?;
                            gt_ids.push(push_key(&key)?);
                        }
                    }
                    group_ids.push(gt_ids.len());
                }
            }
        }
        row_groups.push(group_ids.len() - 1);
        match ranking_items(&pred, r, "a retrieved_ids row")? {
            None => ok = false,
            Some(items) => {
                ok &= !items.is_empty();
                for item in &items {
                    ok &= autorag_key(item, r, &mut key, &mut text)?;
                    pred_ids.push(push_key(&key)?);
                }
            }
        }
        row_pred.push(pred_ids.len());
        valid.push(ok);
        signals_every_rows(py, r)?;
    }
    let rows = autorag::Rows {
        row_groups: &row_groups,
        group_ids: &group_ids,
        gt_ids: &gt_ids,
        row_pred: &row_pred,
        pred_ids: &pred_ids,
        valid: &valid,
    };
    let keys = autorag::Keys {
        bytes: &key_bytes,
        offsets: &key_offsets,
    };
    let out = py
        .detach(|| {
            // One task's rows run here: the pool's hand-over would cost more.
            eval::with_threads_or_inline(threads, n <= autorag::TASK_ROWS, || {
                autorag::retrieval_scores(&rows, Some(keys), compensated)
            })
        })
        .map_err(err)?;
    out.into_pyarray(py).reshape([n, 6])
}

/// Runs the pending signal handlers after every [`SIGNAL_ROWS`]th row `r`:
/// the rows are read with the GIL held and only owned references, so a
/// handler (Python code) may run between two rows; Ctrl-C's
/// `KeyboardInterrupt` is its error.
fn signals_every_rows(py: Python<'_>, r: usize) -> PyResult<()> {
    if r % SIGNAL_ROWS == SIGNAL_ROWS - 1 {
        py.check_signals()?;
    }
    Ok(())
}

/// Append the strings of a contents row; `Ok(false)` when AutoRAG returns None
/// for it (missing, empty, or a blank string).  `nested`: items may be groups.
pub(super) fn push_contents(
    obj: &Bound<'_, PyAny>,
    row: usize,
    nested: bool,
    text: &mut String,
    offsets: &mut Vec<usize>,
) -> PyResult<bool> {
    let what = if nested {
        "a retrieval_gt_contents row (a list of groups of passages)"
    } else {
        "a retrieved_contents row (a list of passages)"
    };
    let Some(items) = row_items(obj, row, what)? else {
        return Ok(false);
    };
    let mut ok = !items.is_empty();
    for item in &items {
        if let Ok(s) = item.cast::<PyString>() {
            let s = super::str_utf8(s, || format!("row {row}: a passage"))?;
            ok &= !s.trim_matches(is_py_space).is_empty();
            text.push_str(&s);
            offsets.push(text.len());
        } else if nested {
            let members = row_items(item, row, "a group of passages")?.unwrap_or_default();
            ok &= !members.is_empty();
            for mbr in &members {
                ok &= push_contents_one(mbr, row, text, offsets)?;
            }
        } else {
            ok &= push_contents_one(item, row, text, offsets)?;
        }
    }
    Ok(ok)
}

pub(super) fn push_contents_one(
    obj: &Bound<'_, PyAny>,
    row: usize,
    text: &mut String,
    offsets: &mut Vec<usize>,
) -> PyResult<bool> {
    let s = obj.cast::<PyString>().map_err(|_| {
        to_py(
            obj.py(),
            Error::InvalidInput(format!(
                "row {row}: passages must be str, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )),
        )
    })?;
    let s = super::str_utf8(s, || format!("row {row}: a passage"))?;
    let ok = !s.trim_matches(is_py_space).is_empty();
    text.push_str(&s);
    offsets.push(text.len());
    Ok(ok)
}

/// AutoRAG's token-overlap metrics of every row: a `rows x 3` array, columns
/// precision, recall, f1 (`core::autorag::tokens`); NaN where AutoRAG returns None.
#[pyfunction]
#[pyo3(signature = (retrieved_contents, retrieval_gt_contents, threads = None))]
pub(super) fn autorag_token<'py>(
    py: Python<'py>,
    retrieved_contents: &Bound<'py, PyAny>,
    retrieval_gt_contents: &Bound<'py, PyAny>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    use crate::core::autorag::tokens;
    let n = num_rows(retrieved_contents, "retrieved_contents")?;
    let m = num_rows(retrieval_gt_contents, "retrieval_gt_contents")?;
    same_rows(py, n, m, ("retrieved_contents", "retrieval_gt_contents"))?;
    let mut text = String::new();
    let mut offsets = vec![0usize];
    let (mut pred_rows, mut gt_rows, mut valid) = (Vec::new(), Vec::new(), Vec::new());
    for (r, (pred, gt)) in retrieved_contents
        .try_iter()?
        .zip(retrieval_gt_contents.try_iter()?)
        .enumerate()
    {
        let (pred, gt) = (pred?, gt?);
        pred_rows.push(offsets.len() - 1);
        let ok_p = push_contents(&pred, r, false, &mut text, &mut offsets)?;
        gt_rows.push(offsets.len() - 1);
        let ok_g = push_contents(&gt, r, true, &mut text, &mut offsets)?;
        valid.push(ok_p && ok_g);
        signals_every_rows(py, r)?;
    }
    // Row r: preds pred_rows[r]..gt_rows[r], gts gt_rows[r]..pred_rows[r + 1].
    let end = offsets.len() - 1;
    let pred_ends: Vec<usize> = gt_rows.clone();
    let gt_ends: Vec<usize> = (0..n)
        .map(|r| if r + 1 < n { pred_rows[r + 1] } else { end })
        .collect();
    let out = py
        .detach(|| {
            // One task's rows run here: the pool's hand-over would cost more.
            eval::with_threads_or_inline(threads, n <= tokens::TASK_ROWS, || {
                tokens::token_scores_ranges(
                    tokens::Passages {
                        text: &text,
                        offsets: &offsets,
                    },
                    &pred_rows,
                    &pred_ends,
                    &gt_rows,
                    &gt_ends,
                    &valid,
                )
            })
        })
        .map_err(|e| to_py(py, e))?;
    out.into_pyarray(py).reshape([n, 3])
}
