use super::flat::flat_path;
use super::group::group_sorted;
use super::rows::dense_path;
use super::ties::{count_ranks, rank_by_sorting};
use super::*;
use crate::core::cancel::Cancel;
use crate::core::encode::{Builder, Kind};
use crate::core::error::Result;
use crate::core::eval::{evaluate, Side};
use crate::core::eval::{Options, Ties};
use crate::core::metrics::testutil::FAMILIES;
use crate::core::metrics::MetricSpec;
use proptest::prelude::*;

fn spec(name: &str, k: Option<usize>) -> MetricSpec {
    MetricSpec::new(name, k, None, &[]).unwrap()
}

/// A xorshift64 generator from `seed` (made odd: never stuck at 0), for
/// test data drawn from one proptest seed.
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn f64s(data: &[f64], rows: usize, cols: usize) -> Numbers<'_> {
    Numbers::F64(Matrix::contiguous(data, rows, cols).unwrap())
}

/// `evaluate_dense` on f64 matrices of the given shape.
fn dense(
    scores: &[f64],
    labels: &[f64],
    (rows, cols): (usize, usize),
    valid: &Valid<'_>,
    m: &[MetricSpec],
    ties: DenseTies,
    empty: Empty,
) -> Result<DenseEvaluation> {
    let (s, l) = (f64s(scores, rows, cols), f64s(labels, rows, cols));
    evaluate_dense(&s, &l, valid, m, 1.0, ties, empty, &Cancel::default())
}

#[test]
fn ranks_by_score_then_column() {
    // Row 0: scores 0.2, 0.9, 0.9, 0.1; labels 1, 0, 2, 0.  Order: col 1, col 2
    // (tie, lower column first), col 0, col 3 -> ranked labels 0, 2, 1, 0.
    // mrr = 1/2; P@2 = 1/2; ndcg@2 = (2/log2 3) / (2 + 1/log2 3).
    let scores = [0.2, 0.9, 0.9, 0.1];
    let labels = [1.0, 0.0, 2.0, 0.0];
    let m = [
        spec("mrr", None),
        spec("precision", Some(2)),
        spec("ndcg", Some(2)),
    ];
    let s = f64s(&scores, 1, 4);
    let l = f64s(&labels, 1, 4);
    for ties in [DenseTies::First, DenseTies::Worst] {
        let e = evaluate_dense(
            &s,
            &l,
            &Valid::All,
            &m,
            1.0,
            ties,
            Empty::Zero,
            &Cancel::default(),
        )
        .unwrap();
        let ndcg = (2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2());
        assert_eq!(e.values[..2], [0.5, 0.5]);
        assert!((e.values[2] - ndcg).abs() < 1e-15);
        assert_eq!(e.empty, vec![false]);
    }
    // The tie group is col 1 (label 0) and col 2 (label 2).  expected: either
    // order, mrr = (1 + 1/2) / 2; best: label 2 first, 1; worst: label 0
    // first, 1/2 (as column order).
    for (ties, want) in [
        (DenseTies::Expected, 0.75),
        (DenseTies::Best, 1.0),
        (DenseTies::Worst, 0.5),
    ] {
        let e = evaluate_dense(
            &s,
            &l,
            &Valid::All,
            &m[..1],
            1.0,
            ties,
            Empty::Zero,
            &Cancel::default(),
        )
        .unwrap();
        assert!((e.values[0] - want).abs() < 1e-15, "{ties:?}");
    }
}

