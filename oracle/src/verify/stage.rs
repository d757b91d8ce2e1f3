//! Step 6: one SPRT stage of the profile, played by the match runner on the bound binaries.
//!
//! Three ways to play a stage, one set of rules:
//! - locally ([`Mode::Local`]): one resumable match of up to `max_games`, stopped by the SPRT at
//!   batch boundaries once `min_games` are played;
//! - as one shard of a round ([`Mode::Shard`]): shard K/N's pairs up to the end of the round the
//!   merge planned ([`super::round`]), resumable, published as a shard result file and its PGN
//!   for the merge;
//! - as the merge of a round ([`Mode::NoPlay`]): combine the shard files in `--out`, apply the
//!   SPRT at round boundaries (the match runner's group-sequential merge), and plan the next
//!   round when it has not decided.
//!
//! Pairs taken over from an earlier run of the same match (`--games-from`, `adopt.rs`) are
//! the stage's state in every mode: a local run resumes from it, a merge counts its pairs first
//! and once, and a shard leaves them out.
//!
//! A stage that reaches `max_games` undecided ends `undecided`: not passed. A stage at a node
//! limit whose every pair, from its minimum games on, was the same game twice ends
//! `indistinguishable` (Article 2.5): passed, with no gain found.

use std::fmt;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::Mode;
use super::binding::{BindingRecord, timestamp};
use super::out::OutDir;
use super::round::{self, Round, RoundSize};
use super::steps::StepReporter;
use crate::governance::constitution::{FaultLimits, Profile, Stage};
use crate::governance::entry::{AdoptedPairs, PathKind, StageFaults, StageRecord, StageState};
use crate::governance::hash::Sha256Hex;
use crate::governance::replay::replay_stage_record;
use crate::integrity::{MAX_RECORD_BYTES, copy_atomically, read_bounded, write_atomically};
use crate::play::book::{BookFormat, BookOrder};
use crate::play::clock::ClockRules;
use crate::play::cpu_guard::NodePace;
use crate::play::cpus::Cpus;
use crate::play::fingerprint::Fingerprint;
use crate::play::game::Adjudication;
use crate::play::runner::{MatchConfig, MatchProgress, MatchReport, RunError, run_match};
use crate::play::shard::Shard;
use crate::play::shard::{Looks, Merged, Prior, ShardResult, merge_onto, read_shards};
use crate::play::shard_games::check_pairs;
use crate::play::state::{CountedGames, read_counted_games};
use crate::play::stop::{SprtStop, StopRule};
use crate::play::tally::{FaultCounts, PairOutcome};
use crate::play::uci::EngineConfig;
use crate::report::StageReport;
use crate::stats::{
    Model, PentanomialCounts, SequentialSprt, SprtDecision, SprtParams, sprt_status,
};

/// Everything needed to play one stage, derived from the constitution and the binding.
#[derive(Debug, Clone)]
pub struct StagePlan {
    /// 1-based position in the profile.
    pub index: usize,
    /// The stage as the constitution states it.
    pub stage: Stage,
    /// The SPRT of the declared path's bounds.
    pub params: SprtParams,
    /// Pairs between two looks of the SPRT.
    pub batch: u64,
    /// Pairs before the SPRT may stop.
    pub min_pairs: u64,
    /// Pairs after which the stage ends undecided.
    pub max_pairs: u64,
    /// The book, as read from the predecessor's tree into `--out`.
    pub book: PathBuf,
    /// Its pinned sha256.
    pub book_sha256: Sha256Hex,
    /// Seed of the opening order: derived from the bound hashes and the stage name.
    pub seed: u64,
    /// Runner state, PGN and the stage's summary.
    pub dir: PathBuf,
    /// Shard files of this stage (CI rounds).
    pub shards_dir: PathBuf,
    adjudication: Adjudication,
    engines: [EngineConfig; 2],
    /// The bound sha256 of the candidate and the predecessor.
    engine_sha256: [String; 2],
    concurrency: usize,
    fault_limits: Option<FaultLimits>,
    /// The candidate's and the predecessor's CPU per node (their benches), bounding their
    /// searches at a node limit.
    node_pace: [Option<NodePace>; 2],
    /// The plan's estimate of one game's seconds, which sizes a round to `--round-minutes`.
    seconds_per_game: f64,
}

/// A finished stage: the register's record and the report's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageOutcome {
    /// As the register entry stores it.
    pub record: StageRecord,
    /// For the report.
    pub report: StageReport,
    /// When the stage's first game started (ms since the epoch), from its `started.json`.
    pub started_at_unix_ms: u64,
    /// Games played, including those of pairs discarded at an early stop.
    pub games_played: u64,
    /// sha256 of the candidate and the predecessor that played it (a resumed run checks them).
    pub engines: [String; 2],
}

/// Where a stage stands after this invocation.
#[derive(Debug, Clone)]
pub enum StageProgress {
    /// Decided, or undecided at its maximum.
    Finished(Box<StageOutcome>),
    /// `--no-play`: another round of shards is needed.
    NeedsRound {
        /// What was merged and why it is not enough.
        reason: String,
    },
    /// `--shard`: this shard's pairs of the round are played.
    ShardPlayed {
        /// What was played.
        reason: String,
    },
}

impl StageProgress {
    /// One line for the step reporter.
    pub fn describe(&self) -> String {
        match self {
            StageProgress::Finished(outcome) => {
                let r = &outcome.record;
                format!(
                    "{} after {} pairs: pentanomial {:?}, nElo {:+.1} [{:+.1}, {:+.1}], LLR {:.2} in [{:.2}, {:.2}]",
                    r.state,
                    r.pairs,
                    r.pentanomial,
                    r.nelo,
                    r.nelo_ci95[0],
                    r.nelo_ci95[1],
                    r.llr,
                    r.lower,
                    r.upper
                )
            }
            StageProgress::NeedsRound { reason } | StageProgress::ShardPlayed { reason } => {
                reason.clone()
            }
        }
    }
}

