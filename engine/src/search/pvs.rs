//! The principal variation search with its pruning, reductions and extensions.

use super::history::Continuations;
use super::movepick::{MovePicker, Refutations, is_bad_noisy, see_ge_ordered};
use super::see::see_ge;
use super::tt::Bound;
use super::{Frame, INF, MATE, MATE_BOUND, MAX_PLY, Searcher};
use crate::chess::movegen::GenMode;
use crate::chess::position::Position;
use crate::chess::types::{Move, NO_PIECE};

/// Convert a score to the table's form (mates relative to the stored node).
#[inline]
pub(crate) fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

/// Convert a stored score back to this node's ply.
#[inline]
pub(crate) fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// True if the stored bound makes `score` usable against the window.
#[inline]
pub(crate) fn bound_allows(bound: Bound, score: i32, alpha: i32, beta: i32) -> bool {
    match bound {
        Bound::Exact => true,
        Bound::Lower => score >= beta,
        Bound::Upper => score <= alpha,
        Bound::None => false,
    }
}

impl Searcher {
    /// Draw by the fifty-move rule or by repetition since the last irreversible move.
    #[inline]
    pub(crate) fn is_draw(&self, pos: &Position) -> bool {
        if pos.halfmove >= 100 || pos.insufficient_material() {
            return true;
        }
        let n = self.hashes.len();
        let lookback = (pos.halfmove as usize).min(n);
        let mut i = 2;
        while i <= lookback {
            if self.hashes[n - i] == pos.hash {
                return true;
            }
            i += 2;
        }
        false
    }

