//! Fishtest's SPSA schedule: gains, perturbations and the update rule (docs/spsa.md).
//!
//! Pure arithmetic over plain data: the tuner (`run`) and the model (`model`)
//! both drive their θ through these functions, so the real tuning and the
//! simulation that judges its end rules cannot drift apart.

use rand::Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Exponent of the learning-factor decay, Spall's and Fishtest's value.
pub const ALPHA: f64 = 0.602;
/// Exponent of the perturbation-radius decay, Spall's and Fishtest's value.
pub const GAMMA: f64 = 0.101;
/// Fishtest's default stability offset: A = int(0.1·N).
pub const A_RATIO: f64 = 0.1;

/// Whether the engine takes a parameter as an integer or a real number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Sent rounded stochastically, as Fishtest's worker does.
    Int,
    /// Sent as is.
    Float,
}

/// One tunable parameter as the engine declares it (`name, int, value, min, max, c_end, r_end`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    /// UCI option name.
    pub name: String,
    /// Integer or real.
    pub kind: Kind,
    /// Start value θ0.
    pub start: f64,
    /// Lower bound of θ.
    pub min: f64,
    /// Upper bound of θ.
    pub max: f64,
    /// Perturbation radius at the last pair.
    pub c_end: f64,
    /// Learning factor at the last pair, in units of c_end².
    pub r_end: f64,
}

/// Why a schedule cannot be built.
#[derive(Debug, Error, PartialEq)]
pub enum ScheduleError {
    /// Fewer than two games leave no game pair to tune with.
    #[error("a run needs at least 2 games (one pair), got {0}")]
    TooFewGames(u64),
    /// A parameter's declaration is inconsistent.
    #[error("parameter {name}: {why}")]
    BadParam {
        /// The parameter at fault.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
}

/// Per-parameter constants of a run: c = c_end·N^γ and a = r_end·c_end²·(A + N)^α.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Gains {
    c: f64,
    a: f64,
}

/// The schedule of one run: N pairs, the offset A and every parameter's gains.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pairs: u64,
    offset: u64,
    gains: Vec<Gains>,
}

/// c_k, a_k and R_k of one parameter at one counter value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Perturbation radius c_k = c/(k+1)^γ.
    pub c_k: f64,
    /// Learning factor a_k = a/(A+k+1)^α.
    pub a_k: f64,
    /// Learning rate R_k = a_k/c_k².
    pub r_k: f64,
}

impl Schedule {
    /// Builds the schedule of a run of `games` games over `params`.
    pub fn new(games: u64, params: &[Param]) -> Result<Self, ScheduleError> {
        let pairs = games / 2;
        if pairs == 0 {
            return Err(ScheduleError::TooFewGames(games));
        }
        let offset = (A_RATIO * pairs as f64) as u64;
        let gains = params
            .iter()
            .map(|p| {
                validate(p)?;
                let c = p.c_end * (pairs as f64).powf(GAMMA);
                let a_end = p.r_end * p.c_end * p.c_end;
                let a = a_end * ((offset + pairs) as f64).powf(ALPHA);
                Ok(Gains { c, a })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            pairs,
            offset,
            gains,
        })
    }

    /// N, the number of game pairs of the run.
    #[must_use]
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// A, the stability offset of the learning factor.
    #[must_use]
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// c_k, a_k and R_k of parameter `i` for a duel handed out at counter `k`.
    #[must_use]
    pub fn step(&self, i: usize, k: u64) -> Step {
        let g = self.gains[i];
        let c_k = g.c / ((k + 1) as f64).powf(GAMMA);
        let a_k = g.a / ((self.offset + k + 1) as f64).powf(ALPHA);
        Step {
            c_k,
            a_k,
            r_k: a_k / (c_k * c_k),
        }
    }

    /// Every parameter's step at counter `k`: what a duel handed out at `k` uses,
    /// both to perturb and, rebuilt when its result arrives, to update.
    #[must_use]
    pub fn steps(&self, k: u64) -> Vec<Step> {
        (0..self.gains.len()).map(|i| self.step(i, k)).collect()
    }
}

fn validate(p: &Param) -> Result<(), ScheduleError> {
    let bad = |why| {
        Err(ScheduleError::BadParam {
            name: p.name.clone(),
            why,
        })
    };
    let finite = [p.start, p.min, p.max, p.c_end, p.r_end]
        .iter()
        .all(|v| v.is_finite());
    if !finite {
        return bad("every number must be finite");
    }
    if p.min > p.max {
        return bad("min is above max");
    }
    if !(p.min..=p.max).contains(&p.start) {
        return bad("start value outside [min, max]");
    }
    if p.c_end <= 0.0 {
        return bad("c_end must be positive");
    }
    if p.r_end < 0.0 {
        return bad("r_end must not be negative");
    }
    Ok(())
}

/// θ kept inside the parameter's bounds.
#[must_use]
pub fn clip(p: &Param, value: f64) -> f64 {
    value.clamp(p.min, p.max)
}

