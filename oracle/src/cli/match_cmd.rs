//! `oracle match` (the match runner) and `oracle merge` (combine shard results): parse the
//! arguments, call `play`, render.
//!
//! Exit status: 0 when the match ran (and, with an SPRT, did not accept H0), 1 when the SPRT
//! accepted H0, 2 on bad input, a failed start-up check or a runner failure (the pair in
//! progress is not counted), 130 when SIGINT or SIGTERM stopped it (the resume command is
//! printed).
//!
//! When standard output is not a terminal (a CI log, `| cat`) and `--json` is not given, the
//! run logs a line per finished game and a summary every `--report-every` games.

use std::io::IsTerminal;
use std::num::NonZeroU64;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use clap::{ArgGroup, Args};
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{Summary, out, outln, render};
use super::sprt::BoundsArgs;
use oracle::play::book::{BookFormat, BookOrder};
use oracle::play::clock::{ClockRules, TimeControl, engine_time_controls};
use oracle::play::cpus::Cpus;
use oracle::play::game::{Adjudication, DrawRule};
use oracle::play::interrupt::{self, EXIT_INTERRUPTED};
use oracle::play::runner::{MatchConfig, MatchProgress};
use oracle::play::session::{self, Session};
use oracle::play::shard::{Shard, merge, read_plan, read_shards};
use oracle::play::shard_games::pgn_path;
use oracle::play::spec::{key_values, parse_engine, parse_resign, parse_sprt};
use oracle::play::summary::{
    MatchSummary, MergeSummary, Standing, game_line, periodic_summary, status_line,
};
use oracle::stats::SprtParams;

/// Arguments of `oracle match`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("limit").args(["tc", "nodes", "depth", "movetime"])))]
pub struct MatchArgs {
    /// An engine: `cmd=PATH[,name=N][,tc=TC][,arg=A…][,bind=P…][,option.X=V…]`; give exactly two
    /// (first = candidate). `tc=` is the engine's own clock, as in cutechess and fastchess (time
    /// odds: `tc=10+0.1` against `tc=5+0.05`); it overrides `--tc` and `--each tc=`. `bind=P`
    /// shows a wrapper engine's inner engine inside its sandbox, read-only at the same path (a
    /// file as a private copy taken at start-up, a directory as it is).
    #[arg(long = "engine", required = true, num_args = 1, value_name = "SPEC")]
    engines: Vec<String>,
    /// Settings for both engines: `[tc=TC,]option.X=V[,option.Y=W…]` (engine-specific values win).
    #[arg(long = "each", value_name = "SPEC")]
    each: Vec<String>,
    /// Clock of both engines: `BASE+INC` or `MOVES/BASE+INC` in seconds (e.g. 8+0.08); an
    /// engine's own `tc=` wins. One of --tc, --nodes, --depth, --movetime is needed unless both
    /// engines have a `tc=`.
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
    /// Opening book (EPD or PGN); without one every game starts from the standard position.
    #[arg(long)]
    book: Option<PathBuf>,
    /// The order the book is played in: shuffled by `--seed`, or as in the file.
    #[arg(long, value_enum, default_value_t = BookOrder::Random)]
    book_order: BookOrder,
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
    /// Live SPRT, the bounds as `oracle sprt` takes them (`--elo0 X --elo1 Y [--alpha A]
    /// [--beta B] [--model M]`); the match stops when it decides.
    #[command(flatten)]
    bounds: Option<BoundsArgs>,
    /// The same SPRT in the older one-argument form `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=M]`.
    #[arg(long, value_name = "SPEC", conflicts_with = "elo0")]
    sprt: Option<String>,
    /// With output that is not a terminal: print a summary at the first counted pair after
    /// every N more finished games (0: none; a line per finished game is printed regardless).
    #[arg(long, default_value_t = 10, value_name = "N")]
    report_every: u64,
    /// Write each engine process's UCI traffic to `DIR/NAME-PID.log` (`>` sent, `<` read,
    /// after the seconds since the process started).
    #[arg(long, value_name = "DIR")]
    log: Option<PathBuf>,
    /// Write the games to this PGN file; with `--shard` they always go next to the shard result
    /// (`shard-K-of-N.pgn`), where `oracle merge` reads them.
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
    /// Resign adjudication `movecount=K,score=S[,twosided=true]`: a side loses after K moves at
    /// ≤ −S cp by its own score; two-sided, only while the opponent scores ≥ +S for K moves too.
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
    /// SPRT applied at round boundaries, the bounds as `oracle sprt` takes them.
    #[command(flatten)]
    bounds: Option<BoundsArgs>,
    /// The same SPRT in the older one-argument form `elo0=X,elo1=Y[,alpha=A][,beta=B][,model=M]`.
    #[arg(long, value_name = "SPEC", conflicts_with = "elo0")]
    sprt: Option<String>,
    /// The match the shards must belong to, always required: a JSON fingerprint, or a shard
    /// result file the merger played or trusts (its `fingerprint`); any other shard is refused.
    #[arg(long, value_name = "FILE")]
    plan: PathBuf,
    /// Print one JSON object instead of the human summary.
    #[arg(from_global)]
    json: bool,
}

