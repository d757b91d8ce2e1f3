//! The auditor's replay of an entry's games (`oracle register replay ID --games K`): at a node
//! limit a game is a function of the two binaries, the opening, the colours and the limit, so
//! K pairs chosen at random from each node stage are played again with the rebuilt binaries and
//! compared move by move with the stage's PGN kept in `evidence/T-NNNN/`.
//!
//! The match is the one `oracle verify` played: the stage plan is made again from the recorded
//! constitution and the entry's binaries (the same seed, book order, limit and adjudication),
//! and every replayed game gets fresh engine processes. Stages at a clock are skipped: their
//! games depend on timing and never repeat exactly.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Color, Position};
use thiserror::Error;

use super::binding::{BindingRecord, BoundBinary};
use super::out::OutDir;
use super::recorded::{RecordedError, RecordedGame, parse_games, read_pgn};
use super::replay::{rebuild, recorded_constitution};
use super::resolve;
use super::stage::StagePlan;
use crate::governance::entry::{BinaryRecord, Entry, IsolationRecord, StageRecord, StageState};
use crate::governance::hash::Sha256Hex;
use crate::governance::register::Audit;
use crate::play::book::{Book, Opening};
use crate::play::game::{GameRecord, GameResult};
use crate::play::runner::{MatchConfig, play_single_game};
use crate::play::shard::Shard;

/// What to replay.
#[derive(Debug, Clone)]
pub struct GamesRequest<'a> {
    /// The repository (its history rebuilds the binaries; its `evidence/` holds the PGNs).
    pub repo: &'a Path,
    /// The entry, as the register holds it.
    pub entry: &'a Entry,
    /// Pairs to replay per node stage.
    pub pairs: u64,
    /// Seed of the choice. Never one the entry's author could know when writing the evidence
    /// (a function of the entry, say): they could then forge only the pairs it leaves out.
    pub seed: u64,
    /// The build cache.
    pub cache_dir: &'a Path,
}

