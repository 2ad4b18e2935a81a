use super::checks::snake_case;
use super::*;
use crate::core::cancel::Cancel;
use crate::core::encode::{Builder, Encoded, Kind};

fn side(e: &Encoded) -> Side<'_> {
    Side::of(e).unwrap()
}

fn spec(name: &str, k: Option<usize>) -> MetricSpec {
    MetricSpec::new(name, k, None, &[]).unwrap()
}

#[test]
fn rank_key_orders_as_descending_total_cmp_and_round_trips() {
    let xs = [
        f64::NEG_INFINITY,
        -1e300,
        -1.5,
        -f64::MIN_POSITIVE,
        0.0,
        f64::MIN_POSITIVE,
        0.25,
        1.0,
        3.0e38,
        f64::INFINITY,
    ];
    for a in xs {
        assert_eq!(key_score(rank_key(a)).to_bits(), a.to_bits());
        for b in xs {
            assert_eq!(rank_key(a).cmp(&rank_key(b)), b.total_cmp(&a), "{a} {b}");
        }
    }
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
    // miss_nan: a at rank 3 is past first_rel_rank@2's cutoff: NaN, not 3;
    // without a cutoff it is found.  The NaN is not an overflow error.
    let metrics = [
        spec("first_rel_rank", Some(2)),
        spec("first_rel_rank", None),
    ];
    opts.max_docs = None;
    assert_eq!(
        evaluate(&side(&q), &side(&r), &metrics, &opts)
            .unwrap()
            .values,
        vec![3.0, 3.0]
    );
    opts.miss_nan = true;
    let v = evaluate(&side(&q), &side(&r), &metrics, &opts)
        .unwrap()
        .values;
    assert!(v[0].is_nan() && v[1] == 3.0);
    opts.ties = Ties::Expected;
    assert!(check(&metrics, &opts).is_err());
}

#[test]
fn input_ties_keep_the_given_order() {
    let mut qb = Builder::new(Kind::Qrels, false);
    qb.push(b"q", b"a", 1.0).unwrap();
    let q = qb.finish().unwrap();
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("x", 2.0), ("a", 1.0), ("z", 1.0)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let metrics = [spec("mrr", None)];
    let mut opts = Options::new(1.0);
    // trec: z before a (descending id) -> rank 3
    let trec = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
    assert_eq!(trec.values, vec![1.0 / 3.0]);
    opts.ties = Ties::Input;
    let input = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
    assert_eq!(input.values, vec![0.5]);
}

#[test]
fn best_and_worst_ties_order_by_label() {
    // Labels: a 2, b 1, c -1 (judged non-relevant, below an unjudged 0), u
    // unjudged.  Run: x 3.0, then a b c u tied at 1.0.
    let mut qb = Builder::new(Kind::Qrels, false);
    for (d, l) in [("a", 2.0), ("b", 1.0), ("c", -1.0)] {
        qb.push(b"q", d.as_bytes(), l).unwrap();
    }
    let q = qb.finish().unwrap();
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("x", 3.0), ("a", 1.0), ("b", 1.0), ("c", 1.0), ("u", 1.0)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let metrics = [
        spec("mrr", None),
        spec("precision", Some(2)),
        spec("hits", Some(2)),
        spec("map", None),
    ];
    let mut opts = Options::new(1.0);
    let run = |opts: &Options| {
        evaluate(&side(&q), &side(&r), &metrics, opts)
            .unwrap()
            .values
    };
    // trec: x u c b a -> relevant at ranks 4, 5.
    assert_eq!(
        run(&opts),
        vec![0.25, 0.0, 0.0, (1.0 / 4.0 + 2.0 / 5.0) / 2.0]
    );
    // best: x a b u c -> relevant at ranks 2, 3.
    opts.ties = Ties::Best;
    assert_eq!(
        run(&opts),
        vec![0.5, 0.5, 1.0, (1.0 / 2.0 + 2.0 / 3.0) / 2.0]
    );
    // worst: x c u b a -> relevant at ranks 4, 5 (c's -1 below u's 0).
    opts.ties = Ties::Worst;
    assert_eq!(
        run(&opts),
        vec![0.25, 0.0, 0.0, (1.0 / 4.0 + 2.0 / 5.0) / 2.0]
    );
    // max_docs cuts after the order: best keeps a in the top 2.
    opts.ties = Ties::Best;
    opts.max_docs = Some(2);
    assert_eq!(run(&opts)[..2], [0.5, 0.5]);
    // Grouped qrels: refused.
    let mut gb = Builder::new(Kind::Qrels, false);
    let qi = gb.query(b"q").unwrap();
    gb.grouped_row(qi, b"a", 1.0, 0).unwrap();
    let g = gb.finish().unwrap();
    let err = evaluate(&side(&g), &side(&r), &metrics, &opts).unwrap_err();
    assert!(err.to_string().contains("grouped qrels"), "{err}");
    assert_eq!(Ties::from_name("best").unwrap(), Ties::Best);
    assert_eq!(Ties::from_name("worst").unwrap(), Ties::Worst);
}

