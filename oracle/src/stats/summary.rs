//! What `oracle sprt` says: one typed summary per subcommand, whose `Display` is the text for
//! people and whose `Serialize` is the `--json` object; and the replay of pair outcomes batch
//! by batch, as a live test would have looked at them.

use std::fmt;

use serde::{Serialize, Serializer};

use super::calculator::{Characteristic, CurvePoint, SprtCalculator};
use super::counts::{Counts, PentanomialCounts, TrinomialCounts};
use super::error::StatsError;
use super::notation::FishtestResult;
use super::params::{SprtDecision, SprtParams};
use super::simulate::SimulationSummary;
use super::sprt::SequentialSprt;
use super::status::{SprtStatus, sprt_status};

/// Counts as they were given: pair counts (pentanomial) or game counts (trinomial).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GivenCounts {
    /// Pair counts [LL, LD, DD+WL, WD, WW].
    Pentanomial(PentanomialCounts),
    /// Game counts [L, D, W].
    Trinomial(TrinomialCounts),
}

impl GivenCounts {
    /// The SPRT status of these counts under `params`.
    ///
    /// # Errors
    /// See [`sprt_status`].
    pub fn status(&self, params: &SprtParams) -> Result<SprtStatus, StatsError> {
        match self {
            GivenCounts::Pentanomial(counts) => sprt_status(counts, params),
            GivenCounts::Trinomial(counts) => sprt_status(counts, params),
        }
    }
}

impl FishtestResult {
    /// The result's counts: its pentanomial counts when it shows them, else its W/L/D.
    #[must_use]
    pub fn counts(&self) -> GivenCounts {
        match self.pentanomial {
            Some(counts) => GivenCounts::Pentanomial(counts),
            None => GivenCounts::Trinomial(self.trinomial),
        }
    }
}

/// A percentage with two decimals.
fn percent(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

/// What `oracle sprt status` reports: the status of the given counts; its JSON object is the
/// [`SprtStatus`] alone.
#[derive(Debug, Clone, Copy)]
pub struct StatusSummary {
    /// The counts as given.
    pub counts: GivenCounts,
    /// The test.
    pub params: SprtParams,
    /// Its status on the counts.
    pub status: SprtStatus,
}

impl StatusSummary {
    /// The status of `counts` under `params`.
    ///
    /// # Errors
    /// See [`sprt_status`].
    pub fn new(counts: GivenCounts, params: SprtParams) -> Result<StatusSummary, StatsError> {
        Ok(StatusSummary {
            status: counts.status(&params)?,
            counts,
            params,
        })
    }
}

impl Serialize for StatusSummary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.status.serialize(serializer)
    }
}

/// The fastchess-style block (`Elo`, `nElo`, `LOS`, `Ptnml(0-2)`, `LLR`) plus the SPRT estimate.
impl fmt::Display for StatusSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.status;
        let fixed_half = (s.fixed_games_elo_ci95[1] - s.fixed_games_elo_ci95[0]) / 2.0;
        let nelo_half = (s.nelo_ci95[1] - s.nelo_ci95[0]) / 2.0;
        writeln!(
            f,
            "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}",
            s.fixed_games_elo, fixed_half, s.nelo, nelo_half
        )?;
        let (points, games) = match &self.counts {
            GivenCounts::Pentanomial(c) => (Counts::points(c), c.games()),
            GivenCounts::Trinomial(c) => (Counts::points(c), c.games()),
        };
        let score = if games == 0 {
            0.5
        } else {
            points / games as f64
        };
        match &self.counts {
            GivenCounts::Pentanomial(c) => {
                let [ll, ld, _, wd, ww] = c.0;
                let ratio = if ll + ld == 0 {
                    "-".to_owned()
                } else {
                    format!("{:.2}", (ww + wd) as f64 / (ll + ld) as f64)
                };
                writeln!(f, "LOS: {}, PairsRatio: {ratio}", percent(s.los))?;
                writeln!(
                    f,
                    "Games: {}, Pairs: {}, Points: {:.1} ({})",
                    c.games(),
                    c.pairs(),
                    points,
                    percent(score)
                )?;
                writeln!(f, "Ptnml(0-2): [{ll}, {ld}, {}, {wd}, {ww}]", c.0[2])?;
            }
            GivenCounts::Trinomial(c) => {
                let [l, d, w] = c.0;
                let draw_ratio = if games == 0 {
                    0.0
                } else {
                    d as f64 / games as f64
                };
                writeln!(
                    f,
                    "LOS: {}, DrawRatio: {}",
                    percent(s.los),
                    percent(draw_ratio)
                )?;
                writeln!(
                    f,
                    "Games: {games}, Wins: {w}, Losses: {l}, Draws: {d}, Points: {points:.1} ({})",
                    percent(score)
                )?;
            }
        }
        writeln!(
            f,
            "SPRT Elo: {:.2} [{:.2}, {:.2}] (median-unbiased, 95%)",
            s.elo, s.elo_ci95[0], s.elo_ci95[1]
        )?;
        let params = &self.params;
        writeln!(
            f,
            "LLR: {:.2} ({:.2}, {:.2}) [{:.2}, {:.2}] {}",
            s.llr, s.lower_bound, s.upper_bound, params.elo0, params.elo1, params.model
        )?;
        writeln!(f, "State: {}", s.state)
    }
}

