//! The auditor's re-measurement of a register entry (`oracle register replay`): rebuild both
//! binaries from the recorded commits with the recipe of the recorded constitution, compare
//! their sha256 with the entry, and run the gate, the bench and the proof again on the rebuilt
//! files.
//! (Games at a clock cannot be replayed bit for bit; their counts are recomputed by the
//! governance part of replay.)

use std::fmt;
use std::path::Path;

use git2::Repository;
use serde::Serialize;

use crate::builder::sandbox::engine::EngineIsolation;
use crate::builder::sandbox::{Limits, Sandbox};
use crate::builder::{self, BuildOutcome, BuildRequest};
use crate::gate;
use crate::governance::confirmation::confirmer_email;
use crate::governance::constitution::{CONSTITUTION_PATH, Constitution};
use crate::governance::contract::GateContract;
use crate::governance::entry::{BinaryRecord, Entry, EntryId, ProofOutcome};
use crate::governance::hash::Sha256Hex;
use crate::governance::register::Audit;
use crate::governance::replay::{Check, replay_statistics};
use crate::proof::verify_proof;
use crate::tablebase::Tablebase;

use super::confirmation::change_role;
use super::resolve;

/// What `oracle register replay ID` reports: every check and whether all of them held.
#[derive(Debug, Clone, Serialize)]
pub struct EntryReplay {
    /// Whether every check passed.
    pub ok: bool,
    /// The entry replayed.
    pub id: String,
    /// The checks: the chain up to the entry, its statistics, and (unless statistics only)
    /// the rebuilt binaries, gate, bench and proof.
    pub checks: Vec<Check>,
}

/// Replays entry `id` of `audit` (the register of `repo` up to that entry): the chain, the
/// statistics and the verdict, and unless `statistics_only` the re-measurement
/// ([`remeasure`]); `None` when the audit holds no readable entry `id`.
#[must_use]
pub fn replay_entry(
    repo: &Path,
    audit: &Audit,
    id: EntryId,
    statistics_only: bool,
    cache_dir: &Path,
) -> Option<EntryReplay> {
    let (entry, _) = audit.find(id)?;
    let used_before = audit
        .entries
        .iter()
        .rev()
        .nth(1)
        .map_or(0.0, |(previous, _)| previous.loss_budget.used_after);
    let mut checks = vec![Check {
        name: format!("chain up to {id}"),
        pass: audit.ok(),
        detail: audit.state_line(),
    }];
    checks.extend(replay_statistics(entry, used_before));
    if !statistics_only {
        checks.extend(remeasure(repo, entry, cache_dir));
    }
    Some(EntryReplay {
        ok: checks.iter().all(|check| check.pass),
        id: id.to_string(),
        checks,
    })
}

impl fmt::Display for EntryReplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            writeln!(f, "{check}")?;
        }
        writeln!(
            f,
            "replay {}: {}",
            self.id,
            if self.ok {
                "every check passed"
            } else {
                "failed"
            }
        )
    }
}

