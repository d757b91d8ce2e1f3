//! `oracle tune`: SPSA runs over the engine's tunables and the end-rule model (docs/spsa.md).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde::Serialize;
use sha2::{Digest, Sha256};

use oracle::integrity::{self, write_atomically};
use oracle::play::book::BookFormat;
use oracle::play::clock::{ClockRules, TimeControl};
use oracle::play::game::Adjudication;
use oracle::play::uci::EngineConfig;
use oracle::tune::duel::MatchDuels;
use oracle::tune::model::{self, Row, RuleSummary};
use oracle::tune::pair::{self, ParamRow};
use oracle::tune::rules::EndRule;
use oracle::tune::run::{self, RunSpec, RunState};
use oracle::tune::schedule::Param;
use oracle::tune::{params, patch, plot};

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

/// Deadline for `ENGINE tunables` to print its listing.
const TUNABLES_DEADLINE: Duration = Duration::from_secs(10);

/// The parameters: `--params FILE`, or the engine's own `tunables` listing.
fn load_params(m: &MatchArgs) -> anyhow::Result<Vec<Param>> {
    match &m.params {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--params {}", path.display()))?;
            Ok(params::parse(&text, &path.display().to_string())?)
        }
        None => {
            let text = engine_tunables(&m.engine)?;
            Ok(params::parse(
                &text,
                &format!("{} tunables", m.engine.display()),
            )?)
        }
    }
}

/// Runs `ENGINE tunables` with a scrubbed environment and a deadline.
fn engine_tunables(engine: &Path) -> anyhow::Result<String> {
    let mut child = std::process::Command::new(engine)
        .arg("tunables")
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("--engine {}: cannot start", engine.display()))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > TUNABLES_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "--engine {}: `tunables` did not finish within {} s",
                engine.display(),
                TUNABLES_DEADLINE.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let text = reader.join().expect("reader thread does not panic")?;
    if !status.success() {
        bail!(
            "--engine {}: `tunables` exited with {status}",
            engine.display()
        );
    }
    Ok(text)
}

/// The duel player and the context string that binds a state file to it.
fn duels(m: &MatchArgs, opening_seed: u64) -> anyhow::Result<(MatchDuels, String)> {
    if m.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let tc = match (m.tc, m.nodes) {
        (Some(tc), _) => tc,
        (None, Some(0)) => bail!("--nodes must be at least 1"),
        (None, Some(n)) => TimeControl::Nodes(n),
        (None, None) => unreachable!("clap requires --tc or --nodes"),
    };
    let engine = EngineConfig::new(&m.engine)
        .with_option("Threads", "1")
        .with_option("Hash", &m.hash.to_string());
    eprintln!("isolation: engines {}", engine.isolation.describe());
    let book_format = BookFormat::from_path(&m.book);
    let context = format!(
        "engine sha256 {}; {}; hash {}; book sha256 {}; plies {}; Fishtest adjudication",
        integrity::sha256_file(&m.engine).context("--engine")?,
        tc.describe(),
        m.hash,
        integrity::sha256_file(&m.book).context("--book")?,
        m.plies
    );
    let player = MatchDuels {
        engine,
        clock: ClockRules {
            tc,
            margin: Duration::from_millis(100),
            slack: Duration::from_millis(200),
            move_timeout: Duration::from_secs(30),
        },
        adjudication: Adjudication::FISHTEST,
        ready_timeout: Duration::from_secs(10),
        book: m.book.clone(),
        book_format,
        plies: m.plies,
        opening_seed,
        concurrency: m.concurrency,
    };
    Ok((player, context))
}

/// Plays (or resumes) one run; `label` prefixes the progress lines.
fn play_run(
    m: &MatchArgs,
    params: &[Param],
    seed: u64,
    state_path: Option<&Path>,
    label: &str,
) -> anyhow::Result<RunState> {
    let (mut player, context) = duels(m, seed)?;
    let spec = RunSpec {
        games: m.games,
        pairs_per_duel: m.pairs_per_duel,
        bundle: m.bundle,
        seed,
        context,
    };
    let mut state = match state_path {
        Some(path) if path.exists() => {
            let state = run::load(path)?;
            state
                .matches(&spec, params)
                .map_err(|why| anyhow::anyhow!("state file {}: {why}", path.display()))?;
            eprintln!(
                "{label}: resuming {} at duel {}/{}",
                path.display(),
                state.duels.len(),
                state.total_duels()
            );
            state
        }
        _ => RunState::new(spec, params.to_vec())?,
    };
    run::drive(&mut state, &mut player, &mut |s| {
        if let Some(path) = state_path {
            run::save(path, s)?;
        }
        report_progress(label, s);
        Ok(())
    })?;
    Ok(state)
}

/// One progress block per bundle: duels, counter, and θ, c_k, R_k per parameter.
fn report_progress(label: &str, s: &RunState) {
    let schedule = s.schedule().expect("a running state has a valid schedule");
    let k = s.k.min(schedule.pairs() - 1);
    eprintln!(
        "{label}: duels {}/{}  pairs {}/{}",
        s.duels.len(),
        s.total_duels(),
        s.k,
        schedule.pairs()
    );
    for (i, p) in s.params.iter().enumerate() {
        let step = schedule.step(i, k);
        eprintln!(
            "  {:<24} θ {:>10.3}  c_k {:>8.3}  R_k {:.5}",
            p.name, s.theta[i], step.c_k, step.r_k
        );
    }
}

