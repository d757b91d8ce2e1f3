//! `oracle tune`: SPSA runs over the engine's tunables and the seed-000 model.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand};
use serde::Serialize;

use oracle::tune::model::{self, Row, RuleSummary};

/// Arguments of `oracle tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    #[command(subcommand)]
    command: TuneCommand,
}

/// The tuner's subcommands.
#[derive(Debug, Subcommand)]
enum TuneCommand {
    /// Simulate seed 000's end-rule model (model-Elo, not playing strength).
    Model(ModelArgs),
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
    #[arg(long)]
    json: bool,
}

/// Runs `oracle tune …`.
pub fn run(args: TuneArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        TuneCommand::Model(a) => run_model(&a),
    }
}

#[derive(Serialize)]
struct ModelReport {
    seed: u64,
    reps: u64,
    seconds: f64,
    rows: Vec<Row>,
}

fn run_model(a: &ModelArgs) -> anyhow::Result<ExitCode> {
    if a.reps < 2 {
        anyhow::bail!("--reps must be at least 2 (a standard error needs two repetitions)");
    }
    if let Some(s) = a.s.iter().find(|s| !(s.is_finite() && **s >= 0.0)) {
        anyhow::bail!("--s: {s} is not a non-negative number");
    }
    if let Some(f) = a.f.iter().find(|f| !(0.0..=1.0).contains(*f)) {
        anyhow::bail!("--f: {f} is not a probability in [0, 1]");
    }
    let started = Instant::now();
    let mut rows = Vec::new();
    for &s in &a.s {
        for &f in &a.f {
            rows.push(model::simulate_row(&model::SEED_000, s, f, a.reps, a.seed));
        }
    }
    let report = ModelReport {
        seed: a.seed,
        reps: a.reps,
        seconds: started.elapsed().as_secs_f64(),
        rows,
    };
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print_model_table(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_model_table(r: &ModelReport) {
    println!(
        "seed-000 model: 30 parameters, 500 duels × 30 pairs, bundles of 15, r_end 0.002; \
         {} repetitions per row, seed {}",
        r.reps, r.seed
    );
    println!("gain in model-Elo ± standard error (share of repetitions ending with a loss)");
    println!(
        "{:>4} {:>4} {:>9}  {:>22}  {:>22}  {:>22}",
        "s", "f", "available", "filter", "seed mean", "seed mean |T|≥1"
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
        println!(
            "{:>4} {:>4} {:>9.2}  {:>22}  {:>22}  {:>22}",
            row.s,
            row.f,
            row.available,
            cell(&row.rules.filter),
            cell(&row.rules.seed_mean),
            cell(&row.rules.seed_mean_t1)
        );
    }
    println!("time {:.2} s", r.seconds);
}
