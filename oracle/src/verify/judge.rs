//! Step 7: the verdict, the loss tolerance and the register entry (`--append`: into the register).

use crate::governance::entry::{
    BinaryRecord, Entry, GateRecord, LossBudget, ProofRecord, StageRecord, StageState,
};
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::register::{self};
use crate::governance::timestamp::Timestamp;
use crate::governance::verdict::{Evidence, decide};
use crate::report::BenchReport;

use super::binding::{self, BindingRecord, BoundBinary};
use super::stage::{self};
use super::trailers::Trailers;
use super::{Conclusion, Rules, Run, Status, Step, StepFailure, provenance};
use crate::integrity::write_atomically;

impl Run<'_> {
    /// Step 7: verdict, loss tolerance, the entry file; `--append` registers it.
    pub(super) fn verdict(
        &mut self,
        rules: &Rules,
        binding: &BindingRecord,
        trailers: &Trailers,
        bench: &BenchReport,
        proof: Option<ProofRecord>,
    ) -> Result<Conclusion, StepFailure> {
        let step = Step::Verdict;
        self.reporter
            .begin(step, "verdict, loss tolerance and the register entry");
        let result = (|| {
            let mut stages: Vec<StageRecord> =
                self.stages.iter().map(|s| s.record.clone()).collect();
            for stage in rules.profile.stages.iter().skip(stages.len()) {
                stages.push(
                    stage::not_run(stage, &rules.profile, trailers.path)
                        .map_err(|e| StepFailure::error(step, e))?,
                );
            }
            let states: Vec<StageState> = stages.iter().map(|s| s.state).collect();
            let decision = decide(&Evidence {
                path: trailers.path,
                proof: proof.as_ref().map(|p| (p.predecessor, p.candidate)),
                stages: &states,
                identical_binaries: binding.candidate.sha256 == binding.predecessor.sha256,
                final_stage_nelo: stages.last().map_or(0.0, |s| s.nelo),
                loss_used_before: rules.loss_used_before,
                tolerance: rules.constitution.loss_tolerance,
            });
            let entry = Entry {
                id: None,
                prev_sha256: None,
                recorded_at: None,
                profile: Some(self.request.profile.clone()),
                path: trailers.path,
                verdict: decision.verdict,
                claimed_gain_nelo: decision.claimed_gain_nelo,
                constitution_sha256: rules.constitution_sha256.clone(),
                oracle: provenance::this_oracle(),
                toolchain: binding.toolchain.clone(),
                candidate: binary_record(&binding.candidate, bench.candidate)?,
                predecessor: Some(binary_record(&binding.predecessor, bench.predecessor)?),
                bound_at: binding::register_timestamp(binding.bound_at_unix_ms),
                gate: self.report.gate.as_ref().map(|g| GateRecord {
                    popcnt_in_eval: g.popcnt > 0,
                    software_popcount_in_eval: g.software_popcount > 0,
                }),
                proof,
                confirmation: self.confirmation.clone(),
                stages,
                loss_budget: LossBudget {
                    booking: rules.constitution.loss_tolerance.booking,
                    booked: decision.loss_booked,
                    used_before: rules.loss_used_before,
                    used_after: decision.loss_used_after,
                    limit: rules.constitution.loss_tolerance.limit_nelo,
                },
                isolation: Some(binding.isolation.clone()),
            };
            let text = entry
                .to_canonical()
                .map_err(|e| StepFailure::error(step, e))?;
            let file = self.out.entry();
            write_atomically(&file, text.as_bytes())
                .map_err(|e| StepFailure::error(step, e.to_string()))?;
            self.entry = Some(file.clone());
            self.report.verdict = Some(decision.verdict);
            if self.request.append {
                let appended = register::append(
                    &self.request.repo,
                    entry,
                    &rules.constitution,
                    &rules.constitution_sha256,
                    Timestamp::now(),
                )
                .map_err(|e| {
                    StepFailure::error(step, format!("--append: {e}")).evidence(file.clone())
                })?;
                self.appended = appended.id.map(|id| id.to_string());
            }
            let accepted = decision.verdict.lands();
            Ok(Conclusion {
                status: if accepted {
                    Status::Accepted
                } else {
                    Status::Rejected
                },
                verdict: Some(decision.verdict),
                reason: format!("{}: {}", decision.verdict.title(), decision.reason),
            })
        })();
        self.close(result, |c| c.reason.clone())
    }
}

pub(super) fn git_id(id: String) -> Result<GitId, StepFailure> {
    GitId::try_from(id).map_err(|e| StepFailure::error(Step::Verdict, e))
}

pub(super) fn binary_record(
    bound: &BoundBinary,
    bench_nodes: u64,
) -> Result<BinaryRecord, StepFailure> {
    let sha = Sha256Hex::try_from(bound.sha256.clone())
        .map_err(|e| StepFailure::error(Step::Verdict, e))?;
    Ok(BinaryRecord {
        commit: git_id(bound.commit.clone())?,
        tree: git_id(bound.tree.clone())?,
        binary_sha256: sha,
        bench_nodes,
    })
}
