//! One game between two engines, refereed by `shakmaty` (never by the engines' own code).
//!
//! The referee checks every move for legality and ends the game on checkmate, stalemate,
//! threefold repetition, the 50-move rule or insufficient material, or by the optional
//! adjudication rules. An engine fault (crash, hang, illegal or unparsable move, time
//! forfeit, CPU used outside its turn in a timed game) loses the game for the faulty engine and
//! is recorded as its own termination.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position};

use super::book::{Opening, fen_of, play_uci_moves};
use super::clock::{Charge, ClockRules, GameClock, TimeControl};
use super::cpu_guard::{CpuGuard, CpuRule, NodePace, Overuse};
use super::uci::{Engine, Score, UciError};

/// How a game ended; the serde names are the keys of the report's `terminations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// Checkmate, stalemate, repetition, 50 moves, insufficient material.
    Normal,
    /// Ended by the draw, resign or maximum-length rule.
    Adjudication,
    /// An engine overran its clock or missed the read deadline.
    TimeForfeit,
    /// An engine sent an illegal or unparsable move.
    IllegalMove,
    /// An engine process exited or closed its pipes.
    Disconnect,
    /// An engine did not answer `isready` (or start up) in time.
    Stall,
    /// In a timed game, an engine's processes used more CPU than its own turns on one core.
    CpuOutsideTurn,
    /// At a node limit, an engine's processes used more CPU than its own measured pace allows
    /// for the nodes it was given: it searched more than it was told.
    CpuOverNodeLimit,
}

impl Termination {
    /// All kinds, in report order.
    pub const ALL: [Termination; 8] = [
        Termination::Normal,
        Termination::Adjudication,
        Termination::TimeForfeit,
        Termination::IllegalMove,
        Termination::Disconnect,
        Termination::Stall,
        Termination::CpuOutsideTurn,
        Termination::CpuOverNodeLimit,
    ];

    /// The value of the PGN `Termination` tag.
    pub fn pgn_tag(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Adjudication => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::IllegalMove => "illegal move",
            Termination::Disconnect => "disconnect",
            Termination::Stall => "stall",
            Termination::CpuOutsideTurn => "cpu outside turn",
            Termination::CpuOverNodeLimit => "cpu over node limit",
        }
    }

    /// The report key (`time_forfeit`, …).
    pub fn key(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Adjudication => "adjudication",
            Termination::TimeForfeit => "time_forfeit",
            Termination::IllegalMove => "illegal_move",
            Termination::Disconnect => "disconnect",
            Termination::Stall => "stall",
            Termination::CpuOutsideTurn => "cpu_outside_turn",
            Termination::CpuOverNodeLimit => "cpu_over_node_limit",
        }
    }

    /// The termination an engine error stands for.
    pub fn of_error(error: &UciError) -> Termination {
        match error {
            UciError::Deadline {
                expected: "bestmove",
                ..
            } => Termination::TimeForfeit,
            UciError::Deadline { .. } => Termination::Stall,
            UciError::Malformed { .. } => Termination::IllegalMove,
            UciError::Disconnected { .. } | UciError::Spawn { .. } => Termination::Disconnect,
        }
    }
}

/// The result of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 0-1.
    BlackWins,
    /// ½-½.
    Draw,
}

impl GameResult {
    /// The result a PGN `Result` tag names; `None` for `*` (no result) or anything else.
    pub fn from_pgn(tag: &str) -> Option<GameResult> {
        [
            GameResult::WhiteWins,
            GameResult::BlackWins,
            GameResult::Draw,
        ]
        .into_iter()
        .find(|result| result.pgn() == tag)
    }

    /// The PGN result string.
    pub fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// A loss for `color`.
    fn loss_for(color: Color) -> GameResult {
        match color {
            Color::White => GameResult::BlackWins,
            Color::Black => GameResult::WhiteWins,
        }
    }

    /// Half-points scored by `color` (0, 1 or 2).
    pub fn half_points(self, color: Color) -> u8 {
        match (self, color) {
            (GameResult::Draw, _) => 1,
            (GameResult::WhiteWins, Color::White) | (GameResult::BlackWins, Color::Black) => 2,
            _ => 0,
        }
    }
}

