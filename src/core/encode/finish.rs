//! [`Builder::finish`]: the collected rows grouped by query, checked for
//! duplicates and ranked, into an [`Encoded`].
//!
//! Steps: queries sorted by bytes; blocks (runs of consecutive rows of one
//! query) put in query order by a counting sort; values copied once into
//! query order (skipped for input already in order); per query, in parallel:
//! the duplicate check and the ranking ([`super::rank`]); input positions
//! only when some query has tied scores; group indices for grouped qrels; the
//! arena rewritten in row order for scattered input ([`super::arena`]).
//!
//! Invariants: the result does not depend on the order in which queries are
//! merged (the first duplicate is the one first in input order), nor on
//! whether the steps run on the pool or in order on the calling thread.
//!
//! Rejected alternatives:
//! * `sort_unstable` of the blocks by query: superlinear where the counting
//!   sort is linear, and slow for scattered input (one block a row);
//! * the grouped values buffer left unzeroed (`set_len`): no measurable gain
//!   for its `unsafe`.

use crate::core::error::{show, Error, Result};
use crate::core::pool;
use crate::core::vocab::OwnedVocab;
use hashbrown::DefaultHashBuilder;
use rayon::prelude::*;
use std::hash::BuildHasher;

use super::arena::relocate;
use super::pages::advise_huge;
use super::rank::rank;
use super::{Builder, Encoded, Kind, SERIAL_ROWS};

impl Builder {
    /// Group, rank and check the rows (in parallel, on the pool of
    /// [`crate::core::pool`] unless already on a pool's thread).
    pub fn finish(self) -> Result<Encoded> {
        self.finish_locating().0
    }

    /// [`Builder::finish`]; for a duplicate, also the rows (in input order)
    /// of the two listings, so that a caller who knows each row's origin (the
    /// TREC reader: its line) can name it.
    pub fn finish_locating(self) -> (Result<Encoded>, Option<(usize, usize)>) {
        let mut rows = None;
        if self.len() <= SERIAL_ROWS {
            let out = self.finish_here(false, &mut rows);
            return (out, rows);
        }
        let out = pool::install(|| self.finish_here(true, &mut rows)).map_err(Error::InvalidInput);
        (out.and_then(|x| x), rows)
    }

