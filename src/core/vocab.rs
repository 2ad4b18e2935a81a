//! Query ids to dense `u32` ids in byte order, and string arenas.
//!
//! Strings live in one arena (`bytes` + `offsets`), not one allocation each.
//! Why not hashing ids into floats (ranx): collisions.  A hash here only finds
//! the candidate; equality is always checked on the bytes.
//!
//! Query vocabularies are interned and renumbered in byte order (few strings;
//! results come out sorted, and qrels and run queries are matched by a linear
//! merge, `align`).  Document ids are not interned at all: see
//! [`crate::core::encode`] for why (interning them would be most of the load
//! time).

use crate::core::error::{Error, Result};
use hashbrown::{DefaultHashBuilder, HashTable};
use rayon::prelude::*;
use std::hash::BuildHasher;

/// Marker for "no such id on the other side".
pub const NONE: u32 = u32::MAX;

/// A borrowed vocabulary: id `i` is `bytes[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Copy, Debug)]
pub struct Vocab<'a> {
    bytes: &'a [u8],
    offsets: &'a [i64],
}

impl<'a> Vocab<'a> {
    /// Check the layout once so that `get` never reads out of bounds.
    pub fn new(bytes: &'a [u8], offsets: &'a [i64]) -> Result<Self> {
        if offsets.is_empty() || offsets[0] != 0 {
            return Err(Error::InvalidInput(
                "vocabulary offsets must start at 0".into(),
            ));
        }
        if offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::InvalidInput(
                "vocabulary offsets must not decrease".into(),
            ));
        }
        if offsets[offsets.len() - 1] as u64 != bytes.len() as u64 {
            return Err(Error::InvalidInput(
                "vocabulary offsets must end at the byte length".into(),
            ));
        }
        Ok(Vocab { bytes, offsets })
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of id `i` (empty for an out-of-range id; callers pass valid ids).
    pub fn get(&self, i: usize) -> &'a [u8] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self.bytes.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The id of `key`, by binary search (the vocabulary is sorted by bytes).
    pub fn position(&self, key: &[u8]) -> Option<usize> {
        let (mut lo, mut hi) = (0usize, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}

/// An owned vocabulary, sorted by bytes, as handed to numpy.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedVocab {
    pub bytes: Vec<u8>,
    pub offsets: Vec<i64>,
}