/// Draw adjudication: from full move `move_number` on, |score| ≤ `score` cp for `move_count` moves of each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawRule {
    /// First full move at which the rule applies.
    pub move_number: u32,
    /// Consecutive moves of each side required.
    pub move_count: u32,
    /// Centipawn bound on |score|.
    pub score: i32,
}

/// Resign adjudication: a side whose score is ≤ −`score` cp for `move_count` of its moves loses;
/// two-sided, only if its opponent's score was ≥ +`score` cp for its last `move_count` moves too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResignRule {
    /// Consecutive moves of the losing side required (and of the winning side, two-sided).
    pub move_count: u32,
    /// Centipawn bound.
    pub score: i32,
    /// Both engines must agree (cutechess's and fastchess's `twosided=true`): one engine that
    /// scores an ending as lost does not lose it while its opponent does not see the win
    /// (absent in files written before the choice existed: one-sided).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub two_sided: bool,
}

/// Optional adjudication rules (all off by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjudication {
    /// Draw rule.
    pub draw: Option<DrawRule>,
    /// Resign rule.
    pub resign: Option<ResignRule>,
    /// Draw after this many full moves.
    pub max_moves: Option<u32>,
}

impl Adjudication {
    /// Fishtest's settings: draw after move 34 at |score| ≤ 20 for 8 moves, resign at ≤ −400 for 3.
    pub const FISHTEST: Adjudication = Adjudication {
        draw: Some(DrawRule {
            move_number: 34,
            move_count: 8,
            score: 20,
        }),
        resign: Some(ResignRule {
            move_count: 3,
            score: 400,
            two_sided: false,
        }),
        max_moves: None,
    };
}

/// One move of a game with what the engine said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveRecord {
    /// The move in UCI notation.
    pub uci: String,
    /// The engine's score from the mover's side.
    pub score: Option<Score>,
    /// The engine's reported depth.
    pub depth: Option<u32>,
    /// Time charged (from `go` to `bestmove`).
    pub elapsed: Duration,
    /// The engine's own reported search time in milliseconds.
    pub engine_time_ms: Option<u64>,
}

/// A finished game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// The opening it was played from.
    pub opening: Opening,
    /// The moves after the opening.
    pub moves: Vec<MoveRecord>,
    /// The result.
    pub result: GameResult,
    /// How it ended.
    pub termination: Termination,
    /// A human explanation (`Black mates`, `White loses on time`, …).
    pub reason: String,
    /// The side whose engine faulted.
    pub faulted: Option<Color>,
}

impl GameRecord {
    /// The game lost by the engine of `overuse` (named `name`) for the CPU it used beyond its
    /// own time: outside its turns at a clock, or beyond its pace at a node limit. It was not
    /// played fairly, so this replaces however it ended.
    fn lost_for_cpu(self, overuse: &Overuse, name: &str, at_node_limit: bool) -> GameRecord {
        let side = color_of(overuse.index);
        let seconds = |d: Duration| d.as_secs_f64();
        let (cpu, allowed) = (seconds(overuse.cpu), seconds(overuse.allowed()));
        let (termination, mut reason) = match (overuse.rule, at_node_limit) {
            (CpuRule::Setup, _) => (
                if at_node_limit {
                    Termination::CpuOverNodeLimit
                } else {
                    Termination::CpuOutsideTurn
                },
                format!(
                    "{side:?} ({name}) used {cpu:.2} s of CPU in its setup, before its first move \
                     (at most {allowed:.2} s allowed)"
                ),
            ),
            (CpuRule::OneSearch, _) => (
                Termination::CpuOverNodeLimit,
                format!(
                    "{side:?} ({name}) searched more than its node limit: {cpu:.3} s of CPU in one \
                     search (at most {allowed:.3} s allowed)"
                ),
            ),
            (CpuRule::Turns, true) => (
                Termination::CpuOverNodeLimit,
                format!(
                    "{side:?} ({name}) searched more than its node limit: {cpu:.2} s of CPU in \
                     {:.2} s its measured pace allows for the nodes it was given (at most \
                     {allowed:.2} s allowed)",
                    seconds(overuse.turns)
                ),
            ),
            (CpuRule::Turns, false) => (
                Termination::CpuOutsideTurn,
                format!(
                    "{side:?} ({name}) used CPU outside its turn: {cpu:.2} s of CPU in {:.2} s \
                     of its own turns (at most {allowed:.2} s allowed)",
                    seconds(overuse.turns)
                ),
            ),
        };
        // A game stopped at the overrunning search has no other ending to report.
        if !self.reason.is_empty() {
            reason.push_str(&format!("; the game had ended: {}", self.reason));
        }
        GameRecord {
            result: GameResult::loss_for(side),
            termination,
            reason,
            faulted: Some(side),
            ..self
        }
    }
}

