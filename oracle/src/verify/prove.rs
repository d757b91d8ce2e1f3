//! Step 5, Randfall only: the proof fails on the predecessor and passes on the candidate.

use git2::Repository;

use crate::governance::entry::{PathKind, ProofOutcome, ProofRecord};
use crate::governance::hash::Sha256Hex;
use crate::proof::verify_proof;
use crate::report::{self};
use crate::tablebase::Tablebase;

use super::binding::BindingRecord;
use super::resolve::{self};
use super::trailers::Trailers;
use super::{Run, Step, StepFailure, rehash, write_json};
use crate::integrity::write_atomically;

impl Run<'_> {
    /// Step 5: the Randfall proof (skipped on the Standard path): the spec named by the
    /// candidate's `Oracle-Proof` trailer, read from the candidate's tree, must fail on the
    /// predecessor and pass on the candidate.
    pub(super) fn proof(
        &mut self,
        repo: &Repository,
        trailers: &Trailers,
        binding: &BindingRecord,
    ) -> Result<Option<ProofRecord>, StepFailure> {
        let Some(spec) = trailers
            .proof
            .as_deref()
            .filter(|_| trailers.path == PathKind::Randfall)
        else {
            self.reporter.skip(Step::Proof, "standard path: no proof");
            return Ok(None);
        };
        let step = Step::Proof;
        self.reporter.begin(
            step,
            &format!("the proof {spec}: fail on the predecessor, pass on the candidate"),
        );
        let file = self.out.step_file("proof.json");
        let result = (|| {
            let error = |e: &dyn std::fmt::Display| StepFailure::error(step, e);
            let bytes =
                resolve::read_file(repo, &self.pair().candidate, spec).map_err(|e| error(&e))?;
            let copy = self.out.input(&format!("proof/{spec}"));
            write_atomically(&copy, &bytes).map_err(|e| error(&e.to_string()))?;
            rehash(step, binding, &self.out)?;
            let tablebase = Tablebase::new(Tablebase::default_cache_dir());
            let verdict = verify_proof(
                &copy,
                &binding.predecessor.path,
                &binding.candidate.path,
                &tablebase,
            )
            .map_err(|e| error(&format!("{spec}: {e}")))?;
            write_json(step, &file, &verdict)?;
            let outcome = |passed: bool| {
                if passed {
                    ProofOutcome::Pass
                } else {
                    ProofOutcome::Fail
                }
            };
            let predecessor_passed = verdict.predecessor.as_ref().is_some_and(|run| run.passed);
            let runs = verdict
                .predecessor
                .iter()
                .map(|run| ("predecessor", run))
                .chain([("candidate", &verdict.candidate)]);
            let detail: Vec<String> = runs
                .flat_map(|(role, run)| {
                    run.detail
                        .lines()
                        .into_iter()
                        .map(move |line| format!("{role}: {line}"))
                })
                .collect();
            let record = ProofRecord {
                spec: spec.to_owned(),
                spec_sha256: Sha256Hex::of(&bytes),
                predecessor: outcome(predecessor_passed),
                candidate: outcome(verdict.candidate.passed),
                detail,
            };
            self.report.proof = Some(report::ProofReport {
                spec: spec.to_owned(),
                predecessor_pass: predecessor_passed,
                candidate_pass: verdict.candidate.passed,
                detail: record.detail.clone(),
            });
            if !verdict.accepted {
                return Err(StepFailure::rejected(
                    step,
                    format!(
                        "{spec} ({}): the predecessor {} and the candidate {}; Annex A3 needs fail → pass",
                        verdict.kind,
                        if predecessor_passed { "passes" } else { "fails" },
                        if verdict.candidate.passed { "passes" } else { "fails" }
                    ),
                )
                .evidence(&file));
            }
            Ok(record)
        })();
        self.close(result, |r| {
            format!(
                "{}: predecessor {:?}, candidate {:?}",
                r.spec, r.predecessor, r.candidate
            )
        })
        .map(Some)
    }
}
