//! Monte Carlo operating characteristic of the sequential test: simulated pentanomial pairs at a
//! chosen true nElo, fed batch by batch to [`SequentialSprt`], as a check of α, β and length.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use super::calculator::SprtCalculator;
use super::counts::PentanomialCounts;
use super::distribution::Distribution;
use super::elo::{NELO_PER_T, logistic_elo};
use super::error::StatsError;
use super::params::{SprtDecision, SprtParams};
use super::roots::brent;
use super::sprt::SequentialSprt;

/// The exponential tilt searched for a target nElo lies within ±this.
const TILT_LIMIT: f64 = 60.0;

/// nElo of a pentanomial probability vector (per-game σ = √(2v)).
fn nelo_of(probs: &[f64; 5]) -> f64 {
    let (mu, var) = Distribution::from_probs(probs).mean_variance();
    NELO_PER_T * (mu - 0.5) / (2.0 * var).sqrt()
}

/// Exponential tilt p_i ∝ q_i·e^(θ·i/4) of `base`, normalized.
fn tilt(base: &[f64; 5], theta: f64) -> [f64; 5] {
    let mut p = [0.0; 5];
    for (i, (pi, qi)) in p.iter_mut().zip(base).enumerate() {
        *pi = qi * (theta * i as f64 / 4.0).exp();
    }
    let total: f64 = p.iter().sum();
    p.map(|x| x / total)
}

/// The pentanomial distribution with true nElo `nelo` closest in shape to `base`: `base`
/// exponentially tilted towards the better or worse pair results.
///
/// # Errors
/// When `base` is not a distribution with five positive probabilities, or `nelo` is out of reach.
pub fn pentanomial_at_nelo(base: &[f64; 5], nelo: f64) -> Result<[f64; 5], StatsError> {
    if base.iter().any(|p| !(p.is_finite() && *p > 0.0)) {
        return Err(StatsError::Simulation(format!(
            "the base distribution needs five positive probabilities, got {base:?}"
        )));
    }
    let total: f64 = base.iter().sum();
    let base = base.map(|p| p / total);
    let theta =
        brent(|t| nelo_of(&tilt(&base, t)) - nelo, -TILT_LIMIT, TILT_LIMIT).ok_or_else(|| {
            StatsError::Simulation(format!("true nElo {nelo} cannot be reached from {base:?}"))
        })?;
    Ok(tilt(&base, theta))
}

/// What a batch of simulated SPRTs did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimulationSummary {
    /// True nElo of the simulated pairs.
    pub true_nelo: f64,
    /// True logistic Elo of the simulated pairs.
    pub true_elo: f64,
    /// Tests simulated.
    pub tests: u64,
    /// Tests that accepted H1.
    pub passes: u64,
    /// Tests stopped undecided at the pair limit (counted as not passed).
    pub truncated: u64,
    /// passes / tests.
    pub pass_rate: f64,
    /// Monte Carlo standard error of the pass rate: √(p(1 − p)/n).
    pub pass_rate_se: f64,
    /// Mean number of games until the decision.
    pub mean_games: f64,
    /// Standard error of the mean number of games.
    pub mean_games_se: f64,
    /// The calculator's pass probability for the same true Elo and per-game variance.
    pub calculator_pass_probability: f64,
    /// The calculator's expected number of games.
    pub calculator_expected_games: f64,
}