/// Everything a game needs besides the engines.
#[derive(Debug, Clone, Copy)]
pub struct GameSettings {
    /// Clock rules.
    pub clock: ClockRules,
    /// White's and Black's time control (different under time odds).
    pub time_controls: [TimeControl; 2],
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Deadline for `readyok` (the ping) after `ucinewgame` and before each `position` and `go`.
    pub ready_timeout: Duration,
    /// White's and Black's CPU per node where the oracle measured it: at a node limit, an
    /// engine with a pace may use at most what its pace allows for its nodes.
    pub node_pace: [Option<NodePace>; 2],
}

/// The adjudication bound used for a mate score.
const MATE_SCORE: i32 = 100_000;

/// A score in centipawns for adjudication (mates as a large bound).
fn centipawns(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => MATE_SCORE - n,
        Score::Mate(n) => -MATE_SCORE - n,
    }
}

/// Plays one game: `engines[0]` has White, `engines[1]` Black.
///
/// `abort` is checked before every move: when it is set the game is abandoned (`None`), as
/// the match runner does with games in flight once the SPRT has decided. When either side
/// plays on a clock, an engine whose processes used CPU outside its turns loses the game
/// (`cpu_guard`), whatever else ended it.
pub fn play_game(
    engines: [&mut Engine; 2],
    opening: &Opening,
    settings: &GameSettings,
    abort: &AtomicBool,
) -> Option<GameRecord> {
    let game = Game::new(opening.clone());
    let [white, black] = engines;
    let mut engines = [white, black];
    for (index, engine) in engines.iter_mut().enumerate() {
        if let Err(error) = engine.new_game(settings.ready_timeout) {
            return Some(game.fault(color_of(index), &error));
        }
    }
    // Until its first turn an engine waits frozen where the machine can freeze it.
    for engine in &engines {
        engine.freeze();
    }
    // At a clock every engine's CPU is checked against its turns, at a node limit an engine's
    // against its pace where it has one; elsewhere nothing is checked.
    let checked: [bool; 2] = std::array::from_fn(|index| {
        settings.time_controls[index].is_timed() || node_allowance(settings, index).is_some()
    });
    if !checked.contains(&true) {
        return play_moves(&mut engines, game, settings, abort, None);
    }
    // Each game has fresh processes, so an engine's CPU since its start is its CPU in this game:
    // read now, frozen, it is its setup's, and the rest is its turns'.
    let mut guard = CpuGuard::start(engines.each_ref().map(|engine| engine.cpu_time()));
    let record = play_moves(&mut engines, game, settings, abort, Some(&mut guard))?;
    // A search that overran its share has already lost the game for its engine.
    if record.termination == Termination::CpuOverNodeLimit {
        return Some(record);
    }
    let used: [Option<Duration>; 2] =
        std::array::from_fn(|index| checked[index].then(|| engines[index].cpu_time()).flatten());
    Some(match guard.finish(used) {
        Some(overuse) => {
            let at_node_limit = !settings.time_controls[overuse.index].is_timed();
            record.lost_for_cpu(&overuse, engines[overuse.index].name(), at_node_limit)
        }
        None => record,
    })
}

/// The CPU the engine of `index` may use for a search of its node limit, when it plays at one
/// and its pace is known.
fn node_allowance(settings: &GameSettings, index: usize) -> Option<Duration> {
    match (settings.time_controls[index], settings.node_pace[index]) {
        (TimeControl::Nodes(nodes), Some(pace)) => Some(pace.allowance(nodes.get())),
        _ => None,
    }
}

