//! The document id arena: each row's id appended as it comes, and the arena
//! rewritten in row order when the rows came scattered.
//!
//! The arena keeps one copy of each row's id (no deduplication, see
//! [`super`]), so appending an id is on the per-row path of every load.

use crate::core::vocab::OwnedVocab;
use rayon::prelude::*;

/// `v.extend_from_slice(s)`, without a call to `memcpy` for an id of 4 to 32
/// bytes when `v` has room: two overlapping fixed-size moves.  Why: for ids
/// of typical length the call (through the PLT, then the CPU dispatch inside
/// `memcpy`) costs more than the copy.
#[inline]
pub(super) fn push_bytes(v: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if !(4..=32).contains(&n) || v.capacity() - v.len() < n {
        v.extend_from_slice(s);
        return;
    }
    let (src, len) = (s.as_ptr(), v.len());
    // SAFETY: `v` has room for `n` more bytes (checked above), so every write
    // lands in `len..len + n` of its allocation, and every read in `s`
    // (the second move of each pair starts at `n - 16`, `n - 8` or `n - 4`,
    // all >= 0 for the sizes that reach it).  The bytes `len..len + n` are all
    // written before `set_len` makes them part of `v`.
    unsafe {
        let dst = v.as_mut_ptr().add(len);
        if n >= 16 {
            let a = src.cast::<[u8; 16]>().read_unaligned();
            let b = src.add(n - 16).cast::<[u8; 16]>().read_unaligned();
            dst.cast::<[u8; 16]>().write_unaligned(a);
            dst.add(n - 16).cast::<[u8; 16]>().write_unaligned(b);
        } else if n >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        }
        v.set_len(len + n);
    }
}

/// The arena rewritten in row order (`doc_ids` becomes `0..n`).
///
/// Why: scoring reads each row's document id to join it with the judgments.
/// With the arena in input order, rows that arrived scattered (a shuffled or
/// unsorted frame) put every one of those reads on a different cache line,
/// making scoring several times slower than for the same rows read from a
/// TREC file.  One parallel copy at load makes the reads sequential; it costs a second arena while it runs, and is skipped for input
/// grouped by query (TREC files, dicts), whose arena is already in order
/// within each query.
pub(super) fn relocate(docs: &OwnedVocab, doc_ids: &[u32], par: bool) -> (OwnedVocab, Vec<u32>) {
    const ROWS: usize = 1 << 14;
    let dv = docs.view();
    let mut offsets = Vec::with_capacity(doc_ids.len() + 1);
    offsets.push(0i64);
    let mut end = 0i64;
    for &r in doc_ids {
        end += dv.get(r as usize).len() as i64;
        offsets.push(end);
    }
    let mut bytes = vec![0u8; end as usize];
    // Disjoint pieces of the new arena, ROWS rows each, filled in parallel.
    let mut pieces: Vec<(&mut [u8], &[u32])> = Vec::new();
    let mut rest: &mut [u8] = &mut bytes;
    for (i, rows) in doc_ids.chunks(ROWS).enumerate() {
        let (a, b) = (offsets[i * ROWS], offsets[i * ROWS + rows.len()]);
        let (head, tail) = rest.split_at_mut((b - a) as usize);
        pieces.push((head, rows));
        rest = tail;
    }
    let fill = |(out, rows): (&mut [u8], &[u32])| {
        let mut at = 0;
        for &r in rows {
            let d = dv.get(r as usize);
            out[at..at + d.len()].copy_from_slice(d);
            at += d.len();
        }
    };
    if par {
        pieces.into_par_iter().for_each(fill);
    } else {
        pieces.into_iter().for_each(fill);
    }
    let ids = (0..doc_ids.len() as u32).collect();
    (OwnedVocab { bytes, offsets }, ids)
}
