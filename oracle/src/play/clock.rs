//! Time controls and chess clocks.
//!
//! Only the interval from writing `go` to reading `bestmove` is charged (the driver measures
//! it on the monotonic clock). Each side starts with base + increment; a move that leaves the
//! clock below −margin loses on time. A smaller overrun is not forgiven but owed: the engine is
//! told 0 and the debt is paid from its next increments, so the margin tolerates late answers
//! over the whole game rather than once per move (forgiven per move, a 100 ms margin at
//! 1+0.01 would give an engine ten times its increment every move). Every search has a read deadline, also in node, depth and movetime games, so a hung
//! engine can never hang the match.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::uci::GoLimits;

/// How long each move may take: a clock, or a fixed search limit.
///
/// One type for the runner and the constitution. Its derived serde form is the runner's
/// (state files and shard fingerprints, `{"nodes":8000}`); stages and register entries write
/// the constitution's text form instead (`governance::time_control`), which is [`Display`]'s
/// for the clocks and node limits the constitution admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeControl {
    /// `[moves/]base+increment` in seconds (a new `base` every `moves` moves when given).
    Clock {
        /// Time per period.
        base: Duration,
        /// Increment per move.
        increment: Duration,
        /// Moves per period (`None`: the whole game).
        moves: Option<u32>,
    },
    /// `go nodes N`.
    Nodes(NonZeroU64),
    /// `go depth D`.
    Depth(u32),
    /// `go movetime T`.
    Movetime(Duration),
}

/// A `--tc` that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid time control `{0}`: expected `BASE+INC` or `MOVES/BASE+INC` in seconds, e.g. 8+0.08 or 40/60+0.6"
)]
pub struct TimeControlError(pub String);

impl FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(text: &str) -> Result<TimeControl, TimeControlError> {
        let error = || TimeControlError(text.to_string());
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => (
                Some(m.parse::<u32>().ok().filter(|&m| m > 0).ok_or_else(error)?),
                rest,
            ),
            None => (None, text),
        };
        let (base, increment) = rest.split_once('+').unwrap_or((rest, "0"));
        let seconds = |s: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e7)
                .map(Duration::from_secs_f64)
                .ok_or_else(error)
        };
        let (base, increment) = (seconds(base)?, seconds(increment)?);
        if base.is_zero() && increment.is_zero() {
            return Err(error());
        }
        Ok(TimeControl::Clock {
            base,
            increment,
            moves,
        })
    }
}

impl fmt::Display for TimeControl {
    /// The text people and the constitution read: `8+0.08`, `40/60+0.6`, `10+0`, `nodes=5000`,
    /// `depth=8`, `movetime=100ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Clock {
                base,
                increment,
                moves,
            } => {
                if let Some(m) = moves {
                    write!(f, "{m}/")?;
                }
                write!(f, "{}+{}", Seconds(*base), Seconds(*increment))
            }
            TimeControl::Nodes(n) => write!(f, "nodes={n}"),
            TimeControl::Depth(d) => write!(f, "depth={d}"),
            TimeControl::Movetime(t) => write!(f, "movetime={}ms", t.as_millis()),
        }
    }
}

impl TimeControl {
    /// The PGN `TimeControl` tag's value: `40/60+0.6`, `8+0.08`, `10` (no increment), or `-`
    /// for fixed search limits, which the tag cannot express.
    #[must_use]
    pub fn pgn_value(&self) -> String {
        match self {
            TimeControl::Clock {
                base,
                increment,
                moves,
            } => {
                let period = moves.map(|m| format!("{m}/")).unwrap_or_default();
                if increment.is_zero() {
                    format!("{period}{}", Seconds(*base))
                } else {
                    format!("{period}{}+{}", Seconds(*base), Seconds(*increment))
                }
            }
            TimeControl::Nodes(_) | TimeControl::Depth(_) | TimeControl::Movetime(_) => {
                "-".to_string()
            }
        }
    }

    /// True for clocks and movetime, whose games measure speed and so must not oversubscribe the CPU.
    #[must_use]
    pub fn is_timed(&self) -> bool {
        matches!(self, TimeControl::Clock { .. } | TimeControl::Movetime(_))
    }
}

