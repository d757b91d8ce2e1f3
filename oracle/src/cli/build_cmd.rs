//! `oracle build`, `oracle gate`, `oracle bench`: reproducible builds, the build-shape gate and
//! the bench signature (docs/architecture.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use oracle::builder::sandbox::engine::EngineIsolation;
use oracle::builder::{
    self, BuildError, BuildRecipe, BuildRequest, Cache, EngineBuild, Limits, Sandbox, bench,
};
use oracle::errln;
use oracle::gate;

use super::EXIT_REJECTED;
use super::output::{out, outln};

/// Arguments of `oracle build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Commit to build: a full id, an unambiguous short id, a branch or `HEAD`.
    pub commit: String,
    /// Repository to read the commit from.
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Build recipe as YAML: the constitution's `build:` mapping (Cargo), or an engine contract's
    /// `engine.build` mapping with its `kind` (`make`, `cmake`, `command`, `cargo`) [default: the
    /// standard recipe].
    #[arg(long)]
    pub recipe: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(from_global)]
    pub json: bool,
}

/// Arguments of `oracle gate`.
#[derive(Debug, Args)]
pub struct GateArgs {
    /// The engine binary to inspect.
    pub binary: PathBuf,
    /// Entry symbol of the evaluation's fast variant (repeatable) [default: coherent_evaluate_popcnt].
    #[arg(long = "symbol")]
    pub symbols: Vec<String>,
    /// Levels of direct callees inspected below each symbol (the constitution's `gate.callee_depth`).
    #[arg(long, value_name = "N", default_value_t = gate::DEFAULT_CALLEE_DEPTH)]
    pub callee_depth: u32,
    /// Print one JSON object instead of text.
    #[arg(from_global)]
    pub json: bool,
}

/// Arguments of `oracle bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The engine binary to run `bench` on.
    pub binary: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(from_global)]
    pub json: bool,
}

/// Builds a commit twice, bit-identically, through the cache.
pub fn run_build(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let build = match &args.recipe {
        Some(path) => read_recipe(path)?,
        None => EngineBuild::Cargo(BuildRecipe::standard()),
    };
    let sandbox = Sandbox::detect(Limits::build());
    if !sandbox.isolation.confines_writes() {
        errln!(
            "warning: bubblewrap is not usable here; builds run with {} (install `bubblewrap` for full isolation)",
            if sandbox.isolation.cuts_network() {
                "network cut by `unshare -n` only"
            } else {
                "no namespace isolation"
            }
        );
    }
    let request = BuildRequest {
        repo: args.repo,
        rev: args.commit,
        build,
        fetch: Vec::new(),
        cache_dir: args.cache_dir.unwrap_or_else(Cache::default_root),
        registry: builder::host_registry(),
        sandbox,
        fresh: false,
    };
    // A spinner on stderr while cargo runs; indicatif hides it when stderr is not a terminal.
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_message(format!("building {} twice in two directories", request.rev));
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    let result = builder::build_commit(&request);
    spinner.finish_and_clear();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(error) if error.rejects_candidate() => {
            report_rejection(&error, args.json);
            return Ok(ExitCode::from(EXIT_REJECTED));
        }
        Err(error) => return Err(error.into()),
    };
    if args.json {
        outln!("{}", serde_json::to_string(&outcome)?);
    } else {
        outln!("commit     {}", outcome.commit);
        outln!("tree       {}", outcome.tree);
        outln!("toolchain  {}", outcome.toolchain);
        outln!("recipe     {}", outcome.recipe_sha256);
        outln!("binary     {}", outcome.binary.display());
        outln!("sha256     {}", outcome.sha256);
        let how = if outcome.cached {
            "yes (cached)"
        } else {
            "yes (two builds, equal sha256)"
        };
        outln!("reproduced {how}");
        if let Some(isolation) = outcome.isolation {
            outln!(
                "isolation  {}",
                serde_json::to_value(isolation)?.as_str().unwrap_or("?")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A recipe file: an engine contract's build (it names its `kind`) or a Cargo `build:` recipe.
fn read_recipe(path: &std::path::Path) -> anyhow::Result<EngineBuild> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading recipe {}", path.display()))?;
    let value: serde_norway::Value = serde_norway::from_str(&text)
        .with_context(|| format!("recipe {}: not YAML", path.display()))?;
    let has_kind = value.get("kind").is_some();
    let parsed = if has_kind {
        serde_norway::from_value::<EngineBuild>(value)
    } else {
        serde_norway::from_value::<BuildRecipe>(value).map(EngineBuild::Cargo)
    };
    parsed.with_context(|| format!("recipe {}: not a valid build recipe", path.display()))
}

fn report_rejection(error: &BuildError, json: bool) {
    if json {
        let sections = match error {
            BuildError::NotReproducible { sections, .. } => sections.clone(),
            _ => Vec::new(),
        };
        let object = serde_json::json!({
            "reproduced": false,
            "error": error.to_string(),
            "differing_sections": sections,
        });
        outln!("{object}");
    }
    errln!("rejected: {error}");
}

/// Runs the build-shape gate on a binary.
pub fn run_gate(args: GateArgs) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.binary)
        .with_context(|| format!("reading {}", args.binary.display()))?;
    let symbols = if args.symbols.is_empty() {
        vec![gate::DEFAULT_SYMBOL.to_owned()]
    } else {
        args.symbols
    };
    let report = gate::inspect(&bytes, &symbols, args.callee_depth)
        .with_context(|| format!("inspecting {}", args.binary.display()))?;
    if args.json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        out!("{}", gate::render(&report));
    }
    Ok(if report.pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_REJECTED)
    })
}

/// Measures the bench signature twice and refuses a moving one.
pub fn run_bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let binary = std::path::absolute(&args.binary)
        .with_context(|| format!("resolving {}", args.binary.display()))?;
    anyhow::ensure!(
        binary.is_file(),
        "engine binary {} does not exist",
        binary.display()
    );
    let isolation = EngineIsolation::detect();
    errln!("isolation: {}", isolation.describe());
    match bench::measure(&binary, &bench::BenchRules::standard(), isolation, 2) {
        Ok(signature) => {
            if args.json {
                let object = serde_json::json!({
                    "nodes": signature.nodes,
                    "runs": signature.runs,
                    "deterministic": true,
                    "isolation": isolation.describe(),
                });
                outln!("{object}");
            } else {
                let nps: Vec<String> = signature
                    .runs
                    .iter()
                    .map(|run| run.nps.to_string())
                    .collect();
                outln!("Bench: {}", signature.nodes);
                outln!(
                    "nps: {} (deterministic over {} runs)",
                    nps.join(", "),
                    signature.runs.len()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(error @ bench::BenchError::NonDeterministic { .. }) => {
            if args.json {
                outln!(
                    "{}",
                    serde_json::json!({ "deterministic": false, "error": error.to_string() })
                );
            }
            errln!("rejected: {error}");
            Ok(ExitCode::from(EXIT_REJECTED))
        }
        Err(error) => Err(error.into()),
    }
}
