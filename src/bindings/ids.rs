//! Ids from Python objects: the one rule every door applies, and the one set
//! of messages it raises.
//!
//! The rule:
//!
//! * An id is a `str` (a subclass too: its text, never its `__str__`), an
//!   `int` (a subclass too, `bool` excepted) or a numpy integer (`np.int64`,
//!   `np.uint32`, ...: the integers of a numpy column or array).  An integer
//!   is written in decimal from its value (`7` and `np.int64(7)` are `"7"`).
//! * `bool` is refused (`True` is an `int` to Python, almost never an id), so
//!   are `float` (`1.0` is not the id `"1"`), `bytes` and every other type.
//!   `None`, a float NaN and pandas' `NA` are refused as a null id.
//! * An id is its text: `1` and `"1"` are the same id.  Where a mapping gives
//!   both as keys, or a column of query ids (`Qrels.from_records`,
//!   `from_pandas`: `encode::pack_ids`) holds both, that query is given twice
//!   (an error naming it, [`twice_text`]); across the two sides they match.  The AutoRAG drop-in is the one door that keeps
//!   Python's equality (`1 != "1"`, `np.int64(1) == 1`), as AutoRAG compares
//!   ids in Python: it reads [`Id::int`] into its keys.
//! * The text is UTF-8.  A `str` with a lone surrogate (`os.fsdecode` of bytes
//!   that are not UTF-8) has no UTF-8 form: an input error naming the place,
//!   never a bare `UnicodeEncodeError`, and never a replacement character (two
//!   distinct ids would merge).
//! * Nothing is normalised: no Unicode normalisation, no trimming, a U+FEFF
//!   (byte order mark) inside a `str` is part of the id.  Only the file
//!   readers drop a BOM, at the start of a file.
//!
//! Every message is built here from a [`Place`] the caller describes (what
//! the id is, where it was read: a row, a query, a column and row): a door
//! never words its own.  The errors are `RanklensInputError`s (`to_py`).
//!
//! Shape: [`read`] is the conversion of a door that copies ids as bytes (the
//! encoders, `pack_ids`, AutoRAG); [`as_str`] is the same rule for a reader
//! that matches ids as `str` objects (the Scorer: an exact `str` stays the
//! same object, so its identity and cached hash still serve).  The one
//! exception: the Scorer's fast path over a list of exact `str`s
//! (`scorer::read::Reader::borrowed_ids`) does not look for a lone surrogate
//! there; it compares such an id as a Python string, exactly (never merged
//! with another id: no wrong number), where every other reading refuses it.
//! The checks go from the common case out: a `str` is one type-flag test
//! and, where `layout` knows the object, its ASCII text read in place;
//! an exact `int` is formatted from its value without a Python call; numpy's
//! `integer` type is looked up once and only for an object that is neither.
//!
//! Rejected alternatives:
//!
//! * `str(obj)` for an `int`: an `IntEnum` (3.9, 3.10) and other subclasses
//!   print a name, and it builds a `str` object per id.
//! * Any object with `__index__` as an integer: a one-element tensor or a
//!   numpy `bool_` (older numpy) would pass as an id.
//! * `1` and `"1"` as two ids (Python's equality) everywhere: TREC files have
//!   no types, so the same qrels would match a run or not by how it was built.
//! * The replacement character for a lone surrogate: two ids differing only
//!   there would become one.
//! * The surrogate check in the Scorer's plain-`str` fast path too: its read of
//!   each id's `state` word is one more cache line for a quarter of the ids
//!   (objects at 32 mod 64), a measurable share of a batch of short rows
//!   (`docs/design/performance.md`), for a case that gives no wrong number.

use super::to_py;
use crate::core::error::Error;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyString, PyType};
use std::borrow::Cow;

/// What an id is, for a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    Query,
    Doc,
    /// An id of a retrieved list (the Scorer's word for it).
    Retrieved,
    /// An id of a column or a list where the role is told by `At`.
    Any,
}

