//! Stop rules: what the runner asks after every counted pair whether the match is over. The
//! one SPRT rule serves `oracle match --sprt` (batches of one pair, no minimum) and the
//! stages of `oracle verify` (the profile's batch size and minimum games).

use crate::stats::{PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, StatsError};

/// Decides after every counted pair whether the match stops early.
pub trait StopRule {
    /// Called with the cumulative pentanomial counts after each counted pair; true stops the match.
    fn should_stop(&mut self, pentanomial: [u64; 5]) -> bool;
}

/// The sequential SPRT as a stop rule: it looks at every multiple of its batch size and stops
/// on a decision once at least `min_pairs` pairs are counted (a statistics error stops too,
/// and is kept for the caller).
#[derive(Debug, Clone)]
pub struct SprtStop {
    sequential: SequentialSprt,
    min_pairs: u64,
    path: Vec<(u64, f64)>,
    error: Option<StatsError>,
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
        })
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
    fn should_stop(&mut self, pentanomial: [u64; 5]) -> bool {
        let counts = PentanomialCounts(pentanomial);
        let pairs = counts.pairs();
        if !pairs.is_multiple_of(self.sequential.batch_size_pairs()) {
            return false;
        }
        match self.sequential.update(&counts) {
            Ok(decision) => {
                self.path.push((pairs, self.sequential.llr()));
                decision != SprtDecision::Continue && pairs >= self.min_pairs
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
            if rule.should_stop([pairs - pairs / 3, pairs / 3 - pairs / 6, pairs / 6, 0, 0]) {
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
}