/// Runs `tests` independent sequential SPRTs on pairs drawn from `probs`, looking after every
/// `batch_size_pairs` pairs, stopping undecided tests at `max_pairs`. Test i draws from ChaCha8
/// stream i of `seed`, so results do not depend on the number of threads.
///
/// # Errors
/// A [`StatsError`] when the batch is empty or a bound cannot be fitted.
pub fn simulate_sprt(
    params: &SprtParams,
    batch_size_pairs: u64,
    probs: &[f64; 5],
    tests: u64,
    seed: u64,
    max_pairs: u64,
) -> Result<SimulationSummary, StatsError> {
    if tests == 0 {
        return Err(StatsError::Simulation(
            "at least one simulated test is needed".into(),
        ));
    }
    let template = SequentialSprt::new(*params, batch_size_pairs)?;
    let mut cdf = [0.0; 5];
    let mut running = 0.0;
    for (c, p) in cdf.iter_mut().zip(probs) {
        running += p;
        *c = running;
    }
    cdf[4] = f64::INFINITY;
    let outcomes: Vec<(SprtDecision, u64)> = (0..tests)
        .into_par_iter()
        .map(|index| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(index);
            let mut sprt = template.clone();
            let mut counts = PentanomialCounts::default();
            loop {
                for _ in 0..batch_size_pairs {
                    let u: f64 = rng.random();
                    counts.record(cdf.iter().position(|&c| u < c).unwrap_or(4));
                }
                let decision = sprt.update(&counts)?;
                if decision != SprtDecision::Continue || counts.pairs() >= max_pairs {
                    return Ok((decision, counts.games()));
                }
            }
        })
        .collect::<Result<_, StatsError>>()?;
    let n = tests as f64;
    let passes = outcomes
        .iter()
        .filter(|(d, _)| *d == SprtDecision::AcceptH1)
        .count() as u64;
    let truncated = outcomes
        .iter()
        .filter(|(d, _)| *d == SprtDecision::Continue)
        .count() as u64;
    let pass_rate = passes as f64 / n;
    let mean_games = outcomes.iter().map(|(_, g)| *g as f64).sum::<f64>() / n;
    let var_games = outcomes
        .iter()
        .map(|(_, g)| (*g as f64 - mean_games).powi(2))
        .sum::<f64>()
        / (n - 1.0).max(1.0);
    let (mu, var) = Distribution::from_probs(probs).mean_variance();
    let true_elo = logistic_elo(mu);
    let expected = SprtCalculator::with_variance(params, 2.0 * var)?.characteristic(true_elo);
    Ok(SimulationSummary {
        true_nelo: nelo_of(probs),
        true_elo,
        tests,
        passes,
        truncated,
        pass_rate,
        pass_rate_se: (pass_rate * (1.0 - pass_rate) / n).sqrt(),
        mean_games,
        mean_games_se: (var_games / n).sqrt(),
        calculator_pass_probability: expected.pass_probability,
        calculator_expected_games: expected.expected_games,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Model;

    const BASE: [f64; 5] = [130.0, 2520.0, 5300.0, 2520.0, 130.0];

    #[test]
    fn tilting_reaches_the_target_nelo() {
        for target in [-5.0, 0.0, 2.5, 40.0] {
            let p = pentanomial_at_nelo(&BASE, target).unwrap();
            assert!((nelo_of(&p) - target).abs() < 1e-9);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        assert!(pentanomial_at_nelo(&[0.0, 1.0, 1.0, 1.0, 1.0], 0.0).is_err());
    }

    /// A wide test decides quickly: the simulation is deterministic in its seed, and a strong
    /// candidate passes while a weak one fails.
    #[test]
    fn simulation_is_seeded_and_sensible() {
        let params = SprtParams::new(-40.0, 40.0, 0.05, 0.05, Model::Normalized).unwrap();
        let strong = pentanomial_at_nelo(&BASE, 60.0).unwrap();
        let a = simulate_sprt(&params, 4, &strong, 64, 7, 100_000).unwrap();
        let b = simulate_sprt(&params, 4, &strong, 64, 7, 100_000).unwrap();
        assert_eq!(a, b);
        assert!(a.pass_rate > 0.9 && a.truncated == 0);
        let weak = pentanomial_at_nelo(&BASE, -60.0).unwrap();
        let c = simulate_sprt(&params, 4, &weak, 64, 7, 100_000).unwrap();
        assert!(c.pass_rate < 0.1);
        assert!(simulate_sprt(&params, 4, &weak, 0, 7, 100_000).is_err());
    }
}
