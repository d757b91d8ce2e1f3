//! King, bishop and knight against the bare king (KBNK): drive the bare king to a corner of the
//! bishop's colour, the only corners where the mate can be forced.
//!
//! The network sees KBNK as "a piece and a bit up" and has no notion of which corner matters, so the
//! search wanders until the fifty-move rule (docs/randfall.md: the first Randfall). This term is
//! added to the network's output only with exactly these four pieces on the board, so every other
//! position (KBBK included) is evaluated exactly as before.

use super::popcnt::popcount;
use crate::chess::position::Position;
use crate::chess::types::{BISHOP, Color, KNIGHT, Square, file_of, rank_of};

/// Centipawns for each step by which the bare king stands closer than `MAX_DISTANCE` to the corner.
/// The 40 of the first submission (`T-0002`) was enough for the hand-written evaluation it was
/// added to; the network's own KBNK scores vary by more than that from square to square, and at 40
/// (or 100) the search still wandered into the wrong corner (docs/randfall.md).
pub const STEP_BONUS: i32 = 200;

/// Distances (files plus ranks) of `MAX_DISTANCE` and more earn nothing.
pub const MAX_DISTANCE: i32 = 7;

/// The light squares (b1, d1, …, a2, …): h1 is light.
const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;

/// The light corners h1 and a8, and the dark corners a1 and h8.
const LIGHT_CORNERS: [Square; 2] = [7, 56];
const DARK_CORNERS: [Square; 2] = [0, 63];

/// White-relative bonus: `STEP_BONUS` per step by which the bare king's distance to the nearer
/// corner of the bishop's colour lies below `MAX_DISTANCE` (1400 in that corner); 0 unless the board
/// holds exactly king, bishop and knight against the bare king.
#[inline(always)]
#[must_use]
pub fn bonus(pos: &Position) -> i32 {
    if popcount(pos.occupied()) != 4 {
        return 0;
    }
    for strong in [Color::White, Color::Black] {
        let bishops = pos.pieces(strong, BISHOP);
        if popcount(pos.us(strong)) == 3
            && popcount(bishops) == 1
            && popcount(pos.pieces(strong, KNIGHT)) == 1
        {
            let corners = if bishops & LIGHT_SQUARES != 0 {
                LIGHT_CORNERS
            } else {
                DARK_CORNERS
            };
            let king = pos.king_square(strong.flip());
            let distance = corners
                .iter()
                .map(|&corner| manhattan(king, corner))
                .min()
                .unwrap_or(MAX_DISTANCE)
                .min(MAX_DISTANCE);
            let value = STEP_BONUS * (MAX_DISTANCE - distance);
            return if strong == Color::White {
                value
            } else {
                -value
            };
        }
    }
    0
}

#[inline(always)]
fn manhattan(a: Square, b: Square) -> i32 {
    (file_of(a) as i32 - file_of(b) as i32).abs() + (rank_of(a) as i32 - rank_of(b) as i32).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bonus_of(fen: &str) -> i32 {
        bonus(&Position::from_fen(fen).unwrap())
    }

    #[test]
    fn counts_steps_to_the_corner_of_the_bishops_colour() {
        // Light-squared bishop (d3 is light): corners h1 and a8.
        assert_eq!(bonus_of("8/8/8/8/8/3BN3/2K5/7k w - - 0 1"), 1400, "in h1");
        assert_eq!(
            bonus_of("8/8/8/8/8/3BN3/2K4k/8 w - - 0 1"),
            1200,
            "h2 is one step from h1"
        );
        // The dark corners a1/h8 do not count for a light bishop: king on a1 is 7 from h1 and a8.
        assert_eq!(bonus_of("8/8/8/8/8/3BN3/4K3/k7 w - - 0 1"), 0);
        // Dark-squared bishop (e3 is dark): a1 is the corner.
        assert_eq!(bonus_of("8/8/8/8/8/4BN2/4K3/k7 w - - 0 1"), 1400);
        // Dark bishop (f4), king on d4: 6 steps from a1, 8 from h8.
        assert_eq!(bonus_of("8/8/8/8/3k1B2/6N1/4K3/8 w - - 0 1"), 200);
    }

    #[test]
    fn is_relative_to_white_and_symmetric() {
        assert_eq!(
            bonus_of("K7/8/8/8/8/3bn3/2k5/8 b - - 0 1"),
            -1400,
            "black bishop d3, white king a8"
        );
        assert_eq!(
            bonus_of("8/8/8/8/8/3BN3/2K5/7k w - - 0 1"),
            -bonus_of("7K/2k5/3bn3/8/8/8/8/8 b - - 0 1")
        );
    }

    #[test]
    fn nothing_outside_kbnk() {
        for fen in [
            "8/8/8/8/8/3BB3/2K5/7k w - - 0 1",  // KBBK
            "8/8/8/8/8/3NN3/2K5/7k w - - 0 1",  // KNNK
            "8/8/8/8/8/3BN3/2K5/6rk w - - 0 1", // KBNKR
            "8/8/8/8/8/3BNP2/2K5/7k w - - 0 1", // KBNPK
            "8/8/8/8/8/4Q3/2K5/7k w - - 0 1",   // KQK
        ] {
            assert_eq!(bonus_of(fen), 0, "{fen}");
        }
    }
}
