//! The KBNK study protocol (docs/randfall.md) as a reproducible, seeded run.
//!
//! N distinct random legal positions of one ending that the solver rates won for the side to
//! move (the stronger side, White), half-move clock 0, no history, all drawn from the seed
//! before the first search; each engine plays the strong side of every position at a node
//! budget against the solver's defence. Two engines give a paired table and the exact sign test.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::{Board, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Piece, Setup, Square};

use super::ProofError;
use super::game::{GameOutcome, play_conversion};
use super::player::EnginePlayer;
use super::sign_test::sign_test_p;
use super::unchanged::{Comparison, compare};
use crate::integrity;
use crate::tablebase::{Ending, Outcome, Tablebase};

/// Draws `count` distinct random legal positions of `ending`, White (the stronger side) to
/// move, clock 0, that the solver rates won for White.
pub fn won_positions(
    tb: &Tablebase,
    ending: &Ending,
    count: usize,
    seed: u64,
) -> Result<Vec<Chess>, ProofError> {
    let table = tb.table(ending)?;
    if table.header().white_to_move.win < count as u64 {
        return Err(ProofError::TooFewWins {
            ending: ending.to_string(),
            wanted: count,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let mut board = Board::empty();
        let mut free: Vec<u32> = (0..64).collect();
        for (color, role) in ending.layout() {
            let sq = free.swap_remove(rng.random_range(0..free.len()));
            board.set_piece_at(Square::new(sq), Piece { color, role });
        }
        let setup = Setup {
            board,
            turn: Color::White,
            ..Setup::empty()
        };
        let Ok(pos) = Chess::from_setup(setup, CastlingMode::Standard) else {
            continue;
        };
        if matches!(tb.value(&pos)?, Outcome::Win(_)) && seen.insert(fen_of(&pos)) {
            out.push(pos);
        }
    }
    Ok(out)
}

/// FEN of a position (clocks included).
#[must_use]
pub fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// One engine's games of a study.
#[derive(Clone, Debug, Serialize)]
pub struct EngineRun {
    /// The binary.
    pub engine: PathBuf,
    /// sha256 of the binary, bound before the first search.
    pub sha256: String,
    /// Number of positions converted.
    pub converted: usize,
    /// One game per position, in position order.
    pub games: Vec<GameOutcome>,
}

/// The paired comparison of two engines over the same positions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Paired {
    /// Converted by both.
    pub both: usize,
    /// Converted by the first engine only.
    pub only_first: usize,
    /// Converted by the second engine only.
    pub only_second: usize,
    /// Converted by neither.
    pub neither: usize,
    /// Exact two-sided sign test over the discordant pairs.
    pub sign_test_p: f64,
}

impl Paired {
    /// Tallies two engines' results position by position.
    #[must_use]
    pub fn of(first: &[bool], second: &[bool]) -> Paired {
        let count = |a: bool, b: bool| {
            first
                .iter()
                .zip(second)
                .filter(|&(&x, &y)| x == a && y == b)
                .count()
        };
        let (only_first, only_second) = (count(true, false), count(false, true));
        Paired {
            both: count(true, true),
            only_first,
            only_second,
            neither: count(false, false),
            sign_test_p: sign_test_p(only_first as u64, only_second as u64),
        }
    }
}

/// Everything a study run found.
#[derive(Clone, Debug, Serialize)]
pub struct StudyReport {
    /// The ending studied.
    pub ending: String,
    /// Seed of the position draw.
    pub seed: u64,
    /// Node budget per engine move.
    pub nodes: u64,
    /// The positions, fixed before the first search.
    pub positions: Vec<String>,
    /// sha256 of the positions, one FEN per line.
    pub positions_sha256: String,
    /// One entry per engine.
    pub engines: Vec<EngineRun>,
    /// The paired table when two engines ran.
    pub paired: Option<Paired>,
    /// The control comparison (`unchanged`) when two engines and control positions were given.
    pub control: Option<Vec<Comparison>>,
}

/// A study to run.
#[derive(Clone, Debug)]
pub struct Study {
    /// The ending.
    pub ending: Ending,
    /// Number of positions.
    pub positions: usize,
    /// Nodes per engine move.
    pub nodes: u64,
    /// Seed of the position draw.
    pub seed: u64,
    /// One or two engine binaries.
    pub engines: Vec<PathBuf>,
    /// Control positions of other endings (compared when two engines run).
    pub control: Vec<Chess>,
    /// Games played at once (one engine process each).
    pub concurrency: usize,
}

/// Runs `study`; `on_game(engine, position, outcome)` is called as each game finishes.
pub fn run_study(
    study: &Study,
    tb: &Tablebase,
    on_game: &(dyn Fn(usize, usize, &GameOutcome) + Sync),
) -> Result<StudyReport, ProofError> {
    let positions = won_positions(tb, &study.ending, study.positions, study.seed)?;
    let fens: Vec<String> = positions.iter().map(fen_of).collect();
    let listing: String = fens.iter().map(|f| format!("{f}\n")).collect();
    let positions_sha256 = integrity::sha256_hex(listing.as_bytes());
    let hashes = study
        .engines
        .iter()
        .map(|e| integrity::sha256_file(e))
        .collect::<Result<Vec<_>, _>>()?;

    let jobs: Vec<(usize, usize)> = (0..study.engines.len())
        .flat_map(|e| (0..positions.len()).map(move |p| (e, p)))
        .collect();
    let results: Mutex<Vec<Option<GameOutcome>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    let failure: Mutex<Option<ProofError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..study.concurrency.max(1) {
            scope.spawn(|| {
                let mut players: Vec<EnginePlayer> = study
                    .engines
                    .iter()
                    .map(|e| EnginePlayer::new(e, study.nodes))
                    .collect();
                loop {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(e, p)) = jobs.get(job) else { break };
                    match conversion_game(&mut players[e], &positions[p], tb) {
                        Ok(outcome) => {
                            on_game(e, p, &outcome);
                            results.lock().expect("results lock")[job] = Some(outcome);
                        }
                        Err(err) => {
                            *failure.lock().expect("failure lock") = Some(err);
                            next.store(jobs.len(), Ordering::Relaxed);
                        }
                    }
                }
                players.into_iter().for_each(EnginePlayer::quit);
            });
        }
    });
    if let Some(err) = failure.into_inner().expect("failure lock") {
        return Err(err);
    }
    let mut games = results.into_inner().expect("results lock").into_iter();
    let engines: Vec<EngineRun> = study
        .engines
        .iter()
        .zip(hashes)
        .map(|(engine, sha256)| {
            let games: Vec<GameOutcome> = games
                .by_ref()
                .take(positions.len())
                .map(|g| g.expect("every game ran"))
                .collect();
            EngineRun {
                engine: engine.clone(),
                sha256,
                converted: games.iter().filter(|g| g.converted()).count(),
                games,
            }
        })
        .collect();
    let converted = |run: &EngineRun| {
        run.games
            .iter()
            .map(GameOutcome::converted)
            .collect::<Vec<_>>()
    };
    let (paired, control) = match engines.as_slice() {
        [first, second] => {
            let paired = Paired::of(&converted(first), &converted(second));
            let control = (!study.control.is_empty()).then(|| {
                let mut a = EnginePlayer::new(&first.engine, study.nodes);
                let mut b = EnginePlayer::new(&second.engine, study.nodes);
                let comparisons = compare(&mut a, &mut b, &study.control);
                a.quit();
                b.quit();
                comparisons
            });
            (Some(paired), control)
        }
        _ => (None, None),
    };
    Ok(StudyReport {
        ending: study.ending.to_string(),
        seed: study.seed,
        nodes: study.nodes,
        positions: fens,
        positions_sha256,
        engines,
        paired,
        control,
    })
}

/// One game of `player` from `start` against the solver, starting with `ucinewgame`.
pub fn conversion_game(
    player: &mut EnginePlayer,
    start: &Chess,
    tb: &Tablebase,
) -> Result<GameOutcome, ProofError> {
    if let Err(fault) = player.new_game() {
        return Ok(GameOutcome {
            ending: super::game::GameEnding::EngineFault(fault.to_string()),
            moves: Vec::new(),
        });
    }
    play_conversion(start, tb, |fen, moves| {
        player
            .search(fen, moves)
            .map(|s| s.bestmove)
            .map_err(|e| e.to_string())
    })
}
