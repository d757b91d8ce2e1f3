//! The control comparison: the same best move and the same score at a fixed node budget.

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::{Chess, EnPassantMode};

use super::player::EnginePlayer;
use crate::play::uci::{Score, SearchOutcome};

/// What one engine said about one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// `bestmove` (UCI).
    pub bestmove: String,
    /// The final reported score, `cp N` or `mate N` (`none` if the engine sent none).
    pub score: String,
}

impl Answer {
    /// The answer of a finished search, or the fault as its best move.
    #[must_use]
    pub fn of(result: Result<SearchOutcome, crate::play::uci::UciError>) -> Answer {
        match result {
            Ok(search) => Answer {
                bestmove: search.bestmove,
                score: match search.info.score {
                    Some(Score::Cp(cp)) => format!("cp {cp}"),
                    Some(Score::Mate(m)) => format!("mate {m}"),
                    None => "none".to_owned(),
                },
            },
            Err(fault) => Answer {
                bestmove: format!("(fault: {fault})"),
                score: "none".to_owned(),
            },
        }
    }
}

/// Both engines' answers for one control position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// The position.
    pub fen: String,
    /// The engine under test.
    pub engine: Answer,
    /// The baseline.
    pub baseline: Answer,
    /// Same best move and same score.
    pub unchanged: bool,
}

/// Searches every position with both players (fresh game each) and compares the answers.
pub fn compare(
    engine: &mut EnginePlayer,
    baseline: &mut EnginePlayer,
    positions: &[Chess],
) -> Vec<Comparison> {
    positions
        .iter()
        .map(|pos| {
            let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
            let ask = |player: &mut EnginePlayer| {
                Answer::of(player.new_game().and_then(|()| player.search(&fen, &[])))
            };
            let (a, b) = (ask(engine), ask(baseline));
            Comparison {
                unchanged: a == b && !a.bestmove.starts_with('('),
                fen,
                engine: a,
                baseline: b,
            }
        })
        .collect()
}
