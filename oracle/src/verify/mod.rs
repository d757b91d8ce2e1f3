//! `oracle verify`: the whole gatekeeper, step by step (docs/architecture.md).
//!
//! 1. resolve candidate and predecessor; read the rules from the predecessor; refuse governance changes
//! 2. read the candidate's trailers
//! 3. build both twice, bit-identically; bind their hashes in `--out` before any measurement
//! 4. gate on the candidate; bench of both, the candidate's equal to its trailer
//! 5. Randfall only: the proof fails on the predecessor and passes on the candidate
//! 6. stage 1, then stage 2: an SPRT each on the path's bounds
//! 7. verdict, loss tolerance, the register entry in `--out` (`--append`: into the register)
//!
//! [`run`] reads like that list. Each step either returns what the next needs or a
//! [`StepFailure`] naming itself, why, and the files that show it; the report is filled as the
//! steps go, so a failed run still leaves its evidence and its report in `--out`.

pub mod binding;
pub mod confirmation;
pub mod out;
pub mod replay;
pub mod resolve;
pub mod scope;
pub mod stage;
pub mod steps;
pub mod trailers;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::Repository;
use serde::Serialize;

use crate::build::sandbox::engine::EngineIsolation;
use crate::build::sandbox::{Isolation, Limits, Sandbox};
use crate::build::{self, BuildRequest};
use crate::gate;
use crate::governance::confirmation::ConfirmationRecord;
use crate::governance::constitution::{CONSTITUTION_PATH, Constitution, Profile};
use crate::governance::entry::{
    BinaryRecord, Entry, GateRecord, IsolationRecord, LossBudget, OracleRecord, PathKind,
    ProofOutcome, ProofRecord, StageRecord, StageState, Verdict,
};
use crate::governance::hash::{GitId, Sha256Hex};
use crate::governance::register::{self, RegisterFile, audit};
use crate::governance::timestamp::Timestamp;
use crate::governance::verdict::{Evidence, decide};
use crate::integrity::{sha256_file, write_atomically};
use crate::play::runner::Shard;
use crate::proof::{Detail, verify_proof};
use crate::report::{self, BenchReport, GateSummary, RunReport};
use crate::tablebase::Tablebase;
use binding::{BindingRecord, BoundBinary, timestamp};
use out::OutDir;
use resolve::CommitPair;
use stage::{StageOutcome, StagePlan};
pub use steps::{FailureKind, Step, StepFailure, StepRecord, StepReporter};
use trailers::Trailers;

/// What to verify and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The repository (any directory inside it; only git objects are read).
    pub repo: PathBuf,
    /// Candidate revision; `None`: the newest commit that changed `engine/`.
    pub candidate: Option<String>,
    /// Predecessor revision; `None`: the candidate's first parent.
    pub base: Option<String>,
    /// Profile of the constitution.
    pub profile: String,
    /// Where the evidence goes (and where an interrupted run resumes from).
    pub out: PathBuf,
    /// Append the entry to `<repo>/register` (binding profiles only).
    pub append: bool,
    /// Play everything here, one shard of a round, or nothing (merge shard files only).
    pub mode: Mode,
    /// The build cache.
    pub cache_dir: PathBuf,
    /// The independent confirmation (Annex A3.3) a Randfall candidate needs; refused otherwise.
    pub confirmation: Option<PathBuf>,
}

/// How the stages are played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every stage in this process, until the SPRT decides or the maximum is reached.
    Local,
    /// One shard's pairs of the next round of the current stage (a CI matrix job).
    Shard(Shard),
    /// No games: merge the shard files in `--out`, apply the SPRT at the round boundary, and
    /// either decide or ask for another round.
    NoPlay,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Gewinn or Korrektur: exit 0.
    Accepted,
    /// Abgelehnt, or a check the candidate failed: exit 1.
    Rejected,
    /// Bad input or a broken environment: exit 2.
    Error,
    /// `--no-play`: the current stage needs another round of shards.
    Continue,
    /// `--shard K/N`: this shard's pairs of the round are played.
    ShardDone,
}

impl Status {
    /// The process exit status (`continue` and `shard_done` are successes of their mode).
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Accepted | Status::Continue | Status::ShardDone => 0,
            Status::Rejected => 1,
            Status::Error => 2,
        }
    }
}

