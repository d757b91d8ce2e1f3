//! `oracle match` (the match runner) and `oracle merge` (combine shard results).
//!
//! Exit status: 0 when the match ran (and, with `--sprt`, did not accept H0), 1 when the SPRT
//! accepted H0, 2 on bad input or a runner failure (the pair in progress is not counted).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use clap::{ArgGroup, Args};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use oracle::integrity::write_atomically;
use oracle::play::book::BookFormat;
use oracle::play::clock::{ClockRules, TimeControl};
use oracle::play::game::{Adjudication, DrawRule, ResignRule};
use oracle::play::runner::{
    Fingerprint, LiveSprt, MatchConfig, MatchProgress, PairOutcome, Shard, StopRule, Tally,
    run_match,
};
use oracle::play::shard::{ShardResult, merge, read_shards};
use oracle::play::uci::EngineConfig;
use oracle::stats::{
    Model, PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, SprtStatus,
    fixed_games_elo, normalized_elo, sprt_status,
};

/// Arguments of `oracle match`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("limit").required(true).args(["tc", "nodes", "depth", "movetime"])))]
pub struct MatchArgs {
    /// An engine: `cmd=PATH[,name=N][,arg=A…][,option.X=V…]`; give exactly two (first = candidate).
    #[arg(long = "engine", required = true, num_args = 1, value_name = "SPEC")]
    engines: Vec<String>,
    /// Settings for both engines: `option.X=V[,option.Y=W…]` (engine-specific values win).
    #[arg(long = "each", value_name = "SPEC")]
    each: Vec<String>,
    /// Clock: `BASE+INC` or `MOVES/BASE+INC` in seconds (e.g. 8+0.08).
    #[arg(long)]
    tc: Option<TimeControl>,
    /// Fixed nodes per move (`go nodes N`).
    #[arg(long)]
    nodes: Option<u64>,
    /// Fixed depth per move (`go depth D`).
    #[arg(long)]
    depth: Option<u32>,
    /// Fixed time per move in milliseconds (`go movetime MS`).
    #[arg(long, value_name = "MS")]
    movetime: Option<u64>,
    /// Opening book (EPD or PGN).
    #[arg(long)]
    book: PathBuf,
    /// Book format (default: from the file extension, `.pgn` or EPD).
    #[arg(long, value_enum)]
    book_format: Option<BookFormat>,
    /// Half-moves taken from each PGN book game.
    #[arg(long, default_value_t = 8)]
    plies: usize,
    /// Number of game pairs in the whole match (every opening is played twice, colours swapped).
    #[arg(long, default_value_t = 100)]
    pairs: u64,
    /// Games at once (default: the physical cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Allow more concurrent timed games than the machine has cores.
    #[arg(long)]
    force_concurrency: bool,
    /// Seed of the opening order (ChaCha8).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Start this many openings into the seeded order.
    #[arg(long, default_value_t = 0)]
    opening_offset: usize,
    /// Live SPRT: `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=normalized|logistic]`.
    #[arg(long, value_name = "SPEC")]
    sprt: Option<String>,
    /// Write the games to this PGN file.
    #[arg(long, value_name = "FILE")]
    pgn_out: Option<PathBuf>,
    /// Resumable state file (rewritten atomically after every pair).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Play shard K of N (pairs with index ≡ K−1 mod N).
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Where the shard result goes (default `shard-K-of-N.json`).
    #[arg(long, value_name = "FILE")]
    shard_out: Option<PathBuf>,
    /// An overrun up to this many milliseconds is forgiven (clamped to zero).
    #[arg(long, default_value_t = 100, value_name = "MS")]
    time_margin: u64,
    /// Read deadline of node and depth searches in seconds.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    move_timeout: f64,
    /// Deadline for an engine's start-up (`uciok` and the first `readyok`) in seconds.
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    start_timeout: f64,
    /// Deadline for `readyok` before each game in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    ready_timeout: f64,
    /// Fishtest's adjudication (draw: move 34, 8 moves, 20 cp; resign: 3 moves, 400 cp).
    #[arg(long)]
    adjudicate_fishtest: bool,
    /// Draw adjudication `movenumber=M,movecount=K,score=S`.
    #[arg(long, value_name = "SPEC")]
    draw: Option<String>,
    /// Resign adjudication `movecount=K,score=S`.
    #[arg(long, value_name = "SPEC")]
    resign: Option<String>,
    /// Adjudicate a draw after this many full moves.
    #[arg(long, value_name = "N")]
    maxmoves: Option<u32>,
    /// PGN `Event` tag.
    #[arg(long, default_value = "oracle match")]
    event: String,
    /// Print one JSON object instead of the human summary.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard result files written by `oracle match --shard`.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// SPRT applied at round boundaries: `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=…]`.
    #[arg(long, value_name = "SPEC")]
    sprt: Option<String>,
    /// The match the shards must belong to: a JSON fingerprint (the `fingerprint` object of a
    /// shard file the merger played or trusts); a shard of any other match is refused.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Print one JSON object instead of the human summary.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle match`.
pub fn run_match_command(args: MatchArgs) -> anyhow::Result<ExitCode> {
    let config = match_config(&args)?;
    let sprt_params = args
        .sprt
        .as_deref()
        .map(parse_sprt)
        .transpose()
        .context("--sprt")?;
    if sprt_params.is_some() && args.shard.is_some() {
        bail!(
            "--sprt cannot be combined with --shard: shards play fixed slices; apply the SPRT with `oracle merge --sprt`"
        );
    }
    let mut live = sprt_params
        .map(LiveSprt::new)
        .transpose()
        .context("--sprt")?;
    let bar = progress_bar(args.json);
    let sprt_for_bar = sprt_params;
    let mut observer = |p: &MatchProgress| {
        bar.set_length(p.games_total);
        bar.set_position(p.games_played);
        bar.set_message(status_line(&p.tally, sprt_for_bar.as_ref()));
    };
    let report = run_match(
        config.clone(),
        live.as_mut().map(|l| l as &mut dyn StopRule),
        &mut observer,
    );
    bar.finish_and_clear();
    let report = report?;
    if let Some(error) = live.as_ref().and_then(LiveSprt::error) {
        bail!("the SPRT could not be evaluated: {error}");
    }
    let sequential = live.as_ref().map(LiveSprt::sequential);
    let status = sprt_json_status(&report.tally, sprt_params.as_ref(), sequential)?;
    let shard_file = match args.shard {
        Some(shard) => {
            let path = args.shard_out.clone().unwrap_or_else(|| {
                PathBuf::from(format!("shard-{}-of-{}.json", shard.index, shard.count))
            });
            let bytes = serde_json::to_vec_pretty(&ShardResult::of(&report))
                .expect("shard result serializes");
            write_atomically(&path, &bytes)?;
            Some(path)
        }
        None => None,
    };
    let concurrency = config.concurrency as f64;
    let mut overheads = report.overhead_us.clone();
    let (p50, p95) = (
        percentile_ms(&mut overheads, 0.50),
        percentile_ms(&mut overheads, 0.95),
    );
    let games_counted = 2 * report.tally.pairs;
    let wall = report.wall.as_secs_f64();
    let cpu = report.engine_cpu.as_secs_f64();
    if args.json {
        let mut object = summary_json(&report.tally, report.games_played, status.as_ref());
        let extra = json!({
            "pgn": config.pgn_out,
            "state": config.state,
            "stopped_early": report.stopped_early,
            "engines": [config.engines[0].name, config.engines[1].name],
            "tc": config.clock.tc.describe(),
            "isolation": config.engines[0].isolation.describe(),
            "book": config.book_path,
            "seed": config.seed,
            "concurrency": config.concurrency,
            "shard": format!("{}/{}", config.shard.index, config.shard.count),
            "shard_result": shard_file,
            "pgn_sha256": report.pgn_sha256,
            "wall_seconds": wall,
            "engine_cpu_seconds": cpu,
            "runner_cpu_seconds": report.runner_cpu.as_secs_f64(),
            "engine_cpu_share": if wall > 0.0 { cpu / (wall * concurrency) } else { 0.0 },
            "games_per_minute": if wall > 0.0 { (report.games_played as f64) * 60.0 / wall } else { 0.0 },
            "move_overhead_ms": { "moves": overheads.len(), "p50": p50, "p95": p95 },
            "time_forfeits_per_1000_games": if games_counted > 0 {
                report.tally.terminations.time_forfeit as f64 * 1000.0 / games_counted as f64
            } else { 0.0 },
        });
        object
            .as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        println!("{object}");
    } else {
        let names = [
            config.engines[0].name.as_str(),
            config.engines[1].name.as_str(),
        ];
        let title = format!(
            "{} vs {} ({}, {})",
            names[0],
            names[1],
            config.clock.tc.describe(),
            config.book_path.display()
        );
        print!(
            "{}",
            summary_block(
                &title,
                &report.tally,
                &report.pairs,
                report.games_played,
                status.as_ref(),
                names
            )
        );
        println!(
            "Wall: {wall:.1} s, engine CPU: {cpu:.1} s ({:.1}% of {} × wall), runner CPU: {:.1} s, runner overhead per move: p50 {p50:.3} ms, p95 {p95:.3} ms",
            if wall > 0.0 {
                100.0 * cpu / (wall * concurrency)
            } else {
                0.0
            },
            config.concurrency,
            report.runner_cpu.as_secs_f64()
        );
        println!("Isolation: {}", config.engines[0].isolation.describe());
        if let Some(path) = &config.pgn_out {
            println!("PGN: {}", path.display());
        }
        if let Some(path) = &shard_file {
            println!("Shard result: {}", path.display());
        }
    }
    Ok(exit_for(status.as_ref()))
}

/// Runs `oracle merge`.
pub fn run_merge_command(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let params = args
        .sprt
        .as_deref()
        .map(parse_sprt)
        .transpose()
        .context("--sprt")?;
    let plan = args
        .plan
        .as_deref()
        .map(|path| -> anyhow::Result<Fingerprint> {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--plan {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("--plan {}: not a match fingerprint", path.display()))
        })
        .transpose()?;
    let shards = read_shards(&args.files)?;
    let merged = merge(&shards, plan.as_ref(), params)?;
    let status = sprt_json_status(&merged.tally, params.as_ref(), merged.sprt.as_ref())?;
    let fp = &merged.fingerprint;
    if args.json {
        let mut object = summary_json(&merged.tally, merged.games_played, status.as_ref());
        let extra = json!({
            "shards": merged.shards,
            "shard_count": fp.shards,
            "pairs_total": fp.pairs,
            "pairs_available": merged.pairs_available,
            "contiguous_pairs": merged.contiguous_pairs,
            "engines": [fp.engines[0].name, fp.engines[1].name],
            "tc": fp.clock.tc.describe(),
            "seed": fp.seed,
            "book_sha256": fp.book_sha256,
            "pgn": serde_json::Value::Null,
            "pgn_sha256": shards.iter().map(|(_, s)| s.pgn_sha256.clone()).collect::<Vec<_>>(),
        });
        object
            .as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        println!("{object}");
    } else {
        let names = [fp.engines[0].name.as_str(), fp.engines[1].name.as_str()];
        let title = format!(
            "{} vs {} ({}, shards {:?} of {})",
            names[0],
            names[1],
            fp.clock.tc.describe(),
            merged.shards,
            fp.shards
        );
        print!(
            "{}",
            summary_block(
                &title,
                &merged.tally,
                &merged.pairs,
                merged.games_played,
                status.as_ref(),
                names
            )
        );
        println!(
            "Pairs: {} of {} present, {} without gaps, {} counted",
            merged.pairs_available, fp.pairs, merged.contiguous_pairs, merged.tally.pairs
        );
    }
    Ok(exit_for(status.as_ref()))
}

/// Exit 1 when the SPRT accepted H0, else 0.
fn exit_for(status: Option<&SprtStatus>) -> ExitCode {
    match status {
        Some(s) if s.state == SprtDecision::AcceptH0 => ExitCode::from(super::EXIT_REJECTED),
        _ => ExitCode::SUCCESS,
    }
}

/// Builds the match configuration from the command line.
fn match_config(args: &MatchArgs) -> anyhow::Result<MatchConfig> {
    if args.engines.len() != 2 {
        bail!(
            "--engine: give exactly two engines, got {}",
            args.engines.len()
        );
    }
    let mut engines = Vec::with_capacity(2);
    for spec in &args.engines {
        let mut config = EngineConfig::new(PathBuf::new());
        let mut has_cmd = false;
        let mut has_name = false;
        for each in &args.each {
            apply_settings(&mut config, each, false).with_context(|| format!("--each {each}"))?;
        }
        for item in spec.split(',') {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| anyhow!("--engine {spec}: `{item}` is not KEY=VALUE"))?;
            match key {
                "cmd" => {
                    config.command = PathBuf::from(value);
                    has_cmd = true;
                }
                "name" => {
                    config.name = value.to_string();
                    has_name = true;
                }
                _ => apply_settings(&mut config, item, true)
                    .with_context(|| format!("--engine {spec}"))?,
            }
        }
        if !has_cmd {
            bail!("--engine {spec}: missing cmd=PATH");
        }
        if !has_name {
            config.name = EngineConfig::new(config.command.clone()).name;
        }
        if !config.command.is_file() {
            bail!(
                "--engine {spec}: {} is not a file",
                config.command.display()
            );
        }
        engines.push(config);
    }
    if engines[0].name == engines[1].name {
        engines[0].name.push_str(" (1)");
        engines[1].name.push_str(" (2)");
    }
    let tc = match (args.tc, args.nodes, args.depth, args.movetime) {
        (Some(tc), ..) => tc,
        (_, Some(n), ..) => TimeControl::Nodes(n),
        (_, _, Some(d), _) => TimeControl::Depth(d),
        (.., Some(ms)) => TimeControl::Movetime(Duration::from_millis(ms)),
        _ => unreachable!("clap requires one limit"),
    };
    let seconds = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(anyhow!("--{name} must be a positive number of seconds"))
        }
    };
    let clock = ClockRules {
        tc,
        margin: Duration::from_millis(args.time_margin),
        slack: Duration::from_millis(200),
        move_timeout: seconds("move-timeout", args.move_timeout)?,
    };
    let cores = physical_cores();
    let logical = std::thread::available_parallelism().map_or(1, usize::from);
    let concurrency = args.concurrency.unwrap_or(cores);
    if concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if tc.is_timed() && concurrency > logical && !args.force_concurrency {
        bail!(
            "--concurrency {concurrency} exceeds the {logical} CPUs of this machine for a timed match; use --force-concurrency to insist"
        );
    }
    let mut adjudication = if args.adjudicate_fishtest {
        Adjudication::FISHTEST
    } else {
        Adjudication::default()
    };
    if let Some(spec) = &args.draw {
        let v = key_values(spec, &["movenumber", "movecount", "score"]).context("--draw")?;
        adjudication.draw = Some(DrawRule {
            move_number: v[0] as u32,
            move_count: v[1] as u32,
            score: v[2] as i32,
        });
    }
    if let Some(spec) = &args.resign {
        let v = key_values(spec, &["movecount", "score"]).context("--resign")?;
        adjudication.resign = Some(ResignRule {
            move_count: v[0] as u32,
            score: v[1] as i32,
        });
    }
    if args.maxmoves.is_some() {
        adjudication.max_moves = args.maxmoves;
    }
    Ok(MatchConfig {
        engines: [engines[0].clone(), engines[1].clone()],
        clock,
        adjudication,
        start_timeout: seconds("start-timeout", args.start_timeout)?,
        ready_timeout: seconds("ready-timeout", args.ready_timeout)?,
        book_format: args
            .book_format
            .unwrap_or_else(|| BookFormat::from_path(&args.book)),
        book_path: args.book.clone(),
        plies: args.plies,
        seed: args.seed,
        opening_offset: args.opening_offset,
        pairs: args.pairs,
        shard: args.shard.unwrap_or(Shard::WHOLE),
        concurrency,
        pgn_out: args.pgn_out.clone(),
        state: args.state.clone(),
        event: args.event.clone(),
    })
}

