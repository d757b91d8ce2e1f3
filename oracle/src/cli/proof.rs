//! `oracle proof`: run a proof spec, or the seed-003 study protocol.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use oracle::proof::{GameOutcome, Study, StudyReport, run_study};
use oracle::tablebase::{Ending, Tablebase};

/// Arguments of `oracle proof`.
#[derive(Debug, Args)]
pub struct ProofArgs {
    #[command(subcommand)]
    command: ProofCommand,
    /// Table cache directory (default `~/.cache/coherent-oracle/tb`).
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
}

/// The `proof` subcommands.
#[derive(Debug, Subcommand)]
enum ProofCommand {
    /// Conversion study: random won positions, the engine attacks, the solver defends.
    Study(StudyArgs),
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
    #[arg(long)]
    json: bool,
}

/// Runs `oracle proof`.
pub fn run(args: ProofArgs) -> anyhow::Result<ExitCode> {
    let tb = Tablebase::new(args.cache_dir.or_else(Tablebase::default_cache_dir));
    match args.command {
        ProofCommand::Study(study) => run_study_command(study, &tb),
    }
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
        eprintln!(
            "engine {} position {:>4}: {:<14} {} plies",
            engine + 1,
            position + 1,
            format!("{:?}", game.ending).to_lowercase(),
            game.moves.len()
        );
    };
    let report = run_study(&study, tb, &progress)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        render_study(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// Human summary of a study.
fn render_study(report: &StudyReport) {
    println!(
        "{} study: {} positions (sha256 {}), seed {}, {} nodes per move, solver defends",
        report.ending,
        report.positions.len(),
        report.positions_sha256,
        report.seed,
        report.nodes
    );
    for (i, run) in report.engines.iter().enumerate() {
        println!(
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
        println!(
            "paired: both {}  only first {}  only second {}  neither {}",
            p.both, p.only_first, p.only_second, p.neither
        );
        println!(
            "exact two-sided sign test over {} discordant pairs: p = {:.3e}",
            p.only_first + p.only_second,
            p.sign_test_p
        );
    }
    if let Some(control) = &report.control {
        let same = control.iter().filter(|c| c.unchanged).count();
        println!("control: move and score unchanged in {same} of {} positions", control.len());
    }
}

