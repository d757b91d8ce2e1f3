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
//! Each game has engine processes of its own, so an engine's CPU is read from its start, and
//! every second of it is counted: the setup (handshake, options, `ucinewgame`) against a fixed
//! allowance of its own, the rest against the engine's turns. No allowance comes from a
//! quantity the engine controls: an engine decides how long its setup takes, so a slow setup
//! earns nothing. At a node limit each search is also held to a multiple of its share, so that
//! CPU saved in easy moves buys little in a hard one. Where the machine can freeze an engine
//! outside its turn (`Engine::freeze`), these rules only catch what a frozen engine cannot do;
//! elsewhere they are the whole enforcement. How the slack compares with what honest engines
//! use is measured in docs/architecture.md.

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

/// How much dearer per node than its predecessor's a candidate's pace may be when it bounds
/// the candidate's searches: a change that makes the engine this much slower per node is rare
/// (a network of twice the neurons cost 20%), and [`NODE_PACE_FACTOR`] still applies on top.
const PACE_RATIO_LIMIT: f64 = 1.5;

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

    /// This pace, but never dearer than `reference`'s times [`PACE_RATIO_LIMIT`]: a candidate's
    /// bench is its own code and could burn CPU to make every node look dear, so its allowance
    /// is bounded by its predecessor's pace.
    #[must_use]
    pub fn at_most(self, reference: NodePace) -> NodePace {
        NodePace {
            seconds_per_node: self
                .seconds_per_node
                .min(reference.seconds_per_node * PACE_RATIO_LIMIT),
        }
    }

    /// Nodes per second at this pace, for messages.
    #[must_use]
    pub fn nodes_per_second(&self) -> f64 {
        1.0 / self.seconds_per_node
    }
}

/// The most CPU an engine's setup may use: starting its processes, the handshake, its options
/// and `ucinewgame`, before it knows the position. Fixed, so that a setup that waits earns no
/// CPU for the game, and generous, since loading a large network takes a moment.
pub const SETUP_CPU: Duration = Duration::from_secs(1);

/// How many times its allowance one search of a node limit may cost: the game's total keeps the
/// average at one, and a search may take more only by what easy moves left unspent.
const ONE_SEARCH_FACTOR: u32 = 4;

/// Which CPU rule an engine broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuRule {
    /// Its setup used more than [`SETUP_CPU`].
    Setup,
    /// Over the game, more than its turns allow ([`allowed_cpu`]).
    Turns,
    /// One search of a node limit cost more than [`ONE_SEARCH_FACTOR`] times its allowance.
    OneSearch,
}

/// An engine's CPU beyond what one of the rules allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overuse {
    /// The engine's slot in the game (0 White, 1 Black).
    pub index: usize,
    /// The rule it broke.
    pub rule: CpuRule,
    /// The CPU the rule counts: the setup's, the game's after the setup, or the one search's.
    pub cpu: Duration,
    /// What the rule measures it against: the wall time of its turns at a clock or the sum of
    /// its searches' allowances at a node limit ([`CpuRule::Turns`]), one search's allowance
    /// ([`CpuRule::OneSearch`]); zero for the setup.
    pub turns: Duration,
}

impl Overuse {
    /// The most CPU the rule allows.
    #[must_use]
    pub fn allowed(&self) -> Duration {
        match self.rule {
            CpuRule::Setup => SETUP_CPU,
            CpuRule::Turns => allowed_cpu(self.turns),
            CpuRule::OneSearch => self.turns * ONE_SEARCH_FACTOR,
        }
    }

    /// How far the CPU went past the allowance.
    #[must_use]
    pub fn excess(&self) -> Duration {
        self.cpu.saturating_sub(self.allowed())
    }
}

/// The CPU bookkeeping of one game, whose engines are processes started for it.
#[derive(Debug)]
pub struct CpuGuard {
    /// Each engine's CPU when its setup ended; zero where it could not be read, so that all of
    /// its CPU then counts against its turns.
    setup: [Duration; 2],
    /// Each engine's CPU when its last turn ended (at first: when its setup ended).
    last: [Option<Duration>; 2],
    /// Wall time (clock) or allowance (node limit) of each engine's turns so far.
    turns: [Duration; 2],
}

impl CpuGuard {
    /// Starts the game's bookkeeping with each engine's CPU at the end of its setup
    /// ([`crate::play::uci::Engine::cpu_time`], read once it is frozen), `None` where unread.
    #[must_use]
    pub fn start(setup: [Option<Duration>; 2]) -> CpuGuard {
        CpuGuard {
            setup: setup.map(Option::unwrap_or_default),
            last: setup,
            turns: [Duration::ZERO; 2],
        }
    }

    /// Adds one turn of engine `index` that took `wall` (from `position` to its answer), or at
    /// a node limit that was allowed `wall`.
    pub fn add_turn(&mut self, index: usize, wall: Duration) {
        if let Some(turns) = self.turns.get_mut(index) {
            *turns += wall;
        }
    }

