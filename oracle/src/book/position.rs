//! The identity of a book position: its EPD without move counters.
//!
//! Two openings that reach the same position are the same opening for a match,
//! whatever their move order, so books are deduplicated on this key.

use shakmaty::fen::Epd;
use shakmaty::{Chess, EnPassantMode};

/// The EPD of `pos` (board, side to move, castling, en passant only when capturable).
#[must_use]
pub fn key(pos: &Chess) -> String {
    Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Position, Square, uci::UciMove};

    fn after(moves: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for m in moves {
            let m = m
                .parse::<UciMove>()
                .unwrap()
                .to_move(&pos)
                .expect("legal move");
            pos.play_unchecked(m);
        }
        pos
    }

    #[test]
    fn transpositions_share_a_key() {
        let a = after(&["g1f3", "g8f6", "b1c3", "b8c6"]);
        let b = after(&["b1c3", "b8c6", "g1f3", "g8f6"]);
        assert_eq!(key(&a), key(&b));
        assert_eq!(
            key(&a),
            "r1bqkb1r/pppppppp/2n2n2/8/8/2N2N2/PPPPPPPP/R1BQKB1R w KQkq -"
        );
    }

    #[test]
    fn en_passant_only_when_capturable() {
        // 1. e4: no black pawn can take on e3, so no square in the key.
        assert!(key(&after(&["e2e4"])).ends_with(" b KQkq -"));
        let pos = after(&["e2e4", "a7a6", "e4e5", "d7d5"]);
        assert_eq!(pos.ep_square(EnPassantMode::Legal), Some(Square::D6));
        assert!(key(&pos).ends_with(" w KQkq d6"));
    }
}
