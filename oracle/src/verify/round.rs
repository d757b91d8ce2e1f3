//! The rounds of a stage played in shards (docs/architecture.md, "Scale").
//!
//! The merge (`oracle verify --no-play`) plans every round: how many pairs each shard has counted
//! when it ends, sized to what a shard can play in `--round-minutes` (or to the profile's
//! `batch_size`). It records the round in the stage's shard directory, and every shard of the
//! round plays to exactly that pair, whatever machine it runs on: nothing is measured again
//! there, so all shards agree. A shard run again — a failed or pre-empted task, a job started
//! twice — plays only what its round still lacks, and a round is planned anew only once every
//! shard has finished the last one, so no pair is played twice or left out.
//!
//! A stage that took over pairs of earlier runs (`--games-from`) starts its rounds after them:
//! round 1 ends `pairs_per_shard` a shard after the first pair not taken over, and no shard plays
//! a pair taken over.

use std::fs::{File, OpenOptions};
use std::num::NonZeroU32;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many pairs a shard plays in one round, and why.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundSize {
    /// Pairs each shard plays in one round.
    pub pairs: u64,
    /// The minutes a shard's round may take (`--round-minutes`); `None`: the profile's
    /// `batch_size` pairs.
    pub minutes: Option<NonZeroU32>,
    /// Estimated seconds of one game, from the plan (the clock, or the node limit at the bench
    /// speed of the machine that planned the round).
    pub seconds_per_game: f64,
    /// Games a shard plays at once.
    pub concurrency: usize,
}

impl RoundSize {
    /// The pairs that `concurrency` games at once, each taking `seconds_per_game`, fit into
    /// `minutes` (at least one); without `minutes`, `batch` pairs.
    #[must_use]
    pub fn new(
        minutes: Option<NonZeroU32>,
        batch: u64,
        seconds_per_game: f64,
        concurrency: usize,
    ) -> RoundSize {
        let pairs = match minutes {
            None => batch,
            Some(minutes) => {
                let games = f64::from(minutes.get()) * 60.0 * concurrency.max(1) as f64
                    / seconds_per_game.max(f64::MIN_POSITIVE);
                ((games / 2.0).floor() as u64).max(1)
            }
        };
        RoundSize {
            pairs,
            minutes,
            seconds_per_game,
            concurrency,
        }
    }
}

/// One round of a stage, as the merge planned it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// The round's number, from 1.
    pub number: u64,
    /// Pairs every shard has counted when the round ends: its first `pairs_per_shard` pairs.
    pub pairs_per_shard: u64,
    /// How the round was sized.
    pub size: RoundSize,
    /// The first pair of round 1: the pairs below it were taken over from earlier runs of the
    /// same match (absent in rounds planned before adoption in rounds existed: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_pair: u64,
}

/// Whether a count is zero (a field left out of the record then).
fn is_zero(count: &u64) -> bool {
    *count == 0
}

impl Round {
    /// The round to play after `previous` (the first, from `first_pair`, when there is none):
    /// `previous` again while a shard has not finished it (`finished` is false), else one of
    /// `size` more pairs a shard.
    #[must_use]
    pub fn next(
        previous: Option<&Round>,
        finished: bool,
        size: RoundSize,
        first_pair: u64,
    ) -> Round {
        match previous {
            None => Round {
                number: 1,
                pairs_per_shard: size.pairs,
                size,
                first_pair,
            },
            Some(previous) if !finished => *previous,
            Some(previous) => Round {
                number: previous.number + 1,
                pairs_per_shard: previous.pairs_per_shard.saturating_add(size.pairs),
                size,
                first_pair: previous.first_pair,
            },
        }
    }

    /// The first pair index after the round of a stage cut into `shards`: shard K's first
    /// `pairs_per_shard` pairs from `first_pair` on are exactly its pairs below it.
    #[must_use]
    pub fn end(&self, shards: u32) -> u64 {
        self.first_pair
            .saturating_add(self.pairs_per_shard.saturating_mul(u64::from(shards)))
    }

