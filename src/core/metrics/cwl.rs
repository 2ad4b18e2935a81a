//! The C/W/L measures (Moffat et al.'s framework; Azzopardi, Thomas & Moffat,
//! SIGIR 2019) as `cwl_eval` computes them and ir_measures reports them:
//! `rbp_cwl`, `sdcg`, `bpm`, `nerr8`, `nerr9`, `nerr10`, `nerr11`, `inst`,
//! `insq`.
//!
//! A user reads the ranking from the top and, after rank `i`, goes on with
//! probability `C(i)`.  Over a horizon of `depth` ranks (parameter, 1000:
//! cwl_eval's, the depth of ir_measures' provider; the ranking is cut there
//! and, shorter, padded with gain 0), with `P(1) = 1` and
//! `P(i) = C(1) ... C(i-1)`, the expected utility per document inspected is
//!
//!   EU = (sum over i <= depth of P(i) * g(i)) / (sum over i <= depth of P(i)),
//!
//! the value ir_measures reports.  `@k` (where the family's model does not
//! take `k` itself) scores the ranking cut at `k`: gains past `k` are 0.
//!
//! Gains (cwl_eval's, from ir_measures' provider): a document missing from
//! the qrels gains 0.  A judged label `l` is first raised to `max(l, 0)`;
//! with `max_rel > min_rel` the gain is graded,
//! `(clamp(max(l, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel)`;
//! otherwise (the default, `max_rel = 0`) it is binary, 1 when the label is
//! relevant at the relevance level (label >= 0 and >= level).
//!
//! Continuation at rank `i` (`G(i)` = `g(1) + ... + g(i)`):
//!
//! * `rbp_cwl(p)`: `p` (rank-biased precision, normalised over the horizon);
//! * `sdcg@k`: `log2(i + 1) / log2(i + 2)` for `i < k`, else 0 (scaled DCG);
//! * `bpm(T)@k`: 1 while `G(i) < T` and `i < k`, else 0 (the static
//!   Bejeweled Player Model, every document costing 1);
//! * `nerr8@k`: `1 - g(i)` for `i < k`, else 0;
//! * `nerr9@k`: `i / (i + 1) * (1 - g(i))` for `i < k`, else 0;
//! * `nerr10(p)`: `p * (1 - g(i))`;
//! * `nerr11(T)`: `((i + 2T - 1) / (i + 2T))^2 * (1 - g(i))`;
//! * `inst(T)`: `((i + T + T_i - 1) / (i + T + T_i))^2`, `T_i = T - G(i)`;
//! * `insq(T)`: `((i + 2T - 1) / (i + 2T))^2`.
//!
//! `residual=1` gives instead cwl_eval's residual (`-r`): how much the value
//! could still grow, the expected utility with every unjudged document and the
//! padding past the ranking gaining 1 (the continuation recomputed with those
//! gains) minus the value.  ir_measures reports no residual.

use super::query::{is_rel, Query};

/// The user model of one C/W/L measure.
#[derive(Clone, Copy, Debug)]
pub enum Model {
    Rbp { p: f64 },
    Sdcg { k: usize },
    Bpm { t: f64, k: usize },
    Nerr8 { k: usize },
    Nerr9 { k: usize },
    Nerr10 { p: f64 },
    Nerr11 { t: f64 },
    Inst { t: f64 },
    Insq { t: f64 },
}

/// How labels become gains in [0, 1].
#[derive(Clone, Copy, Debug)]
pub struct Gains {
    pub min_rel: f64,
    pub max_rel: f64,
    pub level: f64,
}

impl Gains {
    fn of(&self, label: f64, best: bool) -> f64 {
        if label.is_nan() {
            return if best { 1.0 } else { 0.0 };
        }
        if self.max_rel > self.min_rel {
            let l = label.max(0.0).clamp(self.min_rel, self.max_rel);
            (l - self.min_rel) / (self.max_rel - self.min_rel)
        } else if is_rel(label, self.level) {
            1.0
        } else {
            0.0
        }
    }
}

