//! The match coordinator: game pairs from a seeded opening order, played by N worker threads
//! (`worker.rs`) that each own one process per engine (reused across games), counted only
//! when both games of a pair finished, written to PGN and to an atomic state file
//! (`state.rs`) after every pair so that a killed or interrupted run continues exactly where
//! it stopped.
//!
//! Worker threads only play and render; this thread does all the counting and all the file
//! I/O, so the clock path of a game never waits for a disk. It also polls for SIGINT and
//! SIGTERM (`interrupt.rs`) and then stops the way an early SPRT stop does.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use super::book::{Book, BookFormat, BookOrder, Opening, Schedule};
use super::clock::ClockRules;
use super::cpu_guard::NodePace;
use super::fingerprint::Fingerprint;
use super::game::{Adjudication, GameRecord};
use super::interrupt;
use super::pgn::utc_date;
use super::rusage::cpu_time;
use super::shard::Shard;
use super::state::{State, load_state, open_pgn, write_state};
use super::stop::StopRule;
use super::tally::{GameSummary, PairOutcome, Tally};
use super::uci::{EngineConfig, UciError};
use super::worker::worker;

/// How often the coordinator looks for an interrupt while no worker reports.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);

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
    /// The book file; `None` plays every game from the standard start position.
    pub book_path: Option<PathBuf>,
    /// The order in which the book's openings are played.
    pub book_order: BookOrder,
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
    /// Plays only the pairs whose index is below this one (where a shard's round ends); `None`:
    /// all of them. Not part of the fingerprint: it chooses when a pair is played, never how.
    pub pairs_below: Option<u64>,
    /// Pairs this run leaves out because they are counted elsewhere (a stage's pairs taken over
    /// from earlier runs, which no shard plays again); like `pairs_below`, not part of the
    /// fingerprint.
    pub counted_elsewhere: Vec<u64>,
    /// Games played at once.
    pub concurrency: usize,
    /// PGN output file.
    pub pgn_out: Option<PathBuf>,
    /// State file for resuming.
    pub state: Option<PathBuf>,
    /// PGN `Event` tag.
    pub event: String,
    /// Each engine's CPU per node where the oracle measured it (its bench): at a node limit
    /// it bounds the CPU of every search; `None` leaves that engine's node searches unchecked.
    pub node_pace: [Option<NodePace>; 2],
}

/// Plays game `game` of a pair (0: the first engine has White) from `opening`, exactly as a match
/// of `config` plays it: between engine processes started for it. `None` only if it was
/// abandoned, which a single game never is.
pub fn play_single_game(
    config: &MatchConfig,
    opening: &Opening,
    game: usize,
) -> Result<Option<GameRecord>, RunError> {
    super::worker::play_single(config, game, opening)
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

impl From<crate::integrity::FileError> for RunError {
    fn from(error: crate::integrity::FileError) -> Self {
        Self::Io {
            path: error.path,
            source: error.reason,
        }
    }
}

/// A game as it finished, before its pair is complete (and so before it is counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinishedGame {
    /// Global pair index (0-based).
    pub pair: u64,
    /// 0 when the first engine had White, 1 when it had Black.
    pub game: usize,
    /// How it went.
    pub summary: GameSummary,
}

