//! The pipeline's steps as a person sees them: numbered, reported as they run, and named in
//! every failure together with why and where the evidence is.

use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::binding::timestamp;
use crate::errln;

/// One step of `oracle verify` (issue 7, "Build", 1–7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Resolve commits, read the rules from the predecessor, refuse governance changes.
    Resolve,
    /// Read `Bench:`, `Oracle-Path:`, `Oracle-Proof:`.
    Trailers,
    /// Build both twice, bit-identically; bind their hashes.
    Build,
    /// Build-shape gate on the candidate.
    Gate,
    /// Bench signatures of both; the candidate's equals its trailer.
    Bench,
    /// Randfall proof: fails on the predecessor, passes on the candidate.
    Proof,
    /// An SPRT stage of the profile (1-based).
    Stage(usize),
    /// Verdict, loss tolerance, entry file (and `--append`).
    Verdict,
}

impl Step {
    /// The number shown to people (the numbering; gate and bench share step 4).
    pub fn number(self) -> usize {
        match self {
            Step::Resolve => 1,
            Step::Trailers => 2,
            Step::Build => 3,
            Step::Gate | Step::Bench => 4,
            Step::Proof => 5,
            Step::Stage(_) => 6,
            Step::Verdict => 7,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.number();
        match self {
            Step::Resolve => write!(f, "step {n} (resolve)"),
            Step::Trailers => write!(f, "step {n} (trailers)"),
            Step::Build => write!(f, "step {n} (build and bind)"),
            Step::Gate => write!(f, "step {n} (gate)"),
            Step::Bench => write!(f, "step {n} (bench)"),
            Step::Proof => write!(f, "step {n} (proof)"),
            Step::Stage(stage) => write!(f, "step {n} (stage {stage})"),
            Step::Verdict => write!(f, "step {n} (verdict)"),
        }
    }
}

/// Whether a failed step is an error (exit 2) or a rejection of the candidate (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Bad input or a broken environment: no judgement was made.
    Error,
    /// The candidate failed a check (gate, proof): it is rejected.
    Rejected,
}

/// A step that stopped the pipeline: which, why, and where to look.
#[derive(Debug, Clone, Serialize, thiserror::Error)]
#[error("{step} failed: {why}{}", evidence_text(.evidence))]
pub struct StepFailure {
    /// The step.
    pub step: Step,
    /// Error or rejection.
    pub kind: FailureKind,
    /// What went wrong, naming the file, commit or field at fault.
    pub why: String,
    /// Files that show it (logs, PGN, shard files, result files).
    pub evidence: Vec<PathBuf>,
}

fn evidence_text(evidence: &[PathBuf]) -> String {
    if evidence.is_empty() {
        String::new()
    } else {
        let paths: Vec<String> = evidence.iter().map(|p| p.display().to_string()).collect();
        format!(" (evidence: {})", paths.join(", "))
    }
}

impl StepFailure {
    /// An error at `step`: bad input or environment, exit 2.
    pub fn error(step: Step, why: impl fmt::Display) -> Self {
        Self {
            step,
            kind: FailureKind::Error,
            why: why.to_string(),
            evidence: Vec::new(),
        }
    }

    /// A rejection at `step`: the candidate failed a check, exit 1.
    pub fn rejected(step: Step, why: impl fmt::Display) -> Self {
        Self {
            kind: FailureKind::Rejected,
            ..Self::error(step, why)
        }
    }

    /// Adds a file that shows the failure.
    pub fn evidence(mut self, path: impl Into<PathBuf>) -> Self {
        self.evidence.push(path.into());
        self
    }
}

/// What happened in one step, for the `--json` object and `result.json`.
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    /// The step.
    pub step: Step,
    /// When it started (RFC 3339 UTC).
    pub started_at: String,
    /// Seconds it took.
    pub seconds: f64,
    /// `ok`, `skipped`, `failed`.
    pub status: &'static str,
    /// One line of what it found.
    pub detail: String,
}