/// A duration as decimal seconds with no trailing zeros (`8`, `0.08`, `1.5`), exact to the
/// nanosecond: floating point would print 8.08 s as `8.080000000000002`.
struct Seconds(Duration);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fraction = format!("{:09}", self.0.subsec_nanos());
        let fraction = fraction.trim_end_matches('0');
        if fraction.is_empty() {
            write!(f, "{}", self.0.as_secs())
        } else {
            write!(f, "{}.{fraction}", self.0.as_secs())
        }
    }
}

/// The clock settings of a match: the engines' time controls and the tolerances around them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockRules {
    /// The time control of the first engine, and of the second unless `second_engine_tc`.
    pub tc: TimeControl,
    /// The second engine's time control where it differs from the first's (time odds; absent
    /// in files written before per-engine time controls existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second_engine_tc: Option<TimeControl>,
    /// How far a clock may stand below zero (an overrun owed, not forgiven); further loses on
    /// time.
    pub margin: Duration,
    /// Extra wait beyond the allowed time before the read deadline fires (`stop` is sent).
    pub slack: Duration,
    /// The read deadline of node and depth searches, which have no time budget of their own.
    pub move_timeout: Duration,
}

impl ClockRules {
    /// The time control engine `slot` plays (0 the first engine, 1 the second).
    #[must_use]
    pub fn of_engine(&self, slot: usize) -> TimeControl {
        match slot {
            0 => self.tc,
            _ => self.second_engine_tc.unwrap_or(self.tc),
        }
    }

    /// The time controls as a summary names them: `8+0.08`, or with time odds the first
    /// engine's against the second's, `8+0.08 vs 4+0.04`.
    #[must_use]
    pub fn label(&self) -> String {
        match self.second_engine_tc {
            Some(second) => format!("{} vs {second}", self.tc),
            None => self.tc.to_string(),
        }
    }
}

/// Why the engines of a match have no usable pair of time controls.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineTimeControlError {
    /// Neither the engine's spec nor the match gives a limit.
    #[error(
        "the {} engine has no time control: give --tc, --nodes, --depth or --movetime, or tc= in its --engine spec",
        ordinal(*.0)
    )]
    Missing(usize),
    /// Two different limits that are not both clocks: `go` cannot mix `wtime` with a fixed limit.
    #[error(
        "the engines' time controls differ ({0} against {1}), so both must be clocks (`[MOVES/]BASE+INC`): time odds between a clock and a fixed search limit are not a game"
    )]
    NotClocks(TimeControl, TimeControl),
}

/// `first` or `second`, for engine slot 0 or 1.
fn ordinal(slot: usize) -> &'static str {
    if slot == 0 { "first" } else { "second" }
}

/// Each engine's time control: its own (`tc=` in its spec) or else the match's (`--tc`,
/// `--nodes`, …), as [`ClockRules`] holds them: the first engine's, and the second's when it
/// differs (so that `--tc 8+0.08` and `tc=8+0.08` on both engines are the same match).
///
/// # Errors
/// An engine without any time control, or two different ones that are not both clocks.
pub fn engine_time_controls(
    global: Option<TimeControl>,
    own: [Option<TimeControl>; 2],
) -> Result<(TimeControl, Option<TimeControl>), EngineTimeControlError> {
    let of = |slot: usize| {
        own[slot]
            .or(global)
            .ok_or(EngineTimeControlError::Missing(slot))
    };
    let (first, second) = (of(0)?, of(1)?);
    if first == second {
        return Ok((first, None));
    }
    let clock = |tc: TimeControl| matches!(tc, TimeControl::Clock { .. });
    if !(clock(first) && clock(second)) {
        return Err(EngineTimeControlError::NotClocks(first, second));
    }
    Ok((first, Some(second)))
}

/// What happened to a clock when a move was charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// The move was in time; the clock now shows this much.
    InTime,
    /// The move overran by more than the margin: loss on time.
    Forfeit,
}

/// Both sides' clocks during one game (index 0: White, 1: Black).
#[derive(Debug, Clone)]
pub struct GameClock {
    rules: ClockRules,
    time_controls: [TimeControl; 2],
    remaining: [Duration; 2],
    /// Overrun still owed by each side: its clock stands this far below zero (`remaining` is
    /// then 0).
    debt: [Duration; 2],
    moves_made: [u32; 2],
}

impl GameClock {
    /// Fresh clocks for White's and Black's time control: each side has its base + increment.
    pub fn new(rules: ClockRules, time_controls: [TimeControl; 2]) -> GameClock {
        let start = |tc: TimeControl| match tc {
            TimeControl::Clock {
                base, increment, ..
            } => base + increment,
            _ => Duration::ZERO,
        };
        GameClock {
            rules,
            time_controls,
            remaining: time_controls.map(start),
            debt: [Duration::ZERO; 2],
            moves_made: [0; 2],
        }
    }