/// Plays the moves of a started game to its end; `guard` (timed games) is told each turn.
fn play_moves(
    engines: &mut [&mut Engine; 2],
    mut game: Game,
    settings: &GameSettings,
    abort: &AtomicBool,
    mut guard: Option<&mut CpuGuard>,
) -> Option<GameRecord> {
    let mut clock = GameClock::new(settings.clock, settings.time_controls);
    let fen = game.opening.fen.clone();
    let mut history: Vec<String> = game.opening.moves.clone();
    let mut pos = play_uci_moves(game.opening.root(), &history)
        .expect("book openings are validated when loaded");
    let mut repetitions = Repetitions::new(&pos);
    let mut judge = Judge::new(settings.adjudication);
    loop {
        if let Some((result, reason)) = rules_outcome(&pos, &repetitions) {
            return Some(game.finish(result, Termination::Normal, reason));
        }
        if abort.load(Ordering::SeqCst) {
            return None;
        }
        let side = pos.turn();
        let index = side as usize ^ 1; // shakmaty: Black = 0, White = 1.
        let engine = &mut engines[index];
        let turn_started = Instant::now();
        let search = engine.search(
            fen.as_deref(),
            &history,
            &clock.limits(index),
            clock.read_deadline(index),
            settings.ready_timeout,
        );
        let search = match search {
            Ok(search) => search,
            Err(error) => {
                if let Some(guard) = guard.as_deref_mut() {
                    // A failed search is a turn too: an engine that overran searched all along.
                    guard.add_turn(index, turn_started.elapsed());
                }
                return Some(game.fault(side, &error));
            }
        };
        if let Some(guard) = guard.as_deref_mut() {
            // At a clock the turn is `go` to `bestmove` (the pings before it are the runner's
            // time); at a node limit it is what the engine's pace allows for its nodes, and the
            // search alone is held to a multiple of that.
            let allowance = node_allowance(settings, index);
            guard.add_turn(index, allowance.unwrap_or(search.elapsed));
            if let Some(allowance) = allowance
                && let Some(overuse) = guard.search_ended(index, engine.cpu_time(), allowance)
            {
                let record = game.finish(
                    GameResult::loss_for(side),
                    Termination::Normal,
                    String::new(),
                );
                return Some(record.lost_for_cpu(&overuse, engine.name(), true));
            }
        }
        // What the engine used of the machine in its pings, it used of its clock.
        let charged = search.elapsed + search.synchronisation_cpu;
        if clock.charge(index, charged) == Charge::Forfeit {
            let mut reason = format!("{side:?} loses on time ({:.3} s", charged.as_secs_f64());
            if !search.synchronisation_cpu.is_zero() {
                reason.push_str(&format!(
                    ": {:.3} s from go to bestmove, {:.3} s of CPU in its pings",
                    search.elapsed.as_secs_f64(),
                    search.synchronisation_cpu.as_secs_f64()
                ));
            }
            reason.push(')');
            return Some(game.time_forfeit(side, &pos, reason));
        }
        let Some(m) = UciMove::from_ascii(search.bestmove.as_bytes())
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        else {
            let reason = format!(
                "{side:?} plays illegal move `{}` in {}",
                search.bestmove,
                fen_of(&pos)
            );
            game.faulted = Some(side);
            return Some(game.finish(GameResult::loss_for(side), Termination::IllegalMove, reason));
        };
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        pos.play_unchecked(m);
        repetitions.push(&pos);
        history.push(uci.clone());
        game.moves.push(MoveRecord {
            uci,
            score: search.info.score,
            depth: search.info.depth,
            elapsed: search.elapsed,
            engine_time_ms: search.info.time_ms,
        });
        if let Some((result, reason)) =
            judge.after_move(side, search.info.score, pos.fullmoves().get())
            && rules_outcome(&pos, &repetitions).is_none()
        {
            return Some(game.finish(result, Termination::Adjudication, reason));
        }
    }
}

/// The game lost by `side` whose engine could not be started (no `uciok` or `readyok`, or it exited).
pub fn unstarted_game(opening: Opening, side: Color, error: &UciError) -> GameRecord {
    Game::new(opening).fault(side, error)
}

/// Colour of engine slot `index` (0 White).
fn color_of(index: usize) -> Color {
    if index == 0 {
        Color::White
    } else {
        Color::Black
    }
}

