//! `oracle constitution check`: load the constitution as the oracle enforces it;
//! `oracle constitution forecast`: the rounds a profile is expected to take on a fleet.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::output::{Summary, outln, render};
use oracle::governance::Constitution;
use oracle::governance::constitution::{CONSTITUTION_PATH, ConstitutionCheck};
use oracle::governance::entry::PathKind;
use oracle::verify::plan;
use serde_json::json;

/// Arguments of `oracle constitution`.
#[derive(Debug, Args)]
pub struct ConstitutionArgs {
    #[command(subcommand)]
    command: ConstitutionCommand,
}

/// The constitution's subcommands.
#[derive(Debug, Subcommand)]
enum ConstitutionCommand {
    /// Parse and check a constitution; errors name the file, line, column and field (exit 2).
    Check {
        /// The file [default: constitution/constitution.yaml under --repo].
        file: Option<PathBuf>,
        /// Repository whose constitution is checked.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(from_global)]
        json: bool,
    },
    /// The rounds (and workflow runs) a profile is expected to take at true differences in nElo
    /// when each round gives every shard the same minutes, from Fishtest's calculator.
    Forecast {
        /// The file [default: constitution/constitution.yaml under --repo].
        file: Option<PathBuf>,
        /// Repository whose constitution is read.
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// The profile.
        #[arg(long, value_name = "NAME")]
        profile: String,
        /// A true difference in nElo (repeatable), e.g. `--nelo 2 --nelo 0`.
        #[arg(
            long,
            value_name = "NELO",
            required = true,
            allow_negative_numbers = true
        )]
        nelo: Vec<f64>,
        /// Shards a round is cut into.
        #[arg(long, value_name = "N")]
        shards: NonZeroU32,
        /// Minutes a shard plays in one round (as `oracle verify --no-play --round-minutes`).
        #[arg(long, value_name = "MINUTES")]
        round_minutes: NonZeroU32,
        /// Rounds one workflow run plays at most; prints the runs expected.
        #[arg(long, value_name = "R")]
        rounds_per_run: Option<NonZeroU32>,
        /// Cores of one shard's machine (games at once: the stage's concurrency, at most this).
        #[arg(long, value_name = "C", default_value_t = 2)]
        cores: usize,
        /// The slower engine's bench speed, for stages at a node limit.
        #[arg(long, value_name = "NPS")]
        nodes_per_second: Option<u64>,
        /// Print one JSON object instead of text.
        #[arg(from_global)]
        json: bool,
    },
}

/// Runs `oracle constitution …`.
///
/// # Errors
/// A constitution that cannot be read or does not hold (exit 2).
pub fn run(args: ConstitutionArgs) -> anyhow::Result<ExitCode> {
    let (file, repo, json) = match args.command {
        ConstitutionCommand::Check { file, repo, json } => (file, repo, json),
        ConstitutionCommand::Forecast {
            file,
            repo,
            profile,
            nelo,
            shards,
            round_minutes,
            rounds_per_run,
            cores,
            nodes_per_second,
            json,
        } => {
            let file = file.unwrap_or_else(|| repo.join(CONSTITUTION_PATH));
            let (constitution, _) = Constitution::load_file(&file)?;
            let chosen = constitution
                .profile(&profile)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let nodes_per_second = match nodes_per_second {
                Some(nps) => nps,
                None if chosen.stages.iter().any(|s| !s.tc.is_timed()) => anyhow::bail!(
                    "--nodes-per-second: profile `{profile}` has a stage at a node limit, whose \
                     games last as long as the engines' speed makes them"
                ),
                None => 1,
            };
            let forecasts = nelo
                .iter()
                .map(|&nelo| {
                    plan::rounds(
                        chosen,
                        PathKind::Standard,
                        nelo,
                        shards.get(),
                        round_minutes,
                        nodes_per_second,
                        cores,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            if json {
                outln!(
                    "{}",
                    json!({ "profile": profile, "file": file, "rounds_per_run": rounds_per_run, "forecasts": forecasts })
                );
            } else {
                for forecast in &forecasts {
                    let text =
                        plan::render_rounds(&profile, forecast, rounds_per_run.map(|r| r.get()));
                    outln!("{}", text.trim_end());
                }
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    let file = file.unwrap_or_else(|| repo.join(CONSTITUTION_PATH));
    render(&ConstitutionCheck::load(&file)?, json)?;
    Ok(ExitCode::SUCCESS)
}

impl Summary for ConstitutionCheck {
    const SORTED_KEYS: bool = true;
}
