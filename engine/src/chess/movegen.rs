//! Fully legal move generation from checkers and pins: no make-and-test, so perft can count leaves
//! by list length.

use std::mem::MaybeUninit;

use super::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use super::bitboard::{
    Bitboard, RANK_2, RANK_3, RANK_6, RANK_7, Squares, bb, forward, lsb, more_than_one,
};
use super::position::{BLACK_OO, BLACK_OOO, Position, WHITE_OO, WHITE_OOO};
use super::types::{
    BISHOP, CAPTURE, CASTLE, Color, DOUBLE_PUSH, EN_PASSANT, KING, KNIGHT, Move, PAWN, PROMO,
    QUEEN, QUIET, ROOK, Square,
};

/// Capacity of a move list; no legal position has more moves (the record is 218).
pub const MAX_MOVES: usize = 256;

/// A fixed-capacity move list (no allocation, no zeroing: one is created at every node).
pub struct MoveList {
    moves: [MaybeUninit<Move>; MAX_MOVES],
    len: usize,
}

impl Default for MoveList {
    #[inline(always)]
    fn default() -> Self {
        MoveList {
            // SAFETY: an array of `MaybeUninit` needs no initialisation (the pattern the
            // `MaybeUninit` documentation gives). The array-repeat form compiled to a call that
            // zeroed the whole list at every node.
            moves: unsafe { MaybeUninit::<[MaybeUninit<Move>; MAX_MOVES]>::uninit().assume_init() },
            len: 0,
        }
    }
}

impl MoveList {
    #[inline(always)]
    fn push(&mut self, m: Move) {
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }

    /// Number of moves.
    #[must_use]
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no moves.
    #[must_use]
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Exchange two entries (used by the move picker's selection sort).
    #[inline(always)]
    pub fn swap(&mut self, a: usize, b: usize) {
        self.as_mut_slice().swap(a, b);
    }

    /// The moves as a slice.
    #[must_use]
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: entries below `len` were written by `push`; MaybeUninit<Move> has Move's layout.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }

    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [Move] {
        // SAFETY: as in `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr().cast::<Move>(), self.len) }
    }
}

/// Which moves to generate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum GenMode {
    /// Every legal move.
    All,
    /// Captures and queen promotions (for quiescence); in check use `All`.
    Noisy,
}

/// True if `sq` is attacked by `by` given occupancy `occ`.
#[inline(always)]
fn attacked(pos: &Position, sq: Square, by: Color, occ: Bitboard) -> bool {
    let them = pos.us(by);
    (pawn_attacks(by.flip(), sq) & pos.kinds[PAWN] & them) != 0
        || (knight_attacks(sq) & pos.kinds[KNIGHT] & them) != 0
        || (king_attacks(sq) & pos.kinds[KING] & them) != 0
        || (bishop_attacks(sq, occ) & pos.diagonal_sliders() & them) != 0
        || (rook_attacks(sq, occ) & pos.orthogonal_sliders() & them) != 0
}

/// Own pieces pinned to the king of the side to move.
#[must_use]
#[inline(always)]
pub fn pinned(pos: &Position) -> Bitboard {
    let us = pos.side;
    let ksq = pos.king_square(us);
    let them = pos.us(us.flip());
    let occ = pos.occupied();
    let snipers = ((rook_attacks(ksq, 0) & pos.orthogonal_sliders())
        | (bishop_attacks(ksq, 0) & pos.diagonal_sliders()))
        & them;
    let mut pins = 0;
    for s in Squares(snipers) {
        let b = between(ksq, s) & occ;
        if b != 0 && !more_than_one(b) {
            pins |= b & pos.us(us);
        }
    }
    pins
}

#[inline(always)]
fn push_promotions(list: &mut MoveList, from: Square, to: Square, capture: u16, mode: GenMode) {
    list.push(Move::new(from, to, PROMO | capture | 3));
    if mode == GenMode::All {
        for p in 0..3 {
            list.push(Move::new(from, to, PROMO | capture | p));
        }
    }
}

