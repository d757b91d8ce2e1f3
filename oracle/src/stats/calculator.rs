//! Fishtest's SPRT calculator: pass probability and expected length of a test for a true
//! logistic Elo, from the Brownian approximation of the LLR (Fishtest's `sprt.js`).

use serde::Serialize;

use super::elo::{Model, NELO_PER_T, logistic_elo, logistic_score};
use super::error::{StatsError, finite};
use super::params::SprtParams;

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
        let variance = (1.0 - draw_ratio) / 4.0 - (logistic_score(rms_bias) - 0.5).powi(2);
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
            Model::Logistic => logistic_score(elo),
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
        let h =
            (2.0 * logistic_score(elo) - self.score0 - self.score1) / (self.score1 - self.score0);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(elo0: f64, elo1: f64, model: Model) -> SprtParams {
        SprtParams::new(elo0, elo1, 0.05, 0.05, model).unwrap()
    }

    /// Worked example 2: at the bounds of [0, 2] nElo the expected length is
    /// 1.8·ln 19·(K/2)² ≈ 159,942 games, whatever the draw ratio and bias.
    #[test]
    fn worked_example_2() {
        for (d, r) in [(0.49, 191.0), (0.0, 0.0), (0.7, 60.0)] {
            let calc = SprtCalculator::new(&params(0.0, 2.0, Model::Normalized), d, r).unwrap();
            for (score, pass) in [(calc.score0, 0.05), (calc.score1, 0.95)] {
                let c = calc.characteristic(logistic_elo(score));
                assert_eq!(c.expected_games.round(), 159_942.0, "d {d} r {r}");
                assert!((c.pass_probability - pass).abs() < 1e-9);
            }
        }
        let closed = 1.8 * 19f64.ln() * (NELO_PER_T / 5.0).powi(2);
        let calc = SprtCalculator::new(&params(-5.0, 0.0, Model::Normalized), 0.49, 191.0).unwrap();
        let c = calc.characteristic(logistic_elo(calc.score1));
        assert!((c.expected_games - closed).abs() < 1e-6 * closed);
        assert!((closed - 25_590.0).abs() < 10.0);
    }

    #[test]
    fn midpoint_uses_the_zero_drift_limit() {
        let p = params(0.0, 5.0, Model::Logistic);
        let calc = SprtCalculator::new(&p, 0.5, 0.0).unwrap();
        let c = calc.characteristic(logistic_elo((calc.score0 + calc.score1) / 2.0));
        assert!((c.pass_probability - 0.5).abs() < 1e-6);
        let w2 = (calc.score1 - calc.score0).powi(2) / calc.variance;
        let limit = -p.lower_bound() * p.upper_bound() / w2;
        assert!((c.expected_games - limit).abs() < 1e-3 * limit);
    }

    #[test]
    fn extremes_stay_finite() {
        let calc = SprtCalculator::new(&params(-1500.0, 0.0, Model::Logistic), 0.49, 0.0).unwrap();
        for elo in [-3000.0, -1500.0, 0.0, 800.0, 3000.0] {
            let c = calc.characteristic(elo);
            assert!(c.pass_probability.is_finite() && (0.0..=1.0).contains(&c.pass_probability));
            assert!(
                c.expected_games.is_finite() && c.expected_games >= 0.0,
                "{elo}: {c:?}"
            );
        }
    }

    #[test]
    fn bad_inputs_are_named() {
        let p = params(0.0, 2.0, Model::Normalized);
        for (d, r, word) in [
            (1.0, 0.0, "draw ratio"),
            (-0.1, 0.0, "draw ratio"),
            (0.5, -1.0, "bias"),
            (0.9, 300.0, "incompatible"),
        ] {
            let message = SprtCalculator::new(&p, d, r).unwrap_err().to_string();
            assert!(message.contains(word), "{message}");
        }
    }
}