#[test]
fn strided_views_read_the_same_cells() {
    // The 2 x 3 matrix [[3, 1, 2], [1, 2, 3]] stored transposed (column-major).
    let scores_t = [3.0, 1.0, 1.0, 2.0, 2.0, 3.0];
    let labels_t = [0.0, 1.0, 0.0, 0.0, 1.0, 0.0];
    let s = Numbers::F64(Matrix::new(&scores_t, 2, 3, 1, 2).unwrap());
    let l = Numbers::F64(Matrix::new(&labels_t, 2, 3, 1, 2).unwrap());
    let m = [spec("mrr", None)];
    let e = evaluate_dense(
        &s,
        &l,
        &Valid::All,
        &m,
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    // Row 0: labels [0, 0, 1], relevant col 2 has score 2: rank 2.  Row 1:
    // labels [1, 0, 0], relevant col 0 has score 1: rank 3.
    assert_eq!(e.values, vec![0.5, 1.0 / 3.0]);
    assert!(Matrix::new(&scores_t, 2, 3, 1, 3).is_err());
}

#[test]
fn empty_rows_follow_the_policy_and_masks_drop_cells() {
    let scores = [1.0, 2.0, 3.0, 4.0];
    let labels = [0.0, 0.0, 1.0, 0.0];
    let s = f64s(&scores, 2, 2);
    let l = f64s(&labels, 2, 2);
    let m = [spec("mrr", None), spec("num_ret", None)];
    for (policy, want) in [(Empty::Zero, 0.0), (Empty::One, 1.0)] {
        let e = evaluate_dense(
            &s,
            &l,
            &Valid::All,
            &m,
            1.0,
            DenseTies::First,
            policy,
            &Cancel::default(),
        )
        .unwrap();
        assert_eq!(e.values, vec![want, want, 0.5, 2.0]);
        assert_eq!(e.empty, vec![true, false]);
    }
    let e = evaluate_dense(
        &s,
        &l,
        &Valid::All,
        &m,
        1.0,
        DenseTies::First,
        Empty::Nan,
        &Cancel::default(),
    )
    .unwrap();
    assert!(e.values[0].is_nan());
    // Row 1 without its column 1 (score 4): the relevant cell ranks first.
    let len = [2, 1];
    let e = evaluate_dense(
        &s,
        &l,
        &Valid::Lengths(&len),
        &m,
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(e.values[2..], [1.0, 1.0]);
    let mask = [1u8, 1, 1, 0];
    let mk = Valid::Mask(Matrix::contiguous(&mask, 2, 2).unwrap());
    let e = evaluate_dense(
        &s,
        &l,
        &mk,
        &m,
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(e.values[2..], [1.0, 1.0]);
    assert!(evaluate_dense(
        &s,
        &l,
        &Valid::Lengths(&[3, 0]),
        &m,
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default()
    )
    .is_err());
}

#[test]
fn nan_cells_are_errors_naming_the_cell() {
    let scores = [1.0, f64::NAN];
    let labels = [1.0, 0.0];
    let m = [spec("mrr", None)];
    let e = dense(
        &scores,
        &labels,
        (1, 2),
        &Valid::All,
        &m,
        DenseTies::First,
        Empty::Zero,
    )
    .unwrap_err();
    assert!(e.to_string().contains("scores[0, 1]"), "{e}");
    // Masked out, the NaN is not read; a NaN label in column 2 of a masked
    // row is named by its column.
    let mask = [1u8, 0];
    let mk = Valid::Mask(Matrix::contiguous(&mask, 1, 2).unwrap());
    let ok = dense(
        &scores,
        &labels,
        (1, 2),
        &mk,
        &m,
        DenseTies::First,
        Empty::Zero,
    )
    .unwrap();
    assert_eq!(ok.values, vec![1.0]);
    let (scores, labels, mask) = ([1.0, 2.0, 3.0], [1.0, 0.0, f64::NAN], [1u8, 0, 1]);
    let mk = Valid::Mask(Matrix::contiguous(&mask, 1, 3).unwrap());
    let e = dense(
        &scores,
        &labels,
        (1, 3),
        &mk,
        &m,
        DenseTies::First,
        Empty::Zero,
    )
    .unwrap_err();
    assert!(e.to_string().contains("labels[0, 2]"), "{e}");
}

#[test]
fn half_precision_bits() {
    assert_eq!(f16_to_f64(0x3c00), 1.0);
    assert_eq!(f16_to_f64(0xc000), -2.0);
    assert_eq!(f16_to_f64(0x0001), 2f64.powi(-24));
    assert_eq!(f16_to_f64(0x7bff), 65504.0);
    assert!(f16_to_f64(0x7e00).is_nan());
    assert_eq!(bf16_to_f64(0x3f80), 1.0);
    assert_eq!(bf16_to_f64(0xc040), -3.0);
}

#[test]
fn topk_ids_and_labels() {
    // Row 0 retrieves 7, 3, 9 (padding -1); relevant {3, 5}: 3 at rank 2.
    let ids = [7, 3, 9, -1];
    let rel = [5, 3, -1];
    let m = [
        spec("mrr", None),
        spec("recall", Some(3)),
        spec("num_ret", None),
    ];
    let ids_m = Matrix::contiguous(&ids, 1, 4).unwrap();
    let e = evaluate_topk(
        &ids_m,
        &Relevant::Ids(Matrix::contiguous(&rel, 1, 3).unwrap()),
        &m,
        1.0,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(e.values, vec![0.5, 0.5, 3.0]);
    let labels = [0.0, 2.0, 1.0, 5.0];
    let e = evaluate_topk(
        &ids_m,
        &Relevant::Labels(f64s(&labels, 1, 4)),
        &m,
        1.0,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    // The padding's label is left out: R = 2 (ranks 2 and 3).
    assert_eq!(e.values, vec![0.5, 1.0, 3.0]);
    let dup = [1, 1];
    let e = evaluate_topk(
        &Matrix::contiguous(&dup, 1, 2).unwrap(),
        &Relevant::Ids(Matrix::contiguous(&rel, 1, 3).unwrap()),
        &m,
        1.0,
        Empty::Zero,
        &Cancel::default(),
    );
    assert!(e.unwrap_err().to_string().contains("more than once"));
}

#[test]
fn knn_recall_counts_distinct_shared_ids() {
    // Row 0: {1, 2, 3} vs {3, 2, 9}: 2 shared.  Row 1: 4 twice, -1 padding
    // in both: only 4 is shared.
    let a = [1, 2, 3, 4, 4, -1];
    let e = [3, 2, 9, 4, -1, 8];
    let am = Matrix::contiguous(&a, 2, 3).unwrap();
    let em = Matrix::contiguous(&e, 2, 3).unwrap();
    assert_eq!(
        knn_recall(&am, &em, 3, &Cancel::default()).unwrap(),
        vec![2.0 / 3.0, 1.0 / 3.0]
    );
    assert_eq!(
        knn_recall(&am, &em, 1, &Cancel::default()).unwrap(),
        vec![0.0, 1.0]
    );
    assert!(knn_recall(&am, &em, 4, &Cancel::default()).is_err());
    // k > 32 takes the id set: ids 0..40 against 20..60 share 20.
    let a: Vec<i64> = (0..40).collect();
    let e: Vec<i64> = (20..60).collect();
    let r = knn_recall(
        &Matrix::contiguous(&a, 1, 40).unwrap(),
        &Matrix::contiguous(&e, 1, 40).unwrap(),
        40,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(r, vec![0.5]);
    // Distances: threshold 2.0 + 1e-3; approx distances 0.5, 2.0005, 3.
    let ad = [0.5, 2.0005, 3.0];
    let ed = [0.1, 1.0, 2.0];
    let r = knn_recall_distances(
        &Matrix::contiguous(&ad, 1, 3).unwrap(),
        &Matrix::contiguous(&ed, 1, 3).unwrap(),
        3,
        1e-3,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(r, vec![2.0 / 3.0]);
}

/// `|set(a) & set(e)|` over non-negative ids, the plain way.
fn naive_shared(a: &[i64], e: &[i64]) -> usize {
    let a: std::collections::BTreeSet<_> = a.iter().filter(|&&x| x >= 0).collect();
    let e: std::collections::BTreeSet<_> = e.iter().filter(|&&x| x >= 0).collect();
    a.intersection(&e).count()
}

proptest! {
    /// Both ways of counting shared ids (all against all up to k = 32, the id
    /// set above) agree with a set intersection, on small id ranges (many
    /// duplicates, padding) and row after row (the set's reuse), contiguous
    /// and strided (a transposed view).
    #[test]
    fn knn_recall_matches_a_set_intersection(
        rows in 1usize..6,
        k in 1usize..80,
        range in 2i64..200,
        seed in any::<u64>(),
    ) {
        let mut bits = xorshift(seed);
        let mut next = || (bits() % range as u64) as i64 - 1;
        let a: Vec<i64> = (0..rows * k).map(|_| next()).collect();
        let e: Vec<i64> = (0..rows * k).map(|_| next()).collect();
        let want: Vec<f64> = (0..rows)
            .map(|i| naive_shared(&a[i * k..][..k], &e[i * k..][..k]) as f64 / k as f64)
            .collect();
        let am = Matrix::contiguous(&a, rows, k).unwrap();
        let em = Matrix::contiguous(&e, rows, k).unwrap();
        prop_assert_eq!(&knn_recall(&am, &em, k, &Cancel::default()).unwrap(), &want);
        // The same rows stored column-major (strides (1, rows)).
        let at: Vec<i64> = (0..k).flat_map(|j| (0..rows).map(move |i| (i, j))).map(|(i, j)| a[i * k + j]).collect();
        let am = Matrix::new(&at, rows, k, 1, rows).unwrap();
        prop_assert_eq!(&knn_recall(&am, &em, k, &Cancel::default()).unwrap(), &want);
    }
}

proptest! {
    /// Grouping agrees with a plain ordered map of cell lists (input order
    /// within a group), sorted input or not; sorted input in chunks of any
    /// size.
    #[test]
    fn group_flat_matches_an_ordered_map(
        idx in proptest::collection::vec(-4i64..6, 0..200),
        big in any::<bool>(),
    ) {
        let idx: Vec<i64> = idx.iter().map(|&x| if big { x * (1 << 40) } else { x }).collect();
        for input in [idx.clone(), { let mut s = idx.clone(); s.sort(); s }] {
            let g = group_flat(&input);
            let mut want: std::collections::BTreeMap<i64, Vec<i64>> = Default::default();
            for (c, &x) in input.iter().enumerate() {
                want.entry(x).or_default().push(c as i64);
            }
            prop_assert_eq!(&g.keys, &want.keys().copied().collect::<Vec<_>>());
            // The cells in group order: cell `c` at its place.
            let mut cells: Vec<i64> = (0..input.len() as i64).collect();
            if !g.place.is_empty() {
                prop_assert_eq!(g.place.len(), input.len());
                for (c, &p) in g.place.iter().enumerate() {
                    cells[p as usize] = c as i64;
                }
                let mut seen = g.place.clone();
                seen.sort();
                prop_assert_eq!(seen, (0..input.len() as i64).collect::<Vec<_>>());
            }
            let got: Vec<Vec<i64>> = g.offsets.windows(2).map(|w| cells[w[0] as usize..w[1] as usize].to_vec()).collect();
            prop_assert_eq!(got, want.values().cloned().collect::<Vec<_>>());
            // Sorted input read in chunks of any size: the same groups.
            for chunk in [1, 2, 3, 7, 64, 65, 150, 1 << 16] {
                match group_sorted(&input, chunk) {
                    Some(c) => prop_assert_eq!(&c, &g),
                    None => prop_assert!(input.windows(2).any(|w| w[0] > w[1])),
                }
            }
        }
    }
}

/// The same rows through the id path: docs named by column, in column order,
/// `Ties::Input` (the given order) or `Ties::Expected`.
fn by_ids(
    scores: &[f64],
    labels: &[f64],
    rows: usize,
    cols: usize,
    m: &[MetricSpec],
    ties: Ties,
) -> Vec<f64> {
    let mut qb = Builder::new(Kind::Qrels, false);
    let mut rb = Builder::new(Kind::Run, false);
    for i in 0..rows {
        let q = format!("{i:06}");
        for j in 0..cols {
            let d = format!("d{j:04}");
            qb.push(q.as_bytes(), d.as_bytes(), labels[i * cols + j])
                .unwrap();
            rb.push(q.as_bytes(), d.as_bytes(), scores[i * cols + j])
                .unwrap();
        }
    }
    let (q, r) = (qb.finish().unwrap(), rb.finish().unwrap());
    let mut opts = Options::new(1.0);
    opts.ties = ties;
    evaluate(&Side::of(&q).unwrap(), &Side::of(&r).unwrap(), m, &opts)
        .unwrap()
        .values
}

fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * a.abs().max(1.0)
}

proptest! {
    /// Every family gives the id path's value on every non-empty row, on both
    /// ranking paths (counting and sorting), with ties in column order and
    /// in expectation.
    #[test]
    fn dense_equals_the_id_path(
        rows in 1usize..5,
        cols in 1usize..30,
        seed in proptest::collection::vec((0u8..6, 0u8..4), 150),
    ) {
        let n = rows * cols;
        let scores: Vec<f64> = seed[..n].iter().map(|&(s, _)| s as f64 / 2.0).collect();
        let labels: Vec<f64> = seed[..n].iter().map(|&(_, l)| [0.0, 0.0, 1.0, 2.0][l as usize]).collect();
        let first: Vec<MetricSpec> = FAMILIES.iter().flat_map(|f| [spec(f, None), MetricSpec::new(f, Some(3), None, &[]).unwrap_or(spec(f, None))]).collect();
        let exp: Vec<MetricSpec> = first.iter().filter(|m| crate::core::metrics::expected::supported(m.family)).cloned().collect();
        for (m, dt, t) in [(&first, DenseTies::First, Ties::Input), (&exp, DenseTies::Expected, Ties::Expected)] {
            let dense = evaluate_dense(&f64s(&scores, rows, cols), &f64s(&labels, rows, cols), &Valid::All, m, 1.0, dt, Empty::Nan, &Cancel::default()).unwrap();
            let ids = by_ids(&scores, &labels, rows, cols, m, t);
            let nm = m.len();
            for i in (0..rows).filter(|&i| !dense.empty[i]) {
                for c in 0..nm {
                    let (a, b) = (dense.values[i * nm + c], ids[i * nm + c]);
                    prop_assert!(same(a, b), "{dt:?}, row {i} {:?}: {a} vs {b}", m[c]);
                }
            }
        }
    }
}

proptest! {
    /// Counting and sorting give the same ranked labels.
    #[test]
    fn counting_equals_sorting(row in proptest::collection::vec((0u8..5, 0u8..4), 0..60)) {
        let mut s = Scratch {
            scores: row.iter().map(|&(x, _)| x as f64).collect(),
            labels: row.iter().map(|&(_, l)| [0.0, 0.0, 1.0, -1.0][l as usize]).collect(),
            ..Default::default()
        };
        count_ranks(&s.scores, &s.labels, &mut s.ranked, &mut s.bounds);
        let counted = s.ranked.clone();
        rank_by_sorting(&mut s, DenseTies::First);
        prop_assert_eq!(counted, s.ranked.clone());
    }
}

proptest! {
    /// float32 scores (compared as float32, `f32_row`) give the values of the
    /// same scores as float64, bit for bit: every family, every tie mode, all
    /// cells or `lengths=`, contiguous or strided (a column-major copy), both
    /// ranking paths (few and many non-zero labels), -0.0 and 0.0 tied.
    #[test]
    fn float32_scores_equal_float64(
        rows in 1usize..5,
        cols in 1usize..30,
        seed in proptest::collection::vec((0u8..7, 0u8..8), 150),
        lens in proptest::collection::vec(0i64..30, 5),
        dense_labels in any::<bool>(),
    ) {
        let n = rows * cols;
        let s32: Vec<f32> = seed[..n].iter().map(|&(s, _)| if s == 6 { -0.0 } else { s as f32 / 3.0 }).collect();
        let s64: Vec<f64> = s32.iter().map(|&x| x as f64).collect();
        let pick = |l: u8| if dense_labels { [0.0, 1.0, 2.0, 1.0, 3.0, 0.0, 1.0, 2.0][l as usize] } else { [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0][l as usize] };
        let labels: Vec<f64> = seed[..n].iter().map(|&(_, l)| pick(l)).collect();
        let lengths: Vec<i64> = lens[..rows].iter().map(|&l| l.min(cols as i64)).collect();
        let m: Vec<MetricSpec> = FAMILIES.iter().flat_map(|f| [spec(f, None), MetricSpec::new(f, Some(3), None, &[]).unwrap_or(spec(f, None))]).collect();
        let t32: Vec<f32> = (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j))).map(|(i, j)| s32[i * cols + j]).collect();
        let lab = f64s(&labels, rows, cols);
        for valid in [Valid::All, Valid::Lengths(&lengths)] {
            let want = evaluate_dense(&f64s(&s64, rows, cols), &lab, &valid, &m, 1.0, DenseTies::First, Empty::Nan, &Cancel::default()).unwrap();
            let c = Numbers::F32(Matrix::contiguous(&s32, rows, cols).unwrap());
            let t = Numbers::F32(Matrix::new(&t32, rows, cols, 1, rows).unwrap());
            for sc in [c, t] {
                let got = evaluate_dense(&sc, &lab, &valid, &m, 1.0, DenseTies::First, Empty::Nan, &Cancel::default()).unwrap();
                prop_assert_eq!(&got.empty, &want.empty);
                for (a, b) in got.values.iter().zip(&want.values) {
                    prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{a} vs {b}");
                }
            }
        }
    }
}

#[test]
fn float32_nan_is_an_error_naming_the_cell() {
    let scores = [1.0f32, 2.0, f32::NAN, 0.5];
    let labels = [1.0, 0.0, 0.0, 1.0];
    let sc = Numbers::F32(Matrix::contiguous(&scores, 2, 2).unwrap());
    let e = evaluate_dense(
        &sc,
        &f64s(&labels, 2, 2),
        &Valid::All,
        &[spec("mrr", None)],
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("scores[1, 0]"), "{e}");
    // Left out by lengths=, the NaN is not read.  Row 0: the label-0 cell
    // (score 2) ranks first, so mrr = 1/2; row 1 holds no cell: empty, 0.
    let lengths = [2i64, 0];
    let ok = evaluate_dense(
        &sc,
        &f64s(&labels, 2, 2),
        &Valid::Lengths(&lengths),
        &[spec("mrr", None)],
        1.0,
        DenseTies::First,
        Empty::Zero,
        &Cancel::default(),
    )
    .unwrap();
    assert_eq!(ok.values, vec![0.5, 0.0]);
}

#[test]
fn flat_cells_group_by_index_value() {
    // Sorted: no places, offsets at each change.
    let g = group_flat(&[-5, -5, 3, 9, 9, 9]);
    assert_eq!(
        (g.offsets, g.place, g.keys),
        (vec![0, 2, 3, 6], vec![], vec![-5, 3, 9])
    );
    // Shuffled: each cell's place in group order (input order within a
    // group): -5 = cells 1, 4; 3 = cell 3; 9 = cells 0, 2.
    let g = group_flat(&[9, -5, 9, 3, -5]);
    assert_eq!(g.place, vec![3, 0, 4, 2, 1]);
    assert_eq!((g.offsets, g.keys), (vec![0, 2, 3, 5], vec![-5, 3, 9]));
    assert_eq!(group_flat(&[]).offsets, vec![0]);
    // Scored: group -5 = cells 1 (0.9, label 0) and 4 (0.1, label 1): mrr 1/2;
    // group 3 = cell 3 (label 1): 1; group 9 = cells 0, 2 (labels 1, 0), tied
    // scores, input order: mrr 1.
    let scores = [0.5, 0.9, 0.5, 0.2, 0.1];
    let labels = [1.0, 0.0, 0.0, 1.0, 1.0];
    let g = group_flat(&[9, -5, 9, 3, -5]);
    let m = [spec("mrr", None)];
    let score = |g: &FlatGroups| {
        let (s, l) = (f64s(&scores, 1, 5), f64s(&labels, 1, 5));
        evaluate_flat(
            &s,
            &l,
            g,
            &m,
            1.0,
            DenseTies::First,
            Empty::Zero,
            &Cancel::default(),
        )
    };
    assert_eq!(score(&g).unwrap().values, vec![0.5, 1.0, 1.0]);
    // A place past the cells is an internal error, not a panic.
    let mut bad = g.clone();
    bad.place[2] = 5;
    let e = score(&bad);
    assert!(e.is_err_and(|e| e.to_string().contains("internal")));
}

/// The metrics of the sparse path, with and without cutoffs and own levels.
fn sparse_metrics(many: bool) -> Vec<MetricSpec> {
    let names = [
        "ndcg",
        "dcg",
        "map",
        "mrr",
        "recall",
        "precision",
        "hits",
        "hit_rate",
        "r_precision",
    ];
    let mut m: Vec<MetricSpec> = names.iter().map(|f| spec(f, None)).collect();
    m.extend(
        names
            .iter()
            .filter(|f| **f != "r_precision")
            .map(|f| spec(f, Some(3))),
    );
    m.extend(
        ["map", "recall", "precision"]
            .map(|f| MetricSpec::new(f, Some(50), Some(2.0), &[]).unwrap()),
    );
    // The counts (torchmetrics' drop-in asks for them beside its metric).
    m.extend([
        spec("num_ret", None),
        spec("num_ret", Some(3)),
        spec("num_rel", None),
        spec("num_rel_ret", None),
        spec("num_rel_ret", Some(3)),
        MetricSpec::new("num_rel", None, Some(2.0), &[]).unwrap(),
    ]);
    if many {
        m
    } else {
        // Below `PREFIX_FROM`: each kernel scans its own top k.
        vec![
            m[0].clone(),
            m[2].clone(),
            m[12].clone(),
            m[13].clone(),
            m[14].clone(),
        ]
    }
}

thread_local! {
    /// The best instruction set the sparse path may use, whatever the CPU has
    /// (read by `sparse::Simd::detect` in the calling thread).
    pub(super) static SIMD: std::cell::Cell<sparse::Simd> = const { std::cell::Cell::new(sparse::Simd::Avx512) };
}

fn bitwise_equal(a: &Result<DenseEvaluation>, b: &Result<DenseEvaluation>) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => {
            a.empty == b.empty
                && a.values.len() == b.values.len()
                && a.values
                    .iter()
                    .zip(&b.values)
                    .all(|(x, y)| x.to_bits() == y.to_bits())
        }
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// The sparse path gives the general path's values BIT FOR BIT (and its
    /// errors): ties, -0.0, negative and fractional labels, all-zero rows,
    /// `lengths=`, strided scores and labels, f16/bf16/f32/f64/int scores,
    /// int/float labels, every `empty=`, levels 0.5..2, rows counted or
    /// sorted (few or many labels), a NaN score, rows of more than 64
    /// and 128 cells with few labels (the label scan's chunks), every
    /// instruction set the CPU runs (portable, AVX2, AVX-512).
    #[test]
    fn sparse_equals_general_bit_for_bit(
        rows in 1usize..6,
        cols in prop_oneof![1usize..40, 60usize..140],
        seed in proptest::collection::vec((0u8..7, 0u8..8), 700),
        rare in any::<bool>(),
        lens in proptest::collection::vec(0i64..140, 6),
        dense_labels in any::<bool>(),
        nan_at in proptest::option::of(0usize..240),
        level in prop_oneof![Just(1.0), Just(0.5), Just(2.0)],
        many in any::<bool>(),
    ) {
        let n = rows * cols;
        // Few labels (one cell in eight at most): long rows take the sparse path.
        let seed: Vec<(u8, u8)> = seed.iter().map(|&(s, l)| (s, if rare && l != 7 { 0 } else { l })).collect();
        // Scores in 0, -0.0, 0.5 .. 3: exact in every float type, many ties.
        let vals = [0.0f64, -0.0, 0.5, 1.0, 1.5, 2.0, 3.0];
        let f16_bits = [0x0000u16, 0x8000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200];
        let mut s64: Vec<f64> = seed[..n].iter().map(|&(s, _)| vals[s as usize]).collect();
        if let Some(c) = nan_at.filter(|&c| c < n) {
            s64[c] = f64::NAN;
        }
        let s32: Vec<f32> = s64.iter().map(|&x| x as f32).collect();
        let s16: Vec<u16> = seed[..n].iter().enumerate().map(|(c, &(s, _))| if s64[c].is_nan() { 0x7E00 } else { f16_bits[s as usize] }).collect();
        let sb16: Vec<u16> = s32.iter().map(|x| (x.to_bits() >> 16) as u16).collect();
        let si: Vec<i32> = seed[..n].iter().map(|&(s, _)| s as i32 - 2).collect();
        let pick = |l: u8| if dense_labels { [0.0, 1.0, 2.0, -1.0, 3.0, 0.5, 1.0, 2.0][l as usize] } else { [0.0, 0.0, 0.0, 0.0, -1.0, 0.5, 1.0, 3.0][l as usize] };
        let l64: Vec<f64> = seed[..n].iter().map(|&(_, l)| pick(l)).collect();
        let li: Vec<i64> = seed[..n].iter().map(|&(_, l)| [0, 0, 1, -1, 2, 0, 3, 1][l as usize]).collect();
        // Column-major copies, read through strides.
        let t = |i: usize, j: usize| i * cols + j;
        let ts32: Vec<f32> = (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j))).map(|(i, j)| s32[t(i, j)]).collect();
        let tl64: Vec<f64> = (0..cols).flat_map(|j| (0..rows).map(move |i| (i, j))).map(|(i, j)| l64[t(i, j)]).collect();
        let lengths: Vec<i64> = lens[..rows].iter().map(|&l| l.min(cols as i64)).collect();
        let scores = [
            f64s(&s64, rows, cols),
            Numbers::F32(Matrix::contiguous(&s32, rows, cols).unwrap()),
            Numbers::F32(Matrix::new(&ts32, rows, cols, 1, rows).unwrap()),
            Numbers::F16(Matrix::contiguous(&s16, rows, cols).unwrap()),
            Numbers::Bf16(Matrix::contiguous(&sb16, rows, cols).unwrap()),
            Numbers::I32(Matrix::contiguous(&si, rows, cols).unwrap()),
        ];
        let l32: Vec<f32> = l64.iter().map(|&x| x as f32).collect();
        let li32: Vec<i32> = li.iter().map(|&x| x as i32).collect();
        let li8: Vec<i8> = li.iter().map(|&x| x as i8).collect();
        let lu8: Vec<u8> = li.iter().map(|&x| x.max(0) as u8).collect();
        let labels = [
            f64s(&l64, rows, cols),
            Numbers::F64(Matrix::new(&tl64, rows, cols, 1, rows).unwrap()),
            Numbers::F32(Matrix::contiguous(&l32, rows, cols).unwrap()),
            Numbers::I64(Matrix::contiguous(&li, rows, cols).unwrap()),
            Numbers::I32(Matrix::contiguous(&li32, rows, cols).unwrap()),
            Numbers::I8(Matrix::contiguous(&li8, rows, cols).unwrap()),
            Numbers::U8(Matrix::contiguous(&lu8, rows, cols).unwrap()),
        ];
        let m = sparse_metrics(many);
        for valid in [Valid::All, Valid::Lengths(&lengths)] {
            prop_assert!(sparse::plan(&m, level, DenseTies::First, &valid).is_some());
            for sc in &scores {
                for lb in &labels {
                    for empty in [Empty::Zero, Empty::One, Empty::Nan, Empty::Skip] {
                        let fast = dense_path(sc, lb, &valid, &m, level, DenseTies::First, empty, false, &Cancel::default());
                        let general = dense_path(sc, lb, &valid, &m, level, DenseTies::First, empty, true, &Cancel::default());
                        prop_assert!(bitwise_equal(&fast, &general), "{sc:?} {lb:?} {valid:?} {empty:?}:\n{fast:?}\n{general:?}");
                        for simd in sparse::Simd::available() {
                            SIMD.with(|c| c.set(simd));
                            let fast = dense_path(sc, lb, &valid, &m, level, DenseTies::First, empty, false, &Cancel::default());
                            SIMD.with(|c| c.set(sparse::Simd::Avx512));
                            prop_assert!(bitwise_equal(&fast, &general), "{simd:?} {sc:?} {lb:?} {valid:?} {empty:?}");
                        }
                    }
                }
            }
        }
    }
}

/// One row's values (or error) on the sparse path equal the general path's,
/// bit for bit, with every instruction set the CPU runs; the general path's
/// result is returned.
fn assert_sparse_is_general(
    sc: &Numbers<'_>,
    lb: &Numbers<'_>,
    m: &[MetricSpec],
    empty: Empty,
    what: &str,
) -> Result<DenseEvaluation> {
    let path = |general| {
        dense_path(
            sc,
            lb,
            &Valid::All,
            m,
            1.0,
            DenseTies::First,
            empty,
            general,
            &Cancel::default(),
        )
    };
    let general = path(true);
    for simd in sparse::Simd::available() {
        SIMD.with(|c| c.set(simd));
        let fast = path(false);
        SIMD.with(|c| c.set(sparse::Simd::Avx512));
        assert!(
            bitwise_equal(&fast, &general),
            "{simd:?} {what}: {fast:?} {general:?}"
        );
    }
    general
}

/// A label that is not finite, at every column of rows whose widths take
/// each step of the AVX-512 label scan (16 lanes, 8, the masked tail) and
/// of the NaN scan: the general path's error (naming the cell), with every
/// instruction set the CPU runs; float32 and float64 labels.
#[test]
fn label_scan_steps_see_every_label() {
    let m = sparse_metrics(false);
    for n in [7usize, 8, 15, 16, 17, 24, 31, 40, 100] {
        let s32: Vec<f32> = (0..n).map(|c| ((c * 37) % 11) as f32).collect();
        let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            for j in 0..n {
                let mut l64: Vec<f64> = (0..n).map(|c| f64::from(u8::from(c % 5 == 1))).collect();
                l64[j] = bad;
                let l32: Vec<f32> = l64.iter().map(|&x| x as f32).collect();
                let labels = [
                    Numbers::F64(Matrix::contiguous(&l64, 1, n).unwrap()),
                    Numbers::F32(Matrix::contiguous(&l32, 1, n).unwrap()),
                ];
                for lb in &labels {
                    let what = format!("n={n} j={j} {bad}");
                    let general = assert_sparse_is_general(&sc, lb, &m, Empty::Zero, &what);
                    assert!(general.is_err(), "{what}");
                }
            }
        }
    }
    // A NaN score at every column: the same, in rows of few positive cells
    // (found by the first pass of counts), of 9 to 16 (n = 60: 12) and of
    // more (n = 100: 20), and in rows whose positive labels are none
    // relevant (0.5: the scan before the early return).
    for n in [7usize, 16, 17, 40, 60, 100] {
        let li: Vec<i64> = (0..n).map(|c| i64::from(c % 5 == 1)).collect();
        let lf: Vec<f64> = (0..n).map(|c| if c % 5 == 1 { 0.5 } else { 0.0 }).collect();
        let labels = [
            Numbers::I64(Matrix::contiguous(&li, 1, n).unwrap()),
            Numbers::F64(Matrix::contiguous(&lf, 1, n).unwrap()),
        ];
        for lb in &labels {
            for j in 0..n {
                let mut s32: Vec<f32> = (0..n).map(|c| ((c * 37) % 11) as f32).collect();
                s32[j] = f32::NAN;
                let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
                let what = format!("n={n} NaN score at {j} {lb:?}");
                let general = assert_sparse_is_general(&sc, lb, &m, Empty::Zero, &what);
                assert!(general.is_err(), "{what}");
            }
        }
    }
}

