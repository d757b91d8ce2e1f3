//! Pawn structure: doubled, isolated, backward, connected, side-by-side (phalanx) and unopposed
//! pawns, and passed pawns (no enemy pawn ahead on their own or an adjacent file); then, once the
//! piece terms have built the attack maps, the passed pawns that can advance safely.

use super::terms::EvalInfo;
use super::{Score, Term, Trace, s};
use crate::chess::bitboard::{
    FILE_A, FILE_H, Squares, adjacent_files_of, bb, forward, front_span, rank_mask,
    square_front_span,
};
use crate::chess::position::Position;
use crate::chess::types::{Color, PAWN, Square, file_of, rank_of, relative_square};

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// A pawn with an own pawn in front of it on the same file.
const DOUBLED: Score = s(-17, -29);
/// A pawn without own pawns on the adjacent files.
const ISOLATED: Score = s(-5, -9);
/// A pawn behind its neighbours whose stop square an enemy pawn controls.
const BACKWARD: Score = s(-4, -7);
/// Passed pawn bonus by relative rank.
#[rustfmt::skip]
const PASSED: [Score; 8] = [
    s(0, 0), s(-8, 6), s(-1, -13), s(24, -7), s(78, 6), s(149, 4), s(209, 34), s(0, 0),
];
/// Extra bonus for a passed pawn whose path to promotion is empty, by relative rank.
#[rustfmt::skip]
const PASSED_FREE_PATH: [Score; 8] = [
    s(0, 0), s(0, 4), s(1, 4), s(-20, 19), s(1, 20), s(-10, 32), s(140, 4), s(0, 0),
];
/// Per (relative rank - 1) x enemy king distance to a passed pawn's stop square.
const PASSED_KING_THEIRS: Score = s(-1, 8);
/// Per (relative rank - 1) x own king distance to a passed pawn's stop square.
const PASSED_KING_OWN: Score = s(-4, -2);
/// A pawn defended by an own pawn or with an own pawn beside it, by relative rank.
#[rustfmt::skip]
const CONNECTED: [Score; 8] = [
    s(0, 0), s(1, 2), s(8, 6), s(7, 3), s(23, 9), s(42, 25), s(-13, 81), s(0, 0),
];
/// A passed pawn whose stop square holds an enemy piece.
const PASSED_BLOCKED: Score = s(5, 6);
/// A passed pawn whose stop square is empty and not attacked by the enemy, by relative rank.
#[rustfmt::skip]
const PASSED_SAFE_PUSH: [Score; 8] = [
    s(0, 0), s(-9, 6), s(-8, 5), s(-3, 10), s(-19, 24), s(0, 51), s(-206, 135), s(0, 0),
];
/// A pawn, not doubled and not passed, with no enemy pawn ahead on its file, by relative rank.
#[rustfmt::skip]
const UNOPPOSED: [Score; 8] = [
    s(0, 0), s(-12, -5), s(-11, -3), s(0, 9), s(-3, 28), s(11, 0), s(0, 0), s(0, 0),
];
/// An isolated or backward pawn with no enemy pawn ahead on its file.
const WEAK_UNOPPOSED: Score = s(-4, -8);
/// A pawn with an own pawn beside it, by relative rank (on top of `CONNECTED`).
#[rustfmt::skip]
const PHALANX: [Score; 8] = [
    s(0, 0), s(1, 2), s(-2, -4), s(2, 6), s(1, 15), s(0, 40), s(0, 0), s(0, 0),
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
        if beside != 0 {
            structure += PHALANX[rel_rank];
        }
        let doubled = ahead & own != 0;
        if doubled {
            structure += DOUBLED;
        }
        let unopposed = ahead & enemy == 0;
        let in_front = front_span(c, rank_mask(rank_of(sq)));
        let weak = if adj & own == 0 {
            structure += ISOLATED;
            true
        } else {
            let stop = forward(c, b);
            let backward = own & adj & !in_front == 0 && stop & enemy_pawn_att != 0;
            if backward {
                structure += BACKWARD;
            }
            backward
        };
        if weak && unopposed {
            structure += WEAK_UNOPPOSED;
        }
        // Passed: no enemy pawn ahead on its own or an adjacent file.
        let is_passed = !doubled && unopposed && adj & in_front & enemy == 0;
        if !doubled && unopposed && !is_passed {
            structure += UNOPPOSED[rel_rank];
        }
        if is_passed {
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