/// Why a stage could not be played or merged.
#[derive(Debug)]
pub struct StageError(String);

impl fmt::Display for StageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StageError {}

pub(super) fn fail(message: impl fmt::Display) -> StageError {
    StageError(message.to_string())
}

/// The stage's start, written once before its first game (kept when a run resumes).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Started {
    started_at_unix_ms: u64,
}

impl StagePlan {
    /// The plan of stage `index` (1-based) for the declared path; both engines get the engine
    /// contract's UCI `options` in every game.
    #[allow(
        clippy::too_many_arguments,
        reason = "each is one input of the stage's plan"
    )]
    pub fn new(
        index: usize,
        stage: &Stage,
        profile: &Profile,
        path: PathKind,
        binding: &BindingRecord,
        out: &OutDir,
        options: &[(String, String)],
    ) -> Result<Self, StageError> {
        let params = stage_sprt_params(stage, profile, path)?;
        let book_sha256 = stage
            .book_sha256
            .clone()
            .ok_or_else(|| fail(format!("stage `{}`: its book is not pinned", stage.name)))?;
        let seed_source = format!(
            "{}\n{}\n{}",
            binding.candidate.sha256, binding.predecessor.sha256, stage.name
        );
        let digest = Sha256Hex::of(seed_source.as_bytes());
        let seed = u64::from_str_radix(&digest.as_str()[..16], 16).expect("hex digits");
        let engine = |name: &str, path: &Path| {
            let mut config = EngineConfig::new(path);
            config.name = name.to_owned();
            for (option, value) in options {
                config.set_option(option, value);
            }
            config
        };
        // The match policy (play::cpus): timed games one per physical core.
        let cores = Cpus::detect().max_games(stage.tc.is_timed());
        let dir = Self::dir_in(out, index, &stage.name);
        Ok(Self {
            index,
            stage: stage.clone(),
            params,
            batch: u64::from(profile.batch_size.get()),
            min_pairs: stage.min_games / 2,
            max_pairs: stage.max_games.get() / 2,
            book: out.input(&stage.book.to_string_lossy()),
            book_sha256,
            seed,
            dir,
            shards_dir: Self::shards_dir_in(out, index, &stage.name),
            adjudication: profile.adjudication,
            engines: [
                engine("candidate", &binding.candidate.path),
                engine("predecessor", &binding.predecessor.path),
            ],
            engine_sha256: [
                binding.candidate.sha256.clone(),
                binding.predecessor.sha256.clone(),
            ],
            concurrency: (stage.concurrency.get() as usize).clamp(1, cores),
            fault_limits: profile.fault_limits,
            node_pace: [None, None],
            seconds_per_game: 0.0,
        })
    }

    /// Whether the stage plays at a node limit, where games repeat exactly and a stage can end
    /// indistinguishable (Article 2.5); games at a clock never repeat exactly.
    fn can_be_indistinguishable(&self) -> bool {
        !self.stage.tc.is_timed()
    }

    /// The runner's state file of a stage directory.
    pub(super) const STATE: &'static str = "state.json";
    /// The stage's games.
    pub(super) const PGN: &'static str = "games.pgn";
    /// The record of pairs taken over from earlier runs, written before the state that holds them.
    pub(super) const ADOPTED: &'static str = "adopted.json";
    /// The stage's end: its record and report, written once when it is decided.
    pub(super) const OUTCOME: &'static str = "stage.json";
    /// The end of a stage taken over with its pairs, until their state is in place.
    pub(super) const ADOPTED_END: &'static str = "adopted-stage.json";
    /// The grid of this run's looks ([`LookGrid`]), written by every open merge.
    const LOOKS: &'static str = "looks.json";
    /// The grid of the looks of the runs that played the pairs taken over, fixed when taken over.
    const LOOKS_FROM: &'static str = "looks-from.json";

    /// The directory of stage `index` named `name` in `out`.
    pub(super) fn dir_in(out: &OutDir, index: usize, name: &str) -> PathBuf {
        out.stage_dir(index, name)
    }

    /// The directory of this stage's shard files in `out`.
    pub(super) fn shards_dir_in(out: &OutDir, index: usize, name: &str) -> PathBuf {
        let dir = Self::dir_in(out, index, name);
        let name = dir.file_name().map(ToOwned::to_owned).unwrap_or_default();
        out.root().join("shards").join(name)
    }

    /// The plan with each engine's measured CPU per node, which bounds its node-limited
    /// searches (Article 6.9).
    #[must_use]
    pub fn with_node_pace(mut self, node_pace: [Option<NodePace>; 2]) -> StagePlan {
        self.node_pace = node_pace;
        self
    }

    /// The plan with the estimated seconds of one game ([`super::plan::StageForecast`]), from
    /// which a round is sized to `--round-minutes`.
    #[must_use]
    pub fn with_seconds_per_game(mut self, seconds_per_game: f64) -> StagePlan {
        self.seconds_per_game = seconds_per_game;
        self
    }

    pub(super) fn match_config(&self, shard: Shard, state: PathBuf, pgn: PathBuf) -> MatchConfig {
        MatchConfig {
            engines: self.engines.clone(),
            clock: ClockRules {
                tc: self.stage.tc,
                second_engine_tc: None,
                margin: Duration::from_millis(100),
                slack: Duration::from_millis(200),
                move_timeout: Duration::from_secs(60),
            },
            adjudication: self.adjudication,
            start_timeout: Duration::from_secs(10),
            ready_timeout: Duration::from_secs(10),
            book_path: Some(self.book.clone()),
            book_order: BookOrder::Random,
            book_format: BookFormat::from_path(&self.book),
            plies: 8,
            seed: self.seed,
            opening_offset: 0,
            pairs: self.max_pairs,
            shard,
            pairs_below: None,
            counted_elsewhere: Vec::new(),
            concurrency: self.concurrency,
            pgn_out: Some(pgn),
            state: Some(state),
            event: format!("oracle verify stage {} {}", self.index, self.stage.name),
            node_pace: self.node_pace,
        }
    }

    /// The summary of this stage's outcome file (written when it finishes).
    pub(super) fn outcome_file(&self) -> PathBuf {
        self.dir.join(Self::OUTCOME)
    }

    /// Where the end of a stage taken over with its pairs waits until their state is in place.
    pub(super) fn adopted_end(&self) -> PathBuf {
        self.dir.join(Self::ADOPTED_END)
    }

    /// The stage's games.
    pub(super) fn pgn(&self) -> PathBuf {
        self.dir.join(Self::PGN)
    }

    /// The runner's state: the counted pairs.
    pub(super) fn state(&self) -> PathBuf {
        self.dir.join(Self::STATE)
    }

    /// The record of the pairs taken over from earlier runs.
    pub(super) fn adopted_file(&self) -> PathBuf {
        self.dir.join(Self::ADOPTED)
    }

    /// Where an adoption's state waits until the record of it is written.
    pub(super) fn adopted_state(&self) -> PathBuf {
        self.dir.join("adopted-state.json")
    }

    /// The grid of the looks of the runs that played the pairs taken over ([`LookGrid`]).
    pub(super) fn looks_from_file(&self) -> PathBuf {
        self.dir.join(Self::LOOKS_FROM)
    }

    /// The grid on which the runs that played what the stage directory `dir` and the shard files
    /// `held` hold looked at those pairs: their merges' record; else, for shard files no merge
    /// judged, the grid their adoption fixed or, without one, the grid their first merge would
    /// have used (after the pairs that run had taken over, once per shard); else, for a local run
    /// that played none of its pairs itself yet, the grid its adoption fixed. `None` for a local
    /// run's own pairs, which its runner looked at once a batch in the order it counted them, a
    /// grid no merge can make again. A grid that starts past the pairs held is refused.
    pub(super) fn looks_of(&self, dir: &Path, held: &Held) -> Result<Option<LookGrid>, StageError> {
        let read = |name: &str| -> Result<Option<LookGrid>, StageError> {
            let file = dir.join(name);
            let grid = read_optional::<LookGrid>(&file)?;
            match grid {
                Some(grid)
                    if grid.every == 0 || grid.after > held.taken_prefix() + held.shard_pairs() =>
                {
                    Err(fail(format!(
                        "{}: looks every {} pairs after {}, not a grid of the pairs held",
                        file.display(),
                        grid.every,
                        grid.after
                    )))
                }
                grid => Ok(grid),
            }
        };
        if let Some(grid) = read(Self::LOOKS)? {
            return Ok(Some(grid));
        }
        let adopted = read_optional::<AdoptedPairs>(&dir.join(Self::ADOPTED))?;
        let played_none_itself = adopted.is_some_and(|a| a.pairs == held.taken().len() as u64);
        if (held.shard_count().is_some() || played_none_itself)
            && let Some(grid) = read(Self::LOOKS_FROM)?
        {
            return Ok(Some(grid));
        }
        Ok(held.shard_count().map(|shards| LookGrid {
            after: held.taken_prefix(),
            every: u64::from(shards),
        }))
    }

    /// When this run played the stage's first game.
    fn started_file(&self) -> PathBuf {
        self.dir.join("started.json")
    }

    /// The round the merge planned last, `None` before the first.
    fn round(&self) -> Result<Option<Round>, StageError> {
        read_optional(&round::record_file(&self.shards_dir))
    }

    /// Whether this run has begun the stage: its runner state, a planned round, or its end.
    pub(super) fn begun(&self) -> bool {
        self.state().exists()
            || round::record_file(&self.shards_dir).exists()
            || self.outcome_file().exists()
    }

    /// The whole stage's fingerprint as one shard (the engines hashed now).
    pub(super) fn fingerprint(&self) -> Result<Fingerprint, StageError> {
        let config = self.match_config(Shard::WHOLE, self.state(), self.pgn());
        Fingerprint::of(&config, self.book_sha256.to_string()).map_err(fail)
    }

    /// What the stage directory `dir` and the shard directory `shards_dir` (this run's or an
    /// earlier run's) hold of this stage: the state file, each pair shown by its games, and the
    /// shard files, read but not yet merged. A state of another match is refused, naming it.
    pub(super) fn held(&self, dir: &Path, shards_dir: &Path) -> Result<Held, StageError> {
        let fingerprint = self.fingerprint()?;
        let state = self.counted_in(dir, &fingerprint)?;
        let mut files: Vec<PathBuf> = match std::fs::read_dir(shards_dir) {
            Ok(listing) => listing
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("shard-")
                            && n.ends_with(".json")
                            && !n.ends_with(".state.json")
                    })
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        // One order on every machine: the stage's games file concatenates the shards' PGNs.
        files.sort();
        let shards = if files.is_empty() {
            Vec::new()
        } else {
            read_shards(&files).map_err(fail)?
        };
        Ok(Held {
            fingerprint,
            state,
            shards,
        })
    }

    /// The state file of the stage directory `dir` with what it counts, each pair shown by its
    /// games; `None` without one. A state of another match is refused, naming the field.
    fn counted_in(
        &self,
        dir: &Path,
        fingerprint: &Fingerprint,
    ) -> Result<Option<(PathBuf, CountedGames)>, StageError> {
        let state = dir.join(Self::STATE);
        if !state.exists() {
            return Ok(None);
        }
        let pgn = dir.join(Self::PGN);
        let counted = read_counted_games(&state, &pgn, fingerprint, Shard::WHOLE).map_err(
            |error| match error {
                RunError::StateMismatch { field, .. } => fail(format!(
                    "{}: its games are of another match ({field} differs)",
                    state.display()
                )),
                other => fail(other),
            },
        )?;
        let names = [
            fingerprint.engines[0].name.as_str(),
            fingerprint.engines[1].name.as_str(),
        ];
        check_pairs(&state, &pgn, &counted.pgn[..], names, &counted.pairs).map_err(fail)?;
        Ok(Some((state, counted)))
    }

    /// The pairs of this stage taken over from earlier runs, in its state file: no shard plays
    /// them (a state here is never a shard's; rounds are played only after adoption).
    fn taken(&self) -> Result<Vec<u64>, StageError> {
        let fingerprint = self.fingerprint()?;
        Ok(self
            .counted_in(&self.dir, &fingerprint)?
            .map(|(_, counted)| counted.pairs.iter().map(|p| p.index).collect())
            .unwrap_or_default())
    }
}

