//! `texel`: self-play data generation and Texel tuning for Coherent's hand-crafted evaluation.
//!
//! `texel gen` plays games, `texel tune` fits the evaluation weights and writes Rust tables,
//! `texel openings` writes random openings for a check match; `texel help COMMAND` lists the
//! options. See docs/texel.md.

mod selfplay;
mod tune;

use clap::{Parser, Subcommand};

/// The command line.
#[derive(Parser, Debug)]
#[command(
    name = "texel",
    about = "Self-play data and Texel tuning of Coherent's hand-crafted evaluation (docs/texel.md)"
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
    /// Fit the evaluation weights to a data file and write Rust tables (optionally into the engine).
    Tune(tune::TuneOptions),
    /// Write distinct random openings (EPD) for a self-check match.
    Openings(selfplay::OpeningsOptions),
}

fn main() {
    // clap reports bad command lines itself, with exit code 2; the tools' own errors (files,
    // data, markers) get the same code, so a script sees one code for every bad input.
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Gen(o) => selfplay::run(o),
        Command::Tune(o) => tune::run(o),
        Command::Openings(o) => selfplay::openings(o),
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
    fn defaults_are_those_of_docs_texel_md() {
        let Command::Gen(g) = parse("gen").unwrap().command else {
            panic!("gen")
        };
        assert_eq!((g.nodes, g.games, g.seconds, g.seed), (5000, None, 2400, 1));
        assert_eq!(g.out.to_str(), Some("data/selfplay.txt"));
        let Command::Tune(t) = parse("tune").unwrap().command else {
            panic!("tune")
        };
        assert_eq!(
            (t.lambda, t.iterations, t.lr, t.l2, t.min_count),
            (0.5, 1000, 1.0, 0.0, 1000)
        );
        assert_eq!(t.data.to_str(), Some("data/selfplay.txt"));
        assert_eq!(t.out.to_str(), Some("data/tables.rs"));
        assert!(t.apply.is_none());
        let Command::Openings(o) = parse("openings").unwrap().command else {
            panic!("openings")
        };
        assert_eq!((o.count, o.seed), (1000, 12345));
        assert_eq!(o.out.to_str(), Some("data/openings.epd"));
    }

    #[test]
    fn the_documented_commands_parse() {
        let Command::Tune(t) = parse(
            "tune --data data/selfplay.txt --lambda 0.5 --iterations 1000 --lr 1.0 --l2 0 \
             --min-count 1000 --out data/tables.rs --apply ../../engine",
        )
        .unwrap()
        .command
        else {
            panic!("tune")
        };
        assert_eq!(t.apply.unwrap().to_str(), Some("../../engine"));
        assert!(parse("gen --nodes 5000 --seconds 2100 --seed 1 --out data/selfplay.txt").is_ok());
        assert!(parse("openings --count 600 --seed 12345 --out data/openings.epd").is_ok());
    }

    #[test]
    fn bad_command_lines_are_refused_with_exit_code_2() {
        for (args, kind) in [
            ("gen --node 5000", ErrorKind::UnknownArgument),
            ("gen --nodes many", ErrorKind::ValueValidation),
            ("gen --nodes 0", ErrorKind::ValueValidation),
            ("tune --lambda 1.5", ErrorKind::ValueValidation),
            ("tune --l2=-1", ErrorKind::ValueValidation),
            ("tune --lr x", ErrorKind::ValueValidation),
            ("openings --count", ErrorKind::InvalidValue),
            ("play", ErrorKind::InvalidSubcommand),
        ] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.kind(), kind, "{args}: {e}");
            assert_eq!(e.exit_code(), 2, "{args}");
        }
    }
}
