//! Scoring a run file larger than memory: chunk by chunk, in bounded memory.
//!
//! The run file is read with [`trec::for_each_run_chunk`]: rows are collected
//! until at least `chunk_rows` are held and a new query starts; that chunk (whole
//! queries only) is encoded exactly as [`trec::read_trec`] would encode those
//! queries, scored against the whole qrels with [`eval::evaluate_pairs`] (just
//! the chunk's queries, in parallel, found in the qrels by binary search), its
//! values written into the one result matrix, and its rows freed.  The file
//! is parsed in parallel blocks, and a chunk is scored (on the same rayon
//! pool) while the next blocks are parsed: the callback runs in the reader's
//! merging step (`trec/merge.rs`).  Why not
//! `evaluate_into` per chunk: it aligns the whole qrels vocabulary and scans
//! every qrels label each time, so a run of many chunks spends more time on
//! the qrels than on the run.  Qrels queries never
//! seen in the run are scored at the end on an empty ranking, as [`eval::evaluate`]
//! does (trec_eval `-c`).
//!
//! Why the numbers are identical to reading the file whole: every metric is a
//! function of one query's ranking and judgments, plus one qrels-wide value (the
//! automatic `gmax` of err, the qrels' largest label), and the qrels are whole.
//! A query's rows must therefore all be in one chunk: a run file whose query
//! blocks are not contiguous is an error naming the query and line, never a
//! partial ranking.
//!
//! Memory: the qrels, one chunk (about `chunk_rows` x (document id length + ~40
//! bytes) while it is encoded, plus the rest of its last query), the result
//! matrix (qrels queries x metrics x 8 bytes) and the ids of the queries seen
//! so far (to detect a query that comes back).

use crate::core::encode::{Builder, Kind};
use crate::core::error::{Error, Result};
use crate::core::eval::{self, Options, Side};
use crate::core::metrics::MetricSpec;
use crate::core::trec;

/// The result of [`evaluate_run_file`].
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvaluation {
    /// Row-major `num_qrels_queries x num_metrics`, as [`eval::Evaluation`].
    pub values: Vec<f64>,
    /// Indices of the qrels queries missing from the run (scored on an empty
    /// ranking).
    pub missing: Vec<i64>,
    /// Ids of the run queries not in the qrels (ignored), sorted by bytes.
    pub run_only: Vec<Vec<u8>>,
    /// Tag (6th field) of the run's first line; `None` for an empty run.
    pub tag: Option<String>,
    /// The number of chunks read.
    pub chunks: usize,
}

