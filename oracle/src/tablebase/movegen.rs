//! A compact move generator for a handful of pieces, built on shakmaty's attack tables.
//!
//! The solver visits millions of placements, so it works on raw square numbers instead of
//! full `shakmaty::Chess` positions; tests check it against shakmaty's own legal moves.

use shakmaty::{Bitboard, Color, Piece, Role, Square, attacks};

/// A placement of up to four pieces in table order; square `NONE` marks a captured piece.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// Number of piece slots in use.
    pub len: usize,
    /// Colour and role of each slot.
    pub pieces: [(Color, Role); 4],
    /// Square of each slot (`NONE` once captured).
    pub squares: [u8; 4],
}

/// Square value of a captured piece.
pub const NONE: u8 = u8::MAX;

/// One legal move: the slot that moves, where to, and the slot it captures if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotMove {
    /// Slot of the moving piece.
    pub slot: usize,
    /// Destination square.
    pub to: u8,
    /// Slot of the captured piece.
    pub captured: Option<usize>,
}

impl Placement {
    /// A placement of `pieces` on `squares` (same order).
    #[must_use]
    pub fn new(pieces: &[(Color, Role)], squares: &[u8]) -> Placement {
        let mut p = Placement {
            len: pieces.len(),
            pieces: [(Color::White, Role::King); 4],
            squares: [NONE; 4],
        };
        p.pieces[..pieces.len()].copy_from_slice(pieces);
        p.squares[..pieces.len()].copy_from_slice(&squares[..pieces.len()]);
        p
    }

    /// All occupied squares.
    fn occupied(&self) -> Bitboard {
        let mut occ = Bitboard::EMPTY;
        for &sq in &self.squares[..self.len] {
            if sq != NONE {
                occ.add(Square::new(u32::from(sq)));
            }
        }
        occ
    }

    /// Squares occupied by `color`.
    fn occupied_by(&self, color: Color) -> Bitboard {
        let mut occ = Bitboard::EMPTY;
        for i in 0..self.len {
            if self.squares[i] != NONE && self.pieces[i].0 == color {
                occ.add(Square::new(u32::from(self.squares[i])));
            }
        }
        occ
    }

    /// Squares the piece in `slot` attacks with the given occupancy.
    fn attacks_of(&self, slot: usize, occ: Bitboard) -> Bitboard {
        let (color, role) = self.pieces[slot];
        attacks::attacks(
            Square::new(u32::from(self.squares[slot])),
            Piece { color, role },
            occ,
        )
    }

    /// True when some two pieces share a square (not a position at all).
    #[must_use]
    pub fn has_overlap(&self) -> bool {
        self.occupied().count() != (0..self.len).filter(|&i| self.squares[i] != NONE).count()
    }

    /// True when the king of `color` (slot 0 white, slot 1 black) is attacked.
    #[must_use]
    pub fn in_check(&self, color: Color) -> bool {
        let king = Square::new(u32::from(self.squares[usize::from(color == Color::Black)]));
        let occ = self.occupied();
        (0..self.len).any(|i| {
            self.squares[i] != NONE
                && self.pieces[i].0 != color
                && self.attacks_of(i, occ).contains(king)
        })
    }

    /// The placement after `mv` (the captured slot, if any, gets square `NONE`).
    #[must_use]
    pub fn after(&self, mv: SlotMove) -> Placement {
        let mut next = *self;
        if let Some(c) = mv.captured {
            next.squares[c] = NONE;
        }
        next.squares[mv.slot] = mv.to;
        next
    }

    /// Calls `f` for every legal move of `stm` (the position must be legal with `stm` to move).
    pub fn for_each_legal(&self, stm: Color, mut f: impl FnMut(SlotMove, &Placement)) {
        let occ = self.occupied();
        let own = self.occupied_by(stm);
        for slot in 0..self.len {
            if self.squares[slot] == NONE || self.pieces[slot].0 != stm {
                continue;
            }
            for to in self.attacks_of(slot, occ) & !own {
                let to = to as u8;
                let captured = (0..self.len).find(|&i| self.squares[i] == to);
                let mv = SlotMove { slot, to, captured };
                let next = self.after(mv);
                if !next.in_check(stm) {
                    f(mv, &next);
                }
            }
        }
    }

    /// Calls `f` for every placement from which `mover` (the side not to move here) could have
    /// reached this one by a non-capturing move of the piece in the given slot; the caller
    /// checks the predecessor is legal.
    pub fn for_each_unmove(&self, mover: Color, mut f: impl FnMut(usize, &Placement)) {
        let occ = self.occupied();
        for slot in 0..self.len {
            if self.squares[slot] == NONE || self.pieces[slot].0 != mover {
                continue;
            }
            for from in self.attacks_of(slot, occ) & !occ {
                let mut prev = *self;
                prev.squares[slot] = from as u8;
                f(slot, &prev);
            }
        }
    }
}
