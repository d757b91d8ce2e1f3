//! Quiescence search: captures (and queen promotions) until the position is quiet, with SEE and
//! delta pruning; all evasions when in check.

use super::history::Continuations;
use super::movepick::{MovePicker, Refutations, see_ge_ordered};
use super::pvs::{bound_allows, score_from_tt, score_to_tt};
use super::see::capture_value;
use super::tt::Bound;
use super::{INF, MATE, MAX_PLY, Searcher};
use crate::chess::movegen::GenMode;
use crate::chess::position::Position;
use crate::chess::types::Move;

impl Searcher {
    /// Quiescence search of `pos` in the window (alpha, beta).
    pub(crate) fn qsearch(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.pv_len[ply] = ply;
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        let in_check = pos.in_check();
        if ply >= MAX_PLY - 1 {
            return if in_check { 0 } else { self.evaluate(pos, ply) };
        }
        let pv_node = beta - alpha > 1;
        let entry = self.tt.probe(pos.hash);
        if let Some(e) = entry {
            let s = score_from_tt(e.score as i32, ply);
            if !pv_node && bound_allows(e.bound(), s, alpha, beta) {
                return s;
            }
        }
        let tt_move = entry.map_or(Move::NONE, |e| e.mv);

        let mut best_score;
        let static_eval;
        if in_check {
            best_score = -INF;
            static_eval = 0;
        } else {
            static_eval = entry.map_or_else(|| self.evaluate(pos, ply), |e| e.eval as i32);
            best_score = static_eval;
            if best_score >= beta {
                return best_score;
            }
            alpha = alpha.max(best_score);
        }

        let mode = if in_check {
            GenMode::All
        } else {
            GenMode::Noisy
        };
        // Evasions are ordered by butterfly history alone: quiescence keeps no move path.
        let mut picker = MovePicker::new(
            pos,
            mode,
            tt_move,
            Refutations::default(),
            &self.history,
            &Continuations::default(),
        );
        let mut best_move = Move::NONE;
        let original_alpha = alpha;
        while let Some((m, order)) = picker.next_move() {
            if !in_check {
                if !see_ge_ordered(pos, m, order, self.params.qs_see_margin) {
                    continue;
                }
                if m.promotion().is_none()
                    && static_eval + capture_value(pos, m) + self.params.qs_delta_margin <= alpha
                {
                    continue;
                }
            }
            let child = pos.make_move(m);
            self.tt.prefetch(child.hash);
            self.make_accumulators(ply, pos, &child);
            let score = -self.qsearch(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = m;
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        if in_check && picker.is_empty() {
            return -MATE + ply as i32;
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(
            pos.hash,
            best_move,
            score_to_tt(best_score, ply),
            static_eval,
            0,
            bound,
        );
        best_score
    }
}
