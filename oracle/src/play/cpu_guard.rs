//! The rule that an engine uses the CPU only in its own turn, in games on a clock.
//!
//! Both engines of a game share the machine with each other and with the games played beside
//! it. At a clock, CPU an engine burns while its opponent thinks (a background thread, a forked
//! process) is taken from the opponent's search, and several threads in its own turn take it
//! from the game beside; either wins games that were not earned. So over a timed game each
//! engine's process tree may use at most the wall time of its own turns on one core, plus
//! [`allowed_cpu`]'s slack; more is an engine fault that loses the game. Games at fixed nodes or
//! depth are not checked: there the CPU an engine takes changes no result.
//!
//! Each game has engine processes of its own, so an engine's CPU is read from its start: the
//! handshake is counted, and its wall time is the engine's own, as its turns are. Where the
//! machine can freeze an engine outside its turn (`Engine::freeze`), this rule only catches
//! what a frozen engine cannot do; elsewhere it is the whole enforcement. How the slack
//! compares with what honest engines use is measured in docs/architecture.md.

use std::time::Duration;

/// Fixed slack per game: clock-tick rounding of the readings (up to two 10 ms ticks per
/// process of the tree, for a wrapper and its engine), and the engine's own input thread
/// reading `position` lines and the last move's lines outside the measured turns.
const FIXED_SLACK: Duration = Duration::from_millis(100);

/// Slack in per cent of the turns' wall time: an engine tears its search down (joins helper
/// threads, frees per-search memory) just after `bestmove`, when the turn is already over for
/// the clock; this grows with the number of moves.
const TURN_SLACK_PERCENT: u32 = 10;

/// The most CPU an engine may use in a game whose turns took `turns` of wall time: `turns` on
/// one core plus the slack.
#[must_use]
pub fn allowed_cpu(turns: Duration) -> Duration {
    turns + turns * TURN_SLACK_PERCENT / 100 + FIXED_SLACK
}

/// How many times its measured pace an engine's search of a node limit may cost: positions
/// differ from the bench's, and a short search pays its set-up on fewer nodes.
const NODE_PACE_FACTOR: f64 = 3.0;

/// Fixed allowance per node-limited search: setting up the position and the search.
const NODE_SEARCH_SLACK: Duration = Duration::from_millis(5);

/// An engine's CPU per node, measured by the oracle (its bench's wall time over its nodes, the
/// best of its runs), never taken from what the engine reports: what a search of a node limit
/// costs it. An engine that searches far more than it is told, and says so or not, spends far
/// more than its pace allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePace {
    /// Seconds per node.
    seconds_per_node: f64,
}

impl NodePace {
    /// The pace of a bench that searched `nodes` in `wall`; `None` for an empty or instant one.
    #[must_use]
    pub fn measured(nodes: u64, wall: Duration) -> Option<NodePace> {
        let seconds_per_node = wall.as_secs_f64() / nodes as f64;
        (nodes > 0 && seconds_per_node.is_finite() && seconds_per_node > 0.0)
            .then_some(NodePace { seconds_per_node })
    }

    /// The most CPU a search of `nodes` may use: its pace times [`NODE_PACE_FACTOR`] and a
    /// fixed slack.
    #[must_use]
    pub fn allowance(&self, nodes: u64) -> Duration {
        let seconds = nodes as f64 * self.seconds_per_node * NODE_PACE_FACTOR;
        Duration::try_from_secs_f64(seconds).unwrap_or(Duration::MAX) + NODE_SEARCH_SLACK
    }

    /// Nodes per second at this pace, for messages.
    #[must_use]
    pub fn nodes_per_second(&self) -> f64 {
        1.0 / self.seconds_per_node
    }
}

/// An engine's CPU over one game beyond what its turns allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overuse {
    /// The engine's slot in the game (0 White, 1 Black).
    pub index: usize,
    /// CPU its process tree used from the start of the game to its end.
    pub cpu: Duration,
    /// The wall time of its turns (`position` and `go` until `bestmove` or the fault).
    pub turns: Duration,
}

impl Overuse {
    /// How far the CPU went past the allowance.
    #[must_use]
    pub fn excess(&self) -> Duration {
        self.cpu.saturating_sub(allowed_cpu(self.turns))
    }
}

/// The CPU bookkeeping of one game, whose engines are processes started for it: their turns.
#[derive(Debug)]
pub struct CpuGuard {
    /// Wall time of each engine's own time so far: its setup, then its turns.
    turns: [Duration; 2],
}

impl CpuGuard {
    /// Starts the game's bookkeeping with each engine's `setup` wall time (handshake, options,
    /// `ucinewgame`: [`crate::play::uci::Engine::setup_wall`]) counted as its own time, since its
    /// CPU is counted from its process's start.
    #[must_use]
    pub fn start(setup: [Duration; 2]) -> CpuGuard {
        CpuGuard { turns: setup }
    }