    /// `par`: the steps over queries and rows on the pool, else in order on
    /// this thread (no rayon: a binding may call it outside the pool).
    pub(super) fn finish_here(
        self,
        par: bool,
        dup_rows: &mut Option<(usize, usize)>,
    ) -> Result<Encoded> {
        let Builder {
            kind,
            queries,
            doc_bytes,
            doc_starts,
            values,
            groups,
            blocks,
            check_duplicates,
            unique_blocks,
            disorder,
            ties_known,
            ..
        } = self;
        let n = values.len();
        let (queries, qmap) = queries.into_sorted_par(par);
        let nq = qmap.len();
        let docs = OwnedVocab {
            bytes: doc_bytes,
            offsets: doc_starts,
        };

        // Blocks in final query order (input order within a query): before
        // ranking, the final rows are the concatenation of these spans.
        let block_end =
            |i: usize, blocks: &[(u32, u32)]| blocks.get(i + 1).map_or(n as u32, |b| b.1);
        let mut spans: Vec<(u32, u32, u32)> = (0..blocks.len())
            .map(|i| {
                (
                    qmap[blocks[i].0 as usize],
                    blocks[i].1,
                    block_end(i, &blocks),
                )
            })
            .collect();
        drop(blocks);
        // Rows and blocks per query (neither depends on the blocks' order).
        let mut offsets = vec![0i64; nq + 1];
        let mut span_at = vec![0usize; nq + 1];
        for &(q, a, b) in &spans {
            offsets[q as usize + 1] += (b - a) as i64;
            span_at[q as usize + 1] += 1;
        }
        for i in 0..nq {
            offsets[i + 1] += offsets[i];
            span_at[i + 1] += span_at[i];
        }
        // By query, input order within a query: a counting sort (stable, and
        // blocks are already in input order) into the slots `span_at` gives:
        // linear, also for scattered input (one block a row).
        if spans.windows(2).any(|w| w[0].0 > w[1].0) {
            let mut next = span_at.clone();
            let mut sorted = vec![(0u32, 0u32, 0u32); spans.len()];
            for sp in spans {
                let slot = &mut next[sp.0 as usize];
                sorted[*slot] = sp;
                *slot += 1;
            }
            spans = sorted;
        }
        // Blocks are never empty and tile the input: still in input order after
        // the sort means that grouping moves no row (input sorted by query).
        let in_order = spans.windows(2).all(|w| w[0].1 < w[1].1);
        // Values grouped by query: one copy (in parallel, a block at a time),
        // made before the other arrays exist so that the peak stays at the
        // final size.  Zeroed first: leaving it unzeroed (`set_len`) gains
        // nothing measurable.
        let mut values = if in_order {
            values
        } else {
            let mut grouped = vec![0.0; n];
            advise_huge(&grouped);
            let mut parts: Vec<(&mut [f64], &[f64])> = Vec::with_capacity(spans.len());
            let mut rest: &mut [f64] = &mut grouped;
            for &(_, a, b) in &spans {
                let (head, tail) = rest.split_at_mut((b - a) as usize);
                parts.push((head, &values[a as usize..b as usize]));
                rest = tail;
            }
            let copy = |(to, from): (&mut [f64], &[f64])| to.copy_from_slice(from);
            if par {
                parts.into_par_iter().for_each(copy);
            } else {
                parts.into_iter().for_each(copy);
            }
            drop(values);
            grouped
        };
        // Each row's input row (its document id), filled per query below.
        let mut doc_ids: Vec<u32> = vec![0; n];
        advise_huge(&doc_ids);
        // Runs: each row's input position within its query (`ties="input"`),
        // only when some query has tied scores (below).
        let mut extra: Vec<u32> = Vec::new();
        // Per query, in parallel: check duplicates and rank (runs).
        let mut tasks: Vec<Task<'_>> = per_query(&offsets, &mut doc_ids)
            .into_iter()
            .zip(per_query(&offsets, &mut values))
            .enumerate()
            .map(|(qi, (ids, vals))| Task {
                q: qi,
                ids,
                vals,
                spans: &spans[span_at[qi]..span_at[qi + 1]],
            })
            .collect();
        let qv = queries.view();
        let dv = docs.view();
        let hasher = DefaultHashBuilder::default();
        let check = |s: &mut Scratch, t: &mut Task<'_>| {
            // Duplicates: sort (hash, row) pairs; equal hashes are compared
            // by bytes, so a hash collision is never mistaken for one.
            // Skipped when the caller vouches for uniqueness (str-keyed
            // dicts), or for one block of rows already checked (TREC files).
            let mut k = 0;
            for &(_, a, b) in t.spans {
                for (id, r) in t.ids[k..].iter_mut().zip(a..b) {
                    *id = r;
                }
                k += (b - a) as usize;
            }
            let mut dup: Option<(u32, usize, u32)> = None;
            if check_duplicates && !(unique_blocks && t.spans.len() == 1) {
                s.hashes.clear();
                s.hashes.extend(
                    t.ids
                        .iter()
                        .map(|&r| (hasher.hash_one(dv.get(r as usize)), r)),
                );
                s.hashes.sort_unstable();
                for (i, a) in s.hashes.iter().enumerate() {
                    let bytes = dv.get(a.1 as usize);
                    let mut same_hash = s.hashes[i + 1..].iter().take_while(|b| b.0 == a.0);
                    if let Some(b) = same_hash.find(|b| dv.get(b.1 as usize) == bytes) {
                        // The listing that repeats an earlier one, first in
                        // input order: the same error whatever the hashes.
                        if dup.map_or(true, |d| b.1 < d.0) {
                            dup = Some((b.1, t.q, a.1));
                        }
                    }
                }
            }
            let mut tied = false;
            if dup.is_none() && kind == Kind::Run {
                // The tie notes of a query read in one block.
                let notes = match t.spans {
                    [(_, a, _)] if ties_known => Some((*a, &disorder[..])),
                    _ => None,
                };
                rank(t, dv, s, notes);
                tied = t.vals.windows(2).any(|w| w[0] == w[1]);
            }
            (dup, tied)
        };
        // The first duplicate by row, and whether any query has tied scores:
        // the same whatever the order the queries are merged in.
        let merge = |(a, ta): Found, (b, tb): Found| {
            let dup = match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            (dup, ta || tb)
        };
        let (dup, tied) = if par {
            tasks
                .par_iter_mut()
                .map_init(Scratch::default, check)
                .reduce(|| (None, false), merge)
        } else {
            let mut s = Scratch::default();
            tasks
                .iter_mut()
                .map(|t| check(&mut s, t))
                .fold((None, false), merge)
        };
        if let Some((row, q, first)) = dup {
            *dup_rows = Some((first as usize, row as usize));
            return Err(Error::DuplicateDocument {
                query: show(qv.get(q)),
                doc: show(dv.get(row as usize)),
            });
        }
        drop(tasks);
        // Input positions only where they can change an order: without tied
        // scores, `ties="input"` ranks as trec_eval does, and an empty
        // `extra` says so (`eval`: "input" ties need one position a row).
        // Why: 4 bytes a row of fresh memory (40 MB for 10M rows) and a pass
        // the common run of distinct scores does not need.
        if tied {
            extra = vec![0; n];
            advise_huge(&extra);
            let place = |(qi, ex): (usize, &mut [u32])| {
                let (a, b) = (offsets[qi] as usize, offsets[qi + 1] as usize);
                let sp = &spans[span_at[qi]..span_at[qi + 1]];
                input_positions(&doc_ids[a..b], sp, ex);
            };
            let parts = per_query(&offsets, &mut extra);
            if par {
                parts.into_par_iter().enumerate().for_each(place);
            } else {
                parts.into_iter().enumerate().for_each(place);
            }
        }
        // Scattered input (on average each query in two blocks or more): rows
        // from a shuffle or an unsorted frame.
        let scattered = spans.len() >= 2 * nq.max(1);
        drop(spans);
        if kind == Kind::Qrels && !groups.is_empty() {
            extra = if in_order {
                groups
            } else {
                let group = |&r: &u32| groups[r as usize];
                if par {
                    doc_ids.par_iter().map(group).collect()
                } else {
                    doc_ids.iter().map(group).collect()
                }
            };
        }
        let (docs, doc_ids) = if scattered {
            relocate(&docs, &doc_ids, par)
        } else {
            (docs, doc_ids)
        };
        Ok(Encoded {
            queries,
            docs,
            offsets,
            doc_ids,
            values,
            extra,
        })
    }
}