impl Role {
    fn noun(self) -> &'static str {
        match self {
            Role::Query => "query id",
            Role::Doc => "document id",
            Role::Retrieved => "retrieved id",
            Role::Any => "id",
        }
    }

    fn with_a(self) -> &'static str {
        match self {
            Role::Query => "a query id",
            Role::Doc => "a document id",
            Role::Retrieved => "a retrieved id",
            Role::Any => "an id",
        }
    }
}

/// Where an id was read, for a message.
#[derive(Clone, Copy, Debug)]
pub(super) enum At<'a> {
    /// Nothing to add (a query id; a single sample).
    Top,
    /// A row of a batch.
    Row(usize),
    /// A document of the query with this id.
    Query(&'a str),
    /// A row of a named column.
    Cell { column: &'a str, row: usize },
}

/// What an id is and where it was read: every message about it is built from
/// this, so that every door words them alike.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place<'a> {
    pub(super) role: Role,
    pub(super) at: At<'a>,
}

impl<'a> Place<'a> {
    pub(super) const fn new(role: Role, at: At<'a>) -> Self {
        Place { role, at }
    }

    /// The message's opening: `row 3: `, `query "q1": `, `column "doc", row 3: `.
    fn prefix(&self) -> String {
        match self.at {
            At::Top => String::new(),
            At::Row(r) => format!("row {r}: "),
            At::Query(q) => format!("query {q:?}: "),
            At::Cell { column, row } => format!("column {column:?}, row {row}: "),
        }
    }

    /// A refused object: `type_name` and `repr` are its type's name and repr.
    fn refused_text(&self, null: bool, type_name: &str, repr: &str) -> String {
        if null {
            format!("{}the {} is null", self.prefix(), self.role.noun())
        } else {
            format!(
                "{}{} must be a str or an int, got {type_name} ({repr})",
                self.prefix(),
                self.role.with_a()
            )
        }
    }

    /// A `str` without a UTF-8 form; `repr` is its repr.
    fn no_utf8_text(&self, repr: &str) -> String {
        format!(
            "{}{} {repr} is not valid Unicode text (it holds a lone surrogate)",
            self.prefix(),
            self.role.with_a()
        )
    }
}

/// An id read as bytes: its UTF-8 text, and whether it was an integer (only
/// the AutoRAG drop-in tells `1` from `"1"`).
pub(super) struct Id<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) int: bool,
}

/// An id's bytes (see the module note): a `str`'s UTF-8, borrowed from the
/// object where the API allows (else copied into `buf`), or an integer's
/// decimal text, written into `buf`.  Anything else is the error of `place`.
#[inline]
pub(super) fn read<'a>(
    obj: &'a Bound<'_, PyAny>,
    buf: &'a mut String,
    place: Place<'_>,
) -> PyResult<Id<'a>> {
    if let Ok(s) = obj.cast::<PyString>() {
        let bytes = match id_text(s, place)? {
            Cow::Borrowed(text) => text.as_bytes(),
            Cow::Owned(text) => {
                *buf = text;
                buf.as_bytes()
            }
        };
        return Ok(Id { bytes, int: false });
    }
    buf.clear();
    if int_text(obj, buf)? {
        return Ok(Id {
            bytes: buf.as_bytes(),
            int: true,
        });
    }
    Err(refused(obj, place))
}

/// [`read`]'s bytes alone.
#[inline]
pub(super) fn id_bytes<'a>(
    obj: &'a Bound<'_, PyAny>,
    buf: &'a mut String,
    place: Place<'_>,
) -> PyResult<&'a [u8]> {
    read(obj, buf, place).map(|id| id.bytes)
}

/// An id as an owned string (a query id, kept for later messages).
pub(super) fn id_string(obj: &Bound<'_, PyAny>, place: Place<'_>) -> PyResult<String> {
    let mut buf = String::new();
    let bytes = id_bytes(obj, &mut buf, place)?;
    Ok(String::from_utf8_lossy(bytes).into_owned())
}

