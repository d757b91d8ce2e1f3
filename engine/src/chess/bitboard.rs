//! Bitboards: one bit per square (bit 0 = a1), with the masks and shifts the rest of the engine uses.

use super::types::{Color, Square};

/// A set of squares.
pub type Bitboard = u64;

/// Rank 1 as a bitboard.
pub const RANK_1: Bitboard = 0xff;
/// Rank 2 as a bitboard.
pub const RANK_2: Bitboard = RANK_1 << 8;
/// Rank 3 as a bitboard.
pub const RANK_3: Bitboard = RANK_1 << 16;
/// Rank 6 as a bitboard.
pub const RANK_6: Bitboard = RANK_1 << 40;
/// Rank 7 as a bitboard.
pub const RANK_7: Bitboard = RANK_1 << 48;
/// Rank 8 as a bitboard.
pub const RANK_8: Bitboard = RANK_1 << 56;

/// The bitboard of one square.
#[must_use]
#[inline(always)]
pub const fn bb(sq: Square) -> Bitboard {
    1u64 << sq
}

/// Index of the lowest set bit; the board must not be empty.
#[must_use]
#[inline(always)]
pub const fn lsb(b: Bitboard) -> Square {
    b.trailing_zeros() as Square
}

/// True if more than one bit is set (cheaper than counting).
#[must_use]
#[inline(always)]
pub const fn more_than_one(b: Bitboard) -> bool {
    b & b.wrapping_sub(1) != 0
}

/// Shift a board one rank towards the opponent of `color`.
#[must_use]
#[inline(always)]
pub const fn forward(color: Color, b: Bitboard) -> Bitboard {
    match color {
        Color::White => b << 8,
        Color::Black => b >> 8,
    }
}

/// Iterator over the squares of a bitboard, lowest first.
pub struct Squares(pub Bitboard);

impl Iterator for Squares {
    type Item = Square;
    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            let s = lsb(self.0);
            self.0 &= self.0 - 1;
            Some(s)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_and_shifts() {
        assert_eq!(Squares(0b1010).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(forward(Color::White, RANK_2), RANK_3);
        assert_eq!(forward(Color::Black, RANK_8), RANK_7);
        assert!(more_than_one(0b1010) && !more_than_one(bb(7)));
    }
}