/// Where an SPRT's looks over a stage's pairs fall: at every multiple of `every` pairs past the
/// first `after`. A run that takes pairs over looks on the grid of the runs that played them, from
/// its start: the looks those runs made come out the same again (the same pairs, the same
/// overshoot correction), and a round whose shard files were published before the merge that
/// would have looked at them (a run cancelled mid-round) is looked at here, so no look of the
/// match is skipped and none is made at a point of another grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct LookGrid {
    /// Pairs before the first look: pairs taken over from a local run, which looked at them
    /// itself.
    pub after: u64,
    /// Pairs between two looks.
    pub every: u64,
}

/// A stage's pairs outside a running match: the state file of its directory (pairs taken over
/// from earlier runs, or a local run's own) and the shard files of its rounds.
pub(super) struct Held {
    /// The whole stage's fingerprint.
    fingerprint: Fingerprint,
    /// The state file and what it counts, if there is one.
    state: Option<(PathBuf, CountedGames)>,
    /// The shard files.
    shards: Vec<(PathBuf, ShardResult)>,
}

impl Held {
    /// Whether neither a state nor a shard holds a pair.
    pub(super) fn is_empty(&self) -> bool {
        self.state.is_none() && self.shards.is_empty()
    }

    /// The shard count the fleet cut the stage into (the first shard's), if a shard has played.
    pub(super) fn shard_count(&self) -> Option<u32> {
        self.shards.first().map(|(_, s)| s.fingerprint.shards)
    }

