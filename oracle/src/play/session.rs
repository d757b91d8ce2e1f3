//! One match as `oracle match` plays it: the engines' start-up check, the live SPRT, the
//! shard result file of a `--shard` run, the resume command of an interrupted one, and the
//! [`MatchSummary`] it ends with. What the command shows while it runs (progress bar, log
//! lines) is the observer's business.

use std::path::PathBuf;

use super::interrupt::{self, resume_command};
use super::preflight::{PreflightError, check_engines};
use super::runner::{MatchConfig, MatchProgress, RunError, run_match};
use super::shard::ShardResult;
use super::stop::{SprtStop, StopRule};
use super::summary::MatchSummary;
use crate::integrity::{FileError, write_atomically};
use crate::stats::{SprtParams, StatsError};

/// What a match session needs besides the match itself.
#[derive(Debug, Clone)]
pub struct Session {
    /// The match.
    pub config: MatchConfig,
    /// The live SPRT that may end it early.
    pub sprt: Option<SprtParams>,
    /// Where a `--shard` run writes its shard result.
    pub shard_result: Option<PathBuf>,
    /// The command line as given (program first), for the resume command.
    pub command_line: Vec<String>,
}

/// Why a match session failed (an engine's faults cost games, never the session).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// An engine failed its start-up check.
    #[error(transparent)]
    Preflight(#[from] PreflightError),
    /// The SPRT's parameters cannot be used.
    #[error("SPRT: {0}")]
    Sprt(StatsError),
    /// The runner failed.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The live SPRT could not be evaluated on the counted pairs.
    #[error("the SPRT could not be evaluated: {0}")]
    SprtEvaluation(StatsError),
    /// The final SPRT status could not be computed.
    #[error(transparent)]
    Status(StatsError),
    /// The shard result could not be written.
    #[error(transparent)]
    ShardResult(#[from] FileError),
    /// The shard result could not be serialized.
    #[error("shard result: {0}")]
    ShardSerialize(#[from] serde_json::Error),
}

/// Plays `session`'s match to its end, its SPRT's decision or a signal; `observer` sees every
/// finished game and every counted pair.
///
/// # Errors
/// See [`SessionError`]; the pair in progress when the runner fails is not counted.
pub fn play(
    session: &Session,
    observer: &mut dyn FnMut(&MatchProgress),
) -> Result<MatchSummary, SessionError> {
    let config = &session.config;
    interrupt::install();
    check_engines(&config.engines, config.start_timeout)?;
    let mut live = session
        .sprt
        .map(|params| SprtStop::new(params, 1, 0))
        .transpose()
        .map_err(SessionError::Sprt)?;
    let report = run_match(
        config.clone(),
        live.as_mut().map(|rule| rule as &mut dyn StopRule),
        observer,
    )?;
    if let Some(error) = live.as_ref().and_then(SprtStop::error) {
        return Err(SessionError::SprtEvaluation(error.clone()));
    }
    let resume = match (&report.state_file, report.interrupted) {
        (Some(state), true) => Some(resume_command(&session.command_line, state)),
        _ => None,
    };
    let summary = MatchSummary::new(
        &report,
        config,
        session.sprt.as_ref(),
        live.as_ref().map(SprtStop::sequential),
        session.shard_result.clone(),
        resume,
    )
    .map_err(SessionError::Status)?;
    if let Some(path) = &session.shard_result {
        let bytes = serde_json::to_vec_pretty(&ShardResult::of(&report))?;
        write_atomically(path, &bytes)?;
    }
    Ok(summary)
}
