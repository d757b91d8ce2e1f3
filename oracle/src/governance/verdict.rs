//! The verdict as a pure function of the evidence (docs/architecture.md).
//!
//! `oracle verify` calls it to decide, `register verify` to check that a
//! recorded verdict follows from its recorded stages, and `register replay`
//! to check it again from statistics recomputed from the counts.

use crate::governance::constitution::LossTolerance;
use crate::governance::entry::{PathKind, ProofOutcome, StageState, Verdict};

/// What a verdict is decided from.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence<'a> {
    /// The declared path.
    pub path: PathKind,
    /// The proof's outcomes on (predecessor, candidate); Randfall only.
    pub proof: Option<(ProofOutcome, ProofOutcome)>,
    /// How each stage of the profile ended, in order.
    pub stages: &'a [StageState],
    /// The candidate's binary is bit-identical to the predecessor's (equal sha256).
    pub identical_binaries: bool,
    /// nElo estimate of the last stage (0 when there is none).
    pub final_stage_nelo: f64,
    /// Loss booked by all earlier entries.
    pub loss_used_before: f64,
    /// The booking rule and the limit in force.
    pub tolerance: LossTolerance,
}

/// The verdict and what it books.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Gewinn, Korrektur, Abgelehnt (or Genesis for the first entry).
    pub verdict: Verdict,
    /// Stage-2 nElo for a Gewinn, otherwise 0.
    pub claimed_gain_nelo: f64,
    /// Loss booked by this entry (Korrektur only).
    pub loss_booked: f64,
    /// Cumulative loss after this entry.
    pub loss_used_after: f64,
    /// Why, in one sentence.
    pub reason: String,
}

/// Decides the verdict.
///
/// Standard → Gleich iff the binaries are bit-identical and no stage was played (Article 2.4:
/// identical binaries behave identically, so the games are skipped); Gewinn iff every stage
/// passed and at least one accepted H1 of the gain bounds. A stage passes by accepting H1 or
/// by ending indistinguishable (Article 2.5: at a node limit the engines played alike).
/// Randfall → Korrektur iff the proof failed on the predecessor and passed on
/// the candidate, every stage passed non-regression (one accepting H1), and the loss
/// booked keeps the cumulative total within the limit. A stage that ended
/// undecided at its maximum games has not passed. Otherwise Abgelehnt.
#[must_use]
pub fn decide(evidence: &Evidence<'_>) -> Decision {
    let used = evidence.loss_used_before;
    let reject = |reason: String| Decision {
        verdict: Verdict::Abgelehnt,
        claimed_gain_nelo: 0.0,
        loss_booked: 0.0,
        loss_used_after: used,
        reason,
    };
    let stages_passed = || -> Result<(), String> {
        if evidence.stages.is_empty() {
            return Err("no stage was measured".into());
        }
        if let Some(index) = evidence.stages.iter().position(|state| !state.passed()) {
            let state = evidence.stages[index];
            let why = if state == StageState::CandidateFaulted {
                ": the candidate faulted more often than the constitution allows (Article 6.6)"
            } else {
                ""
            };
            return Err(format!("stage {} ended {state}{why}", index + 1));
        }
        // Indistinguishable stages pass but measure nothing (Article 2.5).
        if !evidence.stages.contains(&StageState::AcceptH1) {
            return Err("no stage accepted H1: no stage could tell the engines apart".into());
        }
        Ok(())
    };
    match evidence.path {
        PathKind::Genesis => Decision {
            verdict: Verdict::Genesis,
            claimed_gain_nelo: 0.0,
            loss_booked: 0.0,
            loss_used_after: used,
            reason: "genesis records the engine without a test".into(),
        },
        PathKind::Standard
            if evidence.identical_binaries
                && !evidence.stages.is_empty()
                && evidence
                    .stages
                    .iter()
                    .all(|&state| state == StageState::NotRun) =>
        {
            Decision {
                verdict: Verdict::Gleich,
                claimed_gain_nelo: 0.0,
                loss_booked: 0.0,
                loss_used_after: used,
                reason: "the candidate's binary is bit-identical to its predecessor's: \
                         no game can tell them apart (Article 2.4)"
                    .into(),
            }
        }
        PathKind::Standard => match stages_passed() {
            Ok(()) => Decision {
                verdict: Verdict::Gewinn,
                claimed_gain_nelo: evidence.final_stage_nelo,
                loss_booked: 0.0,
                loss_used_after: used,
                reason: gain_reason(evidence.stages),
            },
            Err(why) => reject(why),
        },
        PathKind::Randfall => {
            if evidence.proof != Some((ProofOutcome::Fail, ProofOutcome::Pass)) {
                return reject(
                    "the proof must fail on the predecessor and pass on the candidate".into(),
                );
            }
            if let Err(why) = stages_passed() {
                return reject(why);
            }
            let booked = evidence.tolerance.booking.booked(evidence.final_stage_nelo);
            let after = used + booked;
            if after > evidence.tolerance.limit_nelo {
                return reject(format!(
                    "loss tolerance exceeded: {used} + {booked} > {} nElo",
                    evidence.tolerance.limit_nelo
                ));
            }
            Decision {
                verdict: Verdict::Korrektur,
                claimed_gain_nelo: 0.0,
                loss_booked: booked,
                loss_used_after: after,
                reason: "proof fail→pass, non-regression accepted, loss within tolerance".into(),
            }
        }
    }
}

