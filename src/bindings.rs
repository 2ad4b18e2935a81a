//! The Python bindings: the one file that touches Python objects.
//!
//! Each function converts its arguments (borrowing numpy arrays read-only, as
//! contiguous slices of the right dtype: the Python layer guarantees both),
//! releases the GIL for the work in the core, and moves result `Vec`s into
//! numpy without copying.  Core errors become Python exceptions in `to_py`,
//! and nowhere else.

use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::Error;
use crate::core::eval::{self, Side};
use crate::core::metrics::MetricSpec;
use crate::core::trec::{self, TrecRows};
use crate::core::vocab::Vocab;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};

/// Core error -> the matching class of `ranklens.errors` (all `ValueError`s,
/// but I/O failures, which are `OSError`).
fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let class = match &e {
        Error::Io { .. } => return PyOSError::new_err(e.to_string()),
        Error::Parse { .. } => "ParseError",
        Error::InvalidMetric(_) => "UnknownMetricError",
        _ => "RanklensInputError",
    };
    match py
        .import("ranklens.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((e.to_string(),)))
    {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

type EncodedArrays<'py> = (
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u8>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u32>>,
);

fn to_arrays(py: Python<'_>, e: Encoded) -> EncodedArrays<'_> {
    (
        e.queries.bytes.into_pyarray(py),
        e.queries.offsets.into_pyarray(py),
        e.offsets.into_pyarray(py),
        e.docs.bytes.into_pyarray(py),
        e.docs.offsets.into_pyarray(py),
        e.doc_ids.into_pyarray(py),
        e.values.into_pyarray(py),
        e.extra.into_pyarray(py),
    )
}

/// An id: `str`, or `int` (written in decimal); anything else is an error.
fn id_bytes<'a>(obj: &'a Bound<'_, PyAny>, buf: &'a mut String, what: &str) -> PyResult<&'a [u8]> {
    if let Ok(s) = obj.cast::<PyString>() {
        buf.clear();
        buf.push_str(&s.to_cow()?);
        return Ok(buf.as_bytes());
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>() {
        buf.clear();
        buf.push_str(&obj.str()?.to_cow()?);
        return Ok(buf.as_bytes());
    }
    Err(Error::InvalidInput(format!(
        "{what} must be a str or an int, got {} ({})",
        obj.get_type().name()?,
        obj.repr()?
    )))
    .map_err(|e| to_py(obj.py(), e))
}

/// `mapping.items()` as an iterator, with a fast path for dicts.
fn items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(d.iter().collect());
    }
    let it = obj.call_method0("items")?;
    let mut out = Vec::new();
    for pair in it.try_iter()? {
        let pair = pair?;
        out.push((pair.get_item(0)?, pair.get_item(1)?));
    }
    Ok(out)
}

/// Encode a mapping query id -> (mapping doc id -> value | sequence of doc ids).
/// A sequence is a ranked list (its order is the ranking; only for runs).
#[pyfunction]
#[pyo3(signature = (data, kind, round_f32 = false))]
fn encode_mapping<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    kind: &str,
    round_f32: bool,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let what_value = if kind == Kind::Run { "score" } else { "label" };
    let mut b = Builder::new(kind, round_f32);
    let (mut qbuf, mut dbuf) = (String::new(), String::new());
    let err = |e: Error| to_py(py, e);
    for (qobj, inner) in items(data)? {
        let q = b
            .query(id_bytes(&qobj, &mut qbuf, "a query id")?)
            .map_err(err)?;
        let ranked = inner.cast::<PyList>().is_ok() || inner.cast::<PyTuple>().is_ok();
        if ranked {
            if kind == Kind::Qrels {
                return Err(err(Error::InvalidInput(format!(
                    "query {qbuf:?}: qrels need a mapping doc id -> label, got a list \
                     (use Qrels.from_groups or a dict of labels)"
                ))));
            }
            let docs: Vec<Bound<'py, PyAny>> = inner.try_iter()?.collect::<PyResult<_>>()?;
            let n = docs.len();
            for (i, d) in docs.iter().enumerate() {
                let doc = id_bytes(d, &mut dbuf, "a document id")?;
                b.row(q, doc, (n - i) as f64).map_err(err)?;
            }
            continue;
        }
        let pairs =
            items(&inner).map_err(|_| {
                err(Error::InvalidInput(format!(
                "query {qbuf:?}: expected a mapping doc id -> {what_value} or a list of doc ids, \
                 got {}",
                inner.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            )))
            })?;
        b.reserve(pairs.len());
        for (dobj, vobj) in pairs {
            let value: Option<f64> = if vobj.is_instance_of::<PyString>() {
                None
            } else {
                vobj.extract().ok()
            };
            let doc = id_bytes(&dobj, &mut dbuf, "a document id")?;
            let Some(value) = value else {
                return Err(err(Error::InvalidInput(format!(
                    "query {qbuf:?}, document {:?}: the {what_value} must be a number, got {}",
                    String::from_utf8_lossy(doc),
                    vobj.repr().map(|r| r.to_string()).unwrap_or_default()
                ))));
            };
            b.row(q, doc, value).map_err(err)?;
        }
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}