    /// The pairs of the state file, the ones taken over.
    fn taken(&self) -> &[PairOutcome] {
        self.state
            .as_ref()
            .map_or(&[][..], |(_, counted)| counted.pairs.as_slice())
    }

    /// The pairs the shard files hold.
    fn shard_pairs(&self) -> u64 {
        self.shards.iter().map(|(_, s)| s.pairs.len() as u64).sum()
    }

    /// The gap-free prefix of the pairs taken over: where round 1 starts.
    pub(super) fn taken_prefix(&self) -> u64 {
        let mut indices: Vec<u64> = self.taken().iter().map(|p| p.index).collect();
        indices.sort_unstable();
        indices
            .iter()
            .enumerate()
            .take_while(|&(i, &index)| index == i as u64)
            .count() as u64
    }

    /// Every pair once — the state's in the order it counted them, then the shards' in pair
    /// order — with the games that show them: what a run of the same match resumes from. Each
    /// shard is checked against the match, its tally and its games; a pair in two places is
    /// refused.
    pub(super) fn counted_games(&self) -> Result<CountedGames, StageError> {
        let merged = self.merge(None)?;
        let taken: std::collections::HashSet<u64> =
            self.taken().iter().map(|pair| pair.index).collect();
        let mut pairs = self.taken().to_vec();
        pairs.extend(
            merged
                .pairs
                .iter()
                .filter(|pair| !taken.contains(&pair.index)),
        );
        let mut pgn = self.state_pgn().to_vec();
        for (file, _) in &self.shards {
            pgn.extend_from_slice(&shard_pgn(file)?);
        }
        Ok(CountedGames {
            pairs,
            games_played: merged.games_played,
            pgn,
        })
    }

    /// The state's PGN: the games of the pairs taken over (empty without a state).
    fn state_pgn(&self) -> &[u8] {
        self.state
            .as_ref()
            .map_or(&[][..], |(_, counted)| counted.pgn.as_slice())
    }

    /// Every pair once, the state's first (each shard checked against the match, its tally and
    /// its games; a pair in two places refused), with the SPRT's `looks`.
    fn merge(&self, looks: Option<Looks>) -> Result<Merged, StageError> {
        // The constitution fixes the match; the fleet chooses how to cut it, so the plan takes
        // its shard count from the first shard and every other shard must be cut the same way.
        let expected = Fingerprint {
            shards: self.shard_count().unwrap_or(1),
            ..self.fingerprint.clone()
        };
        let prior = self.state.as_ref().map(|(file, counted)| Prior {
            file,
            pairs: &counted.pairs,
            games_played: counted.games_played,
        });
        merge_onto(prior, &self.shards, &expected, looks).map_err(fail)
    }
}

/// The PGN published next to the shard result `file`.
fn shard_pgn(file: &Path) -> Result<Vec<u8>, StageError> {
    let path = crate::play::shard_games::pgn_path(file);
    std::fs::read(&path).map_err(|e| fail(format!("{}: {e}", path.display())))
}

/// Plays (or merges) the stage as `mode` says. A finished stage in which the predecessor
/// faulted past the constitution's limits is void, an error rather than evidence; one in which
/// the candidate did ends `candidate_faulted`, not passed (Article 6.6).
pub fn run(
    plan: &StagePlan,
    mode: Mode,
    reporter: &StepReporter,
) -> Result<StageProgress, StageError> {
    let progress = match mode {
        Mode::Local => play_local(plan, reporter).map(|o| StageProgress::Finished(Box::new(o))),
        Mode::Shard(shard) => play_shard(plan, shard, reporter),
        Mode::NoPlay { round_minutes } => merge_round(plan, round_minutes),
    }?;
    if let StageProgress::Finished(outcome) = &progress
        && let (Some(limits), Some(faults)) = (plan.fault_limits, outcome.record.faults)
        && let Some(reason) = limits.void_reason(&faults, outcome.record.games)
    {
        return Err(fail(format!(
            "stage void: {reason}; its games are no evidence (faults in {})",
            plan.outcome_file().display()
        )));
    }
    Ok(progress)
}

