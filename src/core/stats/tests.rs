use super::*;
use crate::core::eval::with_threads;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn rng_is_deterministic_and_uniform_enough() {
    let mut a = Rng::new(42);
    let mut b = Rng::new(42);
    for _ in 0..100 {
        assert_eq!(a.next_u64(), b.next_u64());
    }
    let mut r = Rng::new(7);
    let mut counts = [0usize; 10];
    for _ in 0..100_000 {
        counts[r.below(10)] += 1;
    }
    for c in counts {
        assert!((9_500..10_500).contains(&c), "{counts:?}");
    }
    assert_ne!(derive_seed(&[1, 2]), derive_seed(&[2, 1]));
}

#[test]
fn erfc_matches_reference_values() {
    // Reference values (Abramowitz & Stegun / high-precision tables).
    let cases = [
        (0.0, 1.0),
        (0.5, 0.479_500_122_186_953_5),
        (1.0, 0.157_299_207_050_285_13),
        (2.0, 0.004_677_734_981_047_266),
        (3.0, 2.209_049_699_858_544e-5),
        (5.0, 1.537_459_794_428_035e-12),
        (-1.0, 1.842_700_792_949_715),
    ];
    for (x, want) in cases {
        let got = erfc(x);
        assert!(
            ((got - want) / want).abs() < 1e-13,
            "erfc({x}) = {got}, want {want}"
        );
    }
    assert!(close(norm_cdf(1.959_963_984_540_054), 0.975, 1e-15));
}

#[test]
fn exact_sign_flip_small_case() {
    // d = [1, 2, 3]: sums over the 8 sign vectors: ±6, ±4, ±2, ±0 ->
    // |sum| >= 6 for 2 of 8.
    assert!(close(sign_flip_exact(&[1.0, 2.0, 3.0]).unwrap(), 0.25, 0.0));
    // all zero: every flip ties
    assert_eq!(sign_flip_exact(&[0.0, 0.0]).unwrap(), 1.0);
    assert!(sign_flip_exact(&[1.0; 31]).is_err());
}

#[test]
fn monte_carlo_sign_flip_converges_to_exact() {
    let d = [0.1, -0.05, 0.2, 0.3, 0.0, 0.15, -0.1, 0.25, 0.05, 0.12];
    let exact = sign_flip_exact(&d).unwrap();
    let r = 200_000u64;
    let p = (sign_flip_count(&d, r, 3) + 1) as f64 / (r + 1) as f64;
    let se = (exact * (1.0 - exact) / r as f64).sqrt();
    assert!((p - exact).abs() < 5.0 * se, "{p} vs {exact}");
}

#[test]
fn same_seed_same_result_any_thread_count() {
    let d: Vec<f64> = (0..37)
        .map(|i| ((i * 7919) % 13) as f64 / 10.0 - 0.5)
        .collect();
    let s = Settings {
        test: Test::Fisher,
        n_resamples: 10_001,
        seed: 9,
        exact: Some(false),
        level: 0.95,
    };
    let one = with_threads(Some(1), || resample_batch(&d, 37, &s)).unwrap();
    let two = with_threads(Some(2), || resample_batch(&d, 37, &s)).unwrap();
    assert_eq!(one, two);
    let b = Settings {
        test: Test::Bootstrap,
        ..s
    };
    let one = with_threads(Some(1), || resample_batch(&d, 37, &b)).unwrap();
    let two = with_threads(Some(3), || resample_batch(&d, 37, &b)).unwrap();
    assert_eq!(one, two);
}

#[test]
fn identical_runs_give_p_one_and_zero_ci() {
    let d = [0.0; 8];
    for test in [Test::Fisher, Test::Bootstrap] {
        for exact in [Some(false), None] {
            let s = Settings {
                test,
                n_resamples: 1000,
                seed: 0,
                exact,
                level: 0.95,
            };
            let out = resample_batch(&d, 8, &s).unwrap();
            assert_eq!(
                out,
                vec![Outcome {
                    p_value: 1.0,
                    ci_low: 0.0,
                    ci_high: 0.0
                }]
            );
        }
    }
}

#[test]
fn bad_settings_are_errors_not_panics() {
    let s = Settings {
        test: Test::Fisher,
        n_resamples: 0,
        seed: 0,
        exact: None,
        level: 0.95,
    };
    assert!(resample_batch(&[1.0], 1, &s).is_err());
    let s = Settings {
        n_resamples: 10,
        level: 1.0,
        ..s
    };
    assert!(resample_batch(&[1.0], 1, &s).is_err());
    let s = Settings { level: 0.9, ..s };
    assert!(resample_batch(&[1.0, f64::NAN], 2, &s).is_err());
    assert!(resample_batch(&[1.0, 2.0, 3.0], 2, &s).is_err());
    assert!(Test::from_name("nope").is_err());
    assert!(studentized_range_sf_many(&[1.0], 1, 3.0).is_err());
}

#[test]
fn bootstrap_ci_brackets_the_mean() {
    let d = [0.1, 0.2, 0.3, 0.4, 0.5, 0.05, 0.15, 0.25];
    let (lo, hi) = bootstrap_ci(&d, 5000, 1, 0.95);
    let m = mean(&d);
    assert!(lo < m && m < hi && lo > 0.0 && hi < 0.5);
    let mut v = vec![3.0, 1.0, 2.0, 4.0];
    assert_eq!(percentile(&mut v, 0.5), 2.5);
    assert_eq!(percentile(&mut v, 0.0), 1.0);
    assert_eq!(percentile(&mut v, 1.0), 4.0);
}

#[test]
fn studentized_range_two_groups_is_a_normal_tail() {
    // k = 2, df = inf: Q = |Z1 - Z2|, P(Q > q) = 2 Φ(-q / sqrt 2).
    for q in [0.5, 1.0, 2.5, 5.0] {
        let want = 2.0 * norm_cdf(-q / std::f64::consts::SQRT_2);
        let got = studentized_range_sf(q, 2, f64::INFINITY);
        assert!(close(got, want, 1e-13), "{q}: {got} vs {want}");
    }
    // Large df approaches df = inf.
    let a = studentized_range_sf(3.0, 4, 1e6);
    let b = studentized_range_sf(3.0, 4, f64::INFINITY);
    assert!(close(a, b, 1e-5), "{a} vs {b}");
    assert_eq!(studentized_range_sf(0.0, 3, 10.0), 1.0);
}

#[test]
fn a_set_flag_stops_the_batch() {
    let cancel = Cancel::new();
    cancel.cancel();
    let s = Settings {
        test: Test::Bootstrap,
        n_resamples: 1 << 20,
        seed: 1,
        exact: None,
        level: 0.95,
    };
    let d = [0.1, -0.2, 0.3];
    assert_eq!(
        resample_batch_until(&d, 3, &s, &cancel),
        Err(Error::Interrupted)
    );
    assert!(resample_batch_until(
        &d,
        3,
        &Settings {
            n_resamples: 10,
            ..s
        },
        &Cancel::new()
    )
    .is_ok());
}