    /// Adds one turn of engine `index` that took `wall` (from `position` to its answer).
    pub fn add_turn(&mut self, index: usize, wall: Duration) {
        if let Some(turns) = self.turns.get_mut(index) {
            *turns += wall;
        }
    }

    /// Given both engines' CPU since their start, at the end of the game: the engine that used
    /// more CPU than its own time allows, the one with the larger excess if both did; `None`
    /// when neither did or could not be read (a process gone already faults the game anyway).
    #[must_use]
    pub fn finish(&self, now: [Option<Duration>; 2]) -> Option<Overuse> {
        (0..2)
            .filter_map(|index| {
                let cpu = now[index]?;
                Some(Overuse {
                    index,
                    cpu,
                    turns: self.turns[index],
                })
            })
            .filter(|overuse| !overuse.excess().is_zero())
            .max_by_key(Overuse::excess)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command, Stdio};

    use super::*;
    use crate::play::tree_cpu::tree_cpu_times;

    /// The `/proc` tree readings of two processes.
    fn readings(pids: [u32; 2]) -> [Option<Duration>; 2] {
        tree_cpu_times(pids).map(Result::ok)
    }

    #[test]
    fn the_allowance_is_the_turns_on_one_core_and_the_slack() {
        assert_eq!(allowed_cpu(Duration::ZERO), Duration::from_millis(100));
        assert_eq!(
            allowed_cpu(Duration::from_secs(2)),
            Duration::from_millis(2300)
        );
        let overuse = |cpu_ms| Overuse {
            index: 0,
            cpu: Duration::from_millis(cpu_ms),
            turns: Duration::from_secs(1),
        };
        assert_eq!(overuse(1200).excess(), Duration::ZERO);
        assert_eq!(overuse(1250).excess(), Duration::from_millis(50));
    }

    /// Starts `script` under `sh` in its own process group.
    fn shell(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    }

    /// Kills the process group `child` leads, and reaps it.
    fn kill_group(mut child: Child) {
        // SAFETY: kill has no memory-safety preconditions; the group is one spawned here.
        unsafe {
            libc::kill(-i32::try_from(child.id()).unwrap(), libc::SIGKILL);
        }
        let _ = child.wait();
    }

    /// Two "engines" without a turn between the readings: the one that spins is caught, the
    /// idle one is not, and a turn as long as the game covers the spinner's CPU.
    #[test]
    fn a_spinning_tree_without_turns_is_caught() {
        let spinner = shell("sh -c 'while :; do :; done' & wait");
        let idle = shell("sleep 30");
        let pids = [spinner.id(), idle.id()];
        let mut guard = CpuGuard::start([Duration::ZERO; 2]);
        // Long enough that a busy 2-core machine still gives the spinner more than the slack.
        std::thread::sleep(Duration::from_millis(2000));
        let caught = guard.finish(readings(pids));
        guard.add_turn(0, Duration::from_secs(10));
        let excused = guard.finish(readings(pids));
        kill_group(spinner);
        kill_group(idle);
        let caught = caught.expect("the spinner used CPU outside any turn");
        assert_eq!(caught.index, 0, "{caught:?}");
        assert!(caught.cpu > Duration::from_millis(200), "{caught:?}");
        assert_eq!(excused, None);
    }

    #[test]
    fn a_vanished_engine_is_not_checked() {
        let mut gone = shell("exit 0");
        let pid = gone.id();
        let _ = gone.wait();
        let guard = CpuGuard::start([Duration::ZERO; 2]);
        assert_eq!(guard.finish(readings([pid, pid])), None);
    }

    #[test]
    fn a_node_pace_allows_three_times_its_cost_and_a_slack() {
        let pace = NodePace::measured(1_000_000, Duration::from_millis(500)).unwrap();
        assert_eq!(pace.allowance(10_000), Duration::from_millis(20));
        assert!((pace.nodes_per_second() - 2_000_000.0).abs() < 1e-6);
        assert_eq!(NodePace::measured(0, Duration::from_secs(1)), None);
        assert_eq!(NodePace::measured(10, Duration::ZERO), None);
    }

    #[test]
    fn the_setup_counts_as_the_engines_own_time() {
        let guard = CpuGuard::start([Duration::from_secs(1), Duration::ZERO]);
        let used = [Some(Duration::from_millis(1150)), None];
        assert_eq!(guard.finish(used), None);
        let over = [Some(Duration::from_millis(1300)), None];
        assert_eq!(guard.finish(over).map(|o| o.index), Some(0));
    }
}