/// Runs `oracle match`.
pub fn run_match_command(args: MatchArgs) -> anyhow::Result<ExitCode> {
    let config = match_config(&args)?;
    let sprt = sprt_params(args.bounds.as_ref(), args.sprt.as_deref())?;
    if sprt.is_some() && args.shard.is_some() {
        bail!(
            "an SPRT cannot be combined with --shard: shards play fixed slices; apply the SPRT with `oracle merge --elo0 … --elo1 …`"
        );
    }
    let session = Session {
        shard_result: shard_file(&args),
        command_line: std::env::args().collect(),
        config,
        sprt,
    };
    let bar = progress_bar(args.json);
    let log = !args.json && !std::io::stdout().is_terminal();
    let names = session
        .config
        .engines
        .each_ref()
        .map(|engine| engine.name.as_str());
    let mut reported_at = 0;
    let mut observer = |p: &MatchProgress| {
        bar.set_length(p.games_total);
        bar.set_position(p.games_played);
        bar.set_message(status_line(p.finished_wdl, &p.tally, sprt.as_ref()));
        if !log {
            return;
        }
        let written = match &p.game {
            Some(game) => outln!("{}", game_line(p.games_played, game, names)),
            // A counted pair: the summary comes here, so that it includes the pair.
            None if args.report_every > 0 && p.games_played >= reported_at + args.report_every => {
                reported_at = p.games_played;
                out!(
                    "{}",
                    periodic_summary(p.games_played, p.finished_wdl, &p.tally, sprt.as_ref())
                )
            }
            None => true,
        };
        if !written {
            // Nobody reads the log any more (`| head`): stop as on SIGINT, the state kept.
            interrupt::request();
        }
    };
    let played = session::play(&session, &mut observer);
    bar.finish_and_clear();
    let summary = played?;
    render(&summary, args.json)?;
    if summary.interrupted {
        return Ok(ExitCode::from(EXIT_INTERRUPTED));
    }
    Ok(exit_for(&summary.standing))
}

/// Runs `oracle merge`.
pub fn run_merge_command(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let params = sprt_params(args.bounds.as_ref(), args.sprt.as_deref())?;
    let plan = read_plan(&args.plan).context("--plan")?;
    let shards = read_shards(&args.files)?;
    let merged = merge(&shards, &plan, params)?;
    let summary = MergeSummary::new(&merged, &shards, params.as_ref())?;
    render(&summary, args.json)?;
    Ok(exit_for(&summary.standing))
}

impl Summary for MatchSummary {
    const SORTED_KEYS: bool = true;
}

impl Summary for MergeSummary {
    const SORTED_KEYS: bool = true;
}

