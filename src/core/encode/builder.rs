//! [`Builder`]: rows collected in any order, checked and normalised one at a
//! time (or a block at a time through [`Builder::rows`]).
//!
//! Rows are appended to parallel arrays in input order, never moved here:
//! grouping, ranking and the duplicate check wait for [`Builder::finish`]
//! ([`super::finish`]), which sees all the rows at once.  A run's ties with the
//! row before are noted on the way in (`disorder`), while both ids are in
//! cache, so that ranking rarely reads the ids again.
//!
//! The per-row path ([`Builder::row`], [`Builder::push_row`]) is always inlined
//! into the callers' loops: as a call it spends more on saving and restoring
//! registers than on its work.

use crate::core::error::{show, Error, Result};
use crate::core::vocab::Interner;

use super::arena::push_bytes;
use super::pages::advise_huge;
use super::Kind;

/// Collects rows in any order; `finish` groups, sorts and checks them.
///
/// Rows are kept as parallel arrays in input order (document id bytes in an
/// arena, values) plus the list of *blocks*: maximal runs of consecutive rows
/// of one query.  Input grouped by query (TREC files, dicts) is one block per
/// query, so `finish` never scatters rows; interleaved input just has more
/// blocks.  Memory is the arena plus 16 bytes a row while building, and the
/// final size (arena plus 24 bytes a row) at the peak of `finish`.
pub struct Builder {
    pub(super) kind: Kind,
    round_f32: bool,
    pub(super) queries: Interner,
    /// Each row's document id, in input order (row `r` is `doc_bytes[doc_starts[r]
    /// ..doc_starts[r + 1]]`).
    pub(super) doc_bytes: Vec<u8>,
    pub(super) doc_starts: Vec<i64>,
    pub(super) values: Vec<f64>,
    /// Grouped qrels only: each row's group index within its query.
    pub(super) groups: Vec<u32>,
    /// (query, first row) of each block of consecutive rows of one query.
    pub(super) blocks: Vec<(u32, u32)>,
    pub(super) check_duplicates: bool,
    /// No block holds a document twice: see [`Builder::assume_unique_within_blocks`].
    pub(super) unique_blocks: bool,
    /// Runs: a bit per row (input order), set where the row ties with the
    /// row before it in its block and its document id is the greater (the
    /// two are out of trec order), noted while both ids are in cache.
    pub(super) disorder: Vec<u64>,
    /// Every row came through [`Builder::row`], so `disorder` is complete.
    pub(super) ties_known: bool,
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
    /// [`prefault`](super::prefault) can fault in ahead of the rows.
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

    /// [`Builder::row`] without the grouped-rows check.  Always inlined, as
    /// `row`: LTO does not inline it into the dict walk by itself, and as a call
    /// its register saves and restores cost more than its work.
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
}
