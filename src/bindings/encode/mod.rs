//! Encoding sides from Python objects into the core's arrays
//! (`core::encode`, `core::columns`, `core::vocab`), one file per input shape:
//!
//! * [`mapping`]: `{query: {doc: value}}` and `{query: [doc, ...]}`
//!   (`Run(dict)`, `Qrels(dict)`, the pytrec_eval drop-in's general path);
//! * [`walk`]: the borrowed dict walk and the plain-entry read under it;
//! * [`rows`]: grouped ground truth and RAG-style rows (lists, dicts, groups);
//! * [`columns`]: column chunks in Arrow's layout, and `pack_ids` to make them
//!   from Python lists.
//!
//! Every id goes through `bindings::ids` (one rule, one set of messages).
//! Everything here reads under the GIL and hands the rows to
//! `Builder::finish` (grouping, ranking, duplicate checks) with the GIL
//! released.
//!
//! Why the dict path is shaped so: the cost of `Run(dict)` is touching each
//! key object (its type, cached hash and text: a cache miss for fresh keys)
//! and writing the row, so the walk avoids everything else per entry: no
//! `Bound` and no reference count per key or value, exact `str` / `float` /
//! `int` told by type pointer and read from the object where `layout` knows
//! it, the dict's entry table read with the next entries prefetched, the
//! rows' room reserved up front and, with two threads or more, their fresh
//! pages faulted in by a pool thread while this one reads.  The duplicate
//! check is skipped when every key was an exact `str` of a dict (which
//! cannot repeat).  Anything else takes the general path, which holds
//! references and gives every error.
//!
//! Rejected alternatives (measured: `docs/design/performance.md`):
//!
//! * taking 256 entries at a time, each value prefetched, then writing their
//!   rows: no faster, objects built in order lie in order and the hardware
//!   prefetcher follows them;
//! * a byte a row noting how a tied row compares with the one before it: the
//!   compare and push in `row` cost what `finish` saved (a bit set only on a
//!   tie is what `core::encode` keeps);
//! * a flag a block, "rows came in ranking order", to skip the ranking check:
//!   tied rows still need sorting in most queries;
//! * a cache from `str` object to id for ids shared across queries (BEIR's
//!   layout): the bytes would still be read from wherever the id's first row
//!   put them, as scattered as the keys.

mod columns;
mod mapping;
mod rows;
mod walk;

pub(super) use columns::{encode_columns, pack_ids};
pub(super) use mapping::encode_mapping;
pub(super) use rows::{encode_groups, encode_rows};
pub(super) use walk::exact_number;

use super::to_py;
use crate::core::vocab::Vocab;
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// The strings of a vocabulary, as a list of `str` (invalid UTF-8 replaced).
#[pyfunction]
pub(super) fn decode_vocab<'py>(
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
