//! `oracle verify`: the whole gatekeeper, whose seven steps are described once, in
//! docs/architecture.md, "The seven steps of `oracle verify`"
//! (`docs/architecture.md#the-seven-steps-of-oracle-verify`).
//!
//! [`run`] takes the steps in that order: this file holds the run's state and its order, each
//! step's body lives in a file of its own (`rules.rs`, `declared.rs`, `bind.rs`, `checks.rs`,
//! `prove.rs`, `measure.rs`, `judge.rs`). Each step either returns what the next needs or a
//! [`StepFailure`] naming itself, why, and the files that show it; the report is filled as the
//! steps go, so a failed run still leaves its evidence and its report in `--out` (a run refused
//! before `--out` was claimed writes nothing there).

mod adopt;
mod bind;
pub mod binding;
mod checks;
pub mod confirmation;
mod declared;
pub mod games;
mod judge;
pub mod landing;
mod measure;
pub mod out;
pub mod plan;
mod prove;
pub mod provenance;
pub mod recorded;
pub mod replay;
pub mod resolve;
pub mod round;
mod rules;
pub mod scope;
pub mod stage;
pub mod steps;
pub mod trailers;

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::errln;
use crate::governance::confirmation::ConfirmationRecord;
use crate::governance::constitution::{Constitution, Profile};
use crate::governance::contract::EngineContract;
use crate::governance::entry::{BinaryRecord, PathKind, Verdict};
use crate::governance::hash::Sha256Hex;
use crate::integrity::write_atomically;
use crate::play::cpu_guard::NodePace;
use crate::play::shard::Shard;
use crate::report::{self, RunReport};
use binding::BindingRecord;
use out::OutDir;
use resolve::CommitPair;
use stage::StageOutcome;
pub use steps::{FailureKind, Step, StepFailure, StepRecord, StepReporter};

/// What to verify and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The repository (any directory inside it; only git objects are read).
    pub repo: PathBuf,
    /// Candidate revision; `None`: the commit that brought in HEAD's `engine/`.
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
    /// Stop after every check before the first game (build and bind, gate, bench, proof): no
    /// game, no verdict, no entry (a repository's history checked against its own trailers).
    pub checks_only: bool,
    /// The build cache.
    pub cache_dir: PathBuf,
    /// The independent confirmation (Annex A3.3) a Randfall candidate needs; refused otherwise.
    pub confirmation: Option<PathBuf>,
    /// Discard another run's evidence in `--out` instead of refusing the directory.
    pub fresh: bool,
    /// Another run's `--out` whose games of the same stages (same binaries, book, seed and
    /// clock) this run takes over instead of playing them again.
    pub games_from: Option<PathBuf>,
}

/// How the stages are played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every stage in this process, until the SPRT decides or the maximum is reached.
    Local,
    /// One shard's pairs of the next round of the current stage (a CI matrix job).
    Shard(Shard),
    /// No games: merge the shard files in `--out`, apply the SPRT at the round boundary, and
    /// either decide or plan another round.
    NoPlay {
        /// The minutes a shard may take for the next round (`--round-minutes`); `None`: the
        /// profile's `batch_size` pairs a shard.
        round_minutes: Option<std::num::NonZeroU32>,
    },
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Gewinn, Korrektur or Gleich: exit 0.
    Accepted,
    /// Abgelehnt, or a check the candidate failed: exit 1.
    Rejected,
    /// Bad input or a broken environment: exit 2.
    Error,
    /// `--no-play`: the current stage needs another round of shards.
    Continue,
    /// `--shard K/N`: this shard's pairs of the round are played.
    ShardDone,
    /// `--checks-only`: every check before the first game passed; nothing was played.
    Checked,
}

impl Status {
    /// The process exit status (`continue` and `shard_done` are successes of their mode).
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Accepted | Status::Continue | Status::ShardDone | Status::Checked => 0,
            Status::Rejected => 1,
            Status::Error => 2,
        }
    }
}

/// The final object of a run (`--json`, and `result.json` in `--out`).
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// On an error (exit 2): its message, the key every command's JSON error has
    /// (docs/cli.md, "Output"); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How it ended.
    pub status: Status,
    /// The process exit status.
    pub exit_code: u8,
    /// `gewinn`, `korrektur`, `gleich` or `abgelehnt`, once decided.
    pub verdict: Option<Verdict>,
    /// Why, in one sentence.
    pub reason: String,
    /// The commits judged (absent if step 1 failed before resolving them).
    pub candidate: Option<resolve::ResolvedCommit>,
    /// The predecessor.
    pub predecessor: Option<resolve::ResolvedCommit>,
    /// The profile.
    pub profile: String,
    /// Whether the profile's verdicts may enter the register, once its constitution was read.
    pub profile_binding: Option<bool>,
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
    /// The plan printed before any game: per stage the expected games and time here.
    pub plan: Vec<plan::StageForecast>,
    /// The stages measured so far.
    pub stages: Vec<StageOutcome>,
    /// The entry file written to `--out`.
    pub entry: Option<PathBuf>,
    /// The register entry appended with `--append`.
    pub appended: Option<String>,
    /// The report files; `null` when the run stopped before `--out` was this run's (step 1),
    /// so that no path is named that does not exist.
    pub report: Option<ReportFiles>,
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
    /// `--out` was checked and made this run's: from now on evidence and the report go there.
    claimed: bool,
    report: RunReport,
    pair: Option<CommitPair>,
    path: Option<PathKind>,
    binding: Option<BindingRecord>,
    /// The checked Randfall confirmation (step 2).
    confirmation: Option<ConfirmationRecord>,
    /// The binding came from an earlier invocation with the same `--out` (a resumed run).
    resumed: bool,
    /// Whether the profile is binding, once the constitution was read (step 1).
    profile_binding: Option<bool>,
    plan: Vec<plan::StageForecast>,
    /// The candidate's and the predecessor's CPU per node, measured on their benches (step 4):
    /// the bound of their searches at a node limit.
    node_pace: [Option<NodePace>; 2],
    stages: Vec<StageOutcome>,
    entry: Option<PathBuf>,
    appended: Option<String>,
}