/// Applies `option.X=V` (and, for engine specs, `arg=A`) items to an engine configuration.
fn apply_settings(config: &mut EngineConfig, spec: &str, allow_arg: bool) -> anyhow::Result<()> {
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| anyhow!("`{item}` is not KEY=VALUE"))?;
        if let Some(option) = key.strip_prefix("option.") {
            config.set_option(option, value);
        } else if key == "arg" && allow_arg {
            config.args.push(value.to_string());
        } else if key == "bind" && allow_arg {
            // A wrapper engine's inner engine: visible read-only inside this engine's sandbox.
            let path = std::path::absolute(value)
                .with_context(|| format!("bind={value}: not a usable path"))?;
            if !path.exists() {
                bail!("bind={value}: {} does not exist", path.display());
            }
            config.read_only.push(path);
        } else {
            bail!(
                "unknown key `{key}` (expected option.NAME{})",
                if allow_arg {
                    ", cmd, name, arg or bind"
                } else {
                    ""
                }
            );
        }
    }
    Ok(())
}

/// Parses `k1=v1,k2=v2,…` with exactly the integer keys `keys`, in any order.
fn key_values(spec: &str, keys: &[&str]) -> anyhow::Result<Vec<i64>> {
    let mut values = vec![None; keys.len()];
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| anyhow!("`{item}` is not KEY=VALUE"))?;
        let slot = keys
            .iter()
            .position(|k| *k == key)
            .ok_or_else(|| anyhow!("unknown key `{key}` (expected {})", keys.join(", ")))?;
        values[slot] = Some(
            value
                .parse::<i64>()
                .ok()
                .filter(|v| *v >= 0)
                .ok_or_else(|| anyhow!("{key}: `{value}` is not a non-negative integer"))?,
        );
    }
    keys.iter()
        .zip(values)
        .map(|(k, v)| v.ok_or_else(|| anyhow!("missing {k}=")))
        .collect()
}