/// Whether `obj` is an id by type (a `str`, an `int` but a `bool`, a numpy
/// integer), as a door that takes an id or a group of ids tells them apart.
pub(super) fn is_id(obj: &Bound<'_, PyAny>) -> bool {
    let p = obj.as_ptr();
    // SAFETY: the GIL is held (`Bound`) and `p` is a live object; type checks
    // run no Python code.
    unsafe {
        ffi::PyUnicode_Check(p) != 0
            || (ffi::PyLong_Check(p) != 0 && ffi::PyBool_Check(p) == 0)
            || numpy_integer(obj)
    }
}

/// The id as an exact `str` object, for a reader that matches ids as Python
/// strings: an exact `str` is returned as is (its identity and cached hash
/// stay usable), a subclass as a plain `str` of its text, an integer as its
/// decimal text.  A refused object or a lone surrogate is the error of
/// `place`, as in [`read`].
pub(super) fn as_str<'py>(
    obj: Bound<'py, PyAny>,
    place: Place<'_>,
) -> PyResult<Bound<'py, PyString>> {
    let py = obj.py();
    let s = match obj.cast_into::<PyString>() {
        Ok(s) if s.is_exact_instance_of::<PyString>() => s,
        Ok(s) => {
            // SAFETY: a `str` subclass instance; returns a new reference.
            unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyUnicode_FromObject(s.as_ptr()))? }
                .cast_into::<PyString>()?
        }
        Err(e) => {
            let obj = e.into_inner();
            let mut buf = String::new();
            if !int_text(&obj, &mut buf)? {
                return Err(refused(&obj, place));
            }
            return Ok(PyString::new(py, &buf));
        }
    };
    // SAFETY: the GIL is held and `s` is a live `str`.
    if unsafe { has_utf8(s.as_ptr()) } {
        Ok(s)
    } else {
        Err(no_utf8(&s, place))
    }
}

/// Whether an exact `str` has a UTF-8 form (no lone surrogate): no call for a
/// compact ASCII string where `layout` reads the object; else CPython's UTF-8
/// (made once, cached in the object).  A `false` is raised by [`as_str`] with
/// its place.
///
/// # Safety
/// The GIL is held and `s` is a live `str`.
unsafe fn has_utf8(s: *mut ffi::PyObject) -> bool {
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        utf8_raw(s).is_some()
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        let bytes = ffi::PyUnicode_AsUTF8String(s);
        if bytes.is_null() {
            ffi::PyErr_Clear();
            return false;
        }
        ffi::Py_DECREF(bytes);
        true
    }
}

/// The message for a query id met twice, the second time as `obj` (`1` and
/// `"1"`: one id once written as a string; or a mapping that repeats a key):
/// the words of every door, mappings and rows alike.
pub(super) fn twice_text(qid: &str, obj: &Bound<'_, PyAny>) -> String {
    let repr = obj
        .repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(
        "query {qid:?} is given twice (the second time as {} {repr}): query ids must \
         differ once written as strings",
        type_name(obj)
    )
}

/// The error for an object that is no id (see [`is_id`]): a null one (`None`,
/// NaN, pandas' `NA`) or one of another type.
#[cold]
pub(super) fn refused(obj: &Bound<'_, PyAny>, place: Place<'_>) -> PyErr {
    let null =
        obj.is_none() || obj.extract::<f64>().is_ok_and(f64::is_nan) || type_name(obj) == "NAType";
    let repr = if null {
        String::new()
    } else {
        obj.repr()
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let msg = place.refused_text(null, &type_name(obj), &repr);
    to_py(obj.py(), Error::InvalidInput(msg))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default()
}

/// The error for a `str` without a UTF-8 form.
#[cold]
fn no_utf8(s: &Bound<'_, PyString>, place: Place<'_>) -> PyErr {
    let repr = s
        .repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_default();
    to_py(s.py(), Error::InvalidInput(place.no_utf8_text(&repr)))
}

/// An id's text (see [`str_utf8`]), a lone surrogate the error of `place`.
#[inline]
pub(super) fn id_text<'a>(s: &'a Bound<'_, PyString>, place: Place<'_>) -> PyResult<Cow<'a, str>> {
    match utf8(s) {
        Some(text) => Ok(text),
        None => Err(no_utf8(s, place)),
    }
}

