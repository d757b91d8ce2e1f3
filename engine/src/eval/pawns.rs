//! Pawn structure: doubled, isolated, backward, connected and passed pawns; then, once the piece
//! terms have built the attack maps, the passed pawns that can advance safely.

use super::terms::EvalInfo;
use super::{Score, Term, Trace, s};
use crate::chess::bitboard::{
    FILE_A, FILE_H, Squares, adjacent_files_of, bb, file_mask, forward, front_span, rank_mask,
    square_front_span,
};
use crate::chess::position::Position;
use crate::chess::types::{Color, PAWN, Square, file_of, rank_of, relative_square};

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// A pawn with an own pawn in front of it on the same file.
const DOUBLED: Score = s(-6, -20);
/// A pawn without own pawns on the adjacent files.
const ISOLATED: Score = s(-11, -6);
/// A pawn behind its neighbours whose stop square an enemy pawn controls.
const BACKWARD: Score = s(-4, -13);
/// Passed pawn bonus by relative rank.
#[rustfmt::skip]
const PASSED: [Score; 8] = [
    s(0, 0), s(-8, 18), s(17, -5), s(42, -2), s(76, 12), s(153, 24), s(201, 31), s(0, 0),
];
/// Extra bonus for a passed pawn whose path to promotion is empty, by relative rank.
#[rustfmt::skip]
const PASSED_FREE_PATH: [Score; 8] = [
    s(0, 0), s(-1, 0), s(4, -9), s(0, 2), s(0, 13), s(-15, 29), s(169, -19), s(0, 0),
];
/// Per (relative rank - 1) x enemy king distance to a passed pawn's stop square.
const PASSED_KING_THEIRS: Score = s(-3, 9);
/// Per (relative rank - 1) x own king distance to a passed pawn's stop square.
const PASSED_KING_OWN: Score = s(-2, -3);
/// A pawn defended by an own pawn or with an own pawn beside it, by relative rank.
#[rustfmt::skip]
const CONNECTED: [Score; 8] = [
    s(0, 0), s(2, -1), s(9, 0), s(10, 7), s(23, 15), s(30, 43), s(-36, 106), s(0, 0),
];
/// A passed pawn whose stop square holds an enemy piece.
const PASSED_BLOCKED: Score = s(3, -2);
/// A passed pawn whose stop square is empty and not attacked by the enemy, by relative rank.
#[rustfmt::skip]
const PASSED_SAFE_PUSH: [Score; 8] = [
    s(0, 0), s(6, -2), s(-1, 9), s(-10, 22), s(3, 33), s(22, 48), s(-226, 150), s(0, 0),
];
// texel: end

/// Chebyshev (king-move) distance between squares.
#[inline(always)]
pub fn distance(a: Square, b: Square) -> i32 {
    let df = (file_of(a) as i32 - file_of(b) as i32).abs();
    let dr = (rank_of(a) as i32 - rank_of(b) as i32).abs();
    df.max(dr)
}

#[inline(always)]
fn side<T: Trace>(pos: &Position, c: Color, info: &mut EvalInfo, trace: &mut T) -> Score {
    let them = c.flip();
    let own = pos.pieces(c, PAWN);
    let enemy = pos.pieces(them, PAWN);
    let enemy_pawn_att = info.attacked_by[them as usize][PAWN];
    let (own_k, their_k) = (pos.king_square(c), pos.king_square(them));
    let mut structure = s(0, 0);
    let mut passed = s(0, 0);
    for sq in Squares(own) {
        let b = bb(sq);
        let file = file_mask(file_of(sq));
        let adj = adjacent_files_of(file_of(sq));
        let ahead = square_front_span(c, sq);
        let rel_rank = if c == Color::White {
            rank_of(sq)
        } else {
            7 - rank_of(sq)
        };
        let beside = (b << 1 & !FILE_A | b >> 1 & !FILE_H) & own;
        if beside != 0 || info.attacked_by[c as usize][PAWN] & b != 0 {
            structure += CONNECTED[rel_rank];
        }
        let doubled = ahead & own != 0;
        if doubled {
            structure += DOUBLED;
        }
        if adj & own == 0 {
            structure += ISOLATED;
        } else {
            let level_or_behind = !front_span(c, rank_mask(rank_of(sq)));
            let stop = forward(c, b);
            if own & adj & level_or_behind == 0 && stop & enemy_pawn_att != 0 {
                structure += BACKWARD;
            }
        }
        if !doubled && ahead & (file | adj) & enemy == 0 {
            info.passed[c as usize] |= b;
            let mut bonus = PASSED[rel_rank];
            let stop_sq = if c == Color::White { sq + 8 } else { sq - 8 };
            let weight = rel_rank as i32 - 1;
            bonus += PASSED_KING_THEIRS * (weight * distance(their_k, stop_sq));
            bonus += PASSED_KING_OWN * (weight * distance(own_k, stop_sq));
            if ahead & pos.occupied() == 0 {
                bonus += PASSED_FREE_PATH[rel_rank];
            }
            if forward(c, b) & pos.us(them) != 0 {
                bonus += PASSED_BLOCKED;
            }
            passed += bonus;
        }
    }
    trace.add(Term::PawnStructure, c, structure);
    trace.add(Term::Passed, c, passed);
    structure + passed
}

/// Pawn terms for both sides, white-relative; records the passed pawns in `info`.
#[inline(always)]
pub fn evaluate<T: Trace>(pos: &Position, info: &mut EvalInfo, trace: &mut T) -> Score {
    side(pos, Color::White, info, trace) - side(pos, Color::Black, info, trace)
}

/// Passed pawns that can advance safely, white-relative: these need the full attack maps, so
/// they are scored after the piece terms have built them.
#[inline(always)]
pub fn safe_pushes<T: Trace>(pos: &Position, info: &EvalInfo, trace: &mut T) -> Score {
    let side = |c: Color, trace: &mut T| {
        let mut bonus = s(0, 0);
        for sq in Squares(info.passed[c as usize]) {
            let stop = forward(c, bb(sq));
            if stop & pos.occupied() == 0 && stop & info.attacked[c.flip() as usize] == 0 {
                bonus += PASSED_SAFE_PUSH[relative_square(c, sq) >> 3];
            }
        }
        trace.add(Term::Passed, c, bonus);
        bonus
    };
    side(Color::White, trace) - side(Color::Black, trace)
}
