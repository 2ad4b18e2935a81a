//! Building the encoded form of a run or of qrels from (query, doc, value) rows.
//!
//! Layout (the same for both sides, and what Python holds as numpy arrays):
//! `queries` is a vocabulary sorted by bytes; rows of query `i` are
//! `offsets[i]..offsets[i + 1]` of `doc_ids` / `values`; `doc_ids[r]` indexes
//! `docs`, an arena holding each row's document id string, in input order.  A
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

use crate::core::error::{show, Error, Result};
use crate::core::vocab::{Interner, OwnedVocab};
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
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Encoded {
    pub queries: OwnedVocab,
    pub docs: OwnedVocab,
    pub offsets: Vec<i64>,
    pub doc_ids: Vec<u32>,
    pub values: Vec<f64>,
    pub extra: Vec<u32>,
}

/// Collects rows in any order; `finish` groups, sorts and checks them.
///
/// Rows are kept as parallel arrays in input order (document id bytes in an
/// arena, values) plus the list of *blocks*: maximal runs of consecutive rows
/// of one query.  Input grouped by query (TREC files, dicts) is one block per
/// query, so `finish` never scatters rows; interleaved input just has more
/// blocks.  Peak memory is the arena plus ~32 bytes a row.
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
        }
    }

    /// Skip the per-query duplicate check: only for callers whose input cannot
    /// hold a document twice for a query (a dict keyed by `str` document ids).
    pub fn assume_unique_docs(&mut self) {
        self.check_duplicates = false;
    }

    pub fn reserve(&mut self, rows: usize) {
        self.doc_starts.reserve(rows);
        self.values.reserve(rows);
    }

    /// Register a query (it exists even if it gets no rows: an empty ranking).
    pub fn query(&mut self, q: &[u8]) -> Result<u32> {
        self.queries.intern(q)
    }

    /// Add a row for a query id returned by [`Builder::query`].
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
        if self.blocks.last().map_or(true, |b| b.0 != q) {
            self.blocks.push((q, r as u32));
        }
        self.doc_bytes.extend_from_slice(doc);
        self.doc_starts.push(self.doc_bytes.len() as i64);
        self.values.push(v);
        Ok(())
    }

    /// Convenience: register the query and add the row.
    pub fn push(&mut self, q: &[u8], doc: &[u8], value: f64) -> Result<()> {
        let q = self.query(q)?;
        self.row(q, doc, value)
    }

    pub fn finish(self) -> Result<Encoded> {
        let Builder {
            kind,
            queries,
            doc_bytes,
            doc_starts,
            values,
            groups,
            blocks,
            check_duplicates,
            ..
        } = self;
        let n = values.len();
        let (queries, qmap) = queries.into_sorted();
        let nq = qmap.len();
        let docs = OwnedVocab {
            bytes: doc_bytes,
            offsets: doc_starts,
        };

        // Blocks in final query order (input order within a query).
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
        spans.sort_unstable();
        let mut offsets = vec![0i64; nq + 1];
        for &(q, a, b) in &spans {
            offsets[q as usize + 1] += (b - a) as i64;
        }
        for i in 0..nq {
            offsets[i + 1] += offsets[i];
        }
        // (input row, position within its query in input order), grouped by query.
        let mut rows: Vec<(u32, u32)> = Vec::with_capacity(n);
        let mut last_q = u32::MAX;
        let mut pos = 0u32;
        for &(q, a, b) in &spans {
            if q != last_q {
                last_q = q;
                pos = 0;
            }
            for r in a..b {
                rows.push((r, pos));
                pos += 1;
            }
        }
        drop(spans);

        // Per query: check duplicates and (runs) sort, in parallel.
        let mut chunks: Vec<(usize, &mut [(u32, u32)])> = Vec::with_capacity(nq);
        let mut rest: &mut [(u32, u32)] = &mut rows;
        for (qi, w) in offsets.windows(2).enumerate() {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            chunks.push((qi, head));
            rest = tail;
        }
        let qv = queries.view();
        let dv = docs.view();
        let hasher = DefaultHashBuilder::default();
        let vals = &values;
        chunks.par_iter_mut().try_for_each_init(
            Vec::new,
            |scratch: &mut Vec<(u64, u32)>, (qi, chunk)| {
                // Duplicates: sort (hash, row) pairs; equal hashes are compared
                // by bytes, so a hash collision is never mistaken for one.
                // Skipped when the caller vouches for uniqueness (str-keyed dicts).
                if check_duplicates {
                    scratch.clear();
                    scratch.extend(
                        chunk
                            .iter()
                            .map(|r| (hasher.hash_one(dv.get(r.0 as usize)), r.0)),
                    );
                    scratch.sort_unstable();
                    for (i, a) in scratch.iter().enumerate() {
                        let bytes = dv.get(a.1 as usize);
                        let mut same_hash = scratch[i + 1..].iter().take_while(|b| b.0 == a.0);
                        if same_hash.any(|b| dv.get(b.1 as usize) == bytes) {
                            return Err(Error::DuplicateDocument {
                                query: show(qv.get(*qi)),
                                doc: show(bytes),
                            });
                        }
                    }
                }
                if kind == Kind::Run {
                    // Score descending, then document id descending by bytes;
                    // strings are compared only between equal scores.  Input that
                    // is already in that order (most run files) is not sorted again.
                    let order = |a: &(u32, u32), b: &(u32, u32)| {
                        let (va, vb) = (vals[a.0 as usize], vals[b.0 as usize]);
                        vb.total_cmp(&va)
                            .then_with(|| dv.get(b.0 as usize).cmp(dv.get(a.0 as usize)))
                    };
                    if chunk.windows(2).any(|w| order(&w[0], &w[1]).is_gt()) {
                        chunk.sort_unstable_by(order);
                    }
                }
                Ok(())
            },
        )?;
        drop(chunks);
        let out_values: Vec<f64> = rows.par_iter().map(|r| values[r.0 as usize]).collect();
        drop(values);
        let extra: Vec<u32> = match kind {
            Kind::Run => rows.par_iter().map(|r| r.1).collect(),
            Kind::Qrels if !groups.is_empty() => {
                rows.par_iter().map(|r| groups[r.0 as usize]).collect()
            }
            Kind::Qrels => Vec::new(),
        };
        let doc_ids: Vec<u32> = rows.into_par_iter().map(|r| r.0).collect();
        Ok(Encoded {
            queries,
            docs,
            offsets,
            doc_ids,
            values: out_values,
            extra,
        })
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
}
