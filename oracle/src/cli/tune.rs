//! `oracle tune`: SPSA runs over the engine's tunables and the end-rule model (docs/spsa.md).

use std::num::NonZeroU64;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::output::{out, outln};
use oracle::errln;
use oracle::play::clock::TimeControl;
use oracle::tune::duel::DuelSettings;
use oracle::tune::model::{self, ModelTable, RuleSummary};
use oracle::tune::params;
use oracle::tune::rules::EndRule;
use oracle::tune::run::RunState;
use oracle::tune::session::{self, RunEvent, RunSettings};

/// Arguments of `oracle tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    #[command(subcommand)]
    command: TuneCommand,
}

/// The tuner's subcommands.
#[derive(Debug, Subcommand)]
enum TuneCommand {
    /// One SPSA run in Fishtest's form through the match runner (checkpointed, resumable).
    Run(RunArgs),
    /// Two independent runs from the same start, then the three end rules and a patch.
    Pair(PairArgs),
    /// Simulate the end-rule model of docs/spsa.md (model-Elo, not playing strength).
    Model(ModelArgs),
}

/// How the duels of a run are played: shared by `tune run` and `tune pair`.
#[derive(Debug, Args)]
struct MatchArgs {
    /// The engine binary (it is both "+" and "−").
    #[arg(long)]
    engine: PathBuf,
    /// A tunables listing (`name, int, value, min, max, c_end, r_end`); default: `ENGINE tunables`.
    #[arg(long)]
    params: Option<PathBuf>,
    /// Games per run G (N = G/2 pairs).
    #[arg(long)]
    games: u64,
    /// Time control `[MOVES/]BASE+INC` in seconds.
    #[arg(long, required_unless_present = "nodes", conflicts_with = "nodes")]
    tc: Option<TimeControl>,
    /// Fixed nodes per move.
    #[arg(long)]
    nodes: Option<u64>,
    /// Opening book (EPD or PGN).
    #[arg(long)]
    book: PathBuf,
    /// Plies taken from PGN games.
    #[arg(long, default_value_t = 8)]
    plies: usize,
    /// Game pairs per duel.
    #[arg(long, default_value_t = 30)]
    pairs_per_duel: u64,
    /// Duels whose steps are applied together.
    #[arg(long, default_value_t = 15)]
    bundle: usize,
    /// Seed of flips, rounding and opening order.
    #[arg(long)]
    seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Hash size (MiB) of both engines.
    #[arg(long, default_value_t = 16)]
    hash: u32,
    /// Print one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle tune run`.
#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    m: MatchArgs,
    /// State file: written after every bundle, resumed from when it exists.
    #[arg(long)]
    state: Option<PathBuf>,
}

/// Arguments of `oracle tune pair`.
#[derive(Debug, Args)]
struct PairArgs {
    #[command(flatten)]
    m: MatchArgs,
    /// Directory for both runs' states (resumable), the table, the patch and the plot.
    #[arg(long)]
    out: PathBuf,
    /// The end rule whose values become the patch (the constitution does not name one yet).
    #[arg(long, value_enum, default_value = "seed-mean-t1")]
    rule: EndRule,
    /// The engine's tunables table (e.g. engine/src/tune.rs): also write a `git apply` diff of it.
    #[arg(long)]
    table: Option<PathBuf>,
}

impl MatchArgs {
    /// The run's settings; `--nodes 0` is refused here, clap requires `--tc` or `--nodes`.
    fn settings(&self) -> anyhow::Result<RunSettings> {
        let tc = match (self.tc, self.nodes) {
            (Some(tc), _) => tc,
            (None, Some(n)) => match NonZeroU64::new(n) {
                Some(n) => TimeControl::Nodes(n),
                None => bail!("--nodes must be at least 1"),
            },
            (None, None) => unreachable!("clap requires --tc or --nodes"),
        };
        Ok(RunSettings {
            duels: DuelSettings {
                engine: self.engine.clone(),
                tc,
                hash: self.hash,
                book: self.book.clone(),
                plies: self.plies,
                concurrency: self.concurrency,
            },
            games: self.games,
            pairs_per_duel: self.pairs_per_duel,
            bundle: self.bundle,
        })
    }
}

/// Progress lines on standard error: the isolation, a resume, and a block per bundle.
fn report_event(label: &str, event: RunEvent<'_>) {
    match event {
        RunEvent::Ready(duels) => {
            errln!("isolation: engines {}", duels.engine.isolation.describe());
        }
        RunEvent::Resumed(path, state) => errln!(
            "{label}: resuming {} at duel {}/{}",
            path.display(),
            state.duels.len(),
            state.total_duels()
        ),
        RunEvent::Bundle(state) => report_progress(label, state),
    }
}

