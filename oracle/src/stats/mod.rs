//! Fishtest's statistics, ported from the mathematics (STATISTICS.md): pentanomial and
//! trinomial counts, normalized Elo, the generalized SPRT with its dynamic overshoot
//! correction, the estimates shown to people, the SPRT calculator and a Monte Carlo check.
//!
//! Everything here is pure functions over plain data: no files, no clocks, no printing.

mod brownian;
mod calculator;
mod counts;
mod distribution;
mod estimate;
mod llr;
mod roots;
mod simulate;
mod sprt;
mod status;

pub use calculator::{Characteristic, SprtCalculator};
pub use counts::{Counts, PentanomialCounts, TrinomialCounts};
pub use estimate::{
    FixedGamesElo, NormalizedElo, SprtElo, fixed_games_elo, logistic_elo, logistic_score,
    normalized_elo, sprt_elo,
};
pub use llr::{llr, llr_normalized_approx};
pub use simulate::{SimulationSummary, pentanomial_at_nelo, simulate_sprt};
pub use sprt::{SequentialSprt, SprtDecision, SprtParams, overshoot_limit};
pub use status::{SprtStatus, sprt_status};

use serde::{Deserialize, Serialize};

/// Normalized Elo per unit of t-value: 800 / ln 10 (nElo = K·(μ − ½)/σ per game).
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Every zero bucket becomes this pseudo-count before anything else (Fishtest's regularization).
pub const REGULARIZATION: f64 = 1e-3;

/// The Elo scale the SPRT bounds are expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// Normalized Elo: the t-value of the score scaled by `NELO_PER_T` (the oracle's decision path).
    Normalized,
    /// Logistic Elo: score = 1/(1 + 10^(−elo/400)).
    Logistic,
}

impl Model {
    /// The name used on the command line and in JSON.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Model::Normalized => "normalized",
            Model::Logistic => "logistic",
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a statistic could not be computed; every variant names the input at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// A parameter is NaN or infinite.
    #[error("{name} must be a finite number, got {value}")]
    NotFinite {
        /// The parameter's name (`elo0`, `alpha`, …).
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The hypotheses are not ordered.
    #[error("elo1 ({elo1}) must be greater than elo0 ({elo0})")]
    BoundsOrder {
        /// Lower hypothesis.
        elo0: f64,
        /// Upper hypothesis.
        elo1: f64,
    },
    /// An error probability outside the open interval (0, 1).
    #[error("{name} must lie strictly between 0 and 1, got {value}")]
    Probability {
        /// `alpha` or `beta`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The batch size of a sequential test is zero.
    #[error("batch size must be at least one pair")]
    EmptyBatch,
    /// A hypothesis that no distribution near the data can reach (e.g. elo0 = −1500 nElo).
    #[error(
        "{name} = {elo} {model} Elo is out of reach for these counts: the maximum-likelihood \
         solver has no root there; use bounds closer to the data"
    )]
    Unreachable {
        /// `elo0` or `elo1`.
        name: &'static str,
        /// The hypothesis.
        elo: f64,
        /// Its model.
        model: Model,
    },
    /// Calculator inputs that give no positive per-game variance, or are out of range.
    #[error("{0}")]
    Calculator(String),
    /// A distribution or target outside what the simulator can model.
    #[error("{0}")]
    Simulation(String),
}

/// Checks that a parameter is finite, naming it otherwise.
pub(crate) fn finite(name: &'static str, value: f64) -> Result<f64, StatsError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(StatsError::NotFinite { name, value })
    }
}
