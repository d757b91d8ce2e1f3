//! One SPSA run over real duels: the plan of each bundle, the update after it, and a
//! state that is checkpointed after every bundle so a killed run resumes exactly.
//!
//! Everything random about a duel (its flips and the stochastic rounding of the values
//! sent to the engines) comes from a ChaCha stream keyed by the run's seed and the duel's
//! index, so a resumed run plans the same duels as an uninterrupted one, and the duel
//! results of a bundle are applied in duel order whatever order they finished in.

use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::rules::Signal;
use super::schedule::{self, Param, Schedule, ScheduleError};

/// Version of the state file layout.
pub const STATE_VERSION: u32 = 1;

/// What a run is: its size, duel and bundle shape, seed, and what the duels are played with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Total games G (N = G/2 pairs).
    pub games: u64,
    /// Game pairs per duel.
    pub pairs_per_duel: u64,
    /// Duels whose steps are applied together.
    pub bundle: usize,
    /// Seed of the flips, the rounding and the opening order.
    pub seed: u64,
    /// How the duels are played (engine, limits, book); a resumed run must match it.
    pub context: String,
}

/// A duel as handed out: its counter, flips and the values both engines play with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DuelPlan {
    /// Index of the duel in the run (0-based).
    pub index: u64,
    /// Counter k (pairs reported before the duel's bundle) the duel was handed out at.
    pub k: u64,
    /// Global index of the duel's first pair (where it reads the book).
    pub first_pair: u64,
    /// Game pairs in the duel.
    pub pairs: u64,
    /// The sign of each parameter's perturbation.
    pub flips: Vec<i8>,
    /// Values sent to engine "+".
    pub plus: Vec<f64>,
    /// Values sent to engine "−".
    pub minus: Vec<f64>,
}

/// Games of a duel from engine "+"'s side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuelScore {
    /// Games "+" won.
    pub wins: u64,
    /// Games drawn.
    pub draws: u64,
    /// Games "+" lost.
    pub losses: u64,
}

impl DuelScore {
    /// The SPSA result: wins − losses of engine "+".
    #[must_use]
    pub fn result(&self) -> f64 {
        self.wins as f64 - self.losses as f64
    }
}

/// A finished duel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DuelRecord {
    /// How it was handed out.
    pub plan: DuelPlan,
    /// How it ended.
    pub score: DuelScore,
}

/// Everything a run has done so far; saved after every bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// State file layout version.
    pub version: u32,
    /// The run.
    pub spec: RunSpec,
    /// The parameters as listed at the start.
    pub params: Vec<Param>,
    /// Current θ.
    pub theta: Vec<f64>,
    /// Pairs reported so far (the counter k).
    pub k: u64,
    /// Finished duels in order.
    pub duels: Vec<DuelRecord>,
    /// θ at the start and after every bundle (for plots of the trajectory).
    pub trajectory: Vec<Vec<f64>>,
}

