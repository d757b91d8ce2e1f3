//! `oracle`: the command line over the oracle library.

use clap::Parser;

mod cli;

fn main() -> std::process::ExitCode {
    match cli::Cli::try_parse() {
        Ok(cli) => cli::run(cli),
        Err(error) => cli::report_parse_error(&error),
    }
}