/// Infinite scores are scores: `+inf` and `-inf` in one row (whose sum, by
/// which the first pass of counts looks for a NaN, is NaN) and either alone,
/// at every pair of columns, positive cells among them: the general path's
/// values, bit for bit, with every instruction set the CPU runs.
#[test]
fn infinite_scores_rank_as_the_general_path() {
    let m = sparse_metrics(false);
    for n in [9usize, 17, 40] {
        let li: Vec<i64> = (0..n)
            .map(|c| i64::from(c % 3 == 1) * (1 + (c % 2) as i64))
            .collect();
        let lb = Numbers::I64(Matrix::contiguous(&li, 1, n).unwrap());
        for (top, bottom) in [
            (f32::INFINITY, f32::NEG_INFINITY),
            (f32::INFINITY, 0.5),
            (2.0, f32::NEG_INFINITY),
        ] {
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    let mut s32: Vec<f32> = (0..n).map(|c| ((c * 37) % 11) as f32 / 8.0).collect();
                    s32[a] = top;
                    s32[b] = bottom;
                    let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
                    let what = format!("n={n} {top} at {a}, {bottom} at {b}");
                    let general = assert_sparse_is_general(&sc, &lb, &m, Empty::Zero, &what);
                    assert!(general.is_ok(), "{what}");
                }
            }
        }
    }
}