    /// Ends one search of a node limit that was allowed `allowance`, engine `index`'s CPU being
    /// `now`: the overuse when the search alone cost more than [`ONE_SEARCH_FACTOR`] times its
    /// allowance. Without a reading nothing is decided here; the game's total still is.
    #[must_use]
    pub fn search_ended(
        &mut self,
        index: usize,
        now: Option<Duration>,
        allowance: Duration,
    ) -> Option<Overuse> {
        let last = self.last.get_mut(index)?;
        let before = last.replace(now?)?;
        let overuse = Overuse {
            index,
            rule: CpuRule::OneSearch,
            cpu: now?.saturating_sub(before),
            turns: allowance,
        };
        (!overuse.excess().is_zero()).then_some(overuse)
    }

    /// Given both engines' CPU since their start, at the end of the game: the engine that used
    /// more than a rule allows, the one with the larger excess if both did; `None` when neither
    /// did or could not be read (a process gone already faults the game anyway).
    #[must_use]
    pub fn finish(&self, now: [Option<Duration>; 2]) -> Option<Overuse> {
        (0..2)
            .filter_map(|index| Some((index, now[index]?)))
            .flat_map(|(index, cpu)| {
                let setup = self.setup[index];
                [
                    Overuse {
                        index,
                        rule: CpuRule::Setup,
                        cpu: setup,
                        turns: Duration::ZERO,
                    },
                    Overuse {
                        index,
                        rule: CpuRule::Turns,
                        cpu: cpu.saturating_sub(setup),
                        turns: self.turns[index],
                    },
                ]
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
            rule: CpuRule::Turns,
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
        let mut guard = CpuGuard::start([Some(Duration::ZERO); 2]);
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
        let guard = CpuGuard::start([Some(Duration::ZERO); 2]);
        assert_eq!(guard.finish(readings([pid, pid])), None);
    }

    /// Review of issue 46's fixes: a bench that burns CPU makes every node look dear; the
    /// candidate's pace is bounded by its predecessor's.
    #[test]
    fn a_pace_is_never_dearer_than_the_reference_allows() {
        let reference = NodePace::measured(1_000_000, Duration::from_millis(500)).unwrap();
        let inflated = NodePace::measured(1_000_000, Duration::from_secs(5)).unwrap();
        // 10,000 nodes at 1.5 times the reference's 0.5 µs, three times, and the 5 ms slack.
        let allowance = inflated.at_most(reference).allowance(10_000);
        assert!(
            allowance.abs_diff(Duration::from_micros(27_500)) < Duration::from_micros(1),
            "{allowance:?}"
        );
        let cheaper = NodePace::measured(1_000_000, Duration::from_millis(400)).unwrap();
        assert_eq!(cheaper.at_most(reference), cheaper);
    }

    #[test]
    fn a_node_pace_allows_three_times_its_cost_and_a_slack() {
        let pace = NodePace::measured(1_000_000, Duration::from_millis(500)).unwrap();
        assert_eq!(pace.allowance(10_000), Duration::from_millis(20));
        assert!((pace.nodes_per_second() - 2_000_000.0).abs() < 1e-6);
        assert_eq!(NodePace::measured(0, Duration::from_secs(1)), None);
        assert_eq!(NodePace::measured(10, Duration::ZERO), None);
    }

    /// Review of issue 46's fixes: the setup's wall time once counted as the engine's own time,
    /// so an engine that waited 10 s before `uciok` could then search on several threads. The
    /// setup now has its own fixed allowance and earns none for the game.
    #[test]
    fn a_slow_setup_earns_no_cpu_for_the_game() {
        let guard = CpuGuard::start([Some(Duration::from_millis(40)), None]);
        // 40 ms of setup, then 150 ms in a game without turns: 50 ms past the fixed slack.
        let over = guard
            .finish([Some(Duration::from_millis(190)), None])
            .unwrap();
        assert_eq!(
            (over.index, over.rule, over.excess()),
            (0, CpuRule::Turns, Duration::from_millis(50))
        );
        assert_eq!(guard.finish([Some(Duration::from_millis(140)), None]), None);
        let heavy = CpuGuard::start([Some(Duration::from_millis(1300)), None]);
        let over = heavy
            .finish([Some(Duration::from_millis(1300)), None])
            .unwrap();
        assert_eq!(
            (over.rule, over.excess()),
            (CpuRule::Setup, Duration::from_millis(300))
        );
    }

    /// Review of issue 46's fixes: the game's total let an engine save its allowance for the
    /// moves that matter; one search may cost at most four times its own.
    #[test]
    fn one_search_is_held_to_a_multiple_of_its_allowance() {
        let allowance = Duration::from_millis(20);
        let mut guard = CpuGuard::start([Some(Duration::from_millis(30)), None]);
        let ms = |ms| Some(Duration::from_millis(ms));
        assert_eq!(guard.search_ended(0, ms(100), allowance), None);
        assert_eq!(guard.search_ended(0, ms(180), allowance), None);
        let over = guard.search_ended(0, ms(261), allowance).unwrap();
        assert_eq!(
            (over.rule, over.cpu, over.excess()),
            (
                CpuRule::OneSearch,
                Duration::from_millis(81),
                Duration::from_millis(1)
            )
        );
        // Unread CPU decides nothing, and the next reading starts from the last one seen.
        assert_eq!(guard.search_ended(1, ms(500), allowance), None);
        assert_eq!(guard.search_ended(0, None, allowance), None);
        assert_eq!(guard.search_ended(0, ms(300), allowance), None);
    }
}
