//! Two runs from the same start, judged parameter by parameter by the three end rules.

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::params;
use super::rules::{EndRule, Outcome, decide};
use super::run::RunState;

/// The seed of run `r` (1 or 2) of a pair: independent streams from one `--seed`.
#[must_use]
pub fn run_seed(seed: u64, r: u64) -> u64 {
    let mut h = Sha256::new();
    h.update(b"coherent tune pair v1");
    h.update(seed.to_le_bytes());
    h.update(r.to_le_bytes());
    let digest = h.finalize();
    u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// What a pair concluded: the JSON of `oracle tune pair` and its `table.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairReport {
    /// The end rule whose values became the patch.
    pub rule: EndRule,
    /// Who chose that rule.
    pub rule_source: &'static str,
    /// The seeds of run 1 and run 2.
    pub seeds: [u64; 2],
    /// Duels played by run 1 and run 2.
    pub duels: [usize; 2],
    /// One row per parameter.
    pub params: Vec<ParamRow>,
    /// The tunables listing with the adopted values.
    pub patch: String,
}

impl PairReport {
    /// Judges two finished runs (seeded `seeds`) by the three end rules; `rule` makes the patch.
    pub fn of(
        run1: &RunState,
        run2: &RunState,
        seeds: [u64; 2],
        rule: EndRule,
    ) -> Result<PairReport, PairError> {
        let rows = table(run1, run2)?;
        Ok(PairReport {
            rule,
            rule_source: "--rule (the constitution names no SPSA end rule yet)",
            seeds,
            duels: [run1.duels.len(), run2.duels.len()],
            patch: patch(run1, &rows, rule),
            params: rows,
        })
    }

    /// The per-parameter table as Markdown (`table.md`).
    #[must_use]
    pub fn markdown(&self) -> String {
        let mut t = String::from(
            "| parameter | start | run 1 | run 2 | T | filter | seed mean | seed mean \\|T\\| ≥ 1 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.params {
            t += &format!(
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
                r.name, r.start, r.run1, r.run2, r.t, r.filter, r.seed_mean, r.seed_mean_t1
            );
        }
        t += &format!("\nadopted by rule: {}\n", self.rule.key());
        t
    }
}

/// One parameter after both runs: the table row of `oracle tune pair`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParamRow {
    /// The parameter.
    pub name: String,
    /// Start value.
    pub start: f64,
    /// End value of run 1.
    pub run1: f64,
    /// End value of run 2.
    pub run2: f64,
    /// T over all duels of both runs.
    pub t: f64,
    /// Value adopted by the filter.
    pub filter: f64,
    /// Value adopted by the seed mean.
    pub seed_mean: f64,
    /// Value adopted by the seed mean with |T| ≥ 1.
    pub seed_mean_t1: f64,
}

impl ParamRow {
    /// The value `rule` adopts.
    #[must_use]
    pub fn adopted(&self, rule: EndRule) -> f64 {
        match rule {
            EndRule::Filter => self.filter,
            EndRule::SeedMean => self.seed_mean,
            EndRule::SeedMeanT1 => self.seed_mean_t1,
        }
    }
}

/// Why two runs cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PairError {
    /// The runs did not start from the same parameters.
    #[error("the two runs tune different parameters or start values")]
    DifferentParams,
    /// A run has not finished.
    #[error("run {0} has not finished")]
    Unfinished(usize),
}

/// The table of both runs: one row per parameter, in listing order.
pub fn table(run1: &RunState, run2: &RunState) -> Result<Vec<ParamRow>, PairError> {
    if run1.params != run2.params {
        return Err(PairError::DifferentParams);
    }
    for (n, run) in [(1, run1), (2, run2)] {
        if !run.is_finished() {
            return Err(PairError::Unfinished(n));
        }
    }
    let (sig1, sig2) = (run1.signals(), run2.signals());
    Ok(run1
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let outcome = Outcome {
                start: p.start,
                run1: run1.theta[i],
                run2: run2.theta[i],
                c_end: p.c_end,
                t: sig1[i].merged(sig2[i]).t(),
            };
            ParamRow {
                name: p.name.clone(),
                start: p.start,
                run1: outcome.run1,
                run2: outcome.run2,
                t: outcome.t,
                filter: decide(EndRule::Filter, &outcome),
                seed_mean: decide(EndRule::SeedMean, &outcome),
                seed_mean_t1: decide(EndRule::SeedMeanT1, &outcome),
            }
        })
        .collect())
}