/// The first columns of wider rows (a view: rows apart in memory, read
/// with the rows ahead asked for) and `lengths=` over several blocks of
/// rows: the values of the same cells copied to narrow arrays, bit for
/// bit, with every instruction set the CPU runs.
#[test]
fn views_of_wider_rows_equal_their_copies() {
    let (rows, wide, cols) = (300, 40, 11);
    let mut next = xorshift(7);
    let s32: Vec<f32> = (0..rows * wide)
        .map(|_| (next() % 64) as f32 / 8.0)
        .collect();
    let li: Vec<i64> = (0..rows * wide)
        .map(|_| {
            if next() % 100 < 8 {
                1 + (next() % 3) as i64
            } else {
                0
            }
        })
        .collect();
    let narrow = |v: &[f32]| -> Vec<f32> {
        (0..rows)
            .flat_map(|i| v[i * wide..i * wide + cols].to_vec())
            .collect()
    };
    let (ns, nl): (Vec<f32>, Vec<i64>) = (
        narrow(&s32),
        (0..rows)
            .flat_map(|i| li[i * wide..i * wide + cols].to_vec())
            .collect(),
    );
    let view = (
        Numbers::F32(Matrix::new(&s32, rows, cols, wide, 1).unwrap()),
        Numbers::I64(Matrix::new(&li, rows, cols, wide, 1).unwrap()),
    );
    let copy = (
        Numbers::F32(Matrix::contiguous(&ns, rows, cols).unwrap()),
        Numbers::I64(Matrix::contiguous(&nl, rows, cols).unwrap()),
    );
    let full = (
        Numbers::F32(Matrix::contiguous(&s32, rows, wide).unwrap()),
        Numbers::I64(Matrix::contiguous(&li, rows, wide).unwrap()),
    );
    let lens = vec![cols as i64; rows];
    let m = sparse_metrics(false);
    let want = dense_path(
        &copy.0,
        &copy.1,
        &Valid::All,
        &m,
        1.0,
        DenseTies::First,
        Empty::Nan,
        true,
        &Cancel::default(),
    );
    for simd in sparse::Simd::available() {
        SIMD.with(|c| c.set(simd));
        let a = dense_path(
            &view.0,
            &view.1,
            &Valid::All,
            &m,
            1.0,
            DenseTies::First,
            Empty::Nan,
            false,
            &Cancel::default(),
        );
        let b = dense_path(
            &full.0,
            &full.1,
            &Valid::Lengths(&lens),
            &m,
            1.0,
            DenseTies::First,
            Empty::Nan,
            false,
            &Cancel::default(),
        );
        SIMD.with(|c| c.set(sparse::Simd::Avx512));
        assert!(bitwise_equal(&a, &want), "{simd:?} view");
        assert!(bitwise_equal(&b, &want), "{simd:?} lengths");
    }
}

