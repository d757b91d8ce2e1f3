//! `oracle book`: generate opening books from the engine and check any EPD/PGN book.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};

use oracle::book::{check, generate};
use oracle::integrity::sha256_hex;

use super::EXIT_REJECTED;
use super::output::{Summary, render};

/// Arguments of `oracle book`.
#[derive(Debug, Args)]
pub struct BookArgs {
    #[command(subcommand)]
    command: BookCommand,
}

/// The book tools.
#[derive(Debug, Subcommand)]
enum BookCommand {
    /// Random legal openings kept when a short engine search scores them near 0.
    Generate(GenerateArgs),
    /// Validate a book: legal, unique, side to move, counts (exit 1 when invalid).
    Check(CheckArgs),
}

/// Arguments of `oracle book generate`.
#[derive(Debug, Args)]
struct GenerateArgs {
    /// The engine that scores the candidates.
    #[arg(long)]
    engine: PathBuf,
    /// Positions to generate.
    #[arg(long)]
    count: usize,
    /// Random plies from the start position.
    #[arg(long)]
    plies: usize,
    /// Keep positions scored within ±CP centipawns (side to move).
    #[arg(long, value_name = "CP")]
    window: i32,
    /// Seed of the random openings.
    #[arg(long)]
    seed: u64,
    /// Nodes per scoring search.
    #[arg(long, default_value_t = 20_000)]
    nodes: u64,
    /// Engine processes scoring in parallel.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Hash size (MiB) of the scoring engines.
    #[arg(long, default_value_t = 16)]
    hash: u32,
    /// Output EPD file (written atomically).
    #[arg(long)]
    out: PathBuf,
    /// A book whose positions must not appear (book B is generated with `--exclude` book A).
    #[arg(long)]
    exclude: Option<PathBuf>,
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle book check`.
#[derive(Debug, Args)]
struct CheckArgs {
    /// The EPD or PGN book (`.pgn` is read as PGN, anything else as EPD).
    file: PathBuf,
    /// Half-moves of each PGN game that form the opening (default: the whole game).
    #[arg(long)]
    plies: Option<usize>,
    /// Print one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle book …`.
pub fn run(args: BookArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        BookCommand::Generate(a) => run_generate(&a),
        BookCommand::Check(a) => run_check(&a),
    }
}

fn run_generate(a: &GenerateArgs) -> anyhow::Result<ExitCode> {
    if a.count == 0 || a.concurrency == 0 || a.nodes == 0 {
        anyhow::bail!("--count, --concurrency and --nodes must be at least 1");
    }
    if a.window < 0 {
        anyhow::bail!("--window must not be negative, got {}", a.window);
    }
    let exclude = match &a.exclude {
        Some(path) => excluded_positions(path)?,
        None => HashSet::new(),
    };
    let options = vec![
        ("Threads".to_string(), "1".to_string()),
        ("Hash".to_string(), a.hash.to_string()),
    ];
    let mut scorers = (0..a.concurrency)
        .map(|_| generate::UciScorer::start(&a.engine, &options, a.nodes))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("--engine {}", a.engine.display()))?;
    let spec = generate::Spec {
        count: a.count,
        plies: a.plies,
        window_cp: a.window,
        seed: a.seed,
    };
    let bar = indicatif::ProgressBar::new(a.count as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} positions {msg} [{elapsed}]")
            .expect("static template"),
    );
    let mut candidates = 0;
    let positions = generate::generate(&spec, &exclude, &mut scorers, |accepted, tried| {
        bar.set_position(accepted as u64);
        bar.set_message(format!("({tried} candidates)"));
        candidates = tried;
    })?;
    bar.finish_and_clear();
    let mut text = positions.join("\n");
    text.push('\n');
    oracle::integrity::write_atomically(&a.out, text.as_bytes())?;
    let generated = generate::Generated {
        positions: positions.len(),
        candidates,
        sha256: sha256_hex(text.as_bytes()),
        out: a.out.display().to_string(),
    };
    render(&generated, a.json)?;
    Ok(ExitCode::SUCCESS)
}

/// Every position of the book at `path`, as the keys generation compares against.
fn excluded_positions(path: &Path) -> anyhow::Result<HashSet<String>> {
    check::positions(path, usize::MAX).with_context(|| format!("--exclude {}", path.display()))
}

fn run_check(a: &CheckArgs) -> anyhow::Result<ExitCode> {
    let report = check::check(&a.file, a.plies.unwrap_or(usize::MAX))?;
    render(&report, a.json)?;
    Ok(if report.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

impl Summary for check::Report {}

impl Summary for generate::Generated {
    const SORTED_KEYS: bool = true;
}
