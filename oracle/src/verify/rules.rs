//! Step 1: resolve candidate and predecessor, refuse what is not an engine change, read the
//! rules (constitution, books, register) from the predecessor's tree, and claim `--out`.

use std::path::PathBuf;

use git2::Repository;

use crate::governance::constitution::{CONSTITUTION_PATH, Constitution};
use crate::governance::contract::EngineContract;
use crate::governance::hash::Sha256Hex;
use crate::governance::register::{self, RegisterFile, audit};

use super::out;
use super::resolve::{self, CommitPair};
use super::{Rules, Run, Step, StepFailure, short};
use crate::integrity::write_atomically;

impl Run<'_> {
    /// Step 1: resolve, refuse governance changes, read constitution, books and register.
    pub(super) fn resolve(&mut self) -> Result<(Repository, Rules), StepFailure> {
        let step = Step::Resolve;
        self.reporter
            .begin(step, "resolve commits; read the rules from the predecessor");
        let result = (|| {
            let error = |e: resolve::ResolveError| StepFailure::error(step, e);
            let repo = resolve::open(&self.request.repo).map_err(error)?;
            let pair = resolve::resolve_pair(
                &repo,
                self.request.candidate.as_deref(),
                self.request.base.as_deref(),
                || head_contract(&repo),
            )
            .map_err(error)?;
            self.report.candidate = pair.candidate.commit.clone();
            self.report.candidate_summary = pair.candidate.summary.clone();
            self.report.predecessor = pair.predecessor.commit.clone();
            self.pair = Some(pair.clone());
            // The scope an engine change keeps to is the predecessor's contract.
            let rules = self.read_rules(&repo, &pair)?;
            resolve::refuse_governance_changes(&repo, &pair, &rules.contract).map_err(error)?;
            self.claim_out(&pair, &rules)?;
            Ok((repo, rules))
        })();
        let profile = self.request.profile.clone();
        self.close(result, |(_, rules)| {
            format!(
                "profile {profile} ({}), {} stage(s), constitution {}",
                if rules.profile.binding {
                    "binding"
                } else {
                    "not binding"
                },
                rules.profile.stages.len(),
                &rules.constitution_sha256.as_str()[..12]
            )
        })
    }

    /// The constitution, the profile's books and the register, from the predecessor's tree.
    pub(super) fn read_rules(
        &mut self,
        repo: &Repository,
        pair: &CommitPair,
    ) -> Result<Rules, StepFailure> {
        let step = Step::Resolve;
        let error = |e: &dyn std::fmt::Display| StepFailure::error(step, e);
        let predecessor = &pair.predecessor;
        let bytes =
            resolve::read_file(repo, predecessor, CONSTITUTION_PATH).map_err(|e| error(&e))?;
        let label = PathBuf::from(format!(
            "{}:{CONSTITUTION_PATH}",
            short(&predecessor.commit)
        ));
        let constitution = Constitution::parse(&bytes, &label).map_err(|e| error(&e))?;
        let constitution_sha256 = Sha256Hex::of(&bytes);
        let contract = constitution.contract();
        let profile = constitution
            .profile(&self.request.profile)
            .map_err(|e| error(&e))?
            .clone();
        self.report.binding = profile.binding;
        self.profile_binding = Some(profile.binding);
        if self.request.append && !profile.binding {
            return Err(error(&format!(
                "--append: profile `{}` is not binding, its verdicts are never registered",
                self.request.profile
            )));
        }
        let mut inputs = vec![(CONSTITUTION_PATH.to_owned(), bytes)];
        for stage in &profile.stages {
            let path = stage.book.to_string_lossy().into_owned();
            let book = resolve::read_file(repo, predecessor, &path).map_err(|e| error(&e))?;
            stage
                .check_book_bytes(&book, &self.request.profile)
                .map_err(|e| error(&e))?;
            inputs.push((path, book));
        }
        let files: Vec<RegisterFile> = resolve::read_dir(repo, predecessor, register::REGISTER_DIR)
            .map_err(|e| error(&e))?
            .into_iter()
            .filter(|(name, _)| !name.starts_with('.'))
            .map(|(name, bytes)| RegisterFile { name, bytes })
            .collect();
        let audit = audit(&files);
        if !audit.ok() {
            let first = &audit.findings[0];
            return Err(error(&format!(
                "the predecessor's register does not verify ({} problems; first: {}: {})",
                audit.findings.len(),
                first.file,
                first.message
            )));
        }
        let loss_used_before = audit
            .last()
            .map_or(0.0, |entry| entry.loss_budget.used_after);
        // A run that plays no game appends nothing, so the register's current engine does not
        // bind its predecessor (`--checks-only` walks a history whose commits never landed).
        let custody = match audit.current_engine() {
            _ if !profile.binding || self.request.checks_only => None,
            Some(current) => Some((
                current.id.map_or_else(String::new, |id| id.to_string()),
                current.candidate.clone(),
            )),
            None => {
                return Err(error(&format!(
                    "profile `{}` is binding, but the predecessor's register has no current engine \
                     (no genesis entry) to hold its binary to",
                    self.request.profile
                )));
            }
        };
        Ok(Rules {
            contract,
            constitution,
            constitution_sha256,
            profile,
            loss_used_before,
            custody,
            inputs,
        })
    }

    /// Makes `--out` this run's (refusing another run's directory unless `--fresh`) and copies
    /// the predecessor's files the judge read into `--out/inputs`.
    pub(super) fn claim_out(
        &mut self,
        pair: &CommitPair,
        rules: &Rules,
    ) -> Result<(), StepFailure> {
        let error = |e: &dyn std::fmt::Display| StepFailure::error(Step::Resolve, e);
        let identity = out::RunIdentity {
            profile: &self.request.profile,
            candidate: &pair.candidate,
            predecessor: &pair.predecessor,
        };
        self.out
            .claim(&identity, self.request.fresh)
            .map_err(|e| error(&e))?;
        self.claimed = true;
        for (path, bytes) in &rules.inputs {
            let copy = self.out.input(path);
            write_atomically(&copy, bytes).map_err(|e| error(&e.to_string()))?;
        }
        Ok(())
    }
}

/// The engine contract of HEAD's constitution: which paths make a commit an engine change when
/// no candidate is named.
fn head_contract(repo: &Repository) -> Result<EngineContract, String> {
    let head = resolve::commit(repo, "HEAD", "HEAD").map_err(|e| e.to_string())?;
    let bytes = resolve::read_file(repo, &head, CONSTITUTION_PATH).map_err(|e| e.to_string())?;
    let label = PathBuf::from(format!("HEAD:{CONSTITUTION_PATH}"));
    Constitution::parse(&bytes, &label)
        .map(|constitution| constitution.contract())
        .map_err(|e| e.to_string())
}