/// One look of a replay: pairs, LLR, the overshoot corrections o0 and o1, and the state.
pub type TrajectoryRow = (u64, f64, f64, f64, SprtDecision);

/// What `oracle sprt replay` reports: every look of the sequential test and its final status.
#[derive(Debug, Clone, Serialize)]
pub struct ReplaySummary {
    /// The looks, one per batch, up to the first decision.
    pub trajectory: Vec<TrajectoryRow>,
    /// The status at the last look, with the sequential test's decision.
    #[serde(rename = "final")]
    pub final_status: StatusSummary,
    /// Pairs after the decision that were not looked at.
    #[serde(skip)]
    pub unused_pairs: u64,
}

/// Replays pair `outcomes` (the candidate's half-points per pair, 0–4, in play order) through
/// the sequential test of `params`, looking after every `batch` pairs.
///
/// # Errors
/// An outcome above 4, a batch of zero pairs, or a status that cannot be computed.
pub fn replay(
    outcomes: &[usize],
    params: SprtParams,
    batch: u64,
) -> Result<ReplaySummary, StatsError> {
    let mut sprt = SequentialSprt::new(params, batch)?;
    let mut counts = PentanomialCounts::default();
    let mut trajectory = Vec::new();
    let batch = usize::try_from(batch).unwrap_or(usize::MAX);
    // Look after every batch, and once more on a trailing partial batch (which, as in
    // Fishtest, drops the overshoot correction); stop at the first decision like a live test.
    for chunk in outcomes.chunks(batch) {
        for &outcome in chunk {
            if outcome > 4 {
                return Err(StatsError::PairOutcome(outcome));
            }
            counts.record(outcome);
        }
        let state = sprt.update(&counts)?;
        trajectory.push((counts.pairs(), sprt.llr(), sprt.o0(), sprt.o1(), state));
        if state != SprtDecision::Continue {
            break;
        }
    }
    let mut final_status = StatusSummary::new(GivenCounts::Pentanomial(counts), params)?;
    final_status.status.state = sprt.decision();
    Ok(ReplaySummary {
        trajectory,
        final_status,
        unused_pairs: outcomes.len() as u64 - counts.pairs(),
    })
}

impl fmt::Display for ReplaySummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:>10} {:>9} {:>8} {:>8}  state",
            "pairs", "llr", "o0", "o1"
        )?;
        for (pairs, llr, o0, o1, state) in &self.trajectory {
            writeln!(f, "{pairs:>10} {llr:>9.4} {o0:>8.4} {o1:>8.4}  {state}")?;
        }
        if self.unused_pairs > 0 {
            writeln!(
                f,
                "stopped at the decision; {} later pairs not used",
                self.unused_pairs
            )?;
        }
        self.final_status.fmt(f)
    }
}

/// What the calculator computed: one point of the characteristic, or the curve over a range.
#[derive(Debug, Clone)]
pub enum CalculatorResult {
    /// The characteristic at one true logistic Elo.
    Point {
        /// The true logistic Elo.
        elo: f64,
        /// Pass probability and expected games there.
        characteristic: Characteristic,
    },
    /// The characteristic over a range of true logistic Elo.
    Curve(Vec<CurvePoint>),
}

/// What `oracle sprt calc` reports: the test's design and its operating characteristic.
#[derive(Debug, Clone)]
pub struct CalculatorSummary {
    /// The test.
    pub params: SprtParams,
    /// Draw ratio of the games.
    pub draw_ratio: f64,
    /// RMS opening bias in logistic Elo.
    pub bias: f64,
    /// The design in logistic Elo.
    pub calculator: SprtCalculator,
    /// The point or the curve.
    pub result: CalculatorResult,
}

/// The JSON object of a curve: the design and its points.
#[derive(Serialize)]
struct CurveObject<'a> {
    design: &'a SprtCalculator,
    curve: &'a [CurvePoint],
}

impl Serialize for CalculatorSummary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.result {
            CalculatorResult::Point { characteristic, .. } => characteristic.serialize(serializer),
            CalculatorResult::Curve(curve) => CurveObject {
                design: &self.calculator,
                curve,
            }
            .serialize(serializer),
        }
    }
}

