//! The end-rule model (docs/spsa.md): simulated SPSA runs on a
//! quadratic loss, two runs per repetition, judged by each end rule.
//!
//! Units: every parameter is measured in c_end (c_end = 1) from its optimum, so
//! θ = x; losses are model-Elo, not playing strength.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::rules::{EndRule, Outcome, Signal, decide};
use super::schedule::{self, Kind, Param, Schedule};

/// The fixed shape of the model's runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelShape {
    /// Number of parameters.
    pub params: usize,
    /// Duels per run.
    pub duels: usize,
    /// Game pairs per duel.
    pub pairs_per_duel: u64,
    /// Duels whose steps are applied together.
    pub bundle: usize,
    /// Learning factor at the end of the run, in units of c_end².
    pub r_end: f64,
    /// Lower end of the log-uniform loss coefficient L.
    pub l_min: f64,
    /// Upper end of the log-uniform loss coefficient L.
    pub l_max: f64,
}

/// The seed's model: 30 parameters, 500 duels of 30 pairs, bundles of 15, r_end 0.002, L in [0.05, 2].
pub const SEED_000: ModelShape = ModelShape {
    params: 30,
    duels: 500,
    pairs_per_duel: 30,
    bundle: 15,
    r_end: 0.002,
    l_min: 0.05,
    l_max: 2.0,
};

/// Expected wins − losses of one game pair per Elo of difference: the slope of the
/// logistic Elo curve at 0 (ln 10/1600 per game) times two games.
pub const KAPPA: f64 = std::f64::consts::LN_10 / 400.0;

/// Mean gain of one end rule over the repetitions of a row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RuleSummary {
    /// Mean gain (start loss − end loss) in model-Elo.
    pub gain: f64,
    /// Standard error of that mean.
    pub gain_se: f64,
    /// Share of repetitions whose gain is negative.
    pub loss_fraction: f64,
}

/// The three rules of one row, keyed as in the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RuleSummaries {
    /// Filter rule.
    pub filter: RuleSummary,
    /// Seed mean.
    pub seed_mean: RuleSummary,
    /// Seed mean with |T| ≥ 1.
    pub seed_mean_t1: RuleSummary,
}

/// One row of the model table: a start spread s and an at-optimum share f.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Standard deviation of the start error, in c_end.
    pub s: f64,
    /// Probability that a parameter starts at its optimum.
    pub f: f64,
    /// Mean start loss Σ L·x0² (what a perfect tuning would gain).
    pub available: f64,
    /// Gains per end rule.
    pub rules: RuleSummaries,
}

/// The model's table: one row per (s, f), as `oracle tune model` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelTable {
    /// Seed of the random streams.
    pub seed: u64,
    /// Repetitions per row.
    pub reps: u64,
    /// Wall time of the simulation in seconds.
    pub seconds: f64,
    /// The rows, s outer and f inner.
    pub rows: Vec<Row>,
}

/// Arguments the model cannot be run with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// A standard error needs two repetitions.
    #[error("--reps must be at least 2 (a standard error needs two repetitions)")]
    TooFewReps,
    /// A start spread is negative or not a number.
    #[error("--s: {0} is not a non-negative number")]
    Spread(f64),
    /// An at-optimum share is not a probability.
    #[error("--f: {0} is not a probability in [0, 1]")]
    Share(f64),
}

/// Simulates the seed's model ([`SEED_000`]) for every start spread in `spreads` and every
/// at-optimum share in `shares`, `reps` repetitions per row.
pub fn simulate_table(
    spreads: &[f64],
    shares: &[f64],
    reps: u64,
    seed: u64,
) -> Result<ModelTable, ModelError> {
    if reps < 2 {
        return Err(ModelError::TooFewReps);
    }
    if let Some(&s) = spreads.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
        return Err(ModelError::Spread(s));
    }
    if let Some(&f) = shares.iter().find(|f| !(0.0..=1.0).contains(*f)) {
        return Err(ModelError::Share(f));
    }
    let started = std::time::Instant::now();
    let mut rows = Vec::with_capacity(spreads.len() * shares.len());
    for &s in spreads {
        for &f in shares {
            rows.push(simulate_row(&SEED_000, s, f, reps, seed));
        }
    }
    Ok(ModelTable {
        seed,
        reps,
        seconds: started.elapsed().as_secs_f64(),
        rows,
    })
}

