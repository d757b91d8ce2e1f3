//! Stop rules: what the runner asks after every counted pair whether the match is over. The
//! one SPRT rule serves `oracle match --sprt` (batches of one pair, no minimum) and the
//! stages of `oracle verify` (the profile's batch size and minimum games).

use super::tally::Tally;
use crate::stats::{PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, StatsError};

/// Decides after every counted pair whether the match stops early.
pub trait StopRule {
    /// Called with the cumulative tally after each counted pair; true stops the match.
    fn should_stop(&mut self, tally: &Tally) -> bool;
}

/// The sequential SPRT as a stop rule: it looks at every multiple of its batch size and stops
/// on a decision once at least `min_pairs` pairs are counted (a statistics error stops too,
/// and is kept for the caller). A stage at a node limit also stops at its first look from
/// `min_pairs` on when every pair so far was the same game twice
/// ([`SprtStop::stopping_when_indistinguishable`]).
#[derive(Debug, Clone)]
pub struct SprtStop {
    sequential: SequentialSprt,
    min_pairs: u64,
    path: Vec<(u64, f64)>,
    error: Option<StatsError>,
    stops_when_indistinguishable: bool,
    indistinguishable: bool,
    looks_after: u64,
}

impl SprtStop {
    /// A test with pre-registered `params`, looking every `batch_pairs` pairs.
    pub fn new(
        params: SprtParams,
        batch_pairs: u64,
        min_pairs: u64,
    ) -> Result<SprtStop, StatsError> {
        Ok(SprtStop {
            sequential: SequentialSprt::new(params, batch_pairs)?,
            min_pairs,
            path: vec![(0, 0.0)],
            error: None,
            stops_when_indistinguishable: false,
            indistinguishable: false,
            looks_after: 0,
        })
    }

    /// The same test, which also ends the match at a look from `min_pairs` on at which every
    /// counted pair repeated its first game in its second: at a node limit that means the two
    /// engines play alike, and no number of further games can tell them apart.
    #[must_use]
    pub fn stopping_when_indistinguishable(mut self) -> SprtStop {
        self.stops_when_indistinguishable = true;
        self
    }

    /// The same test, which does not look at the first `pairs` counted: pairs an earlier run of
    /// the same match played and looked at, at its own looks, without a decision (pairs taken
    /// over). Looking again inside them would add looks that run never made.
    #[must_use]
    pub fn looking_after(mut self, pairs: u64) -> SprtStop {
        self.looks_after = pairs;
        self
    }

    /// Whether the match stopped because the engines could not be told apart.
    pub fn indistinguishable(&self) -> bool {
        self.indistinguishable
    }

    /// The sequential test after its last look.
    pub fn sequential(&self) -> &SequentialSprt {
        &self.sequential
    }

    /// The LLR at each look as `(pairs, LLR)`, starting at `(0, 0)`.
    pub fn path(&self) -> &[(u64, f64)] {
        &self.path
    }

    /// The statistics error that stopped the match, if one did.
    pub fn error(&self) -> Option<&StatsError> {
        self.error.as_ref()
    }
}

impl StopRule for SprtStop {
    fn should_stop(&mut self, tally: &Tally) -> bool {
        let counts = PentanomialCounts(tally.pentanomial);
        let pairs = counts.pairs();
        if pairs <= self.looks_after || !pairs.is_multiple_of(self.sequential.batch_size_pairs()) {
            return false;
        }
        match self.sequential.update(&counts) {
            Ok(decision) => {
                self.path.push((pairs, self.sequential.llr()));
                let enough = pairs >= self.min_pairs;
                self.indistinguishable =
                    self.stops_when_indistinguishable && enough && tally.all_pairs_identical();
                self.indistinguishable || (decision != SprtDecision::Continue && enough)
            }
            Err(error) => {
                self.error = Some(error);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Model;

    #[test]
    fn looks_only_at_batch_boundaries_and_waits_for_the_minimum() {
        let params = SprtParams::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).unwrap();
        let mut rule = SprtStop::new(params, 4, 12).unwrap();
        // Mostly lost pairs for the first engine: H0 is accepted quickly, but not before 12
        // pairs and only at a look.
        let mut stopped_at = None;
        for pairs in 1..=200 {
            let tally = Tally {
                pairs,
                pentanomial: [pairs - pairs / 3, pairs / 3 - pairs / 6, pairs / 6, 0, 0],
                ..Tally::default()
            };
            if rule.should_stop(&tally) {
                stopped_at = Some(pairs);
                break;
            }
        }
        let stopped_at = stopped_at.expect("H0 is accepted");
        assert!(stopped_at >= 12 && stopped_at % 4 == 0, "{stopped_at}");
        assert!(rule.path().iter().all(|(pairs, _)| pairs % 4 == 0));
        assert_eq!(rule.sequential().decision(), SprtDecision::AcceptH0);
        assert!(rule.error().is_none());
    }

    #[test]
    fn looks_only_after_the_pairs_taken_over() {
        let params = SprtParams::new(0.0, 5.0, 0.05, 0.05, Model::Normalized).unwrap();
        let losing = |pairs: u64| Tally {
            pairs,
            pentanomial: [pairs - pairs / 3, pairs / 3 - pairs / 6, pairs / 6, 0, 0],
            ..Tally::default()
        };
        let first_stop = |rule: &mut SprtStop| (1..=400).find(|&p| rule.should_stop(&losing(p)));
        let mut fresh = SprtStop::new(params, 4, 4).unwrap();
        let decided = first_stop(&mut fresh).expect("H0 is accepted");
        // The pairs up to that look taken over, undecided where their run looked: the first look
        // here is the next one after them.
        let mut after = SprtStop::new(params, 4, 4).unwrap().looking_after(decided);
        assert_eq!(first_stop(&mut after), Some(decided + 4));
        assert_eq!(after.path()[1..], [(decided + 4, after.sequential().llr())]);
    }

    #[test]
    fn stops_when_indistinguishable_only_if_asked_and_only_if_every_pair_repeated() {
        let params = SprtParams::new(0.0, 10.0, 0.05, 0.05, Model::Normalized).unwrap();
        let tally = |pairs, identical_pairs| Tally {
            pairs,
            pentanomial: [0, 0, pairs, 0, 0],
            identical_pairs,
            ..Tally::default()
        };
        let first_stop = |mut rule: SprtStop, identical: fn(u64) -> u64| {
            (1..=4000)
                .find(|&pairs| rule.should_stop(&tally(pairs, identical(pairs))))
                .map(|pairs| (pairs, rule.indistinguishable()))
        };
        let asked = || {
            SprtStop::new(params, 8, 100)
                .unwrap()
                .stopping_when_indistinguishable()
        };
        // Every pair the same game twice: the first look from the minimum on ends it.
        assert_eq!(first_stop(asked(), |pairs| pairs), Some((104, true)));
        // One pair that differed: the SPRT decides as usual (H0, slowly: the play is alike),
        // never `indistinguishable`.
        let stop = first_stop(asked(), |pairs| pairs - 1).expect("the SPRT decides");
        assert!(!stop.1, "{stop:?}");
        // Not asked (a timed stage): the same identical games are left to the SPRT.
        let stop = first_stop(SprtStop::new(params, 8, 100).unwrap(), |pairs| pairs);
        assert!(stop.is_none_or(|(_, indistinguishable)| !indistinguishable));
    }
}
