//! SPRT parameters, Wald bounds, the strict decision rule and the sequential state with
//! Fishtest's dynamic overshoot correction.

use serde::{Deserialize, Serialize};

use super::counts::PentanomialCounts;
use super::llr::llr;
use super::{Model, StatsError, finite};

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

    /// The strict decision for `llr` with overshoot corrections `o0`, `o1` (0 for a one-off look).
    #[must_use]
    pub fn decide(&self, llr: f64, o0: f64, o1: f64) -> SprtDecision {
        if llr < self.lower_bound() + o0 {
            SprtDecision::AcceptH0
        } else if llr > self.upper_bound() - o1 {
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

/// Siegmund's overshoot bookkeeping (Fishtest's `overshoot` record), sampled at batch boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
struct Overshoot {
    /// Pairs at the last accepted update.
    last_update: u64,
    /// Pairs skipped by jumps larger than one batch (audit only).
    skipped_updates: u64,
    /// LLR at the last new minimum.
    ref0: f64,
    /// Running minimum path (sum of downward steps), ≤ 0.
    m0: f64,
    /// Sum of squared downward steps.
    sq0: f64,
    /// LLR at the last new maximum.
    ref1: f64,
    /// Running maximum path (sum of upward steps), ≥ 0.
    m1: f64,
    /// Sum of squared upward steps.
    sq1: f64,
}

impl Overshoot {
    /// Expected overshoot below the lower bound: −sq0/(2·m0).
    fn o0(&self) -> f64 {
        if self.m0 == 0.0 {
            0.0
        } else {
            -self.sq0 / (2.0 * self.m0)
        }
    }

    /// Expected overshoot above the upper bound: sq1/(2·m1).
    fn o1(&self) -> f64 {
        if self.m1 == 0.0 {
            0.0
        } else {
            self.sq1 / (2.0 * self.m1)
        }
    }
}

/// A running SPRT fed cumulative pentanomial counts after every batch of pairs.
///
/// The LLR is always recomputed from the cumulative totals. The overshoot correction is only
/// valid while updates arrive at whole batches in increasing order; a count that is not a
/// multiple of the batch size, or one that decreases, drops it for good (as Fishtest does).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialSprt {
    params: SprtParams,
    batch_size_pairs: u64,
    llr: f64,
    pairs: u64,
    decision: SprtDecision,
    overshoot: Option<Overshoot>,
}

impl SequentialSprt {
    /// A fresh test with no data.
    ///
    /// # Errors
    /// [`StatsError::EmptyBatch`] for a zero batch size.
    pub fn new(params: SprtParams, batch_size_pairs: u64) -> Result<Self, StatsError> {
        if batch_size_pairs == 0 {
            return Err(StatsError::EmptyBatch);
        }
        Ok(Self {
            params,
            batch_size_pairs,
            llr: 0.0,
            pairs: 0,
            decision: SprtDecision::Continue,
            overshoot: Some(Overshoot::default()),
        })
    }

    /// Takes the cumulative counts after a batch and returns the decision.
    ///
    /// # Errors
    /// [`StatsError::Unreachable`] when a bound cannot be fitted to the data.
    pub fn update(&mut self, cumulative: &PentanomialCounts) -> Result<SprtDecision, StatsError> {
        let pairs = cumulative.pairs();
        if !pairs.is_multiple_of(self.batch_size_pairs) {
            self.overshoot = None;
        }
        let llr = llr(cumulative, &self.params)?;
        self.llr = llr;
        if let Some(o) = &mut self.overshoot {
            if pairs < o.last_update {
                self.overshoot = None;
            } else {
                if pairs == o.last_update + self.batch_size_pairs {
                    if llr < o.ref0 {
                        let delta = llr - o.ref0;
                        o.m0 += delta;
                        o.sq0 += delta * delta;
                        o.ref0 = llr;
                    }
                    if llr > o.ref1 {
                        let delta = llr - o.ref1;
                        o.m1 += delta;
                        o.sq1 += delta * delta;
                        o.ref1 = llr;
                    }
                } else if pairs != o.last_update {
                    // Lost updates: restart the reference points, keep the sums.
                    o.ref0 = llr;
                    o.ref1 = llr;
                    o.skipped_updates += pairs - o.last_update - 1;
                }
                o.last_update = pairs;
            }
        }
        self.pairs = pairs;
        self.decision = self.params.decide(llr, self.o0(), self.o1());
        Ok(self.decision)
    }

    /// The parameters of the test.
    #[must_use]
    pub fn params(&self) -> &SprtParams {
        &self.params
    }

    /// Pairs per batch.
    #[must_use]
    pub fn batch_size_pairs(&self) -> u64 {
        self.batch_size_pairs
    }

    /// LLR at the last update.
    #[must_use]
    pub fn llr(&self) -> f64 {
        self.llr
    }

    /// Pairs at the last update.
    #[must_use]
    pub fn pairs(&self) -> u64 {
        self.pairs
    }

    /// Decision at the last update.
    #[must_use]
    pub fn decision(&self) -> SprtDecision {
        self.decision
    }

    /// Overshoot correction added to the lower bound (0 once the correction was dropped).
    #[must_use]
    pub fn o0(&self) -> f64 {
        self.overshoot.as_ref().map_or(0.0, Overshoot::o0)
    }

    /// Overshoot correction subtracted from the upper bound (0 once the correction was dropped).
    #[must_use]
    pub fn o1(&self) -> f64 {
        self.overshoot.as_ref().map_or(0.0, Overshoot::o1)
    }

    /// Whether the overshoot correction is still valid (whole batches, never decreasing).
    #[must_use]
    pub fn overshoot_valid(&self) -> bool {
        self.overshoot.is_some()
    }
}