/// The final object of a run (`--json`, and `result.json` in `--out`).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// How it ended.
    pub status: Status,
    /// The process exit status.
    pub exit_code: u8,
    /// `gewinn`, `korrektur` or `abgelehnt`, once decided.
    pub verdict: Option<Verdict>,
    /// Why, in one sentence.
    pub reason: String,
    /// The commits judged (absent if step 1 failed before resolving them).
    pub candidate: Option<resolve::ResolvedCommit>,
    /// The predecessor.
    pub predecessor: Option<resolve::ResolvedCommit>,
    /// The profile.
    pub profile: String,
    /// The declared path.
    pub path: Option<PathKind>,
    /// The binding record, once written.
    pub binding: Option<BindingRecord>,
    /// The Randfall confirmation, once checked.
    pub confirmation: Option<ConfirmationRecord>,
    /// The failed step, if one failed.
    pub failure: Option<StepFailure>,
    /// Every step as it ran.
    pub steps: Vec<StepRecord>,
    /// The stages measured so far.
    pub stages: Vec<StageOutcome>,
    /// The entry file written to `--out`.
    pub entry: Option<PathBuf>,
    /// The register entry appended with `--append`.
    pub appended: Option<String>,
    /// The report files.
    pub report: ReportFiles,
}

/// Where the report went.
#[derive(Debug, Clone, Serialize)]
pub struct ReportFiles {
    /// Markdown.
    pub markdown: PathBuf,
    /// SVG figures.
    pub svg: PathBuf,
}

/// The run so far: what each step found, for the next steps, the report and the result.
struct Run<'a> {
    request: &'a Request,
    reporter: &'a mut StepReporter,
    out: OutDir,
    report: RunReport,
    pair: Option<CommitPair>,
    path: Option<PathKind>,
    binding: Option<BindingRecord>,
    /// The checked Randfall confirmation (step 2).
    confirmation: Option<ConfirmationRecord>,
    /// The binding came from an earlier invocation with the same `--out` (a resumed run).
    resumed: bool,
    stages: Vec<StageOutcome>,
    entry: Option<PathBuf>,
    appended: Option<String>,
}

/// What step 1 read from the predecessor's side.
struct Rules {
    constitution: Constitution,
    constitution_sha256: Sha256Hex,
    profile: Profile,
    loss_used_before: f64,
    /// The register's current engine (id and binary) that a binding run's predecessor must be.
    custody: Option<(String, BinaryRecord)>,
}

/// The end of the pipeline: a verdict, or a mode's intermediate status.
struct Conclusion {
    status: Status,
    verdict: Option<Verdict>,
    reason: String,
}

/// Runs `oracle verify`; never panics on bad input, always leaves a report and `result.json`.
pub fn run(request: &Request, reporter: &mut StepReporter) -> RunResult {
    if request.out.to_str().is_none() {
        let failure = StepFailure::error(
            Step::Resolve,
            format!(
                "--out {}: the path is not valid UTF-8; the run's records (binding, result, entry) name their files in JSON and YAML",
                request.out.to_string_lossy()
            ),
        );
        return failed_early(request, reporter, failure);
    }
    let out = match OutDir::create(&request.out) {
        Ok(out) => out,
        Err(error) => {
            let failure = StepFailure::error(
                Step::Resolve,
                format!("cannot create --out {}: {error}", request.out.display()),
            );
            return failed_early(request, reporter, failure);
        }
    };
    let mut run = Run {
        request,
        reporter,
        out,
        report: RunReport {
            profile: request.profile.clone(),
            ..RunReport::default()
        },
        pair: None,
        path: None,
        binding: None,
        confirmation: None,
        resumed: false,
        stages: Vec::new(),
        entry: None,
        appended: None,
    };
    let outcome = run.pipeline();
    run.finish(outcome)
}

