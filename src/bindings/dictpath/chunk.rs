//! A chunk of the run ([`Chunk`]): the entries of whole queries as the walk
//! read them (score as a rank key, judged row, the id's UTF-8 borrowed from
//! the run's key), put in trec_eval's order ([`Chunk::rank`]: score
//! descending, then document id descending by bytes; rows already in that
//! order are not sorted), then scored ([`Chunks::score`]) through
//! `core::eval::score_rows` with the same label vectors as `evaluate`, so the
//! values are bit-identical by construction.
//!
//! A chunk is ranked while the walk that read it holds the GIL and runs no
//! Python code (on the walking thread, or on the pipeline's pool thread
//! while the walk waits for it, GIL held): that is what makes the borrowed
//! bytes sound (see the `Send` of [`Chunk`]).
//!
//! Rejected alternatives: one buffer for the whole run: first-touch page
//! faults where a reused chunk stays in cache; ranking on the pool thread
//! without prefetching the tied ids: each `memcmp` waited for a cache miss;
//! a prefetching pass on the walking thread: no gain, its ids still in
//! cache; chunk sizes of 2^13, 2^14 and 2^16 rows: no better than 2^15.

use super::judge::NONE;
use crate::core::error::Error;
use crate::core::eval::{self, key_score, RankScratch, Ranking};
use crate::core::metrics::MetricSpec;
use rayon::prelude::*;

/// A run entry waiting for its query's ranking: score, judged row, id bytes.
/// The score is kept as [`rank_key`](crate::core::eval::rank_key)
/// (ascending = trec_eval's descending score): a ranking sorts integers, and
/// compares bytes only within ties.
pub(super) type Pending = (u64, u32, *const u8, usize);

/// Queries ahead whose tied ids [`Chunk::rank`] prefetches.
const TIES_AHEAD: usize = 2;

/// Run rows read between two scorings (see [`Chunk`]).
pub(super) const CHUNK_ROWS: usize = 1 << 15;

/// Queries read, to be ranked ([`Chunk::rank`]) while the walk holds the
/// GIL, then scored: only numbers.  Scored every [`CHUNK_ROWS`] rows, so
/// that the buffers are reused while in cache (one buffer for the whole run
/// spent its time in first-touch page faults); 2^15 rows, so that the rows
/// as read (32 bytes each, [`Pending`]) are still in the second-level cache
/// when ranked on the pool thread.
#[derive(Default)]
pub(super) struct Chunk {
    /// Per query: its qrels index and its rows `a..b`.
    pub(super) spans: Vec<(usize, usize, usize)>,
    /// The rows as read, each query's in dict order (see [`Chunk::rank`]).
    pub(super) pending: Vec<Pending>,
    /// Each row's score, rows in trec order.
    pub(super) ranked: Vec<f64>,
    /// Each row's judged row within its query, or `NONE`.
    pub(super) found: Vec<u32>,
}

// SAFETY: the only pointers, in `pending`, borrow the UTF-8 of the keys of
// the run's query dicts; they are read ([`Chunk::rank`]) only while the walk
// that read them holds the GIL and runs no Python code (the walk waits for
// the pool thread, GIL held, before it returns: `walk::walk`), and are
// dropped with the rows once ranked.  Shared (`Sync`) only to be scored,
// after ranking, when `pending` is empty.
unsafe impl Send for Chunk {}
// SAFETY: as for `Send`.
unsafe impl Sync for Chunk {}

impl Chunk {
    pub(super) fn clear(&mut self) {
        self.spans.clear();
        self.pending.clear();
        self.ranked.clear();
        self.found.clear();
    }

