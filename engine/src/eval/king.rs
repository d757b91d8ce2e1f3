//! King safety: weighted attacks on the king zone, safe checks, undefended zone squares, the
//! pawn shelter and the enemy pawns storming it.

use super::pawns::distance;
use super::popcnt::popcount;
use super::terms::EvalInfo;
use super::{Score, Term, Trace, s};
use crate::chess::attacks::{bishop_attacks, knight_attacks, rook_attacks};
use crate::chess::bitboard::{
    Bitboard, Squares, file_mask, front_span, rank_mask, square_front_span,
};
use crate::chess::position::Position;
use crate::chess::types::{
    BISHOP, Color, KING, KNIGHT, PAWN, QUEEN, ROOK, file_of, rank_of, relative_square,
};

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// Own pawn in front of the king on a file of its shelter.
const SHELTER_PAWN: Score = s(29, -27);
/// Shelter file without own pawns.
const SHELTER_OPEN: Score = s(1, -3);
/// Shelter file without any pawns.
const SHELTER_FULLY_OPEN: Score = s(3, -26);
/// King-zone square attacked by the enemy and defended only by the king.
const WEAK_ZONE_SQUARE: Score = s(-9, 5);
/// Per square from which an enemy knight can give a safe check (not defended, not held by the enemy).
const SAFE_CHECK_KNIGHT: Score = s(-30, 1);
/// Per square from which an enemy bishop can give a safe check.
const SAFE_CHECK_BISHOP: Score = s(-8, -14);
/// Per square from which an enemy rook can give a safe check.
const SAFE_CHECK_ROOK: Score = s(-70, 21);
/// Per square from which the enemy queen can give a safe check.
const SAFE_CHECK_QUEEN: Score = s(-34, 17);
/// Per square of king distance to the nearest own pawn (none with no pawns).
const KING_PAWN_DISTANCE: Score = s(5, -15);
/// An enemy pawn on a shelter file ahead of the king, by that pawn's relative rank.
#[rustfmt::skip]
const PAWN_STORM: [Score; 8] = [
    s(0, 0), s(11, -12), s(14, -13), s(11, -13), s(15, -17), s(-3, -12), s(-9, 25), s(0, 0),
];
// texel: end

/// The enemy's safe checks against the king of `c` per checking kind (knight, bishop, rook,
/// queen): squares from which that kind would give check, that an enemy piece of that kind
/// reaches, not held by the enemy and not `defended` by `c`.
#[inline(always)]
#[must_use]
fn safe_checks(
    pos: &Position,
    c: Color,
    attacked_by_them: &[Bitboard; 6],
    defended: Bitboard,
) -> [i32; 4] {
    let ksq = pos.king_square(c);
    let occ = pos.occupied();
    let safe = !defended & !pos.us(c.flip());
    let diagonal = bishop_attacks(ksq, occ);
    let straight = rook_attacks(ksq, occ);
    [
        popcount(knight_attacks(ksq) & attacked_by_them[KNIGHT] & safe),
        popcount(diagonal & attacked_by_them[BISHOP] & safe),
        popcount(straight & attacked_by_them[ROOK] & safe),
        popcount((diagonal | straight) & attacked_by_them[QUEEN] & safe),
    ]
}

#[inline(always)]
fn side<T: Trace>(pos: &Position, c: Color, info: &EvalInfo, trace: &mut T) -> Score {
    let ci = c as usize;
    let them = c.flip() as usize;
    let ksq = pos.king_square(c);
    let zone = info.king_zone[ci];

    let mut score = s(0, 0);
    // Attack danger grows quadratically once two pieces join in; much less without the queen.
    if info.king_attackers[them] >= 2 {
        let danger = info.king_attack_weight[them] + 12 * info.king_attackers[them];
        let mut penalty = danger * danger / 640;
        if pos.pieces(c.flip(), QUEEN) == 0 {
            penalty /= 3;
        }
        score.mg -= penalty.min(600);
        score.eg -= penalty.min(600) / 8;
    }
    let checks = safe_checks(pos, c, &info.attacked_by[them], info.attacked[ci]);
    score += SAFE_CHECK_KNIGHT * checks[0]
        + SAFE_CHECK_BISHOP * checks[1]
        + SAFE_CHECK_ROOK * checks[2]
        + SAFE_CHECK_QUEEN * checks[3];
    if let Some(nearest) = Squares(pos.pieces(c, PAWN))
        .map(|sq| distance(ksq, sq))
        .min()
    {
        score += KING_PAWN_DISTANCE * nearest;
    }
    let defended_by_others = info.attacked[ci] & !info.attacked_by[ci][KING];
    let weak = zone & info.attacked[them] & !defended_by_others;
    score += WEAK_ZONE_SQUARE * popcount(weak);

    // Shelter: pawns directly in front of the king on its file and the two beside it.
    let kf = file_of(ksq) as i32;
    let in_front = square_front_span(c, ksq);
    let mut shelter = s(0, 0);
    for f in (kf - 1).max(0)..=(kf + 1).min(7) {
        let file = file_mask(f as usize);
        let own = pos.pieces(c, PAWN) & file;
        if own == 0 {
            shelter += SHELTER_OPEN;
            if pos.kinds[PAWN] & file == 0 {
                shelter += SHELTER_FULLY_OPEN;
            }
        } else if own & (in_front | (in_front >> 1) | (in_front << 1)) != 0 {
            shelter += SHELTER_PAWN;
        }
        let ahead = front_span(c, rank_mask(rank_of(ksq)));
        for storm in Squares(pos.pieces(c.flip(), PAWN) & file & ahead) {
            shelter += PAWN_STORM[relative_square(c.flip(), storm) >> 3];
        }
    }
    score += shelter;
    trace.add(Term::KingSafety, c, score);
    score
}

/// King safety for both sides, white-relative; reads the attack maps built by the piece terms.
#[inline(always)]
pub fn evaluate<T: Trace>(pos: &Position, info: &EvalInfo, trace: &mut T) -> Score {
    side(pos, Color::White, info, trace) - side(pos, Color::Black, info, trace)
}
