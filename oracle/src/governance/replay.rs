//! Replays an entry's statistics: every number is recomputed from the
//! recorded pentanomial counts with `crate::stats`, and the verdict is
//! derived again from the recomputed stage states.
//!
//! The recorded `lower`/`upper` are the bounds in force at the final look:
//! Wald's bounds narrowed by Fishtest's overshoot correction, which depends on
//! the path of the LLR and not only on the final counts. Replay therefore
//! checks that each correction is no larger than one look can justify
//! ([`overshoot_limit`]), and that the recorded state is the stats module's
//! decision for the recomputed LLR against exactly those bounds.

use serde::Serialize;

use crate::governance::entry::{Entry, MAX_STAGE_PAIRS, StageRecord, StageState};
use crate::governance::register::audit::decide_recorded;
use crate::stats::{
    Model, PentanomialCounts, SprtDecision, SprtParams, overshoot_limit, sprt_status,
};

/// One replay check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it held.
    pub pass: bool,
    /// Recorded and recomputed values.
    pub detail: String,
}

impl std::fmt::Display for Check {
    /// One line as the commands print it: `pass NAME: DETAIL` or `FAIL NAME: DETAIL`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outcome = if self.pass { "pass" } else { "FAIL" };
        write!(f, "{outcome} {}: {}", self.name, self.detail)
    }
}

/// Relative tolerance for recomputed floats (the same code gives the same bits;
/// the slack only absorbs a statistics port that changes the order of sums).
const TOLERANCE: f64 = 1e-9;

/// Recomputes the statistics of `entry` (whose predecessor left `used_before`
/// of the loss tolerance) and checks the recorded verdict against them.
#[must_use]
pub fn replay_statistics(entry: &Entry, used_before: f64) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut recomputed = entry.clone();
    for (stage, replayed) in entry.stages.iter().zip(&mut recomputed.stages) {
        replay_stage(stage, replayed, &mut checks);
    }
    let decision = decide_recorded(&recomputed, used_before);
    checks.push(Check {
        name: "verdict".into(),
        pass: decision.verdict == entry.verdict,
        detail: format!(
            "recorded {}, recomputed {} ({})",
            entry.verdict, decision.verdict, decision.reason
        ),
    });
    checks.push(Check {
        name: "claimed_gain_nelo".into(),
        pass: close(entry.claimed_gain_nelo, decision.claimed_gain_nelo),
        detail: format!(
            "recorded {}, recomputed {}",
            entry.claimed_gain_nelo, decision.claimed_gain_nelo
        ),
    });
    checks.push(Check {
        name: "loss_budget".into(),
        pass: close(entry.loss_budget.booked, decision.loss_booked)
            && close(entry.loss_budget.used_after, decision.loss_used_after),
        detail: format!(
            "recorded {} booked → {}, recomputed {} → {}",
            entry.loss_budget.booked,
            entry.loss_budget.used_after,
            decision.loss_booked,
            decision.loss_used_after
        ),
    });
    checks
}

/// The checks of one recorded stage alone (a resumed run's `stage.json` is held to them).
#[must_use]
pub fn replay_stage_record(stage: &StageRecord) -> Vec<Check> {
    let mut checks = Vec::new();
    replay_stage(stage, &mut stage.clone(), &mut checks);
    checks
}

