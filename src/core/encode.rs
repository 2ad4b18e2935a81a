//! Building the encoded form of a run or of qrels from (query, doc, value) rows.
//!
//! Layout (the same for both sides, and what Python holds as numpy arrays):
//! `queries` is a vocabulary sorted by bytes, `docs` one in first-seen order;
//! rows of query `i` are `offsets[i]..offsets[i + 1]` of `doc_ids` / `values`.
//! A run's rows are kept in ranking order (score descending, then document id
//! descending by bytes: trec_eval's order), so scoring never sorts; qrels rows are
//! in doc id order, so a lookup is a binary search over integers.
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
use rayon::prelude::*;

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

/// One row while building: (doc id, value, extra).
type Row = (u32, f64, u32);

/// Collects rows in any order; `finish` groups, sorts and checks them.
pub struct Builder {
    kind: Kind,
    round_f32: bool,
    queries: Interner,
    docs: Interner,
    rows_q: Vec<u32>,
    rows_d: Vec<u32>,
    rows_v: Vec<f64>,
    /// Run: input position within the query; grouped qrels: group index.
    rows_x: Vec<u32>,
    /// Run: rows seen so far per (first-seen) query id.
    seen: Vec<u32>,
    grouped: bool,
}

impl Builder {
    /// `round_f32`: store scores rounded to 32-bit floats, so that scores equal
    /// after rounding tie (what pytrec_eval, i.e. trec_eval 9.0.8, does).
    pub fn new(kind: Kind, round_f32: bool) -> Self {
        Builder {
            kind,
            round_f32,
            queries: Interner::new(),
            docs: Interner::new(),
            rows_q: Vec::new(),
            rows_d: Vec::new(),
            rows_v: Vec::new(),
            rows_x: Vec::new(),
            seen: Vec::new(),
            grouped: false,
        }
    }

    pub fn reserve(&mut self, rows: usize) {
        self.rows_q.reserve(rows);
        self.rows_d.reserve(rows);
        self.rows_v.reserve(rows);
        self.rows_x.reserve(rows);
    }

    /// Register a query (it exists even if it gets no rows: an empty ranking).
    pub fn query(&mut self, q: &[u8]) -> Result<u32> {
        self.queries.intern(q)
    }

    /// Add a row for a query id returned by [`Builder::query`].
    pub fn row(&mut self, q: u32, doc: &[u8], value: f64) -> Result<()> {
        let x = match self.kind {
            Kind::Run => {
                let i = q as usize;
                if self.seen.len() <= i {
                    self.seen.resize(i + 1, 0);
                }
                self.seen[i] += 1;
                self.seen[i] - 1
            }
            Kind::Qrels => 0,
        };
        self.push_row(q, doc, value, x)
    }

    /// Add a qrels row that belongs to group `group` (an index local to the
    /// query) of grouped ground truth.  Every row of such qrels must be grouped.
    pub fn grouped_row(&mut self, q: u32, doc: &[u8], label: f64, group: u32) -> Result<()> {
        if self.kind != Kind::Qrels {
            return Err(Error::InvalidInput("only qrels rows can be grouped".into()));
        }
        self.grouped = true;
        self.push_row(q, doc, label, group)
    }

    fn push_row(&mut self, q: u32, doc: &[u8], value: f64, x: u32) -> Result<()> {
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
        let d = self.docs.intern(doc)?;
        self.rows_q.push(q);
        self.rows_d.push(d);
        self.rows_v.push(v);
        self.rows_x.push(x);
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
            docs,
            rows_q,
            rows_d,
            rows_v,
            rows_x,
            grouped,
            ..
        } = self;
        let (queries, qmap) = queries.into_sorted();
        let docs = docs.into_vocab();
        let nq = qmap.len();

        // Counting sort of rows by (renumbered) query.
        let mut offsets = vec![0i64; nq + 1];
        for &q in &rows_q {
            offsets[qmap[q as usize] as usize + 1] += 1;
        }
        for i in 0..nq {
            offsets[i + 1] += offsets[i];
        }
        let mut fill: Vec<i64> = offsets[..nq].to_vec();
        let mut rows: Vec<Row> = vec![(0, 0.0, 0); rows_q.len()];
        for (((&q, &d), &v), &x) in rows_q.iter().zip(&rows_d).zip(&rows_v).zip(&rows_x) {
            let slot = &mut fill[qmap[q as usize] as usize];
            rows[*slot as usize] = (d, v, x);
            *slot += 1;
        }
        drop((rows_q, rows_d, rows_v, rows_x, fill));

        // Per query: order and check duplicates, in parallel.
        let mut chunks: Vec<(usize, &mut [Row])> = Vec::with_capacity(nq);
        let mut rest: &mut [Row] = &mut rows;
        for (qi, w) in offsets.windows(2).enumerate() {
            let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize);
            chunks.push((qi, head));
            rest = tail;
        }
        let qv = queries.view();
        let dv = docs.view();
        chunks.par_iter_mut().try_for_each_init(
            Vec::new,
            |scratch: &mut Vec<u32>, (qi, chunk)| {
                let dup = |d: u32| Error::DuplicateDocument {
                    query: show(qv.get(*qi)),
                    doc: show(dv.get(d as usize)),
                };
                match kind {
                    Kind::Qrels => {
                        chunk.sort_unstable_by_key(|r| r.0);
                        if let Some(w) = chunk.windows(2).find(|w| w[0].0 == w[1].0) {
                            return Err(dup(w[0].0));
                        }
                    }
                    Kind::Run => {
                        scratch.clear();
                        scratch.extend(chunk.iter().map(|r| r.0));
                        scratch.sort_unstable();
                        if let Some(w) = scratch.windows(2).find(|w| w[0] == w[1]) {
                            return Err(dup(w[0]));
                        }
                        // Strings are compared only between documents with equal scores.
                        chunk.sort_unstable_by(|a, b| {
                            b.1.total_cmp(&a.1)
                                .then_with(|| dv.get(b.0 as usize).cmp(dv.get(a.0 as usize)))
                        });
                    }
                }
                Ok(())
            },
        )?;
        drop(chunks);
        let keep_extra = kind == Kind::Run || grouped;
        let mut doc_ids = Vec::with_capacity(rows.len());
        let mut values = Vec::with_capacity(rows.len());
        let mut extra = Vec::with_capacity(if keep_extra { rows.len() } else { 0 });
        for (d, v, x) in rows {
            doc_ids.push(d);
            values.push(v);
            if keep_extra {
                extra.push(x);
            }
        }
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