/// The SPRT of a stage as the runner's stop rule: looks at batch boundaries, records the LLR
/// path, and may stop once the minimum is played.
fn play_local(plan: &StagePlan, reporter: &StepReporter) -> Result<StageOutcome, StageError> {
    if let Some(outcome) = read_finished(plan)? {
        return Ok(outcome);
    }
    // Pairs taken over from runs that looked on a grid (played in rounds) are looked at on it
    // first, from its start, in pair order, as their next merge would have: once, before this
    // run plays its first game. It may decide the stage at once.
    if read_started(plan)?.is_none()
        && plan.looks_from_file().exists()
        && let Merge::Finished(outcome) = merged(plan)?
    {
        return Ok(*outcome);
    }
    let started = mark_started(plan)?;
    let config = plan.match_config(Shard::WHOLE, plan.state(), plan.pgn());
    // Pairs taken over were looked at, undecided: by the runs that played them (a local run
    // counting them) or just above on their grid. The runner looks after them.
    let taken = read_optional::<AdoptedPairs>(&plan.adopted_file())?.map_or(0, |a| a.pairs);
    let mut sprt = SprtStop::new(plan.params, plan.batch, plan.min_pairs)
        .map_err(fail)?
        .looking_after(taken);
    if plan.can_be_indistinguishable() {
        sprt = sprt.stopping_when_indistinguishable();
    }
    let report = play(config, Some(&mut sprt), plan.max_pairs, reporter)?;
    if let Some(error) = sprt.error() {
        return Err(fail(format!("SPRT: {error}")));
    }
    let decision = sprt.sequential().decision();
    let state = match decision {
        // The flag is the last look's; pairs a resume added after it must repeat too.
        _ if sprt.indistinguishable()
            && report.stopped_early
            && report.tally.all_pairs_identical() =>
        {
            StageState::Indistinguishable
        }
        SprtDecision::AcceptH1 if report.stopped_early => StageState::AcceptH1,
        SprtDecision::AcceptH0 if report.stopped_early => StageState::AcceptH0,
        _ if report.tally.pairs >= plan.max_pairs => StageState::Undecided,
        _ => {
            return Err(fail(format!(
                "the match ended after {} of {} pairs without a decision",
                report.tally.pairs, plan.max_pairs
            )));
        }
    };
    let outcome = finish(
        plan,
        state,
        (sprt.sequential().decision_bounds(), plan.batch),
        &report.pairs,
        sprt.path().to_vec(),
        report.pgn_sha256.clone(),
        started,
        report.games_played,
        report.tally.faults,
    )?;
    Ok(outcome)
}

fn play(
    config: MatchConfig,
    rule: Option<&mut dyn StopRule>,
    max_pairs: u64,
    reporter: &StepReporter,
) -> Result<MatchReport, StageError> {
    let bar = reporter.bar(max_pairs, "pairs");
    let mut observer = |progress: &MatchProgress| {
        let t = &progress.tally;
        bar.set_position(t.pairs);
        bar.set_message(format!(
            "W{} D{} L{} penta {:?}",
            t.wins, t.draws, t.losses, t.pentanomial
        ));
    };
    let report = run_match(config, rule, &mut observer).map_err(fail);
    bar.finish_and_clear();
    report
}

fn play_shard(
    plan: &StagePlan,
    shard: Shard,
    reporter: &StepReporter,
) -> Result<StageProgress, StageError> {
    // A stage the merge has decided is done: the pipeline goes on to the next one. Deciding is
    // the merge's job alone; a shard never reads the other shards' files, which may be mid-write.
    if let Some(outcome) = read_finished(plan)? {
        return Ok(StageProgress::Finished(Box::new(outcome)));
    }
    let round = plan.round()?.ok_or_else(|| {
        fail(format!(
            "stage {}: no round is planned in {}; run `oracle verify … --no-play` first, which \
             binds the run and plans each round",
            plan.index,
            plan.shards_dir.display()
        ))
    })?;
    let stem = format!("shard-{}-of-{}", shard.index, shard.count);
    let _held = round::lock_shard(&plan.shards_dir.join(format!("{stem}.lock"))).map_err(fail)?;
    // The pairs taken over from earlier runs are counted in the stage's state: no shard plays
    // them again (the merge would refuse the pair twice).
    let taken = plan.taken()?;
    mark_started(plan)?;
    // The runner works on files of its own; the merge reads the shard result and its PGN, which
    // are published together once this run ends, so a task killed mid-round leaves the last
    // published pair of files intact and its rerun resumes from the runner's state.
    let result_file = plan.shards_dir.join(format!("{stem}.json"));
    let working_pgn = plan.shards_dir.join(format!("{stem}.state.pgn"));
    let mut config = plan.match_config(
        shard,
        plan.shards_dir.join(format!("{stem}.state.json")),
        working_pgn.clone(),
    );
    let end = round.end(shard.count).min(plan.max_pairs);
    let taken_here = taken
        .iter()
        .filter(|&&i| i < end && shard.contains(i))
        .count() as u64;
    let round_pairs = (0..end)
        .filter(|&i| shard.contains(i))
        .count()
        .saturating_sub(taken_here as usize) as u64;
    config.pairs_below = Some(end);
    config.counted_elsewhere = taken;
    let report = play(config, None, plan.max_pairs, reporter)?;
    let result = ShardResult::of(&report);
    let json = serde_json::to_vec_pretty(&result).expect("shard results serialize");
    copy_atomically(
        &working_pgn,
        &crate::play::shard_games::pgn_path(&result_file),
    )
    .map_err(|e| fail(e.to_string()))?;
    write_atomically(&result_file, &json).map_err(|e| fail(e.to_string()))?;
    Ok(StageProgress::ShardPlayed {
        reason: format!(
            "shard {}/{} of stage {} has {} pairs, {} of round {} ({} a shard) in {}",
            shard.index,
            shard.count,
            plan.index,
            report.tally.pairs,
            if report.tally.pairs >= round_pairs {
                "all"
            } else {
                "not all"
            },
            round.number,
            round.pairs_per_shard,
            result_file.display()
        ),
    })
}

