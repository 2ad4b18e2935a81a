//! Building the encoded form of a run or of qrels from (query, doc, value) rows.
//!
//! Layout (the same for both sides, and what Python holds as numpy arrays):
//! `queries` is a vocabulary sorted by bytes; rows of query `i` are
//! `offsets[i]..offsets[i + 1]` of `doc_ids` / `values`; `doc_ids[r]` indexes
//! `docs`, an arena holding each row's document id string, in input order (in
//! row order for scattered input: see `relocate`).  A
//! run's rows are kept in ranking order (score descending, then document id
//! descending by bytes: trec_eval's order), so scoring never sorts; qrels rows
//! keep their input order.
//!
//! Why an arena per row and not a deduplicated document vocabulary: interning
//! 10M run rows with ~2M distinct random ids cost two cache misses a row (hash
//! table, then the string to compare): 4-10 s of a 10M-line load that otherwise
//! parses in ~1 s, and the global join against the qrels cost as much again at
//! every evaluation.  Documents only ever meet within a query, so nothing needs
//! a global id: ties compare the bytes of the tied rows, duplicates are found
//! per query by hash then bytes, and `eval.rs` joins a query's run rows to its
//! judgments through a small per-query hash table.
//!
//! `extra` is one `u32` per row or empty: for a run, each row's position in the
//! input (file or dict order) of its query, which `ties="input"` needs; for
//! grouped qrels, each row's group index within its query (RAG ground truth:
//! a group is one unit of needed information, see `eval.rs`).
//!
//! Why sort once here and not per evaluation: a run is usually scored against
//! several metric sets or qrels; the sort is the costliest per-row step.
//!
//! ## `finish`: time and memory
//!
//! The final arrays are the arena with its `i64` offsets (kept as built), and
//! per row `doc_ids` (4 bytes), `values` (8) and `extra` (4).  `finish` holds
//! no more than that at any time (plus per-query bookkeeping):
//!
//! * values are grouped by query with one block copy, made before `doc_ids`
//!   and `extra` exist, and not at all when the input is already grouped in
//!   query byte order; every later move is within a query, through a small
//!   per-query scratch buffer.  No `(row, position)` vector: `doc_ids` is
//!   filled per query from the blocks, and `extra` (input position) is
//!   computed from a row's block after ranking;
//! * ranking checks each query first: rows already ranked are left alone;
//!   rows ranked by score with ties in another order (common: BM25 ties) only
//!   have their runs of equal scores sorted by document id; else a full sort;
//! * the per-query duplicate check (hash every document, sort the hashes) is
//!   skipped where the caller has checked each block itself
//!   ([`Builder::assume_unique_within_blocks`], the TREC reader): only queries
//!   whose rows came in several blocks are checked.  A duplicate found here is
//!   the listing that repeats an earlier one first in input order.
//!
//! On the 10M-row benchmark run (queries out of byte order, 10% of rows tied):
//! `finish` went from ~1.3 s (hash + sort per query, a `(row, position)`
//! vector, a second values array, a full sort of every query with a tie) to
//! ~0.2 s of CPU, and its peak from the final size + ~160 MB to the final size.
//!
//! Why not permute the values in place (cycle following, one bit a row, no
//! second array): 1.6 s for 10M rows when queries are out of byte order, a
//! cache miss per row; the block copy before the other arrays exist costs the
//! same peak and ~30 ms.

use crate::core::error::{show, Error, Result};
use crate::core::pool;
use crate::core::vocab::{Interner, OwnedVocab, Vocab};
use hashbrown::DefaultHashBuilder;
use rayon::prelude::*;
use std::hash::BuildHasher;

/// Which side the rows describe: decides the row order and the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Values are scores; rows kept in trec_eval ranking order.
    Run,
    /// Values are relevance labels; rows kept in doc id order.
    Qrels,
}

/// The encoded side, owned (moved into numpy without copying by the bindings).
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    pub queries: OwnedVocab,
    pub docs: OwnedVocab,
    pub offsets: Vec<i64>,
    pub doc_ids: Vec<u32>,
    pub values: Vec<f64>,
    pub extra: Vec<u32>,
}

/// No queries and no rows: the same as an empty `Builder`'s `finish`.
impl Default for Encoded {
    fn default() -> Self {
        Encoded {
            queries: OwnedVocab::default(),
            docs: OwnedVocab::default(),
            offsets: vec![0],
            doc_ids: Vec::new(),
            values: Vec::new(),
            extra: Vec::new(),
        }
    }
}

/// Collects rows in any order; `finish` groups, sorts and checks them.
///
/// Rows are kept as parallel arrays in input order (document id bytes in an
/// arena, values) plus the list of *blocks*: maximal runs of consecutive rows
/// of one query.  Input grouped by query (TREC files, dicts) is one block per
/// query, so `finish` never scatters rows; interleaved input just has more
/// blocks.  Memory is the arena plus 16 bytes a row while building, and the
/// final size (arena plus 24 bytes a row) at the peak of `finish`.
pub struct Builder {
    kind: Kind,
    round_f32: bool,
    queries: Interner,
    /// Each row's document id, in input order (row `r` is `doc_bytes[doc_starts[r]
    /// ..doc_starts[r + 1]]`).
    doc_bytes: Vec<u8>,
    doc_starts: Vec<i64>,
    values: Vec<f64>,
    /// Grouped qrels only: each row's group index within its query.
    groups: Vec<u32>,
    /// (query, first row) of each block of consecutive rows of one query.
    blocks: Vec<(u32, u32)>,
    check_duplicates: bool,
    /// No block holds a document twice: see [`Builder::assume_unique_within_blocks`].
    unique_blocks: bool,
    /// Runs: a bit per row (input order), set where the row ties with the
    /// row before it in its block and its document id is the greater (the
    /// two are out of trec order), noted while both ids are in cache.
    disorder: Vec<u64>,
    /// Every row came through [`Builder::row`], so `disorder` is complete.
    ties_known: bool,
}

