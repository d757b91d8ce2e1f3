//! Shard results and their merge (docs/architecture.md, "Scale").
//!
//! A shard plays the pairs `i` with `i mod N = K − 1`; its result lists every counted pair with
//! its global index, so shards can be combined in pair order. The merge is bound to a plan: it
//! refuses a shard whose fingerprint is not the plan's (seed, book, engines, shard count, …),
//! whose tally does not recompute from its pairs, repeated shards, overlapping pairs, and a
//! shard whose PGN does not show the pairs it claims ([`super::shard_games`]), and applies the SPRT group-sequentially at round boundaries (one round = one pair from every
//! shard), the way Fishtest looks at its batches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::fingerprint::{Fingerprint, fingerprint_difference};
use super::runner::MatchReport;
use super::shard_games::{self, GamesError};
use super::tally::{PairOutcome, Tally};
use crate::integrity::{MAX_RECORD_BYTES, read_bounded};
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

    /// The file a `--shard` run writes its result to unless told otherwise:
    /// `shard-K-of-N.json` in the working directory.
    pub fn default_result_file(&self) -> PathBuf {
        PathBuf::from(format!("shard-{}-of-{}.json", self.index, self.count))
    }

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

/// Version of the shard result format.
pub const SHARD_FORMAT: u32 = 1;

/// What one shard run leaves behind for `oracle merge`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardResult {
    /// Format version ([`SHARD_FORMAT`]).
    pub format: u32,
    /// The match this shard belongs to.
    pub fingerprint: Fingerprint,
    /// Which shard this is.
    pub shard: Shard,
    /// Counted results of this shard.
    pub tally: Tally,
    /// Games finished by this shard.
    pub games_played: u64,
    /// sha256 of this shard's PGN file, if one was written.
    pub pgn_sha256: Option<String>,
    /// The counted pairs in global index order.
    pub pairs: Vec<PairOutcome>,
}

impl ShardResult {
    /// The shard result of a finished run.
    pub fn of(report: &MatchReport) -> ShardResult {
        let mut pairs = report.pairs.clone();
        pairs.sort_by_key(|p| p.index);
        ShardResult {
            format: SHARD_FORMAT,
            fingerprint: report.fingerprint.clone(),
            shard: report.shard,
            tally: report.tally,
            games_played: report.games_played,
            pgn_sha256: report.pgn_sha256.clone(),
            pairs,
        }
    }
}

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No files were given.
    #[error("no shard results given")]
    Empty,
    /// A file could not be read or parsed.
    #[error("{path}: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A shard was not played under the plan it is merged into (other engines, clock, book, …).
    #[error("{path} was not played under the plan: its {field} differs from the plan's")]
    NotThePlan {
        /// The shard at fault.
        path: PathBuf,
        /// What differs.
        field: &'static str,
    },
    /// Two files are the same shard, or carry the same pair.
    #[error("{path} overlaps {other}: {what}")]
    Overlap {
        /// The later file.
        path: PathBuf,
        /// The earlier file.
        other: PathBuf,
        /// The shard or pair in both.
        what: String,
    },
    /// A file's pairs do not belong to its shard or its tally does not match its pairs.
    #[error("{path} is inconsistent: {reason}")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A shard's PGN does not show the pairs it claims.
    #[error(transparent)]
    Games(#[from] GamesError),
    /// The statistics failed on the counts.
    #[error("SPRT: {0}")]
    Stats(#[from] StatsError),
}

/// The combined result of several shards.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The match.
    pub fingerprint: Fingerprint,
    /// Shards combined (1-based numbers).
    pub shards: Vec<u32>,
    /// Counted pairs in global order (all pairs, or those up to the SPRT's deciding round).
    pub pairs: Vec<PairOutcome>,
    /// The tally of the counted pairs.
    pub tally: Tally,
    /// Games finished by all shards.
    pub games_played: u64,
    /// Pairs present in the shards.
    pub pairs_available: u64,
    /// Length of the gap-free prefix of pair indices (the SPRT can only look at that).
    pub contiguous_pairs: u64,
    /// The sequential SPRT decision at round boundaries, when one was asked for.
    pub sprt_decision: Option<SprtDecision>,
    /// The state of the sequential test after its last look (for the LLR and overshoot).
    pub sprt: Option<SequentialSprt>,
}