impl fmt::Display for CalculatorSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (params, calculator) = (&self.params, &self.calculator);
        writeln!(
            f,
            "SPRT [{:.2}, {:.2}] {}, alpha {}, beta {}, draw ratio {}, RMS bias {} Elo",
            params.elo0,
            params.elo1,
            params.model,
            params.alpha,
            params.beta,
            self.draw_ratio,
            self.bias
        )?;
        writeln!(
            f,
            "Bounds in logistic Elo: [{:.3}, {:.3}], per-game variance {:.5}, LLR bounds ({:.2}, {:.2})",
            calculator.logistic_elo0,
            calculator.logistic_elo1,
            calculator.variance,
            calculator.lower_bound,
            calculator.upper_bound
        )?;
        let curve = match &self.result {
            CalculatorResult::Point {
                elo,
                characteristic,
            } => {
                return writeln!(
                    f,
                    "True Elo {elo:.2}: pass probability {}, expected games {:.0} ({:.0} pairs)",
                    percent(characteristic.pass_probability),
                    characteristic.expected_games,
                    characteristic.expected_games / 2.0
                );
            }
            CalculatorResult::Curve(curve) => curve,
        };
        writeln!(f, "{:>9} {:>9} {:>15}", "Elo", "P(pass)", "expected games")?;
        for point in curve {
            let bound = if point.elo == calculator.logistic_elo0 {
                "  elo0"
            } else if point.elo == calculator.logistic_elo1 {
                "  elo1"
            } else {
                ""
            };
            writeln!(
                f,
                "{:>9.3} {:>9} {:>15.0}{bound}",
                point.elo,
                percent(point.pass_probability),
                point.expected_games
            )?;
        }
        Ok(())
    }
}

/// What `oracle sprt simulate` reports: the simulated operating characteristic.
#[derive(Debug, Clone, Serialize)]
pub struct SimulationReport {
    /// H0 in normalized Elo.
    pub elo0: f64,
    /// H1 in normalized Elo.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// Pairs per batch of the sequential test.
    pub batch_pairs: u64,
    /// Seed of the streams.
    pub seed: u64,
    /// One row per true nElo.
    pub runs: Vec<SimulationSummary>,
    /// Time the simulation took.
    pub seconds: f64,
    /// Simulated tests per true nElo.
    #[serde(skip)]
    pub tests: u64,
}

impl fmt::Display for SimulationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "SPRT [{}, {}] nElo, alpha {}, beta {}, batch {} pairs, {} tests per point, seed {}",
            self.elo0, self.elo1, self.alpha, self.beta, self.batch_pairs, self.tests, self.seed
        )?;
        writeln!(
            f,
            "{:>8} {:>8} {:>17} {:>10} {:>20} {:>11} {:>9}",
            "nElo",
            "Elo",
            "pass rate ± SE",
            "calc pass",
            "mean games ± SE",
            "calc games",
            "truncated"
        )?;
        for r in &self.runs {
            writeln!(
                f,
                "{:>8.3} {:>8.3} {:>9.4} ± {:.4} {:>10.4} {:>11.0} ± {:>6.0} {:>11.0} {:>9}",
                r.true_nelo,
                r.true_elo,
                r.pass_rate,
                r.pass_rate_se,
                r.calculator_pass_probability,
                r.mean_games,
                r.mean_games_se,
                r.calculator_expected_games,
                r.truncated
            )?;
        }
        writeln!(f, "time: {:.1} s", self.seconds)
    }
}

/// What `oracle sprt bench` reports: the time of one status computation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StatusTiming {
    /// Mean time per computation.
    pub microseconds_per_call: f64,
    /// Computations timed.
    pub iterations: u64,
    /// Pairs of the counts.
    pub pairs: u64,
    /// Their LLR.
    pub llr: f64,
}

impl fmt::Display for StatusTiming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "sprt_status: {:.1} us per call over {} calls (pairs {}, llr {:.4})",
            self.microseconds_per_call, self.iterations, self.pairs, self.llr
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Model;

    fn params() -> SprtParams {
        SprtParams::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).unwrap()
    }

    #[test]
    fn a_replay_looks_after_every_batch_and_stops_at_the_decision() {
        // All wins: the test accepts H1 long before the outcomes run out.
        let outcomes = vec![4; 1000];
        let summary = replay(&outcomes, params(), 10).unwrap();
        let last = summary.trajectory.last().unwrap();
        assert_eq!(last.4, SprtDecision::AcceptH1);
        assert!(summary.trajectory.iter().all(|row| row.0 % 10 == 0));
        assert_eq!(summary.unused_pairs, 1000 - last.0);
        assert_eq!(summary.final_status.status.state, SprtDecision::AcceptH1);
        assert!(summary.to_string().contains("later pairs not used"));
    }

    #[test]
    fn a_replay_refuses_an_outcome_above_four() {
        assert_eq!(
            replay(&[2, 5], params(), 1).unwrap_err(),
            StatsError::PairOutcome(5)
        );
    }

    #[test]
    fn status_json_is_the_status_alone() {
        let counts = GivenCounts::Pentanomial(PentanomialCounts([1, 2, 3, 2, 1]));
        let summary = StatusSummary::new(counts, params()).unwrap();
        assert_eq!(
            serde_json::to_value(summary).unwrap(),
            serde_json::to_value(summary.status).unwrap()
        );
    }
}