impl Builder {
    /// `round_f32`: store scores rounded to 32-bit floats, so that scores equal
    /// after rounding tie (what pytrec_eval, i.e. trec_eval 9.0.8, does).
    pub fn new(kind: Kind, round_f32: bool) -> Self {
        Builder {
            kind,
            round_f32,
            queries: Interner::new(),
            doc_bytes: Vec::new(),
            doc_starts: vec![0],
            values: Vec::new(),
            groups: Vec::new(),
            blocks: Vec::new(),
            check_duplicates: true,
            unique_blocks: false,
            disorder: Vec::new(),
            ties_known: true,
        }
    }

    /// Skip the per-query duplicate check: only for callers whose input cannot
    /// hold a document twice for a query (a dict keyed by `str` document ids).
    pub fn assume_unique_docs(&mut self) {
        self.check_duplicates = false;
    }

    /// Check duplicates only for queries whose rows came in more than one
    /// block (maximal run of consecutive rows of one query): for callers that
    /// have checked each block themselves (the TREC reader does, online, to
    /// name the line).
    pub fn assume_unique_within_blocks(&mut self) {
        self.unique_blocks = true;
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The document id of row `row` (in input order; empty if out of range).
    pub fn doc(&self, row: usize) -> &[u8] {
        match (self.doc_starts.get(row), self.doc_starts.get(row + 1)) {
            (Some(&a), Some(&b)) => self.doc_bytes.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    pub fn reserve(&mut self, rows: usize) {
        self.doc_starts.reserve(rows);
        self.values.reserve(rows);
        advise_huge(&self.doc_starts);
        advise_huge(&self.values);
    }

    /// Room for `bytes` more bytes of document ids.
    pub fn reserve_bytes(&mut self, bytes: usize) {
        self.doc_bytes.reserve(bytes);
        advise_huge(&self.doc_bytes);
    }

    /// The room reserved and not yet written in the row buffers (document
    /// id bytes, their offsets, the values), as (address, bytes) each: what
    /// [`prefault`] can fault in ahead of the rows.
    pub fn spare(&self) -> [(usize, usize); 3] {
        fn room<T>(v: &Vec<T>) -> (usize, usize) {
            let size = std::mem::size_of::<T>();
            let start = v.as_ptr() as usize + v.len() * size;
            (start, (v.capacity() - v.len()) * size)
        }
        [
            room(&self.doc_bytes),
            room(&self.doc_starts),
            room(&self.values),
        ]
    }

    /// Queries registered so far.
    pub fn num_queries(&self) -> usize {
        self.queries.len()
    }

    /// Register a query (it exists even if it gets no rows: an empty ranking).
    pub fn query(&mut self, q: &[u8]) -> Result<u32> {
        self.queries.intern(q)
    }

    /// Add a row for a query id returned by [`Builder::query`].
    #[inline(always)]
    pub fn row(&mut self, q: u32, doc: &[u8], value: f64) -> Result<()> {
        if !self.groups.is_empty() {
            return Err(Error::InvalidInput(
                "grouped qrels cannot mix grouped and plain rows".into(),
            ));
        }
        self.push_row(q, doc, value)
    }

    /// Add a qrels row that belongs to group `group` (an index local to the
    /// query) of grouped ground truth.  Every row of such qrels must be grouped.
    pub fn grouped_row(&mut self, q: u32, doc: &[u8], label: f64, group: u32) -> Result<()> {
        if self.kind != Kind::Qrels {
            return Err(Error::InvalidInput("only qrels rows can be grouped".into()));
        }
        if self.groups.len() != self.values.len() {
            return Err(Error::InvalidInput(
                "grouped qrels cannot mix grouped and plain rows".into(),
            ));
        }
        self.push_row(q, doc, label)?;
        self.groups.push(group);
        Ok(())
    }

    /// Add rows of query `q` (an id from [`Builder::query`]) in bulk: row `i`
    /// has document id `docs[bounds[i]..bounds[i + 1]]` and value `values[i]`.
    /// `bounds` has one more entry than `values`, does not decrease and stays
    /// within `docs`.  The same checks and normalisation as [`Builder::row`].
    pub fn rows(&mut self, q: u32, docs: &[u8], bounds: &[u32], values: &[f64]) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidInput(m.to_string()));
        if !self.groups.is_empty() {
            return bad("grouped qrels cannot mix grouped and plain rows");
        }
        if q as usize >= self.queries.len() {
            return bad("unknown query id");
        }
        if bounds.len() != values.len() + 1 {
            return bad("one more document bound than values is needed");
        }
        let n = values.len();
        let (first, last) = (bounds[0] as usize, bounds[n] as usize);
        if last > docs.len() || bounds.windows(2).any(|w| w[1] < w[0]) {
            return bad("document bounds must not decrease and must stay within the bytes");
        }
        if n == 0 {
            return Ok(());
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite {
                query: show(self.queries.get(q)),
                doc: show(&docs[bounds[i] as usize..bounds[i + 1] as usize]),
                what: match self.kind {
                    Kind::Run => "the score",
                    Kind::Qrels => "the label",
                },
            });
        }
        let r = self.values.len();
        if r + n > u32::MAX as usize {
            return bad("more than 4,294,967,294 rows on one side");
        }
        if self.blocks.last().map_or(true, |b| b.0 != q) {
            self.blocks.push((q, r as u32));
        }
        self.ties_known = false;
        let base = self.doc_bytes.len() as i64 - first as i64;
        self.doc_bytes.extend_from_slice(&docs[first..last]);
        self.doc_starts
            .extend(bounds[1..].iter().map(|&b| base + b as i64));
        // As in `push_row`: -0.0 becomes 0.0; f32 rounding for runs.
        if self.round_f32 && self.kind == Kind::Run {
            self.values
                .extend(values.iter().map(|&v| ((v + 0.0) as f32) as f64));
        } else {
            self.values.extend(values.iter().map(|&v| v + 0.0));
        }
        Ok(())
    }

