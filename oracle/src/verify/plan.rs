//! The plan printed before any game: per stage the time control, the bounds, the games the SPRT
//! is expected to need, and what that costs on this machine — so that nobody starts a fleet's
//! worth of games by accident (a bare `oracle verify` has no default profile for this reason).
//!
//! Expected games come from Fishtest's calculator (`oracle sprt calc`, [`SprtCalculator`]) at
//! both bounds; in normalized Elo they do not depend on the draw ratio or the opening bias. They
//! are clamped to the stage's `[min_games, max_games]`. The time per game is derived from the
//! time control and the engines' measured bench speed (nodes per second, step 4), assuming
//! [`PLIES_PER_GAME`] plies; the wall time divides by the games played at once.

use std::fmt::Write as _;
use std::num::NonZeroU32;
use std::time::Duration;

use serde::Serialize;

use crate::governance::constitution::Profile;
use crate::governance::entry::PathKind;
use crate::play::clock::TimeControl;
use crate::stats::SprtCalculator;

use super::round::RoundSize;
use super::stage::{StageError, stage_sprt_params};

/// Plies a game is assumed to last for the time estimate (adjudication ends many games sooner).
pub const PLIES_PER_GAME: f64 = 100.0;

/// Fishtest calculator's default draw ratio; it cancels out in normalized Elo.
const DRAW_RATIO: f64 = 0.49;
/// Fishtest calculator's default RMS opening bias (logistic Elo); it cancels out in normalized Elo.
const RMS_BIAS: f64 = 191.0;

/// What one stage is expected to cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageForecast {
    /// The stage's name.
    pub name: String,
    /// Time control or node limit, as the constitution writes it.
    pub tc: String,
    /// `[elo0, elo1]` in nElo for the declared path.
    pub bounds: [f64; 2],
    /// Expected games if the true difference is elo0, then elo1 (calculator, clamped to the
    /// stage's minimum and maximum).
    pub expected_games: [u64; 2],
    /// The stage's maximum games (the worst case).
    pub max_games: u64,
    /// Estimated engine seconds for one game (both sides).
    pub seconds_per_game: f64,
    /// Games played at once here.
    pub concurrency: usize,
    /// Estimated wall-clock hours at the larger expected game count.
    pub expected_hours: f64,
    /// Estimated wall-clock hours at `max_games`.
    pub max_hours: f64,
}

/// The forecast of every stage of `profile` for `path`, at `nodes_per_second` (the slower of the
/// two engines' bench speeds) with `cores` usable cores.
///
/// # Errors
/// A stage whose bounds are not a valid SPRT.
pub fn forecast(
    profile: &Profile,
    path: PathKind,
    nodes_per_second: u64,
    cores: usize,
) -> Result<Vec<StageForecast>, StageError> {
    profile
        .stages
        .iter()
        .map(|stage| {
            let params = stage_sprt_params(stage, profile, path)?;
            let calculator = SprtCalculator::new(&params, DRAW_RATIO, RMS_BIAS)
                .expect("the calculator's defaults are a valid design");
            let clamp =
                |games: f64| (games.round() as u64).clamp(stage.min_games, stage.max_games.get());
            let expected_games = [
                clamp(
                    calculator
                        .characteristic(calculator.logistic_elo0)
                        .expected_games,
                ),
                clamp(
                    calculator
                        .characteristic(calculator.logistic_elo1)
                        .expected_games,
                ),
            ];
            let seconds_per_game = seconds_per_game(stage.tc, nodes_per_second);
            let concurrency = (stage.concurrency.get() as usize).clamp(1, cores.max(1));
            let hours = |games: u64| games as f64 * seconds_per_game / concurrency as f64 / 3600.0;
            Ok(StageForecast {
                name: stage.name.clone(),
                tc: stage.tc.to_string(),
                bounds: [params.elo0, params.elo1],
                expected_games,
                max_games: stage.max_games.get(),
                seconds_per_game,
                concurrency,
                expected_hours: hours(expected_games[0].max(expected_games[1])),
                max_hours: hours(stage.max_games.get()),
            })
        })
        .collect()
}

/// Engine seconds of one game: a clock game uses at most its base (once per period) and
/// increments on both sides; a node-limited game searches its node limit every ply at the
/// bench speed; a movetime game spends it every ply.
///
/// # Panics
/// On a depth limit, whose cost nothing here predicts; the constitution admits only clocks
/// and node limits (`governance::time_control`).
#[must_use]
pub fn seconds_per_game(tc: TimeControl, nodes_per_second: u64) -> f64 {
    let moves_per_side = PLIES_PER_GAME / 2.0;
    // Milliseconds as the constitution writes them, so that its clocks cost what they always did.
    let ms = |d: Duration| d.as_nanos() as f64 / 1e6;
    match tc {
        TimeControl::Clock {
            base,
            increment,
            moves,
        } => {
            let periods = moves.map_or(1.0, |m| (moves_per_side / f64::from(m)).ceil());
            2.0 * (ms(base) * periods + ms(increment) * moves_per_side) / 1000.0
        }
        TimeControl::Nodes(nodes) => {
            PLIES_PER_GAME * nodes.get() as f64 / nodes_per_second.max(1) as f64
        }
        TimeControl::Movetime(t) => PLIES_PER_GAME * t.as_secs_f64(),
        TimeControl::Depth(_) => unreachable!("the constitution admits no depth limit"),
    }
}