/// Parses `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=normalized|logistic]` (α = β = 0.05, normalized by default).
fn parse_sprt(spec: &str) -> anyhow::Result<SprtParams> {
    let (mut elo0, mut elo1, mut alpha, mut beta, mut model) =
        (None, None, 0.05, 0.05, Model::Normalized);
    for item in spec.split(',') {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| anyhow!("`{item}` is not KEY=VALUE"))?;
        let number = || {
            value
                .parse::<f64>()
                .map_err(|_| anyhow!("{key}: `{value}` is not a number"))
        };
        match key {
            "elo0" => elo0 = Some(number()?),
            "elo1" => elo1 = Some(number()?),
            "alpha" => alpha = number()?,
            "beta" => beta = number()?,
            "model" => {
                model = match value {
                    "normalized" => Model::Normalized,
                    "logistic" => Model::Logistic,
                    _ => bail!("model: `{value}` is not normalized or logistic"),
                }
            }
            _ => bail!("unknown key `{key}` (expected elo0, elo1, alpha, beta, model)"),
        }
    }
    let (Some(elo0), Some(elo1)) = (elo0, elo1) else {
        bail!("elo0= and elo1= are required")
    };
    Ok(SprtParams::new(elo0, elo1, alpha, beta, model)?)
}

/// The `oracle sprt status --json` object for `tally`, with the sequential test's decision.
fn sprt_json_status(
    tally: &Tally,
    params: Option<&SprtParams>,
    sequential: Option<&SequentialSprt>,
) -> anyhow::Result<Option<SprtStatus>> {
    let Some(params) = params else {
        return Ok(None);
    };
    let mut status = sprt_status(&PentanomialCounts(tally.pentanomial), params)?;
    if let Some(sequential) = sequential {
        // The decision that stopped (or would stop) the run includes the overshoot correction.
        status.state = sequential.decision();
    }
    Ok(Some(status))
}

