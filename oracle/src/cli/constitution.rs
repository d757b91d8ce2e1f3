//! `oracle constitution check`: load the constitution as the oracle enforces it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::output::{Summary, render};
use oracle::governance::constitution::{CONSTITUTION_PATH, ConstitutionCheck};

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
}

/// Runs `oracle constitution …`.
///
/// # Errors
/// A constitution that cannot be read or does not hold (exit 2).
pub fn run(args: ConstitutionArgs) -> anyhow::Result<ExitCode> {
    let ConstitutionCommand::Check { file, repo, json } = args.command;
    let file = file.unwrap_or_else(|| repo.join(CONSTITUTION_PATH));
    render(&ConstitutionCheck::load(&file)?, json)?;
    Ok(ExitCode::SUCCESS)
}

impl Summary for ConstitutionCheck {
    const SORTED_KEYS: bool = true;
}