/// Rows with as many positive labels as the sparse path keeps
/// (`COUNT_PER_LOG2 * log2(n)`, up to 64 at `n < 2^16`), one fewer and one
/// or eight more, the positive cells together (the AVX-512 scan's 8-lane
/// stores at the last free slots) or spread: the general path's values bit
/// for bit, with every instruction set the CPU runs and the label dtypes
/// the AVX-512 kernel reads.
#[test]
fn rows_at_the_sparse_paths_limit_of_positive_labels() {
    let m = sparse_metrics(false);
    for n in [100usize, 4000, 65_535] {
        let log2n = usize::BITS as usize - n.leading_zeros() as usize;
        let limit = COUNT_PER_LOG2 * log2n;
        for p in [limit - 1, limit, limit + 1, limit + 8] {
            for spread in [false, true] {
                let step = if spread { n / p } else { 1 };
                let at = |j: usize| j % step == 0 && j / step < p;
                let li: Vec<i64> = (0..n)
                    .map(|j| if at(j) { 1 + (j % 3) as i64 } else { 0 })
                    .collect();
                let l64: Vec<f64> = li.iter().map(|&x| x as f64).collect();
                let li32: Vec<i32> = li.iter().map(|&x| x as i32).collect();
                let lu8: Vec<u8> = li.iter().map(|&x| x as u8).collect();
                let s32: Vec<f32> = (0..n).map(|j| ((j * 7919) % 1000) as f32).collect();
                let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
                let labels = [
                    Numbers::I64(Matrix::contiguous(&li, 1, n).unwrap()),
                    Numbers::F64(Matrix::contiguous(&l64, 1, n).unwrap()),
                    Numbers::I32(Matrix::contiguous(&li32, 1, n).unwrap()),
                    Numbers::U8(Matrix::contiguous(&lu8, 1, n).unwrap()),
                ];
                for (d, lb) in labels.iter().enumerate() {
                    let what = format!("n={n} p={p} spread={spread} label dtype {d}");
                    let _ = assert_sparse_is_general(&sc, lb, &m, Empty::Nan, &what);
                }
            }
        }
    }
}

/// Labels 1..3 at `k <= row.len()` random columns of a row of zeros.
fn place_positive_labels(row: &mut [i64], k: usize, next: &mut impl FnMut() -> u64) {
    let mut placed = 0;
    while placed < k {
        let j = (next() % row.len() as u64) as usize;
        if row[j] == 0 {
            row[j] = 1 + (next() % 3) as i64;
            placed += 1;
        }
    }
}