/// Prints each step as it runs (to stderr: stdout is reserved for `--json`) and records it.
#[derive(Debug, Default)]
pub struct StepReporter {
    records: Vec<StepRecord>,
    current: Option<(Step, Instant, String)>,
}

impl StepReporter {
    /// A reporter with no steps yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Announces that `step` starts.
    pub fn begin(&mut self, step: Step, what: &str) {
        errln!("[{}/7] {step}: {what}", step.number());
        self.current = Some((step, Instant::now(), timestamp(SystemTime::now()).0));
    }

    /// Closes the current step as done with a one-line result.
    pub fn done(&mut self, detail: impl Into<String>) {
        self.close("ok", detail.into());
    }

    /// Records a step that does not apply to this run (e.g. the proof on the Standard path).
    pub fn skip(&mut self, step: Step, why: &str) {
        errln!("[{}/7] {step}: skipped — {why}", step.number());
        self.records.push(StepRecord {
            step,
            started_at: timestamp(SystemTime::now()).0,
            seconds: 0.0,
            status: "skipped",
            detail: why.to_owned(),
        });
    }

    /// Closes the current step as failed.
    pub fn fail(&mut self, failure: &StepFailure) {
        self.close("failed", failure.to_string());
    }

    fn close(&mut self, status: &'static str, detail: String) {
        if let Some((step, start, started_at)) = self.current.take() {
            let seconds = round_seconds(start.elapsed());
            errln!("      {status} ({seconds} s): {detail}");
            self.records.push(StepRecord {
                step,
                started_at,
                seconds,
                status,
                detail,
            });
        }
    }

    /// A progress bar over `len` units (pairs of a stage), drawn only on a terminal.
    pub fn bar(&self, len: u64, unit: &str) -> ProgressBar {
        let bar = ProgressBar::new(len);
        let template = format!("      [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} ({{elapsed}})");
        bar.set_style(
            ProgressStyle::with_template(&template)
                .expect("a fixed, valid template")
                .progress_chars("=> "),
        );
        bar
    }

    /// A spinner for work without a known length (builds), drawn only on a terminal.
    pub fn spinner(&self, message: &str) -> ProgressBar {
        let spinner = ProgressBar::new_spinner();
        spinner.set_style(
            ProgressStyle::with_template("      {spinner} {msg} ({elapsed})")
                .expect("a fixed, valid template"),
        );
        spinner.set_message(message.to_owned());
        spinner.enable_steady_tick(Duration::from_millis(200));
        spinner
    }

    /// Every step recorded so far.
    pub fn records(&self) -> &[StepRecord] {
        &self.records
    }
}

fn round_seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_step_why_and_evidence() {
        let failure = StepFailure::rejected(Step::Gate, "no POPCNT in coherent_evaluate_popcnt")
            .evidence("out/gate.json");
        assert_eq!(
            failure.to_string(),
            "step 4 (gate) failed: no POPCNT in coherent_evaluate_popcnt (evidence: out/gate.json)"
        );
        assert_eq!(
            StepFailure::error(Step::Stage(2), "engine crashed").to_string(),
            "step 6 (stage 2) failed: engine crashed"
        );
    }

    #[test]
    fn reporter_records_steps_in_order() {
        let mut reporter = StepReporter::new();
        reporter.begin(Step::Resolve, "commits");
        reporter.done("candidate abc");
        reporter.skip(Step::Proof, "standard path");
        reporter.begin(Step::Verdict, "verdict");
        reporter.fail(&StepFailure::error(Step::Verdict, "x"));
        let statuses: Vec<_> = reporter
            .records()
            .iter()
            .map(|r| (r.step, r.status))
            .collect();
        assert_eq!(
            statuses,
            [
                (Step::Resolve, "ok"),
                (Step::Proof, "skipped"),
                (Step::Verdict, "failed")
            ]
        );
    }
}