/// Score the run file at `path` (`"-"` = stdin; gzip detected) against `qrels`
/// chunk by chunk: the same values, missing and ignored queries as
/// [`eval::evaluate`] on the whole file read with [`trec::read_trec`], in the
/// memory of one chunk of about `chunk_rows` rows.  Run inside
/// [`eval::with_threads`] to choose the thread count.
pub fn evaluate_run_file(
    qrels: &Side<'_>,
    path: &str,
    read: &trec::ReadOptions,
    metrics: &[MetricSpec],
    opts: &Options,
    chunk_rows: usize,
) -> Result<StreamEvaluation> {
    if chunk_rows == 0 {
        return Err(Error::InvalidInput("chunk_rows must be at least 1".into()));
    }
    // Check the metrics and options before reading.
    eval::check(metrics, opts)?;
    let nq = qrels.num_queries();
    let nm = metrics.len();
    let mut values = vec![0.0; nq * nm];
    let mut present = vec![false; nq];
    let mut run_only: Vec<Vec<u8>> = Vec::new();
    let mut chunks = 0usize;
    let resolved = eval::resolve(metrics, qrels);
    let mut pairs: Vec<(usize, Option<usize>)> = Vec::new();
    // Score `pairs` and write each row into its qrels query's row of `values`.
    let score = |values: &mut [f64], run: &Side<'_>, pairs: &[(usize, Option<usize>)]| {
        let scored = eval::evaluate_pairs(qrels, run, &resolved, opts, pairs)?;
        for (&(qi, _), row) in pairs.iter().zip(scored.chunks_exact(nm)) {
            values[qi * nm..(qi + 1) * nm].copy_from_slice(row);
        }
        Ok::<(), Error>(())
    };
    let (tag, _) = trec::for_each_run_chunk_with(path, read, chunk_rows, |chunk| {
        chunks += 1;
        let run = Side::of(&chunk)?;
        // The chunk's queries, found in the qrels by binary search: the work
        // per chunk is proportional to the chunk, not to the qrels.
        pairs.clear();
        for rq in 0..run.num_queries() {
            let id = run.queries.get(rq);
            match qrels.queries.position(id) {
                Some(qi) => {
                    present[qi] = true;
                    pairs.push((qi, Some(rq)));
                }
                None => run_only.push(id.to_vec()),
            }
        }
        score(&mut values, &run, &pairs)
    })?;

    // Queries missing from the run: an empty ranking each, as `evaluate` does.
    let missing: Vec<i64> = (0..nq).filter(|&i| !present[i]).map(|i| i as i64).collect();
    if !missing.is_empty() {
        let no_rows = Builder::new(Kind::Run, read.round_f32).finish()?;
        let empty: Vec<(usize, Option<usize>)> =
            missing.iter().map(|&i| (i as usize, None)).collect();
        score(&mut values, &Side::of(&no_rows)?, &empty)?;
    }
    // Byte order, as the run's sorted query vocabulary would list them.
    run_only.sort_unstable();
    Ok(StreamEvaluation {
        values,
        missing,
        run_only,
        tag,
        chunks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::encode::Encoded;
    use std::io::Write;
    use std::path::PathBuf;

    fn tmp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ranklens_stream_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        p
    }

    fn metrics() -> Vec<MetricSpec> {
        [
            ("map", None),
            ("ndcg", Some(10)),
            ("precision", Some(5)),
            ("mrr", None),
            ("bpref", None),
            ("num_ret", None),
        ]
        .iter()
        .map(|(n, k)| MetricSpec::new(n, *k, None, &[]).unwrap())
        .collect()
    }

    /// A run of `nq` queries (some missing from the qrels, some qrels queries
    /// missing from it), with ties, grouped by query.
    fn files(nq: usize) -> (String, String) {
        let (mut qrels, mut run) = (String::new(), String::new());
        for q in 0..nq {
            for d in 0..(q % 7) {
                qrels.push_str(&format!("q{q} 0 d{} {}\n", d * 3, (q + d) % 3));
            }
            if q % 5 == 4 {
                continue; // missing from the run
            }
            for d in 0..(q % 11 + 1) {
                let score = ((q * 7 + d * 13) % 5) as f64 / 2.0;
                run.push_str(&format!("q{q} Q0 d{d} {d} {score} tag\n"));
            }
        }
        run.push_str("zz_only Q0 d1 1 1 tag\nzz_only Q0 d2 2 1 tag\n");
        (qrels, run)
    }

    fn whole(qrels: &Encoded, run_path: &str, opts: &Options) -> eval::Evaluation {
        let run = trec::read_trec(run_path, Kind::Run, false).unwrap();
        eval::evaluate(
            &Side::of(qrels).unwrap(),
            &Side::of(&run).unwrap(),
            &metrics(),
            opts,
        )
        .unwrap()
    }

    #[test]
    fn same_numbers_as_whole_for_any_chunk_size() {
        let (qtext, rtext) = files(60);
        let qp = tmp("qrels.txt", &qtext);
        let rp = tmp("run.txt", &rtext);
        let qrels = trec::read_trec(qp.to_str().unwrap(), Kind::Qrels, false).unwrap();
        let rpath = rp.to_str().unwrap();
        for opts in [
            Options::new(1.0),
            Options {
                judged_only: true,
                max_docs: Some(3),
                ..Options::new(2.0)
            },
            Options {
                ties: eval::Ties::Input,
                ..Options::new(1.0)
            },
        ] {
            let w = whole(&qrels, rpath, &opts);
            for chunk_rows in [1, 2, 7, 100, 1 << 20] {
                let s = evaluate_run_file(
                    &Side::of(&qrels).unwrap(),
                    rpath,
                    &trec::ReadOptions::default(),
                    &metrics(),
                    &opts,
                    chunk_rows,
                )
                .unwrap();
                let same = s
                    .values
                    .iter()
                    .zip(&w.values)
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same && s.values.len() == w.values.len(), "{chunk_rows}");
                let missing: Vec<i64> = (0..w.run_index.len() as i64)
                    .filter(|&i| w.run_index[i as usize] < 0)
                    .collect();
                assert_eq!(s.missing, missing);
                let run = trec::read_trec(rpath, Kind::Run, false).unwrap();
                let ignored: Vec<Vec<u8>> = w
                    .run_only
                    .iter()
                    .map(|&i| run.queries.view().get(i as usize).to_vec())
                    .collect();
                assert!(ignored.len() > 1 && ignored.contains(&b"zz_only".to_vec()));
                assert_eq!(s.run_only, ignored);
                assert_eq!(s.tag.as_deref(), Some("tag"));
                if chunk_rows == 1 {
                    assert_eq!(s.chunks, 49); // one per run query
                }
            }
        }
    }

    #[test]
    fn non_grouped_run_is_an_error_naming_the_line() {
        let qp = tmp("q2.txt", "a 0 d1 1\nb 0 d1 1\n");
        let rp = tmp(
            "r2.txt",
            "a Q0 d1 1 1 t\nb Q0 d1 1 1 t\n# c\na Q0 d2 2 0.5 t\n",
        );
        let qrels = trec::read_trec(qp.to_str().unwrap(), Kind::Qrels, false).unwrap();
        for chunk_rows in [1, 100] {
            let e = evaluate_run_file(
                &Side::of(&qrels).unwrap(),
                rp.to_str().unwrap(),
                &trec::ReadOptions::default(),
                &metrics(),
                &Options::new(1.0),
                chunk_rows,
            )
            .unwrap_err();
            match e {
                Error::Parse { line, msg, .. } => {
                    assert_eq!(line, 4);
                    assert!(msg.contains("\"a\"") && msg.contains("line 1"), "{msg}");
                    assert!(msg.contains("not grouped by query"), "{msg}");
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn bad_options_fail_before_reading_and_empty_runs_work() {
        let qp = tmp("q3.txt", "a 0 d1 1\n");
        let qrels = trec::read_trec(qp.to_str().unwrap(), Kind::Qrels, false).unwrap();
        let q = Side::of(&qrels).unwrap();
        let opts = Options::new(1.0);
        let bad = Options {
            max_docs: Some(0),
            ..opts.clone()
        };
        let missing = |opts: &Options, chunk_rows| {
            let read = trec::ReadOptions::default();
            evaluate_run_file(
                &q,
                "/nonexistent_ranklens",
                &read,
                &metrics(),
                opts,
                chunk_rows,
            )
        };
        // The path does not exist: the option error comes first.
        let e = missing(&bad, 10);
        assert!(matches!(e, Err(Error::InvalidInput(_))), "{e:?}");
        let e = missing(&opts, 0);
        assert!(matches!(e, Err(Error::InvalidInput(_))), "{e:?}");
        let e = missing(&opts, 10);
        assert!(matches!(e, Err(Error::Io { .. })), "{e:?}");
        let rp = tmp("r3.txt", "# nothing\n");
        let s = evaluate_run_file(
            &q,
            rp.to_str().unwrap(),
            &trec::ReadOptions::default(),
            &metrics(),
            &opts,
            10,
        )
        .unwrap();
        assert_eq!((s.missing, s.chunks, s.tag), (vec![0], 0, None));
    }
}
