//! `oracle sprt`: status, replay, calculator, Monte Carlo simulation and a speed check of the
//! SPRT statistics. A thin layer: parse, call `oracle::stats`, render human text or JSON.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde::Serialize;

use oracle::stats::{
    self, Counts, CurvePoint, EloRange, FishtestResult, Model, PentanomialCounts, SequentialSprt,
    SimulationSummary, SprtCalculator, SprtDecision, SprtParams, SprtStatus, TrinomialCounts,
    parse_count_list, parse_pentanomial, parse_trinomial,
};

use super::EXIT_REJECTED;
use super::output::out;

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
    let (text, decision) = match args.command {
        SprtCommand::Status(args) => status(&args)?,
        SprtCommand::Replay(args) => replay(&args)?,
        SprtCommand::Calc(args) => (calc(&args)?, None),
        SprtCommand::Simulate(args) => (simulate(&args)?, None),
        SprtCommand::Bench(args) => (bench(&args)?, None),
    };
    out!("{text}");
    Ok(if decision == Some(SprtDecision::AcceptH0) {
        ExitCode::from(EXIT_REJECTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// One JSON object and a newline.
fn json_line(value: &impl Serialize) -> anyhow::Result<String> {
    Ok(serde_json::to_string(value)? + "\n")
}

/// Counts of either kind with what the renderer needs.
enum AnyCounts {
    Penta(PentanomialCounts),
    Tri(TrinomialCounts),
}

impl CountsArgs {
    /// The counts in whichever notation was given; Fishtest text is checked against `params`.
    fn counts(&self, params: &SprtParams) -> anyhow::Result<AnyCounts> {
        match (self.penta, self.trinomial, &self.fishtest) {
            (Some(counts), _, _) => Ok(AnyCounts::Penta(counts)),
            (None, Some(counts), _) => Ok(AnyCounts::Tri(counts)),
            (None, None, Some(text)) => fishtest_counts(text, params).context("--fishtest"),
            (None, None, None) => bail!("give the counts: --penta, --trinomial or --fishtest"),
        }
    }
}

/// The counts of a pasted Fishtest result block (`-`: standard input), pentanomial if present.
fn fishtest_counts(text: &str, params: &SprtParams) -> anyhow::Result<AnyCounts> {
    let text = if text == "-" {
        std::io::read_to_string(std::io::stdin()).context("cannot read standard input")?
    } else {
        text.to_owned()
    };
    let result = FishtestResult::parse(&text)?;
    result.check_bounds(params)?;
    Ok(match result.pentanomial {
        Some(counts) => AnyCounts::Penta(counts),
        None => AnyCounts::Tri(result.trinomial),
    })
}

impl AnyCounts {
    fn status(&self, params: &SprtParams) -> Result<SprtStatus, stats::StatsError> {
        match self {
            AnyCounts::Penta(c) => stats::sprt_status(c, params),
            AnyCounts::Tri(c) => stats::sprt_status(c, params),
        }
    }
}

fn status(args: &StatusArgs) -> anyhow::Result<(String, Option<SprtDecision>)> {
    let params = args.bounds.params()?;
    let counts = args.counts.counts(&params)?;
    let status = counts.status(&params)?;
    let text = if args.json {
        json_line(&status)?
    } else {
        render_status(&counts, &params, &status)
    };
    Ok((text, Some(status.state)))
}

/// A percentage with two decimals.
fn percent(x: f64) -> String {
    format!("{:.2} %", 100.0 * x)
}

/// The fastchess-style block (`Elo`, `nElo`, `LOS`, `Ptnml(0-2)`, `LLR`) plus the SPRT estimate.
fn render_status(counts: &AnyCounts, params: &SprtParams, s: &SprtStatus) -> String {
    let mut out = String::new();
    let fixed_half = (s.fixed_games_elo_ci95[1] - s.fixed_games_elo_ci95[0]) / 2.0;
    let nelo_half = (s.nelo_ci95[1] - s.nelo_ci95[0]) / 2.0;
    let _ = writeln!(
        out,
        "Elo: {:.2} +/- {:.2}, nElo: {:.2} +/- {:.2}",
        s.fixed_games_elo, fixed_half, s.nelo, nelo_half
    );
    let (points, games) = match counts {
        AnyCounts::Penta(c) => (Counts::points(c), c.games()),
        AnyCounts::Tri(c) => (Counts::points(c), c.games()),
    };
    let score = if games == 0 {
        0.5
    } else {
        points / games as f64
    };
    match counts {
        AnyCounts::Penta(c) => {
            let [ll, ld, _, wd, ww] = c.0;
            let ratio = if ll + ld == 0 {
                "-".to_owned()
            } else {
                format!("{:.2}", (ww + wd) as f64 / (ll + ld) as f64)
            };
            let _ = writeln!(out, "LOS: {}, PairsRatio: {ratio}", percent(s.los));
            let _ = writeln!(
                out,
                "Games: {}, Pairs: {}, Points: {:.1} ({})",
                c.games(),
                c.pairs(),
                points,
                percent(score)
            );
            let _ = writeln!(out, "Ptnml(0-2): [{ll}, {ld}, {}, {wd}, {ww}]", c.0[2]);
        }
        AnyCounts::Tri(c) => {
            let [l, d, w] = c.0;
            let draw_ratio = if games == 0 {
                0.0
            } else {
                d as f64 / games as f64
            };
            let _ = writeln!(
                out,
                "LOS: {}, DrawRatio: {}",
                percent(s.los),
                percent(draw_ratio)
            );
            let _ = writeln!(
                out,
                "Games: {games}, Wins: {w}, Losses: {l}, Draws: {d}, Points: {points:.1} ({})",
                percent(score)
            );
        }
    }
    let _ = writeln!(
        out,
        "SPRT Elo: {:.2} [{:.2}, {:.2}] (median-unbiased, 95%)",
        s.elo, s.elo_ci95[0], s.elo_ci95[1]
    );
    let _ = writeln!(
        out,
        "LLR: {:.2} ({:.2}, {:.2}) [{:.2}, {:.2}] {}",
        s.llr, s.lower_bound, s.upper_bound, params.elo0, params.elo1, params.model
    );
    let _ = writeln!(out, "State: {}", s.state);
    out
}

/// Reads pair outcomes 0–4 from `text`, ignoring whitespace; errors name line and column.
fn parse_outcomes(path: &std::path::Path, text: &str) -> anyhow::Result<Vec<usize>> {
    let mut outcomes = Vec::new();
    for (line_index, line) in text.lines().enumerate() {
        for (column, ch) in line.chars().enumerate() {
            match ch {
                '0'..='4' => outcomes.push(ch as usize - '0' as usize),
                c if c.is_whitespace() => {}
                c => bail!(
                    "--outcomes {}:{}:{}: unexpected character {c:?} (pair outcomes are the digits 0-4)",
                    path.display(),
                    line_index + 1,
                    column + 1
                ),
            }
        }
    }
    Ok(outcomes)
}

/// One row of a replay: pairs, LLR, o0, o1, state.
type TrajectoryRow = (u64, f64, f64, f64, SprtDecision);

/// The `--json` object of `oracle sprt replay`.
#[derive(Serialize)]
struct ReplayReport {
    trajectory: Vec<TrajectoryRow>,
    #[serde(rename = "final")]
    final_status: SprtStatus,
}

fn replay(args: &ReplayArgs) -> anyhow::Result<(String, Option<SprtDecision>)> {
    let params = args.bounds.params()?;
    let text = std::fs::read_to_string(&args.outcomes)
        .with_context(|| format!("--outcomes: cannot read {}", args.outcomes.display()))?;
    let outcomes = parse_outcomes(&args.outcomes, &text)?;
    let mut sprt = SequentialSprt::new(params, args.batch)?;
    let mut counts = PentanomialCounts::default();
    let mut trajectory = Vec::new();
    let batch = usize::try_from(args.batch).unwrap_or(usize::MAX);
    // Look after every batch, and once more on a trailing partial batch (which, as in
    // Fishtest, drops the overshoot correction); stop at the first decision like a live test.
    for chunk in outcomes.chunks(batch) {
        for &outcome in chunk {
            counts.record(outcome);
        }
        let state = sprt.update(&counts)?;
        trajectory.push((counts.pairs(), sprt.llr(), sprt.o0(), sprt.o1(), state));
        if state != SprtDecision::Continue {
            break;
        }
    }
    let mut final_status = stats::sprt_status(&counts, &params)?;
    final_status.state = sprt.decision();
    let decision = Some(final_status.state);
    if args.json {
        let text = json_line(&ReplayReport {
            trajectory,
            final_status,
        })?;
        return Ok((text, decision));
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>10} {:>9} {:>8} {:>8}  state",
        "pairs", "llr", "o0", "o1"
    );
    for (pairs, llr, o0, o1, state) in &trajectory {
        let _ = writeln!(out, "{pairs:>10} {llr:>9.4} {o0:>8.4} {o1:>8.4}  {state}");
    }
    let unused = outcomes.len() as u64 - counts.pairs();
    if unused > 0 {
        let _ = writeln!(
            out,
            "stopped at the decision; {unused} later pairs not used"
        );
    }
    out.push_str(&render_status(
        &AnyCounts::Penta(counts),
        &params,
        &final_status,
    ));
    Ok((out, decision))
}

/// The `--json` object of `oracle sprt calc` over a range.
#[derive(Serialize)]
struct CurveReport<'a> {
    design: &'a SprtCalculator,
    curve: &'a [CurvePoint],
}

fn calc(args: &CalcArgs) -> anyhow::Result<String> {
    let params = args.bounds.params()?;
    let calculator = SprtCalculator::new(&params, args.draw_ratio, args.bias)
        .context("invalid --draw-ratio or --bias")?;
    let mut out = String::new();
    if !args.json {
        let _ = writeln!(
            out,
            "SPRT [{:.2}, {:.2}] {}, alpha {}, beta {}, draw ratio {}, RMS bias {} Elo",
            params.elo0,
            params.elo1,
            params.model,
            params.alpha,
            params.beta,
            args.draw_ratio,
            args.bias
        );
        let _ = writeln!(
            out,
            "Bounds in logistic Elo: [{:.3}, {:.3}], per-game variance {:.5}, LLR bounds ({:.2}, {:.2})",
            calculator.logistic_elo0,
            calculator.logistic_elo1,
            calculator.variance,
            calculator.lower_bound,
            calculator.upper_bound
        );
    }
    if let Some(elo) = args.elo {
        if !elo.is_finite() {
            bail!("--elo must be a finite number, got {elo}");
        }
        let c = calculator.characteristic(elo);
        if args.json {
            return json_line(&c);
        }
        let _ = writeln!(
            out,
            "True Elo {elo:.2}: pass probability {}, expected games {:.0} ({:.0} pairs)",
            percent(c.pass_probability),
            c.expected_games,
            c.expected_games / 2.0
        );
        return Ok(out);
    }
    let fishtest = calculator.fishtest_range();
    let (from, to) = args.range.unwrap_or((fishtest.from, fishtest.to));
    let range = EloRange {
        from,
        to,
        step: args.step.unwrap_or(fishtest.step),
    };
    let curve = calculator.curve(range).context("--range / --step")?;
    if let Some(path) = &args.svg {
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
        let svg = oracle::report::render_calculator_svg(&title, &curve, bounds);
        oracle::integrity::write_atomically(path, svg.as_bytes())
            .with_context(|| format!("--svg {}", path.display()))?;
    }
    if args.json {
        return json_line(&CurveReport {
            design: &calculator,
            curve: &curve,
        });
    }
    let _ = writeln!(
        out,
        "{:>9} {:>9} {:>15}",
        "Elo", "P(pass)", "expected games"
    );
    for point in &curve {
        let bound = if point.elo == calculator.logistic_elo0 {
            "  elo0"
        } else if point.elo == calculator.logistic_elo1 {
            "  elo1"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:>9.3} {:>9} {:>15.0}{bound}",
            point.elo,
            percent(point.pass_probability),
            point.expected_games
        );
    }
    Ok(out)
}

