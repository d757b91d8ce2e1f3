//! The command-line surface (ARCHITECTURE.md §7): parse, call a library, render.
//!
//! Each area has its own file here with its clap arguments and a `run` that
//! returns the exit status; errors reaching this level are bad input or
//! failed I/O and exit with status 2 after a message that names the culprit.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod tb;

/// The Coherent oracle: decides, with pre-registered statistics, whether an engine change may land.
#[derive(Debug, Parser)]
#[command(name = "oracle", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Every subcommand of the oracle.
#[derive(Debug, Subcommand)]
enum Command {
    /// The exact endgame solver: generate tables, probe positions.
    Tb(tb::TbArgs),
}

/// Exit status for bad input or an error that stopped the command.
pub const EXIT_ERROR: u8 = 2;

/// Runs one parsed command line and maps its outcome to the exit status (0 ok, 1 rejected, 2 error).
pub fn run(cli: Cli) -> ExitCode {
    match execute(cli.command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Dispatches one subcommand to its area's `run`.
fn execute(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Tb(args) => tb::run(args),
    }
}
