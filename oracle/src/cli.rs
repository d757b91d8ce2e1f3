//! The command-line surface (ARCHITECTURE.md §7): parse, call a library, render.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Coherent oracle: decides, with pre-registered statistics, whether an engine change may land.
#[derive(Debug, Parser)]
#[command(name = "oracle", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Every subcommand of the oracle.
#[derive(Debug, Subcommand)]
enum Command {}

/// Runs one parsed command line and maps its outcome to the exit status (0 ok, 1 rejected, 2 error).
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {}
}
