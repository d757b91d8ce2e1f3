//! `oracle tb`: generate tables of the exact solver and probe positions.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use super::output::{Summary, render};
use oracle::tablebase::{Ending, Generated, Probe, Tablebase, file_name};

/// Arguments of `oracle tb`.
#[derive(Debug, Args)]
pub struct TbArgs {
    #[command(subcommand)]
    command: TbCommand,
    /// Table cache directory (default `~/.cache/coherent-oracle/tb`).
    #[arg(long, global = true)]
    cache_dir: Option<PathBuf>,
}

/// The `tb` subcommands.
#[derive(Debug, Subcommand)]
enum TbCommand {
    /// Solve an ending (e.g. KBNK) and write its table file.
    Generate {
        /// The ending: K + white pieces + K + black pieces, e.g. KQK, KBNK, KQKR.
        ending: String,
        /// Output file (default: the cache directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the header as JSON.
        #[arg(from_global)]
        json: bool,
    },
    /// Value, depth to mate and best move of a position.
    Probe {
        /// The position as FEN.
        fen: String,
        /// UCI moves played from the FEN before probing.
        #[arg(long, num_args = 0..)]
        moves: Vec<String>,
        /// Print one JSON object: ending, wdl, dtm_plies, best_move.
        #[arg(from_global)]
        json: bool,
    },
}

/// Runs `oracle tb`.
pub fn run(args: TbArgs) -> anyhow::Result<ExitCode> {
    let cache_dir = args.cache_dir.or_else(Tablebase::default_cache_dir);
    let tb = Tablebase::new(cache_dir);
    match args.command {
        TbCommand::Generate { ending, out, json } => {
            let ending: Ending = ending.parse().context("argument ENDING")?;
            let started = Instant::now();
            let table = tb.generate(&ending)?;
            let seconds = started.elapsed().as_secs_f64();
            let path = out
                .or_else(|| tb.cache_path(&ending))
                .unwrap_or_else(|| PathBuf::from(file_name(&ending)));
            table.write(&path)?;
            let generated = Generated {
                file: path.display().to_string(),
                seconds,
                header: table.header().clone(),
            };
            render(&generated, json)?;
        }
        TbCommand::Probe { fen, moves, json } => {
            let mut pos: Chess = fen
                .parse::<Fen>()
                .with_context(|| format!("argument FEN `{fen}`"))?
                .into_position(CastlingMode::Standard)
                .with_context(|| format!("argument FEN `{fen}`"))?;
            for text in &moves {
                let m = text
                    .parse::<UciMove>()
                    .ok()
                    .and_then(|u| u.to_move(&pos).ok())
                    .with_context(|| format!("argument --moves: `{text}` is not legal here"))?;
                pos.play_unchecked(m);
            }
            render(&tb.probe(&pos)?, json)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

impl Summary for Generated {
    const SORTED_KEYS: bool = true;
}

impl Summary for Probe {
    const SORTED_KEYS: bool = true;
}
