//! The judged documents of the drop-in's qrels ([`DictJudgments`]), built
//! once in `RelevanceEvaluator.__init__` from the encoded qrels, without the
//! GIL (no second walk of the qrels objects, no copy of their ids): per
//! judged query an open-addressing table of its judged ids by a hash of
//! their UTF-8, and one table of the query ids.  A run key is matched by
//! that hash of its UTF-8 (borrowed from the object), then by its text
//! against the qrels' own arena.
//!
//! The tables are sized once (one zeroed allocation) and filled a query per
//! task on the pool (in this thread for qrels of at most `SERIAL_ROWS` rows).
//! A slot is eight bytes (the high half of the hash and the row + 1), so a
//! probe for an unjudged id, most of them, touches one or two cache lines of
//! its query's table and nothing else.
//!
//! Rejected alternatives: judged ids held as `str` objects and matched as
//! `ranklens.Scorer` matches ids (pointer, then hash, then text): slower than
//! the arena, and a reference held per id (the pointer check would only
//! decide for a run key that is the qrels' own object, which real inputs do
//! not give); tables built from the qrels' `str` objects and their cached
//! Python hashes: a second walk of the qrels and a copy of their ids; a
//! `{query id: index}` dict: each lookup several cache misses; one table
//! regrown for all queries: half of the build time.

use crate::core::cancel::Cancel;
use crate::core::eval;
use hashbrown::DefaultHashBuilder;
use pyo3::prelude::*;
use rayon::prelude::*;
use std::hash::BuildHasher;

/// No judged entry.
pub(super) const NONE: u32 = u32::MAX;

/// The judged documents of encoded qrels, for matching run keys by the hash
/// of their UTF-8 (see the module note).
#[pyclass(frozen, module = "ranklens._ranklens")]
pub(in crate::bindings) struct DictJudgments {
    /// Qrels row offsets per encoded query.
    pub(super) offsets: Vec<usize>,
    /// Per query: first slot in `table` and mask of its power-of-two size.
    pub(super) spans: Vec<(usize, usize)>,
    /// Open addressing by hash, one table per query: the high 32 bits of
    /// the id's hash and its row + 1 (0: an empty slot).  Eight bytes a
    /// slot, so that a probe for an unjudged id (most of them) touches one
    /// or two cache lines of the query's table and nothing else.
    pub(super) table: Vec<u64>,
    /// The query ids, open addressing as `table` (tag and query + 1), one
    /// table for all; `queries.len() - 1` is its mask.  Why not a `dict`
    /// `{query id: index}`: its lookup touches its index, its entry, the
    /// stored key object and that key's text, each a cache miss for a key
    /// that is not the run's own object.
    pub(super) queries: Vec<u64>,
    /// Hashes an id's UTF-8, for the tables and for the run keys alike.
    pub(super) hasher: DefaultHashBuilder,
}

/// The high half of a hash, as kept in a table slot.
#[inline]
fn tag(hash: u64) -> u64 {
    hash & 0xffff_ffff_0000_0000
}

