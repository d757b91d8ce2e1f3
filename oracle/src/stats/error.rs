//! The one error type of the statistics: every variant names the input at fault.

use super::elo::Model;

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
    /// A pair outcome outside 0–4 half-points.
    #[error("pair outcome {0} is not one of 0-4")]
    PairOutcome(usize),
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