/// Why a run could not go on.
#[derive(Debug, Error)]
pub enum TuneError {
    /// The schedule cannot be built from the spec and parameters.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// A run needs at least one pair per duel and one duel per bundle.
    #[error("--pairs-per-duel and --bundle must be at least 1")]
    EmptyShape,
    /// A duel could not be played.
    #[error("duel {index}: {source}")]
    Duel {
        /// The duel's index.
        index: u64,
        /// What went wrong.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The state file could not be read or written.
    #[error("state file {path}: {reason}")]
    State {
        /// The state file.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Plays duels: the match runner in production, a model in tests.
pub trait DuelPlayer {
    /// Plays `duel` (engine "+" with `duel.plus`, "−" with `duel.minus`) and scores it for "+".
    fn play(
        &mut self,
        params: &[Param],
        duel: &DuelPlan,
    ) -> Result<DuelScore, Box<dyn std::error::Error + Send + Sync>>;
}

impl RunState {
    /// A fresh run of `spec` over `params`, θ at the start values.
    pub fn new(spec: RunSpec, params: Vec<Param>) -> Result<Self, TuneError> {
        if spec.pairs_per_duel == 0 || spec.bundle == 0 {
            return Err(TuneError::EmptyShape);
        }
        Schedule::new(spec.games, &params)?;
        let theta: Vec<f64> = params.iter().map(|p| p.start).collect();
        Ok(Self {
            version: STATE_VERSION,
            spec,
            params,
            trajectory: vec![theta.clone()],
            theta,
            k: 0,
            duels: Vec::new(),
        })
    }

    /// Duels in the whole run: ⌈N / pairs per duel⌉.
    #[must_use]
    pub fn total_duels(&self) -> u64 {
        (self.spec.games / 2).div_ceil(self.spec.pairs_per_duel)
    }

    /// True when every duel has been played and applied.
    #[must_use]
    pub fn is_finished(&self) -> bool {
        self.duels.len() as u64 >= self.total_duels()
    }

    /// The run's schedule.
    pub fn schedule(&self) -> Result<Schedule, TuneError> {
        Ok(Schedule::new(self.spec.games, &self.params)?)
    }

    /// The duels of the next bundle, all handed out at the current θ and counter.
    pub fn next_bundle(&self) -> Result<Vec<DuelPlan>, TuneError> {
        let schedule = self.schedule()?;
        let steps = schedule.steps(self.k);
        let first = self.duels.len() as u64;
        let end = (first + self.spec.bundle as u64).min(self.total_duels());
        let pairs_total = schedule.pairs();
        Ok((first..end)
            .map(|index| {
                let mut rng = duel_rng(self.spec.seed, index);
                let flips = schedule::draw_flips(&mut rng, self.params.len());
                let pert = schedule::perturb(&self.params, &self.theta, &steps, &flips, &mut rng);
                let first_pair = index * self.spec.pairs_per_duel;
                DuelPlan {
                    index,
                    k: self.k,
                    first_pair,
                    pairs: self.spec.pairs_per_duel.min(pairs_total - first_pair),
                    flips,
                    plus: pert.plus,
                    minus: pert.minus,
                }
            })
            .collect())
    }

    /// Applies a finished bundle: the steps of its duels, summed in duel order, then
    /// the counter advances by the bundle's pairs.
    pub fn apply(&mut self, bundle: Vec<DuelRecord>) -> Result<(), TuneError> {
        let schedule = self.schedule()?;
        let steps: Vec<Vec<f64>> = bundle
            .iter()
            .map(|d| {
                // Rebuilt from the counter the duel was handed out at, as Fishtest does.
                let gains = schedule.steps(d.plan.k);
                schedule::duel_step(&gains, &d.plan.flips, d.score.result())
            })
            .collect();
        schedule::apply_bundle(&self.params, &mut self.theta, &steps);
        self.k += bundle.iter().map(|d| d.plan.pairs).sum::<u64>();
        self.duels.extend(bundle);
        self.trajectory.push(self.theta.clone());
        Ok(())
    }

    /// Each parameter's single signals over the run's duels (for T).
    #[must_use]
    pub fn signals(&self) -> Vec<Signal> {
        let mut signals = vec![Signal::default(); self.params.len()];
        for d in &self.duels {
            for (i, (sig, p)) in signals.iter_mut().zip(&self.params).enumerate() {
                sig.add(d.plan.plus[i], d.plan.minus[i], p.c_end, d.score.result());
            }
        }
        signals
    }

    /// Checks that a loaded state is the run `spec` over `params`; names the first difference.
    pub fn matches(&self, spec: &RunSpec, params: &[Param]) -> Result<(), String> {
        if self.version != STATE_VERSION {
            return Err(format!(
                "layout version {} is not {STATE_VERSION}",
                self.version
            ));
        }
        let fields = [
            ("games", self.spec.games == spec.games),
            (
                "pairs per duel",
                self.spec.pairs_per_duel == spec.pairs_per_duel,
            ),
            ("bundle", self.spec.bundle == spec.bundle),
            ("seed", self.spec.seed == spec.seed),
            ("engine, limits or book", self.spec.context == spec.context),
            ("parameters", self.params == params),
        ];
        match fields.iter().find(|(_, same)| !same) {
            Some((field, _)) => Err(format!("it belongs to another run ({field} differs)")),
            None => Ok(()),
        }
    }
}

/// The ChaCha stream of one duel: keyed by the run's seed, one stream per duel index.
fn duel_rng(seed: u64, index: u64) -> ChaCha8Rng {
    let mut h = Sha256::new();
    h.update(b"coherent tune duel v1");
    h.update(seed.to_le_bytes());
    let mut rng = ChaCha8Rng::from_seed(h.finalize().into());
    rng.set_stream(index);
    rng
}

/// Plays the run to its end: bundle by bundle, `checkpoint` after each (it must persist
/// the state before the next bundle starts, so a kill loses at most one bundle).
pub fn drive(
    state: &mut RunState,
    player: &mut dyn DuelPlayer,
    checkpoint: &mut dyn FnMut(&RunState) -> Result<(), TuneError>,
) -> Result<(), TuneError> {
    while !state.is_finished() {
        let plans = state.next_bundle()?;
        let mut bundle = Vec::with_capacity(plans.len());
        for plan in plans {
            let score = player
                .play(&state.params, &plan)
                .map_err(|source| TuneError::Duel {
                    index: plan.index,
                    source,
                })?;
            bundle.push(DuelRecord { plan, score });
        }
        state.apply(bundle)?;
        checkpoint(state)?;
    }
    Ok(())
}

/// The run `spec` over `params`: resumed from `state_file` when it exists (it must be this
/// run's; the flag says it was resumed), else fresh.
pub fn start_or_resume(
    spec: RunSpec,
    params: &[Param],
    state_file: Option<&Path>,
) -> Result<(RunState, bool), TuneError> {
    match state_file {
        Some(path) if path.exists() => {
            let state = load(path)?;
            state
                .matches(&spec, params)
                .map_err(|reason| TuneError::State {
                    path: path.display().to_string(),
                    reason,
                })?;
            Ok((state, true))
        }
        _ => Ok((RunState::new(spec, params.to_vec())?, false)),
    }
}

/// Plays the run to its end like [`drive`], saving it to `state_file` (when given) after every
/// bundle and then calling `after_bundle`.
pub fn play_to_end(
    state: &mut RunState,
    player: &mut dyn DuelPlayer,
    state_file: Option<&Path>,
    after_bundle: &mut dyn FnMut(&RunState),
) -> Result<(), TuneError> {
    drive(state, player, &mut |s| {
        if let Some(path) = state_file {
            save(path, s)?;
        }
        after_bundle(s);
        Ok(())
    })
}

/// One parameter of a run's summary.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamSummary {
    /// The parameter.
    pub name: String,
    /// Its start value.
    pub start: f64,
    /// Its current θ.
    pub theta: f64,
    /// T over the run's duels.
    pub t: f64,
}

/// Where a run stands: the JSON of `oracle tune run`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// The run's seed.
    pub seed: u64,
    /// Duels played.
    pub duels: usize,
    /// Pairs reported (the counter k).
    pub pairs: u64,
    /// Each parameter, in listing order.
    pub params: Vec<ParamSummary>,
}

impl RunState {
    /// Where the run stands, per parameter.
    #[must_use]
    pub fn summary(&self) -> RunSummary {
        let signals = self.signals();
        RunSummary {
            seed: self.spec.seed,
            duels: self.duels.len(),
            pairs: self.k,
            params: self
                .params
                .iter()
                .zip(&self.theta)
                .zip(&signals)
                .map(|((p, &theta), signal)| ParamSummary {
                    name: p.name.clone(),
                    start: p.start,
                    theta,
                    t: signal.t(),
                })
                .collect(),
        }
    }
}

/// Reads a state file.
pub fn load(path: &Path) -> Result<RunState, TuneError> {
    let fail = |reason: String| TuneError::State {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| fail(format!("not a tune state: {e}")))
}

/// Writes a state file atomically (temporary file in the same directory, fsync, rename).
pub fn save(path: &Path, state: &RunState) -> Result<(), TuneError> {
    let fail = |reason: String| TuneError::State {
        path: path.display().to_string(),
        reason,
    };
    let json = serde_json::to_vec(state).map_err(|e| fail(e.to_string()))?;
    crate::integrity::write_atomically(path, &json).map_err(|e| fail(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::schedule::Kind;

    fn params() -> Vec<Param> {
        vec![
            Param {
                name: "A".into(),
                kind: Kind::Int,
                start: 50.0,
                min: 0.0,
                max: 100.0,
                c_end: 5.0,
                r_end: 0.002,
            },
            Param {
                name: "B".into(),
                kind: Kind::Float,
                start: 1.0,
                min: 0.0,
                max: 2.0,
                c_end: 0.1,
                r_end: 0.002,
            },
        ]
    }

    fn spec(games: u64, seed: u64) -> RunSpec {
        RunSpec {
            games,
            pairs_per_duel: 4,
            bundle: 3,
            seed,
            context: "test".into(),
        }
    }

    /// A noisy quadratic player with the optimum at A = 70, B = 1.5: results depend only on the plan.
    struct Quadratic;

    impl DuelPlayer for Quadratic {
        fn play(
            &mut self,
            _: &[Param],
            duel: &DuelPlan,
        ) -> Result<DuelScore, Box<dyn std::error::Error + Send + Sync>> {
            let loss = |v: &[f64]| ((v[0] - 70.0) / 5.0).powi(2) + ((v[1] - 1.5) / 0.1).powi(2);
            let edge = loss(&duel.minus) - loss(&duel.plus);
            let games = 2 * duel.pairs;
            let share = (1.0 + (edge / 20.0).tanh()) / 2.0;
            // A deterministic wobble stands in for noise: odd duels lose one more game.
            let wins = ((games as f64 * share).round() as u64).saturating_sub(duel.index % 2);
            Ok(DuelScore {
                wins,
                draws: 0,
                losses: games - wins,
            })
        }
    }

    fn finish(state: &mut RunState) -> usize {
        let mut checkpoints = 0;
        drive(state, &mut Quadratic, &mut |_| {
            checkpoints += 1;
            Ok(())
        })
        .unwrap();
        checkpoints
    }

    #[test]
    fn bundles_cover_every_pair_with_a_short_last_duel() {
        // 90 games = 45 pairs = 11 duels of 4 and one of 1, in bundles of 3.
        let mut state = RunState::new(spec(90, 1), params()).unwrap();
        assert_eq!(state.total_duels(), 12);
        assert_eq!(finish(&mut state), 4);
        assert_eq!(state.k, 45);
        assert_eq!(state.duels.last().unwrap().plan.pairs, 1);
        assert_eq!(state.trajectory.len(), 5);
        // All duels of a bundle were handed out at the bundle's counter.
        let ks: Vec<u64> = state.duels.iter().map(|d| d.plan.k).collect();
        assert_eq!(ks, [0, 0, 0, 12, 12, 12, 24, 24, 24, 36, 36, 36]);
    }

    #[test]
    fn values_sent_are_rounded_integers_and_clipped() {
        let state = RunState::new(spec(400, 2), params()).unwrap();
        for plan in state.next_bundle().unwrap() {
            assert_eq!(plan.plus[0].fract(), 0.0);
            assert!(plan.plus[1] <= 2.0 && plan.minus[1] >= 0.0);
            let c = state.schedule().unwrap().step(1, 0).c_k;
            let shift = f64::from(plan.flips[1]) * c;
            assert!((plan.plus[1] - (1.0 + shift).clamp(0.0, 2.0)).abs() < 1e-12);
        }
    }

    #[test]
    fn moves_towards_the_optimum() {
        let mut state = RunState::new(spec(2_000, 3), params()).unwrap();
        finish(&mut state);
        assert!(state.theta[0] > 55.0, "A ended at {}", state.theta[0]);
        assert!(state.theta[1] > 1.1, "B ended at {}", state.theta[1]);
        let t = state.signals()[0].t();
        assert!(t > 1.0, "T of A is {t}");
    }

    #[test]
    fn interrupted_and_resumed_equals_uninterrupted() {
        let mut whole = RunState::new(spec(600, 4), params()).unwrap();
        finish(&mut whole);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let mut part = RunState::new(spec(600, 4), params()).unwrap();
        // Two bundles, checkpoint, then "kill": only the file survives.
        for _ in 0..2 {
            let plans = part.next_bundle().unwrap();
            let bundle = plans
                .into_iter()
                .map(|plan| {
                    let score = Quadratic.play(&part.params, &plan).unwrap();
                    DuelRecord { plan, score }
                })
                .collect();
            part.apply(bundle).unwrap();
        }
        save(&path, &part).unwrap();
        drop(part);
        let mut resumed = load(&path).unwrap();
        resumed.matches(&spec(600, 4), &params()).unwrap();
        finish(&mut resumed);
        assert_eq!(resumed, whole);
    }

    #[test]
    fn a_state_file_is_resumed_only_by_its_own_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let (mut state, resumed) = start_or_resume(spec(48, 4), &params(), Some(&path)).unwrap();
        assert!(!resumed);
        let mut bundles = 0;
        play_to_end(&mut state, &mut Quadratic, Some(&path), &mut |_| {
            bundles += 1
        })
        .unwrap();
        assert_eq!(bundles, 2);
        let (again, resumed) = start_or_resume(spec(48, 4), &params(), Some(&path)).unwrap();
        assert!(resumed && again == state);
        assert_eq!(state.summary().duels, 6);
        let error = start_or_resume(spec(48, 5), &params(), Some(&path)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "state file {}: it belongs to another run (seed differs)",
                path.display()
            )
        );
    }

    #[test]
    fn a_state_of_another_run_is_refused_naming_the_field() {
        let state = RunState::new(spec(600, 4), params()).unwrap();
        let err = state.matches(&spec(600, 5), &params()).unwrap_err();
        assert!(err.contains("seed differs"), "{err}");
        let mut other = params();
        other[0].start = 51.0;
        let err = state.matches(&spec(600, 4), &other).unwrap_err();
        assert!(err.contains("parameters differ"), "{err}");
    }

    #[test]
    fn different_seeds_flip_differently() {
        let a = RunState::new(spec(600, 1), params())
            .unwrap()
            .next_bundle()
            .unwrap();
        let b = RunState::new(spec(600, 2), params())
            .unwrap()
            .next_bundle()
            .unwrap();
        assert_ne!(
            a.iter().map(|p| p.flips.clone()).collect::<Vec<_>>(),
            b.iter().map(|p| p.flips.clone()).collect::<Vec<_>>()
        );
    }
}