/// A game being built.
struct Game {
    opening: Opening,
    moves: Vec<MoveRecord>,
    faulted: Option<Color>,
}

impl Game {
    fn new(opening: Opening) -> Game {
        Game {
            opening,
            moves: Vec::new(),
            faulted: None,
        }
    }

    fn finish(self, result: GameResult, termination: Termination, reason: String) -> GameRecord {
        GameRecord {
            opening: self.opening,
            moves: self.moves,
            result,
            termination,
            reason,
            faulted: self.faulted,
        }
    }

    /// An engine error: a loss for `side` with the error's termination.
    fn fault(mut self, side: Color, error: &UciError) -> GameRecord {
        self.faulted = Some(side);
        let termination = Termination::of_error(error);
        let reason = format!("{side:?} {}: {error}", termination.pgn_tag());
        if termination == Termination::TimeForfeit {
            // The position is needed for the insufficient-material exception.
            let pos = play_uci_moves(self.opening.root(), &self.opening.moves)
                .and_then(|p| {
                    play_uci_moves(
                        p,
                        &self.moves.iter().map(|m| m.uci.clone()).collect::<Vec<_>>(),
                    )
                })
                .expect("every recorded move was checked");
            return self.time_forfeit(side, &pos, reason);
        }
        self.finish(GameResult::loss_for(side), termination, reason)
    }

    /// Loss on time for `side`, or a draw when the opponent has no mating material (FIDE 6.9).
    fn time_forfeit(mut self, side: Color, pos: &Chess, reason: String) -> GameRecord {
        self.faulted = Some(side);
        let result = if pos.has_insufficient_material(!side) {
            GameResult::Draw
        } else {
            GameResult::loss_for(side)
        };
        self.finish(result, Termination::TimeForfeit, reason)
    }
}

/// The positions since the last irreversible move, for threefold repetition.
struct Repetitions {
    hashes: Vec<Zobrist64>,
}

impl Repetitions {
    fn new(pos: &Chess) -> Repetitions {
        let mut r = Repetitions { hashes: Vec::new() };
        r.push(pos);
        r
    }

    fn push(&mut self, pos: &Chess) {
        if pos.halfmoves() == 0 {
            self.hashes.clear();
        }
        self.hashes.push(pos.zobrist_hash(EnPassantMode::Legal));
    }

    fn is_threefold(&self) -> bool {
        let last = self.hashes.last().copied();
        self.hashes.iter().filter(|&&h| Some(h) == last).count() >= 3
    }
}

/// The game-ending rules of chess, in the order they take precedence.
fn rules_outcome(pos: &Chess, repetitions: &Repetitions) -> Option<(GameResult, String)> {
    let side = pos.turn();
    if pos.is_checkmate() {
        return Some((GameResult::loss_for(side), format!("{:?} mates", !side)));
    }
    if pos.is_stalemate() {
        return Some((GameResult::Draw, "Draw by stalemate".to_string()));
    }
    if pos.is_insufficient_material() {
        return Some((
            GameResult::Draw,
            "Draw by insufficient material".to_string(),
        ));
    }
    if repetitions.is_threefold() {
        return Some((GameResult::Draw, "Draw by threefold repetition".to_string()));
    }
    if pos.halfmoves() >= 100 {
        return Some((GameResult::Draw, "Draw by fifty moves rule".to_string()));
    }
    None
}

/// The adjudication counters of one game.
struct Judge {
    rules: Adjudication,
    draw_plies: u32,
    /// Per side: its consecutive moves at ≤ −score (behind by its own count).
    resign_moves: [u32; 2],
    /// Per side: its consecutive moves at ≥ +score (ahead by its own count; two-sided rule).
    winning_moves: [u32; 2],
}

impl Judge {
    fn new(rules: Adjudication) -> Judge {
        Judge {
            rules,
            draw_plies: 0,
            resign_moves: [0; 2],
            winning_moves: [0; 2],
        }
    }