/// Every count of positive cells a row of 100 can have on the sparse path (0
/// to its limit of 28, and one more): the AVX-512 row's three ways (up to 8
/// cells in one register, 9 to 16 in two, more through the bitmap of ranks),
/// with distinct scores, with scores tied in fours (positive cells tied with
/// each other and with zero-label cells), and with integer and fractional
/// labels: the general path's values bit for bit, with every instruction set
/// the CPU runs.
#[test]
fn every_count_of_positive_cells_in_a_row_of_100() {
    let n = 100usize;
    let m = sparse_metrics(false);
    let mut next = xorshift(7);
    for p in 0..=29usize {
        for tied in [false, true] {
            // A permutation's cells get distinct scores; `/ 4` ties them in fours.
            let s32: Vec<f32> = (0..n)
                .map(|j| {
                    let v = ((j * 37) % n) as f32;
                    if tied {
                        (v / 4.0).floor()
                    } else {
                        v
                    }
                })
                .collect();
            let mut li = vec![0i64; n];
            place_positive_labels(&mut li, p, &mut next);
            let l64: Vec<f64> = li
                .iter()
                .map(|&x| if x == 2 { 1.5 } else { x as f64 })
                .collect();
            let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
            for lb in [
                Numbers::I64(Matrix::contiguous(&li, 1, n).unwrap()),
                Numbers::F64(Matrix::contiguous(&l64, 1, n).unwrap()),
            ] {
                let what = format!("p={p} tied={tied} {lb:?}");
                let _ = assert_sparse_is_general(&sc, &lb, &m, Empty::Nan, &what);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Many rows: the sparse path's blocks of `sparse::BLOCK` rows, rows it
    /// leaves to the general path (many positive labels) among them, and
    /// `lengths=`, with every instruction set the CPU runs: the general path's
    /// values bit for bit.
    #[test]
    fn sparse_blocks_equal_general_bit_for_bit(
        rows in 60usize..200,
        cols in prop_oneof![1usize..20, 60usize..80],
        seed in any::<u64>(),
        lengths in any::<bool>(),
    ) {
        let mut next = xorshift(seed);
        let n = rows * cols;
        let s32: Vec<f32> = (0..n).map(|_| (next() % 16) as f32 / 4.0).collect();
        // One row in five with many labels (the general path), the others few.
        let li: Vec<i64> = (0..n)
            .map(|c| {
                let r = next();
                let dense = (c / cols) % 5 == 0;
                if r % 100 < if dense { 60 } else { 6 } { 1 + (r >> 32) as i64 % 3 } else { 0 }
            })
            .collect();
        let lens: Vec<i64> = (0..rows).map(|_| (next() % (cols as u64 + 1)) as i64).collect();
        let sc = Numbers::F32(Matrix::contiguous(&s32, rows, cols).unwrap());
        let lb = Numbers::I64(Matrix::contiguous(&li, rows, cols).unwrap());
        let valid = if lengths { Valid::Lengths(&lens) } else { Valid::All };
        let m = sparse_metrics(false);
        let general = dense_path(&sc, &lb, &valid, &m, 1.0, DenseTies::First, Empty::Nan, true, &Cancel::default());
        for simd in sparse::Simd::available() {
            SIMD.with(|c| c.set(simd));
            let fast = dense_path(&sc, &lb, &valid, &m, 1.0, DenseTies::First, Empty::Nan, false, &Cancel::default());
            SIMD.with(|c| c.set(sparse::Simd::Avx512));
            prop_assert!(bitwise_equal(&fast, &general), "{simd:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Flat cells of sorted `indexes`, many groups of any length (the blocks of
    /// `sparse::BLOCK` groups, `sparse::Layout::Runs`), groups left to the
    /// general path (many positive labels, a NaN score) among them, float32
    /// scores with every label dtype the AVX-512 kernel reads, contiguous and
    /// strided, with every instruction set the CPU runs: the general path's
    /// values bit for bit (and its errors); groups of equal length: the dense
    /// path's values on the same cells as a matrix.
    #[test]
    fn flat_blocks_equal_general_and_dense_bit_for_bit(
        groups in 60usize..200,
        long in any::<bool>(),
        equal in any::<bool>(),
        seed in any::<u64>(),
        nan in any::<bool>(),
        level in prop_oneof![Just(1.0), Just(0.5)],
    ) {
        let mut next = xorshift(seed);
        let width = if long { 90 } else { 12 };
        let lens: Vec<usize> = (0..groups)
            .map(|_| if equal { width } else { 1 + (next() % width as u64) as usize })
            .collect();
        let idx: Vec<i64> = lens.iter().enumerate().flat_map(|(g, &l)| std::iter::repeat(3 * g as i64 - 7).take(l)).collect();
        let n = idx.len();
        let mut s32: Vec<f32> = (0..n).map(|_| (next() % 16) as f32 / 4.0 - 1.0).collect();
        if nan {
            s32[(next() % n as u64) as usize] = f32::NAN;
        }
        // One group in five with many labels (the general path), the others few.
        let li: Vec<i64> = idx
            .iter()
            .map(|&g| {
                let r = next();
                let dense = g.rem_euclid(5) == 0;
                if r % 100 < if dense { 60 } else { 6 } { 1 + (r >> 32) as i64 % 3 } else { (r >> 40) as i64 % 2 - 1 }
            })
            .collect();
        let l64: Vec<f64> = li.iter().map(|&l| l as f64 * 0.75).collect();
        let l32: Vec<f32> = l64.iter().map(|&l| l as f32).collect();
        let li32: Vec<i32> = li.iter().map(|&l| l as i32).collect();
        let li8: Vec<i8> = li.iter().map(|&l| l as i8).collect();
        let lu8: Vec<u8> = li.iter().map(|&l| l.max(0) as u8).collect();
        let w32: Vec<f32> = s32.iter().flat_map(|&x| [x, 5.0]).collect();
        let wl: Vec<i64> = li.iter().flat_map(|&x| [x, 2]).collect();
        let sc = Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap());
        let cases = [
            (sc, Numbers::I64(Matrix::contiguous(&li, 1, n).unwrap())),
            (sc, Numbers::I32(Matrix::contiguous(&li32, 1, n).unwrap())),
            (sc, Numbers::I8(Matrix::contiguous(&li8, 1, n).unwrap())),
            (sc, Numbers::U8(Matrix::contiguous(&lu8, 1, n).unwrap())),
            (sc, Numbers::F64(Matrix::contiguous(&l64, 1, n).unwrap())),
            (sc, Numbers::F32(Matrix::contiguous(&l32, 1, n).unwrap())),
            (
                Numbers::F32(Matrix::new(&w32, 1, n, 0, 2).unwrap()),
                Numbers::I64(Matrix::new(&wl, 1, n, 0, 2).unwrap()),
            ),
        ];
        let g = group_flat(&idx);
        prop_assert!(g.place.is_empty());
        let m = sparse_metrics(false);
        for (sc, lb) in &cases {
            let general = flat_path(sc, lb, &g, &m, level, DenseTies::First, Empty::Nan, true, &Cancel::default());
            for simd in sparse::Simd::available() {
                SIMD.with(|c| c.set(simd));
                let fast = flat_path(sc, lb, &g, &m, level, DenseTies::First, Empty::Nan, false, &Cancel::default());
                SIMD.with(|c| c.set(sparse::Simd::Avx512));
                prop_assert!(bitwise_equal(&fast, &general), "{simd:?} {lb:?}:\n{fast:?}\n{general:?}");
            }
            if equal && !nan {
                // The same cells as a groups x width matrix, scored by the dense path.
                let (Some(ms), Some(ml)) = (reshape(sc, groups, width), reshape(lb, groups, width)) else {
                    continue;
                };
                let dense = dense_path(&ms, &ml, &Valid::All, &m, level, DenseTies::First, Empty::Nan, false, &Cancel::default());
                prop_assert!(bitwise_equal(&dense, &general), "{lb:?}");
            }
        }
    }
}

/// A one-row matrix as `rows x cols` (row after row of its cells).
fn reshape<'a>(x: &Numbers<'a>, rows: usize, cols: usize) -> Option<Numbers<'a>> {
    fn m<'a, T: Copy>(a: &Matrix<'a, T>, rows: usize, cols: usize) -> Option<Matrix<'a, T>> {
        Matrix::new(a.data, rows, cols, cols * a.col_stride, a.col_stride).ok()
    }
    Some(match x {
        Numbers::F32(a) => Numbers::F32(m(a, rows, cols)?),
        Numbers::F64(a) => Numbers::F64(m(a, rows, cols)?),
        Numbers::I64(a) => Numbers::I64(m(a, rows, cols)?),
        Numbers::I32(a) => Numbers::I32(m(a, rows, cols)?),
        Numbers::I8(a) => Numbers::I8(m(a, rows, cols)?),
        Numbers::U8(a) => Numbers::U8(m(a, rows, cols)?),
        _ => return None,
    })
}

#[test]
fn sparse_path_applies_only_where_its_rules_hold() {
    let m = sparse_metrics(false);
    assert!(sparse::plan(&m, 1.0, DenseTies::First, &Valid::All).is_some());
    let all = sparse_metrics(true);
    assert!(sparse::plan(&all, 1.0, DenseTies::First, &Valid::All).is_some());
    for ties in [DenseTies::Expected, DenseTies::Best, DenseTies::Worst] {
        assert!(sparse::plan(&m, 1.0, ties, &Valid::All).is_none());
    }
    // Level 0: label-0 cells are relevant.
    assert!(sparse::plan(&m, 0.0, DenseTies::First, &Valid::All).is_none());
    let own0 = [MetricSpec::new("map", None, Some(0.0), &[]).unwrap()];
    assert!(sparse::plan(&own0, 1.0, DenseTies::First, &Valid::All).is_none());
    let mask = [1u8; 4];
    let mm = Valid::Mask(Matrix::contiguous(&mask, 2, 2).unwrap());
    assert!(sparse::plan(&m, 1.0, DenseTies::First, &mm).is_none());
    let gains = [MetricSpec::new("ndcg", None, None, &[("gain1".into(), 5.0)]).unwrap()];
    assert!(sparse::plan(&gains, 1.0, DenseTies::First, &Valid::All).is_none());
    assert!(sparse::plan(&[spec("bpref", None)], 1.0, DenseTies::First, &Valid::All).is_none());
}

proptest! {
    /// Flat cells: the sparse path on each run of grouped cells gives the
    /// general path's values bit for bit (and its errors), contiguous or
    /// strided (every other cell of a longer array), f32/f64/f16 scores.
    #[test]
    fn flat_sparse_equals_general_bit_for_bit(
        cells in proptest::collection::vec((0u8..7, 0u8..8, 0i64..5), 0..80),
        nan_at in proptest::option::of(0usize..80),
        level in prop_oneof![Just(1.0), Just(0.5)],
        many in any::<bool>(),
    ) {
        let n = cells.len();
        let vals = [0.0f64, -0.0, 0.5, 1.0, 1.5, 2.0, 3.0];
        let f16_bits = [0x0000u16, 0x8000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200];
        let mut s64: Vec<f64> = cells.iter().map(|c| vals[c.0 as usize]).collect();
        let mut s16: Vec<u16> = cells.iter().map(|c| f16_bits[c.0 as usize]).collect();
        if let Some(c) = nan_at.filter(|&c| c < n) {
            s64[c] = f64::NAN;
            s16[c] = 0x7E00;
        }
        let s32: Vec<f32> = s64.iter().map(|&x| x as f32).collect();
        let labels: Vec<f64> = cells.iter().map(|c| [0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 0.5, 3.0][c.1 as usize]).collect();
        let mut idx: Vec<i64> = cells.iter().map(|c| c.2).collect();
        idx.sort();
        // Strided copies: every other cell of a twice-longer array.
        let w64: Vec<f64> = s64.iter().flat_map(|&x| [x, 7.0]).collect();
        let wl: Vec<f64> = labels.iter().flat_map(|&x| [x, 9.0]).collect();
        let g = group_flat(&idx);
        let m = sparse_metrics(many);
        let lab = f64s(&labels, 1, n);
        let cases = [
            (f64s(&s64, 1, n), lab),
            (Numbers::F32(Matrix::contiguous(&s32, 1, n).unwrap()), lab),
            (Numbers::F16(Matrix::contiguous(&s16, 1, n).unwrap()), lab),
            (
                Numbers::F64(Matrix::new(&w64, 1, n, 0, 2).unwrap()),
                Numbers::F64(Matrix::new(&wl, 1, n, 0, 2).unwrap()),
            ),
        ];
        for (sc, lb) in &cases {
            for empty in [Empty::Zero, Empty::Nan] {
                let fast = flat_path(sc, lb, &g, &m, level, DenseTies::First, empty, false, &Cancel::default());
                let general = flat_path(sc, lb, &g, &m, level, DenseTies::First, empty, true, &Cancel::default());
                prop_assert!(bitwise_equal(&fast, &general), "{sc:?}:\n{fast:?}\n{general:?}");
            }
        }
    }
}

proptest! {
    /// Flat cells with unsorted `indexes`: copied into group order and scored
    /// as runs, they give bit for bit what the general path gives on the same
    /// cells stably sorted by index beforehand (ties in input order), through
    /// the sparse path or the general one, contiguous or strided, f32/f64/f16
    /// scores, int/float labels; a NaN names its input cell.
    #[test]
    fn flat_shuffled_equals_presorted_bit_for_bit(
        cells in proptest::collection::vec((0u8..7, 0u8..8, -3i64..5), 0..120),
        nan_at in proptest::option::of(0usize..120),
        level in prop_oneof![Just(1.0), Just(0.5)],
        many in any::<bool>(),
        wide in any::<bool>(),
    ) {
        let n = cells.len();
        let vals = [0.0f64, -0.0, 0.5, 1.0, 1.5, 2.0, 3.0];
        let f16_bits = [0x0000u16, 0x8000, 0x3800, 0x3C00, 0x3E00, 0x4000, 0x4200];
        let nan = nan_at.filter(|&c| c < n);
        let score = |c: usize| if Some(c) == nan { f64::NAN } else { vals[cells[c].0 as usize] };
        let half = |c: usize| if Some(c) == nan { 0x7E00 } else { f16_bits[cells[c].0 as usize] };
        let label = |c: usize| [0.0, 0.0, 0.0, 1.0, 2.0, -1.0, 0.5, 3.0][cells[c].1 as usize];
        // Index values spanning a range wider than the cells take the hash
        // map's grouping.
        let idx: Vec<i64> = cells.iter().map(|c| if wide { c.2 * 1_000_003 } else { c.2 }).collect();
        let mut sorted: Vec<usize> = (0..n).collect();
        sorted.sort_by_key(|&c| idx[c]);
        let build = |order: &[usize]| {
            let s64: Vec<f64> = order.iter().map(|&c| score(c)).collect();
            let s16: Vec<u16> = order.iter().map(|&c| half(c)).collect();
            let l64: Vec<f64> = order.iter().map(|&c| label(c)).collect();
            let li: Vec<i64> = order.iter().map(|&c| label(c).floor() as i64).collect();
            (s64, s16, l64, li)
        };
        let input: Vec<usize> = (0..n).collect();
        let (a64, a16, al, ai) = build(&input);
        let (b64, b16, bl, bi) = build(&sorted);
        let a32: Vec<f32> = a64.iter().map(|&x| x as f32).collect();
        let b32: Vec<f32> = b64.iter().map(|&x| x as f32).collect();
        let aw: Vec<f64> = a64.iter().flat_map(|&x| [x, 7.0]).collect();
        let awl: Vec<i64> = ai.iter().flat_map(|&x| [x, 9]).collect();
        let g = group_flat(&idx);
        let mut sorted_idx = idx.clone();
        sorted_idx.sort();
        let gs = group_flat(&sorted_idx);
        prop_assert!(gs.place.is_empty());
        prop_assert_eq!(&g.keys, &gs.keys);
        let m = sparse_metrics(many);
        let cases = [
            (f64s(&a64, 1, n), f64s(&al, 1, n), f64s(&b64, 1, n), f64s(&bl, 1, n)),
            (
                Numbers::F32(Matrix::contiguous(&a32, 1, n).unwrap()),
                Numbers::I64(Matrix::contiguous(&ai, 1, n).unwrap()),
                Numbers::F32(Matrix::contiguous(&b32, 1, n).unwrap()),
                Numbers::I64(Matrix::contiguous(&bi, 1, n).unwrap()),
            ),
            (
                Numbers::F16(Matrix::contiguous(&a16, 1, n).unwrap()),
                f64s(&al, 1, n),
                Numbers::F16(Matrix::contiguous(&b16, 1, n).unwrap()),
                f64s(&bl, 1, n),
            ),
            (
                Numbers::F64(Matrix::new(&aw, 1, n, 0, 2).unwrap()),
                Numbers::I64(Matrix::new(&awl, 1, n, 0, 2).unwrap()),
                f64s(&b64, 1, n),
                Numbers::I64(Matrix::contiguous(&bi, 1, n).unwrap()),
            ),
        ];
        for (sa, la, sb, lb) in &cases {
            for empty in [Empty::Zero, Empty::Nan] {
                let want = flat_path(sb, lb, &gs, &m, level, DenseTies::First, empty, true, &Cancel::default());
                let fast = flat_path(sa, la, &g, &m, level, DenseTies::First, empty, false, &Cancel::default());
                let general = flat_path(sa, la, &g, &m, level, DenseTies::First, empty, true, &Cancel::default());
                match nan {
                    // The presorted cells' message names their sorted place.
                    Some(c) => {
                        for got in [&fast, &general] {
                            let e = got.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
                            prop_assert!(e.contains(&format!("scores[{c}] is NaN")), "{e}");
                        }
                    }
                    None => {
                        prop_assert!(bitwise_equal(&fast, &want), "{sa:?}:\n{fast:?}\n{want:?}");
                        prop_assert!(bitwise_equal(&general, &want), "{sa:?}:\n{general:?}\n{want:?}");
                    }
                }
            }
        }
    }
}

/// Large shuffled flat cells (past one task's `SORTED_CHUNK`), grouped and
/// copied by parts on pools of 2 and 3 threads: the same places, groups and
/// values, bit for bit, as on one thread, for index values in a narrow range
/// (counters) and a wide one (hash map), and the values of the same cells
/// presorted; a NaN names its input cell on every pool.
#[test]
fn flat_shuffled_by_parts_equals_one_thread() {
    let n = 3 * SORTED_CHUNK + 17;
    let mut next = xorshift(0x005E_ED0F_F1A7);
    let idx: Vec<i64> = (0..n).map(|_| (next() % 2_000) as i64 - 300).collect();
    let scores: Vec<f32> = (0..n).map(|_| (next() % 64) as f32 / 8.0).collect();
    let labels: Vec<i64> = (0..n)
        .map(|_| [0, 0, 0, 0, 1, 2, 3, -1][(next() % 8) as usize])
        .collect();
    let l8: Vec<u8> = labels.iter().map(|&l| l.max(0) as u8).collect();
    let m = sparse_metrics(true);
    let pool = |t: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    for wide in [false, true] {
        let idx: Vec<i64> = idx
            .iter()
            .map(|&x| if wide { x * 1_000_003 } else { x })
            .collect();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&c| idx[c]);
        let sorted_idx: Vec<i64> = order.iter().map(|&c| idx[c]).collect();
        let ss: Vec<f32> = order.iter().map(|&c| scores[c]).collect();
        let sl: Vec<i64> = order.iter().map(|&c| labels[c]).collect();
        let gs = group_flat(&sorted_idx);
        let want = flat_path(
            &Numbers::F32(Matrix::contiguous(&ss, 1, n).unwrap()),
            &Numbers::I64(Matrix::contiguous(&sl, 1, n).unwrap()),
            &gs,
            &m,
            1.0,
            DenseTies::First,
            Empty::Nan,
            true,
            &Cancel::default(),
        );
        let one = pool(1).install(|| group_flat(&idx));
        assert!(
            one.keys == gs.keys && one.offsets == gs.offsets,
            "wide {wide}"
        );
        for t in [1, 2, 3] {
            let g = pool(t).install(|| group_flat(&idx));
            assert!(g == one, "{t} threads, wide {wide}");
            let sc = Numbers::F32(Matrix::contiguous(&scores, 1, n).unwrap());
            for lb in [
                Numbers::I64(Matrix::contiguous(&labels, 1, n).unwrap()),
                Numbers::U8(Matrix::contiguous(&l8, 1, n).unwrap()),
            ] {
                let got = pool(t).install(|| {
                    flat_path(
                        &sc,
                        &lb,
                        &g,
                        &m,
                        1.0,
                        DenseTies::First,
                        Empty::Nan,
                        false,
                        &Cancel::default(),
                    )
                });
                assert!(bitwise_equal(&got, &want), "{t} threads, wide {wide}");
            }
            let mut bad = scores.clone();
            bad[n - 5] = f32::NAN;
            let sc = Numbers::F32(Matrix::contiguous(&bad, 1, n).unwrap());
            let lb = Numbers::I64(Matrix::contiguous(&labels, 1, n).unwrap());
            let e = pool(t).install(|| {
                flat_path(
                    &sc,
                    &lb,
                    &g,
                    &m,
                    1.0,
                    DenseTies::First,
                    Empty::Nan,
                    false,
                    &Cancel::default(),
                )
            });
            let e = e.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(&format!("scores[{}] is NaN", n - 5)), "{e}");
        }
    }
}

