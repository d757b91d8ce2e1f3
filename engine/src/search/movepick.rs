//! Move ordering: TT move, good captures (MVV-LVA, SEE ≥ 0), killers, countermove, quiets by
//! butterfly plus continuation history, bad captures. All moves are generated legal up front, then picked best-first.

use std::mem::MaybeUninit;

use super::history::{Continuations, History};
use super::see::{SEE_VALUE, see_ge};
use crate::chess::movegen::{GenMode, MAX_MOVES, MoveList, generate};
use crate::chess::position::Position;
use crate::chess::types::{EN_PASSANT, Move, PAWN};

const TT_MOVE: i32 = 1 << 30;
const GOOD_NOISY: i32 = 1 << 28;
const KILLER: i32 = 1 << 26;
const COUNTER: i32 = (1 << 26) - 1000;
const BAD_NOISY: i32 = -(1 << 28);

/// Best-first iterator over the legal moves of a position.
pub struct MovePicker {
    list: MoveList,
    scores: [MaybeUninit<i32>; MAX_MOVES],
    next: usize,
}

/// The killers and countermove a node offers to the picker.
#[derive(Clone, Copy, Default)]
pub struct Refutations {
    /// Two killer moves of this ply.
    pub killers: [Move; 2],
    /// Countermove to the previous move.
    pub counter: Move,
}

impl MovePicker {
    /// Generate and score the moves of `pos`, quiets by `history` after the moves in `cont`.
    pub fn new(
        pos: &Position,
        mode: GenMode,
        tt_move: Move,
        refs: Refutations,
        history: &History,
        cont: &Continuations,
    ) -> MovePicker {
        let mut list = MoveList::default();
        generate(pos, &mut list, mode);
        let mut scores = [MaybeUninit::uninit(); MAX_MOVES];
        for (i, &m) in list.as_slice().iter().enumerate() {
            scores[i] = MaybeUninit::new(if m == tt_move {
                TT_MOVE
            } else if m.is_noisy() {
                let victim = if m.flags() == EN_PASSANT {
                    PAWN
                } else {
                    pos.kind_at(m.to()).unwrap_or(PAWN)
                };
                let attacker = pos.kind_at(m.from()).unwrap_or(PAWN);
                let mvv_lva = SEE_VALUE[victim] * 16 - attacker as i32
                    + m.promotion().map_or(0, |p| SEE_VALUE[p]);
                if see_ge(pos, m, 0) {
                    GOOD_NOISY + mvv_lva
                } else {
                    BAD_NOISY + mvv_lva
                }
            } else if m == refs.killers[0] {
                KILLER
            } else if m == refs.killers[1] {
                KILLER - 1
            } else if m == refs.counter {
                COUNTER
            } else {
                history.quiet_score(pos.side, pos.board[m.from()], m, cont)
            });
        }
        MovePicker {
            list,
            scores,
            next: 0,
        }
    }

    /// Number of legal moves.
    #[must_use]
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True if there are no legal moves.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The next best move and its ordering score.
    pub fn next_move(&mut self) -> Option<(Move, i32)> {
        let n = self.list.len();
        if self.next >= n {
            return None;
        }
        // SAFETY: `new` wrote a score for every index below the list length.
        let scores = unsafe { std::slice::from_raw_parts(self.scores.as_ptr().cast::<i32>(), n) };
        let mut best = self.next;
        for i in self.next + 1..n {
            if scores[i] > scores[best] {
                best = i;
            }
        }
        let m = self.list.as_slice()[best];
        let sc = scores[best];
        // Selection sort step: move the chosen entry into place.
        self.scores.swap(best, self.next);
        self.list.swap(best, self.next);
        self.next += 1;
        Some((m, sc))
    }
}

/// True if an ordering score marks a losing capture.
#[must_use]
pub fn is_bad_noisy(score: i32) -> bool {
    score < BAD_NOISY / 2
}
