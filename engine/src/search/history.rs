//! Move-ordering memory: butterfly and continuation history and countermoves for quiet moves,
//! capture history for noisy ones.

use crate::chess::types::{Color, Move, NO_PIECE};

/// History values stay within ±this (gravity keeps them bounded).
pub const HISTORY_LIMIT: i32 = 16384;

/// Coloured pieces times squares: the rows and columns of a continuation table.
const PIECE_TO: usize = NO_PIECE as usize * 64;

/// Columns of the capture table: the six kinds a move can take, then a promotion onto an empty
/// square, which takes nothing.
const VICTIMS: usize = 7;

/// A coloured piece arriving on a square: how continuation history names a move.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PieceTo(u16);

impl PieceTo {
    /// The move `m` made by the coloured `piece`; `None` for a null move or an empty square.
    #[must_use]
    #[inline(always)]
    pub fn of(piece: u8, m: Move) -> Option<PieceTo> {
        (piece < NO_PIECE && m != Move::NONE).then(|| PieceTo(piece as u16 * 64 + m.to() as u16))
    }

    #[inline(always)]
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// The moves one and two plies before a node: the rows of the continuation tables its quiet
/// moves are scored and rewarded in (`None` at the root, after a null move, or on the path's start).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Continuations(pub [Option<PieceTo>; 2]);

/// Quiet-move statistics gathered during search.
pub struct History {
    butterfly: Vec<[[i32; 64]; 64]>,
    /// Follow-up statistics: `[0]` by the previous move, `[1]` by the move before it; each row
    /// is a `PieceTo` of that earlier move, each column the `PieceTo` of the quiet reply.
    continuation: [Vec<[i16; PIECE_TO]>; 2],
    counter: [[Move; 64]; 12],
    /// Noisy-move statistics: the row is the `PieceTo` of the capture or promotion, the column
    /// the kind it takes (`VICTIMS - 1` for none).
    capture: Vec<[i16; VICTIMS]>,
}

/// The capture table's row and column for the noisy move `m` by the coloured `piece` taking a
/// piece of kind `victim`.
#[inline(always)]
fn capture_index(piece: u8, m: Move, victim: Option<usize>) -> Option<(usize, usize)> {
    PieceTo::of(piece, m).map(|row| (row.index(), victim.unwrap_or(VICTIMS - 1)))
}

impl Default for History {
    fn default() -> Self {
        History {
            butterfly: vec![[[0; 64]; 64]; 2],
            continuation: [vec![[0; PIECE_TO]; PIECE_TO], vec![[0; PIECE_TO]; PIECE_TO]],
            counter: [[Move::NONE; 64]; 12],
            capture: vec![[0; VICTIMS]; PIECE_TO],
        }
    }
}

/// Move `h` by `bonus` (clamped), with gravity toward zero that keeps it within the limit.
#[inline(always)]
fn apply_gravity(h: i32, bonus: i32) -> i32 {
    let b = bonus.clamp(-HISTORY_LIMIT, HISTORY_LIMIT);
    h + b - h * b.abs() / HISTORY_LIMIT
}

impl History {
    /// Forget everything.
    pub fn clear(&mut self) {
        *self = History::default();
    }

    /// The ordering score of a quiet move `m`, made by the coloured `piece` with `side` to move:
    /// its butterfly history plus its continuation history after the moves in `cont`.
    #[must_use]
    #[inline(always)]
    pub fn quiet_score(&self, side: Color, piece: u8, m: Move, cont: &Continuations) -> i32 {
        let mut score = self.butterfly[side as usize][m.from()][m.to()];
        if let Some(reply) = PieceTo::of(piece, m) {
            for (table, prev) in self.continuation.iter().zip(cont.0) {
                if let Some(prev) = prev {
                    score += i32::from(table[prev.index()][reply.index()]);
                }
            }
        }
        score
    }

    /// Apply a bonus (or malus if negative) to every statistic `quiet_score` adds up.
    #[inline]
    pub fn update_quiet(
        &mut self,
        side: Color,
        piece: u8,
        m: Move,
        cont: &Continuations,
        bonus: i32,
    ) {
        let h = &mut self.butterfly[side as usize][m.from()][m.to()];
        *h = apply_gravity(*h, bonus);
        if let Some(reply) = PieceTo::of(piece, m) {
            for (table, prev) in self.continuation.iter_mut().zip(cont.0) {
                if let Some(prev) = prev {
                    let h = &mut table[prev.index()][reply.index()];
                    // Gravity bounds the value by HISTORY_LIMIT, which fits an i16.
                    *h = apply_gravity(i32::from(*h), bonus) as i16;
                }
            }
        }
    }