/// What step 1 read from the predecessor's side.
struct Rules {
    /// The constitution's engine contract (the Cargo kind when it has no `engine:`).
    contract: EngineContract,
    constitution: Constitution,
    constitution_sha256: Sha256Hex,
    profile: Profile,
    loss_used_before: f64,
    /// The register's current engine (id and binary) that a binding run's predecessor must be.
    custody: Option<(String, BinaryRecord)>,
    /// Files read from the predecessor's tree (path, bytes), copied to `--out/inputs` once the
    /// directory is this run's.
    inputs: Vec<(String, Vec<u8>)>,
}

/// The end of the pipeline: a verdict, or a mode's intermediate status.
struct Conclusion {
    status: Status,
    verdict: Option<Verdict>,
    reason: String,
}

/// Runs `oracle verify`; never panics on bad input; leaves a report and `result.json` in `--out`
/// once step 1 has claimed it.
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
    if let Some(why) = request
        .games_from
        .as_deref()
        .and_then(|dir| adopt::refuse_early(dir, &request.out))
    {
        return failed_early(request, reporter, StepFailure::error(Step::Resolve, why));
    }
    let mut run = Run {
        request,
        reporter,
        out: OutDir::at(&request.out),
        claimed: false,
        report: RunReport {
            profile: request.profile.clone(),
            ..RunReport::default()
        },
        pair: None,
        path: None,
        binding: None,
        confirmation: None,
        resumed: false,
        profile_binding: None,
        plan: Vec::new(),
        node_pace: [None, None],
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
        let trailers = self.trailers(&repo, rules.profile.binding, &rules.contract)?;
        let binding = self.build_and_bind(&rules)?;
        self.gate(&rules, &binding)?;
        let (bench, nodes_per_second) = self.bench(&rules.contract.bench, &binding, &trailers)?;
        self.plan(&rules, &binding, &trailers, nodes_per_second)?;
        let proof = self.proof(&repo, &trailers, &binding)?;
        if self.request.checks_only {
            return Ok(Conclusion {
                status: Status::Checked,
                verdict: None,
                reason: format!(
                    "checks passed: both engines built twice bit-identically and bound, the gate, \
                     the bench ({} nodes, equal to the Bench trailer){}; no game played \
                     (--checks-only)",
                    bench.candidate,
                    if proof.is_some() { ", the proof" } else { "" }
                ),
            });
        }
        let conclusion = self.stages(&repo, &rules, &binding, &trailers)?;
        if let Some(conclusion) = conclusion {
            return Ok(conclusion);
        }
        self.verdict(&rules, &binding, &trailers, &bench, proof)
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
        let files = self.claimed.then(|| ReportFiles {
            markdown: self.out.report_markdown(),
            svg: self.out.report_svg(),
        });
        if let Some(files) = &files {
            let markdown = report::render_markdown(&self.report, Some("report.svg"));
            let writes = [
                write_atomically(&files.markdown, markdown.as_bytes()).map_err(|e| e.to_string()),
                write_atomically(&files.svg, report::render_svg(&self.report).as_bytes())
                    .map_err(|e| e.to_string()),
            ];
            for error in writes.into_iter().filter_map(Result::err) {
                errln!("warning: the report could not be written: {error}");
            }
        }
        if let Err(error) = append_step_summary(&self.report) {
            errln!("warning: the job summary could not be written: {error}");
        }
        let result = RunResult {
            error: (status == Status::Error).then(|| reason.clone()),
            status,
            exit_code: status.exit_code(),
            verdict,
            reason,
            candidate: self.pair.as_ref().map(|p| p.candidate.clone()),
            predecessor: self.pair.as_ref().map(|p| p.predecessor.clone()),
            profile: self.request.profile.clone(),
            profile_binding: self.profile_binding,
            path: self.path,
            binding: self.binding,
            confirmation: self.confirmation,
            failure,
            steps: self.reporter.records().to_vec(),
            plan: self.plan,
            stages: self.stages,
            entry: self.entry,
            appended: self.appended,
            report: files,
        };
        if self.claimed {
            let json = serde_json::to_vec_pretty(&result).expect("the result serializes");
            if let Err(error) = write_atomically(&self.out.result(), &json) {
                errln!("warning: {error}");
            }
        }
        result
    }
}

/// A run refused before anything was read: its `--out` cannot name its files.
fn failed_early(request: &Request, reporter: &mut StepReporter, failure: StepFailure) -> RunResult {
    reporter.begin(failure.step, "prepare --out");
    reporter.fail(&failure);
    RunResult {
        error: Some(failure.to_string()),
        status: Status::Error,
        exit_code: Status::Error.exit_code(),
        verdict: None,
        reason: failure.to_string(),
        candidate: None,
        predecessor: None,
        profile: request.profile.clone(),
        profile_binding: None,
        path: None,
        binding: None,
        confirmation: None,
        failure: Some(failure),
        steps: reporter.records().to_vec(),
        plan: Vec::new(),
        stages: Vec::new(),
        entry: None,
        appended: None,
        report: None,
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

/// Shortens a commit id for messages.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
