//! One conversion game: a strong side (the engine) against the solver's defence, judged by
//! the criteria of docs/randfall.md.
//!
//! Converted means mate before the 50-move rule takes effect (a mate delivered on the 100th
//! half-move of the clock still counts), with no stalemate, no threefold repetition and no
//! piece of the strong side lost on the way.

use serde::Serialize;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

use super::ProofError;
use crate::tablebase::Tablebase;

/// How a conversion game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameEnding {
    /// The strong side mated in time.
    Converted,
    /// The strong side stalemated the defender.
    Stalemate,
    /// A position occurred for the third time.
    Threefold,
    /// The defender captured one of the strong side's pieces.
    LostPiece,
    /// The half-move clock reached 100 without mate.
    FiftyMoves,
    /// The strong side was mated (possible only when the defender has pieces).
    Mated,
    /// The engine sent a move that is not legal here.
    IllegalMove(String),
    /// The engine crashed, hung or sent garbage.
    EngineFault(String),
}

/// The record of one conversion game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GameOutcome {
    /// How it ended.
    pub ending: GameEnding,
    /// Moves played (UCI), both sides.
    pub moves: Vec<String>,
}

impl GameOutcome {
    /// True when the game counts as converted.
    #[must_use]
    pub fn converted(&self) -> bool {
        self.ending == GameEnding::Converted
    }
}

/// Material count of `color` (kings included): a drop means a piece was lost.
fn men(pos: &Chess, color: Color) -> usize {
    pos.board().by_color(color).count()
}

/// Plays out `start` with `strong` choosing the moves of the side to move at the start and
/// the solver defending; `strong` gets the game so far (start FEN and moves).
///
/// Errors are the oracle's own failures (the solver); engine failures end the game instead.
pub fn play_conversion(
    start: &Chess,
    tb: &Tablebase,
    mut strong: impl FnMut(&str, &[String]) -> Result<String, String>,
) -> Result<GameOutcome, ProofError> {
    let start_fen = shakmaty::fen::Fen::from_position(start, EnPassantMode::Legal).to_string();
    let strong_side = start.turn();
    let strong_men = men(start, strong_side);
    let mut pos = start.clone();
    let mut seen: Vec<Zobrist64> = vec![pos.zobrist_hash(EnPassantMode::Legal)];
    let mut moves: Vec<String> = Vec::new();
    let end = |ending, moves| Ok(GameOutcome { ending, moves });
    loop {
        let uci = if pos.turn() == strong_side {
            let text = match strong(&start_fen, &moves) {
                Ok(text) => text,
                Err(fault) => return end(GameEnding::EngineFault(fault), moves),
            };
            let legal = text
                .parse::<UciMove>()
                .ok()
                .and_then(|u| u.to_move(&pos).ok().map(|m| (u, m)))
                .filter(|(_, m)| pos.is_legal(*m));
            match legal {
                Some((_, m)) => m.to_uci(CastlingMode::Standard),
                None => return end(GameEnding::IllegalMove(text), moves),
            }
        } else {
            tb.defend(&pos)?.ok_or(ProofError::DefenderHasNoMove)?
        };
        let m = uci
            .to_move(&pos)
            .map_err(|_| ProofError::DefenderHasNoMove)?;
        pos.play_unchecked(m);
        moves.push(uci.to_string());
        let key = pos.zobrist_hash(EnPassantMode::Legal);
        seen.push(key);
        let ending = if pos.is_checkmate() {
            Some(if pos.turn() == strong_side {
                GameEnding::Mated
            } else {
                GameEnding::Converted
            })
        } else if pos.is_stalemate() {
            Some(GameEnding::Stalemate)
        } else if men(&pos, strong_side) < strong_men {
            Some(GameEnding::LostPiece)
        } else if seen.iter().filter(|&&k| k == key).count() >= 3 {
            Some(GameEnding::Threefold)
        } else if pos.halfmoves() >= 100 {
            Some(GameEnding::FiftyMoves)
        } else {
            None
        };
        if let Some(ending) = ending {
            return end(ending, moves);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// Plays `script` in a loop for the strong side.
    fn scripted(start: &str, script: &[&str]) -> GameOutcome {
        let tb = Tablebase::new(None);
        let mut next = 0;
        play_conversion(&pos(start), &tb, |_, _| {
            next += 1;
            Ok(script[(next - 1) % script.len()].to_owned())
        })
        .unwrap()
    }

    /// The solver as a perfect strong side.
    fn perfect(start: &str) -> GameOutcome {
        let tb = Tablebase::new(None);
        play_conversion(&pos(start), &tb, |fen, moves| {
            let mut p = pos(fen);
            for m in moves {
                let m = m.parse::<UciMove>().unwrap().to_move(&p).unwrap();
                p.play_unchecked(m);
            }
            Ok(tb.defend(&p).unwrap().unwrap().to_string())
        })
        .unwrap()
    }

    #[test]
    fn stalemate_lost_piece_repetition_and_illegal_moves_fail() {
        assert_eq!(
            scripted("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", &["c1c7"]).ending,
            GameEnding::Stalemate
        );
        let lost = scripted("8/8/8/3k4/8/8/8/K1Q5 w - - 0 1", &["c1c5"]);
        assert_eq!(
            (lost.ending, lost.moves),
            (
                GameEnding::LostPiece,
                vec!["c1c5".to_owned(), "d5c5".to_owned()]
            )
        );
        let repeated = scripted("8/8/8/8/8/7R/2K5/k7 w - - 0 1", &["h3g3", "g3h3"]);
        assert_eq!(
            (repeated.ending, repeated.moves.len()),
            (GameEnding::Threefold, 8)
        );
        let illegal = scripted("8/8/8/3k4/8/8/8/K1Q5 w - - 0 1", &["c1c1"]);
        assert_eq!(illegal.ending, GameEnding::IllegalMove("c1c1".to_owned()));
    }

    #[test]
    fn mate_on_the_hundredth_half_move_counts_and_later_does_not() {
        let mate = perfect("k7/8/1K6/8/8/8/8/6Q1 w - - 99 60");
        assert_eq!((mate.ending, mate.moves.len()), (GameEnding::Converted, 1));
        // A mate in two from clock 98 would land on half-move 101.
        let tb = Tablebase::new(None);
        let start = pos("k7/8/2K5/8/8/8/8/6Q1 w - - 98 60");
        assert_eq!(tb.value(&start).unwrap(), crate::tablebase::Outcome::Win(3));
        assert_eq!(
            perfect("k7/8/2K5/8/8/8/8/6Q1 w - - 98 60").ending,
            GameEnding::FiftyMoves
        );
        assert_eq!(
            perfect("k7/8/2K5/8/8/8/8/6Q1 w - - 0 1").ending,
            GameEnding::Converted
        );
    }
}