/// Why nothing could be replayed: bad input or missing evidence (exit 2).
#[derive(Debug, Error)]
pub enum GamesError {
    /// The entry has no predecessor (genesis) or no stage at a node limit with games.
    #[error("{0}")]
    Nothing(String),
    /// The repository, the recorded constitution, a book or the plan of a stage is unusable.
    #[error("{0}")]
    Rules(String),
    /// A stage PGN is missing, unreadable or not the oracle's PGN.
    #[error(transparent)]
    Evidence(#[from] RecordedError),
    /// A recorded binary could not be rebuilt at all.
    #[error("rebuilding the {role} {commit}: {reason}")]
    Rebuild {
        /// `candidate` or `predecessor`.
        role: &'static str,
        /// The recorded commit.
        commit: String,
        /// The build's error.
        reason: String,
    },
    /// A temporary directory or file could not be made.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
}

/// The replay of an entry's games.
#[derive(Debug, Clone, Serialize)]
pub struct GamesReplay {
    /// The seed the choice was made from (`--seed`, or drawn afresh by the command), as text:
    /// a JSON reader that holds numbers as doubles would round it, and the choice with it.
    pub seed: String,
    /// Both rebuilt binaries, against the entry's record.
    pub rebuilds: Vec<RebuildCheck>,
    /// Every stage in the entry's order.
    pub stages: Vec<StageReplay>,
}

impl GamesReplay {
    /// Whether the binaries were rebuilt exactly and every replayed game is the recorded one.
    #[must_use]
    pub fn ok(&self) -> bool {
        self.rebuilds.iter().all(|r| r.pass) && self.stages.iter().all(StageReplay::ok)
    }
}

/// What `oracle register replay ID --games K` reports: the register's state and the games
/// replay.
#[derive(Debug, Clone, Serialize)]
pub struct EntryGamesReplay {
    /// Whether the register verifies and every replayed game is the recorded one.
    pub ok: bool,
    /// The entry, as given.
    pub id: String,
    /// Whether the register verifies.
    pub register_ok: bool,
    /// The games replay.
    pub replay: GamesReplay,
    /// The register's state in one line ([`Audit::state_line`]).
    #[serde(skip)]
    register_state: String,
}

impl EntryGamesReplay {
    /// The report of `replay`, of entry `id` of the register `audit`.
    #[must_use]
    pub fn new(audit: &Audit, id: String, replay: GamesReplay) -> EntryGamesReplay {
        EntryGamesReplay {
            ok: audit.ok() && replay.ok(),
            id,
            register_ok: audit.ok(),
            replay,
            register_state: audit.state_line(),
        }
    }
}

/// The games replay for people: the choice, then per stage each game's outcome.
impl fmt::Display for EntryGamesReplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = |pass: bool| if pass { "pass" } else { "FAIL" };
        let replay = &self.replay;
        writeln!(
            f,
            "{} register: {}",
            mark(self.register_ok),
            self.register_state
        )?;
        writeln!(
            f,
            "seed {} (repeat the choice with the same --seed)",
            replay.seed
        )?;
        for check in &replay.rebuilds {
            writeln!(
                f,
                "{} rebuild {}: recorded {}, rebuilt {}",
                mark(check.pass),
                check.role,
                check.recorded,
                check.rebuilt
            )?;
        }
        let (mut identical, mut total) = (0, 0);
        for stage in &replay.stages {
            write!(f, "stage {} ({}): ", stage.name, stage.tc)?;
            match &stage.outcome {
                StageOutcome::Skipped { reason } => writeln!(f, "skipped, {reason}")?,
                StageOutcome::Failed { reason } => writeln!(f, "FAIL {reason}")?,
                StageOutcome::Replayed {
                    pgn,
                    seed,
                    pairs,
                    games,
                } => {
                    writeln!(
                        f,
                        "{} matches pgn_sha256; pairs {pairs:?} (0-based, stage seed {seed})",
                        pgn.display()
                    )?;
                    for game in games {
                        total += 1;
                        let round = format!("round {}.{}", game.pair + 1, game.game);
                        match &game.difference {
                            None => {
                                identical += 1;
                                writeln!(f, "  {round}: identical ({} plies)", game.plies)?;
                            }
                            Some(d) => writeln!(
                                f,
                                "  {round}: DIFFERS at ply {}: expected {}, played {}",
                                d.ply, d.expected, d.played
                            )?,
                        }
                    }
                }
            }
        }
        writeln!(
            f,
            "replay {} --games: {identical} of {total} games identical{}",
            self.id,
            if self.ok { "" } else { "; failed" }
        )
    }
}

/// A rebuilt binary against the entry's record.
#[derive(Debug, Clone, Serialize)]
pub struct RebuildCheck {
    /// `candidate` or `predecessor`.
    pub role: &'static str,
    /// Whether the rebuilt sha256 is the recorded one.
    pub pass: bool,
    /// The recorded sha256.
    pub recorded: String,
    /// The rebuilt sha256.
    pub rebuilt: String,
}

/// One stage of the entry.
#[derive(Debug, Clone, Serialize)]
pub struct StageReplay {
    /// The stage's name.
    pub name: String,
    /// Its time control or node limit.
    pub tc: String,
    /// What happened to it.
    #[serde(flatten)]
    pub outcome: StageOutcome,
}

impl StageReplay {
    /// Whether nothing in this stage contradicts the entry.
    #[must_use]
    pub fn ok(&self) -> bool {
        match &self.outcome {
            StageOutcome::Skipped { .. } => true,
            StageOutcome::Failed { .. } => false,
            StageOutcome::Replayed { games, .. } => games.iter().all(|g| g.identical()),
        }
    }
}

