//! The pre-registered parameters of an SPRT, Wald's bounds and the strict decision rule: the
//! bottom of the SPRT layering (Fishtest's `LLRcalc` → `sprt` → `stat_util`), used by the LLR,
//! the sequential test and the estimates alike.

use serde::{Deserialize, Serialize};

use super::elo::Model;
use super::error::{StatsError, finite};

/// The pre-registered parameters of one SPRT.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawSprtParams")]
pub struct SprtParams {
    /// H0: the Elo difference is `elo0` (in `model` units).
    pub elo0: f64,
    /// H1: the Elo difference is `elo1` (> `elo0`).
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// The Elo scale of `elo0` and `elo1`.
    pub model: Model,
}

/// The unchecked shape of [`SprtParams`], so that deserialized parameters are validated too.
#[derive(Deserialize)]
struct RawSprtParams {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    model: Model,
}

impl TryFrom<RawSprtParams> for SprtParams {
    type Error = StatsError;
    fn try_from(raw: RawSprtParams) -> Result<Self, StatsError> {
        SprtParams::new(raw.elo0, raw.elo1, raw.alpha, raw.beta, raw.model)
    }
}

impl SprtParams {
    /// Validated parameters: finite bounds with `elo1 > elo0`, α and β in (0, 1).
    ///
    /// # Errors
    /// A [`StatsError`] naming the parameter at fault.
    pub fn new(
        elo0: f64,
        elo1: f64,
        alpha: f64,
        beta: f64,
        model: Model,
    ) -> Result<Self, StatsError> {
        finite("elo0", elo0)?;
        finite("elo1", elo1)?;
        if elo1 <= elo0 {
            return Err(StatsError::BoundsOrder { elo0, elo1 });
        }
        for (name, value) in [("alpha", alpha), ("beta", beta)] {
            if !(value > 0.0 && value < 1.0) {
                return Err(StatsError::Probability { name, value });
            }
        }
        Ok(Self {
            elo0,
            elo1,
            alpha,
            beta,
            model,
        })
    }

    /// Wald's lower bound A = ln(β/(1−α)): below it H0 is accepted.
    #[must_use]
    pub fn lower_bound(&self) -> f64 {
        (self.beta / (1.0 - self.alpha)).ln()
    }

    /// Wald's upper bound B = ln((1−β)/α): above it H1 is accepted.
    #[must_use]
    pub fn upper_bound(&self) -> f64 {
        ((1.0 - self.beta) / self.alpha).ln()
    }

    /// The decision bounds with overshoot corrections `o0`, `o1`: Wald's, narrowed towards 0.
    #[must_use]
    pub fn corrected_bounds(&self, o0: f64, o1: f64) -> (f64, f64) {
        (self.lower_bound() + o0, self.upper_bound() - o1)
    }

    /// The overshoot corrections that narrow Wald's bounds to `(lower, upper)`; the inverse of
    /// [`SprtParams::corrected_bounds`].
    #[must_use]
    pub fn corrections_of(&self, lower: f64, upper: f64) -> (f64, f64) {
        (lower - self.lower_bound(), self.upper_bound() - upper)
    }

    /// The strict decision for `llr` with overshoot corrections `o0`, `o1` (0 for a one-off look).
    #[must_use]
    pub fn decide(&self, llr: f64, o0: f64, o1: f64) -> SprtDecision {
        let (lower, upper) = self.corrected_bounds(o0, o1);
        if llr < lower {
            SprtDecision::AcceptH0
        } else if llr > upper {
            SprtDecision::AcceptH1
        } else {
            SprtDecision::Continue
        }
    }
}

/// The state of an SPRT after a look at the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprtDecision {
    /// The LLR fell below the lower bound: no evidence of elo ≥ elo1 (the test fails).
    AcceptH0,
    /// The LLR rose above the upper bound (the test passes).
    AcceptH1,
    /// Neither bound reached: play more pairs.
    Continue,
}

impl SprtDecision {
    /// The name used in JSON and human output.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            SprtDecision::AcceptH0 => "accept_h0",
            SprtDecision::AcceptH1 => "accept_h1",
            SprtDecision::Continue => "continue",
        }
    }
}

impl std::fmt::Display for SprtDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> SprtParams {
        SprtParams::new(0.0, 2.0, 0.05, 0.05, Model::Normalized).unwrap()
    }
    #[test]
    fn validation_names_the_parameter() {
        let n = Model::Normalized;
        assert_eq!(
            SprtParams::new(2.0, 2.0, 0.05, 0.05, n),
            Err(StatsError::BoundsOrder {
                elo0: 2.0,
                elo1: 2.0
            })
        );
        for (alpha, beta, name) in [
            (0.0, 0.05, "alpha"),
            (0.05, 1.0, "beta"),
            (1.5, 0.05, "alpha"),
        ] {
            match SprtParams::new(0.0, 2.0, alpha, beta, n) {
                Err(StatsError::Probability { name: got, .. }) => assert_eq!(got, name),
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(
            SprtParams::new(f64::NAN, 2.0, 0.05, 0.05, n),
            Err(StatsError::NotFinite { name: "elo0", .. })
        ));
        let bad: Result<SprtParams, _> = serde_json::from_str(
            r#"{"elo0":1.0,"elo1":0.0,"alpha":0.05,"beta":0.05,"model":"normalized"}"#,
        );
        assert!(bad.unwrap_err().to_string().contains("elo1"));
    }

    #[test]
    fn wald_bounds() {
        let p = params();
        assert!((p.upper_bound() - 2.944_438_979_166_440_3).abs() < 1e-15);
        assert!((p.lower_bound() + 2.944_438_979_166_440_3).abs() < 1e-15);
        let q = SprtParams::new(0.0, 2.0, 0.1, 0.2, Model::Logistic).unwrap();
        assert!((q.lower_bound() - (0.2f64 / 0.9).ln()).abs() < 1e-15);
        assert!((q.upper_bound() - 8f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn decisions_are_strict() {
        let p = params();
        let (a, b) = (p.lower_bound(), p.upper_bound());
        assert_eq!(p.decide(b, 0.0, 0.0), SprtDecision::Continue);
        assert_eq!(p.decide(b.next_up(), 0.0, 0.0), SprtDecision::AcceptH1);
        assert_eq!(p.decide(a, 0.0, 0.0), SprtDecision::Continue);
        assert_eq!(p.decide(a.next_down(), 0.0, 0.0), SprtDecision::AcceptH0);
        // Overshoot corrections pull both bounds inwards.
        assert_eq!(p.decide(b - 0.2, 0.0, 0.3), SprtDecision::AcceptH1);
        assert_eq!(p.decide(a + 0.2, 0.3, 0.0), SprtDecision::AcceptH0);
        assert_eq!(
            serde_json::to_string(&[
                SprtDecision::AcceptH0,
                SprtDecision::AcceptH1,
                SprtDecision::Continue
            ])
            .unwrap(),
            r#"["accept_h0","accept_h1","continue"]"#
        );
    }
}
