//! A UCI conformance check, in the manner of fastchess's `--compliance`: the steps a match
//! puts an engine through, one at a time, each passed or failed with what was seen.
//!
//! The engine runs exactly as a match runs it (the same sandbox, driver and deadlines), so an
//! engine that passes here starts, takes its options, searches under every limit kind the
//! runner sends, stops on request and plays a second game in the same process. The check
//! ends at the first failure: later steps would only repeat it.

use std::time::{Duration, Instant};

use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use super::option::check_options;
use super::uci::{Engine, EngineConfig, GoLimits, SearchOutcome, UciError};

/// Time an engine may take beyond a time limit before the answer counts as late: the match
/// runner's default margin.
const MARGIN: Duration = Duration::from_millis(100);

/// A position with Black to move, from fastchess's check, so that `btime` is the clock read.
const BLACK_TO_MOVE: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

/// A middlegame with many captures and checks, from fastchess's check.
const MIDDLEGAME: &str = "3r2k1/p5n1/1pq1p2p/2p3p1/2P1P1n1/1P1P2pP/PN1Q2K1/5R2 w - - 0 27";

/// One step of the check and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepResult {
    /// What the step sends and expects.
    pub step: &'static str,
    /// Whether the engine did what the step expects.
    pub passed: bool,
    /// What was seen: the answer, its time, or what went wrong.
    pub detail: String,
}

/// The whole check: every step run, the last one failed if any did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ComplianceReport {
    /// The engine's `id name`, if it gave one.
    pub engine: Option<String>,
    /// The steps in the order they ran.
    pub steps: Vec<StepResult>,
}

impl ComplianceReport {
    /// The failed step, if the check ended on one.
    #[must_use]
    pub fn failure(&self) -> Option<&StepResult> {
        self.steps.last().filter(|step| !step.passed)
    }
}

/// What a step found: a detail when it passed, the reason when it failed.
type StepOutcome = Result<String, String>;

/// A step: what it checks, and the check itself on the running engine.
type Step<'a> = (&'static str, &'a dyn Fn(&mut Engine) -> StepOutcome);

/// Runs the check on the engine of `config` (its options are the ones to set); `deadline`
/// bounds the start-up, each ping and each node or depth search. `on_step` sees each step as it
/// ends, so a caller can print progress.
pub fn check_engine(
    config: &EngineConfig,
    deadline: Duration,
    mut on_step: impl FnMut(&StepResult),
) -> ComplianceReport {
    let mut report = ComplianceReport {
        engine: None,
        steps: Vec::new(),
    };
    let mut record = |report: &mut ComplianceReport, step: &'static str, outcome: StepOutcome| {
        let passed = outcome.is_ok();
        let result = StepResult {
            step,
            passed,
            detail: outcome.unwrap_or_else(|reason| reason),
        };
        on_step(&result);
        report.steps.push(result);
        passed
    };

    let started = Instant::now();
    let mut engine = match Engine::handshake(config, deadline) {
        Ok(engine) => engine,
        Err(error) => {
            record(&mut report, "start; uci → uciok", Err(error.to_string()));
            return report;
        }
    };
    let handshake = format!(
        "uciok after {} ms, {} options declared",
        started.elapsed().as_millis(),
        engine.declared_options().len()
    );
    record(&mut report, "start; uci → uciok", Ok(handshake));
    report.engine = engine.id_name().map(str::to_string);

    let id = match engine.id_name() {
        Some(name) => Ok(name.to_string()),
        None => Err("no `id name` line before `uciok`".to_string()),
    };
    let steps: [Step; 11] = [
        ("id name", &|_| id.clone()),
        (
            "options: each one set is declared, its value fits",
            &|engine| {
                check_options(engine.declared_options(), config.ordered_options())
                    .map(|()| format!("{} set", config.options.len()))
                    .map_err(|mismatch| mismatch.to_string())
            },
        ),
        ("setoption …; isready → readyok", &|engine| {
            engine
                .configure(config, deadline)
                .map(|()| "readyok".to_string())
                .map_err(fault)
        }),
        ("ucinewgame; isready → readyok", &|engine| {
            engine
                .new_game(deadline)
                .map(|()| "readyok".to_string())
                .map_err(fault)
        }),
        (
            "position startpos; go nodes 5000 → legal bestmove with a scored info line",
            &|engine| {
                let outcome = search(engine, None, &[], &GoLimits::nodes(5000), deadline)?;
                outcome
                    .info
                    .score
                    .map(|_| format!("bestmove {}", outcome.bestmove))
                    .ok_or_else(|| "no `info … score …` line before `bestmove`".to_string())
            },
        ),
        (
            "position fen …; go depth 4 → legal bestmove",
            &|engine| {
                search(engine, Some(MIDDLEGAME), &[], &GoLimits::depth(4), deadline)
                    .map(|outcome| format!("bestmove {}", outcome.bestmove))
            },
        ),
        ("go movetime 200 → bestmove in time", &|engine| {
            let limit = Duration::from_millis(200);
            timed(engine, None, &GoLimits::movetime(limit), limit)
        }),
        (
            "go wtime 1000 btime 1000 winc 10 binc 10 (White) → bestmove in time",
            &|engine| timed(engine, None, &clock(), Duration::from_millis(1000)),
        ),
        (
            "go wtime 1000 btime 1000 winc 10 binc 10 (Black) → bestmove in time",
            &|engine| {
                timed(
                    engine,
                    Some(BLACK_TO_MOVE),
                    &clock(),
                    Duration::from_millis(1000),
                )
            },
        ),
        ("go infinite; stop after 200 ms → bestmove", &|engine| {
            let infinite = GoLimits {
                infinite: true,
                ..GoLimits::default()
            };
            let stop_after = Duration::from_millis(200);
            match engine.search(None, &[], &infinite, stop_after, deadline) {
                Err(UciError::Deadline {
                    expected: "bestmove",
                    recovered,
                    ..
                }) => recovered
                    .then(|| "bestmove after `stop`".to_string())
                    .ok_or_else(|| "no bestmove within a second of `stop`".to_string()),
                Err(error) => Err(fault(error)),
                Ok(outcome) => Err(format!(
                    "`go infinite` ended on its own after {} ms with bestmove {}",
                    outcome.elapsed.as_millis(),
                    outcome.bestmove
                )),
            }
        }),
        (
            "ucinewgame; position startpos moves e2e4 e7e5; go nodes 5000 → legal bestmove",
            &|engine| {
                engine.new_game(deadline).map_err(fault)?;
                let moves = ["e2e4".to_string(), "e7e5".to_string()];
                search(engine, None, &moves, &GoLimits::nodes(5000), deadline)
                    .map(|outcome| format!("bestmove {}", outcome.bestmove))
            },
        ),
    ];
    for (step, check) in steps {
        if !record(&mut report, step, check(&mut engine)) {
            return report;
        }
    }
    engine.quit(Duration::from_millis(500));
    report
}