/// What happened to a stage.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StageOutcome {
    /// Not replayable (a clock, or not run).
    Skipped {
        /// Why.
        reason: String,
    },
    /// Its evidence contradicts the entry (PGN hash, pair count) or the binaries differ.
    Failed {
        /// Why.
        reason: String,
    },
    /// Pairs were chosen and played again.
    Replayed {
        /// The PGN in evidence.
        pgn: PathBuf,
        /// The seed of this stage's choice.
        seed: u64,
        /// The chosen pair indices (0-based, as in the runner's state; `Round` is one more).
        pairs: Vec<u64>,
        /// Each replayed game.
        games: Vec<GameComparison>,
    },
}

/// One replayed game against its record.
#[derive(Debug, Clone, Serialize)]
pub struct GameComparison {
    /// The pair index (0-based).
    pub pair: u64,
    /// 1 or 2: the candidate has White in game 1.
    pub game: usize,
    /// Plies of the recorded game (book moves included).
    pub plies: usize,
    /// `None` when identical; otherwise the first difference.
    pub difference: Option<Difference>,
}

impl GameComparison {
    /// Whether the replayed game is the recorded one.
    #[must_use]
    pub fn identical(&self) -> bool {
        self.difference.is_none()
    }
}

/// Where a replayed game first departs from its record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// 1-based ply from the root (book moves included); 0 for the setup (opening, colours).
    pub ply: usize,
    /// What the record has there.
    pub expected: String,
    /// What the replay did.
    pub played: String,
}

/// Replays `request.pairs` pairs of each node stage of the entry.
///
/// # Errors
/// [`GamesError`] when nothing can be compared: a genesis entry, no node stage with games, a
/// missing or unreadable PGN, an unusable repository or constitution, a failed build.
pub fn replay_games(request: &GamesRequest<'_>) -> Result<GamesReplay, GamesError> {
    let entry = request.entry;
    let id = entry.id.map(|id| id.to_string()).unwrap_or_default();
    let predecessor = entry.predecessor.as_ref().ok_or_else(|| {
        GamesError::Nothing(format!("{id} is the genesis entry: it played no games"))
    })?;
    let replayable: Vec<(usize, &StageRecord)> = entry
        .stages
        .iter()
        .enumerate()
        .filter(|(_, stage)| skip_reason(stage).is_none())
        .collect();
    if replayable.is_empty() {
        return Err(GamesError::Nothing(format!(
            "{id} has no stage at a node limit with games to replay"
        )));
    }
    // Every PGN is read before anything is built: missing evidence is named at once.
    let evidence = request
        .repo
        .join(crate::governance::register::EVIDENCE_DIR)
        .join(&id);
    let mut recorded = BTreeMap::new();
    for &(index, stage) in &replayable {
        let path = stage_pgn(&evidence, index + 1, &stage.name);
        recorded.insert(index, (read_pgn(&path)?, path));
    }
    let repo = resolve::open(request.repo).map_err(|e| GamesError::Rules(e.to_string()))?;
    let (constitution, constitution_sha256) =
        recorded_constitution(&repo, entry).map_err(GamesError::Rules)?;
    if constitution_sha256 != entry.constitution_sha256 {
        return Err(GamesError::Rules(format!(
            "the recorded constitution hashes to {constitution_sha256}, the entry records {}",
            entry.constitution_sha256
        )));
    }
    let profile_name = entry.profile.as_deref().unwrap_or_default();
    let profile = constitution
        .profile(profile_name)
        .map_err(|e| GamesError::Rules(format!("{id}: {e}")))?;

    let mut rebuilds = Vec::new();
    let mut binaries = Vec::new();
    for (role, record) in [
        ("candidate", &entry.candidate),
        ("predecessor", predecessor),
    ] {
        let outcome =
            rebuild(request.repo, record, &constitution, request.cache_dir).map_err(|e| {
                GamesError::Rebuild {
                    role,
                    commit: record.commit.to_string(),
                    reason: e.to_string(),
                }
            })?;
        rebuilds.push(RebuildCheck {
            role,
            pass: outcome.sha256 == record.binary_sha256.as_str(),
            recorded: record.binary_sha256.to_string(),
            rebuilt: outcome.sha256.clone(),
        });
        binaries.push(bound(record, outcome.binary));
    }
    let seed = request.seed.to_string();
    let mut replay = GamesReplay {
        seed: seed.clone(),
        rebuilds,
        stages: Vec::new(),
    };
    let scratch = tempfile::tempdir().map_err(|e| GamesError::Io {
        path: std::env::temp_dir(),
        reason: e.to_string(),
    })?;
    let out = OutDir::at(scratch.path());
    let binding = BindingRecord {
        bound_at: entry.bound_at.as_str().to_owned(),
        bound_at_unix_ms: 0,
        toolchain: entry.toolchain.clone(),
        profile: profile_name.to_owned(),
        constitution_sha256: entry.constitution_sha256.to_string(),
        candidate: binaries[0].clone(),
        predecessor: binaries[1].clone(),
        isolation: entry.isolation.clone().unwrap_or(IsolationRecord {
            build: String::new(),
            play: String::new(),
        }),
    };
    for (index, stage) in entry.stages.iter().enumerate() {
        let outcome = if let Some(reason) = skip_reason(stage) {
            StageOutcome::Skipped { reason }
        } else if !replay.rebuilds.iter().all(|r| r.pass) {
            StageOutcome::Failed {
                reason: "the rebuilt binaries are not the recorded ones".into(),
            }
        } else {
            let (bytes, path) = recorded.remove(&index).expect("read above");
            let constitution_stage = profile
                .stages
                .iter()
                .find(|s| s.name == stage.name)
                .ok_or_else(|| {
                    GamesError::Rules(format!(
                        "profile `{profile_name}` has no stage `{}`",
                        stage.name
                    ))
                })?;
            let book = repo_file(&repo, predecessor, &stage.book)?;
            let book_path = out.input(&stage.book);
            write(&book_path, &book)?;
            let plan = StagePlan::new(
                index + 1,
                constitution_stage,
                profile,
                entry.path,
                &binding,
                &out,
                &constitution.contract().option_pairs(),
            )
            .map_err(|e| GamesError::Rules(format!("stage `{}`: {e}", stage.name)))?;
            let config = plan.match_config(Shard::WHOLE, PathBuf::new(), PathBuf::new());
            replay_stage(
                stage,
                &config,
                bytes,
                path,
                stage_seed(&seed, &stage.name),
                request.pairs,
            )?
        };
        replay.stages.push(StageReplay {
            name: stage.name.clone(),
            tc: stage.tc.to_string(),
            outcome,
        });
    }
    Ok(replay)
}