/// Checks one stage and writes the recomputed numbers and state into `replayed`.
fn replay_stage(stage: &StageRecord, replayed: &mut StageRecord, checks: &mut Vec<Check>) {
    let mut check = |what: &str, pass: bool, detail: String| {
        checks.push(Check {
            name: format!("stage {}: {what}", stage.name),
            pass,
            detail,
        });
    };
    let Some(pairs) = stage.counted_pairs() else {
        check(
            "pairs and games",
            false,
            format!(
                "pentanomial {:?} sums to more than {MAX_STAGE_PAIRS} pairs",
                stage.pentanomial
            ),
        );
        return;
    };
    let counts = PentanomialCounts(stage.pentanomial);
    check(
        "pairs and games",
        pairs == stage.pairs && 2 * pairs == stage.games,
        format!(
            "pentanomial {:?} → {pairs} pairs, {} games",
            stage.pentanomial,
            2 * pairs
        ),
    );
    if stage.state == StageState::NotRun {
        check("not run", pairs == 0, format!("{pairs} pairs recorded"));
        return;
    }
    // One look is one batch, or one round of a sharded stage (a pair from each of at most
    // u32::MAX shards).
    let look_pairs = stage.pairs_per_look();
    if !(1..=u64::from(u32::MAX)).contains(&look_pairs) {
        check(
            "pairs per look",
            false,
            format!("{look_pairs} pairs per look, not 1 to {}", u32::MAX),
        );
        return;
    }
    let params = match SprtParams::new(
        stage.elo0,
        stage.elo1,
        stage.alpha,
        stage.beta,
        Model::Normalized,
    ) {
        Ok(params) => params,
        Err(error) => return check("statistics", false, error.to_string()),
    };
    let computed = sprt_status(&counts, &params)
        .and_then(|status| Ok((status, overshoot_limit(&counts, &params, look_pairs)?)));
    let (status, limit) = match computed {
        Ok(computed) => computed,
        Err(error) => return check("statistics", false, error.to_string()),
    };
    check(
        "llr",
        close(stage.llr, status.llr),
        format!("recorded {}, recomputed {}", stage.llr, status.llr),
    );
    let (o0, o1) = params.corrections_of(stage.lower, stage.upper);
    let within = |o: f64| -TOLERANCE <= o && o <= limit + TOLERANCE;
    check(
        "bounds",
        within(o0) && within(o1) && stage.lower < 0.0 && 0.0 < stage.upper,
        format!(
            "recorded [{}, {}]: Wald's [{}, {}] narrowed by overshoot corrections {o0} and {o1}, \
             each at most {limit} (one look of {look_pairs} pairs moves the LLR at most that far)",
            stage.lower, stage.upper, status.lower_bound, status.upper_bound
        ),
    );
    let state = params.decide(status.llr, o0.max(0.0), o1.max(0.0));
    // Identical games score one point per pair: an indistinguishable stage has every pair in
    // the middle bucket, and only a node limit makes games repeatable (Article 2.5).
    let all_middle = pairs > 0 && stage.pentanomial[2] == pairs;
    let follows = match (state, stage.state) {
        (_, StageState::Indistinguishable) => all_middle && !stage.tc.is_timed(),
        // Decided by the faults, whatever the SPRT said; the limit is the constitution's.
        (_, StageState::CandidateFaulted) => stage
            .faults
            .is_some_and(|faults| faults.candidate.total() > 0),
        (SprtDecision::AcceptH1, StageState::AcceptH1)
        | (SprtDecision::AcceptH0, StageState::AcceptH0) => true,
        (SprtDecision::Continue, StageState::Undecided) => stage.games >= stage.max_games,
        _ => false,
    };
    check(
        "state",
        follows,
        if stage.state == StageState::Indistinguishable {
            format!(
                "recorded {} at {}: pentanomial {:?}",
                stage.state, stage.tc, stage.pentanomial
            )
        } else {
            format!(
                "recorded {}, the recomputed LLR {} against the recorded bounds gives {state} at {} of {} games",
                stage.state, status.llr, stage.games, stage.max_games
            )
        },
    );
    check(
        "nelo",
        close(stage.nelo, status.nelo),
        format!("recorded {}, recomputed {}", stage.nelo, status.nelo),
    );
    check(
        "nelo_ci95",
        close(stage.nelo_ci95[0], status.nelo_ci95[0])
            && close(stage.nelo_ci95[1], status.nelo_ci95[1]),
        format!(
            "recorded {:?}, recomputed {:?}",
            stage.nelo_ci95, status.nelo_ci95
        ),
    );
    replayed.llr = status.llr;
    replayed.nelo = status.nelo;
    replayed.state = match state {
        _ if stage.state == StageState::Indistinguishable && follows => {
            StageState::Indistinguishable
        }
        _ if stage.state == StageState::CandidateFaulted && follows => StageState::CandidateFaulted,
        SprtDecision::AcceptH1 => StageState::AcceptH1,
        SprtDecision::AcceptH0 => StageState::AcceptH0,
        SprtDecision::Continue => StageState::Undecided,
    };
}

/// Whether two recomputed numbers agree within [`TOLERANCE`].
fn close(recorded: f64, recomputed: f64) -> bool {
    (recorded - recomputed).abs() <= TOLERANCE * recomputed.abs().max(1.0)
}