/// Exit 1 when the SPRT accepted H0, else 0.
fn exit_for(standing: &Standing) -> ExitCode {
    if standing.accepted_h0() {
        ExitCode::from(super::EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    }
}

/// Builds the match configuration from the command line.
fn match_config(args: &MatchArgs) -> anyhow::Result<MatchConfig> {
    if args.pairs == 0 {
        bail!("--pairs must be at least 1: a match of no games decides nothing");
    }
    if args.engines.len() != 2 {
        bail!(
            "--engine: give exactly two engines, got {}",
            args.engines.len()
        );
    }
    let [first, second] = [
        parse_engine(&args.engines[0], &args.each)?,
        parse_engine(&args.engines[1], &args.each)?,
    ];
    let global = match (args.tc, args.nodes, args.depth, args.movetime) {
        (Some(tc), ..) => Some(tc),
        (_, Some(n), ..) => Some(TimeControl::Nodes(
            NonZeroU64::new(n).ok_or_else(|| anyhow!("--nodes must be at least 1"))?,
        )),
        (_, _, Some(d), _) => Some(TimeControl::Depth(d)),
        (.., Some(ms)) => Some(TimeControl::Movetime(Duration::from_millis(ms))),
        _ => None,
    };
    let (tc, second_engine_tc) = engine_time_controls(global, [first.tc, second.tc])?;
    let mut engines = [first.config, second.config];
    if engines[0].name == engines[1].name {
        engines[0].name.push_str(" (1)");
        engines[1].name.push_str(" (2)");
    }
    if let Some(dir) = &args.log {
        std::fs::create_dir_all(dir).with_context(|| format!("--log {}", dir.display()))?;
        for engine in &mut engines {
            engine.log_dir = Some(dir.clone());
        }
    }
    let seconds = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(Duration::from_secs_f64(v))
        } else {
            Err(anyhow!("--{name} must be a positive number of seconds"))
        }
    };
    let clock = ClockRules {
        tc,
        second_engine_tc,
        margin: Duration::from_millis(args.time_margin),
        slack: Duration::from_millis(200),
        move_timeout: seconds("move-timeout", args.move_timeout)?,
    };
    let cpus = Cpus::detect();
    let concurrency = args.concurrency.unwrap_or(cpus.default_games());
    if concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    let most = cpus.max_games(tc.is_timed());
    if concurrency > most && !args.force_concurrency {
        bail!(
            "--concurrency {concurrency} exceeds the {most} {} of this machine for {} match; use --force-concurrency to insist",
            if tc.is_timed() {
                "physical cores"
            } else {
                "logical CPUs"
            },
            if tc.is_timed() {
                "a timed"
            } else {
                "an untimed"
            }
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
        adjudication.resign = Some(parse_resign(spec).context("--resign")?);
    }
    if args.maxmoves.is_some() {
        adjudication.max_moves = args.maxmoves;
    }
    // A shard's games go where the merge looks for them.
    let pgn_out = match shard_file(args) {
        Some(file) if pgn_path(&file) == file => {
            bail!(
                "--shard-out {}: the shard's games go to its .pgn",
                file.display()
            )
        }
        Some(file) => {
            let games = pgn_path(&file);
            if args.pgn_out.as_ref().is_some_and(|given| *given != games) {
                bail!(
                    "--pgn-out: with --shard the games go next to the shard result, to {}, where `oracle merge` reads them",
                    games.display()
                );
            }
            Some(games)
        }
        None => args.pgn_out.clone(),
    };
    Ok(MatchConfig {
        engines,
        clock,
        adjudication,
        start_timeout: seconds("start-timeout", args.start_timeout)?,
        ready_timeout: seconds("ready-timeout", args.ready_timeout)?,
        book_format: args.book_format.unwrap_or_else(|| {
            args.book
                .as_deref()
                .map_or(BookFormat::Epd, BookFormat::from_path)
        }),
        book_path: args.book.clone(),
        book_order: args.book_order,
        plies: args.plies,
        seed: args.seed,
        opening_offset: args.opening_offset,
        pairs: args.pairs,
        shard: args.shard.unwrap_or(Shard::WHOLE),
        pairs_below: None,
        counted_elsewhere: Vec::new(),
        concurrency,
        pgn_out,
        state: args.state.clone(),
        event: args.event.clone(),
        // Only `verify` measures the engines' pace (their bench); a match checks no node budget.
        node_pace: [None, None],
    })
}

/// The shard result file of a `--shard` run: `--shard-out`, or `shard-K-of-N.json`.
fn shard_file(args: &MatchArgs) -> Option<PathBuf> {
    let shard = args.shard?;
    Some(
        args.shard_out
            .clone()
            .unwrap_or_else(|| shard.default_result_file()),
    )
}

/// The SPRT of `--elo0 …` or of the old `--sprt elo0=…` alias, if either is given.
fn sprt_params(
    bounds: Option<&BoundsArgs>,
    alias: Option<&str>,
) -> anyhow::Result<Option<SprtParams>> {
    match (bounds, alias) {
        (Some(bounds), _) => Ok(Some(bounds.params()?)),
        (None, Some(spec)) => Ok(Some(parse_sprt(spec)?)),
        (None, None) => Ok(None),
    }
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