/// Why `stage` is not replayed; `None` when it is.
fn skip_reason(stage: &StageRecord) -> Option<String> {
    if stage.tc.is_timed() {
        Some("at a clock: its games depend on timing and never repeat exactly".into())
    } else if stage.state == StageState::NotRun || stage.pairs == 0 {
        Some("not run: no games".into())
    } else {
        None
    }
}

/// The stage PGN `scripts/keep-evidence.sh` keeps: the stage folder's name, gzip-compressed.
fn stage_pgn(evidence: &Path, index: usize, name: &str) -> PathBuf {
    let dir = OutDir::at(evidence).stage_dir(index, name);
    let mut file = dir.into_os_string();
    file.push(".pgn.gz");
    PathBuf::from(file)
}

/// The seed of one stage's choice: the first 64 bits of sha256(`seed` LF stage name).
fn stage_seed(seed: &str, stage: &str) -> u64 {
    let digest = Sha256Hex::of(format!("{seed}\n{stage}").as_bytes());
    u64::from_str_radix(&digest.as_str()[..16], 16).expect("hex digits")
}

/// `count` of the recorded pair indices chosen by `seed`, ascending.
fn choose(pairs: &[u64], count: u64, seed: u64) -> Vec<u64> {
    let amount = usize::try_from(count)
        .unwrap_or(usize::MAX)
        .min(pairs.len());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut chosen: Vec<u64> = rand::seq::index::sample(&mut rng, pairs.len(), amount)
        .into_iter()
        .map(|i| pairs[i])
        .collect();
    chosen.sort_unstable();
    chosen
}

