//! FEN parsing and printing.

use super::attacks::pawn_attacks;
use super::bitboard::{RANK_1, RANK_8};
use super::position::{BLACK_OO, BLACK_OOO, Position, WHITE_OO, WHITE_OOO};
use super::types::{Color, KING, NO_PIECE, PAWN, ROOK, make_piece, parse_square, square_name};

/// The standard starting position.
pub const START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Why a FEN string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FenError {
    /// A field is missing.
    MissingField(&'static str),
    /// The board field is malformed.
    Board(String),
    /// The side-to-move field is not `w` or `b`.
    Side(String),
    /// A clock field is not a number.
    Clock(String),
    /// The position is impossible (kings, pawns on the back rank, side not to move in check).
    Illegal(&'static str),
}

impl std::fmt::Display for FenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FenError::MissingField(name) => write!(f, "FEN lacks the {name} field"),
            FenError::Board(s) => write!(f, "bad FEN board field: {s}"),
            FenError::Side(s) => write!(f, "bad FEN side to move '{s}' (want w or b)"),
            FenError::Clock(s) => write!(f, "bad FEN move counter '{s}'"),
            FenError::Illegal(why) => write!(f, "illegal position: {why}"),
        }
    }
}

impl std::error::Error for FenError {}

const PIECE_CHARS: &[u8; 12] = b"PNBRQKpnbrqk";

impl Position {
    /// Parse a FEN; the clocks are optional (default 0 1).
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let mut fields = fen.split_whitespace();
        let board = fields.next().ok_or(FenError::MissingField("board"))?;
        let side = fields
            .next()
            .ok_or(FenError::MissingField("side to move"))?;
        let castling = fields.next().unwrap_or("-");
        let ep = fields.next().unwrap_or("-");
        let half = fields.next().unwrap_or("0");
        let full = fields.next().unwrap_or("1");

        let mut pos = Position::empty();
        let ranks: Vec<&str> = board.split('/').collect();
        if ranks.len() != 8 {
            return Err(FenError::Board(format!(
                "{} ranks instead of 8",
                ranks.len()
            )));
        }
        for (i, rank) in ranks.iter().enumerate() {
            let r = 7 - i;
            let mut f = 0usize;
            for c in rank.bytes() {
                if c.is_ascii_digit() && (b'1'..=b'8').contains(&c) {
                    f += (c - b'0') as usize;
                } else if let Some(p) = PIECE_CHARS.iter().position(|&x| x == c) {
                    if f >= 8 {
                        return Err(FenError::Board(format!("rank {} too long", r + 1)));
                    }
                    pos.put(p as u8, r * 8 + f);
                    f += 1;
                } else {
                    return Err(FenError::Board(format!("unexpected '{}'", c as char)));
                }
                if f > 8 {
                    return Err(FenError::Board(format!("rank {} too long", r + 1)));
                }
            }
            if f != 8 {
                return Err(FenError::Board(format!("rank {} has {} files", r + 1, f)));
            }
        }
        pos.side = match side {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(FenError::Side(other.to_string())),
        };
        for c in [Color::White, Color::Black] {
            if pos.pieces(c, KING).count_ones() != 1 {
                return Err(FenError::Illegal("each side needs exactly one king"));
            }
        }
        if pos.kinds[PAWN] & (RANK_1 | RANK_8) != 0 {
            return Err(FenError::Illegal("pawn on the first or last rank"));
        }
        // Keep only rights whose king and rook stand on their home squares.
        for c in castling.bytes() {
            let (right, king_sq, rook_sq, color) = match c {
                b'K' => (WHITE_OO, 4, 7, Color::White),
                b'Q' => (WHITE_OOO, 4, 0, Color::White),
                b'k' => (BLACK_OO, 60, 63, Color::Black),
                b'q' => (BLACK_OOO, 60, 56, Color::Black),
                b'-' => continue,
                _ => {
                    return Err(FenError::Board(format!(
                        "bad castling character '{}'",
                        c as char
                    )));
                }
            };
            if pos.board[king_sq] == make_piece(color, KING)
                && pos.board[rook_sq] == make_piece(color, ROOK)
            {
                pos.castling |= right;
            }
        }
        if ep != "-" {
            let sq = parse_square(ep)
                .ok_or_else(|| FenError::Board(format!("bad en-passant square '{ep}'")))?;
            // Record it only when a pawn can really capture, as move making does.
            let capturers = pawn_attacks(pos.side.flip(), sq) & pos.pieces(pos.side, PAWN);
            let expected_rank = if pos.side == Color::White { 5 } else { 2 };
            if sq / 8 == expected_rank && capturers != 0 && pos.board[sq] == NO_PIECE {
                pos.ep = Some(sq);
            }
        }
        pos.halfmove = half
            .parse()
            .map_err(|_| FenError::Clock(half.to_string()))?;
        pos.fullmove = full
            .parse()
            .map_err(|_| FenError::Clock(full.to_string()))?;
        pos.fullmove = pos.fullmove.max(1);
        pos.hash ^= pos.state_hash();
        // The side not to move must not be in check.
        let them = pos.side.flip();
        let their_king = pos.king_square(them);
        if pos.attackers_to(their_king, pos.occupied()) & pos.us(pos.side) != 0 {
            return Err(FenError::Illegal("the side not to move is in check"));
        }
        pos.refresh_checkers();
        Ok(pos)
    }

    /// The FEN of this position.
    #[must_use]
    pub fn to_fen(&self) -> String {
        let mut s = String::new();
        for r in (0..8).rev() {
            let mut empty = 0;
            for f in 0..8 {
                let p = self.board[r * 8 + f];
                if p == NO_PIECE {
                    empty += 1;
                } else {
                    if empty > 0 {
                        s.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    s.push(PIECE_CHARS[p as usize] as char);
                }
            }
            if empty > 0 {
                s.push((b'0' + empty) as char);
            }
            if r > 0 {
                s.push('/');
            }
        }
        s.push_str(if self.side == Color::White {
            " w "
        } else {
            " b "
        });
        let mut c = String::new();
        for (bit, ch) in [
            (WHITE_OO, 'K'),
            (WHITE_OOO, 'Q'),
            (BLACK_OO, 'k'),
            (BLACK_OOO, 'q'),
        ] {
            if self.castling & bit != 0 {
                c.push(ch);
            }
        }
        if c.is_empty() {
            c.push('-');
        }
        s.push_str(&c);
        s.push(' ');
        s.push_str(&self.ep.map_or("-".to_string(), square_name));
        s.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        for fen in [
            START_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        ] {
            assert_eq!(Position::from_fen(fen).unwrap().to_fen(), fen);
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(Position::from_fen("").is_err());
        assert!(Position::from_fen("8/8/8/8/8/8/8/8 w - - 0 1").is_err());
        assert!(
            Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1").is_err()
        );
        assert!(
            Position::from_fen("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").is_err()
        );
        assert!(
            Position::from_fen("k7/8/8/8/8/8/8/K6Q w - - 0 1").is_err(),
            "black king in check, white to move"
        );
    }
}
