//! The estimates shown to people: nElo ± 95%, Fishtest's median-unbiased Elo of an SPRT, and
//! the fixed-games Elo with its normal interval and LOS.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::brownian::{Brownian, phi};
use super::counts::Counts;
use super::distribution::Distribution;
use super::elo::{Model, NELO_PER_T, logistic_elo, logistic_score};
use super::params::SprtParams;
use super::roots::brent;

/// The estimate's search range in logistic Elo never exceeds ±this (Fishtest's limit).
const ELO_SEARCH_LIMIT: f64 = 1000.0;

/// Most widenings of the search range (each doubles it; ±1000 is reached long before).
const MAX_WIDENINGS: usize = 64;

/// The 97.5% quantile of the standard normal distribution.
fn z975() -> f64 {
    Normal::standard().inverse_cdf(0.975)
}

/// Normalized Elo with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NormalizedElo {
    /// nElo = K (μ − ½)/σ per game.
    pub nelo: f64,
    /// 95% interval, corrected for the skewness and kurtosis of the outcome distribution.
    pub ci95: [f64; 2],
}

/// nElo ± 95% of regularized counts.
///
/// The t-value estimator's variance is 1 − t·γ1 + ¼·t²·(γ2 + 2) per unit (delta method with
/// the skewness γ1 and excess kurtosis γ2 of the outcome distribution).
#[must_use]
pub fn normalized_elo<C: Counts>(counts: &C) -> NormalizedElo {
    let (total, pdf) = Distribution::empirical(counts.buckets());
    let (mu, var, skewness, exkurt) = pdf.moments();
    let t = (mu - 0.5) / var.sqrt();
    let scale = NELO_PER_T / (C::GAMES_PER_UNIT as f64).sqrt();
    let nelo = scale * t;
    let var_t = (1.0 - t * skewness + 0.25 * t * t * (exkurt + 2.0)).max(0.0);
    let half = scale * z975() * (var_t / total).sqrt();
    NormalizedElo {
        nelo,
        ci95: [nelo - half, nelo + half],
    }
}

/// Logistic Elo, its 95% interval and the likelihood of superiority.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtElo {
    /// Point estimate (logistic Elo).
    pub elo: f64,
    /// 95% interval (logistic Elo).
    pub ci95: [f64; 2],
    /// Probability that the candidate is stronger (Elo > 0).
    pub los: f64,
}

/// Fishtest's view of a finished (or running) SPRT as a Brownian path of the LLR.
struct BrownianSprt {
    mean: f64,
    var: f64,
    s0: f64,
    s1: f64,
    lower: f64,
    upper: f64,
    /// Time (units) and LLR where the path is, clamped onto a barrier it has crossed.
    time: f64,
    llr: f64,
    elo0: f64,
    elo1: f64,
}

impl BrownianSprt {
    fn new<C: Counts>(counts: &C, params: &SprtParams) -> Self {
        let (total, pdf) = Distribution::empirical(counts.buckets());
        let (mean, var) = pdf.mean_variance();
        let score = |elo: f64| match params.model {
            Model::Logistic => logistic_score(elo),
            Model::Normalized => {
                let sigma_pg = (C::GAMES_PER_UNIT as f64 * var).sqrt();
                0.5 + elo / NELO_PER_T * sigma_pg
            }
        };
        let (s0, s1) = (score(params.elo0), score(params.elo1));
        // The LLR's drift under the data itself (the Brownian approximation of the LLR).
        let slope = (mean - (s0 + s1) / 2.0) * (s1 - s0) / var;
        let (lower, upper) = (params.lower_bound(), params.upper_bound());
        let mut llr = total * slope;
        let mut time = total;
        if llr < lower {
            time = lower / slope;
            llr = lower;
        } else if llr > upper {
            time = upper / slope;
            llr = upper;
        }
        Self {
            mean,
            var,
            s0,
            s1,
            lower,
            upper,
            time,
            llr,
            elo0: params.elo0,
            elo1: params.elo1,
        }
    }