/// The engine's tunables listing with the defaults `rule` adopts (integers rounded):
/// the patch for the engine's table.
#[must_use]
pub fn patch(run: &RunState, rows: &[ParamRow], rule: EndRule) -> String {
    run.params
        .iter()
        .zip(rows)
        .map(|(p, row)| params::line(p, row.adopted(rule)) + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::run::{DuelPlan, DuelRecord, DuelScore, RunSpec};
    use crate::tune::schedule::{Kind, Param};

    fn run(seed: u64, result_sign: i64) -> RunState {
        let params = vec![Param {
            name: "M".into(),
            kind: Kind::Int,
            start: 100.0,
            min: 0.0,
            max: 200.0,
            c_end: 10.0,
            r_end: 0.002,
        }];
        let spec = RunSpec {
            games: 8,
            pairs_per_duel: 2,
            bundle: 2,
            seed,
            context: String::new(),
        };
        let mut state = RunState::new(spec, params).unwrap();
        while !state.is_finished() {
            let bundle: Vec<DuelRecord> = state
                .next_bundle()
                .unwrap()
                .into_iter()
                .map(|plan: DuelPlan| {
                    // "+" wins both games whenever it sits higher (or lower, for sign −1).
                    let higher = plan.plus[0] > plan.minus[0];
                    let wins = if higher == (result_sign > 0) { 4 } else { 0 };
                    DuelRecord {
                        plan,
                        score: DuelScore {
                            wins,
                            draws: 0,
                            losses: 4 - wins,
                        },
                    }
                })
                .collect();
            state.apply(bundle).unwrap();
        }
        state
    }

    #[test]
    fn consistent_runs_agree_and_give_a_patch() {
        let (a, b) = (run(1, 1), run(2, 1));
        let rows = table(&a, &b).unwrap();
        let r = &rows[0];
        assert!(r.run1 > 100.0 && r.run2 > 100.0);
        // Every signal is positive: T = Σs/√Σs² reaches √4 = 2 for equal signals; rounding
        // makes the distances (and so the signals) differ a little.
        assert!(r.t > 1.9 && r.t <= 2.0, "T {}", r.t);
        assert_eq!(r.seed_mean, (r.run1 + r.run2) / 2.0);
        assert_eq!(r.seed_mean_t1, r.seed_mean);
        let text = patch(&a, &rows, EndRule::SeedMean);
        let value = r.seed_mean.round() as i64;
        assert_eq!(text, format!("M, int, {value}, 0, 200, 10, 0.002\n"));
    }

    #[test]
    fn opposite_runs_keep_the_start_under_filter_and_t() {
        let (a, b) = (run(1, 1), run(2, -1));
        let r = &table(&a, &b).unwrap()[0];
        assert!(r.run1 > 100.0 && r.run2 < 100.0);
        assert_eq!(r.filter, 100.0);
        assert!(r.t.abs() < 1.0, "T {}", r.t);
        assert_eq!(r.seed_mean_t1, 100.0);
    }

    #[test]
    fn unfinished_or_mismatched_runs_are_refused() {
        let a = run(1, 1);
        let mut b = run(2, 1);
        b.duels.pop();
        assert_eq!(table(&a, &b).unwrap_err(), PairError::Unfinished(2));
        b = run(2, 1);
        b.params[0].start = 99.0;
        assert_eq!(table(&a, &b).unwrap_err(), PairError::DifferentParams);
    }
}
