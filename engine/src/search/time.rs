//! Search limits and time management: soft limit (do not start another iteration) and hard limit
//! (abort the search), from clock, increment, moves to go and Move Overhead.

use std::time::{Duration, Instant};

use crate::chess::types::{Color, Move};
use crate::tune::Tunables;

/// What `go` asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Remaining clock per colour in ms.
    pub time: [Option<u64>; 2],
    /// Increment per colour in ms.
    pub inc: [u64; 2],
    /// Moves until the next time control.
    pub movestogo: Option<u64>,
    /// Fixed time for this move in ms.
    pub movetime: Option<u64>,
    /// Maximum depth.
    pub depth: Option<i32>,
    /// Maximum nodes (exact: the search stops at this count).
    pub nodes: Option<u64>,
    /// Search until `stop`.
    pub infinite: bool,
}

/// The deadlines of one search.
#[derive(Clone, Debug)]
pub struct TimeManager {
    /// When the search started.
    pub start: Instant,
    /// Do not start a new iteration after this.
    pub soft: Option<Duration>,
    /// Abort the search after this.
    pub hard: Option<Duration>,
}

impl TimeManager {
    /// Budget the move for `side` under `limits`.
    #[must_use]
    pub fn new(limits: &Limits, side: Color, params: &Tunables, overhead_ms: u64) -> TimeManager {
        let start = Instant::now();
        let ms = Duration::from_millis;
        if limits.infinite {
            return TimeManager {
                start,
                soft: None,
                hard: None,
            };
        }
        if let Some(mt) = limits.movetime {
            let t = mt.saturating_sub(overhead_ms).max(1);
            return TimeManager {
                start,
                soft: Some(ms(t)),
                hard: Some(ms(t)),
            };
        }
        let Some(time) = limits.time[side as usize] else {
            return TimeManager {
                start,
                soft: None,
                hard: None,
            };
        };
        let inc = limits.inc[side as usize];
        let usable = time.saturating_sub(overhead_ms).max(1);
        let mtg = limits
            .movestogo
            .unwrap_or(params.tm_moves_to_go as u64)
            .clamp(1, 100);
        let base = usable / mtg + inc * params.tm_inc_pct as u64 / 100;
        let cap = usable * params.tm_max_pct as u64 / 100;
        let soft = (base * params.tm_soft_pct as u64 / 100).min(cap).max(1);
        let hard = (base * params.tm_hard_pct as u64 / 100).min(cap).max(1);
        TimeManager {
            start,
            soft: Some(ms(soft)),
            hard: Some(ms(hard)),
        }
    }

    /// Time since the search started.
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// True when the hard limit has passed.
    #[must_use]
    pub fn hard_expired(&self) -> bool {
        self.hard.is_some_and(|h| self.elapsed() >= h)
    }

    /// True when the soft limit, stretched or shrunk to `scale_pct` percent, has passed; never
    /// later than the hard limit, which still aborts a search that overruns.
    #[must_use]
    pub fn soft_expired_scaled(&self, scale_pct: u64) -> bool {
        self.soft.is_some_and(|s| {
            let scaled = s * scale_pct as u32 / 100;
            self.elapsed() >= self.hard.map_or(scaled, |h| scaled.min(h))
        })
    }
}

/// How many iterations in a row the search has kept its best move.
#[derive(Clone, Copy, Debug, Default)]
pub struct BestMoveStability {
    best: Option<Move>,
    iterations: u32,
}

impl BestMoveStability {
    /// Records the best move of a finished iteration; returns how many earlier iterations in a
    /// row chose it too (0 when it just changed).
    pub fn observe(&mut self, best: Move) -> u32 {
        if self.best == Some(best) {
            self.iterations += 1;
        } else {
            self.best = Some(best);
            self.iterations = 0;
        }
        self.iterations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets() {
        let p = Tunables::default();
        let mut l = Limits {
            time: [Some(1000), Some(1000)],
            inc: [10, 10],
            ..Limits::default()
        };
        let tm = TimeManager::new(&l, Color::White, &p, 10);
        let (soft, hard) = (tm.soft.unwrap(), tm.hard.unwrap());
        assert!(soft < hard && hard <= Duration::from_millis(400));
        l.movestogo = Some(1);
        assert!(
            TimeManager::new(&l, Color::Black, &p, 10).hard.unwrap() <= Duration::from_millis(396)
        );
        let l = Limits {
            movetime: Some(100),
            ..Limits::default()
        };
        assert_eq!(
            TimeManager::new(&l, Color::White, &p, 10).hard,
            Some(Duration::from_millis(90))
        );
    }

    #[test]
    fn a_scaled_soft_limit_stretches_but_never_past_the_hard_limit() {
        let tm = TimeManager {
            start: Instant::now() - Duration::from_millis(150),
            soft: Some(Duration::from_millis(100)),
            hard: Some(Duration::from_millis(1000)),
        };
        assert!(tm.soft_expired_scaled(100));
        assert!(!tm.soft_expired_scaled(200));
        let capped = TimeManager {
            hard: Some(Duration::from_millis(120)),
            ..tm
        };
        assert!(capped.soft_expired_scaled(900));
    }

    #[test]
    fn stability_counts_iterations_that_kept_the_best_move() {
        let (a, b) = (Move(1), Move(2));
        let mut stability = BestMoveStability::default();
        assert_eq!(stability.observe(a), 0);
        assert_eq!(stability.observe(a), 1);
        assert_eq!(stability.observe(a), 2);
        assert_eq!(stability.observe(b), 0);
        assert_eq!(stability.observe(b), 1);
    }
}