/// A `str`'s UTF-8 text, `None` for a `str` without one (a lone surrogate).
#[inline]
fn utf8<'a>(s: &'a Bound<'_, PyString>) -> Option<Cow<'a, str>> {
    #[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
    {
        // SAFETY: the GIL is held (`Bound`), `s` is a `str` that outlives 'a,
        // and CPython's UTF-8 is valid UTF-8.
        unsafe { utf8_raw(s.as_ptr()).map(|b| Cow::Borrowed(std::str::from_utf8_unchecked(b))) }
    }
    #[cfg(not(any(not(Py_LIMITED_API), Py_3_10, unix)))]
    {
        s.to_cow().ok()
    }
}

/// A `str`'s UTF-8 text: borrowed from the object (see [`utf8_raw`]; a copy
/// only in a stable-ABI build for Windows before 3.10).  A `str` without a
/// UTF-8 form is the input error naming `what()` and the value.  For text
/// that is not an id (a passage); ids go through [`id_text`].
pub(super) fn str_utf8<'a>(
    s: &'a Bound<'_, PyString>,
    what: impl FnOnce() -> String,
) -> PyResult<Cow<'a, str>> {
    match utf8(s) {
        Some(text) => Ok(text),
        None => {
            let shown = s
                .repr()
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            Err(to_py(
                s.py(),
                Error::InvalidInput(format!(
                    "{} {shown} is not valid Unicode text (it holds a lone surrogate)",
                    what()
                )),
            ))
        }
    }
}

/// An integer id's decimal text appended to `buf`: `Ok(false)` (nothing
/// written) when `obj` is no integer id (not an `int`, a `bool`, not a numpy
/// integer).  Within `i64` it is formatted here; beyond, by `int`'s own
/// decimal conversion.
#[inline]
fn int_text(obj: &Bound<'_, PyAny>, buf: &mut String) -> PyResult<bool> {
    let p = obj.as_ptr();
    // SAFETY: the GIL is held and `p` is a live object; type checks run no
    // Python code.
    let int = unsafe { ffi::PyLong_Check(p) != 0 };
    if int {
        // SAFETY: as above.
        if unsafe { ffi::PyBool_Check(p) != 0 } {
            return Ok(false);
        }
    } else if !numpy_integer(obj) {
        return Ok(false);
    }
    match obj.extract::<i64>() {
        Ok(v) => push_decimal(v, buf),
        Err(_) => {
            // Past `i64` (or a numpy `uint64`): `int`'s own decimal text of
            // the value (never a subclass's `__str__`).
            // SAFETY: the GIL is held and `p` is a live object; returns a new
            // reference or NULL with an exception set.
            let text =
                unsafe { Bound::from_owned_ptr_or_err(obj.py(), ffi::PyNumber_ToBase(p, 10))? };
            buf.push_str(&text.cast_into::<PyString>()?.to_cow()?);
        }
    }
    Ok(true)
}

/// The decimal digits of 0..100, two by two.
const PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// `v` in decimal, appended to `buf`: two digits a division (half the
/// dependent divisions of one a digit).
#[inline]
fn push_decimal(v: i64, buf: &mut String) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    }
    if n >= 10 {
        let r = n as usize * 2;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    if v < 0 {
        buf.push('-');
    }
    // ASCII digits: always valid UTF-8 (checked, without a panic path).
    if let Ok(text) = std::str::from_utf8(&digits[i..]) {
        buf.push_str(text);
    }
}