    /// The capture-history score of the noisy move `m`, made by the coloured `piece` and taking
    /// a piece of kind `victim` (`None` for a promotion onto an empty square).
    #[must_use]
    #[inline(always)]
    pub fn noisy_score(&self, piece: u8, m: Move, victim: Option<usize>) -> i32 {
        capture_index(piece, m, victim).map_or(0, |(row, col)| i32::from(self.capture[row][col]))
    }

    /// Apply a bonus (or malus if negative) to the statistic `noisy_score` reads.
    #[inline]
    pub fn update_noisy(&mut self, piece: u8, m: Move, victim: Option<usize>, bonus: i32) {
        if let Some((row, col)) = capture_index(piece, m, victim) {
            let h = &mut self.capture[row][col];
            // Gravity bounds the value by HISTORY_LIMIT, which fits an i16.
            *h = apply_gravity(i32::from(*h), bonus) as i16;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::types::make_piece;

    fn quiet(from: usize, to: usize) -> Move {
        Move::new(from, to, 0)
    }

    #[test]
    fn gravity_keeps_every_table_within_the_limit() {
        let mut h = History::default();
        let knight = make_piece(Color::White, crate::chess::types::KNIGHT);
        let prev = PieceTo::of(
            make_piece(Color::Black, crate::chess::types::PAWN),
            quiet(52, 36),
        );
        let cont = Continuations([prev, prev]);
        let m = quiet(6, 21);
        for _ in 0..1000 {
            h.update_quiet(Color::White, knight, m, &cont, 5000);
        }
        assert_eq!(
            h.quiet_score(Color::White, knight, m, &cont),
            3 * HISTORY_LIMIT
        );
        for _ in 0..1000 {
            h.update_quiet(Color::White, knight, m, &cont, -5000);
        }
        assert_eq!(
            h.quiet_score(Color::White, knight, m, &cont),
            -3 * HISTORY_LIMIT
        );
    }

    #[test]
    fn capture_scores_are_kept_per_piece_square_and_victim() {
        let mut h = History::default();
        let knight = make_piece(Color::White, crate::chess::types::KNIGHT);
        let rook = make_piece(Color::White, crate::chess::types::ROOK);
        let takes = Move::new(21, 36, crate::chess::types::CAPTURE);
        let pawn = Some(crate::chess::types::PAWN);
        let queen = Some(crate::chess::types::QUEEN);
        for _ in 0..1000 {
            h.update_noisy(knight, takes, pawn, 5000);
        }
        assert_eq!(h.noisy_score(knight, takes, pawn), HISTORY_LIMIT);
        assert_eq!(h.noisy_score(knight, takes, queen), 0);
        assert_eq!(h.noisy_score(rook, takes, pawn), 0);
        assert_eq!(h.noisy_score(knight, takes, None), 0);
        h.update_noisy(knight, takes, None, -700);
        assert_eq!(h.noisy_score(knight, takes, None), -700);
        assert_eq!(h.noisy_score(NO_PIECE, takes, pawn), 0, "no piece, no row");
    }

    #[test]
    fn continuation_scores_depend_on_the_previous_moves() {
        let mut h = History::default();
        let knight = make_piece(Color::White, crate::chess::types::KNIGHT);
        let pawn = make_piece(Color::Black, crate::chess::types::PAWN);
        let after_e5 = Continuations([PieceTo::of(pawn, quiet(52, 36)), None]);
        let after_d5 = Continuations([PieceTo::of(pawn, quiet(51, 35)), None]);
        let m = quiet(6, 21);
        h.update_quiet(Color::White, knight, m, &after_e5, 1000);
        let butterfly = h.quiet_score(Color::White, knight, m, &Continuations::default());
        assert_eq!(butterfly, 1000);
        assert_eq!(h.quiet_score(Color::White, knight, m, &after_e5), 2000);
        assert_eq!(h.quiet_score(Color::White, knight, m, &after_d5), 1000);
        assert_eq!(PieceTo::of(NO_PIECE, m), None, "a null move has no row");
        assert_eq!(PieceTo::of(knight, Move::NONE), None);
    }
}
