//! Conversions between Elo and expected score: the logistic curve both SPRT models and every
//! estimate use (Fishtest's `L_` and `elo`), and the two Elo scales. It depends on nothing else
//! in `stats`.

use serde::{Deserialize, Serialize};

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

/// Normalized Elo per unit of t-value: 800 / ln 10 (nElo = K·(μ − ½)/σ per game).
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Scores are clamped to [ε, 1 − ε] before conversion to Elo so that 10–0 stays finite.
const SCORE_CLAMP: f64 = 1e-3;

/// Logistic score of an Elo difference: 1/(1 + 10^(−elo/400)).
#[must_use]
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo of a score, with the score clamped to [0.001, 0.999] (±1200 Elo at most).
#[must_use]
pub fn logistic_elo(score: f64) -> f64 {
    let x = score.clamp(SCORE_CLAMP, 1.0 - SCORE_CLAMP);
    // Adding 0.0 turns −0.0 (an even score) into 0.0 so it never prints as "-0.00".
    -400.0 * (1.0 / x - 1.0).log10() + 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_and_elo_are_inverse_and_clamped() {
        for elo in [-800.0, -3.5, 0.0, 2.0, 400.0] {
            assert!(
                (logistic_elo(logistic_score(elo)) - elo).abs() < 1e-9,
                "{elo}"
            );
        }
        assert!((logistic_score(400.0) - 10.0 / 11.0).abs() < 1e-15);
        // 10-0 stays finite: the score is clamped to 0.999 (about +1199.6 Elo).
        assert_eq!(logistic_elo(1.0), logistic_elo(0.999));
        assert!(logistic_elo(1.0) < 1200.0);
        assert_eq!(logistic_elo(0.5).to_string(), "0");
    }
}
