//! A match worker thread: takes the next pair, starts (or reuses) one process per engine,
//! plays both games and renders their PGN; it never counts and never touches a file, so the
//! clock path of a game never waits for a disk.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant, SystemTime};

use shakmaty::Color;

use super::book::Opening;
use super::game::{GameRecord, GameSettings, play_game, unstarted_game};
use super::pgn::{PgnHeader, hours_minutes_seconds, render, utc_timestamp};
use super::runner::{Event, FinishedGame, MatchConfig, RunError, Shared};
use super::tally::{GameSummary, PairOutcome};
use super::uci::Engine;

/// One worker: takes pairs until none are left or the match stops.
pub(super) fn worker(shared: &Shared, events: &Sender<Event>) {
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
    let mut summaries = Vec::with_capacity(2);
    let mut texts = Vec::with_capacity(2);
    let mut overhead_us = Vec::new();
    let mut first_game: Option<GameRecord> = None;
    let mut identical_games = false;
    for game_number in 0..2 {
        // Slot 0 is the first engine; it has White in game 0.
        let white_slot = game_number;
        let time_controls = [
            config.clock.of_engine(white_slot),
            config.clock.of_engine(1 - white_slot),
        ];
        let settings = GameSettings {
            clock: config.clock,
            time_controls,
            adjudication: config.adjudication,
            ready_timeout: config.ready_timeout,
        };
        let (start_time, started) = (SystemTime::now(), Instant::now());
        let Some(record) =
            play_in_slots(config, slots, white_slot, opening, &settings, &shared.stop)?
        else {
            // The match stopped: the game in flight is abandoned and its pair not counted.
            return Ok(None);
        };
        let slot_of = |color| match color {
            Color::White => white_slot,
            Color::Black => 1 - white_slot,
        };
        let faulted_engine = record.faulted.map(slot_of);
        for slot in record.restarts().into_iter().map(slot_of) {
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

/// Starts missing engines and plays one game with slot `white_slot` as White.
fn play_in_slots(
    config: &MatchConfig,
    slots: &mut [Option<Engine>; 2],
    white_slot: usize,
    opening: &Opening,
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
