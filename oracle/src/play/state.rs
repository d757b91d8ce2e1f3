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

/// The counted pairs of a match with the games that show them: what a state file holds, taken
/// elsewhere for a run of the same match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedGames {
    /// The counted pairs, in the order they were counted.
    pub pairs: Vec<PairOutcome>,
    /// Games played, including those of a pair cut off before it was counted.
    pub games_played: u64,
    /// The PGN of the counted pairs' games, and nothing after them.
    pub pgn: Vec<u8>,
}

impl CountedGames {
    /// The `count` pairs of lowest index, with their games: what a stage decided after `count`
    /// pairs counted, its pairs being every one below its last look.
    ///
    /// # Errors
    /// A message when fewer pairs are counted, or the PGN is not the runner's.
    pub fn first_pairs(self, count: u64) -> Result<CountedGames, String> {
        let mut indices: Vec<u64> = self.pairs.iter().map(|p| p.index).collect();
        indices.sort_unstable();
        let Some(keep) = usize::try_from(count).ok().and_then(|n| indices.get(..n)) else {
            return Err(format!(
                "{count} pairs asked for, {} counted",
                self.pairs.len()
            ));
        };
        let keep: std::collections::BTreeSet<u64> = keep.iter().copied().collect();
        let pgn = super::shard_games::games_of_pairs(&self.pgn, &keep)?;
        Ok(CountedGames {
            pairs: self
                .pairs
                .into_iter()
                .filter(|p| keep.contains(&p.index))
                .collect(),
            games_played: self.games_played,
            pgn,
        })
    }
}

/// Reads the counted pairs of a state file of the match `fingerprint`, slice `shard` (the same
/// engine binaries, rules, book and seed, so the same games), and its PGN cut at the last counted
/// pair.
///
/// # Errors
/// [`RunError::StateMismatch`] when the state belongs to another match, [`RunError::StateInvalid`]
/// when it does not parse or its PGN is shorter than the state says, [`RunError::Io`] otherwise.
pub fn read_counted_games(
    state: &Path,
    pgn: &Path,
    fingerprint: &Fingerprint,
    shard: Shard,
) -> Result<CountedGames, RunError> {
    let counted = load_state(state, fingerprint, shard)?;
    let mut games = std::fs::read(pgn).map_err(|source| RunError::Io {
        path: pgn.to_path_buf(),
        source,
    })?;
    let keep = usize::try_from(counted.pgn_bytes).unwrap_or(usize::MAX);
    if games.len() < keep {
        return Err(RunError::StateInvalid {
            path: state.to_path_buf(),
            reason: format!(
                "it counts {} PGN bytes, {} has {}",
                counted.pgn_bytes,
                pgn.display(),
                games.len()
            ),
        });
    }
    games.truncate(keep);
    Ok(CountedGames {
        pairs: counted.pairs,
        games_played: counted.games_played,
        pgn: games,
    })
}

/// Writes `counted` as the state file and PGN of the match `fingerprint`, slice `shard`, each
/// whole or not at all, the PGN first: the match then resumes from them.
///
/// # Errors
/// [`RunError::Io`] when a file cannot be written.
pub fn write_counted_games(
    to: (&Path, &Path),
    fingerprint: &Fingerprint,
    shard: Shard,
    counted: &CountedGames,
) -> Result<(), RunError> {
    let (state, pgn) = to;
    crate::integrity::write_atomically(pgn, &counted.pgn)?;
    write_state(
        state,
        &State {
            fingerprint: fingerprint.clone(),
            shard,
            pgn_bytes: counted.pgn.len() as u64,
            games_played: counted.games_played,
            pairs: counted.pairs.clone(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::super::fingerprint::example;
    use super::*;

    #[test]
    fn counted_games_are_read_only_from_the_same_match_and_written_whole() {
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
        let counted =
            read_counted_games(&path("from.json"), &path("from.pgn"), &example(), shard).unwrap();
        assert_eq!(
            counted,
            CountedGames {
                pairs: Vec::new(),
                games_played: 3,
                pgn: b"12345".to_vec(),
            }
        );
        write_counted_games(
            (&path("to.json"), &path("to.pgn")),
            &example(),
            shard,
            &counted,
        )
        .unwrap();
        assert_eq!(std::fs::read(path("to.pgn")).unwrap(), b"12345");
        let resumed = load_state(&path("to.json"), &example(), shard).unwrap();
        assert_eq!((resumed.pgn_bytes, resumed.games_played), (5, 3));

        let mut other = example();
        other.seed = 2;
        let refused = read_counted_games(&path("from.json"), &path("from.pgn"), &other, shard);
        assert!(
            matches!(refused, Err(RunError::StateMismatch { field: "seed", .. })),
            "{refused:?}"
        );

        std::fs::write(path("from.pgn"), b"123").unwrap();
        let short = read_counted_games(&path("from.json"), &path("from.pgn"), &example(), shard);
        assert!(
            matches!(short, Err(RunError::StateInvalid { .. })),
            "{short:?}"
        );
    }
}
