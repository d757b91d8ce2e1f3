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
use crate::integrity::{MAX_RECORD_BYTES, read_bounded};

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
    let bytes = read_bounded(path, MAX_RECORD_BYTES).map_err(|error| RunError::Io {
        path: path.to_path_buf(),
        source: error.reason,
    })?;
    let state: State = serde_json::from_slice(&bytes).map_err(|e| RunError::StateInvalid {
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

/// What [`copy_counted_games`] carried over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountedGames {
    /// Counted pairs.
    pub pairs: u64,
    /// Games played, including those of a pair cut off before it was counted.
    pub games_played: u64,
}

/// Copies the counted pairs of one match's state file and PGN to another place, for a run of
/// the same match (equal `fingerprint` and `shard`: the same engine binaries, rules, book and
/// seed, so the same games): the PGN is cut at the last counted pair, both files are written
/// whole. The match then resumes from the copy.
///
/// # Errors
/// [`RunError::StateMismatch`] when the state belongs to another match, [`RunError::StateInvalid`]
/// when it does not parse or its PGN is shorter than the state says, [`RunError::Io`] otherwise.
pub fn copy_counted_games(
    from: (&Path, &Path),
    to: (&Path, &Path),
    fingerprint: &Fingerprint,
    shard: Shard,
) -> Result<CountedGames, RunError> {
    let (from_state, from_pgn) = from;
    let (to_state, to_pgn) = to;
    let state = load_state(from_state, fingerprint, shard)?;
    let mut pgn = std::fs::read(from_pgn).map_err(|source| RunError::Io {
        path: from_pgn.to_path_buf(),
        source,
    })?;
    let keep = usize::try_from(state.pgn_bytes).unwrap_or(usize::MAX);
    if pgn.len() < keep {
        return Err(RunError::StateInvalid {
            path: from_state.to_path_buf(),
            reason: format!(
                "it counts {} PGN bytes, {} has {}",
                state.pgn_bytes,
                from_pgn.display(),
                pgn.len()
            ),
        });
    }
    pgn.truncate(keep);
    crate::integrity::write_atomically(to_pgn, &pgn)?;
    write_state(to_state, &state)?;
    Ok(CountedGames {
        pairs: state.pairs.len() as u64,
        games_played: state.games_played,
    })
}

#[cfg(test)]
mod tests {
    use super::super::fingerprint::example;
    use super::*;

    #[test]
    fn counted_games_are_copied_only_into_the_same_match() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let shard = Shard { index: 1, count: 2 };
        let state = State {
            fingerprint: example(),
            shard,
            pgn_bytes: 5,
            games_played: 3,
            pairs: Vec::new(),
        };
        write_state(&path("from.json"), &state).unwrap();
        // Bytes after the last counted pair belong to a pair that was never counted.
        std::fs::write(path("from.pgn"), b"12345 uncounted").unwrap();
        let copied = copy_counted_games(
            (&path("from.json"), &path("from.pgn")),
            (&path("to.json"), &path("to.pgn")),
            &example(),
            shard,
        )
        .unwrap();
        assert_eq!(
            copied,
            CountedGames {
                pairs: 0,
                games_played: 3
            }
        );
        assert_eq!(std::fs::read(path("to.pgn")).unwrap(), b"12345");
        let resumed = load_state(&path("to.json"), &example(), shard).unwrap();
        assert_eq!((resumed.pgn_bytes, resumed.games_played), (5, 3));

        let mut other = example();
        other.seed = 2;
        let refused = copy_counted_games(
            (&path("from.json"), &path("from.pgn")),
            (&path("other.json"), &path("other.pgn")),
            &other,
            shard,
        );
        assert!(
            matches!(refused, Err(RunError::StateMismatch { field: "seed", .. })),
            "{refused:?}"
        );
        assert!(!path("other.json").exists() && !path("other.pgn").exists());

        std::fs::write(path("from.pgn"), b"123").unwrap();
        let short = copy_counted_games(
            (&path("from.json"), &path("from.pgn")),
            (&path("short.json"), &path("short.pgn")),
            &example(),
            shard,
        );
        assert!(
            matches!(short, Err(RunError::StateInvalid { .. })),
            "{short:?}"
        );
    }
}
