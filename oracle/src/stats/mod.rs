//! Fishtest's statistics, ported from the mathematics (docs/statistics.md): pentanomial and
//! trinomial counts, normalized Elo, the generalized SPRT with its dynamic overshoot
//! correction, the estimates shown to people, the SPRT calculator and a Monte Carlo check.
//!
//! Everything here is pure functions over plain data: no files, no clocks, no printing.
//! The layering follows Fishtest's `LLRcalc` → `sprt` → `stat_util` and never runs back up:
//! `elo`, `error`, `counts`, `roots`, `distribution` and `params` at the bottom (`notation`,
//! how people write counts, on `counts` and `params`); `llr` and
//! `brownian` on them; `sprt` (the sequential test) and `estimate` above; `status`,
//! `calculator` and `simulate` on top.

mod brownian;
mod calculator;
mod counts;
mod distribution;
mod elo;
mod error;
mod estimate;
mod llr;
mod notation;
mod params;
mod roots;
mod simulate;
mod sprt;
mod status;
mod summary;

pub use calculator::{Characteristic, CurvePoint, EloRange, SprtCalculator};
pub use counts::{Counts, PentanomialCounts, TrinomialCounts};
pub use distribution::REGULARIZATION;
pub use elo::{Model, NELO_PER_T, logistic_elo, logistic_score};
pub use error::StatsError;
pub use estimate::{
    FixedGamesElo, NormalizedElo, SprtElo, fixed_games_elo, normalized_elo, sprt_elo,
    sweep_nelo_bound,
};
pub use llr::{llr, llr_normalized_approx};
pub use notation::{
    FishtestBounds, FishtestModel, FishtestResult, NotationError, parse_count_list,
    parse_pair_outcomes, parse_pentanomial, parse_trinomial,
};
pub use params::{SprtDecision, SprtParams};
pub use simulate::{SimulationSummary, pentanomial_at_nelo, simulate_sprt};
pub use sprt::{SequentialSprt, overshoot_limit};
pub use status::{SprtStatus, sprt_status};
pub use summary::{
    CalculatorResult, CalculatorSummary, GivenCounts, ReplaySummary, SimulationReport,
    StatusSummary, StatusTiming, TrajectoryRow, replay,
};
