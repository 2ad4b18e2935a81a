use super::arena::push_bytes;
use super::*;
use crate::core::error::{show, Error};
use crate::core::pool;

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
