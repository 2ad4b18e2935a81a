//! TREC files (`core::trec`): reading a run or qrels file into a side's
//! arrays, writing one from them.
//!
//! The file is read and parsed in the core without the GIL (paths, not
//! Python file objects: no Python code runs while it reads), interruptible
//! by Ctrl-C.  Ids come from the file's bytes, so they never meet `ids`'s
//! Python rule; the reader drops a BOM at the start of a file.
//!
//! Rejected: reading through a Python file object (a call into Python per
//! block, and the GIL held while parsing).

use super::{interruptible, to_arrays, to_py, EncodedArrays, SideArrays};
use crate::core::encode::Kind;
use crate::core::error::Error;
use crate::core::eval;
use crate::core::trec::{self, TrecRows};
use crate::core::vocab::Vocab;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// Read a TREC run or qrels file (`"-"` = stdin; gzip recognised by its magic
/// bytes).  Returns the encoded arrays (as `encode_mapping`) and the tag of the
/// run's first line (`None` for qrels or an empty run).  `max_line`: the
/// longest line accepted, in bytes.
#[pyfunction]
#[pyo3(signature = (path, kind, round_f32 = false, max_line = trec::MAX_LINE))]
pub(super) fn read_trec<'py>(
    py: Python<'py>,
    path: &str,
    kind: &str,
    round_f32: bool,
    max_line: usize,
) -> PyResult<(EncodedArrays<'py>, Option<String>)> {
    let kind = match kind {
        "run" => Kind::Run,
        "qrels" => Kind::Qrels,
        _ => return Err(PyTypeError::new_err("kind must be 'run' or 'qrels'")),
    };
    // Parsed in parallel: on `RANKLENS_NUM_THREADS` threads if set.
    let t = interruptible(py, |cancel| {
        let opts = trec::ReadOptions {
            round_f32,
            max_line,
            cancel: cancel.clone(),
        };
        eval::with_threads(None, || trec::read_trec_with(path, kind, &opts)).and_then(|x| x)
    })?
    .map_err(|e| to_py(py, e))?;
    Ok((to_arrays(py, t.encoded), t.tag))
}

/// Write an encoded side as a TREC file (`.gz` paths compressed, `"-"` stdout).
/// `tag` is required for a run and ignored for qrels.  `subtopics` (qrels
/// only): a vocabulary (bytes, offsets) and one index into it per row, written
/// as the second field (the diversity format).
#[pyfunction]
#[pyo3(signature = (path, kind, side, tag = None, subtopics = None))]
pub(super) fn write_trec<'py>(
    py: Python<'py>,
    path: &str,
    kind: &str,
    side: SideArrays<'py>,
    tag: Option<&str>,
    subtopics: Option<SubtopicArrays<'py>>,
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
    let subtopics = match &subtopics {
        Some((bytes, offsets, ids)) => Some((
            Vocab::new(
                bytes.as_slice().map_err(sl)?,
                offsets.as_slice().map_err(sl)?,
            )
            .map_err(err)?,
            ids.as_slice().map_err(sl)?,
        )),
        None => None,
    };
    py.detach(|| match (kind, subtopics) {
        ("run", None) => trec::write_run_rows(path, rows, tag.unwrap_or("ranklens")),
        ("qrels", None) => trec::write_qrels_rows(path, rows),
        ("qrels", Some((names, ids))) => trec::write_subtopic_qrels_rows(path, rows, names, ids),
        ("run", Some(_)) => Err(Error::InvalidInput("a run has no subtopics".into())),
        _ => Err(Error::InvalidInput("kind must be 'run' or 'qrels'".into())),
    })
    .map_err(err)
}

/// Subtopic names (bytes, offsets) and one index per row.
type SubtopicArrays<'py> = (
    PyReadonlyArray1<'py, u8>,
    PyReadonlyArray1<'py, i64>,
    PyReadonlyArray1<'py, u32>,
);