    /// The time left for `side` (0 White, 1 Black); zero for fixed-limit games.
    pub fn remaining(&self, side: usize) -> Duration {
        self.remaining[side]
    }

    /// The increment of `side`'s clock (`None` for a fixed limit).
    fn increment(&self, side: usize) -> Option<Duration> {
        match self.time_controls[side] {
            TimeControl::Clock { increment, .. } => Some(increment),
            _ => None,
        }
    }

    /// The `go` limits for `side` to move.
    pub fn limits(&self, side: usize) -> GoLimits {
        match self.time_controls[side] {
            TimeControl::Clock { moves, .. } => GoLimits {
                wtime: Some(self.remaining[0]),
                btime: Some(self.remaining[1]),
                winc: self.increment(0),
                binc: self.increment(1),
                movestogo: moves.map(|m| m - self.moves_made[side] % m),
                ..GoLimits::default()
            },
            TimeControl::Nodes(n) => GoLimits::nodes(n.get()),
            TimeControl::Depth(d) => GoLimits::depth(d),
            TimeControl::Movetime(t) => GoLimits::movetime(t),
        }
    }

    /// How long to wait for `bestmove` from `side` before sending `stop`.
    pub fn read_deadline(&self, side: usize) -> Duration {
        match self.time_controls[side] {
            TimeControl::Clock { .. } => {
                self.remaining[side]
                    + self.rules.margin.saturating_sub(self.debt[side])
                    + self.rules.slack
            }
            TimeControl::Movetime(t) => t + self.rules.margin + self.rules.slack,
            TimeControl::Nodes(_) | TimeControl::Depth(_) => self.rules.move_timeout,
        }
    }