/// The `--json` object of `oracle sprt simulate`.
#[derive(Serialize)]
struct SimulateReport {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    batch_pairs: u64,
    seed: u64,
    runs: Vec<SimulationSummary>,
    seconds: f64,
}

fn simulate(args: &SimulateArgs) -> anyhow::Result<String> {
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
    let seconds = start.elapsed().as_secs_f64();
    if args.json {
        return json_line(&SimulateReport {
            elo0: args.elo0,
            elo1: args.elo1,
            alpha: args.alpha,
            beta: args.beta,
            batch_pairs: args.batch,
            seed: args.seed,
            runs,
            seconds,
        });
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "SPRT [{}, {}] nElo, alpha {}, beta {}, batch {} pairs, {} tests per point, seed {}",
        args.elo0, args.elo1, args.alpha, args.beta, args.batch, args.tests, args.seed
    );
    let _ = writeln!(
        out,
        "{:>8} {:>8} {:>17} {:>10} {:>20} {:>11} {:>9}",
        "nElo", "Elo", "pass rate ± SE", "calc pass", "mean games ± SE", "calc games", "truncated"
    );
    for r in &runs {
        let _ = writeln!(
            out,
            "{:>8.3} {:>8.3} {:>9.4} ± {:.4} {:>10.4} {:>11.0} ± {:>6.0} {:>11.0} {:>9}",
            r.true_nelo,
            r.true_elo,
            r.pass_rate,
            r.pass_rate_se,
            r.calculator_pass_probability,
            r.mean_games,
            r.mean_games_se,
            r.calculator_expected_games,
            r.truncated
        );
    }
    let _ = writeln!(out, "time: {seconds:.1} s");
    Ok(out)
}

/// The `--json` object of `oracle sprt bench`.
#[derive(Serialize)]
struct BenchReport {
    microseconds_per_call: f64,
    iterations: u64,
    pairs: u64,
    llr: f64,
}

fn bench(args: &BenchArgs) -> anyhow::Result<String> {
    let params = args.bounds.params()?;
    let counts = args.counts.counts(&params)?;
    let start = Instant::now();
    let mut last = counts.status(&params)?;
    for _ in 1..args.iterations {
        last = std::hint::black_box(counts.status(std::hint::black_box(&params))?);
    }
    let report = BenchReport {
        microseconds_per_call: start.elapsed().as_secs_f64() / args.iterations as f64 * 1e6,
        iterations: args.iterations,
        pairs: last.pairs,
        llr: last.llr,
    };
    if args.json {
        return json_line(&report);
    }
    Ok(format!(
        "sprt_status: {:.1} us per call over {} calls (pairs {}, llr {:.4})\n",
        report.microseconds_per_call, report.iterations, report.pairs, report.llr
    ))
}