    /// Each query's rows in trec_eval's order (scores, then each run of
    /// equal scores by id), into `ranked` and `found`.  Only while the dicts
    /// read are alive and unchanged: see the `Send` above.
    pub(super) fn rank(&mut self, on_pool: bool) {
        // SAFETY: the ids' bytes, borrowed from keys of live dicts (above).
        let bytes = |p: &Pending| unsafe { std::slice::from_raw_parts(p.2, p.3) };
        let by_doc = |a: &Pending, b: &Pending| bytes(b).cmp(bytes(a));
        // `on_pool` (on the pool thread, `walk::walk`): every query's rows
        // by score first; then each run of tied rows in id order, the tied
        // ids of the query `TIES_AHEAD` on prefetched.  Why: there the ids'
        // bytes are cache misses (read by the walk up to a chunk before, on
        // another core), and one `memcmp` after another waited for each.  On
        // the walking thread, right after the walk, the ids are still in
        // cache: there a prefetching pass measured no gain, so each query is
        // ranked in one go.
        let sorted = |rows: &mut [Pending]| {
            if rows.windows(2).any(|w| w[0].0 > w[1].0) {
                rows.sort_unstable_by_key(|p| p.0);
            }
        };
        if on_pool {
            for &(_, a, b) in &self.spans {
                if let Some(rows) = self.pending.get_mut(a..b) {
                    sorted(rows);
                }
            }
        }
        let fetch = |rows: &[Pending]| {
            for w in rows.windows(2) {
                if w[0].0 == w[1].0 {
                    for p in w {
                        crate::core::prefetch(p.2);
                        crate::core::prefetch(p.2.wrapping_add(p.3.saturating_sub(1)));
                    }
                }
            }
        };
        let ahead = if on_pool { TIES_AHEAD } else { 0 };
        for &(_, a, b) in self.spans.iter().take(ahead) {
            fetch(self.pending.get(a..b).unwrap_or(&[]));
        }
        for (k, &(_, a, b)) in self.spans.iter().enumerate() {
            if ahead > 0 {
                if let Some(&(_, a2, b2)) = self.spans.get(k + ahead) {
                    fetch(self.pending.get(a2..b2).unwrap_or(&[]));
                }
            }
            let Some(rows) = self.pending.get_mut(a..b) else {
                continue;
            };
            if !on_pool {
                sorted(rows);
            }
            let mut i = 0;
            while i < rows.len() {
                let e = i + rows[i..].iter().take_while(|p| p.0 == rows[i].0).count();
                let tie = &mut rows[i..e];
                if tie.len() > 1 && tie.windows(2).any(|w| by_doc(&w[0], &w[1]).is_gt()) {
                    tie.sort_unstable_by(by_doc);
                }
                i = e;
            }
        }
        self.ranked
            .extend(self.pending.iter().map(|p| key_score(p.0)));
        self.found.extend(self.pending.iter().map(|p| p.1));
        self.pending.clear();
    }
}

/// What scoring a chunk needs.
pub(super) struct Chunks<'a> {
    pub(super) q: &'a eval::Side<'a>,
    pub(super) specs: &'a [MetricSpec],
    pub(super) opts: &'a eval::Options,
    /// On a pool (else in the calling thread).
    pub(super) parallel: bool,
}

impl Chunks<'_> {
    /// One query of `c` into `out`, as `core::eval` scores it.
    pub(super) fn one(
        &self,
        s: &mut RankScratch,
        c: &Chunk,
        span: (usize, usize, usize),
        out: &mut [f64],
    ) -> Result<(), Error> {
        let (qi, a, b) = span;
        let q = self.q;
        let (Some(&ja), Some(&jb)) = (q.offsets.get(qi), q.offsets.get(qi + 1)) else {
            return Err(Error::InvalidInput(
                "internal: a query is out of range".into(),
            ));
        };
        let found = &c.found[a..b];
        let ranking = Ranking {
            scores: &c.ranked[a..b],
            pos: &[],
            find: |i: usize| found.get(i).filter(|&&j| j != NONE).map(|&j| j as usize),
        };
        let name = || format!("query {:?}", String::from_utf8_lossy(q.queries.get(qi)));
        let jlabels = &q.values[ja as usize..jb as usize];
        eval::score_rows(
            s,
            jlabels,
            &[],
            ranking,
            false,
            &name,
            self.specs,
            self.opts,
            out,
        )?;
        eval::check_finite(q, qi, self.specs, self.opts, out)
    }

    /// Every query of `c`, into `out` (one row of values each).
    pub(super) fn score(&self, c: &Chunk, out: &mut [f64]) -> Result<(), Error> {
        let nm = self.specs.len().max(1);
        if self.parallel {
            out.par_chunks_mut(nm)
                .zip(c.spans.par_iter())
                .try_for_each_init(RankScratch::default, |s, (o, &span)| {
                    self.one(s, c, span, o)
                })
        } else {
            let mut s = RankScratch::default();
            out.chunks_mut(nm)
                .zip(&c.spans)
                .try_for_each(|(o, &span)| self.one(&mut s, c, span, o))
        }
    }
}