/// Fishtest's worker rounding: ⌊v + u⌋ with u uniform in [0, 1), so that N.p
/// becomes N+1 with probability p and the expectation is v (round() would bias it).
#[must_use]
pub fn stochastic_round(value: f64, u: f64) -> f64 {
    (value + u).floor()
}

/// Draws one independent sign per parameter, as Fishtest does for each task.
pub fn draw_flips<R: Rng + ?Sized>(rng: &mut R, count: usize) -> Vec<i8> {
    (0..count)
        .map(|_| if rng.random::<bool>() { 1 } else { -1 })
        .collect()
}

/// The values engine "+" and engine "−" play with: clip(θ ± c_k·flip), rounded for integers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Perturbation {
    /// Values of engine "+".
    pub plus: Vec<f64>,
    /// Values of engine "−".
    pub minus: Vec<f64>,
}

/// The two engines' values for a duel whose counter gave `steps`, with `flips`;
/// integer parameters are rounded with uniforms drawn from `rng`.
pub fn perturb<R: Rng + ?Sized>(
    params: &[Param],
    theta: &[f64],
    steps: &[Step],
    flips: &[i8],
    rng: &mut R,
) -> Perturbation {
    let mut plus = Vec::with_capacity(params.len());
    let mut minus = Vec::with_capacity(params.len());
    for (i, p) in params.iter().enumerate() {
        let shift = steps[i].c_k * f64::from(flips[i]);
        let mut send = |v: f64| match p.kind {
            Kind::Int => stochastic_round(clip(p, v), rng.random::<f64>()),
            Kind::Float => clip(p, v),
        };
        plus.push(send(theta[i] + shift));
        minus.push(send(theta[i] - shift));
    }
    Perturbation { plus, minus }
}

/// The step one duel contributes: R_k·c_k·result·flip_i per parameter, where
/// `steps` are rebuilt from the counter the duel was handed out at.
#[must_use]
pub fn duel_step(steps: &[Step], flips: &[i8], result: f64) -> Vec<f64> {
    steps
        .iter()
        .zip(flips)
        .map(|(s, &flip)| s.r_k * s.c_k * result * f64::from(flip))
        .collect()
}

