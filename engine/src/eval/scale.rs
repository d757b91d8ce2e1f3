//! Endgame scaling: material that cannot (or can hardly) win pulls the endgame score toward 0.
//! Deliberately nothing specific to K+B+N v K: that belongs to a later, oracle-judged change.

use super::popcnt::popcount;
use crate::chess::bitboard::LIGHT_SQUARES;
use crate::chess::position::Position;
use crate::chess::types::{BISHOP, Color, KING, KNIGHT, PAWN, QUEEN, ROOK};

/// Full scale.
pub const SCALE_NORMAL: i32 = 64;

#[inline(always)]
fn non_pawn_material(pos: &Position, c: Color) -> i32 {
    325 * popcount(pos.pieces(c, KNIGHT) | pos.pieces(c, BISHOP))
        + 500 * popcount(pos.pieces(c, ROOK))
        + 975 * popcount(pos.pieces(c, QUEEN))
}

/// The endgame scale (0..=64) for a white-relative endgame score `eg`.
#[inline(always)]
pub fn scale_factor(pos: &Position, eg: i32) -> i32 {
    let strong = if eg >= 0 { Color::White } else { Color::Black };
    let weak = strong.flip();
    let strong_npm = non_pawn_material(pos, strong);
    let weak_npm = non_pawn_material(pos, weak);
    if pos.pieces(strong, PAWN) == 0 {
        // K, K+minor (v anything): no mate possible for the strong side.
        if strong_npm <= 325 {
            return 0;
        }
        // K+N+N v bare king: no forced mate.
        if pos.pieces(weak, PAWN) == 0
            && weak_npm == 0
            && pos.us(strong) & !pos.kinds[KING] == pos.pieces(strong, KNIGHT)
        {
            return 0;
        }
        // Up by no more than a minor piece (K+R v K+minor, K+R+B v K+R, …): usually drawn.
        if strong_npm - weak_npm <= 325 {
            return 12;
        }
    }
    // Opposite-coloured bishops.
    let (wb, bb) = (
        pos.pieces(Color::White, BISHOP),
        pos.pieces(Color::Black, BISHOP),
    );
    if popcount(wb) == 1
        && popcount(bb) == 1
        && ((wb & LIGHT_SQUARES != 0) != (bb & LIGHT_SQUARES != 0))
    {
        let only_bishops = strong_npm == 325 && weak_npm == 325;
        return if only_bishops { 32 } else { 48 };
    }
    SCALE_NORMAL
}
