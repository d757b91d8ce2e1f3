//! `oracle sprt`: status, replay, calculator, Monte Carlo simulation and a speed check of the
//! SPRT statistics. A thin layer: parse, call `oracle::stats`, render its summary as text or
//! JSON.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};

use oracle::stats::{
    self, CalculatorResult, CalculatorSummary, CurvePoint, EloRange, FishtestResult, GivenCounts,
    Model, PentanomialCounts, ReplaySummary, SimulationReport, SprtCalculator, SprtDecision,
    SprtParams, StatusSummary, StatusTiming, TrinomialCounts, parse_count_list,
    parse_pair_outcomes, parse_pentanomial, parse_trinomial,
};

use super::EXIT_REJECTED;
use super::output::{Summary, render};

/// Arguments of `oracle sprt`.
#[derive(Debug, Args)]
pub struct SprtArgs {
    #[command(subcommand)]
    command: SprtCommand,
}

/// The `oracle sprt` subcommands.
#[derive(Debug, Subcommand)]
enum SprtCommand {
    /// LLR, bounds, decision and estimates for cumulative counts.
    Status(StatusArgs),
    /// Replay pair outcomes batch by batch through the sequential test with overshoot correction.
    Replay(ReplayArgs),
    /// Pass probability and expected number of games for a true logistic Elo.
    Calc(CalcArgs),
    /// Monte Carlo operating characteristic at true nElo = elo0 and elo1 (a benchmark).
    Simulate(SimulateArgs),
    /// Time the status computation on given counts (compute only, no process start).
    Bench(BenchArgs),
}

/// The Elo model on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModelArg {
    /// Normalized Elo (the oracle's decision path).
    Normalized,
    /// Logistic Elo.
    Logistic,
}

impl From<ModelArg> for Model {
    fn from(model: ModelArg) -> Self {
        match model {
            ModelArg::Normalized => Model::Normalized,
            ModelArg::Logistic => Model::Logistic,
        }
    }
}

/// The hypotheses and error rates every subcommand takes (also `oracle match` and `oracle
/// merge`, where they are optional as a whole: the pair is required through the group, not
/// per argument, because clap enforces per-argument requirements even in an absent optional
/// flatten).
#[derive(Debug, Args)]
#[group(id = "sprt_bounds", multiple = true, requires_all = ["elo0", "elo1"])]
pub(super) struct BoundsArgs {
    /// H0 Elo difference.
    #[arg(long, required = false, allow_hyphen_values = true)]
    elo0: f64,
    /// H1 Elo difference (greater than elo0).
    #[arg(long, required = false, allow_hyphen_values = true)]
    elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    beta: f64,
    /// Elo scale of elo0 and elo1.
    #[arg(long, value_enum, default_value_t = ModelArg::Normalized)]
    model: ModelArg,
}

impl BoundsArgs {
    pub(super) fn params(&self) -> anyhow::Result<SprtParams> {
        SprtParams::new(
            self.elo0,
            self.elo1,
            self.alpha,
            self.beta,
            self.model.into(),
        )
        .context("invalid SPRT parameters (--elo0, --elo1, --alpha, --beta)")
    }
}

/// Counts given on the command line: exactly one of the three notations (docs/cli.md).
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
struct CountsArgs {
    /// Pentanomial pair counts from the candidate's side, worst pair first as in Fishtest's and
    /// fastchess's `Ptnml(0-2)` (commas and/or spaces, brackets allowed).
    #[arg(long, value_name = "LL,LD,DD,WD,WW", value_parser = parse_pentanomial, allow_hyphen_values = true)]
    penta: Option<PentanomialCounts>,
    /// Trinomial game counts from the candidate's side, by name in any order; bare numbers are
    /// refused because tools disagree on their order.
    #[arg(long, value_name = "w=W,l=L,d=D", value_parser = parse_trinomial, allow_hyphen_values = true)]
    trinomial: Option<TrinomialCounts>,
    /// A Fishtest test page's result block as pasted (`LLR: … <e0,e1>`, `Total: … W: … L: … D: …`,
    /// `Ptnml(0-2): …`), `-` to read it from standard input; its pentanomial counts are used
    /// when present, and bounds in it must match --elo0, --elo1 and --model.
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    fishtest: Option<String>,
}

