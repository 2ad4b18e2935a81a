//! The Python bindings: the one file that touches Python objects.
//!
//! Each function converts its arguments (borrowing numpy arrays read-only, as
//! contiguous slices of the right dtype: the Python layer guarantees both),
//! releases the GIL for the work in the core, and moves result `Vec`s into
//! numpy without copying.  Core errors become Python exceptions in `to_py`,
//! and nowhere else.

use crate::core::columns;
use crate::core::encode::{Builder, Encoded, Kind};
use crate::core::error::Error;
use crate::core::eval::{self, Side};
use crate::core::metrics::MetricSpec;
use crate::core::trec::{self, TrecRows};
use crate::core::vocab::Vocab;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

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

/// An id: `str` (its UTF-8 bytes, borrowed from the object: no copy), or `int`
/// (written in decimal into `buf`); anything else is an error.
fn id_bytes<'a>(obj: &'a Bound<'_, PyAny>, buf: &'a mut String, what: &str) -> PyResult<&'a [u8]> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
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

/// An id as an owned string (for query ids, kept for error messages).
fn id_string(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let mut buf = String::new();
    let bytes = id_bytes(obj, &mut buf, what)?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
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
///
/// `pytrec_types`: accept exactly what pytrec_eval's `RelevanceEvaluator`
/// accepts (`str` query and document ids, a `dict` per query; `int` labels,
/// `float` or `int` scores, subclasses included) and raise its `TypeError`s,
/// checked entry by entry in the order pytrec_eval checks them, so the
/// compatibility layer needs no second pass over the data in Python.
#[pyfunction]
#[pyo3(signature = (data, kind, round_f32 = false, pytrec_types = false))]
fn encode_mapping<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    kind: &str,
    round_f32: bool,
    pytrec_types: bool,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let what_value = if kind == Kind::Run { "score" } else { "label" };
    let mut b = Builder::new(kind, round_f32);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    // Mappings keyed by `str` cannot hold a document twice for a query (an
    // `int` key could collide with its decimal string, a list can repeat).
    let mut unique = true;
    let bad_run = || PyTypeError::new_err("Unable to extract query/object scores.");
    for (qobj, inner) in items(data)? {
        if pytrec_types {
            if kind == Kind::Qrels {
                check_pytrec_qrels(&qobj, &inner)?;
            } else if !qobj.is_instance_of::<PyString>() || inner.cast::<PyDict>().is_err() {
                return Err(bad_run());
            }
        }
        let qid = id_string(&qobj, "a query id")?;
        unique &= qobj.is_instance_of::<PyString>();
        let q = b.query(qid.as_bytes()).map_err(err)?;
        let ranked = inner.cast::<PyList>().is_ok() || inner.cast::<PyTuple>().is_ok();
        if ranked {
            if kind == Kind::Qrels {
                return Err(err(Error::InvalidInput(format!(
                    "query {qid:?}: qrels need a mapping doc id -> label, got a list \
                     (use Qrels.from_groups or a dict of labels)"
                ))));
            }
            unique = false;
            let docs: Vec<Bound<'py, PyAny>> = inner.try_iter()?.collect::<PyResult<_>>()?;
            let n = docs.len();
            for (i, d) in docs.iter().enumerate() {
                let doc = id_bytes(d, &mut dbuf, "a document id")?;
                b.row(q, doc, (n - i) as f64).map_err(err)?;
            }
            continue;
        }
        let mut add = |dobj: &Bound<'py, PyAny>, vobj: &Bound<'py, PyAny>| -> PyResult<()> {
            if pytrec_types
                && kind == Kind::Run
                && !(dobj.is_instance_of::<PyString>()
                    && (vobj.is_instance_of::<PyFloat>() || vobj.is_instance_of::<PyInt>()))
            {
                return Err(bad_run());
            }
            // Python floats first (the common case), then anything numeric.
            let value: Option<f64> = if let Ok(f) = vobj.cast::<PyFloat>() {
                Some(f.value())
            } else if vobj.is_instance_of::<PyString>() {
                None
            } else {
                vobj.extract().ok()
            };
            unique &= dobj.is_instance_of::<PyString>();
            let doc = id_bytes(dobj, &mut dbuf, "a document id")?;
            let Some(value) = value else {
                return Err(err(Error::InvalidInput(format!(
                    "query {qid:?}, document {:?}: the {what_value} must be a number, got {}",
                    String::from_utf8_lossy(doc),
                    vobj.repr().map(|r| r.to_string()).unwrap_or_default()
                ))));
            };
            b.row(q, doc, value).map_err(err)
        };
        if let Ok(d) = inner.cast::<PyDict>() {
            for (dobj, vobj) in d.iter() {
                add(&dobj, &vobj)?;
            }
            continue;
        }
        let pairs =
            items(&inner).map_err(|_| {
                err(Error::InvalidInput(format!(
                "query {qid:?}: expected a mapping doc id -> {what_value} or a list of doc ids, \
                 got {}",
                inner.get_type().name().map(|n| n.to_string()).unwrap_or_default()
            )))
            })?;
        for (dobj, vobj) in pairs {
            add(&dobj, &vobj)?;
        }
    }
    if unique {
        b.assume_unique_docs();
    }
    let encoded = py.detach(move || b.finish()).map_err(err)?;
    Ok(to_arrays(py, encoded))
}

