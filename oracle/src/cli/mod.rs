//! The command-line surface (README.md, "The oracle's commands"): parse, call a library, render.
//!
//! Each area has its own file here with its clap arguments and a `run` that
//! returns the exit status; errors reaching this level are bad input or
//! failed I/O and exit with status 2 after a message that names the culprit.
//! The conventions every command keeps (the global `--json`, one-line JSON, JSON errors, exit
//! statuses) are docs/cli.md.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use oracle::errln;
use output::outln;

mod book;
mod build_cmd;
mod check_engine;
mod constitution;
mod init;
mod match_cmd;
mod output;
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
    /// Print one JSON object on one line instead of text; errors too become one JSON object
    /// (`{"error": …, "exit_code": 2}`) on standard output.
    #[arg(long, global = true)]
    json: bool,
}

/// Every subcommand of the oracle.
#[derive(Debug, Subcommand)]
enum Command {
    /// The whole gatekeeper: resolve, build and bind, gate, bench, proof, stages, verdict.
    Verify(Box<verify::VerifyArgs>),
    /// The constitution: check it as the oracle enforces it; forecast a profile on a fleet.
    Constitution(constitution::ConstitutionArgs),
    /// Put the oracle on a repository that has no constitution: contract, books, workflows, genesis.
    Init(Box<init::InitArgs>),
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
    /// UCI conformance check of one engine: handshake, options, pings, each limit kind, `stop`.
    CheckEngine(check_engine::CheckEngineArgs),
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

/// Runs one parsed command line and maps its outcome to the exit status (0 ok, 1 rejected, 2
/// error; 141 when the reader closed standard output, see [`output`]).
pub fn run(cli: Cli) -> ExitCode {
    let code = match execute(cli.command) {
        Ok(code) => code,
        Err(error) => report_error(&render_chain(&error), cli.json),
    };
    output::lost_status().unwrap_or(code)
}

/// Prints an error that stopped the command and returns exit status 2: one JSON object on
/// standard output under `--json` (a consumer reads one document whatever happens), else
/// `error: …` on standard error.
pub fn report_error(message: &str, json: bool) -> ExitCode {
    if json {
        let value = serde_json::json!({ "error": message, "exit_code": EXIT_ERROR });
        outln!("{value}");
    } else {
        errln!("error: {message}");
    }
    ExitCode::from(EXIT_ERROR)
}

/// Reports a command line that clap did not accept: help and version as clap prints them; a
/// usage error as clap prints it or, when `--json` is on the command line, as the JSON error
/// object. The exit status is clap's (2 for usage errors).
pub fn report_parse_error(error: &clap::Error) -> ExitCode {
    if error.use_stderr() && std::env::args_os().any(|arg| arg == "--json") {
        let text = error.to_string();
        let first = text.split("\n\n").next().unwrap_or(&text);
        let code = report_error(first.trim().trim_start_matches("error: "), true);
        return output::lost_status().unwrap_or(code);
    }
    let _ = error.print();
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(EXIT_ERROR))
}

/// The error with its causes, outermost first, joined by `: `. A cause whose text the message
/// already holds is left out: many error types quote their source in their own text (so that
/// `to_string()` alone is complete), and printing the chain as well would say it twice.
fn render_chain(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
    }
    message
}

/// Dispatches one subcommand to its area's `run`.
fn execute(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Verify(args) => verify::run(*args),
        Command::Constitution(args) => constitution::run(args),
        Command::Init(args) => init::run(*args),
        Command::Register(args) => register::run(args),
        Command::Sprt(args) => sprt::run(args),
        Command::Book(args) => book::run(args),
        Command::Tune(args) => tune::run(args),
        Command::Match(args) => match_cmd::run_match_command(*args),
        Command::CheckEngine(args) => check_engine::run(args),
        Command::Merge(args) => match_cmd::run_merge_command(args),
        Command::Build(args) => build_cmd::run_build(args),
        Command::Gate(args) => build_cmd::run_gate(args),
        Command::Bench(args) => build_cmd::run_bench(args),
        Command::Proof(args) => proof::run(args),
        Command::Tb(args) => tb::run(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_already_quoted_are_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let text = io.to_string();
        let quoting = anyhow::Error::new(io).context(format!("cannot read book b.epd: {text}"));
        assert_eq!(
            render_chain(&quoting),
            format!("cannot read book b.epd: {text}")
        );
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let plain = anyhow::Error::new(io).context("--outcomes: cannot read p.txt");
        assert_eq!(
            render_chain(&plain),
            format!("--outcomes: cannot read p.txt: {text}")
        );
    }
}