/// The empty vocabulary (one offset: a derived default, with none, made
/// `len` underflow).
impl Default for OwnedVocab {
    fn default() -> Self {
        OwnedVocab {
            bytes: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl OwnedVocab {
    pub fn view(&self) -> Vocab<'_> {
        Vocab {
            bytes: &self.bytes,
            offsets: &self.offsets,
        }
    }
}

/// Assigns ids to strings in first-seen order; `into_sorted` renumbers them.
/// The table keeps each string's hash, so growing it never re-reads strings.
pub struct Interner {
    bytes: Vec<u8>,
    starts: Vec<usize>,
    table: HashTable<(u64, u32)>,
    hasher: DefaultHashBuilder,
}

impl Default for Interner {
    fn default() -> Self {
        Self::new()
    }
}

impl Interner {
    pub fn new() -> Self {
        Interner {
            bytes: Vec::new(),
            starts: vec![0],
            table: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[self.starts[i]..self.starts[i + 1]]
    }

    /// The id of `s`, adding it if new.
    pub fn intern(&mut self, s: &[u8]) -> Result<u32> {
        let hash = self.hasher.hash_one(s);
        let bytes = &self.bytes;
        let starts = &self.starts;
        let eq = |&(h, id): &(u64, u32)| {
            let i = id as usize;
            h == hash && &bytes[starts[i]..starts[i + 1]] == s
        };
        if let Some(&(_, id)) = self.table.find(hash, eq) {
            return Ok(id);
        }
        let id = self.len();
        if id >= NONE as usize {
            return Err(Error::InvalidInput(
                "more than 4,294,967,294 distinct ids on one side".into(),
            ));
        }
        self.bytes.extend_from_slice(s);
        self.starts.push(self.bytes.len());
        self.table
            .insert_unique(hash, (hash, id as u32), |&(h, _)| h);
        Ok(id as u32)
    }

    /// Renumber ids in byte order. Returns the sorted vocabulary and the map
    /// old id -> new id.
    pub fn into_sorted(self) -> (OwnedVocab, Vec<u32>) {
        self.into_sorted_par(true)
    }

    /// [`Interner::into_sorted`], the ids sorted on the pool (`par`) or on
    /// this thread (the same order: the ids are distinct).
    pub fn into_sorted_par(self, par: bool) -> (OwnedVocab, Vec<u32>) {
        let n = self.len();
        let bytes = &self.bytes;
        let starts = &self.starts;
        let get = |i: u32| &bytes[starts[i as usize]..starts[i as usize + 1]];
        // Each id's first 8 bytes as a big-endian integer (zero-padded), its
        // index beside it: integers in order are ids in byte order, and only
        // equal integers compare the bytes.  Why: each compare of the bytes
        // is a call into `memcmp` and two loads through `starts`, a visible
        // share of encoding qrels with many queries.
        let prefix = |id: &[u8]| {
            let mut b = [0u8; 8];
            let k = id.len().min(8);
            b[..k].copy_from_slice(&id[..k]);
            u64::from_be_bytes(b)
        };
        let mut keyed: Vec<(u64, u32)> = (0..n as u32).map(|i| (prefix(get(i)), i)).collect();
        let order =
            |a: &(u64, u32), b: &(u64, u32)| a.0.cmp(&b.0).then_with(|| get(a.1).cmp(get(b.1)));
        if par {
            keyed.par_sort_unstable_by(order);
        } else {
            keyed.sort_unstable_by(order);
        }
        let mut remap = vec![0u32; n];
        let mut out = OwnedVocab {
            bytes: Vec::with_capacity(bytes.len()),
            offsets: Vec::with_capacity(n + 1),
        };
        out.offsets.push(0);
        for (new, &(_, old)) in keyed.iter().enumerate() {
            remap[old as usize] = new as u32;
            out.bytes.extend_from_slice(get(old));
            out.offsets.push(out.bytes.len() as i64);
        }
        (out, remap)
    }
}

/// For each id of `from`, the id of the same string in `to`, or [`NONE`].
/// Both vocabularies must be sorted by bytes (a linear merge).
pub fn align(from: Vocab<'_>, to: Vocab<'_>) -> Vec<u32> {
    let mut out = vec![NONE; from.len()];
    let (mut i, mut j) = (0usize, 0usize);
    while i < from.len() && j < to.len() {
        match from.get(i).cmp(to.get(j)) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out[i] = j as u32;
                i += 1;
                j += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_sorts_by_bytes() {
        let mut it = Interner::new();
        let ids: Vec<u32> = ["b", "a", "B", "b", "ab", ""]
            .iter()
            .map(|s| it.intern(s.as_bytes()).unwrap())
            .collect();
        assert_eq!(ids, vec![0, 1, 2, 0, 3, 4]);
        let (v, remap) = it.into_sorted();
        let view = v.view();
        let sorted: Vec<&[u8]> = (0..view.len()).map(|i| view.get(i)).collect();
        assert_eq!(sorted, vec![&b""[..], b"B", b"a", b"ab", b"b"]);
        assert_eq!(view.get(remap[0] as usize), b"b");
        assert_eq!(view.get(remap[3] as usize), b"ab");
    }

    proptest::proptest! {
        /// `into_sorted` is byte order, and `remap` finds each id: ids over
        /// a few byte values (0 and 255 among them) of 0-12 bytes, so that
        /// many share their first 8 bytes, differ only past them, or are
        /// prefixes of each other (the zero padding of the sort keys).
        #[test]
        fn into_sorted_is_byte_order(
            ids in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![0u8, 1, b'a', 255]), 0..12),
                0..80,
            )
        ) {
            let mut it = Interner::new();
            let first: Vec<u32> = ids.iter().map(|id| it.intern(id).unwrap()).collect();
            let (v, remap) = it.into_sorted();
            let view = v.view();
            let got: Vec<&[u8]> = (0..view.len()).map(|i| view.get(i)).collect();
            let mut want: Vec<&[u8]> = ids.iter().map(|x| x.as_slice()).collect();
            want.sort();
            want.dedup();
            proptest::prop_assert_eq!(got, want);
            for (id, &old) in ids.iter().zip(&first) {
                proptest::prop_assert_eq!(view.get(remap[old as usize] as usize), id.as_slice());
            }
        }
    }

    #[test]
    fn align_merges() {
        let a = OwnedVocab {
            bytes: b"abd".to_vec(),
            offsets: vec![0, 1, 2, 3],
        };
        let b = OwnedVocab {
            bytes: b"bcd".to_vec(),
            offsets: vec![0, 1, 2, 3],
        };
        assert_eq!(align(a.view(), b.view()), vec![NONE, 0, 2]);
    }

    #[test]
    fn vocab_rejects_bad_offsets() {
        assert!(Vocab::new(b"ab", &[0, 3]).is_err());
        assert!(Vocab::new(b"ab", &[1, 2]).is_err());
        assert!(Vocab::new(b"ab", &[0, 2, 1]).is_err());
        assert!(Vocab::new(b"", &[]).is_err());
        assert!(Vocab::new(b"", &[0]).is_ok());
    }
}
