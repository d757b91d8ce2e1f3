//! The command-line surface (README.md, "The oracle's commands"): parse, call a library, render.
//!
//! Each area has its own file here with its clap arguments and a `run` that
//! returns the exit status; errors reaching this level are bad input or
//! failed I/O and exit with status 2 after a message that names the culprit.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod book;
mod build_cmd;
mod constitution;
mod match_cmd;
mod proof;
mod register;
mod sprt;
mod tb;
mod tune;
mod verify;

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
    /// The whole gatekeeper: resolve, build and bind, gate, bench, proof, stages, verdict.
    Verify(Box<verify::VerifyArgs>),
    /// The constitution: check it as the oracle enforces it.
    Constitution(constitution::ConstitutionArgs),
    /// The register: verify, show, append, replay, genesis.
    Register(register::RegisterArgs),
    /// SPRT statistics: status, replay, calculator, simulation.
    Sprt(sprt::SprtArgs),
    /// Opening books: generate from the engine, check any EPD/PGN book.
    Book(book::BookArgs),
    /// SPSA tuning of the engine's tunables and the end-rule model (docs/spsa.md).
    Tune(tune::TuneArgs),
    /// Play a match between two UCI engines (game pairs, clocks, faults, PGN, live SPRT, shards).
    Match(Box<match_cmd::MatchArgs>),
    /// Combine shard results of `oracle match --shard` and apply the SPRT at round boundaries.
    Merge(match_cmd::MergeArgs),
    /// Build a commit twice in different directories; require equal sha256; cache the binary.
    Build(build_cmd::BuildArgs),
    /// Build-shape gate: hardware POPCNT in the evaluation's fast variant, no software popcount.
    Gate(build_cmd::GateArgs),
    /// Bench signature: run `<binary> bench` twice and require the same node count.
    Bench(build_cmd::BenchArgs),
    /// Proofs of the Randfall path: run a proof spec, or the conversion study protocol.
    Proof(proof::ProofArgs),
    /// The exact endgame solver: generate tables, probe positions.
    Tb(tb::TbArgs),
}

/// Exit status for a rejected change or an unsound register.
pub const EXIT_REJECTED: u8 = 1;

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
        Command::Verify(args) => verify::run(*args),
        Command::Constitution(args) => constitution::run(args),
        Command::Register(args) => register::run(args),
        Command::Sprt(args) => sprt::run(args),
        Command::Book(args) => book::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Match(args) => match_cmd::run_match_command(*args),
        Command::Merge(args) => match_cmd::run_merge_command(args),
        Command::Build(args) => build_cmd::run_build(args),
        Command::Gate(args) => build_cmd::run_gate(args),
        Command::Bench(args) => build_cmd::run_bench(args),
        Command::Proof(args) => proof::run(args),
        Command::Tb(args) => tb::run(args),
    }
}