    // Always inlined, as `row`: as a call (LTO did not inline it into the
    // dict walk) it was ~20 instructions a row of `Run(dict)` in saving and
    // restoring registers (callgrind).
    #[inline(always)]
    fn push_row(&mut self, q: u32, doc: &[u8], value: f64) -> Result<()> {
        if !value.is_finite() {
            return Err(Error::NonFinite {
                query: show(self.queries.get(q)),
                doc: show(doc),
                what: match self.kind {
                    Kind::Run => "the score",
                    Kind::Qrels => "the label",
                },
            });
        }
        // -0.0 and 0.0 compare equal in C; make them one value.
        let mut v = value + 0.0;
        if self.round_f32 && self.kind == Kind::Run {
            v = (v as f32) as f64;
        }
        let r = self.values.len();
        if r >= u32::MAX as usize {
            return Err(Error::InvalidInput(
                "more than 4,294,967,294 rows on one side".into(),
            ));
        }
        if r % 64 == 0 {
            self.disorder.push(0);
        }
        match self.blocks.last() {
            Some(b) if b.0 == q => {
                // A tie with the row before: its id is still in cache now,
                // not when `finish` ranks (see `rank`).
                if self.kind == Kind::Run && self.values.last() == Some(&v) {
                    let prev = r
                        .checked_sub(1)
                        .and_then(|p| self.doc_starts.get(p))
                        .and_then(|&a| self.doc_bytes.get(a as usize..));
                    if prev.is_some_and(|prev| doc > prev) {
                        if let Some(w) = self.disorder.get_mut(r / 64) {
                            *w |= 1 << (r % 64);
                        }
                    }
                }
            }
            _ => self.blocks.push((q, r as u32)),
        }
        push_bytes(&mut self.doc_bytes, doc);
        self.doc_starts.push(self.doc_bytes.len() as i64);
        self.values.push(v);
        Ok(())
    }

