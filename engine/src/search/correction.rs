//! Correction history: how far the search has found the static evaluation off for positions with
//! the same pawns, as a running average per side to move, added back to the evaluation of the
//! next position with those pawns. The network misjudges whole pawn structures at a time (a
//! blocked centre, a weak king's shelter); the search sees it, and the table remembers it.

use crate::chess::position::Position;
use crate::chess::types::{Color, PAWN};

/// Entries per side to move; a power of two, so the index is a mask of the pawn key.
const ENTRIES: usize = 16384;
/// Stored corrections are in 1/`GRAIN` cp, so small averages do not round away.
const GRAIN: i32 = 256;
/// A correction never exceeds this many cp either way.
const LIMIT_CP: i32 = 64;
/// The weights of the running average are in 1/`WEIGHT_SCALE`.
const WEIGHT_SCALE: i32 = 256;
/// The weight of a search of depth d is min(d + 1, this)/`WEIGHT_SCALE`: deep results count more.
const MAX_WEIGHT: i32 = 16;

/// The running average of (search score − static evaluation) by side to move and pawn structure.
pub struct CorrectionHistory {
    table: Vec<[i16; ENTRIES]>,
}

impl Default for CorrectionHistory {
    fn default() -> Self {
        CorrectionHistory {
            table: vec![[0; ENTRIES]; 2],
        }
    }
}

/// The table index of where the pawns of both colours stand, computed afresh (two
/// multiplications) rather than carried through every move as a key.
#[inline(always)]
fn pawn_index(white: u64, black: u64) -> usize {
    // A product's high bits depend on every bit of its factors, its low bits only on the low
    // ones: white's product is rotated so that its high half enters all of the second product,
    // whose high bits are the index.
    let key = (white.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(32) ^ black)
        .wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (key >> (64 - ENTRIES.trailing_zeros())) as usize
}

/// [`pawn_index`] of a position.
#[inline(always)]
fn index(pos: &Position) -> usize {
    pawn_index(
        pos.pieces(Color::White, PAWN),
        pos.pieces(Color::Black, PAWN),
    )
}

impl CorrectionHistory {
    /// Forget everything.
    pub fn clear(&mut self) {
        self.table.iter_mut().for_each(|t| t.fill(0));
    }

    /// `static_eval` of `pos` corrected by what searches of positions with its pawns found.
    #[must_use]
    #[inline]
    pub fn corrected(&self, pos: &Position, static_eval: i32) -> i32 {
        static_eval + i32::from(self.table[pos.side as usize][index(pos)]) / GRAIN
    }

    /// A search of `pos` to `depth` returned `score` where the network said `static_eval`:
    /// move the average toward their difference.
    #[inline]
    pub fn update(&mut self, pos: &Position, depth: i32, score: i32, static_eval: i32) {
        let limit = LIMIT_CP * GRAIN;
        let target = ((score - static_eval) * GRAIN).clamp(-limit, limit);
        let weight = (depth + 1).clamp(1, MAX_WEIGHT);
        let entry = &mut self.table[pos.side as usize][index(pos)];
        let average =
            (i32::from(*entry) * (WEIGHT_SCALE - weight) + target * weight) / WEIGHT_SCALE;
        // |average| ≤ LIMIT_CP·GRAIN = 16384, which fits an i16.
        *entry = average.clamp(-limit, limit) as i16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_errors_are_learned_per_pawn_structure_and_side() {
        let mut corrections = CorrectionHistory::default();
        let closed = Position::from_fen("4k3/8/8/2p1p3/2P1P3/8/8/4K3 w - - 0 1").unwrap();
        let open = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1").unwrap();
        let other_side = Position::from_fen("4k3/8/8/2p1p3/2P1P3/8/8/4K3 b - - 0 1").unwrap();
        for _ in 0..200 {
            corrections.update(&closed, 12, 40, 0);
        }
        let learned = corrections.corrected(&closed, 0);
        assert!((35..=40).contains(&learned), "{learned}");
        assert_eq!(corrections.corrected(&open, 0), 0);
        assert_eq!(corrections.corrected(&other_side, 0), 0);
        // Errors beyond the limit are clamped (the average approaches the limit from below).
        for _ in 0..500 {
            corrections.update(&closed, 12, 5000, 0);
        }
        let clamped = corrections.corrected(&closed, 100) - 100;
        assert!((LIMIT_CP - 1..=LIMIT_CP).contains(&clamped), "{clamped}");
        corrections.clear();
        assert_eq!(corrections.corrected(&closed, 7), 7);
    }

    #[test]
    fn every_pawn_of_either_colour_counts_in_the_index() {
        // Pawn structures drawn from a fixed stream: every single pawn moved one square
        // forward changes the index, and the structures spread over the table.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let ranks_2_to_7 = 0x00ff_ffff_ffff_ff00_u64;
        let mut indices = std::collections::HashSet::new();
        for _ in 0..2000 {
            let white = next() & next() & ranks_2_to_7;
            let black = next() & next() & ranks_2_to_7 & !white;
            let index = pawn_index(white, black);
            indices.insert(index);
            for square in 8..48 {
                let pawn = 1u64 << square;
                let ahead = pawn << 8;
                if white & pawn != 0 && (white | black) & ahead == 0 {
                    let advanced = white ^ pawn ^ ahead;
                    assert_ne!(pawn_index(advanced, black), index, "white {square}");
                }
                let pawn = 1u64 << (square + 8);
                let ahead = pawn >> 8;
                if black & pawn != 0 && (white | black) & ahead == 0 {
                    let advanced = black ^ pawn ^ ahead;
                    assert_ne!(pawn_index(white, advanced), index, "black {square}");
                }
            }
        }
        assert!(indices.len() > 1850, "{} distinct of 2000", indices.len());
    }
}