    /// Probability of an outcome worse than the observed one if the true logistic Elo were `elo`.
    fn outcome_prob(&self, elo: f64) -> f64 {
        let s = logistic_score(elo);
        let v = self.var + (s - self.mean).powi(2);
        let mu = (s - (self.s0 + self.s1) / 2.0) * (self.s1 - self.s0) / v;
        let sigma2 = (self.s1 - self.s0).powi(2) / v;
        Brownian {
            a: self.lower,
            b: self.upper,
            mu,
            sigma2,
        }
        .outcome_cdf(self.time, self.llr)
    }

    /// The largest Elo at which the observed outcome has probability below `p` of being beaten.
    fn lower_cb(&self, p: f64) -> f64 {
        let avg = (self.elo0 + self.elo1) / 2.0;
        let delta = self.elo1 - self.elo0;
        let f = |elo: f64| self.outcome_prob(elo) - (1.0 - p);
        let mut widths = 30.0;
        let (mut lo, mut hi) = (-ELO_SEARCH_LIMIT, ELO_SEARCH_LIMIT);
        for _ in 0..MAX_WIDENINGS {
            lo = (avg - widths * delta).max(-ELO_SEARCH_LIMIT);
            hi = (avg + widths * delta).min(ELO_SEARCH_LIMIT);
            if let Some(root) = brent(f, lo, hi) {
                return root;
            }
            if lo <= -ELO_SEARCH_LIMIT && hi >= ELO_SEARCH_LIMIT {
                break;
            }
            widths *= 2.0;
        }
        // No crossing even on the widest range: the estimate sits at the range's end.
        if f(lo) > 0.0 { hi } else { lo }
    }
}

/// Fishtest's median-unbiased logistic Elo of an SPRT, its 95% interval and LOS, from the
/// Brownian model of the LLR path (valid for running and finished tests alike).
#[must_use]
pub fn sprt_elo<C: Counts>(counts: &C, params: &SprtParams) -> SprtElo {
    let model = BrownianSprt::new(counts, params);
    SprtElo {
        elo: model.lower_cb(0.5),
        ci95: [model.lower_cb(0.025), model.lower_cb(0.975)],
        los: model.outcome_prob(0.0).clamp(0.0, 1.0),
    }
}

/// Elo of a fixed number of games, with a normal 95% interval on the score and LOS.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FixedGamesElo {
    /// Logistic Elo of the mean score.
    pub elo: f64,
    /// Elo ± half the width of the score interval mapped to Elo (as Fishtest reports it).
    pub ci95: [f64; 2],
    /// Φ((μ − ½)·√G / σ).
    pub los: f64,
}

/// Fixed-games Elo ± 95% and LOS (per-game σ² = 2v for pairs, v for games).
#[must_use]
pub fn fixed_games_elo<C: Counts>(counts: &C) -> FixedGamesElo {
    let (total, pdf) = Distribution::empirical(counts.buckets());
    let (mu, var) = pdf.mean_variance();
    let per_unit = C::GAMES_PER_UNIT as f64;
    let games = total * per_unit;
    let stdev = (per_unit * var).sqrt();
    let half_score = z975() * stdev / games.sqrt();
    let elo = logistic_elo(mu);
    let half = (logistic_elo(mu + half_score) - logistic_elo(mu - half_score)) / 2.0;
    FixedGamesElo {
        elo,
        ci95: [elo - half, elo + half],
        los: phi((mu - 0.5) / (stdev / games.sqrt())),
    }
}

