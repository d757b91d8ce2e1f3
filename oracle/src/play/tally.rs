//! Counting: a finished pair of games, its pentanomial bucket, and the tally of wins, draws,
//! losses, terminations and faults over the counted pairs, from the first engine's side.

use serde::{Deserialize, Serialize};
use shakmaty::Color;

use super::game::{GameResult, Termination};

/// One game of a pair, as counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSummary {
    /// The result.
    pub result: GameResult,
    /// How it ended.
    pub termination: Termination,
    /// Half-moves played after the opening.
    pub plies: u32,
    /// The engine (0 first, 1 second) that faulted, if one did.
    pub faulted_engine: Option<u8>,
}

/// A finished pair: the first engine has White in game 0 and Black in game 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairOutcome {
    /// Global pair index (0-based, over all shards).
    pub index: u64,
    /// Book index of the opening.
    pub opening: usize,
    /// The two games.
    pub games: [GameSummary; 2],
    /// Game 1 repeated game 0 move for move with the colours swapped: from this opening the two
    /// engines played alike (state files written before this field read `false`).
    #[serde(default)]
    pub identical_games: bool,
}

impl PairOutcome {
    /// The first engine's half-points over the pair (0..=4): its pentanomial bucket.
    pub fn bucket(&self) -> usize {
        self.first_engine_games()
            .map(|(_, half_points)| usize::from(half_points))
            .sum()
    }

    /// Each game with the first engine's half-points in it (White in game 0, Black in game 1).
    fn first_engine_games(&self) -> impl Iterator<Item = (&GameSummary, u8)> {
        self.games
            .iter()
            .zip([Color::White, Color::Black])
            .map(|(game, first_color)| (game, game.result.half_points(first_color)))
    }
}

/// Wins, draws and losses of the first engine over the counted games that ended without a fault
/// of either engine: what the play scored, apart from lost clocks, crashes and illegal moves.
pub fn fault_free_wdl(pairs: &[PairOutcome]) -> [u64; 3] {
    let mut wdl = [0; 3];
    for (_, half_points) in pairs
        .iter()
        .flat_map(PairOutcome::first_engine_games)
        .filter(|(game, _)| game.faulted_engine.is_none())
    {
        wdl[usize::from(2 - half_points)] += 1;
    }
    wdl
}

/// Termination counts by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminationCounts {
    /// Rules of chess.
    pub normal: u64,
    /// Adjudication.
    pub adjudication: u64,
    /// Time forfeits.
    pub time_forfeit: u64,
    /// Illegal or unparsable moves.
    pub illegal_move: u64,
    /// Crashes and closed pipes.
    pub disconnect: u64,
    /// No answer to `isready`/`uci` in time.
    pub stall: u64,
    /// CPU used outside the engine's turn in a timed game (absent in older shard files).
    #[serde(default)]
    pub cpu_outside_turn: u64,
    /// At a node limit, more CPU than the engine's own pace allows for the nodes it was given
    /// (absent in older files).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu_over_node_limit: u64,
}

impl TerminationCounts {
    /// Counts one game ending in `termination`.
    pub fn add(&mut self, termination: Termination) {
        let slot = match termination {
            Termination::Normal => &mut self.normal,
            Termination::Adjudication => &mut self.adjudication,
            Termination::TimeForfeit => &mut self.time_forfeit,
            Termination::IllegalMove => &mut self.illegal_move,
            Termination::Disconnect => &mut self.disconnect,
            Termination::Stall => &mut self.stall,
            Termination::CpuOutsideTurn => &mut self.cpu_outside_turn,
            Termination::CpuOverNodeLimit => &mut self.cpu_over_node_limit,
        };
        *slot += 1;
    }

    /// The number of engine faults (everything but normal ends and adjudications).
    pub fn faults(&self) -> u64 {
        self.time_forfeit
            + self.illegal_move
            + self.disconnect
            + self.stall
            + self.cpu_outside_turn
            + self.cpu_over_node_limit
    }
}

/// One engine's faults by kind: evidence about the engine (or its sandbox), never a win for
/// the other side by itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultCounts {
    /// Crashes and closed pipes.
    pub disconnect: u64,
    /// No answer to `isready`/`uci` in time.
    pub stall: u64,
    /// Illegal or unparsable moves.
    pub illegal_move: u64,
    /// Time forfeits.
    pub time_forfeit: u64,
    /// CPU used outside its turn in timed games; left out when 0, so that entries written
    /// before the rule keep their bytes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu_outside_turn: u64,
    /// More CPU at a node limit than its own pace allows for its nodes; left out when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cpu_over_node_limit: u64,
}

