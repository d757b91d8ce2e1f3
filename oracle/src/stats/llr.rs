//! The generalized SPRT log-likelihood ratio (Fishtest's GSPRT).
//!
//! Under each hypothesis the unknown distribution is profiled out by maximum likelihood: the
//! distribution closest (in likelihood) to the data that satisfies the hypothesis. Every such
//! maximizer has the form p̂_i / (1 + λ b_i), with λ the root of the secular equation
//! Σ p̂_i b_i / (1 + λ b_i) = 0 between the poles.

use super::counts::Counts;
use super::distribution::Distribution;
use super::roots::brent;
use super::sprt::SprtParams;
use super::{Model, NELO_PER_T, StatsError};

/// Distance kept from the poles of the secular equation (Fishtest's ε).
const POLE_MARGIN: f64 = 1e-9;

/// Most fixed-point rounds of the normalized-model fit (Fishtest's limit).
const T_VALUE_ROUNDS: usize = 10;

/// The fixed-point iteration stops once no probability moves more than this.
const T_VALUE_TOLERANCE: f64 = 1e-9;

/// Logistic score of an Elo difference: 1/(1 + 10^(−elo/400)).
#[must_use]
pub(crate) fn logistic(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Solves Σ p_i b_i / (1 + λ b_i) = 0 for λ strictly between the poles −1/max b and −1/min b.
fn secular(pdf: &Distribution, b: &[f64]) -> Option<f64> {
    let lo_b = b.iter().copied().fold(f64::INFINITY, f64::min);
    let hi_b = b.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !(lo_b < 0.0 && hi_b > 0.0) {
        return None;
    }
    let f = |x: f64| -> f64 {
        pdf.probs()
            .iter()
            .zip(b)
            .map(|(&p, &bi)| p * bi / (1.0 + x * bi))
            .sum()
    };
    brent(f, -1.0 / hi_b + POLE_MARGIN, -1.0 / lo_b - POLE_MARGIN)
}

/// The maximum-likelihood distribution with mean score `s`, given the empirical `pdf`.
fn mle_expected(pdf: &Distribution, s: f64) -> Option<Distribution> {
    let mut b = [0.0; 5];
    for (i, bi) in b.iter_mut().enumerate().take(pdf.probs().len()) {
        *bi = pdf.score(i) - s;
    }
    let b = &b[..pdf.probs().len()];
    secular(pdf, b).map(|lambda| pdf.tilted(b, lambda))
}

/// The maximum-likelihood distribution with t-value (μ − ½)/σ = `t`, given the empirical `pdf`.
///
/// Fishtest's fixed point: start from the uniform distribution, linearize the constraint around
/// the current iterate's μ and σ, solve the secular equation, repeat (at most 10 rounds).
fn mle_t_value(pdf: &Distribution, t: f64) -> Option<Distribution> {
    let n = pdf.probs().len();
    let mut current = pdf.uniform_like();
    for _ in 0..T_VALUE_ROUNDS {
        let (mu, var) = current.mean_variance();
        let sigma = var.sqrt();
        let mut b = [0.0; 5];
        for (i, bi) in b.iter_mut().enumerate().take(n) {
            let a = pdf.score(i);
            *bi = a - 0.5 - t / (2.0 * sigma) * (var + (a - mu).powi(2));
        }
        let next = pdf.tilted(&b[..n], secular(pdf, &b[..n])?);
        let moved = next
            .probs()
            .iter()
            .zip(current.probs())
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        current = next;
        if moved < T_VALUE_TOLERANCE {
            break;
        }
    }
    Some(current)
}

/// The hypothesis constraint of one bound in the units the fit works in.
fn fit(
    pdf: &Distribution,
    elo: f64,
    name: &'static str,
    model: Model,
    games_per_unit: u64,
) -> Result<Distribution, StatsError> {
    let fitted = match model {
        Model::Logistic => mle_expected(pdf, logistic(elo)),
        // A pair's t-value is √2 times the per-game one.
        Model::Normalized => mle_t_value(pdf, elo / NELO_PER_T * (games_per_unit as f64).sqrt()),
    };
    fitted
        .filter(|d| d.probs().iter().all(|p| p.is_finite() && *p > 0.0))
        .ok_or(StatsError::Unreachable { name, elo, model })
}

/// LLR of `total` regularized units with empirical distribution `pdf`.
pub(crate) fn llr_of(
    total: f64,
    pdf: &Distribution,
    games_per_unit: u64,
    params: &SprtParams,
) -> Result<f64, StatsError> {
    let p0 = fit(pdf, params.elo0, "elo0", params.model, games_per_unit)?;
    let p1 = fit(pdf, params.elo1, "elo1", params.model, games_per_unit)?;
    let per_unit: f64 = pdf
        .probs()
        .iter()
        .zip(p0.probs().iter().zip(p1.probs()))
        .map(|(&p, (&q0, &q1))| p * (q1.ln() - q0.ln()))
        .sum();
    Ok(total * per_unit)
}

/// The exact generalized log-likelihood ratio of H1 against H0 for cumulative `counts`.
///
/// # Errors
/// [`StatsError::Unreachable`] when a bound is so extreme that the maximum-likelihood fit has
/// no solution near the data.
pub fn llr<C: Counts>(counts: &C, params: &SprtParams) -> Result<f64, StatsError> {
    let (total, pdf) = Distribution::empirical(counts.buckets());
    llr_of(total, &pdf, C::GAMES_PER_UNIT, params)
}

/// The large-N closed form of the normalized LLR: (G/2)·ln((1 + (nt − nt0)²)/(1 + (nt − nt1)²))
/// with nt the per-game t-value of the data and G the (regularized) number of games.
#[must_use]
pub fn llr_normalized_approx<C: Counts>(counts: &C, elo0: f64, elo1: f64) -> f64 {
    let (total, pdf) = Distribution::empirical(counts.buckets());
    let (mu, var) = pdf.mean_variance();
    let per_unit = C::GAMES_PER_UNIT as f64;
    let nt = (mu - 0.5) / (per_unit * var).sqrt();
    let (nt0, nt1) = (elo0 / NELO_PER_T, elo1 / NELO_PER_T);
    total * per_unit / 2.0 * ((1.0 + (nt - nt0).powi(2)) / (1.0 + (nt - nt1).powi(2))).ln()
}