/// A clock of one second and 10 ms per move for both sides.
fn clock() -> GoLimits {
    let second = Some(Duration::from_millis(1000));
    let increment = Some(Duration::from_millis(10));
    GoLimits {
        wtime: second,
        btime: second,
        winc: increment,
        binc: increment,
        ..GoLimits::default()
    }
}

/// An engine error as a step's reason.
fn fault(error: UciError) -> String {
    error.to_string()
}

/// Searches the position after `moves` from `fen` (the start position without one) and checks
/// that the answer is a legal move there.
fn search(
    engine: &mut Engine,
    fen: Option<&str>,
    moves: &[String],
    limits: &GoLimits,
    deadline: Duration,
) -> Result<SearchOutcome, String> {
    let mut position = match fen {
        Some(fen) => fen
            .parse::<Fen>()
            .ok()
            .and_then(|fen| fen.into_position::<Chess>(CastlingMode::Standard).ok())
            .ok_or_else(|| format!("the check's own FEN does not parse: {fen}"))?,
        None => Chess::default(),
    };
    for m in moves {
        let legal = UciMove::from_ascii(m.as_bytes())
            .ok()
            .and_then(|u| u.to_move(&position).ok())
            .ok_or_else(|| format!("the check's own move {m} is not legal"))?;
        position.play_unchecked(legal);
    }
    let outcome = match engine.search(fen, moves, limits, deadline, deadline) {
        Ok(outcome) => outcome,
        Err(UciError::Deadline {
            expected: "bestmove",
            after,
            recovered,
            ..
        }) => {
            let reply = if recovered {
                "answered `stop` with a bestmove"
            } else {
                "did not answer `stop` within a second either"
            };
            return Err(format!(
                "no bestmove within {} ms; {reply}",
                after.as_millis()
            ));
        }
        Err(error) => return Err(fault(error)),
    };
    let legal = UciMove::from_ascii(outcome.bestmove.as_bytes())
        .ok()
        .is_some_and(|u| u.to_move(&position).is_ok());
    if legal {
        Ok(outcome)
    } else {
        Err(format!("bestmove {} is not a legal move", outcome.bestmove))
    }
}

/// A search under a time limit of `allowed` (a clock or a move time): the answer must come
/// within it and the runner's margin.
fn timed(
    engine: &mut Engine,
    fen: Option<&str>,
    limits: &GoLimits,
    allowed: Duration,
) -> StepOutcome {
    let outcome = search(engine, fen, &[], limits, allowed + MARGIN)?;
    let elapsed = outcome.elapsed.as_millis();
    Ok(format!("bestmove {} after {elapsed} ms", outcome.bestmove))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_that_is_no_engine_fails_the_first_step_and_nothing_more() {
        let config = EngineConfig::new("/bin/true");
        let mut seen = Vec::new();
        let report = check_engine(&config, Duration::from_secs(2), |step| {
            seen.push(step.step);
        });
        assert_eq!(seen, vec!["start; uci → uciok"]);
        let failure = report.failure().expect("a failed step");
        assert!(!failure.passed);
        assert!(failure.detail.contains("uciok"), "{failure:?}");
    }
}