/// Live progress, passed to the observer at the start, after each finished game and after
/// each counted pair.
#[derive(Debug, Clone, Copy)]
pub struct MatchProgress {
    /// Counted results.
    pub tally: Tally,
    /// Games finished (also those of discarded pairs).
    pub games_played: u64,
    /// Games this run would play without an early stop.
    pub games_total: u64,
    /// Wins, draws and losses of the first engine over the finished games of this run and the
    /// counted games before it: what a live display shows before a pair is complete.
    pub finished_wdl: [u64; 3],
    /// The game this update reports, when it reports one.
    pub game: Option<FinishedGame>,
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
    /// True when SIGINT or SIGTERM ended the match before its last pair.
    pub interrupted: bool,
    /// The state file that resumes this match: `--state`, or for an interrupted run without
    /// one, the file written for it in the working directory.
    pub state_file: Option<PathBuf>,
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

/// What a worker reports to the coordinator.
pub(super) enum Event {
    /// A game finished (its pair may still be incomplete).
    Game(FinishedGame),
    /// Both games of a pair finished, with their PGN texts and the per-move overheads.
    Pair {
        outcome: PairOutcome,
        pgn: [String; 2],
        overhead_us: Vec<i64>,
    },
    /// The runner itself failed (an engine that cannot be spawned, a dead thread).
    Failed(RunError),
}

/// The read-only context shared by the workers.
pub(super) struct Shared {
    pub(super) config: MatchConfig,
    pub(super) book: Book,
    pub(super) schedule: Schedule,
    pub(super) todo: Vec<u64>,
    pub(super) cursor: AtomicUsize,
    pub(super) stop: AtomicBool,
    pub(super) date: String,
}

/// Plays (or resumes) a match; `observer` sees every finished game and every counted pair,
/// `stop_rule` may end it early, and SIGINT/SIGTERM (once [`interrupt::install`]ed) end it
/// with the state written for a resume.
pub fn run_match(
    config: MatchConfig,
    stop_rule: Option<&mut dyn StopRule>,
    observer: &mut dyn FnMut(&MatchProgress),
) -> Result<MatchReport, RunError> {
    let started = Instant::now();
    let cpu_before = cpu_time(libc::RUSAGE_CHILDREN);
    let runner_cpu_before = cpu_time(libc::RUSAGE_SELF);
    let book = Book::load_or_start(
        config.book_path.as_deref(),
        config.book_format,
        config.plies,
    )?;
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
            stopped_early |= rule.should_stop(&tally);
        }
    }
    let done: HashSet<u64> = state
        .pairs
        .iter()
        .map(|p| p.index)
        .chain(config.counted_elsewhere.iter().copied())
        .collect();
    let todo: Vec<u64> = (0..config.pairs.min(config.pairs_below.unwrap_or(u64::MAX)))
        .filter(|&i| config.shard.contains(i) && !done.contains(&i))
        .collect();
    let games_total = state.games_played + 2 * todo.len() as u64;
    let mut progress = MatchProgress {
        tally,
        games_played: state.games_played,
        games_total,
        finished_wdl: [tally.wins, tally.draws, tally.losses],
        game: None,
    };
    observer(&progress);

    let mut overhead_us = Vec::new();
    let mut interrupted = false;
    if !stopped_early && !todo.is_empty() {
        let workers = config.concurrency.clamp(1, todo.len());
        let shared = Arc::new(Shared {
            schedule: book.schedule(config.book_order, config.seed, config.opening_offset),
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
        loop {
            if !interrupted && interrupt::requested() {
                // Like an early stop: games in flight are abandoned, their pairs not counted.
                interrupted = true;
                shared.stop.store(true, Ordering::SeqCst);
            }
            let event = match events.recv_timeout(INTERRUPT_POLL) {
                Ok(event) => event,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            match event {
                Event::Game(game) => {
                    state.games_played += 1;
                    progress.games_played = state.games_played;
                    let first_color = [shakmaty::Color::White, shakmaty::Color::Black][game.game];
                    progress.finished_wdl
                        [2 - usize::from(game.summary.result.half_points(first_color))] += 1;
                    progress.game = Some(game);
                    observer(&progress);
                    progress.game = None;
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
                        && rule.should_stop(&progress.tally)
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
    }
    // Games of discarded pairs are played but not counted: remember them for the report. An
    // interrupted run without a state file of its own gets one, so that it can be resumed.
    let state_file = match &config.state {
        Some(path) => Some(path.clone()),
        None if interrupted => {
            let name = format!("oracle-match-{}.state.json", std::process::id());
            Some(std::path::absolute(&name).unwrap_or_else(|_| PathBuf::from(name)))
        }
        None => None,
    };
    if let Some(path) = &state_file {
        write_state(path, &state)?;
    }
    let pgn_sha256 = match &config.pgn_out {
        Some(path) => {
            drop(pgn);
            let bytes = std::fs::read(path).map_err(|source| RunError::Io {
                path: path.clone(),
                source,
            })?;
            Some(crate::integrity::sha256_hex(&bytes))
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
        interrupted,
        state_file,
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