/// Reads shard result files.
pub fn read_shards(paths: &[PathBuf]) -> Result<Vec<(PathBuf, ShardResult)>, MergeError> {
    paths
        .iter()
        .map(|path| {
            let unreadable = |reason: String| MergeError::Unreadable {
                path: path.clone(),
                reason,
            };
            let bytes = read_bounded(path, MAX_RECORD_BYTES)
                .map_err(|error| unreadable(error.reason.to_string()))?;
            let shard: ShardResult =
                serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
            if shard.format != SHARD_FORMAT {
                return Err(unreadable(format!(
                    "format {} is not {SHARD_FORMAT}",
                    shard.format
                )));
            }
            Ok((path.clone(), shard))
        })
        .collect()
}

/// Reads the plan a merge is bound to: a match fingerprint (JSON), or a shard result file whose
/// fingerprint is taken (a shard the merger played, or otherwise trusts).
pub fn read_plan(path: &Path) -> Result<Fingerprint, MergeError> {
    let unreadable = |reason: String| MergeError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = read_bounded(path, MAX_RECORD_BYTES)
        .map_err(|error| unreadable(error.reason.to_string()))?;
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
    if json.get("fingerprint").is_some() {
        serde_json::from_value::<ShardResult>(json)
            .map(|shard| shard.fingerprint)
            .map_err(|e| unreadable(format!("not a shard result: {e}")))
    } else {
        serde_json::from_value(json)
            .map_err(|e| unreadable(format!("not a match fingerprint: {e}")))
    }
}

/// Combines the shards of the match `plan`; with `sprt`, looks at the data after every round and
/// stops at the first decision.
///
/// Every shard's fingerprint must equal `plan` in every field, the shard count included: shards
/// that only agree with each other may all belong to another match. Every shard's PGN, next to
/// its file, must then show exactly the pairs it claims.
pub fn merge(
    shards: &[(PathBuf, ShardResult)],
    plan: &Fingerprint,
    sprt: Option<SprtParams>,
) -> Result<Merged, MergeError> {
    let looks = sprt.map(|params| Looks {
        params,
        every: u64::from(plan.shards),
        after: 0,
        min_pairs: 0,
    });
    merge_onto(None, shards, plan, looks)
}

/// Pairs of a match counted outside its shards — taken over from earlier runs of the same match
/// — which a merge counts once, with the shards' pairs, and no shard may carry again.
#[derive(Debug, Clone, Copy)]
pub struct Prior<'a> {
    /// The file that holds them, named when a shard carries one of them again.
    pub file: &'a Path,
    /// The pairs (their games already checked by the caller).
    pub pairs: &'a [PairOutcome],
    /// Games played for them, including those of pairs cut off before they were counted.
    pub games_played: u64,
}

/// When a merge's SPRT looks at the gap-free prefix of pairs.
#[derive(Debug, Clone, Copy)]
pub struct Looks {
    /// The test.
    pub params: SprtParams,
    /// Pairs between two looks: a round (one pair a shard), or a batch without shards.
    pub every: u64,
    /// Pairs before the first look: pairs a run looked at itself as it counted them (taken over
    /// from a local run), which no look here judges again; 0 on a grid from pair 0.
    pub after: u64,
    /// Pairs below which a look's decision does not end the looks (the stage's minimum): the
    /// looks go on, as a local run's do, and the first decision from the minimum on counts.
    pub min_pairs: u64,
}

/// [`merge`] onto the pairs `prior` counts, which come first: the SPRT looks at the union, and a
/// shard that carries a pair of `prior` is refused as an overlap. With `prior` the shards may be
/// none.
pub fn merge_onto(
    prior: Option<Prior<'_>>,
    shards: &[(PathBuf, ShardResult)],
    plan: &Fingerprint,
    looks: Option<Looks>,
) -> Result<Merged, MergeError> {
    let merged = combine(prior, shards, plan, looks)?;
    // After the checks of the claims themselves: a shard of another match is named as such.
    for (path, shard) in shards {
        shard_games::check(path, shard)?;
    }
    Ok(merged)
}

