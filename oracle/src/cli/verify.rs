//! `oracle verify`: the whole gatekeeper (docs/architecture.md).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::EXIT_ERROR;
use super::output::outln;
use oracle::builder::Cache;
use oracle::errln;
use oracle::play::shard::Shard;
use oracle::verify::{self, Mode, Request, StepReporter};

/// Arguments of `oracle verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Candidate commit (default: the commit on HEAD's first-parent line that brought in HEAD's
    /// `engine/`, so a withdrawal is not taken for a change).
    commit: Option<String>,
    /// Predecessor (default: the candidate's first parent).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// Profile of the constitution (`official`, `workstation`, `smoke`, …); always named, since
    /// profiles differ from seconds to a fleet's weeks (the plan is printed before any game).
    #[arg(long, value_name = "NAME")]
    profile: String,
    /// The git repository (only its objects are read, never its work tree).
    #[arg(long, default_value = ".", value_name = "PATH")]
    repo: PathBuf,
    /// Evidence directory: binding record, engines, PGN, shard files, entry, report; an
    /// interrupted run resumes from it.
    #[arg(long, default_value = "oracle-out", value_name = "DIR")]
    out: PathBuf,
    /// Print one JSON object (the run's result) on stdout.
    #[arg(from_global)]
    json: bool,
    /// Append the entry to the repository's register (binding profiles only).
    #[arg(long)]
    append: bool,
    /// Discard another run's evidence in --out (a different candidate, predecessor or profile)
    /// instead of refusing the directory; only files oracle verify writes are removed.
    #[arg(long, conflicts_with_all = ["shard", "no_play"])]
    fresh: bool,
    /// Take over the pairs an earlier run's --out (one your oracle wrote, played here or in
    /// rounds) holds of the same stages instead of playing them again: only where they are the
    /// same match (the same two binaries, profile, constitution, path, book, seed and clock), as
    /// when a change is submitted again under a new commit; the entry names the runs that played
    /// them. With --no-play the rounds start after them; a shard never takes pairs over.
    #[arg(long, value_name = "DIR", conflicts_with = "shard")]
    games_from: Option<PathBuf>,
    /// Play only shard K of N of the current stage, up to the end of the round the last
    /// --no-play planned (a fleet's jobs: CI matrix, Slurm array, Kubernetes Indexed Job).
    #[arg(long, value_name = "K/N", conflicts_with_all = ["no_play", "append"])]
    shard: Option<Shard>,
    /// Play no games: merge the shard files in --out, apply the SPRT, decide or plan the next
    /// round (recorded in --out, where every shard of the round reads it).
    #[arg(long)]
    no_play: bool,
    /// Run every check before the first game (build twice and bind, gate, bench against the
    /// trailer, proof) and stop: no game, no verdict, no entry.
    #[arg(long, conflicts_with_all = ["shard", "no_play", "append", "games_from"])]
    checks_only: bool,
    /// With --no-play: size the next round to what one shard plays in MINUTES (from the stage's
    /// clock, or its node limit at this machine's bench speed, and its concurrency) instead of
    /// the profile's batch_size pairs a shard.
    #[arg(long, value_name = "MINUTES", requires = "no_play")]
    round_minutes: Option<std::num::NonZeroU32>,
    /// The independent confirmation (constitution Annex A3.3) of a Randfall candidate, written by
    /// someone other than its author (docs/randfall.md); required on the Randfall path only.
    #[arg(long, value_name = "FILE")]
    confirmation: Option<PathBuf>,
    /// Build cache directory [default: $XDG_CACHE_HOME/coherent-oracle or ~/.cache/coherent-oracle].
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

/// Runs the pipeline; the exit status is the run's (0 accepted, 1 rejected, 2 error).
pub fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let mode = match (args.shard, args.no_play) {
        (Some(shard), _) => Mode::Shard(shard),
        (None, true) => Mode::NoPlay {
            round_minutes: args.round_minutes,
        },
        (None, false) => Mode::Local,
    };
    let request = Request {
        repo: args.repo,
        candidate: args.commit,
        base: args.base,
        profile: args.profile,
        out: args.out,
        append: args.append,
        mode,
        checks_only: args.checks_only,
        cache_dir: args.cache_dir.unwrap_or_else(Cache::default_root),
        confirmation: args.confirmation,
        fresh: args.fresh,
        games_from: args.games_from,
    };
    let mut reporter = StepReporter::new();
    let result = verify::run(&request, &mut reporter);
    // An error (exit 2) is reported as every command reports one (docs/cli.md, "Output"):
    // under `--json` the object carries `error`; without it the message goes to standard error
    // and standard output stays empty.
    let failed = result.exit_code == EXIT_ERROR;
    if args.json {
        outln!("{}", serde_json::to_string(&result)?);
    } else if failed {
        errln!("error: {}", result.reason);
        if let Some(report) = &result.report {
            errln!("report: {}", report.markdown.display());
        }
    } else {
        outln!("{}", result.reason);
        if result.profile_binding == Some(false) {
            // The last lines a newcomer reads after the README's demo say what it is worth.
            outln!(
                "not binding: profile `{}` shows that the pipeline runs, not what the change is \
                 worth; the verdicts that count are in register/, reached under a binding profile",
                result.profile
            );
        }
        if let Some(entry) = &result.entry {
            outln!("entry: {}", entry.display());
        }
        if let Some(id) = &result.appended {
            outln!("appended: register/{id}.yaml");
        }
        if let Some(report) = &result.report {
            outln!("report: {}", report.markdown.display());
        }
    }
    Ok(ExitCode::from(result.exit_code))
}