/// Why a Standard candidate won: every stage accepted H1, or every stage but those that could
/// not tell the engines apart, which the reason names.
fn gain_reason(stages: &[StageState]) -> String {
    let alike: Vec<String> = (1..)
        .zip(stages)
        .filter(|(_, state)| **state == StageState::Indistinguishable)
        .map(|(number, _)| number.to_string())
        .collect();
    match alike.as_slice() {
        [] => "every stage accepted H1 of the gain bounds".into(),
        [one] => format!(
            "stage {one} played its predecessor's games (Article 2.5); every other stage \
             accepted H1 of the gain bounds"
        ),
        many => format!(
            "stages {} played their predecessor's games (Article 2.5); every other stage \
             accepted H1 of the gain bounds",
            many.join(" and ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::governance::constitution::LossBooking;
    use StageState::{AcceptH0, AcceptH1, Indistinguishable, NotRun, Undecided};

    const TOLERANCE: LossTolerance = LossTolerance {
        booking: LossBooking::FinalStageNeloDeficit,
        limit_nelo: 10.0,
    };

    fn evidence(path: PathKind, stages: &[StageState], nelo: f64, used: f64) -> Evidence<'_> {
        Evidence {
            path,
            proof: Some((ProofOutcome::Fail, ProofOutcome::Pass)),
            stages,
            identical_binaries: false,
            final_stage_nelo: nelo,
            loss_used_before: used,
            tolerance: TOLERANCE,
        }
    }

    #[test]
    fn standard_needs_every_stage_and_claims_the_final_estimate() {
        let won = decide(&evidence(
            PathKind::Standard,
            &[AcceptH1, AcceptH1],
            1.75,
            3.0,
        ));
        assert_eq!(
            (won.verdict, won.claimed_gain_nelo, won.loss_used_after),
            (Verdict::Gewinn, 1.75, 3.0)
        );
        // Stages at a node limit that cannot tell the engines apart pass; the clock decides.
        let timed = decide(&evidence(
            PathKind::Standard,
            &[Indistinguishable, Indistinguishable, AcceptH1],
            12.5,
            3.0,
        ));
        assert_eq!(
            (timed.verdict, timed.claimed_gain_nelo),
            (Verdict::Gewinn, 12.5)
        );
        assert_eq!(
            timed.reason,
            "stages 1 and 2 played their predecessor's games (Article 2.5); every other stage \
             accepted H1 of the gain bounds"
        );
        assert_eq!(won.reason, "every stage accepted H1 of the gain bounds");
        for stages in [
            &[AcceptH1, Undecided][..],
            &[AcceptH0, NotRun],
            &[AcceptH1, AcceptH0],
            &[Indistinguishable, Indistinguishable],
            &[Indistinguishable, AcceptH1, AcceptH0],
            &[],
        ] {
            let lost = decide(&evidence(PathKind::Standard, stages, 1.75, 3.0));
            assert_eq!(
                (lost.verdict, lost.claimed_gain_nelo),
                (Verdict::Abgelehnt, 0.0),
                "{stages:?}"
            );
        }
    }

    #[test]
    fn randfall_needs_proof_non_regression_and_tolerance() {
        let fixed = decide(&evidence(
            PathKind::Randfall,
            &[AcceptH1, AcceptH1],
            -1.5,
            8.0,
        ));
        assert_eq!(fixed.verdict, Verdict::Korrektur);
        assert_eq!(
            (
                fixed.claimed_gain_nelo,
                fixed.loss_booked,
                fixed.loss_used_after
            ),
            (0.0, 1.5, 9.5)
        );

        let over = decide(&evidence(
            PathKind::Randfall,
            &[AcceptH1, AcceptH1],
            -2.5,
            8.0,
        ));
        assert_eq!(
            (over.verdict, over.loss_used_after),
            (Verdict::Abgelehnt, 8.0)
        );

        let exactly = decide(&evidence(
            PathKind::Randfall,
            &[AcceptH1, AcceptH1],
            -2.0,
            8.0,
        ));
        assert_eq!(exactly.verdict, Verdict::Korrektur);

        let gain = decide(&evidence(
            PathKind::Randfall,
            &[AcceptH1, AcceptH1],
            0.5,
            10.0,
        ));
        assert_eq!((gain.verdict, gain.loss_booked), (Verdict::Korrektur, 0.0));

        let undecided = decide(&evidence(
            PathKind::Randfall,
            &[AcceptH1, Undecided],
            0.5,
            0.0,
        ));
        assert_eq!(undecided.verdict, Verdict::Abgelehnt);

        for proof in [
            None,
            Some((ProofOutcome::Pass, ProofOutcome::Pass)),
            Some((ProofOutcome::Fail, ProofOutcome::Fail)),
            Some((ProofOutcome::Pass, ProofOutcome::Fail)),
        ] {
            let mut no_proof = evidence(PathKind::Randfall, &[AcceptH1, AcceptH1], 0.0, 0.0);
            no_proof.proof = proof;
            assert_eq!(decide(&no_proof).verdict, Verdict::Abgelehnt, "{proof:?}");
        }
    }

    #[test]
    fn identical_binaries_without_games_are_gleich_and_only_then() {
        let mut skipped = evidence(PathKind::Standard, &[NotRun, NotRun], 0.0, 3.0);
        skipped.identical_binaries = true;
        let gleich = decide(&skipped);
        assert_eq!(
            (
                gleich.verdict,
                gleich.claimed_gain_nelo,
                gleich.loss_booked,
                gleich.loss_used_after
            ),
            (Verdict::Gleich, 0.0, 0.0, 3.0)
        );
        // Different binaries whose games were skipped: nothing was measured.
        skipped.identical_binaries = false;
        assert_eq!(decide(&skipped).verdict, Verdict::Abgelehnt);
        // Identical binaries measured anyway (constitutions before version 3): the games decide.
        let mut played = evidence(PathKind::Standard, &[AcceptH0, NotRun], 0.0, 0.0);
        played.identical_binaries = true;
        assert_eq!(decide(&played).verdict, Verdict::Abgelehnt);
        // A Randfall change must change the binary: its proof cannot fail and then pass.
        let mut randfall = evidence(PathKind::Randfall, &[NotRun, NotRun], 0.0, 0.0);
        randfall.identical_binaries = true;
        assert_eq!(decide(&randfall).verdict, Verdict::Abgelehnt);
    }
}