/// One query of pytrec_eval-style qrels: its type checks and messages.
fn check_pytrec_qrels(qobj: &Bound<'_, PyAny>, inner: &Bound<'_, PyAny>) -> PyResult<()> {
    if !qobj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err("Expected string as key."));
    }
    let Ok(docs) = inner.cast::<PyDict>() else {
        return Err(PyTypeError::new_err("Expected dictionary as value."));
    };
    for (doc, label) in docs.iter() {
        if !doc.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "Expected mapping of document id to query relevance or matching score.",
            ));
        }
        if !label.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err("Expected relevance to be integer."));
        }
    }
    Ok(())
}

/// Encode grouped ground truth: `items` is a sequence of
/// `(query id, groups, labels or None)`; each group is a sequence of doc ids (a
/// bare id is a group of one); `labels` gives one label per group (default 1).
#[pyfunction]
fn encode_groups<'py>(py: Python<'py>, items: &Bound<'py, PyAny>) -> PyResult<EncodedArrays<'py>> {
    let mut b = Builder::new(Kind::Qrels, false);
    let mut dbuf = String::new();
    let err = |e: Error| to_py(py, e);
    let bad = |m: String| to_py(py, Error::InvalidInput(m));
    for item in items.try_iter()? {
        let item = item?;
        let (qobj, groups, labels): (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>) =
            item.extract()?;
        let qid = id_string(&qobj, "a query id")?;
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
                let doc = id_bytes(m, &mut dbuf, "a document id")?;
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

/// The evaluation options and metric specs from the Python arguments.
fn eval_setup(
    metrics: &[MetricArg],
    level: f64,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
) -> Result<(eval::Options, Vec<MetricSpec>), Error> {
    let opts = eval::Options {
        level,
        judged_only,
        max_docs,
        ties: eval::Ties::from_name(ties)?,
    };
    let specs = metrics
        .iter()
        .map(|(name, k, level, params)| MetricSpec::new(name, *k, *level, params))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((opts, specs))
}

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
    let (opts, specs) =
        eval_setup(&metrics, relevance_level, judged_only, max_docs, ties).map_err(err)?;
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

/// `{row key: {column key: value}}` from a `rows x columns` array: the nested
/// dicts of the pytrec_eval drop-in.  The column keys are the caller's `str`
/// objects, shared by every row (their hashes are computed once); built here
/// rather than by `dict(zip(keys, row))` over `tolist()` rows, which took twice
/// as long for ~100 measures a query (no intermediate lists, no tuples).
#[pyfunction]
fn nested_dict<'py>(
    py: Python<'py>,
    rows: Vec<Bound<'py, PyAny>>,
    columns: Vec<Bound<'py, PyAny>>,
    values: numpy::PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let shape = values.as_array().shape().to_vec();
    if shape != [rows.len(), columns.len()] {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "values has shape {shape:?}, expected ({}, {})",
            rows.len(),
            columns.len()
        )));
    }
    let flat = values.as_slice().map_err(non_contiguous)?;
    let out = PyDict::new(py);
    if columns.is_empty() {
        for row in &rows {
            out.set_item(row, PyDict::new(py))?;
        }
        return Ok(out);
    }
    // Each row's dict starts as a copy of the previous one (same keys, same
    // order), whose values are then replaced: no table growth and rehashing
    // on the way to ~100 keys (~30% faster than inserting into a new dict).
    let mut prev: Option<Bound<'py, PyDict>> = None;
    for (row, vals) in rows.iter().zip(flat.chunks_exact(columns.len())) {
        let inner = match &prev {
            Some(p) => p.copy()?,
            None => PyDict::new(py),
        };
        for (key, &v) in columns.iter().zip(vals) {
            inner.set_item(key, PyFloat::new(py, v))?;
        }
        out.set_item(row, &inner)?;
        prev = Some(inner);
    }
    Ok(out)
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
    // Parsed in parallel: on `RANKLENS_NUM_THREADS` threads if set.
    let t = py
        .detach(|| eval::with_threads(None, || trec::read_trec_file(path, kind, round_f32)))
        .and_then(|x| x)
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