/// Generate legal moves of the side to move into `list`.
#[inline(always)]
pub fn generate(pos: &Position, list: &mut MoveList, mode: GenMode) {
    let us = pos.side;
    let them_c = us.flip();
    let own = pos.us(us);
    let them = pos.us(them_c);
    let occ = own | them;
    let ksq = pos.king_square(us);
    let quiet_ok = mode == GenMode::All;

    // King moves: test each destination with the king lifted off the board (slides along a check ray).
    let occ_no_king = occ ^ bb(ksq);
    let mut kt = king_attacks(ksq) & !own;
    if !quiet_ok {
        kt &= them;
    }
    for to in Squares(kt) {
        if !attacked(pos, to, them_c, occ_no_king) {
            let f = if them & bb(to) != 0 { CAPTURE } else { QUIET };
            list.push(Move::new(ksq, to, f));
        }
    }
    let checkers = pos.checkers;
    if more_than_one(checkers) {
        return;
    }
    let target = if checkers != 0 {
        between(ksq, lsb(checkers)) | checkers
    } else {
        !0
    };
    let pins = pinned(pos);

    // Castling: only out of check, through empty and unattacked squares.
    if checkers == 0 && quiet_ok {
        let (oo, ooo) = if us == Color::White {
            (WHITE_OO, WHITE_OOO)
        } else {
            (BLACK_OO, BLACK_OOO)
        };
        if pos.castling & oo != 0
            && occ & (bb(ksq + 1) | bb(ksq + 2)) == 0
            && !attacked(pos, ksq + 1, them_c, occ)
            && !attacked(pos, ksq + 2, them_c, occ)
        {
            list.push(Move::new(ksq, ksq + 2, CASTLE));
        }
        if pos.castling & ooo != 0
            && occ & (bb(ksq - 1) | bb(ksq - 2) | bb(ksq - 3)) == 0
            && !attacked(pos, ksq - 1, them_c, occ)
            && !attacked(pos, ksq - 2, them_c, occ)
        {
            list.push(Move::new(ksq, ksq - 2, CASTLE));
        }
    }

    // Knights (a pinned knight can never move), bishops, rooks, queens.
    let dest_mask = if quiet_ok {
        !own & target
    } else {
        them & target
    };
    for from in Squares(pos.pieces(us, KNIGHT) & !pins) {
        for to in Squares(knight_attacks(from) & dest_mask) {
            let f = if them & bb(to) != 0 { CAPTURE } else { QUIET };
            list.push(Move::new(from, to, f));
        }
    }
    let diag = pos.pieces(us, BISHOP) | pos.pieces(us, QUEEN);
    let orth = pos.pieces(us, ROOK) | pos.pieces(us, QUEEN);
    for from in Squares(diag) {
        let mut t = bishop_attacks(from, occ) & dest_mask;
        if pins & bb(from) != 0 {
            t &= line(ksq, from);
        }
        for to in Squares(t) {
            let f = if them & bb(to) != 0 { CAPTURE } else { QUIET };
            list.push(Move::new(from, to, f));
        }
    }
    for from in Squares(orth) {
        let mut t = rook_attacks(from, occ) & dest_mask;
        if pins & bb(from) != 0 {
            t &= line(ksq, from);
        }
        for to in Squares(t) {
            let f = if them & bb(to) != 0 { CAPTURE } else { QUIET };
            list.push(Move::new(from, to, f));
        }
    }

    // Pawns.
    let pawns = pos.pieces(us, PAWN);
    let promo_rank_from = if us == Color::White { RANK_7 } else { RANK_2 };
    let double_rank = if us == Color::White { RANK_3 } else { RANK_6 };
    let up: isize = if us == Color::White { 8 } else { -8 };
    let empty = !occ;
    // Pushes: handled set-wise for unpinned pawns, one by one for pinned ones.
    let free = pawns & !pins;
    let single = forward(us, free) & empty;
    let double = forward(us, single & double_rank) & empty & target;
    let single = single & target;
    for to in Squares(single) {
        let from = (to as isize - up) as Square;
        if bb(from) & promo_rank_from != 0 {
            push_promotions(list, from, to, 0, mode);
        } else if quiet_ok {
            list.push(Move::new(from, to, QUIET));
        }
    }
    if quiet_ok {
        for to in Squares(double) {
            list.push(Move::new((to as isize - 2 * up) as Square, to, DOUBLE_PUSH));
        }
    }
    for from in Squares(pawns & pins) {
        // A pinned pawn may only move along the pin line.
        let l = line(ksq, from);
        let to = (from as isize + up) as Square;
        if bb(to) & empty & l != 0 {
            if bb(to) & target != 0 {
                if bb(from) & promo_rank_from != 0 {
                    push_promotions(list, from, to, 0, mode);
                } else if quiet_ok {
                    list.push(Move::new(from, to, QUIET));
                }
            }
            let to2 = (to as isize + up) as Square;
            if quiet_ok && bb(to) & double_rank != 0 && bb(to2) & empty & target & l != 0 {
                list.push(Move::new(from, to2, DOUBLE_PUSH));
            }
        }
        for to in Squares(pawn_attacks(us, from) & them & target & l) {
            if bb(from) & promo_rank_from != 0 {
                push_promotions(list, from, to, CAPTURE, mode);
            } else {
                list.push(Move::new(from, to, CAPTURE));
            }
        }
    }
    for from in Squares(free) {
        for to in Squares(pawn_attacks(us, from) & them & target) {
            if bb(from) & promo_rank_from != 0 {
                push_promotions(list, from, to, CAPTURE, mode);
            } else {
                list.push(Move::new(from, to, CAPTURE));
            }
        }
    }
    // En passant: rare, so check it by simulating the capture on the occupancy.
    if let Some(ep) = pos.ep {
        let captured = (ep as isize - up) as Square;
        for from in Squares(pawn_attacks(them_c, ep) & pawns) {
            let occ2 = (occ ^ bb(from) ^ bb(captured)) | bb(ep);
            let attackers = pos.attackers_to(ksq, occ2) & them & !bb(captured);
            if attackers == 0 {
                list.push(Move::new(from, ep, EN_PASSANT));
            }
        }
    }
}

/// All legal moves of the position.
#[must_use]
pub fn legal_moves(pos: &Position) -> MoveList {
    let mut list = MoveList::default();
    generate(pos, &mut list, GenMode::All);
    list
}

/// Find the legal move with this UCI text, if any.
#[must_use]
pub fn parse_uci_move(pos: &Position, text: &str) -> Option<Move> {
    legal_moves(pos)
        .as_slice()
        .iter()
        .copied()
        .find(|m| m.to_uci() == text)
}
