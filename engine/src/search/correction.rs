//! Static-evaluation correction by pawn structure.
//!
//! The network misjudges positions that share a pawn structure in much the same direction (a
//! blocked centre, a passed pawn it underrates). Each search result that bounds the truth on the
//! informative side tells how far the raw evaluation was off; that error is kept, as a moving
//! average per pawn structure and side to move, and added to later static evaluations of
//! positions with the same pawns.

use crate::chess::position::Position;

/// Entries per side to move; a power of two, indexed by the pawn key's top bits.
const ENTRIES: usize = 1 << 14;
/// Corrections are kept in 1/`GRAIN` centipawn, so that small weighted steps still add up.
const GRAIN: i32 = 256;
/// A step's weight is in 1/`WEIGHT_SCALE`: at weight `w` the entry moves `w / WEIGHT_SCALE` of
/// the way to the newest error.
const WEIGHT_SCALE: i32 = 256;

/// The learned evaluation errors, per side to move and pawn structure.
pub struct Correction {
    table: Vec<[i32; ENTRIES]>,
}

impl Default for Correction {
    fn default() -> Self {
        Correction {
            table: vec![[0; ENTRIES]; 2],
        }
    }
}

/// The entry of `pos` within its side's table.
#[inline(always)]
fn index(pos: &Position) -> usize {
    (pos.pawn_key() >> (64 - ENTRIES.trailing_zeros())) as usize
}

impl Correction {
    /// Forget everything.
    pub fn clear(&mut self) {
        for side in &mut self.table {
            side.fill(0);
        }
    }

    /// The correction for `pos` in centipawns, to add to its raw static evaluation.
    #[must_use]
    #[inline]
    pub fn of(&self, pos: &Position) -> i32 {
        self.table[pos.side as usize][index(pos)] / GRAIN
    }

    /// Move the correction of `pos` toward `error` (search score minus raw evaluation, in
    /// centipawns) by `weight` 256ths of the way; the entry stays within ±`limit` centipawns.
    #[inline]
    pub fn update(&mut self, pos: &Position, error: i32, weight: i32, limit: i32) {
        let weight = weight.clamp(0, WEIGHT_SCALE);
        let bound = limit * GRAIN;
        let target = error.clamp(-limit, limit) * GRAIN;
        let entry = &mut self.table[pos.side as usize][index(pos)];
        *entry = ((*entry * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE)
            .clamp(-bound, bound);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn position(fen: &str) -> Position {
        Position::from_fen(fen).unwrap()
    }

    #[test]
    fn a_correction_approaches_the_error_and_stays_within_the_limit() {
        let mut c = Correction::default();
        let pos = position("4k3/pp3ppp/8/3p4/3P4/8/PP3PPP/4K3 w - - 0 1");
        assert_eq!(c.of(&pos), 0);
        c.update(&pos, 40, 128, 64);
        assert_eq!(c.of(&pos), 20, "half the way at weight 128");
        for _ in 0..200 {
            c.update(&pos, 500, 16, 64);
        }
        // The average approaches the clamped error from below and truncates toward zero.
        assert_eq!(c.of(&pos), 63, "the error is clamped to the limit");
        for _ in 0..200 {
            c.update(&pos, -30, 16, 64);
        }
        assert_eq!(c.of(&pos), -29, "converges to the error from above");
        c.clear();
        assert_eq!(c.of(&pos), 0);
    }

    #[test]
    fn positions_share_a_correction_exactly_when_pawns_and_side_agree() {
        let mut c = Correction::default();
        let pos = position("4k3/pp3ppp/8/3p4/3P4/8/PP3PPP/4K3 w - - 0 1");
        let pieces_moved = position("r3k3/pp3ppp/8/3p4/3P4/5N2/PP3PPP/3QK3 w - - 0 1");
        let other_side = position("4k3/pp3ppp/8/3p4/3P4/8/PP3PPP/4K3 b - - 0 1");
        let pawn_moved = position("4k3/pp3ppp/8/3p4/3P4/7P/PP3PP1/4K3 w - - 0 1");
        c.update(&pos, 100, 256, 128);
        assert_eq!(c.of(&pieces_moved), 100);
        assert_eq!(c.of(&other_side), 0);
        assert_eq!(c.of(&pawn_moved), 0);
    }
}