fn merge_round(
    plan: &StagePlan,
    round_minutes: Option<NonZeroU32>,
) -> Result<StageProgress, StageError> {
    let (shards, contiguous_pairs, taken, summary) = match merged(plan)? {
        Merge::Finished(outcome) => return Ok(StageProgress::Finished(outcome)),
        Merge::Open {
            shards,
            contiguous_pairs,
            taken,
            summary,
            grid,
        } => {
            // Every merge of this run makes its looks again on this grid from its start; a run
            // that takes these pairs over does the same.
            let json = serde_json::to_vec_pretty(&grid).expect("looks serialize");
            write_atomically(&plan.dir.join(StagePlan::LOOKS), &json)
                .map_err(|e| fail(e.to_string()))?;
            (shards, contiguous_pairs, taken, summary)
        }
        Merge::NoShards => (
            0,
            0,
            0,
            format!("stage {}: no shard has played yet", plan.index),
        ),
    };
    let previous = plan.round()?;
    // A round is finished when the merged pairs reach its end with no gap: every shard played
    // its share. Until then the same round is planned again, and only its missing pairs are
    // played.
    let finished = previous.is_some_and(|round| {
        shards > 0 && contiguous_pairs >= round.end(shards).min(plan.max_pairs)
    });
    let size = RoundSize::new(
        round_minutes,
        plan.batch,
        plan.seconds_per_game,
        plan.concurrency,
    );
    let next = Round::next(previous.as_ref(), finished, size, taken);
    if previous != Some(next) {
        let json = serde_json::to_vec_pretty(&next).expect("rounds serialize");
        write_atomically(&round::record_file(&plan.shards_dir), &json)
            .map_err(|e| fail(e.to_string()))?;
    }
    Ok(StageProgress::NeedsRound {
        reason: format!("{summary}; {}", next.describe()),
    })
}

/// What the shard files of a stage show.
enum Merge {
    /// No shard has played, and no pair was taken over.
    NoShards,
    /// Decided, or undecided at the maximum.
    Finished(Box<StageOutcome>),
    /// Not decided yet.
    Open {
        /// The shard count the fleet cut the stage into (0 before any shard has played).
        shards: u32,
        /// The gap-free prefix of pairs merged.
        contiguous_pairs: u64,
        /// The gap-free prefix of the pairs taken over, where round 1 starts.
        taken: u64,
        /// What was merged, in one line.
        summary: String,
        /// The grid of the looks.
        grid: LookGrid,
    },
}

/// The stage as the pairs in `--out` show it: those taken over from earlier runs (the stage's
/// state), first, and the shard files. The SPRT looks on the grid of the runs that played the
/// pairs taken over, from its start and at its spacing; without one, after the pairs taken over
/// (a local run's, which it looked at itself), once a round (a pair a shard) once shards have
/// played, else once a batch. It may decide at once. Open, it names its grid, which the merge
/// records for a run that takes these pairs over.
fn merged(plan: &StagePlan) -> Result<Merge, StageError> {
    if let Some(outcome) = read_finished(plan)? {
        return Ok(Merge::Finished(Box::new(outcome)));
    }
    let held = plan.held(&plan.dir, &plan.shards_dir)?;
    if held.is_empty() {
        return Ok(Merge::NoShards);
    }
    let taken = held.taken_prefix();
    let looks_from = read_optional::<LookGrid>(&plan.looks_from_file())?;
    let looks = Looks {
        params: plan.params,
        // The grid of the pairs taken over holds for the whole stage (looks need not fall on
        // round boundaries): one grid, whatever this run's fleet.
        every: match (looks_from, held.shard_count()) {
            (Some(grid), _) => grid.every.max(1),
            (None, Some(shards)) => u64::from(shards),
            (None, None) => plan.batch,
        },
        after: looks_from.map_or(taken, |grid| grid.after.min(taken)),
        min_pairs: plan.min_pairs,
    };
    let merged = held.merge(Some(looks))?;
    let decision = merged.sprt_decision.unwrap_or(SprtDecision::Continue);
    let pairs = merged.tally.pairs;
    let state = match decision {
        _ if plan.can_be_indistinguishable()
            && pairs >= plan.min_pairs
            && merged.tally.all_pairs_identical() =>
        {
            Some(StageState::Indistinguishable)
        }
        SprtDecision::AcceptH1 if pairs >= plan.min_pairs => Some(StageState::AcceptH1),
        SprtDecision::AcceptH0 if pairs >= plan.min_pairs => Some(StageState::AcceptH0),
        _ if merged.contiguous_pairs >= plan.max_pairs => Some(StageState::Undecided),
        _ => None,
    };
    // The bounds the last look judged by, the overshoot correction applied.
    let bounds = merged.sprt.as_ref().map_or(
        (plan.params.lower_bound(), plan.params.upper_bound()),
        SequentialSprt::decision_bounds,
    );
    let Some(state) = state else {
        let taken_over = match held.taken().len() {
            0 => String::new(),
            n => format!(" ({n} taken over)"),
        };
        return Ok(Merge::Open {
            shards: held.shard_count().unwrap_or(0),
            contiguous_pairs: merged.contiguous_pairs,
            taken,
            grid: LookGrid {
                after: looks.after,
                every: looks.every,
            },
            summary: format!(
                "stage {}: {} shards merged, {} contiguous pairs{taken_over}, LLR {:.2} in [{:.2}, {:.2}]: another round",
                plan.index,
                merged.shards.len(),
                merged.contiguous_pairs,
                merged.sprt.as_ref().map_or(0.0, SequentialSprt::llr),
                bounds.0,
                bounds.1
            ),
        });
    };
    let started = match read_started(plan)? {
        Some(ms) => ms,
        // Decided on the pairs taken over alone: this merge began the stage.
        None if held.shard_count().is_none() => mark_started(plan)?,
        None => 0,
    };
    let path = llr_path(&merged.pairs, plan.params, looks.every)?;
    // The stage's games file, which the record's pgn_sha256 names: every pair the stage holds,
    // the state's PGN first and whole (the state still reads it as its prefix), then each
    // shard's; the record counts the lowest `pairs` of them, as a replay reads them. Read back
    // against the pairs, in case a file changed since the merge checked it; written before the
    // end that names it (an interrupted merge writes the same file again).
    let held_games = held.counted_games()?;
    let names = [plan.engines[0].name.as_str(), plan.engines[1].name.as_str()];
    check_pairs(
        &plan.outcome_file(),
        &plan.pgn(),
        &held_games.pgn[..],
        names,
        &held_games.pairs,
    )
    .map_err(fail)?;
    write_atomically(&plan.pgn(), &held_games.pgn).map_err(|e| fail(e.to_string()))?;
    let pgn_sha256 = Some(crate::integrity::sha256_hex(&held_games.pgn));
    let outcome = finish(
        plan,
        state,
        (bounds, looks.every),
        &merged.pairs,
        path,
        pgn_sha256,
        started,
        merged.games_played,
        merged.tally.faults,
    )?;
    Ok(Merge::Finished(Box::new(outcome)))
}