    /// Charges `elapsed` to `side`; adds the increment (and a new period) when the move was in time.
    pub fn charge(&mut self, side: usize, elapsed: Duration) -> Charge {
        let tc = self.time_controls[side];
        let allowed = match tc {
            TimeControl::Clock { .. } => self.remaining[side],
            TimeControl::Movetime(t) => t,
            TimeControl::Nodes(_) | TimeControl::Depth(_) => self.rules.move_timeout,
        };
        // What the move cost the clock: its time and what the side already owed.
        let spent = elapsed + self.debt[side];
        if spent > allowed + self.rules.margin {
            return Charge::Forfeit;
        }
        if let TimeControl::Clock {
            base,
            increment,
            moves,
        } = tc
        {
            let owed = spent.saturating_sub(allowed);
            self.remaining[side] = allowed.saturating_sub(spent) + increment.saturating_sub(owed);
            self.debt[side] = owed.saturating_sub(increment);
            self.moves_made[side] += 1;
            if moves.is_some_and(|m| self.moves_made[side].is_multiple_of(m)) {
                self.remaining[side] += base;
            }
        }
        Charge::InTime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn rules(tc: &str) -> ClockRules {
        ClockRules {
            tc: tc.parse().unwrap(),
            second_engine_tc: None,
            margin: ms(100),
            slack: ms(50),
            move_timeout: ms(5000),
        }
    }

    /// A game's clocks with `tc` for both sides.
    fn game_clock(tc: &str) -> GameClock {
        GameClock::new(rules(tc), [tc.parse().unwrap(); 2])
    }

    #[test]
    fn parses_and_prints_time_controls() {
        let tc: TimeControl = "8+0.08".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl::Clock {
                base: ms(8000),
                increment: ms(80),
                moves: None
            }
        );
        assert_eq!(
            (tc.to_string(), tc.pgn_value()),
            ("8+0.08".into(), "8+0.08".into())
        );
        let tc: TimeControl = "40/60+0.6".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl::Clock {
                base: ms(60000),
                increment: ms(600),
                moves: Some(40)
            }
        );
        assert_eq!(tc.to_string(), "40/60+0.6");
        let tc: TimeControl = "10".parse().unwrap();
        assert_eq!(
            (tc.to_string(), tc.pgn_value()),
            ("10+0".into(), "10".into())
        );
        for bad in ["", "x+1", "0+0", "0/10+1", "-1+0", "8+", "inf+0"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad}");
        }
        let nodes = TimeControl::Nodes(NonZeroU64::new(5000).unwrap());
        assert_eq!(
            (nodes.to_string(), nodes.pgn_value()),
            ("nodes=5000".into(), "-".into())
        );
        assert_eq!(TimeControl::Depth(8).to_string(), "depth=8");
        assert_eq!(TimeControl::Movetime(ms(100)).to_string(), "movetime=100ms");
        // Exact decimals, where floating point would print 8.080000000000002.
        let tc: TimeControl = "8.08+0.001".parse().unwrap();
        assert_eq!(tc.to_string(), "8.08+0.001");
    }

    #[test]
    fn the_runner_serializes_time_controls_as_it_always_did() {
        // State files and shard fingerprints hold this form: it must not change.
        let clock: TimeControl = "40/8+0.08".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&clock).unwrap(),
            r#"{"clock":{"base":{"secs":8,"nanos":0},"increment":{"secs":0,"nanos":80000000},"moves":40}}"#
        );
        let nodes = TimeControl::Nodes(NonZeroU64::new(1000).unwrap());
        assert_eq!(serde_json::to_string(&nodes).unwrap(), r#"{"nodes":1000}"#);
        assert_eq!(
            serde_json::to_string(&TimeControl::Movetime(ms(100))).unwrap(),
            r#"{"movetime":{"secs":0,"nanos":100000000}}"#
        );
        for tc in [clock, nodes, TimeControl::Depth(3)] {
            let text = serde_json::to_string(&tc).unwrap();
            assert_eq!(serde_json::from_str::<TimeControl>(&text).unwrap(), tc);
        }
        assert!(serde_json::from_str::<TimeControl>(r#"{"nodes":0}"#).is_err());
    }

    #[test]
    fn clock_starts_with_increment_clamps_small_overruns_and_forfeits_large_ones() {
        let mut clock = game_clock("1+0.01");
        assert_eq!(clock.remaining(0), ms(1010));
        assert_eq!(
            clock.limits(0).command(),
            "go wtime 1010 btime 1010 winc 10 binc 10"
        );
        assert_eq!(clock.read_deadline(0), ms(1160));
        assert_eq!(clock.charge(0, ms(300)), Charge::InTime);
        assert_eq!(clock.remaining(0), ms(720));
        // 80 ms over the clock but within the 100 ms margin: owed, and the increment pays 10 ms.
        assert_eq!(clock.charge(0, ms(800)), Charge::InTime);
        assert_eq!(clock.remaining(0), ms(0));
        assert_eq!(
            clock.limits(0).command(),
            "go wtime 0 btime 1010 winc 10 binc 10"
        );
        // Still 70 ms in debt: a move of 31 ms puts the clock 101 ms below zero.
        assert_eq!(clock.clone().charge(0, ms(31)), Charge::Forfeit);
        assert_eq!(clock.charge(0, ms(30)), Charge::InTime);
        assert_eq!(clock.remaining(0), ms(0));
        // An instant move pays 10 ms of the remaining 90.
        assert_eq!(clock.charge(0, ms(0)), Charge::InTime);
        assert_eq!(clock.remaining(0), ms(0));
        assert_eq!(clock.charge(0, ms(21)), Charge::Forfeit);
        assert_eq!(clock.remaining(1), ms(1010));
    }

    #[test]
    fn a_margin_forgiven_per_move_cannot_be_farmed() {
        // Overrunning by 80 ms every move, as if the margin were free time: lost on the second.
        let mut clock = game_clock("1+0.01");
        assert_eq!(clock.charge(0, ms(1090)), Charge::InTime);
        assert_eq!(clock.charge(0, ms(80)), Charge::Forfeit);
    }

    #[test]
    fn moves_per_period_refill_the_clock() {
        let mut clock = game_clock("2/1+0");
        assert_eq!(clock.limits(1).movestogo, Some(2));
        assert_eq!(clock.charge(1, ms(400)), Charge::InTime);
        assert_eq!(clock.limits(1).movestogo, Some(1));
        assert_eq!(clock.charge(1, ms(400)), Charge::InTime);
        assert_eq!(clock.remaining(1), ms(1200));
        assert_eq!(clock.limits(1).movestogo, Some(2));
    }

    #[test]
    fn fixed_limits_still_have_deadlines() {
        let nodes_5000 = TimeControl::Nodes(NonZeroU64::new(5000).unwrap());
        let mut nodes = GameClock::new(rules("1+0"), [nodes_5000; 2]);
        assert_eq!(nodes.limits(0).command(), "go nodes 5000");
        assert_eq!(nodes.read_deadline(0), ms(5000));
        assert_eq!(nodes.charge(0, ms(5200)), Charge::Forfeit);
        let mut movetime = GameClock::new(rules("1+0"), [TimeControl::Movetime(ms(200)); 2]);
        assert_eq!(movetime.read_deadline(0), ms(350));
        assert_eq!(movetime.charge(0, ms(290)), Charge::InTime);
        assert_eq!(movetime.charge(0, ms(301)), Charge::Forfeit);
    }

    #[test]
    fn time_odds_give_each_side_its_own_clock_and_increment() {
        // White plays 2+0.02, Black 1+0.01: `go` tells both engines both clocks.
        let mut clock = GameClock::new(
            rules("2+0.02"),
            ["2+0.02".parse().unwrap(), "1+0.01".parse().unwrap()],
        );
        assert_eq!(
            clock.limits(0).command(),
            "go wtime 2020 btime 1010 winc 20 binc 10"
        );
        assert_eq!(clock.charge(0, ms(500)), Charge::InTime);
        assert_eq!(clock.remaining(0), ms(1540));
        assert_eq!(clock.charge(1, ms(500)), Charge::InTime);
        assert_eq!(clock.remaining(1), ms(520));
        assert_eq!(clock.read_deadline(1), ms(670));
        // 1.2 s is in time for White's clock, a forfeit on Black's.
        assert_eq!(clock.charge(0, ms(1200)), Charge::InTime);
        assert_eq!(clock.charge(1, ms(1200)), Charge::Forfeit);
    }

    #[test]
    fn each_engine_plays_its_own_time_control_or_the_matchs() {
        let tc = |text: &str| text.parse::<TimeControl>().unwrap();
        let nodes = TimeControl::Nodes(NonZeroU64::new(500).unwrap());
        // The same match however it is written: no odds recorded.
        assert_eq!(
            engine_time_controls(Some(tc("8+0.08")), [None, Some(tc("8+0.08"))]),
            Ok((tc("8+0.08"), None))
        );
        assert_eq!(
            engine_time_controls(None, [Some(tc("8+0.08")); 2]),
            Ok((tc("8+0.08"), None))
        );
        // An engine's own wins over the match's; the first engine's leads.
        assert_eq!(
            engine_time_controls(Some(tc("8+0.08")), [Some(tc("4+0.04")), None]),
            Ok((tc("4+0.04"), Some(tc("8+0.08"))))
        );
        assert_eq!(
            engine_time_controls(None, [Some(tc("40/60+0.6")), Some(tc("10+0.1"))]),
            Ok((tc("40/60+0.6"), Some(tc("10+0.1"))))
        );
        assert_eq!(
            engine_time_controls(None, [Some(tc("8+0.08")), None]),
            Err(EngineTimeControlError::Missing(1))
        );
        let error = engine_time_controls(Some(nodes), [None, Some(tc("8+0.08"))]).unwrap_err();
        assert_eq!(
            error,
            EngineTimeControlError::NotClocks(nodes, tc("8+0.08"))
        );
        assert!(
            error.to_string().contains("nodes=500 against 8+0.08"),
            "{error}"
        );
        assert!(
            EngineTimeControlError::Missing(1)
                .to_string()
                .starts_with("the second engine has no time control")
        );
    }

    #[test]
    fn time_odds_are_recorded_only_when_there_are_some() {
        let mut rules = rules("8+0.08");
        // Without odds the runner's form is the one state files and shards always held.
        let plain = serde_json::to_value(rules).unwrap();
        assert!(plain.get("second_engine_tc").is_none(), "{plain}");
        assert_eq!(rules.label(), "8+0.08");
        rules.second_engine_tc = Some("4+0.04".parse().unwrap());
        assert_eq!(rules.label(), "8+0.08 vs 4+0.04");
        assert_eq!(rules.of_engine(0).to_string(), "8+0.08");
        assert_eq!(rules.of_engine(1).to_string(), "4+0.04");
        let text = serde_json::to_string(&rules).unwrap();
        assert_eq!(serde_json::from_str::<ClockRules>(&text).unwrap(), rules);
        let old: ClockRules = serde_json::from_value(plain).unwrap();
        assert_eq!(old.second_engine_tc, None);
    }
}