/// An id column chunk as the Python side passes it (see `core::columns::Ids`):
/// `("str", bytes, offsets)`, `("dict", bytes, offsets, indices)`,
/// `("int", values)` or `("uint", values)`; offsets and indices int32 or int64.
enum HeldInts<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

enum HeldIds<'py> {
    Strings(PyReadonlyArray1<'py, u8>, HeldInts<'py>),
    Dict(PyReadonlyArray1<'py, u8>, HeldInts<'py>, HeldInts<'py>),
    Int(PyReadonlyArray1<'py, i64>),
    UInt(PyReadonlyArray1<'py, u64>),
}

fn non_contiguous(e: numpy::AsSliceError) -> PyErr {
    PyTypeError::new_err(format!("non-contiguous array: {e}"))
}

impl<'py> HeldInts<'py> {
    fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray1<'py, i32>>() {
            return Ok(HeldInts::I32(a));
        }
        obj.extract::<PyReadonlyArray1<'py, i64>>()
            .map(HeldInts::I64)
            .map_err(|_| PyTypeError::new_err("offsets/indices must be int32 or int64 arrays"))
    }

    fn view(&self) -> PyResult<columns::Ints<'_>> {
        Ok(match self {
            HeldInts::I32(a) => columns::Ints::I32(a.as_slice().map_err(non_contiguous)?),
            HeldInts::I64(a) => columns::Ints::I64(a.as_slice().map_err(non_contiguous)?),
        })
    }
}

impl<'py> HeldIds<'py> {
    fn extract(spec: &Bound<'py, PyTuple>) -> PyResult<Self> {
        let tag: String = spec.get_item(0)?.extract()?;
        let arg = |i: usize| spec.get_item(i);
        Ok(match (tag.as_str(), spec.len()) {
            ("str", 3) => HeldIds::Strings(arg(1)?.extract()?, HeldInts::extract(&arg(2)?)?),
            ("dict", 4) => HeldIds::Dict(
                arg(1)?.extract()?,
                HeldInts::extract(&arg(2)?)?,
                HeldInts::extract(&arg(3)?)?,
            ),
            ("int", 2) => HeldIds::Int(arg(1)?.extract()?),
            ("uint", 2) => HeldIds::UInt(arg(1)?.extract()?),
            _ => {
                return Err(PyTypeError::new_err(
                    "an id column is ('str', bytes, offsets), ('dict', bytes, offsets, \
                     indices), ('int', values) or ('uint', values)",
                ))
            }
        })
    }

    fn view(&self) -> PyResult<columns::Ids<'_>> {
        Ok(match self {
            HeldIds::Strings(b, o) => columns::Ids::Strings {
                bytes: b.as_slice().map_err(non_contiguous)?,
                offsets: o.view()?,
            },
            HeldIds::Dict(b, o, i) => columns::Ids::Dict {
                bytes: b.as_slice().map_err(non_contiguous)?,
                offsets: o.view()?,
                indices: i.view()?,
            },
            HeldIds::Int(v) => columns::Ids::Int(v.as_slice().map_err(non_contiguous)?),
            HeldIds::UInt(v) => columns::Ids::UInt(v.as_slice().map_err(non_contiguous)?),
        })
    }
}

/// One chunk of rows as passed from Python: (query ids, doc ids, values).
type ColumnChunk<'py> = (
    Bound<'py, PyTuple>,
    Bound<'py, PyTuple>,
    PyReadonlyArray1<'py, f64>,
);

