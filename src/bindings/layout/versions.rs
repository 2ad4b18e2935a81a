//! One table per CPython version: where the fields that `layout` reads sit
//! in the objects of that version, in bytes from the object's start.
//!
//! The tables hold 64-bit, little-endian, GIL builds without `Py_TRACE_REFS`
//! (`super::init` checks the build before choosing one).  Field names are
//! CPython's (`Include/cpython/unicodeobject.h`, `floatobject.h`,
//! `listobject.h`, `dictobject.h`, `Include/internal/pycore_dict.h` of each
//! version; the 3.9 and 3.10 keys object is in `Objects/dict-common.h`).  To
//! check a table: `offsetof` of each field, compiled against that version's
//! headers (with `Py_BUILD_CORE` for `internal/pycore_dict.h`).  A version
//! gets a table only once the tests run on it (`make smoke` runs
//! `tests/test_layout.py` on every listed version).

/// The offsets of one CPython version.
#[derive(Debug)]
pub(super) struct Layout {
    /// `PyASCIIObject.length` (`Py_ssize_t`).
    pub(super) str_length: usize,
    /// `PyASCIIObject.hash` (`Py_hash_t`, -1 until computed).
    pub(super) str_hash: usize,
    /// `PyASCIIObject.state`, a 32-bit bit field.
    pub(super) str_state: usize,
    /// The `compact` and `ascii` bits of `state`, both set in a compact
    /// ASCII `str`.
    pub(super) str_compact_ascii: u32,
    /// A compact ASCII `str`'s text: right after `PyASCIIObject`.
    pub(super) str_ascii_text: usize,
    /// `PyFloatObject.ob_fval` (`double`).
    pub(super) float_value: usize,
    /// `PyListObject`'s `ob_size` (`Py_ssize_t`).
    pub(super) list_size: usize,
    /// `PyListObject.ob_item` (`PyObject **`).
    pub(super) list_items: usize,
    /// `PyDictObject.ma_keys` (`PyDictKeysObject *`).
    pub(super) dict_keys: usize,
    /// `PyDictObject.ma_values` (NULL for a combined table).
    pub(super) dict_values: usize,
    /// The keys object's fields.
    pub(super) keys: Keys,
}

/// A `PyDictKeysObject`'s fields: the entry count, the index block whose
/// size gives where the entries start, and the entry kind.
#[derive(Debug)]
pub(super) enum Keys {
    /// 3.9 and 3.10: `dk_size` (`Py_ssize_t`, the number of indices, each
    /// of 1, 2, 4 or 8 bytes by that size), `dk_nentries`, the indices at
    /// `indices`; entries of (hash, key, value), 24 bytes.
    Sized {
        size: usize,
        nentries: usize,
        indices: usize,
    },
    /// From 3.11: `dk_log2_index_bytes` (`u8`, the index block is
    /// `1 << it` bytes), `dk_kind` (`u8`: 0 the general kind, entries of
    /// (hash, key, value), 24 bytes; else the `str`-keys kinds, entries of
    /// (key, value), 16 bytes), `dk_nentries`, the indices at `indices`.
    Log2 {
        log2_index_bytes: usize,
        kind: usize,
        nentries: usize,
        indices: usize,
    },
}

/// The `str` fields up to 3.11: `wstr` (a pointer) follows `state`, so the
/// text starts at 48.
const STR_WITH_WSTR: usize = 48;
/// From 3.12 (`wstr` removed): the text starts at 40.
const STR_WITHOUT_WSTR: usize = 40;

const DICT_3_9: Keys = Keys::Sized {
    size: 8,
    nentries: 32,
    indices: 40,
};
const DICT_3_11: Keys = Keys::Log2 {
    log2_index_bytes: 9,
    kind: 10,
    nentries: 24,
    indices: 32,
};

/// A version's table: the fields at the same place on every listed version,
/// and the two that differ (the text's place and the keys object).
const fn table(str_ascii_text: usize, keys: Keys) -> Layout {
    Layout {
        str_length: 16,
        str_hash: 24,
        str_state: 32,
        // `state`: interned (2 bits), kind (3), compact, ascii.
        str_compact_ascii: 0x60,
        str_ascii_text,
        float_value: 16,
        list_size: 16,
        list_items: 24,
        dict_keys: 32,
        dict_values: 40,
        keys,
    }
}

pub(super) static PY39: Layout = table(STR_WITH_WSTR, DICT_3_9);
pub(super) static PY310: Layout = table(STR_WITH_WSTR, DICT_3_9);
pub(super) static PY311: Layout = table(STR_WITH_WSTR, DICT_3_11);
pub(super) static PY312: Layout = table(STR_WITHOUT_WSTR, DICT_3_11);
pub(super) static PY313: Layout = table(STR_WITHOUT_WSTR, DICT_3_11);

/// The table of CPython `3.minor`, if it has one.
pub(super) fn of_minor(minor: u8) -> Option<&'static Layout> {
    match minor {
        9 => Some(&PY39),
        10 => Some(&PY310),
        11 => Some(&PY311),
        12 => Some(&PY312),
        13 => Some(&PY313),
        _ => None,
    }
}
