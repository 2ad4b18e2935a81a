//! Column chunks into a side ([`encode_columns`]: ids and values as numpy
//! arrays in Arrow's layouts, borrowed, encoded without the GIL) and the
//! packing of Python id lists into that layout ([`pack_ids`]).
//!
//! Invariants: the arrays are only borrowed (read-only, contiguous: the
//! Python side makes them so); rows are numbered across chunks, so messages
//! name the row of the whole column; a packed id is the text `ids` gives it,
//! so a column of Python objects and the same ids as an Arrow column encode
//! alike.
//!
//! Rejected: pyarrow's conversion of a Python list to strings for
//! `pack_ids` (slower than one pass here, and its errors name no row).

use super::super::ids::{self, At, Place, Role};
use super::super::{non_contiguous, to_arrays, to_py, EncodedArrays};
use crate::core::columns;
use crate::core::encode::Kind;
use crate::core::error::Error;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::collections::HashMap;

/// An id column chunk as the Python side passes it (see `core::columns::Ids`):
/// `("str", bytes, offsets)`, `("dict", bytes, offsets, indices)`,
/// `("int", values)` or `("uint", values)`; offsets and indices int32 or int64.
pub(super) enum HeldInts<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

pub(super) enum HeldIds<'py> {
    Strings(PyReadonlyArray1<'py, u8>, HeldInts<'py>),
    Dict(PyReadonlyArray1<'py, u8>, HeldInts<'py>, HeldInts<'py>),
    Int(PyReadonlyArray1<'py, i64>),
    UInt(PyReadonlyArray1<'py, u64>),
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
pub(super) type ColumnChunk<'py> = (
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
pub(crate) fn encode_columns<'py>(
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
pub(super) type PackedIds<'py> = (Bound<'py, PyArray1<u8>>, Bound<'py, PyArray1<i64>>);

/// Pack a sequence of ids into Arrow's string layout: (UTF-8 bytes, int64
/// offsets), each id's text as `ids` reads it.  A null (`None`, NaN, pandas'
/// NA), a refused type or a lone surrogate is an error naming `column` and
/// the row.  `query`: the column holds query ids, where `1` and `"1"` (one
/// id once written as a string) in two rows are that query given twice, as
/// in a mapping (`ids::twice_text`); document ids need no such check (the
/// same text twice in one query is a duplicate row, refused downstream).
///
/// The check costs a bit per row while the column holds one kind of id (all
/// `str` or all integers); only a column that holds both is looked at again,
/// text by text ([`spelled_twice`]).
#[pyfunction]
#[pyo3(signature = (ids, column, query = false))]
pub(crate) fn pack_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    column: &str,
    query: bool,
) -> PyResult<PackedIds<'py>> {
    let mut bytes: Vec<u8> = Vec::new();
    let mut offsets: Vec<i64> = Vec::with_capacity(ids.len().unwrap_or(0) + 1);
    offsets.push(0);
    let mut buf = String::new();
    // Bit 0: a `str` id was read; bit 1: an integer id; `int`: each row's
    // kind, kept for a query column only.
    let mut kinds = 0u8;
    let mut int: Vec<bool> = Vec::new();
    let mut push = |row: usize, obj: &Bound<'py, PyAny>| -> PyResult<()> {
        let place = Place::new(Role::Any, At::Cell { column, row });
        let id = ids::read(obj, &mut buf, place)?;
        kinds |= 1 << u8::from(id.int);
        if query {
            int.push(id.int);
        }
        bytes.extend_from_slice(id.bytes);
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
    if query && kinds == 3 {
        if let Some((row, text)) = spelled_twice(&bytes, &offsets, &int) {
            // The object as given where the column is a list; else its kind.
            let obj = match ids.cast::<PyList>() {
                Ok(list) => list.get_item(row)?,
                Err(_) if int[row] => match text.parse::<i128>() {
                    Ok(v) => v.into_pyobject(py)?.into_any(),
                    Err(_) => PyString::new(py, &text).into_any(),
                },
                Err(_) => PyString::new(py, &text).into_any(),
            };
            let msg = format!(
                "column {column:?}, row {row}: {}",
                ids::twice_text(&text, &obj)
            );
            return Err(to_py(py, Error::InvalidInput(msg)));
        }
    }
    Ok((bytes.into_pyarray(py), offsets.into_pyarray(py)))
}

/// The first row whose id has the text of an earlier row's id of the other
/// kind (`str` against integer), and that text; `None` when every text comes
/// in one kind.
fn spelled_twice(bytes: &[u8], offsets: &[i64], int: &[bool]) -> Option<(usize, String)> {
    let mut first: HashMap<&[u8], bool> = HashMap::new();
    for (row, (w, &kind)) in offsets.windows(2).zip(int).enumerate() {
        let text = bytes.get(w[0] as usize..w[1] as usize)?;
        if *first.entry(text).or_insert(kind) != kind {
            return Some((row, String::from_utf8_lossy(text).into_owned()));
        }
    }
    None
}