/// numpy's `integer` (every numpy integer scalar type derives from it),
/// looked up once.
static NUMPY_INTEGER: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Whether `obj` is a numpy integer scalar (not a numpy `bool_`, which is no
/// `integer`).  Runs no Python code once numpy's type is known.
fn numpy_integer(obj: &Bound<'_, PyAny>) -> bool {
    let Ok(integer) = NUMPY_INTEGER.import(obj.py(), "numpy", "integer") else {
        return false;
    };
    // SAFETY: the GIL is held; both are live type objects.
    unsafe { ffi::PyType_IsSubtype(ffi::Py_TYPE(obj.as_ptr()), integer.as_ptr().cast()) != 0 }
}

// `PyUnicode_AsUTF8AndSize` for the stable-ABI wheel on 3.9 (see `utf8_raw`):
// the same declaration as CPython's, which PyO3 leaves out of the 3.9 limited API.
#[cfg(all(Py_LIMITED_API, not(Py_3_10), unix))]
extern "C" {
    fn PyUnicode_AsUTF8AndSize(
        unicode: *mut ffi::PyObject,
        size: *mut ffi::Py_ssize_t,
    ) -> *const std::os::raw::c_char;
}
#[cfg(any(not(Py_LIMITED_API), Py_3_10))]
use ffi::PyUnicode_AsUTF8AndSize;

/// A `str` object's UTF-8 bytes, borrowed from the object (CPython keeps them
/// in the object: an ASCII string's own data, else a UTF-8 copy made once and
/// cached); `None` (the exception cleared) for a `str` with no UTF-8 form (a
/// lone surrogate).  A compact ASCII string's text is read from the object
/// where its layout is known (`layout`), without the call.
///
/// Why also under the stable ABI of 3.9: `PyUnicode_AsUTF8AndSize` joined the
/// limited API only in 3.10, but every CPython since 3.3 exports it with this
/// signature, and on Linux and macOS an extension's symbols are resolved in the
/// running interpreter; so the one `cp39-abi3` wheel borrows on every version
/// instead of copying each id.  Not on Windows: an abi3 module links against
/// `python3.dll`, which on 3.9 does not export it; there the stable-ABI build
/// copies ([`str_utf8`], `plain_entry` in `encode`).
///
/// # Safety
/// The GIL is held (on a free-threaded build: the object is not being
/// mutated) and `s` is a live `str`; the slice is used only while `s` lives.
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
#[inline]
pub(super) unsafe fn utf8_raw<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    super::layout::ascii(s).or_else(|| utf8_raw_api(s))
}

/// [`utf8_raw`] through the C API only.
///
/// # Safety
/// As [`utf8_raw`].
#[cfg(any(not(Py_LIMITED_API), Py_3_10, unix))]
pub(super) unsafe fn utf8_raw_api<'a>(s: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let mut size: ffi::Py_ssize_t = 0;
    let data = PyUnicode_AsUTF8AndSize(s, &mut size);
    if data.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    Some(std::slice::from_raw_parts(data.cast::<u8>(), size as usize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_rust_formatting() {
        for v in [
            0,
            1,
            -1,
            9,
            10,
            42,
            -70,
            99,
            100,
            101,
            999,
            -1000,
            1_000_000,
            i64::MAX,
            i64::MIN,
        ] {
            let mut buf = String::from("x");
            push_decimal(v, &mut buf);
            assert_eq!(buf, format!("x{v}"));
        }
    }

    #[test]
    fn every_door_words_a_refusal_alike() {
        let float = |at| Place::new(Role::Doc, at).refused_text(false, "float", "1.5");
        assert_eq!(
            float(At::Top),
            "a document id must be a str or an int, got float (1.5)"
        );
        assert_eq!(
            float(At::Row(3)),
            "row 3: a document id must be a str or an int, got float (1.5)"
        );
        assert_eq!(
            float(At::Query("q1")),
            "query \"q1\": a document id must be a str or an int, got float (1.5)"
        );
        let cell = Place::new(
            Role::Any,
            At::Cell {
                column: "doc_id",
                row: 4,
            },
        );
        assert_eq!(
            cell.refused_text(false, "bool", "True"),
            "column \"doc_id\", row 4: an id must be a str or an int, got bool (True)"
        );
        assert_eq!(
            cell.refused_text(true, "NoneType", ""),
            "column \"doc_id\", row 4: the id is null"
        );
        assert_eq!(
            Place::new(Role::Query, At::Top).refused_text(true, "float", ""),
            "the query id is null"
        );
        assert_eq!(
            Place::new(Role::Retrieved, At::Row(0)).no_utf8_text("'a\\ud800'"),
            "row 0: a retrieved id 'a\\ud800' is not valid Unicode text (it holds a lone \
             surrogate)"
        );
    }
}
