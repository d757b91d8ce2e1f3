//! `texel`: self-play data generation and training of Coherent's evaluation network.
//!
//! `texel gen` plays games, `texel openings` writes random openings for a check match, `texel
//! nnue` trains the evaluation network; `texel help COMMAND` lists the options. See docs/nnue.md.

mod data;
mod nnue;
mod selfplay;

use clap::{Parser, Subcommand};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "texel",
    about = "Self-play data and training of Coherent's evaluation network (docs/nnue.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// One subcommand per tool.
#[derive(Subcommand, Debug)]
enum Command {
    /// Play the engine against itself and append labelled quiet positions to a data file.
    Gen(selfplay::GenOptions),
    /// Write distinct random openings (EPD) for a self-check match.
    Openings(selfplay::OpeningsOptions),
    /// Train the evaluation network on a data file and write its quantized file.
    Nnue(nnue::NnueOptions),
}

/// A command-line number from 0 to 1.
fn unit_interval(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{v}` is not a number from 0 to 1")),
    }
}

/// A command-line number that is finite and at least 0.
fn non_negative(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{v}` is not a finite number of at least 0")),
    }
}

fn main() {
    // clap reports bad command lines itself, with exit code 2; the tools' own errors (files,
    // data, markers) get the same code, so a script sees one code for every bad input.
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Gen(o) => selfplay::run(o),
        Command::Openings(o) => selfplay::openings(o),
        Command::Nnue(o) => nnue::run(o),
    };
    if let Err(e) = result {
        eprintln!("texel: error: {e}");
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use clap::error::ErrorKind;

    fn parse(args: &str) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("texel").chain(args.split_whitespace()))
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_are_those_of_docs_nnue_md() {
        let Command::Gen(g) = parse("gen").unwrap().command else {
            panic!("gen")
        };
        assert_eq!((g.nodes, g.games, g.seconds, g.seed), (5000, None, 2400, 1));
        assert_eq!(g.out.to_str(), Some("data/selfplay.txt"));
        let Command::Openings(o) = parse("openings").unwrap().command else {
            panic!("openings")
        };
        assert_eq!((o.count, o.seed), (1000, 12345));
        assert_eq!(o.out.to_str(), Some("data/openings.epd"));
        let Command::Nnue(n) = parse("nnue").unwrap().command else {
            panic!("nnue")
        };
        assert_eq!(
            (
                n.hidden, n.buckets, n.epochs, n.batch, n.lr, n.lambda, n.seed
            ),
            (256, 8, 20, 4096, 0.001, 0.0, 1)
        );
        assert_eq!(n.data.to_str(), Some("data/selfplay.txt"));
        assert_eq!(n.out.to_str(), Some("data/coherent.nnue"));
    }

    #[test]
    fn the_documented_commands_parse() {
        assert!(parse("gen --nodes 5000 --seconds 2100 --seed 1 --out data/selfplay.txt").is_ok());
        assert!(parse("openings --count 600 --seed 12345 --out data/openings.epd").is_ok());
        assert!(parse("nnue --data data/selfplay.txt --out data/coherent.nnue").is_ok());
        assert!(
            parse("nnue --init ../../engine/src/eval/coherent.nnue --epochs 4 --lr 0.0003").is_ok()
        );
    }

    #[test]
    fn bad_command_lines_are_refused_with_exit_code_2() {
        for (args, kind) in [
            ("gen --node 5000", ErrorKind::UnknownArgument),
            ("gen --nodes many", ErrorKind::ValueValidation),
            ("gen --nodes 0", ErrorKind::ValueValidation),
            ("nnue --lr x", ErrorKind::ValueValidation),
            ("tune", ErrorKind::InvalidSubcommand),
            ("openings --count", ErrorKind::InvalidValue),
            ("nnue --hidden 0", ErrorKind::ValueValidation),
            ("nnue --buckets 17", ErrorKind::ValueValidation),
            ("nnue --lambda 2", ErrorKind::ValueValidation),
            ("play", ErrorKind::InvalidSubcommand),
        ] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.kind(), kind, "{args}: {e}");
            assert_eq!(e.exit_code(), 2, "{args}");
        }
    }
}