/// What one stage is expected to take at one true difference, played in rounds of shards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageRounds {
    /// The stage's name.
    pub name: String,
    /// Time control or node limit, as the constitution writes it.
    pub tc: String,
    /// `[elo0, elo1]` in nElo for the declared path.
    pub bounds: [f64; 2],
    /// Probability that the stage accepts H1 (calculator).
    pub pass_probability: f64,
    /// Expected games until the stage decides (calculator, clamped to the stage's minimum and
    /// maximum).
    pub expected_games: u64,
    /// How a round is sized for one shard.
    pub round: RoundSize,
    /// Games all shards play in one round.
    pub games_per_round: u64,
    /// Expected rounds: the expected games in whole rounds.
    pub expected_rounds: u64,
}

/// What the profile is expected to take at one true difference, played in rounds of shards.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProfileRounds {
    /// The true difference in nElo.
    pub nelo: f64,
    /// Shards a round is cut into.
    pub shards: u32,
    /// Every stage, as if it were played.
    pub stages: Vec<StageRounds>,
    /// Expected rounds of the profile: each stage's, weighted by the probability that every
    /// stage before it passed (a stage that fails ends the run).
    pub expected_rounds: f64,
}

/// The rounds `profile` is expected to take at a true difference of `nelo` when every round
/// gives each of `shards` shards `round_minutes` (sized as `oracle verify --no-play
/// --round-minutes` sizes it, [`RoundSize`]) on machines of `cores` cores and, for stages at a
/// node limit, `nodes_per_second`.
///
/// # Errors
/// A stage whose bounds are not a valid SPRT.
pub fn rounds(
    profile: &Profile,
    path: PathKind,
    nelo: f64,
    shards: u32,
    round_minutes: NonZeroU32,
    nodes_per_second: u64,
    cores: usize,
) -> Result<ProfileRounds, StageError> {
    let mut stages = Vec::with_capacity(profile.stages.len());
    let (mut expected_rounds, mut reached) = (0.0, 1.0);
    for stage in &profile.stages {
        let params = stage_sprt_params(stage, profile, path)?;
        let calculator = SprtCalculator::new(&params, DRAW_RATIO, RMS_BIAS)
            .expect("the calculator's defaults are a valid design");
        let at = calculator.characteristic(calculator.logistic_elo_of_nelo(nelo));
        let expected_games =
            (at.expected_games.round() as u64).clamp(stage.min_games, stage.max_games.get());
        let concurrency = (stage.concurrency.get() as usize).clamp(1, cores.max(1));
        let round = RoundSize::new(
            Some(round_minutes),
            u64::from(profile.batch_size.get()),
            seconds_per_game(stage.tc, nodes_per_second),
            concurrency,
        );
        let games_per_round = 2 * round.pairs * u64::from(shards.max(1));
        let stage_rounds = expected_games.div_ceil(games_per_round);
        expected_rounds += reached * stage_rounds as f64;
        reached *= at.pass_probability;
        stages.push(StageRounds {
            name: stage.name.clone(),
            tc: stage.tc.to_string(),
            bounds: [params.elo0, params.elo1],
            pass_probability: at.pass_probability,
            expected_games,
            round,
            games_per_round,
            expected_rounds: stage_rounds,
        });
    }
    Ok(ProfileRounds {
        nelo,
        shards,
        stages,
        expected_rounds,
    })
}

/// [`rounds`] as lines for the terminal; with `rounds_per_run`, also the workflow runs (a run
/// plays at most that many rounds).
#[must_use]
pub fn render_rounds(
    profile: &str,
    forecast: &ProfileRounds,
    rounds_per_run: Option<u32>,
) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{profile} at a true {:+} nElo, {} shards a round:",
        forecast.nelo, forecast.shards
    );
    for s in &forecast.stages {
        let _ = writeln!(
            text,
            "  {} at {} [{}, {}]: passes {:.1}%, ~{} games expected; {} pairs a shard a round \
             (~{:.0} s a game, {} at once), {} games a round: ~{} rounds",
            s.name,
            s.tc,
            s.bounds[0],
            s.bounds[1],
            100.0 * s.pass_probability,
            s.expected_games,
            s.round.pairs,
            s.round.seconds_per_game,
            s.round.concurrency,
            s.games_per_round,
            s.expected_rounds
        );
    }
    let _ = write!(
        text,
        "  expected: {:.1} rounds (a later stage's weighted by the chance that it is reached)",
        forecast.expected_rounds
    );
    match rounds_per_run {
        Some(per_run) => {
            let _ = writeln!(
                text,
                ", ~{} workflow runs of {per_run} rounds",
                (forecast.expected_rounds / f64::from(per_run.max(1))).ceil()
            );
        }
        None => text.push('\n'),
    }
    text
}

