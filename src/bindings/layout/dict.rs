//! Reads of a dict's entry table through a version's table: the walk
//! [`DictEntries`], which gives what `PyDict_Next` gives, in its order, with
//! the key and value objects of the entries [`AHEAD`] prefetched.

use super::versions::{Keys, Layout};
use super::DICTS;
use crate::core::prefetch;
use pyo3::ffi;

/// Entries read ahead of the one returned: their key and value objects are
/// prefetched that far ahead (so that the cache misses of several entries
/// overlap).
const AHEAD: usize = 6;

/// Whether [`DictEntries`] reads entry tables (else it calls `PyDict_Next`).
pub(in crate::bindings) fn dict_reads() -> bool {
    DICTS.get().is_some()
}

/// A dict's entries, as `PyDict_Next` gives them (borrowed key and value,
/// in its order): read from the dict's entry table where a table was chosen
/// and the dict's table is combined (`ma_values` NULL), the key and value
/// objects of the entries [`AHEAD`] prefetched; else through `PyDict_Next`.
pub(in crate::bindings) struct DictEntries {
    dict: *mut ffi::PyObject,
    /// `PyDict_Next`'s position: the next entry's index in the table.
    pos: ffi::Py_ssize_t,
    /// The version's table used to read the entries.
    layout: Option<&'static Layout>,
    /// The entry table read directly: its first entry's key field, the
    /// number of entries and the stride in bytes; `None`: `PyDict_Next`.
    table: Option<(*const u8, usize, usize)>,
}

impl DictEntries {
    /// The entries of `dict`.
    ///
    /// # Safety
    /// The GIL is held and `dict` is a live dict (or subclass); no Python
    /// code runs between the calls to [`DictEntries::next`] unless
    /// [`DictEntries::reload`] is called after it.
    #[inline]
    pub(in crate::bindings) unsafe fn new(dict: *mut ffi::PyObject) -> DictEntries {
        Self::with(DICTS.get(), dict)
    }

    /// The entries of `dict` read per `layout` (`None`: `PyDict_Next`).
    ///
    /// # Safety
    /// As [`DictEntries::new`], and `layout` is the running interpreter's.
    #[inline]
    pub(super) unsafe fn with(
        layout: Option<&'static Layout>,
        dict: *mut ffi::PyObject,
    ) -> DictEntries {
        let mut e = DictEntries {
            dict,
            pos: 0,
            layout,
            table: None,
        };
        e.reload();
        if let Some((keys, n, stride)) = e.table {
            for i in 0..n.min(AHEAD) {
                Self::fetch(keys.add(i * stride));
            }
        }
        e
    }

    /// Read the table again (after Python code ran: the dict may have
    /// changed); the position is kept, as `PyDict_Next` keeps it.
    ///
    /// # Safety
    /// As [`DictEntries::new`].
    #[inline]
    pub(in crate::bindings) unsafe fn reload(&mut self) {
        self.table = self.layout.and_then(|l| entry_table(l, self.dict));
    }

    /// Whether the table is read directly (for the import-time check).
    pub(super) fn direct(&self) -> bool {
        self.table.is_some()
    }

    /// Prefetch the key and value objects of the entry whose key field is
    /// at `at`.
    #[inline(always)]
    unsafe fn fetch(at: *const u8) {
        let k = at.cast::<*const u8>().read();
        let v = at.add(8).cast::<*const u8>().read();
        prefetch(k);
        // A `str`'s text starts at 40 or 48: its second line.
        prefetch(k.wrapping_add(64));
        prefetch(v);
    }

    /// The next entry, borrowed, or `None` at the end.
    ///
    /// # Safety
    /// As [`DictEntries::new`].
    #[inline(always)]
    pub(in crate::bindings) unsafe fn next(
        &mut self,
    ) -> Option<(*mut ffi::PyObject, *mut ffi::PyObject)> {
        let Some((keys, n, stride)) = self.table else {
            let (mut k, mut v) = (std::ptr::null_mut(), std::ptr::null_mut());
            return (ffi::PyDict_Next(self.dict, &mut self.pos, &mut k, &mut v) != 0)
                .then_some((k, v));
        };
        loop {
            let i = self.pos.max(0) as usize;
            if i >= n {
                return None;
            }
            self.pos += 1;
            if i + AHEAD < n {
                Self::fetch(keys.add((i + AHEAD) * stride));
            }
            let at = keys.add(i * stride);
            let v = at.add(8).cast::<*mut ffi::PyObject>().read();
            if !v.is_null() {
                return Some((at.cast::<*mut ffi::PyObject>().read(), v));
            }
        }
    }
}

/// The combined entry table of `dict` per `l`: its first entry's key field,
/// its entries (`dk_nentries`, deleted ones included) and their stride;
/// `None` if the table is split.
///
/// # Safety
/// The GIL is held, `l` is the running interpreter's table and `dict` a live
/// dict (or subclass).
#[inline]
unsafe fn entry_table(l: &Layout, dict: *mut ffi::PyObject) -> Option<(*const u8, usize, usize)> {
    // SAFETY: per the caller, `ma_values`, `ma_keys` and the keys object's
    // fields are where `l` says; the entries follow the index block.
    let base = dict.cast::<u8>();
    if !base.add(l.dict_values).cast::<*const u8>().read().is_null() {
        return None;
    }
    let keys = base.add(l.dict_keys).cast::<*const u8>().read();
    match l.keys {
        Keys::Sized {
            size,
            nentries,
            indices,
        } => {
            let size = keys.add(size).cast::<isize>().read().max(0) as usize;
            let n = keys.add(nentries).cast::<isize>().read().max(0) as usize;
            let width = match size {
                0..=0xff => 1,
                0x100..=0xffff => 2,
                0x1_0000..=0xffff_ffff => 4,
                _ => 8,
            };
            // Entries of (hash, key, value): the key field after the hash.
            Some((keys.add(indices + size * width + 8), n, 24))
        }
        Keys::Log2 {
            log2_index_bytes,
            kind,
            nentries,
            indices,
        } => {
            let index_bytes = 1usize << keys.add(log2_index_bytes).read();
            let general = keys.add(kind).read() == 0;
            let n = keys.add(nentries).cast::<isize>().read().max(0) as usize;
            let entries = keys.add(indices + index_bytes);
            Some(if general {
                (entries.add(8), n, 24)
            } else {
                (entries, n, 16)
            })
        }
    }
}