/// Encode rows given as column chunks: `chunks` is a list of
/// `(query ids, doc ids, values)`, the ids in one of the layouts of `HeldIds`,
/// values float64, all three of one length; rows are numbered across chunks.
/// `names`: (query, doc, value) column names, for messages.  The arrays are
/// borrowed, and the GIL released while the rows are encoded.
#[pyfunction]
#[pyo3(signature = (kind, chunks, names, round_f32 = false))]
fn encode_columns<'py>(
    py: Python<'py>,
    kind: &str,
    chunks: Vec<ColumnChunk<'py>>,
    names: (String, String, String),
    round_f32: bool,
) -> PyResult<EncodedArrays<'py>> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    let held = chunks
        .iter()
        .map(|(q, d, v)| Ok((HeldIds::extract(q)?, HeldIds::extract(d)?, v)))
        .collect::<PyResult<Vec<_>>>()?;
    let views = held
        .iter()
        .map(|(q, d, v)| {
            Ok(columns::Chunk {
                queries: q.view()?,
                docs: d.view()?,
                values: v.as_slice().map_err(non_contiguous)?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let names = columns::Names {
        query: &names.0,
        doc: &names.1,
        value: &names.2,
    };
    let encoded = py
        .detach(|| columns::encode_columns(kind, &views, names, round_f32))
        .map_err(|e| to_py(py, e))?;
    Ok(to_arrays(py, encoded))
}

/// A string column in Arrow's layout: (UTF-8 bytes, int64 offsets).
type PackedIds<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<i64>>);

/// Pack a sequence of ids (`str`, or integers written in decimal) into Arrow's
/// string layout: (UTF-8 bytes, int64 offsets).  A null (`None`, NaN, pandas'
/// NA) or any other type is an error naming `column` and the row.
#[pyfunction]
fn pack_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    column: &str,
) -> PyResult<PackedIds<'py>> {
    use std::fmt::Write;
    let mut bytes: Vec<u8> = Vec::new();
    let mut offsets: Vec<i64> = Vec::with_capacity(ids.len().unwrap_or(0) + 1);
    offsets.push(0);
    let mut num = String::new();
    let mut push = |row: usize, obj: &Bound<'py, PyAny>| -> PyResult<()> {
        if let Ok(s) = obj.cast::<PyString>() {
            bytes.extend_from_slice(s.to_cow()?.as_bytes());
        } else if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(to_py(
                py,
                Error::InvalidInput(format!(
                    "column {column:?}, row {row}: an id must be a str or an int, got a bool"
                )),
            ));
        } else if let Ok(v) = obj.extract::<i64>() {
            num.clear();
            let _ = write!(num, "{v}");
            bytes.extend_from_slice(num.as_bytes());
        } else if obj.is_instance_of::<PyInt>() {
            bytes.extend_from_slice(obj.str()?.to_cow()?.as_bytes());
        } else {
            let null = obj.is_none()
                || obj.extract::<f64>().is_ok_and(f64::is_nan)
                || obj.get_type().name()?.to_cow()? == "NAType";
            let msg = if null {
                format!("column {column:?}, row {row}: the id is null")
            } else {
                format!(
                    "column {column:?}, row {row}: an id must be a str or an int, got {} ({})",
                    obj.get_type().name()?,
                    obj.repr()?
                )
            };
            return Err(to_py(py, Error::InvalidInput(msg)));
        }
        offsets.push(bytes.len() as i64);
        Ok(())
    };
    if let Ok(list) = ids.cast::<PyList>() {
        for (row, obj) in list.iter().enumerate() {
            push(row, &obj)?;
        }
    } else {
        for (row, obj) in ids.try_iter()?.enumerate() {
            push(row, &obj?)?;
        }
    }
    Ok((bytes.into_pyarray(py), offsets.into_pyarray(py)))
}

// -- RAG rows (ranklens.compat.autorag, score_batch) --

