//! The generalized SPRT log-likelihood ratio (Fishtest's GSPRT).
//!
//! Under each hypothesis the unknown distribution is profiled out by maximum likelihood: the
//! distribution closest (in likelihood) to the data that satisfies the hypothesis. Every such
//! maximizer has the form p̂_i / (1 + λ b_i), with λ the root of the secular equation
//! Σ p̂_i b_i / (1 + λ b_i) = 0 between the poles.

use super::counts::Counts;
use super::distribution::Distribution;
use super::elo::{Model, NELO_PER_T, logistic_score};
use super::error::StatsError;
use super::params::SprtParams;
use super::roots::brent;

/// Distance kept from the poles of the secular equation (Fishtest's ε).
const POLE_MARGIN: f64 = 1e-9;

/// Most fixed-point rounds of the normalized-model fit (Fishtest's limit).
const T_VALUE_ROUNDS: usize = 10;

/// The fixed-point iteration stops once no probability moves more than this.
const T_VALUE_TOLERANCE: f64 = 1e-9;

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
        Model::Logistic => mle_expected(pdf, logistic_score(elo)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{PentanomialCounts, TrinomialCounts};

    fn params(elo0: f64, elo1: f64, model: Model) -> SprtParams {
        SprtParams::new(elo0, elo1, 0.05, 0.05, model).unwrap()
    }

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol * b.abs().max(1.0), "{a} vs {b}");
    }

    #[test]
    fn worked_example_1() {
        let counts = PentanomialCounts([120, 2480, 5300, 2560, 140]);
        let llr = llr(&counts, &params(0.0, 2.0, Model::Normalized)).unwrap();
        close(llr, 0.938_782_528_541_893_9, 1e-9);
    }

    /// Reference values computed by Fishtest's own `LLRcalc.py` (scipy brentq) on these counts.
    #[test]
    fn matches_fishtest_on_its_own_examples() {
        let penta = PentanomialCounts([10789, 19328, 33806, 19402, 10543]);
        close(
            llr(&penta, &params(-3.0, 1.0, Model::Logistic)).unwrap(),
            2.131_067_811_794_080_7,
            1e-9,
        );
        let penta = PentanomialCounts([39, 2226, 31451, 2412, 40]);
        close(
            llr(&penta, &params(0.764, 3.439, Model::Normalized)).unwrap(),
            2.162_940_869_584_568,
            1e-9,
        );
        close(
            llr(&penta, &params(0.2, 0.9, Model::Logistic)).unwrap(),
            2.162_542_580_048_359_3,
            1e-9,
        );
        let tri = TrinomialCounts([5026, 15699, 5019]);
        close(
            llr(&tri, &params(-3.0, 1.0, Model::Normalized)).unwrap(),
            0.724_050_940_583_461_4,
            1e-9,
        );
        // Small samples and an empty-bucket sample (regularized before the fit).
        let small = PentanomialCounts([3, 40, 90, 50, 7]);
        close(
            llr(&small, &params(0.0, 5.0, Model::Normalized)).unwrap(),
            0.405_629_101_428_861_66,
            1e-9,
        );
        let tens = PentanomialCounts([0, 0, 0, 10, 0]);
        close(
            llr(&tens, &params(0.0, 2.0, Model::Normalized)).unwrap(),
            0.057_233_078_627_106_374,
            1e-9,
        );
    }

    #[test]
    fn reversing_the_counts_mirrors_the_test() {
        let counts = PentanomialCounts([120, 2480, 5300, 2560, 140]);
        for model in [Model::Normalized, Model::Logistic] {
            for (a, b) in [(0.0, 2.0), (-5.0, 0.0), (0.5, 2.5)] {
                let forward = llr(&counts, &params(a, b, model)).unwrap();
                let mirrored = llr(&counts.reversed(), &params(-b, -a, model)).unwrap();
                close(mirrored, -forward, 1e-9);
            }
        }
    }

    #[test]
    fn large_n_agrees_with_the_closed_form() {
        // 1000 × a typical distribution: the GSPRT and its quadratic approximation converge.
        let counts = PentanomialCounts([1_200, 24_800, 53_000, 25_600, 1_400].map(|n| n * 10));
        for (a, b) in [(0.0, 2.0), (-5.0, 0.0), (0.5, 2.5)] {
            let exact = llr(&counts, &params(a, b, Model::Normalized)).unwrap();
            let approx = llr_normalized_approx(&counts, a, b);
            assert!(
                (exact - approx).abs() < 5e-4 * exact.abs(),
                "{exact} vs {approx}"
            );
        }
    }

    #[test]
    fn degenerate_counts_give_finite_ratios() {
        let cases: [&[u64]; 5] = [
            &[0, 0, 0, 0, 0],
            &[0, 0, 10, 0, 0],
            &[0, 0, 0, 0, 10],
            &[10, 0, 0, 0, 0],
            &[0, 0, 100_000, 0, 0],
        ];
        for buckets in cases {
            let counts = PentanomialCounts(buckets.try_into().unwrap());
            for model in [Model::Normalized, Model::Logistic] {
                let value = llr(&counts, &params(0.0, 2.0, model)).unwrap();
                assert!(value.is_finite(), "{buckets:?} {model}");
            }
        }
        // Fishtest: 10 straight pair wins are worth a small LLR only, because of regularization.
        let ten_zero = llr(
            &PentanomialCounts([0, 0, 0, 0, 10]),
            &params(0.0, 2.0, Model::Normalized),
        );
        close(ten_zero.unwrap(), 0.081_080_382_388_758_67, 1e-9);
        let none = llr(
            &PentanomialCounts([0; 5]),
            &params(0.0, 2.0, Model::Normalized),
        );
        assert!(none.unwrap().abs() < 1e-6);
    }

    #[test]
    fn extreme_bounds_are_finite_or_a_named_error() {
        let counts = PentanomialCounts([3, 40, 100, 40, 3]);
        let logistic = llr(&counts, &params(-1500.0, 0.0, Model::Logistic)).unwrap();
        assert!(logistic.is_finite() && logistic > 0.0);
        let normalized = llr(&counts, &params(-1500.0, 0.0, Model::Normalized));
        assert_eq!(
            normalized,
            Err(StatsError::Unreachable {
                name: "elo0",
                elo: -1500.0,
                model: Model::Normalized
            })
        );
    }

    #[test]
    fn fitted_distributions_satisfy_their_constraints() {
        let (_, pdf) = Distribution::empirical(&[120, 2480, 5300, 2560, 140]);
        let fitted = mle_expected(&pdf, 0.51).unwrap();
        close(fitted.mean(), 0.51, 1e-9);
        let fitted = mle_t_value(&pdf, 0.02).unwrap();
        let (mu, var) = fitted.mean_variance();
        close((mu - 0.5) / var.sqrt(), 0.02, 1e-7);
        close(fitted.probs().iter().sum::<f64>(), 1.0, 1e-12);
    }
}