/// The LLR after every `every` pairs of `pairs` (in pair order), from (0, 0).
fn llr_path(
    pairs: &[PairOutcome],
    params: SprtParams,
    every: u64,
) -> Result<Vec<(u64, f64)>, StageError> {
    let mut counts = PentanomialCounts([0; 5]);
    let mut path = vec![(0, 0.0)];
    for (n, pair) in pairs.iter().enumerate() {
        counts.0[pair.bucket()] += 1;
        let n = n as u64 + 1;
        if n.is_multiple_of(every.max(1)) || n == pairs.len() as u64 {
            path.push((n, crate::stats::llr(&counts, &params).map_err(fail)?));
        }
    }
    Ok(path)
}

/// `path` with the final LLR as its last point: a stage that stops at its maximum between two
/// looks counted pairs no look recorded, and its report must show the LLR its record holds.
fn ending_at(mut path: Vec<(u64, f64)>, pairs: u64, llr: f64) -> Vec<(u64, f64)> {
    if path.last().is_none_or(|&(n, _)| n != pairs) {
        path.push((pairs, llr));
    }
    path
}

#[allow(clippy::too_many_arguments)]
fn finish(
    plan: &StagePlan,
    state: StageState,
    ((lower, upper), look_pairs): ((f64, f64), u64),
    pairs: &[PairOutcome],
    llr_path: Vec<(u64, f64)>,
    pgn_sha256: Option<String>,
    started_at_unix_ms: u64,
    games_played: u64,
    faults: [FaultCounts; 2],
) -> Result<StageOutcome, StageError> {
    let faults = StageFaults {
        candidate: faults[0],
        predecessor: faults[1],
    };
    let mut counts = PentanomialCounts([0; 5]);
    for pair in pairs {
        counts.0[pair.bucket()] += 1;
    }
    // A candidate that faulted past the constitution's limit fails the stage, whatever the SPRT
    // said (Article 6.6): its faulted games are its losses, never a reason to play again.
    let candidate_failed = plan.fault_limits.is_some_and(|limits| {
        limits
            .candidate_failure(&faults, counts.pairs() * 2)
            .is_some()
    });
    let state = if candidate_failed {
        StageState::CandidateFaulted
    } else {
        state
    };
    let status = sprt_status(&counts, &plan.params).map_err(fail)?;
    let llr_path = ending_at(llr_path, counts.pairs(), status.llr);
    let pgn_sha256 = pgn_sha256
        .map(|digest| Sha256Hex::try_from(digest).map_err(fail))
        .transpose()?;
    let record = StageRecord {
        name: plan.stage.name.clone(),
        tc: plan.stage.tc,
        book: plan.stage.book.to_string_lossy().into_owned(),
        book_sha256: plan.book_sha256.clone(),
        elo0: plan.params.elo0,
        elo1: plan.params.elo1,
        alpha: plan.params.alpha,
        beta: plan.params.beta,
        batch_size: u32::try_from(plan.batch).unwrap_or(u32::MAX),
        look_pairs: (look_pairs != plan.batch).then_some(look_pairs),
        max_games: plan.max_pairs * 2,
        pentanomial: counts.0,
        pairs: counts.pairs(),
        games: counts.pairs() * 2,
        llr: status.llr,
        lower,
        upper,
        state,
        nelo: status.nelo,
        nelo_ci95: status.nelo_ci95,
        pgn_sha256,
        faults: Some(faults),
        adopted: read_optional(&plan.adopted_file())?,
    };
    let report = StageReport::from_record(&record, llr_path);
    let outcome = StageOutcome {
        record,
        report,
        started_at_unix_ms,
        games_played,
        engines: plan.engine_sha256.clone(),
    };
    let json = serde_json::to_vec_pretty(&outcome).expect("stage outcomes serialize");
    let file = plan.outcome_file();
    write_atomically(&file, &json).map_err(|e| fail(e.to_string()))?;
    Ok(outcome)
}