/// Applies a bundle's summed steps at once: θ_i ← clip(θ_i + Σ_j step_ij).
/// Steps are summed in duel order so the result does not depend on which duel finished first.
pub fn apply_bundle(params: &[Param], theta: &mut [f64], steps: &[Vec<f64>]) {
    for (i, (p, t)) in params.iter().zip(theta.iter_mut()).enumerate() {
        let total: f64 = steps.iter().map(|s| s[i]).sum();
        *t = clip(p, *t + total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn param(start: f64, min: f64, max: f64, c_end: f64, r_end: f64) -> Param {
        Param {
            name: "P".into(),
            kind: Kind::Int,
            start,
            min,
            max,
            c_end,
            r_end,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn counts_pairs_and_offset_like_fishtest() {
        let s = Schedule::new(30_001, &[param(0.0, -5.0, 5.0, 1.0, 0.002)]).unwrap();
        assert_eq!(s.pairs(), 15_000);
        assert_eq!(s.offset(), 1_500);
        assert_eq!(
            Schedule::new(1, &[]).unwrap_err(),
            ScheduleError::TooFewGames(1)
        );
    }

    #[test]
    fn first_pair_uses_the_full_gains() {
        let p = param(50.0, 0.0, 100.0, 4.0, 0.0020);
        let s = Schedule::new(2_000, std::slice::from_ref(&p)).unwrap();
        let c = 4.0 * 1000f64.powf(GAMMA);
        let a = 0.002 * 16.0 * 1100f64.powf(ALPHA);
        let first = s.step(0, 0);
        assert!(close(first.c_k, c));
        assert!(close(first.a_k, a / 101f64.powf(ALPHA)));
        assert!(close(first.r_k, first.a_k / (c * c)));
    }

    #[test]
    fn last_pair_reaches_c_end_and_r_end() {
        for (games, c_end, r_end) in [(2_000, 4.0, 0.002), (30_000, 1.0, 0.002), (7, 0.5, 0.1)] {
            let p = param(0.0, -10.0, 10.0, c_end, r_end);
            let s = Schedule::new(games, &[p]).unwrap();
            let last = s.step(0, s.pairs() - 1);
            assert!(close(last.c_k, c_end), "{games}: c_k {}", last.c_k);
            assert!(close(last.r_k, r_end), "{games}: R_k {}", last.r_k);
            assert!(close(last.a_k, r_end * c_end * c_end));
        }
    }

    #[test]
    fn gains_decrease_along_the_run() {
        let s = Schedule::new(30_000, &[param(0.0, -10.0, 10.0, 1.0, 0.002)]).unwrap();
        let (early, late) = (s.step(0, 0), s.step(0, 14_999));
        assert!(early.c_k > late.c_k && early.a_k > late.a_k);
        // R_0 = r_end·((A+N)/(A+1))^α / N^(2γ): with A = 0.1·N the rate starts below r_end.
        let r0 = 0.002 * (16_500f64 / 1_501.0).powf(ALPHA) / 15_000f64.powf(2.0 * GAMMA);
        assert!(close(early.r_k, r0));
        assert!(early.r_k < late.r_k);
    }

    #[test]
    fn rejects_inconsistent_params() {
        let bad = [
            param(0.0, 1.0, -1.0, 1.0, 0.002),
            param(5.0, -1.0, 1.0, 1.0, 0.002),
            param(0.0, -1.0, 1.0, 0.0, 0.002),
            param(0.0, -1.0, 1.0, 1.0, -0.1),
            param(f64::NAN, -1.0, 1.0, 1.0, 0.002),
        ];
        for p in bad {
            assert!(matches!(
                Schedule::new(100, &[p]),
                Err(ScheduleError::BadParam { .. })
            ));
        }
    }

    #[test]
    fn clip_holds_bounds() {
        let p = param(0.0, -3.0, 7.0, 1.0, 0.002);
        assert_eq!(clip(&p, -3.5), -3.0);
        assert_eq!(clip(&p, 7.25), 7.0);
        assert_eq!(clip(&p, 2.5), 2.5);
    }

    #[test]
    fn stochastic_rounding_picks_neighbours_with_the_right_odds() {
        assert_eq!(stochastic_round(4.3, 0.0), 4.0);
        assert_eq!(stochastic_round(4.3, 0.69), 4.0);
        assert_eq!(stochastic_round(4.3, 0.71), 5.0);
        assert_eq!(stochastic_round(-4.3, 0.29), -5.0);
        assert_eq!(stochastic_round(-4.3, 0.31), -4.0);
        assert_eq!(stochastic_round(6.0, 0.999), 6.0);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 200_000;
        let ups = (0..n)
            .filter(|_| stochastic_round(2.25, rng.random::<f64>()) == 3.0)
            .count();
        let share = ups as f64 / n as f64;
        assert!((share - 0.25).abs() < 0.005, "share {share}");
    }

    #[test]
    fn perturbation_is_symmetric_and_clipped() {
        let mut p = param(0.0, -1.0, 100.0, 4.0, 0.002);
        p.kind = Kind::Float;
        let params = vec![p.clone(), p];
        let s = Schedule::new(200, &params).unwrap();
        let c0 = s.step(0, 0).c_k;
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let pert = perturb(&params, &[50.0, 0.0], &s.steps(0), &[1, -1], &mut rng);
        assert!(close(pert.plus[0], 50.0 + c0) && close(pert.minus[0], 50.0 - c0));
        // The second parameter sits near its lower bound: "+" goes down (flip −1) and is clipped.
        assert_eq!(pert.plus[1], -1.0);
        assert!(close(pert.minus[1], c0));
    }

    #[test]
    fn integer_perturbations_are_rounded_within_bounds() {
        let params = vec![param(10.0, 0.0, 20.0, 2.5, 0.002)];
        let s = Schedule::new(1_000, &params).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..1000 {
            let pert = perturb(&params, &[19.6], &s.steps(0), &[1], &mut rng);
            assert_eq!(pert.plus[0], 20.0);
            let (m, want) = (pert.minus[0], 19.6 - s.step(0, 0).c_k);
            assert!(m == want.floor() || m == want.ceil(), "{m} from {want}");
        }
    }

    #[test]
    fn update_rebuilds_the_gains_of_the_handout_counter() {
        let params = vec![param(0.0, -100.0, 100.0, 1.0, 0.002); 2];
        let s = Schedule::new(30_000, &params).unwrap();
        let (k, result) = (4_500, 7.0);
        let step = duel_step(&s.steps(k), &[1, -1], result);
        let g = s.step(0, k);
        assert!(close(step[0], g.r_k * g.c_k * 7.0));
        assert!(close(step[1], -step[0]));
        // The step is R_k·c_k·result: it does not grow with the number of pairs in the duel.
        assert!(close(g.r_k * g.c_k, g.a_k / g.c_k));
    }

    #[test]
    fn bundle_sums_steps_then_clips_once() {
        let params = vec![param(0.0, -1.0, 1.0, 1.0, 0.002); 2];
        let mut theta = vec![0.5, 0.0];
        apply_bundle(
            &params,
            &mut theta,
            &[vec![0.4, 0.25], vec![0.4, -0.5], vec![-0.4, 0.0]],
        );
        // 0.5 + 0.4 + 0.4 − 0.4 = 0.9: sum first, no clip at the intermediate 1.3.
        assert!(close(theta[0], 0.9));
        assert!(close(theta[1], -0.25));
        apply_bundle(&params, &mut theta, &[vec![5.0, -5.0]]);
        assert_eq!(theta, vec![1.0, -1.0]);
    }
}