/// A rebuilt binary as the stage plan takes it.
fn bound(record: &BinaryRecord, path: PathBuf) -> BoundBinary {
    BoundBinary {
        commit: record.commit.to_string(),
        tree: record.tree.to_string(),
        sha256: record.binary_sha256.to_string(),
        path,
    }
}

/// A file of `record`'s commit.
fn repo_file(
    repo: &git2::Repository,
    record: &BinaryRecord,
    path: &str,
) -> Result<Vec<u8>, GamesError> {
    let commit = resolve::commit(repo, "recorded predecessor", record.commit.as_str())
        .map_err(|e| GamesError::Rules(e.to_string()))?;
    resolve::read_file(repo, &commit, path).map_err(|e| GamesError::Rules(e.to_string()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), GamesError> {
    let io = |e: std::io::Error| GamesError::Io {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(path.parent().unwrap_or(path)).map_err(io)?;
    std::fs::write(path, bytes).map_err(io)
}

/// Checks the stage's PGN against the entry, chooses the pairs and plays them again.
fn replay_stage(
    stage: &StageRecord,
    config: &MatchConfig,
    bytes: Vec<u8>,
    path: PathBuf,
    seed: u64,
    count: u64,
) -> Result<StageOutcome, GamesError> {
    let sha256 = Sha256Hex::of(&bytes);
    if stage.pgn_sha256.as_ref() != Some(&sha256) {
        return Ok(StageOutcome::Failed {
            reason: format!(
                "{} hashes to {sha256} decompressed; the entry records pgn_sha256 {}",
                path.display(),
                stage
                    .pgn_sha256
                    .as_ref()
                    .map_or("(none)", Sha256Hex::as_str)
            ),
        });
    }
    let text = String::from_utf8(bytes).map_err(|_| RecordedError::Read {
        path: path.clone(),
        reason: "not UTF-8".into(),
    })?;
    let mut by_pair: BTreeMap<u64, [Option<RecordedGame>; 2]> = BTreeMap::new();
    for game in parse_games(&text, &path)? {
        let slot = &mut by_pair.entry(game.pair).or_default()[game.game];
        if slot.is_some() {
            return Ok(StageOutcome::Failed {
                reason: format!(
                    "{}: game {}.{} appears twice",
                    path.display(),
                    game.pair + 1,
                    game.game + 1
                ),
            });
        }
        *slot = Some(game);
    }
    let complete: Vec<u64> = by_pair
        .iter()
        .filter(|(_, games)| games.iter().all(Option::is_some))
        .map(|(&pair, _)| pair)
        .collect();
    if complete.len() != by_pair.len() || (complete.len() as u64) < stage.pairs {
        return Ok(StageOutcome::Failed {
            reason: format!(
                "{} holds {} complete pairs of {} begun; the entry counts {} pairs",
                path.display(),
                complete.len(),
                by_pair.len(),
                stage.pairs
            ),
        });
    }
    // A stage counts the lowest `pairs` indices its games file holds (a stage decided in rounds
    // keeps the pairs its shards played past the deciding look), and their results must give the
    // entry's pentanomial: the verdict follows from these games, not only their moves.
    let counted = &complete[..usize::try_from(stage.pairs).unwrap_or(usize::MAX)];
    let mut pentanomial = [0u64; 5];
    for pair in counted {
        match pair_bucket(&by_pair[pair]) {
            Some(bucket) => pentanomial[bucket] += 1,
            None => {
                return Ok(StageOutcome::Failed {
                    reason: format!(
                        "{}: pair {} has a game without a result",
                        path.display(),
                        pair + 1
                    ),
                });
            }
        }
    }
    if pentanomial != stage.pentanomial {
        return Ok(StageOutcome::Failed {
            reason: format!(
                "{}: the results of its first {} pairs give the pentanomial {pentanomial:?}; the entry records {:?}",
                path.display(),
                stage.pairs,
                stage.pentanomial
            ),
        });
    }
    let book = Book::load(
        config.book_path.as_deref().unwrap_or(Path::new("")),
        config.book_format,
        config.plies,
    )
    .map_err(|e| GamesError::Rules(e.to_string()))?;
    if book.sha256 != stage.book_sha256.as_str() {
        return Err(GamesError::Rules(format!(
            "book {} hashes to {}, the entry records {}",
            stage.book, book.sha256, stage.book_sha256
        )));
    }
    let schedule = book.schedule(config.book_order, config.seed, config.opening_offset);
    let pairs = choose(counted, count, seed);
    let mut games = Vec::new();
    for &pair in &pairs {
        let opening = &book.openings[schedule.opening_of(pair)];
        for (game, recorded) in by_pair[&pair].iter().flatten().enumerate() {
            let played = play(config, opening, game)?;
            games.push(GameComparison {
                pair,
                game: game + 1,
                plies: recorded.moves.len(),
                difference: compare(
                    recorded,
                    &played,
                    [&config.engines[game].name, &config.engines[1 - game].name],
                ),
            });
        }
    }
    Ok(StageOutcome::Replayed {
        pgn: path,
        seed,
        pairs,
        games,
    })
}

/// The first engine's half-points over a pair's two games (White in the first, Black in the
/// second): its pentanomial bucket; `None` when a game has no result.
fn pair_bucket(games: &[Option<RecordedGame>; 2]) -> Option<usize> {
    let mut half_points = 0;
    for (game, color) in games.iter().zip([Color::White, Color::Black]) {
        let result = GameResult::from_pgn(&game.as_ref()?.result)?;
        half_points += usize::from(result.half_points(color));
    }
    Some(half_points)
}

/// Plays game `game` (0: the first engine has White) of a pair from `opening` exactly as the
/// runner plays every game.
fn play(config: &MatchConfig, opening: &Opening, game: usize) -> Result<GameRecord, GamesError> {
    play_single_game(config, opening, game)
        .map_err(|error| GamesError::Rules(error.to_string()))?
        .ok_or_else(|| GamesError::Rules("a replayed game was abandoned".to_string()))
}

/// The first difference between the recorded game and the replayed one, `None` when identical;
/// `names` are White's and Black's as the plan names them.
fn compare(recorded: &RecordedGame, played: &GameRecord, names: [&str; 2]) -> Option<Difference> {
    let setup = |expected: String, played: String| {
        Some(Difference {
            ply: 0,
            expected,
            played,
        })
    };
    if [recorded.white.as_str(), recorded.black.as_str()] != names {
        return setup(
            format!("White {}, Black {}", recorded.white, recorded.black),
            format!("White {}, Black {}", names[0], names[1]),
        );
    }
    if recorded.fen != played.opening.fen {
        let fen = |fen: &Option<String>| fen.clone().unwrap_or_else(|| "startpos".into());
        return setup(
            format!("FEN {}", fen(&recorded.fen)),
            format!("FEN {}", fen(&played.opening.fen)),
        );
    }
    let moves: Vec<&str> = played
        .opening
        .moves
        .iter()
        .map(String::as_str)
        .chain(played.moves.iter().map(|m| m.uci.as_str()))
        .collect();
    let mut pos = played.opening.root();
    let ending = |result: &str, termination: &str| format!("end: {result} ({termination})");
    let played_end = ending(played.result.pgn(), played.termination.pgn_tag());
    for ply in 0..recorded.moves.len().max(moves.len()) {
        match (recorded.moves.get(ply), moves.get(ply)) {
            (Some(expected), Some(&actual)) if expected == actual => {
                if let Some(m) = legal(&pos, actual) {
                    pos.play_unchecked(m);
                }
            }
            (expected, actual) => {
                return Some(Difference {
                    ply: ply + 1,
                    expected: expected.map_or_else(
                        || ending(&recorded.result, &recorded.termination),
                        |_| recorded.san[ply].clone(),
                    ),
                    played: actual.map_or_else(|| played_end.clone(), |m| san(&pos, m)),
                });
            }
        }
    }
    let recorded_end = ending(&recorded.result, &recorded.termination);
    (recorded_end != played_end).then(|| Difference {
        ply: moves.len() + 1,
        expected: recorded_end,
        played: played_end,
    })
}

/// `uci` as a legal move of `pos`.
fn legal(pos: &Chess, uci: &str) -> Option<shakmaty::Move> {
    UciMove::from_ascii(uci.as_bytes()).ok()?.to_move(pos).ok()
}

/// A played move as the PGN would write it (SAN), or as the engine sent it when illegal.
fn san(pos: &Chess, uci: &str) -> String {
    legal(pos, uci).map_or_else(
        || uci.to_owned(),
        |m| SanPlus::from_move(pos.clone(), m).to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::{GameResult, MoveRecord, Termination};
    use std::time::Duration;

    #[test]
    fn the_choice_is_a_repeatable_sample_of_the_recorded_pairs() {
        let pairs: Vec<u64> = (0..100).map(|i| 3 * i).collect();
        let seed = stage_seed("0123abcd", "short");
        let chosen = choose(&pairs, 5, seed);
        assert_eq!(
            chosen,
            choose(&pairs, 5, seed),
            "the same seed, the same pairs"
        );
        assert_eq!(chosen.len(), 5);
        assert!(chosen.windows(2).all(|w| w[0] < w[1]), "{chosen:?}");
        assert!(chosen.iter().all(|p| pairs.contains(p)), "{chosen:?}");
        assert_ne!(seed, stage_seed("0123abcd", "long"), "each stage its own");
        assert_ne!(chosen, choose(&pairs, 5, stage_seed("0123abce", "short")));
        assert_eq!(choose(&pairs[..3], 20, seed), [0, 3, 6], "at most all");
    }

    fn game_of(moves: &[&str], result: GameResult, termination: Termination) -> GameRecord {
        GameRecord {
            opening: Opening {
                fen: None,
                moves: vec!["f2f3".into()],
            },
            moves: moves
                .iter()
                .map(|m| MoveRecord {
                    uci: (*m).into(),
                    score: None,
                    depth: None,
                    elapsed: Duration::ZERO,
                    engine_time_ms: None,
                })
                .collect(),
            result,
            termination,
            reason: String::new(),
            faulted: None,
        }
    }

    #[test]
    fn the_first_differing_ply_is_named_with_both_moves() {
        let names = ["candidate", "predecessor"];
        let recorded = RecordedGame {
            pair: 0,
            game: 0,
            white: "candidate".into(),
            black: "predecessor".into(),
            fen: None,
            moves: ["f2f3", "e7e5", "g2g4", "d8h4"].map(String::from).to_vec(),
            san: ["f3", "e5", "g4", "Qh4#"].map(String::from).to_vec(),
            result: "0-1".into(),
            termination: "normal".into(),
        };
        let same = game_of(
            &["e7e5", "g2g4", "d8h4"],
            GameResult::BlackWins,
            Termination::Normal,
        );
        assert_eq!(compare(&recorded, &same, names), None);
        let other = game_of(
            &["e7e5", "g2g3"],
            GameResult::Draw,
            Termination::Adjudication,
        );
        assert_eq!(
            compare(&recorded, &other, names),
            Some(Difference {
                ply: 3,
                expected: "g4".into(),
                played: "g3".into()
            })
        );
        let shorter = game_of(
            &["e7e5", "g2g4"],
            GameResult::Draw,
            Termination::Adjudication,
        );
        assert_eq!(
            compare(&recorded, &shorter, names).unwrap().played,
            "end: 1/2-1/2 (adjudication)"
        );
        let colours = compare(&recorded, &same, ["predecessor", "candidate"]).unwrap();
        assert_eq!(colours.ply, 0);
        assert_eq!(colours.played, "White predecessor, Black candidate");
    }
}