/// The end an earlier run of the same match recorded for this stage, as this run's: the pairs
/// taken over are all the stage's (`counted`, recorded in `adopted`), so the decision stands as
/// it was taken, at that run's looks; its games are this run's stage PGN, and this run starts
/// the stage now. Written to [`StagePlan::adopted_end`], to be put in place once the state is.
pub(super) fn carry_end(
    plan: &StagePlan,
    end: StageOutcome,
    adopted: &AdoptedPairs,
    counted: &CountedGames,
) -> Result<(), StageError> {
    let mut record = end.record;
    record.adopted = Some(adopted.clone());
    record.pgn_sha256 =
        Some(Sha256Hex::try_from(crate::integrity::sha256_hex(&counted.pgn)).map_err(fail)?);
    let outcome = StageOutcome {
        report: StageReport::from_record(&record, end.report.llr_path),
        record,
        started_at_unix_ms: mark_started(plan)?,
        games_played: counted.games_played,
        engines: plan.engine_sha256.clone(),
    };
    let json = serde_json::to_vec_pretty(&outcome).expect("stage outcomes serialize");
    write_atomically(&plan.adopted_end(), &json).map_err(|e| fail(e.to_string()))
}

/// A finished stage of an earlier invocation: every mode returns it instead of playing or
/// merging again, so a stage is decided once.
fn read_finished(plan: &StagePlan) -> Result<Option<StageOutcome>, StageError> {
    plan.finished_in(&plan.outcome_file())
        .map_err(|e| fail(format!("{e}; use a fresh --out")))
}

impl StagePlan {
    /// The end of this stage recorded in `file` (this run's, or an earlier run's of the same
    /// match), checked to be of this plan and to follow from its counts; `None` without one.
    pub(super) fn finished_in(&self, file: &Path) -> Result<Option<StageOutcome>, StageError> {
        let plan = self;
        let Some(outcome) = read_optional::<StageOutcome>(file)? else {
            return Ok(None);
        };
        let record = &outcome.record;
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits();
        let fields = [
            ("engines", outcome.engines == plan.engine_sha256),
            ("record.name", record.name == plan.stage.name),
            ("record.tc", record.tc == plan.stage.tc),
            ("record.book_sha256", record.book_sha256 == plan.book_sha256),
            ("record.elo0", same(record.elo0, plan.params.elo0)),
            ("record.elo1", same(record.elo1, plan.params.elo1)),
            ("record.alpha", same(record.alpha, plan.params.alpha)),
            ("record.beta", same(record.beta, plan.params.beta)),
            (
                "record.batch_size",
                u64::from(record.batch_size) == plan.batch,
            ),
            ("record.max_games", record.max_games == plan.max_pairs * 2),
        ];
        if let Some((field, _)) = fields.iter().find(|(_, equal)| !equal) {
            return Err(fail(format!(
                "{}: {field} is not this run's (the binding's engines and the stage's plan)",
                file.display()
            )));
        }
        if let Some(check) = replay_stage_record(record).into_iter().find(|c| !c.pass) {
            return Err(fail(format!(
                "{}: {} does not follow from its counts: {}",
                file.display(),
                check.name,
                check.detail
            )));
        }
        Ok(Some(outcome))
    }
}

/// A JSON file of the stage directory, `None` when it does not exist.
pub(super) fn read_optional<T: serde::de::DeserializeOwned>(
    file: &Path,
) -> Result<Option<T>, StageError> {
    match read_bounded(file, MAX_RECORD_BYTES) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| fail(format!("{}: {e}", file.display()))),
        Err(e) if e.reason.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// Writes the stage's start time once, before its first game; returns it.
fn mark_started(plan: &StagePlan) -> Result<u64, StageError> {
    if let Some(ms) = read_started(plan)? {
        return Ok(ms);
    }
    let (_, ms) = timestamp(SystemTime::now());
    let file = plan.started_file();
    let json = serde_json::to_vec(&Started {
        started_at_unix_ms: ms,
    })
    .expect("serializes");
    write_atomically(&file, &json).map_err(|e| fail(e.to_string()))?;
    Ok(ms)
}

fn read_started(plan: &StagePlan) -> Result<Option<u64>, StageError> {
    Ok(read_optional::<Started>(&plan.started_file())?.map(|s| s.started_at_unix_ms))
}

/// The SPRT of a stage: the path's bounds in nElo with the profile's error rates.
pub(super) fn stage_sprt_params(
    stage: &Stage,
    profile: &Profile,
    path: PathKind,
) -> Result<SprtParams, StageError> {
    let bounds = match path {
        PathKind::Randfall => stage.bounds.randfall,
        _ => stage.bounds.standard,
    };
    SprtParams::new(
        bounds.elo0,
        bounds.elo1,
        profile.alpha.get(),
        profile.beta.get(),
        Model::Normalized,
    )
    .map_err(|e| fail(format!("stage `{}`: {e}", stage.name)))
}

/// The record of a stage that was not played because an earlier one did not pass.
pub fn not_run(
    stage: &Stage,
    profile: &Profile,
    path: PathKind,
) -> Result<StageRecord, StageError> {
    let params = stage_sprt_params(stage, profile, path)?;
    let book_sha256 = stage
        .book_sha256
        .clone()
        .ok_or_else(|| fail(format!("stage `{}`: its book is not pinned", stage.name)))?;
    Ok(StageRecord::not_run(
        stage.name.clone(),
        stage.tc,
        stage.book.to_string_lossy().into_owned(),
        book_sha256,
        &params,
        profile.batch_size.get(),
        stage.max_games.get(),
    ))
}

#[cfg(test)]
mod tests {
    use super::ending_at;

    #[test]
    fn a_path_ends_at_the_final_pairs_and_llr() {
        let looks = vec![(0, 0.0), (8, 0.5), (2496, 2.15)];
        assert_eq!(
            ending_at(looks.clone(), 2500, 2.28),
            vec![(0, 0.0), (8, 0.5), (2496, 2.15), (2500, 2.28)],
            "undecided at 2,500 pairs, four after the last look"
        );
        assert_eq!(
            ending_at(looks.clone(), 2496, 2.15),
            looks,
            "a look at the end"
        );
        assert_eq!(ending_at(Vec::new(), 0, 0.0), vec![(0, 0.0)]);
    }
}
