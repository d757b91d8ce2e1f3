//! The position: bitboards by kind and colour, a mailbox, rights, and copy-make move application.

use super::attacks::{bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks};
use super::bitboard::{Bitboard, bb, lsb, more_than_one};
use super::types::{
    BISHOP, CAPTURE, CASTLE, Color, DOUBLE_PUSH, EN_PASSANT, KING, KNIGHT, Move, NO_PIECE, PAWN,
    QUEEN, ROOK, Square, make_piece, piece_color, piece_kind,
};
use super::zobrist::KEYS;

/// Castling right: white king side.
pub const WHITE_OO: u8 = 1;
/// Castling right: white queen side.
pub const WHITE_OOO: u8 = 2;
/// Castling right: black king side.
pub const BLACK_OO: u8 = 4;
/// Castling right: black queen side.
pub const BLACK_OOO: u8 = 8;

/// Rights that survive a move touching each square (a king or rook leaving or being captured).
const CASTLE_KEEP: [u8; 64] = {
    let mut t = [15u8; 64];
    t[0] = 15 & !WHITE_OOO;
    t[4] = 15 & !(WHITE_OO | WHITE_OOO);
    t[7] = 15 & !WHITE_OO;
    t[56] = 15 & !BLACK_OOO;
    t[60] = 15 & !(BLACK_OO | BLACK_OOO);
    t[63] = 15 & !BLACK_OO;
    t
};

/// A chess position. `Copy`, so search and perft use copy-make.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Position {
    /// Pieces by kind (both colours).
    pub kinds: [Bitboard; 6],
    /// Pieces by colour.
    pub colors: [Bitboard; 2],
    /// Coloured piece code per square, `NO_PIECE` if empty.
    pub board: [u8; 64],
    /// Side to move.
    pub side: Color,
    /// Castling rights bit set.
    pub castling: u8,
    /// En-passant target square, only set when a pawn can actually capture there.
    pub ep: Option<Square>,
    /// Half-moves since the last capture or pawn move.
    pub halfmove: u32,
    /// Full-move number.
    pub fullmove: u32,
    /// Zobrist hash of everything above except the clocks.
    pub hash: u64,
    /// Enemy pieces giving check to the side to move.
    pub checkers: Bitboard,
}

impl Position {
    /// An empty board, white to move (a building block for FEN parsing).
    #[must_use]
    pub const fn empty() -> Position {
        Position {
            kinds: [0; 6],
            colors: [0; 2],
            board: [NO_PIECE; 64],
            side: Color::White,
            castling: 0,
            ep: None,
            halfmove: 0,
            fullmove: 1,
            hash: 0,
            checkers: 0,
        }
    }

