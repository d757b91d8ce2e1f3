//! Step 2: the candidate's trailers (`Bench:`, `Oracle-Path:`, `Oracle-Proof:`) and, on the
//! Randfall path, the independent confirmation of Annex A3.3.

use git2::Repository;

use crate::errln;
use crate::governance::contract::EngineContract;
use crate::governance::entry::PathKind;

use super::resolve::{self};
use super::trailers::{self, Trailers};
use super::{Run, Step, StepFailure, confirmation, short};
use crate::integrity::write_atomically;

impl Run<'_> {
    /// Step 2: `Bench:`, `Oracle-Path:`, `Oracle-Proof:` (of the branch commit for a merge).
    pub(super) fn trailers(
        &mut self,
        repo: &Repository,
        binding: bool,
        contract: &EngineContract,
    ) -> Result<Trailers, StepFailure> {
        let step = Step::Trailers;
        self.reporter.begin(step, "read the candidate's trailers");
        let candidate = self.pair().candidate.clone();
        let result = resolve::declaring_commit(repo, &candidate, contract)
            .map_err(|e| StepFailure::error(step, e))
            .and_then(|declaring| {
                let from = if declaring.commit == candidate.commit {
                    format!("candidate {}", short(&candidate.commit))
                } else {
                    format!(
                        "commit {} (brought in by the merge {})",
                        short(&declaring.commit),
                        short(&candidate.commit)
                    )
                };
                trailers::parse(&declaring.message, &contract.bench.trailer)
                    .map(|t| (t, from.clone()))
                    .map_err(|e| StepFailure::error(step, format!("{from}: {e}")))
            });
        if let Ok((t, _)) = &result {
            self.path = Some(t.path);
            self.report.path = t.path.to_string();
        }
        let result = result.and_then(|(t, from)| {
            self.confirm(repo, &t, binding, contract)?;
            Ok((t, from))
        });
        let confirmed = self
            .confirmation
            .as_ref()
            .map(|c| format!(", confirmed by {}", c.confirmed_by))
            .unwrap_or_default();
        self.close(result, |(t, from)| {
            format!(
                "{from}: Bench: {}, path {}{}{confirmed}",
                t.bench,
                t.path,
                t.proof
                    .as_ref()
                    .map(|p| format!(", proof {p}"))
                    .unwrap_or_default(),
            )
        })
        .map(|(t, _)| t)
    }

    /// Step 2, Randfall only: the independent confirmation of Annex A3.3 confirms this candidate
    /// and its proof spec; it is copied into `--out/inputs/` and kept for the entry. A profile
    /// that does not bind (smoke) may run without one: its entry never reaches the register.
    pub(super) fn confirm(
        &mut self,
        repo: &Repository,
        trailers: &Trailers,
        binding: bool,
        contract: &EngineContract,
    ) -> Result<(), StepFailure> {
        let step = Step::Trailers;
        let given = self.request.confirmation.as_deref();
        let proof = trailers
            .proof
            .as_deref()
            .filter(|_| trailers.path == PathKind::Randfall);
        let (file, proof) = match (given, proof) {
            (None, None) => return Ok(()),
            (Some(file), None) => {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "--confirmation {}: the candidate takes the {} path; a confirmation only \
                         belongs to a Randfall change (Annex A3.3), drop it",
                        file.display(),
                        trailers.path
                    ),
                ));
            }
            (None, Some(proof)) if !binding => {
                errln!(
                    "      no confirmation: a Randfall run under a binding profile needs \
                     `--confirmation FILE` (proof {proof}); this profile does not bind"
                );
                return Ok(());
            }
            (None, Some(proof)) => {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "the candidate takes the Randfall path (proof {proof}) and needs \
                         `--confirmation FILE`: the independent confirmation of Annex A3.3 by \
                         someone other than its author (docs/randfall.md says how to write it)"
                    ),
                ));
            }
            (Some(file), Some(proof)) => (file, proof),
        };
        let checked = confirmation::read(file, repo, &self.pair().candidate, proof, contract)
            .map_err(|e| StepFailure::error(step, e))?;
        let copy = self.out.input("confirmation.yaml");
        write_atomically(&copy, &checked.bytes)
            .map_err(|e| StepFailure::error(step, e.to_string()))?;
        self.report.confirmation = Some(checked.record.clone());
        self.confirmation = Some(checked.record);
        Ok(())
    }
}