/// Serde's test for a count left out when 0.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl FaultCounts {
    /// Counts one game the engine lost by `termination`; normal ends and adjudications are
    /// no faults and are not counted.
    pub fn add(&mut self, termination: Termination) {
        match termination {
            Termination::Normal | Termination::Adjudication => {}
            Termination::Disconnect => self.disconnect += 1,
            Termination::Stall => self.stall += 1,
            Termination::IllegalMove => self.illegal_move += 1,
            Termination::TimeForfeit => self.time_forfeit += 1,
            Termination::CpuOutsideTurn => self.cpu_outside_turn += 1,
            Termination::CpuOverNodeLimit => self.cpu_over_node_limit += 1,
        }
    }

    /// Each kind's human name (`time forfeit`, …) and count, in report order.
    pub fn kinds(&self) -> [(&'static str, u64); 6] {
        [
            ("disconnect", self.disconnect),
            ("stall", self.stall),
            ("illegal move", self.illegal_move),
            ("time forfeit", self.time_forfeit),
            ("cpu outside turn", self.cpu_outside_turn),
            ("cpu over node limit", self.cpu_over_node_limit),
        ]
    }

    /// `disconnect 0, stall 1, …`: every kind with its count.
    pub fn kinds_text(&self) -> String {
        let kinds = self.kinds().map(|(kind, count)| format!("{kind} {count}"));
        kinds.join(", ")
    }

    /// All faults of the engine.
    pub fn total(&self) -> u64 {
        self.kinds().iter().map(|(_, count)| count).sum()
    }
}

/// The counted results, from the first engine's side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Pairs counted.
    pub pairs: u64,
    /// Wins of the first engine.
    pub wins: u64,
    /// Draws.
    pub draws: u64,
    /// Losses of the first engine.
    pub losses: u64,
    /// Pentanomial counts [LL, LD, DD+WL, WD, WW].
    pub pentanomial: [u64; 5],
    /// Terminations of the counted games.
    pub terminations: TerminationCounts,
    /// Faults charged to the first and the second engine, by kind.
    pub faults: [FaultCounts; 2],
    /// Pairs whose two games were identical ([`PairOutcome::identical_games`]).
    #[serde(default)]
    pub identical_pairs: u64,
}

impl Tally {
    /// Counts a pair.
    pub fn add(&mut self, pair: &PairOutcome) {
        self.pairs += 1;
        self.pentanomial[pair.bucket()] += 1;
        self.identical_pairs += u64::from(pair.identical_games);
        for (game, half_points) in pair.first_engine_games() {
            match half_points {
                2 => self.wins += 1,
                1 => self.draws += 1,
                _ => self.losses += 1,
            }
            self.terminations.add(game.termination);
            if let Some(engine) = game.faulted_engine {
                self.faults[usize::from(engine)].add(game.termination);
            }
        }
    }

    /// Every counted pair (at least one) repeated its first game in its second: the two engines
    /// could not be told apart from any opening played.
    pub fn all_pairs_identical(&self) -> bool {
        self.pairs > 0 && self.identical_pairs == self.pairs
    }

    /// The tally of a sequence of pairs.
    pub fn of<'a>(pairs: impl IntoIterator<Item = &'a PairOutcome>) -> Tally {
        let mut tally = Tally::default();
        pairs.into_iter().for_each(|p| tally.add(p));
        tally
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(result: GameResult) -> GameSummary {
        GameSummary {
            result,
            termination: Termination::Normal,
            plies: 10,
            faulted_engine: None,
        }
    }

    #[test]
    fn pairs_fill_pentanomial_buckets_from_the_first_engine_side() {
        use GameResult::*;
        let pair = |a, b| PairOutcome {
            index: 0,
            opening: 0,
            games: [game(a), game(b)],
            identical_games: false,
        };
        // Game 0: first engine White; game 1: first engine Black.
        assert_eq!(pair(BlackWins, WhiteWins).bucket(), 0);
        assert_eq!(pair(Draw, WhiteWins).bucket(), 1);
        assert_eq!(pair(WhiteWins, WhiteWins).bucket(), 2);
        assert_eq!(pair(Draw, Draw).bucket(), 2);
        assert_eq!(pair(WhiteWins, Draw).bucket(), 3);
        assert_eq!(pair(WhiteWins, BlackWins).bucket(), 4);
        let mut faulty = pair(WhiteWins, BlackWins);
        faulty.games[1].termination = Termination::TimeForfeit;
        faulty.games[1].faulted_engine = Some(1);
        let tally = Tally::of(&[pair(Draw, WhiteWins), faulty]);
        assert_eq!((tally.wins, tally.draws, tally.losses), (2, 1, 1));
        assert_eq!(tally.pentanomial, [0, 1, 0, 0, 1]);
        assert_eq!(
            (tally.terminations.normal, tally.terminations.time_forfeit),
            (3, 1)
        );
        assert_eq!(tally.faults[0], FaultCounts::default());
        let repeated = PairOutcome {
            identical_games: true,
            ..pair(Draw, Draw)
        };
        assert!(!tally.all_pairs_identical() && !Tally::default().all_pairs_identical());
        assert!(Tally::of(&[repeated, repeated]).all_pairs_identical());
        assert_eq!(Tally::of(&[repeated, faulty]).identical_pairs, 1);
        assert!(!Tally::of(&[repeated, faulty]).all_pairs_identical());
        // The second engine's time forfeit in `faulty`'s game 1 is left out; its win is not.
        assert_eq!(fault_free_wdl(&[pair(Draw, WhiteWins), faulty]), [1, 1, 1]);
        assert_eq!(
            tally.faults[1],
            FaultCounts {
                time_forfeit: 1,
                ..FaultCounts::default()
            }
        );
    }
}
