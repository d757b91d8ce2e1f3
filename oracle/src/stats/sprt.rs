//! The sequential state of an SPRT with Fishtest's dynamic overshoot correction.

use serde::{Deserialize, Serialize};

use super::counts::PentanomialCounts;
use super::error::StatsError;
use super::llr::llr;
use super::params::{SprtDecision, SprtParams};

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
    use crate::stats::Model;

    fn params() -> SprtParams {
        SprtParams::new(0.0, 2.0, 0.05, 0.05, Model::Normalized).unwrap()
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