/// CPU time of the sparse path on the benchmark's data (100k x 100 float32
/// scores, 5% int64 labels 1..3, five metrics) on one thread, with every
/// instruction set the CPU runs: `cargo test --release --lib dense_timing --
/// --ignored --nocapture` (no asserts on time).  `ROWS=1000` times the same
/// 100k rows' work as 100 calls on 1000 rows, which stay in the caches: the
/// difference is what reading the matrices costs.  `SIMD=avx512` (or
/// `avx2`, `portable`) times that instruction set only; `POSITIVES=k` gives
/// every row exactly `k` positive labels, `LABELS=int8` or `float32` the
/// labels in that dtype.  Each timed call's values are checked against the
/// general path's, bit for bit, unless `NOCHECK` is set (to time a build with
/// some part cut out, whose values are wrong).
#[cfg(target_os = "linux")]
#[test]
#[ignore]
fn dense_timing() {
    let rows = std::env::var("ROWS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&r| (1..=100_000).contains(&r))
        .unwrap_or(100_000);
    let (cols, calls) = (100usize, 100_000 / rows);
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let scores: Vec<f32> = (0..rows * cols)
        .map(|_| (next() >> 40) as f32 / (1u64 << 24) as f32)
        .collect();
    let mut labels: Vec<i64> = (0..rows * cols)
        .map(|_| {
            let r = next();
            if r % 100 < 5 {
                1 + ((r >> 32) % 3) as i64
            } else {
                0
            }
        })
        .collect();
    // `POSITIVES=k`: every row with exactly `k` positive labels instead.
    if let Some(k) = std::env::var("POSITIVES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&k| k <= cols)
    {
        for row in labels.chunks_mut(cols) {
            row.fill(0);
            place_positive_labels(row, k, &mut next);
        }
    }
    let sc = Numbers::F32(Matrix::contiguous(&scores, rows, cols).unwrap());
    // `LABELS=int8` or `float32`: the same labels in that dtype (converted
    // only when asked for).
    let (l8, l32): (Vec<i8>, Vec<f32>);
    let lb = match std::env::var("LABELS").as_deref() {
        Ok("int8") => {
            l8 = labels.iter().map(|&x| x as i8).collect();
            Numbers::I8(Matrix::contiguous(&l8, rows, cols).unwrap())
        }
        Ok("float32") => {
            l32 = labels.iter().map(|&x| x as f32).collect();
            Numbers::F32(Matrix::contiguous(&l32, rows, cols).unwrap())
        }
        _ => Numbers::I64(Matrix::contiguous(&labels, rows, cols).unwrap()),
    };
    let m = [
        spec("ndcg", Some(10)),
        spec("map", None),
        spec("mrr", None),
        spec("recall", Some(10)),
        spec("precision", Some(10)),
    ];
    let cpu = || {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec to write.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    // `general`: every row by the general path (the values to match).
    let run = |general: bool| {
        dense_path(
            &sc,
            &lb,
            &Valid::All,
            &m,
            1.0,
            DenseTies::First,
            Empty::Zero,
            general,
            &Cancel::default(),
        )
    };
    let want = run(true);
    let nocheck = std::env::var("NOCHECK").is_ok();
    // `SIMD=avx512` (or `portable`, `avx2`): time that path only.
    let only = std::env::var("SIMD").ok();
    let paths: Vec<sparse::Simd> = sparse::Simd::available()
        .into_iter()
        .filter(|s| {
            only.as_ref()
                .map_or(true, |o| format!("{s:?}").eq_ignore_ascii_case(o))
        })
        .collect();
    for round in 0..3 {
        for &simd in &paths {
            SIMD.with(|c| c.set(simd));
            let ms: Vec<f64> = (0..7)
                .map(|_| {
                    pool.install(|| {
                        SIMD.with(|c| c.set(simd));
                        let t = cpu();
                        for _ in 1..calls {
                            let _ = std::hint::black_box(run(false));
                        }
                        let e = run(false);
                        let dt = cpu() - t;
                        assert!(nocheck || bitwise_equal(&e, &want));
                        dt
                    })
                })
                .collect();
            let mut sorted = ms.clone();
            sorted.sort_by(f64::total_cmp);
            println!(
                "round {round} {simd:?}: min {:.2} ms, median {:.2} ms",
                sorted[0], sorted[3]
            );
        }
    }
    SIMD.with(|c| c.set(sparse::Simd::Avx512));
}

#[test]
fn a_count_past_the_memory_is_an_error() {
    assert!(super::filled(usize::MAX, 2, 0.0).is_err());
    assert!(super::filled(1 << 40, 1 << 20, false).is_err());
    assert_eq!(super::filled(2, 3, 1.0).ok(), Some(vec![1.0; 6]));
}

#[test]
fn a_row_past_the_memory_is_an_error_before_any_allocation() {
    // 2^60 cells of working memory a thread: the byte count overflows.
    let e = row_room(1, 1 << 60).unwrap_err().to_string();
    assert!(e.contains("1 rows x 1152921504606846976 cells"), "{e}");
    assert!(e.contains("does not fit in memory"), "{e}");
    assert!(row_room(1000, 100).is_ok());
    assert!(row_room(0, 0).is_ok());
}

#[test]
fn the_fast_path_leaves_labels_past_its_bound_to_the_general_path() {
    // nDCG@2 over an ideal DCG past the largest float (1.7e308 + 1.7e308 /
    // log2 3) is the general path's error, with a positive cell in the top
    // and without one (where the fast path would not build the ideal).
    let m = [spec("ndcg", Some(2))];
    let scores = [4.0, 3.0, 2.0, 1.0];
    for labels in [[1.0, 1.7e308, 1.7e308, 0.0], [0.0, 0.0, 1.7e308, 1.7e308]] {
        let (s, l) = (f64s(&scores, 1, 4), f64s(&labels, 1, 4));
        for general in [false, true] {
            let r = dense_path(
                &s,
                &l,
                &Valid::All,
                &m,
                1.0,
                DenseTies::First,
                Empty::Zero,
                general,
                &Cancel::default(),
            );
            let e = r.unwrap_err().to_string();
            assert!(e.contains("past the largest float"), "{e}");
        }
    }
}
