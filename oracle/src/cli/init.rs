//! `oracle init`: puts the oracle on a repository that has no constitution (docs/init.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::output::outln;
use oracle::builder::Cache;
use oracle::builder::fetch::PinnedFile;
use oracle::errln;
use oracle::governance::contract::GateContract;
use oracle::init::detect::BuildChoice;
use oracle::init::{self, GateChoice, InitRequest};

/// Arguments of `oracle init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The repository to set up (its work tree's root).
    #[arg(long, default_value = ".", value_name = "PATH")]
    repo: PathBuf,
    /// How to build the engine: a shell command that writes the binary to `{out}`
    /// (`make -C src build ARCH=x86-64-modern EXE={out}`), or `cargo` for the Cargo workspace's
    /// binary [default: detected].
    #[arg(long, value_name = "COMMAND")]
    build: Option<String>,
    /// The binary of a Cargo workspace that has several.
    #[arg(long, value_name = "NAME")]
    binary: Option<String>,
    /// What a candidate may change: a directory ending in `/`, or one file (repeatable)
    /// [default: the build's directory].
    #[arg(long, value_name = "DIR")]
    scope: Vec<String>,
    /// The arguments that make the engine print its node count, split at blanks [default: bench].
    #[arg(long, value_name = "ARGS")]
    bench: Option<String>,
    /// A line pattern the node count is read with, `{nodes}` (and `{nps}`) for the numbers
    /// (repeatable) [default: the known format that reads the bench's output].
    #[arg(long, value_name = "PATTERN")]
    bench_output: Vec<String>,
    /// A function whose code must use hardware POPCNT (repeatable; C++ names demangled or
    /// mangled).
    #[arg(long = "gate-symbol", value_name = "NAME", conflicts_with = "no_gate")]
    gate_symbols: Vec<String>,
    /// State that the contract has no gate.
    #[arg(long)]
    no_gate: bool,
    /// A UCI option both engines get, over `Threads=1` and `Hash=16` (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = parse_option)]
    options: Vec<(String, String)>,
    /// The EPD book every stage plays from [default: two books generated with the engine].
    #[arg(long, value_name = "FILE")]
    book: Option<PathBuf>,
    /// Positions in each generated book (a small engine project may start with fewer; each
    /// stage then plays its openings more often).
    #[arg(long, value_name = "N", default_value_t = init::BOOK_POSITIONS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000),
          conflicts_with = "book")]
    book_positions: usize,
    /// A file the build needs that the repository does not hold, fetched outside the sandbox
    /// and placed at PATH before each build: 'URL SHA256 PATH' (repeatable).
    #[arg(long, value_name = "URL SHA256 PATH")]
    fetch: Vec<PinnedFile>,
    /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(from_global)]
    json: bool,
}

/// `NAME=VALUE`.
fn parse_option(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("{text:?} is not NAME=VALUE"))
}

/// Runs `oracle init`; every error is exit 2, and then nothing was written.
pub fn run(args: InitArgs) -> anyhow::Result<ExitCode> {
    let gate = match (args.no_gate, args.gate_symbols.is_empty()) {
        (true, _) => GateChoice::None,
        (false, true) => GateChoice::Unstated,
        (false, false) => GateChoice::Symbols(args.gate_symbols),
    };
    let request = InitRequest {
        repo: args.repo,
        build: BuildChoice {
            command: args.build,
            binary: args.binary,
            scope: args.scope,
            host_toolchain: None,
        },
        bench_args: args
            .bench
            .map(|text| text.split_whitespace().map(str::to_owned).collect()),
        bench_output: args.bench_output,
        gate,
        options: args.options,
        book: args.book,
        book_positions: args.book_positions,
        fetch: args.fetch,
        cache_dir: args.cache_dir.unwrap_or_else(Cache::default_root),
    };
    let done = init::run(&request, &mut |step| errln!("init: {step}"))?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string(&done).context("rendering the result")?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let contract = &done.contract;
    outln!("build      {} ({})", contract.build.kind(), done.found);
    if let Some(native) = contract.build.native() {
        outln!("command    {}", native.command);
    }
    outln!("scope      {}", contract.scope_text());
    outln!(
        "bench      {} → {} nodes ({} format; {} commits with a `{}:` trailer{}{})",
        contract.bench.args.join(" "),
        done.bench_nodes,
        done.bench_format,
        done.trailer_commits,
        contract.bench.trailer.key,
        if contract.bench.trailer.digit_groups {
            ", digits grouped"
        } else {
            ""
        },
        if contract.bench.trailer.anywhere {
            ", on any line of the message"
        } else {
            ""
        }
    );
    let gate = match &contract.gate {
        GateContract::Symbols(rules) => format!(
            "POPCNT in {} (callee depth {})",
            rules.symbols.join(", "),
            rules.callee_depth
        ),
        GateContract::None => "none".to_owned(),
    };
    outln!("gate       {gate}");
    let options: Vec<String> = contract
        .option_pairs()
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    outln!("options    {}", options.join(", "));
    for pin in &contract.fetch {
        outln!(
            "fetch      {} → {} (sha256 {})",
            pin.url,
            pin.path,
            pin.sha256
        );
    }
    outln!(
        "committed  {} ({} files):",
        done.setup_commit,
        done.committed.len()
    );
    for path in &done.committed {
        outln!("             {path}");
    }
    outln!(
        "genesis    {} (binary {}, head={})",
        done.genesis,
        done.binary_sha256,
        done.register_head
    );
    outln!(
        "next       review, then: git add {} && git commit -m 'register: genesis'",
        done.genesis
    );
    Ok(ExitCode::SUCCESS)
}