impl DictJudgments {
    /// The tables of encoded qrels `q`; `None` for a query of 2^32 - 1
    /// judged rows or more (the general path then), or when `cancel` is set
    /// (looked at before each query and every 65,536 ids).  The queries'
    /// tables are filled in parallel (`parallel`: on the current rayon pool).
    pub(super) fn build(
        q: &eval::Side<'_>,
        parallel: bool,
        cancel: &Cancel,
    ) -> Option<DictJudgments> {
        let offsets: Vec<usize> = q.offsets.iter().map(|&o| o.max(0) as usize).collect();
        let hasher = DefaultHashBuilder::default();
        let mut spans = Vec::with_capacity(offsets.len().saturating_sub(1));
        let mut total = 0usize;
        for w in offsets.windows(2) {
            let n = w[1].saturating_sub(w[0]);
            if n >= u32::MAX as usize {
                return None;
            }
            let size = (2 * n).next_power_of_two().max(4);
            spans.push((total, size - 1));
            total += size;
        }
        let mut table = vec![0u64; total];
        let mut parts: Vec<&mut [u64]> = Vec::with_capacity(spans.len());
        let mut rest = table.as_mut_slice();
        for &(_, mask) in &spans {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut_checked(mask + 1)?;
            parts.push(part);
            rest = tail;
        }
        // One query's table: its ids by hash, open addressing.
        let fill = |(qi, part): (usize, &mut [u64])| -> bool {
            let (Some(&a), Some(&b)) = (offsets.get(qi), offsets.get(qi + 1)) else {
                return false;
            };
            let Some(ids) = q.doc_ids.get(a..b) else {
                return false;
            };
            let mask = part.len() - 1;
            // Blocks of 65,536 ids, the flag looked at before each: the
            // inner loop stays as it is.
            for (c, block) in ids.chunks(1 << 16).enumerate() {
                if cancel.is_cancelled() {
                    return false;
                }
                for (jj, &d) in block.iter().enumerate() {
                    let j = (c << 16) + jj;
                    let hash = hasher.hash_one(q.docs.get(d as usize));
                    // Ids within a query are distinct (checked by the encoder).
                    let mut slot = hash as usize & mask;
                    while part.get(slot).is_some_and(|&t| t != 0) {
                        slot = (slot + 1) & mask;
                    }
                    let Some(t) = part.get_mut(slot) else {
                        return false;
                    };
                    *t = tag(hash) | (j as u64 + 1);
                }
            }
            true
        };
        let filled = if parallel {
            parts
                .into_par_iter()
                .enumerate()
                .with_min_len(1024)
                .all(fill)
        } else {
            parts.into_iter().enumerate().all(fill)
        };
        if !filled {
            return None;
        }
        let nq = q.num_queries();
        let size = (2 * nq).next_power_of_two().max(4);
        let mut queries = vec![0u64; size];
        for i in 0..nq {
            let hash = hasher.hash_one(q.queries.get(i));
            let mut slot = hash as usize & (size - 1);
            while queries[slot] != 0 {
                slot = (slot + 1) & (size - 1);
            }
            queries[slot] = tag(hash) | (i as u64 + 1);
        }
        Some(DictJudgments {
            offsets,
            spans,
            table,
            queries,
            hasher,
        })
    }

    /// The index of the qrels query of UTF-8 `text` (`q`: the qrels the tables
    /// were built from), or `None`.
    #[inline]
    pub(super) fn query(&self, text: &[u8], q: &eval::Side<'_>) -> Option<usize> {
        let hash = self.hasher.hash_one(text);
        let mask = self.queries.len().checked_sub(1)?;
        let mut slot = hash as usize & mask;
        loop {
            let t = *self.queries.get(slot)?;
            if t == 0 {
                return None;
            }
            if t & 0xffff_ffff_0000_0000 == tag(hash) {
                let i = (t as u32).wrapping_sub(1) as usize;
                if q.queries.get(i) == text {
                    return Some(i);
                }
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Query `qi`'s table: (first slot, mask, first qrels row).
    pub(super) fn table_of(&self, qi: usize) -> Option<(usize, usize, usize)> {
        let (start, mask) = self.spans.get(qi).copied()?;
        Some((start, mask, self.offsets.get(qi).copied()?))
    }

    /// The judged row (within its query, whose table is `at`) of the id of
    /// UTF-8 `text` and hash `hash` (of `self.hasher`), or `NONE`; the text
    /// is compared with the qrels' own (`q`, the qrels the tables were built
    /// from).
    #[inline]
    pub(super) fn find(
        &self,
        at: (usize, usize, usize),
        hash: u64,
        text: &[u8],
        q: &eval::Side<'_>,
    ) -> u32 {
        let (start, mask, base) = at;
        let mut slot = hash as usize & mask;
        loop {
            let Some(&t) = self.table.get(start + slot) else {
                return NONE;
            };
            if t == 0 {
                return NONE;
            }
            if t & 0xffff_ffff_0000_0000 == tag(hash) {
                let row = (t as u32).wrapping_sub(1);
                let judged = q
                    .doc_ids
                    .get(base + row as usize)
                    .map(|&d| q.docs.get(d as usize));
                // Equal texts have equal hashes: the tag only filters.
                if judged == Some(text) {
                    return row;
                }
            }
            slot = (slot + 1) & mask;
        }
    }
}
