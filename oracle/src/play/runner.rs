//! The match: game pairs from a seeded opening order, played by N worker threads that each
//! own one process per engine (reused across games), counted only when both games of a pair
//! finished, written to PGN and to an atomic state file after every pair so that a killed
//! run continues exactly where it stopped.
//!
//! Worker threads only play and render; the coordinating thread does all the counting and
//! all the file I/O, so the clock path of a game never waits for a disk.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use shakmaty::Color;

use super::book::{Book, BookFormat, Schedule};
use super::clock::ClockRules;
use super::game::{
    Adjudication, GameRecord, GameResult, GameSettings, Termination, play_game, unstarted_game,
};
use super::pgn::{PgnHeader, render};
use super::uci::{Engine, EngineConfig, UciError};
use crate::integrity;
use crate::stats::{PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, StatsError};

/// Which slice of the pairs a run plays: pair `i` belongs to shard `i mod count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based shard number K of `--shard K/N`.
    pub index: u32,
    /// Number of shards N.
    pub count: u32,
}

impl Shard {
    /// The whole match as one shard.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// True when global pair `pair` belongs to this shard.
    pub fn contains(&self, pair: u64) -> bool {
        pair % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let error = || format!("invalid shard `{text}`: expected K/N with 1 ≤ K ≤ N, e.g. 2/8");
        let (k, n) = text.split_once('/').ok_or_else(error)?;
        let (index, count) = (
            k.parse::<u32>().map_err(|_| error())?,
            n.parse::<u32>().map_err(|_| error())?,
        );
        if index == 0 || index > count {
            return Err(error());
        }
        Ok(Shard { index, count })
    }
}

/// What identifies an engine in a result: its name, the sha256 of its executable and its settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineIdentity {
    /// The configured name.
    pub name: String,
    /// sha256 of the executable's bytes.
    pub sha256: String,
    /// Command-line arguments.
    pub args: Vec<String>,
    /// UCI options in the order sent.
    pub options: Vec<(String, String)>,
}

impl EngineIdentity {
    /// Hashes the executable of `config`.
    pub fn of(config: &EngineConfig) -> Result<EngineIdentity, RunError> {
        let bytes = std::fs::read(&config.command).map_err(|source| RunError::Io {
            path: config.command.clone(),
            source,
        })?;
        Ok(EngineIdentity {
            name: config.name.clone(),
            sha256: integrity::sha256_hex(&bytes),
            args: config.args.clone(),
            options: config
                .ordered_options()
                .into_iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        })
    }
}

/// Everything that determines which games are played; two results can be combined only
/// when their fingerprints are equal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The first and second engine.
    pub engines: [EngineIdentity; 2],
    /// Clock rules.
    pub clock: ClockRules,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// sha256 of the book file.
    pub book_sha256: String,
    /// Book format.
    pub book_format: BookFormat,
    /// Plies taken from PGN games.
    pub plies: usize,
    /// Seed of the opening order.
    pub seed: u64,
    /// Offset into the opening order.
    pub opening_offset: usize,
    /// Pairs in the whole match (all shards).
    pub pairs: u64,
    /// Number of shards the match is cut into.
    pub shards: u32,
}

impl Fingerprint {
    /// The fingerprint of the match `config` plays with a book whose bytes hash to `book_sha256`
    /// (the engines' executables are hashed now).
    pub fn of(config: &MatchConfig, book_sha256: String) -> Result<Fingerprint, RunError> {
        Ok(Fingerprint {
            engines: [
                EngineIdentity::of(&config.engines[0])?,
                EngineIdentity::of(&config.engines[1])?,
            ],
            clock: config.clock,
            adjudication: config.adjudication,
            book_sha256,
            book_format: config.book_format,
            plies: config.plies,
            seed: config.seed,
            opening_offset: config.opening_offset,
            pairs: config.pairs,
            shards: config.shard.count,
        })
    }
}

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
}

