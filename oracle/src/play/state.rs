//! The resumable state file of a match: the counted pairs and the length of the PGN after
//! them, rewritten atomically after every counted pair, so that a killed or interrupted run
//! continues exactly where it stopped.

use std::fs::{File, OpenOptions};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::fingerprint::{Fingerprint, fingerprint_difference};
use super::runner::RunError;
use super::shard::Shard;
use super::tally::PairOutcome;

/// The resumable state, rewritten atomically after every counted pair.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct State {
    pub(super) fingerprint: Fingerprint,
    pub(super) shard: Shard,
    /// Length of the PGN file after the last counted pair (a longer file is cut back).
    pub(super) pgn_bytes: u64,
    pub(super) games_played: u64,
    pub(super) pairs: Vec<PairOutcome>,
}

/// Reads and checks a state file against the match being started.
pub(super) fn load_state(
    path: &Path,
    fingerprint: &Fingerprint,
    shard: Shard,
) -> Result<State, RunError> {
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

/// Opens the PGN for appending, first cutting it back to the last counted pair.
pub(super) fn open_pgn(path: &Path, keep_bytes: u64) -> Result<File, RunError> {
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
pub(super) fn write_state(path: &Path, state: &State) -> Result<(), RunError> {
    let bytes = serde_json::to_vec(state).expect("state serializes");
    Ok(crate::integrity::write_atomically(path, &bytes)?)
}