/// What one repetition yields: its available loss and each rule's gain (order of `EndRule::ALL`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Repetition {
    available: f64,
    gains: [f64; 3],
}

/// Simulates `reps` repetitions of the row (s, f); deterministic in `seed`, with
/// one ChaCha stream per repetition so that rayon's scheduling cannot change a bit.
#[must_use]
pub fn simulate_row(shape: &ModelShape, s: f64, f: f64, reps: u64, seed: u64) -> Row {
    let key = row_key(seed, s, f);
    let reps_out: Vec<Repetition> = (0..reps)
        .into_par_iter()
        .map(|rep| {
            let mut rng = ChaCha8Rng::from_seed(key);
            rng.set_stream(rep);
            repetition(shape, s, f, &mut rng)
        })
        .collect();
    summarize(s, f, &reps_out)
}

/// The 32-byte ChaCha key of a row: the same (seed, s, f) gives the same row whatever else runs.
fn row_key(seed: u64, s: f64, f: f64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"coherent tune model v1");
    h.update(seed.to_le_bytes());
    h.update(s.to_bits().to_le_bytes());
    h.update(f.to_bits().to_le_bytes());
    h.finalize().into()
}

fn summarize(s: f64, f: f64, reps: &[Repetition]) -> Row {
    let n = reps.len() as f64;
    let available = reps.iter().map(|r| r.available).sum::<f64>() / n;
    let rule = |j: usize| {
        let gains: Vec<f64> = reps.iter().map(|r| r.gains[j]).collect();
        let mean = gains.iter().sum::<f64>() / n;
        let var = if gains.len() > 1 {
            gains.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        RuleSummary {
            gain: mean,
            gain_se: (var / n).sqrt(),
            loss_fraction: gains.iter().filter(|&&g| g < 0.0).count() as f64 / n,
        }
    };
    Row {
        s,
        f,
        available,
        rules: RuleSummaries {
            filter: rule(0),
            seed_mean: rule(1),
            seed_mean_t1: rule(2),
        },
    }
}

/// A standard normal variate (Box–Muller; one uniform pair per variate keeps the stream simple).
fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = 1.0 - rng.random::<f64>();
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// One repetition: draw L and x0, run SPSA twice, judge each rule.
fn repetition<R: Rng + ?Sized>(shape: &ModelShape, s: f64, f: f64, rng: &mut R) -> Repetition {
    let (ln_min, ln_max) = (shape.l_min.ln(), shape.l_max.ln());
    let mut loss = Vec::with_capacity(shape.params);
    let mut x0 = Vec::with_capacity(shape.params);
    for _ in 0..shape.params {
        loss.push((ln_min + rng.random::<f64>() * (ln_max - ln_min)).exp());
        let at_optimum = rng.random::<f64>() < f;
        x0.push(if at_optimum {
            0.0
        } else {
            s * standard_normal(rng)
        });
    }
    let params: Vec<Param> = x0
        .iter()
        .enumerate()
        .map(|(i, &x)| Param {
            name: format!("x{i}"),
            kind: Kind::Float,
            start: x,
            min: f64::MIN,
            max: f64::MAX,
            c_end: 1.0,
            r_end: shape.r_end,
        })
        .collect();
    let games = 2 * shape.pairs_per_duel * shape.duels as u64;
    let schedule = Schedule::new(games, &params).expect("the model's parameters are valid");
    let (end1, sig1) = run(shape, &schedule, &params, &loss, rng);
    let (end2, sig2) = run(shape, &schedule, &params, &loss, rng);
    let total_loss = |x: &[f64]| loss.iter().zip(x).map(|(l, x)| l * x * x).sum::<f64>();
    let available = total_loss(&x0);
    let mut gains = [0.0; 3];
    for (g, rule) in gains.iter_mut().zip(EndRule::ALL) {
        let adopted: Vec<f64> = (0..shape.params)
            .map(|i| {
                let outcome = Outcome {
                    start: x0[i],
                    run1: end1[i],
                    run2: end2[i],
                    c_end: 1.0,
                    t: sig1[i].merged(sig2[i]).t(),
                };
                decide(rule, &outcome)
            })
            .collect();
        *g = available - total_loss(&adopted);
    }
    Repetition { available, gains }
}

/// One simulated SPSA run; returns the end θ and each parameter's signal sums.
fn run<R: Rng + ?Sized>(
    shape: &ModelShape,
    schedule: &Schedule,
    params: &[Param],
    loss: &[f64],
    rng: &mut R,
) -> (Vec<f64>, Vec<Signal>) {
    let mut theta: Vec<f64> = params.iter().map(|p| p.start).collect();
    let mut signals = vec![Signal::default(); params.len()];
    let noise_sd = (shape.pairs_per_duel as f64).sqrt();
    let mut k = 0u64;
    let mut left = shape.duels;
    while left > 0 {
        let size = left.min(shape.bundle);
        // All duels of a bundle are handed out before any reports: same θ, same counter.
        let steps = schedule.steps(k);
        let mut bundle = Vec::with_capacity(size);
        for _ in 0..size {
            let flips = schedule::draw_flips(rng, params.len());
            let pert = schedule::perturb(params, &theta, &steps, &flips, rng);
            let delta_elo: f64 = -loss
                .iter()
                .zip(pert.plus.iter().zip(&pert.minus))
                .map(|(l, (p, m))| l * (p * p - m * m))
                .sum::<f64>();
            let result =
                shape.pairs_per_duel as f64 * KAPPA * delta_elo + noise_sd * standard_normal(rng);
            for (sig, (p, m)) in signals.iter_mut().zip(pert.plus.iter().zip(&pert.minus)) {
                sig.add(*p, *m, 1.0, result);
            }
            bundle.push(schedule::duel_step(&steps, &flips, result));
        }
        schedule::apply_bundle(params, &mut theta, &bundle);
        k += shape.pairs_per_duel * size as u64;
        left -= size;
    }
    (theta, signals)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: ModelShape = ModelShape {
        params: 4,
        duels: 40,
        pairs_per_duel: 30,
        bundle: 15,
        r_end: 0.002,
        l_min: 0.05,
        l_max: 2.0,
    };

    #[test]
    fn bad_model_arguments_are_named() {
        assert_eq!(
            simulate_table(&[0.5], &[0.0], 1, 0),
            Err(ModelError::TooFewReps)
        );
        assert_eq!(
            simulate_table(&[-1.0], &[0.0], 2, 0),
            Err(ModelError::Spread(-1.0))
        );
        let error = simulate_table(&[0.5], &[1.5], 2, 0).unwrap_err();
        assert_eq!(error.to_string(), "--f: 1.5 is not a probability in [0, 1]");
    }

    #[test]
    fn same_seed_same_row_bit_for_bit() {
        let a = simulate_row(&SMALL, 1.0, 0.0, 16, 9);
        let b = simulate_row(&SMALL, 1.0, 0.0, 16, 9);
        assert_eq!(a, b);
        assert_ne!(a, simulate_row(&SMALL, 1.0, 0.0, 16, 10));
    }

    #[test]
    fn everything_at_the_optimum_leaves_nothing_available() {
        let row = simulate_row(&SMALL, 1.0, 1.0, 8, 1);
        assert_eq!(row.available, 0.0);
        // Noise can only move parameters away from the optimum.
        assert!(row.rules.seed_mean.gain < 0.0);
        assert!(row.rules.seed_mean.loss_fraction > 0.5);
    }

    #[test]
    fn noise_free_duels_move_towards_the_optimum() {
        let schedule_params = [Param {
            name: "x".into(),
            kind: Kind::Float,
            start: 2.0,
            min: f64::MIN,
            max: f64::MAX,
            c_end: 1.0,
            r_end: 0.002,
        }];
        let schedule = Schedule::new(2 * 30 * 40, &schedule_params).unwrap();
        let steps = schedule.steps(0);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let flips = schedule::draw_flips(&mut rng, 1);
        let pert = schedule::perturb(&schedule_params, &[2.0], &steps, &flips, &mut rng);
        let delta = -(pert.plus[0].powi(2) - pert.minus[0].powi(2));
        let step = schedule::duel_step(&steps, &flips, 30.0 * KAPPA * delta);
        // Whatever the flip, the expected step points from x = 2 towards 0.
        assert!(step[0] < 0.0);
    }
}
