//! A match worker thread: takes the next pair, plays both games, each between engine processes
//! started for it, and renders their PGN; it never counts and never touches a file, so the
//! clock path of a game never waits for a disk.
//!
//! Fresh processes make every game a function of its own inputs (both binaries, the opening,
//! the colours and the limit): an engine cannot remember the first game of a pair in the
//! second, nor prepare in one game for the next. At a node limit the next game's processes are
//! started while a game is played, so their start-up (Stockfish's takes longer than a game of
//! 5,000 nodes) costs no wall time; at a clock they start only when their game is about to,
//! so that nothing shares the machine with a game on the clock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant, SystemTime};

use shakmaty::Color;

use super::book::Opening;
use super::game::{GameRecord, GameSettings, play_game, unstarted_game};
use super::pgn::{PgnHeader, hours_minutes_seconds, render, utc_timestamp};
use super::runner::{Event, FinishedGame, MatchConfig, RunError, Shared};
use super::tally::{GameSummary, PairOutcome};
use super::uci::{Engine, EngineConfig, UciError};

/// One worker: takes pairs until none are left or the match stops.
pub(super) fn worker(shared: &Shared, events: &Sender<Event>) {
    let mut upcoming = NextEngines::default();
    loop {
        let next = shared.cursor.fetch_add(1, Ordering::SeqCst);
        let Some(&index) = shared.todo.get(next) else {
            break;
        };
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        match play_pair(shared, &mut upcoming, index, events) {
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
    upcoming.discard();
}

/// Plays both games of pair `index`; `None` when the match stopped in between.
fn play_pair(
    shared: &Shared,
    next: &mut NextEngines,
    index: u64,
    events: &Sender<Event>,
) -> Result<Option<Event>, RunError> {
    let config = &shared.config;
    let opening_index = shared.schedule.opening_of(index);
    let opening = &shared.book.openings[opening_index];
    let mut summaries = Vec::with_capacity(2);
    let mut texts = Vec::with_capacity(2);
    let mut overhead_us = Vec::new();
    let mut first_game: Option<GameRecord> = None;
    let mut identical_games = false;
    for game_number in 0..2 {
        // Slot 0 is the first engine; it has White in game 0.
        let white_slot = game_number;
        let settings = game_settings(config, white_slot);
        let time_controls = settings.time_controls;
        let (start_time, started) = (SystemTime::now(), Instant::now());
        let Some(record) = play_fresh(config, next, white_slot, opening, &settings, &shared.stop)?
        else {
            // The match stopped: the game in flight is abandoned and its pair not counted.
            return Ok(None);
        };
        let slot_of = |color| match color {
            Color::White => white_slot,
            Color::Black => 1 - white_slot,
        };
        let faulted_engine = record.faulted.map(slot_of);
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
            time_controls: [&time_controls[0].pgn_value(), &time_controls[1].pgn_value()],
            start_time: &utc_timestamp(start_time),
            duration: &hours_minutes_seconds(started.elapsed()),
        };
        texts.push(render(&header, &record));
        let summary = GameSummary {
            result: record.result,
            termination: record.termination,
            plies: record.moves.len() as u32,
            faulted_engine: faulted_engine.map(|s| s as u8),
        };
        summaries.push(summary);
        let _ = events.send(Event::Game(FinishedGame {
            pair: index,
            game: game_number,
            summary,
        }));
        match &first_game {
            Some(first) => identical_games = same_game(first, &record),
            None => first_game = Some(record),
        }
    }
    let games = [summaries[0], summaries[1]];
    let pgn = [std::mem::take(&mut texts[0]), std::mem::take(&mut texts[1])];
    Ok(Some(Event::Pair {
        outcome: PairOutcome {
            index,
            opening: opening_index,
            games,
            identical_games,
        },
        pgn,
        overhead_us,
    }))
}

/// The same game on the board: the same moves, result and ending (who had which colour aside).
fn same_game(a: &GameRecord, b: &GameRecord) -> bool {
    a.result == b.result
        && a.termination == b.termination
        && a.moves.len() == b.moves.len()
        && a.moves.iter().zip(&b.moves).all(|(x, y)| x.uci == y.uci)
}

/// How long an engine may take to exit after `quit` before it is killed: the next game's
/// processes start only once this game's are gone, so none of them shares the machine with it.
const QUIT_GRACE: Duration = Duration::from_millis(200);

/// The settings of a game of `config` in which slot `white_slot` has White.
fn game_settings(config: &MatchConfig, white_slot: usize) -> GameSettings {
    GameSettings {
        clock: config.clock,
        time_controls: [
            config.clock.of_engine(white_slot),
            config.clock.of_engine(1 - white_slot),
        ],
        adjudication: config.adjudication,
        ready_timeout: config.ready_timeout,
        node_pace: [
            config.node_pace[white_slot],
            config.node_pace[1 - white_slot],
        ],
    }
}

/// Plays one game of `config` from `opening` as the runner plays it, with slot `white_slot` as
/// White between processes started for it: what a replay of a recorded game plays.
pub(super) fn play_single(
    config: &MatchConfig,
    white_slot: usize,
    opening: &Opening,
) -> Result<Option<GameRecord>, RunError> {
    let settings = game_settings(config, white_slot);
    let never = AtomicBool::new(false);
    play_fresh(
        config,
        &mut NextEngines::default(),
        white_slot,
        opening,
        &settings,
        &never,
    )
}

/// Both engines' processes for one game, in slot order, each started or the reason it did not.
type Started = [Result<Engine, UciError>; 2];

/// The processes of a worker's next game: started ahead, while a node-limited game is played.
///
/// They are started by a thread that lives as long as the worker: an engine's sandbox dies with
/// the thread that started it (bubblewrap's `--die-with-parent` follows the parent thread), so a
/// thread that ended after starting them would take them with it.
#[derive(Default)]
struct NextEngines {
    /// The starter thread's requests and answers, once it runs.
    starter: Option<(Sender<()>, Receiver<Started>)>,
    /// A start-up was requested and its answer not yet taken.
    requested: bool,
}

impl NextEngines {
    /// The processes for the game about to begin: those started ahead, or started now.
    fn take(&mut self, config: &MatchConfig) -> Started {
        if std::mem::take(&mut self.requested)
            && let Some((_, answers)) = &self.starter
            && let Ok(started) = answers.recv()
        {
            return started;
        }
        start_both(&config.engines, config.start_timeout)
    }

    /// Begins starting the following game's processes while this one is played, at a node
    /// limit only: there a game's moves cannot depend on the machine's load.
    fn prepare(&mut self, config: &MatchConfig) {
        let timed = (0..2).any(|slot| config.clock.of_engine(slot).is_timed());
        if timed || self.requested {
            return;
        }
        if self.starter.is_none() {
            let (requests, inbox) = mpsc::channel::<()>();
            let (outbox, answers) = mpsc::channel();
            let (engines, timeout) = (config.engines.clone(), config.start_timeout);
            let spawned = std::thread::Builder::new()
                .name("engine-start".into())
                .spawn(move || {
                    for () in inbox {
                        if outbox.send(start_both(&engines, timeout)).is_err() {
                            break;
                        }
                    }
                });
            if spawned.is_err() {
                return;
            }
            self.starter = Some((requests, answers));
        }
        if let Some((requests, _)) = &self.starter {
            self.requested = requests.send(()).is_ok();
        }
    }

    /// Ends processes started for a game that will not be played.
    fn discard(&mut self) {
        if std::mem::take(&mut self.requested)
            && let Some((_, answers)) = &self.starter
            && let Ok(started) = answers.recv()
        {
            for engine in started.into_iter().flatten() {
                engine.quit(QUIT_GRACE);
            }
        }
    }
}

/// Starts both engines; each waits frozen, where it can be, until its game begins.
fn start_both(engines: &[EngineConfig; 2], timeout: Duration) -> Started {
    engines.each_ref().map(|config| {
        let engine = Engine::start(config, timeout)?;
        engine.freeze();
        Ok(engine)
    })
}

/// Plays one game with slot `white_slot` as White between fresh processes; both are gone when
/// it returns.
fn play_fresh(
    config: &MatchConfig,
    next: &mut NextEngines,
    white_slot: usize,
    opening: &Opening,
    settings: &GameSettings,
    abort: &AtomicBool,
) -> Result<Option<GameRecord>, RunError> {
    let started = next.take(config);
    next.prepare(config);
    let color_of = |slot: usize| {
        if slot == white_slot {
            Color::White
        } else {
            Color::Black
        }
    };
    let mut engines = Vec::with_capacity(2);
    let mut unstarted = None;
    for (slot, result) in started.into_iter().enumerate() {
        match result {
            Ok(engine) => engines.push(engine),
            Err(error) if !error.is_engine_fault() => {
                quit_all(engines);
                return Err(RunError::Spawn(error));
            }
            Err(error) => {
                unstarted
                    .get_or_insert_with(|| unstarted_game(opening.clone(), color_of(slot), &error));
            }
        }
    }
    let record = match (unstarted, <[Engine; 2]>::try_from(engines)) {
        (None, Ok([first, second])) => {
            let [mut white, mut black] = if white_slot == 0 {
                [first, second]
            } else {
                [second, first]
            };
            let record = play_game([&mut white, &mut black], opening, settings, abort);
            quit_all(vec![white, black]);
            record
        }
        (unstarted, Ok(engines)) => {
            quit_all(engines.into());
            unstarted
        }
        (unstarted, Err(engines)) => {
            quit_all(engines);
            unstarted
        }
    };
    Ok(record)
}

/// Ends `engines`' processes.
fn quit_all(engines: Vec<Engine>) {
    for engine in engines {
        engine.quit(QUIT_GRACE);
    }
}
