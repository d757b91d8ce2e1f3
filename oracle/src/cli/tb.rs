//! `oracle tb`: generate tables of the exact solver and probe positions.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use super::output::outln;
use oracle::tablebase::{Ending, Table, Tablebase, file_name};

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
            render_generated(&table, &path, seconds, json);
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
            let probe = tb.probe(&pos)?;
            if json {
                let value = serde_json::json!({
                    "ending": probe.ending,
                    "wdl": probe.outcome.wdl(),
                    "dtm_plies": probe.outcome.dtm_plies(),
                    "best_move": probe.best_move,
                });
                outln!("{value}");
            } else {
                outln!(
                    "{}: {} for the side to move, dtm {} plies, best move {}",
                    probe.ending,
                    probe.outcome.wdl(),
                    probe.outcome.dtm_plies(),
                    probe.best_move.as_deref().unwrap_or("(none)")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what `tb generate` wrote.
fn render_generated(table: &Table, path: &std::path::Path, seconds: f64, json: bool) {
    let h = table.header();
    if json {
        let value = serde_json::json!({
            "file": path.display().to_string(),
            "seconds": seconds,
            "header": h,
        });
        outln!("{value}");
        return;
    }
    outln!(
        "{} solved in {seconds:.2} s -> {}",
        h.ending,
        path.display()
    );
    outln!("longest forced mate: {} moves", h.max_dtm_moves);
    for (side, c) in [("white", &h.white_to_move), ("black", &h.black_to_move)] {
        outln!(
            "{side} to move: win {} draw {} loss {} illegal {} (longest win {} plies, longest loss {} plies)",
            c.win,
            c.draw,
            c.loss,
            c.invalid,
            c.max_win_plies,
            c.max_loss_plies
        );
    }
    outln!("sha256 {}", h.sha256);
}
