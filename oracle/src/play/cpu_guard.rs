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
//! Measured at 1+0.01 on a quiet 2-core machine (2026-12-03, 60 games of Stockfish, Glaurung,
//! Ethereal and Coherent, one thread each): an honest engine used 93–99% of its turns' wall
//! time, never more; the slack is well clear of that.

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

/// The CPU bookkeeping of one game: both engines' CPU at its start and their turns.
#[derive(Debug)]
pub struct CpuGuard {
    /// Each engine's CPU at the start of the game ([`crate::play::uci::Engine::cpu_time`]);
    /// `None` where it could not be read, which leaves that engine unchecked in this game (a
    /// process gone already faults the game anyway).
    baseline: [Option<Duration>; 2],
    /// Wall time of each engine's turns so far.
    turns: [Duration; 2],
}

impl CpuGuard {
    /// Starts the game's bookkeeping from both engines' CPU `baseline` (read once both have
    /// answered `ucinewgame`).
    #[must_use]
    pub fn start(baseline: [Option<Duration>; 2]) -> CpuGuard {
        CpuGuard {
            baseline,
            turns: [Duration::ZERO; 2],
        }
    }

    /// Adds one turn of engine `index` that took `wall` (from `position` to its answer).
    pub fn add_turn(&mut self, index: usize, wall: Duration) {
        if let Some(turns) = self.turns.get_mut(index) {
            *turns += wall;
        }
    }

    /// Given both engines' CPU `now`, at the end of the game: the engine that used more CPU
    /// than its turns allow, the one with the larger excess if both did; `None` when neither
    /// did or could not be read.
    #[must_use]
    pub fn finish(&self, now: [Option<Duration>; 2]) -> Option<Overuse> {
        (0..2)
            .filter_map(|index| {
                let cpu = now[index]?.saturating_sub(self.baseline[index]?);
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
        let mut guard = CpuGuard::start(readings(pids));
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
        let guard = CpuGuard::start(readings([pid, pid]));
        assert_eq!(guard.baseline, [None, None]);
        assert_eq!(guard.finish(readings([pid, pid])), None);
    }
}
