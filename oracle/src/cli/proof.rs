//! `oracle proof`: run a proof spec, or the KBNK study protocol (docs/randfall.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use super::EXIT_REJECTED;
use super::output::outln;
use oracle::builder::sandbox::engine::EngineIsolation;
use oracle::errln;
use oracle::proof::{
    GameOutcome, ProofRun, Spec, Study, StudyReport, run_spec, run_study, verify_proof,
};
use oracle::tablebase::{Ending, Tablebase};

/// Arguments of `oracle proof`.
#[derive(Debug, Args)]
pub struct ProofArgs {
    #[command(subcommand)]
    command: ProofCommand,
    /// Table cache directory (default `~/.cache/coherent-oracle/tb`).
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
    /// Run the engines as plain processes, without the sandbox: for scripted engines that
    /// must reach files outside it (the isolation used is printed; `verify` has no such switch).
    #[arg(long, global = true)]
    no_sandbox: bool,
}

/// The `proof` subcommands.
#[derive(Debug, Subcommand)]
enum ProofCommand {
    /// Run a proof spec on an engine (with --baseline: the fail -> pass check of `verify`).
    Run(RunArgs),
    /// Conversion study: random won positions, the engine attacks, the solver defends.
    Study(StudyArgs),
}

/// Arguments of `oracle proof run`.
#[derive(Debug, Args)]
struct RunArgs {
    /// The proof spec (YAML).
    spec: PathBuf,
    /// The engine binary (the candidate when --baseline is given).
    #[arg(long)]
    engine: PathBuf,
    /// The baseline binary: the predecessor for `conversion`/`bestmove` (which must fail on it),
    /// the reference for `unchanged`.
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle proof study`.
#[derive(Debug, Args)]
struct StudyArgs {
    /// The ending, e.g. KBNK.
    #[arg(long)]
    ending: String,
    /// Number of distinct random won positions.
    #[arg(long)]
    positions: usize,
    /// Nodes per engine move.
    #[arg(long)]
    nodes: u64,
    /// Seed of the position draw.
    #[arg(long)]
    seed: u64,
    /// The engine binary (the first engine of a paired study).
    #[arg(long)]
    engine: PathBuf,
    /// A second engine binary for the paired comparison.
    #[arg(long)]
    engine2: Option<PathBuf>,
    /// File of control positions (one FEN or EPD per line) compared between the two engines.
    #[arg(long)]
    control: Option<PathBuf>,
    /// Games played at once (one engine process each).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Print the full report as one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle proof`.
pub fn run(args: ProofArgs) -> anyhow::Result<ExitCode> {
    if args.no_sandbox {
        EngineIsolation::choose_none();
    }
    errln!(
        "isolation: engines {}",
        EngineIsolation::detect().describe()
    );
    let tb = Tablebase::new(args.cache_dir.or_else(Tablebase::default_cache_dir));
    match args.command {
        ProofCommand::Run(run) => run_spec_command(run, &tb),
        ProofCommand::Study(study) => run_study_command(study, &tb),
    }
}

/// `oracle proof run`: exit 0 when the spec passes (with a baseline: fail -> pass), else 1.
fn run_spec_command(args: RunArgs, tb: &Tablebase) -> anyhow::Result<ExitCode> {
    for e in std::iter::once(&args.engine).chain(&args.baseline) {
        anyhow::ensure!(e.is_file(), "engine binary {} does not exist", e.display());
    }
    let spec = Spec::read(&args.spec)?;
    let (accepted, json) = match (&spec, &args.baseline) {
        (Spec::Unchanged(_), None) => {
            anyhow::bail!("argument --baseline: an `unchanged` spec compares against a baseline")
        }
        (Spec::Unchanged(_), Some(_)) | (_, None) => {
            let run = run_spec(&spec, &args.engine, args.baseline.as_deref(), tb)?;
            if !args.json {
                render_run("engine", &run);
            }
            (run.passed, serde_json::to_value(&run)?)
        }
        (_, Some(baseline)) => {
            let verdict = verify_proof(&args.spec, baseline, &args.engine, tb)?;
            if !args.json {
                if let Some(before) = &verdict.predecessor {
                    render_run("baseline", before);
                }
                render_run("engine", &verdict.candidate);
                outln!(
                    "fail -> pass: {}",
                    if verdict.accepted {
                        "yes (accepted)"
                    } else {
                        "no (rejected)"
                    }
                );
            }
            (verdict.accepted, serde_json::to_value(&verdict)?)
        }
    };
    if args.json {
        outln!("{json}");
    }
    Ok(if accepted {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

/// Per-position lines of one run.
fn render_run(label: &str, run: &ProofRun) {
    outln!("{label} {} (sha256 {})", run.engine.display(), run.sha256);
    for line in run.detail.lines() {
        outln!("  {line}");
    }
    outln!("  {}", if run.passed { "passed" } else { "failed" });
}

/// `oracle proof study`.
fn run_study_command(args: StudyArgs, tb: &Tablebase) -> anyhow::Result<ExitCode> {
    let ending: Ending = args.ending.parse().context("argument --ending")?;
    let control = match &args.control {
        Some(path) => oracle::proof::read_positions(path)?,
        None => Vec::new(),
    };
    let engines: Vec<PathBuf> = std::iter::once(args.engine.clone())
        .chain(args.engine2.clone())
        .collect();
    for e in &engines {
        anyhow::ensure!(e.is_file(), "engine binary {} does not exist", e.display());
    }
    let study = Study {
        ending,
        positions: args.positions,
        nodes: args.nodes,
        seed: args.seed,
        engines,
        control,
        concurrency: args.concurrency,
    };
    let progress = |engine: usize, position: usize, game: &GameOutcome| {
        errln!(
            "engine {} position {:>4}: {:<14} {} plies",
            engine + 1,
            position + 1,
            format!("{:?}", game.ending).to_lowercase(),
            game.moves.len()
        );
    };
    let report = run_study(&study, tb, &progress)?;
    if args.json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        render_study(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Human summary of a study.
fn render_study(report: &StudyReport) {
    outln!(
        "{} study: {} positions (sha256 {}), seed {}, {} nodes per move, solver defends",
        report.ending,
        report.positions.len(),
        report.positions_sha256,
        report.seed,
        report.nodes
    );
    for (i, run) in report.engines.iter().enumerate() {
        outln!(
            "engine {} {} (sha256 {}): converted {} of {} ({:.1}%)",
            i + 1,
            run.engine.display(),
            run.sha256,
            run.converted,
            run.games.len(),
            100.0 * run.converted as f64 / run.games.len().max(1) as f64
        );
    }
    if let Some(p) = &report.paired {
        outln!(
            "paired: both {}  only first {}  only second {}  neither {}",
            p.both,
            p.only_first,
            p.only_second,
            p.neither
        );
        outln!(
            "exact two-sided sign test over {} discordant pairs: p = {:.3e}",
            p.only_first + p.only_second,
            p.sign_test_p
        );
    }
    if let Some(control) = &report.control {
        let same = control.iter().filter(|c| c.unchanged).count();
        outln!(
            "control: move and score unchanged in {same} of {} positions",
            control.len()
        );
    }
}
