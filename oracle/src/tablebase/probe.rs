//! Probing real positions: value, best move, and the solver's defence.

use std::fmt;

use serde::Serialize;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position, Role};

use super::TablebaseError;
use super::outcome::Outcome;
use super::table::{Man, Tablebase};

/// The solver's answer for one position; what `oracle tb probe` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The ending, e.g. `KBNK` (`KK` for bare kings).
    pub ending: String,
    /// Value for the side to move.
    pub outcome: Outcome,
    /// The best move (UCI): fastest mate when winning, any move holding the draw, else the
    /// longest defence; ties go to the first in UCI order. `None` when no move is legal.
    pub best_move: Option<String>,
}

/// The JSON object of a probe: the value as `wdl` and `dtm_plies` rather than the outcome.
#[derive(Serialize)]
struct ProbeObject<'a> {
    ending: &'a str,
    wdl: &'static str,
    dtm_plies: i32,
    best_move: Option<&'a str>,
}

impl Serialize for Probe {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ProbeObject {
            ending: &self.ending,
            wdl: self.outcome.wdl(),
            dtm_plies: self.outcome.dtm_plies(),
            best_move: self.best_move.as_deref(),
        }
        .serialize(serializer)
    }
}

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} for the side to move, dtm {} plies, best move {}",
            self.ending,
            self.outcome.wdl(),
            self.outcome.dtm_plies(),
            self.best_move.as_deref().unwrap_or("(none)")
        )
    }
}

/// The men of a pawnless, castling-free position of at most four pieces. The reasons are
/// checked in that order so that the start position is refused for its 32 pieces, not for
/// its castling rights.
fn men(pos: &Chess) -> Result<Vec<Man>, TablebaseError> {
    let men: Vec<Man> = pos
        .board()
        .iter()
        .map(|(sq, piece)| (piece.color, piece.role, sq as u8))
        .collect();
    let board = pos.board().to_string();
    if men.len() > super::ending::MAX_PIECES {
        return Err(TablebaseError::NotCovered(format!(
            "{} pieces on {board}",
            men.len()
        )));
    }
    if men.iter().any(|m| m.1 == Role::Pawn) {
        return Err(TablebaseError::NotCovered(format!("pawns on {board}")));
    }
    if pos.castles().any() {
        return Err(TablebaseError::NotCovered(format!(
            "castling rights in {board}"
        )));
    }
    Ok(men)
}

impl Tablebase {
    /// Value of `pos` for its side to move.
    pub fn value(&self, pos: &Chess) -> Result<Outcome, TablebaseError> {
        self.outcome(&men(pos)?, pos.turn())
    }

    /// Every legal move of `pos` with its value for the mover, best first (see `Probe`).
    pub fn rank_moves(&self, pos: &Chess) -> Result<Vec<(UciMove, Outcome)>, TablebaseError> {
        let mut ranked = Vec::new();
        for m in pos.legal_moves() {
            let mut child = pos.clone();
            child.play_unchecked(m);
            let value = self.value(&child)?.from_parent();
            ranked.push((m.to_uci(CastlingMode::Standard), value));
        }
        ranked.sort_by(|a, b| {
            b.1.preference()
                .cmp(&a.1.preference())
                .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
        });
        Ok(ranked)
    }

    /// Value, ending and best move of `pos`.
    pub fn probe(&self, pos: &Chess) -> Result<Probe, TablebaseError> {
        let men = men(pos)?;
        let roles = |c: shakmaty::Color| -> Vec<Role> {
            men.iter()
                .filter(|m| m.0 == c && m.1 != Role::King)
                .map(|m| m.1)
                .collect()
        };
        let (ending, _) = super::Ending::from_material(
            &roles(shakmaty::Color::White),
            &roles(shakmaty::Color::Black),
        );
        let outcome = self.outcome(&men, pos.turn())?;
        let best_move = self.rank_moves(pos)?.first().map(|(m, _)| m.to_string());
        Ok(Probe {
            ending: ending.to_string(),
            outcome,
            best_move,
        })
    }

    /// The solver's defence in `pos`: the best move by `rank_moves`, i.e. any drawing move before
    /// every losing one, and among losing moves the one that delays mate longest.
    pub fn defend(&self, pos: &Chess) -> Result<Option<UciMove>, TablebaseError> {
        Ok(self.rank_moves(pos)?.into_iter().next().map(|(m, _)| m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn reason(fen: &str) -> String {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        men(&pos).unwrap_err().to_string()
    }

    /// The first reason named is the one that matters most: size, then pawns, then castling.
    #[test]
    fn refusals_name_the_pieces_before_castling() {
        let start = reason("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert!(
            start.starts_with("not covered by the solver: 32 pieces on rnbqkbnr/"),
            "{start}"
        );
        let pawn = reason("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1");
        assert!(
            pawn.starts_with("not covered by the solver: pawns on "),
            "{pawn}"
        );
        let castling = reason("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1");
        assert!(
            castling.starts_with("not covered by the solver: castling rights in "),
            "{castling}"
        );
    }
}