impl Model {
    /// `C(i)` for 1-based rank `i`, given the gain there and the gain so far.
    fn c(self, i: usize, g: f64, total: f64) -> f64 {
        let r = i as f64;
        let sq = |x: f64| x * x;
        match self {
            Model::Rbp { p } => p,
            Model::Sdcg { k } => {
                if i < k {
                    (r + 1.0).ln() / (r + 2.0).ln()
                } else {
                    0.0
                }
            }
            Model::Bpm { t, k } => {
                if total < t && i < k {
                    1.0
                } else {
                    0.0
                }
            }
            Model::Nerr8 { k } => {
                if i < k {
                    1.0 - g
                } else {
                    0.0
                }
            }
            Model::Nerr9 { k } => {
                if i < k {
                    r / (r + 1.0) * (1.0 - g)
                } else {
                    0.0
                }
            }
            Model::Nerr10 { p } => p * (1.0 - g),
            Model::Nerr11 { t } => sq((r + 2.0 * t - 1.0) / (r + 2.0 * t)) * (1.0 - g),
            Model::Inst { t } => {
                let ti = t - total;
                sq((r + t + ti - 1.0) / (r + t + ti))
            }
            Model::Insq { t } => sq((r + 2.0 * t - 1.0) / (r + 2.0 * t)),
        }
    }
}

/// Expected utility per document of `model` on the top `k` of `q`, or its
/// residual.
pub fn expected_utility(
    q: &Query<'_>,
    k: Option<usize>,
    model: Model,
    gains: Gains,
    depth: usize,
    residual: bool,
) -> f64 {
    let value = bound(q, k, model, gains, depth, false);
    if residual {
        bound(q, k, model, gains, depth, true) - value
    } else {
        value
    }
}

/// The expected utility, unjudged documents and the padding gaining 0
/// (`best` false) or 1.
fn bound(
    q: &Query<'_>,
    k: Option<usize>,
    model: Model,
    gains: Gains,
    depth: usize,
    best: bool,
) -> f64 {
    let ranked = q.top(k);
    let pad = if best { 1.0 } else { 0.0 };
    let (mut utility, mut mass) = (0.0, 0.0);
    let (mut reach, mut total) = (1.0, 0.0);
    for i in 1..=depth {
        let g = ranked.get(i - 1).map_or(pad, |&l| gains.of(l, best));
        utility += reach * g;
        mass += reach;
        total += g;
        reach *= model.c(i, g, total);
        if reach == 0.0 {
            break;
        }
    }
    if mass > 0.0 {
        utility / mass
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::metrics::testutil::*;

    const BIN: Gains = Gains {
        min_rel: 0.0,
        max_rel: 0.0,
        level: 1.0,
    };

    #[test]
    fn rbp_over_the_horizon() {
        let q = query(&[1.0, 0.0, f64::NAN, 2.0], &[1.0, 0.0, 2.0]);
        let p: f64 = 0.5;
        let want = (1.0 + p.powi(3)) * (1.0 - p) / (1.0 - p.powi(10));
        let got = expected_utility(&q.view(), None, Model::Rbp { p }, BIN, 10, false);
        assert!(close(got, want));
        let cut = expected_utility(&q.view(), Some(2), Model::Rbp { p }, BIN, 10, false);
        assert!(close(cut, (1.0 - p) / (1.0 - p.powi(10))));
    }

    #[test]
    fn graded_gains_and_stopping() {
        let graded = Gains {
            min_rel: 0.0,
            max_rel: 4.0,
            level: 1.0,
        };
        assert_eq!(graded.of(-1.0, false), 0.0);
        assert_eq!(graded.of(6.0, false), 1.0);
        assert_eq!(graded.of(f64::NAN, false), 0.0);
        assert_eq!(graded.of(f64::NAN, true), 1.0);
        assert_eq!(graded.of(2.0, false), 0.5);
        // nerr8@2 on gains 1/2, 1: C(1) = 1/2, then stop: (1/2 + 1/2) / 1.5
        let q = query(&[2.0, 4.0, 4.0], &[2.0, 4.0]);
        let got = expected_utility(&q.view(), None, Model::Nerr8 { k: 2 }, graded, 1000, false);
        assert!(close(got, 1.0 / 1.5));
        // bpm T=1 k=3: stops once the gain reaches 1 (rank 2)
        let got = expected_utility(
            &q.view(),
            None,
            Model::Bpm { t: 1.0, k: 3 },
            graded,
            1000,
            false,
        );
        assert!(close(got, 1.5 / 2.0));
    }

    #[test]
    fn residual_counts_unjudged_and_padding_as_gain_one() {
        // rbp p = 1/2 over 3 ranks on 1, NaN: value 1 / 1.75, best 1.75 / 1.75
        let q = query(&[1.0, f64::NAN], &[1.0]);
        let r = expected_utility(&q.view(), None, Model::Rbp { p: 0.5 }, BIN, 3, true);
        assert!(close(r, 0.75 / 1.75));
    }
}