impl PairOutcome {
    /// The first engine's half-points over the pair (0..=4): its pentanomial bucket.
    pub fn bucket(&self) -> usize {
        let first = self.games[0].result.half_points(Color::White)
            + self.games[1].result.half_points(Color::Black);
        usize::from(first)
    }
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
        };
        *slot += 1;
    }

    /// The number of engine faults (everything but normal ends and adjudications).
    pub fn faults(&self) -> u64 {
        self.time_forfeit + self.illegal_move + self.disconnect + self.stall
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
        }
    }

    /// All faults of the engine.
    pub fn total(&self) -> u64 {
        self.disconnect + self.stall + self.illegal_move + self.time_forfeit
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
}

impl Tally {
    /// Counts a pair.
    pub fn add(&mut self, pair: &PairOutcome) {
        self.pairs += 1;
        self.pentanomial[pair.bucket()] += 1;
        for (game, first_color) in pair.games.iter().zip([Color::White, Color::Black]) {
            match game.result.half_points(first_color) {
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

    /// The tally of a sequence of pairs.
    pub fn of<'a>(pairs: impl IntoIterator<Item = &'a PairOutcome>) -> Tally {
        let mut tally = Tally::default();
        pairs.into_iter().for_each(|p| tally.add(p));
        tally
    }
}

/// Decides after every counted pair whether the match stops early (the live SPRT).
pub trait StopRule {
    /// Called with the cumulative pentanomial counts after each counted pair; true stops the match.
    fn should_stop(&mut self, pentanomial: [u64; 5]) -> bool;
}

/// The live SPRT of a match: it looks after every counted pair (batches of one pair).
#[derive(Debug, Clone)]
pub struct LiveSprt {
    sequential: SequentialSprt,
    error: Option<StatsError>,
}

impl LiveSprt {
    /// A test with pre-registered `params`.
    pub fn new(params: SprtParams) -> Result<LiveSprt, StatsError> {
        Ok(LiveSprt {
            sequential: SequentialSprt::new(params, 1)?,
            error: None,
        })
    }

    /// The sequential test after its last look.
    pub fn sequential(&self) -> &SequentialSprt {
        &self.sequential
    }

    /// The statistics error that stopped the match, if one did.
    pub fn error(&self) -> Option<&StatsError> {
        self.error.as_ref()
    }
}

impl StopRule for LiveSprt {
    fn should_stop(&mut self, pentanomial: [u64; 5]) -> bool {
        match self.sequential.update(&PentanomialCounts(pentanomial)) {
            Ok(decision) => decision != SprtDecision::Continue,
            Err(error) => {
                self.error = Some(error);
                true
            }
        }
    }
}

/// A complete match description.
#[derive(Debug, Clone)]
pub struct MatchConfig {
    /// The first (candidate) and second engine.
    pub engines: [EngineConfig; 2],
    /// Clock rules.
    pub clock: ClockRules,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Deadline for `uciok` and the first `readyok` of a starting engine.
    pub start_timeout: Duration,
    /// Deadline for `readyok` before each game.
    pub ready_timeout: Duration,
    /// The book file.
    pub book_path: PathBuf,
    /// The book's format.
    pub book_format: BookFormat,
    /// Plies taken from PGN games.
    pub plies: usize,
    /// Seed of the opening order.
    pub seed: u64,
    /// Offset into the opening order.
    pub opening_offset: usize,
    /// Pairs in the whole match.
    pub pairs: u64,
    /// The slice this run plays.
    pub shard: Shard,
    /// Games played at once.
    pub concurrency: usize,
    /// PGN output file.
    pub pgn_out: Option<PathBuf>,
    /// State file for resuming.
    pub state: Option<PathBuf>,
    /// PGN `Event` tag.
    pub event: String,
}

/// Why a match could not be run (the runner's own failures, never an engine's).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The book is unusable.
    #[error(transparent)]
    Book(#[from] super::book::BookError),
    /// An engine could not be spawned at all.
    #[error("{0} (the pair in progress is not counted)")]
    Spawn(UciError),
    /// The state file belongs to a different match.
    #[error(
        "state file {path} belongs to a different match ({field} differs); use another --state file"
    )]
    StateMismatch {
        /// The state file.
        path: PathBuf,
        /// The first field that differs.
        field: &'static str,
    },
    /// The state file is not valid.
    #[error("state file {path} is invalid: {reason}")]
    StateInvalid {
        /// The state file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A worker thread panicked or could not be started.
    #[error("match worker failed: {0}")]
    Worker(String),
}

impl From<integrity::FileError> for RunError {
    fn from(error: integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}

/// Live progress, passed to the observer after each counted pair.
#[derive(Debug, Clone, Copy)]
pub struct MatchProgress {
    /// Counted results.
    pub tally: Tally,
    /// Games finished (also those of discarded pairs).
    pub games_played: u64,
    /// Games this run would play without an early stop.
    pub games_total: u64,
}

/// The outcome of a match run.
#[derive(Debug, Clone)]
pub struct MatchReport {
    /// The match's fingerprint.
    pub fingerprint: Fingerprint,
    /// The slice played.
    pub shard: Shard,
    /// Counted pairs in the order they were counted.
    pub pairs: Vec<PairOutcome>,
    /// Counted results.
    pub tally: Tally,
    /// Games finished, including those of pairs discarded at an early stop.
    pub games_played: u64,
    /// True when the stop rule ended the match.
    pub stopped_early: bool,
    /// sha256 of the PGN file, when one was written.
    pub pgn_sha256: Option<String>,
    /// Wall time of this run (excluding earlier runs of a resumed match).
    pub wall: Duration,
    /// User + system CPU time of the engine processes of this run.
    pub engine_cpu: Duration,
    /// User + system CPU time of the runner itself (all its threads) in this run.
    pub runner_cpu: Duration,
    /// Per-move runner overhead in microseconds (measured time minus the engine's `time`).
    pub overhead_us: Vec<i64>,
}

/// The resumable state, rewritten atomically after every counted pair.
#[derive(Debug, Serialize, Deserialize)]
struct State {
    fingerprint: Fingerprint,
    shard: Shard,
    /// Length of the PGN file after the last counted pair (a longer file is cut back).
    pgn_bytes: u64,
    games_played: u64,
    pairs: Vec<PairOutcome>,
}

/// What a worker reports to the coordinator.
enum Event {
    Game,
    Pair {
        outcome: PairOutcome,
        pgn: [String; 2],
        overhead_us: Vec<i64>,
    },
    Failed(RunError),
}

/// The read-only context shared by the workers.
struct Shared {
    config: MatchConfig,
    book: Book,
    schedule: Schedule,
    todo: Vec<u64>,
    cursor: AtomicUsize,
    stop: AtomicBool,
    date: String,
}

/// Plays (or resumes) a match; `observer` sees every counted pair, `stop_rule` may end it early.
pub fn run_match(
    config: MatchConfig,
    stop_rule: Option<&mut dyn StopRule>,
    observer: &mut dyn FnMut(&MatchProgress),
) -> Result<MatchReport, RunError> {
    let started = Instant::now();
    let cpu_before = cpu_time(libc::RUSAGE_CHILDREN);
    let runner_cpu_before = cpu_time(libc::RUSAGE_SELF);
    let book = Book::load(&config.book_path, config.book_format, config.plies)?;
    let fingerprint = Fingerprint::of(&config, book.sha256.clone())?;
    let mut state = match &config.state {
        Some(path) if path.exists() => load_state(path, &fingerprint, config.shard)?,
        _ => State {
            fingerprint: fingerprint.clone(),
            shard: config.shard,
            pgn_bytes: 0,
            games_played: 0,
            pairs: Vec::new(),
        },
    };
    let mut pgn = match &config.pgn_out {
        Some(path) => Some(open_pgn(path, state.pgn_bytes)?),
        None => None,
    };
    let mut stop_rule = stop_rule;
    let mut tally = Tally::default();
    let mut stopped_early = false;
    for pair in &state.pairs {
        tally.add(pair);
        if let Some(rule) = stop_rule.as_deref_mut() {
            stopped_early |= rule.should_stop(tally.pentanomial);
        }
    }
    let done: HashSet<u64> = state.pairs.iter().map(|p| p.index).collect();
    let todo: Vec<u64> = (0..config.pairs)
        .filter(|&i| config.shard.contains(i) && !done.contains(&i))
        .collect();
    let games_total = state.games_played + 2 * todo.len() as u64;
    let mut progress = MatchProgress {
        tally,
        games_played: state.games_played,
        games_total,
    };
    observer(&progress);

    let mut overhead_us = Vec::new();
    if !stopped_early && !todo.is_empty() {
        let workers = config.concurrency.clamp(1, todo.len());
        let shared = Arc::new(Shared {
            schedule: book.schedule(config.seed, config.opening_offset),
            book,
            todo,
            cursor: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            date: utc_date(),
            config: config.clone(),
        });
        let (sender, events) = mpsc::channel();
        let mut handles = Vec::with_capacity(workers);
        for worker_id in 0..workers {
            let shared = Arc::clone(&shared);
            let sender = sender.clone();
            let handle = thread::Builder::new()
                .name(format!("match-worker-{worker_id}"))
                .spawn(move || worker(&shared, &sender))
                .map_err(|e| RunError::Worker(e.to_string()))?;
            handles.push(handle);
        }
        drop(sender);
        let mut failure = None;
        for event in events {
            match event {
                Event::Game => {
                    state.games_played += 1;
                    progress.games_played = state.games_played;
                }
                Event::Pair { .. } | Event::Failed(_) if shared.stop.load(Ordering::SeqCst) => {}
                Event::Failed(error) => {
                    shared.stop.store(true, Ordering::SeqCst);
                    failure = Some(error);
                }
                Event::Pair {
                    outcome,
                    pgn: texts,
                    overhead_us: mut overheads,
                } => {
                    if let Err(error) =
                        commit_pair(&config, &mut state, pgn.as_mut(), &outcome, &texts)
                    {
                        shared.stop.store(true, Ordering::SeqCst);
                        failure = Some(error);
                        continue;
                    }
                    overhead_us.append(&mut overheads);
                    progress.tally.add(&outcome);
                    observer(&progress);
                    if let Some(rule) = stop_rule.as_deref_mut()
                        && rule.should_stop(progress.tally.pentanomial)
                    {
                        stopped_early = true;
                        shared.stop.store(true, Ordering::SeqCst);
                    }
                }
            }
        }
        for handle in handles {
            handle
                .join()
                .map_err(|_| RunError::Worker("a worker thread panicked".to_string()))?;
        }
        if let Some(error) = failure {
            return Err(error);
        }
        // Games of discarded pairs are played but not counted: remember them for the report.
        if let Some(path) = &config.state {
            write_state(path, &state)?;
        }
    }
    let pgn_sha256 = match &config.pgn_out {
        Some(path) => {
            drop(pgn);
            let bytes = std::fs::read(path).map_err(|source| RunError::Io {
                path: path.clone(),
                source,
            })?;
            Some(integrity::sha256_hex(&bytes))
        }
        None => None,
    };
    Ok(MatchReport {
        fingerprint,
        shard: config.shard,
        tally: progress.tally,
        pairs: state.pairs,
        games_played: state.games_played,
        stopped_early,
        pgn_sha256,
        wall: started.elapsed(),
        engine_cpu: cpu_time(libc::RUSAGE_CHILDREN).saturating_sub(cpu_before),
        runner_cpu: cpu_time(libc::RUSAGE_SELF).saturating_sub(runner_cpu_before),
        overhead_us,
    })
}

/// Appends a pair's games to the PGN (synced), then records the pair in the state file.
fn commit_pair(
    config: &MatchConfig,
    state: &mut State,
    pgn: Option<&mut File>,
    outcome: &PairOutcome,
    texts: &[String; 2],
) -> Result<(), RunError> {
    if let (Some(file), Some(path)) = (pgn, &config.pgn_out) {
        let io = |source| RunError::Io {
            path: path.clone(),
            source,
        };
        file.write_all(texts[0].as_bytes()).map_err(io)?;
        file.write_all(texts[1].as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)?;
        state.pgn_bytes += (texts[0].len() + texts[1].len()) as u64;
    }
    state.pairs.push(*outcome);
    if let Some(path) = &config.state {
        write_state(path, state)?;
    }
    Ok(())
}

/// One worker: takes pairs until none are left or the match stops.
fn worker(shared: &Shared, events: &Sender<Event>) {
    let mut slots: [Option<Engine>; 2] = [None, None];
    loop {
        let next = shared.cursor.fetch_add(1, Ordering::SeqCst);
        let Some(&index) = shared.todo.get(next) else {
            break;
        };
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        match play_pair(shared, &mut slots, index, events) {
            Ok(Some(event)) => {
                let _ = events.send(event);
            }
            Ok(None) => break,
            Err(error) => {
                let _ = events.send(Event::Failed(error));
                break;
            }
        }
    }
    for engine in slots.into_iter().flatten() {
        engine.quit(Duration::from_millis(500));
    }
}

/// Plays both games of pair `index`; `None` when the match stopped in between.
fn play_pair(
    shared: &Shared,
    slots: &mut [Option<Engine>; 2],
    index: u64,
    events: &Sender<Event>,
) -> Result<Option<Event>, RunError> {
    let config = &shared.config;
    let opening_index = shared.schedule.opening_of(index);
    let opening = &shared.book.openings[opening_index];
    let settings = GameSettings {
        clock: config.clock,
        adjudication: config.adjudication,
        ready_timeout: config.ready_timeout,
    };
    let mut summaries = Vec::with_capacity(2);
    let mut texts = Vec::with_capacity(2);
    let mut overhead_us = Vec::new();
    for game_number in 0..2 {
        // Slot 0 is the first engine; it has White in game 0.
        let white_slot = game_number;
        let Some(record) =
            play_in_slots(config, slots, white_slot, opening, &settings, &shared.stop)?
        else {
            // The match stopped: the game in flight is abandoned and its pair not counted.
            return Ok(None);
        };
        let faulted_engine = record.faulted.map(|color| match color {
            Color::White => white_slot,
            Color::Black => 1 - white_slot,
        });
        if let Some(slot) = faulted_engine {
            // A faulted engine is replaced before its next game.
            if let Some(engine) = slots[slot].take() {
                engine.quit(Duration::ZERO);
            }
        }
        overhead_us.extend(record.moves.iter().filter_map(|m| {
            m.engine_time_ms
                .map(|t| m.elapsed.as_micros() as i64 - 1000 * t as i64)
        }));
        let names = [
            &config.engines[white_slot].name,
            &config.engines[1 - white_slot].name,
        ];
        let round = format!("{}.{}", index + 1, game_number + 1);
        let header = PgnHeader {
            event: &config.event,
            site: "oracle match",
            date: &shared.date,
            round: &round,
            white: names[0],
            black: names[1],
            time_control: &config.clock.tc.to_string(),
        };
        texts.push(render(&header, &record));
        summaries.push(GameSummary {
            result: record.result,
            termination: record.termination,
            plies: record.moves.len() as u32,
            faulted_engine: faulted_engine.map(|s| s as u8),
        });
        let _ = events.send(Event::Game);
    }
    let games = [summaries[0], summaries[1]];
    let pgn = [std::mem::take(&mut texts[0]), std::mem::take(&mut texts[1])];
    Ok(Some(Event::Pair {
        outcome: PairOutcome {
            index,
            opening: opening_index,
            games,
        },
        pgn,
        overhead_us,
    }))
}

/// Starts missing engines and plays one game with slot `white_slot` as White.
fn play_in_slots(
    config: &MatchConfig,
    slots: &mut [Option<Engine>; 2],
    white_slot: usize,
    opening: &super::book::Opening,
    settings: &GameSettings,
    abort: &AtomicBool,
) -> Result<Option<GameRecord>, RunError> {
    for (slot, color) in [(white_slot, Color::White), (1 - white_slot, Color::Black)] {
        if slots[slot].is_none() {
            match Engine::start(&config.engines[slot], config.start_timeout) {
                Ok(engine) => slots[slot] = Some(engine),
                Err(error) if !error.is_engine_fault() => return Err(RunError::Spawn(error)),
                Err(error) => return Ok(Some(unstarted_game(opening.clone(), color, &error))),
            }
        }
    }
    let [first, second] = slots;
    let (first, second) = (
        first.as_mut().expect("started above"),
        second.as_mut().expect("started above"),
    );
    let engines = if white_slot == 0 {
        [first, second]
    } else {
        [second, first]
    };
    Ok(play_game(engines, opening, settings, abort))
}

/// Reads and checks a state file against the match being started.
fn load_state(path: &Path, fingerprint: &Fingerprint, shard: Shard) -> Result<State, RunError> {
    let text = std::fs::read_to_string(path).map_err(|source| RunError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let state: State = serde_json::from_str(&text).map_err(|e| RunError::StateInvalid {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mismatch = |field| RunError::StateMismatch {
        path: path.to_path_buf(),
        field,
    };
    if let Some(field) = fingerprint_difference(&state.fingerprint, fingerprint) {
        return Err(mismatch(field));
    }
    if state.shard != shard {
        return Err(mismatch("shard"));
    }
    Ok(state)
}

/// The first field in which two fingerprints differ, named for error messages.
pub fn fingerprint_difference(a: &Fingerprint, b: &Fingerprint) -> Option<&'static str> {
    let fields: [(&'static str, bool); 10] = [
        ("engines", a.engines == b.engines),
        ("clock", a.clock == b.clock),
        ("adjudication", a.adjudication == b.adjudication),
        ("book", a.book_sha256 == b.book_sha256),
        ("book format", a.book_format == b.book_format),
        ("plies", a.plies == b.plies),
        ("seed", a.seed == b.seed),
        ("opening offset", a.opening_offset == b.opening_offset),
        ("pairs", a.pairs == b.pairs),
        ("shard count", a.shards == b.shards),
    ];
    fields
        .into_iter()
        .find(|(_, equal)| !equal)
        .map(|(name, _)| name)
}

/// Opens the PGN for appending, first cutting it back to the last counted pair.
fn open_pgn(path: &Path, keep_bytes: u64) -> Result<File, RunError> {
    let io = |source| RunError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    // A pair written after the last state update was not counted: it will be replayed.
    file.set_len(keep_bytes).map_err(io)?;
    Ok(file)
}

/// Writes `state` whole or not at all, so a crash leaves the last complete state to resume from.
fn write_state(path: &Path, state: &State) -> Result<(), RunError> {
    let bytes = serde_json::to_vec(state).expect("state serializes");
    Ok(integrity::write_atomically(path, &bytes)?)
}

/// User + system CPU time of this process (`RUSAGE_SELF`) or of its terminated, reaped
/// children (`RUSAGE_CHILDREN`: the engines, once they have quit).
fn cpu_time(who: libc::c_int) -> Duration {
    // SAFETY: getrusage only writes into the zeroed struct we pass; `who` is one of the two
    // valid selectors above.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Today's date in UTC as PGN writes it (`YYYY.MM.DD`).
fn utc_date() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
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
        assert_eq!(
            tally.faults[1],
            FaultCounts {
                time_forfeit: 1,
                ..FaultCounts::default()
            }
        );
    }

    #[test]
    fn fingerprints_name_the_first_difference() {
        let engine = EngineIdentity {
            name: "e".into(),
            sha256: "00".into(),
            args: Vec::new(),
            options: Vec::new(),
        };
        let a = Fingerprint {
            engines: [engine.clone(), engine],
            clock: ClockRules {
                tc: super::super::clock::TimeControl::Nodes(1000),
                margin: Duration::from_millis(100),
                slack: Duration::from_millis(200),
                move_timeout: Duration::from_secs(60),
            },
            adjudication: Adjudication::default(),
            book_sha256: "ab".into(),
            book_format: BookFormat::Epd,
            plies: 8,
            seed: 1,
            opening_offset: 0,
            pairs: 10,
            shards: 2,
        };
        assert_eq!(fingerprint_difference(&a, &a.clone()), None);
        let mut b = a.clone();
        b.seed = 2;
        b.pairs = 11;
        assert_eq!(fingerprint_difference(&a, &b), Some("seed"));
        let mut c = a.clone();
        c.engines[1].sha256 = "01".into();
        assert_eq!(fingerprint_difference(&a, &c), Some("engines"));
        let mut d = a.clone();
        d.book_sha256 = "cd".into();
        assert_eq!(fingerprint_difference(&a, &d), Some("book"));
    }

    #[test]
    fn shards_partition_the_pairs() {
        let shards: Vec<Shard> = ["1/3", "2/3", "3/3"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        for pair in 0..30 {
            assert_eq!(shards.iter().filter(|s| s.contains(pair)).count(), 1);
        }
        for bad in ["0/2", "3/2", "1", "a/b"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn utc_date_has_pgn_shape() {
        let date = utc_date();
        assert_eq!(date.len(), 10);
        assert_eq!(&date[4..5], ".");
        assert!(date.as_str() >= "2024.01.01");
    }
}
