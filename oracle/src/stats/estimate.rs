//! The estimates shown to people: nElo ± 95%, Fishtest's median-unbiased Elo of an SPRT, and
//! the fixed-games Elo with its normal interval and LOS.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

use super::brownian::{Brownian, phi};
use super::counts::Counts;
use super::distribution::Distribution;
use super::llr::logistic;
use super::roots::brent;
use super::sprt::SprtParams;
use super::{Model, NELO_PER_T};

/// Scores are clamped to [ε, 1 − ε] before conversion to Elo so that 10–0 stays finite.
const SCORE_CLAMP: f64 = 1e-3;

/// The estimate's search range in logistic Elo never exceeds ±this (Fishtest's limit).
const ELO_SEARCH_LIMIT: f64 = 1000.0;

/// Most widenings of the search range (each doubles it; ±1000 is reached long before).
const MAX_WIDENINGS: usize = 64;

/// The 97.5% quantile of the standard normal distribution.
fn z975() -> f64 {
    Normal::standard().inverse_cdf(0.975)
}

/// Logistic score of an Elo difference: 1/(1 + 10^(−elo/400)).
#[must_use]
pub fn logistic_score(elo: f64) -> f64 {
    logistic(elo)
}

/// Logistic Elo of a score, with the score clamped to [0.001, 0.999] (±1200 Elo at most).
#[must_use]
pub fn logistic_elo(score: f64) -> f64 {
    let x = score.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP);
    -400.0 * (1.0 / x - 1.0).log10()
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
            Model::Logistic => logistic(elo),
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
        let s = logistic(elo);
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