    /// All occupied squares.
    #[must_use]
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.colors[0] | self.colors[1]
    }

    /// Pieces of one colour and kind.
    #[must_use]
    #[inline(always)]
    pub fn pieces(&self, color: Color, kind: usize) -> Bitboard {
        self.colors[color as usize] & self.kinds[kind]
    }

    /// Pieces of one colour.
    #[must_use]
    #[inline(always)]
    pub fn us(&self, color: Color) -> Bitboard {
        self.colors[color as usize]
    }

    /// Square of the king of `color`.
    #[must_use]
    #[inline(always)]
    pub fn king_square(&self, color: Color) -> Square {
        lsb(self.pieces(color, KING))
    }

    /// Diagonal sliders (bishops and queens) of both colours.
    #[must_use]
    #[inline(always)]
    pub fn diagonal_sliders(&self) -> Bitboard {
        self.kinds[BISHOP] | self.kinds[QUEEN]
    }

    /// Orthogonal sliders (rooks and queens) of both colours.
    #[must_use]
    #[inline(always)]
    pub fn orthogonal_sliders(&self) -> Bitboard {
        self.kinds[ROOK] | self.kinds[QUEEN]
    }

    /// All pieces of both colours attacking `sq` given occupancy `occ`.
    #[must_use]
    #[inline(always)]
    pub fn attackers_to(&self, sq: Square, occ: Bitboard) -> Bitboard {
        (pawn_attacks(Color::White, sq) & self.pieces(Color::Black, PAWN))
            | (pawn_attacks(Color::Black, sq) & self.pieces(Color::White, PAWN))
            | (knight_attacks(sq) & self.kinds[KNIGHT])
            | (king_attacks(sq) & self.kinds[KING])
            | (bishop_attacks(sq, occ) & self.diagonal_sliders())
            | (rook_attacks(sq, occ) & self.orthogonal_sliders())
    }

    /// True if the side to move is in check.
    #[must_use]
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.checkers != 0
    }

    /// True if `color` has a piece other than pawns and king (null-move safety).
    #[must_use]
    #[inline(always)]
    pub fn has_non_pawn_material(&self, color: Color) -> bool {
        self.us(color) & !(self.kinds[PAWN] | self.kinds[KING]) != 0
    }

    /// The piece kind on a square, if any.
    #[must_use]
    #[inline(always)]
    pub fn kind_at(&self, sq: Square) -> Option<usize> {
        let p = self.board[sq];
        if p == NO_PIECE {
            None
        } else {
            Some(piece_kind(p))
        }
    }

    /// The kind of piece the move `m` takes (a pawn for en passant); `None` for a move onto an
    /// empty square.
    #[must_use]
    #[inline(always)]
    pub fn captured_kind(&self, m: Move) -> Option<usize> {
        if m.flags() == EN_PASSANT {
            Some(PAWN)
        } else {
            self.kind_at(m.to())
        }
    }

    /// Place a piece (used by FEN parsing and move making); updates the hash.
    #[inline(always)]
    pub fn put(&mut self, piece: u8, sq: Square) {
        let b = bb(sq);
        self.kinds[piece_kind(piece)] |= b;
        self.colors[piece_color(piece) as usize] |= b;
        self.board[sq] = piece;
        self.hash ^= KEYS.piece[piece as usize][sq];
    }

    #[inline(always)]
    fn remove(&mut self, sq: Square) {
        let piece = self.board[sq];
        let b = bb(sq);
        self.kinds[piece_kind(piece)] ^= b;
        self.colors[piece_color(piece) as usize] ^= b;
        self.board[sq] = NO_PIECE;
        self.hash ^= KEYS.piece[piece as usize][sq];
    }

    /// Recompute the checkers of the side to move (after FEN parsing).
    pub fn refresh_checkers(&mut self) {
        let ksq = self.king_square(self.side);
        self.checkers = self.attackers_to(ksq, self.occupied()) & self.us(self.side.flip());
    }

    /// Hash of side, castling and en passant (the non-piece part), for rebuilding after FEN.
    #[must_use]
    pub fn state_hash(&self) -> u64 {
        let mut h = KEYS.castling[self.castling as usize];
        if let Some(ep) = self.ep {
            h ^= KEYS.ep_file[ep & 7];
        }
        if self.side == Color::Black {
            h ^= KEYS.side;
        }
        h
    }

    /// The position after a legal move (copy-make).
    #[must_use]
    #[inline(always)]
    pub fn make_move(&self, m: Move) -> Position {
        let mut p = *self;
        let us = self.side;
        let (from, to, flags) = (m.from(), m.to(), m.flags());
        let piece = self.board[from];
        p.hash ^= KEYS.castling[self.castling as usize];
        if let Some(ep) = self.ep {
            p.hash ^= KEYS.ep_file[ep & 7];
            p.ep = None;
        }
        p.halfmove += 1;
        if flags == EN_PASSANT {
            p.remove(to ^ 8);
        } else if flags & CAPTURE != 0 {
            p.remove(to);
        }
        if flags & CAPTURE != 0 || piece_kind(piece) == PAWN {
            p.halfmove = 0;
        }
        p.remove(from);
        match m.promotion() {
            Some(kind) => p.put(make_piece(us, kind), to),
            None => p.put(piece, to),
        }
        if flags == CASTLE {
            let (rf, rt) = if to > from {
                (from + 3, from + 1)
            } else {
                (from - 4, from - 1)
            };
            p.remove(rf);
            p.put(make_piece(us, ROOK), rt);
        } else if flags == DOUBLE_PUSH {
            let ep = (from + to) / 2;
            if pawn_attacks(us, ep) & self.pieces(us.flip(), PAWN) != 0 {
                p.ep = Some(ep);
                p.hash ^= KEYS.ep_file[ep & 7];
            }
        }
        p.castling &= CASTLE_KEEP[from] & CASTLE_KEEP[to];
        p.hash ^= KEYS.castling[p.castling as usize] ^ KEYS.side;
        p.side = us.flip();
        if us == Color::Black {
            p.fullmove += 1;
        }
        let ksq = p.king_square(p.side);
        p.checkers = p.attackers_to(ksq, p.occupied()) & p.colors[us as usize];
        p
    }

    /// The position after passing the move (null-move pruning); never called in check.
    #[must_use]
    pub fn make_null(&self) -> Position {
        let mut p = *self;
        if let Some(ep) = self.ep {
            p.hash ^= KEYS.ep_file[ep & 7];
            p.ep = None;
        }
        p.hash ^= KEYS.side;
        p.side = self.side.flip();
        p.halfmove += 1;
        p.checkers = 0;
        p
    }

    /// True when neither side can possibly mate (K v K, K+minor v K).
    #[must_use]
    pub fn insufficient_material(&self) -> bool {
        let heavy = self.kinds[PAWN] | self.kinds[ROOK] | self.kinds[QUEEN];
        if heavy != 0 {
            return false;
        }
        let minors = self.kinds[KNIGHT] | self.kinds[BISHOP];
        !more_than_one(minors)
    }
}
