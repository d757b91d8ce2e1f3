//! King safety: weighted attacks on the king zone, undefended zone squares, and the pawn shelter.

use super::popcnt::popcount;
use super::terms::EvalInfo;
use super::{Score, Term, Trace, s};
use crate::chess::bitboard::{file_mask, square_front_span};
use crate::chess::position::Position;
use crate::chess::types::{Color, KING, PAWN, QUEEN, file_of};

// texel: begin. Fitted to Coherent's self-play games by tools/texel (`texel tune`,
// docs/texel.md); regenerate them rather than edit by hand.
/// Own pawn in front of the king on a file of its shelter.
const SHELTER_PAWN: Score = s(31, -23);
/// Shelter file without own pawns.
const SHELTER_OPEN: Score = s(9, -14);
/// Shelter file without any pawns.
const SHELTER_FULLY_OPEN: Score = s(-9, -7);
/// King-zone square attacked by the enemy and defended only by the king.
const WEAK_ZONE_SQUARE: Score = s(1, 0);
// texel: end

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