/// `None` for `None`; the items of a list / tuple / other non-string iterable;
/// an error naming the row otherwise.
fn row_items<'py>(
    obj: &Bound<'py, PyAny>,
    row: usize,
    what: &str,
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    if obj.is_none() {
        return Ok(None);
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(Some(l.iter().collect()));
    }
    let bad = || {
        to_py(
            obj.py(),
            Error::InvalidInput(format!(
                "row {row}: {what} must be a list, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )),
        )
    };
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<pyo3::types::PyBytes>() {
        return Err(bad());
    }
    match obj.try_iter() {
        Ok(it) => Ok(Some(it.collect::<PyResult<_>>()?)),
        Err(_) => Err(bad()),
    }
}

/// Whether `obj` is an id (a `str` or an `int`, not a `bool`), not a group.
fn is_id(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyString>()
        || (obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>())
}

/// The number of rows of a column (an error naming the column otherwise).
fn num_rows(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    if obj.is_instance_of::<PyString>() {
        return Err(to_py(
            obj.py(),
            Error::InvalidInput(format!("{what} must be a list of rows, got a str")),
        ));
    }
    obj.len().map_err(|_| {
        to_py(
            obj.py(),
            Error::InvalidInput(format!(
                "{what} must be a list of rows, got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )),
        )
    })
}

fn same_rows(py: Python<'_>, a: usize, b: usize, what: (&str, &str)) -> PyResult<()> {
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

/// Encode one side from rows, the row index (zero-padded, so that byte order is
/// row order) as the query id.  `kind="run"`: each row is a ranked list of ids
/// or a mapping id -> score.  `kind="qrels"`: each row is a list whose items
/// are ids (a group of one, label 1) or lists of ids (a group, label 1), or a
/// mapping id -> label (each id its own group).  Qrels are always grouped; with
/// groups of one that is ordinary qrels.  `None` is an empty row.
#[pyfunction]
fn encode_rows<'py>(
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
            let d = id_bytes(obj, buf, "a document id")
                .map_err(|e| bad(format!("row {r}: {}", e.value(py))))?;
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
        let Some(items) = row_items(&row, r, "a row")? else {
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

/// An AutoRAG id: `Ok(None)` when it is a blank string (AutoRAG then returns
/// None for the row), else its key: a type tag then its text (so that `1` and
/// `"1"` differ, as in Python).
fn autorag_key(obj: &Bound<'_, PyAny>, row: usize, buf: &mut Vec<u8>) -> PyResult<bool> {
    buf.clear();
    if let Ok(s) = obj.cast::<PyString>() {
        let s = s.to_cow()?;
        if s.trim_matches(crate::core::tokens::is_py_space).is_empty() {
            return Ok(false);
        }
        buf.push(b's');
        buf.extend_from_slice(s.as_bytes());
        return Ok(true);
    }
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<pyo3::types::PyBool>() {
        buf.push(b'i');
        buf.extend_from_slice(obj.str()?.to_cow()?.as_bytes());
        return Ok(true);
    }
    Err(to_py(
        obj.py(),
        Error::InvalidInput(format!(
            "row {row}: ids must be str or int, got {} ({})",
            obj.get_type().name()?,
            obj.repr()?
        )),
    ))
}

/// AutoRAG's retrieval metrics of every row: a `rows x 6` array, columns
/// recall, precision, f1, mrr, map, ndcg (`core::metrics::autorag`); NaN where
/// AutoRAG returns None (a missing, empty or blank ground truth or retrieved
/// list).  `compensated`: sum as Python >= 3.12 does.
#[pyfunction]
#[pyo3(signature = (retrieval_gt, retrieved_ids, compensated, threads = None))]
fn autorag_retrieval<'py>(
    py: Python<'py>,
    retrieval_gt: &Bound<'py, PyAny>,
    retrieved_ids: &Bound<'py, PyAny>,
    compensated: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    use crate::core::metrics::autorag;
    let n = num_rows(retrieval_gt, "retrieval_gt")?;
    let m = num_rows(retrieved_ids, "retrieved_ids")?;
    same_rows(py, n, m, ("retrieval_gt", "retrieved_ids"))?;
    let err = |e: Error| to_py(py, e);
    // Every id's key, copied once; rows compare them in parallel (no global table).
    let (mut key_bytes, mut key_offsets) = (Vec::<u8>::new(), vec![0usize]);
    let mut key = Vec::new();
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
                        ok &= autorag_key(group, r, &mut key)?;
                        gt_ids.push(push_key(&key)?);
                    } else {
                        let members = row_items(group, r, "a group")?.unwrap_or_default();
                        ok &= !members.is_empty();
                        for mbr in &members {
                            ok &= autorag_key(mbr, r, &mut key)?;
                            gt_ids.push(push_key(&key)?);
                        }
                    }
                    group_ids.push(gt_ids.len());
                }
            }
        }
        row_groups.push(group_ids.len() - 1);
        match row_items(&pred, r, "a retrieved_ids row")? {
            None => ok = false,
            Some(items) => {
                ok &= !items.is_empty();
                for item in &items {
                    ok &= autorag_key(item, r, &mut key)?;
                    pred_ids.push(push_key(&key)?);
                }
            }
        }
        row_pred.push(pred_ids.len());
        valid.push(ok);
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
            eval::with_threads(threads, || {
                autorag::retrieval_scores(&rows, Some(keys), compensated)
            })
        })
        .map_err(err)?;
    out.into_pyarray(py).reshape([n, 6])
}