    /// Updates the counters after `side` moved with `score`; `fullmoves` is the new move number.
    fn after_move(
        &mut self,
        side: Color,
        score: Option<Score>,
        fullmoves: u32,
    ) -> Option<(GameResult, String)> {
        let cp = score.map(centipawns);
        if let Some(rule) = self.rules.resign {
            let streak = |count: u32, holds: bool| if holds { count + 1 } else { 0 };
            let behind = &mut self.resign_moves[side as usize];
            *behind = streak(*behind, cp.is_some_and(|cp| cp <= -rule.score));
            let ahead = &mut self.winning_moves[side as usize];
            *ahead = streak(*ahead, cp.is_some_and(|cp| cp >= rule.score));
            // As in cutechess: the loser's own move decides, with the winner's count as it stands.
            let opponent_agrees =
                !rule.two_sided || self.winning_moves[!side as usize] >= rule.move_count;
            if self.resign_moves[side as usize] >= rule.move_count && opponent_agrees {
                return Some((
                    GameResult::loss_for(side),
                    format!("{side:?} resigns (adjudication)"),
                ));
            }
        }
        if let Some(rule) = self.rules.draw {
            let quiet =
                fullmoves >= rule.move_number && cp.is_some_and(|cp| cp.abs() <= rule.score);
            self.draw_plies = if quiet { self.draw_plies + 1 } else { 0 };
            if self.draw_plies >= 2 * rule.move_count {
                return Some((GameResult::Draw, "Draw by adjudication".to_string()));
            }
        }
        if let Some(max) = self.rules.max_moves
            && side == Color::Black
            && fullmoves > max
        {
            return Some((
                GameResult::Draw,
                format!("Draw by maximum length ({max} moves)"),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::book::parse_fen;

    fn repetitions_after(moves: &[&str]) -> (Chess, Repetitions) {
        let mut pos = Chess::default();
        let mut r = Repetitions::new(&pos);
        for m in moves {
            pos = play_uci_moves(pos, &[m.to_string()]).unwrap();
            r.push(&pos);
        }
        (pos, r)
    }

    #[test]
    fn threefold_repetition_counts_the_start() {
        let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
        let (pos, r) = repetitions_after(&[shuffle, shuffle].concat()[..7]);
        assert!(rules_outcome(&pos, &r).is_none());
        let (pos, r) = repetitions_after(&[shuffle, shuffle].concat());
        assert_eq!(rules_outcome(&pos, &r).unwrap().0, GameResult::Draw);
        assert!(rules_outcome(&pos, &r).unwrap().1.contains("threefold"));
    }

    #[test]
    fn rules_end_games() {
        let none = |fen: &str| {
            let pos = parse_fen(fen).unwrap();
            let r = Repetitions::new(&pos);
            rules_outcome(&pos, &r)
        };
        let mate = none("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3").unwrap();
        assert_eq!(mate, (GameResult::BlackWins, "Black mates".to_string()));
        assert!(
            none("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
                .unwrap()
                .1
                .contains("stalemate")
        );
        assert!(
            none("7k/8/6K1/8/8/8/8/5B2 b - - 0 1")
                .unwrap()
                .1
                .contains("insufficient")
        );
        assert!(
            none("7k/8/6K1/8/8/8/8/5R2 b - - 100 80")
                .unwrap()
                .1
                .contains("fifty")
        );
        // Mate on the 100th half-move still counts as mate.
        assert_eq!(
            none("5R1k/8/6K1/8/8/8/8/8 b - - 100 80").unwrap().0,
            GameResult::WhiteWins
        );
    }

    #[test]
    fn adjudication_follows_fishtest_counts() {
        let mut judge = Judge::new(Adjudication::FISHTEST);
        for _ in 0..2 {
            assert_eq!(
                judge.after_move(Color::White, Some(Score::Cp(-450)), 20),
                None
            );
            assert_eq!(
                judge.after_move(Color::Black, Some(Score::Cp(450)), 21),
                None
            );
        }
        let (result, _) = judge
            .after_move(Color::White, Some(Score::Mate(-3)), 22)
            .unwrap();
        assert_eq!(result, GameResult::BlackWins);

        let mut judge = Judge::new(Adjudication::FISHTEST);
        for ply in 0..15 {
            let side = if ply % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            assert_eq!(
                judge.after_move(side, Some(Score::Cp(10)), 34 + ply / 2),
                None,
                "ply {ply}"
            );
        }
        assert_eq!(
            judge
                .after_move(Color::Black, Some(Score::Cp(-20)), 42)
                .unwrap()
                .0,
            GameResult::Draw
        );
        // Before move 34 nothing counts.
        let mut judge = Judge::new(Adjudication::FISHTEST);
        for ply in 0..40 {
            assert_eq!(
                judge.after_move(color_of(ply % 2), Some(Score::Cp(0)), 10),
                None
            );
        }
    }

    /// Plays the scores of alternating moves (White first, from the mover's side) through the
    /// judge; returns the index of the move that ended the game and the result.
    fn judged(rules: Adjudication, scores: &[i32]) -> Option<(usize, GameResult)> {
        let mut judge = Judge::new(rules);
        scores.iter().enumerate().find_map(|(ply, &cp)| {
            let fullmoves = 40 + u32::try_from(ply / 2).unwrap();
            judge
                .after_move(color_of(ply % 2), Some(Score::Cp(cp)), fullmoves)
                .map(|(result, _)| (ply, result))
        })
    }

    fn resign_only(two_sided: bool) -> Adjudication {
        Adjudication {
            resign: Some(ResignRule {
                move_count: 3,
                score: 400,
                two_sided,
            }),
            ..Adjudication::default()
        }
    }

    /// What the two-sided rule is for: the loser (White) scores the game as lost, the winner
    /// (Black) does not see the win.
    #[test]
    fn two_sided_resign_needs_the_opponent_to_see_the_win() {
        let defender_alone = [-450, 120].repeat(6);
        assert_eq!(
            judged(resign_only(false), &defender_alone),
            Some((4, GameResult::BlackWins))
        );
        assert_eq!(judged(resign_only(true), &defender_alone), None);

        // Both agree: the loser's fourth move ends it, once the winner has three moves ≥ 400.
        let both = [-450, 450].repeat(6);
        assert_eq!(
            judged(resign_only(false), &both),
            Some((4, GameResult::BlackWins))
        );
        assert_eq!(
            judged(resign_only(true), &both),
            Some((6, GameResult::BlackWins))
        );

        // The winner's moves must be consecutive: one at +399 starts its count again.
        let wavering = [-450, 450, -450, 399, -450, 450, -450, 450, -450, 450, -450];
        assert_eq!(
            judged(resign_only(true), &wavering),
            Some((10, GameResult::BlackWins))
        );
    }

    /// The burner's loss replaces the time forfeit it caused.
    #[test]
    fn cpu_outside_the_turn_replaces_the_opponents_time_forfeit() {
        let pos = Chess::default();
        let game = Game::new(Opening {
            fen: None,
            moves: Vec::new(),
        });
        let forfeit = game.time_forfeit(Color::White, &pos, "White loses on time".into());
        let overuse = Overuse {
            index: 1,
            rule: CpuRule::Turns,
            cpu: Duration::from_millis(2500),
            turns: Duration::from_millis(1000),
        };
        let record = forfeit.lost_for_cpu(&overuse, "burner", false);
        assert_eq!(
            (record.result, record.termination, record.faulted),
            (
                GameResult::WhiteWins,
                Termination::CpuOutsideTurn,
                Some(Color::Black)
            )
        );
        assert_eq!(
            record.reason,
            "Black (burner) used CPU outside its turn: 2.50 s of CPU in 1.00 s of its own turns \
             (at most 1.20 s allowed); the game had ended: White loses on time"
        );
    }

    #[test]
    fn time_forfeit_against_a_bare_king_is_a_draw() {
        let pos = parse_fen("7k/8/6K1/8/8/8/8/5R2 w - - 0 1").unwrap();
        let game = Game::new(Opening {
            fen: Some(fen_of(&pos)),
            moves: Vec::new(),
        });
        let record = game.time_forfeit(Color::White, &pos, String::new());
        assert_eq!(
            (record.result, record.termination),
            (GameResult::Draw, Termination::TimeForfeit)
        );
        let game = Game::new(Opening {
            fen: Some(fen_of(&pos)),
            moves: Vec::new(),
        });
        let record = game.time_forfeit(Color::Black, &pos, String::new());
        assert_eq!(
            (record.result, record.faulted),
            (GameResult::WhiteWins, Some(Color::Black))
        );
    }
}