/// What [`Builder::finish`] finds in one query (or several, merged): the
/// first duplicate listing (its row, its query, the earlier row), and whether
/// some scores are tied.
type Found = (Option<(u32, usize, u32)>, bool);

/// One query's share of [`Builder::finish`]'s work.
pub(super) struct Task<'a> {
    pub(super) q: usize,
    /// The query's rows: input row (document id) and value of each.
    pub(super) ids: &'a mut [u32],
    pub(super) vals: &'a mut [f64],
    /// The query's blocks (query, first row, end row), in input order.
    pub(super) spans: &'a [(u32, u32, u32)],
}

/// Per-thread scratch space of [`Builder::finish`].
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) hashes: Vec<(u64, u32)>,
    pub(super) perm: Vec<u32>,
    pub(super) ids: Vec<u32>,
    pub(super) vals: Vec<f64>,
}

/// `v` cut into each query's rows, `offsets` holding one more entry than the
/// queries (the rows of query `i`: `offsets[i]..offsets[i + 1]`).
fn per_query<'a, T>(offsets: &[i64], mut v: &'a mut [T]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let (head, tail) = std::mem::take(&mut v).split_at_mut((w[1] - w[0]) as usize);
        out.push(head);
        v = tail;
    }
    out
}

/// `extra[i]` = the input position, within its query, of input row `ids[i]`;
/// `spans` are the query's blocks in input order.  Empty `extra`: nothing.
fn input_positions(ids: &[u32], spans: &[(u32, u32, u32)], extra: &mut [u32]) {
    if extra.is_empty() {
        return;
    }
    if let [(_, a, _)] = spans {
        for (e, &r) in extra.iter_mut().zip(ids) {
            *e = r - a;
        }
        return;
    }
    // Position of each block's first row within the query.
    let mut before = Vec::with_capacity(spans.len());
    let mut pos = 0u32;
    for &(_, a, b) in spans {
        before.push(pos);
        pos += b - a;
    }
    for (e, &r) in extra.iter_mut().zip(ids) {
        let k = spans.partition_point(|s| s.1 <= r).saturating_sub(1);
        *e = before[k] + (r - spans[k].1);
    }
}