/// Append the strings of a contents row; `Ok(false)` when AutoRAG returns None
/// for it (missing, empty, or a blank string).  `nested`: items may be groups.
fn push_contents(
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
            let s = s.to_cow()?;
            ok &= !s.trim_matches(crate::core::tokens::is_py_space).is_empty();
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

fn push_contents_one(
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
    let s = s.to_cow()?;
    let ok = !s.trim_matches(crate::core::tokens::is_py_space).is_empty();
    text.push_str(&s);
    offsets.push(text.len());
    Ok(ok)
}

/// AutoRAG's token-overlap metrics of every row: a `rows x 3` array, columns
/// precision, recall, f1 (`core::tokens`); NaN where AutoRAG returns None.
#[pyfunction]
#[pyo3(signature = (retrieved_contents, retrieval_gt_contents, threads = None))]
fn autorag_token<'py>(
    py: Python<'py>,
    retrieved_contents: &Bound<'py, PyAny>,
    retrieval_gt_contents: &Bound<'py, PyAny>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    use crate::core::tokens;
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
    }
    // Row r: preds pred_rows[r]..gt_rows[r], gts gt_rows[r]..pred_rows[r + 1].
    let end = offsets.len() - 1;
    let pred_ends: Vec<usize> = gt_rows.clone();
    let gt_ends: Vec<usize> = (0..n)
        .map(|r| if r + 1 < n { pred_rows[r + 1] } else { end })
        .collect();
    let out = py
        .detach(|| {
            eval::with_threads(threads, || {
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

/// (values [queries x metrics], indices of missing qrels queries, ignored run
/// query ids, first tag, number of chunks) of `evaluate_trec_stream`.
type StreamOut<'py> = (
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<i64>>,
    Vec<Bound<'py, PyString>>,
    Option<String>,
    usize,
);

/// Score the run file at `run_path` (`"-"` = stdin, gzip recognised) against
/// the encoded qrels chunk by chunk, in the memory of about `chunk_rows` rows
/// (see `core::stream`); the same values as `read_trec` + `evaluate`.
// The arguments mirror the Python keyword arguments one to one.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (qrels, run_path, metrics, relevance_level, threads = None, judged_only = false, max_docs = None, ties = "trec", chunk_rows = 1_000_000, round_f32 = false))]
fn evaluate_trec_stream<'py>(
    py: Python<'py>,
    qrels: SideArrays<'py>,
    run_path: &str,
    metrics: Vec<MetricArg>,
    relevance_level: f64,
    threads: Option<usize>,
    judged_only: bool,
    max_docs: Option<usize>,
    ties: &str,
    chunk_rows: usize,
    round_f32: bool,
) -> PyResult<StreamOut<'py>> {
    let err = |e: Error| to_py(py, e);
    let (opts, specs) =
        eval_setup(&metrics, relevance_level, judged_only, max_docs, ties).map_err(err)?;
    let q = side(&qrels)?.map_err(err)?;
    let nq = q.num_queries();
    let nm = specs.len();
    let out = py
        .detach(|| {
            eval::with_threads(threads, || {
                crate::core::stream::evaluate_run_file(
                    &q, run_path, round_f32, &specs, &opts, chunk_rows,
                )
            })
        })
        .and_then(|x| x)
        .map_err(err)?;
    let values = out.values.into_pyarray(py).reshape([nq, nm])?;
    let ignored = out
        .run_only
        .iter()
        .map(|b| PyString::new(py, &String::from_utf8_lossy(b)))
        .collect();
    Ok((
        values,
        out.missing.into_pyarray(py),
        ignored,
        out.tag,
        out.chunks,
    ))
}

#[pymodule]
fn _ranklens(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_mapping, m)?)?;
    m.add_function(wrap_pyfunction!(encode_groups, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(decode_vocab, m)?)?;
    m.add_function(wrap_pyfunction!(nested_dict, m)?)?;
    m.add_function(wrap_pyfunction!(read_trec, m)?)?;
    m.add_function(wrap_pyfunction!(write_trec, m)?)?;
    m.add_function(wrap_pyfunction!(stats_resample, m)?)?;
    m.add_function(wrap_pyfunction!(studentized_range_sf, m)?)?;
    m.add_function(wrap_pyfunction!(encode_columns, m)?)?;
    m.add_function(wrap_pyfunction!(pack_ids, m)?)?;
    m.add_function(wrap_pyfunction!(encode_rows, m)?)?;
    m.add_function(wrap_pyfunction!(autorag_retrieval, m)?)?;
    m.add_function(wrap_pyfunction!(autorag_token, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_trec_stream, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