/// Encode grouped ground truth: `items` is a sequence of
/// `(query id, groups, labels or None)`; each group is a sequence of doc ids (a
/// bare id is a group of one); `labels` gives one label per group (default 1).
#[pyfunction]
fn encode_groups<'py>(py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<EncodedArrays<'py>> {
    let mut b = Builder::new(Kind::Qrels, false);
    let (mut qbuf, mut dbuf) = (String::new(), String::new());
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    for item in items.try_iter()? {
        let item = item?;
        let (qobj, groups, labels): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            item.extract()?;
        let q = b
            .query(id_bytes(&qobj, &mut qbuf, "a query id")?)
            .map_err(err)?;
        if groups.is_instance_of::<PyString>() || groups.try_iter().is_err() {
            return Err(bad(format!(
                "query {qbuf:?}: the ground truth must be a list of groups (lists of ids)"
            )));
        }
        let groups: Vec<Bound<'py, PyAny>> = groups.try_iter()?.collect::<PyResult<_>>()?;
        let labels: Option<Vec<f64>> = if labels.is_none() {
            None
        } else {
            let l: Vec<f64> = labels.extract().map_err(|_| {
                bad(format!(
                    "query {qbuf:?}: labels must be a list of numbers, one per group"
                ))
            })?;
            if l.len() != groups.len() {
                return Err(bad(format!(
                    "query {qbuf:?}: {} labels for {} groups",
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
                return Err(bad(format!("query {qbuf:?}: group {g} is empty")));
            }
            for m in &members {
                let doc = id_bytes(m, &mut dbuf, "a document id")?;
                if doc.is_empty() {
                    return Err(bad(format!(
                        "query {qbuf:?}: group {g} holds an empty document id"
                    )));
                }
                b.grouped_row(q, doc, label, g as u32).map_err(err)?;
            }
        }
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}

type SideArrays<'py> = (
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u32>,
);

fn side<'a>(a: &'a SideArrays<'_>) -> PyResult<Result<Side<'a>, Error>> {
    let sl = |e: numpy::AsSliceError| PyTypeError::new_err(format!("non-contiguous array: {e}"));
    let qv = Vocab::new(a.0.as_slice().map_err(sl)?, a.1.as_slice().map_err(sl)?);
    let dv = Vocab::new(a.3.as_slice().map_err(sl)?, a.4.as_slice().map_err(sl)?);
    let offsets = a.2.as_slice().map_err(sl)?;
    let doc_ids = a.5.as_slice().map_err(sl)?;
    let values = a.6.as_slice().map_err(sl)?;
    let extra = a.7.as_slice().map_err(sl)?;
    Ok(qv.and_then(|qv| dv.and_then(|dv| Side::new(qv, dv, offsets, doc_ids, values, extra))))
}

/// A metric as the Python layer passes it: (family, cutoff, own relevance
/// level, named parameters).
type MetricArg = (String, Option<usize>, Option<f64>, Vec<(String, f64)>);

type EvalArrays<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// Score every qrels query. Returns (values [queries x metrics], run index of
/// each qrels query or -1, indices of run-only queries).
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (qrels, run, metrics, relevance_level, threads = None, judged_only = false, max_docs = None, ties = "trec"))]
fn evaluate<'py>(
    py: Python<'py>,
    qrels: SideArrays<'py>,
    run: SideArrays<'py>,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
) -> PyResult<EvalArrays<'py>> {
    let err = |e: Error| to_py(py, e);
    let opts = eval::Options {
        level: relevance_level,
        judged_only,
        max_docs,
        ties: eval::Ties::from_name(ties).map_err(err)?,
    };
    let specs = metrics
        .iter()
        .map(|(name, k, level, params)| MetricSpec::new(name, *k, *level, params))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    let q = side(&qrels)?.map_err(err)?;
    let r = side(&run)?.map_err(err)?;
    let nq = q.num_queries();
    let nm = specs.len();
    let out = py
        .detach(|| eval::with_threads(threads, || eval::evaluate(&q, &r, &specs, &opts)))
        .and_then(|x| x)
        .map_err(err)?;
    let values = out.values.into_pyarray(py).reshape([nq, nm])?;
    Ok((
        values,
        out.run_index.into_pyarray(py),
        out.run_only.into_pyarray(py),
    ))
}

/// The strings of a vocabulary, as a list of `str` (invalid UTF-8 replaced).
#[pyfunction]
fn decode_vocab<'py>(
    py: Python<'py>,
    bytes: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Vec<Bound<'py, PyString>>> {
    let sl = |e: numpy::AsSliceError| PyTypeError::new_err(format!("non-contiguous array: {e}"));
    let v = Vocab::new(
        bytes.as_slice().map_err(sl)?,
        offsets.as_slice().map_err(sl)?,
    )
    .map_err(|e| to_py(py, e))?;
    Ok((0..v.len())
        .map(|i| PyString::new(py, &String::from_utf8_lossy(v.get(i))))
        .collect())
}