impl Run<'_> {
    /// The steps, in order.
    fn pipeline(&mut self) -> Result<Conclusion, StepFailure> {
        let (repo, rules) = self.resolve()?;
        let trailers = self.trailers(&repo, rules.profile.binding)?;
        let binding = self.build_and_bind(&rules)?;
        self.gate(&rules, &binding)?;
        let bench = self.bench(&binding, &trailers)?;
        let proof = self.proof(&repo, &trailers, &binding)?;
        let conclusion = self.stages(&rules, &binding, &trailers)?;
        if let Some(conclusion) = conclusion {
            return Ok(conclusion);
        }
        self.verdict(&rules, &binding, &trailers, &bench, proof)
    }

    /// Step 1: resolve, refuse governance changes, read constitution, books and register.
    fn resolve(&mut self) -> Result<(Repository, Rules), StepFailure> {
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
            )
            .map_err(error)?;
            self.report.candidate = pair.candidate.commit.clone();
            self.report.candidate_summary = pair.candidate.summary.clone();
            self.report.predecessor = pair.predecessor.commit.clone();
            self.pair = Some(pair.clone());
            resolve::refuse_governance_changes(&repo, &pair).map_err(error)?;
            let rules = self.read_rules(&repo, &pair)?;
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
    fn read_rules(&mut self, repo: &Repository, pair: &CommitPair) -> Result<Rules, StepFailure> {
        let step = Step::Resolve;
        let error = |e: &dyn std::fmt::Display| StepFailure::error(step, e);
        let predecessor = &pair.predecessor;
        let bytes =
            resolve::read_file(repo, predecessor, CONSTITUTION_PATH).map_err(|e| error(&e))?;
        let copy = self.out.input(CONSTITUTION_PATH);
        write_atomically(&copy, &bytes).map_err(|e| error(&e.to_string()))?;
        let label = PathBuf::from(format!(
            "{}:{CONSTITUTION_PATH}",
            short(&predecessor.commit)
        ));
        let constitution = Constitution::parse(&bytes, &label).map_err(|e| error(&e))?;
        let constitution_sha256 = Sha256Hex::of(&bytes);
        let profile = constitution
            .profile(&self.request.profile)
            .map_err(|e| error(&e))?
            .clone();
        self.report.binding = profile.binding;
        if self.request.append && !profile.binding {
            return Err(error(&format!(
                "--append: profile `{}` is not binding, its verdicts are never registered",
                self.request.profile
            )));
        }
        let inputs = self.out.root().join("inputs");
        for stage in &profile.stages {
            let path = stage.book.to_string_lossy().into_owned();
            let book = resolve::read_file(repo, predecessor, &path).map_err(|e| error(&e))?;
            let copy = self.out.input(&path);
            write_atomically(&copy, &book).map_err(|e| error(&e.to_string()))?;
            stage
                .check_book(&inputs, &self.request.profile)
                .map_err(|e| error(&e))?;
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
        let custody = match audit.current_engine() {
            _ if !profile.binding => None,
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
            constitution,
            constitution_sha256,
            profile,
            loss_used_before,
            custody,
        })
    }

    /// Step 2: `Bench:`, `Oracle-Path:`, `Oracle-Proof:` (of the branch commit for a merge).
    fn trailers(&mut self, repo: &Repository, binding: bool) -> Result<Trailers, StepFailure> {
        let step = Step::Trailers;
        self.reporter.begin(step, "read the candidate's trailers");
        let candidate = self.pair().candidate.clone();
        let result = resolve::declaring_commit(repo, &candidate)
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
                trailers::parse(&declaring.message)
                    .map(|t| (t, from.clone()))
                    .map_err(|e| StepFailure::error(step, format!("{from}: {e}")))
            });
        if let Ok((t, _)) = &result {
            self.path = Some(t.path);
            self.report.path = t.path.to_string();
        }
        let result = result.and_then(|(t, from)| {
            self.confirm(repo, &t, binding)?;
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
    fn confirm(
        &mut self,
        repo: &Repository,
        trailers: &Trailers,
        binding: bool,
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
                eprintln!(
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
        let checked = confirmation::read(file, repo, &self.pair().candidate, proof)
            .map_err(|e| StepFailure::error(step, e))?;
        let copy = self.out.input("confirmation.yaml");
        write_atomically(&copy, &checked.bytes)
            .map_err(|e| StepFailure::error(step, e.to_string()))?;
        self.report.confirmation = Some(checked.record.clone());
        self.confirmation = Some(checked.record);
        Ok(())
    }

    /// Step 3: build both twice (or reuse an earlier run's binding), bind before any measurement.
    fn build_and_bind(&mut self, rules: &Rules) -> Result<BindingRecord, StepFailure> {
        let step = Step::Build;
        self.reporter.begin(
            step,
            "build both engines twice, bit-identically; bind their sha256",
        );
        let result = self.bind(rules);
        if let Ok(record) = &result {
            self.report.bound_at = record.bound_at.clone();
            self.report.candidate_sha256 = record.candidate.sha256.clone();
            self.report.predecessor_sha256 = record.predecessor.sha256.clone();
            self.binding = Some(record.clone());
        }
        self.close(result, |r| {
            format!(
                "bound at {}: candidate {}, predecessor {} ({})",
                r.bound_at,
                &r.candidate.sha256[..16],
                &r.predecessor.sha256[..16],
                r.toolchain
            )
        })
    }

    fn bind(&mut self, rules: &Rules) -> Result<BindingRecord, StepFailure> {
        let step = Step::Build;
        let pair = self.pair().clone();
        let path = self.out.binding();
        let sandbox = Sandbox::detect(Limits::build());
        let isolation = IsolationRecord {
            build: sandbox.isolation.describe(),
            play: EngineIsolation::detect().describe(),
        };
        let sandboxed = sandbox.isolation == Isolation::Bubblewrap
            && EngineIsolation::detect() == EngineIsolation::Bubblewrap;
        if rules.profile.binding && !sandboxed {
            return Err(StepFailure::error(
                step,
                format!(
                    "profile `{}` is binding and needs a working bubblewrap sandbox, but builds \
                     would run under `{}` and engines under `{}`; install bubblewrap and let it \
                     create user, pid, ipc, uts and net namespaces (nothing was built)",
                    self.request.profile, isolation.build, isolation.play
                ),
            ));
        }
        let earlier = BindingRecord::read(&path).map_err(|e| StepFailure::error(step, e))?;
        if let Some(earlier) = earlier {
            let register_sha256 = rules
                .custody
                .as_ref()
                .map(|(_, engine)| engine.binary_sha256.as_str());
            let expected = [
                (
                    "profile",
                    earlier.profile.as_str(),
                    self.request.profile.as_str(),
                ),
                (
                    "constitution_sha256",
                    &earlier.constitution_sha256,
                    rules.constitution_sha256.as_str(),
                ),
                (
                    "candidate.commit",
                    &earlier.candidate.commit,
                    &pair.candidate.commit,
                ),
                (
                    "candidate.tree",
                    &earlier.candidate.tree,
                    &pair.candidate.tree,
                ),
                (
                    "predecessor.commit",
                    &earlier.predecessor.commit,
                    &pair.predecessor.commit,
                ),
                (
                    "predecessor.tree",
                    &earlier.predecessor.tree,
                    &pair.predecessor.tree,
                ),
                (
                    "predecessor.sha256",
                    &earlier.predecessor.sha256,
                    register_sha256.unwrap_or(&earlier.predecessor.sha256),
                ),
            ];
            let engines = [
                ("candidate.path", &earlier.candidate.path, "candidate"),
                ("predecessor.path", &earlier.predecessor.path, "predecessor"),
            ];
            let wrong_field = expected
                .iter()
                .find(|(_, found, wanted)| found != wanted)
                .map(|(field, found, wanted)| format!("{field} is {found}, this run's is {wanted}"))
                .or_else(|| {
                    engines.iter().find_map(|(field, found, role)| {
                        let wanted = fs::canonicalize(self.out.engine(role)).ok()?;
                        (**found != wanted).then(|| {
                            format!("{field} is {}, not {}", found.display(), wanted.display())
                        })
                    })
                });
            if let Some(wrong) = wrong_field {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "{} does not belong to this run: {wrong}; use a fresh --out",
                        path.display()
                    ),
                )
                .evidence(path));
            }
            earlier
                .rehash()
                .map_err(|e| StepFailure::error(step, e).evidence(path.clone()))?;
            eprintln!(
                "      resuming: the binding of {} is kept",
                earlier.bound_at
            );
            self.resumed = true;
            self.report.isolation = Some(earlier.isolation.clone());
            return Ok(earlier);
        }
        eprintln!("      isolation: builds {}", isolation.build);
        eprintln!("      isolation: engines {}", isolation.play);
        self.report.isolation = Some(isolation.clone());
        let binding = rules.custody.is_some();
        let mut bound = Vec::new();
        let mut toolchain = String::new();
        for (role, commit) in [
            ("candidate", &pair.candidate),
            ("predecessor", &pair.predecessor),
        ] {
            // A binding candidate is built fresh: no cached binary stands in for it. The
            // predecessor may come from the cache: it is held to the register's record below.
            let fresh = binding && role == "candidate";
            let mut outcome = self.build_bound(role, commit, rules, sandbox, fresh)?;
            if let (Some((id, engine)), "predecessor") = (&rules.custody, role) {
                if outcome.sha256 != engine.binary_sha256.as_str() && outcome.cached {
                    eprintln!(
                        "      the cached predecessor {} is not the register's {}: rebuilding it",
                        &outcome.sha256[..16],
                        &engine.binary_sha256.as_str()[..16]
                    );
                    outcome = self.build_bound(role, commit, rules, sandbox, true)?;
                }
                if outcome.sha256 != engine.binary_sha256.as_str() {
                    return Err(StepFailure::error(
                        step,
                        format!(
                            "chain of custody: the predecessor {} rebuilds to sha256 {}, but the register's \
                             current engine {id} (commit {}) is sha256 {}; a binding run judges a change \
                             against the engine that landed last",
                            short(&commit.commit),
                            outcome.sha256,
                            short(engine.commit.as_str()),
                            engine.binary_sha256
                        ),
                    ));
                }
            }
            let copy = self.out.engine(role);
            fs::copy(&outcome.binary, &copy)
                .map_err(|e| StepFailure::error(step, format!("{}: {e}", copy.display())))?;
            let sha256 = sha256_file(&copy).map_err(|e| StepFailure::error(step, e.to_string()))?;
            if sha256 != outcome.sha256 {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "the copy {} of the {role} hashes to {sha256}, the build to {}",
                        copy.display(),
                        outcome.sha256
                    ),
                ));
            }
            toolchain = outcome.toolchain.clone();
            bound.push(BoundBinary {
                commit: commit.commit.clone(),
                tree: commit.tree.clone(),
                sha256,
                path: fs::canonicalize(&copy).unwrap_or(copy),
            });
        }
        let (bound_at, bound_at_unix_ms) = timestamp(SystemTime::now());
        let predecessor = bound.pop().expect("two binaries were bound");
        let candidate = bound.pop().expect("two binaries were bound");
        let record = BindingRecord {
            bound_at,
            bound_at_unix_ms,
            toolchain,
            profile: self.request.profile.clone(),
            constitution_sha256: rules.constitution_sha256.to_string(),
            candidate,
            predecessor,
            isolation,
        };
        record
            .write(&path)
            .map_err(|e| StepFailure::error(step, e))?;
        Ok(record)
    }

    /// Builds one side twice (or takes it from the cache unless `fresh`), naming it on failure.
    fn build_bound(
        &mut self,
        role: &str,
        commit: &resolve::ResolvedCommit,
        rules: &Rules,
        sandbox: Sandbox,
        fresh: bool,
    ) -> Result<build::BuildOutcome, StepFailure> {
        let spinner = self
            .reporter
            .spinner(&format!("building {role} {} twice", short(&commit.commit)));
        let outcome = build::build_commit(&BuildRequest {
            repo: self.request.repo.clone(),
            rev: commit.commit.clone(),
            recipe: rules.constitution.build.clone(),
            cache_dir: self.request.cache_dir.clone(),
            registry: build::host_registry(),
            sandbox,
            fresh,
        });
        spinner.finish_and_clear();
        outcome.map_err(|e| {
            let failure = format!("{role} {}: {e}", short(&commit.commit));
            if role == "candidate" && e.rejects_candidate() {
                StepFailure::rejected(Step::Build, failure)
            } else {
                StepFailure::error(Step::Build, failure)
            }
        })
    }

    /// Step 4a: the build-shape gate on the candidate.
    fn gate(&mut self, rules: &Rules, binding: &BindingRecord) -> Result<(), StepFailure> {
        let step = Step::Gate;
        self.reporter.begin(
            step,
            "build-shape gate on the candidate (POPCNT in the evaluation)",
        );
        let file = self.out.step_file("gate.json");
        let result = (|| {
            rehash(step, binding, &self.out)?;
            let bytes = fs::read(&binding.candidate.path).map_err(|e| {
                StepFailure::error(step, format!("{}: {e}", binding.candidate.path.display()))
            })?;
            let found = gate::inspect(&bytes, &rules.constitution.gate.symbols)
                .map_err(|e| StepFailure::error(step, format!("candidate binary: {e}")))?;
            write_json(step, &file, &found)?;
            self.report.gate = Some(GateSummary {
                pass: found.pass,
                symbols: found.symbols.clone(),
                functions_scanned: found.functions_scanned.len(),
                popcnt: found.popcnt as usize,
                software_popcount: found.software_popcount as usize,
            });
            if !found.pass {
                return Err(StepFailure::rejected(step, found.failures.join("; ")).evidence(&file));
            }
            Ok(found)
        })();
        self.close(result, |g| {
            format!(
                "PASS: {} POPCNT, no software popcount in {} functions",
                g.popcnt,
                g.functions_scanned.len()
            )
        })
        .map(|_| ())
    }

    /// Step 4b: bench signatures of both; the candidate's must equal its trailer.
    fn bench(
        &mut self,
        binding: &BindingRecord,
        trailers: &Trailers,
    ) -> Result<BenchReport, StepFailure> {
        let step = Step::Bench;
        self.reporter.begin(
            step,
            "bench signatures (the candidate's equals its Bench: trailer)",
        );
        let file = self.out.step_file("bench.json");
        let result = (|| {
            rehash(step, binding, &self.out)?;
            let isolation = EngineIsolation::detect();
            let measure = |role: &str, bound: &BoundBinary| {
                build::bench::measure(&bound.path, isolation, 2)
                    .map_err(|e| StepFailure::error(step, format!("{role}: {e}")))
            };
            let summary = BenchReport {
                candidate: measure("candidate", &binding.candidate)?.nodes,
                predecessor: measure("predecessor", &binding.predecessor)?.nodes,
                trailer: trailers.bench,
            };
            // A resumed run's file is measured again, never taken as found: it must agree.
            let earlier = match fs::read(&file) {
                Ok(bytes) => {
                    Some(serde_json::from_slice::<BenchReport>(&bytes).map_err(|e| {
                        StepFailure::error(step, format!("{}: {e}", file.display()))
                    })?)
                }
                Err(_) => None,
            };
            if let Some(earlier) = earlier.filter(|_| self.resumed) {
                let fields = [
                    ("candidate", earlier.candidate, summary.candidate),
                    ("predecessor", earlier.predecessor, summary.predecessor),
                ];
                if let Some((field, found, measured)) = fields.iter().find(|(_, a, b)| a != b) {
                    return Err(StepFailure::error(
                        step,
                        format!(
                            "{}: {field} is {found}, the bound binary measures {measured}; use a fresh --out",
                            file.display()
                        ),
                    )
                    .evidence(&file));
                }
            }
            write_json(step, &file, &summary)?;
            let candidate = &summary;
            self.report.bench = Some(summary.clone());
            if candidate.candidate != trailers.bench {
                return Err(StepFailure::error(
                    step,
                    format!(
                        "the candidate's bench searched {} nodes but its commit says `Bench: {}`; \
                         put the measured signature in the commit message",
                        candidate.candidate, trailers.bench
                    ),
                )
                .evidence(&file));
            }
            Ok(summary)
        })();
        self.close(result, |b| {
            format!(
                "candidate {} = trailer, predecessor {}",
                b.candidate, b.predecessor
            )
        })
    }

    /// Step 5: the Randfall proof (skipped on the Standard path): the spec named by the
    /// candidate's `Oracle-Proof` trailer, read from the candidate's tree, must fail on the
    /// predecessor and pass on the candidate.
    fn proof(
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
            let mut detail = Vec::new();
            if let Some(run) = &verdict.predecessor {
                detail.extend(detail_lines("predecessor", &run.detail));
            }
            detail.extend(detail_lines("candidate", &verdict.candidate.detail));
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

    /// Step 6: the profile's stages in order; `Some` ends the run early (a mode's status).
    fn stages(
        &mut self,
        rules: &Rules,
        binding: &BindingRecord,
        trailers: &Trailers,
    ) -> Result<Option<Conclusion>, StepFailure> {
        for (index, stage) in rules.profile.stages.iter().enumerate() {
            let step = Step::Stage(index + 1);
            let plan = StagePlan::new(
                index + 1,
                stage,
                &rules.profile,
                trailers.path,
                binding,
                &self.out,
            )
            .map_err(|e| StepFailure::error(step, e))?;
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
                stage::run(&plan, self.request.mode, self.reporter)
                    .map_err(|e| StepFailure::error(step, e).evidence(plan.dir.clone()))
            });
            let progress = self.close(result, |p| p.describe())?;
            match progress {
                stage::StageProgress::Finished(outcome) => {
                    self.report.stages.push(outcome.report.clone());
                    let passed = outcome.record.state == StageState::AcceptH1;
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

    /// Step 7: verdict, loss tolerance, the entry file; `--append` registers it.
    fn verdict(
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
                oracle: OracleRecord {
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    commit: git_id(oracle_commit(&binding.predecessor.commit))?,
                },
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
            self.report.verdict = Some(verdict_name(decision.verdict).to_owned());
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
            let accepted = matches!(decision.verdict, Verdict::Gewinn | Verdict::Korrektur);
            Ok(Conclusion {
                status: if accepted {
                    Status::Accepted
                } else {
                    Status::Rejected
                },
                verdict: Some(decision.verdict),
                reason: format!("{}: {}", title(decision.verdict), decision.reason),
            })
        })();
        self.close(result, |c| c.reason.clone())
    }

    /// Records a step's end with the reporter and passes its result on.
    fn close<T>(
        &mut self,
        result: Result<T, StepFailure>,
        detail: impl FnOnce(&T) -> String,
    ) -> Result<T, StepFailure> {
        match &result {
            Ok(value) => self.reporter.done(detail(value)),
            Err(failure) => self.reporter.fail(failure),
        }
        result
    }

    fn pair(&self) -> &CommitPair {
        self.pair.as_ref().expect("step 1 resolved the commits")
    }

    /// Writes the report and `result.json`, whatever happened.
    fn finish(mut self, outcome: Result<Conclusion, StepFailure>) -> RunResult {
        let (status, verdict, reason, failure) = match outcome {
            Ok(c) => (c.status, c.verdict, c.reason, None),
            Err(failure) => {
                let status = match failure.kind {
                    FailureKind::Error => Status::Error,
                    FailureKind::Rejected => Status::Rejected,
                };
                (status, None, failure.to_string(), Some(failure))
            }
        };
        self.report.outcome = reason.clone();
        let files = ReportFiles {
            markdown: self.out.report_markdown(),
            svg: self.out.report_svg(),
        };
        let markdown = report::render_markdown(&self.report, Some("report.svg"));
        let svg = report::render_svg(&self.report);
        let writes = [
            write_atomically(&files.markdown, markdown.as_bytes()).map_err(|e| e.to_string()),
            write_atomically(&files.svg, svg.as_bytes()).map_err(|e| e.to_string()),
            append_step_summary(&self.report).map_err(|e| format!("$GITHUB_STEP_SUMMARY: {e}")),
        ];
        for error in writes.into_iter().filter_map(Result::err) {
            eprintln!("warning: the report could not be written: {error}");
        }
        let result = RunResult {
            status,
            exit_code: status.exit_code(),
            verdict,
            reason,
            candidate: self.pair.as_ref().map(|p| p.candidate.clone()),
            predecessor: self.pair.as_ref().map(|p| p.predecessor.clone()),
            profile: self.request.profile.clone(),
            path: self.path,
            binding: self.binding,
            confirmation: self.confirmation,
            failure,
            steps: self.reporter.records().to_vec(),
            stages: self.stages,
            entry: self.entry,
            appended: self.appended,
            report: files,
        };
        let json = serde_json::to_vec_pretty(&result).expect("the result serializes");
        if let Err(error) = write_atomically(&self.out.result(), &json) {
            eprintln!("warning: {error}");
        }
        result
    }
}