    /// Convenience: register the query and add the row.
    pub fn push(&mut self, q: &[u8], doc: &[u8], value: f64) -> Result<()> {
        let q = self.query(q)?;
        self.row(q, doc, value)
    }

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
    fn finish_here(self, par: bool, dup_rows: &mut Option<(usize, usize)>) -> Result<Encoded> {
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
        // blocks are already in input order) into the slots `span_at` gives,
        // linear where `sort_unstable` on the triples took ~1 s single-threaded
        // for 10M one-row blocks (scattered input).
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
        // final size.  Tried: `grouped` not zeroed first (a kept block of
        // `crate::memory` is zeroed by a `memset`, ~1.4% of a 10M-entry
        // `Run(dict)`'s samples): no measurable change, 30.0-31.5 against
        // 30.0-34.6 ns an entry (one thread, three alternated processes,
        // 2026-11-27), not worth its `set_len`.
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

/// `v.extend_from_slice(s)`, without a call to `memcpy` for an id of 4 to 32
/// bytes when `v` has room: two overlapping fixed-size moves.  Why: the call
/// (through the PLT, then the CPU dispatch inside `memcpy`) was ~7% of
/// `Run(dict)`'s samples for ids of ~20 bytes.
#[inline]
fn push_bytes(v: &mut Vec<u8>, s: &[u8]) {
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

/// Ask for transparent huge pages on a large buffer not yet written (Linux,
/// where they are on request: `madvise` mode).  Why: the encoded arrays of a
/// 10M-row run are ~450 MB of fresh memory, and with 4 KiB pages writing them
/// first costs ~110k page faults, on a loaded 2-core machine ~3 µs each (memory
/// cgroup accounting): ~0.3 s.  With 2 MiB pages that is a few hundred faults
/// (`Run(dict)`'s system time fell from ~30 to ~13 ns an entry).  Advice only:
/// ignored where huge pages are off, and never needed for correctness.
/// Measured without it (2026-11-27, idle 2-core VM with `defrag` at
/// `madvise`, the 100k x 100 dicts, one thread, six calls a process, two
/// processes each way): 58-82 ns an entry of wall time (system 23-50, user
/// 30-39: the TLB misses of 4 KiB pages), against 116-125 in a process's
/// first call with it (the kernel compacting memory for huge pages) and
/// 33-50 in the later ones.
fn advise_huge<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < 4 * HUGE {
            return;
        }
        let start = v.as_ptr() as usize;
        let (a, b) = (
            (start + HUGE - 1) & !(HUGE - 1),
            (start + bytes) & !(HUGE - 1),
        );
        if b > a {
            // SAFETY: advice on whole pages inside this allocation; it changes
            // no content, and a failure (huge pages unavailable) is harmless.
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Fault in the pages of `ranges` (address, bytes), in steps that advance
/// through all of them at the same pace (the order in which rows fill them),
/// until done or `stop` is set; returns the bytes faulted in.  Why: the first
/// write of each fresh page of the row buffers costs its zeroing by the
/// kernel, ~25% of `Run(dict)`'s time under the GIL (`clear_page_erms`);
/// done on another core while the rows are read, it leaves the critical path.
/// Linux only (`MADV_POPULATE_WRITE`, 5.14+; elsewhere or on an older kernel,
/// nothing).  The advice changes no content: a range freed meanwhile (a
/// buffer that grew) is at worst faulted in for nothing.
pub fn prefault(ranges: &[(usize, usize)], stop: &std::sync::atomic::AtomicBool) -> usize {
    #[cfg(target_os = "linux")]
    {
        use std::sync::atomic::Ordering;
        const PAGE: usize = 4096;
        const STEP: usize = 2 << 20;
        let total: usize = ranges.iter().map(|r| r.1).sum();
        let steps = total.div_ceil(STEP).max(1);
        let mut done = 0;
        for i in 0..steps {
            for &(start, len) in ranges {
                if stop.load(Ordering::Relaxed) {
                    return done;
                }
                // Whole pages of this range's i-th share.
                let a = (start + len * i / steps).next_multiple_of(PAGE);
                let b = ((start + len * (i + 1) / steps) / PAGE) * PAGE;
                if b <= a {
                    continue;
                }
                // SAFETY: advice on whole pages; `MADV_POPULATE_WRITE` faults
                // them in as a write would, without writing: no content
                // changes, whatever the range holds.  A failure (an old
                // kernel, a range unmapped meanwhile) is harmless: stop.
                let r = unsafe {
                    libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_POPULATE_WRITE)
                };
                if r != 0 {
                    return done;
                }
                done += b - a;
            }
        }
        done
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (ranges, stop);
        0
    }
}

/// The arena rewritten in row order (`doc_ids` becomes `0..n`).
///
/// Why: scoring reads each row's document id to join it with the judgments.
/// With the arena in input order, rows that arrived scattered (a shuffled or
/// unsorted frame) put every one of those reads on a different cache line:
/// scoring such a 10M-row run took 1-1.8 s against 0.2-0.4 s for the same
/// rows read from a TREC file.  One parallel copy at load makes the reads
/// sequential; it costs a second arena while it runs, and is skipped for input
/// grouped by query (TREC files, dicts), whose arena is already in order
/// within each query.
fn relocate(docs: &OwnedVocab, doc_ids: &[u32], par: bool) -> (OwnedVocab, Vec<u32>) {
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

/// What [`Builder::finish`] finds in one query (or several, merged): the
/// first duplicate listing (its row, its query, the earlier row), and whether
/// some scores are tied.
type Found = (Option<(u32, usize, u32)>, bool);

/// Rows [`Builder::finish`] takes on the calling thread, in order, without the
/// pool: the pool's hand-over would cost more than their work (a qrels or run
/// of a few queries, built for one call).
pub const SERIAL_ROWS: usize = 4096;

/// One query's share of [`Builder::finish`]'s work.
struct Task<'a> {
    q: usize,
    /// The query's rows: input row (document id) and value of each.
    ids: &'a mut [u32],
    vals: &'a mut [f64],
    /// The query's blocks (query, first row, end row), in input order.
    spans: &'a [(u32, u32, u32)],
}

/// Per-thread scratch space of [`Builder::finish`].
#[derive(Default)]
struct Scratch {
    hashes: Vec<(u64, u32)>,
    perm: Vec<u32>,
    ids: Vec<u32>,
    vals: Vec<f64>,
}

/// Put a query's run rows in ranking order: score descending, then document
/// id descending by bytes (strings compared only between equal scores).  Rows
/// already in that order (most run files) are left as they are; rows ranked by
/// score with ties in another order (also common) only have their ties sorted.
///
/// `notes`: for a query read in one block through [`Builder::row`], the
/// block's first input row and the bits of [`Builder`]'s `disorder` (input
/// rows that tie with the row before and are out of order with it).  With them a run of equal scores is known to
/// be in order, or, for two rows, to need a swap, without reading the ids:
/// by now their bytes are far out of cache, and comparing them was ~9% of
/// `Run(dict)`'s samples.
fn rank(t: &mut Task<'_>, dv: Vocab<'_>, s: &mut Scratch, notes: Option<(u32, &[u64])>) {
    let (ids, vals) = (&mut *t.ids, &mut *t.vals);
    if (1..vals.len()).all(|i| vals[i - 1].total_cmp(&vals[i]).is_ge()) {
        let by_doc = |a: &u32, b: &u32| dv.get(*b as usize).cmp(dv.get(*a as usize));
        // The notes name input rows: row `i` of the query is input row
        // `first + i` here (one block, rows not yet moved).
        let (first, notes) = match notes {
            Some((first, n)) => (first as usize, Some(n)),
            None => (0, None),
        };
        // Whether input row `r` is out of order with the row before it.
        let noted = |n: &[u64], r: usize| n.get(r / 64).is_some_and(|w| w >> (r % 64) & 1 != 0);
        let mut i = 0;
        while i < vals.len() {
            let j = (i + 1..vals.len())
                .find(|&j| vals[j].total_cmp(&vals[i]).is_ne())
                .unwrap_or(vals.len());
            if let (Some(n), true) = (notes, j - i > 1) {
                // The pairs of this run: input rows first + i + 1 .. first + j.
                if !(first + i + 1..first + j).any(|r| noted(n, r)) {
                    i = j;
                    continue;
                }
                if j - i == 2 {
                    ids.swap(i, i + 1);
                    i = j;
                    continue;
                }
            }
            let tie = &mut ids[i..j];
            if tie.windows(2).any(|w| by_doc(&w[0], &w[1]).is_gt()) {
                tie.sort_unstable_by(by_doc);
            }
            i = j;
        }
        return;
    }
    let order = |i: usize, j: usize| {
        vals[j]
            .total_cmp(&vals[i])
            .then_with(|| dv.get(ids[j] as usize).cmp(dv.get(ids[i] as usize)))
    };
    s.perm.clear();
    s.perm.extend(0..ids.len() as u32);
    s.perm
        .sort_unstable_by(|&i, &j| order(i as usize, j as usize));
    s.ids.clear();
    s.ids.extend(s.perm.iter().map(|&i| ids[i as usize]));
    s.vals.clear();
    s.vals.extend(s.perm.iter().map(|&i| vals[i as usize]));
    ids.copy_from_slice(&s.ids);
    vals.copy_from_slice(&s.vals);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &OwnedVocab) -> Vec<String> {
        let view = v.view();
        (0..view.len()).map(|i| show(view.get(i))).collect()
    }

    #[test]
    fn default_is_the_empty_encoding() {
        for kind in [Kind::Run, Kind::Qrels] {
            let empty = Builder::new(kind, false).finish().unwrap();
            assert_eq!(Encoded::default(), empty);
        }
        let e = Encoded::default();
        assert_eq!((e.queries.view().len(), e.docs.view().len()), (0, 0));
    }

    #[test]
    fn run_rows_in_trec_order() {
        let mut b = Builder::new(Kind::Run, false);
        b.push(b"q2", b"a", 1.0).unwrap();
        b.push(b"q1", b"d1", 0.5).unwrap();
        b.push(b"q1", b"d3", 0.5).unwrap();
        b.push(b"q1", b"d2", 0.9).unwrap();
        b.push(b"q1", b"D9", 0.5).unwrap();
        let e = b.finish().unwrap();
        assert_eq!(strings(&e.queries), vec!["q1", "q2"]);
        assert_eq!(e.offsets, vec![0, 4, 5]);
        let docs = strings(&e.docs);
        let ranked: Vec<&str> = e.doc_ids[..4]
            .iter()
            .map(|&d| docs[d as usize].as_str())
            .collect();
        // 0.9 first; ties at 0.5 by doc id descending in byte order ("D9" < "d1").
        assert_eq!(ranked, vec!["d2", "d3", "d1", "D9"]);
        assert_eq!(e.values[..4], [0.9, 0.5, 0.5, 0.5]);
        // input positions within the query: d1 0, d3 1, d2 2, D9 3
        assert_eq!(e.extra[..4], [2, 1, 0, 3]);
        assert_eq!(e.extra[4], 0);
    }

    /// A run's input positions (`extra`) are kept only when some query has
    /// tied scores, and then for every row; without ties `ties="input"`
    /// needs none (trec order is input order within each equal score).
    #[test]
    fn input_positions_only_with_tied_scores() {
        let finish = |rows: &[(&str, &str, f64)]| {
            let mut b = Builder::new(Kind::Run, false);
            for &(q, d, s) in rows {
                b.push(q.as_bytes(), d.as_bytes(), s).unwrap();
            }
            b.finish().unwrap()
        };
        let e = finish(&[
            ("q1", "a", 1.0),
            ("q1", "b", 3.0),
            ("q2", "c", 2.0),
            ("q1", "c", 2.0),
        ]);
        assert!(e.extra.is_empty());
        let e = finish(&[
            ("q1", "a", 1.0),
            ("q1", "b", 3.0),
            ("q2", "c", 2.0),
            ("q2", "d", 2.0),
        ]);
        // q1: b (input 1), a (input 0); q2: d (input 1) before c (input 0).
        assert_eq!(e.extra, vec![1, 0, 1, 0]);
        // -0.0 and 0.0 tie.
        assert_eq!(finish(&[("q", "a", 0.0), ("q", "b", -0.0)]).extra.len(), 2);
    }

    #[test]
    fn grouped_qrels_keep_groups() {
        let mut b = Builder::new(Kind::Qrels, false);
        let q = b.query(b"q").unwrap();
        b.grouped_row(q, b"c", 1.0, 1).unwrap();
        b.grouped_row(q, b"a", 1.0, 0).unwrap();
        b.grouped_row(q, b"b", 1.0, 0).unwrap();
        let e = b.finish().unwrap();
        // rows in doc id (first-seen) order: c, a, b
        assert_eq!(strings(&e.docs), vec!["c", "a", "b"]);
        assert_eq!(e.extra, vec![1, 0, 0]);
        let plain = Builder::new(Kind::Qrels, false).finish().unwrap();
        assert!(plain.extra.is_empty());
        // Queries out of order: the groups move with their rows.
        let mut b = Builder::new(Kind::Qrels, false);
        let (q, r) = (b.query(b"r").unwrap(), b.query(b"q").unwrap());
        b.grouped_row(q, b"x", 1.0, 5).unwrap();
        b.grouped_row(r, b"y", 2.0, 7).unwrap();
        b.grouped_row(q, b"z", 3.0, 6).unwrap();
        let e = b.finish().unwrap();
        assert_eq!(
            (e.doc_ids, e.values, e.extra),
            (vec![1, 0, 2], vec![2.0, 1.0, 3.0], vec![7, 5, 6])
        );
    }

    #[test]
    fn qrels_rows_by_doc_and_empty_query() {
        let mut b = Builder::new(Kind::Qrels, false);
        let q = b.query(b"q0").unwrap();
        let _ = q;
        b.push(b"q1", b"b", 2.0).unwrap();
        b.push(b"q1", b"a", 0.0).unwrap();
        let e = b.finish().unwrap();
        assert_eq!(e.offsets, vec![0, 0, 2]);
        // Doc ids in first-seen order; rows sorted by doc id.
        assert_eq!(strings(&e.docs), vec!["b", "a"]);
        assert_eq!(e.doc_ids, vec![0, 1]);
        assert_eq!(e.values, vec![2.0, 0.0]);
    }

    #[test]
    fn rejects_duplicates_and_nan() {
        let mut b = Builder::new(Kind::Run, false);
        b.push(b"q", b"d", 1.0).unwrap();
        b.push(b"q", b"d", 2.0).unwrap();
        assert_eq!(
            b.finish(),
            Err(Error::DuplicateDocument {
                query: "q".into(),
                doc: "d".into()
            })
        );
        let mut b = Builder::new(Kind::Qrels, false);
        assert!(matches!(
            b.push(b"q", b"d", f64::NAN),
            Err(Error::NonFinite { .. })
        ));
        assert!(matches!(
            b.push(b"q", b"d", f64::INFINITY),
            Err(Error::NonFinite { .. })
        ));
    }

    #[test]
    fn f32_rounding_creates_ties() {
        let mut b = Builder::new(Kind::Run, true);
        b.push(b"q", b"a", 1.0000000001).unwrap();
        b.push(b"q", b"b", 1.0).unwrap();
        let e = b.finish().unwrap();
        // Equal after rounding: tie broken by doc id descending.
        assert_eq!(e.doc_ids, vec![1, 0]);
    }

    /// Per query: (input row, document, value, extra) of each stored row.
    type Flat = Vec<(String, Vec<(u32, String, f64, u32)>)>;
    /// [`Flat`] without the stored arena index.
    type Rows = Vec<(String, Vec<(String, f64, u32)>)>;

    /// `finish` the slow, obvious way: group by query (sorted by bytes), keep
    /// input order, then (runs) a stable sort by score then document id,
    /// both descending; extra = input position within the query when some
    /// query has tied scores, else `u32::MAX` (none kept).
    fn reference(kind: Kind, rows: &[(String, String, f64)]) -> Flat {
        let mut qs: Vec<&String> = rows.iter().map(|r| &r.0).collect();
        qs.sort();
        qs.dedup();
        let mut flat: Flat = qs
            .iter()
            .map(|&q| {
                let mut v: Vec<(u32, String, f64, u32)> = rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| &r.0 == q)
                    .enumerate()
                    .map(|(pos, (i, r))| (i as u32, r.1.clone(), r.2 + 0.0, pos as u32))
                    .collect();
                if kind == Kind::Run {
                    v.sort_by(|a, b| {
                        b.2.total_cmp(&a.2)
                            .then_with(|| b.1.as_bytes().cmp(a.1.as_bytes()))
                    });
                }
                (q.clone(), v)
            })
            .collect();
        let tied = flat
            .iter()
            .any(|(_, v)| v.windows(2).any(|w| w[0].2 == w[1].2));
        if !tied {
            for r in flat.iter_mut().flat_map(|(_, v)| v.iter_mut()) {
                r.3 = u32::MAX;
            }
        }
        flat
    }

    fn flatten(kind: Kind, e: &Encoded) -> Flat {
        let (qv, dv) = (e.queries.view(), e.docs.view());
        (0..qv.len())
            .map(|q| {
                let (a, b) = (e.offsets[q] as usize, e.offsets[q + 1] as usize);
                let v = (a..b)
                    .map(|i| {
                        let ex = if kind == Kind::Run && !e.extra.is_empty() {
                            e.extra[i]
                        } else {
                            u32::MAX
                        };
                        (
                            e.doc_ids[i],
                            show(dv.get(e.doc_ids[i] as usize)),
                            e.values[i],
                            ex,
                        )
                    })
                    .collect();
                (show(qv.get(q)), v)
            })
            .collect()
    }

    fn check_against_reference(kind: Kind, rows: &[(String, String, f64)]) {
        let mut want = reference(kind, rows);
        if kind == Kind::Qrels {
            for (_, v) in want.iter_mut() {
                for r in v.iter_mut() {
                    r.3 = u32::MAX;
                }
            }
        }
        // Row by row, and in bulk (runs of consecutive rows of one query).
        let mut b = Builder::new(kind, false);
        for (q, d, v) in rows {
            b.push(q.as_bytes(), d.as_bytes(), *v).unwrap();
        }
        let one = b.finish().unwrap();
        // The pool's steps (`par`) and the calling thread's: the same result.
        let mut b = Builder::new(kind, false);
        for (q, d, v) in rows {
            b.push(q.as_bytes(), d.as_bytes(), *v).unwrap();
        }
        let on_pool = pool::install(|| b.finish_here(true, &mut None)).unwrap();
        assert_eq!(on_pool.unwrap(), one);
        // The stored document id (arena index) is the input row, except for
        // scattered input, whose arena `relocate` rewrote in row order: compare
        // the documents' bytes (and, for runs, the input positions in `extra`).
        let strip = |f: Flat| -> Rows {
            f.into_iter()
                .map(|(q, v)| (q, v.into_iter().map(|r| (r.1, r.2, r.3)).collect()))
                .collect()
        };
        assert_eq!(strip(flatten(kind, &one)), strip(want.clone()));
        let mut b = Builder::new(kind, false);
        b.assume_unique_within_blocks();
        let mut i = 0;
        while i < rows.len() {
            let j = (i..rows.len())
                .find(|&j| rows[j].0 != rows[i].0)
                .unwrap_or(rows.len());
            let mut docs = b"junk".to_vec();
            let mut bounds = vec![docs.len() as u32];
            for r in &rows[i..j] {
                docs.extend_from_slice(r.1.as_bytes());
                bounds.push(docs.len() as u32);
            }
            let values: Vec<f64> = rows[i..j].iter().map(|r| r.2).collect();
            let q = b.query(rows[i].0.as_bytes()).unwrap();
            b.rows(q, &docs, &bounds, &values).unwrap();
            i = j;
        }
        assert_eq!(b.finish().unwrap(), one);
    }

    #[test]
    fn scattered_input_gets_an_arena_in_row_order() {
        let mut b = Builder::new(Kind::Run, false);
        for i in 0..40u32 {
            let d = format!("d{i}");
            b.push(
                format!("q{}", i % 4).as_bytes(),
                d.as_bytes(),
                f64::from(i % 3),
            )
            .unwrap();
        }
        let e = b.finish().unwrap();
        assert_eq!(e.doc_ids, (0..40).collect::<Vec<u32>>());
        // Grouped input keeps its arena in input order (no copy).
        let mut b = Builder::new(Kind::Run, false);
        for d in ["a", "b"] {
            b.push(b"q", d.as_bytes(), 1.0).unwrap();
        }
        let e = b.finish().unwrap();
        assert_eq!(e.doc_ids, vec![1, 0]); // "b" (row 1) ranks before "a"
        assert_eq!(strings(&e.docs), vec!["a", "b"]);
    }

    #[test]
    fn finish_paths_match_the_reference() {
        let r = |q: &str, d: &str, v: f64| (q.to_string(), d.to_string(), v);
        for kind in [Kind::Run, Kind::Qrels] {
            // Sorted by query, ranked: nothing moves.
            check_against_reference(
                kind,
                &[r("a", "x", 3.0), r("a", "y", 2.0), r("b", "x", 1.0)],
            );
            // Sorted by query, a tie and an unranked query: moves within queries.
            check_against_reference(
                kind,
                &[
                    r("a", "x", 1.0),
                    r("a", "z", 1.0),
                    r("a", "y", 2.0),
                    r("b", "x", -0.0),
                    r("b", "w", 5.0),
                ],
            );
            // Rows already in ranking order (`rank` checks and leaves them;
            // ties by document id descending, "ab" > "a"), and near misses: a
            // tie in the wrong order, a score rising, a query in two blocks.
            check_against_reference(
                kind,
                &[
                    r("a", "z", 2.0),
                    r("a", "ab", 2.0),
                    r("a", "a", 2.0),
                    r("a", "x", 1.0),
                    r("b", "a", 1.0),
                    r("b", "ab", 1.0),
                    r("c", "x", 1.0),
                    r("c", "y", 3.0),
                    r("d", "y", 3.0),
                    r("e", "x", 1.0),
                    r("d", "x", 2.0),
                ],
            );
            // Queries out of byte order ("10" < "9"), and interleaved blocks.
            check_against_reference(
                kind,
                &[
                    r("9", "a", 1.0),
                    r("9", "b", 2.0),
                    r("10", "c", 0.5),
                    r("9", "c", 3.0),
                    r("10", "a", 0.7),
                    r("11", "q", 0.0),
                ],
            );
            // Scattered (every row its own block): the arena is relocated.
            let scattered: Vec<_> = (0..60)
                .map(|i| {
                    r(
                        &format!("q{}", i % 7),
                        &format!("d{}", i / 7),
                        (i % 5) as f64,
                    )
                })
                .collect();
            check_against_reference(kind, &scattered);
            check_against_reference(kind, &[]);
        }
    }

    #[test]
    fn past_serial_rows_both_ways_give_the_same_encoding() {
        // More rows than `SERIAL_ROWS`, scattered, with ties: `finish` takes the
        // pool; the calling thread's steps give the same encoding, and the same
        // first duplicate when two are listed.
        let build = |dups: bool| {
            let mut b = Builder::new(Kind::Run, false);
            let n = SERIAL_ROWS as u32 + 900;
            for i in 0..n {
                let d = format!("d{}", i / 13);
                b.push(
                    format!("q{}", i % 13).as_bytes(),
                    d.as_bytes(),
                    f64::from(i % 7),
                )
                .unwrap();
            }
            if dups {
                b.push(b"q5", b"d7", 1.0).unwrap();
                b.push(b"q2", b"d3", 1.0).unwrap();
            }
            b
        };
        for dups in [false, true] {
            let mut rows = (None, None);
            let (par, r) = build(dups).finish_locating();
            rows.0 = r;
            let here = build(dups).finish_here(false, &mut rows.1);
            assert_eq!(par, here);
            assert_eq!(rows.0, rows.1);
            assert_eq!(par.is_err(), dups);
        }
    }

    #[test]
    fn push_bytes_appends_every_length() {
        for cap in [0usize, 5, 64] {
            for n in 0..=40usize {
                let s: Vec<u8> = (0..n as u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
                let mut v = Vec::with_capacity(cap);
                v.extend_from_slice(b"ab");
                push_bytes(&mut v, &s);
                push_bytes(&mut v, &s);
                let mut want = b"ab".to_vec();
                want.extend_from_slice(&s);
                want.extend_from_slice(&s);
                assert_eq!(v, want, "n = {n}, capacity {cap}");
            }
        }
    }

    #[test]
    fn bulk_rows_checks() {
        let mut b = Builder::new(Kind::Run, true);
        let q = b.query(b"q").unwrap();
        // Bounds: one more than values, not decreasing, within the bytes.
        assert!(b.rows(q, b"ab", &[0, 1], &[1.0, 2.0]).is_err());
        assert!(b.rows(q, b"ab", &[0, 2, 1], &[1.0, 2.0]).is_err());
        assert!(b.rows(q, b"ab", &[0, 3], &[1.0]).is_err());
        assert!(b.rows(7, b"ab", &[0, 1], &[1.0]).is_err());
        assert!(matches!(
            b.rows(q, b"ab", &[0, 1, 2], &[1.0, f64::NAN]),
            Err(Error::NonFinite { ref doc, .. }) if doc == "b"
        ));
        b.rows(q, b"ab", &[0, 1, 2], &[1.0000000001, -0.0]).unwrap();
        assert_eq!((b.len(), b.doc(1), b.doc(2)), (2, &b"b"[..], &b""[..]));
        let e = b.finish().unwrap();
        // f32 rounding and -0.0 -> 0.0, as row by row.
        assert_eq!(e.values, vec![1.0, 0.0]);
        assert!(e.values[1].is_sign_positive());
    }

    #[test]
    fn unique_blocks_still_checks_split_queries() {
        let mut b = Builder::new(Kind::Run, false);
        b.assume_unique_within_blocks();
        b.push(b"q", b"d", 1.0).unwrap();
        b.push(b"r", b"d", 1.0).unwrap();
        b.push(b"q", b"d", 2.0).unwrap();
        assert!(matches!(b.finish(), Err(Error::DuplicateDocument { .. })));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        #[test]
        fn finish_matches_the_reference(
            picks in proptest::collection::vec((0u8..4, 0u8..12, 0u8..4), 0..60),
            qrels in proptest::bool::ANY,
            distinct in proptest::bool::ANY,
        ) {
            // Distinct (query, doc) pairs; few distinct values: ties (or,
            // `distinct`, every value apart: no input positions kept).
            let mut seen = std::collections::HashSet::new();
            let rows: Vec<(String, String, f64)> = picks
                .into_iter()
                .filter(|&(q, d, _)| seen.insert((q, d)))
                .enumerate()
                .map(|(i, (q, d, v))| {
                    let v = if distinct { i as f64 * 0.75 - 3.0 } else { v as f64 - 1.0 };
                    (format!("{}", [9, 10, 2, 100][q as usize]), format!("d{d}"), v)
                })
                .collect();
            let kind = if qrels { Kind::Qrels } else { Kind::Run };
            check_against_reference(kind, &rows);
            // The same rows in ranking order within each query (`rank`'s
            // check, no sort), and with one query's rows moved last.
            let mut ranked = rows.clone();
            ranked.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then(b.2.total_cmp(&a.2))
                    .then(b.1.as_bytes().cmp(a.1.as_bytes()))
            });
            check_against_reference(kind, &ranked);
            // Ranked by score with ties in input order (`rank` then reads
            // the tie notes of `Builder::row`: in order, a swap, or a sort).
            let mut by_score = rows.clone();
            by_score.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.total_cmp(&a.2)));
            check_against_reference(kind, &by_score);
            if let Some(first) = ranked.first().map(|r| r.0.clone()) {
                ranked.sort_by_key(|r| r.0 == first);
                check_against_reference(kind, &ranked);
            }
        }
    }
}