/// The JSON keys shared by `match` and `merge`.
fn summary_json(
    tally: &Tally,
    games_played: u64,
    status: Option<&SprtStatus>,
) -> serde_json::Value {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let elo = fixed_games_elo(&counts);
    json!({
        "games_played": games_played,
        "games_counted": 2 * tally.pairs,
        "pairs_counted": tally.pairs,
        "wins": tally.wins,
        "draws": tally.draws,
        "losses": tally.losses,
        "pentanomial": tally.pentanomial,
        "terminations": tally.terminations,
        "faults": { "first": tally.faults[0].total(), "second": tally.faults[1].total() },
        "faults_by_kind": { "first": tally.faults[0], "second": tally.faults[1] },
        "nelo": finite_or_null(nelo.nelo),
        "nelo_ci95": nelo.ci95.map(finite_or_null),
        "elo": finite_or_null(elo.elo),
        "elo_ci95": elo.ci95.map(finite_or_null),
        "los": finite_or_null(elo.los),
        "sprt": status,
    })
}

/// JSON has no infinities or NaN: they become null.
fn finite_or_null(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

/// The fastchess-style summary block.
fn summary_block(
    title: &str,
    tally: &Tally,
    pairs: &[PairOutcome],
    games_played: u64,
    status: Option<&SprtStatus>,
    names: [&str; 2],
) -> String {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let elo = fixed_games_elo(&counts);
    let games = 2 * tally.pairs;
    let points = tally.wins as f64 + tally.draws as f64 / 2.0;
    let p = tally.pentanomial;
    let pairs_ratio = (p[3] + p[4]) as f64 / (p[0] + p[1]).max(1) as f64;
    let wl = pairs
        .iter()
        .filter(|pair| {
            pair.bucket() == 2 && pair.games[0].result != oracle::play::game::GameResult::Draw
        })
        .count();
    let dd = p[2] as usize - wl;
    let t = &tally.terminations;
    let line = "-".repeat(60);
    let mut out = format!("{line}\nResults of {title}:\n");
    out += &format!(
        "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}\n",
        elo.elo,
        (elo.ci95[1] - elo.ci95[0]) / 2.0,
        nelo.nelo,
        (nelo.ci95[1] - nelo.ci95[0]) / 2.0
    );
    out += &format!(
        "LOS: {:.2} %, DrawRatio: {:.2} %, PairsRatio: {:.2}\n",
        100.0 * elo.los,
        100.0 * p[2] as f64 / tally.pairs.max(1) as f64,
        pairs_ratio
    );
    out += &format!(
        "Games: {games}, Wins: {}, Losses: {}, Draws: {}, Points: {points:.1} ({:.2} %)\n",
        tally.wins,
        tally.losses,
        tally.draws,
        100.0 * points / games.max(1) as f64
    );
    out += &format!(
        "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: {:.2}\n",
        p[0],
        p[1],
        p[2],
        p[3],
        p[4],
        wl as f64 / dd.max(1) as f64
    );
    if let Some(s) = status {
        out += &format!(
            "LLR: {:.2} ({:.1}%) ({:.2}, {:.2}) state: {}\n",
            s.llr,
            100.0 * s.llr / s.upper_bound,
            s.lower_bound,
            s.upper_bound,
            s.state.name()
        );
    }
    out += &format!(
        "Played {games_played} games, counted {games}; terminations: normal {}, adjudication {}, time forfeit {}, illegal move {}, disconnect {}, stall {}\n",
        t.normal, t.adjudication, t.time_forfeit, t.illegal_move, t.disconnect, t.stall
    );
    let faults = |f: &oracle::play::runner::FaultCounts| {
        format!(
            "{} (disconnect {}, stall {}, illegal move {}, time forfeit {})",
            f.total(),
            f.disconnect,
            f.stall,
            f.illegal_move,
            f.time_forfeit
        )
    };
    out += &format!(
        "Faults: {} {}, {} {}\n{line}\n",
        names[0],
        faults(&tally.faults[0]),
        names[1],
        faults(&tally.faults[1])
    );
    out
}

/// The live status message: W-D-L, pentanomial, nElo ± and LLR.
fn status_line(tally: &Tally, params: Option<&SprtParams>) -> String {
    let counts = PentanomialCounts(tally.pentanomial);
    let nelo = normalized_elo(&counts);
    let mut line = format!(
        "W-D-L {}-{}-{}  ptnml {:?}  nElo {:.1} ± {:.1}",
        tally.wins,
        tally.draws,
        tally.losses,
        tally.pentanomial,
        nelo.nelo,
        (nelo.ci95[1] - nelo.ci95[0]) / 2.0
    );
    if let Some(params) = params
        && let Ok(status) = sprt_status(&counts, params)
    {
        line += &format!(
            "  LLR {:.2} ({:.2}, {:.2})",
            status.llr, status.lower_bound, status.upper_bound
        );
    }
    line
}

/// The progress bar on stderr (hidden for `--json` and when stderr is not a terminal).
fn progress_bar(hidden: bool) -> ProgressBar {
    if hidden {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// The `q`-quantile of overheads (microseconds) in milliseconds.
fn percentile_ms(values: &mut [i64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let rank = ((values.len() - 1) as f64 * q).round() as usize;
    values[rank] as f64 / 1000.0
}

/// Physical cores (distinct core ids per package in /proc/cpuinfo), else the logical CPUs.
fn physical_cores() -> usize {
    let logical = std::thread::available_parallelism().map_or(1, usize::from);
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return logical;
    };
    let mut cores = std::collections::HashSet::new();
    let mut package = "";
    for line in info.lines() {
        if let Some((key, value)) = line.split_once(':') {
            match key.trim() {
                "physical id" => package = value.trim(),
                "core id" => {
                    cores.insert((package.to_string(), value.trim().to_string()));
                }
                _ => {}
            }
        }
    }
    if cores.is_empty() {
        logical
    } else {
        cores.len().min(logical)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sprt_spec_defaults_and_errors() {
        let p = parse_sprt("elo0=0,elo1=2").unwrap();
        assert_eq!(
            (p.elo0, p.elo1, p.alpha, p.beta, p.model),
            (0.0, 2.0, 0.05, 0.05, Model::Normalized)
        );
        let p = parse_sprt("elo1=5,elo0=-1,alpha=0.1,model=logistic").unwrap();
        assert_eq!((p.elo0, p.alpha, p.model), (-1.0, 0.1, Model::Logistic));
        assert!(parse_sprt("elo0=2,elo1=0").is_err());
        assert!(parse_sprt("elo0=0").is_err());
        assert!(
            parse_sprt("elo0=0,elo1=2,gamma=1")
                .unwrap_err()
                .to_string()
                .contains("gamma")
        );
    }

    #[test]
    fn adjudication_specs() {
        assert_eq!(
            key_values(
                "score=20,movenumber=34,movecount=8",
                &["movenumber", "movecount", "score"]
            )
            .unwrap(),
            vec![34, 8, 20]
        );
        assert!(
            key_values("movecount=3", &["movecount", "score"])
                .unwrap_err()
                .to_string()
                .contains("score")
        );
    }

    #[test]
    fn percentiles() {
        let mut v = vec![5000, 1000, 3000, 2000, 4000];
        assert_eq!(percentile_ms(&mut v, 0.5), 3.0);
        assert_eq!(percentile_ms(&mut v, 0.95), 5.0);
    }
}
