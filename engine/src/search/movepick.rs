//! Move ordering: TT move, good captures (MVV-LVA with capture history, SEE ≥ 0), killers,
//! countermove, quiets by butterfly plus continuation history, bad captures. All moves are generated legal up front, then picked best-first.

use std::mem::MaybeUninit;

use super::history::{Continuations, History};
use super::see::{SEE_VALUE, see_ge};
use crate::chess::movegen::{GenMode, MAX_MOVES, MoveList, generate};
use crate::chess::position::Position;
use crate::chess::types::{Move, PAWN};

// The classes' ranges do not overlap: a capture's MVV-LVA with history is within ±2^15, a
// quiet's history within ±3 × HISTORY_LIMIT (±49,152). All fit 23 bits, so a score and an index
// share an i32.
const TT_MOVE: i32 = 1 << 22;
const GOOD_NOISY: i32 = 1 << 21;
const KILLER: i32 = 1 << 20;
const COUNTER: i32 = (1 << 20) - 1000;
const BAD_NOISY: i32 = -(1 << 21);
/// Capture history is divided by this before it joins MVV-LVA: at most ±4,096, about two and a
/// half pawns of victim value (1,600 each), so history reorders captures of near-equal victims
/// but a queen still comes before a pawn.
const CAPTURE_HISTORY_DIV: i32 = 4;

/// Best-first iterator over the legal moves of a position.
pub struct MovePicker {
    list: MoveList,
    /// Per entry: its ordering score above 8 bits of `255 - index`, so that the largest key is
    /// the best score at its lowest index. One comparison of keys is the two comparisons of
    /// score and index that a selection sort with ties to the earliest entry makes.
    keys: [MaybeUninit<i32>; MAX_MOVES],
    next: usize,
}

/// The selection key of `score` at list `index`.
#[inline(always)]
fn key(score: i32, index: usize) -> i32 {
    (score << 8) | (255 - index) as i32
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
    // Inlined so that the picker is built where it lives, not copied there (1.5 KB per node).
    #[inline(always)]
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
        let mut keys = [MaybeUninit::uninit(); MAX_MOVES];
        for (i, &m) in list.as_slice().iter().enumerate() {
            let score = if m == tt_move {
                TT_MOVE
            } else if m.is_noisy() {
                let victim = pos.captured_kind(m);
                let attacker = pos.kind_at(m.from()).unwrap_or(PAWN);
                let order = SEE_VALUE[victim.unwrap_or(PAWN)] * 16 - attacker as i32
                    + m.promotion().map_or(0, |p| SEE_VALUE[p])
                    + history.noisy_score(pos.board[m.from()], m, victim) / CAPTURE_HISTORY_DIV;
                if see_ge(pos, m, 0) {
                    GOOD_NOISY + order
                } else {
                    BAD_NOISY + order
                }
            } else if m == refs.killers[0] {
                KILLER
            } else if m == refs.killers[1] {
                KILLER - 1
            } else if m == refs.counter {
                COUNTER
            } else {
                history.quiet_score(pos.side, pos.board[m.from()], m, cont)
            };
            keys[i] = MaybeUninit::new(key(score, i));
        }
        MovePicker {
            list,
            keys,
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
        // SAFETY: `new` wrote a key for every index below the list length.
        let keys = unsafe { std::slice::from_raw_parts(self.keys.as_ptr().cast::<i32>(), n) };
        // Keys are distinct (each holds its index), so the largest names its entry: a plain
        // maximum, which the compiler turns into vector code.
        let best_key = keys[self.next..].iter().copied().fold(i32::MIN, i32::max);
        let best = 255 - (best_key & 0xff) as usize;
        let m = self.list.as_slice()[best];
        let sc = best_key >> 8;
        // Selection sort step: the entry at `next` takes the chosen one's place, and its key
        // that place's index.
        // SAFETY: as above, `next` and `best` are below the list length.
        let displaced = unsafe { self.keys[self.next].assume_init() };
        self.keys[best] = MaybeUninit::new(key(displaced >> 8, best));
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

/// [`see_ge`] for a move the picker returned with ordering score `order`: the picker already
/// knows whether a noisy move's exchange reaches 0, which settles every threshold on the far
/// side of 0; only the rest (and the table move, which it does not test) are computed.
#[must_use]
#[inline]
pub fn see_ge_ordered(pos: &Position, m: Move, order: i32, threshold: i32) -> bool {
    let wins_nothing_less = order > KILLER && order < TT_MOVE;
    if wins_nothing_less && threshold <= 0 {
        return true;
    }
    if is_bad_noisy(order) && threshold >= 0 {
        return false;
    }
    see_ge(pos, m, threshold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::POSITIONS;

    /// The moves of every bench position in the picker's order, with history that gives many
    /// quiets equal scores (ties are where a selection sort's order is easiest to change).
    fn picked(pos: &Position, history: &History) -> Vec<(Move, i32)> {
        let moves = crate::chess::movegen::legal_moves(pos);
        let tt_move = moves.as_slice().get(3).copied().unwrap_or(Move::NONE);
        let refs = Refutations {
            killers: [moves.as_slice().get(5).copied().unwrap_or(Move::NONE); 2],
            counter: moves.as_slice().get(7).copied().unwrap_or(Move::NONE),
        };
        let mut picker = MovePicker::new(
            pos,
            GenMode::All,
            tt_move,
            refs,
            history,
            &Continuations::default(),
        );
        std::iter::from_fn(|| picker.next_move()).collect()
    }

    /// The packed keys pick exactly what a selection sort of the scores picks that takes the
    /// best score and, among equal scores, the earliest entry, swapping it into place.
    #[test]
    fn the_picker_orders_as_a_selection_sort_with_ties_to_the_earliest_entry() {
        let mut history = History::default();
        let cont = Continuations::default();
        for fen in POSITIONS {
            let pos = Position::from_fen(fen).unwrap();
            // A few quiets get equal bonuses, the rest stay at 0: ties among both groups.
            for (i, &m) in crate::chess::movegen::legal_moves(&pos)
                .as_slice()
                .iter()
                .enumerate()
            {
                if !m.is_noisy() && i % 3 == 0 {
                    history.update_quiet(pos.side, pos.board[m.from()], m, &cont, 300);
                }
            }
            let picked = picked(&pos, &history);
            let mut list: Vec<(Move, i32)> = crate::chess::movegen::legal_moves(&pos)
                .as_slice()
                .iter()
                .map(|&m| (m, picked.iter().find(|p| p.0 == m).unwrap().1))
                .collect();
            let mut reference = Vec::new();
            for next in 0..list.len() {
                let mut best = next;
                for i in next + 1..list.len() {
                    if list[i].1 > list[best].1 {
                        best = i;
                    }
                }
                reference.push(list[best]);
                list.swap(best, next);
            }
            assert_eq!(picked, reference, "{fen}");
        }
    }

    /// Every noisy move at every threshold: the picker's knowledge gives what `see_ge` computes.
    #[test]
    fn see_from_the_ordering_score_equals_the_computed_exchange() {
        let history = History::default();
        for fen in POSITIONS {
            let pos = Position::from_fen(fen).unwrap();
            for (m, order) in picked(&pos, &history) {
                for threshold in (-400..=400).step_by(50) {
                    assert_eq!(
                        see_ge_ordered(&pos, m, order, threshold),
                        see_ge(&pos, m, threshold),
                        "{fen} {m:?} {threshold}"
                    );
                }
            }
        }
    }
}
