//! Fishtest's SPRT calculator: pass probability and expected length of a test for a true
//! logistic Elo, from the Brownian approximation of the LLR (Fishtest's `sprt.js`).

use serde::Serialize;

use super::estimate::logistic_elo;
use super::llr::logistic;
use super::sprt::SprtParams;
use super::{Model, NELO_PER_T, StatsError, finite};

/// Below this |h·(A − B)| the drift is treated as zero (the limit formulas avoid 0/0).
const ZERO_DRIFT: f64 = 1e-6;

/// The operating characteristic of an SPRT design.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtCalculator {
    /// Wald's lower bound A.
    pub lower_bound: f64,
    /// Wald's upper bound B.
    pub upper_bound: f64,
    /// Per-game score variance V the design assumes.
    pub variance: f64,
    /// Expected score under H0.
    pub score0: f64,
    /// Expected score under H1.
    pub score1: f64,
    /// H0 in logistic Elo.
    pub logistic_elo0: f64,
    /// H1 in logistic Elo.
    pub logistic_elo1: f64,
}

/// Pass probability and expected length at one true Elo.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Characteristic {
    /// Probability that the test accepts H1.
    pub pass_probability: f64,
    /// Expected number of games (not pairs) until a decision.
    pub expected_games: f64,
}

impl SprtCalculator {
    /// The design for draw ratio `draw_ratio` and RMS opening bias `rms_bias` (logistic Elo):
    /// V = (1 − d)/4 − (L(r) − ½)².
    ///
    /// # Errors
    /// When d is outside [0, 1), r is negative or not finite, or V ≤ 0 (incompatible d and r).
    pub fn new(params: &SprtParams, draw_ratio: f64, rms_bias: f64) -> Result<Self, StatsError> {
        finite("draw ratio", draw_ratio)?;
        finite("bias", rms_bias)?;
        if !(0.0..1.0).contains(&draw_ratio) {
            return Err(StatsError::Calculator(format!(
                "draw ratio must lie in [0, 1), got {draw_ratio}"
            )));
        }
        if rms_bias < 0.0 {
            return Err(StatsError::Calculator(format!(
                "bias must not be negative, got {rms_bias}"
            )));
        }
        let variance = (1.0 - draw_ratio) / 4.0 - (logistic(rms_bias) - 0.5).powi(2);
        if variance <= 0.0 {
            return Err(StatsError::Calculator(format!(
                "draw ratio {draw_ratio} and bias {rms_bias} are incompatible: \
                 they leave no per-game variance"
            )));
        }
        Self::with_variance(params, variance)
    }

    /// The design for a known per-game score variance V (2v for pentanomial pairs).
    ///
    /// # Errors
    /// When V is not a positive finite number.
    pub fn with_variance(params: &SprtParams, variance: f64) -> Result<Self, StatsError> {
        if !(variance.is_finite() && variance > 0.0) {
            return Err(StatsError::Calculator(format!(
                "per-game variance must be positive, got {variance}"
            )));
        }
        let score = |elo: f64| match params.model {
            Model::Logistic => logistic(elo),
            Model::Normalized => 0.5 + elo / NELO_PER_T * variance.sqrt(),
        };
        let (score0, score1) = (score(params.elo0), score(params.elo1));
        Ok(Self {
            lower_bound: params.lower_bound(),
            upper_bound: params.upper_bound(),
            variance,
            score0,
            score1,
            logistic_elo0: logistic_elo(score0),
            logistic_elo1: logistic_elo(score1),
        })
    }

    /// Pass probability and expected games at true logistic Elo `elo`.
    #[must_use]
    pub fn characteristic(&self, elo: f64) -> Characteristic {
        let (a, b) = (self.lower_bound, self.upper_bound);
        let w2 = (self.score1 - self.score0).powi(2) / self.variance;
        let h = (2.0 * logistic(elo) - self.score0 - self.score1) / (self.score1 - self.score0);
        let (pass, scaled) = if (h * (a - b)).abs() < ZERO_DRIFT {
            (-a / (b - a), -a * b)
        } else {
            // For extreme h one exponential overflows; the ratio's limit is then 1 (h → +∞,
            // e^(−hA) huge) or 0 (h → −∞, e^(−hB) huge).
            let (ea, eb) = ((-h * a).exp(), (-h * b).exp());
            let pass = if ea.is_infinite() {
                1.0
            } else if eb.is_infinite() {
                0.0
            } else {
                (1.0 - ea) / (eb - ea)
            };
            (pass, 2.0 / h * (b * pass + a * (1.0 - pass)))
        };
        Characteristic {
            pass_probability: pass,
            expected_games: scaled / w2,
        }
    }
}
