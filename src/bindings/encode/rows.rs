//! Grouped ground truth and RAG-style rows into a side: [`encode_groups`]
//! (`Qrels.from_groups`: per query, groups of interchangeable documents and
//! their labels) and [`encode_rows`] (one query per row, numbered).
//!
//! Invariants: a group is a list or tuple of ids, a bare id a group of one;
//! no group is empty and no document id is empty; a row's number, padded
//! with zeros, is its query id, so byte order is row order.  The rows go
//! through the same `Builder` as every other input (duplicates, ranking).

use super::super::ids::{self, At, Place, Role};
use super::super::{is_id, num_rows, ranking_items, row_items, to_arrays, to_py, EncodedArrays};
use crate::core::encode::{Builder, Kind};
use crate::core::error::Error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

/// Encode grouped ground truth: `items` is a sequence of
/// `(query id, groups, labels or None)`; each group is a sequence of doc ids (a
/// bare id is a group of one); `labels` gives one label per group (default 1).
#[pyfunction]
pub(crate) fn encode_groups<'py>(
    py: Python<'py>,
    items: &Bound<'py, PyAny>,
) -> PyResult<EncodedArrays<'py>> {
    let mut b = Builder::new(Kind::Qrels, false);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    for item in items.try_iter()? {
        let item = item?;
        let (qobj, groups, labels): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            item.extract()?;
        let qid = ids::id_string(&qobj, Place::new(Role::Query, At::Top))?;
        let q = b.query(qid.as_bytes()).map_err(err)?;
        if groups.is_instance_of::<PyString>() || groups.try_iter().is_err() {
            return Err(bad(format!(
                "query {qid:?}: the ground truth must be a list of groups (lists of ids)"
            )));
        }
        let groups: Vec<Bound<'py, PyAny>> = groups.try_iter()?.collect::<PyResult<_>>()?;
        let labels: Option<Vec<f64>> = if labels.is_none() {
            None
        } else {
            let l: Vec<f64> = labels.extract().map_err(|_| {
                bad(format!(
                    "query {qid:?}: labels must be a list of numbers, one per group"
                ))
            })?;
            if l.len() != groups.len() {
                return Err(bad(format!(
                    "query {qid:?}: {} labels for {} groups",
                    l.len(),
                    groups.len()
                )));
            }
            Some(l)
        };
        for (g, group) in groups.iter().enumerate() {
            let label = labels.as_ref().map_or(1.0, |l| l[g]);
            let members: Vec<Bound<'py, PyAny>> =
                if group.cast::<PyList>().is_ok() || group.cast::<PyTuple>().is_ok() {
                    group.try_iter()?.collect::<PyResult<_>>()?
                } else {
                    vec![group.clone()]
                };
            if members.is_empty() {
                return Err(bad(format!("query {qid:?}: group {g} is empty")));
            }
            for m in &members {
                let doc = ids::id_bytes(m, &mut dbuf, Place::new(Role::Doc, At::Query(&qid)))?;
                if doc.is_empty() {
                    return Err(bad(format!(
                        "query {qid:?}: group {g} holds an empty document id"
                    )));
                }
                b.grouped_row(q, doc, label, g as u32).map_err(err)?;
            }
        }
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}

/// Encode one side from rows, the row index (zero-padded, so that byte order is
/// row order) as the query id.  `kind="run"`: each row is a ranked list of ids
/// or a mapping id -> score.  `kind="qrels"`: each row is a list whose items
/// are ids (a group of one, label 1) or lists of ids (a group, label 1), or a
/// mapping id -> label (each id its own group).  Qrels are always grouped; with
/// groups of one that is ordinary qrels.  `None` is an empty row.
#[pyfunction]
pub(crate) fn encode_rows<'py>(
    py: Python<'py>,
    rows: &Bound<'py, PyAny>,
    kind: &str,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let n = num_rows(rows, "the rows")?;
    let width = n.saturating_sub(1).to_string().len();
    let mut b = Builder::new(kind, false);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    let mut count = 0usize;
    for (r, row) in rows.try_iter()?.enumerate() {
        let row = row?;
        count += 1;
        let q = b.query(format!("{r:0width$}").as_bytes()).map_err(err)?;
        let doc_of = |obj: &Bound<'py, PyAny>, buf: &mut String| -> PyResult<Vec<u8>> {
            let d = ids::id_bytes(obj, buf, Place::new(Role::Doc, At::Row(r)))?;
            if d.is_empty() {
                return Err(bad(format!("row {r}: an empty document id")));
            }
            Ok(d.to_vec())
        };
        if let Ok(d) = row.cast::<PyDict>() {
            for (g, (k, v)) in d.iter().enumerate() {
                let doc = doc_of(&k, &mut dbuf)?;
                let value: f64 = if v.is_instance_of::<PyString>() {
                    None
                } else {
                    v.extract().ok()
                }
                .ok_or_else(|| {
                    bad(format!(
                        "row {r}, document {:?}: the value must be a number, got {}",
                        String::from_utf8_lossy(&doc),
                        v.repr().map(|x| x.to_string()).unwrap_or_default()
                    ))
                })?;
                match kind {
                    Kind::Run => b.row(q, &doc, value),
                    Kind::Qrels => b.grouped_row(q, &doc, value, g as u32),
                }
                .map_err(err)?;
            }
            continue;
        }
        // A run's row is a ranking (its order gives the scores); a qrels
        // row is a list of groups, whose order is only their numbering.
        let items = match kind {
            Kind::Run => ranking_items(&row, r, "a row")?,
            Kind::Qrels => row_items(&row, r, "a row")?,
        };
        let Some(items) = items else {
            continue;
        };
        let len = items.len();
        for (g, item) in items.iter().enumerate() {
            if kind == Kind::Run || is_id(item) {
                let doc = doc_of(item, &mut dbuf)?;
                match kind {
                    Kind::Run => b.row(q, &doc, (len - g) as f64),
                    Kind::Qrels => b.grouped_row(q, &doc, 1.0, g as u32),
                }
                .map_err(err)?;
                continue;
            }
            let members = row_items(item, r, "a group")?.unwrap_or_default();
            if members.is_empty() {
                return Err(bad(format!("row {r}: group {g} is empty")));
            }
            for m in &members {
                let doc = doc_of(m, &mut dbuf)?;
                b.grouped_row(q, &doc, 1.0, g as u32).map_err(err)?;
            }
        }
    }
    if count != n {
        return Err(bad(format!("{n} rows announced, {count} iterated")));
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}