/// (p-values, CI lows, CI highs) of `stats_resample`.
type ResampleArrays<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Resampling tests on paired differences (`jobs x n`, one job per row):
/// returns (p-values, CI lows, CI highs).  `test`: "fisher", "bootstrap" or
/// "none" (CI only); `exact`: None = auto.  See `core::stats`.
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (diffs, test, n_resamples, seed, exact = None, confidence = 0.95, threads = None))]
fn stats_resample<'py>(
    py: Python<'py>,
    diffs: numpy::PyReadonlyArray2<'py, f64>,
    test: &str,
    n_resamples: u64,
    seed: u64,
    exact: Option<bool>,
    confidence: f64,
    threads: Option<usize>,
) -> PyResult<ResampleArrays<'py>> {
    use crate::core::stats;
    let err = |e: Error| to_py(py, e);
    let settings = stats::Settings {
        test: stats::Test::from_name(test).map_err(err)?,
        n_resamples,
        seed,
        exact,
        level: confidence,
    };
    let n = diffs.as_array().ncols();
    let data = diffs
        .as_slice()
        .map_err(|e| PyTypeError::new_err(format!("non-contiguous array: {e}")))?;
    let out = py
        .detach(|| eval::with_threads(threads, || stats::resample_batch(data, n, &settings)))
        .and_then(|x| x)
        .map_err(err)?;
    let p: Vec<f64> = out.iter().map(|o| o.p_value).collect();
    let lo: Vec<f64> = out.iter().map(|o| o.ci_low).collect();
    let hi: Vec<f64> = out.iter().map(|o| o.ci_high).collect();
    Ok((p.into_pyarray(py), lo.into_pyarray(py), hi.into_pyarray(py)))
}

/// Survival function of the studentized range, `P(Q > q)` for each `q`, with
/// `k` groups and `df` degrees of freedom (`inf` allowed).
#[pyfunction]
#[pyo3(signature = (q, k, df, threads = None))]
fn studentized_range_sf<'py>(
    py: Python<'py>,
    q: PyReadonlyArray1<'py, f64>,
    k: usize,
    df: f64,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    use crate::core::stats;
    let err = |e: Error| to_py(py, e);
    let q = q
        .as_slice()
        .map_err(|e| PyTypeError::new_err(format!("non-contiguous array: {e}")))?;
    let out = py
        .detach(|| eval::with_threads(threads, || stats::studentized_range_sf_many(q, k, df)))
        .and_then(|x| x)
        .map_err(err)?;
    Ok(out.into_pyarray(py))
}

/// Read a TREC run or qrels file (`"-"` = stdin; gzip recognised by its magic
/// bytes).  Returns the encoded arrays (as `encode_mapping`) and the tag of the
/// run's first line (`None` for qrels or an empty run).
#[pyfunction]
#[pyo3(signature = (path, kind, round_f32 = false))]
fn read_trec<'py>(
    py: Python<'py>,
    path: &str,
    kind: &str,
    round_f32: bool,
) -> PyResult<(EncodedArrays<'py>, Option<String>)> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let t = py
        .detach(|| trec::read_trec_file(path, kind, round_f32))
        .map_err(|e| to_py(py, e))?;
    Ok((to_arrays(py, t.encoded), t.tag))
}

/// Write an encoded side as a TREC file (`.gz` paths compressed, `"-"` stdout).
/// `tag` is required for a run and ignored for qrels.
#[pyfunction]
#[pyo3(signature = (path, kind, side, tag = None))]
fn write_trec<'py>(
    py: Python<'py>,
    path: &str,
    kind: &str,
    side: SideArrays<'py>,
    tag: Option<&str>,
) -> PyResult<()> {
    let sl = |e: numpy::AsSliceError| PyTypeError::new_err(format!("non-contiguous array: {e}"));
    let err = |e: Error| to_py(py, e);
    let rows = TrecRows {
        queries: Vocab::new(
            side.0.as_slice().map_err(sl)?,
            side.1.as_slice().map_err(sl)?,
        )
        .map_err(err)?,
        docs: Vocab::new(
            side.3.as_slice().map_err(sl)?,
            side.4.as_slice().map_err(sl)?,
        )
        .map_err(err)?,
        offsets: side.2.as_slice().map_err(sl)?,
        doc_ids: side.5.as_slice().map_err(sl)?,
        values: side.6.as_slice().map_err(sl)?,
    };
    py.detach(|| match kind {
        "run" => trec::write_run_rows(path, rows, tag.unwrap_or("ranklens")),
        "qrels" => trec::write_qrels_rows(path, rows),
        _ => Err(Error::InvalidInput("kind must be 'run' or 'qrels'".into())),
    })
    .map_err(err)
}

#[pymodule]
fn _ranklens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(encode_groups, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(decode_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(read_trec, m)?)?;
    m.add_function(wrap_pyfunction!(write_trec, m)?)?;
    m.add_function(wrap_pyfunction!(stats_resample, m)?)?;
    m.add_function(wrap_pyfunction!(studentized_range_sf, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