    #[inline]
    fn update_pv(&mut self, ply: usize, m: Move) {
        self.pv[ply][ply] = m;
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    /// Alpha-beta search of `pos` to `depth` plies; `cut_node` marks expected fail-high nodes.
    /// When `frames[ply].excluded` names a move, this is a singular-extension search: that move
    /// is left out, and the table is neither trusted for a cutoff nor written.
    pub(crate) fn negamax(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let pv_node = beta - alpha > 1;
        let root = ply == 0;
        self.pv_len[ply] = ply;
        if depth <= 0 {
            return self.qsearch(pos, alpha, beta, ply);
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        let in_check = pos.in_check();
        if !root {
            if self.is_draw(pos) {
                return 0;
            }
            if ply >= MAX_PLY - 1 {
                return if in_check { 0 } else { self.evaluate(pos, ply) };
            }
            // Mate-distance pruning: no line from here can beat a shorter mate already found.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let excluded = self.frames[ply].excluded;
        let singular_search = excluded != Move::NONE;
        let entry = self.tt.probe(pos.hash);
        let tt_move = entry.map_or(Move::NONE, |e| e.mv);
        if let Some(e) = entry {
            let s = score_from_tt(e.score as i32, ply);
            if !pv_node
                && !singular_search
                && e.depth as i32 >= depth
                && bound_allows(e.bound(), s, alpha, beta)
            {
                return s;
            }
        }
        let static_eval = if in_check {
            -INF
        } else {
            entry.map_or_else(|| self.evaluate(pos, ply), |e| e.eval as i32)
        };
        // The table score is a better estimate than the static eval when its bound points the right way.
        let eval = match entry {
            Some(e) if !in_check => {
                let s = score_from_tt(e.score as i32, ply);
                let b = e.bound();
                if (b == Bound::Lower && s > static_eval)
                    || (b == Bound::Upper && s < static_eval)
                    || b == Bound::Exact
                {
                    s
                } else {
                    static_eval
                }
            }
            _ => static_eval,
        };
        self.frames[ply].eval = static_eval;
        let improving = !in_check && ply >= 2 && static_eval > self.frames[ply - 2].eval;
        self.frames[ply + 1].killers = [Move::NONE; 2];

        // A singular-extension search asks about the other moves at this very node: pruning the
        // node as a whole would answer for the excluded move too.
        if !pv_node && !in_check && !singular_search {
            // Reverse futility: far above beta, a shallow search will not come back down.
            if depth <= self.params.rfp_depth
                && eval.abs() < MATE_BOUND
                && eval - self.params.reverse_futility_margin(depth, improving) >= beta
            {
                return eval;
            }
            // Razoring: far below alpha at low depth, trust quiescence.
            if depth <= self.params.razor_depth
                && eval + self.params.razoring_margin(depth) <= alpha
            {
                let v = self.qsearch(pos, alpha, alpha + 1, ply);
                if v <= alpha {
                    return v;
                }
            }
            // Null move: if passing still fails high, a real move will too.
            if depth >= self.params.nmp_min_depth
                && eval >= beta
                && ply > 0
                && self.frames[ply - 1].mv != Move::NONE
                && pos.has_non_pawn_material(pos.side)
            {
                let r = self.params.null_move_reduction(depth, eval - beta);
                let null = pos.make_null();
                self.tt.prefetch(null.hash);
                self.make_accumulators(ply, pos, &null);
                self.frames[ply].mv = Move::NONE;
                self.frames[ply].piece = NO_PIECE;
                self.hashes.push(pos.hash);
                let v = -self.negamax(&null, -beta, -beta + 1, depth - r, ply + 1, !cut_node);
                self.hashes.pop();
                if self.stopped {
                    return 0;
                }
                if v >= beta {
                    return if v >= MATE_BOUND { beta } else { v };
                }
            }
        }
        // Internal iterative reduction: without a table move this node is probably not worth full depth.
        if depth >= self.params.iir_depth
            && tt_move == Move::NONE
            && (pv_node || cut_node)
            && !singular_search
        {
            depth -= 1;
        }

        let prev = if ply > 0 {
            self.frames[ply - 1]
        } else {
            Frame::default()
        };
        let counter = if ply > 0 && prev.mv != Move::NONE {
            self.history.countermove(prev.piece, prev.mv)
        } else {
            Move::NONE
        };
        let refs = Refutations {
            killers: self.frames[ply].killers,
            counter,
        };
        // At the root `prev` is the default frame, which names no move.
        let cont = Continuations([
            prev.piece_to(),
            if ply >= 2 {
                self.frames[ply - 2].piece_to()
            } else {
                None
            },
        ]);
        let mut picker = MovePicker::new(pos, GenMode::All, tt_move, refs, &self.history, &cont);
        if picker.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }

        let mut best_score = -INF;
        let mut best_move = Move::NONE;
        let mut moves_searched: usize = 0;
        let mut quiets_tried: [Move; 64] = [Move::NONE; 64];
        let mut n_quiets = 0;
        let mut noisy_tried: [Move; 32] = [Move::NONE; 32];
        let mut n_noisy = 0;
        let mut skip_quiets = false;
        let original_alpha = alpha;

        while let Some((m, order)) = picker.next_move() {
            if m == excluded {
                continue;
            }
            let quiet = !m.is_noisy();
            if quiet && skip_quiets {
                continue;
            }
            let refutation = m == refs.killers[0] || m == refs.killers[1] || m == counter;
            if !root && best_score > -MATE_BOUND {
                if quiet {
                    if depth <= self.params.lmp_depth
                        && n_quiets as i32 >= self.params.late_move_limit(depth, improving)
                    {
                        skip_quiets = true;
                        continue;
                    }
                    if depth <= self.params.fp_depth
                        && !in_check
                        && eval + self.params.futility_margin(depth) <= alpha
                    {
                        skip_quiets = true;
                        continue;
                    }
                    if depth <= self.params.see_quiet_depth
                        && !see_ge(pos, m, self.params.see_quiet_threshold(depth))
                    {
                        continue;
                    }
                } else if depth <= self.params.see_noisy_depth
                    && !see_ge_ordered(pos, m, order, self.params.see_noisy_threshold(depth))
                {
                    continue;
                }
            }

            let mut singular = false;
            if m == tt_move
                && !root
                && !singular_search
                && depth >= self.params.se_depth
                && let Some(e) = entry
                && matches!(e.bound(), Bound::Lower | Bound::Exact)
                && e.depth as i32 >= depth - self.params.se_tt_depth_margin
            {
                let tt_score = score_from_tt(e.score as i32, ply);
                if tt_score.abs() < MATE_BOUND {
                    // Do the other moves, searched shallower, all fall short of the table score by
                    // a margin? Then the table move is singular and earns a ply.
                    let singular_beta = tt_score - self.params.singular_margin(depth);
                    self.frames[ply].excluded = m;
                    let v = self.negamax(
                        pos,
                        singular_beta - 1,
                        singular_beta,
                        (depth - 1) / 2,
                        ply,
                        cut_node,
                    );
                    self.frames[ply].excluded = Move::NONE;
                    if self.stopped {
                        return 0;
                    }
                    if v < singular_beta {
                        singular = true;
                    } else if singular_beta >= beta {
                        // Multi-cut: another move also beats beta, so this node fails high anyway.
                        return singular_beta;
                    }
                }
            }

            let child = pos.make_move(m);
            self.tt.prefetch(child.hash);
            self.make_accumulators(ply, pos, &child);
            let gives_check = child.in_check();
            let ext = if singular {
                1
            } else if gives_check {
                self.params.check_ext
            } else {
                0
            };
            let new_depth = depth - 1 + ext;
            self.frames[ply].mv = m;
            self.frames[ply].piece = pos.board[m.from()];
            self.hashes.push(pos.hash);
            moves_searched += 1;
            if quiet && n_quiets < quiets_tried.len() {
                quiets_tried[n_quiets] = m;
                n_quiets += 1;
            } else if !quiet && n_noisy < noisy_tried.len() {
                noisy_tried[n_noisy] = m;
                n_noisy += 1;
            }

            let nodes_before = self.nodes;
            let mut score;
            if moves_searched == 1 {
                score = -self.negamax(&child, -beta, -alpha, new_depth, ply + 1, false);
            } else {
                let start = (self.params.lmr_move_start + pv_node as i32) as usize;
                let mut r = 0;
                if depth >= self.params.lmr_min_depth
                    && moves_searched > start
                    && (quiet || is_bad_noisy(order))
                {
                    let mut r1024 = self.lmr[(depth as usize).min(63)][moves_searched.min(63)];
                    if !pv_node {
                        r1024 += self.params.lmr_non_pv;
                    }
                    if improving {
                        r1024 -= self.params.lmr_improving;
                    }
                    if cut_node {
                        r1024 += self.params.lmr_cut_node;
                    }
                    if refutation {
                        r1024 -= self.params.lmr_refutation;
                    }
                    if gives_check {
                        r1024 -= 1024;
                    }
                    if quiet {
                        r1024 -= self
                            .history
                            .quiet_score(pos.side, pos.board[m.from()], m, &cont)
                            * 1024
                            / self.params.lmr_history_div;
                    }
                    r = (r1024 / 1024).clamp(0, new_depth - 1);
                }
                score = -self.negamax(&child, -alpha - 1, -alpha, new_depth - r, ply + 1, true);
                if score > alpha && r > 0 {
                    score =
                        -self.negamax(&child, -alpha - 1, -alpha, new_depth, ply + 1, !cut_node);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(&child, -beta, -alpha, new_depth, ply + 1, false);
                }
            }
            self.hashes.pop();
            if root {
                self.root_move_nodes[m.from() * 64 + m.to()] += self.nodes - nodes_before;
            }
            if self.stopped {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = m;
                    alpha = score;
                    if pv_node {
                        self.update_pv(ply, m);
                    }
                    if alpha >= beta {
                        if quiet {
                            self.reward_quiet(pos, ply, depth, m, &quiets_tried[..n_quiets], &cont);
                        }
                        self.reward_noisy(pos, depth, m, &noisy_tried[..n_noisy]);
                        break;
                    }
                }
            }
        }

        if singular_search {
            // Only the excluded move was legal: the others cannot reach any bound.
            return if moves_searched == 0 {
                alpha
            } else {
                best_score
            };
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if alpha > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        let store_eval = if in_check { 0 } else { static_eval };
        self.tt.store(
            pos.hash,
            best_move,
            score_to_tt(best_score, ply),
            store_eval,
            depth,
            bound,
        );
        best_score
    }

    /// Any move caused a cutoff: capture-history malus to the noisy moves tried before it, and
    /// a bonus to `m` if it is noisy itself.
    fn reward_noisy(&mut self, pos: &Position, depth: i32, m: Move, tried: &[Move]) {
        let (bonus, malus) = (
            self.params.history_bonus(depth),
            self.params.history_malus(depth),
        );
        for &n in tried {
            let change = if n == m { bonus } else { -malus };
            self.history
                .update_noisy(pos.board[n.from()], n, pos.captured_kind(n), change);
        }
    }

    /// A quiet move caused a cutoff: killers, countermove, history bonus (butterfly and
    /// continuation after `cont`); malus to earlier quiets.
    fn reward_quiet(
        &mut self,
        pos: &Position,
        ply: usize,
        depth: i32,
        m: Move,
        tried: &[Move],
        cont: &Continuations,
    ) {
        let (bonus, malus) = (
            self.params.history_bonus(depth),
            self.params.history_malus(depth),
        );
        for &q in tried {
            if q != m {
                self.history
                    .update_quiet(pos.side, pos.board[q.from()], q, cont, -malus);
            }
        }
        self.history
            .update_quiet(pos.side, pos.board[m.from()], m, cont, bonus);
        let k = &mut self.frames[ply].killers;
        if k[0] != m {
            k[1] = k[0];
            k[0] = m;
        }
        if ply > 0 && self.frames[ply - 1].mv != Move::NONE {
            let prev = self.frames[ply - 1];
            self.history.set_countermove(prev.piece, prev.mv, m);
        }
    }
}