/// A run that could not even create its `--out` directory.
fn failed_early(request: &Request, reporter: &mut StepReporter, failure: StepFailure) -> RunResult {
    reporter.begin(failure.step, "prepare --out");
    reporter.fail(&failure);
    RunResult {
        status: Status::Error,
        exit_code: Status::Error.exit_code(),
        verdict: None,
        reason: failure.to_string(),
        candidate: None,
        predecessor: None,
        profile: request.profile.clone(),
        path: None,
        binding: None,
        confirmation: None,
        failure: Some(failure),
        steps: reporter.records().to_vec(),
        stages: Vec::new(),
        entry: None,
        appended: None,
        report: ReportFiles {
            // Lossy: an --out that is not UTF-8 is refused, and its result must still print.
            markdown: PathBuf::from(request.out.to_string_lossy().into_owned()).join("report.md"),
            svg: PathBuf::from(request.out.to_string_lossy().into_owned()).join("report.svg"),
        },
    }
}

/// One line per position of a proof run, for the entry and the report.
fn detail_lines(role: &str, detail: &Detail) -> Vec<String> {
    match detail {
        Detail::Conversion(positions) => positions
            .iter()
            .map(|p| {
                format!(
                    "{role}: {} converted {}/{}",
                    p.fen,
                    p.converted,
                    p.games.len()
                )
            })
            .collect(),
        Detail::Bestmove(positions) => positions
            .iter()
            .map(|p| {
                let verdict = if p.passed { "pass" } else { "fail" };
                format!(
                    "{role}: {} bestmove {} ({verdict})",
                    p.fen, p.answer.bestmove
                )
            })
            .collect(),
        Detail::Unchanged(positions) => positions
            .iter()
            .map(|p| {
                let verdict = if p.unchanged { "unchanged" } else { "changed" };
                format!(
                    "{role}: {} {} {} vs baseline {} {} ({verdict})",
                    p.fen, p.engine.bestmove, p.engine.score, p.baseline.bestmove, p.baseline.score
                )
            })
            .collect(),
    }
}