/// One progress block per bundle: duels, counter, and θ, c_k, R_k per parameter.
fn report_progress(label: &str, s: &RunState) {
    let schedule = s.schedule().expect("a running state has a valid schedule");
    let k = s.k.min(schedule.pairs() - 1);
    errln!(
        "{label}: duels {}/{}  pairs {}/{}",
        s.duels.len(),
        s.total_duels(),
        s.k,
        schedule.pairs()
    );
    for (i, p) in s.params.iter().enumerate() {
        let step = schedule.step(i, k);
        errln!(
            "  {:<24} θ {:>10.3}  c_k {:>8.3}  R_k {:.5}",
            p.name,
            s.theta[i],
            step.c_k,
            step.r_k
        );
    }
}

fn run_run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let settings = a.m.settings()?;
    let params = params::load(a.m.params.as_deref(), &a.m.engine)?;
    let state = session::play_run(
        &settings,
        &params,
        a.m.seed,
        a.state.as_deref(),
        &mut |event| report_event("run", event),
    )?;
    let summary = state.summary();
    if a.m.json {
        outln!("{}", serde_json::to_string(&summary)?);
    } else {
        outln!(
            "SPSA run: seed {}, {} duels, {} pairs",
            summary.seed,
            summary.duels,
            summary.pairs
        );
        outln!("{:<24} {:>10} {:>10} {:>7}", "parameter", "start", "θ", "T");
        for p in &summary.params {
            outln!(
                "{:<24} {:>10.3} {:>10.3} {:>7.2}",
                p.name,
                p.start,
                p.theta,
                p.t
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_pair(a: &PairArgs) -> anyhow::Result<ExitCode> {
    let settings = a.m.settings()?;
    let params = params::load(a.m.params.as_deref(), &a.m.engine)?;
    let (report, files) = session::play_pair(
        &settings,
        &params,
        a.m.seed,
        &a.out,
        a.rule,
        a.table.as_deref(),
        &mut |run, event| report_event(&format!("run {run}"), event),
    )?;
    if a.m.json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        out!("{}", report.markdown());
        outln!("\npatch ({}): {}", a.rule.key(), files.listing.display());
        out!("{}", report.patch);
    }
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `oracle tune model`.
#[derive(Debug, Args)]
struct ModelArgs {
    /// Start spreads s (standard deviation of the start error, in c_end).
    #[arg(long, value_delimiter = ',', default_values_t = [0.5, 1.0])]
    s: Vec<f64>,
    /// Shares f of parameters that start at their optimum.
    #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.5, 0.9])]
    f: Vec<f64>,
    /// Repetitions per row.
    #[arg(long, default_value_t = 300)]
    reps: u64,
    /// Seed of the random streams.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of the table.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle tune …`.
pub fn run(args: TuneArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        TuneCommand::Run(a) => run_run(&a),
        TuneCommand::Pair(a) => run_pair(&a),
        TuneCommand::Model(a) => run_model(&a),
    }
}

fn run_model(a: &ModelArgs) -> anyhow::Result<ExitCode> {
    let table = model::simulate_table(&a.s, &a.f, a.reps, a.seed)?;
    if a.json {
        outln!("{}", serde_json::to_string(&table)?);
    } else {
        print_model_table(&table);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_model_table(r: &ModelTable) {
    outln!(
        "end-rule model: 30 parameters, 500 duels × 30 pairs, bundles of 15, r_end 0.002; \
         {} repetitions per row, seed {}",
        r.reps,
        r.seed
    );
    outln!("gain in model-Elo ± standard error (share of repetitions ending with a loss)");
    outln!(
        "{:>4} {:>4} {:>9}  {:>22}  {:>22}  {:>22}",
        "s",
        "f",
        "available",
        "filter",
        "seed mean",
        "seed mean |T|≥1"
    );
    let cell = |x: &RuleSummary| {
        format!(
            "{:6.2} ± {:4.2} ({:3.0} %)",
            x.gain,
            x.gain_se,
            100.0 * x.loss_fraction
        )
    };
    for row in &r.rows {
        outln!(
            "{:>4} {:>4} {:>9.2}  {:>22}  {:>22}  {:>22}",
            row.s,
            row.f,
            row.available,
            cell(&row.rules.filter),
            cell(&row.rules.seed_mean),
            cell(&row.rules.seed_mean_t1)
        );
    }
    outln!("time {:.2} s", r.seconds);
}
