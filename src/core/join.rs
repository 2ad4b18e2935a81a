//! Finding a ranked document among its query's judged documents.
//!
//! This is the per-row step of scoring: a typical query ranks 100 documents
//! of which ~10 are judged, so most lookups are misses and the miss path is
//! what matters.
//!
//! Why a key scan for small judged sets: a query's judged documents (up to
//! [`SCAN_MAX`]) are reduced to one 64-bit key each, built from the id's
//! length and its first and last 8 bytes (ids differ mostly in their
//! trailing digits); a ranked document's key is compared with all of them at
//! once, without branches, and only an equal key is confirmed on the bytes.
//! A miss costs two loads and a dozen compares.  Larger judged sets use a
//! hashed binary search (each ranked id hashed, the judged hashes searched).
//!
//! Rejected alternatives:
//! * the hashed binary search for every set: four unpredictable branches per
//!   row, a large share of a many-metric evaluation;
//! * a 256-bit Bloom filter in front of the binary search: the hash it needs
//!   is the cost.
//!
//! Keys and hashes only pre-select: a match is always decided by comparing the
//! bytes, so a collision costs time, never a wrong label.

use crate::core::vocab::Vocab;
use hashbrown::DefaultHashBuilder;
use std::hash::BuildHasher;

/// Judged sets up to this size are scanned by key; larger ones are hashed.
pub const SCAN_MAX: usize = 32;

/// The 64-bit pre-selection key of a document id.
#[inline(always)]
fn key(doc: &[u8]) -> u64 {
    let n = doc.len();
    let mix = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    if n >= 8 {
        let mut head = [0u8; 8];
        let mut tail = [0u8; 8];
        head.copy_from_slice(&doc[..8]);
        tail.copy_from_slice(&doc[n - 8..]);
        u64::from_le_bytes(tail) ^ u64::from_le_bytes(head).rotate_left(29) ^ mix
    } else {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(doc);
        u64::from_le_bytes(b) ^ mix
    }
}

/// One query's judged documents, ready for lookups; reused across queries.
#[derive(Default)]
pub struct Judged {
    /// Scan mode: the key of each judged row, in row order.
    keys: Vec<u64>,
    /// Hash mode: (hash of the doc id, row), sorted by hash.
    hashed: Vec<(u64, u32)>,
    scan: bool,
    hasher: DefaultHashBuilder,
}

impl Judged {
    /// Prepare lookups among the judged rows `rows` (ids into `docs`).
    pub fn build(&mut self, docs: Vocab<'_>, rows: &[u32]) {
        self.keys.clear();
        self.hashed.clear();
        self.scan = rows.len() <= SCAN_MAX;
        if self.scan {
            self.keys
                .extend(rows.iter().map(|&d| key(docs.get(d as usize))));
        } else {
            let h = &self.hasher;
            self.hashed.extend(
                rows.iter()
                    .enumerate()
                    .map(|(i, &d)| (h.hash_one(docs.get(d as usize)), i as u32)),
            );
            self.hashed.sort_unstable();
        }
    }

    /// The judged row (index into `rows`) whose document id is `doc`.
    #[inline]
    pub fn find(&self, doc: &[u8], docs: Vocab<'_>, rows: &[u32]) -> Option<usize> {
        let same = |j: usize| rows.get(j).is_some_and(|&d| docs.get(d as usize) == doc);
        if self.scan {
            let k = key(doc);
            // No early exit, so that the compares vectorize; hits are rare.
            if !self.keys.iter().fold(false, |any, &x| any | (x == k)) {
                return None;
            }
            return (0..self.keys.len()).find(|&j| self.keys[j] == k && same(j));
        }
        let h = self.hasher.hash_one(doc);
        let first = self.hashed.partition_point(|e| e.0 < h);
        self.hashed[first..]
            .iter()
            .take_while(|e| e.0 == h)
            .map(|e| e.1 as usize)
            .find(|&j| same(j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::vocab::OwnedVocab;

    fn vocab(ids: &[&[u8]]) -> OwnedVocab {
        let mut v = OwnedVocab {
            bytes: Vec::new(),
            offsets: vec![0],
        };
        for id in ids {
            v.bytes.extend_from_slice(id);
            v.offsets.push(v.bytes.len() as i64);
        }
        v
    }

    /// Every id is found at its row, and ids that are not judged are not,
    /// in both modes (sizes on either side of `SCAN_MAX`).
    #[test]
    fn finds_exactly_the_judged_rows() {
        for n in [0usize, 1, 7, SCAN_MAX, SCAN_MAX + 1, 100] {
            let judged: Vec<Vec<u8>> = (0..n)
                .map(|i| format!("clueweb12-0003wb-41-{i:05}").into_bytes())
                .collect();
            let refs: Vec<&[u8]> = judged.iter().map(|v| v.as_slice()).collect();
            let v = vocab(&refs);
            let rows: Vec<u32> = (0..n as u32).rev().collect(); // rows need not be in id order
            let mut j = Judged::default();
            j.build(v.view(), &rows);
            for (r, &d) in rows.iter().enumerate() {
                assert_eq!(j.find(&judged[d as usize], v.view(), &rows), Some(r));
            }
            for probe in [
                &b"clueweb12-0003wb-41-99999"[..],
                b"clueweb13-0003wb-41-00000",
                b"",
                b"a",
                b"clueweb12-0003wb-41-0000",
            ] {
                assert_eq!(j.find(probe, v.view(), &rows), None, "n={n} {probe:?}");
            }
        }
    }

    /// Keys that collide still resolve by bytes: ids shorter than 8 bytes,
    /// ids of equal length sharing first and last 8 bytes, and the empty id.
    #[test]
    fn key_collisions_are_resolved_on_the_bytes() {
        let ids: [&[u8]; 6] = [
            b"",
            b"x",
            b"abcdefgh-1-ijklmnop",
            b"abcdefgh-2-ijklmnop",
            b"abcdefgh",
            b"abcdefg",
        ];
        assert_eq!(key(ids[2]), key(ids[3]));
        let v = vocab(&ids);
        let rows: Vec<u32> = (0..ids.len() as u32).collect();
        let mut j = Judged::default();
        j.build(v.view(), &rows);
        for (r, id) in ids.iter().enumerate() {
            assert_eq!(j.find(id, v.view(), &rows), Some(r));
        }
        assert_eq!(j.find(b"abcdefgh-3-ijklmnop", v.view(), &rows), None);
        assert_eq!(j.find(b"abcdefgx", v.view(), &rows), None);
    }
}
