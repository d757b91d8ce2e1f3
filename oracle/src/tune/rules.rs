//! The end rules and the T statistic (docs/spsa.md).
//!
//! Each tuning runs twice from the same start; per parameter one rule turns
//! the two end values into the value to adopt.

use serde::{Deserialize, Serialize};

/// Which tuned values to adopt after two independent runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum EndRule {
    /// Both runs moved it the same way, each by at least 0.5·c_end → their mean; else the start.
    Filter,
    /// Always the mean of both runs.
    SeedMean,
    /// The mean when |T| ≥ 1, else the start.
    #[value(name = "seed-mean-t1")]
    SeedMeanT1,
}

impl EndRule {
    /// Every rule, in the order tables show them.
    pub const ALL: [EndRule; 3] = [EndRule::Filter, EndRule::SeedMean, EndRule::SeedMeanT1];

    /// The rule's key in JSON and tables.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            EndRule::Filter => "filter",
            EndRule::SeedMean => "seed_mean",
            EndRule::SeedMeanT1 => "seed_mean_t1",
        }
    }
}

/// What one parameter looks like after both runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Start value of both runs.
    pub start: f64,
    /// End value of run 1.
    pub run1: f64,
    /// End value of run 2.
    pub run2: f64,
    /// Perturbation radius at the end of the run (the unit of the filter's threshold).
    pub c_end: f64,
    /// T over all duels of both runs.
    pub t: f64,
}

/// Share of c_end each run must move a parameter for the filter to accept it.
pub const FILTER_THRESHOLD: f64 = 0.5;

/// The value `rule` adopts for one parameter.
#[must_use]
pub fn decide(rule: EndRule, o: &Outcome) -> f64 {
    let mean = 0.5 * (o.run1 + o.run2);
    match rule {
        EndRule::SeedMean => mean,
        EndRule::SeedMeanT1 => {
            if o.t.abs() >= 1.0 {
                mean
            } else {
                o.start
            }
        }
        EndRule::Filter => {
            let (d1, d2) = (o.run1 - o.start, o.run2 - o.start);
            let far = FILTER_THRESHOLD * o.c_end;
            if d1 * d2 > 0.0 && d1.abs() >= far && d2.abs() >= far {
                mean
            } else {
                o.start
            }
        }
    }
}

/// Running sums of one parameter's single signals s_j; T = Σ s_j / √(Σ s_j²).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Σ s_j.
    pub sum: f64,
    /// Σ s_j².
    pub sum_sq: f64,
}

impl Signal {
    /// Adds one duel: s = (value in "+" − value in "−")/c_end × the duel's result.
    pub fn add(&mut self, plus: f64, minus: f64, c_end: f64, result: f64) {
        let s = (plus - minus) / c_end * result;
        self.sum += s;
        self.sum_sq += s * s;
    }

    /// The signals of both runs together.
    #[must_use]
    pub fn merged(self, other: Signal) -> Signal {
        Signal {
            sum: self.sum + other.sum,
            sum_sq: self.sum_sq + other.sum_sq,
        }
    }

    /// T; 0 when there is no signal at all (every duel drawn or no perturbation).
    #[must_use]
    pub fn t(self) -> f64 {
        if self.sum_sq > 0.0 {
            self.sum / self.sum_sq.sqrt()
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(run1: f64, run2: f64, t: f64) -> Outcome {
        Outcome {
            start: 10.0,
            run1,
            run2,
            c_end: 2.0,
            t,
        }
    }

    #[test]
    fn seed_mean_always_takes_the_mean() {
        assert_eq!(decide(EndRule::SeedMean, &outcome(12.0, 9.0, 0.0)), 10.5);
    }

    #[test]
    fn filter_needs_same_direction_and_half_c_end_each() {
        // Both up by ≥ 1.0 = 0.5·c_end.
        assert_eq!(decide(EndRule::Filter, &outcome(11.0, 13.0, 0.0)), 12.0);
        assert_eq!(decide(EndRule::Filter, &outcome(7.0, 8.5, 0.0)), 7.75);
        // One run short of the threshold.
        assert_eq!(decide(EndRule::Filter, &outcome(10.99, 13.0, 0.0)), 10.0);
        // Opposite directions.
        assert_eq!(decide(EndRule::Filter, &outcome(12.0, 8.0, 0.0)), 10.0);
        // One run did not move.
        assert_eq!(decide(EndRule::Filter, &outcome(10.0, 13.0, 0.0)), 10.0);
    }

    #[test]
    fn t_rule_needs_abs_t_of_one() {
        assert_eq!(decide(EndRule::SeedMeanT1, &outcome(12.0, 9.0, 1.0)), 10.5);
        assert_eq!(decide(EndRule::SeedMeanT1, &outcome(12.0, 9.0, -1.3)), 10.5);
        assert_eq!(decide(EndRule::SeedMeanT1, &outcome(12.0, 9.0, 0.99)), 10.0);
    }

    #[test]
    fn t_of_hand_made_signals() {
        let mut a = Signal::default();
        // Duel 1: "+" at 12, "−" at 8, c_end 2 → distance 2, result +3 → s = 6.
        a.add(12.0, 8.0, 2.0, 3.0);
        // Duel 2: "+" at 9, "−" at 11 → distance −1, result +2 → s = −2.
        a.add(9.0, 11.0, 2.0, 2.0);
        let mut b = Signal::default();
        // Duel 3: distance 2, result −1 → s = −2; duel 4: distance 1, result 4 → s = 4.
        b.add(12.0, 8.0, 2.0, -1.0);
        b.add(11.0, 9.0, 2.0, 4.0);
        // s = 6, −2, −2, 4: Σ = 6, Σ² = 60.
        let t = a.merged(b).t();
        assert!((t - 6.0 / 60f64.sqrt()).abs() < 1e-15);
        assert!((a.t() - 4.0 / 40f64.sqrt()).abs() < 1e-15);
        assert_eq!(Signal::default().t(), 0.0);
    }

    #[test]
    fn t_is_one_for_a_single_win_and_scale_free() {
        let mut s = Signal::default();
        s.add(3.0, 1.0, 1.0, 5.0);
        assert_eq!(s.t(), 1.0);
        let mut big = Signal::default();
        big.add(30.0, 10.0, 1.0, 50.0);
        big.add(10.0, 30.0, 1.0, 50.0);
        assert_eq!(big.t(), 0.0);
    }
}
