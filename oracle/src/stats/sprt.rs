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

/// The largest overshoot correction a recorded test can claim at its final `counts`.
///
/// A correction is Σδ²/(2·Σδ) over the LLR's steps δ between looks, hence at most half the
/// largest step. The steps are not recorded, so the limit is the largest change of the LLR that
/// one batch of `batch_pairs` pairs, all in one bucket, makes at the final counts — doubled, to
/// leave room for the larger steps of the early looks. A forged entry cannot narrow the bounds
/// to its liking (an LLR of 0.78 never passes for 2.94), while an honest correction, a few
/// hundredths at realistic bounds, always fits.
///
/// # Errors
/// A [`StatsError`] when the LLR cannot be computed at these counts.
pub fn overshoot_limit(
    counts: &PentanomialCounts,
    params: &SprtParams,
    batch_pairs: u64,
) -> Result<f64, StatsError> {
    let here = llr(counts, params)?;
    let mut largest: f64 = 0.0;
    for bucket in 0..counts.0.len() {
        let mut more = *counts;
        more.0[bucket] += batch_pairs;
        largest = largest.max((llr(&more, params)? - here).abs());
        if counts.0[bucket] >= batch_pairs {
            let mut fewer = *counts;
            fewer.0[bucket] -= batch_pairs;
            largest = largest.max((here - llr(&fewer, params)?).abs());
        }
    }
    Ok(largest)
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

    /// The bounds the last decision was taken against (Wald's, overshoot-corrected); the entry
    /// records these, so that the recorded state follows from the recorded LLR and bounds.
    #[must_use]
    pub fn decision_bounds(&self) -> (f64, f64) {
        self.params.corrected_bounds(self.o0(), self.o1())
    }

    /// Whether the overshoot correction is still valid (whole batches, never decreasing).
    #[must_use]
    pub fn overshoot_valid(&self) -> bool {
        self.overshoot.is_some()
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

    /// Batches that make the LLR rise: each new maximum adds its step to m1 and its square to sq1.
    #[test]
    fn overshoot_follows_new_extremes() {
        let batches = [
            PentanomialCounts([0, 1, 1, 2, 0]),
            PentanomialCounts([0, 0, 2, 1, 1]),
            PentanomialCounts([0, 0, 1, 2, 1]),
        ];
        let mut sprt = SequentialSprt::new(params(), 4).unwrap();
        let mut counts = PentanomialCounts::default();
        let mut llrs = Vec::new();
        for batch in batches {
            counts += batch;
            sprt.update(&counts).unwrap();
            llrs.push(sprt.llr());
            assert_eq!(sprt.llr(), llr(&counts, &params()).unwrap());
        }
        assert!(
            llrs[0] > 0.0 && llrs[1] > llrs[0] && llrs[2] > llrs[1],
            "{llrs:?}"
        );
        let sq1 = llrs[0].powi(2) + (llrs[1] - llrs[0]).powi(2) + (llrs[2] - llrs[1]).powi(2);
        assert!((sprt.o1() - sq1 / (2.0 * llrs[2])).abs() < 1e-15);
        assert_eq!(sprt.o0(), 0.0);
        // The same counts again change nothing.
        let before = sprt.clone();
        sprt.update(&counts).unwrap();
        assert_eq!(sprt, before);
        // Persisted and restored, the state is identical.
        let json = serde_json::to_string(&sprt).unwrap();
        assert_eq!(serde_json::from_str::<SequentialSprt>(&json).unwrap(), sprt);
    }

    #[test]
    fn overshoot_is_dropped_on_a_broken_contract() {
        let mut sprt = SequentialSprt::new(params(), 4).unwrap();
        sprt.update(&PentanomialCounts([0, 1, 1, 2, 0])).unwrap();
        assert!(sprt.o1() > 0.0);
        // A decrease (lost samples) drops the correction for good.
        let mut shrunk = sprt.clone();
        shrunk.update(&PentanomialCounts([0, 0, 0, 0, 0])).unwrap();
        assert!(!shrunk.overshoot_valid());
        assert_eq!((shrunk.o0(), shrunk.o1()), (0.0, 0.0));
        // A count that is not a multiple of the batch drops it too.
        sprt.update(&PentanomialCounts([0, 1, 1, 3, 0])).unwrap();
        assert!(!sprt.overshoot_valid());
        sprt.update(&PentanomialCounts([0, 1, 2, 5, 0])).unwrap();
        assert_eq!((sprt.o0(), sprt.o1()), (0.0, 0.0));
    }

    #[test]
    fn a_skipped_batch_resets_references_but_keeps_sums() {
        let mut sprt = SequentialSprt::new(params(), 4).unwrap();
        sprt.update(&PentanomialCounts([0, 1, 1, 2, 0])).unwrap();
        let first = sprt.llr();
        let o1 = sprt.o1();
        // Jump two batches: no step is recorded, the new LLR becomes both references.
        sprt.update(&PentanomialCounts([0, 2, 3, 6, 1])).unwrap();
        assert!(sprt.llr() > first);
        assert_eq!(sprt.o1(), o1);
        assert!(sprt.overshoot_valid());
        // The next single batch steps from the reset reference.
        let jumped = sprt.llr();
        sprt.update(&PentanomialCounts([0, 2, 3, 8, 3])).unwrap();
        let step = sprt.llr() - jumped;
        assert!(step > 0.0);
        let expected = (first * first + step * step) / (2.0 * (first + step));
        assert!((sprt.o1() - expected).abs() < 1e-15);
    }

    #[test]
    fn empty_batches_are_refused() {
        assert_eq!(
            SequentialSprt::new(params(), 0),
            Err(StatsError::EmptyBatch)
        );
    }
}