/// Arguments of `oracle sprt status`.
#[derive(Debug, Args)]
struct StatusArgs {
    #[command(flatten)]
    counts: CountsArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    /// Print one JSON object instead of the human block.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle sprt replay`.
#[derive(Debug, Args)]
struct ReplayArgs {
    /// File of pair outcomes 0–4 (candidate's half-points per pair) in play order; whitespace ignored.
    #[arg(long)]
    outcomes: PathBuf,
    /// Pairs per batch: the test looks at the data after every batch.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    #[command(flatten)]
    bounds: BoundsArgs,
    /// Print one JSON object instead of the table.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle sprt calc`.
#[derive(Debug, Args)]
struct CalcArgs {
    #[command(flatten)]
    bounds: BoundsArgs,
    /// True logistic Elo difference: one point of the characteristic. Without it, a table over
    /// --range.
    #[arg(long, allow_hyphen_values = true, conflicts_with_all = ["range", "step", "svg"])]
    elo: Option<f64>,
    /// The table's true logistic Elo from FROM to TO [default: Fishtest calculator's axis,
    /// ⌊elo0 − Δ/3⌋ to ⌈elo1 + Δ/3⌉ in logistic Elo].
    #[arg(long, value_name = "FROM,TO", value_parser = parse_range, allow_hyphen_values = true)]
    range: Option<(f64, f64)>,
    /// The table's step in Elo [default: Fishtest's, 0.05 up to 5 Elo of range, else 0.1].
    #[arg(long)]
    step: Option<f64>,
    /// Also write both curves (pass probability, expected games) as an SVG figure to FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Draw ratio of the games (Fishtest calculator's default).
    #[arg(long, default_value_t = 0.49, allow_hyphen_values = true)]
    draw_ratio: f64,
    /// RMS opening bias in logistic Elo (Fishtest calculator's default).
    #[arg(long, default_value_t = 191.0, allow_hyphen_values = true)]
    bias: f64,
    /// Print one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Reads `FROM,TO`.
fn parse_range(text: &str) -> Result<(f64, f64), String> {
    let (from, to) = text
        .split_once(',')
        .ok_or_else(|| format!("expected FROM,TO, got '{text}'"))?;
    let number = |field: &str| {
        field
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("'{}' is not a number", field.trim()))
    };
    Ok((number(from)?, number(to)?))
}

/// Arguments of `oracle sprt simulate`.
#[derive(Debug, Args)]
struct SimulateArgs {
    /// H0 in normalized Elo.
    #[arg(long, allow_hyphen_values = true)]
    elo0: f64,
    /// H1 in normalized Elo.
    #[arg(long, allow_hyphen_values = true)]
    elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    beta: f64,
    /// True nElo values to simulate (default: elo0 and elo1).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    nelo: Vec<f64>,
    /// Simulated tests per true nElo.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    tests: u64,
    /// Pairs per batch of the sequential test (Fishtest: 32 games per batch at STC).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    /// Shape of the pair distribution, tilted to each true nElo (relative weights).
    #[arg(long, value_name = "LL,LD,DD,WD,WW", default_value = "130,2520,5300,2520,130", value_parser = parse_count_list::<5>)]
    base_penta: [u64; 5],
    /// Undecided tests stop here (counted as not passed).
    #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_pairs: u64,
    /// Seed of the ChaCha8 streams (test i uses stream i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object.
    #[arg(from_global)]
    json: bool,
}

/// Arguments of `oracle sprt bench`.
#[derive(Debug, Args)]
struct BenchArgs {
    #[command(flatten)]
    counts: CountsArgs,
    #[command(flatten)]
    bounds: BoundsArgs,
    /// Number of timed status computations.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    iterations: u64,
    #[arg(from_global)]
    json: bool,
}

/// Runs one `oracle sprt` subcommand. A test that ends in H0 (`status`, `replay`) exits 1 like
/// a rejected change (docs/cli.md); everything else that ran exits 0.
pub fn run(args: SprtArgs) -> anyhow::Result<ExitCode> {
    let decision = match args.command {
        SprtCommand::Status(args) => {
            let summary = status(&args)?;
            render(&summary, args.json)?;
            Some(summary.status.state)
        }
        SprtCommand::Replay(args) => {
            let summary = replay(&args)?;
            render(&summary, args.json)?;
            Some(summary.final_status.status.state)
        }
        SprtCommand::Calc(args) => render(&calc(&args)?, args.json).map(|()| None)?,
        SprtCommand::Simulate(args) => render(&simulate(&args)?, args.json).map(|()| None)?,
        SprtCommand::Bench(args) => render(&bench(&args)?, args.json).map(|()| None)?,
    };
    Ok(if decision == Some(SprtDecision::AcceptH0) {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    })
}

impl Summary for StatusSummary {}
impl Summary for ReplaySummary {}
impl Summary for CalculatorSummary {}
impl Summary for SimulationReport {}
impl Summary for StatusTiming {}

impl CountsArgs {
    /// The counts in whichever notation was given; Fishtest text is checked against `params`.
    fn counts(&self, params: &SprtParams) -> anyhow::Result<GivenCounts> {
        match (self.penta, self.trinomial, &self.fishtest) {
            (Some(counts), _, _) => Ok(GivenCounts::Pentanomial(counts)),
            (None, Some(counts), _) => Ok(GivenCounts::Trinomial(counts)),
            (None, None, Some(text)) => fishtest_counts(text, params).context("--fishtest"),
            (None, None, None) => bail!("give the counts: --penta, --trinomial or --fishtest"),
        }
    }
}

/// The counts of a pasted Fishtest result block (`-`: standard input), pentanomial if present.
fn fishtest_counts(text: &str, params: &SprtParams) -> anyhow::Result<GivenCounts> {
    let text = if text == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        text.to_owned()
    };
    let result = FishtestResult::parse(&text)?;
    result.check_bounds(params)?;
    Ok(result.counts())
}

/// `oracle sprt status`.
fn status(args: &StatusArgs) -> anyhow::Result<StatusSummary> {
    let params = args.bounds.params()?;
    let counts = args.counts.counts(&params)?;
    Ok(StatusSummary::new(counts, params)?)
}

/// `oracle sprt replay`.
fn replay(args: &ReplayArgs) -> anyhow::Result<ReplaySummary> {
    let params = args.bounds.params()?;
    let path = &args.outcomes;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--outcomes: cannot read {}", path.display()))?;
    let outcomes =
        parse_pair_outcomes(&text).map_err(|e| anyhow!("--outcomes {}:{e}", path.display()))?;
    Ok(stats::replay(&outcomes, params, args.batch)?)
}

/// `oracle sprt calc`; with `--svg`, also writes the figure.
fn calc(args: &CalcArgs) -> anyhow::Result<CalculatorSummary> {
    let params = args.bounds.params()?;
    let calculator = SprtCalculator::new(&params, args.draw_ratio, args.bias)
        .context("invalid --draw-ratio or --bias")?;
    let result = match args.elo {
        Some(elo) if !elo.is_finite() => bail!("--elo must be a finite number, got {elo}"),
        Some(elo) => CalculatorResult::Point {
            elo,
            characteristic: calculator.characteristic(elo),
        },
        None => {
            let fishtest = calculator.fishtest_range();
            let (from, to) = args.range.unwrap_or((fishtest.from, fishtest.to));
            let range = EloRange {
                from,
                to,
                step: args.step.unwrap_or(fishtest.step),
            };
            let curve = calculator.curve(range).context("--range / --step")?;
            if let Some(path) = &args.svg {
                write_svg(path, args, &params, &calculator, &curve)?;
            }
            CalculatorResult::Curve(curve)
        }
    };
    Ok(CalculatorSummary {
        params,
        draw_ratio: args.draw_ratio,
        bias: args.bias,
        calculator,
        result,
    })
}

/// Writes the calculator's curves as an SVG figure to `path`.
fn write_svg(
    path: &std::path::Path,
    args: &CalcArgs,
    params: &SprtParams,
    calculator: &SprtCalculator,
    curve: &[CurvePoint],
) -> anyhow::Result<()> {
    let title = format!(
        "SPRT [{}, {}] {}, alpha {}, beta {}, draw ratio {}, RMS bias {}",
        params.elo0,
        params.elo1,
        params.model,
        params.alpha,
        params.beta,
        args.draw_ratio,
        args.bias
    );
    let bounds = [calculator.logistic_elo0, calculator.logistic_elo1];
    let svg = oracle::report::render_calculator_svg(&title, curve, bounds);
    oracle::integrity::write_atomically(path, svg.as_bytes())
        .with_context(|| format!("--svg {}", path.display()))
}

/// `oracle sprt simulate`.
fn simulate(args: &SimulateArgs) -> anyhow::Result<SimulationReport> {
    let params = SprtParams::new(
        args.elo0,
        args.elo1,
        args.alpha,
        args.beta,
        Model::Normalized,
    )
    .context("invalid SPRT parameters (--elo0, --elo1, --alpha, --beta)")?;
    let targets = if args.nelo.is_empty() {
        vec![args.elo0, args.elo1]
    } else {
        args.nelo.clone()
    };
    let base = args.base_penta.map(|n| n as f64);
    let start = Instant::now();
    let mut runs = Vec::new();
    for &nelo in &targets {
        let probs = stats::pentanomial_at_nelo(&base, nelo).context("--base-penta / --nelo")?;
        runs.push(stats::simulate_sprt(
            &params,
            args.batch,
            &probs,
            args.tests,
            args.seed,
            args.max_pairs,
        )?);
    }
    Ok(SimulationReport {
        elo0: args.elo0,
        elo1: args.elo1,
        alpha: args.alpha,
        beta: args.beta,
        batch_pairs: args.batch,
        seed: args.seed,
        runs,
        seconds: start.elapsed().as_secs_f64(),
        tests: args.tests,
    })
}

/// `oracle sprt bench`.
fn bench(args: &BenchArgs) -> anyhow::Result<StatusTiming> {
    let params = args.bounds.params()?;
    let counts = args.counts.counts(&params)?;
    let start = Instant::now();
    let mut last = counts.status(&params)?;
    for _ in 1..args.iterations {
        last = std::hint::black_box(counts.status(std::hint::black_box(&params))?);
    }
    Ok(StatusTiming {
        microseconds_per_call: start.elapsed().as_secs_f64() / args.iterations as f64 * 1e6,
        iterations: args.iterations,
        pairs: last.pairs,
        llr: last.llr,
    })
}