    /// One line for the step reporter.
    #[must_use]
    pub fn describe(&self) -> String {
        let why = match self.size.minutes {
            Some(minutes) => format!(
                "{} pairs in {minutes} min at ~{:.1} s a game, {} at once",
                self.size.pairs, self.size.seconds_per_game, self.size.concurrency
            ),
            None => format!("{} pairs, the profile's batch_size", self.size.pairs),
        };
        let taken = match self.first_pair {
            0 => String::new(),
            first => format!(" after the {first} pairs taken over"),
        };
        format!(
            "round {}: every shard plays to its {} pairs{taken} ({why})",
            self.number, self.pairs_per_shard
        )
    }
}

/// The record of the current round in a stage's shard directory.
#[must_use]
pub fn record_file(shards_dir: &Path) -> PathBuf {
    shards_dir.join("round.json")
}

/// An exclusive hold on one shard's files: two processes playing the same shard at once would
/// interleave its games; the second is refused instead. Released when dropped (and by the
/// kernel when the process dies, so a killed task leaves no stale lock).
#[derive(Debug)]
pub struct ShardLock {
    _file: File,
}

/// Takes the hold of `path` (created if missing), or says that another process has it.
pub fn lock_shard(path: &Path) -> Result<ShardLock, String> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: flock on a descriptor this function owns; no memory is shared with the call.
    let held = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if held != 0 {
        let error = std::io::Error::last_os_error();
        return Err(if error.kind() == std::io::ErrorKind::WouldBlock {
            format!(
                "{}: another process is playing this shard; a shard is played by one process at a time",
                path.display()
            )
        } else {
            format!("{}: {error}", path.display())
        });
    }
    Ok(ShardLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minutes(m: u32) -> Option<NonZeroU32> {
        NonZeroU32::new(m)
    }

    #[test]
    fn a_round_fits_the_minutes_at_the_stage_clock() {
        // 8+0.08: at most 2 × (8 + 0.08 × 50) = 24 s a game; 300 min, 2 at once: 1,500 games.
        assert_eq!(RoundSize::new(minutes(300), 8, 24.0, 2).pairs, 750);
        // 40+0.4: 120 s a game.
        assert_eq!(RoundSize::new(minutes(300), 8, 120.0, 2).pairs, 150);
        assert_eq!(RoundSize::new(None, 8, 24.0, 2).pairs, 8, "batch_size");
        assert_eq!(
            RoundSize::new(minutes(1), 8, 3600.0, 1).pairs,
            1,
            "at least one"
        );
    }

    #[test]
    fn an_unfinished_round_is_played_again_and_a_finished_one_is_followed() {
        let size = RoundSize::new(None, 8, 1.0, 2);
        let first = Round::next(None, false, size, 0);
        assert_eq!(
            (first.number, first.pairs_per_shard, first.end(4)),
            (1, 8, 32)
        );
        assert_eq!(Round::next(Some(&first), false, size, 0), first);
        let bigger = RoundSize::new(minutes(1), 8, 1.0, 2);
        let second = Round::next(Some(&first), true, bigger, 0);
        assert_eq!((second.number, second.pairs_per_shard), (2, 68));
        assert!(
            second
                .describe()
                .contains("round 2: every shard plays to its 68 pairs")
        );
    }

    #[test]
    fn rounds_after_pairs_taken_over_start_after_them() {
        let size = RoundSize::new(None, 8, 1.0, 2);
        let first = Round::next(None, false, size, 13);
        assert_eq!((first.first_pair, first.end(4)), (13, 45));
        let second = Round::next(Some(&first), true, size, 0);
        assert_eq!((second.first_pair, second.end(4)), (13, 77), "kept");
        assert!(
            first
                .describe()
                .contains("every shard plays to its 8 pairs after the 13 pairs taken over"),
            "{}",
            first.describe()
        );
        // A round planned before the field existed reads as starting at pair 0.
        let old = r#"{"number":1,"pairs_per_shard":8,"size":{"pairs":8,"minutes":null,"seconds_per_game":1.0,"concurrency":2}}"#;
        let old: Round = serde_json::from_str(old).unwrap();
        assert_eq!(old.end(4), 32);
    }

    #[test]
    fn a_shard_is_held_by_one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shard-1-of-2.lock");
        let held = lock_shard(&path).unwrap();
        let refused = lock_shard(&path).unwrap_err();
        assert!(
            refused.contains("another process is playing this shard"),
            "{refused}"
        );
        drop(held);
        lock_shard(&path).unwrap();
    }
}