/// The plan as lines for the terminal.
#[must_use]
pub fn render(forecasts: &[StageForecast], nodes_per_second: u64) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "plan (expected games from the SPRT calculator at elo0 / elo1; time at {nodes_per_second} \
         nodes/s from the bench, {PLIES_PER_GAME} plies per game):"
    );
    for f in forecasts {
        let _ = writeln!(
            text,
            "  {} at {}: SPRT [{}, {}] nElo, expected {} / {} games (at most {}), \
             ~{:.2} s per game, {} at once: ~{} expected, at most ~{}",
            f.name,
            f.tc,
            f.bounds[0],
            f.bounds[1],
            f.expected_games[0],
            f.expected_games[1],
            f.max_games,
            f.seconds_per_game,
            f.concurrency,
            duration(f.expected_hours),
            duration(f.max_hours)
        );
    }
    text
}

/// Hours as the most readable unit.
fn duration(hours: f64) -> String {
    if hours < 1.0 / 60.0 {
        format!("{:.0} s", hours * 3600.0)
    } else if hours < 1.0 {
        format!("{:.0} min", hours * 60.0)
    } else if hours < 48.0 {
        format!("{hours:.1} h")
    } else {
        format!("{:.1} days", hours / 24.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::constitution::Constitution;
    use crate::governance::time_control;

    fn official() -> Profile {
        let yaml = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../constitution/constitution.yaml"
        ))
        .unwrap();
        let constitution =
            Constitution::parse(&yaml, std::path::Path::new("constitution.yaml")).unwrap();
        constitution.profile("official").unwrap().clone()
    }

    /// Worked example 2 of docs/statistics.md: [0, 2] nElo at α = β = 0.05 expects about
    /// 159,942 games at either bound; the official long stage's 40+0.4 clock is at most
    /// 2 × (40 + 0.4 × 50) = 120 s per game.
    #[test]
    fn the_official_profile_is_tens_of_thousands_of_games_and_days_on_two_cores() {
        let plan = forecast(&official(), PathKind::Standard, 1_000_000, 2).unwrap();
        assert_eq!(plan[0].expected_games[0], 159_942);
        assert_eq!(plan[0].expected_games, [159_942, 159_942]);
        assert_eq!(plan[0].seconds_per_game, 2.0 * (8.0 + 0.08 * 50.0));
        assert_eq!(plan[1].seconds_per_game, 120.0);
        assert!(plan[1].expected_hours > 48.0, "{:?}", plan[1]);
        let text = render(&plan, 1_000_000);
        assert!(
            text.contains(
                "short at 8+0.08: SPRT [0, 2] nElo, expected 159942 / 159942 games (at most 400000)"
            ),
            "{text}"
        );
        assert!(text.contains(" days"), "{text}");
    }

    /// The pull-request workflow's fleet: 8 shards, 300 minutes a round, 2 games at once.
    #[test]
    fn the_official_profile_in_rounds_of_a_fleet() {
        let minutes = NonZeroU32::new(300).unwrap();
        let gain = rounds(&official(), PathKind::Standard, 2.0, 8, minutes, 1, 2).unwrap();
        let short = &gain.stages[0];
        assert_eq!((short.round.pairs, short.games_per_round), (750, 12_000));
        assert_eq!(short.expected_games, 159_942, "at elo1 of [0, 2]");
        assert_eq!(short.expected_rounds, 14);
        assert!((short.pass_probability - 0.95).abs() < 1e-9);
        assert_eq!(gain.stages[1].round.pairs, 150, "40+0.4: 120 s a game");
        let expected = 14.0 + 0.95 * gain.stages[1].expected_rounds as f64;
        assert!((gain.expected_rounds - expected).abs() < 1e-6, "{gain:?}");
        let none = rounds(&official(), PathKind::Standard, 0.0, 8, minutes, 1, 2).unwrap();
        assert!((none.stages[0].pass_probability - 0.05).abs() < 1e-9);
        let text = render_rounds("official", &none, Some(6));
        assert!(
            text.starts_with("official at a true +0 nElo, 8 shards a round:"),
            "{text}"
        );
        assert!(text.contains("workflow runs of 6 rounds"), "{text}");
    }

    #[test]
    fn node_limits_use_the_bench_speed_and_clamp_to_the_stage() {
        assert_eq!(
            seconds_per_game(time_control::parse("nodes=8000").unwrap(), 800_000),
            1.0
        );
        let clock = time_control::parse("8+0.08").unwrap();
        assert_eq!(
            seconds_per_game(clock, 1),
            2.0 * (8000.0 + 80.0 * 50.0) / 1000.0
        );
        let periods: TimeControl = "40/60+0".parse().unwrap();
        assert_eq!(seconds_per_game(periods, 1), 2.0 * 2.0 * 60.0);
        let randfall = forecast(&official(), PathKind::Randfall, 1_000_000, 2).unwrap();
        assert_eq!(randfall[0].bounds, [-5.0, 0.0]);
        assert!(randfall[0].expected_games[1] <= 400_000);
    }
}
