//! Search: iterative deepening with aspiration windows around a PVS alpha-beta (`pvs`) and a
//! quiescence search (`qsearch`), with its ordering (`movepick`, `history`, `see`), memory (`tt`) and
//! clock (`time`). All numeric knobs come from the searcher's own `Tunables`.

pub mod history;
pub mod movepick;
pub mod pvs;
pub mod qsearch;
pub mod see;
pub mod time;
pub mod tt;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::chess::movegen::legal_moves;
use crate::chess::position::Position;
use crate::chess::types::Move;
use crate::eval::network::{Accumulators, Network};
use crate::eval::{embedded_network, evaluate_accumulated};
use crate::tune::Tunables;
use history::{History, PieceTo};
use time::{BestMoveStability, Limits, TimeManager};
use tt::TranspositionTable;

/// Deepest ply the search reaches.
pub const MAX_PLY: usize = 128;
/// Larger than any score.
pub const INF: i32 = 32000;
/// Score of being mated at the root.
pub const MATE: i32 = 31000;
/// Scores beyond this are mates.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// Default transposition table size in MiB.
pub const DEFAULT_HASH_MB: usize = 16;

/// Default Move Overhead: pipe, scheduler and GUI latency per move on a busy machine.
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 30;

/// Per-ply search state.
#[derive(Clone, Copy, Default)]
pub(crate) struct Frame {
    /// Static evaluation at this ply (`-INF` when in check).
    pub eval: i32,
    /// Move made from this ply (`NONE` for a null move).
    pub mv: Move,
    /// Piece code that made `mv`.
    pub piece: u8,
    /// Killer moves of this ply.
    pub killers: [Move; 2],
    /// The move a singular-extension search at this ply leaves out (`NONE` otherwise).
    pub excluded: Move,
}

impl Frame {
    /// The move made from this ply as continuation history names it (`None` for a null move).
    #[inline(always)]
    pub(crate) fn piece_to(&self) -> Option<PieceTo> {
        PieceTo::of(self.piece, self.mv)
    }
}

/// What a finished search returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// Best move (`NONE` only when there is no legal move).
    pub best: Move,
    /// Score of the last completed iteration, side to move's view.
    pub score: i32,
    /// Last completed depth.
    pub depth: i32,
    /// Nodes searched.
    pub nodes: u64,
}

/// The searcher: owns its transposition table, history and tunables.
pub struct Searcher {
    /// Transposition table.
    pub tt: TranspositionTable,
    /// Search parameters (UCI options, SPSA).
    pub params: Tunables,
    /// Milliseconds kept in reserve per move for GUI/communication lag.
    pub move_overhead: u64,
    pub(crate) history: History,
    pub(crate) lmr: Vec<[i32; 64]>,
    pub(crate) nodes: u64,
    pub(crate) seldepth: usize,
    stop: Arc<AtomicBool>,
    pub(crate) stopped: bool,
    time: TimeManager,
    node_limit: Option<u64>,
    pub(crate) completed_depth: i32,
    pub(crate) hashes: Vec<u64>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) pv: Vec<[Move; MAX_PLY + 1]>,
    pub(crate) pv_len: [usize; MAX_PLY + 1],
    network: &'static Network,
    accumulators: Accumulators,
    /// Nodes spent below each root move this search, by `from * 64 + to`: how much of the
    /// search the best move took, which the time manager reads.
    pub(crate) root_move_nodes: Vec<u64>,
}

impl Searcher {
    /// A fresh searcher with a `hash_mb` MiB table and default parameters.
    #[must_use]
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher {
            tt: TranspositionTable::new(hash_mb),
            params: Tunables::default(),
            move_overhead: DEFAULT_MOVE_OVERHEAD_MS,
            history: History::default(),
            lmr: vec![[0; 64]; 64],
            nodes: 0,
            seldepth: 0,
            stop: Arc::new(AtomicBool::new(false)),
            stopped: false,
            time: TimeManager::new(
                &Limits {
                    infinite: true,
                    ..Limits::default()
                },
                crate::chess::types::Color::White,
                &Tunables::default(),
                0,
            ),
            node_limit: None,
            completed_depth: 0,
            hashes: Vec::with_capacity(1024),
            frames: vec![Frame::default(); MAX_PLY + 4],
            pv: vec![[Move::NONE; MAX_PLY + 1]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            network: embedded_network(),
            accumulators: Accumulators::new(embedded_network(), MAX_PLY + 2),
            root_move_nodes: vec![0; 64 * 64],
        }
    }

