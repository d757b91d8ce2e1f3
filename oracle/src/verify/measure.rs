//! Step 6: the profile's stages in order, each an SPRT on the path's bounds; none when the
//! binaries are bit-identical (Article 2.4).

use crate::governance::constitution::IdenticalBinaries;
use crate::governance::entry::PathKind;

use git2::Repository;

use super::adopt;
use super::binding::BindingRecord;
use super::stage::{self, StagePlan};
use super::trailers::Trailers;
use super::{Conclusion, Mode, Rules, Run, Status, Step, StepFailure, rehash};

impl Run<'_> {
    /// Step 6: the profile's stages in order; `Some` ends the run early (a mode's status).
    pub(super) fn stages(
        &mut self,
        repo: &Repository,
        rules: &Rules,
        binding: &BindingRecord,
        trailers: &Trailers,
    ) -> Result<Option<Conclusion>, StepFailure> {
        if skips_games(rules, binding, trailers) {
            for index in 0..rules.profile.stages.len() {
                self.reporter.skip(
                    Step::Stage(index + 1),
                    "the binaries are bit-identical: no game can tell them apart (Article 2.4)",
                );
            }
            return Ok(None);
        }
        // The earlier run whose games are taken over: checked once, before the first stage.
        let source = match &self.request.games_from {
            Some(dir) => Some(
                adopt::check(repo, dir, binding, trailers.path, &rules.contract)
                    .map_err(|why| StepFailure::error(Step::Stage(1), why))?,
            ),
            None => None,
        };
        let plans = rules
            .profile
            .stages
            .iter()
            .enumerate()
            .map(|(index, stage)| {
                StagePlan::new(
                    index + 1,
                    stage,
                    &rules.profile,
                    trailers.path,
                    binding,
                    &self.out,
                    &rules.contract.option_pairs(),
                )
                .map(|plan| {
                    plan.with_node_pace(self.node_pace).with_seconds_per_game(
                        self.plan.get(index).map_or(0.0, |f| f.seconds_per_game),
                    )
                })
                .map_err(|e| StepFailure::error(Step::Stage(index + 1), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Adoption happens once, before any stage is played or its first round planned, and the
        // same way whether this run plays locally or merges rounds: the pairs taken over are each
        // stage's first, and every later invocation (a merge, a shard) finds them in `--out`.
        // A shard never adopts.
        if !matches!(self.request.mode, Mode::Shard(_)) {
            adopt::adopt_all(&plans, source.as_ref()).map_err(|(index, e)| {
                let failure = StepFailure::error(Step::Stage(index), e);
                match plans.iter().find(|plan| plan.index == index) {
                    Some(plan) => failure.evidence(plan.dir.clone()),
                    None => failure,
                }
            })?;
        }
        for (plan, stage) in plans.iter().zip(&rules.profile.stages) {
            let step = Step::Stage(plan.index);
            self.reporter.begin(
                step,
                &format!(
                    "{} at {} with {} — SPRT [{}, {}] nElo",
                    stage.name,
                    stage.tc,
                    stage.book.display(),
                    plan.params.elo0,
                    plan.params.elo1
                ),
            );
            let result = rehash(step, binding, &self.out).and_then(|()| {
                stage::run(plan, self.request.mode, self.reporter)
                    .map_err(|e| StepFailure::error(step, e).evidence(plan.dir.clone()))
            });
            let progress = self.close(result, |p| p.describe())?;
            match progress {
                stage::StageProgress::Finished(outcome) => {
                    self.report.stages.push(outcome.report.clone());
                    let passed = outcome.record.state.passed();
                    self.stages.push(*outcome);
                    if !passed {
                        break;
                    }
                }
                stage::StageProgress::NeedsRound { reason } => {
                    return Ok(Some(Conclusion {
                        status: Status::Continue,
                        verdict: None,
                        reason,
                    }));
                }
                stage::StageProgress::ShardPlayed { reason } => {
                    return Ok(Some(Conclusion {
                        status: Status::ShardDone,
                        verdict: None,
                        reason,
                    }));
                }
            }
        }
        Ok(None)
    }
}

/// Whether the constitution's Article 2.4 skips the games: a Standard candidate whose bound
/// binary is bit-identical to its predecessor's.
pub(super) fn skips_games(rules: &Rules, binding: &BindingRecord, trailers: &Trailers) -> bool {
    rules.constitution.identical_binaries == Some(IdenticalBinaries::Gleich)
        && trailers.path == PathKind::Standard
        && binding.candidate.sha256 == binding.predecessor.sha256
}
