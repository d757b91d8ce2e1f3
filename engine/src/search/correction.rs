//! Static-evaluation correction: how far the network's eval of a pawn structure has been off.
//!
//! The network misjudges some pawn structures the same way in every position that has them.
//! When a search result lands outside the static eval's side of its bound, the difference is
//! folded into a running average kept per side to move and pawn structure, and later static
//! evals of positions with that structure are shifted by it. Pruning that compares the eval
//! with alpha or beta then errs less often in those structures.

use crate::chess::position::Position;
use crate::chess::types::{Color, PAWN};

/// Pawn-structure slots per side to move (a power of two).
const SLOTS: usize = 1 << 14;
/// Stored corrections are in 1/`GRAIN` centipawns, so small weights still move them.
const GRAIN: i32 = 256;
/// Weights are in 1/`WEIGHT_SCALE`.
const WEIGHT_SCALE: i32 = 256;

/// The correction table, per side to move and pawn-structure slot.
pub struct CorrectionHistory {
    slots: Vec<[i16; SLOTS]>,
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory {
            slots: vec![[0; SLOTS]; 2],
        }
    }
}

/// The slot of `pos`'s pawn structure: a multiplicative hash of both sides' pawns, top bits.
#[inline(always)]
fn pawn_slot(pos: &Position) -> usize {
    let white = pos.pieces(Color::White, PAWN);
    let black = pos.pieces(Color::Black, PAWN);
    let mixed =
        white.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    (mixed >> (64 - SLOTS.trailing_zeros())) as usize
}

impl CorrectionHistory {
    /// Forget everything (a new game).
    pub fn clear(&mut self) {
        for side in &mut self.slots {
            side.fill(0);
        }
    }

    /// `raw_eval` of `pos` shifted by its pawn structure's correction, in centipawns.
    #[must_use]
    #[inline]
    pub fn corrected(&self, pos: &Position, raw_eval: i32) -> i32 {
        raw_eval + i32::from(self.slots[pos.side as usize][pawn_slot(pos)]) / GRAIN
    }

    /// A search of `depth` found `pos` worth `score` where the network said `raw_eval`: move the
    /// structure's correction toward the difference, deeper searches by more (up to
    /// `max_weight`/256), and keep it within ±`limit` centipawns.
    pub fn update(
        &mut self,
        pos: &Position,
        depth: i32,
        score: i32,
        raw_eval: i32,
        max_weight: i32,
        limit: i32,
    ) {
        let slot = &mut self.slots[pos.side as usize][pawn_slot(pos)];
        let weight = (depth + 1).clamp(1, max_weight);
        let target = (score - raw_eval).clamp(-limit, limit) * GRAIN;
        let averaged =
            (i32::from(*slot) * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        *slot = averaged.clamp(-limit * GRAIN, limit * GRAIN) as i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::position::Position;

    fn position(fen: &str) -> Position {
        Position::from_fen(fen).expect("test FEN")
    }

    #[test]
    fn repeated_results_pull_the_eval_toward_them_within_the_limit() {
        let mut table = CorrectionHistory::default();
        let pos = position("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        assert_eq!(table.corrected(&pos, 10), 10);
        for _ in 0..200 {
            table.update(&pos, 12, 110, 10, 16, 64);
        }
        // The difference was 100, beyond the limit of 64: the correction stops at the limit
        // (the average's integer steps leave it just short).
        let capped = table.corrected(&pos, 10);
        assert!((10 + 63..=10 + 64).contains(&capped), "{capped}");
        for _ in 0..400 {
            table.update(&pos, 12, -20, 10, 16, 64);
        }
        let settled = table.corrected(&pos, 10);
        assert!((-20..=-19).contains(&settled), "{settled}");
        table.clear();
        assert_eq!(table.corrected(&pos, 10), 10);
    }

    #[test]
    fn the_structure_and_the_side_to_move_are_told_apart() {
        let mut table = CorrectionHistory::default();
        let white = position("4k3/pp6/8/8/8/8/PPP5/4K3 w - - 0 1");
        let black_to_move = position("4k3/pp6/8/8/8/8/PPP5/4K3 b - - 0 1");
        let other_pawns = position("4k3/pp6/8/8/8/8/PP3P2/4K3 w - - 0 1");
        let same_pawns_other_pieces = position("3qk3/pp6/8/8/8/8/PPP5/3QK3 w - - 0 1");
        for _ in 0..100 {
            table.update(&white, 8, 40, 0, 16, 64);
        }
        let shift = table.corrected(&white, 0);
        assert!(shift > 30, "{shift}");
        assert_eq!(table.corrected(&black_to_move, 0), 0);
        assert_eq!(table.corrected(&other_pawns, 0), 0);
        assert_eq!(table.corrected(&same_pawns_other_pieces, 0), shift);
    }
}
