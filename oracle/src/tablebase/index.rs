//! Table indexing with the 8-fold symmetry of pawnless chess.
//!
//! Without pawns or castling, every reflection of the board (files, ranks, the a1–h8 diagonal)
//! maps positions to positions with the same value, so the white king is normalised into the
//! triangle a1–d1–d4 (10 squares) and the other pieces take any of the 64 squares. Positions
//! with the white king on the diagonal keep both mirror images; the analysis fills both alike.

use shakmaty::Color;

/// Number of squares of the normalising triangle a1–d1–d4.
pub const TRIANGLE: usize = 10;

/// Triangle slot of each square, or `u8::MAX` outside a1–d1–d4.
const TRIANGLE_SLOT: [u8; 64] = {
    let mut slots = [u8::MAX; 64];
    let mut next = 0;
    let mut rank = 0;
    while rank < 4 {
        let mut file = rank;
        while file < 4 {
            slots[rank * 8 + file] = next;
            next += 1;
            file += 1;
        }
        rank += 1;
    }
    slots
};

/// Square of each triangle slot (inverse of `TRIANGLE_SLOT`).
const TRIANGLE_SQUARE: [u8; TRIANGLE] = {
    let mut squares = [0u8; TRIANGLE];
    let mut sq = 0;
    while sq < 64 {
        if TRIANGLE_SLOT[sq] != u8::MAX {
            squares[TRIANGLE_SLOT[sq] as usize] = sq as u8;
        }
        sq += 1;
    }
    squares
};

/// Applies symmetry `t` (bit 0: mirror files, bit 1: mirror ranks, bit 2: swap files and ranks).
#[must_use]
pub const fn transform(sq: u8, t: u8) -> u8 {
    let (mut file, mut rank) = (sq & 7, sq >> 3);
    if t & 1 != 0 {
        file = 7 - file;
    }
    if t & 2 != 0 {
        rank = 7 - rank;
    }
    if t & 4 != 0 {
        (file, rank) = (rank, file);
    }
    rank * 8 + file
}

/// The symmetry that brings a white king on `king` into the triangle a1–d1–d4.
#[must_use]
pub const fn normalising(king: u8) -> u8 {
    let (mut file, mut rank, mut t) = (king & 7, king >> 3, 0);
    if file > 3 {
        t |= 1;
        file = 7 - file;
    }
    if rank > 3 {
        t |= 2;
        rank = 7 - rank;
    }
    if rank > file {
        t |= 4;
    }
    t
}

/// Index arithmetic for one table of `pieces` pieces (white king first).
#[derive(Clone, Copy, Debug)]
pub struct Indexer {
    pieces: usize,
}

impl Indexer {
    /// An indexer for tables of `pieces` pieces, kings included.
    #[must_use]
    pub const fn new(pieces: usize) -> Indexer {
        Indexer { pieces }
    }

    /// Entries per side to move: the triangle times 64 squares for every other piece.
    #[must_use]
    pub const fn per_side(self) -> usize {
        TRIANGLE * (1 << (6 * (self.pieces - 1)))
    }

    /// Total entries of the table (both sides to move).
    #[must_use]
    pub const fn size(self) -> usize {
        2 * self.per_side()
    }

    /// Index of a placement (any orientation) with `stm` to move.
    #[must_use]
    pub fn index(self, squares: &[u8], stm: Color) -> usize {
        let t = normalising(squares[0]);
        let mut idx = usize::from(stm == Color::Black) * TRIANGLE
            + TRIANGLE_SLOT[transform(squares[0], t) as usize] as usize;
        for &sq in &squares[1..self.pieces] {
            idx = idx * 64 + transform(sq, t) as usize;
        }
        idx
    }

    /// The normalised placement and side to move stored at `idx`.
    #[must_use]
    pub fn decode(self, mut idx: usize) -> ([u8; 4], Color) {
        let mut squares = [0u8; 4];
        for slot in (1..self.pieces).rev() {
            squares[slot] = (idx % 64) as u8;
            idx /= 64;
        }
        squares[0] = TRIANGLE_SQUARE[idx % TRIANGLE];
        let stm = if idx / TRIANGLE == 0 {
            Color::White
        } else {
            Color::Black
        };
        (squares, stm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_inverts_index_and_symmetries_agree() {
        let ix = Indexer::new(3);
        for idx in (0..ix.size()).step_by(97) {
            let (sq, stm) = ix.decode(idx);
            assert_eq!(ix.index(&sq, stm), idx);
            for t in 0..8 {
                let moved: Vec<u8> = sq[..3].iter().map(|&s| transform(s, t)).collect();
                let back = ix.index(&moved, stm);
                // Diagonal placements have two stored images; both decode to a mirror of `sq`.
                let (image, _) = ix.decode(back);
                let same = (0..8).any(|u| (0..3).all(|i| transform(sq[i], u) == image[i]));
                assert!(same);
            }
        }
    }
}
