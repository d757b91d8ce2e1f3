//! `oracle`: the command line over the oracle library.

use clap::Parser;

mod cli;

fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    cli::run(cli)
}