#[test]
fn groups_are_satisfied_once() {
    let mut qb = Builder::new(Kind::Qrels, false);
    let qi = qb.query(b"q").unwrap();
    // group 0: {a, b}; group 1: {c}
    qb.grouped_row(qi, b"a", 1.0, 0).unwrap();
    qb.grouped_row(qi, b"b", 1.0, 0).unwrap();
    qb.grouped_row(qi, b"c", 1.0, 1).unwrap();
    let q = qb.finish().unwrap();
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("a", 4.0), ("x", 3.0), ("b", 2.0), ("y", 1.0)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let metrics = [
        spec("recall", Some(4)),
        spec("precision", Some(4)),
        spec("num_rel", None),
        spec("mrr", None),
    ];
    let e = evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).unwrap();
    // one of two groups satisfied; b adds nothing.
    assert_eq!(e.values, vec![0.5, 0.25, 2.0, 1.0]);
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
    assert!(Side::new(v.view(), v.view(), &[0, 1], &e.doc_ids, &e.values, &[]).is_err());
    assert!(Side::new(v.view(), v.view(), &[0], &[3], &[1.0], &[]).is_err());
    assert!(Side::new(v.view(), v.view(), &[0], &[], &[], &[1]).is_err());
}

#[test]
fn expected_ties() {
    let mut qb = Builder::new(Kind::Qrels, false);
    qb.push(b"q", b"a", 1.0).unwrap();
    qb.push(b"q", b"u", -1.0).unwrap();
    let q = qb.finish().unwrap();
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("a", 1.0), ("b", 1.0), ("u", 1.0), ("x", 0.5)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let metrics = [
        spec("mrr", None),
        spec("precision", Some(1)),
        spec("num_ret", None),
    ];
    let mut opts = Options::new(1.0);
    opts.ties = Ties::Expected;
    // a, b, u tied: first relevant at 1, 2 or 3 -> (1 + 1/2 + 1/3) / 3.
    let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
    assert!((e.values[0] - (1.0 + 0.5 + 1.0 / 3.0) / 3.0).abs() < 1e-12);
    assert!((e.values[1] - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(e.values[2], 4.0);
    // judged_only: b and u dropped; max_docs = 2 cuts the group {a, b, u}:
    // two random slots of three, "a" makes it with probability 2/3, ranked 1.
    opts.judged_only = true;
    opts.max_docs = Some(2);
    let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
    assert!((e.values[0] - 2.0 / 3.0).abs() < 1e-12);
    assert!((e.values[1] - 2.0 / 3.0).abs() < 1e-12);
    assert!((e.values[2] - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn expected_ties_and_grouped_qrels() {
    let mut qb = Builder::new(Kind::Qrels, false);
    let qi = qb.query(b"q").unwrap();
    qb.grouped_row(qi, b"a", 1.0, 0).unwrap();
    qb.grouped_row(qi, b"b", 1.0, 0).unwrap();
    qb.grouped_row(qi, b"c", 1.0, 1).unwrap();
    let q = qb.finish().unwrap();
    let mut opts = Options::new(1.0);
    opts.ties = Ties::Expected;
    let metrics = [spec("mrr", None)];
    // a and b (one group) tie: an error.
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("a", 1.0), ("b", 1.0), ("c", 0.5)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let err = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap_err();
    assert!(err.to_string().contains("qrels group"), "{err}");
    // x and a tie, then b and c: fine, group 0 is satisfied (by a) before
    // b ties with c.  mrr: a at rank 1 or 2 -> 3/4; recall@3: group 0
    // always, group 1 when c is third -> (1 + 1/2) / 2.
    let mut rb = Builder::new(Kind::Run, false);
    for (d, s) in [("x", 2.0), ("a", 2.0), ("b", 1.0), ("c", 1.0)] {
        rb.push(b"q", d.as_bytes(), s).unwrap();
    }
    let r = rb.finish().unwrap();
    let metrics = [spec("mrr", None), spec("recall", Some(3))];
    let e = evaluate(&side(&q), &side(&r), &metrics, &opts).unwrap();
    assert!((e.values[0] - 0.75).abs() < 1e-12);
    assert!((e.values[1] - 0.75).abs() < 1e-12);
}

#[test]
fn expected_ties_reject_families_without_a_form() {
    assert_eq!(snake_case("NdcgBurges"), "ndcg_burges");
    assert_eq!(snake_case("RPrecision"), "r_precision");
    assert!(Ties::from_name("expected").is_ok());
    assert!(Ties::from_name("random").is_err());
}

#[test]
fn thread_counts() {
    assert_eq!(
        with_threads(Some(2), rayon::current_num_threads).unwrap(),
        2
    );
    assert!(with_threads(Some(0), || 0).is_err());
}

#[test]
fn a_set_flag_stops_the_evaluation() {
    let mut qb = Builder::new(Kind::Qrels, false);
    qb.push(b"q1", b"a", 1.0).unwrap();
    let q = qb.finish().unwrap();
    let mut opts = Options::new(1.0);
    opts.cancel = Cancel::new();
    let metrics = [spec("map", None)];
    assert!(evaluate(&side(&q), &side(&q), &metrics, &opts).is_ok());
    opts.cancel.cancel();
    assert_eq!(
        evaluate(&side(&q), &side(&q), &metrics, &opts).err(),
        Some(Error::Interrupted)
    );
}

#[test]
fn rows_of_one_task_run_in_order_on_the_calling_thread() {
    // Each row's value: its index, the thread's pool index (none outside
    // a pool) and how many rows its state saw before it.
    let run = |rows: usize| {
        let mut out = vec![0.0; rows * 3];
        for_each_row(
            &mut out,
            3,
            4,
            || 0usize,
            |seen, r, o| {
                o[0] = r as f64;
                o[1] = rayon::current_thread_index().map_or(-1.0, |i| i as f64);
                o[2] = *seen as f64;
                *seen += 1;
            },
        );
        out
    };
    let small = run(4);
    let rows: Vec<&[f64]> = small.chunks(3).collect();
    assert_eq!(
        rows,
        [
            [0.0, -1.0, 0.0],
            [1.0, -1.0, 1.0],
            [2.0, -1.0, 2.0],
            [3.0, -1.0, 3.0]
        ]
    );
    let big = with_threads(Some(2), || run(1000)).unwrap();
    assert!(big.chunks(3).enumerate().all(|(r, o)| o[0] == r as f64));
    assert!(big.chunks(3).all(|o| o[1] >= 0.0));
}

#[test]
fn a_value_past_the_largest_float_is_an_error() {
    // ndcg_burges of one document labelled `label`, ranked first.
    let score = |label: f64| {
        let mut qb = Builder::new(Kind::Qrels, false);
        qb.push(b"q1", b"a", label).unwrap();
        let q = qb.finish().unwrap();
        let mut rb = Builder::new(Kind::Run, false);
        rb.push(b"q1", b"a", 1.0).unwrap();
        let r = rb.finish().unwrap();
        let metrics = [spec("ndcg_burges", None)];
        evaluate(&side(&q), &side(&r), &metrics, &Options::new(1.0)).map(|e| e.values)
    };
    // 2^1024 overflows: the gain of a label of 1024.
    let e = score(1024.0);
    assert!(
        matches!(&e, Err(Error::InvalidInput(m)) if m.starts_with("query \"q1\", metric ndcg_burges: the value is past")),
        "{e:?}"
    );
    // 1023 is fine: 2^1023 - 1 is finite, and the ranking is ideal.
    assert_eq!(score(1023.0), Ok(vec![1.0]));
}
