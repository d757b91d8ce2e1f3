//! `oracle check-engine`: the UCI conformance check of one engine (parse, call, render).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use super::output::outln;
use super::{EXIT_ERROR, report_error};
use oracle::play::compliance::{StepResult, check_engine};
use oracle::play::uci::EngineConfig;

/// Arguments of `oracle check-engine`.
#[derive(Debug, Args)]
pub struct CheckEngineArgs {
    /// The engine's executable.
    command: PathBuf,
    /// An argument passed to the engine (repeatable).
    #[arg(long = "arg", value_name = "ARG")]
    args: Vec<String>,
    /// A UCI option to set, `NAME=VALUE` (repeatable; `Threads` is sent first).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Seconds allowed for start-up, each `readyok` and each node or depth search.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    timeout: f64,
    /// Print one JSON object (`engine`, `steps`, `passed`) instead of a line per step.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle check-engine`: 0 when every step passed, 2 naming the first that failed.
pub fn run(args: CheckEngineArgs) -> anyhow::Result<ExitCode> {
    if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 3600.0) {
        bail!(
            "--timeout: must be a number of seconds in (0, 3600], got {}",
            args.timeout
        );
    }
    let mut config = EngineConfig::new(&args.command);
    config.args = args.args;
    for option in &args.options {
        let (name, value) = option
            .split_once('=')
            .filter(|(name, _)| !name.trim().is_empty())
            .with_context(|| format!("--option: expected NAME=VALUE, got `{option}`"))?;
        config.set_option(name.trim(), value);
    }
    let json = args.json;
    let print_step = |step: &StepResult| {
        if !json {
            let mark = if step.passed { "pass" } else { "FAIL" };
            outln!("{mark}  {}: {}", step.step, step.detail);
        }
    };
    let report = check_engine(&config, Duration::from_secs_f64(args.timeout), print_step);
    let failure = report
        .failure()
        .map(|step| format!("step `{}` failed: {}", step.step, step.detail));
    if json {
        let mut value = serde_json::to_value(&report)?;
        value["passed"] = serde_json::Value::Bool(failure.is_none());
        if let Some(message) = &failure {
            value["error"] = serde_json::Value::String(message.clone());
            value["exit_code"] = EXIT_ERROR.into();
        }
        outln!("{value}");
        return Ok(ExitCode::from(if failure.is_some() {
            EXIT_ERROR
        } else {
            0
        }));
    }
    match failure {
        Some(message) => Ok(report_error(
            &format!("{}: {message}", args.command.display()),
            false,
        )),
        None => {
            let name = report.engine.as_deref().unwrap_or("the engine");
            outln!("{name} passed all {} steps", report.steps.len());
            Ok(ExitCode::SUCCESS)
        }
    }
}
