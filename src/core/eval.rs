//! Scoring a run against qrels.
//!
//! Queries: every qrels query is scored, in the qrels' (byte) order; one missing
//! from the run is scored on an empty ranking (trec_eval `-c`).  Run-only
//! queries are reported, not scored.
//!
//! Per query the relevance vector (label at each rank) is built once and every
//! requested metric and cutoff reads it.  Documents are joined by merging the
//! two sorted doc vocabularies once (`vocab::align`); because both are in byte
//! order, a query's judged documents, mapped to run ids, stay sorted, and each
//! ranked document's label is a binary search over a handful of integers.
//!
//! Why rayon over queries and not over metrics: queries are independent and
//! many; metrics of one query share the relevance vector, which stays in L1.

use crate::core::error::{Error, Result};
use crate::core::metrics::{MetricSpec, Query};
use crate::core::vocab::{align, Vocab, NONE};
use rayon::prelude::*;

/// One encoded side (run or qrels), borrowed: see `encode.rs` for the layout.
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    pub queries: Vocab<'a>,
    pub docs: Vocab<'a>,
    pub offsets: &'a [i64],
    pub doc_ids: &'a [u32],
    pub values: &'a [f64],
}

impl<'a> Side<'a> {
    /// Check the layout so that no index can go out of bounds later.
    pub fn new(
        queries: Vocab<'a>,
        docs: Vocab<'a>,
        offsets: &'a [i64],
        doc_ids: &'a [u32],
        values: &'a [f64],
    ) -> Result<Self> {
        let bad = |m: &str| {
            Err(Error::InvalidInput(format!(
                "inconsistent encoded arrays: {m}"
            )))
        };
        if offsets.len() != queries.len() + 1 {
            return bad("offsets must have one entry per query plus one");
        }
        if offsets[0] != 0 || offsets.windows(2).any(|w| w[1] < w[0]) {
            return bad("offsets must start at 0 and not decrease");
        }
        let n = offsets[offsets.len() - 1];
        if n as u64 != doc_ids.len() as u64 || doc_ids.len() != values.len() {
            return bad("offsets must end at the number of rows of doc_ids and values");
        }
        if doc_ids.iter().any(|&d| d as usize >= docs.len()) {
            return bad("a doc id is outside the doc vocabulary");
        }
        Ok(Side {
            queries,
            docs,
            offsets,
            doc_ids,
            values,
        })
    }

    pub fn num_queries(&self) -> usize {
        self.queries.len()
    }

    fn rows(&self, q: usize) -> (&'a [u32], &'a [f64]) {
        let (a, b) = (self.offsets[q] as usize, self.offsets[q + 1] as usize);
        (&self.doc_ids[a..b], &self.values[a..b])
    }
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Row-major `num_qrels_queries x num_metrics`.
    pub values: Vec<f64>,
    /// For each qrels query, its index in the run, or -1 when missing there.
    pub run_index: Vec<i64>,
    /// Indices of run queries that are not in the qrels (ignored).
    pub run_only: Vec<i64>,
}

/// How a query's ranking is read (trec_eval's `-l`, `-J`, `-M`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Default relevance level: a label `>= level` is relevant.
    pub level: f64,
    /// Drop retrieved documents that are not judged (not in the qrels, or with a
    /// negative label) before scoring, ranks closing up (trec_eval `-J`).
    pub judged_only: bool,
    /// Score only the first `max_docs` documents of each ranking (trec_eval `-M`).
    pub max_docs: Option<usize>,
}

impl Options {
    pub fn new(level: f64) -> Self {
        Options {
            level,
            judged_only: false,
            max_docs: None,
        }
    }
}

/// Per-thread scratch buffers, reused across queries.
#[derive(Default)]
struct Scratch {
    judged: Vec<(u32, f64)>,
    ranked: Vec<f64>,
    ideal: Vec<f64>,
}

/// Score every qrels query on every metric.
pub fn evaluate(
    qrels: &Side<'_>,
    run: &Side<'_>,
    metrics: &[MetricSpec],
    opts: &Options,
) -> Result<Evaluation> {
    let level = opts.level;
    if metrics.is_empty() {
        return Err(Error::InvalidMetric("the metric list is empty".into()));
    }
    if opts.max_docs == Some(0) {
        return Err(Error::InvalidInput("max_docs must be at least 1".into()));
    }
    if !level.is_finite() {
        return Err(Error::InvalidInput("relevance_level must be finite".into()));
    }
    let qmap = align(qrels.queries, run.queries);
    let dmap = align(qrels.docs, run.docs);
    let mut in_qrels = vec![false; run.num_queries()];
    for &r in &qmap {
        if r != NONE {
            in_qrels[r as usize] = true;
        }
    }
    let run_only = (0..run.num_queries())
        .filter(|&i| !in_qrels[i])
        .map(|i| i as i64)
        .collect();
    let run_index = qmap
        .iter()
        .map(|&r| if r == NONE { -1 } else { r as i64 })
        .collect();

    let nm = metrics.len();
    let mut values = vec![0.0; qrels.num_queries() * nm];
    values
        .par_chunks_mut(nm)
        .enumerate()
        .for_each_init(Scratch::default, |s, (qi, out)| {
            let (jdocs, jlabels) = qrels.rows(qi);
            s.judged.clear();
            for (&d, &l) in jdocs.iter().zip(jlabels) {
                let r = dmap[d as usize];
                if r != NONE {
                    s.judged.push((r, l));
                }
            }
            s.ideal.clear();
            s.ideal.extend(jlabels.iter().copied().filter(|&l| l > 0.0));
            s.ideal.sort_unstable_by(|a, b| b.total_cmp(a));
            s.ranked.clear();
            if qmap[qi] != NONE {
                let (mut rdocs, _) = run.rows(qmap[qi] as usize);
                if let Some(m) = opts.max_docs {
                    rdocs = &rdocs[..m.min(rdocs.len())];
                }
                let judged = &s.judged;
                let labels = rdocs
                    .iter()
                    .map(|d| match judged.binary_search_by_key(d, |e| e.0) {
                        Ok(i) => judged[i].1,
                        Err(_) => f64::NAN,
                    });
                if opts.judged_only {
                    // NaN (not in the qrels) fails the comparison too.
                    s.ranked.extend(labels.filter(|&l| l >= 0.0));
                } else {
                    s.ranked.extend(labels);
                }
            }
            let q = Query {
                ranked: &s.ranked,
                judged: jlabels,
                ideal: &s.ideal,
            };
            for (o, m) in out.iter_mut().zip(metrics) {
                *o = m.compute(&q, level);
            }
        });
    Ok(Evaluation {
        values,
        run_index,
        run_only,
    })
}

