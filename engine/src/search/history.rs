//! Move-ordering memory: butterfly history, killers and countermoves.

use crate::chess::types::{Color, Move};

/// History values stay within ±this (gravity keeps them bounded).
pub const HISTORY_LIMIT: i32 = 16384;

/// Quiet-move statistics gathered during search.
pub struct History {
    butterfly: Vec<[[i32; 64]; 64]>,
    counter: [[Move; 64]; 12],
}

impl Default for History {
    fn default() -> Self {
        History {
            butterfly: vec![[[0; 64]; 64]; 2],
            counter: [[Move::NONE; 64]; 12],
        }
    }
}

impl History {
    /// Forget everything.
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// The history score of a quiet move for `side`.
    #[must_use]
    #[inline(always)]
    pub fn score(&self, side: Color, m: Move) -> i32 {
        self.butterfly[side as usize][m.from()][m.to()]
    }

    /// Apply a bonus (or malus if negative) with gravity toward zero.
    #[inline]
    pub fn update(&mut self, side: Color, m: Move, bonus: i32) {
        let h = &mut self.butterfly[side as usize][m.from()][m.to()];
        let b = bonus.clamp(-HISTORY_LIMIT, HISTORY_LIMIT);
        *h += b - *h * b.abs() / HISTORY_LIMIT;
    }

    /// The countermove that last refuted `prev` (which moved `piece`).
    #[must_use]
    #[inline(always)]
    pub fn countermove(&self, piece: u8, prev: Move) -> Move {
        if (piece as usize) < 12 {
            self.counter[piece as usize][prev.to()]
        } else {
            Move::NONE
        }
    }

    /// Remember `m` as the reply to `prev`.
    #[inline]
    pub fn set_countermove(&mut self, piece: u8, prev: Move, m: Move) {
        if (piece as usize) < 12 {
            self.counter[piece as usize][prev.to()] = m;
        }
    }
}