/// Hashes the bound binaries again before a step that runs them.
fn rehash(step: Step, binding: &BindingRecord, out: &OutDir) -> Result<(), StepFailure> {
    binding
        .rehash()
        .map_err(|e| StepFailure::error(step, e).evidence(out.binding()))
}

fn write_json<T: Serialize>(step: Step, file: &Path, value: &T) -> Result<(), StepFailure> {
    let json = serde_json::to_vec_pretty(value).expect("step results serialize");
    write_atomically(file, &json).map_err(|e| StepFailure::error(step, e.to_string()))
}

/// The Markdown report goes to the job summary on GitHub Actions.
fn append_step_summary(report: &RunReport) -> std::io::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Ok(());
    };
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    std::io::Write::write_all(&mut file, report::render_markdown(report, None).as_bytes())
}

/// The commit the judging oracle was built from: `ORACLE_BUILD_COMMIT` at build time (the
/// workflows set it), else the predecessor, the side the trust model builds the judge from.
fn oracle_commit(predecessor: &str) -> String {
    option_env!("ORACLE_BUILD_COMMIT")
        .filter(|commit| !commit.is_empty())
        .unwrap_or(predecessor)
        .to_owned()
}

fn git_id(id: String) -> Result<GitId, StepFailure> {
    GitId::try_from(id).map_err(|e| StepFailure::error(Step::Verdict, e))
}

fn binary_record(bound: &BoundBinary, bench_nodes: u64) -> Result<BinaryRecord, StepFailure> {
    let sha = Sha256Hex::try_from(bound.sha256.clone())
        .map_err(|e| StepFailure::error(Step::Verdict, e))?;
    Ok(BinaryRecord {
        commit: git_id(bound.commit.clone())?,
        tree: git_id(bound.tree.clone())?,
        binary_sha256: sha,
        bench_nodes,
    })
}

fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Genesis => "genesis",
        Verdict::Gewinn => "gewinn",
        Verdict::Korrektur => "korrektur",
        Verdict::Abgelehnt => "abgelehnt",
    }
}

fn title(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Genesis => "Genesis",
        Verdict::Gewinn => "Gewinn",
        Verdict::Korrektur => "Korrektur",
        Verdict::Abgelehnt => "Abgelehnt",
    }
}

/// Shortens a commit id for messages.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