/// Rebuilds, re-gates and re-benches what `entry` records; one check per comparison.
pub fn remeasure(repo_path: &Path, entry: &Entry, cache_dir: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut check = |name: &str, pass: bool, detail: String| {
        checks.push(Check {
            name: name.to_owned(),
            pass,
            detail,
        });
    };
    let repo = match resolve::open(repo_path) {
        Ok(repo) => repo,
        Err(e) => {
            check(
                "repository",
                false,
                format!("{e}; rebuilding needs the repository's history (or --statistics-only)"),
            );
            return checks;
        }
    };
    let judge = judged_side(entry);
    let constitution = match recorded_constitution(&repo, entry) {
        Ok((constitution, sha256)) => {
            check(
                "constitution",
                sha256 == entry.constitution_sha256,
                format!(
                    "recorded {}, {CONSTITUTION_PATH} at {} hashes to {sha256}",
                    entry.constitution_sha256,
                    short(judge.commit.as_str())
                ),
            );
            constitution
        }
        Err(why) => {
            check("constitution", false, why);
            return checks;
        }
    };
    // The confirmer must not have made the change (Annex A3.3): only git can tell.
    if let Some(confirmation) = &entry.confirmation {
        let who = &confirmation.confirmed_by;
        let role = confirmer_email(who).and_then(|email| {
            let candidate =
                resolve::commit(&repo, "recorded candidate", entry.candidate.commit.as_str())
                    .map_err(|e| e.to_string())?;
            change_role(&repo, &candidate, email, &constitution.contract())
        });
        let (pass, detail) = match role {
            Ok(None) => (
                true,
                format!("{who} is neither author nor committer of the change"),
            ),
            Ok(Some(role)) => (false, format!("{who} is the {role}: not independent")),
            Err(why) => (false, why),
        };
        check("confirmation", pass, detail);
    }
    let mut rebuild = |role: &str, record: &BinaryRecord| -> Option<BuildOutcome> {
        match rebuild(repo_path, record, &constitution, cache_dir) {
            Ok(outcome) => {
                check(
                    &format!("rebuild {role}"),
                    outcome.sha256 == record.binary_sha256.as_str()
                        && outcome.tree == record.tree.as_str(),
                    format!(
                        "recorded {} (tree {}), rebuilt {} (tree {}, reproduced twice{})",
                        record.binary_sha256,
                        short(record.tree.as_str()),
                        outcome.sha256,
                        short(&outcome.tree),
                        if outcome.cached { ", cached" } else { "" }
                    ),
                );
                Some(outcome)
            }
            Err(e) => {
                check(&format!("rebuild {role}"), false, e.to_string());
                None
            }
        }
    };
    let candidate = rebuild("candidate", &entry.candidate);
    let predecessor = entry
        .predecessor
        .as_ref()
        .map(|record| (record, rebuild("predecessor", record)));
    if let Some(outcome) = &candidate {
        check(
            "toolchain",
            outcome.toolchain == entry.toolchain,
            format!(
                "recorded {:?}, rebuilt with {:?}",
                entry.toolchain, outcome.toolchain
            ),
        );
    }
    if let (Some(recorded), Some(outcome)) = (&entry.gate, &candidate) {
        match std::fs::read(&outcome.binary)
            .map_err(|e| e.to_string())
            .and_then(|bytes| match constitution.contract().gate {
                GateContract::Symbols(rules) => {
                    gate::inspect(&bytes, &rules.symbols, rules.callee_depth)
                        .map_err(|e| e.to_string())
                }
                GateContract::None => Err("the entry records a gate, but the contract \
                                               states none (`gate: none`)"
                    .to_owned()),
            }) {
            Ok(found) => check(
                "gate",
                found.pass
                    && recorded.popcnt_in_eval == (found.popcnt > 0)
                    && recorded.software_popcount_in_eval == (found.software_popcount > 0),
                format!(
                    "recorded popcnt {} / software {}, re-run {} ({} POPCNT, {} software)",
                    recorded.popcnt_in_eval,
                    recorded.software_popcount_in_eval,
                    if found.pass { "PASS" } else { "FAIL" },
                    found.popcnt,
                    found.software_popcount
                ),
            ),
            Err(why) => check("gate", false, why),
        }
    }
    let isolation = EngineIsolation::detect();
    let contract = constitution.contract();
    let mut bench = |role: &str, record: &BinaryRecord, outcome: &Option<BuildOutcome>| {
        if let Some(outcome) = outcome {
            match builder::bench::measure(&outcome.binary, &contract.bench, isolation, 2) {
                Ok(signature) => check(
                    &format!("bench {role}"),
                    signature.nodes == record.bench_nodes,
                    format!(
                        "recorded {}, measured {}",
                        record.bench_nodes, signature.nodes
                    ),
                ),
                Err(e) => check(&format!("bench {role}"), false, e.to_string()),
            }
        }
    };
    bench("candidate", &entry.candidate, &candidate);
    if let Some((record, outcome)) = &predecessor {
        bench("predecessor", record, outcome);
    }
    if let (Some(proof), Some(candidate_build)) = (&entry.proof, &candidate) {
        let predecessor_build = predecessor
            .as_ref()
            .and_then(|(_, outcome)| outcome.as_ref());
        let rerun = (|| {
            let predecessor_build =
                predecessor_build.ok_or("no rebuilt predecessor to run the proof on")?;
            let commit =
                resolve::commit(&repo, "recorded candidate", entry.candidate.commit.as_str())
                    .map_err(|e| e.to_string())?;
            let bytes =
                resolve::read_file(&repo, &commit, &proof.spec).map_err(|e| e.to_string())?;
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let spec = dir.path().join("spec.yaml");
            std::fs::write(&spec, &bytes).map_err(|e| e.to_string())?;
            let tablebase = Tablebase::new(Tablebase::default_cache_dir());
            let verdict = verify_proof(
                &spec,
                &predecessor_build.binary,
                &candidate_build.binary,
                &tablebase,
            )
            .map_err(|e| e.to_string())?;
            let before = verdict.predecessor.as_ref().is_some_and(|run| run.passed);
            Ok::<_, String>((Sha256Hex::of(&bytes), before, verdict.candidate.passed))
        })();
        match rerun {
            Ok((sha256, before, after)) => {
                let outcome = |passed: bool| {
                    if passed {
                        ProofOutcome::Pass
                    } else {
                        ProofOutcome::Fail
                    }
                };
                check(
                    "proof",
                    sha256 == proof.spec_sha256
                        && outcome(before) == proof.predecessor
                        && outcome(after) == proof.candidate,
                    format!(
                        "{} (sha256 {}): recorded {:?} → {:?}, re-run {:?} → {:?}",
                        proof.spec,
                        short(sha256.as_str()),
                        proof.predecessor,
                        proof.candidate,
                        outcome(before),
                        outcome(after)
                    ),
                );
            }
            Err(why) => check("proof", false, why),
        }
    }
    checks
}