/// Run `f` on `threads` threads (`None`: the `RANKLENS_NUM_THREADS`
/// environment variable if set, else rayon's global pool, one per core).
pub fn with_threads<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> Result<R> {
    let n = match threads {
        Some(n) => Some(n),
        None => match std::env::var("RANKLENS_NUM_THREADS") {
            Ok(v) if !v.trim().is_empty() => Some(v.trim().parse::<usize>().map_err(|_| {
                Error::InvalidInput(format!(
                    "RANKLENS_NUM_THREADS must be a positive integer, got {v:?}"
                ))
            })?),
            _ => None,
        },
    };
    match n {
        Some(0) => Err(Error::InvalidInput("threads must be at least 1".into())),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| Error::InvalidInput(format!("cannot start {n} threads: {e}")))?;
            Ok(pool.install(f))
        }
        None => Ok(f()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::encode::{Builder, Encoded, Kind};

    fn side(e: &Encoded) -> Side<'_> {
        Side::new(
            e.queries.view(),
            e.docs.view(),
            &e.offsets,
            &e.doc_ids,
            &e.values,
        )
        .unwrap()
    }

    fn spec(name: &str, k: Option<usize>) -> MetricSpec {
        MetricSpec::new(name, k, None, &[]).unwrap()
    }

    #[test]
    fn missing_and_run_only_queries() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q1", b"a", 1.0).unwrap();
        qb.push(b"q1", b"b", 0.0).unwrap();
        qb.push(b"q2", b"c", 2.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        rb.push(b"q1", b"b", 2.0).unwrap();
        rb.push(b"q1", b"a", 1.0).unwrap();
        rb.push(b"q1", b"z", 1.0).unwrap();
        rb.push(b"q3", b"a", 1.0).unwrap();
        let r = rb.finish().unwrap();
        let metrics = [
            spec("precision", Some(2)),
            spec("mrr", None),
            spec("num_rel", None),
            spec("num_ret", None),
        ];
        let e = evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).unwrap();
        // q1 ranking: b (2.0), z (1.0, "z" > "a"), a -> relevant at rank 3
        assert_eq!(e.values[..4], [0.0, 1.0 / 3.0, 1.0, 3.0]);
        // q2 missing from run: empty ranking, but num_rel still counts.
        assert_eq!(e.values[4..], [0.0, 0.0, 1.0, 0.0]);
        assert_eq!(e.run_index, vec![0, -1]);
        assert_eq!(e.run_only, vec![1]);
    }

    #[test]
    fn judged_only_and_max_docs() {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q", b"a", 1.0).unwrap();
        qb.push(b"q", b"n", -1.0).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        for (d, s) in [("x", 4.0), ("n", 3.0), ("a", 2.0), ("y", 1.0)] {
            rb.push(b"q", d.as_bytes(), s).unwrap();
        }
        let r = rb.finish().unwrap();
        let metrics = [spec("mrr", None), spec("num_ret", None)];
        let mut opts = Options::new(1.0);
        let plain = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(plain.values, vec![1.0 / 3.0, 4.0]);
        opts.judged_only = true;
        let judged = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(judged.values, vec![1.0, 1.0]);
        opts.judged_only = false;
        opts.max_docs = Some(2);
        let cut = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
        assert_eq!(cut.values, vec![0.0, 2.0]);
    }

    #[test]
    fn empty_metric_list_is_an_error() {
        let q = Builder::new(Kind::Qrels, false).finish().unwrap();
        let r = Builder::new(Kind::Run, false).finish().unwrap();
        assert!(evaluate(&side(&q), &side(&r), &[], &Options::new(1.0)).is_err());
    }

    #[test]
    fn side_rejects_bad_layout() {
        let e = Encoded::default();
        let v = crate::core::vocab::OwnedVocab {
            bytes: vec![],
            offsets: vec![0],
        };
        assert!(Side::new(v.view(), v.view(), &[0, 1], &e.doc_ids, &e.values).is_err());
        assert!(Side::new(v.view(), v.view(), &[0], &[3], &[1.0]).is_err());
    }

    #[test]
    fn thread_counts() {
        assert_eq!(
            with_threads(Some(2), rayon::current_num_threads).unwrap(),
            2
        );
        assert!(with_threads(Some(0), || 0).is_err());
    }
}
