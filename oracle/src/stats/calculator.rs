//! Fishtest's SPRT calculator: pass probability and expected length of a test for a true
//! logistic Elo, from the Brownian approximation of the LLR (Fishtest's `sprt.js`).

use serde::Serialize;

use super::elo::{Model, NELO_PER_T, logistic_elo, logistic_score};
use super::error::{StatsError, finite};
use super::params::SprtParams;

/// The expected score of a difference of `nelo` normalized Elo at per-game variance `variance`.
fn normalized_score(nelo: f64, variance: f64) -> f64 {
    0.5 + nelo / NELO_PER_T * variance.sqrt()
}

/// Below this |h·(A − B)| the drift is treated as zero (the limit formulas avoid 0/0).
const ZERO_DRIFT: f64 = 1e-6;

/// Most points of one curve: a table or figure longer than this is a typing error.
const MAX_CURVE_POINTS: usize = 10_000;

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

/// One point of the operating characteristic over a range of true Elo.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// True logistic Elo.
    pub elo: f64,
    /// Probability that the test accepts H1.
    pub pass_probability: f64,
    /// Expected number of games until a decision.
    pub expected_games: f64,
}

/// The x axis of a calculator curve: first point, last point and step, in logistic Elo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloRange {
    /// First Elo.
    pub from: f64,
    /// Last Elo (included).
    pub to: f64,
    /// Distance between neighbouring points.
    pub step: f64,
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
            Model::Normalized => normalized_score(elo, variance),
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

    /// Fishtest calculator's axis for this design: from ⌊elo0 − Δ/3⌋ to ⌈elo1 + Δ/3⌉ in
    /// logistic Elo (Δ = elo1 − elo0), twenty points per Elo when that spans at most 5 Elo and
    /// ten otherwise (its `calc.js`).
    #[must_use]
    pub fn fishtest_range(&self) -> EloRange {
        let delta = self.logistic_elo1 - self.logistic_elo0;
        let from = (self.logistic_elo0 - delta / 3.0).floor();
        let to = (self.logistic_elo1 + delta / 3.0).ceil();
        let per_elo = if to - from <= 5.0 { 20.0 } else { 10.0 };
        EloRange {
            from,
            to,
            step: 1.0 / per_elo,
        }
    }

    /// The characteristic at every point of `range` and at the design's bounds inside it (as
    /// Fishtest's calculator marks them), in increasing Elo.
    ///
    /// # Errors
    /// [`StatsError::Calculator`] for a range that is empty, not finite, not increasing, or of
    /// more than 10,000 points.
    pub fn curve(&self, range: EloRange) -> Result<Vec<CurvePoint>, StatsError> {
        let EloRange { from, to, step } = range;
        finite("range start", from)?;
        finite("range end", to)?;
        finite("step", step)?;
        if !(from < to && step > 0.0) {
            return Err(StatsError::Calculator(format!(
                "the Elo range must run upwards with a positive step, got {from} to {to} by {step}"
            )));
        }
        let steps = ((to - from) / step).round();
        if steps >= MAX_CURVE_POINTS as f64 {
            return Err(StatsError::Calculator(format!(
                "{from} to {to} by {step} is more than {MAX_CURVE_POINTS} points"
            )));
        }
        let mut elos: Vec<f64> = (0..=steps as usize)
            .map(|k| from + k as f64 * step)
            .collect();
        for bound in [self.logistic_elo0, self.logistic_elo1] {
            if (from..=to).contains(&bound) && !elos.iter().any(|&e| (e - bound).abs() < 1e-12) {
                elos.push(bound);
            }
        }
        elos.sort_by(f64::total_cmp);
        Ok(elos
            .into_iter()
            .map(|elo| {
                let c = self.characteristic(elo);
                CurvePoint {
                    elo,
                    pass_probability: c.pass_probability,
                    expected_games: c.expected_games,
                }
            })
            .collect())
    }

    /// The logistic Elo of a true difference of `nelo` normalized Elo at this design's
    /// per-game variance (the point of the characteristic to look at for it).
    #[must_use]
    pub fn logistic_elo_of_nelo(&self, nelo: f64) -> f64 {
        logistic_elo(normalized_score(nelo, self.variance))
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

    /// Fishtest's calculator (`sprt.js`, `calc.js`) at its defaults, [0, 2] nElo, draw ratio
    /// 0.49, RMS bias 191: its axis and values, computed by the same formulas in Python.
    #[test]
    fn curve_matches_fishtests_calculator() {
        let calc = SprtCalculator::new(&params(0.0, 2.0, Model::Normalized), 0.49, 191.0).unwrap();
        let range = calc.fishtest_range();
        assert_eq!((range.from, range.to, range.step), (-1.0, 2.0, 0.05));
        let curve = calc.curve(range).unwrap();
        // 61 grid points and elo1; elo0 = 0 is on the grid (Fishtest lists it twice).
        assert_eq!(curve.len(), 62);
        let at = |elo: f64| *curve.iter().find(|p| (p.elo - elo).abs() < 1e-9).unwrap();
        for (elo, pass, games) in [
            (-1.0, 0.000_162_840_184_247_852_28, 59_970.458_520_062_47),
            (0.5, 0.486_162_719_038_977_4, 261_566.916_399_386_16),
            (2.0, 0.999_818_076_841_786_9, 60_739.966_752_947_1),
        ] {
            let p = at(elo);
            assert!(
                (p.pass_probability - pass).abs() < 1e-12 * pass.max(1e-3),
                "{p:?}"
            );
            assert!((p.expected_games - games).abs() < 1e-9 * games, "{p:?}");
        }
        let at_elo1 = at(calc.logistic_elo1);
        assert!((at_elo1.pass_probability - 0.95).abs() < 1e-12);
        assert!((at_elo1.expected_games - 159_942.422_191_019_84).abs() < 1e-6);
        assert!(curve.windows(2).all(|w| w[0].elo < w[1].elo));
        let bad = EloRange {
            from: 2.0,
            to: 1.0,
            step: 0.1,
        };
        assert!(calc.curve(bad).is_err());
        let huge = EloRange {
            from: 0.0,
            to: 1.0,
            step: 1e-6,
        };
        assert!(calc.curve(huge).is_err());
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