/// The side whose rules judged the entry: the predecessor (the candidate at genesis).
fn judged_side(entry: &Entry) -> &BinaryRecord {
    entry.predecessor.as_ref().unwrap_or(&entry.candidate)
}

/// The constitution `entry` was judged under, read from its judged side's commit, and the
/// sha256 of its bytes (to compare with the entry's `constitution_sha256`).
///
/// # Errors
/// The commit or the file is missing, or the file does not parse.
pub fn recorded_constitution(
    repo: &Repository,
    entry: &Entry,
) -> Result<(Constitution, Sha256Hex), String> {
    let judge = judged_side(entry);
    let commit = resolve::commit(repo, "recorded commit", judge.commit.as_str())
        .map_err(|e| e.to_string())?;
    let bytes = resolve::read_file(repo, &commit, CONSTITUTION_PATH).map_err(|e| e.to_string())?;
    let label = format!("{}:{CONSTITUTION_PATH}", judge.commit.as_str());
    let constitution = Constitution::parse(&bytes, Path::new(&label)).map_err(|e| e.to_string())?;
    Ok((constitution, Sha256Hex::of(&bytes)))
}

/// Builds `record`'s commit with the recipe of `constitution` (from the cache when it holds
/// that tree); the caller compares the outcome's sha256 with the record.
///
/// # Errors
/// The build failed or did not reproduce.
pub fn rebuild(
    repo_path: &Path,
    record: &BinaryRecord,
    constitution: &Constitution,
    cache_dir: &Path,
) -> Result<BuildOutcome, builder::BuildError> {
    let contract = constitution.contract();
    builder::build_commit(&BuildRequest {
        repo: repo_path.to_path_buf(),
        rev: record.commit.as_str().to_owned(),
        build: contract.build,
        fetch: contract.fetch,
        cache_dir: cache_dir.to_path_buf(),
        registry: builder::host_registry(),
        sandbox: Sandbox::detect(Limits::build()),
        // Compared with the register's record by the caller: a poisoned cache shows as a mismatch.
        fresh: false,
    })
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