/// The one-sided 95% lower bound on nElo after `pairs` game pairs all won twice (a sweep, whose
/// nElo estimate is unbounded); its negative bounds a sweep lost from above.
///
/// A pair that is not won twice has probability at most p = 1 − 0.05^(1/pairs) if a sweep has
/// at least a 5% chance. Of the pair distributions with that much non-sweep mass, the one with
/// the least nElo puts all of it on LL (lowest mean, widest spread); its nElo is the bound: any
/// engine weaker than that sweeps `pairs` pairs with a chance below 5%.
#[must_use]
pub fn sweep_nelo_bound(pairs: u64) -> f64 {
    let p = 1.0 - 0.05_f64.powf(1.0 / pairs.max(1) as f64);
    let (mu, var, _, _) = Distribution::from_probs(&[p, 0.0, 0.0, 0.0, 1.0 - p]).moments();
    NELO_PER_T / 2.0_f64.sqrt() * (mu - 0.5) / var.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{PentanomialCounts, TrinomialCounts};

    #[test]
    fn a_longer_sweep_bounds_higher_and_one_pair_proves_nothing() {
        let bound = sweep_nelo_bound(200);
        // p = 1 − 0.05^(1/200) ≈ 0.01487: t ≈ 0.4851 / 0.1210 ≈ 4.009, times 800/ln 10/√2.
        assert!((bound - 984.9).abs() < 1.0, "{bound}");
        assert!(sweep_nelo_bound(400) > bound);
        assert!(sweep_nelo_bound(1) < 0.0);
        // Below the estimate of the nearest lopsided result that is not a sweep.
        assert!(bound < normalized_elo(&PentanomialCounts([0, 0, 2, 10, 188])).nelo);
    }

    const EXAMPLE: PentanomialCounts = PentanomialCounts([120, 2480, 5300, 2560, 140]);

    fn params(elo0: f64, elo1: f64, model: Model) -> SprtParams {
        SprtParams::new(elo0, elo1, 0.05, 0.05, model).unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn worked_example_1_nelo() {
        let n = normalized_elo(&EXAMPLE);
        close(n.nelo, 3.672_690_639_953_209, 1e-9);
        close((n.ci95[1] - n.ci95[0]) / 2.0, 4.676_820_181_575_474, 1e-9);
    }

    /// Fishtest's `sprt.py` analytics on the same counts (reference run of its Python with scipy),
    /// and the rounded figures of worked example 1 in docs/statistics.md.
    #[test]
    fn worked_example_1_sprt_elo() {
        let e = sprt_elo(&EXAMPLE, &params(0.0, 2.0, Model::Normalized));
        close(e.elo, 1.966_637_516_663_220_2, 1e-9);
        close(e.ci95[0], -0.537_638_856_491_428_1, 1e-8);
        close(e.ci95[1], 4.472_156_478_924_1, 1e-8);
        close(e.los, 0.938_124_434_411_015_5, 1e-10);
        close(e.elo, 1.96664, 5e-6);
        close(e.ci95[0], -0.53764, 5e-6);
        close(e.ci95[1], 4.47216, 5e-6);
        close(e.los, 0.93812, 5e-6);
    }

    #[test]
    fn fixed_games_elo_matches_fishtest() {
        let f = fixed_games_elo(&EXAMPLE);
        close(f.elo, 1.966_637_525_610_318, 1e-12);
        close(f.ci95[0], -0.537_805_935_526_700_6, 1e-12);
        close(f.ci95[1], 4.471_080_986_747_337, 1e-12);
        close(f.los, 0.938_114_876_608_381_7, 1e-10);
        let t = fixed_games_elo(&TrinomialCounts([5026, 15699, 5019]));
        close(t.elo, -0.094_470_523_562_572_07, 1e-12);
        close(t.los, 0.472_159_296_431_123, 1e-10);
    }

    #[test]
    fn logistic_sprt_elo_matches_fishtest() {
        let counts = PentanomialCounts([10789, 19328, 33806, 19402, 10543]);
        let e = sprt_elo(&counts, &params(-3.0, 1.0, Model::Logistic));
        close(e.elo, -0.992_536_511_332_834_4, 1e-8);
        close(e.ci95[0], -3.488_492_125_015_159_5, 1e-8);
        close(e.ci95[1], 1.488_586_102_225_239_8, 1e-8);
        close(e.los, 0.188_034_932_900_262_3, 1e-10);
    }

    /// Small samples and empty buckets, against Fishtest's own `sprt.py` (`LLR_drift_variance_alt2`,
    /// whose variance under a true score s is the pdf's variance plus (s − μ)², and `lower_cb`)
    /// and `stat_util.get_elo`, run with scipy on the same counts. Setting the variance to the pdf's
    /// alone would give LOS 0.94399 and 0.97739 here: that is not Fishtest's model.
    #[test]
    fn small_samples_match_fishtest() {
        let e = sprt_elo(
            &PentanomialCounts([3, 40, 90, 50, 7]),
            &params(0.0, 5.0, Model::Normalized),
        );
        close(e.elo, 16.469_800_616_208_89, 1e-9);
        close(e.ci95[0], -3.741_960_128_802_171_3, 1e-8);
        close(e.ci95[1], 37.433_749_458_016_11, 1e-8);
        close(e.los, 0.944_960_266_812_153_1, 1e-10);
        let e = sprt_elo(
            &PentanomialCounts([0, 1, 3, 4, 1]),
            &params(0.0, 2.0, Model::Normalized),
        );
        close(e.elo, 99.060_350_077_401_4, 1e-9);
        close(e.ci95[0], 17.517_256_525_149_83, 1e-8);
        assert_eq!(e.ci95[1], 1000.0);
        close(e.los, 0.991_874_585_286_112_7, 1e-10);
        // One empty-bucket case: the Brownian estimate sits at Fishtest's +1000 limit (its
        // regularized counts leave no crossing in range); the fixed-games Elo is finite.
        let tens = PentanomialCounts([0, 0, 0, 10, 0]);
        let e = sprt_elo(&tens, &params(0.0, 2.0, Model::Normalized));
        assert_eq!((e.elo, e.ci95, e.los), (1000.0, [1000.0, 1000.0], 1.0));
        close(fixed_games_elo(&tens).elo, 190.732_755_611_296_4, 1e-9);
        // Trinomial counts with a narrow interval.
        let e = sprt_elo(
            &TrinomialCounts([30, 1500, 40]),
            &params(0.0, 5.0, Model::Normalized),
        );
        close(e.elo, 2.212_995_439_984_435, 1e-9);
        close(e.ci95[0], -1.414_575_074_753_079_6, 1e-8);
        close(e.ci95[1], 5.849_338_682_416_686, 1e-8);
        close(e.los, 0.884_162_961_512_136_9, 1e-10);
    }

    #[test]
    fn reversed_counts_mirror_the_estimates() {
        let forward = normalized_elo(&EXAMPLE);
        let mirrored = normalized_elo(&EXAMPLE.reversed());
        close(mirrored.nelo, -forward.nelo, 1e-12);
        close(mirrored.ci95[0], -forward.ci95[1], 1e-12);
        let f = sprt_elo(&EXAMPLE, &params(0.0, 2.0, Model::Normalized));
        let m = sprt_elo(&EXAMPLE.reversed(), &params(-2.0, 0.0, Model::Normalized));
        close(m.elo, -f.elo, 1e-8);
        close(m.ci95[0], -f.ci95[1], 1e-8);
        close(m.los, 1.0 - f.los, 1e-8);
    }

    #[test]
    fn degenerate_counts_give_finite_estimates() {
        let nasty: [&[u64]; 6] = [
            &[0, 0, 0, 0, 0],
            &[0, 0, 0, 0, 10],
            &[10, 0, 0, 0, 0],
            &[0, 0, 7, 0, 0],
            &[0, 0, 10],
            &[0, 0, 0],
        ];
        for buckets in nasty {
            for model in [Model::Normalized, Model::Logistic] {
                for (a, b) in [(0.0, 2.0), (-1500.0, 0.0)] {
                    let p = params(a, b, model);
                    let values: Vec<f64> = if buckets.len() == 5 {
                        let c = PentanomialCounts(buckets.try_into().unwrap());
                        estimates(&c, &p)
                    } else {
                        let c = TrinomialCounts(buckets.try_into().unwrap());
                        estimates(&c, &p)
                    };
                    assert!(
                        values.iter().all(|v| v.is_finite()),
                        "{buckets:?} [{a}, {b}] {model}: {values:?}"
                    );
                }
            }
        }
        // Fishtest: ten pair wins put the SPRT estimate at the +1000 Elo end of its range.
        let e = sprt_elo(
            &PentanomialCounts([0, 0, 0, 0, 10]),
            &params(0.0, 2.0, Model::Normalized),
        );
        assert_eq!((e.elo, e.ci95, e.los), (1000.0, [1000.0, 1000.0], 1.0));
    }

    fn estimates<C: Counts>(c: &C, p: &SprtParams) -> Vec<f64> {
        let n = normalized_elo(c);
        let s = sprt_elo(c, p);
        let f = fixed_games_elo(c);
        vec![
            n.nelo, n.ci95[0], n.ci95[1], s.elo, s.ci95[0], s.ci95[1], s.los, f.elo, f.ci95[0],
            f.ci95[1], f.los,
        ]
    }
}