    /// The flag another thread sets to stop this search.
    #[must_use]
    pub fn stop_handle(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Forget the game: table and history (ucinewgame).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.history.clear();
    }

    /// Late-move reduction in 1024ths of a ply for a depth and move number.
    fn build_lmr(&mut self) {
        let base = self.params.lmr_base as f64 / 100.0;
        let div = self.params.lmr_div as f64 / 100.0;
        for d in 1..64 {
            for m in 1..64 {
                self.lmr[d][m] =
                    ((base + portable_ln(d as f64) * portable_ln(m as f64) / div) * 1024.0) as i32;
            }
        }
    }

    /// The static evaluation of `pos`, the position at `ply` of the current path.
    #[inline]
    pub(crate) fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        self.accumulators.compute(self.network, ply);
        evaluate_accumulated(pos, &self.accumulators, ply)
    }

    /// Records the move from `pos` at `ply` to `child` for the accumulators of `ply + 1`.
    #[inline]
    pub(crate) fn make_accumulators(&mut self, ply: usize, pos: &Position, child: &Position) {
        self.accumulators.update(self.network, ply, pos, child);
    }

    /// True once the search must unwind: stop flag, hard time limit or node limit.
    #[inline]
    pub(crate) fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if self.completed_depth < 1 {
            return false;
        }
        let polled = self.nodes & 255 == 0
            && (self.stop.load(Ordering::Relaxed) || self.time.hard_expired());
        if polled || self.node_limit.is_some_and(|n| self.nodes >= n) {
            self.stopped = true;
        }
        self.stopped
    }

    /// Search `pos` (reached through `game_hashes`, oldest first) under `limits`. With `report`,
    /// prints UCI `info` lines per iteration (not the `bestmove` line: that is the caller's).
    pub fn search(
        &mut self,
        pos: &Position,
        game_hashes: &[u64],
        limits: &Limits,
        report: bool,
    ) -> SearchResult {
        self.nodes = 0;
        self.stopped = false;
        self.completed_depth = 0;
        self.tt.new_search();
        self.build_lmr();
        self.hashes.clear();
        self.hashes.extend_from_slice(game_hashes);
        self.time = TimeManager::new(limits, pos.side, &self.params, self.move_overhead);
        self.node_limit = limits.nodes;
        self.frames.iter_mut().for_each(|f| *f = Frame::default());
        self.root_move_nodes.fill(0);
        self.accumulators.refresh(self.network, 0, pos);

        let root_moves = legal_moves(pos);
        let mut result = SearchResult {
            best: root_moves.as_slice().first().copied().unwrap_or(Move::NONE),
            score: 0,
            depth: 0,
            nodes: 0,
        };
        if root_moves.is_empty() {
            return result;
        }
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as i32 - 4)
            .clamp(1, MAX_PLY as i32 - 4);
        let timed = self.time.soft.is_some() && limits.movetime.is_none();
        let mut score: i32 = 0;
        let mut stability = BestMoveStability::default();
        for depth in 1..=max_depth {
            self.seldepth = 0;
            let mut delta = self.params.asp_delta;
            let (mut alpha, mut beta) =
                if depth >= self.params.asp_min_depth && score.abs() < MATE_BOUND {
                    ((score - delta).max(-INF), (score + delta).min(INF))
                } else {
                    (-INF, INF)
                };
            loop {
                let s = self.negamax(pos, alpha, beta, depth, 0, false);
                if self.stopped {
                    break;
                }
                if s <= alpha {
                    beta = (alpha + beta) / 2;
                    alpha = (s - delta).max(-INF);
                } else if s >= beta {
                    beta = (s + delta).min(INF);
                } else {
                    score = s;
                    break;
                }
                delta += delta * self.params.asp_growth_pct / 100;
            }
            if self.stopped {
                break;
            }
            self.completed_depth = depth;
            if self.pv_len[0] > 0 {
                result.best = self.pv[0][0];
            }
            result.score = score;
            result.depth = depth;
            if report {
                self.report_iteration(&result);
            }
            let stable_iterations = stability.observe(result.best);
            let soft_scale_pct = if timed {
                let best_nodes = self.root_move_nodes[result.best.from() * 64 + result.best.to()];
                self.params
                    .soft_limit_scale_pct(stable_iterations, best_nodes, self.nodes)
            } else {
                100
            };
            if self.time.soft_expired_scaled(soft_scale_pct) || (timed && root_moves.len() == 1) {
                break;
            }
            if self.node_limit.is_some_and(|n| self.nodes >= n) {
                break;
            }
        }
        result.nodes = self.nodes;
        if report {
            self.report_iteration(&result);
        }
        result
    }

    fn report_iteration(&self, r: &SearchResult) {
        let elapsed = self.time.elapsed();
        let ms = elapsed.as_millis() as u64;
        let nps = (self.nodes as f64 / elapsed.as_secs_f64().max(1e-6)) as u64;
        let pv: Vec<String> = if self.pv_len[0] > 0 && self.pv[0][0] == r.best {
            self.pv[0][..self.pv_len[0]]
                .iter()
                .map(|m| m.to_uci())
                .collect()
        } else {
            vec![r.best.to_uci()]
        };
        let line = format!(
            "info depth {} seldepth {} score {} nodes {} nps {} hashfull {} time {} pv {}",
            r.depth,
            self.seldepth.max(r.depth as usize),
            score_to_uci(r.score),
            self.nodes,
            nps,
            self.tt.hashfull(),
            ms,
            pv.join(" ")
        );
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// Natural logarithm from IEEE basic operations only (correctly rounded everywhere), so the LMR
/// table and with it the bench signature cannot depend on the platform's `libm`. For x >= 1.
#[must_use]
pub fn portable_ln(x: f64) -> f64 {
    // x = m * 2^e with m in [1, 2); ln m = 2 atanh((m - 1) / (m + 1)) by its series.
    let (mut m, mut e) = (x, 0i32);
    while m >= 2.0 {
        m /= 2.0;
        e += 1;
    }
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let (mut term, mut sum) = (z, 0.0);
    for k in 0..30 {
        sum += term / (2 * k + 1) as f64;
        term *= z2;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

/// UCI score text: `cp N` or `mate N` (moves, negative when being mated).
#[must_use]
pub fn score_to_uci(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        format!("mate -{}", (MATE + score) / 2)
    } else {
        format!("cp {score}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::fen::START_FEN;
    use crate::chess::movegen::parse_uci_move;

    fn play(fen: &str, moves: &[&str]) -> (Position, Vec<u64>) {
        let mut pos = Position::from_fen(fen).unwrap();
        let mut hashes = Vec::new();
        for m in moves {
            hashes.push(pos.hash);
            pos = pos.make_move(parse_uci_move(&pos, m).unwrap());
        }
        (pos, hashes)
    }

    #[test]
    fn portable_ln_matches_std() {
        for x in 1..200 {
            let x = x as f64;
            assert!((portable_ln(x) - x.ln()).abs() < 1e-12, "{x}");
        }
    }

    #[test]
    fn repetition_and_fifty_moves_are_draws() {
        let mut s = Searcher::new(1);
        let (pos, hashes) = play(START_FEN, &["g1f3", "g8f6", "f3g1", "f6g8"]);
        s.hashes = hashes;
        assert!(s.is_draw(&pos), "start position repeated");
        s.hashes.clear();
        assert!(!s.is_draw(&pos));
        let fifty = Position::from_fen("8/8/4k3/8/8/3K4/R7/8 w - - 100 80").unwrap();
        assert!(s.is_draw(&fifty));
    }

    #[test]
    fn finds_mate_and_avoids_stalemate() {
        let mut s = Searcher::new(1);
        let limits = Limits {
            depth: Some(6),
            ..Limits::default()
        };
        let pos = Position::from_fen("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1").unwrap();
        let r = s.search(&pos, &[], &limits, false);
        assert_eq!((r.best.to_uci().as_str(), r.score), ("d1d8", MATE - 1));
        // K+Q v K: queen moves that stalemate must not be chosen; the engine should see a winning score.
        let pos = Position::from_fen("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1").unwrap();
        let r = s.search(&pos, &[], &limits, false);
        assert_ne!(r.best.to_uci(), "c1c7", "c7 stalemates");
        assert!(r.score > 500, "score {}", r.score);
    }
}