/// [`merge_onto`] on the shard files' claims alone, their games unread.
fn combine(
    prior: Option<Prior<'_>>,
    shards: &[(PathBuf, ShardResult)],
    plan: &Fingerprint,
    looks: Option<Looks>,
) -> Result<Merged, MergeError> {
    if shards.is_empty() && prior.is_none() {
        return Err(MergeError::Empty);
    }
    let mut seen_shards: BTreeMap<u32, &Path> = BTreeMap::new();
    let mut by_index: BTreeMap<u64, (&Path, PairOutcome)> = BTreeMap::new();
    let mut games_played = 0u64;
    if let Some(prior) = prior {
        for pair in prior.pairs {
            if let Some((other, _)) = by_index.insert(pair.index, (prior.file, *pair)) {
                return Err(MergeError::Overlap {
                    path: prior.file.to_path_buf(),
                    other: other.to_path_buf(),
                    what: format!("pair {}", pair.index),
                });
            }
        }
        games_played = prior.games_played;
    }
    for (path, shard) in shards {
        if let Some(field) = fingerprint_difference(&shard.fingerprint, plan) {
            return Err(MergeError::NotThePlan {
                path: path.clone(),
                field,
            });
        }
        let inconsistent = |reason: String| MergeError::Inconsistent {
            path: path.clone(),
            reason,
        };
        if shard.shard.count != shard.fingerprint.shards
            || shard.shard.index == 0
            || shard.shard.index > shard.shard.count
        {
            return Err(inconsistent(format!(
                "shard {}/{} of a {}-shard match",
                shard.shard.index, shard.shard.count, shard.fingerprint.shards
            )));
        }
        if let Some(other) = seen_shards.insert(shard.shard.index, path) {
            return Err(MergeError::Overlap {
                path: path.clone(),
                other: other.to_path_buf(),
                what: format!("both are shard {}/{}", shard.shard.index, shard.shard.count),
            });
        }
        if Tally::of(&shard.pairs) != shard.tally {
            return Err(inconsistent(
                "its tally does not match its pairs".to_string(),
            ));
        }
        for pair in &shard.pairs {
            if !shard.shard.contains(pair.index) || pair.index >= shard.fingerprint.pairs {
                return Err(inconsistent(format!(
                    "pair {} is not part of shard {}/{}",
                    pair.index, shard.shard.index, shard.shard.count
                )));
            }
            if let Some((other, _)) = by_index.insert(pair.index, (path, *pair)) {
                return Err(MergeError::Overlap {
                    path: path.clone(),
                    other: other.to_path_buf(),
                    what: format!("pair {}", pair.index),
                });
            }
        }
        games_played = games_played.saturating_add(shard.games_played);
    }
    let all: Vec<PairOutcome> = by_index.values().map(|(_, p)| *p).collect();
    let contiguous_pairs = all
        .iter()
        .enumerate()
        .take_while(|(i, p)| p.index == *i as u64)
        .count() as u64;
    let (pairs, sprt_state) = match looks {
        None => (all.clone(), None),
        Some(looks) => {
            let round = looks.every.max(1);
            let mut sequential = SequentialSprt::new(looks.params, round)?;
            let mut counts = PentanomialCounts([0; 5]);
            let mut counted = 0u64;
            // Pairs an earlier look judged count as looked at: none of them is cut off.
            let mut looked_at = looks.after.min(contiguous_pairs);
            let complete = contiguous_pairs == plan.pairs;
            for pair in &all[..contiguous_pairs as usize] {
                counts.0[pair.bucket()] += 1;
                counted += 1;
                let look =
                    counted.is_multiple_of(round) || (complete && counted == contiguous_pairs);
                if look && counted > looks.after {
                    looked_at = counted;
                    if sequential.update(&counts)? != SprtDecision::Continue
                        && counted >= looks.min_pairs
                    {
                        break;
                    }
                }
            }
            // Pairs after the last look belong to an unfinished round and are not counted.
            (all[..looked_at as usize].to_vec(), Some(sequential))
        }
    };
    let tally = Tally::of(&pairs);
    Ok(Merged {
        fingerprint: plan.clone(),
        shards: seen_shards.keys().copied().collect(),
        pairs_available: all.len() as u64,
        tally,
        pairs,
        games_played,
        contiguous_pairs,
        sprt_decision: sprt_state.as_ref().map(SequentialSprt::decision),
        sprt: sprt_state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::{GameResult, Termination};
    use crate::play::tally::GameSummary;
    use crate::stats::Model;

    fn fingerprint(pairs: u64, shards: u32) -> Fingerprint {
        Fingerprint {
            pairs,
            shards,
            ..crate::play::fingerprint::example()
        }
    }

    /// Shard `k` of `n` of a match in which the first engine loses every pair.
    fn losing_shard(k: u32, n: u32, pairs: u64) -> (PathBuf, ShardResult) {
        let loss = GameSummary {
            result: GameResult::BlackWins,
            termination: Termination::Normal,
            plies: 1,
            faulted_engine: None,
        };
        let win_for_white = GameSummary {
            result: GameResult::WhiteWins,
            ..loss
        };
        let shard = Shard { index: k, count: n };
        let outcomes: Vec<PairOutcome> = (0..pairs)
            .filter(|i| shard.contains(*i))
            .map(|index| PairOutcome {
                index,
                opening: 0,
                games: [loss, win_for_white],
                identical_games: false,
            })
            .collect();
        let result = ShardResult {
            format: SHARD_FORMAT,
            fingerprint: fingerprint(pairs, n),
            shard,
            tally: Tally::of(&outcomes),
            games_played: 2 * outcomes.len() as u64,
            pgn_sha256: None,
            pairs: outcomes,
        };
        (PathBuf::from(format!("s{k}.json")), result)
    }

    /// The SPRT of `params` looking once a round of `plan`, as `oracle merge` does.
    fn looks(params: SprtParams, plan: &Fingerprint) -> Looks {
        Looks {
            params,
            every: u64::from(plan.shards),
            after: 0,
            min_pairs: 0,
        }
    }

    #[test]
    fn pairs_taken_over_count_once_before_the_shards_and_are_not_looked_at_again() {
        let plan = fingerprint(12, 2);
        let (_, whole) = losing_shard(1, 1, 12);
        let taken: Vec<PairOutcome> = whole.pairs[..4].to_vec();
        fn prior(pairs: &[PairOutcome]) -> Prior<'_> {
            Prior {
                file: Path::new("state.json"),
                pairs,
                games_played: 9,
            }
        }
        // The shards' pairs from 4 on, as shards of a round after the pairs taken over play them.
        let after_taken = |k| {
            let (path, mut shard) = losing_shard(k, 2, 12);
            shard.pairs.retain(|p| p.index >= 4);
            shard.tally = Tally::of(&shard.pairs);
            shard.games_played = 2 * shard.pairs.len() as u64;
            (path, shard)
        };
        let shards = [after_taken(1), after_taken(2)];
        let merged = combine(Some(prior(&taken)), &shards, &plan, None).unwrap();
        assert_eq!(
            (
                merged.contiguous_pairs,
                merged.tally.pairs,
                merged.games_played
            ),
            (12, 12, 9 + 16)
        );
        // Alone, before any shard has played.
        let merged = combine(Some(prior(&taken)), &[], &plan, None).unwrap();
        assert_eq!((merged.contiguous_pairs, merged.shards.len()), (4, 0));
        // A shard that carries a pair taken over is an overlap: no pair counts twice.
        let error =
            combine(Some(prior(&taken)), &[losing_shard(1, 2, 12)], &plan, None).unwrap_err();
        assert_eq!(error.to_string(), "s1.json overlaps state.json: pair 0");
        // Looks come after the pairs an earlier look judged: none at 2 or 4, the first at 6.
        let params = SprtParams::new(0.0, 50.0, 0.05, 0.05, Model::Normalized).unwrap();
        let looks = Looks {
            params,
            every: 2,
            after: 4,
            min_pairs: 0,
        };
        let merged = combine(Some(prior(&taken)), &shards, &plan, Some(looks)).unwrap();
        let sprt = merged.sprt.unwrap();
        assert!(
            sprt.pairs() >= 6 && sprt.pairs().is_multiple_of(2),
            "{}",
            sprt.pairs()
        );
        assert!(merged.tally.pairs >= 6);
    }

    #[test]
    fn merge_without_sprt_counts_everything() {
        let plan = fingerprint(9, 2);
        let merged = combine(
            None,
            &[losing_shard(2, 2, 9), losing_shard(1, 2, 9)],
            &plan,
            None,
        )
        .unwrap();
        assert_eq!(merged.tally.pentanomial, [9, 0, 0, 0, 0]);
        assert_eq!(
            (
                merged.pairs_available,
                merged.contiguous_pairs,
                merged.games_played
            ),
            (9, 9, 18)
        );
        assert_eq!(merged.shards, vec![1, 2]);
        assert!(merged.pairs.windows(2).all(|w| w[0].index < w[1].index));
    }

    /// A test of [0, 50] nElo and the three shards of a 300-pair match the first engine loses.
    fn losing_in_three_shards() -> (SprtParams, Fingerprint, [(PathBuf, ShardResult); 3]) {
        let params = SprtParams::new(0.0, 50.0, 0.05, 0.05, Model::Normalized).unwrap();
        let shards = [1, 2, 3].map(|k| losing_shard(k, 3, 300));
        (params, fingerprint(300, 3), shards)
    }

    #[test]
    fn merge_applies_the_sprt_at_round_boundaries() {
        let (params, plan, shards) = losing_in_three_shards();
        let merged = combine(None, &shards, &plan, Some(looks(params, &plan))).unwrap();
        assert_eq!(merged.sprt_decision, Some(SprtDecision::AcceptH0));
        assert!(merged.tally.pairs < 300);
        assert_eq!(
            merged.tally.pairs % 3,
            0,
            "decisions fall on round boundaries"
        );
        // Without shard 2 the gap-free prefix is one pair: no round completes.
        let merged = combine(
            None,
            &[shards[0].clone(), shards[2].clone()],
            &plan,
            Some(looks(params, &plan)),
        )
        .unwrap();
        assert_eq!((merged.contiguous_pairs, merged.tally.pairs), (1, 0));
        assert_eq!(merged.sprt_decision, Some(SprtDecision::Continue));
    }

    /// A crossing before the stage's minimum does not end the looks: they go on, and the first
    /// decision from the minimum on is the merge's, as a local run's SPRT decides. It used to
    /// stop there, and every later merge stopped at the same look, short of the minimum, until
    /// the stage ran out of pairs.
    #[test]
    fn a_decision_before_the_minimum_does_not_end_the_looks() {
        let (params, plan, shards) = losing_in_three_shards();
        let early = combine(None, &shards, &plan, Some(looks(params, &plan))).unwrap();
        let first_crossing = early.tally.pairs;
        let min_pairs = first_crossing + 10;
        let merged = combine(
            None,
            &shards,
            &plan,
            Some(Looks {
                min_pairs,
                ..looks(params, &plan)
            }),
        )
        .unwrap();
        assert_eq!(merged.sprt_decision, Some(SprtDecision::AcceptH0));
        assert_eq!(
            merged.tally.pairs,
            min_pairs.next_multiple_of(3),
            "the first look from the minimum on"
        );
    }

    #[test]
    fn merge_refuses_shards_of_another_plan_even_when_they_agree() {
        let plan = fingerprint(8, 2);
        let forged: Vec<_> = [1, 2]
            .map(|k| {
                let (path, mut shard) = losing_shard(k, 2, 8);
                shard.fingerprint.book_sha256 = "f".repeat(64);
                (path, shard)
            })
            .into();
        let error = combine(None, &forged, &plan, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s1.json was not played under the plan: its book differs from the plan's"
        );
        let honest = [losing_shard(1, 2, 8), losing_shard(2, 2, 8)];
        let cut_in_four = Fingerprint { shards: 4, ..plan };
        let error = combine(None, &honest, &cut_in_four, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s1.json was not played under the plan: its shard count differs from the plan's"
        );
    }

    #[test]
    fn merge_refuses_foreign_repeated_and_inconsistent_shards() {
        let plan = fingerprint(8, 2);
        let (path, mut other) = losing_shard(2, 2, 8);
        other.fingerprint.seed = 4;
        let error =
            combine(None, &[losing_shard(1, 2, 8), (path, other)], &plan, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s2.json was not played under the plan: its seed differs from the plan's"
        );

        let error = combine(
            None,
            &[losing_shard(1, 2, 8), losing_shard(1, 2, 8)],
            &plan,
            None,
        )
        .unwrap_err();
        assert!(error.to_string().contains("both are shard 1/2"), "{error}");

        let (path, mut stolen) = losing_shard(2, 2, 8);
        stolen.pairs[0].index = 0;
        let error = combine(None, &[(path, stolen)], &plan, None).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("pair 0 is not part of shard 2/2"),
            "{error}"
        );

        let (path, mut edited) = losing_shard(1, 2, 8);
        edited.tally.wins += 1;
        let error = combine(None, &[(path, edited)], &plan, None).unwrap_err();
        assert!(
            error.to_string().contains("tally does not match"),
            "{error}"
        );
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
}