#[derive(Serialize)]
struct RunParamReport<'a> {
    name: &'a str,
    start: f64,
    theta: f64,
    t: f64,
}

#[derive(Serialize)]
struct RunReport<'a> {
    seed: u64,
    duels: usize,
    pairs: u64,
    params: Vec<RunParamReport<'a>>,
}

fn run_report(s: &RunState) -> RunReport<'_> {
    let signals = s.signals();
    RunReport {
        seed: s.spec.seed,
        duels: s.duels.len(),
        pairs: s.k,
        params: s
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| RunParamReport {
                name: &p.name,
                start: p.start,
                theta: s.theta[i],
                t: signals[i].t(),
            })
            .collect(),
    }
}

fn run_run(a: &RunArgs) -> anyhow::Result<ExitCode> {
    let params = load_params(&a.m)?;
    let state = play_run(&a.m, &params, a.m.seed, a.state.as_deref(), "run")?;
    let report = run_report(&state);
    if a.m.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "SPSA run: seed {}, {} duels, {} pairs",
            report.seed, report.duels, report.pairs
        );
        println!("{:<24} {:>10} {:>10} {:>7}", "parameter", "start", "θ", "T");
        for p in &report.params {
            println!(
                "{:<24} {:>10.3} {:>10.3} {:>7.2}",
                p.name, p.start, p.theta, p.t
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The seed of run `r` (1 or 2) of a pair: independent streams from one `--seed`.
fn run_seed(seed: u64, r: u64) -> u64 {
    let mut h = Sha256::new();
    h.update(b"coherent tune pair v1");
    h.update(seed.to_le_bytes());
    h.update(r.to_le_bytes());
    let digest = h.finalize();
    u64::from_le_bytes(digest[..8].try_into().expect("8 bytes"))
}

#[derive(Serialize)]
struct PairReport<'a> {
    rule: EndRule,
    rule_source: &'static str,
    seeds: [u64; 2],
    duels: [usize; 2],
    params: &'a [ParamRow],
    patch: &'a str,
}

fn run_pair(a: &PairArgs) -> anyhow::Result<ExitCode> {
    let params = load_params(&a.m)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    let seeds = [run_seed(a.m.seed, 1), run_seed(a.m.seed, 2)];
    let run1 = play_run(
        &a.m,
        &params,
        seeds[0],
        Some(&a.out.join("run-1.json")),
        "run 1",
    )?;
    let run2 = play_run(
        &a.m,
        &params,
        seeds[1],
        Some(&a.out.join("run-2.json")),
        "run 2",
    )?;
    let rows = pair::table(&run1, &run2)?;
    let patch = pair::patch(&run1, &rows, a.rule);
    let report = PairReport {
        rule: a.rule,
        rule_source: "--rule (the constitution names no SPSA end rule yet)",
        seeds,
        duels: [run1.duels.len(), run2.duels.len()],
        params: &rows,
        patch: &patch,
    };
    let table = pair_table(&rows, a.rule);
    write_atomically(
        &a.out.join("table.json"),
        serde_json::to_string_pretty(&report)?.as_bytes(),
    )?;
    write_atomically(&a.out.join("table.md"), table.as_bytes())?;
    write_atomically(
        &a.out.join(format!("tunables-{}.txt", a.rule.key())),
        patch.as_bytes(),
    )?;
    write_atomically(
        &a.out.join("theta.svg"),
        plot::theta_svg(&run1, &run2).as_bytes(),
    )?;
    if let Some(table) = &a.table {
        let source = std::fs::read_to_string(table)
            .with_context(|| format!("--table {}", table.display()))?;
        let defaults: Vec<(&str, String)> = run1
            .params
            .iter()
            .zip(&rows)
            .map(|(p, row)| {
                (
                    p.name.as_str(),
                    params::format_value(p, row.adopted(a.rule)),
                )
            })
            .collect();
        let diff = patch::table_diff(&source, &table.display().to_string(), &defaults)
            .with_context(|| format!("--table {}", table.display()))?;
        let name = format!("tunables-{}.patch", a.rule.key());
        write_atomically(&a.out.join(name), diff.as_bytes())?;
    }
    if a.m.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{table}");
        println!(
            "\npatch ({}): {}",
            a.rule.key(),
            a.out
                .join(format!("tunables-{}.txt", a.rule.key()))
                .display()
        );
        print!("{patch}");
    }
    Ok(ExitCode::SUCCESS)
}

/// The per-parameter table of a pair as Markdown.
fn pair_table(rows: &[ParamRow], rule: EndRule) -> String {
    let mut t = String::from(
        "| parameter | start | run 1 | run 2 | T | filter | seed mean | seed mean \\|T\\| ≥ 1 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        t += &format!(
            "| {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |\n",
            r.name, r.start, r.run1, r.run2, r.t, r.filter, r.seed_mean, r.seed_mean_t1
        );
    }
    t += &format!("\nadopted by rule: {}\n", rule.key());
    t
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
        "end-rule model: 30 parameters, 500 duels × 30 pairs, bundles of 15, r_end 0.002; \
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
