//! Criterion benchmark of the pure Rust core (no Python): encoding a run, and
//! `evaluate` with 1 metric and with the 40-metric set of `metric_sets.py`, on
//! 1 and 2 threads.
//!
//! ```sh
//! cargo bench --bench kernels                 # full measurement
//! cargo bench --bench kernels -- --quick      # a quick estimate
//! ```
//!
//! The data are synthetic and deterministic (a splitmix64 stream, no extra
//! crates): 10,000 queries x 100 ranked documents (1M run rows) and 10 judged
//! documents per query (labels 0..3, about a quarter of them not retrieved);
//! about 10% of the scores repeat the score above them, so ties are broken by
//! document id as trec_eval does.  Throughput is reported in run rows.

use _ranklens::core::encode::{Builder, Encoded, Kind};
use _ranklens::core::eval::{evaluate, Options, Side};
use _ranklens::core::metrics::MetricSpec;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const QUERIES: usize = 10_000;
const DOCS_PER_QUERY: usize = 100;
const JUDGED_PER_QUERY: usize = 10;

/// splitmix64: a tiny deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Raw rows `(query, doc, value)` of the run and the qrels.
type Rows = Vec<(String, String, f64)>;

fn rows(seed: u64) -> (Rows, Rows) {
    let mut rng = Rng(seed);
    let mut run = Vec::with_capacity(QUERIES * DOCS_PER_QUERY);
    let mut qrels = Vec::with_capacity(QUERIES * JUDGED_PER_QUERY);
    for q in 0..QUERIES {
        let qid = format!("q{q:06}");
        let docs: Vec<String> = (0..DOCS_PER_QUERY)
            .map(|_| format!("MARCO_D{:07}", rng.below(10_000_000)))
            .collect();
        // Scores in decreasing order with about 10% ties; written in a
        // shuffled order, so that encoding has to sort.
        let mut score = 10.0 + rng.unit();
        let mut ranked: Vec<(String, f64)> = Vec::with_capacity(DOCS_PER_QUERY);
        let mut seen = std::collections::HashSet::new();
        for d in &docs {
            if !seen.insert(d.clone()) {
                continue; // a document appears once per query
            }
            if rng.below(10) != 0 {
                score -= rng.unit() * 0.1;
            }
            ranked.push((d.clone(), (score as f32) as f64));
        }
        for i in (1..ranked.len()).rev() {
            ranked.swap(i, rng.below(i as u64 + 1) as usize);
        }
        // Judged: mostly retrieved documents, biased towards the top, plus
        // some that were not retrieved.
        let mut judged = std::collections::HashSet::new();
        for _ in 0..JUDGED_PER_QUERY {
            let doc = if rng.below(4) == 0 {
                format!(
                    "GX{:03}-{:02}-{:07}",
                    rng.below(1000),
                    rng.below(100),
                    rng.below(1 << 23)
                )
            } else {
                docs[rng.below(30) as usize].clone()
            };
            if judged.insert(doc.clone()) {
                qrels.push((qid.clone(), doc, rng.below(4) as f64));
            }
        }
        run.extend(ranked.into_iter().map(|(d, s)| (qid.clone(), d, s)));
    }
    (run, qrels)
}

fn encode(kind: Kind, rows: &Rows) -> Encoded {
    let mut b = Builder::new(kind, false);
    b.reserve(rows.len());
    for (q, d, v) in rows {
        b.push(q.as_bytes(), d.as_bytes(), *v).unwrap();
    }
    b.finish().unwrap()
}

fn side(e: &Encoded) -> Side<'_> {
    Side::of(e).unwrap()
}

/// The 40-metric set of `benches/metric_sets.py`, in ranklens's core spelling.
fn metrics_40() -> Vec<MetricSpec> {
    let mut specs: Vec<(&str, Option<usize>)> = Vec::new();
    for family in ["ndcg", "precision", "recall"] {
        for k in [1, 3, 5, 10, 20, 100] {
            specs.push((family, Some(k)));
        }
    }
    specs.extend([
        ("map", Some(10)),
        ("map", Some(100)),
        ("map", None),
        ("ndcg", None),
        ("mrr", None),
        ("mrr", Some(10)),
        ("bpref", None),
        ("r_precision", None),
        ("num_rel_ret", None),
        ("num_rel", None),
        ("num_ret", None),
    ]);
    for k in [1, 5, 10] {
        specs.push(("hit_rate", Some(k)));
    }
    for family in ["f1", "dcg", "ndcg_burges"] {
        for k in [5, 10] {
            specs.push((family, Some(k)));
        }
    }
    specs.extend([("hits", Some(10)), ("hits", Some(100))]);
    assert_eq!(specs.len(), 40);
    specs
        .into_iter()
        .map(|(name, k)| MetricSpec::new(name, k, None, &[]).unwrap())
        .collect()
}

fn benches(c: &mut Criterion) {
    let (run_rows, qrels_rows) = rows(0);
    let n_rows = run_rows.len() as u64;

    let mut group = c.benchmark_group("encode");
    group.sample_size(10);
    group.throughput(Throughput::Elements(n_rows));
    group.bench_function("run", |b| {
        b.iter(|| encode(Kind::Run, black_box(&run_rows)))
    });
    group.finish();

    let run = encode(Kind::Run, &run_rows);
    let qrels = encode(Kind::Qrels, &qrels_rows);
    let (run_side, qrels_side) = (side(&run), side(&qrels));
    let opts = Options::new(1.0);
    let sets = [
        (
            "1 metric",
            vec![MetricSpec::new("ndcg", Some(10), None, &[]).unwrap()],
        ),
        ("40 metrics", metrics_40()),
    ];

    let mut group = c.benchmark_group("evaluate");
    group.sample_size(20);
    group.throughput(Throughput::Elements(n_rows));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        for (label, metrics) in &sets {
            let id = BenchmarkId::new(*label, format!("{threads} threads"));
            // `install` per iteration (a few microseconds) runs `evaluate` in
            // the pool, whose rayon loop then uses the pool's threads.
            group.bench_function(id, |b| {
                b.iter(|| {
                    pool.install(|| {
                        evaluate(&qrels_side, &run_side, black_box(metrics), &opts).unwrap()
                    })
                })
            });
        }
    }
    group.finish();
}

criterion_group!(kernels, benches);
criterion_main!(kernels);
